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

static int get(tsr_ctx_t *ctx, int req, tsr_field_t f, tsr_type_t type, tsr_privilege_t priv, tsr_accessor_t *a)
{
	int rc = tsr_ctx_accessor(ctx, req, f, type, priv, a);
	if (rc != TSR_OK)
		tsr_ctx_error(ctx, "%s", tsr_last_error());
	return rc;
}

static circuit_window_t window_of(const tsr_accessor_t *a)
{
	circuit_window_t w = {(float *)a->ptr, a->lo[0], a->hi[0]};
	return w;
}

extern "C" void circuit_calc_new_currents_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const circuit_args_t *a = (const circuit_args_t *)args;
	tsr_accessor_t in, out, ind, res, cap, cur, wv, pvt, shr, ghost;
	if (arglen != sizeof *a) {
		tsr_ctx_error(ctx, "task '%s': %zu bytes of arguments, expected %zu", tsr_ctx_task_name(ctx), arglen, sizeof *a);
		return;
	}
	if (get(ctx, CIRCUIT_CNC_WIRES, CIRCUIT_WIRE_IN, TSR_I32, TSR_READ, &in) ||
	    get(ctx, CIRCUIT_CNC_WIRES, CIRCUIT_WIRE_OUT, TSR_I32, TSR_READ, &out) ||
	    get(ctx, CIRCUIT_CNC_WIRES, CIRCUIT_WIRE_INDUCTANCE, TSR_F32, TSR_READ, &ind) ||
	    get(ctx, CIRCUIT_CNC_WIRES, CIRCUIT_WIRE_RESISTANCE, TSR_F32, TSR_READ, &res) ||
	    get(ctx, CIRCUIT_CNC_WIRES, CIRCUIT_WIRE_CAP, TSR_F32, TSR_READ, &cap) ||
	    get(ctx, CIRCUIT_CNC_CURRENTS, CIRCUIT_STATE_VALUE, TSR_F32, TSR_READ_WRITE, &cur) ||
	    get(ctx, CIRCUIT_CNC_VOLTAGES, CIRCUIT_STATE_VALUE, TSR_F32, TSR_READ_WRITE, &wv) ||
	    get(ctx, CIRCUIT_CNC_PRIVATE, CIRCUIT_NODE_VOLTAGE, TSR_F32, TSR_READ, &pvt) ||
	    get(ctx, CIRCUIT_CNC_SHARED, CIRCUIT_NODE_VOLTAGE, TSR_F32, TSR_READ, &shr) ||
	    get(ctx, CIRCUIT_CNC_GHOST, CIRCUIT_NODE_VOLTAGE, TSR_F32, TSR_READ, &ghost))
		return;
	node_windows win = {{window_of(&pvt), window_of(&shr), window_of(&ghost)}, 3};
	int64_t n = in.hi[0] - in.lo[0] + 1;
	cudaStream_t st = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	cnc_kernel<<<blocks_for(n), threads, 0, st>>>(n, (const int32_t *)in.ptr, (const int32_t *)out.ptr,
	                                             (const float *)ind.ptr, (const float *)res.ptr, (const float *)cap.ptr,
	                                             (float *)cur.ptr, cur.stride[1], (float *)wv.ptr, wv.stride[1], win,
	                                             a->dt, a->steps);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		tsr_ctx_error(ctx, "task '%s': kernel launch failed: %s", tsr_ctx_task_name(ctx), cudaGetErrorString(e));
}

/* Private charges READ_WRITE in place, shared and ghost charges REDUCE(sum) into the point task's
 * buffers, as on CPUs; the piece's own shared nodes are looked up before the ghost box. */
extern "C" void circuit_distribute_charge_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const circuit_args_t *a = (const circuit_args_t *)args;
	const tsr_privilege_t sum = TSR_REDUCE(TSR_SUM);
	tsr_accessor_t in, out, cur, pvt, shr, ghost;
	if (arglen != sizeof *a) {
		tsr_ctx_error(ctx, "task '%s': %zu bytes of arguments, expected %zu", tsr_ctx_task_name(ctx), arglen, sizeof *a);
		return;
	}
	if (get(ctx, CIRCUIT_DC_WIRES, CIRCUIT_WIRE_IN, TSR_I32, TSR_READ, &in) ||
	    get(ctx, CIRCUIT_DC_WIRES, CIRCUIT_WIRE_OUT, TSR_I32, TSR_READ, &out) ||
	    get(ctx, CIRCUIT_DC_CURRENTS, CIRCUIT_STATE_VALUE, TSR_F32, TSR_READ, &cur) ||
	    get(ctx, CIRCUIT_DC_PRIVATE, CIRCUIT_NODE_CHARGE, TSR_F32, TSR_READ_WRITE, &pvt) ||
	    get(ctx, CIRCUIT_DC_SHARED, CIRCUIT_NODE_CHARGE, TSR_F32, sum, &shr) ||
	    get(ctx, CIRCUIT_DC_GHOST, CIRCUIT_NODE_CHARGE, TSR_F32, sum, &ghost))
		return;
	node_windows win = {{window_of(&pvt), window_of(&shr), window_of(&ghost)}, 3};
	int64_t n = in.hi[0] - in.lo[0] + 1;
	const float *first = (const float *)cur.ptr;
	const float *last = first + (SEG - 1) * cur.stride[1];
	cudaStream_t st = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	dc_kernel<<<blocks_for(n), threads, 0, st>>>(n, (const int32_t *)in.ptr, (const int32_t *)out.ptr, first, last,
	                                             win, a->dt);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		tsr_ctx_error(ctx, "task '%s': kernel launch failed: %s", tsr_ctx_task_name(ctx), cudaGetErrorString(e));
}

/* The piece's private nodes, then its shared nodes: two kernels on the same stream. */
extern "C" void circuit_update_voltages_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t v[2], q[2], cap[2], leak[2];
	static const int state_req[2] = {CIRCUIT_UV_PVT_STATE, CIRCUIT_UV_SHR_STATE};
	static const int const_req[2] = {CIRCUIT_UV_PVT_CONST, CIRCUIT_UV_SHR_CONST};
	(void)args;
	(void)arglen;
	for (int k = 0; k < 2; k++)
		if (get(ctx, state_req[k], CIRCUIT_NODE_VOLTAGE, TSR_F32, TSR_READ_WRITE, &v[k]) ||
		    get(ctx, state_req[k], CIRCUIT_NODE_CHARGE, TSR_F32, TSR_READ_WRITE, &q[k]) ||
		    get(ctx, const_req[k], CIRCUIT_NODE_CAP, TSR_F32, TSR_READ, &cap[k]) ||
		    get(ctx, const_req[k], CIRCUIT_NODE_LEAKAGE, TSR_F32, TSR_READ, &leak[k]))
			return;
	cudaStream_t st = (cudaStream_t)tsr_ctx_cuda_stream(ctx);
	for (int k = 0; k < 2; k++) {
		int64_t n = v[k].hi[0] - v[k].lo[0] + 1;
		uv_kernel<<<blocks_for(n), threads, 0, st>>>(n, (float *)v[k].ptr, (float *)q[k].ptr, (const float *)cap[k].ptr,
		                                             (const float *)leak[k].ptr);
	}
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		tsr_ctx_error(ctx, "task '%s': kernel launch failed: %s", tsr_ctx_task_name(ctx), cudaGetErrorString(e));
}
