/* tessera.h: the whole public API of Tessera, a regions-and-tasks runtime on StarPU.
 * Read it top to bottom: it is grouped by concept and every call has a one-line comment.
 *
 * Threads: the thread that calls tsr_init owns the runtime until tsr_finalize. Every call that
 * touches runtime state made from another thread returns TSR_ESTATE naming the call; so does any
 * such call made from inside a task variant (it names the task): a variant cannot wait, launch or
 * map, it returns its value and the host or a later task goes on. Of two threads calling tsr_init
 * at once, one wins and the other gets TSR_ESTATE. Pure helpers (tsr_box_*, tsr_type_*, error
 * names and tsr_last_error, which is per thread) and the tsr_ctx_* calls of a variant are free;
 * queries that return no status (tsr_region_name, tsr_ncpu_workers...) are not checked: call them
 * from the owner too.
 *
 * Failed tasks: a variant fails when it reports an error (a tsr_ctx_* call failed, or it called
 * tsr_ctx_error). Its results are then poisoned instead of passing for values: its future, every
 * future computed from it, and the data it could write (WRITE, READ_WRITE, REDUCE) make
 * tsr_future_wait and tsr_map return TSR_ETASK with the original message (task, point, region,
 * field); later tasks that read a poisoned future or poisoned data do not run their variant and
 * poison their own results in turn. Data heals when all of it is replaced: tsr_fill, a task that
 * WRITEs a region covering what the failed task wrote and succeeds, or a host TSR_WRITE mapping. */
#ifndef TESSERA_H
#define TESSERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0.3: devices as memory nodes (tsr_task_desc_t.opencl, tsr_accessor_t.offset,
 * tsr_config_t.nopencl). 0.4: the error codes moved away from errno's (TSR_E_BASE),
 * tsr_env_switches, tsr_ctx_opencl_launch; libtessera.so.2 */
#define TSR_VERSION_MAJOR 0
#define TSR_VERSION_MINOR 4

/* ------------------------------------------------------------------ errors */
/* Every call returns TSR_OK (0) or one of these negative codes; tsr_last_error()
 * then holds a message naming the object (task, region, field, partition, color). The codes lie
 * far below -errno (errno values are under 4096 on Linux), so a Tessera code is never a negative
 * errno, as StarPU returns them: tsr_err_name(-ENOMEM) is "TSR_EUNKNOWN", not TSR_ENODEV. */
#define TSR_E_BASE 10000
enum {
	TSR_OK = 0,
	/* invalid argument (null pointer, dimension not 1-3, bad size, unknown operator or path) */
	TSR_EINVAL = -(TSR_E_BASE + 1),
	/* box or color empty, too large to count, of another dimension than, or outside the bounds
	   it must lie in */
	TSR_EBOUNDS = -(TSR_E_BASE + 2),
	/* element type mismatch */
	TSR_ETYPE = -(TSR_E_BASE + 3),
	/* access not covered by the requested privilege */
	TSR_EPRIV = -(TSR_E_BASE + 4),
	/* requirements of one launch interfere (aliased write, conflicting partitions) */
	TSR_EINTERFERE = -(TSR_E_BASE + 5),
	/* handle was destroyed, or never created */
	TSR_ESTALE = -(TSR_E_BASE + 6),
	/* field not in the region, or not requested by the task */
	TSR_ENOFIELD = -(TSR_E_BASE + 7),
	/* allocation failed */
	TSR_ENOMEM = -(TSR_E_BASE + 8),
	/* StarPU refused a call */
	TSR_ESTARPU = -(TSR_E_BASE + 9),
	/* runtime not initialized, or object in a state that forbids the call */
	TSR_ESTATE = -(TSR_E_BASE + 10),
	/* tsr_finalize found live objects (they were destroyed) */
	TSR_ELIVE = -(TSR_E_BASE + 11),
	/* no worker can run the task (e.g. CUDA-only task, no GPU) */
	TSR_ENODEV = -(TSR_E_BASE + 12),
	/* object is mapped on the host or still in use */
	TSR_EBUSY = -(TSR_E_BASE + 13),
	/* a task variant reported an error, or a result depends on one that did */
	TSR_ETASK = -(TSR_E_BASE + 14),
	/* several MPI ranks: the ranks made different calls (see "Several ranks") */
	TSR_EDIVERGE = -(TSR_E_BASE + 15),
};

const char *tsr_err_name(int code); /* "TSR_EBOUNDS" */
const char *tsr_strerror(int code); /* "box or color out of bounds" */
const char *tsr_last_error(void);   /* detailed message of the last failure in this thread */

/* ----------------------------------------------------------------- runtime */
typedef struct tsr_config {
	/* StarPU policy name ("eager", "lws", "dmda", ...) or Tessera's; NULL: StarPU default */
	const char *sched;
	int ncpu;               /* CPU workers; -1: StarPU default */
	int ncuda;              /* CUDA workers; -1: StarPU default, 0: none */
	const char *trace_file; /* Chrome trace-event JSON written at finalize; NULL: none */
	const char *dag_file;   /* Graphviz dot of the derived task graph; NULL: none */
	int stats;              /* print per-task statistics at finalize */
	int quiet;              /* do not print warnings (live objects at finalize) on stderr */
	/* OpenCL workers; 0 (the default): none, -1: StarPU default. POCL's CPU devices count only
	 * with STARPU_OPENCL_ON_CPUS=1 (StarPU skips them otherwise) */
	int nopencl;
} tsr_config_t;

void tsr_config_init(tsr_config_t *cfg); /* defaults: every field "StarPU default / off" */
/* Start the runtime. TSR_SCHED, TSR_NCPU, TSR_NCUDA, TSR_NOPENCL, TSR_TRACE, TSR_DAG, TSR_STATS
 * override cfg; STARPU_* variables keep working where Tessera does not set the value. cfg may be
 * NULL. TSR_EINVAL for an unknown policy or a trace/graph file that cannot be created. */
int tsr_init(const tsr_config_t *cfg);
/* Wait for every task, destroy what is still alive (returns TSR_ELIVE if anything was), stop
 * StarPU. TSR_EINVAL if the trace or graph file could not be written (the runtime is stopped
 * anyway). */
int tsr_finalize(void);
/* Wait for every submitted task; returns TSR_ETASK if a task variant reported an error since the
 * last fence (the first one's message; each error is reported by one fence, while its poison stays,
 * see above). */
int tsr_fence(void);
/* Put the workers to sleep (e.g. while the program times a baseline of its own in the same
 * process: idle StarPU workers poll) and wake them; tasks submitted meanwhile wait. */
int tsr_pause(void);
int tsr_resume(void);
int tsr_ncpu_workers(void);    /* CPU workers running */
int tsr_ncuda_workers(void);   /* CUDA workers running */
int tsr_nopencl_workers(void); /* OpenCL workers running */
/* Memory node of a worker (0: host RAM; a device's own memory otherwise), -1 if no such worker. */
int tsr_worker_node(int worker);
const char *tsr_sched_name(void); /* policy in use */
/* Who orders the tasks on a region's views: "explicit" (Tessera, from its own per-view state,
 * with explicit StarPU dependences: one process, one memory node, the default there) or
 * "implicit" (StarPU's sequential consistency: GPUs, several ranks, TSR_REDUX=unordered, or
 * TSR_DEPS=implicit). NULL before tsr_init. */
const char *tsr_deps_name(void);

/* ------------------------------------------------------------ index spaces */
/* A dense box of 1..3 dimensions; lo and hi are inclusive. Dimension 0 varies fastest in memory. */
typedef struct tsr_box {
	int dim;
	int64_t lo[3], hi[3];
} tsr_box_t;

tsr_box_t tsr_box1(int64_t lo0, int64_t hi0);
tsr_box_t tsr_box2(int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1);
tsr_box_t tsr_box3(int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1, int64_t lo2, int64_t hi2);
/* Number of points: 0 if empty or the dimension is not 1-3, -1 if the count does not fit in
 * int64_t (a box of 2^63 points or more; every call given such a box refuses it). */
int64_t tsr_box_volume(tsr_box_t b);
int tsr_box_contains(tsr_box_t outer, tsr_box_t inner);          /* 1 if inner lies in outer */
int tsr_box_intersect(tsr_box_t a, tsr_box_t b, tsr_box_t *out); /* 1 if non-empty */
/* The box of tile `color` when `bounds` is cut into equal tiles over the color box `colors`
 * (the boxes of tsr_partition_tiles, remainder to the first tiles), without making a partition. */
int tsr_box_tile(tsr_box_t bounds, tsr_box_t colors, const int64_t color[3], tsr_box_t *tile);

/* ------------------------------------------------------------ field spaces */
typedef enum tsr_type { TSR_NONE = 0, TSR_F32, TSR_F64, TSR_I32, TSR_I64, TSR_BYTES } tsr_type_t;
typedef int tsr_field_t; /* field id, local to its field space: 0, 1, ... in order of addition */
typedef struct {
	uint64_t id;
} tsr_fspace_t;

int tsr_fspace_create(tsr_fspace_t *fs);
/* Add a typed field; bytes is the element size for TSR_BYTES and ignored otherwise. */
int tsr_fspace_add(tsr_fspace_t fs, const char *name, tsr_type_t type, size_t bytes,
		   tsr_field_t *fid);
int tsr_fspace_destroy(tsr_fspace_t fs);
size_t tsr_type_size(tsr_type_t type);      /* 4, 8, 4, 8; 0 for TSR_NONE/TSR_BYTES */
const char *tsr_type_name(tsr_type_t type); /* "f64" */

/* ----------------------------------------------------------------- regions */
/* A region (or a subregion: same handle type) is index space x field space, one
 * contiguous array per field (struct of arrays), zero-initialised. */
typedef struct {
	uint64_t id;
} tsr_region_t;

/* Fields are those of fs at this moment; fs may be destroyed afterwards. */
int tsr_region_create(const char *name, tsr_box_t bounds, tsr_fspace_t fs, tsr_region_t *r);
int tsr_region_destroy(tsr_region_t r); /* root regions only; destroys its partitions too */
int tsr_region_bounds(tsr_region_t r, tsr_box_t *bounds);
const char *tsr_region_name(tsr_region_t r); /* "grid" or "grid/tiles[1,2]"; NULL if stale */

/* -------------------------------------------------------------- partitions */
typedef struct {
	uint64_t id;
} tsr_partition_t;

/* Equal tiles of region r over the color box `colors` (same dimension as r); the
 * remainder goes to the first tiles. Disjoint. */
int tsr_partition_tiles(tsr_region_t r, tsr_box_t colors, const char *name, tsr_partition_t *p);
/* Tiles of the box `domain` (inside r) extended by halo[d] points on each side in dimension d,
 * clipped to r's bounds. Aliased when a halo is non-zero; halo NULL means none. */
int tsr_partition_tiles_halo(tsr_region_t r, tsr_box_t domain, tsr_box_t colors,
			     const int64_t halo[3], const char *name, tsr_partition_t *p);
/* One subregion per box, colors 0..nboxes-1 (1-D); disjoint unless two boxes overlap. */
int tsr_partition_boxes(tsr_region_t r, int nboxes, const tsr_box_t *boxes, const char *name,
			tsr_partition_t *p);
/* The subregion of color `color` (dimension of the color space), usable as a region:
 * launch on it, map it, partition it again. Its lifetime is the partition's. */
int tsr_partition_subregion(tsr_partition_t p, const int64_t color[3], tsr_region_t *sub);
int tsr_partition_colors(tsr_partition_t p, tsr_box_t *colors);
int tsr_partition_is_disjoint(tsr_partition_t p); /* 1, 0, or negative error */
int tsr_partition_destroy(tsr_partition_t p);     /* also destroys partitions of its subregions */

/* -------------------------------------------------------------- privileges */
/* A reduction operator is a struct, not an int, so that an operator and a privilege cannot be
 * swapped: TSR_REDUCE(TSR_MAX) passed where an operator is expected, or TSR_MAX where a privilege
 * is expected, is a compile error. (One hole C leaves: `.redop = TSR_REDUCE(TSR_MAX)` in a
 * designated initialiser fills .redop.id by brace elision with only a -Wmissing-braces warning
 * (-Wall); the launch then refuses it, saying to write .redop = TSR_MAX.) Compare operators by id:
 * op.id == TSR_MAX.id. */
typedef struct tsr_redop {
	int id;
} tsr_redop_t;
#ifdef __cplusplus
#define TSR_REDOP_ID(n) (tsr_redop_t{(n)})
#else
#define TSR_REDOP_ID(n) ((tsr_redop_t){(n)})
#endif
/* no operator (a launch that asks for no reduced result) */
#define TSR_REDOP_NONE TSR_REDOP_ID(0)
#define TSR_SUM TSR_REDOP_ID(1)
#define TSR_PROD TSR_REDOP_ID(2)
#define TSR_MIN TSR_REDOP_ID(3)
#define TSR_MAX TSR_REDOP_ID(4)
#define TSR_REDOP_USER 16 /* id of the first operator returned by tsr_redop_register */

typedef int tsr_privilege_t;
enum {
	TSR_READ = 1, /* read only */
	/* Write only, and every element: the old contents are DISCARDED (Legion's WRITE_DISCARD):
	 * the task may not see them, and elements it does not write are undefined afterwards. To
	 * update some elements and keep the others, ask for TSR_READ_WRITE. */
	TSR_WRITE_DISCARD = 2,
	TSR_WRITE = TSR_WRITE_DISCARD, /* the same privilege, shorter name */
	TSR_READ_WRITE = 3,            /* read and write; elements not written keep their value */
	TSR_REDUCE_BASE = 8            /* use TSR_REDUCE(op) */
};
/* The privilege "fold values into the elements with operator op" (op a tsr_redop_t). */
static inline tsr_privilege_t tsr_reduce(tsr_redop_t op)
{
	/* unsigned shift: a negative id (refused by the launch) must not be undefined behaviour
	 * here */
	return (tsr_privilege_t)(TSR_REDUCE_BASE | ((unsigned)op.id << 8));
}
#define TSR_REDUCE(op) tsr_reduce(op)
#define TSR_PRIV_IS_REDUCE(p) (((p)&TSR_REDUCE_BASE) != 0)
#define TSR_PRIV_REDOP(p) TSR_REDOP_ID((p) >> 8) /* the operator of a REDUCE privilege */

/* Reductions (REDUCE privileges and the reduction of an index launch's returns) give the same bits
 * whatever the workers, the policy or the timing: they are folded in COLOR ORDER. A launch's
 * color order is the order of its domain's points linearised with dimension 0 fastest (point
 * (x,y,z) of domain lo..hi has index (x-lo0) + (y-lo1)*n0 + (z-lo2)*n0*n1, n = extents); a
 * single launch has one point. Each point reduces into private storage that starts at the
 * operator's identity (its partial value); after the launch, for each element, the partial
 * values are folded into the field one after another in color order (within a point,
 * requirements then fields in the order given):  x = (((x op p0) op p1) ...). An index launch's
 * result is ((identity op r0) op r1) ... over the points' returns, in color order. Launches fold
 * in program order. TSR_REDUX=unordered (read at tsr_init) gives StarPU's REDUX instead, folded in
 * arrival order (results may then differ in the last bits from run to run). */
/* Register a reduction operator on elements of `type` (size bytes for TSR_BYTES): identity
 * fills one element, fold does *acc = *acc op *val. Both are CPU code: a task that REDUCEs with it,
 * or an index launch whose returns it reduces, runs on CPU workers only (its CPU variant). Such a
 * launch of a task without a CPU variant, or where no CPU worker runs, or a mapper that sends its
 * point to a device, is refused with TSR_ENODEV naming the task and the operator. Names are
 * unique (messages print REDUCE(name)); a second registration of one is TSR_EINVAL; at most 16
 * (TSR_ENOMEM). */
typedef void (*tsr_redop_identity_fn)(void *elem);
typedef void (*tsr_redop_fold_fn)(void *acc, const void *val);
int tsr_redop_register(const char *name, tsr_type_t type, size_t bytes,
		       tsr_redop_identity_fn identity, tsr_redop_fold_fn fold, tsr_redop_t *op);

/* ------------------------------------------------------------------- tasks */
typedef struct tsr_ctx tsr_ctx_t; /* what a running variant sees */
typedef void (*tsr_variant_fn)(tsr_ctx_t *ctx, const void *args, size_t arglen);
typedef struct {
	uint64_t id;
} tsr_task_t;

typedef struct tsr_task_desc {
	const char *name;    /* names the task in errors, traces, perf models */
	tsr_variant_fn cpu;  /* CPU variant (may be NULL if a device variant is set) */
	tsr_variant_fn cuda; /* CUDA variant, called on the worker's stream; NULL: none */
	tsr_type_t ret_type; /* type of the returned value; TSR_NONE: returns nothing */
	size_t ret_bytes;    /* size for TSR_BYTES */
	/* OpenCL variant: enqueues kernels (tsr_ctx_opencl_kernel) on tsr_ctx_opencl_queue; Tessera
	 * waits for the queue when it returns */
	tsr_variant_fn opencl;
} tsr_task_desc_t;

int tsr_task_register(const tsr_task_desc_t *desc, tsr_task_t *task);

/* Typed view of one field of one requirement. ptr is the address of the element at lo (a device
 * address in a CUDA variant); element (x,y,z) is at ptr + (x-lo0) + (y-lo1)*stride[1] +
 * (z-lo2)*stride[2]. In an OpenCL variant ptr is the field's cl_mem and offset the byte offset of
 * the element at lo in it (a kernel takes both); offset is 0 everywhere else. */
typedef struct tsr_accessor {
	void *ptr;
	size_t offset;
	int dim;
	int64_t lo[3], hi[3]; /* bounds in the region's global coordinates, inclusive */
	size_t stride[3];     /* in elements; stride[0] == 1 */
	tsr_type_t type;
	size_t elem_size;
	tsr_privilege_t priv;
	/* Whose view this is, for the messages of bounds checks: */
	tsr_ctx_t *ctx;    /* the task's context; NULL for a host mapping (tsr_map) */
	int req;           /* requirement index; -1 for a host mapping */
	tsr_field_t field; /* field id */
	/* host mappings: id of the region (or subregion) mapped; 0 in a task */
	uint64_t region;
} tsr_accessor_t;

/* TSR_AT1/2/3(acc, T, x[, y[, z]]): the element at global coordinates (x, y, z), as an lvalue of
 * type T. Built with -DTSR_CHECK_BOUNDS (or in a Tessera configured with --enable-bounds-check,
 * whose tessera.pc adds it), every index is checked against the accessor's bounds: an index outside
 * them fails the task with TSR_ETASK (tsr_fence returns it) and a message naming the task, point,
 * requirement, region, field and index (once per point task), and the access reads or writes a
 * zeroed scratch element (up to 4 KiB) instead of memory that is not the task's. A host mapping
 * (tsr_map) reports through tsr_last_error and stderr. Inside CUDA device code the macros never
 * check (a kernel cannot report): run the CPU variant (TSR_NCUDA=0) to check a kernel's
 * indexing. */
#if defined(TSR_CHECK_BOUNDS) && !defined(__CUDA_ARCH__)
/* Out-of-line half of the check: reports the index and returns a zeroed scratch element. */
void *tsr_accessor_out_of_bounds(const tsr_accessor_t *a, size_t elem_size, int dim, int64_t x,
				 int64_t y, int64_t z);
static inline void *tsr_accessor_at(const tsr_accessor_t *a, size_t elem_size, int dim, int64_t x,
				    int64_t y, int64_t z)
{
	int inside = x >= a->lo[0] && x <= a->hi[0];
	if (dim > 1)
		inside = inside && y >= a->lo[1] && y <= a->hi[1];
	if (dim > 2)
		inside = inside && z >= a->lo[2] && z <= a->hi[2];
	if (!inside)
		return tsr_accessor_out_of_bounds(a, elem_size, dim, x, y, z);
	int64_t offset = x - a->lo[0];
	if (dim > 1)
		offset += (y - a->lo[1]) * (int64_t)a->stride[1];
	if (dim > 2)
		offset += (z - a->lo[2]) * (int64_t)a->stride[2];
	return (char *)a->ptr + offset * (int64_t)elem_size;
}
#define TSR_AT1(a, T, x) (*(T *)tsr_accessor_at((a), sizeof(T), 1, (x), 0, 0))
#define TSR_AT2(a, T, x, y) (*(T *)tsr_accessor_at((a), sizeof(T), 2, (x), (y), 0))
#define TSR_AT3(a, T, x, y, z) (*(T *)tsr_accessor_at((a), sizeof(T), 3, (x), (y), (z)))
#else
#define TSR_AT1(a, T, x) (((T *)(a)->ptr)[(x) - (a)->lo[0]])
#define TSR_AT2(a, T, x, y) \
	(((T *)(a)->ptr)[((x) - (a)->lo[0]) + ((y) - (a)->lo[1]) * (int64_t)(a)->stride[1]])
#define TSR_AT3(a, T, x, y, z)                                                               \
	(((T *)(a)->ptr)[((x) - (a)->lo[0]) + ((y) - (a)->lo[1]) * (int64_t)(a)->stride[1] + \
			 ((z) - (a)->lo[2]) * (int64_t)(a)->stride[2]])
#endif

/* Accessor for `field` of requirement `req`. `type` must match the field's type (TSR_NONE: any);
 * `want` (TSR_READ, TSR_WRITE_DISCARD, TSR_READ_WRITE or TSR_REDUCE(op)) must be covered by the
 * requested privilege. A REDUCE accessor points at a private buffer holding the operator's
 * identity: fold into it. */
int tsr_ctx_accessor(tsr_ctx_t *ctx, int req, tsr_field_t field, tsr_type_t type,
		     tsr_privilege_t want, tsr_accessor_t *acc);
/* What requirement `req` of the running point is: a variant learns its fields here instead of
 * from its arguments. The names are the region's and partition's own strings: do not destroy a
 * region while tasks that ask for them may still run. */
typedef struct tsr_req_info {
	int kind; /* TSR_REQ_REGION, TSR_REQ_PARTITION or TSR_REQ_FUTURE */
	tsr_privilege_t priv;
	/* operator of a REDUCE privilege; TSR_REDOP_NONE otherwise */
	tsr_redop_t redop;
	const char *region; /* (sub)region this point sees, "grid/tiles(1,2)"; NULL for a future */
	/* partition the launch named; NULL for a region or a future */
	const char *partition;
	tsr_box_t bounds; /* bounds of that (sub)region; dim 0 for a future */
	int nfields;
	/* field ids, in the order of the requirement (TSR_MAX_REQ_FIELDS) */
	tsr_field_t fields[8];
	const char *field_names[8];
	tsr_type_t field_types[8];
} tsr_req_info_t;
int tsr_ctx_req(const tsr_ctx_t *ctx, int req, tsr_req_info_t *info);
/* Accessor for the k-th field (0-based, in the order the launch listed them) of requirement `req`:
 * tsr_ctx_accessor without knowing the field id. */
int tsr_ctx_field(tsr_ctx_t *ctx, int req, int k, tsr_type_t type, tsr_privilege_t want,
		  tsr_accessor_t *acc);
/* Value of the future passed as requirement `req` (device address in a CUDA variant, a cl_mem
 * holding it at offset 0 in an OpenCL variant); NULL on error. */
const void *tsr_ctx_future(tsr_ctx_t *ctx, int req);
/* launch point; returns its dimension (0: single launch) */
int tsr_ctx_point(const tsr_ctx_t *ctx, int64_t point[3]);
int tsr_ctx_nreqs(const tsr_ctx_t *ctx); /* number of requirements of the launch */
const char *tsr_ctx_task_name(const tsr_ctx_t *ctx);
int tsr_ctx_worker(const tsr_ctx_t *ctx); /* StarPU worker id */
/* cudaStream_t of a CUDA variant, NULL elsewhere */
void *tsr_ctx_cuda_stream(const tsr_ctx_t *ctx);
/* cl_command_queue of an OpenCL variant (on its own thread, while it runs), NULL elsewhere */
void *tsr_ctx_opencl_queue(const tsr_ctx_t *ctx);
/* OpenCL programs: tsr_opencl_program builds `source` (OpenCL C) with `options` (plus
 * -cl-kernel-arg-info, for the launch's checks) for every OpenCL device, once per run (after
 * tsr_init; nothing is built without OpenCL workers). TSR_EINVAL, naming the program, if it does
 * not build (with the compiler's log), if a program of that name is already loaded (a name loads
 * once per run; Tessera's own is "tessera"), past 32 programs, or if it defines a kernel that
 * another loaded program defines or whose name starts with "tsr_": that prefix is reserved for
 * Tessera's own kernels. Kernel names may be of any length.
 * In an OpenCL variant, tsr_ctx_opencl_kernel gives the cl_kernel of that name for the running
 * worker, for the variant to set its arguments and enqueue it on tsr_ctx_opencl_queue itself
 * (tsr_ctx_opencl_launch does both, checked). The worker's tasks share that cl_kernel: when a task
 * first gets it, its buffer arguments are cleared (NULL), so that no other task's buffer is left
 * in it; set every argument before enqueueing. NULL, and the task fails naming the kernel, if no
 * program loaded defines it or it names one of Tessera's; from a CPU or CUDA variant the task
 * fails too, naming itself. On the host, or on a thread the variant started, no task runs: NULL,
 * with tsr_last_error saying why, and no fence is affected. Kernels that must give the CPU's bits
 * keep "#pragma OPENCL FP_CONTRACT OFF" (OpenCL may otherwise fuse a * b + c). */
int tsr_opencl_program(const char *name, const char *source, const char *options);
void *tsr_ctx_opencl_kernel(tsr_ctx_t *ctx, const char *kernel);

/* One argument of an OpenCL kernel, by position: its size and address, as clSetKernelArg takes
 * them (an accessor's cl_mem is `ptr`; a NULL value with a size reserves local memory).
 * TSR_KARG(x), in an initializer, makes one of a variable. */
typedef struct tsr_kernel_arg {
	size_t size;
	const void *value;
} tsr_kernel_arg_t;
#define TSR_KARG(x)             \
	{                       \
		sizeof(x), &(x) \
	}

/* In an OpenCL variant: sets the arguments of `kernel` (tsr_ctx_opencl_kernel's) and enqueues it
 * on the worker's queue over `dims` (1 to 3) dimensions of global[] work-items, in work-groups of
 * local[] (NULL: the implementation chooses). Checked first, so that neither another task's
 * arguments nor OpenCL's own failures (an abort inside POCL) can follow: nargs must be the
 * kernel's argument count (every argument is set at each launch), each argument of the kind the
 * kernel declares where the platform says (a global or constant buffer: a non-null cl_mem; local
 * memory: a size and a NULL value; a value: its address and size), no global size 0, at most 2^48
 * work-items in all (a larger count is a size computed wrong), work-groups of 1 or more
 * work-items within the device's and the kernel's limits that divide the global sizes (OpenCL C
 * 1.x, and devices without partial work-groups). TSR_OK; or TSR_ETASK after the task failed with
 * a message that names it, its point, the kernel and what went wrong (the counts, the argument,
 * the sizes, or the OpenCL error). On the host or a thread the variant started: TSR_ESTATE, no
 * task fails, no fence is affected (ctx is not even read). */
int tsr_ctx_opencl_launch(tsr_ctx_t *ctx, const char *kernel, const tsr_kernel_arg_t *args,
			  int nargs, int dims, const size_t *global, const size_t *local);
/* Slot of the task's return value (device address in a CUDA variant, a cl_mem in an OpenCL one).
 * For an index launch with a reduction, it holds the operator's identity on entry: fold the value
 * into it. */
void *tsr_ctx_return_slot(tsr_ctx_t *ctx);
/* CPU variants: return a value (folded into the launch's reduction where there is one). Device
 * variants write tsr_ctx_return_slot. */
int tsr_ctx_return(tsr_ctx_t *ctx, const void *value);
/* Report an error from inside a variant: the task fails (its results are poisoned, see the top of
 * this file) and tsr_fence/tsr_finalize return TSR_ETASK with this message. ctx NULL inside a
 * variant means the running task; on the host (no task) the call only sets tsr_last_error and
 * affects nothing. */
void tsr_ctx_error(tsr_ctx_t *ctx, const char *fmt, ...);

/* ---------------------------------------------------------------- futures */
typedef struct {
	uint64_t id;
} tsr_future_t;

/* Block until the value is ready and copy it (size must equal the task's return size). TSR_ETASK,
 * value untouched, if a task it depends on failed (the message is that task's). */
int tsr_future_wait(tsr_future_t f, void *value, size_t size);
/* A ready future holding a value (to feed tasks that take a future). */
int tsr_future_create(tsr_type_t type, size_t bytes, const void *value, tsr_future_t *f);
/* Asynchronous: tasks still using it are not disturbed, and its memory is freed as soon as they are
 * done (no fence needed: a loop of launches runs in constant memory). */
int tsr_future_destroy(tsr_future_t f);
/* tsr_future_wait, then tsr_future_destroy: the future is gone whatever the wait returned. */
int tsr_future_take(tsr_future_t f, void *value, size_t size);

/* ----------------------------------------------------------------- launches */
typedef enum { TSR_REQ_REGION = 1, TSR_REQ_PARTITION = 2, TSR_REQ_FUTURE = 3 } tsr_req_kind_t;
/* Maps a launch point to a color of the requirement's partition; return 0, or nonzero if the
 * point has no color (the launch then fails with TSR_EBOUNDS). */
typedef int (*tsr_projection_fn)(const int64_t point[3], int64_t color[3], void *arg);

#define TSR_MAX_REQ_FIELDS 8
/* A requirement holds its field ids by value: it can be built in one scope and launched in
 * another (an array of requirements filled in a loop, say). */
typedef struct tsr_req {
	tsr_req_kind_t kind;
	uint64_t handle; /* region, partition or future id */
	tsr_privilege_t priv;
	int nfields; /* 1 to TSR_MAX_REQ_FIELDS */
	tsr_field_t fields[TSR_MAX_REQ_FIELDS];
	tsr_projection_fn proj; /* index launches: NULL means color = point */
	void *proj_arg;
} tsr_req_t;

/* TSR_FIELDS(a, b) expands to the count and the array of field ids (copied by tsr_req_*). */
#define TSR_FIELDS(...)                                                                          \
	(int)(sizeof((tsr_field_t[]){__VA_ARGS__}) / sizeof(tsr_field_t)), (const tsr_field_t[]) \
	{                                                                                        \
		__VA_ARGS__                                                                      \
	}

static inline tsr_req_t tsr_req_make(tsr_req_kind_t kind, uint64_t handle, tsr_privilege_t priv,
				     int nfields, const tsr_field_t *fields, tsr_projection_fn proj,
				     void *arg)
{
	tsr_req_t q;
	q.kind = kind;
	q.handle = handle;
	q.priv = priv;
	q.nfields = nfields; /* more than TSR_MAX_REQ_FIELDS is refused by the launch */
	for (int k = 0; k < TSR_MAX_REQ_FIELDS; k++)
		q.fields[k] = fields && k < nfields ? fields[k] : -1;
	q.proj = proj;
	q.proj_arg = arg;
	return q;
}
static inline tsr_req_t tsr_req_region(tsr_region_t r, tsr_privilege_t priv, int nfields,
				       const tsr_field_t *fields)
{
	return tsr_req_make(TSR_REQ_REGION, r.id, priv, nfields, fields, NULL, NULL);
}
static inline tsr_req_t tsr_req_part(tsr_partition_t p, tsr_privilege_t priv, int nfields,
				     const tsr_field_t *fields)
{
	return tsr_req_make(TSR_REQ_PARTITION, p.id, priv, nfields, fields, NULL, NULL);
}
static inline tsr_req_t tsr_req_part_proj(tsr_partition_t p, tsr_privilege_t priv, int nfields,
					  const tsr_field_t *fields, tsr_projection_fn proj,
					  void *arg)
{
	return tsr_req_make(TSR_REQ_PARTITION, p.id, priv, nfields, fields, proj, arg);
}
static inline tsr_req_t tsr_req_future(tsr_future_t f)
{
	return tsr_req_make(TSR_REQ_FUTURE, f.id, TSR_READ, 0, NULL, NULL, NULL);
}

/* How to launch a task, written with designated initialisers; fields left out are "none":
 *   tsr_run(jacobi, &(tsr_launch_t){
 *           .domain = colors,
 *           .reqs = TSR_REQS(tsr_req_part(halo, TSR_READ, TSR_FIELDS(u)),
 *                            tsr_req_part(tiles, TSR_WRITE_DISCARD, TSR_FIELDS(v))),
 *           TSR_ARGS(params),
 *           .redop = TSR_MAX,
 *           .result = &residual});
 * With no .domain it is a single launch (requirements are regions); with one it is an index launch,
 * one point task per point of the domain (see tsr_index_launch). */
typedef struct tsr_reqs {
	int n;
	const tsr_req_t *at;
} tsr_reqs_t;
typedef struct tsr_launch {
	/* index launch over these points; left out (dim 0): a single launch */
	tsr_box_t domain;
	/* TSR_REQS(a, b, ...), or {n, array} for requirements built in a loop */
	tsr_reqs_t reqs;
	const void *args; /* copied into every point task (arglen bytes) */
	size_t arglen;
	/* index launches asking for a .result: how the points' values combine */
	tsr_redop_t redop;
	/* where to put the future of the returned value; NULL: not wanted */
	tsr_future_t *result;
} tsr_launch_t;
#ifndef __cplusplus /* C++ has no compound-literal arrays: fill .reqs = {n, array} there */
#define TSR_REQS(...)                                                                \
	((tsr_reqs_t){(int)(sizeof((tsr_req_t[]){__VA_ARGS__}) / sizeof(tsr_req_t)), \
		      (tsr_req_t[]){__VA_ARGS__}})
#endif
/* .args and .arglen of a by-value argument: TSR_ARGS(params) */
#define TSR_ARGS(x) .args = &(x), .arglen = sizeof(x)
/* Launch `task` as `how` says (tsr_launch or tsr_index_launch underneath). */
int tsr_run(tsr_task_t task, const tsr_launch_t *how);

/* Launch one task. Requirements are regions (or subregions) and futures; args (arglen bytes) are
 * copied. If result is not NULL and the task returns a value, *result is its future. */
int tsr_launch(tsr_task_t task, int nreqs, const tsr_req_t *reqs, const void *args, size_t arglen,
	       tsr_future_t *result);
/* One point task per point of `domain`; partition requirements are projected to a color per point
 * (identity by default), regions and futures are passed whole to every point. Writes through an
 * aliased partition, or any two points writing the same subregion, are refused. If result is not
 * NULL, *result is the reduction by `redop` of the points' return values. A redop that is not
 * TSR_REDOP_NONE must be a known operator even when no result is asked. */
int tsr_index_launch(tsr_task_t task, tsr_box_t domain, int nreqs, const tsr_req_t *reqs,
		     const void *args, size_t arglen, tsr_redop_t redop, tsr_future_t *result);

/* ------------------------------------------------------ fill, copy, host access */
/* Set every element of field f of region (or subregion) r to *value (size = the field's element
 * size). */
int tsr_fill(tsr_region_t r, tsr_field_t f, const void *value, size_t size);
/* Copy field fsrc of src into field fdst of dst: same extents and same type required. */
int tsr_copy(tsr_region_t src, tsr_field_t fsrc, tsr_region_t dst, tsr_field_t fdst);
/* Make field f of r readable (TSR_READ) or writable (TSR_WRITE_DISCARD / TSR_READ_WRITE) on the
 * host, waiting only for the tasks that touch it. Launches touching the field are refused until
 * tsr_unmap. TSR_ETASK for READ or READ_WRITE if a failed task should have written part of it;
 * TSR_WRITE_DISCARD (the host replaces every value) succeeds and heals it. */
int tsr_map(tsr_region_t r, tsr_field_t f, tsr_privilege_t priv, tsr_accessor_t *acc);
int tsr_unmap(tsr_region_t r, tsr_field_t f);
/* Copy a host buffer into field f of region (or subregion) r, every element, in memory order
 * (dimension 0 fastest); size must be the volume times the field's element size. Waits for the
 * tasks that touch the field (it maps and unmaps it). */
int tsr_region_write(tsr_region_t r, tsr_field_t f, const void *buf, size_t size);
/* Copy field f of region (or subregion) r into a host buffer, as tsr_region_write lays it out. */
int tsr_region_read(tsr_region_t r, tsr_field_t f, void *buf, size_t size);

/* ------------------------------------------------------------------ mappers */
/* Where each point task runs. Scheduling policies are chosen by name (tsr_config_t.sched,
 * TSR_SCHED): StarPU's, plus Tessera's "tsr-locality" (a color keeps its worker from launch to
 * launch, idle workers steal) and "tsr-critpath" (ready task with the longest path to the end of
 * the known graph first). A mapper callback or partition owners pin tasks on top of any policy. */
typedef enum {
	TSR_WORKER_ANY = 0,
	TSR_WORKER_CPU = 1,
	TSR_WORKER_CUDA = 2,
	TSR_WORKER_OPENCL = 3
} tsr_worker_kind_t;
typedef struct tsr_map_query {
	const char *task_name;
	int point_dim; /* 0 for a single launch */
	int64_t point[3];
	tsr_box_t domain; /* launch domain (index launches) */
	/* owner of the color of the first partition requirement that writes (else the first
	 * partition requirement), or -1 */
	int owner;
} tsr_map_query_t;
typedef struct tsr_mapping {
	tsr_worker_kind_t kind; /* restrict to one kind of worker (ANY: no restriction) */
	int worker;             /* exact StarPU worker id, or -1 */
	int priority;           /* StarPU priority (higher first, for policies that use it) */
	/* several ranks: the rank that runs the task (same answer on every rank) */
	int rank;
} tsr_mapping_t;
/* Called for every point task at submission; on entry *m says "owner, else anywhere". */
typedef void (*tsr_mapper_fn)(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg);
int tsr_set_mapper(tsr_mapper_fn fn, void *arg); /* NULL: back to the default */
/* Pin the point tasks of index launches whose mapping requirement (see tsr_map_query_t.owner) has
 * this color to `worker` (-1: unpin). */
int tsr_partition_set_owner(tsr_partition_t p, const int64_t color[3], int worker);

/* ------------------------------------------------------------------ several ranks
 * Started by mpirun (or TSR_MPI=1), every rank runs the whole program and makes the same calls in
 * the same order (control replication); each point task runs on one rank, and StarPU-MPI moves
 * the pieces of data a rank reads but does not hold. The rank of a subregion is its color's
 * rank: colors are spread in blocks over the ranks (color index * nranks / ncolors) unless
 * tsr_partition_set_rank says otherwise. A point task runs on the rank of its mapping
 * requirement's color (tsr_map_query_t.owner's requirement), a single launch on the rank that
 * must receive the fewest bytes of what it reads (on a tie, the rank of its first region
 * requirement that writes, else of its first one; rank 0 for a root region), unless the mapper
 * sets tsr_mapping_t.rank; a mapper must decide the same on every rank. Futures are
 * sent to every rank as soon as they are computed; tsr_fill runs on every rank; tsr_map gathers
 * the region on every rank (every rank maps). Blocking calls compare the ranks' calls and fail
 * with TSR_EDIVERGE, on every rank, if they differ; a task that failed on one rank fails them on
 * every rank. Without MPI, tsr_rank is 0 and tsr_nranks 1. */
int tsr_rank(void);   /* this process's rank */
int tsr_nranks(void); /* ranks running the program */
/* Run the point tasks mapped by this color on `rank` (0..tsr_nranks()-1); TSR_EBOUNDS otherwise. */
int tsr_partition_set_rank(tsr_partition_t p, const int64_t color[3], int rank);
/* Names and one-line descriptions of every selectable policy (StarPU's and Tessera's); works
 * before tsr_init. Returns how many exist (fills at most max). */
int tsr_policy_list(const char **names, const char **descriptions, int max);
/* Tessera's environment switches (TSR_*), read at tsr_init (TSR_HOME at each region's creation):
 * name, the values it takes ("a|b" words, "N", "file"), its default and what it does. Works
 * before tsr_init; *table stays valid for the life of the process. Returns how many. */
typedef struct tsr_env_switch {
	const char *name;
	const char *values;
	const char *fallback; /* the default */
	const char *meaning;
} tsr_env_switch_t;
int tsr_env_switches(const tsr_env_switch_t **table);
int tsr_worker_count(void);                    /* all workers */
tsr_worker_kind_t tsr_worker_kind(int worker); /* CPU, CUDA or OPENCL; ANY if no such worker */

/* ------------------------------------------------------------ observation */
/* TSR_TRACE=trace.json (Chrome trace events: one "X" event per task with name, color, worker,
 * start, end, plus StarPU's bus transfer totals), TSR_DAG=graph.dot (the dependencies Tessera
 * derived; edges carry region, field and privileges), TSR_STATS=1 (per task and worker kind:
 * count, total and mean time, printed at finalize). The same switches exist in tsr_config_t. */
typedef struct tsr_task_stats {
	char name[64];
	int kind; /* tsr_worker_kind_t */
	long count;
	double total_us;
} tsr_task_stats_t;
/* Copy up to max rows of the statistics gathered so far (needs stats or trace on); returns rows. */
int tsr_stats_get(tsr_task_stats_t *rows, int max);

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_H */
