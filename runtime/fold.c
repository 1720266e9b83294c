/* fold.c: the reduction machinery of launches. Reductions are folded in color order: private
 * buffers of REDUCE requirements and the points' partial values of a reduced result start at the
 * identity, and fold tasks combine them in launch order (or StarPU's REDUX, TSR_REDUX=unordered).
 * reduce.c holds the operators themselves; launch.c asks here for buffers and folds. */
/* The words (operator, REDUCE(op), private buffer, fold, partial value, redux): the glossary atop
 * reduce.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct fold_arg {
	tsr_type_t type;
	size_t size;
	int op;
};

static struct starpu_codelet fold_cl;

/* Buffer 0 is the subregion's view, buffer 1 the private buffer of the same extent (the handles
 * coherence lists for ordering follow): the operator's redux folds one into the other. */
static void fold_cpu(void *buffers[], void *cl_arg)
{
	struct fold_arg *a = cl_arg;
	tsr__redux_cl(a->type, a->op)->cpu_funcs[0](buffers, NULL);
}

#ifdef STARPU_USE_CUDA
static void fold_cuda(void *buffers[], void *cl_arg)
{
	struct fold_arg *a = cl_arg;
	tsr__redux_cl(a->type, a->op)->cuda_funcs[0](buffers, NULL);
}
#endif

#ifdef STARPU_USE_OPENCL
static void fold_opencl(void *buffers[], void *cl_arg)
{
	struct fold_arg *a = cl_arg;
	tsr__redux_cl(a->type, a->op)->opencl_funcs[0](buffers, NULL);
}
#endif

static void fold_init(void)
{
	starpu_codelet_init(&fold_cl);
	fold_cl.cpu_funcs[0] = fold_cpu;
#ifdef STARPU_USE_CUDA
	fold_cl.cuda_funcs[0] = fold_cuda;
	fold_cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
#ifdef STARPU_USE_OPENCL
	fold_cl.opencl_funcs[0] = fold_opencl;
#endif

	/* target RW, private R, then what coherence lists */
	fold_cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
	fold_cl.name = "tsr_fold";
	fold_cl.flags = STARPU_CODELET_NOPLANS;
}

/* Folds the points' partial values (buffers 1..n) into the future (buffer 0), left to right. */
struct future_fold_arg {
	tsr_type_t type;
	size_t size;
	int op;
	int nparts;
};

static struct starpu_codelet future_fold_cl;

static void future_fold_cpu(void *buffers[], void *cl_arg)
{
	const struct future_fold_arg *a = cl_arg;
	void *acc = (void *)STARPU_VARIABLE_GET_PTR(buffers[0]);

	tsr__redop_identity(a->type, a->size, a->op, acc);
	for (int i = 1; i <= a->nparts; i++)
		tsr__redop_fold(a->type, a->size, a->op, acc,
				(const void *)STARPU_VARIABLE_GET_PTR(buffers[i]));
}

/* On a device, built-in operators only (a user operator's fold runs on CPUs): identity, then each
 * part in order, with the device kind's operator body (tsr__cuda_redop, tsr__opencl_redop). */
#if defined(STARPU_USE_CUDA) || defined(STARPU_USE_OPENCL)
typedef void (*device_redop_fn)(int type, int op, int init, void *dst, void *src);

static void future_fold_device(void *buffers[], const struct future_fold_arg *a,
			       device_redop_fn redop)
{
	redop(a->type, a->op, 1, buffers[0], NULL);
	for (int i = 1; i <= a->nparts; i++)
		redop(a->type, a->op, 0, buffers[0], buffers[i]);
}
#endif

#ifdef STARPU_USE_CUDA
static void future_fold_cuda(void *buffers[], void *cl_arg)
{
	future_fold_device(buffers, cl_arg, tsr__cuda_redop);
}
#endif

#ifdef STARPU_USE_OPENCL
static void future_fold_opencl(void *buffers[], void *cl_arg)
{
	future_fold_device(buffers, cl_arg, tsr__opencl_redop);
	tsr__opencl_finish();
}
#endif

static void future_fold_init(void)
{
	starpu_codelet_init(&future_fold_cl);
	future_fold_cl.cpu_funcs[0] = future_fold_cpu;
#ifdef STARPU_USE_CUDA
	future_fold_cl.cuda_funcs[0] = future_fold_cuda;
	future_fold_cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
#ifdef STARPU_USE_OPENCL
	future_fold_cl.opencl_funcs[0] = future_fold_opencl;
#endif

	future_fold_cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
	future_fold_cl.name = "tsr_future_fold";
	future_fold_cl.flags = STARPU_CODELET_NOPLANS;
}

/* A private buffer of subregion s's shape for field f, to be folded into the fold target after
 * the point's task (recorded in folds, in the order the points make them). */
starpu_data_handle_t tsr__fold_private(struct tsr_region *s, int f, int op,
				       struct tsr_pending_fold *folds, int *nfolds)
{
	starpu_data_handle_t tmp;
	uint32_t nx = s->bounds.hi[0] - s->bounds.lo[0] + 1;
	uint32_t ny = s->bounds.dim > 1 ? s->bounds.hi[1] - s->bounds.lo[1] + 1 : 1;
	uint32_t nz = s->bounds.dim > 2 ? s->bounds.hi[2] - s->bounds.lo[2] + 1 : 1;

	starpu_block_data_register(&tmp, -1, 0, nx, nx * ny, nx, ny, nz, s->fields[f].size);

	folds[*nfolds].sub = s;
	folds[*nfolds].field = f;
	folds[*nfolds].tmp = tmp;
	folds[*nfolds].op = op;
	folds[*nfolds].dag_src = -1;
	(*nfolds)++;
	return tmp;
}

/* How a private buffer folds. NULL when out of memory. */
static struct fold_arg *fold_arg_new(const struct tsr_pending_fold *fold,
				     const struct tsr_region *s)
{
	struct fold_arg *a = malloc(sizeof *a);
	if (!a)
		return NULL;

	a->type = s->fields[fold->field].type;
	a->size = s->fields[fold->field].size;
	a->op = fold->op;
	return a;
}

static struct tsr_deps fold_deps; /* one host thread: reused by every fold */

/* The fold's node in the task graph: after its point's task (the private buffer), a READ_WRITE
 * of the subregion (folds into it go in color order). -1 when the graph is off. */
static int dag_fold(const struct tsr_pending_fold *fold, int pdim, const int64_t point[3])
{
	if (!tsr__dag_on)
		return -1;

	const struct tsr_region *s = fold->sub;
	char why[160];
	snprintf(why, sizeof why, "%s.%s private buffer", s->name, s->fields[fold->field].name);

	int id = tsr__dag_internal("tsr_fold", pdim, point);
	tsr__dag_edge(fold->dag_src, id, why);
	tsr__dag_fold_access(id, s, fold->field, fold->op);
	return id;
}

/* Fold one private reduction buffer into its subregion. Folds into one subregion, or into
 * overlapping ones, are ordered by coherence in submission order (each one writes its target). */
static int submit_fold(const struct tsr_pending_fold *fold)
{
	struct tsr_region *s = fold->sub;
	struct tsr_node *nd = &s->nodes[fold->field];

	tsr__deps_reset(&fold_deps);
	/* what the fold receives or sends comes before the point's own failure, if any: that one
	 * poisons what the fold writes (a REDUCE point runs before its fold) */
	tsr__xfer_seq = fold->seq;
	int rc = tsr__coh_access(nd, 1, 1, fold->rank, &fold_deps);
	tsr__xfer_seq = 0;
	if (rc)
		return tsr__err_of(rc, "fold of a reduction into '%s'", s->name);

	if (!tsr__here(fold->rank)) {
		/* several ranks: the point's rank folds; this one notes where the result lives */
		rc = tsr__coh_wrote_by(nd, NULL, fold->rank);
		return tsr__err_of(rc, "fold of a reduction into '%s'", s->name);
	}

	struct fold_arg *a = fold_arg_new(fold, s);
	struct starpu_task *task = tsr__task_new(&fold_cl, a, sizeof *a, 2 + fold_deps.n, 0);
	if (!task)
		return tsr__err(TSR_ENOMEM, "fold of a reduction into '%s': out of memory",
				s->name);

	STARPU_TASK_SET_HANDLE(task, nd->h, 0);
	STARPU_TASK_SET_MODE(task, STARPU_RW, 0);
	STARPU_TASK_SET_HANDLE(task, fold->tmp, 1);
	STARPU_TASK_SET_MODE(task, STARPU_R, 1);
	int nbuf = 2;
	for (int i = 0; i < fold_deps.n; i++) {
		if (tsr__dep_waits_only(fold_deps.v[i].mode))
			continue; /* order.c's business only */
		STARPU_TASK_SET_HANDLE(task, fold_deps.v[i].h, nbuf);
		STARPU_TASK_SET_MODE(task, fold_deps.v[i].mode, nbuf);
		nbuf++;
	}
	task->nbuffers = nbuf;

	if (!tsr__redop_on_devices(a->op))
		task->where = STARPU_CPU; /* user operators have host code only */

	int64_t point[3] = {0, 0, 0};
	int pdim = tsr__region_point(s, point);
	struct tsr_obs_rec *obs =
		tsr__obs_internal(task, "tsr_fold", pdim, point, dag_fold(fold, pdim, point));
	rc = tsr__order_submit(task, &fold_deps);
	if (rc) {
		tsr__obs_drop(obs);
		if (rc == TSR_ENOMEM)
			return tsr__err_of(rc, "fold of a reduction into '%s'", s->name);
		return tsr__err(rc, "fold of a reduction into '%s': submit failed", s->name);
	}

	rc = tsr__coh_wrote_by(nd, NULL, fold->rank);
	if (rc)
		return tsr__err_of(rc, "fold of a reduction into '%s'", s->name);
	return TSR_OK;
}

/* Fold the private buffers in the order the points made them (color order, then requirements
 * and fields). After an error (rc on entry, or a failed fold) the rest are only released. */
int tsr__folds_submit(struct tsr_pending_fold *folds, int nfolds, int rc)
{
	for (int i = 0; i < nfolds; i++) {
		if (!rc)
			rc = submit_fold(&folds[i]);
		if (folds[i].tmp) /* NULL: a point another rank ran */
			starpu_data_unregister_submit(folds[i].tmp);
	}

	return rc;
}

/* Partial values of ordered future reductions are StarPU handles kept for reuse, one free list
 * per element size: registering and unregistering a handle for every point costs about as much
 * as the point's task. A fold task's callback (on a worker) gives its handles back once it has
 * read them, so a later launch takes handles that no pending task uses. Several ranks pool their
 * gathers' buffers too (fold_ranks.c): one size per round or subtree, 11 at 1,024 ranks, for each
 * size of value and most points per rank. */
#define TSR_PARTIAL_SIZES 32

struct partial_pool {
	size_t size;
	starpu_data_handle_t *free; /* room for every handle of this size ever made */
	int64_t nfree, nmade;
	int64_t cap; /* room in free; grows by doubling, so that many small takes copy it rarely */
};

static struct partial_pool pools[TSR_PARTIAL_SIZES];
static int npools;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* Under pool_lock. */
static struct partial_pool *pool_of(size_t size)
{
	for (int i = 0; i < npools; i++)
		if (pools[i].size == size)
			return &pools[i];

	if (npools == TSR_PARTIAL_SIZES)
		return NULL;

	memset(&pools[npools], 0, sizeof pools[npools]);
	pools[npools].size = size;
	return &pools[npools++];
}

/* Under pool_lock: take up to n free handles into out; make room in the free list for the
 * handles the caller will register, so that giving them back never allocates. Returns how many
 * were taken, or -1 when out of memory. */
static int64_t pool_take(struct partial_pool *pool, int64_t n, starpu_data_handle_t *out)
{
	int64_t taken = n < pool->nfree ? n : pool->nfree;
	int64_t made = pool->nmade + (n - taken);

	if (made > pool->cap) {
		int64_t cap = made > 2 * pool->cap ? made : 2 * pool->cap;
		starpu_data_handle_t *nf = realloc(pool->free, (size_t)cap * sizeof *nf);
		if (!nf)
			return -1;
		pool->free = nf;
		pool->cap = cap;
	}
	pool->nmade = made;

	pool->nfree -= taken;
	if (taken > 0) /* none: pool->free may still be NULL */
		memcpy(out, pool->free + pool->nfree, (size_t)taken * sizeof *out);
	return taken;
}

/* One partial value per point, reused or registered (StarPU allocates a new one where its
 * point first writes it). NULL when out of memory. */
struct tsr_partials *tsr__partials_take(int64_t npoints, size_t size)
{
	struct tsr_partials *ps = malloc(sizeof *ps + (size_t)npoints * sizeof ps->h[0]);
	if (!ps)
		return NULL;

	ps->n = npoints;
	int64_t taken = 0;

	pthread_mutex_lock(&pool_lock);
	ps->pool = pool_of(size);
	if (ps->pool)
		taken = pool_take(ps->pool, npoints, ps->h);
	pthread_mutex_unlock(&pool_lock);

	if (taken < 0) {
		free(ps);
		return NULL;
	}

	for (int64_t i = taken; i < npoints; i++)
		tsr__xvalue_register(&ps->h[i], size);
	return ps;
}

/* Fold task callback, or the launch itself when no fold was submitted: the handles go back to
 * their pool (a later writer is ordered after any pending access by StarPU). */
static void partials_give_back(void *arg)
{
	struct tsr_partials *ps = arg;

	pthread_mutex_lock(&pool_lock);
	for (int64_t i = 0; i < ps->n; i++)
		ps->pool->free[ps->pool->nfree++] = ps->h[i];
	pthread_mutex_unlock(&pool_lock);
	free(ps);
}

/* 1 if the set's handles go back to a pool: then a submitted fold task's callback owns the set. */
int tsr__partials_pooled(const struct tsr_partials *ps)
{
	return ps->pool != NULL;
}

/* After the fold was submitted (folded = 1; not for a pooled set, which the fold's callback
 * owns from its submission on) or not: pooled handles come back now; others are unregistered
 * once their tasks are done. */
void tsr__partials_release(struct tsr_partials *ps, int folded)
{
	if (ps->pool) {
		if (!folded)
			partials_give_back(ps);
		return;
	}

	for (int64_t i = 0; i < ps->n; i++) {
		tsr__xvalue_forget(ps->h[i]);
		starpu_data_unregister_submit(ps->h[i]);
	}
	free(ps);
}

/* At tsr_finalize, once every task has run: unregister every pooled handle. */
static void pools_free(void)
{
	for (int i = 0; i < npools; i++) {
		for (int64_t k = 0; k < pools[i].nfree; k++) {
			tsr__xvalue_forget(pools[i].free[k]);
			starpu_data_unregister_submit(pools[i].free[k]);
		}
		free(pools[i].free);
	}
	npools = 0;
}

static struct future_fold_arg *future_fold_arg_new(const struct tsr_future *res, int op,
						   int64_t npoints)
{
	struct future_fold_arg *a = malloc(sizeof *a);
	if (!a)
		return NULL;

	a->type = res->type;
	a->size = res->size;
	a->op = op;
	a->nparts = (int)npoints;
	return a;
}

/* The future fold's node in the task graph, after every point whose node is known. */
static int dag_future_fold(int64_t npoints, const int *dag_ids)
{
	if (!tsr__dag_on)
		return -1;

	int id = tsr__dag_internal("tsr_future_fold", 0, NULL);
	for (int64_t i = 0; dag_ids && i < npoints; i++)
		tsr__dag_edge(dag_ids[i], id, "partial value");
	return id;
}

/* One task folds every point's partial value into the future, in launch order. */
int tsr__future_fold_submit(const char *tn, struct tsr_future *res, int op, struct tsr_partials *ps,
			    const int *dag_ids)
{
	int64_t npoints = ps->n;
	int nbuf = (int)npoints + 1;
	struct future_fold_arg *a = future_fold_arg_new(res, op, npoints);
	struct starpu_task *task = tsr__task_new(&future_fold_cl, a, sizeof *a, nbuf, 0);
	if (!task)
		return tsr__err(TSR_ENOMEM,
				"task '%s': fold of the launch's reduction: out of memory", tn);

	STARPU_TASK_SET_HANDLE(task, res->h, 0);
	STARPU_TASK_SET_MODE(task, STARPU_W, 0);
	for (int64_t i = 0; i < npoints; i++) {
		STARPU_TASK_SET_HANDLE(task, ps->h[i], (int)i + 1);
		STARPU_TASK_SET_MODE(task, STARPU_R, (int)i + 1);
	}

	if (ps->pool) {
		task->callback_func = partials_give_back;
		task->callback_arg = ps;
	}

	if (!tsr__redop_on_devices(op))
		task->where = STARPU_CPU; /* user operators have host code only */

	struct tsr_obs_rec *obs = tsr__obs_internal(task, "tsr_future_fold", 0, NULL,
						    dag_future_fold(npoints, dag_ids));
	int rc = tsr__order_submit(task, NULL);
	if (rc)
		tsr__obs_drop(obs);
	if (rc == TSR_ENODEV)
		return tsr__err(TSR_ENODEV,
				"task '%s': fold of the launch's reduction by '%s': no worker can "
				"run it (a registered operator folds on CPU workers only)",
				tn, tsr__redop_name(op));
	if (rc == TSR_ENOMEM)
		return tsr__err_of(rc, "task '%s': fold of the launch's reduction", tn);
	if (rc)
		return tsr__err(rc, "task '%s': fold of the launch's reduction: submit failed", tn);
	return TSR_OK;
}

void tsr__fold_init(void)
{
	fold_init();
	future_fold_init();
}

void tsr__fold_fini(void)
{
	pools_free();
	tsr__deps_free(&fold_deps);
}
