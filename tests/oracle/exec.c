/* exec.c: runs an oracle program through Tessera and, op by op, through the sequential
 * interpreter, and compares every host read and every future with the interpreter's values. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <starpu_config.h>
#include "oracle.h"

int or_exec_skip = -1;

/* One task per return type (tsr_type_t values TSR_NONE..TSR_I64), all running the same body. */
static tsr_task_t g_task[TSR_I64 + 1];

/* What both variants do before the body: check the arguments, get every accessor and future
 * (device pointers on a CUDA worker), and wait the op's delay. 0 on success; on failure the
 * error is reported on ctx. */
int or_gather(tsr_ctx_t *ctx, const void *args, size_t arglen, tsr_accessor_t acc[][OR_MAXF],
	      const void *fut[])
{
	const or_kargs_t *a = args;
	if (arglen != sizeof *a) {
		tsr_ctx_error(ctx, "oracle task got %zu bytes of arguments, expected %zu", arglen,
			      sizeof *a);
		return -1;
	}
	for (int r = 0; r < a->nreq; r++) {
		const or_kreq_t *q = &a->req[r];
		if (q->kind == RQ_FUTURE) {
			if (!(fut[r] = tsr_ctx_future(ctx, r))) {
				tsr_ctx_error(ctx, "oracle task: tsr_ctx_future(%d) failed: %s", r,
					      tsr_last_error());
				return -1;
			}
			continue;
		}
		for (int k = 0; k < q->nf; k++) {
			int rc = tsr_ctx_accessor(ctx, r, q->field[k], (tsr_type_t)q->type[k],
						  q->priv, &acc[r][k]);
			if (rc) {
				tsr_ctx_error(ctx,
					      "oracle task: tsr_ctx_accessor(req %d, field %d) "
					      "returned %s: %s",
					      r, q->field[k], tsr_err_name(rc), tsr_last_error());
				return -1;
			}
			if (acc[r][k].type != (tsr_type_t)q->type[k] ||
			    acc[r][k].elem_size != tsr_type_size((tsr_type_t)q->type[k])) {
				tsr_ctx_error(ctx,
					      "oracle task: accessor of req %d field %d has type "
					      "%d size %zu",
					      r, q->field[k], acc[r][k].type, acc[r][k].elem_size);
				return -1;
			}
		}
	}
	int64_t point[3] = {0, 0, 0};
	tsr_ctx_point(ctx, point);
	if (or_point_fails(a, point)) {
		tsr_ctx_error(ctx, "oracle task told to fail (op with fail set)");
		return -1;
	}
	if (a->delay_us > 0) {
		/* keep this task pending a while: the program goes on submitting behind it */
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do
			clock_gettime(CLOCK_MONOTONIC, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 <
		       a->delay_us);
	}
	return 0;
}

static void variant(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const or_kargs_t *a = args;
	tsr_accessor_t acc[OR_MAXREQ][OR_MAXF];
	const void *fut[OR_MAXREQ] = {0};
	if (or_gather(ctx, args, arglen, acc, fut))
		return;
	int64_t point[3] = {0, 0, 0};
	int pdim = tsr_ctx_point(ctx, point);
	uint64_t ret = 0;
	or_kernel(a, pdim < 0 ? 0 : pdim, point, acc, fut, &ret);
	if (a->ret_type != TSR_NONE) {
		int rc = tsr_ctx_return(ctx, &ret);
		if (rc)
			tsr_ctx_error(ctx, "oracle task: tsr_ctx_return returned %s: %s",
				      tsr_err_name(rc), tsr_last_error());
	}
}

int or_exec_register(void)
{
	static const char *names[] = {"oracle_none", "oracle_f32", "oracle_f64", "oracle_i32",
				      "oracle_i64"};
	for (int t = TSR_NONE; t <= TSR_I64; t++) {
		tsr_task_desc_t d = {.name = names[t], .cpu = variant, .ret_type = (tsr_type_t)t};
#ifdef TSR_ORACLE_CUDA
		d.cuda = or_cuda_variant; /* kernel_cuda.cu: the same body on the GPU */
#endif
#ifdef STARPU_USE_OPENCL
		/* kernel_opencl.c: the same body over the device's buffers */
		d.opencl = or_opencl_variant;
#endif
		int rc = tsr_task_register(&d, &g_task[t]);
		if (rc) {
			fprintf(stderr, "oracle: tsr_task_register(%s) returned %s: %s\n", names[t],
				tsr_err_name(rc), tsr_last_error());
			return rc;
		}
	}
	return 0;
}

typedef struct {
	const or_prog_t *p;
	const or_req_t *q;
} proj_arg_t;

static int project(const int64_t point[3], int64_t color[3], void *arg)
{
	const proj_arg_t *a = arg;
	or_project(a->p, a->q, point, color);
	return 0;
}

typedef struct {
	const or_prog_t *p;
	or_interp_t in;
	tsr_region_t node[OR_MAXNODE];
	tsr_partition_t part[OR_MAXPART];
	unsigned char part_state[OR_MAXPART]; /* 0 not created, 1 alive, 2 destroyed */
	tsr_future_t fut[OR_MAXFUT];
	unsigned char fut_state[OR_MAXFUT];
	int root_live[OR_MAXROOT];
	proj_arg_t proj[OR_MAXREQ];    /* must outlive the launch call that uses them */
	int mapped_node, mapped_field; /* -1: nothing mapped */
	int trace_open;                /* the open trace's id, -1: none */
	int skip;                      /* op not given to Tessera (or_exec_skip), -1: none */
	/* the op's host map was refused on several ranks (ranks_refused): its host write never
	 * happened, so the interpreter leaves it out too */
	int refused;
	const char *where; /* op being run, for messages */
	char *msg;
	size_t len;
	int failed;
} ex_t;

static void fail(ex_t *e, const char *fmt, ...)
{
	if (e->failed)
		return;
	e->failed = 1;
	size_t n = (size_t)snprintf(e->msg, e->len, "%s: ", e->where);
	if (n >= e->len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg + n, e->len - n, fmt, ap);
	va_end(ap);
}

/* A Tessera call that must succeed on a valid program. */
static int call(ex_t *e, int rc, const char *what)
{
	if (rc != TSR_OK)
		fail(e, "%s returned %s: %s", what, tsr_err_name(rc), tsr_last_error());
	return rc;
}

/* A call that must return `want`: TSR_OK, or TSR_ETASK where the interpreter says that a failed
 * task's poison reaches it. Returns rc. */
static int expect(ex_t *e, int rc, int want, const char *what)
{
	if (rc != want)
		fail(e, "%s returned %s, expected %s (a failed task's poison%s): %s", what,
		     tsr_err_name(rc), tsr_err_name(want),
		     want == TSR_OK ? " does not reach it" : "", tsr_last_error());
	return rc;
}

static int same_box(tsr_box_t a, tsr_box_t b)
{
	if (a.dim != b.dim)
		return 0;
	for (int d = 0; d < a.dim; d++)
		if (a.lo[d] != b.lo[d] || a.hi[d] != b.hi[d])
			return 0;
	return 1;
}

static void point_str(int dim, const int64_t x[3], char *buf, size_t len)
{
	char coords[62]; /* the caller's 64 bytes less the parentheses */
	or_color_str(dim, x, coords, sizeof coords);
	snprintf(buf, len, "(%s)", coords);
}

/* Compare what Tessera mapped for field f of node n with the interpreter's array, bit for bit. */
static void compare(ex_t *e, int n, int f, const tsr_accessor_t *got)
{
	const or_prog_t *p = e->p;
	const or_node_t *nd = &p->node[n];
	tsr_type_t t = p->root[nd->root].type[f];
	char name[200], bs[96], bs2[96];
	or_node_name(p, n, name, sizeof name);
	tsr_box_t gb = {got->dim,
			{got->lo[0], got->lo[1], got->lo[2]},
			{got->hi[0], got->hi[1], got->hi[2]}};
	if (!same_box(gb, nd->box) || got->type != t || got->elem_size != tsr_type_size(t) ||
	    !got->ptr) {
		or_box_str(gb, bs, sizeof bs);
		or_box_str(nd->box, bs2, sizeof bs2);
		fail(e,
		     "region %s field f%d: mapped accessor has bounds %s type %d size %zu ptr %p, "
		     "expected %s %s",
		     name, f, bs, got->type, got->elem_size, got->ptr, bs2, tsr_type_name(t));
		return;
	}
	tsr_accessor_t want = or_interp_acc(&e->in, n, f, TSR_READ);
	int64_t x[3], first[3] = {0, 0, 0}, bad = 0;
	or_box_first(nd->box, x);
	do {
		const char *g = (const char *)got->ptr + or_elem_offset(got, x) * got->elem_size;
		const char *w = (const char *)want.ptr + or_elem_offset(&want, x) * want.elem_size;
		if (memcmp(g, w, want.elem_size)) {
			if (!bad++)
				memcpy(first, x, sizeof first);
		}
	} while (or_box_next(nd->box, x));
	if (bad) {
		char ps[64], vg[64], vw[64];
		point_str(nd->box.dim, first, ps, sizeof ps);
		or_value_str(t,
			     (const char *)got->ptr + or_elem_offset(got, first) * got->elem_size,
			     vg, sizeof vg);
		or_value_str(t,
			     (const char *)want.ptr + or_elem_offset(&want, first) * want.elem_size,
			     vw, sizeof vw);
		fail(e,
		     "region %s field f%d (%s) point %s: expected %s got %s (%lld of %lld elements "
		     "differ)",
		     name, f, tsr_type_name(t), ps, vw, vg, (long long)bad,
		     (long long)tsr_box_volume(nd->box));
	}
}

/* Several ranks: once a task failed since the last fence (on any rank), a map or a future wait
 * may be refused on every rank, whatever it reads (tsr_fence's documentation, "several ranks"):
 * the failure may have reached values computed elsewhere. Whether it is depends on when the failed
 * task ran, so such a refusal is accepted then, and only then. */
static int ranks_refused(const ex_t *e, int rc)
{
	return rc == TSR_ETASK && tsr_nranks() > 1 && e->in.task_errors > 0 &&
	       strstr(tsr_last_error(), "since the last tsr_fence") != NULL;
}

static void map_check(ex_t *e, int n, int f)
{
	tsr_accessor_t acc;
	if (or_interp_poisoned(&e->in, n, f)) {
		if (expect(e, tsr_map(e->node[n], f, TSR_READ, &acc), TSR_ETASK, "tsr_map(READ)") ==
		    TSR_OK)
			tsr_unmap(e->node[n], f); /* reported; leave nothing mapped */
		return;
	}
	int rc = tsr_map(e->node[n], f, TSR_READ, &acc);
	if (ranks_refused(e, rc) || call(e, rc, "tsr_map(READ)"))
		return;
	e->mapped_node = n, e->mapped_field = f;
	compare(e, n, f, &acc);
	if (!call(e, tsr_unmap(e->node[n], f), "tsr_unmap"))
		e->mapped_node = -1;
}

static void future_check(ex_t *e, int fi)
{
	tsr_type_t t = e->p->fut_type[fi];
	uint64_t got = 0;
	if (e->in.fut_poison[fi]) {
		expect(e, tsr_future_wait(e->fut[fi], &got, tsr_type_size(t)), TSR_ETASK,
		       "tsr_future_wait");
		return;
	}
	int rc = tsr_future_wait(e->fut[fi], &got, tsr_type_size(t));
	if (ranks_refused(e, rc) || call(e, rc, "tsr_future_wait"))
		return;
	if (memcmp(&got, &e->in.fut[fi], tsr_type_size(t))) {
		char vg[64], vw[64];
		or_value_str(t, &got, vg, sizeof vg);
		or_value_str(t, &e->in.fut[fi], vw, sizeof vw);
		fail(e, "future F%d (%s): expected %s got %s", fi, tsr_type_name(t), vw, vg);
	}
}

/* Are the generator's random owners set? TSR_ORACLE_OWNERS=0 turns them off (the same programs
 * with the default owners: to tell an owner bug from another). */
static int owners_wanted(void)
{
	const char *use = getenv("TSR_ORACLE_OWNERS");
	return !use || strcmp(use, "0") != 0;
}

/* The generator's random owners (or_draw_owners): the same ranks on every rank, since every rank
 * runs the same program; in one process every owner is rank 0 and changes nothing. */
static void set_owners(ex_t *e, int pi)
{
	const or_part_t *pt = &e->p->part[pi];
	if (!owners_wanted())
		return;
	for (int i = 0; i < pt->nsub && !e->failed; i++)
		if (pt->owner[i] >= 0)
			call(e,
			     tsr_partition_set_rank(e->part[pi], e->p->node[pt->first + i].color,
						    pt->owner[i] % tsr_nranks()),
			     "tsr_partition_set_rank");
}

static void part_create(ex_t *e, int pi)
{
	const or_prog_t *p = e->p;
	const or_part_t *pt = &p->part[pi];
	char name[16];
	snprintf(name, sizeof name, "p%d", pi);
	tsr_region_t par = e->node[pt->parent];
	int rc;
	if (pt->kind == PK_TILES)
		rc = call(e, tsr_partition_tiles(par, pt->colors, name, &e->part[pi]),
			  "tsr_partition_tiles");
	else if (pt->kind == PK_HALO)
		rc = call(e,
			  tsr_partition_tiles_halo(par, pt->domain, pt->colors, pt->halo, name,
						   &e->part[pi]),
			  "tsr_partition_tiles_halo");
	else {
		tsr_box_t boxes[OR_MAXCOLORS];
		for (int i = 0; i < pt->nsub; i++)
			boxes[i] = p->node[pt->first + i].box;
		rc = call(e, tsr_partition_boxes(par, pt->nsub, boxes, name, &e->part[pi]),
			  "tsr_partition_boxes");
	}
	if (rc)
		return;
	e->part_state[pi] = 1;
	set_owners(e, pi);
	/* the runtime's geometry must be the one the interpreter assumes */
	int dis = tsr_partition_is_disjoint(e->part[pi]);
	if (dis != pt->disjoint)
		fail(e, "tsr_partition_is_disjoint(p%d) = %d, expected %d", pi, dis, pt->disjoint);
	tsr_box_t colors;
	if (!call(e, tsr_partition_colors(e->part[pi], &colors), "tsr_partition_colors") &&
	    !same_box(colors, pt->colors))
		fail(e, "tsr_partition_colors(p%d) differs from the colors it was made with", pi);
	for (int i = 0; i < pt->nsub && !e->failed; i++) {
		const or_node_t *nd = &p->node[pt->first + i];
		tsr_box_t b;
		if (call(e,
			 tsr_partition_subregion(e->part[pi], nd->color, &e->node[pt->first + i]),
			 "tsr_partition_subregion") ||
		    call(e, tsr_region_bounds(e->node[pt->first + i], &b), "tsr_region_bounds"))
			return;
		if (!same_box(b, nd->box)) {
			char n[200], bs[96], bs2[96];
			or_node_name(p, pt->first + i, n, sizeof n);
			or_box_str(b, bs, sizeof bs);
			or_box_str(nd->box, bs2, sizeof bs2);
			fail(e, "subregion %s has bounds %s, expected %s", n, bs, bs2);
		}
	}
}

static void part_forget(ex_t *e, int pi)
{
	e->part_state[pi] = 2;
	for (int q = 0; q < e->p->npart; q++)
		if (e->part_state[q] == 1 && e->p->node[e->p->part[q].parent].part == pi)
			part_forget(e, q);
}

static void launch(ex_t *e, const or_op_t *op)
{
	const or_prog_t *p = e->p;
	tsr_req_t reqs[OR_MAXREQ];
	for (int r = 0; r < op->nreq; r++) {
		const or_req_t *q = &op->req[r];
		if (q->kind == RQ_FUTURE)
			reqs[r] = tsr_req_future(e->fut[q->obj]);
		else if (q->kind == RQ_REGION)
			reqs[r] = tsr_req_region(e->node[q->obj], q->priv, q->nf, q->fields);
		else if (!q->proj)
			reqs[r] = tsr_req_part(e->part[q->obj], q->priv, q->nf, q->fields);
		else {
			e->proj[r].p = p;
			e->proj[r].q = q;
			reqs[r] = tsr_req_part_proj(e->part[q->obj], q->priv, q->nf, q->fields,
						    project, &e->proj[r]);
		}
	}
	or_kargs_t ka;
	or_kargs(p, op, &ka);
	tsr_future_t f;
	tsr_future_t *res = op->fut >= 0 ? &f : NULL;
	int rc;
	if (op->kind == OP_LAUNCH)
		rc = call(e, tsr_launch(g_task[op->ret_type], op->nreq, reqs, &ka, sizeof ka, res),
			  "tsr_launch");
	else
		rc = call(e,
			  tsr_index_launch(g_task[op->ret_type], op->domain, op->nreq, reqs, &ka,
					   sizeof ka, op->redop, res),
			  "tsr_index_launch");
	if (!rc && res) {
		e->fut[op->fut] = f;
		e->fut_state[op->fut] = 1;
	}
}

/* Does op change data or produce a value (a candidate for or_exec_skip)? */
static int has_effect(const or_op_t *op)
{
	if (op->kind != OP_LAUNCH && op->kind != OP_INDEX)
		return 0;
	int effect = op->fut >= 0;
	for (int r = 0; r < op->nreq; r++)
		effect |= op->req[r].kind != RQ_FUTURE && op->req[r].priv != TSR_READ;
	return effect;
}

static void run_op(ex_t *e, int i)
{
	const or_prog_t *p = e->p;
	const or_op_t *op = &p->op[i];
	if (i == e->skip) {
		/* injected fault: the launch never reaches Tessera; its future holds a zero */
		uint64_t zero = 0;
		if (op->fut >= 0 &&
		    !call(e, tsr_future_create(op->ret_type, 0, &zero, &e->fut[op->fut]),
			  "tsr_future_create"))
			e->fut_state[op->fut] = 1;
		or_interp_op(&e->in, i);
		return;
	}
	switch (op->kind) {
	case OP_PART_CREATE:
		part_create(e, op->obj);
		break;
	case OP_PART_DESTROY:
		if (!call(e, tsr_partition_destroy(e->part[op->obj]), "tsr_partition_destroy"))
			part_forget(e, op->obj);
		break;
	case OP_FILL: {
		tsr_type_t t = p->root[p->node[op->obj].root].type[op->field];
		uint64_t v = 0;
		or_from_i64(t, op->ival, &v);
		call(e, tsr_fill(e->node[op->obj], op->field, &v, tsr_type_size(t)), "tsr_fill");
		break;
	}
	case OP_COPY:
		call(e, tsr_copy(e->node[op->obj], op->field, e->node[op->obj2], op->field2),
		     "tsr_copy");
		break;
	case OP_LAUNCH:
	case OP_INDEX:
		launch(e, op);
		break;
	case OP_MAP_READ:
		map_check(e, op->obj, op->field);
		break;
	case OP_MAP_WRITE: {
		tsr_accessor_t acc;
		if (op->priv == TSR_READ_WRITE && or_interp_poisoned(&e->in, op->obj, op->field)) {
			if (expect(e, tsr_map(e->node[op->obj], op->field, op->priv, &acc),
				   TSR_ETASK, "tsr_map(READ_WRITE)") == TSR_OK)
				tsr_unmap(e->node[op->obj], op->field);
			break;
		}
		int rc = tsr_map(e->node[op->obj], op->field, op->priv, &acc);
		e->refused = ranks_refused(e, rc);
		if (e->refused || call(e, rc, "tsr_map(write)"))
			break;
		e->mapped_node = op->obj, e->mapped_field = op->field;
		tsr_box_t gb = {acc.dim,
				{acc.lo[0], acc.lo[1], acc.lo[2]},
				{acc.hi[0], acc.hi[1], acc.hi[2]}};
		tsr_type_t t = p->root[p->node[op->obj].root].type[op->field];
		if (!same_box(gb, p->node[op->obj].box) || acc.type != t ||
		    acc.elem_size != tsr_type_size(t) || !acc.ptr)
			fail(e, "tsr_map(%s) returned an accessor with other bounds or type",
			     or_priv_str(op->priv));
		else if (op->priv == TSR_READ_WRITE)
			compare(e, op->obj, op->field, &acc); /* it must see the current values */
		if (!e->failed)
			or_host_write(&acc, op->priv, op->ival);
		if (!call(e, tsr_unmap(e->node[op->obj], op->field), "tsr_unmap"))
			e->mapped_node = -1;
		break;
	}
	case OP_FUT_CREATE: {
		uint64_t v = 0;
		or_from_i64(p->fut_type[op->fut], op->ival, &v);
		if (!call(e, tsr_future_create(p->fut_type[op->fut], 0, &v, &e->fut[op->fut]),
			  "tsr_future_create"))
			e->fut_state[op->fut] = 1;
		break;
	}
	case OP_FUT_WAIT:
		future_check(e, op->obj);
		break;
	case OP_FUT_DESTROY:
		if (!call(e, tsr_future_destroy(e->fut[op->obj]), "tsr_future_destroy"))
			e->fut_state[op->obj] = 2;
		break;
	case OP_FENCE:
		expect(e, tsr_fence(), e->in.task_errors ? TSR_ETASK : TSR_OK, "tsr_fence");
		break;
	case OP_TRACE_BEGIN:
		if (!call(e, tsr_trace_begin((uint32_t)op->obj), "tsr_trace_begin"))
			e->trace_open = op->obj;
		break;
	case OP_TRACE_END:
		if (!call(e, tsr_trace_end((uint32_t)op->obj), "tsr_trace_end"))
			e->trace_open = -1;
		break;
	}
	/* the interpreter goes second: a host READ_WRITE above compared against the values before
	 * it */
	if (!e->refused)
		or_interp_op(&e->in, i);
	e->refused = 0;
}

/* Destroy whatever is still alive; after a failure, errors here are expected and ignored. */
static void cleanup(ex_t *e)
{
	if (e->mapped_node >= 0)
		tsr_unmap(e->node[e->mapped_node], e->mapped_field);
	if (e->trace_open >= 0) /* a failure inside a trace: the next program begins its own */
		tsr_trace_end((uint32_t)e->trace_open);
	for (int f = 0; f < e->p->nfut; f++)
		if (e->fut_state[f] == 1) {
			call(e, tsr_future_destroy(e->fut[f]), "tsr_future_destroy");
			e->fut_state[f] = 2;
		}
	for (int r = 0; r < e->p->nroot; r++)
		if (e->root_live[r]) {
			call(e, tsr_region_destroy(e->node[r]), "tsr_region_destroy");
			e->root_live[r] = 0;
		}
	expect(e, tsr_fence(), e->in.task_errors ? TSR_ETASK : TSR_OK, "tsr_fence");
}

int or_exec(const or_prog_t *p, int verbose, char *msg, size_t len)
{
	ex_t *e = calloc(1, sizeof *e);
	if (!e) {
		snprintf(msg, len, "out of memory");
		return 1;
	}
	e->p = p;
	e->msg = msg;
	e->len = len;
	e->mapped_node = -1;
	e->trace_open = -1;
	e->where = "setup";
	e->skip = -1;
	if (or_exec_skip >= 0) {
		int n = 0, k = 0;
		for (int i = 0; i < p->nop; i++)
			n += has_effect(&p->op[i]);
		for (int i = 0; i < p->nop && n; i++)
			if (has_effect(&p->op[i]) && k++ == or_exec_skip % n)
				e->skip = i;
	}
	msg[0] = 0;
	if (or_interp_init(&e->in, p)) {
		free(e);
		snprintf(msg, len, "out of memory");
		return 1;
	}
	for (int r = 0; r < p->nroot && !e->failed; r++) {
		tsr_fspace_t fs;
		char name[16];
		snprintf(name, sizeof name, "r%d", r);
		if (call(e, tsr_fspace_create(&fs), "tsr_fspace_create"))
			break;
		for (int f = 0; f < p->root[r].nf && !e->failed; f++) {
			char fname[16];
			tsr_field_t fid;
			snprintf(fname, sizeof fname, "f%d", f);
			if (!call(e, tsr_fspace_add(fs, fname, p->root[r].type[f], 0, &fid),
				  "tsr_fspace_add") &&
			    fid != f)
				fail(e, "tsr_fspace_add gave field id %d to field number %d", fid,
				     f);
		}
		if (!e->failed &&
		    !call(e, tsr_region_create(name, p->root[r].bounds, fs, &e->node[r]),
			  "tsr_region_create"))
			e->root_live[r] = 1;
		/* the region keeps its fields: the field space may go now */
		call(e, tsr_fspace_destroy(fs), "tsr_fspace_destroy");
	}
	char where[48];
	for (int i = 0; i < p->nop && !e->failed; i++) {
		snprintf(where, sizeof where, "op #%d", p->op_id[i]);
		e->where = where;
		if (verbose) {
			or_print_op(stdout, p, i);
			fflush(stdout);
		}
		run_op(e, i);
	}
	/* final checkpoint: every field of every region, every future still alive */
	e->where = "end";
	for (int r = 0; r < p->nroot && !e->failed; r++)
		for (int f = 0; f < p->root[r].nf && !e->failed; f++)
			map_check(e, r, f);
	for (int f = 0; f < p->nfut && !e->failed; f++)
		if (e->fut_state[f] == 1)
			future_check(e, f);
	e->where = "cleanup";
	cleanup(e);
	int failed = e->failed;
	or_interp_free(&e->in);
	free(e);
	return failed;
}
