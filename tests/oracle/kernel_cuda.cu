/* kernel_cuda.cu: the oracle's task body on the GPU. kernel.c is compiled here a second time with
 * its task-body functions made __host__ __device__, so the CUDA variant runs the very code the CPU
 * variant and the sequential interpreter run. One GPU thread runs it: the oracle's regions hold at
 * most 12^3 points, and what is under test is the runtime's data movement, not the kernel's speed. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "oracle.h"

/* kernel.c's external functions get other names here, so the host program links both copies
 * (a namespace would not do: argument-dependent lookup still finds the C declarations). */
#define OR_HD __host__ __device__
#define or_to_i64 orgpu_to_i64
#define or_from_i64 orgpu_from_i64
#define or_type_limit orgpu_type_limit
#define or_identity orgpu_identity
#define or_fold orgpu_fold
#define or_value_str orgpu_value_str
#define or_box_first orgpu_box_first
#define or_box_next orgpu_box_next
#define or_elem_offset orgpu_elem_offset
#define or_kernel orgpu_kernel
#define or_host_write orgpu_host_write
#define or_kargs orgpu_kargs
#define or_point_fails orgpu_point_fails
#include "kernel.c"

namespace {

/* Kernel parameters are passed by value: the arrays travel inside structs. */
struct acc_set { tsr_accessor_t a[OR_MAXREQ][OR_MAXF]; };
struct fut_set { const void *f[OR_MAXREQ]; };

__device__ size_t ret_size(int32_t t)
{
	return t == TSR_F64 || t == TSR_I64 ? 8 : 4;
}

__global__ void oracle_kernel(or_kargs_t a, int pdim, int64_t p0, int64_t p1, int64_t p2, acc_set acc, fut_set fut,
                              void *slot)
{
	int64_t point[3] = {p0, p1, p2};
	uint64_t ret = 0;
	orgpu_kernel(&a, pdim, point, acc.a, fut.f, &ret);
	if (!slot || a.ret_type == TSR_NONE)
		return;
	/* an index launch's reduction slot starts at the operator's identity: fold into it, as
	 * tsr_ctx_return does on a CPU; a single launch's slot is written */
	if (a.ret_op)
		orgpu_fold((tsr_type_t)a.ret_type, TSR_REDOP_ID(a.ret_op), slot, &ret);
	else
		memcpy(slot, &ret, ret_size(a.ret_type));
}

}   // namespace

extern "C" void or_cuda_variant(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	acc_set acc;
	fut_set fut;
	memset(&fut, 0, sizeof fut);
	if (or_gather(ctx, args, arglen, acc.a, fut.f))
		return;
	const or_kargs_t *a = (const or_kargs_t *)args;
	int64_t point[3] = {0, 0, 0};
	int pdim = tsr_ctx_point(ctx, point);
	cudaStream_t st = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	oracle_kernel<<<1, 1, 0, st>>>(*a, pdim < 0 ? 0 : pdim, point[0], point[1], point[2], acc, fut,
	                               tsr_ctx_return_slot(ctx));
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		tsr_ctx_error(ctx, "oracle task: CUDA launch failed: %s", cudaGetErrorString(e));
}
