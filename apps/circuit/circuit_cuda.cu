/* circuit_cuda.cu: CUDA variants of the circuit simulation's three tasks, one thread per wire, wire
 * end or node, launched asynchronously on the worker's stream. */
#include <cuda_runtime.h>
#include <limits.h>
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

/* distribute_charge, in parallel and bit for bit the CPU's: circuit.cl's scheme (read it there),
 * kernel for kernel. Wire ends are events e = 2 w (in) and 2 w + 1 (out), in the CPU's order;
 * nodes are slots, their index in the three windows laid end to end. dc_count counts the events
 * per slot, dc_scan turns the counts into bucket starts, dc_place puts each event in its slot's
 * bucket, dc_fold sorts each bucket by event and adds the contributions to the node in that
 * order: the CPU's order of the adds, hence its bits (float atomics would add in arrival order). */
struct node_bounds {
	int64_t lo[3], hi[3];
};

__device__ __forceinline__ int slot_of(const node_bounds &b, int64_t g)
{
	int64_t base = 0;
#pragma unroll
	for (int k = 0; k < 3; k++) {
		if (g >= b.lo[k] && g <= b.hi[k])
			return (int)(base + g - b.lo[k]);
		base += b.hi[k] - b.lo[k] + 1;
	}
	return -1;
}

__device__ __forceinline__ int64_t event_node(const int32_t *in, const int32_t *out, int e)
{
	return e & 1 ? out[e >> 1] : in[e >> 1];
}

__global__ void dc_count(int nev, const int32_t *in, const int32_t *out, node_bounds b, int *count)
{
	int e = blockIdx.x * blockDim.x + threadIdx.x;
	if (e >= nev)
		return;
	int slot = slot_of(b, event_node(in, out, e));
	if (slot >= 0)
		atomicAdd(count + slot, 1);
}

/* One block of CIRCUIT_DC_SCAN_GROUP threads: chunk sums, thread 0 scans them, chunk prefixes. */
__global__ void dc_scan(int k, const int *count, int *start)
{
	__shared__ int part[CIRCUIT_DC_SCAN_GROUP];
	const int t = threadIdx.x;
	const int chunk = (k + CIRCUIT_DC_SCAN_GROUP - 1) / CIRCUIT_DC_SCAN_GROUP;
	const int b = min(t * chunk, k), e = min(b + chunk, k);
	int sum = 0;
	for (int i = b; i < e; i++)
		sum += count[i];
	part[t] = sum;
	__syncthreads();
	if (t == 0) {
		int acc = 0;
		for (int i = 0; i < CIRCUIT_DC_SCAN_GROUP; i++) {
			const int c = part[i];
			part[i] = acc;
			acc += c;
		}
		start[k] = acc;
	}
	__syncthreads();
	int acc = part[t];
	for (int i = b; i < e; i++) {
		start[i] = acc;
		acc += count[i];
	}
}

__global__ void dc_place(int nev, const int32_t *in, const int32_t *out, node_bounds b, int *count, const int *start,
                         int *ev)
{
	int e = blockIdx.x * blockDim.x + threadIdx.x;
	if (e >= nev)
		return;
	int slot = slot_of(b, event_node(in, out, e));
	if (slot < 0)
		return;
	int pos = atomicSub(count + slot, 1) - 1;
	ev[start[slot] + pos] = e;
}

__global__ void dc_fold(int k, const float *cur_first, const float *cur_last, node_windows win, const int *start,
                        int *ev, float dt)
{
	int slot = blockIdx.x * blockDim.x + threadIdx.x;
	if (slot >= k)
		return;
	const int b = start[slot], end = start[slot + 1];
	if (b == end)
		return;
	/* the bucket in event order: insertion sort (a node has few ends) */
	for (int i = b + 1; i < end; i++) {
		const int e = ev[i];
		int j = i - 1;
		while (j >= b && ev[j] > e) {
			ev[j + 1] = ev[j];
			j--;
		}
		ev[j + 1] = e;
	}
	int64_t s = slot;
	int w = 0;
	while (w < 2 && s > win.w[w].hi - win.w[w].lo) {
		s -= win.w[w].hi - win.w[w].lo + 1;
		w++;
	}
	float *q = win.w[w].v + s;
	float v = *q;
	for (int i = b; i < end; i++) {
		const int e = ev[i];
		const float dq = e & 1 ? __fmul_rn(dt, cur_last[e >> 1]) : __fmul_rn(-dt, cur_first[e >> 1]);
		v = __fadd_rn(v, dq);
	}
	*q = v;
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
 * buffers, as on CPUs; the piece's own shared nodes are looked up before the ghost box. Four
 * kernels on the worker's stream over scratch arrays count[k], start[k + 1] and ev[2 n], allocated
 * and freed in stream order (cudaMallocAsync): every node gets its contributions in the CPU's
 * order, so every charge is the CPU's. */
extern "C" void circuit_distribute_charge_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const circuit_args_t *a = (const circuit_args_t *)args;
	circuit_dc_view_t v;
	if (circuit_dc_view(ctx, arglen, &v))
		return;
	int64_t n = v.in.hi[0] - v.in.lo[0] + 1;
	if (n <= 0)
		return;
	node_windows win = windows(v.win);
	node_bounds bounds;
	int64_t k = 0;
	for (int w = 0; w < 3; w++) {
		/* an empty window has length 0 (the windows are laid end to end) */
		if (win.w[w].hi < win.w[w].lo)
			win.w[w].hi = win.w[w].lo - 1;
		bounds.lo[w] = win.w[w].lo;
		bounds.hi[w] = win.w[w].hi;
		k += win.w[w].hi - win.w[w].lo + 1;
	}
	if (n > INT_MAX / 2 || k >= INT_MAX) {
		tsr_ctx_error(ctx, "task '%s': %lld wires and %lld nodes: more than the CUDA kernels' int indices hold",
		              tsr_ctx_task_name(ctx), (long long)n, (long long)k);
		return;
	}
	const int nev = (int)(2 * n), nk = (int)k;
	const float *first = (const float *)v.cur.ptr;
	const float *last = first + (SEG - 1) * v.cur.stride[1];
	const int32_t *in = (const int32_t *)v.in.ptr, *out = (const int32_t *)v.out.ptr;
	cudaStream_t st = (cudaStream_t)tsr_ctx_cuda_stream(ctx);

	int *scratch = NULL;
	const size_t bytes = ((size_t)2 * nk + 1 + (size_t)nev) * sizeof(int);
	cudaError_t e = cudaMallocAsync((void **)&scratch, bytes, st);
	if (e != cudaSuccess) {
		tsr_ctx_error(ctx, "task '%s': no scratch buffer of %zu bytes on the GPU: %s", tsr_ctx_task_name(ctx), bytes,
		              cudaGetErrorString(e));
		return;
	}
	int *count = scratch, *start = scratch + nk, *ev = scratch + 2 * (size_t)nk + 1;
	e = cudaMemsetAsync(count, 0, (size_t)nk * sizeof(int), st);
	if (e == cudaSuccess) {
		dc_count<<<blocks_for(nev), threads, 0, st>>>(nev, in, out, bounds, count);
		dc_scan<<<1, CIRCUIT_DC_SCAN_GROUP, 0, st>>>(nk, count, start);
		dc_place<<<blocks_for(nev), threads, 0, st>>>(nev, in, out, bounds, count, start, ev);
		dc_fold<<<blocks_for(nk), threads, 0, st>>>(nk, first, last, win, start, ev, a->dt);
		check_launch(ctx);
	} else {
		tsr_ctx_error(ctx, "task '%s': zeroing the scratch counts failed: %s", tsr_ctx_task_name(ctx),
		              cudaGetErrorString(e));
	}
	cudaFreeAsync(scratch, st); /* after the kernels, in stream order */
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
