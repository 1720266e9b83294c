/* circuit_cuda.cu: CUDA variants of the circuit simulation's three tasks, one thread per wire or
 * node, launched asynchronously on the worker's stream. */
#include <cuda_runtime.h>
#include <stdint.h>

#include <tessera.h>

#include "circuit.h"

#define SEG CIRCUIT_SEGMENTS

/* The arithmetic uses the _rn intrinsics, which nvcc never fuses into FMAs: each operation is then
 * the IEEE float operation of the CPU kernels, in the same order, and a wire computes the same bits
 * on either kind of worker. (Legion's circuit_gpu.cu lets nvcc contract, and subtracts the segment
 * voltages in the opposite order from its circuit_cpu.cc; we follow circuit_cpu.cc.) */
struct node_windows {
	circuit_window_t w[3];
	int n;
};

__device__ __forceinline__ float *find_node(const node_windows &win, int64_t g)
{
	/* unrolled with constant indices, so that the windows stay in registers (no local memory) */
#pragma unroll
	for (int k = 0; k < 3; k++)
		if (k < win.n && g >= win.w[k].lo && g <= win.w[k].hi)
			return win.w[k].v + (g - win.w[k].lo);
	return NULL;
}

__global__ void cnc_kernel(int64_t n, const int32_t *in, const int32_t *out, const float *ind, const float *res,
                           const float *cap, float *cur, size_t cur_ld, float *wv, size_t wv_ld, node_windows win,
                           float dt, int steps)
{
	int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (w >= n)
		return;
	float ti[SEG], oi[SEG], tv[SEG + 1], ov[SEG - 1];
#pragma unroll
	for (int s = 0; s < SEG; s++)
		ti[s] = oi[s] = cur[s * cur_ld + w];
#pragma unroll
	for (int s = 0; s < SEG - 1; s++)
		tv[s + 1] = ov[s] = wv[s * wv_ld + w];
	/* The host checked that every wire end lies in one of the windows; a miss reads 0 as on CPUs. */
	const float *pin = find_node(win, in[w]), *pout = find_node(win, out[w]);
	tv[0] = pin ? *pin : 0.0f;
	tv[SEG] = pout ? *pout : 0.0f;
	const float recip_dt = __fdiv_rn(1.0f, dt);
	const float inductance = ind[w];
	const float recip_resistance = __fdiv_rn(1.0f, res[w]);
	const float recip_capacitance = __fdiv_rn(1.0f, cap[w]);
	for (int j = 0; j < steps; j++) {
#pragma unroll
		for (int s = 0; s < SEG; s++) {
			float dv = __fsub_rn(tv[s + 1], tv[s]);
			float di = __fmul_rn(__fmul_rn(inductance, __fsub_rn(ti[s], oi[s])), recip_dt);
			ti[s] = __fmul_rn(__fsub_rn(dv, di), recip_resistance);
		}
#pragma unroll
		for (int s = 0; s < SEG - 1; s++) {
			float dq = __fmul_rn(dt, __fsub_rn(ti[s], ti[s + 1]));
			tv[s + 1] = __fadd_rn(ov[s], __fmul_rn(dq, recip_capacitance));
		}
	}
#pragma unroll
	for (int s = 0; s < SEG; s++)
		cur[s * cur_ld + w] = ti[s];
#pragma unroll
	for (int s = 0; s < SEG - 1; s++)
		wv[s * wv_ld + w] = tv[s + 1];
}

/* Wires of one piece share nodes: the adds are atomic (their order, hence the rounding of a sum,
 * is not fixed, as with Legion's GPU reductions). */
__global__ void dc_kernel(int64_t n, const int32_t *in, const int32_t *out, const float *cur_first,
                          const float *cur_last, node_windows win, float dt)
{
	int64_t w = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (w >= n)
		return;
	float *pin = find_node(win, in[w]), *pout = find_node(win, out[w]);
	if (pin)
		atomicAdd(pin, __fmul_rn(-dt, cur_first[w]));
	if (pout)
		atomicAdd(pout, __fmul_rn(dt, cur_last[w]));
}

__global__ void uv_kernel(int64_t n, float *voltage, float *charge, const float *cap, const float *leakage)
{
	int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = __fadd_rn(voltage[i], __fdiv_rn(charge[i], cap[i]));
	voltage[i] = __fmul_rn(v, __fsub_rn(1.0f, leakage[i]));
	charge[i] = 0.0f;
}

static const int threads = 256;

static unsigned blocks_for(int64_t n)
{
	return (unsigned)((n + threads - 1) / threads);
}

static void check_launch(tsr_ctx_t *ctx)
{
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		tsr_ctx_error(ctx, "task '%s': kernel launch failed: %s", tsr_ctx_task_name(ctx), cudaGetErrorString(e));
}

static node_windows windows(const circuit_window_t *w)
{
	node_windows win = {{w[0], w[1], w[2]}, 3};
	return win;
}

extern "C" void circuit_calc_new_currents_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const circuit_args_t *a = (const circuit_args_t *)args;
	circuit_cnc_view_t v;
	if (circuit_cnc_view(ctx, arglen, &v))
		return;
	int64_t n = v.in.hi[0] - v.in.lo[0] + 1;
	cudaStream_t st = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	cnc_kernel<<<blocks_for(n), threads, 0, st>>>(n, (const int32_t *)v.in.ptr, (const int32_t *)v.out.ptr,
	                                             (const float *)v.ind.ptr, (const float *)v.res.ptr,
	                                             (const float *)v.cap.ptr, (float *)v.cur.ptr, v.cur.stride[1],
	                                             (float *)v.wv.ptr, v.wv.stride[1], windows(v.win), a->dt, a->steps);
	check_launch(ctx);
}

/* Private charges READ_WRITE in place, shared and ghost charges REDUCE(sum) into the point task's
 * buffers, as on CPUs; the piece's own shared nodes are looked up before the ghost box. */
extern "C" void circuit_distribute_charge_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const circuit_args_t *a = (const circuit_args_t *)args;
	circuit_dc_view_t v;
	if (circuit_dc_view(ctx, arglen, &v))
		return;
	int64_t n = v.in.hi[0] - v.in.lo[0] + 1;
	const float *first = (const float *)v.cur.ptr;
	const float *last = first + (SEG - 1) * v.cur.stride[1];
	cudaStream_t st = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	dc_kernel<<<blocks_for(n), threads, 0, st>>>(n, (const int32_t *)v.in.ptr, (const int32_t *)v.out.ptr, first, last,
	                                             windows(v.win), a->dt);
	check_launch(ctx);
}

/* The piece's private nodes, then its shared nodes: two kernels on the same stream. */
extern "C" void circuit_update_voltages_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	circuit_uv_view_t v;
	(void)args;
	(void)arglen;
	if (circuit_uv_view(ctx, &v))
		return;
	cudaStream_t st = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	for (int k = 0; k < 2; k++) {
		int64_t n = v.v[k].hi[0] - v.v[k].lo[0] + 1;
		uv_kernel<<<blocks_for(n), threads, 0, st>>>(n, (float *)v.v[k].ptr, (float *)v.q[k].ptr,
		                                             (const float *)v.cap[k].ptr, (const float *)v.leak[k].ptr);
	}
	check_launch(ctx);
}
