/* taskfail: a task fails on one rank's piece (issue 21). The point task of color 1 (rank 1's
 * tile) calls tsr_ctx_error; then
 *  - tsr_map of the poisoned field returns TSR_ETASK on every rank, with the task's own message
 *    (the task's name and what it said), not TSR_EDIVERGE;
 *  - the program goes on: tsr_fence returns TSR_ETASK with the task's message (a task failed
 *    since the last fence: tessera.h), not TSR_EDIVERGE, and tsr_region_destroy,
 *    tsr_fspace_destroy and tsr_finalize succeed (a diverged job would end in MPI_Abort).
 * Each rank prints what every call returned and "taskfail rank R: PASS" (exit 0) or
 * "taskfail rank R: FAIL ..." (exit 1). tests/mpi/taskfail.sh runs it on 2 and 4 ranks. */
#define RANK_PROG "taskfail"
#include "rank_prog.h"

/* what --help prints */
static const char usage[] =
	"usage: mpirun -np N taskfail    (N >= 2)\n"
	"A task fails on rank 1's tile: tsr_map of its field must fail with TSR_ETASK on\n"
	"every rank, and the program must go on to tsr_finalize without TSR_EDIVERGE.\n";

#define SAID "spoiled on purpose"

static int failed;

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
	write_index(ctx);
}

int main(int argc, char **argv)
{
	if (help_or_init(argc, argv, usage))
		return 0;
	int me = tsr_rank();
	if (one_rank_only())
		return 77;
	struct line_tiles lt = line_in_tiles(2, "halves");
	tsr_region_t line = lt.line;
	tsr_field_t x = lt.x;
	tsr_partition_t halves = lt.tiles;
	check(tsr_partition_set_rank(halves, (const int64_t[3]){0, 0, 0}, 0),
	      "tsr_partition_set_rank");
	check(tsr_partition_set_rank(halves, (const int64_t[3]){1, 0, 0}, 1),
	      "tsr_partition_set_rank");
	tsr_task_t t = register_task("spoil", spoil);
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
	rc = tsr_fspace_destroy(lt.fs);
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
