/* taskfail: a task fails on one rank's piece (issue 21). The point task of color 1 (rank 1's
 * tile) calls tsr_ctx_error; then
 *  - tsr_map of the poisoned field returns TSR_ETASK on every rank, with the task's own message
 *    (the task's name and what it said), not TSR_EDIVERGE;
 *  - the program goes on: tsr_fence returns TSR_ETASK with the task's message (a task failed
 *    since the last fence: tessera.h), not TSR_EDIVERGE, and tsr_region_destroy,
 *    tsr_fspace_destroy and tsr_finalize succeed (a diverged job would end in MPI_Abort).
 * Each rank prints what every call returned and "taskfail rank R: PASS" (exit 0) or
 * "taskfail rank R: FAIL ..." (exit 1). tests/mpi/taskfail.sh runs it on 2 and 4 ranks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tessera.h>

#define SAID "spoiled on purpose"

static int failed;

static void check(int rc, const char *what)
{
	if (rc == TSR_OK)
		return;
	printf("taskfail rank %d: FAIL %s: %s: %s\n", tsr_rank(), what, tsr_err_name(rc),
	       tsr_last_error());
	exit(1);
}

static void fail(const char *why, int rc)
{
	printf("taskfail rank %d: FAIL %s (%s: %s)\n", tsr_rank(), why, tsr_err_name(rc),
	       rc ? tsr_last_error() : "");
	failed = 1;
}

/* Writes its tile; the point of color 1 fails instead. */
static void spoil(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t p[3];
	tsr_ctx_point(ctx, p);
	if (p[0] == 1) {
		tsr_ctx_error(ctx, SAID);
		return;
	}
	tsr_accessor_t x;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_WRITE_DISCARD, &x))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) = (double)i;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		puts("usage: mpirun -np N taskfail    (N >= 2)");
		puts("A task fails on rank 1's tile: tsr_map of its field must fail with TSR_ETASK "
		     "on every rank, and the");
		puts("program must go on to tsr_finalize without TSR_EDIVERGE.");
		return 0;
	}
	check(tsr_init(NULL), "tsr_init");
	int me = tsr_rank();
	if (tsr_nranks() < 2) {
		printf("taskfail: needs 2 ranks or more (mpirun -np 2), skipped\n");
		check(tsr_finalize(), "tsr_finalize");
		return 77;
	}
	tsr_fspace_t fs;
	tsr_field_t x;
	check(tsr_fspace_create(&fs), "tsr_fspace_create");
	check(tsr_fspace_add(fs, "x", TSR_F64, 0, &x), "tsr_fspace_add");
	tsr_region_t line;
	check(tsr_region_create("line", tsr_box1(0, 15), fs, &line), "tsr_region_create");
	tsr_partition_t halves;
	check(tsr_partition_tiles(line, tsr_box1(0, 1), "halves", &halves), "tsr_partition_tiles");
	check(tsr_partition_set_rank(halves, (const int64_t[3]){0, 0, 0}, 0),
	      "tsr_partition_set_rank");
	check(tsr_partition_set_rank(halves, (const int64_t[3]){1, 0, 0}, 1),
	      "tsr_partition_set_rank");
	tsr_task_t t;
	check(tsr_task_register(&(tsr_task_desc_t){.name = "spoil", .cpu = spoil}, &t),
	      "tsr_task_register");
	tsr_launch_t how = {.domain = tsr_box1(0, 1),
			    .reqs = TSR_REQS(
				    tsr_req_part(halves, TSR_WRITE_DISCARD, TSR_FIELDS(x)))};
	check(tsr_run(t, &how), "tsr_run");

	tsr_accessor_t a;
	int rc = tsr_map(line, x, TSR_READ, &a);
	printf("taskfail rank %d: tsr_map: %s: %s\n", me, tsr_err_name(rc),
	       rc ? tsr_last_error() : "");
	if (rc == TSR_OK) {
		fail("tsr_map of the poisoned field succeeded", rc);
		check(tsr_unmap(line, x), "tsr_unmap");
	} else if (rc != TSR_ETASK || !strstr(tsr_last_error(), "spoil") ||
		   !strstr(tsr_last_error(), SAID)) {
		fail("tsr_map must return TSR_ETASK with the task's message (its name and \"" SAID
		     "\")",
		     rc);
	}

	rc = tsr_fence();
	printf("taskfail rank %d: tsr_fence: %s: %s\n", me, tsr_err_name(rc),
	       rc ? tsr_last_error() : "");
	if (rc != TSR_ETASK || !strstr(tsr_last_error(), "spoil") ||
	    !strstr(tsr_last_error(), SAID))
		fail("tsr_fence must return TSR_ETASK with the task's message", rc);
	fflush(stdout);

	rc = tsr_region_destroy(line);
	printf("taskfail rank %d: tsr_region_destroy: %s\n", me, tsr_err_name(rc));
	if (rc)
		fail("tsr_region_destroy", rc);
	rc = tsr_fspace_destroy(fs);
	printf("taskfail rank %d: tsr_fspace_destroy: %s\n", me, tsr_err_name(rc));
	if (rc)
		fail("tsr_fspace_destroy", rc);
	fflush(stdout);
	rc = tsr_finalize();
	/* after tsr_finalize: tsr_rank() is no longer the runtime's */
	printf("taskfail rank %d: tsr_finalize: %s\n", me, tsr_err_name(rc));
	if (rc) {
		printf("taskfail rank %d: FAIL tsr_finalize: %s: %s\n", me, tsr_err_name(rc),
		       tsr_last_error());
		failed = 1;
	}
	if (!failed)
		printf("taskfail rank %d: PASS\n", me);
	return failed;
}
