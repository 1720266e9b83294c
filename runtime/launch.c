/* launch.c: single and index launches. A launch is validated completely (launch_check.c: handles,
 * fields, privileges, bounds, interference) before anything is submitted; then coherence lists the
 * handles each point must wait for (coherence_entry.c, coherence.c), and each point becomes one
 * starpu_task whose cl_arg carries the point's requirement records and the by-value arguments (one
 * block of the context pool per point). Reductions that need private buffers, fold tasks or
 * partial values ask fold.c for them. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "launch.h"

static enum starpu_data_access_mode mode_of(const struct resolved_req *q)
{
	if (q->redop)
		return STARPU_REDUX;
	return q->priv == TSR_READ ? STARPU_R : q->priv == TSR_WRITE ? STARPU_W : STARPU_RW;
}

/* One point of a launch on its way to StarPU: the launch's requirements and the region each one
 * reaches at this point. */
struct point_launch {
	struct tsr_task *t;
	int n;
	/* the launch's: a fallback to a private buffer sticks for later points */
	struct resolved_req *q;
	/* subs[i]: the region of requirement i at this point */
	struct tsr_region **subs;
	int pdim; /* 0 for a single launch */
	const int64_t *point;
	/* several ranks: the rank that runs it (TSR_ALL_RANKS: every one) */
	int rank;
	/* where the launch's points may run (tsr__check_placement) */
	const struct tsr_placement *pl;
	/* out: its node in the task graph, -1 if none */
	int dag_id;
	/* several ranks, a structured launch: its moves are made and its writes recorded for the
	 * whole launch (coherence_sym.c); the point only orders its own task */
	int structured;
};

/* Buffers the point's task may need: one per field, one per future, one for the return slot, and
 * the handles coherence lists for ordering as buffers (not order.c's waits). Requirements on one
 * handle share a buffer, so the task may end with fewer. */
static int count_buffers(const struct point_launch *p, const struct tsr_ret_slot *ret,
			 const struct tsr_deps *deps)
{
	int nbuf = ret ? 1 : 0;
	for (int i = 0; i < p->n; i++)
		nbuf += p->q[i].kind == TSR_REQ_FUTURE ? 1 : p->q[i].nfields;
	return nbuf + tsr__deps_nbuffers(deps);
}

/* What the point's task must wait for besides its own handles (coherence_entry.c): the last writers
 * of the pieces each field it uses overlaps. Reads first: a point never reads what it writes. */
static int collect_deps(const struct point_launch *p, struct tsr_deps *deps)
{
	tsr__deps_reset(deps);

	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < p->n; i++) {
			const struct resolved_req *q = &p->q[i];
			int write = q->priv != TSR_READ;
			/* READ_WRITE and REDUCE read the old values */
			int reads = q->priv != TSR_WRITE;

			if (!tsr__uses_tree(q) || write != pass)
				continue;

			for (int k = 0; k < q->nfields; k++) {
				struct tsr_node *nd = &p->subs[i]->nodes[q->fields[k]];
				int rc = p->structured
						 ? tsr__coh_deps(nd, write, deps)
						 : tsr__coh_access(nd, reads, write, p->rank, deps);
				if (rc)
					return tsr__err_of(rc, "task '%s'", p->t->name);
			}
		}

	return TSR_OK;
}

/* The node of a written field at requirement i, field k of the point. */
static struct tsr_node *written_node(const struct point_launch *p, int i, int k)
{
	return &p->subs[i]->nodes[p->q[i].fields[k]];
}

/* Whether requirement q writes through the nodes' own handles in an exclusive mode (not a
 * reduction, whose readers must list the node's handle to have StarPU fold it). */
static int writes_exclusively(const struct resolved_req *q)
{
	return tsr__uses_tree(q) && q->priv != TSR_READ && mode_of(q) != STARPU_REDUX;
}

/* The point's group node (coherence.c): the first node it writes exclusively; NULL if none. */
static struct tsr_node *group_node(const struct point_launch *p)
{
	for (int i = 0; i < p->n; i++)
		if (writes_exclusively(&p->q[i]) && p->q[i].nfields > 0)
			return written_node(p, i, 0);
	return NULL;
}

/* Record one write of the point; rc as record_writes. */
static int record_write(const struct point_launch *p, struct tsr_node *n, struct tsr_node *group)
{
	int rc = p->structured ? tsr__coh_wrote(n, group, tsr__here(p->rank))
			       : tsr__coh_wrote_by(n, group, p->rank);
	return tsr__err_of(rc, "task '%s'", p->t->name);
}

/* After the point's task is submitted: what it writes has it as last writer. The group node is
 * recorded first; the other nodes of its field that the point writes exclusively share its
 * token. */
static int record_writes(const struct point_launch *p)
{
	struct tsr_node *g = group_node(p);
	int rc = g ? record_write(p, g, NULL) : TSR_OK;

	for (int i = 0; i < p->n && !rc; i++) {
		const struct resolved_req *q = &p->q[i];
		if (!tsr__uses_tree(q) || q->priv == TSR_READ)
			continue;

		for (int k = 0; k < q->nfields && !rc; k++) {
			struct tsr_node *n = written_node(p, i, k);
			int shares = g && writes_exclusively(q) &&
				     n->region->root == g->region->root && n->field == g->field;

			if (n != g)
				rc = record_write(p, n, shares ? g : NULL);
		}
	}

	return rc;
}

/* The point's cl_arg: its context, the requirement records, then a copy of the by-value
 * arguments, in one block of the context pool (ctxpool.c). NULL when out of memory. */
static struct tsr_ctx *ctx_new(const struct point_launch *p, const void *args, size_t arglen,
			       size_t *size)
{
	size_t sz = sizeof(struct tsr_ctx) + p->n * sizeof(struct tsr_reqrec) + arglen;
	struct tsr_ctx *ctx = tsr__ctx_alloc(sz);
	if (!ctx)
		return NULL;

	memset(ctx, 0, sizeof *ctx);
	ctx->task = p->t;
	ctx->dag_id = -1;
	ctx->seq = ++tsr__submit_seq;
	ctx->nreqs = p->n;
	ctx->point_dim = p->pdim;
	memcpy(ctx->point, p->point, sizeof ctx->point);

	ctx->arglen = arglen;
	ctx->args = arglen ? (char *)ctx + sizeof(struct tsr_ctx) + p->n * sizeof(struct tsr_reqrec)
			   : NULL;
	if (arglen)
		memcpy(ctx->args, args, arglen);

	ctx->ret_buf = -1;
	*size = sz;
	return ctx;
}

/* The StarPU task being built and how many buffers are set. */
struct task_build {
	struct starpu_task *task;
	int nbuf;
};

/* Append a buffer; returns its index. */
static int add_buffer(struct task_build *tb, starpu_data_handle_t h, enum starpu_data_access_mode m)
{
	int b = tb->nbuf++;
	STARPU_TASK_SET_HANDLE(tb->task, h, b);
	STARPU_TASK_SET_MODE(tb->task, m, b);
	return b;
}

/* One buffer per handle: requirements promoted to the same ancestor share it, read-write if
 * their modes differ. Returns the buffer's index. */
static int share_or_add_buffer(struct task_build *tb, starpu_data_handle_t h,
			       enum starpu_data_access_mode m)
{
	for (int j = 0; j < tb->nbuf; j++)
		if (STARPU_TASK_GET_HANDLE(tb->task, j) == h) {
			if (STARPU_TASK_GET_MODE(tb->task, j) != m)
				STARPU_TASK_SET_MODE(tb->task, STARPU_RW, j);
			return j;
		}

	return add_buffer(tb, h, m);
}

static void add_future_buffer(struct task_build *tb, struct tsr_reqrec *r,
			      const struct resolved_req *q)
{
	r->fstate = q->fut->state;
	r->first_buf = add_buffer(tb, q->fut->h, STARPU_R);
}

/* Field f of requirement q through subregion s's handle; a private buffer when it reduces
 * through one (folded after the task, in the order the points make them). */
static int field_buffer(struct task_build *tb, const struct resolved_req *q, struct tsr_region *s,
			int f, struct tsr_pending_fold *folds, int *nfolds)
{
	if (q->private_redop) {
		starpu_data_handle_t tmp = tsr__fold_private(s, f, q->redop, folds, nfolds);
		return add_buffer(tb, tmp, STARPU_W);
	}

	struct tsr_node *nd = &s->nodes[f];
	enum starpu_data_access_mode m = mode_of(q);
	if (m == STARPU_REDUX)
		tsr__node_set_redux(nd, s->fields[f].type, q->redop);
	return share_or_add_buffer(tb, nd->h, m);
}

/* The record the variant reads for a region requirement (bounds, buffers). */
static void add_region_buffers(struct task_build *tb, struct tsr_reqrec *r,
			       const struct resolved_req *q, struct tsr_region *s,
			       struct tsr_pending_fold *folds, int *nfolds)
{
	r->nfields = q->nfields;
	r->dim = s->bounds.dim;
	memcpy(r->lo, s->bounds.lo, sizeof r->lo);
	memcpy(r->hi, s->bounds.hi, sizeof r->hi);
	r->region = s;
	r->root_id = s->root->id;
	r->finfo = s->fields;
	r->private_redop = q->private_redop;

	for (int k = 0; k < q->nfields; k++) {
		r->fields[k] = q->fields[k];
		r->buf[k] = field_buffer(tb, q, s, q->fields[k], folds, nfolds);
	}
}

static void add_ret_buffer(struct task_build *tb, struct tsr_ctx *ctx,
			   const struct tsr_ret_slot *ret)
{
	ctx->ret_op = ret->op;
	ctx->ret_partial = ret->partial;
	ctx->ret_state = ret->state;

	/* a variable, not a conditional: StarPU 1.4's macro does not parenthesise its mode */
	enum starpu_data_access_mode ret_mode = ret->op && !ret->partial ? STARPU_REDUX : STARPU_W;
	ctx->ret_buf = add_buffer(tb, ret->h, ret_mode);
}

/* Every requirement's buffers in order, the return slot, then the handles listed for ordering. */
static void add_buffers(struct task_build *tb, struct tsr_ctx *ctx, const struct point_launch *p,
			const struct tsr_ret_slot *ret, const struct tsr_deps *deps,
			struct tsr_pending_fold *folds, int *nfolds)
{
	for (int i = 0; i < p->n; i++) {
		struct tsr_reqrec *r = &ctx->reqs[i];
		memset(r, 0, sizeof *r);
		r->kind = p->q[i].kind;
		r->priv = p->q[i].priv;
		if (p->q[i].kind == TSR_REQ_FUTURE)
			add_future_buffer(tb, r, &p->q[i]);
		else
			add_region_buffers(tb, r, &p->q[i], p->subs[i], folds, nfolds);
	}

	if (ret)
		add_ret_buffer(tb, ctx, ret);

	for (int i = 0; i < deps->n; i++)
		if (!tsr__dep_waits_only(deps->v[i].mode)) /* order.c's business only */
			share_or_add_buffer(tb, deps->v[i].h, deps->v[i].mode);
	tb->task->nbuffers = tb->nbuf;
}

/* Where the task may run: CPUs only for registered operators (the launch checked that it can),
 * a color the locality policy keeps on one worker, the mapper's decision (checked against the
 * same). */
static void place_task(struct task_build *tb, struct tsr_ctx *ctx, const struct point_launch *p,
		       const tsr_mapping_t *map)
{
	if (p->pl->cpu_only)
		tb->task->where = STARPU_CPU;

	int mr = tsr__map_req(p->n, p->q);
	if (mr >= 0) {
		ctx->aff_color = p->subs[mr]->color_index;
		ctx->aff_ncolors = p->q[mr].part->ncolors;
	}

	if (map)
		tsr__map_apply(tb->task, map);
}

/* The point's node and accesses in the task graph (TSR_DAG, critical path). A reduction through
 * private buffers reaches its region through the fold tasks only (fold.c records them). The cost
 * comes first: each access raises the ancestors' bottom levels by the node's, and a cost set
 * after them would reach the ancestors only when a later task raised this node again. */
static void dag_record(struct starpu_task *task, struct tsr_ctx *ctx, struct point_launch *p)
{
	ctx->dag_id = tsr__dag_task(p->t->name, p->pdim, p->point, &ctx->dag_cell);
	p->dag_id = ctx->dag_id;
	tsr__dag_set_cost(ctx->dag_id, task);

	for (int i = 0; i < p->n; i++)
		if (tsr__uses_tree(&p->q[i]))
			for (int k = 0; k < p->q[i].nfields; k++)
				tsr__dag_access(ctx->dag_id, p->subs[i], p->q[i].fields[k],
						p->q[i].priv);
}

static int submit_task(struct tsr_task *t, struct starpu_task *task, struct tsr_ctx *ctx,
		       const struct tsr_placement *pl, const struct tsr_deps *deps)
{
	struct tsr_obs_rec *obs = tsr__obs_task(task, ctx);
	tsr__ctx_hold_states(ctx); /* before submission: the task may end before submit returns */
	/* on failure the task is gone, not the context */
	int rc = tsr__order_submit_point(task, deps, ctx);
	if (!rc)
		return TSR_OK;

	tsr__obs_drop(obs);
	tsr__ctx_drop_states(ctx);
	tsr__ctx_release(ctx);
	if (rc == TSR_ENODEV) /* tsr__check_placement should have said so before */
		return tsr__no_worker_error(t, pl->cpu_only ? pl->why : NULL);
	if (rc == TSR_ENOMEM)
		return tsr__err_of(rc, "task '%s'", t->name);
	return tsr__err(rc, "task '%s': starpu_task_submit failed", t->name);
}

static struct tsr_deps point_deps; /* one host thread: reused by every point */

/* What point pi waits for: what coherence derives (and a recording keeps), or, replaying, what
 * the recording holds. */
static int point_deps_of(const struct point_launch *p, struct replay_step *step, int64_t pi,
			 struct tsr_deps *replayed, const struct tsr_deps **out)
{
	if (step->mode == REPLAY_REPLAY) {
		tsr__replay_deps(step, pi, replayed);
		*out = replayed;
		return TSR_OK;
	}

	int rc = collect_deps(p, &point_deps);
	if (!rc && step->mode == REPLAY_RECORD)
		tsr__replay_keep_deps(step, pi, &point_deps);
	*out = &point_deps;
	return rc;
}

/* Several ranks, a point another rank runs: its private reduction buffers' folds are still
 * listed (on every rank in the same order: each fold moves data), without buffers. */
static void list_remote_folds(const struct point_launch *p, struct tsr_pending_fold *folds,
			      int *nfolds)
{
	for (int i = 0; i < p->n; i++) {
		const struct resolved_req *q = &p->q[i];
		if (!q->private_redop)
			continue;

		for (int k = 0; k < q->nfields; k++) {
			struct tsr_pending_fold *f = &folds[(*nfolds)++];
			f->sub = p->subs[i];
			f->field = q->fields[k];
			f->tmp = NULL;
			f->op = q->redop;
			f->rank = p->rank;
			f->dag_src = -1;
			f->seq = tsr__submit_seq + 1;
		}
	}
}

/* Submit one point: what it waits for, then the StarPU task with its buffers, placement and graph
 * node, then what it writes. Private reduction buffers are added to folds, to be folded after the
 * launch. */
static int submit_point(struct point_launch *p, const void *args, size_t arglen,
			const struct tsr_ret_slot *ret, struct tsr_pending_fold *folds, int *nfolds,
			const tsr_mapping_t *map, struct replay_step *step, int64_t pi)
{
	p->dag_id = -1;
	struct tsr_deps replayed;
	const struct tsr_deps *deps;
	int rc = point_deps_of(p, step, pi, &replayed, &deps);
	if (rc)
		return rc;

	if (!tsr__here(p->rank)) {
		/* another rank runs it: this one only sent what it reads, and notes what it
		 * writes */
		list_remote_folds(p, folds, nfolds);
		return record_writes(p);
	}

	int first_fold = *nfolds;
	int nbuf = count_buffers(p, ret, deps);
	size_t ctx_size = 0;
	struct tsr_ctx *ctx = ctx_new(p, args, arglen, &ctx_size);
	struct starpu_task *task = tsr__task_new(&p->t->cl, ctx, ctx_size, nbuf, 1);
	if (!task)
		return tsr__err(TSR_ENOMEM, "task '%s': out of memory", p->t->name);

	struct task_build tb = {task, 0};
	add_buffers(&tb, ctx, p, ret, deps, folds, nfolds);
	for (int i = first_fold; i < *nfolds; i++) {
		folds[i].rank = p->rank;
		folds[i].seq = ctx->seq;
	}

	place_task(&tb, ctx, p, map);
	if (tsr__dag_on)
		dag_record(task, ctx, p);
	for (int i = first_fold; i < *nfolds; i++)
		folds[i].dag_src = p->dag_id;

	if ((rc = submit_task(p->t, task, ctx, p->pl, deps)))
		return rc;
	return record_writes(p);
}

static int make_result(struct tsr_task *t, tsr_future_t *result, int op, const char *what,
		       struct tsr_future **res)
{
	*res = NULL;
	if (!result)
		return TSR_OK;
	if (t->ret_type == TSR_NONE)
		return tsr__err(TSR_EINVAL,
				"%s: task '%s' returns no value (ret_type TSR_NONE) but a result "
				"future was asked for",
				what, t->name);

	struct tsr_future *f = tsr__future_new(t->ret_type, t->ret_size, NULL);
	if (!f)
		return tsr__err(TSR_ENOMEM, "%s: task '%s': out of memory", what, t->name);

	if (op) {
		/* the value starts empty: StarPU's reduction starts from the points' identities */
		starpu_data_set_reduction_methods(f->h, tsr__redux_cl(t->ret_type, op),
						  tsr__init_cl(t->ret_type, op));
	}

	snprintf(f->producer, sizeof f->producer, "task '%.50s'", t->name);
	*res = f;
	result->id = f->id;
	return TSR_OK;
}

/* A failed launch takes its result future back; points already submitted keep their reference
 * through StarPU, so the future goes away with them. */
static void drop_result(struct tsr_future *res, tsr_future_t *result)
{
	if (!res)
		return;
	tsr__future_free(res);
	result->id = 0;
}

/* A single launch once its call is noted: checks, result, mapping, the one point, its folds. */
static int single_launch(struct tsr_task *t, int nreqs, const tsr_req_t *reqs, const void *args,
			 size_t arglen, tsr_future_t *result, struct replay_step *step)
{
	struct resolved_req q[TSR_MAX_REQS];
	int rc = tsr__resolve_all(t->name, nreqs, reqs, 0, q);
	if (rc)
		return rc;
	if ((rc = tsr__check_pairs(t->name, nreqs, q, 0)))
		return rc;
	struct tsr_placement pl;
	if ((rc = tsr__check_placement(t, nreqs, q, 0, &pl)))
		return rc;
	tsr__replay_resolved(step, q, nreqs, NULL, 1);

	struct tsr_future *res;
	if ((rc = make_result(t, result, 0, "tsr_launch", &res)))
		return rc;

	int64_t point[3] = {0, 0, 0};
	tsr_mapping_t map;
	int rank = tsr__single_rank(t, nreqs, q);
	int mapped = tsr__map_needed(NULL) && rank != TSR_ALL_RANKS;
	if (mapped && (rc = tsr__map_decide(t, 0, point, tsr_box1(0, 0), NULL, -1, rank,
					    pl.cpu_only ? pl.why : NULL, &map))) {
		drop_result(res, result);
		return rc;
	}
	if (mapped)
		rank = map.rank;

	struct tsr_region *subs[TSR_MAX_REQS];
	for (int i = 0; i < nreqs; i++)
		subs[i] = q[i].region;
	struct point_launch p = {.t = t,
				 .n = nreqs,
				 .q = q,
				 .subs = subs,
				 .pdim = 0,
				 .point = point,
				 .rank = rank,
				 .pl = &pl};
	struct tsr_ret_slot ret = {
		.h = res ? res->h : NULL,
		.op = 0,
		.partial = 0,
		.state = res ? res->state : NULL,
	};
	struct tsr_pending_fold folds[TSR_MAX_REQS * TSR_MAX_REQ_FIELDS];
	int nfolds = 0;

	rc = submit_point(&p, args, arglen, res ? &ret : NULL, folds, &nfolds, mapped ? &map : NULL,
			  step, 0);
	rc = tsr__folds_submit(folds, nfolds, rc);
	if (!rc && res && tsr__dist.on)
		rc = tsr__future_bcast(res, rank);
	if (rc)
		drop_result(res, result);
	return rc;
}

/* The window (TSR_WINDOW): how many submitted, unfinished StarPU tasks a launch may find before
 * it waits. Without one the host thread submits a whole loop ahead of the workers: on 2 cores its
 * submissions then take the workers' cores for as long as it runs, and the tasks in flight (each
 * with its job, dependence lists and buffers) outgrow the caches the workers need. Task Bench
 * stencil_1d, 2 workers, 2,048 kernel iterations (4.2 us tasks), eager, us per step: 12.6 (1,000
 * steps) and 14.6 (20,000) without a window; 7.4 and 6.9 with 200; 7.3 at 50; 8.1 at 20, where the
 * workers start to run dry (apps/bench/README.md, "The window"). Waiting only at a launch's start,
 * never inside one, keeps it safe: everything submitted before can finish without the host
 * thread (a launch never waits on a later one, a mapped field cannot be launched on, and on ranks
 * the oldest unfinished task's inputs were sent by ranks that have passed that launch), and a
 * paused runtime is never waited for. The wait sleeps in StarPU (a condition variable). */
static int window = 256;

int tsr__launch_read_window(void)
{
	return tsr__env_int("TSR_WINDOW", 0, 1048576, &window);
}

/* At a launch's start: past the window, wait until half of it is left. */
static void window_wait(void)
{
	if (window <= 0 || tsr__rt.paused)
		return;
	if (starpu_task_nsubmitted() <= window)
		return;
	starpu_task_wait_for_n_submitted((unsigned)(window / 2));
}

static int launch_single(struct tsr_task *t, int nreqs, const tsr_req_t *reqs, const void *args,
			 size_t arglen, tsr_future_t *result);

int tsr_launch(tsr_task_t tid, int nreqs, const tsr_req_t *reqs, const void *args, size_t arglen,
	       tsr_future_t *result)
{
	struct tsr_task *t;
	int rc = tsr__task_lookup(tid, "tsr_launch", &t);
	if (rc)
		return rc;

	window_wait();
	tsr__obs_launch_begin(t, 1);
	rc = launch_single(t, nreqs, reqs, args, arglen, result);
	tsr__obs_launch_end();
	return rc;
}

/* The launch noted (a replay compares it with the recording), then made. */
static int launch_single(struct tsr_task *t, int nreqs, const tsr_req_t *reqs, const void *args,
			 size_t arglen, tsr_future_t *result)
{
	int rc;
	if ((rc = tsr__check_counts("tsr_launch", t, nreqs, reqs, args, arglen)))
		return rc;
	tsr__note_launch("tsr_launch", t, nreqs, reqs, (tsr_box_t){0});

	struct replay_step step;
	struct launch_call call = {.t = t,
				   .n = nreqs,
				   .reqs = reqs,
				   .arglen = arglen,
				   .has_result = result != NULL};
	tsr__replay_step(&step, &call);
	rc = single_launch(t, nreqs, reqs, args, arglen, result, &step);
	tsr__replay_done(&step, rc);
	return rc;
}

/* Mapping decisions for every point, before anything is submitted: a refused mapping leaves no
 * point of the launch behind. */
static int decide_maps(struct index_launch *L)
{
	int mr = tsr__map_req(L->n, L->q);
	const struct tsr_partition *mpart = mr >= 0 ? L->q[mr].part : NULL;
	if (!tsr__map_needed(mpart))
		return TSR_OK;

	L->maps = malloc((size_t)L->npoints * sizeof *L->maps);
	if (!L->maps)
		return tsr__err(TSR_ENOMEM, "tsr_index_launch: out of memory");

	for (int64_t pi = 0; pi < L->npoints; pi++) {
		int64_t point[3];
		tsr__box_point(L->domain, pi, point);
		int color = mr >= 0 ? L->colors[pi * L->n + mr] : -1;
		int rank = L->ranks ? L->ranks[pi] : 0;

		int rc = tsr__map_decide(L->t, L->domain.dim, point, L->domain, mpart, color, rank,
					 L->pl.cpu_only ? L->pl.why : NULL, &L->maps[pi]);
		if (rc)
			return rc;
		if (L->ranks)
			L->ranks[pi] = L->maps[pi].rank;
	}

	return TSR_OK;
}

/* Room for every private reduction buffer the points may make: any REDUCE may go through
 * private buffers. A launch without REDUCE makes none and allocates nothing. */
static int alloc_folds(struct index_launch *L)
{
	int maxfolds = 0;
	for (int i = 0; i < L->n; i++)
		if (L->q[i].redop)
			maxfolds += L->q[i].nfields;
	if (maxfolds == 0)
		return TSR_OK;

	L->folds = malloc(((size_t)L->npoints * maxfolds + 1) * sizeof *L->folds);
	if (!L->folds)
		return tsr__err(TSR_ENOMEM, "tsr_index_launch: out of memory");
	return TSR_OK;
}

/* The points this rank runs (all of them in one process). */
static int64_t local_points(const struct index_launch *L)
{
	if (!L->ranks)
		return L->npoints;

	int64_t n = 0;
	for (int64_t pi = 0; pi < L->npoints; pi++)
		n += tsr__here(L->ranks[pi]);
	return n;
}

/* Every point's node in the task graph, -1 until its task is made (other ranks' points stay so). */
static int *dag_ids_new(int64_t npoints)
{
	int *ids = malloc((size_t)npoints * sizeof *ids);
	for (int64_t i = 0; ids && i < npoints; i++)
		ids[i] = -1;
	return ids;
}

/* An ordered reduction of the returns gives every point this rank runs its own partial value, in
 * color order. */
static int take_partials(struct index_launch *L, int64_t nlocal)
{
	if (!L->res || !tsr__redux_ordered())
		return TSR_OK;

	L->parts = tsr__partials_take(nlocal, L->res->size);
	if (L->parts && tsr__dag_on)
		L->dag_ids = dag_ids_new(L->npoints);
	if (!L->parts || (tsr__dag_on && !L->dag_ids))
		return tsr__err(TSR_ENOMEM, "tsr_index_launch: task '%s': out of memory",
				L->t->name);
	return TSR_OK;
}

/* Where a point's return goes: the launch's result, or, for an ordered reduction, the partial value
 * of this rank's point number `local` (-1: a point another rank runs). */
static struct tsr_ret_slot point_ret_slot(const struct index_launch *L, tsr_redop_t redop,
					  int64_t local)
{
	struct tsr_ret_slot ret = {
		.h = L->res ? L->res->h : NULL,
		.op = redop.id,
		.partial = 0,
		.state = L->res ? L->res->state : NULL,
	};
	if (L->parts && local >= 0) {
		tsr__assert(local < L->parts->n); /* one partial value per point of this rank */
		ret.h = L->parts->h[local];
		ret.partial = 1;
	}
	return ret;
}

/* One point of the launch, on `rank`, through its subregions subs. */
static struct point_launch index_point(struct index_launch *L, struct tsr_region **subs,
				       const int64_t *point, int rank)
{
	return (struct point_launch){.t = L->t,
				     .n = L->n,
				     .q = L->q,
				     .subs = subs,
				     .pdim = L->domain.dim,
				     .point = point,
				     .rank = rank,
				     .pl = &L->pl};
}

static int submit_points(struct index_launch *L, const void *args, size_t arglen, tsr_redop_t redop,
			 struct replay_step *step)
{
	struct tsr_region *subs[TSR_MAX_REQS];
	int64_t nlocal = 0;

	for (int64_t pi = 0; pi < L->npoints; pi++) {
		int64_t point[3];
		tsr__box_point(L->domain, pi, point);
		for (int i = 0; i < L->n; i++)
			subs[i] = L->q[i].kind == TSR_REQ_PARTITION
					  ? L->q[i].part->subs[L->colors[pi * L->n + i]]
					  : L->q[i].region;

		int rank = L->ranks ? L->ranks[pi] : 0;
		int here = tsr__here(rank);
		struct tsr_ret_slot ret = point_ret_slot(L, redop, here ? nlocal : -1);
		nlocal += here;

		struct point_launch p = index_point(L, subs, point, rank);
		int rc = submit_point(&p, args, arglen, L->res ? &ret : NULL, L->folds, &L->nfolds,
				      L->maps ? &L->maps[pi] : NULL, step, pi);
		if (rc)
			return rc;
		if (L->dag_ids)
			L->dag_ids[pi] = p.dag_id;
	}

	return TSR_OK;
}

/* One task folds the points' partial values into the result, in launch order; its callback
 * gives the pooled handles back. */
static int fold_returns(struct index_launch *L, tsr_redop_t redop)
{
	if (!L->parts)
		return TSR_OK;

	if (tsr__dist.on) {
		if (!L->plan && !(L->plan = tsr__fold_plan_ranks(L->ranks, L->npoints)))
			return tsr__err(TSR_ENOMEM, "tsr_index_launch: task '%s': out of memory",
					L->t->name);
		int from = TSR_ALL_RANKS;
		int rc = tsr__future_fold_ranks(L->t->name, L->res, redop.id, L->parts, L->plan,
						L->dag_ids, &from);
		L->parts = NULL; /* the fold (or the gathering) owns them now, and the plan */
		L->plan = NULL;
		return rc ? rc : tsr__future_bcast(L->res, from);
	}

	/* Read before the submit: once submitted, the fold's callback may give pooled handles back
	 * and free the set at any moment. */
	int pooled = tsr__partials_pooled(L->parts);
	int rc = tsr__future_fold_submit(L->t->name, L->res, redop.id, L->parts, L->dag_ids);
	if (rc)
		return rc;

	if (!pooled)
		tsr__partials_release(L->parts, 1);
	L->parts = NULL;
	return TSR_OK;
}

/* ---------------------------------------------------------------- structured launches */

/* Every field requirement i reaches: the request coherence_sym.c takes for it. */
static struct tsr_sym_req sym_req(const struct index_launch *L, int i, const struct tsr_ivec *mine)
{
	return (struct tsr_sym_req){.part = L->q[i].part,
				    .mpart = L->q[tsr__map_req(L->n, L->q)].part,
				    .domain = L->domain,
				    .mine = mine->v,
				    .nmine = mine->n};
}

static struct tsr_node *root_node(const struct resolved_req *q, int k)
{
	return &q->root->nodes[q->fields[k]];
}

/* What every rank's points read: each rank receives what its points lack and sends what others'
 * lack of what it wrote, under tags every rank reserves alike. */
static int structured_moves(const struct index_launch *L, const struct tsr_ivec *mine)
{
	for (int i = 0; i < L->n; i++) {
		if (L->q[i].kind != TSR_REQ_PARTITION || L->q[i].priv == TSR_WRITE)
			continue;

		struct tsr_sym_req r = sym_req(L, i, mine);
		for (int k = 0; k < L->q[i].nfields; k++) {
			struct tsr_node *root = root_node(&L->q[i], k);
			int64_t base = tsr__dist_tags(tsr__coh_sym_tags(root, &r));
			int rc = tsr__coh_sym_read(root, &r, base);
			if (rc)
				return tsr__err_of(rc, "task '%s'", L->t->name);
		}
	}

	return TSR_OK;
}

/* After this rank's points: every written field's validity is the launch's. */
static int structured_writes(const struct index_launch *L, const struct tsr_ivec *mine,
			     const tsr_box_t *covers)
{
	for (int i = 0; i < L->n; i++) {
		if (L->q[i].kind != TSR_REQ_PARTITION || L->q[i].priv == TSR_READ)
			continue;

		struct tsr_sym_req r = sym_req(L, i, mine);
		for (int k = 0; k < L->q[i].nfields; k++) {
			int rc = tsr__coh_sym_wrote(root_node(&L->q[i], k), &r, &covers[i]);
			if (rc)
				return tsr__err_of(rc, "task '%s'", L->t->name);
		}
	}

	return TSR_OK;
}

/* This rank's point pi: its subregions, its mapping (owners), then the task. */
static int structured_point(struct index_launch *L, int64_t pi, int64_t nth, const void *args,
			    size_t arglen, tsr_redop_t redop, struct replay_step *step)
{
	struct tsr_region *subs[TSR_MAX_REQS];
	int64_t point[3];
	tsr__box_point(L->domain, pi, point);

	for (int i = 0; i < L->n; i++) {
		const struct resolved_req *q = &L->q[i];
		subs[i] = q->kind == TSR_REQ_PARTITION
				  ? q->part->subs[tsr__box_index(q->part->colors, point)]
				  : NULL;
	}

	int mr = tsr__map_req(L->n, L->q);
	struct tsr_partition *m = L->q[mr].part;
	tsr_mapping_t map;
	int mapped = tsr__map_needed(m);
	if (mapped) {
		int rc = tsr__map_decide(L->t, L->domain.dim, point, L->domain, m,
					 (int)tsr__box_index(m->colors, point), tsr__dist.rank,
					 L->pl.cpu_only ? L->pl.why : NULL, &map);
		if (rc)
			return rc;
	}

	struct tsr_ret_slot ret = point_ret_slot(L, redop, nth);
	struct point_launch p = index_point(L, subs, point, tsr__dist.rank);
	p.structured = 1;
	int rc = submit_point(&p, args, arglen, L->res ? &ret : NULL, L->folds, &L->nfolds,
			      mapped ? &map : NULL, step, pi);
	if (!rc && L->dag_ids)
		L->dag_ids[pi] = p.dag_id;
	return rc;
}

/* Where the points' values lie once gathered, from the mapping partition's ranks: computed by the
 * first launch over the partition and domain, then kept (fold_ranks.c). */
static int fold_plan(struct index_launch *L)
{
	const struct tsr_partition *m = L->q[tsr__map_req(L->n, L->q)].part;
	L->plan = tsr__fold_plan_part(m, L->domain);
	if (!L->plan)
		return tsr__err(TSR_ENOMEM, "tsr_index_launch: task '%s': out of memory",
				L->t->name);
	return TSR_OK;
}

/* Several ranks, a structured launch: this rank analyses and submits its own points only. Its
 * moves come from the last writes' partitions and this launch's (coherence_sym.c), not from a
 * walk over every point of the job. */
static int structured_launch(struct index_launch *L, const tsr_box_t *covers, const void *args,
			     size_t arglen, tsr_redop_t redop, tsr_future_t *result,
			     struct replay_step *step)
{
	struct tsr_ivec mine = {0};
	int rc = tsr__launch_mine(L, &mine);

	if (!rc && result && L->t->ret_type != TSR_NONE)
		rc = fold_plan(L); /* where the result's gathering places every point */
	if (!rc)
		rc = make_result(L->t, result, redop.id, "tsr_index_launch", &L->res);
	if (!rc)
		rc = take_partials(L, mine.n);
	if (!rc)
		rc = structured_moves(L, &mine);

	for (int i = 0; i < mine.n && !rc; i++)
		rc = structured_point(L, mine.v[i], i, args, arglen, redop, step);

	if (!rc)
		rc = structured_writes(L, &mine, covers);
	if (!rc)
		rc = fold_returns(L, redop);

	free(mine.v);
	return rc;
}

static void index_launch_free(struct index_launch *L, int rc, tsr_future_t *result)
{
	if (L->parts)
		tsr__partials_release(L->parts, 0);

	free(L->folds);
	free(L->dag_ids);
	free(L->maps);
	free(L->ranks);
	tsr__fold_plan_drop(L->plan);
	if (L->colors != L->few_colors && !L->recorded)
		free(L->colors);

	if (rc)
		drop_result(L->res, result);
}

/* Checks that depend only on the points' colors: a replay whose colors are those recorded has
 * passed them already. */
static int check_colors(struct index_launch *L, const struct replay_step *step)
{
	if (step->mode == REPLAY_REPLAY)
		return TSR_OK;

	int rc = tsr__check_points(L->t->name, L->n, L->q, L->npoints, L->colors);
	if (!rc)
		rc = tsr__check_writes_distinct(L);
	return rc;
}

/* An index launch once its call is noted: everything is checked and decided before the first
 * point is submitted. */
static int index_launch(struct index_launch *L, int nreqs, const tsr_req_t *reqs, const void *args,
			size_t arglen, tsr_redop_t redop, tsr_future_t *result,
			struct replay_step *step)
{
	int rc;
	/* a replay of the same objects takes what it resolved to, and its colors, from the
	 * recording: the checks below that depend on nothing else passed then */
	L->recorded = tsr__replay_reuse(step, reqs, nreqs, L->q, &L->colors);
	if (!L->recorded) {
		if ((rc = tsr__resolve_all(L->t->name, nreqs, reqs, 1, L->q)))
			return rc;
		if ((rc = tsr__check_pairs(L->t->name, nreqs, L->q, 1)))
			return rc;
	}
	int ret_op = result && L->t->ret_type != TSR_NONE ? redop.id : 0;
	if ((rc = tsr__check_placement(L->t, nreqs, L->q, ret_op, &L->pl)))
		return rc;

	/* several ranks: a launch through partitions is analysed for this rank's points only
	 * (traces are off on ranks: runtime/replay.c) */
	tsr_box_t covers[TSR_MAX_REQS];
	int structured = tsr__launch_structured(L, covers);
	if (tsr__dist.on)
		tsr__dist_count_launch(structured);
	if (structured)
		return structured_launch(L, covers, args, arglen, redop, result, step);

	if (!L->recorded) {
		if ((rc = tsr__compute_colors(L)))
			return rc;
		tsr__replay_resolved(step, L->q, L->n, L->colors, L->npoints);
	}
	if ((rc = check_colors(L, step)))
		return rc;
	if ((rc = tsr__decide_ranks(L)))
		return rc;
	if ((rc = decide_maps(L)))
		return rc;
	if ((rc = make_result(L->t, result, redop.id, "tsr_index_launch", &L->res)))
		return rc;
	if ((rc = alloc_folds(L)))
		return rc;
	if ((rc = take_partials(L, local_points(L))))
		return rc;

	rc = submit_points(L, args, arglen, redop, step);
	/* the private buffers are released even after an error, and folded only without one */
	rc = tsr__folds_submit(L->folds, L->nfolds, rc);
	if (!rc)
		rc = fold_returns(L, redop);
	return rc;
}

static int launch_index(struct tsr_task *t, tsr_box_t domain, int nreqs, const tsr_req_t *reqs,
			const void *args, size_t arglen, tsr_redop_t redop, tsr_future_t *result);

int tsr_index_launch(tsr_task_t tid, tsr_box_t domain, int nreqs, const tsr_req_t *reqs,
		     const void *args, size_t arglen, tsr_redop_t redop, tsr_future_t *result)
{
	struct tsr_task *t;
	int rc = tsr__task_lookup(tid, "tsr_index_launch", &t);
	if (rc)
		return rc;

	window_wait();
	tsr__obs_launch_begin(t, 0);
	rc = launch_index(t, domain, nreqs, reqs, args, arglen, redop, result);
	tsr__obs_launch_end();
	return rc;
}

static int launch_index(struct tsr_task *t, tsr_box_t domain, int nreqs, const tsr_req_t *reqs,
			const void *args, size_t arglen, tsr_redop_t redop, tsr_future_t *result)
{
	int rc;
	if ((rc = tsr__check_index_args(t, domain, nreqs, reqs, args, arglen, redop, result)))
		return rc;
	tsr__note_launch("tsr_index_launch", t, nreqs, reqs, domain);

	struct replay_step step;
	struct launch_call call = {.t = t,
				   .index = 1,
				   .domain = domain,
				   .n = nreqs,
				   .reqs = reqs,
				   .arglen = arglen,
				   .redop = redop.id,
				   .has_result = result != NULL};
	tsr__replay_step(&step, &call);

	struct resolved_req q[TSR_MAX_REQS];
	struct index_launch L = {.t = t,
				 .domain = domain,
				 .npoints = tsr_box_volume(domain),
				 .n = nreqs,
				 .q = q};
	rc = index_launch(&L, nreqs, reqs, args, arglen, redop, result, &step);
	index_launch_free(&L, rc, result);
	tsr__replay_done(&step, rc);
	return rc;
}

void tsr__launch_fini(void)
{
	tsr__replay_fini();
	tsr__fold_fini();
	tsr__fold_ranks_fini();
	tsr__deps_free(&point_deps);
}

int tsr__launch_init(void)
{
	tsr__fold_init();
	tsr__fold_ranks_init();
	return TSR_OK;
}

int tsr_run(tsr_task_t tid, const tsr_launch_t *how)
{
	struct tsr_task *t;
	int rc = tsr__task_lookup(tid, "tsr_run", &t);
	if (rc)
		return rc;

	if (!how)
		return tsr__err(TSR_EINVAL,
				"tsr_run: task '%s': null launch description (pass "
				"&(tsr_launch_t){...})",
				t->name);

	const tsr_reqs_t *reqs = &how->reqs;
	if (how->domain.dim == 0) {
		if (how->redop.id != TSR_REDOP_NONE.id)
			return tsr__err(TSR_EINVAL,
					"tsr_run: task '%s': .redop combines the values of an "
					"index launch's points, but this launch has no .domain: "
					"drop .redop, or give the .domain to launch over",
					t->name);
		return tsr_launch(tid, reqs->n, reqs->at, how->args, how->arglen, how->result);
	}

	if ((rc = tsr__check_result_redop(t, how)))
		return rc;
	return tsr_index_launch(tid, how->domain, reqs->n, reqs->at, how->args, how->arglen,
				how->redop, how->result);
}
