/* diverge: a program whose ranks make different calls (rank 1 launches one more task). Every
 * rank must get TSR_EDIVERGE from tsr_fence with a message naming both ranks, and tsr_finalize
 * must then end the job (MPI_Abort) instead of waiting for transfers that never come.
 * tests/mpi/mpi.sh runs it under mpirun with a timeout and checks the lines it prints:
 *   diverge rank R: tsr_fence: TSR_EDIVERGE: MESSAGE
 *   diverge rank R: tsr_finalize       (only printed if tsr_finalize returned: it must not) */
#define RANK_PROG "diverge"
#include "rank_prog.h"

/* what --help prints */
static const char usage[] =
	"usage: mpirun -np N diverge    (N >= 2)\n"
	"Rank 1 launches one task more than the others: tsr_fence must fail with\n"
	"TSR_EDIVERGE on every rank.\n";

/* Writes its tile's points: something for the extra launch to do on one rank only. */
static void touch(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	write_index(ctx);
}

int main(int argc, char **argv)
{
	if (help_or_init(argc, argv, usage))
		return 0;
	if (one_rank_only())
		return 77;
	struct line_tiles lt = line_in_tiles(4, "tiles");
	tsr_task_t t = register_task("touch", touch);
	tsr_launch_t how = {.domain = tsr_box1(0, 3),
			    .reqs = TSR_REQS(
				    tsr_req_part(lt.tiles, TSR_WRITE_DISCARD, TSR_FIELDS(lt.x)))};
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
