/* circuit_opencl.c: OpenCL variants of the circuit simulation's three tasks: the kernels of
 * circuit.cl, enqueued on the worker's queue that Tessera hands them (Tessera waits for the queue
 * when a variant returns). They take the same views as the CPU and CUDA variants (circuit_*_view):
 * an accessor's ptr is then the field's cl_mem and its offset the byte offset of the element at lo,
 * and a node window's v is its cl_mem, with the offset in the view's win_offset. Without OpenCL in
 * StarPU only circuit_opencl_load is left. */
#include "config.h"

#include <starpu_config.h>

#include "circuit.h"

#ifdef STARPU_USE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "circuit.cl.h"

#define SEG CIRCUIT_SEGMENTS

/* One kernel argument: its size and address, as clSetKernelArg takes them. */
struct karg {
	size_t size;
	const void *value;
};
#define KARG(x)                 \
	{                       \
		sizeof(x), &(x) \
	}
#define MAX_KARGS 32

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
		cw->hi[k] = w[k].hi;
	}
}
static int add_windows(struct karg *ka, int n, const struct clwindows *cw)
{
	for (int k = 0; k < 3; k++) {
		ka[n++] = (struct karg)KARG(cw->mem[k]);
		ka[n++] = (struct karg)KARG(cw->off[k]);
		ka[n++] = (struct karg)KARG(cw->lo[k]);
		ka[n++] = (struct karg)KARG(cw->hi[k]);
	}
	return n;
}

/* Set the arguments of kernel `name` and enqueue it on n work-items (one dimension), in work-groups
 * of `group` (n rounded up to it: the kernels skip the items past their arrays). A fixed group
 * size, whatever n, makes POCL compile each kernel once. 0, or -1 after a task error naming the
 * task, the kernel and the OpenCL error. */
static int launch(tsr_ctx_t *ctx, const char *name, const struct karg *args, int nargs, size_t n,
		  size_t group)
{
	cl_kernel k = tsr_ctx_opencl_kernel(ctx, name);
	const size_t global = (n + group - 1) / group * group;
	cl_int err = CL_SUCCESS;
	if (!k)
		return -1; /* the task failed already, naming the kernel */
	for (int a = 0; a < nargs && err == CL_SUCCESS; a++)
		err = clSetKernelArg(k, (cl_uint)a, args[a].size, args[a].value);
	if (err == CL_SUCCESS)
		err = clEnqueueNDRangeKernel((cl_command_queue)tsr_ctx_opencl_queue(ctx), k, 1,
					     NULL, &global, &group, 0, NULL, NULL);
	if (err != CL_SUCCESS) {
		tsr_ctx_error(ctx,
			      "task '%s': OpenCL kernel %s could not be launched: OpenCL error %d",
			      tsr_ctx_task_name(ctx), name, (int)err);
		return -1;
	}
	return 0;
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
	struct karg ka[MAX_KARGS] = {KARG(n),       KARG(in.mem),  KARG(in.off),  KARG(out.mem),
				     KARG(out.off), KARG(ind.mem), KARG(ind.off), KARG(res.mem),
				     KARG(res.off), KARG(cap.mem), KARG(cap.off), KARG(cur.mem),
				     KARG(cur.off), KARG(cur_ld),  KARG(wv.mem),  KARG(wv.off),
				     KARG(wv_ld)};
	int nargs = add_windows(ka, 17, &win);
	ka[nargs++] = (struct karg)KARG(dt);
	ka[nargs++] = (struct karg)KARG(steps);
	launch(ctx, "circuit_cnc", ka, nargs, (size_t)n, 64);
}

/* Private charges READ_WRITE in place, shared and ghost charges REDUCE(sum) into the point task's
 * buffers, as on CPUs; the piece's own shared nodes are looked up before the ghost box. */
void circuit_distribute_charge_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const circuit_args_t *a = args;
	circuit_dc_view_t v;
	if (circuit_dc_view(ctx, arglen, &v))
		return;
	cl_long n = v.in.hi[0] - v.in.lo[0] + 1;
	if (n <= 0)
		return;
	struct clarray in = array_of(&v.in), out = array_of(&v.out), cur = array_of(&v.cur);
	cl_ulong last_off = cur.off + (cl_ulong)(SEG - 1) * v.cur.stride[1] * sizeof(float);
	struct clwindows win;
	windows_of(v.win, v.win_offset, &win);
	cl_float dt = a->dt;
	struct karg ka[MAX_KARGS] = {KARG(n),       KARG(in.mem),  KARG(in.off),  KARG(out.mem),
				     KARG(out.off), KARG(cur.mem), KARG(cur.off), KARG(last_off)};
	int nargs = add_windows(ka, 8, &win);
	ka[nargs++] = (struct karg)KARG(dt);
	launch(ctx, "circuit_dc", ka, nargs, 1, 1); /* one work-item: wire order (circuit.cl) */
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
		const struct karg ka[] = {KARG(n),       KARG(vol.mem),  KARG(vol.off),
					  KARG(q.mem),   KARG(q.off),    KARG(cap.mem),
					  KARG(cap.off), KARG(leak.mem), KARG(leak.off)};
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
				  "-cl-fp32-correctly-rounded-divide-sqrt");
#else
	return TSR_OK;
#endif
}
