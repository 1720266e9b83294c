/* stencil_cuda.cu: CUDA variants of the stencil tasks (initial condition, fused diffusion step, halo
 * copy). They run asynchronously on the worker's stream that Tessera hands them; data stays on the
 * GPU between steps because every step is a task. */
#include <cuda_runtime.h>
#include <stdint.h>

#include <tessera.h>
#include "stencil.h"

namespace {

/* Rounded operations that nvcc never contracts into FMAs: the GPU then sums the Laplacians in the
 * same order and with the same roundings as the CPU kernel and the sequential reference, so f64
 * results are bit-identical on every device. */
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }

template <typename T>
__device__ __forceinline__ T lap5(T c, T w, T e, T s, T n)
{
	return add_rn(add_rn(add_rn(add_rn(mul_rn((T)-4, c), w), e), s), n);
}

const int BX = 32, BY = 8;   /* output points per block; tmp covers (BY + 2) x (BX + 2) */

/* One block computes a BX x BY patch of one plane: tmp = lap(in) on the patch grown by one point
 * goes to shared memory, then out = in - alpha * lap(tmp). in points at the tile's first point. */
template <typename T>
__global__ void diffusion_kernel(const T *__restrict__ in, ptrdiff_t isj, ptrdiff_t isk, T *__restrict__ out,
                                 ptrdiff_t osj, ptrdiff_t osk, int ni, int nj, int nk, T alpha)
{
	__shared__ T tmp[BY + 2][BX + 2];
	const int i0 = blockIdx.x * BX, j0 = blockIdx.y * BY;
	const int tid = threadIdx.y * BX + threadIdx.x;
	for (int k = blockIdx.z; k < nk; k += gridDim.z) {
		const T *ink = in + k * isk;
		for (int x = tid; x < (BY + 2) * (BX + 2); x += BX * BY) {
			int tj = x / (BX + 2), ti = x % (BX + 2);
			int i = i0 + ti - 1, j = j0 + tj - 1;
			if (i <= ni && j <= nj) {   /* i, j >= -1 always */
				const T *c = ink + j * isj + i;
				tmp[tj][ti] = lap5(c[0], c[-1], c[1], c[-isj], c[isj]);
			}
		}
		__syncthreads();
		const int i = i0 + threadIdx.x, j = j0 + threadIdx.y;
		if (i < ni && j < nj) {
			const int ti = threadIdx.x + 1, tj = threadIdx.y + 1;
			T l = lap5(tmp[tj][ti], tmp[tj][ti - 1], tmp[tj][ti + 1], tmp[tj - 1][ti], tmp[tj + 1][ti]);
			out[k * osk + j * osj + i] = sub_rn(ink[j * isj + i], mul_rn(alpha, l));
		}
		__syncthreads();
	}
}

template <typename T>
__global__ void init_kernel(T *f, ptrdiff_t sj, ptrdiff_t sk, int64_t lo0, int64_t lo1, int64_t lo2, int ni,
                            int nj, int nk, int nx, int ny, int nz)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= ni || j >= nj)
		return;
	for (int k = blockIdx.z; k < nk; k += gridDim.z) {
		int64_t gi = lo0 + i, gj = lo1 + j, gk = lo2 + k;
		f[k * sk + j * sj + i] = STENCIL_INITIAL_IS_ONE(nx, ny, nz, gk, gj, gi) ? (T)1 : (T)0;
	}
}

template <typename T>
__global__ void copy_kernel(const T *src, ptrdiff_t ssj, ptrdiff_t ssk, T *dst, ptrdiff_t dsj, ptrdiff_t dsk,
                            int ni, int nj, int nk)
{
	const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
	if (i >= ni || j >= nj)
		return;
	for (int k = blockIdx.z; k < nk; k += gridDim.z)
		dst[k * dsk + j * dsj + i] = src[k * ssk + j * ssj + i];
}

dim3 grid_for(int ni, int nj, int nk, int bx, int by)
{
	return dim3((unsigned)((ni + bx - 1) / bx), (unsigned)((nj + by - 1) / by), (unsigned)(nk < 65535 ? nk : 65535));
}

/* Kernel launches are asynchronous: only launch errors are seen here; errors during execution
 * surface at the next synchronization StarPU makes on the stream. */
void check_launch(tsr_ctx_t *ctx, const char *task)
{
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		tsr_ctx_error(ctx, "%s: CUDA kernel launch failed: %s", task, cudaGetErrorString(e));
}

}  // namespace

extern "C" void stencil_init_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const stencil_init_args_t *a = (const stencil_init_args_t *)args;
	cudaStream_t stream = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	tsr_accessor_t f;

	if (!stencil_init_view(ctx, args, arglen, &f))
		return;
	int ni = (int)(f.hi[0] - f.lo[0] + 1), nj = (int)(f.hi[1] - f.lo[1] + 1), nk = (int)(f.hi[2] - f.lo[2] + 1);
	dim3 block(32, 8), grid = grid_for(ni, nj, nk, 32, 8);
	if (f.type == TSR_F64)
		init_kernel<double><<<grid, block, 0, stream>>>((double *)f.ptr, (ptrdiff_t)f.stride[1], (ptrdiff_t)f.stride[2],
		                                                f.lo[0], f.lo[1], f.lo[2], ni, nj, nk, a->nx, a->ny, a->nz);
	else
		init_kernel<float><<<grid, block, 0, stream>>>((float *)f.ptr, (ptrdiff_t)f.stride[1], (ptrdiff_t)f.stride[2],
		                                               f.lo[0], f.lo[1], f.lo[2], ni, nj, nk, a->nx, a->ny, a->nz);
	check_launch(ctx, "stencil_init");
}

extern "C" void stencil_diffusion_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const stencil_args_t *a = (const stencil_args_t *)args;
	cudaStream_t stream = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	tsr_accessor_t in, out;
	stencil_tile_t t;

	if (!stencil_diffusion_view(ctx, args, arglen, &in, &out, &t))
		return;
	dim3 block(BX, BY), grid = grid_for(t.ni, t.nj, t.nk, BX, BY);
	if (in.type == TSR_F64)
		diffusion_kernel<double><<<grid, block, 0, stream>>>((const double *)in.ptr + t.in_off, t.isj, t.isk,
		                                                     (double *)out.ptr, t.osj, t.osk, t.ni, t.nj, t.nk,
		                                                     a->alpha);
	else
		diffusion_kernel<float><<<grid, block, 0, stream>>>((const float *)in.ptr + t.in_off, t.isj, t.isk,
		                                                    (float *)out.ptr, t.osj, t.osk, t.ni, t.nj, t.nk,
		                                                    (float)a->alpha);
	check_launch(ctx, "stencil_diffusion");
}

extern "C" void stencil_halo_copy_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const stencil_copy_args_t *a = (const stencil_copy_args_t *)args;
	cudaStream_t stream = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	tsr_accessor_t src, dsts[STENCIL_MAX_DST];
	const char *froms[STENCIL_MAX_DST];

	if (!stencil_halo_view(ctx, args, arglen, &src, dsts, froms))
		return;
	/* destinations are halo and the source interior: the kernels may run in any order */
	for (int m = 0; m < a->ndst; m++) {
		const tsr_accessor_t &dst = dsts[m];
		const char *from = froms[m];
		int ni = (int)(dst.hi[0] - dst.lo[0] + 1), nj = (int)(dst.hi[1] - dst.lo[1] + 1), nk = (int)(dst.hi[2] - dst.lo[2] + 1);
		if (ni <= 0 || nj <= 0 || nk <= 0)
			continue;
		ptrdiff_t ssj = (ptrdiff_t)src.stride[1], ssk = (ptrdiff_t)src.stride[2];
		ptrdiff_t dsj = (ptrdiff_t)dst.stride[1], dsk = (ptrdiff_t)dst.stride[2];
		ptrdiff_t es = (ptrdiff_t)src.elem_size;
		dim3 block(32, 8), grid = grid_for(ni, nj, nk, 32, 8);
		if (es == 8)
			copy_kernel<unsigned long long><<<grid, block, 0, stream>>>((const unsigned long long *)from, ssj, ssk,
			                                                            (unsigned long long *)dst.ptr, dsj, dsk, ni, nj, nk);
		else if (es == 4)
			copy_kernel<unsigned int><<<grid, block, 0, stream>>>((const unsigned int *)from, ssj, ssk,
			                                                      (unsigned int *)dst.ptr, dsj, dsk, ni, nj, nk);
		else {
			grid = grid_for(ni * (int)es, nj, nk, 32, 8);
			copy_kernel<unsigned char><<<grid, block, 0, stream>>>((const unsigned char *)from, ssj * es, ssk * es,
			                                                       (unsigned char *)dst.ptr, dsj * es, dsk * es,
			                                                       ni * (int)es, nj, nk);
		}
		check_launch(ctx, "stencil_halo_copy");
	}
}
