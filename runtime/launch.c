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

struct fold_arg { tsr_type_t type; size_t size; int op; int64_t off[3]; };

/* Reductions are folded in color order (tessera.h, "Reductions"): every point reduces into
 * private storage that starts at the identity, and fold tasks combine the points in launch
 * order, so the bits do not depend on workers, policy or timing. TSR_REDUX=unordered gives
 * StarPU's REDUX instead (contributions folded in arrival order), read at tsr_init. */
static int redux_ordered = 1;

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
		q->redop = TSR_PRIV_REDOP(p).id;
		if (p != TSR_REDUCE(TSR_PRIV_REDOP(p)))
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
	if (q->redop && (aliased || redux_ordered))
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

static struct starpu_codelet fold_cl;
static void fold_cpu(void *buffers[], void *cl_arg)
{
	struct fold_arg *a = cl_arg;
	struct starpu_block_interface dst = *(struct starpu_block_interface *)buffers[0];
	struct starpu_block_interface *src = buffers[1];
	dst.ptr += (a->off[0] + a->off[1] * dst.ldy + a->off[2] * dst.ldz) * dst.elemsize;
	dst.nx = src->nx; dst.ny = src->ny; dst.nz = src->nz;
	void *b[2] = {&dst, src};
	tsr__redux_cl(a->type, a->op)->cpu_funcs[0](b, NULL);
}
#ifdef STARPU_USE_CUDA
/* The same window arithmetic on device pointers, folded by the operator's CUDA redux. */
static void fold_cuda(void *buffers[], void *cl_arg)
{
	struct fold_arg *a = cl_arg;
	struct starpu_block_interface dst = *(struct starpu_block_interface *)buffers[0];
	struct starpu_block_interface *src = buffers[1];
	dst.ptr += (a->off[0] + a->off[1] * dst.ldy + a->off[2] * dst.ldz) * dst.elemsize;
	dst.nx = src->nx; dst.ny = src->ny; dst.nz = src->nz;
	void *b[2] = {&dst, src};
	tsr__redux_cl(a->type, a->op)->cuda_funcs[0](b, NULL);
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
	fold_cl.nbuffers = 2;
	fold_cl.modes[0] = STARPU_RW;
	fold_cl.modes[1] = STARPU_R;
	fold_cl.name = "tsr_fold";
	fold_cl.flags = STARPU_CODELET_NOPLANS;
}

struct pending_fold { struct tsr_region *sub; int field; starpu_data_handle_t tmp; int op; };

/* Where a point's return value goes: the future itself (single launches; StarPU's REDUX when
 * reductions are unordered), or the point's own partial value, which starts at the identity and
 * is folded into the future in launch order (partial = 1). */
struct ret_slot { starpu_data_handle_t h; int op; int partial; struct tsr_fstate *state; };

/* Folds the points' partial values (buffers 1..n) into the future (buffer 0), left to right. */
struct future_fold_arg { tsr_type_t type; size_t size; int op; int nparts; };
static struct starpu_codelet future_fold_cl;
static void future_fold_cpu(void *buffers[], void *cl_arg)
{
	const struct future_fold_arg *a = cl_arg;
	void *acc = (void *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	tsr__redop_identity(a->type, a->size, a->op, acc);
	for (int i = 1; i <= a->nparts; i++)
		tsr__redop_fold(a->type, a->size, a->op, acc, (const void *)STARPU_VARIABLE_GET_PTR(buffers[i]));
}
static void future_fold_init(void)
{
	starpu_codelet_init(&future_fold_cl);
	future_fold_cl.cpu_funcs[0] = future_fold_cpu;
	future_fold_cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
	future_fold_cl.name = "tsr_future_fold";
	future_fold_cl.flags = STARPU_CODELET_NOPLANS;
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
                        const int64_t point[3], const void *args, size_t arglen, const struct ret_slot *ret,
                        struct pending_fold *folds, int *nfolds, const tsr_mapping_t *map)
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
				/* private buffer of the subregion's shape, folded into the fold target after the task */
				starpu_data_handle_t tmp;
				uint32_t nx = s->bounds.hi[0] - s->bounds.lo[0] + 1;
				uint32_t ny = s->bounds.dim > 1 ? s->bounds.hi[1] - s->bounds.lo[1] + 1 : 1;
				uint32_t nz = s->bounds.dim > 2 ? s->bounds.hi[2] - s->bounds.lo[2] + 1 : 1;
				starpu_block_data_register(&tmp, -1, 0, nx, nx * ny, nx, ny, nz, s->fields[f].size);
				STARPU_TASK_SET_HANDLE(task, tmp, b);
				STARPU_TASK_SET_MODE(task, STARPU_W, b);
				r->reduce_tmp_op = q[i].redop;
				folds[*nfolds].sub = s;
				folds[*nfolds].field = f;
				folds[*nfolds].tmp = tmp;
				folds[*nfolds].op = q[i].redop;
				(*nfolds)++;
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

/* Fold one private reduction buffer into its subregion's box of the fold target. Fold tasks of
 * one target are ordered by StarPU in submission order (each one reads-writes the target). */
static int submit_fold(const struct pending_fold *fold)
{
	struct tsr_region *s = fold->sub, *tg = tsr__fold_target(s);
	struct tsr_node *nd = &tg->nodes[fold->field];
	tsr__coh_access(nd, 1);
	struct fold_arg *a = malloc(sizeof *a);
	struct starpu_task *task = starpu_task_create();
	if (!a || !task) {
		free(a);
		if (task) {
			task->destroy = 0;
			starpu_task_destroy(task);
		}
		return tsr__err(TSR_ENOMEM, "fold of a reduction into '%s': out of memory", tg->name);
	}
	a->type = s->fields[fold->field].type;
	a->size = s->fields[fold->field].size;
	a->op = fold->op;
	memset(a->off, 0, sizeof a->off);
	for (int d = 0; d < s->bounds.dim; d++)
		a->off[d] = s->bounds.lo[d] - tg->bounds.lo[d];
	task->cl = &fold_cl;
	task->cl_arg = a;
	task->cl_arg_size = sizeof *a;
	task->cl_arg_free = 1;
	task->handles[0] = nd->h;
	task->handles[1] = fold->tmp;
	if (tsr__redux_cl(a->type, a->op)->cuda_funcs[0] == NULL)
		task->where = STARPU_CPU;   /* user operators have host code only */
	if (starpu_task_submit(task))
		return tsr__err(TSR_ESTARPU, "fold of a reduction into '%s': submit failed", tg->name);
	return TSR_OK;
}

/* Fold the private buffers in the order the points made them (color order, then requirements
 * and fields). After an error (rc on entry, or a failed fold) the rest are only released. */
static int submit_folds(struct pending_fold *folds, int nfolds, int rc)
{
	for (int i = 0; i < nfolds; i++) {
		if (!rc)
			rc = submit_fold(&folds[i]);
		starpu_data_unregister_submit(folds[i].tmp);
	}
	return rc;
}

/* Partial values of ordered future reductions are StarPU handles kept for reuse, one free list
 * per element size: registering and unregistering a handle for every point costs about as much
 * as the point's task. A fold task's callback (on a worker) gives its handles back once it has
 * read them, so a later launch takes handles that no pending task uses. */
#define TSR_PARTIAL_SIZES 8
struct partial_pool {
	size_t size;
	starpu_data_handle_t *free;   /* room for every handle of this size ever made */
	int64_t nfree, nmade;
};
static struct partial_pool pools[TSR_PARTIAL_SIZES];
static int npools;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* The partial values lent to one launch; pool is NULL when all size slots were taken, and the
 * handles are then unregistered after the fold. */
struct partials {
	struct partial_pool *pool;
	int64_t n;
	starpu_data_handle_t h[];
};

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
	if (made > pool->nmade) {
		starpu_data_handle_t *nf = realloc(pool->free, (size_t)made * sizeof *nf);
		if (!nf)
			return -1;
		pool->free = nf;
		pool->nmade = made;
	}
	pool->nfree -= taken;
	memcpy(out, pool->free + pool->nfree, (size_t)taken * sizeof *out);
	return taken;
}

/* One partial value per point, reused or registered (StarPU allocates a new one where its
 * point first writes it). NULL when out of memory. */
static struct partials *partials_take(int64_t npoints, size_t size)
{
	struct partials *ps = malloc(sizeof *ps + (size_t)npoints * sizeof ps->h[0]);
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
		starpu_variable_data_register(&ps->h[i], -1, 0, size);
	return ps;
}

/* Fold task callback, or the launch itself when no fold was submitted: the handles go back to
 * their pool (a later writer is ordered after any pending access by StarPU). */
static void partials_give_back(void *arg)
{
	struct partials *ps = arg;
	pthread_mutex_lock(&pool_lock);
	for (int64_t i = 0; i < ps->n; i++)
		ps->pool->free[ps->pool->nfree++] = ps->h[i];
	pthread_mutex_unlock(&pool_lock);
	free(ps);
}

/* After the fold was submitted (folded = 1) or not: pooled handles come back through the fold
 * task's callback, or now; others are unregistered once their tasks are done. */
static void partials_release(struct partials *ps, int folded)
{
	if (ps->pool) {
		if (!folded)
			partials_give_back(ps);
		return;
	}
	for (int64_t i = 0; i < ps->n; i++)
		starpu_data_unregister_submit(ps->h[i]);
	free(ps);
}

/* At tsr_finalize, once every task has run: unregister every pooled handle. */
static void pools_free(void)
{
	for (int i = 0; i < npools; i++) {
		for (int64_t k = 0; k < pools[i].nfree; k++)
			starpu_data_unregister_submit(pools[i].free[k]);
		free(pools[i].free);
	}
	npools = 0;
}

/* One task folds every point's partial value into the future, in launch order. */
static int submit_future_fold(const char *tn, struct tsr_future *res, int op, struct partials *ps)
{
	int64_t npoints = ps->n;
	int nbuf = (int)npoints + 1;
	struct future_fold_arg *a = malloc(sizeof *a);
	struct starpu_task *task = starpu_task_create();
	if (!a || !task) {
		free(a);
		if (task) {
			task->destroy = 0;
			starpu_task_destroy(task);
		}
		return tsr__err(TSR_ENOMEM, "task '%s': fold of the launch's reduction: out of memory", tn);
	}
	if (nbuf > STARPU_NMAXBUFS) {
		task->dyn_handles = malloc(nbuf * sizeof(starpu_data_handle_t));
		task->dyn_modes = malloc(nbuf * sizeof(enum starpu_data_access_mode));
		if (!task->dyn_handles || !task->dyn_modes) {
			free(a);
			task->destroy = 0;
			starpu_task_destroy(task);
			return tsr__err(TSR_ENOMEM, "task '%s': fold of the launch's reduction: out of memory", tn);
		}
	}
	a->type = res->type;
	a->size = res->size;
	a->op = op;
	a->nparts = (int)npoints;
	task->cl = &future_fold_cl;
	task->cl_arg = a;
	task->cl_arg_size = sizeof *a;
	task->cl_arg_free = 1;
	task->nbuffers = nbuf;
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
	if (starpu_task_submit(task))
		return tsr__err(TSR_ESTARPU, "task '%s': fold of the launch's reduction: submit failed", tn);
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
	struct pending_fold folds[TSR_MAX_REQS * 8];
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
	struct ret_slot ret = {res ? res->h : NULL, 0, 0, res ? res->state : NULL};
	rc = submit_point(t, nreqs, q, subs, 0, point, args, arglen, res ? &ret : NULL, folds, &nfolds,
	                  tsr__map_needed(NULL) ? &map : NULL);
	rc = submit_folds(folds, nfolds, rc);
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
	if (redop.id != TSR_REDOP_NONE.id && !tsr__redop_known(redop.id)) {   /* even when no result is asked: a typo is a typo */
		char what[128];
		snprintf(what, sizeof what, "tsr_index_launch: task '%s'", t->name);
		return tsr__redop_unknown(redop.id, what);
	}
	if (result && t->ret_type != TSR_NONE) {
		char what[128];
		snprintf(what, sizeof what, "tsr_index_launch: task '%s': result", t->name);
		if ((rc = tsr__redop_valid(t->ret_type, redop.id, what)))
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
	if ((rc = make_result(t, result, redop.id, "tsr_index_launch", &res))) {
		free(maps);
		free(colors);
		return rc;
	}
	int maxfolds = 0;   /* any REDUCE may fall back to private buffers (submit_point) */
	for (int i = 0; i < nreqs; i++)
		if (q[i].redop)
			maxfolds += q[i].nfields;
	struct pending_fold *folds = malloc(((size_t)npoints * maxfolds + 1) * sizeof *folds);
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
	struct partials *parts = NULL;   /* ordered reduction of the returns */
	if (res && redux_ordered && !(parts = partials_take(npoints, res->size)))
		rc = tsr__err(TSR_ENOMEM, "tsr_index_launch: task '%s': out of memory", t->name);
	struct tsr_region *subs[TSR_MAX_REQS];
	for (int64_t pi = 0; pi < npoints && !rc; pi++) {
		int64_t point[3];
		tsr__box_point(domain, pi, point);
		for (int i = 0; i < nreqs; i++)
			subs[i] = q[i].kind == TSR_REQ_PARTITION ? q[i].part->subs[colors[pi * nreqs + i]] : q[i].region;
		struct ret_slot ret = {res ? res->h : NULL, redop.id, 0, res ? res->state : NULL};
		if (parts) {
			ret.h = parts->h[pi];
			ret.partial = 1;
		}
		rc = submit_point(t, nreqs, q, subs, domain.dim, point, args, arglen, res ? &ret : NULL, folds, &nfolds,
		                  maps ? &maps[pi] : NULL);
	}
	rc = submit_folds(folds, nfolds, rc);
	int folded = 0;
	if (!rc && parts) {
		rc = submit_future_fold(t->name, res, redop.id, parts);
		folded = !rc;
	}
	if (parts)
		partials_release(parts, folded);
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

/* TSR_REDUX: "ordered" (the default) or "unordered"; any other value keeps the default, with a
 * warning, since tsr_init has no way to refuse it from here. */
/* TSR_REDUX: "ordered" (the default: color order, reproducible) or "unordered" (StarPU's REDUX,
 * folded in arrival order). Read before StarPU starts, so that a typo fails tsr_init. */
int tsr__redux_mode_from_env(void)
{
	const char *v = getenv("TSR_REDUX");
	if (!v || !*v || !strcmp(v, "ordered")) {
		redux_ordered = 1;
		return TSR_OK;
	}
	if (!strcmp(v, "unordered")) {
		redux_ordered = 0;
		return TSR_OK;
	}
	return tsr__err(TSR_EINVAL, "tsr_init: TSR_REDUX='%s' is neither 'ordered' nor 'unordered'", v);
}

void tsr__launch_fini(void)
{
	pools_free();
}

int tsr__launch_init(void)
{
	fold_init();
	future_fold_init();
	return TSR_OK;
}

/* An index launch's result combines the points' values: without an operator there is nothing to
 * combine them with. Said here, in the words of tsr_launch_t, rather than as an unknown operator. */
static int check_result_redop(const struct tsr_task *t, const tsr_launch_t *how)
{
	if (!how->result || t->ret_type == TSR_NONE || how->redop.id != TSR_REDOP_NONE.id)
		return TSR_OK;
	return tsr__err(TSR_EINVAL, "tsr_run: task '%s': an index launch asking for a .result needs an operator to combine "
	                "the points' values: pass .redop = TSR_SUM (or TSR_PROD, TSR_MIN, TSR_MAX, or an operator from "
	                "tsr_redop_register)", t->name);
}

int tsr_run(tsr_task_t tid, const tsr_launch_t *how)
{
	struct tsr_task *t;
	int rc = tsr__task_lookup(tid, "tsr_run", &t);
	if (rc)
		return rc;
	if (!how)
		return tsr__err(TSR_EINVAL, "tsr_run: task '%s': null launch description (pass &(tsr_launch_t){...})", t->name);
	const tsr_reqs_t *reqs = &how->reqs;
	if (how->domain.dim == 0) {
		if (how->redop.id != TSR_REDOP_NONE.id)
			return tsr__err(TSR_EINVAL, "tsr_run: task '%s': .redop combines the values of an index launch's points, "
			                "but this launch has no .domain: drop .redop, or give the .domain to launch over", t->name);
		return tsr_launch(tid, reqs->n, reqs->at, how->args, how->arglen, how->result);
	}
	if ((rc = check_result_redop(t, how)))
		return rc;
	return tsr_index_launch(tid, how->domain, reqs->n, reqs->at, how->args, how->arglen, how->redop, how->result);
}
