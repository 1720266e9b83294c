/* launch.c: single and index launches. A launch is validated completely (handles, fields,
 * privileges, bounds, interference) before anything is submitted; then coherence.c opens the
 * plans each point needs, and each point becomes one starpu_task whose cl_arg carries the
 * point's requirement records and the by-value arguments (one allocation per point). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct rreq {
	int kind;
	struct tsr_region *region;      /* TSR_REQ_REGION */
	struct tsr_partition *part;     /* TSR_REQ_PARTITION */
	struct tsr_future *fut;         /* TSR_REQ_FUTURE */
	struct tsr_region *root;
	int nfields;
	int fields[8];
	tsr_privilege_t priv;
	int redop;                      /* REDUCE op, 0 otherwise */
	int tmp_reduce;                 /* REDUCE through an aliased partition: private buffer + fold */
	tsr_projection_fn proj;
	void *proj_arg;
};

static int resolve(const char *tn, int i, const tsr_req_t *u, int index, struct rreq *q)
{
	memset(q, 0, sizeof *q);
	q->kind = u->kind;
	q->priv = u->priv;
	q->proj = u->proj;
	q->proj_arg = u->proj_arg;
	if (u->kind == TSR_REQ_FUTURE) {
		if (tsr__future_lookup((tsr_future_t){u->handle}, "launch", &q->fut))
			return tsr__err(TSR_ESTALE, "task '%s': requirement %d: future id %#llx was destroyed or never created", tn, i,
			                (unsigned long long)u->handle);
		return TSR_OK;
	}
	if (u->kind == TSR_REQ_REGION) {
		q->region = tsr__handle_get(TSR_K_REGION, u->handle);
		if (!q->region)
			return tsr__err(TSR_ESTALE, "task '%s': requirement %d: region id %#llx was destroyed or never created", tn, i,
			                (unsigned long long)u->handle);
		q->root = q->region->root;
	} else if (u->kind == TSR_REQ_PARTITION) {
		if (!index)
			return tsr__err(TSR_EINVAL, "task '%s': requirement %d names a partition: a single launch takes regions "
			                "(tsr_partition_subregion) and an index launch takes partitions", tn, i);
		q->part = tsr__handle_get(TSR_K_PARTITION, u->handle);
		if (!q->part)
			return tsr__err(TSR_ESTALE, "task '%s': requirement %d: partition id %#llx was destroyed or never created", tn, i,
			                (unsigned long long)u->handle);
		q->region = q->part->parent;
		q->root = q->region->root;
	} else {
		return tsr__err(TSR_EINVAL, "task '%s': requirement %d: unknown kind %d", tn, i, (int)u->kind);
	}
	const char *rn = q->part ? q->part->name : q->region->name;
	if (u->nfields < 1 || u->nfields > TSR_MAX_REQ_FIELDS)
		return tsr__err(TSR_EINVAL, "task '%s': requirement %d on '%s': needs 1 to %d fields, got %d", tn, i, rn,
		                TSR_MAX_REQ_FIELDS, u->nfields);
	q->nfields = u->nfields;
	for (int k = 0; k < u->nfields; k++) {
		int f = u->fields[k];
		if (f < 0 || f >= q->region->nfields)
			return tsr__err(TSR_ENOFIELD, "task '%s': requirement %d: field id %d is not in region '%s' (it has %d fields)", tn,
			                i, f, q->region->name, q->region->nfields);
		for (int j = 0; j < k; j++)
			if (q->fields[j] == f)
				return tsr__err(TSR_EINVAL, "task '%s': requirement %d: field '%s' listed twice", tn, i,
				                q->region->fields[f].name);
		q->fields[k] = f;
		if (q->root->mapped[f])
			return tsr__err(TSR_EBUSY, "task '%s': requirement %d: field '%s' of region '%s' is mapped on the host; "
			                "tsr_unmap it before launching", tn, i, q->region->fields[f].name, q->root->name);
	}
	tsr_privilege_t p = u->priv;
	if (p < 0)   /* a negative value would reach TSR_REDUCE's shift below */
		return tsr__err(TSR_EINVAL, "task '%s': requirement %d on '%s': invalid privilege %d", tn, i, rn, (int)p);
	if (TSR_PRIV_IS_REDUCE(p)) {
		q->redop = TSR_PRIV_REDOP(p);
		if (p != TSR_REDUCE(q->redop))
			return tsr__err(TSR_EINVAL, "task '%s': requirement %d: invalid privilege %#x", tn, i, (unsigned)p);
		for (int k = 0; k < q->nfields; k++) {
			char what[160];
			snprintf(what, sizeof what, "task '%s': requirement %d: field '%s' of '%s'", tn, i,
			         q->region->fields[q->fields[k]].name, rn);
			int rc = tsr__redop_valid(q->region->fields[q->fields[k]].type, q->redop, what);
			if (rc)
				return rc;
		}
	} else if (p != TSR_READ && p != TSR_WRITE && p != TSR_READ_WRITE) {
		return tsr__err(TSR_EINVAL, "task '%s': requirement %d on '%s': invalid privilege %#x", tn, i, rn, (unsigned)p);
	}
	int aliased = q->part ? (!q->part->disjoint || tsr__region_aliased(q->region)) : tsr__region_aliased(q->region);
	if (index && q->part && !q->part->disjoint && (p == TSR_WRITE || p == TSR_READ_WRITE))
		return tsr__err(TSR_EINTERFERE, "task '%s': requirement %d: %s of field '%s' through '%s', which is aliased "
		                "(its subregions overlap): writes must go through a disjoint partition", tn, i, tsr__priv_name(p),
		                q->region->fields[q->fields[0]].name, rn);
	if (q->redop && (aliased || tsr__redux_ordered()))
		q->tmp_reduce = 1;
	return TSR_OK;
}

/* The first field two requirements share (messages name it), or -1. */
static int common_field(const struct rreq *a, const struct rreq *b)
{
	for (int i = 0; i < a->nfields; i++)
		for (int j = 0; j < b->nfields; j++)
			if (a->fields[i] == b->fields[j])
				return a->fields[i];
	return -1;
}

static int fields_overlap(const struct rreq *a, const struct rreq *b)
{
	return common_field(a, b) >= 0;
}

/* Pairs of requirements of one launch that cannot be honoured together. */
static int check_pairs(const char *tn, int n, struct rreq *q, int index)
{
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++) {
			if (a == b || q[a].kind == TSR_REQ_FUTURE || q[b].kind == TSR_REQ_FUTURE || q[a].priv == TSR_READ)
				continue;
			if (q[a].root != q[b].root || !fields_overlap(&q[a], &q[b]))
				continue;
			if (q[a].redop && q[b].redop == q[a].redop)
				continue;   /* reductions with one operator commute */
			if (index && q[a].kind == TSR_REQ_PARTITION && q[b].kind == TSR_REQ_PARTITION)
				continue;   /* decided point by point once colors are known (check_points) */
			/* only data that can overlap interferes: for an index launch, the regions the two
			 * partitions cut (e.g. the private and shared halves of one disjoint partition) */
			if (!tsr__box_overlap(q[a].region->bounds, q[b].region->bounds))
				continue;
			return tsr__err(TSR_EINTERFERE, "task '%s': requirements %d (%s on '%s') and %d (%s on '%s') both touch "
			                "field '%s' of region '%s' and interfere", tn, a, tsr__priv_name(q[a].priv),
			                q[a].part ? q[a].part->name : q[a].region->name, b, tsr__priv_name(q[b].priv),
			                q[b].part ? q[b].part->name : q[b].region->name,
			                q[a].root->fields[common_field(&q[a], &q[b])].name, q[a].root->name);
		}
	return TSR_OK;
}

/* After coherence ran for a point: is every node it uses valid in its mode? */
static int node_valid(const struct tsr_node *n, int write)
{
	if (write ? (n->open_rw || n->nopen_ro) : n->open_rw != NULL)
		return 0;
	for (const struct tsr_node *m = n; m->parent; m = m->parent) {
		const struct tsr_node *x = m->parent;
		if (x->open_rw == m->part)
			continue;
		if (write)
			return 0;
		int found = 0;
		for (int i = 0; i < x->nopen_ro; i++)
			found |= x->open_ro[i] == m->part;
		if (!found)
			return 0;
	}
	return 1;
}

/* Index launch: two partition requirements on one field interfere if a subregion one of them
 * writes at some point overlaps a subregion the other touches at any point (Legion's rule). */
static int check_points(const char *tn, int n, const struct rreq *q, int64_t npoints, const int *colors)
{
	char bs[96], bs2[96];
	for (int a = 0; a < n; a++) {
		if (q[a].kind != TSR_REQ_PARTITION || q[a].priv == TSR_READ)
			continue;
		for (int b = 0; b < n; b++) {
			if (b == a || q[b].kind != TSR_REQ_PARTITION || q[a].root != q[b].root || !fields_overlap(&q[a], &q[b]))
				continue;
			if (q[a].redop && q[b].redop == q[a].redop)
				continue;
			if (!tsr__box_overlap(q[a].region->bounds, q[b].region->bounds))
				continue;
			if (npoints > 2048)
				return tsr__err(TSR_EINTERFERE, "task '%s': requirements %d and %d write and access field '%s' of region "
				                "'%s' through partitions '%s' and '%s'; with %lld points the launch is not checked point "
				                "by point: split it", tn, a, b, q[a].region->fields[q[a].fields[0]].name, q[a].root->name,
				                q[a].part->name, q[b].part->name, (long long)npoints);
			for (int64_t pi = 0; pi < npoints; pi++) {
				tsr_box_t ba = q[a].part->boxes[colors[pi * n + a]];
				for (int64_t pj = 0; pj < npoints; pj++) {
					tsr_box_t bb = q[b].part->boxes[colors[pj * n + b]];
					if (tsr__box_overlap(ba, bb))
						return tsr__err(TSR_EINTERFERE, "task '%s': requirement %d (%s on '%s') at point %lld writes "
						                "field '%s' of %s, which requirement %d (%s on '%s') touches at point %lld (%s): "
						                "the points interfere", tn, a, tsr__priv_name(q[a].priv), q[a].part->name,
						                (long long)pi, q[a].root->fields[common_field(&q[a], &q[b])].name,
						                tsr__box_str(ba, bs, sizeof bs), b, tsr__priv_name(q[b].priv), q[b].part->name,
						                (long long)pj, tsr__box_str(bb, bs2, sizeof bs2));
				}
			}
		}
	}
	return TSR_OK;
}

static enum starpu_data_access_mode mode_of(const struct rreq *q)
{
	if (q->redop)
		return STARPU_REDUX;
	return q->priv == TSR_READ ? STARPU_R : q->priv == TSR_WRITE ? STARPU_W : STARPU_RW;
}

/* The requirement whose color maps a point (owners, locality): the first partition requirement
 * that writes, else the first partition requirement; -1 if none. */
static int map_req(int n, const struct rreq *q)
{
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++)
			if (q[i].kind == TSR_REQ_PARTITION && (pass == 1 || q[i].priv != TSR_READ))
				return i;
	return -1;
}

/* Submit one point: coherence, then the StarPU task. subs[i] is the region of requirement i. */
static int submit_point(struct tsr_task *t, int n, struct rreq *q, struct tsr_region **subs, int pdim,
                        const int64_t point[3], const void *args, size_t arglen, const struct tsr_ret_slot *ret,
                        struct tsr_pending_fold *folds, int *nfolds, const tsr_mapping_t *map)
{
	int nbuf = ret ? 1 : 0;
	for (int i = 0; i < n; i++)
		nbuf += q[i].kind == TSR_REQ_FUTURE ? 1 : q[i].nfields;
	/* Where each requirement is reached: its own node, or an ancestor's handle with a window on
	 * it. Writes below an aliased partition go to the region above the topmost aliased partition
	 * (StarPU's overlapping views are read-only); requirements of a single launch that reach one
	 * field through plans that cannot be open together go to the root. */
	struct tsr_region *tg[TSR_MAX_REQS];
	for (int i = 0; i < n; i++) {
		tg[i] = subs[i];
		if (q[i].kind != TSR_REQ_FUTURE && !q[i].tmp_reduce && q[i].priv != TSR_READ && !q[i].redop &&
		    tsr__region_aliased(subs[i]))
			tg[i] = tsr__fold_target(subs[i]);
	}
	for (int attempt = 0;; attempt++) {
		/* coherence first: switches must precede the task */
		for (int i = 0; i < n; i++) {
			if (q[i].kind == TSR_REQ_FUTURE || q[i].tmp_reduce)
				continue;
			for (int k = 0; k < q[i].nfields; k++)
				tsr__coh_access(&tg[i]->nodes[q[i].fields[k]], q[i].priv != TSR_READ);
		}
		int bad = -1, badf = 0;
		for (int i = 0; i < n && bad < 0; i++) {
			if (q[i].kind == TSR_REQ_FUTURE || q[i].tmp_reduce)
				continue;
			for (int k = 0; k < q[i].nfields; k++)
				if (!node_valid(&tg[i]->nodes[q[i].fields[k]], q[i].priv != TSR_READ)) {
					bad = i;
					badf = q[i].fields[k];
					break;
				}
		}
		if (bad < 0)
			break;
		/* A second pass settles read-only plans opened in an unlucky order. Then a reduction that
		 * cannot share the plans goes through a private buffer and a fold; then, in a single
		 * launch, every requirement on that field gets a window on the root. */
		if (attempt == 0)
			continue;
		if (q[bad].redop && !q[bad].tmp_reduce) {
			q[bad].tmp_reduce = 1;
			continue;
		}
		int promotable = pdim == 0 && tg[bad] != q[bad].root && attempt < 2 * n + 2;
		for (int j = 0; j < n && promotable; j++)
			if (q[j].kind != TSR_REQ_FUTURE && q[j].root == q[bad].root && q[j].redop && !q[j].tmp_reduce)
				promotable = 0;
		if (!promotable)
			return tsr__err(TSR_EINTERFERE, "task '%s': requirement %d: field '%s' of '%s' cannot be accessed through "
			                "two different partitions in the same launch", t->name, bad, subs[bad]->fields[badf].name,
			                subs[bad]->name);
		for (int j = 0; j < n; j++)
			if (q[j].kind != TSR_REQ_FUTURE && !q[j].tmp_reduce && q[j].root == q[bad].root)
				tg[j] = q[j].root;
	}
	size_t sz = sizeof(struct tsr_ctx) + n * sizeof(struct tsr_reqrec) + arglen;
	struct tsr_ctx *ctx = malloc(sz);
	struct starpu_task *task = starpu_task_create();
	if (!ctx || !task) {
		free(ctx);
		if (task) {
			task->destroy = 0;
			starpu_task_destroy(task);
		}
		return tsr__err(TSR_ENOMEM, "task '%s': out of memory", t->name);
	}
	memset(ctx, 0, sizeof *ctx);
	ctx->task = t;
	ctx->dag_id = -1;
	ctx->nreqs = n;
	ctx->point_dim = pdim;
	memcpy(ctx->point, point, sizeof ctx->point);
	ctx->arglen = arglen;
	ctx->args = arglen ? (char *)ctx + sizeof(struct tsr_ctx) + n * sizeof(struct tsr_reqrec) : NULL;
	if (arglen)
		memcpy(ctx->args, args, arglen);
	task->cl = &t->cl;
	task->cl_arg = ctx;
	task->cl_arg_size = sz;
	task->cl_arg_free = 1;
	task->nbuffers = nbuf;
	if (nbuf > STARPU_NMAXBUFS) {
		task->dyn_handles = malloc(nbuf * sizeof(starpu_data_handle_t));
		task->dyn_modes = malloc(nbuf * sizeof(enum starpu_data_access_mode));
		if (!task->dyn_handles || !task->dyn_modes) {
			task->destroy = 0;
			starpu_task_destroy(task);
			return tsr__err(TSR_ENOMEM, "task '%s': out of memory", t->name);
		}
	}
	int b = 0, cpu_only = 0;
	for (int i = 0; i < n; i++) {
		struct tsr_reqrec *r = &ctx->reqs[i];
		memset(r, 0, sizeof *r);
		r->kind = q[i].kind;
		r->priv = q[i].priv;
		if (q[i].kind == TSR_REQ_FUTURE) {
			r->first_buf = b;
			r->fstate = q[i].fut->state;
			STARPU_TASK_SET_HANDLE(task, q[i].fut->h, b);
			STARPU_TASK_SET_MODE(task, STARPU_R, b);
			b++;
			continue;
		}
		struct tsr_region *s = subs[i];
		r->nfields = q[i].nfields;
		r->dim = s->bounds.dim;
		memcpy(r->lo, s->bounds.lo, sizeof r->lo);
		memcpy(r->hi, s->bounds.hi, sizeof r->hi);
		memcpy(r->hlo, tg[i]->bounds.lo, sizeof r->hlo);
		r->view = tg[i] != s;
		r->region = s;
		r->finfo = s->fields;
		for (int k = 0; k < q[i].nfields; k++) {
			int f = q[i].fields[k];
			r->fields[k] = f;
			struct tsr_node *nd = &tg[i]->nodes[f];
			if (q[i].tmp_reduce) {
				r->buf[k] = b;
				starpu_data_handle_t tmp = tsr__fold_private(s, f, q[i].redop, folds, nfolds);
				STARPU_TASK_SET_HANDLE(task, tmp, b);
				STARPU_TASK_SET_MODE(task, STARPU_W, b);
				r->reduce_tmp_op = q[i].redop;
				/* user operators have host code only */
				cpu_only |= tsr__init_cl(s->fields[f].type, q[i].redop)->cuda_funcs[0] == NULL;
				b++;
				continue;
			}
			enum starpu_data_access_mode m = mode_of(&q[i]);
			if (m == STARPU_REDUX)
				tsr__node_set_redux(nd, s->fields[f].type, q[i].redop);
			if (r->view && m == STARPU_W)
				m = STARPU_RW;   /* the rest of the ancestor must survive */
			/* one buffer per handle: requirements promoted to the same ancestor share it */
			int j;
			for (j = 0; j < b; j++)
				if (STARPU_TASK_GET_HANDLE(task, j) == nd->h)
					break;
			if (j < b) {
				enum starpu_data_access_mode old = STARPU_TASK_GET_MODE(task, j);
				if (old != m)
					STARPU_TASK_SET_MODE(task, STARPU_RW, j);
				r->buf[k] = j;
				continue;
			}
			r->buf[k] = b;
			STARPU_TASK_SET_HANDLE(task, nd->h, b);
			STARPU_TASK_SET_MODE(task, m, b);
			b++;
		}
	}
	ctx->ret_buf = -1;
	if (ret) {
		ctx->ret_buf = b;
		ctx->ret_op = ret->op;
		ctx->ret_partial = ret->partial;
		ctx->ret_state = ret->state;
		STARPU_TASK_SET_HANDLE(task, ret->h, b);
		/* a variable, not a conditional: StarPU 1.4's macro does not parenthesise its mode */
		enum starpu_data_access_mode ret_mode = ret->op && !ret->partial ? STARPU_REDUX : STARPU_W;
		STARPU_TASK_SET_MODE(task, ret_mode, b);
		if (ret->partial && ret->op >= TSR_REDOP_USER)
			cpu_only = 1;   /* user operators have no CUDA identity to start the partial value */
		b++;
	}
	task->nbuffers = b;
	if (cpu_only)
		task->where = STARPU_CPU;
	int mr = map_req(n, q);
	if (mr >= 0) {   /* the locality policy keeps a color on one worker */
		ctx->aff_color = subs[mr]->color_index;
		ctx->aff_ncolors = q[mr].part->ncolors;
	}
	if (map)
		tsr__map_apply(task, map);
	int rc;
	if (tsr__dag_on) {
		ctx->dag_id = tsr__dag_task(t, pdim, point);
		for (int i = 0; i < n; i++)
			if (q[i].kind != TSR_REQ_FUTURE)
				for (int k = 0; k < q[i].nfields; k++)
					tsr__dag_access(ctx->dag_id, subs[i], q[i].fields[k], q[i].priv);
		tsr__dag_set_cost(ctx->dag_id, task);
	}
	tsr__obs_task(task, ctx);
	tsr__ctx_hold_states(ctx);   /* before submission: the task may end before submit returns */
	rc = starpu_task_submit(task);
	if (rc)
		tsr__ctx_drop_states(ctx);
	if (rc == -ENODEV) {
		task->destroy = 0;
		starpu_task_destroy(task);
		return tsr__err(TSR_ENODEV, "task '%s': no worker can run it (no %s variant for the workers started)", t->name,
		                t->cpu ? "CUDA" : "CPU");
	}
	if (rc)
		return tsr__err(TSR_ESTARPU, "task '%s': starpu_task_submit failed (%d)", t->name, rc);
	return TSR_OK;
}

static int make_result(struct tsr_task *t, tsr_future_t *result, int op, const char *what, struct tsr_future **res)
{
	*res = NULL;
	if (!result)
		return TSR_OK;
	if (t->ret_type == TSR_NONE)
		return tsr__err(TSR_EINVAL, "%s: task '%s' returns no value (ret_type TSR_NONE) but a result future was asked for",
		                what, t->name);
	struct tsr_future *f = tsr__future_new(t->ret_type, t->ret_size, NULL);
	if (!f)
		return tsr__err(TSR_ENOMEM, "%s: task '%s': out of memory", what, t->name);
	if (op) {
		/* the value starts empty: StarPU's reduction starts from the points' identities */
		starpu_data_set_reduction_methods(f->h, tsr__redux_cl(t->ret_type, op), tsr__init_cl(t->ret_type, op));
	}
	snprintf(f->producer, sizeof f->producer, "task '%.50s'", t->name);
	*res = f;
	result->id = f->id;
	return TSR_OK;
}

int tsr_launch(tsr_task_t tid, int nreqs, const tsr_req_t *reqs, const void *args, size_t arglen, tsr_future_t *result)
{
	struct tsr_task *t;
	int rc = tsr__task_lookup(tid, "tsr_launch", &t);
	if (rc)
		return rc;
	if (nreqs < 0 || nreqs > TSR_MAX_REQS || (nreqs && !reqs) || (arglen && !args))
		return tsr__err(TSR_EINVAL, "tsr_launch: task '%s': bad requirement count %d or null array/args", t->name, nreqs);
	struct rreq q[TSR_MAX_REQS];
	struct tsr_region *subs[TSR_MAX_REQS];
	for (int i = 0; i < nreqs; i++) {
		if ((rc = resolve(t->name, i, &reqs[i], 0, &q[i])))
			return rc;
		subs[i] = q[i].region;
	}
	if ((rc = check_pairs(t->name, nreqs, q, 0)))
		return rc;
	struct tsr_future *res;
	if ((rc = make_result(t, result, 0, "tsr_launch", &res)))
		return rc;
	struct tsr_pending_fold folds[TSR_MAX_REQS * 8];
	int nfolds = 0;
	int64_t point[3] = {0, 0, 0};
	tsr_mapping_t map;
	if (tsr__map_needed(NULL) && (rc = tsr__map_decide(t, 0, point, tsr_box1(0, 0), NULL, -1, &map))) {
		if (res) {
			tsr__future_free(res);
			result->id = 0;
		}
		return rc;
	}
	struct tsr_ret_slot ret = {res ? res->h : NULL, 0, 0, res ? res->state : NULL};
	rc = submit_point(t, nreqs, q, subs, 0, point, args, arglen, res ? &ret : NULL, folds, &nfolds,
	                  tsr__map_needed(NULL) ? &map : NULL);
	rc = tsr__folds_submit(folds, nfolds, rc);
	if (rc && res) {
		tsr__future_free(res);
		result->id = 0;
	}
	return rc;
}

int tsr_index_launch(tsr_task_t tid, tsr_box_t domain, int nreqs, const tsr_req_t *reqs, const void *args,
                     size_t arglen, tsr_redop_t redop, tsr_future_t *result)
{
	struct tsr_task *t;
	char bs[96], cs[64], bs2[96];
	int rc = tsr__task_lookup(tid, "tsr_index_launch", &t);
	if (rc)
		return rc;
	if (nreqs < 0 || nreqs > TSR_MAX_REQS || (nreqs && !reqs) || (arglen && !args))
		return tsr__err(TSR_EINVAL, "tsr_index_launch: task '%s': bad requirement count %d or null array/args", t->name, nreqs);
	if (!tsr__box_valid(domain))
		return tsr__err(tsr__box_problem_code(domain), "tsr_index_launch: task '%s': launch domain %s %s", t->name,
		                tsr__box_str(domain, bs, sizeof bs), tsr__box_problem(domain));
	if (redop != TSR_REDOP_NONE && !tsr__redop_known(redop))   /* even when no result is asked: a typo is a typo */
		return tsr__err(TSR_EINVAL, "tsr_index_launch: task '%s': unknown reduction operator %d (use TSR_SUM, TSR_PROD, "
		                "TSR_MIN, TSR_MAX, an operator from tsr_redop_register, or TSR_REDOP_NONE)", t->name, (int)redop);
	if (result && t->ret_type != TSR_NONE) {
		char what[128];
		snprintf(what, sizeof what, "tsr_index_launch: task '%s': result", t->name);
		if ((rc = tsr__redop_valid(t->ret_type, redop, what)))
			return rc;
	}
	struct rreq q[TSR_MAX_REQS];
	for (int i = 0; i < nreqs; i++)
		if ((rc = resolve(t->name, i, &reqs[i], 1, &q[i])))
			return rc;
	if ((rc = check_pairs(t->name, nreqs, q, 1)))
		return rc;
	int64_t npoints = tsr_box_volume(domain);
	/* Every point's colors, checked before anything is submitted. */
	size_t ncolors;
	int *colors = NULL;
	if (!tsr__size_mul((size_t)npoints, (size_t)(nreqs ? nreqs : 1) * sizeof *colors, &ncolors))
		colors = malloc(ncolors);
	if (!colors)
		return tsr__err(TSR_ENOMEM, "tsr_index_launch: task '%s': out of memory", t->name);
	for (int64_t pi = 0; pi < npoints; pi++) {
		int64_t point[3];
		tsr__box_point(domain, pi, point);
		for (int i = 0; i < nreqs; i++) {
			colors[pi * nreqs + i] = -1;
			if (q[i].kind == TSR_REQ_PARTITION) {
				int64_t color[3] = {point[0], point[1], point[2]};
				if (q[i].proj) {
					color[0] = color[1] = color[2] = 0;
					if (q[i].proj(point, color, q[i].proj_arg)) {
						free(colors);
						return tsr__err(TSR_EBOUNDS, "tsr_index_launch: task '%s' point %s: requirement %d: projection "
						                "gives no color of partition '%s'", t->name,
						                tsr__color_str(domain.dim, point, cs, sizeof cs), i, q[i].part->name);
					}
				} else if (domain.dim != q[i].part->colors.dim) {
					free(colors);
					return tsr__err(TSR_EBOUNDS, "tsr_index_launch: task '%s': requirement %d: launch domain is %d-D but "
					                "partition '%s' has %d-D colors", t->name, i, domain.dim, q[i].part->name,
					                q[i].part->colors.dim);
				}
				int c = tsr__color_index(q[i].part, color);
				if (c < 0) {
					free(colors);
					return tsr__err(TSR_EBOUNDS, "tsr_index_launch: task '%s' point %s: requirement %d: color %s is outside "
					                "partition '%s' of region '%s' (colors %s)", t->name,
					                tsr__color_str(domain.dim, point, cs, sizeof cs), i,
					                tsr__color_str(q[i].part->colors.dim, color, bs2, sizeof bs2), q[i].part->name,
					                q[i].part->parent->name, tsr__box_str(q[i].part->colors, bs, sizeof bs));
				}
				colors[pi * nreqs + i] = c;
			} else if (q[i].kind == TSR_REQ_REGION && q[i].priv != TSR_READ && !q[i].redop && npoints > 1) {
				free(colors);
				return tsr__err(TSR_EINTERFERE, "tsr_index_launch: task '%s': requirement %d: every point would %s "
				                "field '%s' of the whole region '%s'; write through a disjoint partition instead", t->name,
				                i, tsr__priv_name(q[i].priv), q[i].region->fields[q[i].fields[0]].name,
				                q[i].region->name);
			}
		}
	}
	if ((rc = check_points(t->name, nreqs, q, npoints, colors))) {
		free(colors);
		return rc;
	}
	/* Writes must reach distinct subregions. */
	for (int i = 0; i < nreqs; i++) {
		if (q[i].kind != TSR_REQ_PARTITION || q[i].priv == TSR_READ || q[i].redop)
			continue;
		char *seen = calloc(q[i].part->ncolors, 1);
		if (!seen) {
			free(colors);
			return tsr__err(TSR_ENOMEM, "tsr_index_launch: out of memory");
		}
		for (int64_t pi = 0; pi < npoints; pi++) {
			int c = colors[pi * nreqs + i];
			if (seen[c]) {
				free(seen);
				free(colors);
				return tsr__err(TSR_EINTERFERE, "tsr_index_launch: task '%s': requirement %d: two points %s field '%s' "
				                "of subregion '%s' (projection is not injective)", t->name, i, tsr__priv_name(q[i].priv),
				                q[i].region->fields[q[i].fields[0]].name, q[i].part->subs[c]->name);
			}
			seen[c] = 1;
		}
		free(seen);
	}
	/* Mapping decisions for every point, before anything is submitted. */
	int mr = map_req(nreqs, q);
	const struct tsr_partition *mpart = mr >= 0 ? q[mr].part : NULL;
	tsr_mapping_t *maps = NULL;
	if (tsr__map_needed(mpart)) {
		maps = malloc((size_t)npoints * sizeof *maps);
		if (!maps) {
			free(colors);
			return tsr__err(TSR_ENOMEM, "tsr_index_launch: out of memory");
		}
		for (int64_t pi = 0; pi < npoints; pi++) {
			int64_t point[3];
			tsr__box_point(domain, pi, point);
			rc = tsr__map_decide(t, domain.dim, point, domain, mpart, mr >= 0 ? colors[pi * nreqs + mr] : -1, &maps[pi]);
			if (rc) {
				free(maps);
				free(colors);
				return rc;
			}
		}
	}
	struct tsr_future *res;
	if ((rc = make_result(t, result, redop, "tsr_index_launch", &res))) {
		free(maps);
		free(colors);
		return rc;
	}
	int maxfolds = 0;   /* any REDUCE may fall back to private buffers (submit_point) */
	for (int i = 0; i < nreqs; i++)
		if (q[i].redop)
			maxfolds += q[i].nfields;
	struct tsr_pending_fold *folds = malloc(((size_t)npoints * maxfolds + 1) * sizeof *folds);
	int nfolds = 0;
	if (!folds) {
		free(maps);
		free(colors);
		if (res) {
			tsr__future_free(res);
			result->id = 0;
		}
		return tsr__err(TSR_ENOMEM, "tsr_index_launch: out of memory");
	}
	struct tsr_partials *parts = NULL;   /* ordered reduction of the returns */
	if (res && tsr__redux_ordered() && !(parts = tsr__partials_take(npoints, res->size)))
		rc = tsr__err(TSR_ENOMEM, "tsr_index_launch: task '%s': out of memory", t->name);
	struct tsr_region *subs[TSR_MAX_REQS];
	for (int64_t pi = 0; pi < npoints && !rc; pi++) {
		int64_t point[3];
		tsr__box_point(domain, pi, point);
		for (int i = 0; i < nreqs; i++)
			subs[i] = q[i].kind == TSR_REQ_PARTITION ? q[i].part->subs[colors[pi * nreqs + i]] : q[i].region;
		struct tsr_ret_slot ret = {res ? res->h : NULL, redop, 0, res ? res->state : NULL};
		if (parts) {
			ret.h = parts->h[pi];
			ret.partial = 1;
		}
		rc = submit_point(t, nreqs, q, subs, domain.dim, point, args, arglen, res ? &ret : NULL, folds, &nfolds,
		                  maps ? &maps[pi] : NULL);
	}
	rc = tsr__folds_submit(folds, nfolds, rc);
	int folded = 0;
	if (!rc && parts) {
		rc = tsr__future_fold_submit(t->name, res, redop, parts);
		folded = !rc;
	}
	if (parts)
		tsr__partials_release(parts, folded);
	free(folds);
	free(maps);
	free(colors);
	if (rc && res) {
		/* points already submitted keep their reference through StarPU; the future goes away with them */
		tsr__future_free(res);
		result->id = 0;
	}
	return rc;
}


void tsr__launch_fini(void)
{
	tsr__fold_fini();
}

int tsr__launch_init(void)
{
	tsr__fold_init();
	return TSR_OK;
}
