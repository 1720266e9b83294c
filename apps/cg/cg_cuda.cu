/* cg_cuda.cu: CUDA variants of the conjugate-gradient tasks (apps/cg/cg_kernels.h). Every kernel is
 * launched asynchronously on the worker's stream; futures and return slots are device pointers. */
#include "config.h"
#include <cuda_runtime.h>
#include <tessera.h>
#include "cg_kernels.h"

#define CG_THREADS 256

static cudaStream_t stream_of(tsr_ctx_t *ctx)
{
	return (cudaStream_t)tsr_ctx_cuda_stream(ctx);
}

static unsigned blocks_for(int64_t n)
{
	int64_t b = (n + CG_THREADS - 1) / CG_THREADS;
	if (b > 65535 * 32)
		b = 65535 * 32;   /* grid-stride loops cover the rest */
	return (unsigned)(b > 0 ? b : 1);
}

static void check_launch(tsr_ctx_t *ctx, const char *kernel)
{
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		tsr_ctx_error(ctx, "CUDA kernel %s: %s", kernel, cudaGetErrorString(e));
}

/* ------------------------------------------------------------ kernels */

static __global__ void axpy_kernel(int64_t n, double scale, const double *c, const double *x, double *y)
{
	const double a = scale * *c;
	if (a == 0.0)
		return;   /* frozen after convergence: leave y bit-identical, as the CPU variant does */
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		y[i] += a * x[i];
}

static __global__ void xpay_kernel(int64_t n, const double *c, const double *x, double *y)
{
	const double a = *c;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		y[i] = x[i] + a * y[i];
}

/* Each block reduces its share in shared memory and folds it into the return slot atomically
 * (the slot holds 0, the identity of TSR_SUM, on entry). */
static __global__ void dot_kernel(int64_t n, const double *a, const double *b, double *out)
{
	__shared__ double part[CG_THREADS];
	double s = 0.0;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
		s += a[i] * b[i];
	part[threadIdx.x] = s;
	__syncthreads();
	for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			part[threadIdx.x] += part[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		atomicAdd(out, part[0]);
}

/* One thread per row: Poisson rows hold 5 or 7 nonzeros, too few for a warp per row. */
static __global__ void spmv_csr_kernel(int64_t nrows, const int64_t *rp, const int32_t *col, const double *val,
                                int64_t nzlo, const double *x, int64_t xlo, double *y)
{
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < nrows; i += (int64_t)gridDim.x * blockDim.x) {
		double s = 0.0;
		for (int64_t k = rp[i] - nzlo; k < rp[i + 1] - nzlo; k++)
			s += val[k] * x[col[k] - xlo];
		y[i] = s;
	}
}

/* Same subtraction order as the CPU variant: west, east, y-1, y+1, z-1, z+1. */
static __global__ void stencil_kernel(int64_t lo, int64_t n, int64_t nx, int64_t ny, int64_t nz, int dim,
                               const double *x, int64_t xlo, double *y)
{
	for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n; t += (int64_t)gridDim.x * blockDim.x) {
		const int64_t g = lo + t, ix = g % nx, line = g / nx, iy = line % ny, iz = line / ny;
		const double *c = x + (g - xlo);
		double v = 2.0 * dim * c[0];
		if (ix > 0) v -= c[-1];
		if (ix < nx - 1) v -= c[1];
		if (iy > 0) v -= c[-nx];
		if (iy < ny - 1) v -= c[nx];
		if (dim == 3) {
			if (iz > 0) v -= c[-nx * ny];
			if (iz < nz - 1) v -= c[nx * ny];
		}
		y[t] = v;
	}
}

static __global__ void alpha_kernel(const cg_state_t *s, const double *pAp, double *out)
{
	*out = cg_alpha_value(s, *pAp);
}

static __global__ void state_first_kernel(const double *rr, double tol2, cg_state_t *out)
{
	*out = cg_state_first(*rr, tol2);
}

static __global__ void state_next_kernel(const cg_state_t *prev, const double *rr, cg_state_t *out)
{
	*out = cg_state_next(prev, *rr);
}

/* ------------------------------------------------------------ variants */

extern "C" void cg_axpy_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const cg_axpy_args_t *a = (const cg_axpy_args_t *)args;
	tsr_accessor_t x, y;
	const double *c;
	if (!cg_update_view(ctx, &x, &y, &c))
		return;
	const int64_t n = y.hi[0] - y.lo[0] + 1;
	axpy_kernel<<<blocks_for(n), CG_THREADS, 0, stream_of(ctx)>>>(n, a->scale, c, &TSR_AT1(&x, const double, y.lo[0]),
	                                                              (double *)y.ptr);
	check_launch(ctx, "axpy_kernel");
}

extern "C" void cg_xpay_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x, y;
	const double *c;
	if (!cg_update_view(ctx, &x, &y, &c))
		return;
	const int64_t n = y.hi[0] - y.lo[0] + 1;
	xpay_kernel<<<blocks_for(n), CG_THREADS, 0, stream_of(ctx)>>>(n, c, &TSR_AT1(&x, const double, y.lo[0]),
	                                                              (double *)y.ptr);
	check_launch(ctx, "xpay_kernel");
}

extern "C" void cg_dot_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t u, v;
	double *out = (double *)tsr_ctx_return_slot(ctx);
	if (!cg_dot_view(ctx, &u, &v))
		return;
	if (!out) {
		tsr_ctx_error(ctx, "no return slot (launch the dot with a result future)");
		return;
	}
	const int64_t n = u.hi[0] - u.lo[0] + 1;
	unsigned nb = blocks_for(n);
	if (nb > 1024)
		nb = 1024;   /* fewer atomics; the grid-stride loop covers the rest */
	dot_kernel<<<nb, CG_THREADS, 0, stream_of(ctx)>>>(n, (const double *)u.ptr, &TSR_AT1(&v, const double, u.lo[0]), out);
	check_launch(ctx, "dot_kernel");
}

extern "C" void cg_spmv_csr_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t rp, col, val, x, y;
	if (!cg_spmv_view(ctx, &rp, &col, &val, &x, &y))
		return;
	const int64_t lo = y.lo[0], hi = y.hi[0];
	const int64_t n = hi - lo + 1;
	/* The row pointers live on the device: the nonzero range is checked by construction in apps/cg. */
	spmv_csr_kernel<<<blocks_for(n), CG_THREADS, 0, stream_of(ctx)>>>(n, &TSR_AT1(&rp, const int64_t, lo),
	                                                                  (const int32_t *)col.ptr, (const double *)val.ptr,
	                                                                  col.lo[0], (const double *)x.ptr, x.lo[0],
	                                                                  (double *)y.ptr);
	check_launch(ctx, "spmv_csr_kernel");
}

static void stencil_cuda(tsr_ctx_t *ctx, const void *args, int dim)
{
	const cg_stencil_args_t *a = (const cg_stencil_args_t *)args;
	tsr_accessor_t x, y;
	if (!cg_stencil_view(ctx, args, dim, &x, &y))
		return;
	const int64_t n = y.hi[0] - y.lo[0] + 1;
	stencil_kernel<<<blocks_for(n), CG_THREADS, 0, stream_of(ctx)>>>(y.lo[0], n, a->nx, a->ny, dim == 2 ? 1 : a->nz,
	                                                                 dim, (const double *)x.ptr, x.lo[0],
	                                                                 (double *)y.ptr);
	check_launch(ctx, "stencil_kernel");
}

extern "C" void cg_stencil2d_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	stencil_cuda(ctx, args, 2);
}

extern "C" void cg_stencil3d_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	stencil_cuda(ctx, args, 3);
}

extern "C" void cg_alpha_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const cg_state_t *s = (const cg_state_t *)tsr_ctx_future(ctx, 0);
	const double *pAp = (const double *)tsr_ctx_future(ctx, 1);
	double *out = (double *)tsr_ctx_return_slot(ctx);
	if (!s || !pAp || !out)
		return;
	alpha_kernel<<<1, 1, 0, stream_of(ctx)>>>(s, pAp, out);
	check_launch(ctx, "alpha_kernel");
}

extern "C" void cg_state_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const cg_state_args_t *a = (const cg_state_args_t *)args;
	cg_state_t *out = (cg_state_t *)tsr_ctx_return_slot(ctx);
	if (!out)
		return;
	if (a->first) {
		const double *rr = (const double *)tsr_ctx_future(ctx, 0);
		if (!rr)
			return;
		state_first_kernel<<<1, 1, 0, stream_of(ctx)>>>(rr, a->tol2, out);
	} else {
		const cg_state_t *prev = (const cg_state_t *)tsr_ctx_future(ctx, 0);
		const double *rr = (const double *)tsr_ctx_future(ctx, 1);
		if (!prev || !rr)
			return;
		state_next_kernel<<<1, 1, 0, stream_of(ctx)>>>(prev, rr, out);
	}
	check_launch(ctx, "state_kernel");
}
