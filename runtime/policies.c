/* policies.c: Tessera's own StarPU scheduling policies, written against StarPU's scheduler API.
 * tsr-locality: one queue per worker; a point task goes to the worker that owns its color (block
 * distribution of colors over the workers that can run it), so a tile stays with one worker from
 * one launch to the next; an idle worker steals the newest task of the longest queue.
 * tsr-critpath: one ready list; a worker takes the ready task with the largest bottom level (the
 * longest path to the end of the graph Tessera has submitted, weighted by perf-model estimates).
 * Runtime-internal tasks (home-copy syncs, folds, reductions) go first: they are short and unblock
 * others. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <starpu_scheduler.h>
#include "internal.h"

static struct tsr_ctx *ctx_of(struct starpu_task *t)
{
	if (!t->cl || !t->cl_arg)
		return NULL;
	if (t->cl->cpu_funcs[0] == tsr__cpu_wrapper)
		return t->cl_arg;
#ifdef STARPU_USE_CUDA
	if (t->cl->cuda_funcs[0] == tsr__cuda_wrapper)
		return t->cl_arg;
#endif
	return NULL;
}

/* A push wakes the workers that sleep for tasks. Only a StarPU built with blocking drivers puts
 * them to sleep (Debian's and tools/build-starpu.sh's poll: STARPU_NON_BLOCKING_DRIVERS), and
 * there a wake would only wait, asleep in the kernel, for a worker in the middle of scheduling
 * to relax, while the pusher holds idle.c's gate. Tessera's parked workers are woken by idle.c. */
static void wake_all(unsigned sched_ctx_id)
{
#ifdef STARPU_NON_BLOCKING_DRIVERS
	(void)sched_ctx_id;
#else
	struct starpu_worker_collection *workers =
		starpu_sched_ctx_get_worker_collection(sched_ctx_id);
	struct starpu_sched_ctx_iterator it;

	workers->init_iterator(workers, &it);
	while (workers->has_next(workers, &it))
		starpu_wake_worker_relax_light(workers->get_next(workers, &it));
#endif
}

/* ---------------------------------------------------------------- locality */
struct loc_data {
	starpu_pthread_mutex_t mutex;
	struct starpu_task_list q[STARPU_NMAXWORKERS];
	int n[STARPU_NMAXWORKERS];
};

static void loc_init(unsigned ctx)
{
	struct loc_data *d = calloc(1, sizeof *d);
	STARPU_ASSERT(d);

	for (int w = 0; w < STARPU_NMAXWORKERS; w++)
		starpu_task_list_init(&d->q[w]);
	STARPU_PTHREAD_MUTEX_INIT(&d->mutex, NULL);
	starpu_sched_ctx_set_policy_data(ctx, d);
}

static void loc_deinit(unsigned ctx)
{
	struct loc_data *d = starpu_sched_ctx_get_policy_data(ctx);
	STARPU_PTHREAD_MUTEX_DESTROY(&d->mutex);
	free(d);
}

static int loc_push(struct starpu_task *task)
{
	unsigned sctx = task->sched_ctx;
	struct loc_data *d = starpu_sched_ctx_get_policy_data(sctx);

	int elig[STARPU_NMAXWORKERS], ne = 0;
	struct starpu_worker_collection *workers = starpu_sched_ctx_get_worker_collection(sctx);
	struct starpu_sched_ctx_iterator it;
	workers->init_iterator(workers, &it);
	while (workers->has_next(workers, &it)) {
		int w = workers->get_next(workers, &it);
		if (starpu_worker_can_execute_task_first_impl(w, task, NULL))
			elig[ne++] = w;
	}
	STARPU_ASSERT(ne > 0);

	struct tsr_ctx *c = ctx_of(task);
	int target;

	STARPU_PTHREAD_MUTEX_LOCK(&d->mutex);
	if (c && c->aff_ncolors > 0) {
		target = elig[(int)(((int64_t)c->aff_color * ne) / c->aff_ncolors)];
	} else {
		int me = starpu_worker_get_id();
		target = -1;
		for (int i = 0; i < ne; i++)
			if (elig[i] == me)
				target = me;

		if (target < 0) {
			target = elig[0];
			for (int i = 1; i < ne; i++)
				if (d->n[elig[i]] < d->n[target])
					target = elig[i];
		}
	}

	starpu_task_list_push_back(&d->q[target], task);
	d->n[target]++;
	starpu_push_task_end(task);
	STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
	wake_all(sctx);
	return 0;
}

static struct starpu_task *loc_pop(unsigned sctx)
{
	struct loc_data *d = starpu_sched_ctx_get_policy_data(sctx);
	int me = starpu_worker_get_id_check();
	struct starpu_task *t = NULL;

	STARPU_PTHREAD_MUTEX_LOCK(&d->mutex);
	if (!starpu_task_list_empty(&d->q[me])) {
		t = starpu_task_list_pop_front(&d->q[me]);
		d->n[me]--;
	} else {
		/* steal the newest task of the longest queue that this worker can run */
		int victim = -1;
		for (int w = 0; w < STARPU_NMAXWORKERS; w++)
			if (d->n[w] > 0 && (victim < 0 || d->n[w] > d->n[victim]))
				victim = w;

		if (victim >= 0)
			for (struct starpu_task *x = starpu_task_list_back(&d->q[victim]); x;
			     x = x->prev)
				if (starpu_worker_can_execute_task_first_impl(me, x, NULL)) {
					starpu_task_list_erase(&d->q[victim], x);
					d->n[victim]--;
					t = x;
					break;
				}
	}

	STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
	return t;
}

struct starpu_sched_policy tsr__locality_policy = {
	.init_sched = loc_init,
	.deinit_sched = loc_deinit,
	.push_task = loc_push,
	.pop_task = loc_pop,
	.policy_name = "tsr-locality",
	.policy_description =
		"Tessera: a color keeps its worker across launches, idle workers steal",
	.worker_type = STARPU_WORKER_LIST,
};

/* ---------------------------------------------------------------- critical path */
struct cp_item {
	struct starpu_task *task;
	double key;
	unsigned long seq;
};

struct cp_data {
	starpu_pthread_mutex_t mutex;
	struct cp_item *v;
	int n, cap;
	unsigned long seq;
};

static void cp_init(unsigned ctx)
{
	struct cp_data *d = calloc(1, sizeof *d);
	STARPU_ASSERT(d);

	STARPU_PTHREAD_MUTEX_INIT(&d->mutex, NULL);
	starpu_sched_ctx_set_policy_data(ctx, d);
}

static void cp_deinit(unsigned ctx)
{
	struct cp_data *d = starpu_sched_ctx_get_policy_data(ctx);
	STARPU_PTHREAD_MUTEX_DESTROY(&d->mutex);
	free(d->v);
	free(d);
}

static int cp_push(struct starpu_task *task)
{
	/* Read before the push: once the task is in the queue, a worker may run and free it. */
	unsigned sctx = task->sched_ctx;
	struct cp_data *d = starpu_sched_ctx_get_policy_data(sctx);
	struct tsr_ctx *c = ctx_of(task);
	double key = c && c->dag_cell ? tsr__dag_push_key(c->dag_cell) : INFINITY;

	STARPU_PTHREAD_MUTEX_LOCK(&d->mutex);
	if (d->n == d->cap) {
		int ncap = d->cap ? 2 * d->cap : 64;
		struct cp_item *nv = realloc(d->v, ncap * sizeof *nv);
		STARPU_ASSERT(nv);
		d->v = nv;
		d->cap = ncap;
	}

	d->v[d->n].task = task;
	d->v[d->n].key = key;
	d->v[d->n].seq = d->seq++;
	d->n++;
	starpu_push_task_end(task);
	STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
	wake_all(sctx);
	return 0;
}

static struct starpu_task *cp_pop(unsigned sctx)
{
	struct cp_data *d = starpu_sched_ctx_get_policy_data(sctx);
	int me = starpu_worker_get_id_check();
	struct starpu_task *t = NULL;

	if (d->n == 0)
		return NULL;

	STARPU_PTHREAD_MUTEX_LOCK(&d->mutex);
	int best = -1;
	for (int i = 0; i < d->n; i++) {
		if (best >= 0 && (d->v[i].key < d->v[best].key ||
				  (d->v[i].key == d->v[best].key && d->v[i].seq > d->v[best].seq)))
			continue;
		if (starpu_worker_can_execute_task_first_impl(me, d->v[i].task, NULL))
			best = i;
	}

	if (best >= 0) {
		t = d->v[best].task;
		d->v[best] = d->v[--d->n];
	}

	STARPU_PTHREAD_MUTEX_UNLOCK(&d->mutex);
	return t;
}

struct starpu_sched_policy tsr__critpath_policy = {
	.init_sched = cp_init,
	.deinit_sched = cp_deinit,
	.push_task = cp_push,
	.pop_task = cp_pop,
	.policy_name = "tsr-critpath",
	.policy_description =
		"Tessera: ready task with the longest path to the end of the known graph first",
	.worker_type = STARPU_WORKER_LIST,
};
