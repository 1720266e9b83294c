/* gen.c: random valid oracle programs from a seed, the validator that defines "valid", and the
 * program listing. Every generated op passes through the validator before it is kept. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "oracle.h"

long or_gen_dropped;
unsigned or_avoid;

static const struct {
	const char *name;
	unsigned bit;
} avoid_names[] = {
	{"aliased-write", OR_AVOID_ALIASED_WRITE},
	{"same-field-copy", OR_AVOID_SAME_FIELD_COPY},
	{"redop-switch", OR_AVOID_REDOP_SWITCH},
};

int or_parse_avoid(const char *list, unsigned *mask)
{
	*mask = 0;
	if (!strcmp(list, "none") || !*list)
		return 0;
	while (*list) {
		size_t n = strcspn(list, ",");
		int found = 0;
		for (size_t i = 0; i < sizeof avoid_names / sizeof avoid_names[0]; i++)
			if (strlen(avoid_names[i].name) == n &&
			    !strncmp(list, avoid_names[i].name, n))
				*mask |= avoid_names[i].bit, found = 1;
		if (!found)
			return -1;
		list += n + (list[n] == ',');
	}
	return 0;
}

const char *or_avoid_str(unsigned mask, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; i < sizeof avoid_names / sizeof avoid_names[0]; i++)
		if (mask & avoid_names[i].bit)
			n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "",
					      avoid_names[i].name);
	if (!mask)
		snprintf(buf, len, "none");
	return buf;
}

/* ------------------------------------------------------------------ names */
void or_box_str(tsr_box_t b, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (int d = 0; d < b.dim && n < len; d++)
		n += (size_t)snprintf(buf + n, len - n, "%s[%lld..%lld]", d ? "x" : "",
				      (long long)b.lo[d], (long long)b.hi[d]);
}

void or_color_str(int dim, const int64_t c[3], char *buf, size_t len)
{
	if (dim == 1)
		snprintf(buf, len, "%lld", (long long)c[0]);
	else if (dim == 2)
		snprintf(buf, len, "%lld,%lld", (long long)c[0], (long long)c[1]);
	else
		snprintf(buf, len, "%lld,%lld,%lld", (long long)c[0], (long long)c[1],
			 (long long)c[2]);
}

void or_node_name(const or_prog_t *p, int n, char *buf, size_t len)
{
	const or_node_t *nd = &p->node[n];
	if (nd->part < 0) {
		snprintf(buf, len, "r%d", n);
		return;
	}
	char parent[160], cs[48];
	const or_part_t *pt = &p->part[nd->part];
	or_node_name(p, pt->parent, parent, sizeof parent);
	or_color_str(pt->colors.dim, nd->color, cs, sizeof cs);
	snprintf(buf, len, "%s/p%d[%s]", parent, nd->part, cs);
}

const char *or_redop_str(tsr_redop_t op)
{
	static const char *names[] = {"none", "sum", "prod", "min", "max"};
	return op.id >= TSR_SUM.id && op.id <= TSR_MAX.id ? names[op.id] : names[0];
}

const char *or_priv_str(tsr_privilege_t priv)
{
	static const char *red[] = {"?", "REDUCE(sum)", "REDUCE(prod)", "REDUCE(min)",
				    "REDUCE(max)"};
	if (TSR_PRIV_IS_REDUCE(priv)) {
		int op = TSR_PRIV_REDOP(priv).id;
		return op >= 1 && op <= 4 ? red[op] : red[0];
	}
	return priv == TSR_READ         ? "READ"
	       : priv == TSR_WRITE      ? "WRITE"
	       : priv == TSR_READ_WRITE ? "READ_WRITE"
					: "?";
}

static int root_of_req(const or_prog_t *p, const or_req_t *q)
{
	return q->kind == RQ_REGION ? p->node[q->obj].root : p->node[p->part[q->obj].parent].root;
}

/* ------------------------------------------------------------- validator
 * The simulation state: which objects are alive and, per element of every field, a bound on
 * the magnitude of its value, so that sums and products stay exact integers in every type. */
typedef struct {
	const or_prog_t *p;
	unsigned char part_state[OR_MAXPART]; /* 0 not created yet, 1 alive, 2 destroyed */
	unsigned char fut_state[OR_MAXFUT];   /* 0 not produced yet, 1 alive, 2 destroyed */
	double bound[OR_MAXROOT][OR_MAXF][OR_MAXEXT * OR_MAXEXT * OR_MAXEXT];
	/* scratch of one launch: folds per element (-1: written) */
	int touch[OR_MAXROOT][OR_MAXF][OR_MAXEXT * OR_MAXEXT * OR_MAXEXT];
	/* operator of the first REDUCE of each field (for OR_AVOID_REDOP_SWITCH) */
	unsigned char redop[OR_MAXROOT][OR_MAXF];
	int trace_open; /* the open trace's id + 1; 0: none */
} sim_t;

static int node_alive(const sim_t *s, int n)
{
	if (n < 0 || n >= s->p->nnode)
		return 0;
	return s->p->node[n].part < 0 || s->part_state[s->p->node[n].part] == 1;
}

/* 1 if n is a subregion of an aliased partition, or lies below one. */
static int below_aliased(const or_prog_t *p, int n)
{
	for (; p->node[n].part >= 0; n = p->part[p->node[n].part].parent)
		if (!p->part[p->node[n].part].disjoint)
			return 1;
	return 0;
}

/* May data of node n be written other than by a reduction? */
static int writable(const or_prog_t *p, int n)
{
	return !(or_avoid & OR_AVOID_ALIASED_WRITE) || !below_aliased(p, n);
}

static int64_t elem_index(const or_prog_t *p, int root, const int64_t x[3])
{
	const tsr_box_t *b = &p->root[root].bounds;
	int64_t i = 0, mul = 1;
	for (int d = 0; d < b->dim; d++) {
		i += (x[d] - b->lo[d]) * mul;
		mul *= b->hi[d] - b->lo[d] + 1;
	}
	return i;
}

static int boxes_overlap(tsr_box_t a, tsr_box_t b)
{
	tsr_box_t o;
	return a.dim == b.dim && tsr_box_intersect(a, b, &o);
}

#define FAIL(...)                                \
	do {                                     \
		snprintf(msg, len, __VA_ARGS__); \
		return -1;                       \
	} while (0)

static int check_fields(const or_prog_t *p, int root, const or_req_t *q, unsigned used[OR_MAXROOT],
			char *msg, size_t len)
{
	if (q->nf < 1 || q->nf > p->root[root].nf)
		FAIL("bad field count %d", q->nf);
	for (int k = 0; k < q->nf; k++) {
		int f = q->fields[k];
		if (f < 0 || f >= p->root[root].nf)
			FAIL("field %d not in root r%d", f, root);
		if (used[root] & (1u << f))
			FAIL("field %d of r%d used by two requirements", f, root);
		used[root] |= 1u << f;
	}
	return 0;
}

static int check_priv(tsr_privilege_t priv)
{
	if (TSR_PRIV_IS_REDUCE(priv))
		return priv == TSR_REDUCE(TSR_SUM) || priv == TSR_REDUCE(TSR_PROD) ||
		       priv == TSR_REDUCE(TSR_MIN) || priv == TSR_REDUCE(TSR_MAX);
	return priv == TSR_READ || priv == TSR_WRITE || priv == TSR_READ_WRITE;
}

static int check_part_geometry(const or_prog_t *p, int pi, char *msg, size_t len)
{
	const or_part_t *pt = &p->part[pi];
	tsr_box_t pb = p->node[pt->parent].box;
	if (pt->nsub != (int)tsr_box_volume(pt->colors) || pt->nsub < 1 || pt->nsub > OR_MAXCOLORS)
		FAIL("partition p%d: %d subregions for %lld colors", pi, pt->nsub,
		     (long long)tsr_box_volume(pt->colors));
	int disjoint = 1;
	for (int i = 0; i < pt->nsub; i++) {
		const or_node_t *a = &p->node[pt->first + i];
		if (a->part != pi || !tsr_box_contains(pb, a->box) || tsr_box_volume(a->box) < 1)
			FAIL("partition p%d: subregion %d is empty or outside its parent", pi, i);
		for (int j = 0; j < i; j++)
			if (boxes_overlap(a->box, p->node[pt->first + j].box))
				disjoint = 0;
	}
	if (disjoint != pt->disjoint)
		FAIL("partition p%d: disjoint flag %d but boxes say %d", pi, pt->disjoint,
		     disjoint);
	return 0;
}

static void destroy_part(sim_t *s, int pi)
{
	const or_prog_t *p = s->p;
	s->part_state[pi] = 2;
	/* partitions of its subregions go with it */
	for (int q = 0; q < p->npart; q++)
		if (s->part_state[q] != 2 && p->node[p->part[q].parent].part == pi)
			destroy_part(s, q);
}

/* Requirements and bounds of a launch; touch[][][] gets -1 for written elements and the fold
 * count for reduced ones. */
static int check_launch(sim_t *s, const or_op_t *op, char *msg, size_t len)
{
	const or_prog_t *p = s->p;
	unsigned used[OR_MAXROOT] = {0};
	int is_index = op->kind == OP_INDEX;
	if (op->nreq < 0 || op->nreq > OR_MAXREQ)
		FAIL("bad requirement count %d", op->nreq);
	if (op->ret_type != TSR_NONE && op->ret_type != TSR_F32 && op->ret_type != TSR_F64 &&
	    op->ret_type != TSR_I32 && op->ret_type != TSR_I64)
		FAIL("bad return type");
	if (op->fut >= 0) {
		if (op->fut >= p->nfut || s->fut_state[op->fut] != 0)
			FAIL("future F%d produced twice", op->fut);
		if (op->ret_type == TSR_NONE || p->fut_type[op->fut] != op->ret_type)
			FAIL("future F%d: task returns nothing or another type", op->fut);
		if (is_index && (op->redop.id < TSR_SUM.id || op->redop.id > TSR_MAX.id))
			FAIL("index launch future without a reduction");
	} else if (is_index && op->redop.id != TSR_REDOP_NONE.id) {
		FAIL("reduction without a future");
	}
	if (op->ret_mode != (is_index && op->redop.id == TSR_PROD.id))
		FAIL("return mode does not match the reduction");
	if (op->delay_us < 0 || op->delay_us > 1000)
		FAIL("task delay %d us", op->delay_us);
	if (op->fp_order != 0 && op->fp_order != 1)
		FAIL("fp_order %d is neither 0 nor 1", op->fp_order);
	if (op->fail != 0 && op->fail != 1)
		FAIL("fail %d is neither 0 nor 1", op->fail);
	if (is_index) {
		int64_t v = tsr_box_volume(op->domain);
		if (op->domain.dim < 1 || op->domain.dim > 3 || v < 1 || v > OR_MAXCOLORS)
			FAIL("bad launch domain");
	}
	for (int r = 0; r < op->nreq; r++) {
		const or_req_t *q = &op->req[r];
		if (q->kind == RQ_FUTURE) {
			if (q->obj < 0 || q->obj >= p->nfut || s->fut_state[q->obj] != 1)
				FAIL("requirement %d: future F%d is not alive", r, q->obj);
			continue;
		}
		if (!check_priv(q->priv))
			FAIL("requirement %d: bad privilege", r);
		if (q->kind == RQ_REGION) {
			if (!node_alive(s, q->obj))
				FAIL("requirement %d: region node %d is not alive", r, q->obj);
			if (is_index && q->priv != TSR_READ && !TSR_PRIV_IS_REDUCE(q->priv))
				FAIL("requirement %d: every point would write the same region", r);
			if ((q->priv == TSR_WRITE || q->priv == TSR_READ_WRITE) &&
			    !writable(p, q->obj))
				FAIL("requirement %d: write below an aliased partition (avoided)",
				     r);
		} else if (q->kind == RQ_PART) {
			if (!is_index)
				FAIL("requirement %d: partition in a single launch", r);
			if (q->obj < 0 || q->obj >= p->npart || s->part_state[q->obj] != 1)
				FAIL("requirement %d: partition p%d is not alive", r, q->obj);
			const or_part_t *pt = &p->part[q->obj];
			if (pt->colors.dim != op->domain.dim)
				FAIL("requirement %d: partition p%d colors and domain differ in "
				     "dimension",
				     r, q->obj);
			if (!q->proj && !tsr_box_contains(pt->colors, op->domain))
				FAIL("requirement %d: domain not inside the colors of p%d", r,
				     q->obj);
			if ((q->priv == TSR_WRITE || q->priv == TSR_READ_WRITE) &&
			    (!pt->disjoint || q->proj))
				FAIL("requirement %d: write through aliased partition p%d or a "
				     "non-identity projection",
				     r, q->obj);
			if ((q->priv == TSR_WRITE || q->priv == TSR_READ_WRITE) &&
			    !writable(p, pt->parent))
				FAIL("requirement %d: write below an aliased partition (avoided)",
				     r);
		} else {
			FAIL("requirement %d: bad kind", r);
		}
		if (check_fields(p, root_of_req(p, q), q, used, msg, len))
			return -1;
	}
	/* bounds: count the folds of every element, mark the written ones */
	for (int r = 0; r < op->nreq; r++) {
		const or_req_t *q = &op->req[r];
		if (q->kind == RQ_FUTURE || q->priv == TSR_READ)
			continue;
		int root = root_of_req(p, q);
		for (int k = 0; k < q->nf; k++) {
			memset(s->touch[root][q->fields[k]], 0, sizeof s->touch[0][0]);
		}
		int64_t point[3] = {0, 0, 0};
		tsr_box_t dom = is_index ? op->domain : tsr_box1(0, 0);
		or_box_first(dom, point);
		do {
			int n = q->obj;
			if (q->kind == RQ_PART) {
				int64_t color[3];
				or_project(p, q, point, color);
				n = or_part_color_node(p, q->obj, color);
			}
			int64_t x[3];
			or_box_first(p->node[n].box, x);
			do {
				int64_t e = elem_index(p, root, x);
				for (int k = 0; k < q->nf; k++) {
					int *t = &s->touch[root][q->fields[k]][e];
					if (TSR_PRIV_IS_REDUCE(q->priv))
						(*t)++;
					else if (*t == 0)
						*t = -1;
					else
						FAIL("requirement %d: two points write the same "
						     "element",
						     r);
				}
			} while (or_box_next(p->node[n].box, x));
		} while (or_box_next(dom, point));
		for (int k = 0; k < q->nf; k++) {
			int f = q->fields[k];
			double lim = or_type_limit(p->root[root].type[f]);
			int64_t vol = tsr_box_volume(p->root[root].bounds);
			for (int64_t e = 0; e < vol; e++) {
				int t = s->touch[root][f][e];
				double b = s->bound[root][f][e];
				if (t <= 0)
					continue;
				double nb = q->priv == TSR_REDUCE(TSR_SUM)    ? b + 3.0 * t
					    : q->priv == TSR_REDUCE(TSR_PROD) ? ldexp(b, t)
									      : fmax(b, 500.0);
				if (nb > lim)
					FAIL("requirement %d: %s on field %d of r%d may reach %.0f "
					     "(limit %.0f)",
					     r, or_priv_str(q->priv), f, root, nb, lim);
				int first = s->redop[root][f];
				if ((or_avoid & OR_AVOID_REDOP_SWITCH) && first &&
				    first != TSR_PRIV_REDOP(q->priv).id)
					FAIL("requirement %d: %s on field %d of r%d, reduced with "
					     "%s before (avoided)",
					     r, or_priv_str(q->priv), f, root,
					     or_redop_str(TSR_REDOP_ID(first)));
			}
		}
	}
	return 0;
}

static void apply_launch(sim_t *s, const or_op_t *op)
{
	const or_prog_t *p = s->p;
	for (int r = 0; r < op->nreq; r++) {
		const or_req_t *q = &op->req[r];
		if (q->kind == RQ_FUTURE || q->priv == TSR_READ)
			continue;
		int root = root_of_req(p, q);
		int64_t vol = tsr_box_volume(p->root[root].bounds);
		for (int k = 0; k < q->nf; k++) {
			int f = q->fields[k];
			if (TSR_PRIV_IS_REDUCE(q->priv) && !s->redop[root][f])
				s->redop[root][f] = (unsigned char)TSR_PRIV_REDOP(q->priv).id;
			for (int64_t e = 0; e < vol; e++) {
				int t = s->touch[root][f][e];
				double *b = &s->bound[root][f][e];
				if (t < 0)
					*b = 500.0;
				else if (t > 0)
					*b = q->priv == TSR_REDUCE(TSR_SUM)    ? *b + 3.0 * t
					     : q->priv == TSR_REDUCE(TSR_PROD) ? ldexp(*b, t)
									       : fmax(*b, 500.0);
			}
		}
	}
	if (op->fut >= 0)
		s->fut_state[op->fut] = 1;
}

static void set_bound(sim_t *s, int n, int f, double v)
{
	const or_prog_t *p = s->p;
	int root = p->node[n].root;
	int64_t x[3];
	or_box_first(p->node[n].box, x);
	do
		s->bound[root][f][elem_index(p, root, x)] = v;
	while (or_box_next(p->node[n].box, x));
}

static int field_ok(const or_prog_t *p, int n, int f)
{
	return f >= 0 && f < p->root[p->node[n].root].nf;
}

/* Check op i against the state; apply it if valid. */
static int sim_step(sim_t *s, int i, char *msg, size_t len)
{
	const or_prog_t *p = s->p;
	const or_op_t *op = &p->op[i];
	switch (op->kind) {
	case OP_PART_CREATE:
		if (op->obj < 0 || op->obj >= p->npart || s->part_state[op->obj] != 0)
			FAIL("partition p%d created twice", op->obj);
		if (!node_alive(s, p->part[op->obj].parent))
			FAIL("partition p%d: parent node is not alive", op->obj);
		if (check_part_geometry(p, op->obj, msg, len))
			return -1;
		s->part_state[op->obj] = 1;
		return 0;
	case OP_PART_DESTROY:
		if (op->obj < 0 || op->obj >= p->npart || s->part_state[op->obj] != 1)
			FAIL("partition p%d is not alive", op->obj);
		destroy_part(s, op->obj);
		return 0;
	case OP_FILL:
		if (!node_alive(s, op->obj) || !field_ok(p, op->obj, op->field) ||
		    op->ival < -100000 || op->ival > 100000)
			FAIL("fill of a dead node, a bad field or a large value");
		if (!writable(p, op->obj))
			FAIL("fill below an aliased partition (avoided)");
		set_bound(s, op->obj, op->field, fabs((double)op->ival));
		return 0;
	case OP_MAP_READ:
	case OP_MAP_WRITE:
		if (!node_alive(s, op->obj) || !field_ok(p, op->obj, op->field))
			FAIL("map of a dead node or a bad field");
		if (op->kind == OP_MAP_WRITE) {
			if (op->priv != TSR_WRITE && op->priv != TSR_READ_WRITE)
				FAIL("host write with privilege %s", or_priv_str(op->priv));
			if (!writable(p, op->obj))
				FAIL("host write below an aliased partition (avoided)");
			set_bound(s, op->obj, op->field, 500.0);
		}
		return 0;
	case OP_COPY: {
		if (!node_alive(s, op->obj) || !node_alive(s, op->obj2) ||
		    !field_ok(p, op->obj, op->field) || !field_ok(p, op->obj2, op->field2))
			FAIL("copy between dead nodes or bad fields");
		const or_node_t *a = &p->node[op->obj], *b = &p->node[op->obj2];
		if (p->root[a->root].type[op->field] != p->root[b->root].type[op->field2] ||
		    a->box.dim != b->box.dim)
			FAIL("copy between different types or dimensions");
		for (int d = 0; d < a->box.dim; d++)
			if (a->box.hi[d] - a->box.lo[d] != b->box.hi[d] - b->box.lo[d])
				FAIL("copy between different extents");
		if (a->root == b->root && op->field == op->field2 && boxes_overlap(a->box, b->box))
			FAIL("copy between overlapping boxes of one field");
		if (!writable(p, op->obj2))
			FAIL("copy into a region below an aliased partition (avoided)");
		if (a->root == b->root && op->field == op->field2 &&
		    (or_avoid & OR_AVOID_SAME_FIELD_COPY))
			FAIL("copy within one field (avoided)");
		int64_t x[3], y[3];
		or_box_first(a->box, x);
		or_box_first(b->box, y);
		do {
			s->bound[b->root][op->field2][elem_index(p, b->root, y)] =
				s->bound[a->root][op->field][elem_index(p, a->root, x)];
			or_box_next(b->box, y);
		} while (or_box_next(a->box, x));
		return 0;
	}
	case OP_LAUNCH:
	case OP_INDEX:
		if (check_launch(s, op, msg, len))
			return -1;
		apply_launch(s, op);
		return 0;
	case OP_FUT_CREATE:
		if (op->fut < 0 || op->fut >= p->nfut || s->fut_state[op->fut] != 0 ||
		    op->ival < -100 || op->ival > 100)
			FAIL("future F%d created twice or with a large value", op->fut);
		s->fut_state[op->fut] = 1;
		return 0;
	case OP_FENCE:
		return 0;
	case OP_TRACE_BEGIN:
		if (s->trace_open || op->obj < 0)
			FAIL("trace %d begins inside trace %d (traces do not nest)", op->obj,
			     s->trace_open - 1);
		s->trace_open = op->obj + 1;
		return 0;
	case OP_TRACE_END:
		if (s->trace_open != op->obj + 1)
			FAIL("trace %d ends but is not open", op->obj);
		s->trace_open = 0;
		return 0;
	case OP_FUT_WAIT:
	case OP_FUT_DESTROY:
		if (op->obj < 0 || op->obj >= p->nfut || s->fut_state[op->obj] != 1)
			FAIL("future F%d is not alive", op->obj);
		if (op->kind == OP_FUT_DESTROY)
			s->fut_state[op->obj] = 2;
		return 0;
	default:
		FAIL("unknown op kind %d", op->kind);
	}
}

static void sim_init(sim_t *s, const or_prog_t *p)
{
	memset(s, 0, sizeof *s);
	s->p = p;
}

int or_validate(const or_prog_t *p, char *msg, size_t len)
{
	sim_t *s = malloc(sizeof *s);
	if (!s) {
		snprintf(msg, len, "out of memory");
		return -1;
	}
	sim_init(s, p);
	int rc = 0;
	char why[256];
	for (int r = 0; r < p->nroot && !rc; r++) {
		const or_root_t *rt = &p->root[r];
		if (rt->bounds.dim < 1 || rt->bounds.dim > 3 || rt->nf < 1 || rt->nf > OR_MAXF)
			rc = -1, snprintf(msg, len, "root r%d malformed", r);
		for (int d = 0; d < rt->bounds.dim && !rc; d++)
			if (rt->bounds.hi[d] < rt->bounds.lo[d] ||
			    rt->bounds.hi[d] - rt->bounds.lo[d] >= OR_MAXEXT)
				rc = -1, snprintf(msg, len, "root r%d has a bad extent", r);
	}
	for (int i = 0; i < p->nop && !rc; i++)
		if (sim_step(s, i, why, sizeof why)) {
			snprintf(msg, len, "op #%d: %s", p->op_id[i], why);
			rc = -1;
		}
	if (!rc && s->trace_open)
		rc = -1, snprintf(msg, len, "trace %d is still open at the end", s->trace_open - 1);
	free(s);
	return rc;
}

void or_filter(or_prog_t *p, const unsigned char *keep)
{
	int n = 0;
	for (int i = 0; i < p->nop; i++)
		if (keep[p->op_id[i]]) {
			p->op[n] = p->op[i];
			p->op_id[n] = p->op_id[i];
			n++;
		}
	p->nop = n;
}

/* -------------------------------------------------------------- generator */
typedef struct {
	uint64_t state;
	or_prog_t *p;
	sim_t *sim;
} gen_t;

static uint64_t next(gen_t *g)
{
	uint64_t z = (g->state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int rnd(gen_t *g, int n) /* uniform in [0, n) */
{
	return n <= 1 ? 0 : (int)(next(g) % (uint64_t)n);
}

static int chance(gen_t *g, int num, int den)
{
	return rnd(g, den) < num;
}

static tsr_type_t rnd_type(gen_t *g)
{
	static const tsr_type_t t[] = {TSR_F32, TSR_F64, TSR_I32, TSR_I64};
	return t[rnd(g, 4)];
}

static tsr_privilege_t rnd_reduce(gen_t *g)
{
	return TSR_REDUCE(TSR_REDOP_ID(TSR_SUM.id + rnd(g, 4)));
}

static tsr_privilege_t rnd_priv(gen_t *g, int may_write)
{
	int r = rnd(g, 100);
	if (!may_write)
		return r < 50 ? TSR_READ : rnd_reduce(g);
	return r < 30 ? TSR_READ : r < 50 ? TSR_WRITE : r < 75 ? TSR_READ_WRITE : rnd_reduce(g);
}

/* A random alive node; prefer_sub asks for a subregion when there is one. */
static int rnd_node(gen_t *g, int prefer_sub, int max_depth)
{
	int cand[OR_MAXNODE], n = 0, nsub = 0;
	for (int i = 0; i < g->p->nnode; i++)
		if (node_alive(g->sim, i) && g->p->node[i].depth <= max_depth)
			cand[n++] = i, nsub += g->p->node[i].part >= 0;
	if (!n)
		return -1;
	if (prefer_sub && nsub) {
		int k = rnd(g, nsub);
		for (int i = 0; i < n; i++)
			if (g->p->node[cand[i]].part >= 0 && k-- == 0)
				return cand[i];
	}
	return cand[rnd(g, n)];
}

/* One of the n objects whose state is 1 (alive), or -1 where none is. */
static int rnd_alive(gen_t *g, const unsigned char *state, int n)
{
	int cand[OR_MAXPART > OR_MAXFUT ? OR_MAXPART : OR_MAXFUT], nc = 0;
	for (int i = 0; i < n; i++)
		if (state[i] == 1)
			cand[nc++] = i;
	return nc ? cand[rnd(g, nc)] : -1;
}

static int rnd_alive_part(gen_t *g)
{
	return rnd_alive(g, g->sim->part_state, g->p->npart);
}

static int rnd_alive_fut(gen_t *g)
{
	return rnd_alive(g, g->sim->fut_state, g->p->nfut);
}

static tsr_box_t rnd_subbox(gen_t *g, tsr_box_t b)
{
	tsr_box_t o = b;
	for (int d = 0; d < b.dim; d++) {
		int64_t ext = b.hi[d] - b.lo[d] + 1;
		int64_t a = b.lo[d] + rnd(g, (int)ext), c = b.lo[d] + rnd(g, (int)ext);
		o.lo[d] = a < c ? a : c;
		o.hi[d] = a < c ? c : a;
	}
	return o;
}

/* Fill in nodes for partition pi from the subregion boxes. */
static int add_subs(gen_t *g, int pi, const tsr_box_t *boxes, int n)
{
	or_prog_t *p = g->p;
	or_part_t *pt = &p->part[pi];
	if (p->nnode + n > OR_MAXNODE)
		return -1;
	pt->first = p->nnode;
	pt->nsub = n;
	pt->disjoint = 1;
	const or_node_t *par = &p->node[pt->parent];
	for (int i = 0; i < n; i++) {
		or_node_t *nd = &p->node[p->nnode++];
		nd->root = par->root;
		nd->part = pi;
		nd->box = boxes[i];
		nd->depth = par->depth + 1;
		int64_t rest = i;
		for (int d = 0; d < 3; d++) {
			if (d < pt->colors.dim) {
				int64_t ext = pt->colors.hi[d] - pt->colors.lo[d] + 1;
				nd->color[d] = pt->colors.lo[d] + rest % ext;
				rest /= ext;
			} else {
				nd->color[d] = 0;
			}
		}
		for (int j = 0; j < i; j++)
			if (boxes_overlap(boxes[i], boxes[j]))
				pt->disjoint = 0;
	}
	return 0;
}

/* Tiles of `domain` over `colors`, each grown by halo and clipped to `clip`: the remainder of an
 * uneven split goes to the first tiles, as tessera.h says. */
static int tile_boxes(tsr_box_t domain, tsr_box_t colors, const int64_t halo[3], tsr_box_t clip,
		      tsr_box_t *out)
{
	int n = (int)tsr_box_volume(colors);
	for (int c = 0; c < n; c++) {
		int64_t rest = c;
		tsr_box_t b = {domain.dim, {0, 0, 0}, {0, 0, 0}};
		for (int d = 0; d < domain.dim; d++) {
			int64_t nc = colors.hi[d] - colors.lo[d] + 1, i = rest % nc;
			rest /= nc;
			int64_t len = domain.hi[d] - domain.lo[d] + 1, q = len / nc, rem = len % nc;
			int64_t lo = domain.lo[d] + i * q + (i < rem ? i : rem);
			int64_t hi = lo + q + (i < rem ? 1 : 0) - 1;
			lo -= halo[d];
			hi += halo[d];
			b.lo[d] = lo < clip.lo[d] ? clip.lo[d] : lo;
			b.hi[d] = hi > clip.hi[d] ? clip.hi[d] : hi;
		}
		out[c] = b;
	}
	return n;
}

static tsr_box_t rnd_colors(gen_t *g, tsr_box_t domain)
{
	tsr_box_t c = {domain.dim, {0, 0, 0}, {0, 0, 0}};
	int64_t total = 1;
	for (int d = 0; d < domain.dim; d++) {
		int64_t ext = domain.hi[d] - domain.lo[d] + 1, m = ext < 4 ? ext : 4;
		int64_t k = 1 + rnd(g, (int)m);
		while (total * k > OR_MAXCOLORS && k > 1)
			k--;
		c.hi[d] = k - 1;
		total *= k;
	}
	return c;
}

static int gen_part_create(gen_t *g, or_op_t *op)
{
	or_prog_t *p = g->p;
	if (p->npart >= OR_MAXPART)
		return 0;
	int parent = rnd_node(g, chance(g, 1, 2), OR_MAXDEPTH - 1);
	if (parent < 0)
		return 0;
	int pi = p->npart;
	or_part_t *pt = &p->part[pi];
	memset(pt, 0, sizeof *pt);
	pt->parent = parent;
	tsr_box_t pb = p->node[parent].box;
	tsr_box_t boxes[OR_MAXCOLORS];
	int n, k = rnd(g, 10);
	if (k < 4) {
		pt->kind = PK_TILES;
		pt->domain = pb;
		pt->colors = rnd_colors(g, pb);
		n = tile_boxes(pb, pt->colors, pt->halo, pb, boxes);
	} else if (k < 7) {
		pt->kind = PK_HALO;
		pt->domain = chance(g, 1, 3) ? pb : rnd_subbox(g, pb);
		pt->colors = rnd_colors(g, pt->domain);
		if (pt->domain.hi[0] > pt->domain.lo[0] && pt->colors.hi[0] == 0 &&
		    2 * tsr_box_volume(pt->colors) <= OR_MAXCOLORS && chance(g, 2, 3))
			/* one tile has no neighbour to overlap: prefer two */
			pt->colors.hi[0] = 1;
		if (!chance(g, 1, 5))
			for (int d = 0; d < pb.dim; d++)
				pt->halo[d] = rnd(g, 3);
		n = tile_boxes(pt->domain, pt->colors, pt->halo, pb, boxes);
	} else {
		pt->kind = PK_BOXES;
		int want = 1 + rnd(g, 5), disjoint = chance(g, 1, 2);
		n = 0;
		for (int i = 0; i < want; i++) {
			for (int tries = 0; tries < 20; tries++) {
				tsr_box_t b = rnd_subbox(g, pb);
				int ok = 1;
				for (int j = 0; j < n && disjoint; j++)
					ok &= !boxes_overlap(b, boxes[j]);
				if (ok) {
					boxes[n++] = b;
					break;
				}
			}
		}
		if (n == 0)
			return 0;
		pt->colors = tsr_box1(0, n - 1);
	}
	if (add_subs(g, pi, boxes, n))
		return 0;
	p->npart++;
	op->kind = OP_PART_CREATE;
	op->obj = pi;
	return 1;
}

/* Pick fields of root not used yet in this launch; returns how many. */
static int pick_fields(gen_t *g, int root, unsigned used[OR_MAXROOT], or_req_t *q)
{
	int avail[OR_MAXF], na = 0;
	for (int f = 0; f < g->p->root[root].nf; f++)
		if (!(used[root] & (1u << f)))
			avail[na++] = f;
	if (!na)
		return 0;
	for (int i = na - 1; i > 0; i--) {
		int j = rnd(g, i + 1), t = avail[i];
		avail[i] = avail[j];
		avail[j] = t;
	}
	q->nf = 1 + rnd(g, na);
	for (int k = 0; k < q->nf; k++) {
		q->fields[k] = avail[k];
		used[root] |= 1u << avail[k];
	}
	return q->nf;
}

static void add_futures(gen_t *g, or_op_t *op)
{
	int k = rnd(g, 10), want = k < 6 ? 0 : k < 9 ? 1 : 2;
	for (int i = 0; i < want && op->nreq < OR_MAXREQ; i++) {
		int f = rnd_alive_fut(g);
		if (f < 0)
			return;
		or_req_t *q = &op->req[op->nreq++];
		memset(q, 0, sizeof *q);
		q->kind = RQ_FUTURE;
		q->obj = f;
		q->priv = TSR_READ;
	}
	/* futures anywhere among the requirements */
	for (int i = op->nreq - 1; i > 0; i--) {
		int j = rnd(g, i + 1);
		or_req_t t = op->req[i];
		op->req[i] = op->req[j];
		op->req[j] = t;
	}
}

static void set_result(gen_t *g, or_op_t *op, int is_index)
{
	op->ret_type = chance(g, 1, 2) ? TSR_NONE : rnd_type(g);
	op->fut = -1;
	op->redop = TSR_REDOP_NONE;
	if (op->ret_type == TSR_NONE || g->p->nfut >= OR_MAXFUT || chance(g, 1, 8))
		return; /* a returned value nobody asks for is dropped */
	if (is_index)
		op->redop = TSR_REDOP_ID(TSR_SUM.id + rnd(g, 4));
	op->ret_mode = op->redop.id == TSR_PROD.id;
	op->fut = g->p->nfut;
	g->p->fut_type[op->fut] = op->ret_type;
}

/* A region requirement of a classic launch: a live node (rnd_node, prefer_sub) and some of its
 * fields; 0 where none fits. Its privilege may write where may_write and the node is writable. */
static int region_req(gen_t *g, or_req_t *q, int prefer_sub, unsigned used[], int may_write)
{
	q->kind = RQ_REGION;
	q->obj = rnd_node(g, prefer_sub, OR_MAXDEPTH);
	if (q->obj < 0 || !pick_fields(g, g->p->node[q->obj].root, used, q))
		return 0;
	q->priv = rnd_priv(g, may_write && writable(g->p, q->obj));
	return 1;
}

/* What a classic launch draws last: its futures, its result (index: 1 for an index launch), its
 * argument, a delay and whether its float folds may show their order. */
static void classic_tail(gen_t *g, or_op_t *op, int index)
{
	add_futures(g, op);
	set_result(g, op, index);
	op->ival = rnd(g, 201) - 100;
	op->delay_us = chance(g, 1, 4) ? 1 + rnd(g, 300) : 0;
	op->fp_order = chance(g, 1, 2);
}

static int gen_launch(gen_t *g, or_op_t *op)
{
	unsigned used[OR_MAXROOT] = {0};
	op->kind = OP_LAUNCH;
	int k = rnd(g, 20), nreg = k < 2 ? 0 : k < 11 ? 1 : k < 17 ? 2 : 3;
	for (int i = 0; i < nreg; i++) {
		or_req_t *q = &op->req[op->nreq];
		memset(q, 0, sizeof *q);
		if (region_req(g, q, chance(g, 2, 3), used, 1))
			op->nreq++;
	}
	classic_tail(g, op, 0);
	return 1;
}

static int gen_index(gen_t *g, or_op_t *op)
{
	or_prog_t *p = g->p;
	unsigned used[OR_MAXROOT] = {0};
	op->kind = OP_INDEX;
	int main = chance(g, 9, 10) ? rnd_alive_part(g) : -1;
	if (main >= 0) {
		const or_part_t *pt = &p->part[main];
		op->domain = chance(g, 3, 10) ? rnd_subbox(g, pt->colors) : pt->colors;
		or_req_t *q = &op->req[op->nreq];
		memset(q, 0, sizeof *q);
		q->kind = RQ_PART;
		q->obj = main;
		if (pick_fields(g, p->node[pt->parent].root, used, q)) {
			q->priv = rnd_priv(g, pt->disjoint && writable(p, pt->parent));
			op->nreq++;
		}
	} else {
		int lo = rnd(g, 5) - 2;
		op->domain = tsr_box1(lo, lo + rnd(g, 6));
	}
	int extra = rnd(g, 3);
	for (int i = 0; i < extra; i++) {
		or_req_t *q = &op->req[op->nreq];
		memset(q, 0, sizeof *q);
		int cand[OR_MAXPART], nc = 0;
		for (int j = 0; j < p->npart; j++)
			if (g->sim->part_state[j] == 1 && p->part[j].colors.dim == op->domain.dim)
				cand[nc++] = j;
		if (nc && chance(g, 3, 5)) {
			q->kind = RQ_PART;
			q->obj = cand[rnd(g, nc)];
			const or_part_t *pt = &p->part[q->obj];
			if (!tsr_box_contains(pt->colors, op->domain) || chance(g, 3, 10)) {
				q->proj = 1;
				for (int d = 0; d < pt->colors.dim; d++)
					q->shift[d] = rnd(g, (int)(pt->colors.hi[d] -
								   pt->colors.lo[d] + 1));
			}
			q->priv = rnd_priv(g, pt->disjoint && !q->proj && writable(p, pt->parent));
			if (!pick_fields(g, p->node[pt->parent].root, used, q))
				continue;
		} else {
			if (!region_req(g, q, chance(g, 1, 2), used, 0))
				continue;
		}
		op->nreq++;
	}
	classic_tail(g, op, 1);
	return 1;
}

static int gen_copy(gen_t *g, or_op_t *op)
{
	or_prog_t *p = g->p;
	/* reservoir-sample one (source, destination, fields) among all valid copies */
	int seen = 0;
	for (int a = 0; a < p->nnode; a++) {
		if (!node_alive(g->sim, a))
			continue;
		for (int b = 0; b < p->nnode; b++) {
			if (!node_alive(g->sim, b))
				continue;
			const or_node_t *na = &p->node[a], *nb = &p->node[b];
			if (na->box.dim != nb->box.dim || !writable(p, b))
				continue;
			int same = 1;
			for (int d = 0; d < na->box.dim; d++)
				same &= na->box.hi[d] - na->box.lo[d] ==
					nb->box.hi[d] - nb->box.lo[d];
			if (!same)
				continue;
			for (int fa = 0; fa < p->root[na->root].nf; fa++)
				for (int fb = 0; fb < p->root[nb->root].nf; fb++) {
					if (p->root[na->root].type[fa] !=
					    p->root[nb->root].type[fb])
						continue;
					if (na->root == nb->root && fa == fb &&
					    (boxes_overlap(na->box, nb->box) ||
					     (or_avoid & OR_AVOID_SAME_FIELD_COPY)))
						continue;
					if (rnd(g, ++seen) == 0) {
						op->obj = a;
						op->obj2 = b;
						op->field = fa;
						op->field2 = fb;
					}
				}
		}
	}
	op->kind = OP_COPY;
	return seen > 0;
}

static int gen_op(gen_t *g, or_op_t *op)
{
	or_prog_t *p = g->p;
	memset(op, 0, sizeof *op);
	op->fut = -1;
	/* weights of the op kinds, in the enum's order */
	static const int w[OP_NKINDS] = {8, 2, 6, 4, 12, 20, 6, 4, 2, 4, 2, 1};
	int total = 0;
	for (int k = 0; k < OP_NKINDS; k++)
		total += w[k];
	int r = rnd(g, total), kind = 0;
	while (r >= w[kind])
		r -= w[kind++];
	switch (kind) {
	case OP_PART_CREATE:
		return gen_part_create(g, op);
	case OP_PART_DESTROY:
		op->kind = kind;
		op->obj = rnd_alive_part(g);
		return op->obj >= 0;
	case OP_FILL:
	case OP_MAP_READ:
	case OP_MAP_WRITE:
		op->kind = kind;
		op->obj = rnd_node(g, chance(g, 2, 3), OR_MAXDEPTH);
		if (op->obj < 0)
			return 0;
		op->field = rnd(g, p->root[p->node[op->obj].root].nf);
		op->ival = kind == OP_FILL ? rnd(g, 101) - 50 : rnd(g, 1000);
		op->priv = kind == OP_MAP_READ ? TSR_READ
			   : chance(g, 1, 2)   ? TSR_WRITE
					       : TSR_READ_WRITE;
		if (kind != OP_MAP_READ && !writable(p, op->obj))
			/* keep the random sequence the same */
			op->kind = OP_MAP_READ, op->priv = TSR_READ;
		return 1;
	case OP_COPY:
		return gen_copy(g, op);
	case OP_FENCE:
		op->kind = kind;
		return 1;
	case OP_LAUNCH:
		return gen_launch(g, op);
	case OP_INDEX:
		return gen_index(g, op);
	case OP_FUT_CREATE:
		if (p->nfut >= OR_MAXFUT)
			return 0;
		op->kind = kind;
		op->fut = p->nfut;
		p->fut_type[op->fut] = rnd_type(g);
		op->ival = rnd(g, 201) - 100;
		return 1;
	default:
		op->kind = kind;
		op->obj = rnd_alive_fut(g);
		return op->obj >= 0;
	}
}

/* Keep op as op number nop if the validator accepts it; a REDUCE that could overflow becomes a
 * READ, anything else refused counts as a generator bug. */
static void try_commit(gen_t *g, or_op_t *op, int npart, int nnode, int nfut)
{
	or_prog_t *p = g->p;
	int i = p->nop;
	char msg[256];
	if (op->kind == OP_FUT_CREATE || op->fut >= 0)
		p->nfut = op->fut + 1;
	p->op[i] = *op;
	p->op_id[i] = i;
	int ok = sim_step(g->sim, i, msg, sizeof msg) == 0;
	if (!ok && (op->kind == OP_LAUNCH || op->kind == OP_INDEX)) {
		for (int r = 0; r < op->nreq; r++)
			if (TSR_PRIV_IS_REDUCE(p->op[i].req[r].priv))
				p->op[i].req[r].priv = TSR_READ;
		ok = sim_step(g->sim, i, msg, sizeof msg) == 0;
	}
	if (ok) {
		p->nop++;
		return;
	}
	or_gen_dropped++;
	if (getenv("TSR_ORACLE_DEBUG"))
		fprintf(stderr, "oracle generator: seed %llu: dropped op: %s\n",
			(unsigned long long)p->seed, msg);
	p->npart = npart;
	p->nnode = nnode;
	p->nfut = nfut;
}

/* The original generator: everything at random. */
static void gen_classic(gen_t *gp)
{
	gen_t g = *gp;
	or_prog_t *p = g.p;
	int k = rnd(&g, 20);
	p->nroot = k < 9 ? 1 : k < 16 ? 2 : 3;
	for (int r = 0; r < p->nroot; r++) {
		or_root_t *rt = &p->root[r];
		if (r > 0 && chance(&g, 1, 3)) {
			/* same shape as an earlier region, elsewhere: copies between regions become
			 * possible */
			rt->bounds = p->root[rnd(&g, r)].bounds;
			int64_t sh = rnd(&g, 5) - 2;
			for (int d = 0; d < rt->bounds.dim; d++)
				rt->bounds.lo[d] += sh, rt->bounds.hi[d] += sh;
		} else {
			rt->bounds.dim = 1 + rnd(&g, 3);
			for (int d = 0; d < rt->bounds.dim; d++) {
				int64_t ext = 1 + rnd(&g, chance(&g, 1, 3) ? OR_MAXEXT : 6);
				rt->bounds.lo[d] = chance(&g, 1, 2) ? 0 : rnd(&g, 9) - 4;
				rt->bounds.hi[d] = rt->bounds.lo[d] + ext - 1;
			}
		}
		rt->nf = 1 + rnd(&g, OR_MAXF);
		for (int f = 0; f < rt->nf; f++)
			rt->type[f] = rnd_type(&g);
		or_node_t *nd = &p->node[p->nnode++];
		nd->root = r;
		nd->part = -1;
		nd->box = rt->bounds;
	}
	/* a few partitions up front so that most launches have something to go through */
	int nfirst = rnd(&g, 4);
	for (int i = 0; i < nfirst; i++) {
		or_op_t op;
		memset(&op, 0, sizeof op);
		op.fut = -1;
		int np = p->npart, nn = p->nnode, nf = p->nfut;
		if (gen_part_create(&g, &op))
			try_commit(&g, &op, np, nn, nf);
	}
	int target = 10 + rnd(&g, 31);
	for (int tries = 0; p->nop < target && p->nop < OR_MAXOP && tries < 400; tries++) {
		or_op_t op;
		int np = p->npart, nn = p->nnode, nf = p->nfut;
		if (gen_op(&g, &op))
			try_commit(&g, &op, np, nn, nf);
		else
			p->npart = np, p->nnode = nn, p->nfut = nf;
	}
	*gp = g;
}

/* ----------------------------------------------------------------- shapes
 * Families of programs that stress coherence by pieces: a read depends only on the earlier
 * writers of the pieces it overlaps, so the families switch partitions of one field at every
 * step, overlap pieces partially, nest them, and mix reads and writes of different partitions
 * in one launch. Every op still goes through the validator (try_commit). */
int or_shape = OR_SHAPE_MIX;

static const char *const shape_names[OR_NSHAPES] = {"mix",     "pieces", "classic", "alternate",
						    "overlap", "nested", "war",     "repeat"};

int or_parse_shape(const char *name, int *shape)
{
	for (int i = 0; i < OR_NSHAPES; i++)
		if (!strcmp(name, shape_names[i])) {
			*shape = i;
			return 0;
		}
	return -1;
}

const char *or_shape_str(int shape)
{
	return shape >= 0 && shape < OR_NSHAPES ? shape_names[shape] : "?";
}

/* Apart from the generator's stream, so that a program picked by MIX or PIECES is the program
 * its concrete shape makes from the same seed. PIECES takes the families in turn (seed modulo
 * 4), so that any four consecutive seeds have one of each; MIX draws classic or not from a
 * hash of the seed. */
int or_shape_of(uint64_t seed, int shape)
{
	if (shape == OR_SHAPE_MIX) {
		uint64_t h = (seed + 0x51ed27) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 32;
		shape = h & 1 ? OR_SHAPE_CLASSIC : OR_SHAPE_PIECES;
	}
	if (shape == OR_SHAPE_PIECES)
		return OR_SHAPE_ALTERNATE + (int)(seed % 4);
	return shape;
}

/* A root region cut into several tiles per dimension: 1-D (8 to 12 points), 2-D (4 to 10 per
 * dimension) or, rarely, 3-D (3 to 5); at least min_nf fields. */
static int shape_root(gen_t *g, int min_nf, int max_dim)
{
	or_prog_t *p = g->p;
	int r = p->nroot++;
	or_root_t *rt = &p->root[r];
	int k = rnd(g, 12);
	rt->bounds.dim = k < 4 ? 1 : k < 11 || max_dim < 3 ? 2 : 3;
	if (rt->bounds.dim > max_dim)
		rt->bounds.dim = max_dim;
	for (int d = 0; d < rt->bounds.dim; d++) {
		int64_t ext = rt->bounds.dim == 1   ? 8 + rnd(g, 5)
			      : rt->bounds.dim == 2 ? 4 + rnd(g, 7)
						    : 3 + rnd(g, 3);
		rt->bounds.lo[d] = chance(g, 1, 2) ? 0 : rnd(g, 9) - 4;
		rt->bounds.hi[d] = rt->bounds.lo[d] + ext - 1;
	}
	rt->nf = min_nf + rnd(g, OR_MAXF - min_nf + 1);
	for (int f = 0; f < rt->nf; f++)
		rt->type[f] = rnd_type(g);
	or_node_t *nd = &p->node[p->nnode++];
	nd->root = r;
	nd->part = -1;
	nd->box = rt->bounds;
	return r;
}

static int64_t box_ext(tsr_box_t b, int d)
{
	return b.hi[d] - b.lo[d] + 1;
}

/* Colors with k[d] tiles along dimension d, each no more than the domain has points. */
static tsr_box_t colors_of(tsr_box_t domain, const int k[3])
{
	tsr_box_t c = {domain.dim, {0, 0, 0}, {0, 0, 0}};
	for (int d = 0; d < domain.dim; d++) {
		int64_t n = k[d] < 1 ? 1 : k[d];
		c.hi[d] = (n < box_ext(domain, d) ? n : box_ext(domain, d)) - 1;
	}
	return c;
}

/* Random tile counts for domain: 1 to max_k along each dimension, at least two tiles in all
 * when the domain has two points, at most max_colors tiles. */
static tsr_box_t shape_colors(gen_t *g, tsr_box_t domain, int max_k, int max_colors)
{
	int k[3] = {1, 1, 1};
	int64_t total = 1;
	for (int d = 0; d < domain.dim; d++) {
		k[d] = 1 + rnd(g, max_k);
		while (total * k[d] > max_colors && k[d] > 1)
			k[d]--;
		total *= k[d];
	}
	if (total == 1) {
		int d = rnd(g, domain.dim);
		k[d] = 2;
	}
	return colors_of(domain, k);
}

/* Commit the creation of a partition of parent whose subregions are boxes (one per color);
 * -1 when there is no room left or the validator refuses it. */
static int shape_part(gen_t *g, int parent, int kind, tsr_box_t colors, tsr_box_t domain,
		      const int64_t halo[3], const tsr_box_t *boxes)
{
	or_prog_t *p = g->p;
	int n = (int)tsr_box_volume(colors);
	if (p->npart >= OR_MAXPART || n < 1 || n > OR_MAXCOLORS || p->nop >= OR_MAXOP)
		return -1;
	int np = p->npart, nn = p->nnode, nf = p->nfut, nop = p->nop;
	or_part_t *pt = &p->part[np];
	memset(pt, 0, sizeof *pt);
	pt->parent = parent;
	pt->kind = kind;
	pt->colors = colors;
	pt->domain = domain;
	if (halo)
		memcpy(pt->halo, halo, sizeof pt->halo);
	if (add_subs(g, np, boxes, n))
		return -1;
	p->npart++;
	or_op_t op;
	memset(&op, 0, sizeof op);
	op.fut = -1;
	op.kind = OP_PART_CREATE;
	op.obj = np;
	try_commit(g, &op, np, nn, nf);
	return p->nop > nop ? np : -1;
}

/* Tiles of domain (inside parent) over colors, grown by halo (NULL: plain tiles of the parent). */
static int shape_tiles(gen_t *g, int parent, tsr_box_t domain, tsr_box_t colors,
		       const int64_t *halo)
{
	static const int64_t none[3] = {0, 0, 0};
	tsr_box_t boxes[OR_MAXCOLORS];
	if (tsr_box_volume(colors) > OR_MAXCOLORS)
		return -1;
	tile_boxes(domain, colors, halo ? halo : none, g->p->node[parent].box, boxes);
	return shape_part(g, parent, halo ? PK_HALO : PK_TILES, colors, domain, halo ? halo : none,
			  boxes);
}

/* Halo tiles of the whole parent with a halo of 1 to max_w points along every dimension. */
static int shape_halo(gen_t *g, int parent, tsr_box_t colors, int max_w)
{
	int64_t halo[3] = {0, 0, 0};
	tsr_box_t pb = g->p->node[parent].box;
	for (int d = 0; d < pb.dim; d++)
		halo[d] = 1 + rnd(g, max_w);
	return shape_tiles(g, parent, pb, colors, halo);
}

/* Where tile i of k starts along a dimension [lo, hi] (tessera.h: the first tiles get the
 * remainder); start[k] is hi + 1. */
static void tile_starts(int64_t lo, int64_t hi, int k, int64_t *start)
{
	int64_t len = hi - lo + 1, q = len / k, rem = len % k;
	for (int i = 0; i <= k; i++)
		start[i] = lo + i * q + (i < rem ? i : rem);
}

/* Boxes of a grid whose cuts along dimension d are start[d][0..k[d]] (product, dimension 0
 * fastest). */
static int grid_boxes(tsr_box_t b, const int k[3], int64_t start[3][OR_MAXEXT + 1], tsr_box_t *out)
{
	int n = 0;
	int kk[3] = {1, 1, 1};
	for (int d = 0; d < b.dim; d++)
		kk[d] = k[d];
	for (int i2 = 0; i2 < kk[2]; i2++)
		for (int i1 = 0; i1 < kk[1]; i1++)
			for (int i0 = 0; i0 < kk[0]; i0++) {
				int idx[3] = {i0, i1, i2};
				tsr_box_t o = b;
				for (int d = 0; d < b.dim; d++) {
					o.lo[d] = start[d][idx[d]];
					o.hi[d] = start[d][idx[d] + 1] - 1;
				}
				out[n++] = o;
			}
	return n;
}

/* A disjoint box list over all of parent whose cuts are random (uneven tiles); with shift_of
 * >= 0, the cuts of that tile partition each moved by one point where the pieces on both sides
 * keep a point, so that its boundaries do not align with that partition's. */
static int shape_cuts(gen_t *g, int parent, int shift_of)
{
	or_prog_t *p = g->p;
	tsr_box_t pb = p->node[parent].box;
	int k[3] = {1, 1, 1};
	int64_t start[3][OR_MAXEXT + 1];
	int total = 1;
	for (int d = 0; d < pb.dim; d++) {
		int64_t ext = box_ext(pb, d);
		if (shift_of >= 0) {
			const or_part_t *t = &p->part[shift_of];
			k[d] = (int)box_ext(t->colors, d);
			tile_starts(pb.lo[d], pb.hi[d], k[d], start[d]);
			/* move each inner cut by one, keeping every piece at least one point */
			for (int i = 1; i < k[d]; i++) {
				int64_t c = start[d][i] + (chance(g, 1, 2) ? 1 : -1);
				if (c > start[d][i - 1] && c < start[d][i + 1])
					start[d][i] = c;
			}
		} else {
			k[d] = 1 + rnd(g, ext < 4 ? (int)ext : 4);
			while (total * k[d] > 9 && k[d] > 1)
				k[d]--;
			/* k - 1 distinct cuts among the ext - 1 inner positions, in order */
			start[d][0] = pb.lo[d];
			int64_t placed = 0;
			for (int64_t pos = 1; pos < ext && placed < k[d] - 1; pos++)
				if (rnd(g, (int)(ext - pos)) < k[d] - 1 - placed)
					start[d][++placed] = pb.lo[d] + pos;
			start[d][k[d]] = pb.hi[d] + 1;
		}
		total *= k[d];
	}
	tsr_box_t boxes[OR_MAXCOLORS];
	if (total > OR_MAXCOLORS)
		return -1;
	int n = grid_boxes(pb, k, start, boxes);
	return shape_part(g, parent, PK_BOXES, tsr_box1(0, n - 1), pb, NULL, boxes);
}

/* A box list of 2 to 5 random boxes of parent, two of them overlapping (aliased). */
static int shape_rnd_boxes(gen_t *g, int parent)
{
	tsr_box_t pb = g->p->node[parent].box, boxes[6];
	int n = 2 + rnd(g, 4);
	for (int i = 0; i < n; i++)
		boxes[i] = rnd_subbox(g, pb);
	/* the last box overlaps the first: grow the first by a point where there is room */
	boxes[n - 1] = boxes[0];
	int d = rnd(g, pb.dim);
	if (boxes[0].hi[d] < pb.hi[d])
		boxes[n - 1].hi[d]++;
	else if (boxes[0].lo[d] > pb.lo[d])
		boxes[n - 1].lo[d]--;
	return shape_part(g, parent, PK_BOXES, tsr_box1(0, n - 1), pb, NULL, boxes);
}

static int alive_part(const gen_t *g, int pi)
{
	return pi >= 0 && pi < g->p->npart && g->sim->part_state[pi] == 1;
}

static int rnd_sub(gen_t *g, int pi)
{
	const or_part_t *pt = &g->p->part[pi];
	return pt->first + rnd(g, pt->nsub);
}

static tsr_privilege_t write_priv(gen_t *g)
{
	int r = rnd(g, 10);
	return r < 4 ? TSR_WRITE : r < 8 ? TSR_READ_WRITE : rnd_reduce(g);
}

static tsr_privilege_t read_priv(gen_t *g)
{
	return chance(g, 4, 5) ? TSR_READ : rnd_reduce(g);
}

static int is_write(tsr_privilege_t priv)
{
	return priv == TSR_WRITE || priv == TSR_READ_WRITE;
}

/* Fields of one requirement: field alone when >= 0 and still free in this launch, otherwise a
 * random subset of the free ones. 0 when none is free. */
static int req_fields(gen_t *g, int root, int field, unsigned used[OR_MAXROOT], or_req_t *q)
{
	if (field >= 0 && field < g->p->root[root].nf && !(used[root] & (1u << field))) {
		q->nf = 1;
		q->fields[0] = field;
		used[root] |= 1u << field;
		return 1;
	}
	return pick_fields(g, root, used, q);
}

/* One requirement of op on partition pi (RQ_PART) or node n (RQ_REGION); a write the rules do
 * not allow there becomes a READ. */
static void add_req(gen_t *g, or_op_t *op, int kind, int obj, tsr_privilege_t priv, int field,
		    unsigned used[OR_MAXROOT])
{
	or_prog_t *p = g->p;
	if (op->nreq >= OR_MAXREQ)
		return;
	or_req_t *q = &op->req[op->nreq];
	memset(q, 0, sizeof *q);
	q->kind = kind;
	q->obj = obj;
	int node = kind == RQ_PART ? p->part[obj].parent : obj;
	if (kind == RQ_PART) {
		const or_part_t *pt = &p->part[obj];
		if (!tsr_box_contains(pt->colors, op->domain)) {
			/* another color space of the same dimension: a cyclic shift */
			q->proj = 1;
			for (int d = 0; d < pt->colors.dim; d++)
				q->shift[d] = rnd(g, (int)box_ext(pt->colors, d));
		}
		if (is_write(priv) && (!pt->disjoint || q->proj || !writable(p, node)))
			priv = TSR_READ;
	} else if (is_write(priv) && (op->kind == OP_INDEX || !writable(p, node))) {
		priv = op->kind == OP_INDEX ? read_priv(g) : TSR_READ;
	}
	q->priv = priv;
	if (req_fields(g, p->node[node].root, field, used, q))
		op->nreq++;
}

static void begin_launch(or_op_t *op, int kind)
{
	memset(op, 0, sizeof *op);
	op->kind = kind;
	op->fut = -1;
}

/* Futures, result, argument and timing as the classic launches have them; then commit. */
static void finish_launch(gen_t *g, or_op_t *op, int fp_order)
{
	add_futures(g, op);
	set_result(g, op, op->kind == OP_INDEX);
	op->ival = rnd(g, 201) - 100;
	/* shorter than classic's: more points per launch */
	op->delay_us = chance(g, 1, 6) ? 1 + rnd(g, 120) : 0;
	op->fp_order = fp_order >= 0 ? fp_order : chance(g, 1, 2);
	try_commit(g, op, g->p->npart, g->p->nnode, g->p->nfut);
}

/* An index launch over the colors of pi (or part of them) that uses pi with priv on field
 * (-1: some fields) and, when pi2 >= 0, pi2 with priv2 on field2 (another field of the same
 * root, or one of another root). */
static void index_through(gen_t *g, int pi, tsr_privilege_t priv, int field, int pi2,
			  tsr_privilege_t priv2, int field2, int fp_order)
{
	unsigned used[OR_MAXROOT] = {0};
	or_op_t op;
	begin_launch(&op, OP_INDEX);
	const or_part_t *pt = &g->p->part[pi];
	op.domain = chance(g, 1, 5) ? rnd_subbox(g, pt->colors) : pt->colors;
	add_req(g, &op, RQ_PART, pi, priv, field, used);
	if (pi2 >= 0 && g->p->part[pi2].colors.dim == op.domain.dim)
		add_req(g, &op, RQ_PART, pi2, priv2, field2, used);
	if (op.nreq == 2 && chance(g, 1, 2)) { /* the write first, sometimes */
		or_req_t t = op.req[0];
		op.req[0] = op.req[1];
		op.req[1] = t;
	}
	finish_launch(g, &op, fp_order);
}

/* A single launch on node n with priv on field and, when n2 >= 0, on n2 with priv2 on field2. */
static void single_on(gen_t *g, int n, tsr_privilege_t priv, int field, int n2,
		      tsr_privilege_t priv2, int field2, int fp_order)
{
	unsigned used[OR_MAXROOT] = {0};
	or_op_t op;
	begin_launch(&op, OP_LAUNCH);
	add_req(g, &op, RQ_REGION, n, priv, field, used);
	if (n2 >= 0)
		add_req(g, &op, RQ_REGION, n2, priv2, field2, used);
	finish_launch(g, &op, fp_order);
}

/* Host map of node n (a write when asked and allowed), a fill, or a fence. */
static void host_op(gen_t *g, int kind, int n)
{
	or_prog_t *p = g->p;
	or_op_t op;
	memset(&op, 0, sizeof op);
	op.fut = -1;
	op.kind = kind;
	op.obj = n;
	op.field = rnd(g, p->root[p->node[n].root].nf);
	op.ival = kind == OP_FILL ? rnd(g, 101) - 50 : rnd(g, 1000);
	op.priv = kind == OP_MAP_READ ? TSR_READ : chance(g, 1, 2) ? TSR_WRITE : TSR_READ_WRITE;
	if (kind != OP_MAP_READ && kind != OP_FENCE && !writable(p, n)) {
		op.kind = OP_MAP_READ;
		op.priv = TSR_READ;
	}
	try_commit(g, &op, p->npart, p->nnode, p->nfut);
}

/* One op of the classic mix that neither creates nor destroys a partition (the family keeps its
 * own): variety between the family's steps. */
static void classic_op(gen_t *g)
{
	or_prog_t *p = g->p;
	for (int tries = 0; tries < 8; tries++) {
		int np = p->npart, nn = p->nnode, nf = p->nfut;
		or_op_t op;
		int made = gen_op(g, &op);
		if (made && (op.kind == OP_PART_CREATE || op.kind == OP_PART_DESTROY)) {
			p->npart = np, p->nnode = nn, p->nfut = nf;
			continue;
		}
		if (made)
			try_commit(g, &op, np, nn, nf);
		else
			p->npart = np, p->nnode = nn, p->nfut = nf;
		return;
	}
}

static void destroy_op(gen_t *g, int pi)
{
	or_op_t op;
	memset(&op, 0, sizeof op);
	op.fut = -1;
	op.kind = OP_PART_DESTROY;
	op.obj = pi;
	try_commit(g, &op, g->p->npart, g->p->nnode, g->p->nfut);
}

/* An alive partition other than avoid, preferring the disjoint ones when want_disjoint is 1
 * (any when it is -1); -1 if there is none. */
static int other_part(gen_t *g, int avoid, int want_disjoint)
{
	int cand[OR_MAXPART], n = 0, any[OR_MAXPART], na = 0;
	for (int i = 0; i < g->p->npart; i++) {
		if (!alive_part(g, i) || i == avoid)
			continue;
		any[na++] = i;
		if (want_disjoint < 0 || g->p->part[i].disjoint == want_disjoint)
			cand[n++] = i;
	}
	if (n)
		return cand[rnd(g, n)];
	return na ? any[rnd(g, na)] : -1;
}

/* Step of a family program: the op count it aims at, with a few tries to spare. */
static int shape_target(gen_t *g)
{
	return 26 + rnd(g, 15);
}

/* ---- shape "alternate": many partitions of one field, a different one at every step */
static void alternate_part(gen_t *g, int root)
{
	tsr_box_t rb = g->p->node[root].box;
	int k[3] = {1, 1, 1}, d = rnd(g, rb.dim);
	switch (rnd(g, 6)) {
	case 0: /* tiles along one dimension only (x, y or z) */
		k[d] = 2 + rnd(g, 3);
		shape_tiles(g, root, rb, colors_of(rb, k), NULL);
		return;
	case 1: /* tiles along every dimension */
		shape_tiles(g, root, rb, shape_colors(g, rb, 3, 9), NULL);
		return;
	case 2:
	case 3: /* halo tiles of width 1 or 2 */
		shape_halo(g, root, shape_colors(g, rb, 3, 6), 2);
		return;
	case 4: /* uneven disjoint cuts */
		shape_cuts(g, root, -1);
		return;
	default:
		shape_rnd_boxes(g, root);
		return;
	}
}

static void gen_alternate(gen_t *g)
{
	or_prog_t *p = g->p;
	int root = shape_root(g, 1, 3);
	int want = 5 + rnd(g, 4);
	for (int i = 0; i < want; i++)
		alternate_part(g, root);
	int target = shape_target(g), last = -1;
	for (int tries = 0; p->nop < target && tries < 200; tries++) {
		int pi = other_part(g, last, chance(g, 1, 2));
		if (pi < 0) {
			alternate_part(g, root);
			continue;
		}
		const or_part_t *pt = &p->part[pi];
		int k = rnd(g, 100);
		if (k < 40) {
			/* write through a disjoint one, read (or reduce) through an aliased one;
			 * now and then a second partition of the same field's root on other
			 * fields */
			int pi2 = chance(g, 1, 3) ? other_part(g, pi, -1) : -1;
			index_through(g, pi, pt->disjoint ? write_priv(g) : read_priv(g), -1, pi2,
				      read_priv(g), -1, -1);
		} else if (k < 62) {
			tsr_privilege_t priv = chance(g, 1, 2) ? write_priv(g) : read_priv(g);
			single_on(g, rnd_sub(g, pi), priv, -1, -1, TSR_READ, -1, -1);
		} else if (k < 72) {
			host_op(g, OP_MAP_READ, rnd_sub(g, pi));
		} else if (k < 79) {
			host_op(g, OP_MAP_WRITE, rnd_sub(g, pi));
		} else if (k < 85) {
			host_op(g, OP_FILL, chance(g, 3, 4) ? rnd_sub(g, pi) : root);
		} else if (k < 89 && p->npart < OR_MAXPART) {
			destroy_op(g, pi);
			alternate_part(g, root);
		} else {
			classic_op(g);
		}
		last = pi;
	}
}

/* ---- shape "overlap": aliased box lists that straddle tiles, WAR through misaligned tiles */

/* An interval along dimension d of tile partition t's parent that covers span tiles (part
 * of the first and of the last), starting in tile i0. */
static void straddle(gen_t *g, const int64_t *start, int i0, int span, int64_t *lo, int64_t *hi)
{
	int64_t a0 = start[i0], a1 = start[i0 + 1] - 1;
	int64_t b0 = start[i0 + span - 1], b1 = start[i0 + span] - 1;
	*lo = a0 + rnd(g, (int)(a1 - a0 + 1));
	*hi = b0 + rnd(g, (int)(b1 - b0 + 1));
	if (*hi < *lo) { /* span 1: any interval inside the tile */
		int64_t t = *lo;
		*lo = *hi;
		*hi = t;
	}
}

/* The cuts along dimension d of a grid partition t (tiles, or a box list of shape_cuts): where
 * each of its k pieces starts, and start[k] past the end. Returns k. */
static int grid_starts(const or_prog_t *p, int t, int d, int64_t *start)
{
	const or_part_t *pt = &p->part[t];
	int k = 0;
	for (int i = 0; i < pt->nsub; i++) {
		int64_t lo = p->node[pt->first + i].box.lo[d];
		int j = k;
		while (j > 0 && start[j - 1] > lo)
			j--;
		if (j > 0 && start[j - 1] == lo)
			continue;
		memmove(start + j + 1, start + j, (size_t)(k - j) * sizeof *start);
		start[j] = lo;
		k++;
	}
	start[k] = p->node[pt->parent].box.hi[d] + 1;
	return k;
}

/* Boxes over 2 to 4 tiles of grid partition t, or one tile of t with a sliver of its neighbour. */
static int overlap_boxes(gen_t *g, int t, tsr_box_t *boxes)
{
	or_prog_t *p = g->p;
	const or_part_t *pt = &p->part[t];
	tsr_box_t pb = p->node[pt->parent].box;
	int k[3] = {1, 1, 1};
	int64_t start[3][OR_MAXEXT + 1];
	for (int d = 0; d < pb.dim; d++)
		k[d] = grid_starts(p, t, d, start[d]);
	int n = 3 + rnd(g, 4);
	for (int i = 0; i < n; i++) {
		tsr_box_t b = pb;
		if (chance(g, 1, 3)) {
			/* a tile plus a sliver: one or two points more on one side */
			b = p->node[rnd_sub(g, t)].box;
			int d = rnd(g, pb.dim);
			int64_t w = 1 + rnd(g, 2);
			if (b.hi[d] + w <= pb.hi[d])
				b.hi[d] += w;
			else if (b.lo[d] - w >= pb.lo[d])
				b.lo[d] -= w;
		} else {
			/* spans along each dimension whose product is 2 to 4 tiles */
			int span[3] = {1, 1, 1}, tiles = 1;
			for (int tries = 0; tries < 8 && tiles < 2; tries++) {
				tiles = 1;
				for (int d = 0; d < pb.dim; d++) {
					span[d] = 1 + rnd(g, k[d] < 3 ? k[d] : 3);
					while (tiles * span[d] > 4)
						span[d]--;
					tiles *= span[d];
				}
			}
			for (int d = 0; d < pb.dim; d++)
				straddle(g, start[d], rnd(g, k[d] - span[d] + 1), span[d], &b.lo[d],
					 &b.hi[d]);
		}
		boxes[i] = b;
	}
	/* a second copy of a box: the list is aliased even when the rest is not */
	boxes[n] = boxes[0];
	if (boxes[n].lo[0] > pb.lo[0])
		boxes[n].lo[0]--;
	return n + 1;
}

static void gen_overlap(gen_t *g)
{
	or_prog_t *p = g->p;
	int root = shape_root(g, 1, 2);
	tsr_box_t rb = p->node[root].box;
	int tiles = shape_tiles(g, root, rb, shape_colors(g, rb, 3, 9), NULL);
	if (tiles < 0)
		return;
	/* tiles whose boundaries do not align with the first ones: shifted cuts or other counts */
	int k[3] = {1, 1, 1};
	for (int d = 0; d < rb.dim; d++)
		k[d] = (int)box_ext(p->part[tiles].colors, d) + 1;
	int mis = chance(g, 1, 2) ? shape_cuts(g, root, tiles)
				  : shape_tiles(g, root, rb, colors_of(rb, k), NULL);
	tsr_box_t boxes[8];
	int nb = overlap_boxes(g, tiles, boxes);
	int alias = shape_part(g, root, PK_BOXES, tsr_box1(0, nb - 1), rb, NULL, boxes);
	nb = overlap_boxes(g, chance(g, 1, 2) && mis >= 0 ? mis : tiles, boxes);
	int alias2 = chance(g, 1, 2)
			     ? shape_part(g, root, PK_BOXES, tsr_box1(0, nb - 1), rb, NULL, boxes)
			     : -1;
	if (alias < 0 || mis < 0)
		return;
	int target = shape_target(g);
	for (int step = 0, tries = 0; p->nop < target && tries < 200; tries++, step++) {
		int writer = step % 4 == 0 ? tiles : mis,
		    reader = alias2 >= 0 && chance(g, 1, 3) ? alias2 : alias;
		int r = rnd(g, 100);
		if (step % 2 == 0) {
			/* write through tiles (the aligned or the misaligned ones) */
			if (r < 60)
				index_through(g, writer, write_priv(g), -1, -1, TSR_READ, -1, -1);
			else if (r < 85)
				single_on(g, rnd_sub(g, writer), write_priv(g), -1, -1, TSR_READ,
					  -1, -1);
			else
				host_op(g, chance(g, 1, 2) ? OP_MAP_WRITE : OP_FILL,
					rnd_sub(g, writer));
		} else {
			/* read through the overlapping boxes */
			if (r < 50)
				index_through(g, reader, read_priv(g), -1, -1, TSR_READ, -1, -1);
			else if (r < 70)
				single_on(g, rnd_sub(g, reader), TSR_READ, -1,
					  chance(g, 1, 2) ? rnd_sub(g, writer) : -1, write_priv(g),
					  -1, -1);
			else if (r < 85)
				host_op(g, OP_MAP_READ, rnd_sub(g, reader));
			else if (r < 92)
				/* a write into a box */
				single_on(g, rnd_sub(g, reader), write_priv(g), -1, -1, TSR_READ,
					  -1, -1);
			else
				classic_op(g);
		}
	}
}

/* ---- shape "nested": tiles and halos of tiles, tiles of a halo subregion */

/* The largest subregion of pi (ties: the first). */
static int largest_sub(const or_prog_t *p, int pi)
{
	const or_part_t *pt = &p->part[pi];
	int best = pt->first;
	for (int i = 1; i < pt->nsub; i++)
		if (tsr_box_volume(p->node[pt->first + i].box) > tsr_box_volume(p->node[best].box))
			best = pt->first + i;
	return best;
}

/* Nested partitions: index 0 tiles of the root, then what could be made below. */
typedef struct {
	int root, tiles, tile, sub_tiles, sub_halo, deep, halo, halo_sub, halo_tiles, sibling;
} nest_t;

static int nested_tiles_of(gen_t *g, int n)
{
	tsr_box_t b = g->p->node[n].box;
	return tsr_box_volume(b) >= 2 ? shape_tiles(g, n, b, shape_colors(g, b, 3, 6), NULL) : -1;
}

static void build_nest(gen_t *g, nest_t *s)
{
	or_prog_t *p = g->p;
	tsr_box_t rb = p->node[s->root].box;
	s->tiles = shape_tiles(g, s->root, rb, shape_colors(g, rb, 3, 6), NULL);
	s->tile = s->tiles >= 0
			  ? (chance(g, 1, 2) ? largest_sub(p, s->tiles) : rnd_sub(g, s->tiles))
			  : -1;
	s->sub_tiles = s->tile >= 0 ? nested_tiles_of(g, s->tile) : -1;
	tsr_box_t tb = s->tile >= 0 ? p->node[s->tile].box : rb;
	s->sub_halo = s->tile >= 0 && tsr_box_volume(tb) >= 2
			      ? shape_halo(g, s->tile, shape_colors(g, tb, 3, 6), 1)
			      : -1;
	s->deep = s->sub_tiles >= 0 ? nested_tiles_of(g, largest_sub(p, s->sub_tiles)) : -1;
	s->halo = shape_halo(g, s->root, shape_colors(g, rb, 3, 6), 2);
	s->halo_sub = s->halo >= 0 ? rnd_sub(g, s->halo) : -1;
	s->halo_tiles = s->halo_sub >= 0 ? nested_tiles_of(g, s->halo_sub) : -1;
	/* a sibling of the root's tiles or of the tile's tiles: same parent, other counts */
	int parent = s->tile >= 0 && chance(g, 1, 2) ? s->tile : s->root;
	s->sibling = nested_tiles_of(g, parent);
}

/* One of the partitions of s that is alive, at random among the given ones. */
static int pick_of(gen_t *g, const int *cand, int n)
{
	int ok[8], m = 0;
	for (int i = 0; i < n; i++)
		if (alive_part(g, cand[i]))
			ok[m++] = cand[i];
	return m ? ok[rnd(g, m)] : -1;
}

static void gen_nested(gen_t *g)
{
	or_prog_t *p = g->p;
	nest_t s;
	s.root = shape_root(g, 1, 2);
	build_nest(g, &s);
	const int nested[] = {s.sub_tiles, s.sub_halo, s.deep, s.halo_tiles};
	const int writers[] = {s.tiles, s.sibling, s.sub_tiles, s.deep};
	const int reducers[] = {s.tiles, s.sub_tiles, s.deep, s.sub_halo, s.halo};
	int target = shape_target(g);
	for (int tries = 0; p->nop < target && tries < 200; tries++) {
		int k = rnd(g, 100);
		if (k < 28) {
			/* read the nested ones: through a partition, one subregion, or on the
			 * host */
			int pi = pick_of(g, nested, 4);
			if (pi < 0)
				pi = s.tiles;
			int j = rnd(g, 3);
			if (j == 0)
				index_through(g, pi, TSR_READ, -1, -1, TSR_READ, -1, -1);
			else if (j == 1)
				single_on(g, rnd_sub(g, pi), TSR_READ, -1, -1, TSR_READ, -1, -1);
			else
				host_op(g, OP_MAP_READ, rnd_sub(g, pi));
		} else if (k < 48) {
			/* write the parent, the tile, or through a sibling partition */
			int j = rnd(g, 4);
			int n = s.tile >= 0 && chance(g, 1, 2) ? s.tile : s.root;
			if (j == 0)
				host_op(g, OP_FILL, n);
			else if (j == 1)
				single_on(g, n, write_priv(g), -1, -1, TSR_READ, -1, -1);
			else if (j == 2)
				host_op(g, OP_MAP_WRITE, n);
			else if (alive_part(g, s.sibling))
				index_through(g, s.sibling, write_priv(g), -1, -1, TSR_READ, -1,
					      -1);
		} else if (k < 63) {
			int pi = pick_of(g, writers, 4);
			if (pi >= 0)
				index_through(g, pi, write_priv(g), -1, pick_of(g, nested, 4),
					      TSR_READ, -1, -1);
		} else if (k < 88) {
			/* ordered reductions into tiles and halos, interleaved */
			int pi = pick_of(g, reducers, 5);
			if (pi >= 0 && chance(g, 2, 3))
				index_through(g, pi, rnd_reduce(g), -1, -1, TSR_READ, -1, 1);
			else if (pi >= 0)
				single_on(g, rnd_sub(g, pi), rnd_reduce(g), -1, -1, TSR_READ, -1,
					  1);
		} else {
			classic_op(g);
		}
	}
}

/* ---- shape "war": one launch reads a field through halos and writes another through tiles */
static void gen_war(gen_t *g)
{
	or_prog_t *p = g->p;
	int root = shape_root(g, 2, 2);
	tsr_box_t rb = p->node[root].box;
	tsr_box_t colors = shape_colors(g, rb, 3, 9);
	int tiles = shape_tiles(g, root, rb, colors, NULL);
	int halo = shape_halo(g, root, colors, 2);
	int halo2 = chance(g, 1, 2) ? shape_halo(g, root, colors, 1) : shape_rnd_boxes(g, root);
	int other = shape_tiles(g, root, rb, shape_colors(g, rb, 3, 9), NULL);
	if (tiles < 0 || halo < 0)
		return;
	int nf = p->root[root].nf;
	int target = shape_target(g);
	for (int step = 0, tries = 0; p->nop < target && tries < 200; tries++, step++) {
		/* the field read now is written by the next launch: WAR across launches as well */
		int fr = step % nf, fw = (step + 1) % nf;
		int reader = halo2 >= 0 && chance(g, 1, 3) ? halo2 : halo;
		int k = rnd(g, 100);
		if (k < 50) {
			index_through(g, reader, TSR_READ, fr, tiles, write_priv(g), fw, -1);
		} else if (k < 60 && other >= 0) {
			/* read through tiles of other counts (shifted projection) while writing the
			 * tiles */
			index_through(g, tiles, write_priv(g), fw, other, read_priv(g), fr, -1);
		} else if (k < 75) {
			single_on(g, rnd_sub(g, reader), TSR_READ, fr, rnd_sub(g, tiles),
				  write_priv(g), fw, -1);
		} else if (k < 83) {
			host_op(g, OP_MAP_READ, rnd_sub(g, chance(g, 1, 2) ? reader : tiles));
		} else if (k < 88) {
			host_op(g, chance(g, 1, 2) ? OP_MAP_WRITE : OP_FILL, rnd_sub(g, tiles));
		} else {
			classic_op(g);
		}
	}
}

/* ---- shape "repeat": loops. The start of a program of another shape sets the scene (roots,
 * partitions, their data); then a block of 2 to 6 launches, copies, fills, future waits and
 * destroys repeats 6 to 14 times: the same ops each time but for the launches' arguments (as a
 * loop's step number) and the futures the block makes (new ones each time, renamed). Half of the
 * programs open a trace around every repetition (tsr_trace_begin / tsr_trace_end), the others
 * leave the repeats to TSR_REPLAY=auto. A quarter of the repetitions from the third on are
 * perturbed: an extra op in the middle (a launch, fill, copy, fence or host map), an op dropped,
 * a host map of data the block uses, or a partition the block uses destroyed and made again (a
 * new partition of the same shape, which the later repetitions use). A replay must give what the
 * interpreter gives whatever the perturbation. */
#define REPEAT_MAX_BLOCK 12

typedef struct {
	or_op_t tmpl[REPEAT_MAX_BLOCK]; /* the block, as its first repetition committed it */
	int n;
	int trace_id;                 /* -1: no trace calls */
	int fut_of[REPEAT_MAX_BLOCK]; /* the future tmpl[j] made in this repetition, or -1 */
} repeat_t;

/* Cut the other shape's program to its first c ops: the objects made after them are forgotten
 * (indices are given in the order objects are made), and the validator's state is rebuilt. */
static void repeat_cut(gen_t *g, int c)
{
	or_prog_t *p = g->p;
	int npart = 0, nnode = p->nroot, nfut = 0;
	for (int i = 0; i < c; i++) {
		const or_op_t *op = &p->op[i];
		if (op->kind == OP_PART_CREATE) {
			const or_part_t *pt = &p->part[op->obj];
			npart = op->obj + 1 > npart ? op->obj + 1 : npart;
			nnode = pt->first + pt->nsub > nnode ? pt->first + pt->nsub : nnode;
		}
		if (op->fut >= 0 && op->fut + 1 > nfut)
			nfut = op->fut + 1;
	}
	p->nop = c;
	p->npart = npart;
	p->nnode = nnode;
	p->nfut = nfut;
	char msg[256];
	sim_init(g->sim, p);
	for (int i = 0; i < c; i++)
		if (sim_step(g->sim, i, msg, sizeof msg))
			abort(); /* a prefix of a valid program is valid */
}

static void trace_op(gen_t *g, int kind, int id)
{
	or_op_t op;
	memset(&op, 0, sizeof op);
	op.fut = -1;
	op.kind = kind;
	op.obj = id;
	try_commit(g, &op, g->p->npart, g->p->nnode, g->p->nfut);
}

/* Commit op; whether the validator took it. */
static int commit(gen_t *g, or_op_t *op, int np, int nn, int nf)
{
	int before = g->p->nop;
	try_commit(g, op, np, nn, nf);
	return g->p->nop > before;
}

/* The index of the block op that made future f in the first repetition, or -1. */
static int block_maker(const repeat_t *rp, int f)
{
	for (int j = 0; j < rp->n; j++)
		if (rp->tmpl[j].fut == f)
			return j;
	return -1;
}

/* One op of the block's first repetition: mostly launches; waits and destroys of the futures
 * the block made. */
static int block_op(gen_t *g, repeat_t *rp, or_op_t *op)
{
	or_prog_t *p = g->p;
	int made[REPEAT_MAX_BLOCK], nmade = 0;
	for (int j = 0; j < rp->n; j++)
		if (rp->tmpl[j].fut >= 0 && g->sim->fut_state[rp->tmpl[j].fut] == 1)
			made[nmade++] = rp->tmpl[j].fut;
	memset(op, 0, sizeof *op);
	op->fut = -1;
	int r = rnd(g, 100);
	if (r >= 77 && r < 90 && nmade) {
		op->kind = r < 85 ? OP_FUT_WAIT : OP_FUT_DESTROY;
		op->obj = made[rnd(g, nmade)];
		return 1;
	}
	if (r >= 90 && r < 93) {
		op->kind = OP_FENCE;
		return 1;
	}
	if (r >= 65 && r < 72)
		return gen_copy(g, op);
	if (r >= 72 && r < 77) {
		op->kind = OP_FILL;
		op->obj = rnd_node(g, chance(g, 2, 3), OR_MAXDEPTH);
		op->field = op->obj >= 0 ? rnd(g, p->root[p->node[op->obj].root].nf) : 0;
		op->ival = rnd(g, 101) - 50;
		return op->obj >= 0 && writable(p, op->obj);
	}
	int ok = r < 45 || r >= 93 ? gen_index(g, op) : gen_launch(g, op);
	/* short spins: a loop of many launches */
	op->delay_us = op->delay_us ? rnd(g, 60) : 0;
	return ok;
}

/* The first repetition: the block, made and committed op by op. */
static void repeat_first(gen_t *g, repeat_t *rp)
{
	or_prog_t *p = g->p;
	int want = 2 + rnd(g, 5);
	for (int tries = 0; rp->n < want && tries < 40; tries++) {
		int np = p->npart, nn = p->nnode, nf = p->nfut;
		or_op_t op;
		if (!block_op(g, rp, &op) || op.kind == OP_PART_CREATE) {
			p->npart = np, p->nnode = nn, p->nfut = nf;
			continue;
		}
		if (commit(g, &op, np, nn, nf))
			rp->tmpl[rp->n++] = p->op[p->nop - 1];
	}
}

/* A copy of block op j for repetition k: its own futures, its step's argument. 0 when it cannot
 * be made (a future it reads was not made in this repetition, or no room for its own). */
static int repeat_copy(gen_t *g, repeat_t *rp, int j, int k, or_op_t *op)
{
	or_prog_t *p = g->p;
	*op = rp->tmpl[j];
	if (op->kind == OP_LAUNCH || op->kind == OP_INDEX)
		op->ival = (rp->tmpl[j].ival + 100 + 37 * k) % 201 - 100;
	for (int r = 0; r < op->nreq; r++) {
		or_req_t *q = &op->req[r];
		int m = q->kind == RQ_FUTURE ? block_maker(rp, q->obj) : -1;
		if (m >= 0 && (q->obj = rp->fut_of[m]) < 0)
			return 0;
	}
	if (op->kind == OP_FUT_WAIT || op->kind == OP_FUT_DESTROY) {
		int m = block_maker(rp, op->obj);
		if (m >= 0 && (op->obj = rp->fut_of[m]) < 0)
			return 0;
	}
	if (op->fut >= 0) {
		if (p->nfut >= OR_MAXFUT)
			return 0;
		p->fut_type[p->nfut] = p->fut_type[op->fut];
		op->fut = p->nfut;
	}
	return 1;
}

/* Whether a node belongs to partition pi. */
static int node_in(const or_prog_t *p, int n, int pi)
{
	return n >= 0 && p->node[n].part == pi;
}

static int block_uses(const repeat_t *rp, const or_prog_t *p, int pi)
{
	for (int j = 0; j < rp->n; j++) {
		const or_op_t *op = &rp->tmpl[j];
		for (int r = 0; r < op->nreq; r++)
			if ((op->req[r].kind == RQ_PART && op->req[r].obj == pi) ||
			    (op->req[r].kind == RQ_REGION && node_in(p, op->req[r].obj, pi)))
				return 1;
		if ((op->kind == OP_COPY || op->kind == OP_FILL) &&
		    (node_in(p, op->obj, pi) || (op->kind == OP_COPY && node_in(p, op->obj2, pi))))
			return 1;
	}
	return 0;
}

/* A partition the block uses, alive and with no partition of its subregions alive, that can be
 * made again; -1 if none. */
static int swappable(gen_t *g, const repeat_t *rp)
{
	or_prog_t *p = g->p;
	int cand[OR_MAXPART], n = 0;
	for (int pi = 0; pi < p->npart; pi++) {
		if (!alive_part(g, pi) || !block_uses(rp, p, pi) ||
		    p->nnode + p->part[pi].nsub > OR_MAXNODE)
			continue;
		int children = 0;
		for (int c = 0; c < p->npart; c++)
			children += alive_part(g, c) && node_in(p, p->part[c].parent, pi);
		if (!children)
			cand[n++] = pi;
	}
	return p->npart < OR_MAXPART && n ? cand[rnd(g, n)] : -1;
}

static void remap_node(int *n, int from, int to, int count)
{
	if (*n >= from && *n < from + count)
		*n += to - from;
}

/* Destroy partition pi and make a new one of the same shape; the block uses the new one. */
static int swap_partition(gen_t *g, repeat_t *rp, int pi)
{
	or_prog_t *p = g->p;
	int pj = p->npart++, from = p->part[pi].first, count = p->part[pi].nsub;
	p->part[pj] = p->part[pi];
	p->part[pj].first = p->nnode;
	for (int i = 0; i < count; i++) {
		p->node[p->nnode] = p->node[from + i];
		p->node[p->nnode++].part = pj;
	}
	or_op_t op;
	memset(&op, 0, sizeof op);
	op.fut = -1;
	op.kind = OP_PART_DESTROY;
	op.obj = pi;
	if (!commit(g, &op, p->npart, p->nnode, p->nfut))
		return 0;
	op.kind = OP_PART_CREATE;
	op.obj = pj;
	if (!commit(g, &op, p->npart, p->nnode, p->nfut))
		return 0;
	for (int j = 0; j < rp->n; j++) {
		or_op_t *t = &rp->tmpl[j];
		for (int r = 0; r < t->nreq; r++) {
			if (t->req[r].kind == RQ_PART && t->req[r].obj == pi)
				t->req[r].obj = pj;
			if (t->req[r].kind == RQ_REGION)
				remap_node(&t->req[r].obj, from, p->part[pj].first, count);
		}
		if (t->kind == OP_COPY || t->kind == OP_FILL) {
			remap_node(&t->obj, from, p->part[pj].first, count);
			remap_node(&t->obj2, from, p->part[pj].first, count);
		}
	}
	return 1;
}

/* A perturbation's extra op: a launch, fill, copy or fence (kind 1), or a host map of data the
 * block uses (kind 4). */
static void repeat_extra(gen_t *g, const repeat_t *rp, int kind)
{
	or_prog_t *p = g->p;
	if (kind == 4) {
		const or_op_t *t = &rp->tmpl[rnd(g, rp->n)];
		int n = t->kind == OP_COPY || t->kind == OP_FILL ? t->obj : -1;
		for (int r = 0; r < t->nreq && n < 0; r++)
			if (t->req[r].kind != RQ_FUTURE)
				n = t->req[r].kind == RQ_REGION ? t->req[r].obj
								: p->part[t->req[r].obj].parent;
		if (n < 0 || !node_alive(g->sim, n))
			n = rnd_node(g, 1, OR_MAXDEPTH);
		if (n >= 0)
			host_op(g, chance(g, 1, 2) ? OP_MAP_WRITE : OP_MAP_READ, n);
		return;
	}
	for (int tries = 0; tries < 8; tries++) {
		int np = p->npart, nn = p->nnode, nf = p->nfut;
		or_op_t op;
		int made = gen_op(g, &op);
		if (made && (op.kind == OP_LAUNCH || op.kind == OP_INDEX || op.kind == OP_FILL ||
			     op.kind == OP_COPY || op.kind == OP_FENCE)) {
			op.delay_us = op.delay_us ? rnd(g, 60) : 0;
			try_commit(g, &op, np, nn, nf);
			return;
		}
		p->npart = np, p->nnode = nn, p->nfut = nf;
	}
}

/* Repetition k (1, 2, ...) of the block, perturbed or not. */
static void repeat_once(gen_t *g, repeat_t *rp, int k)
{
	or_prog_t *p = g->p;
	int pert = k >= 2 && chance(g, 1, 4) ? 1 + rnd(g, 5) : 0;
	if (pert == 3) {
		int pi = swappable(g, rp);
		if (pi < 0 || !swap_partition(g, rp, pi))
			pert = 1;
	}
	p->perturbed += pert != 0;
	p->reps++;
	if (rp->trace_id >= 0) {
		trace_op(g, OP_TRACE_BEGIN, rp->trace_id);
		p->traced++;
	}
	int at = rnd(g, rp->n + 1);
	for (int j = 0; j <= rp->n; j++) {
		if ((pert == 1 || pert == 4) && j == at)
			repeat_extra(g, rp, pert);
		if (j == rp->n)
			break;
		rp->fut_of[j] = -1;
		if (pert == 2 && j == at)
			continue; /* dropped: a later op that needs its future is dropped too */
		int np = p->npart, nn = p->nnode, nf = p->nfut;
		or_op_t op;
		if (!repeat_copy(g, rp, j, k, &op))
			continue;
		/* a failed task: its poison spreads to what reads it until a WRITE, a fill or a
		 * host write replaces it */
		op.fail = pert == 5 && (op.kind == OP_LAUNCH || op.kind == OP_INDEX) && j >= at;
		if (op.fail)
			pert = 0;
		if (commit(g, &op, np, nn, nf))
			rp->fut_of[j] = p->op[p->nop - 1].fut;
	}
	if (rp->trace_id >= 0)
		trace_op(g, OP_TRACE_END, rp->trace_id);
}

static void gen_repeat(gen_t *g)
{
	or_prog_t *p = g->p;
	switch (rnd(g, 5)) {
	case 0:
		gen_classic(g);
		break;
	case 1:
		gen_alternate(g);
		break;
	case 2:
		gen_overlap(g);
		break;
	case 3:
		gen_nested(g);
		break;
	default:
		gen_war(g);
		break;
	}
	repeat_cut(g, p->nop / 3 + rnd(g, p->nop / 3 + 1));

	repeat_t rp;
	memset(&rp, 0, sizeof rp);
	rp.trace_id = chance(g, 1, 2) ? rnd(g, 3) : -1;
	if (rp.trace_id >= 0) {
		trace_op(g, OP_TRACE_BEGIN, rp.trace_id);
		p->traced++;
	}
	repeat_first(g, &rp);
	if (rp.trace_id >= 0)
		trace_op(g, OP_TRACE_END, rp.trace_id);
	p->reps = 1;

	int reps = 6 + rnd(g, 9);
	for (int k = 1; k < reps; k++) {
		if (p->nop + 2 * rp.n + 8 > OR_MAXOP || p->nfut + rp.n + 2 > OR_MAXFUT)
			break;
		repeat_once(g, &rp, k);
	}
	for (int i = rnd(g, 3); i > 0 && p->nop < OR_MAXOP - 1; i--)
		classic_op(g);
}

void or_generate(uint64_t seed, or_prog_t *p)
{
	memset(p, 0, sizeof *p);
	gen_t g = {seed * 0x2545f4914f6cdd1dull + 0x1234567, p, malloc(sizeof(sim_t))};
	if (!g.sim)
		abort();
	p->seed = seed;
	p->shape = or_shape_of(seed, or_shape);
	sim_init(g.sim, p);
	switch (p->shape) {
	case OR_SHAPE_ALTERNATE:
		gen_alternate(&g);
		break;
	case OR_SHAPE_OVERLAP:
		gen_overlap(&g);
		break;
	case OR_SHAPE_NESTED:
		gen_nested(&g);
		break;
	case OR_SHAPE_WAR:
		gen_war(&g);
		break;
	case OR_SHAPE_REPEAT:
		gen_repeat(&g);
		break;
	default:
		gen_classic(&g);
		break;
	}
	free(g.sim);
	or_draw_owners(p);
}

/* A stream of its own per partition (seed and index hashed), so that adding the owners changed
 * no draw of the generator: the classic seeds make the programs they made before. */
void or_draw_owners(or_prog_t *p)
{
	for (int pi = 0; pi < p->npart; pi++) {
		or_part_t *pt = &p->part[pi];
		gen_t g = {(p->seed ^ 0x6f776e657273ull) * 0x9e3779b97f4a7c15ull +
				   (uint64_t)pi * 0xbf58476d1ce4e5b9ull,
			   p, NULL};
		/* half of the partitions keep the default (blocks of colors); the others move a
		 * third of their colors, or all of them, to ranks drawn here (taken modulo the
		 * number of ranks) */
		int moved = chance(&g, 1, 2) ? 0 : chance(&g, 1, 3) ? 3 : 1;
		for (int i = 0; i < OR_MAXCOLORS; i++) {
			int32_t v = (int32_t)(next(&g) >> 33);
			pt->owner[i] =
				i < pt->nsub && moved && (moved == 3 || chance(&g, 1, 3)) ? v : -1;
		}
	}
}
/* ---------------------------------------------------------------- listing */
static const char *type_str(tsr_type_t t)
{
	return t == TSR_NONE ? "none" : tsr_type_name(t);
}

static void print_req(FILE *out, const or_prog_t *p, const or_req_t *q)
{
	char name[200];
	if (q->kind == RQ_FUTURE) {
		fprintf(out, "F%d", q->obj);
		return;
	}
	if (q->kind == RQ_REGION)
		or_node_name(p, q->obj, name, sizeof name);
	else {
		or_node_name(p, p->part[q->obj].parent, name, sizeof name);
		size_t n = strlen(name);
		snprintf(name + n, sizeof name - n, "/p%d%s", q->obj,
			 p->part[q->obj].disjoint ? "" : "(aliased)");
	}
	fprintf(out, "%s %s {", name, or_priv_str(q->priv));
	for (int k = 0; k < q->nf; k++)
		fprintf(out, "%sf%d", k ? "," : "", q->fields[k]);
	fprintf(out, "}");
	if (q->proj)
		fprintf(out, " proj shift(%lld,%lld,%lld)", (long long)q->shift[0],
			(long long)q->shift[1], (long long)q->shift[2]);
}

void or_print_op(FILE *out, const or_prog_t *p, int i)
{
	const or_op_t *op = &p->op[i];
	char a[200], b[200], bs[96];
	fprintf(out, "  #%-2d ", p->op_id[i]);
	switch (op->kind) {
	case OP_PART_CREATE: {
		const or_part_t *pt = &p->part[op->obj];
		or_node_name(p, pt->parent, a, sizeof a);
		or_box_str(pt->colors, bs, sizeof bs);
		fprintf(out, "create p%d = %s of %s colors %s", op->obj,
			pt->kind == PK_TILES  ? "tiles"
			: pt->kind == PK_HALO ? "halo tiles"
					      : "boxes",
			a, bs);
		if (pt->kind == PK_HALO) {
			or_box_str(pt->domain, bs, sizeof bs);
			fprintf(out, " domain %s halo (%lld,%lld,%lld)", bs, (long long)pt->halo[0],
				(long long)pt->halo[1], (long long)pt->halo[2]);
		}
		fprintf(out, " %s:", pt->disjoint ? "disjoint" : "aliased");
		for (int s = 0; s < pt->nsub; s++) {
			or_box_str(p->node[pt->first + s].box, bs, sizeof bs);
			fprintf(out, " %s", bs);
		}
		for (int s = 0; s < pt->nsub; s++)
			if (pt->owner[s] >= 0)
				fprintf(out, " (owner of subregion %d: %d mod ranks)", s,
					(int)pt->owner[s]);
		break;
	}
	case OP_PART_DESTROY:
		fprintf(out, "destroy p%d", op->obj);
		break;
	case OP_FILL:
		or_node_name(p, op->obj, a, sizeof a);
		fprintf(out, "fill %s f%d = %lld", a, op->field, (long long)op->ival);
		break;
	case OP_COPY:
		or_node_name(p, op->obj, a, sizeof a);
		or_node_name(p, op->obj2, b, sizeof b);
		fprintf(out, "copy %s f%d -> %s f%d", a, op->field, b, op->field2);
		break;
	case OP_MAP_READ:
	case OP_MAP_WRITE:
		or_node_name(p, op->obj, a, sizeof a);
		or_box_str(p->node[op->obj].box, bs, sizeof bs);
		if (op->kind == OP_MAP_READ)
			fprintf(out, "map %s %s f%d READ: check", a, bs, op->field);
		else
			fprintf(out, "map %s %s f%d %s: host write salt %lld", a, bs, op->field,
				or_priv_str(op->priv), (long long)op->ival);
		break;
	case OP_LAUNCH:
	case OP_INDEX:
		if (op->kind == OP_INDEX) {
			or_box_str(op->domain, bs, sizeof bs);
			fprintf(out, "index launch over %s", bs);
		} else {
			fprintf(out, "launch");
		}
		fprintf(out, " arg %lld returns %s", (long long)op->ival, type_str(op->ret_type));
		if (op->delay_us)
			fprintf(out, " (tasks spin %d us)", op->delay_us);
		if (op->fp_order)
			fprintf(out, " (fractional float reductions)");
		if (op->fail)
			fprintf(out,
				" (fails where the point's coordinates add up to an even number)");
		if (op->fut >= 0)
			fprintf(out, op->kind == OP_INDEX ? " -> F%d by %s" : " -> F%d", op->fut,
				or_redop_str(op->redop));
		fprintf(out, ":");
		for (int r = 0; r < op->nreq; r++) {
			fprintf(out, r ? "; " : " ");
			print_req(out, p, &op->req[r]);
		}
		break;
	case OP_FUT_CREATE:
		fprintf(out, "F%d = future %s %lld", op->fut, type_str(p->fut_type[op->fut]),
			(long long)op->ival);
		break;
	case OP_FUT_WAIT:
		fprintf(out, "wait F%d: check", op->obj);
		break;
	case OP_FUT_DESTROY:
		fprintf(out, "destroy F%d", op->obj);
		break;
	case OP_FENCE:
		fprintf(out, "fence");
		break;
	case OP_TRACE_BEGIN:
		fprintf(out, "trace %d begin", op->obj);
		break;
	case OP_TRACE_END:
		fprintf(out, "trace %d end", op->obj);
		break;
	}
	fprintf(out, "\n");
}

void or_print_prog(FILE *out, const or_prog_t *p)
{
	char bs[96];
	fprintf(out,
		"program seed %llu (shape %s): %d regions, %d partitions, %d futures, %d ops\n",
		(unsigned long long)p->seed, or_shape_str(p->shape), p->nroot, p->npart, p->nfut,
		p->nop);
	if (p->reps)
		fprintf(out, "  loop: %d repetitions of a block, %d inside traces, %d perturbed\n",
			p->reps, p->traced, p->perturbed);
	for (int r = 0; r < p->nroot; r++) {
		or_box_str(p->root[r].bounds, bs, sizeof bs);
		fprintf(out, "  region r%d %s fields", r, bs);
		for (int f = 0; f < p->root[r].nf; f++)
			fprintf(out, " f%d:%s", f, tsr_type_name(p->root[r].type[f]));
		fprintf(out, "\n");
	}
	for (int i = 0; i < p->nop; i++)
		or_print_op(out, p, i);
	fprintf(out, "  end: check every field of every region and every live future, destroy "
		     "everything\n");
}

static int fp_type(tsr_type_t t)
{
	return t == TSR_F32 || t == TSR_F64;
}

/* Type of the first field of a region or partition requirement. */
static tsr_type_t req_type(const or_prog_t *p, const or_req_t *q)
{
	int n = q->kind == RQ_REGION ? q->obj : p->part[q->obj].parent;
	return p->root[p->node[n].root].type[q->fields[0]];
}

/* Region node a region or partition requirement reaches (a partition: its parent). */
static int req_node(const or_prog_t *p, const or_req_t *q)
{
	return q->kind == RQ_REGION ? q->obj : p->part[q->obj].parent;
}

/* Does the launch read a field through an aliased partition (or a region) and write another
 * field of the same root through another partition or region whose points overlap it? */
static int war_in_launch(const or_prog_t *p, const or_op_t *op)
{
	for (int a = 0; a < op->nreq; a++) {
		const or_req_t *r = &op->req[a];
		if (r->kind == RQ_FUTURE || r->priv != TSR_READ ||
		    (r->kind == RQ_PART && p->part[r->obj].disjoint))
			continue;
		for (int b = 0; b < op->nreq; b++) {
			const or_req_t *w = &op->req[b];
			if (w->kind == RQ_FUTURE ||
			    (w->priv != TSR_WRITE && w->priv != TSR_READ_WRITE))
				continue;
			const or_node_t *nr = &p->node[req_node(p, r)],
					*nw = &p->node[req_node(p, w)];
			if (nr->root == nw->root && w->obj != r->obj &&
			    boxes_overlap(nr->box, nw->box))
				return 1;
		}
	}
	return 0;
}

/* Subregions of an aliased box list that overlap two or more pieces of one disjoint partition
 * of the same parent. */
static long straddling(const or_prog_t *p, int pi)
{
	const or_part_t *pt = &p->part[pi];
	long n = 0;
	if (pt->kind != PK_BOXES || pt->disjoint)
		return 0;
	for (int i = 0; i < pt->nsub; i++) {
		tsr_box_t b = p->node[pt->first + i].box;
		int found = 0;
		for (int t = 0; t < p->npart && !found; t++) {
			const or_part_t *tp = &p->part[t];
			if (t == pi || !tp->disjoint || tp->parent != pt->parent)
				continue;
			int hits = 0;
			for (int j = 0; j < tp->nsub; j++)
				hits += boxes_overlap(b, p->node[tp->first + j].box);
			found = hits >= 2;
		}
		n += found;
	}
	return n;
}

void or_stats_add(or_stats_t *s, const or_prog_t *p)
{
	int last[OR_MAXROOT][OR_MAXF]; /* partition of the last index launch on each field */
	memset(last, -1, sizeof last);
	if (p->shape >= 0 && p->shape < OR_NSHAPES)
		s->shape[p->shape]++;
	s->repetitions += p->reps;
	s->traced_reps += p->traced;
	s->perturbed_reps += p->perturbed;
	for (int i = 0; i < p->nop; i++)
		s->failing_ops += p->op[i].fail;
	for (int i = 0; i < p->nop; i++) {
		const or_op_t *op = &p->op[i];
		s->ops[op->kind]++;
		if (op->kind == OP_LAUNCH || op->kind == OP_INDEX)
			s->war_in_launch += war_in_launch(p, op);
		for (int r = 0; r < op->nreq && op->kind == OP_INDEX; r++) {
			const or_req_t *q = &op->req[r];
			if (q->kind != RQ_PART)
				continue;
			int root = p->node[p->part[q->obj].parent].root;
			for (int k = 0; k < q->nf; k++) {
				int *l = &last[root][q->fields[k]];
				s->switches += *l >= 0 && *l != q->obj;
				*l = q->obj;
			}
		}
		s->fp_future += op->fp_order && op->kind == OP_INDEX && op->fut >= 0 &&
				fp_type(op->ret_type) &&
				(op->redop.id == TSR_SUM.id || op->redop.id == TSR_PROD.id);
		if (op->kind == OP_PART_CREATE) {
			const or_part_t *pt = &p->part[op->obj];
			s->halo_parts += pt->kind == PK_HALO && !pt->disjoint;
			s->box_parts += pt->kind == PK_BOXES;
			s->overlap_box_parts += pt->kind == PK_BOXES && !pt->disjoint;
			s->nested_parts += p->node[pt->parent].depth > 0;
			s->deep_parts +=
				p->node[pt->parent].depth >= 2 || below_aliased(p, pt->parent);
			s->straddle_boxes += straddling(p, op->obj);
		}
		for (int r = 0; r < op->nreq; r++) {
			const or_req_t *q = &op->req[r];
			s->fut_consumed += q->kind == RQ_FUTURE;
			s->proj_shift += q->kind == RQ_PART && q->proj;
			if (op->fp_order && TSR_PRIV_IS_REDUCE(q->priv) && q->kind != RQ_FUTURE)
				s->fp_reduce += fp_type(req_type(p, q)) &&
						q->priv != TSR_REDUCE(TSR_MIN) &&
						q->priv != TSR_REDUCE(TSR_MAX);
			if (op->kind == OP_INDEX && TSR_PRIV_IS_REDUCE(q->priv)) {
				s->reduce_aliased +=
					q->kind == RQ_PART && !p->part[q->obj].disjoint;
				s->reduce_region_index += q->kind == RQ_REGION;
			}
			if ((q->priv == TSR_WRITE || q->priv == TSR_READ_WRITE) &&
			    q->kind != RQ_FUTURE) {
				int n = q->kind == RQ_REGION ? q->obj : p->part[q->obj].parent;
				s->write_nested += p->node[n].depth >= 1 + (q->kind == RQ_PART);
			}
		}
	}
}
