/* stencil_opencl.c: OpenCL variants of the stencil tasks (initial condition, fused diffusion step,
 * halo copy): the kernels of stencil.cl, enqueued on the worker's queue that Tessera hands them
 * (Tessera waits for the queue when a variant returns). They take the same views as the CPU and
 * CUDA variants (stencil_*_view): an accessor's ptr is then the field's cl_mem and its offset the
 * byte offset of the element at lo. Without OpenCL in StarPU only stencil_opencl_load is left. */
#include "config.h"

#include <starpu_config.h>

#include "stencil.h"

#ifdef STARPU_USE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "stencil.cl.h"

/* The one-dimensional kernels (stencil.cl's STENCIL_ITEM): n work-items, rounded up to a fixed
 * work-group size, the same for every box (POCL compiles a kernel once per work-group size).
 * TSR_OK, or TSR_ETASK after the task failed naming the kernel and the OpenCL error. */
#define GROUP 64
static int launch_box(tsr_ctx_t *ctx, const char *name, const tsr_kernel_arg_t *args, int nargs,
		      size_t n)
{
	const size_t local = GROUP, global = (n + GROUP - 1) / GROUP * GROUP;
	return tsr_ctx_opencl_launch(ctx, name, args, nargs, 1, &global, &local);
}

void stencil_init_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const stencil_init_args_t *a = args;
	tsr_accessor_t f;

	if (!stencil_init_view(ctx, args, arglen, &f))
		return;
	cl_mem m = f.ptr;
	cl_ulong off = f.offset;
	cl_long sj = (cl_long)f.stride[1], sk = (cl_long)f.stride[2];
	cl_int ni = (cl_int)(f.hi[0] - f.lo[0] + 1), nj = (cl_int)(f.hi[1] - f.lo[1] + 1),
	       nk = (cl_int)(f.hi[2] - f.lo[2] + 1);
	cl_long lo0 = f.lo[0], lo1 = f.lo[1], lo2 = f.lo[2];
	cl_int nx = a->nx, ny = a->ny, nz = a->nz;
	const tsr_kernel_arg_t ka[] = {TSR_KARG(m),   TSR_KARG(off), TSR_KARG(sj), TSR_KARG(sk),
				       TSR_KARG(ni),  TSR_KARG(nj),  TSR_KARG(nk), TSR_KARG(lo0),
				       TSR_KARG(lo1), TSR_KARG(lo2), TSR_KARG(nx), TSR_KARG(ny),
				       TSR_KARG(nz)};
	launch_box(ctx, f.type == TSR_F64 ? "stencil_init_f64" : "stencil_init_f32", ka, 13,
		   (size_t)ni * (size_t)nj * (size_t)nk);
}

/* Work-group of the diffusion kernel: 32 x 8 points, as stencil_cuda.cu's blocks, halved while the
 * device's limit for the kernel is lower. */
static void diffusion_local(cl_kernel k, cl_device_id dev, size_t local[3])
{
	size_t max = 0;
	local[0] = 32;
	local[1] = 8;
	local[2] = 1;
	if (clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof max, &max, NULL) !=
		    CL_SUCCESS ||
	    !max)
		return;
	while (local[0] * local[1] > max)
		if (local[1] > 1)
			local[1] /= 2;
		else
			local[0] /= 2;
}

void stencil_diffusion_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const stencil_args_t *a = args;
	tsr_accessor_t in, out;
	stencil_tile_t t;

	if (!stencil_diffusion_view(ctx, args, arglen, &in, &out, &t))
		return;
	const int f64 = in.type == TSR_F64;
	const char *name = f64 ? "stencil_diffusion_f64" : "stencil_diffusion_f32";
	cl_kernel k = tsr_ctx_opencl_kernel(ctx, name);
	cl_command_queue q = tsr_ctx_opencl_queue(ctx);
	cl_device_id dev;
	size_t local[3];
	if (!k)
		return;
	if (clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS) {
		tsr_ctx_error(ctx, "stencil_diffusion: no device for the worker's OpenCL queue");
		return;
	}
	diffusion_local(k, dev, local);
	cl_mem inm = in.ptr, outm = out.ptr;
	cl_ulong in_off = in.offset + (cl_ulong)t.in_off * in.elem_size, out_off = out.offset;
	cl_long isj = t.isj, isk = t.isk, osj = t.osj, osk = t.osk;
	cl_int ni = t.ni, nj = t.nj;
	double alpha64 = a->alpha;
	float alpha32 = (float)a->alpha;
	const tsr_kernel_arg_t ka[] = {TSR_KARG(inm),
				       TSR_KARG(in_off),
				       TSR_KARG(isj),
				       TSR_KARG(isk),
				       TSR_KARG(outm),
				       TSR_KARG(out_off),
				       TSR_KARG(osj),
				       TSR_KARG(osk),
				       TSR_KARG(ni),
				       TSR_KARG(nj),
				       f64 ? (tsr_kernel_arg_t)TSR_KARG(alpha64)
					   : (tsr_kernel_arg_t)TSR_KARG(alpha32),
				       {(local[0] + 2) * (local[1] + 2) * in.elem_size, NULL}};
	const size_t global[3] = {(t.ni + local[0] - 1) / local[0] * local[0],
				  (t.nj + local[1] - 1) / local[1] * local[1], (size_t)t.nk};
	tsr_ctx_opencl_launch(ctx, name, ka, 12, 3, global, local);
}

void stencil_halo_copy_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const stencil_copy_args_t *a = args;
	tsr_accessor_t src, dsts[STENCIL_MAX_DST];
	const char *froms[STENCIL_MAX_DST];

	if (!stencil_halo_view(ctx, args, arglen, &src, dsts, froms))
		return;
	/* destinations are halo and the source interior: the kernels may run in any order */
	for (int m = 0; m < a->ndst; m++) {
		const tsr_accessor_t *dst = &dsts[m];
		size_t ni = (size_t)(dst->hi[0] - dst->lo[0] + 1),
		       nj = (size_t)(dst->hi[1] - dst->lo[1] + 1),
		       nk = (size_t)(dst->hi[2] - dst->lo[2] + 1);
		if (dst->hi[0] < dst->lo[0] || dst->hi[1] < dst->lo[1] || dst->hi[2] < dst->lo[2])
			continue;
		const size_t es = src.elem_size;
		/* froms[m] is src.ptr advanced by the bytes from src's first element to the source
		 * of dst's first element (stencil_copy_source): with a cl_mem, only that distance
		 * means something */
		cl_ulong soff = src.offset + (cl_ulong)(froms[m] - (const char *)src.ptr),
			 doff = dst->offset;
		cl_long ssj = (cl_long)src.stride[1], ssk = (cl_long)src.stride[2];
		cl_long dsj = (cl_long)dst->stride[1], dsk = (cl_long)dst->stride[2];
		const char *name = es == 8   ? "stencil_copy_8"
				   : es == 4 ? "stencil_copy_4"
					     : "stencil_copy_1";
		if (es != 8 && es != 4) { /* bytes */
			ni *= es;
			ssj *= (cl_long)es, ssk *= (cl_long)es, dsj *= (cl_long)es,
				dsk *= (cl_long)es;
		}
		cl_mem sm = src.ptr, dm = dst->ptr;
		cl_int ini = (cl_int)ni, inj = (cl_int)nj, ink = (cl_int)nk;
		const tsr_kernel_arg_t ka[] = {TSR_KARG(sm),  TSR_KARG(soff), TSR_KARG(ssj),
					       TSR_KARG(ssk), TSR_KARG(dm),   TSR_KARG(doff),
					       TSR_KARG(dsj), TSR_KARG(dsk),  TSR_KARG(ini),
					       TSR_KARG(inj), TSR_KARG(ink)};
		if (launch_box(ctx, name, ka, 11, ni * nj * nk))
			return;
	}
}
#endif /* STARPU_USE_OPENCL */

int stencil_opencl_load(void)
{
#ifdef STARPU_USE_OPENCL
	return tsr_opencl_program("stencil", stencil_cl_source, NULL);
#else
	return TSR_OK;
#endif
}
