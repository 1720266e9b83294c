/* circuit.c: Legion's circuit simulation (examples/circuit) on Tessera: a random circuit cut into
 * pieces, nodes split into private, shared and ghost subregions, three index launches per loop. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <tessera.h>

#include "app_util.h"
#include "circuit_app.h"

#define SEG CIRCUIT_SEGMENTS

typedef struct options {
	circuit_params_t prm;
	/* --charge-on: the kind of worker that runs distribute_charge (ANY: the scheduler's choice)
	 */
	tsr_worker_kind_t charge_on;
	int reps; /* timed repetitions, each from the initial circuit */
	int verify, exact, compare;
	/* -dump: print every wire's state after the last loop, Legion's format */
	int dump;
	int dump_reference; /* --dump-reference: the same for the sequential reference */
} options_t;

/* A loop's launches in a trace (tsr_trace_begin/end); --no-trace leaves it out. */
static int use_traces = 1;

static const char about[] = "Legion's circuit simulation (examples/circuit) on Tessera.";

/* What the options say together: --exact is --verify too; the sizes fit the i32 fields. */
static int settle(options_t *o)
{
	if (o->exact)
		o->verify = 1;
	/* node indices are i32 fields (2 padding nodes per piece at most) */
	if ((int64_t)o->prm.pieces * o->prm.npp + 2 * (int64_t)o->prm.pieces > INT32_MAX ||
	    (int64_t)o->prm.pieces * o->prm.wpp > INT32_MAX) {
		fprintf(stderr,
			"circuit: %d pieces x %d nodes or %d wires is more than 2^31 points\n",
			o->prm.pieces, o->prm.npp, o->prm.wpp);
		return -1;
	}
	return 0;
}

/* 0: run, 1: help or version printed, -1: usage error (said). */
static int parse(int argc, char **argv, options_t *o)
{
	memset(o, 0, sizeof *o);
	o->prm = (circuit_params_t){.loops = 2,
				    .pieces = 4,
				    .npp = 1024,
				    .wpp = 1024,
				    .pct = 95,
				    .seed = 12345,
				    .steps = 10000};
	o->reps = 1;
	int charge = -1; /* --charge-on cpu|cuda|opencl: 0, 1, 2; -1: not given */
	const app_opt_t opts[] = {
		{"-l", APP_OPT_INT, &o->prm.loops, 1, INT_MAX, NULL, "N",
		 "loops of the three tasks (default 2)"},
		{"-i", APP_OPT_INT, &o->prm.steps, 0, INT_MAX, NULL, "N",
		 "iterations of the RLC solve per loop (default 10000)"},
		{"-p", APP_OPT_INT, &o->prm.pieces, 1, INT_MAX, NULL, "N",
		 "pieces, one point task each (default 4)"},
		{"-npp", APP_OPT_INT, &o->prm.npp, 1, INT_MAX, NULL, "N",
		 "nodes per piece (default 1024)"},
		{"-wpp", APP_OPT_INT, &o->prm.wpp, 1, INT_MAX, NULL, "N",
		 "wires per piece (default 1024)"},
		{"-pct", APP_OPT_INT, &o->prm.pct, 0, 100, NULL, "N",
		 "percentage of wires whose both ends lie in their piece (default 95)"},
		{"-s", APP_OPT_INT, &o->prm.seed, INT_MIN, INT_MAX, NULL, "N",
		 "random seed (default 12345; printed only: like Legion's parallel\n"
		 "initialisation, piece n's generator is seeded with n)"},
		{"--charge-on", APP_OPT_WORDS, &charge, 0, 0, "cpu|cuda|opencl", "KIND",
		 "run distribute_charge on cpu, cuda or opencl workers only (a mapper;\n"
		 "default: where the scheduler puts it), e.g. a device's variant beside CPU\n"
		 "workers"},
		{"--reps", APP_OPT_INT, &o->reps, 1, INT_MAX, NULL, "N",
		 "run N times from the initial circuit (Tessera and OpenMP alternately)\n"
		 "and report the medians (default 1)"},
		{"--verify", APP_OPT_SET, &o->verify, 1, 0, NULL, NULL,
		 "run the plain sequential C version too and compare every node voltage,\n"
		 "wire current and wire voltage (see apps/circuit/README.md for the bound)"},
		{"--exact", APP_OPT_SET, &o->exact, 1, 0, NULL, NULL,
		 "like --verify, but require bit-identical results (holds when no node\n"
		 "gets charge from two pieces, e.g. -pct 100 or -p 1)"},
		{"--compare", APP_OPT_SET, &o->compare, 1, 0, NULL, NULL,
		 "run the plain C/OpenMP version too, with as many threads as CPU workers,\n"
		 "and print the ratio of the times"},
		{"-dump", APP_OPT_SET, &o->dump, 1, 0, NULL, NULL,
		 "after the last loop, print one line per wire on stdout: its segment currents,\n"
		 "then its inner voltages (Legion's -dump format, to diff against Legion)"},
		{"--no-trace", APP_OPT_SET, &use_traces, 0, 0, NULL, NULL,
		 "no tsr_trace_begin/end around a loop's launches (TSR_REPLAY=off\n"
		 "also stops Tessera from finding the loop by itself)"},
		{"--dump-reference", APP_OPT_SET, &o->dump_reference, 1, 0, NULL, NULL,
		 "the same lines for the plain sequential C version (--verify's\n"
		 "reference), after the same loops"},
	};
	const app_cli_t cli = {"circuit", about, opts, sizeof opts / sizeof opts[0], NULL};
	int rc = app_parse(&cli, argc, argv);
	if (rc)
		return rc;
	const tsr_worker_kind_t kinds[] = {TSR_WORKER_CPU, TSR_WORKER_CUDA, TSR_WORKER_OPENCL};
	o->charge_on = charge < 0 ? TSR_WORKER_ANY : kinds[charge];
	return settle(o);
}

/* Legion's flop count (circuit.cc): currents, charge, voltages, times the loops. */
static double legion_flops(const circuit_params_t *p)
{
	double W = (double)p->pieces * p->wpp, N = (double)p->pieces * p->npp;
	double ops = W * (SEG * 6 + (SEG - 1) * 4) * p->steps + W * 4 + N * 4;
	return ops * p->loops;
}

/* ------------------------------------------------------------ Tessera side */

typedef struct sim {
	tsr_region_t nodes, wires, currents, wire_voltages;
	tsr_partition_t privacy;  /* of nodes: all private (color 0), all shared (color 1) */
	tsr_partition_t pvt, shr; /* per piece, disjoint: of all private, of all shared */
	tsr_partition_t ghost;    /* per piece, aliased: of all shared */
	tsr_partition_t wire_part, current_part, wire_voltage_part; /* per piece, disjoint */
	circuit_tasks_t tasks;
	int have_nodes, have_wires, have_currents, have_wire_voltages;
} sim_t;

static const tsr_field_t wire_fields[] = {CIRCUIT_WIRE_IN, CIRCUIT_WIRE_OUT,
					  CIRCUIT_WIRE_INDUCTANCE, CIRCUIT_WIRE_RESISTANCE,
					  CIRCUIT_WIRE_CAP};
static const tsr_field_t wire_ends[] = {CIRCUIT_WIRE_IN, CIRCUIT_WIRE_OUT};
static const tsr_field_t state_value[] = {CIRCUIT_STATE_VALUE};
static const tsr_field_t node_voltage[] = {CIRCUIT_NODE_VOLTAGE};
static const tsr_field_t node_charge[] = {CIRCUIT_NODE_CHARGE};
static const tsr_field_t node_state[] = {CIRCUIT_NODE_VOLTAGE, CIRCUIT_NODE_CHARGE};
static const tsr_field_t node_const[] = {CIRCUIT_NODE_CAP, CIRCUIT_NODE_LEAKAGE};

/* Add the fields in enum order and check the ids the runtime gave them. */
static int add_fields(tsr_fspace_t fs, int n, const char *const *names, const tsr_type_t *types)
{
	for (int i = 0; i < n; i++) {
		tsr_field_t f;
		TRY(tsr_fspace_add(fs, names[i], types[i], 0, &f));
		if (f != i) {
			fprintf(stderr, "circuit: field '%s' got id %d, expected %d\n", names[i], f,
				i);
			return TSR_EINVAL;
		}
	}
	return TSR_OK;
}

static int make_region(const char *name, tsr_box_t b, int n, const char *const *names,
		       const tsr_type_t *types, tsr_region_t *r)
{
	tsr_fspace_t fs;
	TRY(tsr_fspace_create(&fs));
	int rc = add_fields(fs, n, names, types);
	if (rc == TSR_OK && (rc = tsr_region_create(name, b, fs, r)) != TSR_OK)
		fprintf(stderr, "circuit: tsr_region_create '%s': %s\n", name, tsr_last_error());
	tsr_fspace_destroy(fs); /* the region keeps its fields */
	return rc;
}

/* Copy n values (element size es) into a 1-D field. */
static int fill_1d(tsr_region_t r, tsr_field_t f, const void *src, size_t es, int64_t n)
{
	tsr_accessor_t a;
	PASS(app_map("load the circuit", r, f, TSR_WRITE, &a));
	memcpy(a.ptr, src, (size_t)n * es);
	TRY(tsr_unmap(r, f));
	return TSR_OK;
}

/* Copy a (wires x rows) host array, row s at src + s * W, to or from field 0 of a 2-D region. */
static int copy_2d(tsr_region_t r, float *host, int rows, int64_t W, int to_region)
{
	tsr_accessor_t a;
	PASS(app_map(to_region ? "load the wire state" : "read the wire state", r,
		     CIRCUIT_STATE_VALUE, to_region ? TSR_WRITE : TSR_READ, &a));
	for (int s = 0; s < rows; s++) {
		float *row = (float *)a.ptr + (size_t)s * a.stride[1];
		if (to_region)
			memcpy(row, host + (size_t)s * W, (size_t)W * sizeof(float));
		else
			memcpy(host + (size_t)s * W, row, (size_t)W * sizeof(float));
	}
	TRY(tsr_unmap(r, CIRCUIT_STATE_VALUE));
	return TSR_OK;
}

static int boxes_partition(tsr_region_t r, int n, const int64_t *lo, const int64_t *hi, int rows,
			   const char *name, tsr_partition_t *p)
{
	tsr_box_t *b = malloc((size_t)n * sizeof *b);
	if (!b) {
		fprintf(stderr, "circuit: out of memory\n");
		return TSR_ENOMEM;
	}
	for (int i = 0; i < n; i++)
		b[i] = rows ? tsr_box2(lo[i], hi[i], 0, rows - 1) : tsr_box1(lo[i], hi[i]);
	int rc = tsr_partition_boxes(r, n, b, name, p);
	free(b);
	if (rc != TSR_OK)
		return app_fail(name, rc);
	return TSR_OK;
}

/* The values the simulation changes (node voltages and charges, the wires' segment state), from m:
 * at creation, and again before each repetition so that every one starts from the initial
 * circuit. */
static int sim_set_state(sim_t *s, const circuit_model_t *m)
{
	PASS(fill_1d(s->nodes, CIRCUIT_NODE_CHARGE, m->charge, sizeof(float), m->nnodes));
	PASS(fill_1d(s->nodes, CIRCUIT_NODE_VOLTAGE, m->voltage, sizeof(float), m->nnodes));
	PASS(copy_2d(s->currents, m->current, SEG, m->nwires, 1));
	PASS(copy_2d(s->wire_voltages, m->wire_voltage, SEG - 1, m->nwires, 1));
	return TSR_OK;
}

static int sim_create(sim_t *s, const circuit_model_t *m, const circuit_layout_t *lay,
		      const circuit_params_t *prm)
{
	static const char *const node_names[] = {"node capacitance", "leakage", "charge",
						 "node voltage"};
	static const tsr_type_t node_types[] = {TSR_F32, TSR_F32, TSR_F32, TSR_F32};
	static const char *const wire_names[] = {"in_ptr", "out_ptr", "inductance", "resistance",
						 "wire capacitance"};
	static const tsr_type_t wire_types[] = {TSR_I32, TSR_I32, TSR_F32, TSR_F32, TSR_F32};
	static const char *const cur_names[] = {"current"};
	static const char *const wv_names[] = {"wire voltage"};
	static const tsr_type_t f32[] = {TSR_F32};
	const int P = prm->pieces;
	const int64_t W = m->nwires, N = m->nnodes;

	PASS(make_region("all_nodes", tsr_box1(0, N - 1), CIRCUIT_NODE_NFIELDS, node_names,
			 node_types, &s->nodes));
	s->have_nodes = 1;
	PASS(make_region("all_wires", tsr_box1(0, W - 1), CIRCUIT_WIRE_NFIELDS, wire_names,
			 wire_types, &s->wires));
	s->have_wires = 1;
	PASS(make_region("currents", tsr_box2(0, W - 1, 0, SEG - 1), 1, cur_names, f32,
			 &s->currents));
	s->have_currents = 1;
	PASS(make_region("wire_voltages", tsr_box2(0, W - 1, 0, SEG - 2), 1, wv_names, f32,
			 &s->wire_voltages));
	s->have_wire_voltages = 1;

	/* The node tree: nodes = all private | all shared; all private = private of piece 0 | ... ;
	 * all shared = shared of piece 0 | ..., and again, aliased, the ghosts of each piece. */
	tsr_box_t halves[2] = {tsr_box1(0, lay->nprivate - 1), tsr_box1(lay->nprivate, N - 1)};
	TRY(tsr_partition_boxes(s->nodes, 2, halves, "privacy", &s->privacy));
	tsr_region_t all_private, all_shared;
	TRY(tsr_partition_subregion(s->privacy, (int64_t[3]){0, 0, 0}, &all_private));
	TRY(tsr_partition_subregion(s->privacy, (int64_t[3]){1, 0, 0}, &all_shared));
	PASS(boxes_partition(all_private, P, lay->pvt_lo, lay->pvt_hi, 0, "private", &s->pvt));
	PASS(boxes_partition(all_shared, P, lay->shr_lo, lay->shr_hi, 0, "shared", &s->shr));
	PASS(boxes_partition(all_shared, P, lay->ghost_lo, lay->ghost_hi, 0, "ghost", &s->ghost));

	/* Wires: equal pieces, as Legion's equal partition (and its preimage by in_ptr, which is
	 * the same since a wire starts in its own piece). */
	int64_t *wlo = malloc((size_t)P * sizeof *wlo), *whi = malloc((size_t)P * sizeof *whi);
	if (!wlo || !whi) {
		free(wlo);
		free(whi);
		fprintf(stderr, "circuit: out of memory\n");
		return TSR_ENOMEM;
	}
	for (int n = 0; n < P; n++) {
		wlo[n] = (int64_t)n * prm->wpp;
		whi[n] = (int64_t)(n + 1) * prm->wpp - 1;
	}
	int rc = boxes_partition(s->wires, P, wlo, whi, 0, "wires", &s->wire_part);
	if (!rc)
		rc = boxes_partition(s->currents, P, wlo, whi, SEG, "wire currents",
				     &s->current_part);
	if (!rc)
		rc = boxes_partition(s->wire_voltages, P, wlo, whi, SEG - 1, "wire voltages",
				     &s->wire_voltage_part);
	free(wlo);
	free(whi);
	if (rc)
		return rc;

	PASS(fill_1d(s->nodes, CIRCUIT_NODE_CAP, m->cap, sizeof(float), N));
	PASS(fill_1d(s->nodes, CIRCUIT_NODE_LEAKAGE, m->leakage, sizeof(float), N));
	PASS(fill_1d(s->wires, CIRCUIT_WIRE_IN, m->in, sizeof(int32_t), W));
	PASS(fill_1d(s->wires, CIRCUIT_WIRE_OUT, m->out, sizeof(int32_t), W));
	PASS(fill_1d(s->wires, CIRCUIT_WIRE_INDUCTANCE, m->inductance, sizeof(float), W));
	PASS(fill_1d(s->wires, CIRCUIT_WIRE_RESISTANCE, m->resistance, sizeof(float), W));
	PASS(fill_1d(s->wires, CIRCUIT_WIRE_CAP, m->wire_cap, sizeof(float), W));
	PASS(sim_set_state(s, m));
	TRY(circuit_tasks_register(&s->tasks));
	return TSR_OK;
}

static void sim_destroy(sim_t *s)
{
	/* destroying a root region destroys its partitions */
	if (s->have_nodes)
		tsr_region_destroy(s->nodes);
	if (s->have_wires)
		tsr_region_destroy(s->wires);
	if (s->have_currents)
		tsr_region_destroy(s->currents);
	if (s->have_wire_voltages)
		tsr_region_destroy(s->wire_voltages);
	memset(s, 0, sizeof *s);
}

/* The privileges of Legion's circuit.cc, requirement for requirement (apps/circuit/circuit.h). */
static int launch_calc_new_currents(sim_t *s, tsr_box_t dom, const circuit_args_t *args)
{
	tsr_req_t r[CIRCUIT_CNC_NREQS];
	r[CIRCUIT_CNC_WIRES] = tsr_req_part(s->wire_part, TSR_READ, 5, wire_fields);
	r[CIRCUIT_CNC_CURRENTS] = tsr_req_part(s->current_part, TSR_READ_WRITE, 1, state_value);
	r[CIRCUIT_CNC_VOLTAGES] =
		tsr_req_part(s->wire_voltage_part, TSR_READ_WRITE, 1, state_value);
	r[CIRCUIT_CNC_PRIVATE] = tsr_req_part(s->pvt, TSR_READ, 1, node_voltage);
	r[CIRCUIT_CNC_SHARED] = tsr_req_part(s->shr, TSR_READ, 1, node_voltage);
	r[CIRCUIT_CNC_GHOST] = tsr_req_part(s->ghost, TSR_READ, 1, node_voltage);
	TRY(tsr_run(s->tasks.calc_new_currents, &(tsr_launch_t){.domain = dom,
								.reqs = {CIRCUIT_CNC_NREQS, r},
								.args = args,
								.arglen = sizeof *args}));
	return TSR_OK;
}

/* Private charges READ_WRITE (only the piece's own wires touch them), shared and ghost charges
 * REDUCE(sum): every piece folds into buffers of its own and the runtime combines them. */
static int launch_distribute_charge(sim_t *s, tsr_box_t dom, const circuit_args_t *args)
{
	tsr_req_t r[CIRCUIT_DC_NREQS];
	r[CIRCUIT_DC_WIRES] = tsr_req_part(s->wire_part, TSR_READ, 2, wire_ends);
	r[CIRCUIT_DC_CURRENTS] = tsr_req_part(s->current_part, TSR_READ, 1, state_value);
	r[CIRCUIT_DC_PRIVATE] = tsr_req_part(s->pvt, TSR_READ_WRITE, 1, node_charge);
	r[CIRCUIT_DC_SHARED] = tsr_req_part(s->shr, TSR_REDUCE(TSR_SUM), 1, node_charge);
	r[CIRCUIT_DC_GHOST] = tsr_req_part(s->ghost, TSR_REDUCE(TSR_SUM), 1, node_charge);
	TRY(tsr_run(s->tasks.distribute_charge, &(tsr_launch_t){.domain = dom,
								.reqs = {CIRCUIT_DC_NREQS, r},
								.args = args,
								.arglen = sizeof *args}));
	return TSR_OK;
}

/* The piece's private and shared nodes in one task, as Legion does. */
static int launch_update_voltages(sim_t *s, tsr_box_t dom, const circuit_args_t *args)
{
	tsr_req_t r[CIRCUIT_UV_NREQS];
	r[CIRCUIT_UV_PVT_STATE] = tsr_req_part(s->pvt, TSR_READ_WRITE, 2, node_state);
	r[CIRCUIT_UV_SHR_STATE] = tsr_req_part(s->shr, TSR_READ_WRITE, 2, node_state);
	r[CIRCUIT_UV_PVT_CONST] = tsr_req_part(s->pvt, TSR_READ, 2, node_const);
	r[CIRCUIT_UV_SHR_CONST] = tsr_req_part(s->shr, TSR_READ, 2, node_const);
	TRY(tsr_run(s->tasks.update_voltages, &(tsr_launch_t){.domain = dom,
							      .reqs = {CIRCUIT_UV_NREQS, r},
							      .args = args,
							      .arglen = sizeof *args}));
	return TSR_OK;
}

/* One loop: Legion's three index launches over the pieces. */
static int sim_loop(sim_t *s, int pieces, const circuit_args_t *args)
{
	const tsr_box_t dom = tsr_box1(0, pieces - 1);
	PASS(launch_calc_new_currents(s, dom, args));
	PASS(launch_distribute_charge(s, dom, args));
	PASS(launch_update_voltages(s, dom, args));
	return TSR_OK;
}

/* --verify: one more calc_new_currents and distribute_charge, without update_voltages, which
 * would reset the charges before they can be compared. */
static int sim_probe(sim_t *s, int pieces, const circuit_args_t *args)
{
	const tsr_box_t dom = tsr_box1(0, pieces - 1);
	PASS(launch_calc_new_currents(s, dom, args));
	PASS(launch_distribute_charge(s, dom, args));
	return TSR_OK;
}

/* Copy the node voltages, charges and the wire state back into m (our numbering). */
static int sim_read(sim_t *s, circuit_model_t *m)
{
	tsr_accessor_t a;
	PASS(app_map("read the node voltages", s->nodes, CIRCUIT_NODE_VOLTAGE, TSR_READ, &a));
	memcpy(m->voltage, a.ptr, (size_t)m->nnodes * sizeof(float));
	TRY(tsr_unmap(s->nodes, CIRCUIT_NODE_VOLTAGE));
	PASS(app_map("read the node charges", s->nodes, CIRCUIT_NODE_CHARGE, TSR_READ, &a));
	memcpy(m->charge, a.ptr, (size_t)m->nnodes * sizeof(float));
	TRY(tsr_unmap(s->nodes, CIRCUIT_NODE_CHARGE));
	PASS(copy_2d(s->currents, m->current, SEG, m->nwires, 0));
	PASS(copy_2d(s->wire_voltages, m->wire_voltage, SEG - 1, m->nwires, 0));
	return TSR_OK;
}

/* ------------------------------------------------------------ verification */

static void print_diff(const char *what, const circuit_diff_t *d)
{
	app_printf("verify: %-14s %10lld values, %9lld not bit-identical, max abs err %.3e (max "
		   "|ref| %.3e, normwise %.3e), max rel err %.3e",
		   what, (long long)d->count, (long long)d->ndiff, d->max_abs, d->max_ref,
		   d->max_ref > 0 ? d->max_abs / d->max_ref : 0.0, d->max_rel);
	if (d->ndiverged)
		app_printf(", %lld diverged (|ref| > %.0e, max rel err %.3e)",
			   (long long)d->ndiverged, CIRCUIT_DIVERGED, d->max_rel_diverged);
	if (d->nspecial)
		app_printf(", %lld NaN/inf on both sides", (long long)d->nspecial);
	if (d->nnan)
		app_printf(", %lld NaN/inf on one side only!", (long long)d->nnan);
	app_printf("\n");
}

/* The bounds of README.md ("Verification"). Only the order in which a shared node's charges are
 * summed may differ from the reference: charges get the rigorous bound of a reordered float sum
 * (private ones none). A different charge sum can only flip the rounding of a node voltage by an
 * ulp, rarely; voltages, currents and wire voltages get a normwise bound of 16 ulps per loop,
 * which such flips stay far below and which a wrong value, or one RLC step less, exceeds. */
static int check_diffs(const char *who, const circuit_model_t *ref,
		       const circuit_charge_terms_t *terms, const circuit_model_t *res,
		       const circuit_layout_t *lay, int loops, int exact)
{
	circuit_diffs_t d;
	circuit_compare(ref, terms, res, lay, &d);
	const double tol = loops * 0x1p-20;
	app_printf("verify: %s against the sequential reference after %d loops and a probe\n", who,
		   loops);
	print_diff("node voltages", &d.voltage);
	print_diff("wire currents", &d.current);
	print_diff("wire voltages", &d.wire_voltage);
	print_diff("private charge", &d.private_charge);
	print_diff("shared charge", &d.shared_charge);
	app_printf("verify: %-14s %10lld outside the reordering bound 2(k-1)u sum|c| (largest "
		   "error/bound %.3f)\n",
		   "shared charge", (long long)d.shared_charge.nover,
		   d.shared_charge.max_bound_ratio);
	const circuit_diff_t *state[3] = {&d.voltage, &d.current, &d.wire_voltage};
	int ok = !d.private_charge.ndiff && !d.private_charge.nnan && !d.shared_charge.nover &&
		 !d.shared_charge.nnan;
	for (int i = 0; i < 3; i++) {
		const circuit_diff_t *x = state[i];
		if (x->nnan || (x->max_ref > 0 && x->max_abs > tol * x->max_ref) ||
		    x->max_rel_diverged > tol)
			ok = 0;
	}
	if (exact)
		for (int i = 0; i < 3; i++)
			ok = ok && !state[i]->ndiff;
	if (exact && d.shared_charge.ndiff)
		ok = 0;
	if (exact)
		app_printf("verify: %s: %s (every value bit-identical required)\n", who,
			   ok ? "PASS" : "FAIL");
	else
		app_printf("verify: %s: %s (private charges bit-identical, shared charges within "
			   "the reordering bound, state within normwise %.3e)\n",
			   who, ok ? "PASS" : "FAIL", tol);
	return ok;
}

/* ------------------------------------------------------------ main */

/* Everything one run holds; freed by run_free whatever happened. */
typedef struct run {
	options_t o;
	circuit_model_t legion; /* the generated circuit, Legion's numbering */
	circuit_model_t ours;   /* the same, our numbering: what Tessera and OpenMP start from */
	circuit_model_t result; /* Tessera's final state (--verify) */
	/* Tessera's state after the last loop, before the probe (-dump) */
	circuit_model_t final;
	circuit_model_t omp; /* OpenMP's state (--compare) */
	circuit_model_t ref; /* the sequential reference's (--verify) */
	circuit_layout_t lay;
	circuit_charge_terms_t terms;
	double *t_tsr, *t_omp; /* per repetition */
	/* --compare's OpenMP threads: Tessera's CPU workers, 1 at least */
	int nworkers;
} run_t;

static void run_free(run_t *r)
{
	circuit_model_free(&r->legion);
	circuit_model_free(&r->ours);
	circuit_model_free(&r->result);
	circuit_model_free(&r->final);
	circuit_model_free(&r->omp);
	circuit_model_free(&r->ref);
	circuit_layout_free(&r->lay);
	circuit_charge_terms_free(&r->terms);
	free(r->t_tsr);
	free(r->t_omp);
}

/* Repetition k of the baseline, on a fresh copy of the initial circuit, with as many threads as
 * Tessera has CPU workers. */
static int run_openmp(run_t *r, int k)
{
	const circuit_params_t *prm = &r->o.prm;
	circuit_model_free(&r->omp);
	if (circuit_model_copy(&r->omp, &r->ours)) {
		fprintf(stderr, "circuit: out of memory for the OpenMP copy\n");
		return -1;
	}
#ifdef _OPENMP
	omp_set_num_threads(r->nworkers);
#endif
	double t0 = app_now();
	circuit_openmp_run(&r->omp, &r->lay, prm->pieces, prm->loops, prm->steps,
			   (float)CIRCUIT_DELTAT, 0);
	r->t_omp[k] = app_now() - t0;
	return 0;
}

/* -dump: Tessera's state after the last loop of the last repetition, read before --verify's
 * probe runs one more calc_new_currents (Legion dumps after its loops only). */
static int read_final_state(run_t *r, sim_t *sim)
{
	if (circuit_model_alloc(&r->final, r->ours.nnodes, r->ours.nwires)) {
		fprintf(stderr, "circuit: out of memory for -dump\n");
		return TSR_ENOMEM;
	}
	return sim_read(sim, &r->final);
}

/* Repetition k on Tessera, from the initial circuit: timed like Legion, from a fence that ends
 * the initialisation to a fence after the last loop. After the last repetition (--verify), the
 * probe and the results. */
static int tessera_rep(run_t *r, sim_t *sim, const circuit_args_t *args, int k)
{
	const circuit_params_t *prm = &r->o.prm;
	if (k > 0)
		PASS(sim_set_state(sim, &r->ours)); /* sim_create loaded it for the first */
	int rc = tsr_fence();
	if (rc != TSR_OK)
		return app_fail("initialisation", rc);
	double t0 = app_now();
	for (int l = 0; l < prm->loops; l++) {
		int64_t done = (int64_t)k * prm->loops + l + 1;
		if (use_traces)
			TRY(tsr_trace_begin(1));
		PASS(sim_loop(sim, prm->pieces, args));
		if (use_traces)
			TRY(tsr_trace_end(1));
		/* the progress line (when on) waits for the loops now and then to count them */
		if (app_progress_due(done)) {
			TRY(tsr_fence());
			app_progress_done(done);
		}
	}
	rc = tsr_fence();
	r->t_tsr[k] = app_now() - t0;
	if (rc != TSR_OK) {
		app_printf("FAILURE!\n");
		return app_fail("main loop", rc);
	}
	if (k < r->o.reps - 1)
		return TSR_OK;
	if (r->o.dump)
		PASS(read_final_state(r, sim));
	if (!r->o.verify)
		return TSR_OK;
	if (circuit_model_alloc(&r->result, r->ours.nnodes, r->ours.nwires)) {
		fprintf(stderr, "circuit: out of memory for the results\n");
		return TSR_ENOMEM;
	}
	PASS(sim_probe(sim, prm->pieces, args));
	PASS(sim_read(sim, &r->result));
	TRY(tsr_fence());
	return TSR_OK;
}

/* Repetition k of the baseline inside the Tessera session. Idle StarPU workers poll for tasks and
 * would compete with the OpenMP threads for the cores (the baseline ran ~2.5x slower beside
 * them), so they sleep meanwhile: tsr_pause, after the fence that ended repetition k. */
static int openmp_rep(run_t *r, int k)
{
	TRY(tsr_pause());
	int rc = run_openmp(r, k) ? TSR_ENOMEM : TSR_OK;
	TRY(tsr_resume());
	return rc;
}

/* The settings and the circuit, in Legion's words. Printed once tsr_init has said which rank
 * reports (several ranks: rank 0 alone), so after the circuit is generated. */
static void print_settings(const run_t *r)
{
	const circuit_params_t *prm = &r->o.prm;
	app_printf("circuit settings: loops=%d pieces=%d nodes/piece=%d wires/piece=%d "
		   "pct_in_piece=%d seed=%d\n",
		   prm->loops, prm->pieces, prm->npp, prm->wpp, prm->pct, prm->seed);
	app_printf("Initializing circuit simulation...\n");
	app_printf("circuit: %lld nodes: %lld private, %lld shared (+%lld padding); %lld wires\n",
		   (long long)r->legion.nnodes, (long long)r->lay.real_private,
		   (long long)r->lay.real_shared, (long long)r->lay.npadding,
		   (long long)r->legion.nwires);
	fflush(stdout);
}

/* --charge-on's mapper: distribute_charge on workers of one kind, the other tasks anywhere. */
static void charge_mapper(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	if (!strcmp(q->task_name, "distribute_charge"))
		m->kind = *(const tsr_worker_kind_t *)arg;
}

/* --charge-on: TSR_OK, or TSR_EINVAL said when no worker of that kind runs (the tasks could not).
 */
static int map_charge(const tsr_worker_kind_t *kind)
{
	static const char *const names[] = {"any", "CPU", "CUDA", "OpenCL"};
	const int have[] = {1, tsr_ncpu_workers(), tsr_ncuda_workers(), tsr_nopencl_workers()};
	if (*kind == TSR_WORKER_ANY)
		return TSR_OK;
	if (!have[*kind]) {
		fprintf(stderr, "circuit: --charge-on: Tessera started no %s worker\n",
			names[*kind]);
		return TSR_EINVAL;
	}
	return tsr_set_mapper(charge_mapper, (void *)kind);
}

/* The whole run in one Tessera session: repetition k of Tessera, then repetition k of the OpenMP
 * version, alternately, so that a change of load on the machine hits both. */
static int run_all(run_t *r)
{
	const circuit_params_t *prm = &r->o.prm;
	const circuit_args_t args = {(float)CIRCUIT_DELTAT, prm->steps};
	PASS(app_start());
	print_settings(r);
	sim_t sim;
	memset(&sim, 0, sizeof sim);
	/* the OpenCL variants' kernels, built for each OpenCL device before any task needs them */
	int rc = circuit_opencl_load();
	if (rc != TSR_OK)
		app_fail("building the OpenCL kernels (apps/circuit/circuit.cl)", rc);
	else if ((rc = map_charge(&r->o.charge_on)) == TSR_OK)
		rc = sim_create(&sim, &r->ours, &r->lay, prm);
	if (rc == TSR_OK) {
		/* --compare's OpenMP threads: one at least, when only device workers run */
		r->nworkers = tsr_ncpu_workers() > 0 ? tsr_ncpu_workers() : 1;
		app_printf("Finished initializing simulation...\n");
		app_printf("circuit: Tessera with %d CPU workers, %d CUDA workers, %d OpenCL "
			   "workers%s, scheduler %s\n",
			   tsr_ncpu_workers(), tsr_ncuda_workers(), tsr_nopencl_workers(),
			   app_ranks_note(), tsr_sched_name());
		app_printf("Starting main simulation loop\n");
		fflush(stdout);
	}
	app_progress_begin("loop", (int64_t)r->o.reps * prm->loops, 0);
	for (int k = 0; rc == TSR_OK && k < r->o.reps; k++) {
		rc = tessera_rep(r, &sim, &args, k);
		if (rc == TSR_OK && r->o.compare)
			rc = openmp_rep(r, k);
	}
	if (rc == TSR_OK)
		app_progress_end((int64_t)r->o.reps * prm->loops);
	sim_destroy(&sim);
	int frc = tsr_finalize();
	if (frc != TSR_OK) {
		app_fail("tsr_finalize", frc);
		rc = rc ? rc : frc;
	}
	return rc;
}

static void print_times(run_t *r)
{
	const circuit_params_t *prm = &r->o.prm;
	const int n = r->o.reps;
	double tsr = app_median(r->t_tsr, n); /* sorts */
	app_printf("SUCCESS!\n");
	app_printf("ELAPSED TIME = %7.3f s\n", tsr);
	app_printf("GFLOPS = %7.3f GFLOPS\n", 1e-9 * legion_flops(prm) / tsr);
	if (n > 1)
		app_printf("circuit: median of %d repetitions (min %.3f s, max %.3f s)\n", n,
			   r->t_tsr[0], r->t_tsr[n - 1]);
	if (!r->o.compare)
		return;
	int nthreads = r->nworkers;
#ifndef _OPENMP
	nthreads = 1;
#endif
	double omp = app_median(r->t_omp, n);
	app_printf("OpenMP (%d threads): ELAPSED TIME = %7.3f s, GFLOPS = %7.3f GFLOPS", nthreads,
		   omp, 1e-9 * legion_flops(prm) / omp);
	if (n > 1)
		app_printf(" (min %.3f s, max %.3f s)", r->t_omp[0], r->t_omp[n - 1]);
	app_printf("\n");
	app_printf("compare: Tessera/OpenMP speed ratio = %.3f (OpenMP time / Tessera time, "
		   "medians)\n",
		   omp / tsr);
}

/* Legion's -dump format (circuit.cc): one line per wire, in Legion's wire order (which is ours),
 * its segment currents then its inner voltages, each as " %.5g", so that the two outputs diff.
 * Several ranks: every rank read the whole state (sim_read maps it, gathering it on every rank);
 * rank 0 alone prints it, so that the lines come once and whole. */
static void dump_wires(const circuit_model_t *m)
{
	if (app_rank() != 0)
		return;
	for (int64_t w = 0; w < m->nwires; w++) {
		for (int s = 0; s < SEG; s++)
			printf(" %.5g", m->current[s * m->nwires + w]);
		for (int s = 0; s < SEG - 1; s++)
			printf(" %.5g", m->wire_voltage[s * m->nwires + w]);
		printf("\n");
	}
}

/* --dump-reference: the sequential reference after the same loops (no probe), printed as -dump
 * prints Tessera's state; 1 on success. */
static int dump_reference(run_t *r)
{
	const circuit_params_t *prm = &r->o.prm;
	circuit_model_t ref;
	if (circuit_model_copy(&ref, &r->legion)) {
		fprintf(stderr, "circuit: out of memory for --dump-reference\n");
		return 0;
	}
	circuit_reference_run(&ref, prm->loops, prm->steps, (float)CIRCUIT_DELTAT, NULL);
	dump_wires(&ref);
	circuit_model_free(&ref);
	return 1;
}

/* FNV-1a over n floats' bytes, continuing from h. */
static uint64_t digest(uint64_t h, const float *v, int64_t n)
{
	const unsigned char *b = (const unsigned char *)v;
	for (size_t i = 0; i < (size_t)n * sizeof(float); i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* One number for Tessera's whole final state, bit for bit: runs that must agree exactly (the same
 * circuit on other workers, tests/circuit/verify.sh) compare it. */
static uint64_t state_digest(const circuit_model_t *m)
{
	uint64_t h = 0xcbf29ce484222325ull;
	h = digest(h, m->voltage, m->nnodes);
	h = digest(h, m->charge, m->nnodes);
	h = digest(h, m->current, SEG * m->nwires);
	return digest(h, m->wire_voltage, (SEG - 1) * m->nwires);
}

/* 1 when every verification passes. */
static int run_verify(run_t *r)
{
	const circuit_params_t *prm = &r->o.prm;
	const float dt = (float)CIRCUIT_DELTAT;
	int loops = prm->loops, ok = 1;
	double t0 = app_now();
	if (circuit_model_copy(&r->ref, &r->legion) ||
	    circuit_reference_run(&r->ref, loops, prm->steps, dt, &r->terms)) {
		fprintf(stderr, "circuit: out of memory for the reference\n");
		return 0;
	}
	app_printf("verify: sequential reference: %.3f s\n", app_now() - t0);
	ok &= check_diffs("Tessera", &r->ref, &r->terms, &r->result, &r->lay, loops, r->o.exact);
	app_printf("verify: Tessera's state digest %016llx (FNV-1a of the whole state, bits)\n",
		   (unsigned long long)state_digest(&r->result));
	if (r->o.compare) {
		circuit_openmp_run(&r->omp, &r->lay, prm->pieces, 0, prm->steps, dt, 1);
		ok &= check_diffs("OpenMP", &r->ref, &r->terms, &r->omp, &r->lay, loops,
				  r->o.exact);
	}
	return ok;
}

int main(int argc, char **argv)
{
	run_t r;
	memset(&r, 0, sizeof r);
	int prc = parse(argc, argv, &r.o);
	if (prc)
		return prc > 0 ? 0 : 2;
	const circuit_params_t *prm = &r.o.prm;
	int status = 1;
	r.t_tsr = calloc(r.o.reps, sizeof(double));
	r.t_omp = calloc(r.o.reps, sizeof(double));
	if (!r.t_tsr || !r.t_omp || circuit_generate(prm, &r.legion) ||
	    circuit_layout_build(prm, &r.legion, &r.lay, &r.ours)) {
		fprintf(stderr, "circuit: out of memory for the circuit\n");
		goto out;
	}
	if (run_all(&r) != TSR_OK)
		goto out;
	print_times(&r);
	if (r.o.dump)
		dump_wires(&r.final);
	if (r.o.dump_reference && !dump_reference(&r))
		goto out;
	fflush(stdout);
	if (r.o.verify && !run_verify(&r))
		goto out;
	status = 0;
out:
	run_free(&r);
	return status;
}
