/* state.c: the runtime's state (tsr__rt), which thread may call, and the one wait every floor may
 * make. The bottom floor's other half (errors, contexts, switches) is in error.c, ctxpool.c and
 * env.c; tsr_init fills tsr__rt (runtime.c), everything above reads it. */
#include <stdio.h>
#include "internal.h"

struct tsr_runtime tsr__rt;

int tsr__refuse_thread(const char *what)
{
	struct tsr_ctx *ctx = tsr__current_ctx();
	if (ctx)
		return tsr__err(TSR_ESTATE,
				"%s: called from inside task '%s': a task variant cannot wait, "
				"launch or change the runtime (return what it computed; the host "
				"or a later task does the rest)",
				what, ctx->task->name);

	return tsr__err(TSR_ESTATE,
			"%s: called from a thread other than the one that called tsr_init; Tessera "
			"takes calls from that one host thread only",
			what);
}

void tsr__wait_handle(starpu_data_handle_t h)
{
	if (tsr__rt.paused)
		starpu_resume();

	starpu_data_acquire(h, STARPU_R);
	starpu_data_release(h);

	if (tsr__rt.paused)
		starpu_pause();
}

/* Reductions are folded in color order (tessera.h, "Reductions"): every point reduces into
 * private storage that starts at the identity, and fold tasks combine the points in launch
 * order, so the bits do not depend on workers, policy or timing. TSR_REDUX=unordered gives
 * StarPU's REDUX instead (contributions folded in arrival order); tsr_init reads it, before
 * StarPU starts, so that a typo fails there. */
int tsr__redux_ordered(void)
{
	return !tsr__rt.redux_unordered;
}
