/* circuit_app.h: what apps/circuit's files share: the circuit in host arrays, Legion's generator,
 * the node numbering that makes the private/shared/ghost subregions boxes, and the baselines. */
#ifndef CIRCUIT_APP_H
#define CIRCUIT_APP_H

#include <stdint.h>

#include "circuit.h"

/* Legion's command-line parameters (examples/circuit/circuit.cc), same defaults. */
typedef struct circuit_params {
	int loops;  /* -l   outer loops (three tasks each) */
	int pieces; /* -p   pieces, one point task each */
	int npp;    /* -npp nodes per piece */
	int wpp;    /* -wpp wires per piece */
	int pct;    /* -pct percentage of wires that stay inside their piece */
	/* -s   seed of Legion's sequential loader; its parallel generator, ours, ignores it */
	int seed;
	int steps; /* -i   iterations of the RLC solve per loop */
} circuit_params_t;

/* A circuit in host arrays. Segment s of wire w is current[s * nwires + w] and
 * wire_voltage[s * nwires + w], the layout of Tessera's (wire x segment) regions. */
typedef struct circuit_model {
	int64_t nnodes, nwires;
	float *cap, *leakage, *charge, *voltage;   /* nnodes */
	int32_t *in, *out;                         /* nwires: node indices */
	float *inductance, *resistance, *wire_cap; /* nwires */
	float *current;                            /* CIRCUIT_SEGMENTS x nwires */
	float *wire_voltage;                       /* (CIRCUIT_SEGMENTS - 1) x nwires */
} circuit_model_t;

/* Where each piece's nodes are in our numbering: private nodes of all pieces first, piece by
 * piece, then shared nodes of all pieces, piece by piece. Boxes are inclusive. */
typedef struct circuit_layout {
	int pieces;
	/* padding included: private nodes are 0..nprivate-1 */
	int64_t nprivate, nshared;
	int64_t real_private, real_shared; /* Legion's counts, without padding */
	int64_t npadding;                  /* inert nodes added so that no subregion is empty */
	int64_t *pvt_lo, *pvt_hi;          /* per piece: its private nodes */
	int64_t *shr_lo, *shr_hi;          /* per piece: its shared nodes */
	/* per piece: bounding box of the other pieces' nodes it touches */
	int64_t *ghost_lo, *ghost_hi;
	int32_t *new_index; /* Legion's node index -> ours */
} circuit_layout_t;

int circuit_model_alloc(circuit_model_t *m, int64_t nnodes, int64_t nwires);
void circuit_model_free(circuit_model_t *m);
int circuit_model_copy(circuit_model_t *dst, const circuit_model_t *src);

/* Legion's parallel initialisation (circuit_init.cc, InitNodesTask and InitWiresTask): piece n's
 * nodes and wires each draw from erand48 seeded with {n, n, n}, in Legion's numbering. */
int circuit_generate(const circuit_params_t *prm, circuit_model_t *m);
/* Classify nodes (shared: touched by a wire of another piece), number them, and build `out`, the
 * same circuit in our numbering (padding nodes included). */
int circuit_layout_build(const circuit_params_t *prm, const circuit_model_t *legion,
			 circuit_layout_t *lay, circuit_model_t *out);
void circuit_layout_free(circuit_layout_t *lay);

/* What the last distribute_charge added to each node: the number of contributions and the sum
 * of their magnitudes (the scale of any rounding difference between two summation orders). */
typedef struct circuit_charge_terms {
	int32_t *count;
	double *abs_sum;
} circuit_charge_terms_t;

/* Plain sequential C, Legion's scalar code path, on a circuit in any numbering: `loops` loops,
 * then, if terms is not NULL, one more calc_new_currents and distribute_charge (no
 * update_voltages, so that the charges can be compared: see README.md, "Verification"). */
int circuit_reference_run(circuit_model_t *m, int loops, int steps, float dt,
			  circuit_charge_terms_t *terms);
void circuit_charge_terms_free(circuit_charge_terms_t *t);
/* Plain C/OpenMP on our numbering: the same kernels as the tasks, threads instead of tasks;
 * `probe` adds the extra calc_new_currents and distribute_charge. */
void circuit_openmp_run(circuit_model_t *m, const circuit_layout_t *lay, int pieces, int loops,
			int steps, float dt, int probe);

/* Voltages start in [-1, 1] and only leak; currents and wire voltages follow them. A magnitude
 * above this means the explicit RLC iteration diverged on a wire with a tiny capacitance, as it
 * does in Legion (README.md, "Verification"). */
#define CIRCUIT_DIVERGED 1e3

/* Differences between a result in our numbering and the reference in Legion's. */
typedef struct circuit_diff {
	int64_t count, ndiff;    /* values compared, not bit-identical */
	int64_t nspecial;        /* NaN or the same infinity on both sides */
	int64_t nnan;            /* NaN or infinity on one side only */
	int64_t ndiverged;       /* finite references above CIRCUIT_DIVERGED */
	double max_rel_diverged; /* their largest relative error */
	/* largest |result - reference|, largest |reference| (up to CIRCUIT_DIVERGED) */
	double max_abs, max_ref;
	/* largest |result - reference| / |reference| over nonzero references */
	double max_rel;
	double max_bound_ratio; /* charges: largest |result - reference| / (rounding bound) */
	int64_t nover;          /* charges: values outside their rounding bound */
} circuit_diff_t;
typedef struct circuit_diffs {
	circuit_diff_t voltage, current, wire_voltage, private_charge, shared_charge;
} circuit_diffs_t;
void circuit_compare(const circuit_model_t *ref, const circuit_charge_terms_t *terms,
		     const circuit_model_t *res, const circuit_layout_t *lay, circuit_diffs_t *d);

#endif /* CIRCUIT_APP_H */
