/* taskfail: a task fails on one rank's piece (issue 21). The point task of color 1 (rank 1's
 * tile) calls tsr_ctx_error; then
 *  - tsr_map of the poisoned field returns TSR_ETASK on every rank, with the task's own message
 *    (the task's name and what it said), not TSR_EDIVERGE;
 *  - the program goes on: tsr_fence returns TSR_ETASK with the task's message (a task failed
 *    since the last fence: tessera.h), not TSR_EDIVERGE;
 *  - futures computed from the poisoned tile on rank 1 (an index launch's sum, whose point 1 reads
 *    it, and a single launch that reads it) carry its poison to every rank with their values
 *    (runtime/xfer.c): after the fences that reported the failures, a task on rank 0 that reads
 *    one is still skipped, so tsr_map of rank 0's tile it rewrites returns TSR_ETASK with the
 *    first task's message on every rank;
 *  - tsr_region_destroy, tsr_fspace_destroy and tsr_finalize succeed (a diverged job would end
 *    in MPI_Abort).
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

/* Returns 1 after reading its tile (requirement 0), which the host never checks: the task runs
 * only where the tile is healthy. */
static void read_one(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	double one = 1.0;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &x) == TSR_OK)
		tsr_ctx_return(ctx, &one);
}

/* Writes its tile (requirement 0); requirement 1 is a future it never looks at. */
static void rewrite(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	write_index(ctx);
}

/* Both tiles rewritten by tasks that read future f (rank 0 runs point 0). f is poisoned, so both
 * tasks are skipped and poison their tiles: tsr_map of tile 0 must return TSR_ETASK with the
 * failed task's message on every rank. Rank 0 decides it from its copy of f, which came from rank
 * 1 (its value and its poison); the other ranks receive tile 0 with rank 0's marks. */
static void rewrite_from(struct line_tiles *lt, tsr_task_t t, tsr_future_t f, const char *what)
{
	tsr_launch_t how = {.domain = tsr_box1(0, 1),
			    .reqs = TSR_REQS(tsr_req_part(lt->tiles, TSR_WRITE_DISCARD,
							  TSR_FIELDS(lt->x)),
					     tsr_req_future(f))};
	check(tsr_run(t, &how), "tsr_run (rewrite)");
	int rc = tsr_fence();
	if (rc == TSR_EDIVERGE)
		fail("tsr_fence after the rewrite", rc);

	tsr_region_t tile0;
	check(tsr_partition_subregion(lt->tiles, (const int64_t[3]){0, 0, 0}, &tile0),
	      "tsr_partition_subregion");
	tsr_accessor_t a;
	rc = tsr_map(tile0, lt->x, TSR_READ, &a);
	printf("taskfail rank %d: tsr_map of tile 0 rewritten from %s: %s: %s\n", tsr_rank(), what,
	       tsr_err_name(rc), rc ? tsr_last_error() : "");
	if (rc == TSR_OK)
		check(tsr_unmap(tile0, lt->x), "tsr_unmap");
	if (rc != TSR_ETASK || !strstr(tsr_last_error(), "spoil") ||
	    !strstr(tsr_last_error(), SAID))
		fail(what, rc);
	check(tsr_future_destroy(f), "tsr_future_destroy");
}

/* Futures computed from rank 1's poisoned tile: an index launch's sum, whose point 1 (rank 1)
 * reads the tile, and a single launch that reads it (on rank 1, where the tile is). Each is
 * poisoned on every rank, after the fence that reported its failure too. */
static void futures_from_poison(struct line_tiles *lt)
{
	tsr_task_t t;
	check(tsr_task_register(&(tsr_task_desc_t){.name = "read_one",
						   .cpu = read_one,
						   .ret_type = TSR_F64},
				&t),
	      "tsr_task_register");
	tsr_future_t sum;
	tsr_launch_t all = {.domain = tsr_box1(0, 1),
			    .reqs = TSR_REQS(tsr_req_part(lt->tiles, TSR_READ, TSR_FIELDS(lt->x))),
			    .redop = TSR_SUM,
			    .result = &sum};
	check(tsr_run(t, &all), "tsr_run (sum)");

	tsr_region_t tile1;
	check(tsr_partition_subregion(lt->tiles, (const int64_t[3]){1, 0, 0}, &tile1),
	      "tsr_partition_subregion");
	tsr_future_t one;
	tsr_launch_t single = {.reqs = TSR_REQS(tsr_req_region(tile1, TSR_READ, TSR_FIELDS(lt->x))),
			       .result = &one};
	check(tsr_run(t, &single), "tsr_run (single)");
	int rc = tsr_fence();
	if (rc == TSR_EDIVERGE)
		fail("tsr_fence after the futures", rc);

	tsr_task_t w = register_task("rewrite", rewrite);
	rewrite_from(lt, w, sum, "an index launch's sum of the poisoned tile");
	rewrite_from(lt, w, one, "a single launch's value of the poisoned tile");
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

	futures_from_poison(&lt);
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
