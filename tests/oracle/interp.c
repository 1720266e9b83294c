/* interp.c: the plain sequential interpreter of oracle programs: one C array per field of each
 * root region, every op run to completion in program order. This is the reference result. */
#include <stdlib.h>
#include <string.h>
#include "oracle.h"

int or_interp_init(or_interp_t *s, const or_prog_t *p)
{
	memset(s, 0, sizeof *s);
	s->p = p;
	for (int r = 0; r < p->nroot; r++)
		for (int f = 0; f < p->root[r].nf; f++) {
			/* regions start zero-initialised, as tsr_region_create promises */
			s->data[r][f] = calloc((size_t)tsr_box_volume(p->root[r].bounds),
					       tsr_type_size(p->root[r].type[f]));
			if (!s->data[r][f]) {
				or_interp_free(s);
				return -1;
			}
		}
	return 0;
}

void or_interp_free(or_interp_t *s)
{
	for (int r = 0; r < OR_MAXROOT; r++)
		for (int f = 0; f < OR_MAXF; f++) {
			free(s->data[r][f]);
			s->data[r][f] = NULL;
			free(s->poison[r][f]);
			s->poison[r][f] = NULL;
		}
}

/* ---- poison: Tessera's rules (runtime/poison.c), as a list of boxes per root field */

static int boxes_meet(tsr_box_t a, tsr_box_t b)
{
	for (int d = 0; d < a.dim; d++)
		if (a.hi[d] < b.lo[d] || b.hi[d] < a.lo[d])
			return 0;
	return 1;
}

static int poison_find(const or_interp_t *s, int root, int f, tsr_box_t b)
{
	for (int i = 0; i < s->npoison[root][f]; i++)
		if (boxes_meet(s->poison[root][f][i], b))
			return 1;
	return 0;
}

static void poison_add(or_interp_t *s, int root, int f, tsr_box_t b)
{
	if (s->npoison[root][f] == s->cappoison[root][f]) {
		int cap = s->cappoison[root][f] ? 2 * s->cappoison[root][f] : 8;
		tsr_box_t *nv = realloc(s->poison[root][f], (size_t)cap * sizeof *nv);
		if (!nv)
			abort();
		s->poison[root][f] = nv;
		s->cappoison[root][f] = cap;
	}
	s->poison[root][f][s->npoison[root][f]++] = b;
}

/* A healthy WRITE of box b: every poisoned box loses what lies inside b. A box that reaches past
 * b is replaced by the slabs of it outside b, peeled one dimension after the other (appended: they
 * miss b, so this loop passes them by). */
static void poison_heal(or_interp_t *s, int root, int f, tsr_box_t b)
{
	for (int i = 0; i < s->npoison[root][f]; i++) {
		tsr_box_t p = s->poison[root][f][i];
		if (!boxes_meet(p, b))
			continue;

		for (int d = 0; d < p.dim; d++) {
			tsr_box_t slab = p;
			if (p.lo[d] < b.lo[d]) {
				slab.hi[d] = b.lo[d] - 1;
				poison_add(s, root, f, slab);
				p.lo[d] = b.lo[d];
			}
			slab = p;
			if (p.hi[d] > b.hi[d]) {
				slab.lo[d] = b.hi[d] + 1;
				poison_add(s, root, f, slab);
				p.hi[d] = b.hi[d];
			}
		}

		/* what is left of it lies inside b: it goes (the last box takes its place) */
		s->poison[root][f][i] = s->poison[root][f][--s->npoison[root][f]];
		i--;
	}
}

int or_interp_poisoned(const or_interp_t *s, int n, int f)
{
	const or_node_t *nd = &s->p->node[n];
	return poison_find(s, nd->root, f, nd->box);
}

tsr_accessor_t or_interp_acc(const or_interp_t *s, int n, int f, tsr_privilege_t priv)
{
	const or_prog_t *p = s->p;
	const or_node_t *nd = &p->node[n];
	const or_root_t *rt = &p->root[nd->root];
	tsr_accessor_t a;
	memset(&a, 0, sizeof a);
	a.dim = rt->bounds.dim;
	a.type = rt->type[f];
	a.elem_size = tsr_type_size(a.type);
	a.priv = priv;
	size_t stride = 1, off = 0;
	for (int d = 0; d < a.dim; d++) {
		a.lo[d] = nd->box.lo[d];
		a.hi[d] = nd->box.hi[d];
		a.stride[d] = stride;
		off += (size_t)(nd->box.lo[d] - rt->bounds.lo[d]) * stride;
		stride *= (size_t)(rt->bounds.hi[d] - rt->bounds.lo[d] + 1);
	}
	a.ptr = (char *)s->data[nd->root][f] + off * a.elem_size;
	return a;
}

int or_part_color_node(const or_prog_t *p, int part, const int64_t color[3])
{
	const or_part_t *pt = &p->part[part];
	int64_t idx = 0, mul = 1;
	for (int d = 0; d < pt->colors.dim; d++) {
		idx += (color[d] - pt->colors.lo[d]) * mul;
		mul *= pt->colors.hi[d] - pt->colors.lo[d] + 1;
	}
	return pt->first + (int)idx;
}

void or_project(const or_prog_t *p, const or_req_t *q, const int64_t point[3], int64_t color[3])
{
	const or_part_t *pt = &p->part[q->obj];
	for (int d = 0; d < 3; d++) {
		if (d >= pt->colors.dim) {
			color[d] = 0;
			continue;
		}
		if (!q->proj) {
			color[d] = point[d];
			continue;
		}
		int64_t ext = pt->colors.hi[d] - pt->colors.lo[d] + 1;
		int64_t i = (point[d] - pt->colors.lo[d] + q->shift[d]) % ext;
		color[d] = pt->colors.lo[d] + (i < 0 ? i + ext : i);
	}
}

/* The node a requirement names for one launch point. */
static int req_node(const or_prog_t *p, const or_req_t *q, const int64_t point[3])
{
	if (q->kind == RQ_REGION)
		return q->obj;
	int64_t color[3];
	or_project(p, q, point, color);
	return or_part_color_node(p, q->obj, color);
}

void or_partial_open(or_partial_t *b, tsr_box_t box, tsr_accessor_t data, tsr_redop_t op, int point)
{
	size_t vol = (size_t)tsr_box_volume(box), es = data.elem_size;
	b->data = data;
	b->op = op;
	b->point = point;
	b->buf = malloc(vol * es);
	if (!b->buf)
		abort();
	for (size_t e = 0; e < vol; e++)
		or_identity(data.type, op, (char *)b->buf + e * es);
	b->acc = data;
	b->acc.ptr = b->buf;
	size_t stride = 1;
	for (int d = 0; d < box.dim; d++) {
		b->acc.stride[d] = stride;
		stride *= (size_t)(box.hi[d] - box.lo[d] + 1);
	}
}

void or_partial_fold(or_partial_t *b)
{
	tsr_box_t box = {b->acc.dim,
			 {b->acc.lo[0], b->acc.lo[1], b->acc.lo[2]},
			 {b->acc.hi[0], b->acc.hi[1], b->acc.hi[2]}};
	int64_t x[3];
	or_box_first(box, x);
	do
		or_fold(b->data.type, b->op,
			(char *)b->data.ptr + or_elem_offset(&b->data, x) * b->data.elem_size,
			(char *)b->buf + or_elem_offset(&b->acc, x) * b->acc.elem_size);
	while (or_box_next(box, x));
	free(b->buf);
	b->buf = NULL;
}

/* One (point) task: accessors straight on the arrays, except that a REDUCE goes into a private
 * buffer at the identity, folded into the data right after the task (requirements and fields in
 * order). Points run in color order, so this is the fold order Tessera promises. */
/* Whether a point task does not run: it reads a poisoned future or poisoned data (READ or
 * READ_WRITE: tsr__poison_inherited), or it is told to fail. Then what it should have written is
 * poisoned (1 returned, and the caller poisons its value). */
static int task_fails(or_interp_t *s, const or_op_t *op, const or_kargs_t *ka,
		      const int64_t point[3])
{
	const or_prog_t *p = s->p;
	int inherited = 0;
	for (int r = 0; r < op->nreq && !inherited; r++) {
		const or_req_t *q = &op->req[r];
		if (q->kind == RQ_FUTURE) {
			inherited = s->fut_poison[q->obj];
			continue;
		}
		if (q->priv != TSR_READ && q->priv != TSR_READ_WRITE)
			continue;
		int n = req_node(p, q, point);
		for (int k = 0; k < q->nf && !inherited; k++)
			inherited = or_interp_poisoned(s, n, q->fields[k]);
	}
	int failed = !inherited && or_point_fails(ka, point);
	if (!inherited && !failed)
		return 0;

	s->task_errors += failed; /* a skipped task reports nothing: the failure did */
	for (int r = 0; r < op->nreq; r++) {
		const or_req_t *q = &op->req[r];
		if (q->kind == RQ_FUTURE || q->priv == TSR_READ)
			continue;
		int n = req_node(p, q, point);
		for (int k = 0; k < q->nf; k++)
			poison_add(s, p->node[n].root, q->fields[k], p->node[n].box);
	}
	return 1;
}

/* A point task that ran: what it wrote whole (WRITE) is healthy again. */
static void task_heals(or_interp_t *s, const or_op_t *op, const int64_t point[3])
{
	const or_prog_t *p = s->p;
	for (int r = 0; r < op->nreq; r++) {
		const or_req_t *q = &op->req[r];
		if (q->kind == RQ_FUTURE || q->priv != TSR_WRITE)
			continue;
		int n = req_node(p, q, point);
		for (int k = 0; k < q->nf; k++)
			poison_heal(s, p->node[n].root, q->fields[k], p->node[n].box);
	}
}

static int run_task(or_interp_t *s, const or_op_t *op, const or_kargs_t *ka, int pdim,
		    const int64_t point[3], void *ret)
{
	const or_prog_t *p = s->p;
	if (task_fails(s, op, ka, point))
		return 1;
	tsr_accessor_t acc[OR_MAXREQ][OR_MAXF];
	const void *fut[OR_MAXREQ] = {0};
	or_partial_t parts[OR_MAXREQ * OR_MAXF];
	int nparts = 0;
	for (int r = 0; r < op->nreq; r++) {
		const or_req_t *q = &op->req[r];
		if (q->kind == RQ_FUTURE) {
			fut[r] = &s->fut[q->obj];
			continue;
		}
		int n = req_node(p, q, point);
		for (int k = 0; k < q->nf; k++) {
			acc[r][k] = or_interp_acc(s, n, q->fields[k], q->priv);
			if (!TSR_PRIV_IS_REDUCE(q->priv))
				continue;
			or_partial_t *b = &parts[nparts++];
			or_partial_open(b, p->node[n].box, acc[r][k], TSR_PRIV_REDOP(q->priv), 0);
			acc[r][k] = b->acc;
		}
	}
	or_kernel(ka, pdim, point, acc, fut, ret);
	for (int i = 0; i < nparts; i++)
		or_partial_fold(&parts[i]);
	task_heals(s, op, point);
	return 0;
}

static void copy_op(or_interp_t *s, const or_op_t *op)
{
	const or_node_t *dn = &s->p->node[op->obj2];
	if (or_interp_poisoned(s, op->obj, op->field)) {
		/* a copy task that reads poison is skipped and poisons its destination */
		poison_add(s, dn->root, op->field2, dn->box);
		return;
	}
	poison_heal(s, dn->root, op->field2, dn->box);
	tsr_accessor_t src = or_interp_acc(s, op->obj, op->field, TSR_READ);
	tsr_accessor_t dst = or_interp_acc(s, op->obj2, op->field2, TSR_WRITE);
	tsr_box_t sb = s->p->node[op->obj].box, db = s->p->node[op->obj2].box;
	int64_t x[3], y[3];
	or_box_first(sb, x);
	or_box_first(db, y);
	/* sources and destinations never overlap in a valid program, so element order is free */
	do {
		memcpy((char *)dst.ptr + or_elem_offset(&dst, y) * dst.elem_size,
		       (char *)src.ptr + or_elem_offset(&src, x) * src.elem_size, src.elem_size);
		or_box_next(db, y);
	} while (or_box_next(sb, x));
}

void or_interp_op(or_interp_t *s, int i)
{
	const or_prog_t *p = s->p;
	const or_op_t *op = &p->op[i];
	switch (op->kind) {
	case OP_FILL: {
		poison_heal(s, p->node[op->obj].root, op->field, p->node[op->obj].box);
		tsr_accessor_t a = or_interp_acc(s, op->obj, op->field, TSR_WRITE);
		unsigned char v[8];
		or_from_i64(a.type, op->ival, v);
		int64_t x[3];
		or_box_first(p->node[op->obj].box, x);
		do
			memcpy((char *)a.ptr + or_elem_offset(&a, x) * a.elem_size, v, a.elem_size);
		while (or_box_next(p->node[op->obj].box, x));
		break;
	}
	case OP_COPY:
		copy_op(s, op);
		break;
	case OP_MAP_WRITE: {
		/* a READ_WRITE map of poisoned data is refused (no write); a WRITE map heals */
		if (op->priv == TSR_READ_WRITE && or_interp_poisoned(s, op->obj, op->field))
			break;
		poison_heal(s, p->node[op->obj].root, op->field, p->node[op->obj].box);
		tsr_accessor_t a = or_interp_acc(s, op->obj, op->field, op->priv);
		or_host_write(&a, op->priv, op->ival);
		break;
	}
	case OP_FUT_CREATE:
		s->fut_poison[op->fut] = 0;
		s->fut[op->fut] = 0;
		or_from_i64(p->fut_type[op->fut], op->ival, &s->fut[op->fut]);
		break;
	case OP_LAUNCH: {
		or_kargs_t ka;
		or_kargs(p, op, &ka);
		int64_t point[3] = {0, 0, 0};
		uint64_t ret = 0;
		int bad = run_task(s, op, &ka, 0, point, &ret);
		if (op->fut >= 0) {
			s->fut[op->fut] = ret;
			s->fut_poison[op->fut] = (unsigned char)bad;
		}
		break;
	}
	case OP_INDEX: {
		or_kargs_t ka;
		or_kargs(p, op, &ka);
		uint64_t total = 0;
		if (op->redop.id != TSR_REDOP_NONE.id)
			or_identity(op->ret_type, op->redop, &total);
		int64_t point[3];
		or_box_first(op->domain, point);
		int bad = 0;
		do {
			uint64_t ret = 0;
			bad |= run_task(s, op, &ka, op->domain.dim, point, &ret);
			if (op->redop.id != TSR_REDOP_NONE.id)
				or_fold(op->ret_type, op->redop, &total, &ret);
		} while (or_box_next(op->domain, point));
		if (op->fut >= 0) {
			s->fut[op->fut] = total;
			s->fut_poison[op->fut] = (unsigned char)bad;
		}
		break;
	}
	case OP_FENCE:
		s->task_errors = 0; /* the fence reported them */
		break;
	default: /* partitions, host reads and future waits change no data */
		break;
	}
}
