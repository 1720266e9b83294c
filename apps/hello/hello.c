/* hello: the first Tessera program to read. A 1-D region of ten numbers is cut into two tiles;
 * an index launch runs one "square" task per tile, then one "sum" task reads the whole region
 * and returns the sum of the squares as a future, which the host waits for and prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tessera.h>

#include "app_util.h"

/* Every Tessera call returns TSR_OK or a negative code; tsr_last_error() says what was wrong. */
static void check(int rc)
{
	if (rc == TSR_OK)
		return;
	fprintf(stderr, "hello: %s: %s\n", tsr_err_name(rc), tsr_last_error());
	exit(1);
}

/* Task: x[i] = i * i over the tile this point was given. The task asks its context for the
 * first field of its first requirement; it needs no field id from the caller. */
static void square(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_WRITE_DISCARD, &x) != TSR_OK)
		/* the task has failed with the message: tsr_run's caller sees it at the next
		 * wait */
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) = (double)(i * i);
}

/* Task: the sum of x over the whole region, returned as the task's value. */
static void sum(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &x) != TSR_OK)
		return;
	double total = 0.0;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		total += TSR_AT1(&x, double, i);
	tsr_ctx_return(ctx, &total);
}

int main(int argc, char **argv)
{
	/* The command line: --help, --version, and Tessera's own flags (--ncpu 2, --sched eager,
	 * --stats, ...), which win over TSR_NCPU and the other variables. app_parse hands them to
	 * tsr_args(&argc, argv), the call a program of yours makes before tsr_init for the same. */
	const app_cli_t cli = {"hello",
			       "Prints the sum of i*i over 0..9: two tasks write the two tiles,\n"
			       "one task reads them all.",
			       NULL, 0, NULL};
	int parsed = app_parse(&cli, argc, argv);
	if (parsed)
		return parsed > 0 ? 0 : 2;
	check(tsr_init(NULL));
	printf("workers: %d CPU, %d CUDA, %d OpenCL\n", tsr_ncpu_workers(), tsr_ncuda_workers(),
	       tsr_nopencl_workers());

	/* The data: one f64 field "x" over the points 0..9, in two tiles of five. */
	tsr_fspace_t fields;
	check(tsr_fspace_create(&fields));
	tsr_field_t x;
	check(tsr_fspace_add(fields, "x", TSR_F64, 0, &x));
	tsr_region_t line;
	check(tsr_region_create("line", tsr_box1(0, 9), fields, &line));
	tsr_partition_t halves;
	check(tsr_partition_tiles(line, tsr_box1(0, 1), "halves", &halves));

	/* The tasks. */
	tsr_task_t square_task;
	check(tsr_task_register(&(tsr_task_desc_t){.name = "square", .cpu = square}, &square_task));
	tsr_task_t sum_task;
	check(tsr_task_register(&(tsr_task_desc_t){.name = "sum", .cpu = sum, .ret_type = TSR_F64},
				&sum_task));

	/* One "square" task per color 0..1, each writing its own half (old contents discarded). */
	check(tsr_run(square_task, &(tsr_launch_t){
					   .domain = tsr_box1(0, 1),
					   .reqs = TSR_REQS(tsr_req_part(halves, TSR_WRITE_DISCARD,
									 TSR_FIELDS(x))),
				   }));
	/* One "sum" task reading the whole line: Tessera runs it after both squares. */
	tsr_future_t total_future;
	check(tsr_run(sum_task,
		      &(tsr_launch_t){
			      .reqs = TSR_REQS(tsr_req_region(line, TSR_READ, TSR_FIELDS(x))),
			      .result = &total_future,
		      }));
	double total;
	check(tsr_future_take(total_future, &total, sizeof total));
	printf("sum of i*i for i in 0..9 = %g\n", total);

	check(tsr_region_destroy(line)); /* its partitions go with it */
	check(tsr_fspace_destroy(fields));
	check(tsr_finalize());
	return 0;
}
