/* oracle.h: the sequential-semantics oracle's program model, shared by the generator, the
 * plain sequential interpreter and the Tessera executor (see README in this folder). */
#ifndef TSR_ORACLE_H
#define TSR_ORACLE_H

#include <stdint.h>
#include <stdio.h>
#include <tessera.h>

#ifdef __cplusplus
extern "C" { /* kernel_cuda.cu */
#endif

/* Capacities: small on purpose, a program must run in milliseconds. */
#define OR_MAXROOT 3
#define OR_MAXF 3
#define OR_MAXEXT 12 /* points per dimension of a root region */
#define OR_MAXPART 16
#define OR_MAXNODE 192  /* root regions + every subregion of every partition */
#define OR_MAXCOLORS 27 /* subregions per partition, and points per index launch */
#define OR_MAXOP 320    /* repeat: a loop body repeated up to 14 times */
#define OR_MAXFUT 128
#define OR_MAXREQ 6
#define OR_MAXDEPTH 3 /* nesting levels of partitions below a root */

/* A root region: a box and up to three typed fields (field ids 0..nf-1). */
typedef struct {
	tsr_box_t bounds;
	int nf;
	tsr_type_t type[OR_MAXF];
} or_root_t;

/* A region node is a root (node i == root i for i < nroot) or a subregion of a partition. */
typedef struct {
	int root;         /* root region it lives in */
	int part;         /* partition it is a subregion of; -1 for a root */
	int64_t color[3]; /* its color in that partition */
	tsr_box_t box;    /* its points, in the root's coordinates */
	int depth;        /* 0 for a root, 1 for a subregion of a root's partition, ... */
} or_node_t;

enum { PK_TILES, PK_HALO, PK_BOXES };

/* A partition of a node. Its subregions are nodes first..first+nsub-1, in the runtime's color
 * order (dimension 0 of the color fastest). disjoint is computed from the boxes, pairwise. */
typedef struct {
	int parent;
	int kind;
	tsr_box_t colors;
	tsr_box_t domain; /* PK_HALO: the box that is tiled before the halo is added */
	int64_t halo[3];
	int nsub, first;
	int disjoint;
	/* several ranks: owner[i] >= 0 asks the executor for tsr_partition_set_rank(subregion i,
	 * owner[i] % tsr_nranks()); -1 keeps the default owner. The interpreter ignores it (one
	 * process: every owner is rank 0). Drawn apart from the generator's stream
	 * (or_draw_owners). */
	int32_t owner[OR_MAXCOLORS];
} or_part_t;

enum {
	OP_PART_CREATE,
	OP_PART_DESTROY,
	OP_FILL,
	OP_COPY,
	OP_LAUNCH,
	OP_INDEX,
	OP_MAP_READ,
	OP_MAP_WRITE,
	OP_FUT_CREATE,
	OP_FUT_WAIT,
	OP_FUT_DESTROY,
	OP_FENCE,
	/* tsr_trace_begin / tsr_trace_end(obj) around a repetition of a loop body (shape repeat):
	 * no effect on the data; the interpreter skips them */
	OP_TRACE_BEGIN,
	OP_TRACE_END,
	OP_NKINDS
};
enum { RQ_REGION = 1, RQ_PART = 2, RQ_FUTURE = 3 };

/* One requirement of a launch. RQ_REGION: obj is a node; RQ_PART: a partition, projected from
 * the launch point by identity (proj 0) or by a cyclic shift within its colors (proj 1);
 * RQ_FUTURE: a future. */
typedef struct {
	int kind, obj;
	tsr_privilege_t priv;
	int nf;
	int fields[OR_MAXF];
	int proj;
	int64_t shift[3];
} or_req_t;

typedef struct {
	int kind;
	/* partition / node / future; OP_COPY: source node, destination node */
	int obj, obj2;
	int field, field2;    /* OP_COPY: source field, destination field */
	tsr_privilege_t priv; /* OP_MAP_WRITE: TSR_WRITE or TSR_READ_WRITE */
	int64_t ival;         /* fill value, host-write salt, future value, launch argument */
	tsr_type_t ret_type;  /* launches: type the task returns (TSR_NONE: nothing) */
	tsr_redop_t redop;    /* OP_INDEX: reduction of the returns */
	int ret_mode;         /* 1: returns are product-safe (1, -1 or 2) */
	tsr_box_t domain;     /* OP_INDEX: launch domain */
	int nreq;
	or_req_t req[OR_MAXREQ];
	int fut; /* future produced (launches, OP_FUT_CREATE); -1: none */
	/* launches: Tessera's point tasks spin this long first, so that later ops are submitted
	 * while they are still pending */
	int delay_us;
	/* launches: float reductions (REDUCE and returns) use fractional values whose folds round,
	 * so that the result depends on the fold order */
	int fp_order;
	/* launches (shape repeat): the points whose coordinates add up to an even number fail
	 * (tsr_ctx_error) instead of running: what they write and return is poisoned */
	int fail;
} or_op_t;

typedef struct {
	uint64_t seed;
	int shape; /* the family that made it (OR_SHAPE_CLASSIC ... OR_SHAPE_WAR) */
	int nroot, nnode, npart, nfut, nop;
	or_root_t root[OR_MAXROOT];
	or_node_t node[OR_MAXNODE];
	or_part_t part[OR_MAXPART];
	tsr_type_t fut_type[OR_MAXFUT];
	or_op_t op[OR_MAXOP];
	int op_id[OR_MAXOP]; /* index of the op in the unfiltered program (for --keep) */
	/* shape repeat: repetitions of the loop body, those inside a trace, those perturbed */
	int reps, traced, perturbed;
} or_prog_t;

/* ---- generator (gen.c) */
/* Valid programs the generator can be told not to make (when the runtime refuses them, so that
 * the refusal does not hide other failures); the validator refuses them too. */
enum {
	/* WRITE / READ_WRITE / fill / copy into / host write of a region below an aliased
	 * partition */
	OR_AVOID_ALIASED_WRITE = 1,
	OR_AVOID_SAME_FIELD_COPY = 2, /* tsr_copy between two disjoint parts of one field */
	/* one field reduced with two different operators in one program */
	OR_AVOID_REDOP_SWITCH = 4,
};
extern unsigned or_avoid;
/* "aliased-write,same-field-copy" or "none" */
int or_parse_avoid(const char *list, unsigned *mask);
const char *or_avoid_str(unsigned mask, char *buf, size_t len);
/* Shapes: families of programs (README, "Shapes"). MIX and PIECES pick one of the others from
 * the seed; the rest are concrete. or_generate makes a program of the shape or_shape. */
enum {
	/* default: half classic, half one of the four coherence-by-pieces families */
	OR_SHAPE_MIX,
	OR_SHAPE_PIECES,    /* one of alternate, overlap, nested, war */
	OR_SHAPE_CLASSIC,   /* everything at random (the original generator) */
	OR_SHAPE_ALTERNATE, /* many partitions of one field, switching partition at every step */
	/* overlapping box lists that straddle tiles; WAR through misaligned tiles */
	OR_SHAPE_OVERLAP,
	/* tiles and halos of tiles and of halo subregions, writes to parents, reductions */
	OR_SHAPE_NESTED,
	/* one launch reads through halos and writes through tiles, other fields */
	OR_SHAPE_WAR,
	/* loops: a block of launches repeated, with and without tsr_trace_begin, some repetitions
	 * perturbed (never picked by mix or pieces) */
	OR_SHAPE_REPEAT,
	OR_NSHAPES
};
extern int or_shape;
int or_parse_shape(const char *name, int *shape);
const char *or_shape_str(int shape);
/* The concrete shape of seed's program under shape (MIX / PIECES choose by the seed). */
int or_shape_of(uint64_t seed, int shape);
void or_generate(uint64_t seed, or_prog_t *p);
/* Random owners for p's partitions, from a hash of the seed and the partition's index only: the
 * programs (ops, boxes, values) stay those the seed made before owners existed. */
void or_draw_owners(or_prog_t *p);
/* Keep only the ops whose original index has keep[id] != 0. */
void or_filter(or_prog_t *p, const unsigned char *keep);
/* Independent check that p is a valid program (alive objects, no interference, values that stay
 * exact): 0, or -1 with a reason in msg naming the op. */
int or_validate(const or_prog_t *p, char *msg, size_t len);
void or_print_prog(FILE *out, const or_prog_t *p);
void or_print_op(FILE *out, const or_prog_t *p, int i);
void or_node_name(const or_prog_t *p, int n, char *buf, size_t len);
/* A color or point of `dim` coordinates as "1,2,3". */
void or_color_str(int dim, const int64_t c[3], char *buf, size_t len);
void or_box_str(tsr_box_t b, char *buf, size_t len);
const char *or_priv_str(tsr_privilege_t priv);
const char *or_redop_str(tsr_redop_t op);
/* Counters of what generated programs contain (for coverage diagnostics). */
typedef struct {
	long ops[OP_NKINDS], reduce_aliased, reduce_region_index, write_nested, proj_shift,
		fut_consumed, halo_parts, box_parts, overlap_box_parts, nested_parts, dropped,
		/* fractional float SUM/PROD: REDUCE requirements, index launch futures */
		fp_reduce, fp_future,
		/* index launches on a field whose previous one went through another partition */
		/* launches reading one field through an aliased partition or overlapping region and
		   writing another field of the same root through a disjoint one */
		switches, war_in_launch,
		/* subregions of aliased box lists that overlap 2 or more subregions of a disjoint
		   partition of the same parent */
		straddle_boxes,
		/* partitions three levels down, or of a subregion of an aliased partition */
		deep_parts, shape[OR_NSHAPES], /* programs per concrete shape */
		/* repeat: repetitions of loop bodies, those inside traces, and the perturbed
		   ones */
		repetitions, traced_reps, perturbed_reps,
		/* launches whose points fail (tsr_ctx_error) */
		failing_ops;
} or_stats_t;
void or_stats_add(or_stats_t *s, const or_prog_t *p);
/* ops the generator built but the validator refused (a generator bug) */
extern long or_gen_dropped;

/* ---- kernels (kernel.c): the task body and host writes, run identically by both executors */
typedef struct {
	int32_t kind, priv, nf;
	int32_t field[OR_MAXF];
	int32_t type[OR_MAXF]; /* field types; for RQ_FUTURE type[0] is the future's type */
} or_kreq_t;
typedef struct {
	int32_t nreq, ret_type, ret_mode, delay_us, fp_order, fail;
	int64_t arg;
	or_kreq_t req[OR_MAXREQ];
	/* index launches: reduction of the returns (a CUDA variant folds into its slot) */
	int32_t ret_op;
} or_kargs_t;

void or_kargs(const or_prog_t *p, const or_op_t *op, or_kargs_t *a);
/* Run the body of one (point) task. pdim is 0 for a single launch. acc[r][k] is field k of
 * requirement r, fut[r] the value of a future requirement, ret receives the return value. */
void or_kernel(const or_kargs_t *a, int pdim, const int64_t point[3], tsr_accessor_t acc[][OR_MAXF],
	       const void *const fut[], void *ret);
void or_host_write(tsr_accessor_t *acc, tsr_privilege_t priv, int64_t salt);
/* exec.c: a variant's accessors and futures; kernel_cuda.cu: the CUDA variant. */
int or_gather(tsr_ctx_t *ctx, const void *args, size_t arglen, tsr_accessor_t acc[][OR_MAXF],
	      const void *fut[]);
void or_cuda_variant(tsr_ctx_t *ctx, const void *args, size_t arglen);
void or_opencl_variant(tsr_ctx_t *ctx, const void *args, size_t arglen); /* kernel_opencl.c */
size_t or_elem_offset(const tsr_accessor_t *a, const int64_t x[3]);
int or_box_next(tsr_box_t b, int64_t x[3]); /* iterate points: dimension 0 fastest */
void or_box_first(tsr_box_t b, int64_t x[3]);
int64_t or_to_i64(tsr_type_t t, const void *v);
void or_from_i64(tsr_type_t t, int64_t v, void *out);
void or_identity(tsr_type_t t, tsr_redop_t op, void *out);
void or_fold(tsr_type_t t, tsr_redop_t op, void *acc, const void *val);
void or_value_str(tsr_type_t t, const void *v, char *buf, size_t len);
/* Largest magnitude a field of this type may reach while every value stays an exact integer. */
double or_type_limit(tsr_type_t t);

/* ---- sequential interpreter (interp.c) */
/* A REDUCE requirement's private buffer for one point: dense, every element at the operator's
 * identity; the point folds into acc, then or_partial_fold folds it into data and frees it.
 * Partial values folded in color order are what Tessera promises (tessera.h, reductions). */
typedef struct {
	void *buf;
	tsr_accessor_t acc;  /* over buf */
	tsr_accessor_t data; /* over the interpreter's array */
	tsr_redop_t op;
	int point; /* index of the launch point in color order */
} or_partial_t;
void or_partial_open(or_partial_t *b, tsr_box_t box, tsr_accessor_t data, tsr_redop_t op,
		     int point);
void or_partial_fold(or_partial_t *b);
typedef struct {
	const or_prog_t *p;
	void *data[OR_MAXROOT][OR_MAXF]; /* plain arrays, dimension 0 fastest */
	uint64_t fut[OR_MAXFUT];         /* future values (type of fut_type) */
	/* Failed tasks, as Tessera keeps them (tessera.h, "Failed tasks"): per root field the boxes
	 * a failed or skipped task should have written (a box goes when a healthy WRITE covers it
	 * whole), per future whether it is poisoned, and the failures no fence reported yet. */
	tsr_box_t *poison[OR_MAXROOT][OR_MAXF];
	int npoison[OR_MAXROOT][OR_MAXF], cappoison[OR_MAXROOT][OR_MAXF];
	unsigned char fut_poison[OR_MAXFUT];
	int task_errors;
} or_interp_t;
/* Whether field f of node n holds poison (tsr_map would refuse to read it). */
int or_interp_poisoned(const or_interp_t *s, int n, int f);
/* Whether the point of a launch with op->fail fails (kernel.c; both executors ask it). */
int or_point_fails(const or_kargs_t *a, const int64_t point[3]);
int or_interp_init(or_interp_t *s, const or_prog_t *p);
void or_interp_free(or_interp_t *s);
void or_interp_op(or_interp_t *s, int i);
/* Accessor on the interpreter's array for field f of node n. */
tsr_accessor_t or_interp_acc(const or_interp_t *s, int n, int f, tsr_privilege_t priv);
/* Project a launch point to a color of req's partition. */
void or_project(const or_prog_t *p, const or_req_t *q, const int64_t point[3], int64_t color[3]);
int or_part_color_node(const or_prog_t *p, int part, const int64_t color[3]);

/* ---- Tessera executor (exec.c) */
int or_exec_register(void); /* register the tasks once per tsr_init */
/* Run p under Tessera and the interpreter in lockstep. Returns 0 if everything matched;
 * otherwise 1 with the first failure in msg. verbose prints each op as it runs. */
int or_exec(const or_prog_t *p, int verbose, char *msg, size_t len);
/* Fault injection, to show that the comparison catches a wrong runtime: when >= 0, the Tessera
 * side skips the launch number (or_exec_skip % n) of the n launches that write or return. */
extern int or_exec_skip;

#ifdef __cplusplus
}
#endif

#endif
