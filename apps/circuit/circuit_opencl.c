/* circuit_opencl.c: OpenCL variants of the circuit simulation's three tasks: the kernels of
 * circuit.cl, enqueued on the worker's queue that Tessera hands them (Tessera waits for the queue
 * when a variant returns). They take the same views as the CPU and CUDA variants (circuit_*_view):
 * an accessor's ptr is then the field's cl_mem and its offset the byte offset of the element at lo,
 * and a node window's v is its cl_mem, with the offset in the view's win_offset. Without OpenCL in
 * StarPU only circuit_opencl_load is left. */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <starpu_config.h>

#include "circuit.h"

#ifdef STARPU_USE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "circuit.cl.h"

#define SEG CIRCUIT_SEGMENTS

#define MAX_KARGS 32
#define STR_(x) #x
#define STR(x) STR_(x)

/* An array argument: the buffer, then the byte offset of the first element. */
struct clarray {
	cl_mem mem;
	cl_ulong off;
};
static struct clarray array_of(const tsr_accessor_t *a)
{
	struct clarray r = {(cl_mem)a->ptr, (cl_ulong)a->offset};
	return r;
}

/* The three node windows' arguments: buffer, offset of node lo, lo, hi. */
struct clwindows {
	cl_mem mem[3];
	cl_ulong off[3];
	cl_long lo[3], hi[3];
};
static void windows_of(const circuit_window_t *w, const size_t *offset, struct clwindows *cw)
{
	for (int k = 0; k < 3; k++) {
		cw->mem[k] = (cl_mem)(void *)w[k].v;
		cw->off[k] = (cl_ulong)offset[k];
		cw->lo[k] = w[k].lo;
		/* an empty window has length 0 (distribute_charge lays them end to end) */
		cw->hi[k] = w[k].hi >= w[k].lo ? w[k].hi : w[k].lo - 1;
	}
}
static int add_windows(tsr_kernel_arg_t *ka, int n, const struct clwindows *cw)
{
	for (int k = 0; k < 3; k++) {
		ka[n++] = (tsr_kernel_arg_t)TSR_KARG(cw->mem[k]);
		ka[n++] = (tsr_kernel_arg_t)TSR_KARG(cw->off[k]);
		ka[n++] = (tsr_kernel_arg_t)TSR_KARG(cw->lo[k]);
		ka[n++] = (tsr_kernel_arg_t)TSR_KARG(cw->hi[k]);
	}
	return n;
}

/* Kernel `name` on n work-items (one dimension), in work-groups of `group` (n rounded up to it: the
 * kernels skip the items past their arrays). A fixed group size, whatever n, makes POCL compile
 * each kernel once. 0, or -1 after the task failed (tsr_ctx_opencl_launch names the task, the
 * kernel and the OpenCL error). */
static int launch(tsr_ctx_t *ctx, const char *name, const tsr_kernel_arg_t *args, int nargs,
		  size_t n, size_t group)
{
	const size_t global = (n + group - 1) / group * group;

	return tsr_ctx_opencl_launch(ctx, name, args, nargs, 1, &global, &group) ? -1 : 0;
}

void circuit_calc_new_currents_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const circuit_args_t *a = args;
	circuit_cnc_view_t v;
	if (circuit_cnc_view(ctx, arglen, &v))
		return;
	cl_long n = v.in.hi[0] - v.in.lo[0] + 1;
	if (n <= 0)
		return;
	struct clarray in = array_of(&v.in), out = array_of(&v.out), ind = array_of(&v.ind),
		       res = array_of(&v.res), cap = array_of(&v.cap), cur = array_of(&v.cur),
		       wv = array_of(&v.wv);
	cl_long cur_ld = (cl_long)v.cur.stride[1], wv_ld = (cl_long)v.wv.stride[1];
	struct clwindows win;
	windows_of(v.win, v.win_offset, &win);
	cl_float dt = a->dt;
	cl_int steps = a->steps;
	tsr_kernel_arg_t ka[MAX_KARGS] = {TSR_KARG(n),       TSR_KARG(in.mem),  TSR_KARG(in.off),
					  TSR_KARG(out.mem), TSR_KARG(out.off), TSR_KARG(ind.mem),
					  TSR_KARG(ind.off), TSR_KARG(res.mem), TSR_KARG(res.off),
					  TSR_KARG(cap.mem), TSR_KARG(cap.off), TSR_KARG(cur.mem),
					  TSR_KARG(cur.off), TSR_KARG(cur_ld),  TSR_KARG(wv.mem),
					  TSR_KARG(wv.off),  TSR_KARG(wv_ld)};
	int nargs = add_windows(ka, 17, &win);
	ka[nargs++] = (tsr_kernel_arg_t)TSR_KARG(dt);
	ka[nargs++] = (tsr_kernel_arg_t)TSR_KARG(steps);
	launch(ctx, "circuit_cnc", ka, nargs, (size_t)n, 64);
}

/* distribute_charge's scratch arrays (circuit.cl): count[k], start[k + 1] and ev[nev] ints, in one
 * buffer of the worker's context, and their byte offsets. count[] starts at 0. */
struct dc_scratch {
	cl_mem mem;
	cl_ulong count, start, ev;
};

/* The task fails: "task 'distribute_charge' point P: " then what went wrong. -1. */
static int dc_fail(tsr_ctx_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int dc_fail(tsr_ctx_t *ctx, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);

	int64_t p[3] = {0, 0, 0};
	tsr_ctx_point(ctx, p);
	tsr_ctx_error(ctx, "task '%s' point %lld: %s", tsr_ctx_task_name(ctx), (long long)p[0],
		      what);
	return -1;
}

static int dc_scratch_new(tsr_ctx_t *ctx, cl_int k, cl_int nev, struct dc_scratch *s)
{
	cl_command_queue q = tsr_ctx_opencl_queue(ctx);
	cl_context cl;
	const size_t bytes = ((size_t)2 * k + 1 + (size_t)nev) * sizeof(cl_int);
	cl_int err = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof cl, &cl, NULL);
	if (err != CL_SUCCESS)
		return dc_fail(ctx, "the worker's queue has no OpenCL context (OpenCL error %d)",
			       (int)err);
	s->mem = clCreateBuffer(cl, CL_MEM_READ_WRITE, bytes, NULL, &err);
	if (err != CL_SUCCESS)
		return dc_fail(ctx,
			       "no scratch buffer of %zu bytes on the device (OpenCL error %d)",
			       bytes, (int)err);

	const cl_int zero = 0;
	err = clEnqueueFillBuffer(q, s->mem, &zero, sizeof zero, 0, (size_t)k * sizeof(cl_int), 0,
				  NULL, NULL);
	if (err != CL_SUCCESS) {
		clReleaseMemObject(s->mem);
		return dc_fail(ctx, "zeroing %d scratch counts failed (OpenCL error %d)", (int)k,
			       (int)err);
	}
	s->count = 0;
	s->start = (cl_ulong)k * sizeof(cl_int);
	s->ev = (cl_ulong)(2 * (size_t)k + 1) * sizeof(cl_int);
	return 0;
}

/* The four kernels of circuit.cl's deterministic distribute_charge, in order on the queue. */
static int dc_launch(tsr_ctx_t *ctx, cl_int nev, cl_int k, const struct clarray *in,
		     const struct clarray *out, const struct clarray *cur, cl_ulong last_off,
		     const struct clwindows *win, const struct dc_scratch *s, cl_float dt)
{
	const cl_long *lo = win->lo, *hi = win->hi;
	tsr_kernel_arg_t ends[] = {TSR_KARG(nev),      TSR_KARG(in->mem),  TSR_KARG(in->off),
				   TSR_KARG(out->mem), TSR_KARG(out->off), TSR_KARG(lo[0]),
				   TSR_KARG(hi[0]),    TSR_KARG(lo[1]),    TSR_KARG(hi[1]),
				   TSR_KARG(lo[2]),    TSR_KARG(hi[2]),    TSR_KARG(s->mem),
				   TSR_KARG(s->count), TSR_KARG(s->start), TSR_KARG(s->ev)};
	if (launch(ctx, "circuit_dc_count", ends, 13, (size_t)nev, 64))
		return -1;

	const tsr_kernel_arg_t scan[] = {TSR_KARG(k), TSR_KARG(s->mem), TSR_KARG(s->count),
					 TSR_KARG(s->start)};
	if (launch(ctx, "circuit_dc_scan", scan, 4, CIRCUIT_DC_SCAN_GROUP, CIRCUIT_DC_SCAN_GROUP))
		return -1;
	if (launch(ctx, "circuit_dc_place", ends, 15, (size_t)nev, 64))
		return -1;

	tsr_kernel_arg_t fold[MAX_KARGS] = {TSR_KARG(k), TSR_KARG(cur->mem), TSR_KARG(cur->off),
					    TSR_KARG(last_off)};
	int nargs = add_windows(fold, 4, win);
	fold[nargs++] = (tsr_kernel_arg_t)TSR_KARG(s->mem);
	fold[nargs++] = (tsr_kernel_arg_t)TSR_KARG(s->start);
	fold[nargs++] = (tsr_kernel_arg_t)TSR_KARG(s->ev);
	fold[nargs++] = (tsr_kernel_arg_t)TSR_KARG(dt);
	return launch(ctx, "circuit_dc_fold", fold, nargs, (size_t)k, 64);
}

/* Private charges READ_WRITE in place, shared and ghost charges REDUCE(sum) into the point task's
 * buffers, as on CPUs; the piece's own shared nodes are looked up before the ghost box. Every node
 * gets its contributions in the CPU's order (circuit.cl), so every charge is the CPU's. */
void circuit_distribute_charge_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const circuit_args_t *a = args;
	circuit_dc_view_t v;
	if (circuit_dc_view(ctx, arglen, &v))
		return;
	int64_t n = v.in.hi[0] - v.in.lo[0] + 1;
	if (n <= 0)
		return;
	struct clarray in = array_of(&v.in), out = array_of(&v.out), cur = array_of(&v.cur);
	cl_ulong last_off = cur.off + (cl_ulong)(SEG - 1) * v.cur.stride[1] * sizeof(float);
	struct clwindows win;
	windows_of(v.win, v.win_offset, &win);
	int64_t k = 0;
	for (int w = 0; w < 3; w++)
		k += win.hi[w] - win.lo[w] + 1;
	/* the kernels index events and slots with ints */
	if (n > INT_MAX / 2 || k >= INT_MAX) {
		dc_fail(ctx,
			"%lld wires and %lld nodes: more than the OpenCL kernels' int indices hold",
			(long long)n, (long long)k);
		return;
	}

	struct dc_scratch s;
	if (dc_scratch_new(ctx, (cl_int)k, (cl_int)(2 * n), &s))
		return;
	dc_launch(ctx, (cl_int)(2 * n), (cl_int)k, &in, &out, &cur, last_off, &win, &s, a->dt);
	clReleaseMemObject(s.mem); /* freed once the kernels that use it have run (OpenCL) */
}

/* The piece's private nodes, then its shared nodes: two kernels on the same (in-order) queue. */
void circuit_update_voltages_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	circuit_uv_view_t v;
	(void)args;
	(void)arglen;
	if (circuit_uv_view(ctx, &v))
		return;
	for (int k = 0; k < 2; k++) {
		cl_long n = v.v[k].hi[0] - v.v[k].lo[0] + 1;
		if (n <= 0)
			continue;
		struct clarray vol = array_of(&v.v[k]), q = array_of(&v.q[k]),
			       cap = array_of(&v.cap[k]), leak = array_of(&v.leak[k]);
		const tsr_kernel_arg_t ka[] = {TSR_KARG(n),       TSR_KARG(vol.mem),
					       TSR_KARG(vol.off), TSR_KARG(q.mem),
					       TSR_KARG(q.off),   TSR_KARG(cap.mem),
					       TSR_KARG(cap.off), TSR_KARG(leak.mem),
					       TSR_KARG(leak.off)};
		if (launch(ctx, "circuit_uv", ka, 9, (size_t)n, 64))
			return;
	}
}
#endif /* STARPU_USE_OPENCL */

int circuit_opencl_load(void)
{
#ifdef STARPU_USE_OPENCL
	/* OpenCL's float division may be 2.5 ulp off without this option; the CPU's is IEEE */
	return tsr_opencl_program("circuit", circuit_cl_source,
				  "-cl-fp32-correctly-rounded-divide-sqrt "
				  "-DCIRCUIT_DC_SCAN_GROUP=" STR(CIRCUIT_DC_SCAN_GROUP));
#else
	return TSR_OK;
#endif
}
