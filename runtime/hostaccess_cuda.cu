/* hostaccess_cuda.cu: CUDA bodies of the internal fill and copy tasks (hostaccess.c), so both
 * run where the data already is when a field lives on a GPU. Both are asynchronous on the
 * worker's stream (the codelets carry STARPU_CUDA_ASYNC). Compiled whenever CUDA is enabled;
 * configure guarantees nvcc when StarPU has CUDA. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stddef.h>

#include "tessera.h"

namespace {

/* Every element of a strided box gets the value of element 0 (which the host wrote first). */
template <typename T>
__global__ void fill_kernel(T *p, int64_t nx, int64_t ny, int64_t nz, int64_t sy, int64_t sz)
{
	const T v = p[0];
	const int64_t n = nx * ny * nz;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		int64_t x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
		if (i != 0)
			p[x + y * sy + z * sz] = v;
	}
}

/* Elements of any size: byte by byte from element 0. */
__global__ void fill_bytes_kernel(char *p, size_t es, int64_t nx, int64_t ny, int64_t nz, int64_t sy, int64_t sz)
{
	const int64_t n = nx * ny * nz;
	for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
		int64_t x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
		if (i == 0)
			continue;
		char *e = p + (x + y * sy + z * sz) * es;
		for (size_t b = 0; b < es; b++)
			e[b] = p[b];
	}
}

unsigned blocks_for(int64_t n)
{
	int64_t b = (n + 255) / 256;
	return b > 4096 ? 4096 : b < 1 ? 1 : (unsigned)b;
}

}   // namespace

/* a: accessor of the destination box on the device; value: elem_size bytes on the host.
 * Returns a cudaError_t (0 on success). */
extern "C" int tsr__cuda_fill(const tsr_accessor_t *a, const void *value, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	int64_t nx = a->hi[0] - a->lo[0] + 1, ny = a->hi[1] - a->lo[1] + 1, nz = a->hi[2] - a->lo[2] + 1;
	/* value is in the task's cl_arg, which outlives the stream's work only until the task ends:
	 * StarPU ends an async CUDA task after its stream drained, so the copy has been done by then. */
	cudaError_t e = cudaMemcpyAsync(a->ptr, value, a->elem_size, cudaMemcpyHostToDevice, st);
	if (e != cudaSuccess)
		return e;
	unsigned nb = blocks_for(nx * ny * nz);
	switch (a->elem_size) {
	case 1: fill_kernel<uint8_t><<<nb, 256, 0, st>>>((uint8_t *)a->ptr, nx, ny, nz, a->stride[1], a->stride[2]); break;
	case 2: fill_kernel<uint16_t><<<nb, 256, 0, st>>>((uint16_t *)a->ptr, nx, ny, nz, a->stride[1], a->stride[2]); break;
	case 4: fill_kernel<uint32_t><<<nb, 256, 0, st>>>((uint32_t *)a->ptr, nx, ny, nz, a->stride[1], a->stride[2]); break;
	case 8: fill_kernel<uint64_t><<<nb, 256, 0, st>>>((uint64_t *)a->ptr, nx, ny, nz, a->stride[1], a->stride[2]); break;
	default:
		fill_bytes_kernel<<<nb, 256, 0, st>>>((char *)a->ptr, a->elem_size, nx, ny, nz, a->stride[1], a->stride[2]);
	}
	return cudaGetLastError();
}

/* Copy box s to box d (same extents, same element size), both on the device: one 2-D copy per
 * plane, since the rows of a subregion are strided. Returns a cudaError_t. */
extern "C" int tsr__cuda_copy(const tsr_accessor_t *d, const tsr_accessor_t *s, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	size_t es = s->elem_size;
	size_t row = (size_t)(s->hi[0] - s->lo[0] + 1) * es;
	size_t ny = (size_t)(s->hi[1] - s->lo[1] + 1), nz = (size_t)(s->hi[2] - s->lo[2] + 1);
	for (size_t z = 0; z < nz; z++) {
		char *dp = (char *)d->ptr + z * d->stride[2] * es;
		const char *sp = (const char *)s->ptr + z * s->stride[2] * es;
		cudaError_t e = cudaMemcpy2DAsync(dp, d->stride[1] * es, sp, s->stride[1] * es, row, ny,
		                                  cudaMemcpyDeviceToDevice, st);
		if (e != cudaSuccess)
			return e;
	}
	return cudaSuccess;
}
