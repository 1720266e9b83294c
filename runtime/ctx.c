/* ctx.c: what a running variant sees: tsr_ctx and its accessors, bounds checks, the point, the
 * return slot, the OpenCL kernel and queue of its worker, and tsr_ctx_error. Variants run on
 * StarPU's workers, so nothing here waits or submits; errors charge the running task
 * (tsr__task_error), which fails at the next fence and poisons what it writes. */
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static const char *point_str(const tsr_ctx_t *ctx, char *buf, size_t n)
{
	if (ctx->point_dim == 0)
		snprintf(buf, n, "%s", "");
	else {
		char c[64];
		snprintf(buf, n, " point %s",
			 tsr__color_str(ctx->point_dim, ctx->point, c, sizeof c));
	}

	return buf;
}

static int covers(tsr_privilege_t have, tsr_privilege_t want)
{
	if (TSR_PRIV_IS_REDUCE(want) || TSR_PRIV_IS_REDUCE(have))
		return have == want;

	switch (want) {
	case TSR_READ:
		return have == TSR_READ || have == TSR_READ_WRITE;
	case TSR_WRITE:
		return have == TSR_WRITE || have == TSR_READ_WRITE;
	case TSR_READ_WRITE:
		return have == TSR_READ_WRITE;
	}

	return 0;
}

#define CTX_FAIL(code, ...)                   \
	do {                                  \
		tsr__task_error(__VA_ARGS__); \
		return code;                  \
	} while (0)

/* A ctx call given a NULL context: inside a variant it is that task's error (named, and
 * reported at the fence like any other); on the host a plain error. */
static int null_ctx(const char *what)
{
	char ps[80];
	const struct tsr_ctx *current = tsr__current_ctx();

	if (!current)
		return tsr__err(TSR_EINVAL, "%s: null context (outside a task variant)", what);

	tsr__task_error("task '%s'%s: %s: null context (pass the ctx the variant received)",
			current->task->name, point_str(current, ps, sizeof ps), what);
	return TSR_EINVAL;
}

/* The accessor of requirement req's field at position k (q: its record, a region's): the type and
 * the privilege asked for checked against what the launch gave, then the view's bounds, strides
 * and address. tsr_ctx_accessor and tsr_ctx_field have checked req and found k. */
static int field_accessor(tsr_ctx_t *ctx, int req, const struct tsr_reqrec *q, int k,
			  tsr_type_t type, tsr_privilege_t want, tsr_accessor_t *acc)
{
	char ps[80];
	tsr_field_t field = q->fields[k];
	const struct tsr_fieldinfo *fi = &q->finfo[field];
	const char *tn = ctx->task->name;

	if (type != TSR_NONE && type != fi->type)
		CTX_FAIL(TSR_ETYPE,
			 "task '%s'%s: field '%s' of region '%s' holds %s but was accessed as %s",
			 tn, point_str(ctx, ps, sizeof ps), fi->name, q->region->name,
			 tsr_type_name(fi->type), tsr_type_name(type));
	if (!covers(q->priv, want)) {
		char w[32];
		snprintf(w, sizeof w, "%s", tsr__priv_name(want));
		CTX_FAIL(TSR_EPRIV,
			 "task '%s'%s: field '%s' of region '%s' requested %s but accessed for %s",
			 tn, point_str(ctx, ps, sizeof ps), fi->name, q->region->name,
			 tsr__priv_name(q->priv), w);
	}

	struct starpu_block_interface *b = ctx->buffers[q->buf[k]];
	acc->dim = q->dim;
	acc->stride[0] = 1;
	acc->stride[1] = b->ldy;
	acc->stride[2] = b->ldz;

	if (ctx->arch == TSR_ARCH_OPENCL) {
		/* a buffer object and where the view starts in it: OpenCL has no device pointers */
		acc->ptr = (void *)b->dev_handle;
		acc->offset = b->offset;
	} else {
		acc->ptr = (void *)b->ptr;
		acc->offset = 0;
	}

	uint32_t ext[3] = {b->nx, b->ny, b->nz};
	for (int d = 0; d < 3; d++) {
		acc->lo[d] = d < q->dim ? q->lo[d] : 0;
		acc->hi[d] = acc->lo[d] + ((int64_t)ext[d] - 1);
	}

	acc->type = fi->type;
	acc->elem_size = fi->size;
	acc->priv = q->priv;
	acc->ctx = ctx;
	acc->req = req;
	acc->field = field;
	/* not q->region->id: the region may be destroyed while this task runs (its handles live on
	 * in StarPU), and the normal path must not touch it; messages go through ctx and req
	 * instead */
	acc->region = 0;

	return TSR_OK;
}

int tsr_ctx_accessor(tsr_ctx_t *ctx, int req, tsr_field_t field, tsr_type_t type,
		     tsr_privilege_t want, tsr_accessor_t *acc)
{
	char ps[80];

	if (!ctx)
		return null_ctx("tsr_ctx_accessor");

	const char *tn = ctx->task->name;
	if (!acc)
		CTX_FAIL(TSR_EINVAL, "task '%s'%s: tsr_ctx_accessor: null accessor", tn,
			 point_str(ctx, ps, sizeof ps));
	if (req < 0 || req >= ctx->nreqs)
		CTX_FAIL(TSR_EINVAL,
			 "task '%s'%s: requirement %d does not exist (the launch has %d)", tn,
			 point_str(ctx, ps, sizeof ps), req, ctx->nreqs);

	struct tsr_reqrec *q = &ctx->reqs[req];
	if (q->kind == TSR_REQ_FUTURE)
		CTX_FAIL(TSR_EINVAL,
			 "task '%s'%s: requirement %d is a future, not a region (use "
			 "tsr_ctx_future)",
			 tn, point_str(ctx, ps, sizeof ps), req);

	int k;
	for (k = 0; k < q->nfields; k++)
		if (q->fields[k] == field)
			break;
	if (k == q->nfields) {
		if (field >= 0 && field < q->region->nfields)
			CTX_FAIL(TSR_ENOFIELD,
				 "task '%s'%s: field '%s' of region '%s' was not requested by "
				 "requirement %d",
				 tn, point_str(ctx, ps, sizeof ps), q->finfo[field].name,
				 q->region->name, req);
		CTX_FAIL(TSR_ENOFIELD,
			 "task '%s'%s: field id %d is not in region '%s' (requirement %d)", tn,
			 point_str(ctx, ps, sizeof ps), field, q->region->name, req);
	}

	return field_accessor(ctx, req, q, k, type, want, acc);
}

/* The requirement record behind `req`, or NULL after failing the task with what was wrong. */
static const struct tsr_reqrec *ctx_reqrec(const tsr_ctx_t *ctx, int req, const char *what)
{
	char ps[80];

	if (req >= 0 && req < ctx->nreqs)
		return &ctx->reqs[req];

	tsr__task_error("%s: task '%s'%s: requirement %d does not exist (the launch has %d)", what,
			ctx->task->name, point_str(ctx, ps, sizeof ps), req, ctx->nreqs);
	return NULL;
}

int tsr_ctx_req(const tsr_ctx_t *ctx, int req, tsr_req_info_t *info)
{
	if (!ctx || !info)
		return tsr__err(TSR_EINVAL, "tsr_ctx_req: null context or output");

	const struct tsr_reqrec *q = ctx_reqrec(ctx, req, "tsr_ctx_req");
	if (!q)
		return TSR_EINVAL;

	memset(info, 0, sizeof *info);
	info->kind = q->kind;
	info->priv = q->priv;
	info->redop = TSR_PRIV_IS_REDUCE(q->priv) ? TSR_PRIV_REDOP(q->priv) : TSR_REDOP_NONE;
	if (q->kind == TSR_REQ_FUTURE)
		return TSR_OK;

	const struct tsr_region *s = q->region;
	info->region = s->name;
	/* a partition requirement reaches the point as one of the partition's subregions */
	if (q->kind == TSR_REQ_PARTITION)
		info->partition = s->parent_part->name;

	/* bounds from the record the launch filled, not from the region */
	info->bounds.dim = q->dim;
	memcpy(info->bounds.lo, q->lo, sizeof q->lo);
	memcpy(info->bounds.hi, q->hi, sizeof q->hi);

	info->nfields = q->nfields;
	for (int k = 0; k < q->nfields; k++) {
		const struct tsr_fieldinfo *fi = &q->finfo[q->fields[k]];
		info->fields[k] = q->fields[k];
		info->field_names[k] = fi->name;
		info->field_types[k] = fi->type;
	}

	return TSR_OK;
}

int tsr_ctx_field(tsr_ctx_t *ctx, int req, int k, tsr_type_t type, tsr_privilege_t want,
		  tsr_accessor_t *acc)
{
	char ps[80];

	if (!ctx || !acc)
		return tsr__err(TSR_EINVAL, "tsr_ctx_field: null context or accessor");

	const struct tsr_reqrec *q = ctx_reqrec(ctx, req, "tsr_ctx_field");
	if (!q)
		return TSR_EINVAL;

	if (q->kind == TSR_REQ_FUTURE)
		CTX_FAIL(TSR_EINVAL,
			 "task '%s'%s: requirement %d is a future, not a region (use "
			 "tsr_ctx_future)",
			 ctx->task->name, point_str(ctx, ps, sizeof ps), req);
	if (k < 0 || k >= q->nfields)
		CTX_FAIL(TSR_ENOFIELD,
			 "task '%s'%s: requirement %d on region '%s' has %d field(s); there is no "
			 "field at position %d",
			 ctx->task->name, point_str(ctx, ps, sizeof ps), req, q->region->name,
			 q->nfields, k);

	return field_accessor(ctx, req, q, k, type, want, acc);
}

/* A variable's value where the variant can reach it: its address, or its cl_mem on an OpenCL
 * worker (StarPU allocates each variable there a buffer of its own: the value is at offset 0). */
static void *slot_of(const tsr_ctx_t *ctx, int buf)
{
	struct starpu_variable_interface *v = ctx->buffers[buf];

	if (ctx->arch == TSR_ARCH_OPENCL) {
		size_t offset;
		return (void *)tsr__variable_buffer(v, &offset);
	}
	return (void *)v->ptr;
}

/* Room for the element an out-of-bounds access reads or writes instead of foreign memory. */
#define OOB_SCRATCH_BYTES 4096
static _Thread_local max_align_t oob_scratch[OOB_SCRATCH_BYTES / sizeof(max_align_t)];

static void index_str(int dim, int64_t x, int64_t y, int64_t z, char *buf, size_t n)
{
	const int64_t c[3] = {x, y, z};
	tsr__color_str(dim, c, buf, n);
}

/* Bounds "lo..hi" of an accessor per dimension, as "[0..7, 8..15]". */
static void acc_bounds_str(const tsr_accessor_t *a, int dim, char *buf, size_t n)
{
	size_t used = 0;
	buf[0] = '\0';

	for (int d = 0; d < dim && used < n; d++)
		used += snprintf(buf + used, n - used, "%s%lld..%lld", d ? ", " : "[",
				 (long long)a->lo[d], (long long)a->hi[d]);

	if (used < n)
		snprintf(buf + used, n - used, "]");
}

void *tsr_accessor_out_of_bounds(const tsr_accessor_t *a, size_t elem_size, int dim, int64_t x,
				 int64_t y, int64_t z)
{
	char is[80], bs[120];

	index_str(dim, x, y, z, is, sizeof is);
	acc_bounds_str(a, dim, bs, sizeof bs);

	struct tsr_ctx *ctx = a->ctx;
	if (ctx) {
		/* one report per point task: a loop running off the edge would otherwise repeat
		 * it */
		if (!ctx->oob_reported) {
			const struct tsr_reqrec *q = &ctx->reqs[a->req];
			/* through tsr_ctx_error, so the task fails exactly as when a variant
			 * reports an error */
			tsr_ctx_error(ctx,
				      "requirement %d: index %s of field '%s' of region '%s' is "
				      "outside the requested bounds %s (checked with "
				      "TSR_CHECK_BOUNDS)",
				      a->req, is, q->finfo[a->field].name, q->region->name, bs);
			ctx->oob_reported = 1;
		}
	} else {
		const struct tsr_region *r = tsr__handle_get(TSR_K_REGION, a->region);
		const char *rn = r ? r->name : "?";
		const char *fn = r && a->field >= 0 && a->field < r->nfields
					 ? r->fields[a->field].name
					 : "?";
		tsr__err(TSR_EBOUNDS,
			 "host mapping of field '%s' of region '%s': index %s is outside its "
			 "bounds %s (checked with TSR_CHECK_BOUNDS)",
			 fn, rn, is, bs);
		fprintf(stderr, "tessera: %s\n", tsr_last_error());
	}

	memset(oob_scratch, 0, sizeof oob_scratch);
	if (elem_size > sizeof oob_scratch)
		tsr__task_error("bounds check: element of %zu bytes is larger than the %d-byte "
				"scratch",
				elem_size, OOB_SCRATCH_BYTES);

	return oob_scratch;
}

const void *tsr_ctx_future(tsr_ctx_t *ctx, int req)
{
	char ps[80];

	if (!ctx) {
		null_ctx("tsr_ctx_future");
		return NULL;
	}

	if (req < 0 || req >= ctx->nreqs || ctx->reqs[req].kind != TSR_REQ_FUTURE) {
		tsr__task_error("task '%s'%s: requirement %d is not a future", ctx->task->name,
				point_str(ctx, ps, sizeof ps), req);
		return NULL;
	}

	return slot_of(ctx, ctx->reqs[req].first_buf);
}

int tsr_ctx_point(const tsr_ctx_t *ctx, int64_t point[3])
{
	if (!ctx)
		return 0;
	if (point)
		memcpy(point, ctx->point, sizeof ctx->point);
	return ctx->point_dim;
}

int tsr_ctx_nreqs(const tsr_ctx_t *ctx)
{
	return ctx ? ctx->nreqs : 0;
}

const char *tsr_ctx_task_name(const tsr_ctx_t *ctx)
{
	return ctx ? ctx->task->name : NULL;
}

int tsr_ctx_worker(const tsr_ctx_t *ctx)
{
	return starpu_worker_get_id();
}

void *tsr_ctx_cuda_stream(const tsr_ctx_t *ctx)
{
#ifdef STARPU_USE_CUDA
	if (ctx && ctx->arch == TSR_ARCH_CUDA)
		return (void *)starpu_cuda_get_local_stream();
#endif
	return NULL;
}

void *tsr_ctx_return_slot(tsr_ctx_t *ctx)
{
	if (!ctx || ctx->ret_buf < 0)
		return NULL;
	return slot_of(ctx, ctx->ret_buf);
}

int tsr_ctx_return(tsr_ctx_t *ctx, const void *value)
{
	char ps[80];

	if (!ctx)
		return null_ctx("tsr_ctx_return");

	if (!value)
		CTX_FAIL(TSR_EINVAL, "task '%s'%s: tsr_ctx_return: null value", ctx->task->name,
			 point_str(ctx, ps, sizeof ps));
	if (ctx->task->ret_type == TSR_NONE)
		CTX_FAIL(TSR_EINVAL,
			 "task '%s'%s: returns a value but was registered with ret_type TSR_NONE",
			 ctx->task->name, point_str(ctx, ps, sizeof ps));
	if (ctx->arch != TSR_ARCH_CPU)
		CTX_FAIL(TSR_EINVAL,
			 "task '%s'%s: tsr_ctx_return is for CPU variants; a %s variant writes "
			 "tsr_ctx_return_slot",
			 ctx->task->name, point_str(ctx, ps, sizeof ps),
			 ctx->arch == TSR_ARCH_CUDA ? "CUDA" : "OpenCL");

	if (ctx->ret_buf < 0)
		return TSR_OK; /* nobody asked for the value */

	void *slot = (void *)STARPU_VARIABLE_GET_PTR(ctx->buffers[ctx->ret_buf]);
	if (ctx->ret_op)
		tsr__redop_fold(ctx->task->ret_type, ctx->task->ret_size, ctx->ret_op, slot, value);
	else
		memcpy(slot, value, ctx->task->ret_size);

	return TSR_OK;
}

void tsr_ctx_error(tsr_ctx_t *ctx, const char *fmt, ...)
{
	char buf[400], ps[80];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt ? fmt : "error", ap);
	va_end(ap);

	if (!ctx)
		/* inside a variant, a null context still names the task that reported */
		ctx = tsr__current_ctx();
	if (!ctx) {
		/* on the host there is no task to fail: leave a message, but no fence or task is
		 * affected */
		tsr__err(TSR_EINVAL,
			 "tsr_ctx_error: called with a null context outside any task (ignored): %s",
			 buf);
		return;
	}

	tsr__task_error("task '%s'%s: %s", ctx->task->name, point_str(ctx, ps, sizeof ps), buf);
}

/* The OpenCL task a device call acts for: the variant running on this thread, which ctx must be
 * (or NULL). On the host, or a thread of the variant's own, no task is running here: the call
 * fails with TSR_ESTATE and only tsr_last_error says why (no fence is affected); ctx is not even
 * read, since it may be gone. From a task's other variants, or with another task's context, the
 * running task fails naming itself (TSR_ETASK). NULL in both cases, *rc set. */
static struct tsr_ctx *opencl_ctx(tsr_ctx_t *ctx, const char *what, const char *kernel, int *rc)
{
	struct tsr_ctx *cur = tsr__current_ctx();
	const char *kn = kernel ? kernel : "(null)";
	char ps[80];

	if (!cur) {
		*rc = tsr__err(TSR_ESTATE,
			       "%s: kernel '%s': called outside any task variant (on the host or "
			       "a thread the variant started): kernels are launched by an OpenCL "
			       "variant, on its worker's thread, while it runs",
			       what, kn);
		return NULL;
	}

	*rc = TSR_ETASK;
	if (ctx && ctx != cur) {
		tsr__task_error("task '%s'%s: %s: kernel '%s': the context given is not this "
				"task's (a context is valid only in its own variant, while it "
				"runs)",
				cur->task->name, point_str(cur, ps, sizeof ps), what, kn);
		return NULL;
	}
	if (cur->arch != TSR_ARCH_OPENCL) {
		tsr__task_error("task '%s'%s: %s: kernel '%s' asked for in its %s variant: OpenCL "
				"kernels are launched by an OpenCL variant",
				cur->task->name, point_str(cur, ps, sizeof ps), what, kn,
				cur->arch == TSR_ARCH_CUDA ? "CUDA" : "CPU");
		return NULL;
	}

	*rc = TSR_OK;
	return cur;
}

#ifdef STARPU_USE_OPENCL
void *tsr_ctx_opencl_kernel(tsr_ctx_t *ctx, const char *kernel)
{
	int rc;
	char msg[400], ps[80];
	struct tsr_ctx *c = opencl_ctx(ctx, "tsr_ctx_opencl_kernel", kernel, &rc);
	if (!c)
		return NULL;

	void *k = tsr__opencl_user_kernel(kernel, c->seq, msg, sizeof msg);
	if (!k)
		tsr__task_error("task '%s'%s: %s", c->task->name, point_str(c, ps, sizeof ps), msg);
	return k;
}

void *tsr_ctx_opencl_queue(const tsr_ctx_t *ctx)
{
	struct tsr_ctx *cur = tsr__current_ctx();
	if (!cur || (ctx && ctx != cur) || cur->arch != TSR_ARCH_OPENCL)
		return NULL;

	cl_command_queue q;
	starpu_opencl_get_current_queue(&q);
	return q;
}

int tsr_ctx_opencl_launch(tsr_ctx_t *ctx, const char *kernel, const tsr_kernel_arg_t *args,
			  int nargs, int dims, const size_t *global, const size_t *local)
{
	int rc;
	char msg[400], ps[80];
	struct tsr_ctx *c = opencl_ctx(ctx, "tsr_ctx_opencl_launch", kernel, &rc);
	if (!c)
		return rc;

	if (tsr__opencl_user_launch(kernel, args, nargs, dims, global, local, c->seq, msg,
				    sizeof msg)) {
		tsr__task_error("task '%s'%s: %s", c->task->name, point_str(c, ps, sizeof ps), msg);
		return TSR_ETASK;
	}

	return TSR_OK;
}
#else /* StarPU without OpenCL: no variant runs there */
void *tsr_ctx_opencl_kernel(tsr_ctx_t *ctx, const char *kernel)
{
	int rc;
	char ps[80];
	struct tsr_ctx *c = opencl_ctx(ctx, "tsr_ctx_opencl_kernel", kernel, &rc);

	if (c) /* unreachable: an OpenCL variant runs nowhere */
		tsr__task_error("task '%s'%s: kernel '%s': this StarPU has no OpenCL",
				c->task->name, point_str(c, ps, sizeof ps),
				kernel ? kernel : "(null)");
	return NULL;
}

void *tsr_ctx_opencl_queue(const tsr_ctx_t *ctx)
{
	(void)ctx;
	return NULL;
}

int tsr_ctx_opencl_launch(tsr_ctx_t *ctx, const char *kernel, const tsr_kernel_arg_t *args,
			  int nargs, int dims, const size_t *global, const size_t *local)
{
	int rc;
	(void)args;
	(void)nargs;
	(void)dims;
	(void)global;
	(void)local;

	if (opencl_ctx(ctx, "tsr_ctx_opencl_launch", kernel, &rc))
		tsr_ctx_opencl_kernel(ctx, kernel); /* fails the task, naming the kernel */
	return rc ? rc : TSR_ETASK;
}
#endif
