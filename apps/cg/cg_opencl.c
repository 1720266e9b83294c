/* cg_opencl.c: OpenCL variants of the conjugate-gradient tasks (apps/cg/cg_kernels.h) and the
 * loading of their kernels (apps/cg/cg.cl, embedded as cg_cl_source). Each variant checks its views
 * as the CPU one does (cg_cpu.c's cg_*_view), then enqueues its kernel on the worker's queue;
 * Tessera waits for the queue when the variant returns. Accessors, futures and the return slot are
 * cl_mem buffers; an accessor's byte offset (its element at lo) is passed to the kernel as an
 * element index. Without OpenCL in StarPU only cg_opencl_load exists, and does nothing. */
#include "config.h"
#include <starpu_config.h> /* STARPU_USE_OPENCL */
#include <tessera.h>
#include "cg_kernels.h"

#ifdef STARPU_USE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include "cg.cl.h"

/* Work-items per group of the two dot kernels: cg.cl's CG_DOT_WG (reqd_work_group_size). */
#define CG_DOT_WG 128

int cg_opencl_load(void)
{
	return tsr_opencl_program("cg", cg_cl_source, NULL);
}

static const char *cl_error_name(cl_int e)
{
	switch (e) {
	case CL_OUT_OF_RESOURCES:
		return "CL_OUT_OF_RESOURCES";
	case CL_OUT_OF_HOST_MEMORY:
		return "CL_OUT_OF_HOST_MEMORY";
	case CL_MEM_OBJECT_ALLOCATION_FAILURE:
		return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
	case CL_INVALID_VALUE:
		return "CL_INVALID_VALUE";
	case CL_INVALID_MEM_OBJECT:
		return "CL_INVALID_MEM_OBJECT";
	case CL_INVALID_BUFFER_SIZE:
		return "CL_INVALID_BUFFER_SIZE";
	case CL_INVALID_KERNEL:
		return "CL_INVALID_KERNEL";
	case CL_INVALID_ARG_INDEX:
		return "CL_INVALID_ARG_INDEX";
	case CL_INVALID_ARG_VALUE:
		return "CL_INVALID_ARG_VALUE";
	case CL_INVALID_ARG_SIZE:
		return "CL_INVALID_ARG_SIZE";
	case CL_INVALID_KERNEL_ARGS:
		return "CL_INVALID_KERNEL_ARGS";
	case CL_INVALID_WORK_DIMENSION:
		return "CL_INVALID_WORK_DIMENSION";
	case CL_INVALID_WORK_GROUP_SIZE:
		return "CL_INVALID_WORK_GROUP_SIZE";
	case CL_INVALID_WORK_ITEM_SIZE:
		return "CL_INVALID_WORK_ITEM_SIZE";
	case CL_INVALID_GLOBAL_WORK_SIZE:
		return "CL_INVALID_GLOBAL_WORK_SIZE";
	case CL_INVALID_COMMAND_QUEUE:
		return "CL_INVALID_COMMAND_QUEUE";
	case CL_INVALID_CONTEXT:
		return "CL_INVALID_CONTEXT";
	default:
		return "OpenCL error";
	}
}

/* Kernel `name` over `global` work-items (rounded up to a multiple of `local`; local 0: the
 * implementation chooses) on the worker's queue. 1 if enqueued, else 0 after a task error
 * (tsr_ctx_opencl_launch names the task, the kernel and the OpenCL error). */
static int run_kernel(tsr_ctx_t *ctx, const char *name, const tsr_kernel_arg_t *args, int nargs,
		      size_t global, size_t local)
{
	if (local)
		global = (global + local - 1) / local * local;

	return tsr_ctx_opencl_launch(ctx, name, args, nargs, 1, &global, local ? &local : NULL) ==
	       TSR_OK;
}

/* Index, in a's buffer, of the element at global row g of a 1-D accessor. */
static cl_ulong elem_at(const tsr_accessor_t *a, int64_t g)
{
	return (cl_ulong)(a->offset / a->elem_size) + (cl_ulong)(g - a->lo[0]);
}

/* The accessors' offsets are whole elements (a view starts at an element of its buffer). */
static int aligned(tsr_ctx_t *ctx, const tsr_accessor_t *a)
{
	if (a->elem_size && a->offset % a->elem_size == 0)
		return 1;
	tsr_ctx_error(ctx,
		      "requirement %d: byte offset %zu is not a multiple of the element size %zu",
		      a->req, a->offset, a->elem_size);
	return 0;
}

static cl_mem buffer_of(const tsr_accessor_t *a)
{
	return (cl_mem)a->ptr;
}

/* A future or return slot (a cl_mem holding the value at offset 0). */
static cl_mem future_buffer(const void *p)
{
	return (cl_mem)(void *)(uintptr_t)p;
}

void cg_axpy_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const cg_axpy_args_t *a = args;
	tsr_accessor_t x, y;
	const double *c;
	if (!cg_update_view(ctx, &x, &y, &c) || !aligned(ctx, &x) || !aligned(ctx, &y))
		return;
	const cl_long n = y.hi[0] - y.lo[0] + 1;
	const cl_double scale = a->scale;
	const cl_mem cm = future_buffer(c), xm = buffer_of(&x), ym = buffer_of(&y);
	const cl_ulong xo = elem_at(&x, y.lo[0]), yo = elem_at(&y, y.lo[0]);
	const tsr_kernel_arg_t k[] = {TSR_KARG(n),  TSR_KARG(scale), TSR_KARG(cm), TSR_KARG(xm),
				      TSR_KARG(xo), TSR_KARG(ym),    TSR_KARG(yo)};
	run_kernel(ctx, "cg_axpy", k, 7, (size_t)n, 0);
}

void cg_xpay_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x, y;
	const double *c;
	if (!cg_update_view(ctx, &x, &y, &c) || !aligned(ctx, &x) || !aligned(ctx, &y))
		return;
	const cl_long n = y.hi[0] - y.lo[0] + 1;
	const cl_mem cm = future_buffer(c), xm = buffer_of(&x), ym = buffer_of(&y);
	const cl_ulong xo = elem_at(&x, y.lo[0]), yo = elem_at(&y, y.lo[0]);
	const tsr_kernel_arg_t k[] = {TSR_KARG(n),  TSR_KARG(cm), TSR_KARG(xm),
				      TSR_KARG(xo), TSR_KARG(ym), TSR_KARG(yo)};
	run_kernel(ctx, "cg_xpay", k, 6, (size_t)n, 0);
}

/* Partial sums of G groups into a scratch buffer, then one group adds them to the return slot.
 * G depends on the block length only, so a block gives the same bits on every device. */
void cg_dot_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t u, v;
	void *slot = tsr_ctx_return_slot(ctx);
	if (!cg_dot_view(ctx, &u, &v) || !aligned(ctx, &u) || !aligned(ctx, &v))
		return;
	if (!slot) {
		tsr_ctx_error(ctx, "no return slot (launch the dot with a result future)");
		return;
	}
	const cl_long n = u.hi[0] - u.lo[0] + 1;
	int64_t g = (n + CG_DOT_WG - 1) / CG_DOT_WG;
	const cl_uint groups = (cl_uint)(g < 1 ? 1 : g > CG_DOT_WG ? CG_DOT_WG : g);
	cl_command_queue q = (cl_command_queue)tsr_ctx_opencl_queue(ctx);
	cl_context context;
	cl_int err = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof context, &context, NULL);
	cl_mem part = NULL;
	if (err == CL_SUCCESS)
		part = clCreateBuffer(context, CL_MEM_READ_WRITE, groups * sizeof(cl_double), NULL,
				      &err);
	if (err != CL_SUCCESS) {
		tsr_ctx_error(ctx, "OpenCL scratch buffer of %u partial sums: %s (%d)", groups,
			      cl_error_name(err), (int)err);
		return;
	}
	const cl_mem um = buffer_of(&u), vm = buffer_of(&v), out = future_buffer(slot);
	const cl_ulong uo = elem_at(&u, u.lo[0]), vo = elem_at(&v, u.lo[0]);
	const tsr_kernel_arg_t kp[] = {TSR_KARG(n),  TSR_KARG(um), TSR_KARG(uo),
				       TSR_KARG(vm), TSR_KARG(vo), TSR_KARG(part)};
	const tsr_kernel_arg_t kf[] = {TSR_KARG(groups), TSR_KARG(part), TSR_KARG(out)};
	if (run_kernel(ctx, "cg_dot_part", kp, 6, (size_t)groups * CG_DOT_WG, CG_DOT_WG))
		run_kernel(ctx, "cg_dot_fold", kf, 3, CG_DOT_WG, CG_DOT_WG);
	clReleaseMemObject(part); /* OpenCL keeps it until the kernels that use it are done */
}

void cg_spmv_csr_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t rp, col, val, x, y;
	if (!cg_spmv_view(ctx, &rp, &col, &val, &x, &y) || !aligned(ctx, &rp) ||
	    !aligned(ctx, &col) || !aligned(ctx, &val) || !aligned(ctx, &x) || !aligned(ctx, &y))
		return;
	/* The row pointers live on the device: the nonzero range is checked by construction in
	 * apps/cg. */
	const cl_long nrows = y.hi[0] - y.lo[0] + 1, nzlo = col.lo[0], xlo = x.lo[0];
	const cl_mem rpm = buffer_of(&rp), colm = buffer_of(&col), valm = buffer_of(&val),
		     xm = buffer_of(&x), ym = buffer_of(&y);
	const cl_ulong rpo = elem_at(&rp, y.lo[0]), colo = elem_at(&col, col.lo[0]),
		       valo = elem_at(&val, val.lo[0]), xo = elem_at(&x, x.lo[0]),
		       yo = elem_at(&y, y.lo[0]);
	const tsr_kernel_arg_t k[] = {TSR_KARG(nrows), TSR_KARG(rpm),  TSR_KARG(rpo),
				      TSR_KARG(colm),  TSR_KARG(colo), TSR_KARG(valm),
				      TSR_KARG(valo),  TSR_KARG(nzlo), TSR_KARG(xm),
				      TSR_KARG(xo),    TSR_KARG(xlo),  TSR_KARG(ym),
				      TSR_KARG(yo)};
	run_kernel(ctx, "cg_spmv_csr", k, 13, (size_t)nrows, 0);
}

static void stencil_opencl(tsr_ctx_t *ctx, const void *args, int dim)
{
	const cg_stencil_args_t *a = args;
	tsr_accessor_t x, y;
	if (!cg_stencil_view(ctx, args, dim, &x, &y) || !aligned(ctx, &x) || !aligned(ctx, &y))
		return;
	const cl_long lo = y.lo[0], n = y.hi[0] - y.lo[0] + 1, nx = a->nx, ny = a->ny,
		      nz = dim == 2 ? 1 : a->nz, xlo = x.lo[0];
	const cl_int d = dim;
	const cl_mem xm = buffer_of(&x), ym = buffer_of(&y);
	const cl_ulong xo = elem_at(&x, x.lo[0]), yo = elem_at(&y, y.lo[0]);
	const tsr_kernel_arg_t k[] = {TSR_KARG(lo),  TSR_KARG(n),  TSR_KARG(nx), TSR_KARG(ny),
				      TSR_KARG(nz),  TSR_KARG(d),  TSR_KARG(xm), TSR_KARG(xo),
				      TSR_KARG(xlo), TSR_KARG(ym), TSR_KARG(yo)};
	run_kernel(ctx, "cg_stencil", k, 11, (size_t)n, 0);
}

void cg_stencil2d_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	stencil_opencl(ctx, args, 2);
}

void cg_stencil3d_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	stencil_opencl(ctx, args, 3);
}

void cg_alpha_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const void *s = tsr_ctx_future(ctx, 0), *pAp = tsr_ctx_future(ctx, 1);
	void *slot = tsr_ctx_return_slot(ctx);
	if (!s || !pAp || !slot)
		return;
	const cl_mem sm = future_buffer(s), pm = future_buffer(pAp), out = future_buffer(slot);
	const tsr_kernel_arg_t k[] = {TSR_KARG(sm), TSR_KARG(pm), TSR_KARG(out)};
	run_kernel(ctx, "cg_alpha", k, 3, 1, 0);
}

void cg_state_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const cg_state_args_t *a = args;
	void *slot = tsr_ctx_return_slot(ctx);
	if (!slot)
		return;
	const cl_mem out = future_buffer(slot);
	if (a->first) {
		const void *rr = tsr_ctx_future(ctx, 0);
		if (!rr)
			return;
		const cl_mem rm = future_buffer(rr);
		const cl_double tol2 = a->tol2;
		const tsr_kernel_arg_t k[] = {TSR_KARG(rm), TSR_KARG(tol2), TSR_KARG(out)};
		run_kernel(ctx, "cg_state_first", k, 3, 1, 0);
	} else {
		const void *prev = tsr_ctx_future(ctx, 0), *rr = tsr_ctx_future(ctx, 1);
		if (!prev || !rr)
			return;
		const cl_mem pm = future_buffer(prev), rm = future_buffer(rr);
		const tsr_kernel_arg_t k[] = {TSR_KARG(pm), TSR_KARG(rm), TSR_KARG(out)};
		run_kernel(ctx, "cg_state_next", k, 3, 1, 0);
	}
}

#else /* StarPU without OpenCL: no variants, no program */

int cg_opencl_load(void)
{
	return TSR_OK;
}
#endif
