/* circuit.h: the three tasks of Legion's circuit simulation (calc_new_currents, distribute_charge,
 * update_voltages) and the CPU kernels behind them, shared with apps/circuit's OpenMP baseline. */
#ifndef TSR_TASKS_CIRCUIT_H
#define TSR_TASKS_CIRCUIT_H

#include <stddef.h>
#include <stdint.h>

#include <tessera.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CIRCUIT_SEGMENTS 10 /* segments per wire (Legion's WIRE_SEGMENTS) */
#define CIRCUIT_DELTAT 1e-6 /* time step in seconds (Legion's DELTAT) */

/* Fields of the node region, in order of addition (the ids tsr_fspace_add returns). */
enum {
	CIRCUIT_NODE_CAP,     /* f32 capacitance */
	CIRCUIT_NODE_LEAKAGE, /* f32 fraction of the voltage lost per loop */
	/* f32 charge gathered by distribute_charge, reset by update_voltages */
	CIRCUIT_NODE_CHARGE,
	CIRCUIT_NODE_VOLTAGE, /* f32 */
	CIRCUIT_NODE_NFIELDS
};
/* Fields of the wire region (1-D, one point per wire). */
enum {
	/* i32 global index of the node the wire starts at (always its own piece) */
	CIRCUIT_WIRE_IN,
	CIRCUIT_WIRE_OUT,        /* i32 global index of the node it ends at (any piece) */
	CIRCUIT_WIRE_INDUCTANCE, /* f32 */
	CIRCUIT_WIRE_RESISTANCE, /* f32 */
	CIRCUIT_WIRE_CAP,        /* f32 */
	CIRCUIT_WIRE_NFIELDS
};
/* The per-segment state lives in two 2-D regions, dimension 0 the wire and dimension 1 the
 * segment: field 0 of "currents" (wires x CIRCUIT_SEGMENTS) and of "wire voltages" (wires x
 * CIRCUIT_SEGMENTS-1, the voltages between segments). Dimension 0 being the fastest, segment s of
 * consecutive wires is contiguous: the struct-of-arrays layout of Legion's FID_CURRENT+s fields. */
enum { CIRCUIT_STATE_VALUE = 0 };

/* Requirements of each task, in launch order: Legion's (circuit_cpu.cc), less its FID_IN_LOC /
 * FID_OUT_LOC fields and update_voltages' node locator, which a CPU or GPU kernel here does not
 * need. calc_new_currents reads node voltages through the private, shared and ghost partitions;
 * distribute_charge adds charge to the private nodes with READ_WRITE and folds it into the shared
 * and the ghost nodes with two REDUCE(sum) requirements; update_voltages updates the private and
 * the shared nodes of its piece in one task. */
enum {
	CIRCUIT_CNC_WIRES,
	CIRCUIT_CNC_CURRENTS,
	CIRCUIT_CNC_VOLTAGES,
	CIRCUIT_CNC_PRIVATE,
	CIRCUIT_CNC_SHARED,
	CIRCUIT_CNC_GHOST,
	CIRCUIT_CNC_NREQS
};
enum {
	CIRCUIT_DC_WIRES,
	CIRCUIT_DC_CURRENTS,
	CIRCUIT_DC_PRIVATE,
	CIRCUIT_DC_SHARED,
	CIRCUIT_DC_GHOST,
	CIRCUIT_DC_NREQS
};
/* {voltage, charge} READ_WRITE through private then shared, {cap, leakage} READ through private
 * then shared */
enum {
	CIRCUIT_UV_PVT_STATE,
	CIRCUIT_UV_SHR_STATE,
	CIRCUIT_UV_PVT_CONST,
	CIRCUIT_UV_SHR_CONST,
	CIRCUIT_UV_NREQS
};
/* The tasks take their fields by position in each requirement (tsr_ctx_field), not by id, so a
 * launch lists them in this order: a wire requirement lists {in, out, inductance, resistance,
 * cap} (calc_new_currents) or {in, out} (distribute_charge); a segment-state requirement its one
 * field; a node requirement {voltage} (calc_new_currents), {charge} (distribute_charge),
 * {voltage, charge} (update_voltages' state) or {cap, leakage} (update_voltages' constants). */
enum {
	CIRCUIT_AT_WIRE_IN,
	CIRCUIT_AT_WIRE_OUT,
	CIRCUIT_AT_WIRE_INDUCTANCE,
	CIRCUIT_AT_WIRE_RESISTANCE,
	CIRCUIT_AT_WIRE_CAP
};
enum { CIRCUIT_AT_ONLY = 0 };                           /* requirements of one field */
enum { CIRCUIT_AT_VOLTAGE = 0, CIRCUIT_AT_CHARGE = 1 }; /* update_voltages' state */
enum { CIRCUIT_AT_CAP = 0, CIRCUIT_AT_LEAKAGE = 1 };    /* update_voltages' constants */

/* Work-items of the one work-group (CUDA: threads of the one block) that scans the counts in the
 * device variants of distribute_charge (circuit.cl explains the scheme). */
#define CIRCUIT_DC_SCAN_GROUP 256

/* By-value arguments of every launch (Legion's CircuitPiece.dt and .steps). */
typedef struct circuit_args {
	float dt;
	int steps;
} circuit_args_t;

/* A window on node values: v points at the value of node lo; it covers nodes lo..hi. A wire end
 * is looked up in the windows in order and uses the first that holds it. */
typedef struct circuit_window {
	float *v;
	int64_t lo, hi;
} circuit_window_t;

/* Solve every wire's RLC segments for `steps` iterations (Legion's calc_new_currents). Wires are
 * 0..n-1 of the arrays; segment s of wire w is cur[s * cur_ld + w] and wv[s * wv_ld + w]. Node
 * voltages come from the windows. Vectorized across wires. Returns the number of wire ends that
 * no window holds (they read voltage 0). */
int64_t circuit_calc_currents(int64_t n, const int32_t *in, const int32_t *out,
			      const float *inductance, const float *resistance,
			      const float *wire_cap, float *cur, size_t cur_ld, float *wv,
			      size_t wv_ld, int nwin, const circuit_window_t *win, float dt,
			      int steps);
/* Add -dt * first-segment current to each wire's in node and dt * last-segment current to its out
 * node, wire by wire, in that order (Legion's distribute_charge). cur_first/cur_last are segment 0
 * and segment CIRCUIT_SEGMENTS-1 of wires 0..n-1. Returns the number of ends no window holds. */
int64_t circuit_distribute_charge(int64_t n, const int32_t *in, const int32_t *out,
				  const float *cur_first, const float *cur_last, int nwin,
				  const circuit_window_t *win, float dt);
/* voltage = (voltage + charge / cap) * (1 - leakage); charge = 0 (Legion's update_voltages). */
void circuit_update_voltages(int64_t n, float *voltage, float *charge, const float *cap,
			     const float *leakage);

/* What each task's variants see, fetched and checked once for the CPU, CUDA and OpenCL variants
 * alike (circuit_cpu.c). Node windows are in lookup order: private, the piece's shared, ghost. In
 * an OpenCL variant a window's v is the field's cl_mem and win_offset[k] the byte offset of node lo
 * in it (the accessor's offset; 0 elsewhere). Each returns 0, or -1 after a task error that names
 * the task, the point and what was wrong. */
typedef struct circuit_cnc_view {
	tsr_accessor_t in, out, ind, res, cap, cur, wv;
	circuit_window_t win[3];
	size_t win_offset[3];
} circuit_cnc_view_t;
int circuit_cnc_view(tsr_ctx_t *ctx, size_t arglen, circuit_cnc_view_t *v);
typedef struct circuit_dc_view {
	tsr_accessor_t in, out, cur;
	circuit_window_t win[3];
	size_t win_offset[3];
} circuit_dc_view_t;
int circuit_dc_view(tsr_ctx_t *ctx, size_t arglen, circuit_dc_view_t *v);
typedef struct circuit_uv_view {
	tsr_accessor_t v[2], q[2], cap[2], leak[2]; /* [0] private nodes, [1] shared nodes */
} circuit_uv_view_t;
int circuit_uv_view(tsr_ctx_t *ctx, circuit_uv_view_t *v);

/* The three tasks with their CPU variants, CUDA variants where Tessera was built with CUDA and
 * OpenCL variants where StarPU has OpenCL. */
typedef struct circuit_tasks {
	tsr_task_t calc_new_currents, distribute_charge, update_voltages;
} circuit_tasks_t;
int circuit_tasks_register(circuit_tasks_t *t);
/* Build the OpenCL variants' kernels (circuit.cl) for every OpenCL device: after tsr_init, before
 * the first launch. TSR_OK (also without OpenCL), or tsr_opencl_program's error with the build log
 * in tsr_last_error. */
int circuit_opencl_load(void);

/* The variants, for tests that want to call or register them directly. */
void circuit_calc_new_currents_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen);
void circuit_distribute_charge_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen);
void circuit_update_voltages_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen);
void circuit_calc_new_currents_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void circuit_distribute_charge_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void circuit_update_voltages_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void circuit_calc_new_currents_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);
void circuit_distribute_charge_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);
void circuit_update_voltages_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);

#ifdef __cplusplus
}
#endif
#endif /* TSR_TASKS_CIRCUIT_H */
