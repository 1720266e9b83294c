/* circuit_cpu.c: CPU kernels and task variants of the circuit simulation. The kernels take plain
 * arrays so that apps/circuit's OpenMP baseline runs exactly the same arithmetic as the tasks. */
#include "config.h"

#include <string.h>

#include <starpu_config.h> /* STARPU_USE_OPENCL */

#include "circuit.h"

/* calc_new_currents does ~96 flops per wire and step on values that stay in registers: it is
 * compute-bound, and a scalar loop runs it more than ten times slower than SIMD (Legion's
 * circuit_cpu.cc has SSE/AVX/AVX-512 paths for that reason). The wires are the lanes: one vector
 * holds one segment of CNC_VL consecutive wires, so every operation of the scalar algorithm
 * becomes one vector operation, in the same order, and each lane computes bit for bit what the
 * scalar code computes for its wire. GCC builds a clone per instruction set and picks one at load
 * time; the results do not depend on the clone because the build disables FMA contraction
 * (-ffp-contract=off) and divisions stay IEEE divisions (no reciprocal estimates, unlike Legion's
 * _mm_rcp_ps paths: those made its results depend on the vector width). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
	!defined(__SANITIZE_ADDRESS__)
#define CIRCUIT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CIRCUIT_CLONES
#endif

#define SEG CIRCUIT_SEGMENTS
#define CNC_VL 16
typedef float cnc_vec __attribute__((vector_size(CNC_VL * sizeof(float))));

/* Macros rather than functions: a function passing 64-byte vectors by value has an ABI that
 * depends on the instruction set (GCC warns), and these must inline into every clone anyway. */
#define VLOAD(v, p) memcpy(&(v), (p), sizeof(cnc_vec)) /* unaligned: pieces start anywhere */
#define VSTORE(p, v) memcpy((p), &(v), sizeof(cnc_vec))
#define VSPLAT(x) ((cnc_vec){0} + (x))

/* Voltages of the nodes idx[0..n-1] into v; returns how many no window holds (they read 0). */
static inline int64_t gather(const int32_t *idx, int n, int nwin, const circuit_window_t *win,
			     float *v)
{
	int64_t bad = 0;
	for (int l = 0; l < n; l++) {
		int64_t g = idx[l];
		int k = 0;
		while (k < nwin && (g < win[k].lo || g > win[k].hi))
			k++;
		if (k < nwin) {
			v[l] = win[k].v[g - win[k].lo];
		} else {
			v[l] = 0.0f;
			bad++;
		}
	}
	return bad;
}

/* One block of CNC_VL wires: Legion's scalar algorithm with every variable a vector. */
static inline __attribute__((always_inline)) void cnc_block(const float *vin, const float *vout,
							    const float *ind, const float *res,
							    const float *cap, float *cur,
							    size_t cur_ld, float *wv, size_t wv_ld,
							    float dt_s, float recip_dt_s, int steps)
{
	cnc_vec ti[SEG], oi[SEG], tv[SEG + 1], ov[SEG - 1];
#pragma GCC unroll 16
	for (int s = 0; s < SEG; s++) {
		VLOAD(ti[s], cur + s * cur_ld);
		oi[s] = ti[s];
	}
#pragma GCC unroll 16
	for (int s = 0; s < SEG - 1; s++) {
		VLOAD(ov[s], wv + s * wv_ld);
		tv[s + 1] = ov[s];
	}
	/* the outer voltages are pinned to the node voltages */
	VLOAD(tv[0], vin);
	VLOAD(tv[SEG], vout);
	cnc_vec inductance, resistance, capacitance;
	VLOAD(inductance, ind);
	VLOAD(resistance, res);
	VLOAD(capacitance, cap);
	const cnc_vec recip_resistance = VSPLAT(1.0f) / resistance;
	const cnc_vec recip_capacitance = VSPLAT(1.0f) / capacitance;
	const cnc_vec dt = VSPLAT(dt_s), recip_dt = VSPLAT(recip_dt_s);
	for (int j = 0; j < steps; j++) {
		/* new current from the voltage differential and the inductance: I = (dV -
		 * L*I')/R */
#pragma GCC unroll 16
		for (int s = 0; s < SEG; s++)
			ti[s] = ((tv[s + 1] - tv[s]) - (inductance * (ti[s] - oi[s]) * recip_dt)) *
				recip_resistance;
			/* then the voltages between segments */
#pragma GCC unroll 16
		for (int s = 0; s < SEG - 1; s++)
			tv[s + 1] = ov[s] + dt * (ti[s] - ti[s + 1]) * recip_capacitance;
	}
#pragma GCC unroll 16
	for (int s = 0; s < SEG; s++)
		VSTORE(cur + s * cur_ld, ti[s]);
#pragma GCC unroll 16
	for (int s = 0; s < SEG - 1; s++)
		VSTORE(wv + s * wv_ld, tv[s + 1]);
}

CIRCUIT_CLONES int64_t circuit_calc_currents(int64_t n, const int32_t *in, const int32_t *out,
					     const float *inductance, const float *resistance,
					     const float *wire_cap, float *cur, size_t cur_ld,
					     float *wv, size_t wv_ld, int nwin,
					     const circuit_window_t *win, float dt, int steps)
{
	const float recip_dt = 1.0f / dt;
	float vin[CNC_VL], vout[CNC_VL];
	int64_t bad = 0;
	for (int64_t w = 0; w < n; w += CNC_VL) {
		int nl = n - w < CNC_VL ? (int)(n - w) : CNC_VL;
		bad += gather(in + w, nl, nwin, win, vin);
		bad += gather(out + w, nl, nwin, win, vout);
		if (nl == CNC_VL) {
			cnc_block(vin, vout, inductance + w, resistance + w, wire_cap + w, cur + w,
				  cur_ld, wv + w, wv_ld, dt, recip_dt, steps);
			continue;
		}
		/* Last partial block: run the same vector code on a padded copy. Lanes are
		 * independent, so the padding (a harmless 1-ohm, 1-farad wire at 0 volts) cannot
		 * change the others. */
		float l[CNC_VL], r[CNC_VL], c[CNC_VL], ci[SEG * CNC_VL], cv[(SEG - 1) * CNC_VL];
		for (int k = 0; k < CNC_VL; k++) {
			int live = k < nl;
			l[k] = live ? inductance[w + k] : 0.0f;
			r[k] = live ? resistance[w + k] : 1.0f;
			c[k] = live ? wire_cap[w + k] : 1.0f;
			if (!live)
				vin[k] = vout[k] = 0.0f;
			for (int s = 0; s < SEG; s++)
				ci[s * CNC_VL + k] = live ? cur[s * cur_ld + w + k] : 0.0f;
			for (int s = 0; s < SEG - 1; s++)
				cv[s * CNC_VL + k] = live ? wv[s * wv_ld + w + k] : 0.0f;
		}
		cnc_block(vin, vout, l, r, c, ci, CNC_VL, cv, CNC_VL, dt, recip_dt, steps);
		for (int k = 0; k < nl; k++) {
			for (int s = 0; s < SEG; s++)
				cur[s * cur_ld + w + k] = ci[s * CNC_VL + k];
			for (int s = 0; s < SEG - 1; s++)
				wv[s * wv_ld + w + k] = cv[s * CNC_VL + k];
		}
	}
	return bad;
}

static inline int fold_node(int64_t g, float dq, int nwin, const circuit_window_t *win)
{
	for (int k = 0; k < nwin; k++)
		if (g >= win[k].lo && g <= win[k].hi) {
			win[k].v[g - win[k].lo] += dq;
			return 0;
		}
	return 1;
}

int64_t circuit_distribute_charge(int64_t n, const int32_t *in, const int32_t *out,
				  const float *cur_first, const float *cur_last, int nwin,
				  const circuit_window_t *win, float dt)
{
	/* Scattered adds that may hit one node twice in a row: kept scalar and in wire order, which
	 * is what makes private nodes bit-identical to the sequential reference. */
	int64_t bad = 0;
	for (int64_t w = 0; w < n; w++) {
		float in_dq = -dt * cur_first[w];
		float out_dq = dt * cur_last[w];
		bad += fold_node(in[w], in_dq, nwin, win);
		bad += fold_node(out[w], out_dq, nwin, win);
	}
	return bad;
}

CIRCUIT_CLONES void circuit_update_voltages(int64_t n, float *restrict voltage,
					    float *restrict charge, const float *restrict cap,
					    const float *restrict leakage)
{
#pragma omp simd
	for (int64_t i = 0; i < n; i++) {
		float v = voltage[i] + charge[i] / cap[i];
		voltage[i] = v * (1.0f - leakage[i]);
		charge[i] = 0.0f; /* ready for the next distribute_charge */
	}
}

/* ------------------------------------------------------------------ task variants */

/* Accessor of the k-th field of requirement req, or a task error that names the task, the
 * requirement and the field (tsr_last_error). */
static int get(tsr_ctx_t *ctx, int req, int k, tsr_type_t type, tsr_privilege_t priv,
	       tsr_accessor_t *a)
{
	int rc = tsr_ctx_field(ctx, req, k, type, priv, a);
	if (rc != TSR_OK)
		tsr_ctx_error(ctx, "%s", tsr_last_error());
	return rc;
}

static int64_t piece_of(tsr_ctx_t *ctx)
{
	int64_t p[3] = {0, 0, 0};
	tsr_ctx_point(ctx, p);
	return p[0];
}

/* Segment state of the piece's wires: a (wires x segments) box whose wires are those of `wires`. */
static int check_state(tsr_ctx_t *ctx, const tsr_accessor_t *wires, const tsr_accessor_t *st,
		       int nseg, const char *what)
{
	if (st->dim != 2 || st->lo[0] != wires->lo[0] || st->hi[0] != wires->hi[0] ||
	    st->hi[1] - st->lo[1] + 1 != nseg) {
		tsr_ctx_error(ctx,
			      "task '%s' point %lld: %s cover wires %lld..%lld x %lld rows, "
			      "expected wires %lld..%lld x %d",
			      tsr_ctx_task_name(ctx), (long long)piece_of(ctx), what,
			      (long long)st->lo[0], (long long)st->hi[0],
			      (long long)(st->hi[1] - st->lo[1] + 1), (long long)wires->lo[0],
			      (long long)wires->hi[0], nseg);
		return -1;
	}
	return 0;
}

static circuit_window_t window_of(const tsr_accessor_t *a)
{
	circuit_window_t w = {(float *)a->ptr, a->lo[0], a->hi[0]};
	return w;
}

static int check_args(tsr_ctx_t *ctx, size_t arglen)
{
	if (arglen == sizeof(circuit_args_t))
		return 0;
	tsr_ctx_error(ctx, "task '%s': %zu bytes of arguments, expected %zu",
		      tsr_ctx_task_name(ctx), arglen, sizeof(circuit_args_t));
	return -1;
}

int circuit_cnc_view(tsr_ctx_t *ctx, size_t arglen, circuit_cnc_view_t *v)
{
	tsr_accessor_t pvt, shr, ghost;
	if (check_args(ctx, arglen) ||
	    get(ctx, CIRCUIT_CNC_WIRES, CIRCUIT_AT_WIRE_IN, TSR_I32, TSR_READ, &v->in) ||
	    get(ctx, CIRCUIT_CNC_WIRES, CIRCUIT_AT_WIRE_OUT, TSR_I32, TSR_READ, &v->out) ||
	    get(ctx, CIRCUIT_CNC_WIRES, CIRCUIT_AT_WIRE_INDUCTANCE, TSR_F32, TSR_READ, &v->ind) ||
	    get(ctx, CIRCUIT_CNC_WIRES, CIRCUIT_AT_WIRE_RESISTANCE, TSR_F32, TSR_READ, &v->res) ||
	    get(ctx, CIRCUIT_CNC_WIRES, CIRCUIT_AT_WIRE_CAP, TSR_F32, TSR_READ, &v->cap) ||
	    get(ctx, CIRCUIT_CNC_CURRENTS, CIRCUIT_AT_ONLY, TSR_F32, TSR_READ_WRITE, &v->cur) ||
	    get(ctx, CIRCUIT_CNC_VOLTAGES, CIRCUIT_AT_ONLY, TSR_F32, TSR_READ_WRITE, &v->wv) ||
	    get(ctx, CIRCUIT_CNC_PRIVATE, CIRCUIT_AT_ONLY, TSR_F32, TSR_READ, &pvt) ||
	    get(ctx, CIRCUIT_CNC_SHARED, CIRCUIT_AT_ONLY, TSR_F32, TSR_READ, &shr) ||
	    get(ctx, CIRCUIT_CNC_GHOST, CIRCUIT_AT_ONLY, TSR_F32, TSR_READ, &ghost))
		return -1;
	if (check_state(ctx, &v->in, &v->cur, SEG, "currents") ||
	    check_state(ctx, &v->in, &v->wv, SEG - 1, "wire voltages"))
		return -1;
	/* private first, then the piece's own shared nodes: the ghost box may overlap them */
	v->win[0] = window_of(&pvt);
	v->win[1] = window_of(&shr);
	v->win[2] = window_of(&ghost);
	v->win_offset[0] = pvt.offset;
	v->win_offset[1] = shr.offset;
	v->win_offset[2] = ghost.offset;
	return 0;
}

/* Legion's distribute_charge: a private node is touched by its own piece's wires only, so the
 * piece adds into it in place (READ_WRITE); the shared and ghost nodes get the charge through
 * REDUCE(sum) accessors, buffers of this point task that the runtime folds into the nodes. */
int circuit_dc_view(tsr_ctx_t *ctx, size_t arglen, circuit_dc_view_t *v)
{
	const tsr_privilege_t sum = TSR_REDUCE(TSR_SUM);
	tsr_accessor_t pvt, shr, ghost;
	if (check_args(ctx, arglen) ||
	    get(ctx, CIRCUIT_DC_WIRES, CIRCUIT_AT_WIRE_IN, TSR_I32, TSR_READ, &v->in) ||
	    get(ctx, CIRCUIT_DC_WIRES, CIRCUIT_AT_WIRE_OUT, TSR_I32, TSR_READ, &v->out) ||
	    get(ctx, CIRCUIT_DC_CURRENTS, CIRCUIT_AT_ONLY, TSR_F32, TSR_READ, &v->cur) ||
	    get(ctx, CIRCUIT_DC_PRIVATE, CIRCUIT_AT_ONLY, TSR_F32, TSR_READ_WRITE, &pvt) ||
	    get(ctx, CIRCUIT_DC_SHARED, CIRCUIT_AT_ONLY, TSR_F32, sum, &shr) ||
	    get(ctx, CIRCUIT_DC_GHOST, CIRCUIT_AT_ONLY, TSR_F32, sum, &ghost))
		return -1;
	if (check_state(ctx, &v->in, &v->cur, SEG, "currents"))
		return -1;
	/* same order as calc_new_currents: the piece's own shared nodes before the ghost box, which
	 * may overlap them */
	v->win[0] = window_of(&pvt);
	v->win[1] = window_of(&shr);
	v->win[2] = window_of(&ghost);
	v->win_offset[0] = pvt.offset;
	v->win_offset[1] = shr.offset;
	v->win_offset[2] = ghost.offset;
	return 0;
}

/* Same extent for the state and the constants of one kind of node. */
static int check_nodes(tsr_ctx_t *ctx, const tsr_accessor_t *state, const tsr_accessor_t *cnst,
		       const char *what)
{
	if (cnst->lo[0] == state->lo[0] && cnst->hi[0] == state->hi[0])
		return 0;
	tsr_ctx_error(ctx,
		      "task '%s' point %lld: %s node constants cover %lld..%lld but the state "
		      "covers %lld..%lld",
		      tsr_ctx_task_name(ctx), (long long)piece_of(ctx), what,
		      (long long)cnst->lo[0], (long long)cnst->hi[0], (long long)state->lo[0],
		      (long long)state->hi[0]);
	return -1;
}

/* Legion's update_voltages: the piece's private nodes, then its shared nodes. */
int circuit_uv_view(tsr_ctx_t *ctx, circuit_uv_view_t *v)
{
	static const int state_req[2] = {CIRCUIT_UV_PVT_STATE, CIRCUIT_UV_SHR_STATE};
	static const int const_req[2] = {CIRCUIT_UV_PVT_CONST, CIRCUIT_UV_SHR_CONST};
	static const char *const what[2] = {"private", "shared"};
	for (int k = 0; k < 2; k++)
		if (get(ctx, state_req[k], CIRCUIT_AT_VOLTAGE, TSR_F32, TSR_READ_WRITE, &v->v[k]) ||
		    get(ctx, state_req[k], CIRCUIT_AT_CHARGE, TSR_F32, TSR_READ_WRITE, &v->q[k]) ||
		    get(ctx, const_req[k], CIRCUIT_AT_CAP, TSR_F32, TSR_READ, &v->cap[k]) ||
		    get(ctx, const_req[k], CIRCUIT_AT_LEAKAGE, TSR_F32, TSR_READ, &v->leak[k]) ||
		    check_nodes(ctx, &v->v[k], &v->cap[k], what[k]))
			return -1;
	return 0;
}

static void report_stray_ends(tsr_ctx_t *ctx, int64_t bad)
{
	if (bad)
		tsr_ctx_error(ctx,
			      "task '%s' point %lld: %lld wire ends lie outside the private, "
			      "shared and ghost nodes",
			      tsr_ctx_task_name(ctx), (long long)piece_of(ctx), (long long)bad);
}

void circuit_calc_new_currents_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const circuit_args_t *a = args;
	circuit_cnc_view_t v;
	if (circuit_cnc_view(ctx, arglen, &v))
		return;
	int64_t n = v.in.hi[0] - v.in.lo[0] + 1;
	report_stray_ends(ctx,
			  circuit_calc_currents(n, v.in.ptr, v.out.ptr, v.ind.ptr, v.res.ptr,
						v.cap.ptr, v.cur.ptr, v.cur.stride[1], v.wv.ptr,
						v.wv.stride[1], 3, v.win, a->dt, a->steps));
}

void circuit_distribute_charge_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const circuit_args_t *a = args;
	circuit_dc_view_t v;
	if (circuit_dc_view(ctx, arglen, &v))
		return;
	const float *first = v.cur.ptr,
		    *last = (const float *)v.cur.ptr + (SEG - 1) * v.cur.stride[1];
	int64_t n = v.in.hi[0] - v.in.lo[0] + 1;
	report_stray_ends(ctx, circuit_distribute_charge(n, v.in.ptr, v.out.ptr, first, last, 3,
							 v.win, a->dt));
}

void circuit_update_voltages_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	circuit_uv_view_t v;
	(void)args;
	(void)arglen;
	if (circuit_uv_view(ctx, &v))
		return;
	for (int k = 0; k < 2; k++)
		circuit_update_voltages(v.v[k].hi[0] - v.v[k].lo[0] + 1, v.v[k].ptr, v.q[k].ptr,
					v.cap[k].ptr, v.leak[k].ptr);
}

int circuit_tasks_register(circuit_tasks_t *t)
{
#ifdef TSR_HAVE_CUDA
#define CIRCUIT_CUDA(f) f
#else
#define CIRCUIT_CUDA(f) NULL
#endif
#ifdef STARPU_USE_OPENCL
#define CIRCUIT_OPENCL(f) f
#else
#define CIRCUIT_OPENCL(f) NULL
#endif
	static const struct {
		const char *name;
		tsr_variant_fn cpu, cuda, opencl;
	} v[3] = {
		{"calc_new_currents", circuit_calc_new_currents_cpu,
		 CIRCUIT_CUDA(circuit_calc_new_currents_cuda),
		 CIRCUIT_OPENCL(circuit_calc_new_currents_opencl)},
		{"distribute_charge", circuit_distribute_charge_cpu,
		 CIRCUIT_CUDA(circuit_distribute_charge_cuda),
		 CIRCUIT_OPENCL(circuit_distribute_charge_opencl)},
		{"update_voltages", circuit_update_voltages_cpu,
		 CIRCUIT_CUDA(circuit_update_voltages_cuda),
		 CIRCUIT_OPENCL(circuit_update_voltages_opencl)},
	};
	tsr_task_t *out[3] = {&t->calc_new_currents, &t->distribute_charge, &t->update_voltages};
	for (int i = 0; i < 3; i++) {
		tsr_task_desc_t d;
		memset(&d, 0, sizeof d);
		d.name = v[i].name;
		d.cpu = v[i].cpu;
		d.cuda = v[i].cuda;
		d.opencl = v[i].opencl;
		d.ret_type = TSR_NONE;
		int rc = tsr_task_register(&d, out[i]);
		if (rc != TSR_OK)
			return rc;
	}
	return TSR_OK;
}
