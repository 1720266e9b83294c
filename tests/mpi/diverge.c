/* diverge: a program whose ranks make different calls (rank 1 launches one more task). Every
 * rank must get TSR_EDIVERGE from tsr_fence with a message naming both ranks, and tsr_finalize
 * must then end the job (MPI_Abort) instead of waiting for transfers that never come.
 * tests/mpi/mpi.sh runs it under mpirun with a timeout and checks the lines it prints:
 *   diverge rank R: tsr_fence: TSR_EDIVERGE: MESSAGE
 *   diverge rank R: tsr_finalize       (only printed if tsr_finalize returned: it must not) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tessera.h>

static void check(int rc, const char *what)
{
	if (rc == TSR_OK)
		return;
	fprintf(stderr, "diverge (rank %d): %s: %s: %s\n", tsr_rank(), what, tsr_err_name(rc),
		tsr_last_error());
	exit(1);
}

/* Writes its tile's points: something for the extra launch to do on one rank only. */
static void touch(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_WRITE_DISCARD, &x))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) = (double)i;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		puts("usage: mpirun -np N diverge    (N >= 2)");
		puts("Rank 1 launches one task more than the others: tsr_fence must fail with "
		     "TSR_EDIVERGE on every rank.");
		return 0;
	}
	check(tsr_init(NULL), "tsr_init");
	if (tsr_nranks() < 2) {
		printf("diverge: needs 2 ranks or more (mpirun -np 2), skipped\n");
		check(tsr_finalize(), "tsr_finalize");
		return 77;
	}
	tsr_fspace_t fs;
	tsr_field_t x;
	check(tsr_fspace_create(&fs), "tsr_fspace_create");
	check(tsr_fspace_add(fs, "x", TSR_F64, 0, &x), "tsr_fspace_add");
	tsr_region_t line;
	check(tsr_region_create("line", tsr_box1(0, 15), fs, &line), "tsr_region_create");
	tsr_partition_t tiles;
	check(tsr_partition_tiles(line, tsr_box1(0, 3), "tiles", &tiles), "tsr_partition_tiles");
	tsr_task_t t;
	check(tsr_task_register(&(tsr_task_desc_t){.name = "touch", .cpu = touch}, &t),
	      "tsr_task_register");
	tsr_launch_t how = {.domain = tsr_box1(0, 3),
			    .reqs = TSR_REQS(
				    tsr_req_part(tiles, TSR_WRITE_DISCARD, TSR_FIELDS(x)))};
	check(tsr_run(t, &how), "tsr_run");
	/* the mistake under test: a launch that only rank 1 makes */
	if (tsr_rank() == 1)
		check(tsr_run(t, &how), "tsr_run (rank 1 only)");
	int rc = tsr_fence();
	printf("diverge rank %d: tsr_fence: %s: %s\n", tsr_rank(), tsr_err_name(rc),
	       rc ? tsr_last_error() : "");
	fflush(stdout);
	rc = tsr_finalize();
	/* not reached when the runtime is right: tsr_finalize of diverged ranks ends the job */
	printf("diverge rank %d: tsr_finalize returned %s\n", tsr_rank(), tsr_err_name(rc));
	return 1;
}
