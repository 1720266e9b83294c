/* circuit_model.c: the circuit in host arrays: Legion's generator, our node numbering, the plain
 * sequential reference, the plain C/OpenMP baseline and the comparison of results. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "circuit_app.h"

#define SEG CIRCUIT_SEGMENTS

int circuit_model_alloc(circuit_model_t *m, int64_t nnodes, int64_t nwires)
{
	memset(m, 0, sizeof *m);
	m->nnodes = nnodes;
	m->nwires = nwires;
	size_t n = (size_t)nnodes, w = (size_t)nwires;
	m->cap = malloc(n * sizeof(float));
	m->leakage = malloc(n * sizeof(float));
	m->charge = calloc(n, sizeof(float));
	m->voltage = malloc(n * sizeof(float));
	m->in = malloc(w * sizeof(int32_t));
	m->out = malloc(w * sizeof(int32_t));
	m->inductance = malloc(w * sizeof(float));
	m->resistance = malloc(w * sizeof(float));
	m->wire_cap = malloc(w * sizeof(float));
	m->current = calloc(w * SEG, sizeof(float));
	m->wire_voltage = calloc(w * (SEG - 1), sizeof(float));
	if (!m->cap || !m->leakage || !m->charge || !m->voltage || !m->in || !m->out ||
	    !m->inductance || !m->resistance || !m->wire_cap || !m->current || !m->wire_voltage) {
		circuit_model_free(m);
		return -1;
	}
	return 0;
}

void circuit_model_free(circuit_model_t *m)
{
	free(m->cap);
	free(m->leakage);
	free(m->charge);
	free(m->voltage);
	free(m->in);
	free(m->out);
	free(m->inductance);
	free(m->resistance);
	free(m->wire_cap);
	free(m->current);
	free(m->wire_voltage);
	memset(m, 0, sizeof *m);
}

int circuit_model_copy(circuit_model_t *dst, const circuit_model_t *src)
{
	if (circuit_model_alloc(dst, src->nnodes, src->nwires))
		return -1;
	size_t n = (size_t)src->nnodes * sizeof(float), w = (size_t)src->nwires * sizeof(float);
	memcpy(dst->cap, src->cap, n);
	memcpy(dst->leakage, src->leakage, n);
	memcpy(dst->charge, src->charge, n);
	memcpy(dst->voltage, src->voltage, n);
	memcpy(dst->in, src->in, (size_t)src->nwires * sizeof(int32_t));
	memcpy(dst->out, src->out, (size_t)src->nwires * sizeof(int32_t));
	memcpy(dst->inductance, src->inductance, w);
	memcpy(dst->resistance, src->resistance, w);
	memcpy(dst->wire_cap, src->wire_cap, w);
	memcpy(dst->current, src->current, w * SEG);
	memcpy(dst->wire_voltage, src->wire_voltage, w * (SEG - 1));
	return 0;
}

/* The expressions mix float constants and erand48's double exactly as circuit_init.cc does (the
 * arithmetic happens in double, then rounds to float on the store), so the values are Legion's. */
int circuit_generate(const circuit_params_t *prm, circuit_model_t *m)
{
	const int P = prm->pieces, npp = prm->npp, wpp = prm->wpp;
	if (circuit_model_alloc(m, (int64_t)P * npp, (int64_t)P * wpp))
		return -1;
	for (int n = 0; n < P; n++) {
		unsigned short xsubi[3] = {(unsigned short)n, (unsigned short)n, (unsigned short)n};
		for (int i = 0; i < npp; i++) {
			int64_t g = (int64_t)n * npp + i;
			m->cap[g] = erand48(xsubi) + 1.f;
			m->leakage[g] = 0.1f * erand48(xsubi);
			m->charge[g] = 0.f;
			m->voltage[g] = 2.f * erand48(xsubi) - 1.f;
		}
	}
	for (int n = 0; n < P; n++) {
		/* a generator of its own: Legion's wire task seeds its xsubi like the node task */
		unsigned short xsubi[3] = {(unsigned short)n, (unsigned short)n, (unsigned short)n};
		for (int i = 0; i < wpp; i++) {
			int64_t w = (int64_t)n * wpp + i;
			m->resistance[w] = erand48(xsubi) * 10.0 + 1.f;
			/* inductance of the order of 1e-3 * dt keeps the iteration away from
			 * resonance */
			m->inductance[w] = (erand48(xsubi) + 0.1) * CIRCUIT_DELTAT * 1e-3;
			m->wire_cap[w] = erand48(xsubi) * 0.1;
			int in_index = (int)(erand48(xsubi) * npp);
			m->in[w] = (int32_t)((int64_t)n * npp + in_index);
			if (P == 1 || (100 * erand48(xsubi)) < prm->pct) {
				int out_index = (int)(erand48(xsubi) * npp);
				m->out[w] = (int32_t)((int64_t)n * npp + out_index);
			} else {
				int nn = (int)(erand48(xsubi) * (P - 1));
				if (nn >= n)
					nn++;
				int out_index = (int)(erand48(xsubi) * npp);
				m->out[w] = (int32_t)((int64_t)nn * npp + out_index);
			}
		}
	}
	return 0;
}

void circuit_layout_free(circuit_layout_t *lay)
{
	free(lay->pvt_lo);
	free(lay->pvt_hi);
	free(lay->shr_lo);
	free(lay->shr_hi);
	free(lay->ghost_lo);
	free(lay->ghost_hi);
	free(lay->new_index);
	memset(lay, 0, sizeof *lay);
}

/* Padding node: touched by no wire, so it stays at 0 V whatever update_voltages does to it. */
static void set_padding(circuit_model_t *m, int64_t g)
{
	m->cap[g] = 1.0f;
	m->leakage[g] = 0.0f;
	m->charge[g] = 0.0f;
	m->voltage[g] = 0.0f;
}

/* Private nodes of every piece, then shared nodes of every piece: "all private" and "all shared"
 * are two boxes, each piece's part of either is a box, and a piece with no node of a kind gets
 * one padding node because Tessera's subregions cannot be empty. Returns the node count. */
static int64_t layout_boxes(circuit_layout_t *lay, int P, const int64_t *npriv, const int64_t *nshr)
{
	int64_t next = 0;
	for (int n = 0; n < P; n++) {
		lay->real_private += npriv[n];
		lay->pvt_lo[n] = next;
		next += npriv[n] ? npriv[n] : 1;
		lay->pvt_hi[n] = next - 1;
		lay->npadding += npriv[n] ? 0 : 1;
	}
	lay->nprivate = next;
	for (int n = 0; n < P; n++) {
		lay->real_shared += nshr[n];
		lay->shr_lo[n] = next;
		next += nshr[n] ? nshr[n] : 1;
		lay->shr_hi[n] = next - 1;
		lay->npadding += nshr[n] ? 0 : 1;
	}
	lay->nshared = next - lay->nprivate;
	return next;
}

/* The nodes in our numbering (each kind keeps Legion's order), the padding nodes, and the wires,
 * which keep Legion's numbering (piece n owns wires n*wpp .. (n+1)*wpp-1). */
static void layout_copy(circuit_layout_t *lay, const circuit_model_t *lg, circuit_model_t *out,
			const char *shared, int64_t npp)
{
	const int64_t W = lg->nwires;
	for (int n = 0; n < lay->pieces; n++) {
		int64_t kp = lay->pvt_lo[n], ks = lay->shr_lo[n];
		for (int64_t g = n * npp; g < (n + 1) * npp; g++) {
			int64_t x = shared[g] ? ks++ : kp++;
			lay->new_index[g] = (int32_t)x;
			out->cap[x] = lg->cap[g];
			out->leakage[x] = lg->leakage[g];
			out->charge[x] = lg->charge[g];
			out->voltage[x] = lg->voltage[g];
		}
		if (kp == lay->pvt_lo[n])
			set_padding(out, lay->pvt_lo[n]);
		if (ks == lay->shr_lo[n])
			set_padding(out, lay->shr_lo[n]);
	}
	for (int64_t w = 0; w < W; w++) {
		out->in[w] = lay->new_index[lg->in[w]];
		out->out[w] = lay->new_index[lg->out[w]];
	}
	memcpy(out->inductance, lg->inductance, (size_t)W * sizeof(float));
	memcpy(out->resistance, lg->resistance, (size_t)W * sizeof(float));
	memcpy(out->wire_cap, lg->wire_cap, (size_t)W * sizeof(float));
	memcpy(out->current, lg->current, (size_t)W * SEG * sizeof(float));
	memcpy(out->wire_voltage, lg->wire_voltage, (size_t)W * (SEG - 1) * sizeof(float));
}

/* Ghost box of piece n: the smallest box of shared nodes holding every node of another piece that
 * n's wires reach. It may also hold nodes n does not touch (tasks never read or fold them),
 * including n's own shared nodes (tasks look those up in the shared window first). */
static void layout_ghosts(circuit_layout_t *lay, const circuit_model_t *lg,
			  const circuit_model_t *out, int64_t npp, int64_t wpp)
{
	for (int n = 0; n < lay->pieces; n++) {
		int64_t lo = INT64_MAX, hi = -1;
		for (int64_t w = n * wpp; w < (n + 1) * wpp; w++)
			if (lg->out[w] / npp != n) {
				int64_t x = out->out[w];
				lo = x < lo ? x : lo;
				hi = x > hi ? x : hi;
			}
		if (hi < 0) {
			/* no wire leaves the piece: any non-empty box will do; its own shared box
			 * is read by no one and folds only identities */
			lo = lay->shr_lo[n];
			hi = lay->shr_hi[n];
		}
		lay->ghost_lo[n] = lo;
		lay->ghost_hi[n] = hi;
	}
}

/* The layout's arrays; 0, or -1 out of memory. */
static int layout_alloc(circuit_layout_t *lay, int P, int64_t N)
{
	size_t pb = (size_t)P * sizeof(int64_t);
	memset(lay, 0, sizeof *lay);
	lay->pieces = P;
	lay->pvt_lo = malloc(pb);
	lay->pvt_hi = malloc(pb);
	lay->shr_lo = malloc(pb);
	lay->shr_hi = malloc(pb);
	lay->ghost_lo = malloc(pb);
	lay->ghost_hi = malloc(pb);
	lay->new_index = malloc((size_t)N * sizeof(int32_t));
	if (!lay->pvt_lo || !lay->pvt_hi || !lay->shr_lo || !lay->shr_hi || !lay->ghost_lo ||
	    !lay->ghost_hi || !lay->new_index)
		return -1;
	return 0;
}

int circuit_layout_build(const circuit_params_t *prm, const circuit_model_t *lg,
			 circuit_layout_t *lay, circuit_model_t *out)
{
	const int P = prm->pieces;
	const int64_t npp = prm->npp, wpp = prm->wpp, N = lg->nnodes, W = lg->nwires;
	char *shared = calloc((size_t)N, 1);
	int64_t *npriv = calloc(P, sizeof(int64_t)), *nshr = calloc(P, sizeof(int64_t));
	int rc = layout_alloc(lay, P, N);
	if (rc || !shared || !npriv || !nshr)
		goto done;

	/* Legion's definition: a node is shared when it is a ghost of some piece, i.e. the end of a
	 * wire of another piece (a wire's in node is always in its own piece). */
	for (int64_t w = 0; w < W; w++)
		if (lg->out[w] / npp != w / wpp)
			shared[lg->out[w]] = 1;
	for (int64_t g = 0; g < N; g++) {
		if (shared[g])
			nshr[g / npp]++;
		else
			npriv[g / npp]++;
	}
	int64_t nodes = layout_boxes(lay, P, npriv, nshr);
	rc = nodes > INT32_MAX || circuit_model_alloc(out, nodes, W) ? -1 : 0;
	if (!rc) {
		layout_copy(lay, lg, out, shared, npp);
		layout_ghosts(lay, lg, out, npp, wpp);
	}
done:
	if (rc || !shared || !npriv || !nshr) {
		circuit_layout_free(lay);
		rc = -1;
	}
	free(shared);
	free(npriv);
	free(nshr);
	return rc;
}

/* ------------------------------------------------------------ sequential reference */

/* Legion's scalar path of circuit_cpu.cc (the tail loop of its calc_new_currents, its
 * distribute_charge and update_voltages), one wire or node at a time, in index order. */
static void ref_calc_new_currents(circuit_model_t *m, int steps, float dt)
{
	const int64_t W = m->nwires;
	const float recip_dt = 1.0f / dt;
	for (int64_t w = 0; w < W; w++) {
		float ti[SEG], oi[SEG], tv[SEG + 1], ov[SEG - 1];
		for (int s = 0; s < SEG; s++)
			ti[s] = oi[s] = m->current[s * W + w];
		for (int s = 0; s < SEG - 1; s++)
			tv[s + 1] = ov[s] = m->wire_voltage[s * W + w];
		tv[0] = m->voltage[m->in[w]];
		tv[SEG] = m->voltage[m->out[w]];
		float inductance = m->inductance[w];
		float recip_resistance = 1.0f / m->resistance[w];
		float recip_capacitance = 1.0f / m->wire_cap[w];
		for (int j = 0; j < steps; j++) {
			for (int s = 0; s < SEG; s++)
				ti[s] = ((tv[s + 1] - tv[s]) -
					 (inductance * (ti[s] - oi[s]) * recip_dt)) *
					recip_resistance;
			for (int s = 0; s < SEG - 1; s++)
				tv[s + 1] = ov[s] + dt * (ti[s] - ti[s + 1]) * recip_capacitance;
		}
		for (int s = 0; s < SEG; s++)
			m->current[s * W + w] = ti[s];
		for (int s = 0; s < SEG - 1; s++)
			m->wire_voltage[s * W + w] = tv[s + 1];
	}
}

static void ref_add(circuit_model_t *m, int64_t g, float dq, circuit_charge_terms_t *t)
{
	m->charge[g] += dq;
	if (t) {
		t->count[g]++;
		t->abs_sum[g] += fabs((double)dq);
	}
}

static void ref_distribute_charge(circuit_model_t *m, float dt, circuit_charge_terms_t *t)
{
	const int64_t W = m->nwires;
	for (int64_t w = 0; w < W; w++) {
		ref_add(m, m->in[w], -dt * m->current[w], t);
		ref_add(m, m->out[w], dt * m->current[(SEG - 1) * W + w], t);
	}
}

static void ref_update_voltages(circuit_model_t *m)
{
	for (int64_t g = 0; g < m->nnodes; g++) {
		float v = m->voltage[g];
		v += m->charge[g] / m->cap[g];
		v *= (1.f - m->leakage[g]);
		m->voltage[g] = v;
		m->charge[g] = 0.f;
	}
}

void circuit_charge_terms_free(circuit_charge_terms_t *t)
{
	free(t->count);
	free(t->abs_sum);
	t->count = NULL;
	t->abs_sum = NULL;
}

int circuit_reference_run(circuit_model_t *m, int loops, int steps, float dt,
			  circuit_charge_terms_t *terms)
{
	for (int l = 0; l < loops; l++) {
		ref_calc_new_currents(m, steps, dt);
		ref_distribute_charge(m, dt, NULL);
		ref_update_voltages(m);
	}
	if (!terms)
		return 0;
	terms->count = calloc((size_t)m->nnodes, sizeof *terms->count);
	terms->abs_sum = calloc((size_t)m->nnodes, sizeof *terms->abs_sum);
	if (!terms->count || !terms->abs_sum) {
		circuit_charge_terms_free(terms);
		return -1;
	}
	ref_calc_new_currents(m, steps, dt);
	ref_distribute_charge(m, dt, terms);
	return 0;
}

/* ------------------------------------------------------------ OpenMP baseline */

static inline void add_charge(float *q, int64_t g, float dq, int64_t nprivate)
{
	if (g < nprivate) {
		/* private: only the wires of its own piece, hence of this thread, touch it */
		q[g] += dq;
	} else {
#ifdef _OPENMP
#pragma omp atomic
#endif
		q[g] += dq;
	}
}

static void chunk(int64_t n, int64_t align, int t, int nt, int64_t *lo, int64_t *hi)
{
	int64_t nb = (n + align - 1) / align;
	*lo = nb * t / nt * align;
	*hi = nb * (t + 1) / nt * align;
	if (*hi > n)
		*hi = n;
}

void circuit_openmp_run(circuit_model_t *m, const circuit_layout_t *lay, int pieces, int loops,
			int steps, float dt, int probe)
{
	const int64_t W = m->nwires, wpp = W / pieces;
	circuit_window_t all = {m->voltage, 0, m->nnodes - 1};
	for (int l = 0; l < loops + (probe ? 1 : 0); l++) {
		/* calc_new_currents: equal ranges of wires, one per thread, in blocks of 16
		 * wires */
#ifdef _OPENMP
#pragma omp parallel
#endif
		{
			int t = 0, nt = 1;
#ifdef _OPENMP
			t = omp_get_thread_num();
			nt = omp_get_num_threads();
#endif
			int64_t lo, hi;
			chunk(W, 16, t, nt, &lo, &hi);
			if (hi > lo)
				circuit_calc_currents(hi - lo, m->in + lo, m->out + lo,
						      m->inductance + lo, m->resistance + lo,
						      m->wire_cap + lo, m->current + lo, (size_t)W,
						      m->wire_voltage + lo, (size_t)W, 1, &all, dt,
						      steps);
		}
		/* distribute_charge: by piece, plain adds to private nodes and atomic ones to
		 * shared */
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
		for (int n = 0; n < pieces; n++)
			for (int64_t w = n * wpp; w < (n + 1) * wpp; w++) {
				float in_dq = -dt * m->current[w];
				float out_dq = dt * m->current[(SEG - 1) * W + w];
				add_charge(m->charge, m->in[w], in_dq, lay->nprivate);
				add_charge(m->charge, m->out[w], out_dq, lay->nprivate);
			}
		if (l == loops)
			break; /* the probe stops before update_voltages */
			       /* update_voltages */
#ifdef _OPENMP
#pragma omp parallel
#endif
		{
			int t = 0, nt = 1;
#ifdef _OPENMP
			t = omp_get_thread_num();
			nt = omp_get_num_threads();
#endif
			int64_t lo, hi;
			chunk(m->nnodes, 16, t, nt, &lo, &hi);
			if (hi > lo)
				circuit_update_voltages(hi - lo, m->voltage + lo, m->charge + lo,
							m->cap + lo, m->leakage + lo);
		}
	}
}

/* ------------------------------------------------------------ comparison */

/* NaN and infinities count as equal when both sides have them at the same place: Legion's
 * physics overflows on wires with a tiny capacitance (README.md), the reference alike. */
static int same_special(float a, float b)
{
	return (isnan(a) && isnan(b)) || (isinf(a) && a == b);
}

static void diff_add(circuit_diff_t *d, float a, float b)
{
	d->count++;
	if (same_special(a, b)) {
		d->nspecial++;
		return;
	}
	if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) {
		d->nnan++;
		d->ndiff++;
		return;
	}
	if (a != b)
		d->ndiff++;
	double e = fabs((double)a - (double)b), r = fabs((double)b);
	if (r > 0 && e / r > d->max_rel)
		d->max_rel = e / r;
	if (r > CIRCUIT_DIVERGED) {
		/* kept out of the normwise scale, which they would make meaningless */
		d->ndiverged++;
		if (e / r > d->max_rel_diverged)
			d->max_rel_diverged = e / r;
		return;
	}
	d->max_abs = e > d->max_abs ? e : d->max_abs;
	d->max_ref = r > d->max_ref ? r : d->max_ref;
}

/* Two evaluation orders of a float sum of k terms c_j each lie within (k-1) u sum|c_j| of the
 * exact sum (u = 2^-24, Higham, Accuracy and Stability, 4.2), so they differ by at most
 * 2 (k-1) u sum|c_j|. */
static void charge_add(circuit_diff_t *d, float a, float b, int32_t k, double abs_sum)
{
	diff_add(d, a, b);
	if (same_special(a, b))
		return;
	double e = fabs((double)a - (double)b);
	double bound = 2.0 * (k > 1 ? k - 1 : 0) * 0x1p-24 * abs_sum * (1 + 0x1p-20);
	if (!(e <= bound)) /* NaN included */
		d->nover++;
	if (bound > 0 && e / bound > d->max_bound_ratio)
		d->max_bound_ratio = e / bound;
}

void circuit_compare(const circuit_model_t *ref, const circuit_charge_terms_t *terms,
		     const circuit_model_t *res, const circuit_layout_t *lay, circuit_diffs_t *d)
{
	memset(d, 0, sizeof *d);
	for (int64_t g = 0; g < ref->nnodes; g++) {
		int64_t x = lay->new_index[g];
		diff_add(&d->voltage, res->voltage[x], ref->voltage[g]);
		/* a private node's charge was summed in the reference's order: no rounding
		 * allowance */
		if (x < lay->nprivate)
			charge_add(&d->private_charge, res->charge[x], ref->charge[g], 1,
				   terms->abs_sum[g]);
		else
			charge_add(&d->shared_charge, res->charge[x], ref->charge[g],
				   terms->count[g], terms->abs_sum[g]);
	}
	for (int64_t i = 0; i < ref->nwires * SEG; i++)
		diff_add(&d->current, res->current[i], ref->current[i]);
	for (int64_t i = 0; i < ref->nwires * (SEG - 1); i++)
		diff_add(&d->wire_voltage, res->wire_voltage[i], ref->wire_voltage[i]);
}
