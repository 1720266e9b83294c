/* hello_device_cuda.cu: the CUDA variants of hello-device's tasks. A variant launches its kernel on
 * the worker's stream and returns without waiting (Tessera waits for the stream); accessors,
 * futures and the return slot are device addresses there. */
#include <cuda_runtime.h>
#include <stdint.h>

#include <tessera.h>

static __global__ void scale_kernel(double *x, int64_t n, const double *factor)
{
	int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= *factor;
}

/* One thread, in the CPU's order, so that every variant gives the same bits; it folds into the
 * slot (TSR_SUM's identity, 0, on entry). */
static __global__ void sum_kernel(const double *x, int64_t n, double *ret)
{
	double s = 0.0;
	for (int64_t i = 0; i < n; i++)
		s += x[i];
	*ret += s;
}

/* A launch error fails the task with the kernel's name. */
static void check_launch(tsr_ctx_t *ctx, const char *kernel)
{
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		tsr_ctx_error(ctx, "CUDA kernel %s: %s", kernel, cudaGetErrorString(e));
}

extern "C" void scale_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	const double *factor = (const double *)tsr_ctx_future(ctx, 1);
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &x) != TSR_OK || !factor)
		return;
	int64_t n = x.hi[0] - x.lo[0] + 1;
	cudaStream_t stream = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	scale_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>((double *)x.ptr, n, factor);
	check_launch(ctx, "scale_kernel");
}

extern "C" void sum_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	double *slot = (double *)tsr_ctx_return_slot(ctx);
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &x) != TSR_OK || !slot)
		return;
	int64_t n = x.hi[0] - x.lo[0] + 1;
	cudaStream_t stream = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	sum_kernel<<<1, 1, 0, stream>>>((const double *)x.ptr, n, slot);
	check_launch(ctx, "sum_kernel");
}
