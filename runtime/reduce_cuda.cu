/* reduce_cuda.cu: CUDA versions of the reduction init/fold codelets (reduce.c), so REDUCE
 * privileges and index-launch futures work on GPU workers. Compiled by nvcc whenever CUDA is
 * enabled; the bodies exist only when StarPU itself was built with CUDA. */
#include <starpu.h>
#include <stdint.h>
#include <float.h>
#include <math.h>

#ifdef STARPU_USE_CUDA
struct shape { char *ptr; uint32_t nx, ny, nz, ldy, ldz; };

static shape shape_of(void *iface)
{
	shape s;
	if (((struct starpu_block_interface *)iface)->id == STARPU_BLOCK_INTERFACE_ID) {
		struct starpu_block_interface *b = (struct starpu_block_interface *)iface;
		s.ptr = (char *)b->ptr; s.nx = b->nx; s.ny = b->ny; s.nz = b->nz; s.ldy = b->ldy; s.ldz = b->ldz;
	} else {
		struct starpu_variable_interface *v = (struct starpu_variable_interface *)iface;
		s.ptr = (char *)v->ptr; s.nx = s.ny = s.nz = 1; s.ldy = s.ldz = 1;
	}
	return s;
}

template <typename T> struct lim;
template <> struct lim<float> { __device__ static float hi() { return INFINITY; } __device__ static float lo() { return -INFINITY; } };
template <> struct lim<double> { __device__ static double hi() { return INFINITY; } __device__ static double lo() { return -INFINITY; } };
template <> struct lim<int32_t> { __device__ static int32_t hi() { return INT32_MAX; } __device__ static int32_t lo() { return INT32_MIN; } };
template <> struct lim<int64_t> { __device__ static int64_t hi() { return INT64_MAX; } __device__ static int64_t lo() { return INT64_MIN; } };

/* op: 1 sum, 2 prod, 3 min, 4 max (tessera.h's tsr_redop_t) */
template <typename T, int OP> __device__ T identity()
{
	return OP == 1 ? T(0) : OP == 2 ? T(1) : OP == 3 ? lim<T>::hi() : lim<T>::lo();
}
template <typename T, int OP> __device__ T fold(T a, T b)
{
	return OP == 1 ? a + b : OP == 2 ? a * b : OP == 3 ? (b < a ? b : a) : (b > a ? b : a);
}

template <typename T, int OP> __global__ void init_kernel(shape d)
{
	uint64_t n = (uint64_t)d.nx * d.ny * d.nz;
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t x = i % d.nx, y = (i / d.nx) % d.ny, z = i / ((uint64_t)d.nx * d.ny);
		((T *)d.ptr)[x + y * d.ldy + z * d.ldz] = identity<T, OP>();
	}
}

template <typename T, int OP> __global__ void redux_kernel(shape d, shape s)
{
	uint64_t n = (uint64_t)d.nx * d.ny * d.nz;
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t x = i % d.nx, y = (i / d.nx) % d.ny, z = i / ((uint64_t)d.nx * d.ny);
		T *p = (T *)d.ptr + x + y * d.ldy + z * d.ldz;
		*p = fold<T, OP>(*p, ((const T *)s.ptr)[x + y * s.ldy + z * s.ldz]);
	}
}

static unsigned blocks_for(const shape &d)
{
	uint64_t n = (uint64_t)d.nx * d.ny * d.nz;
	uint64_t b = (n + 255) / 256;
	return b > 1024 ? 1024 : b < 1 ? 1 : (unsigned)b;
}

template <typename T, int OP> static void run(int init, void *dst, void *src)
{
	shape d = shape_of(dst);
	cudaStream_t st = starpu_cuda_get_local_stream();
	if (init)
		init_kernel<T, OP><<<blocks_for(d), 256, 0, st>>>(d);
	else
		redux_kernel<T, OP><<<blocks_for(d), 256, 0, st>>>(d, shape_of(src));
}

template <typename T> static void run_op(int op, int init, void *dst, void *src)
{
	switch (op) {
	case 1: run<T, 1>(init, dst, src); break;
	case 2: run<T, 2>(init, dst, src); break;
	case 3: run<T, 3>(init, dst, src); break;
	case 4: run<T, 4>(init, dst, src); break;
	}
}
#endif

/* type: tsr_type_t (1 f32, 2 f64, 3 i32, 4 i64); init: 1 = set identity in dst, 0 = fold src into dst. */
extern "C" void tsr__cuda_redop(int type, int op, int init, void *dst, void *src)
{
#ifdef STARPU_USE_CUDA
	switch (type) {
	case 1: run_op<float>(op, init, dst, src); break;
	case 2: run_op<double>(op, init, dst, src); break;
	case 3: run_op<int32_t>(op, init, dst, src); break;
	case 4: run_op<int64_t>(op, init, dst, src); break;
	}
#else
	(void)type; (void)op; (void)init; (void)dst; (void)src;
#endif
}
