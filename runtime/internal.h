/* internal.h: structures shared by the runtime's files; never installed.
 * The API is single-threaded (one submitting thread); task variants only see tsr_ctx. */
#ifndef TSR_INTERNAL_H
#define TSR_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <starpu.h>
#include "tessera.h"

#define TSR_NAME_MAX 64
#define TSR_MAX_REQS 64

/* ---- errors (error.c) */
int tsr__err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tsr__task_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tsr__take_task_error(void);

/* ---- handle table (handles.c): ids carry kind, generation and slot, so stale ids are detected */
enum tsr_kind { TSR_K_FSPACE = 1, TSR_K_REGION, TSR_K_PARTITION, TSR_K_TASK, TSR_K_FUTURE, TSR_K_NKINDS };
uint64_t tsr__handle_new(enum tsr_kind kind, void *obj);
void *tsr__handle_get(enum tsr_kind kind, uint64_t id);   /* NULL if stale or wrong kind */
void tsr__handle_free(uint64_t id);
/* Calls fn on every live object of `kind` (in creation order); returns how many. */
int tsr__handle_foreach(enum tsr_kind kind, void (*fn)(void *obj));
void tsr__handles_reset(void);
const char *tsr__kind_name(enum tsr_kind kind);

/* ---- runtime state (runtime.c) */
struct tsr_runtime {
	int initialized;
	tsr_config_t cfg;
	int ncpu, ncuda;
	int quiet;
	int paused;
};
extern struct tsr_runtime tsr__rt;
/* Calls that must wait for tasks cannot do so while the workers are paused. */
#define TSR_REQUIRE_RUNNING(what) \
	do { if (tsr__rt.paused) return tsr__err(TSR_ESTATE, "%s: the workers are paused (tsr_resume first); waiting would never end", what); } while (0)
/* Internal waits (plan growth, operator change) resume the workers for the time of the wait. */
void tsr__wait_all(void);
void tsr__wait_handle(starpu_data_handle_t h);
#define TSR_REQUIRE_INIT(what) \
	do { if (!tsr__rt.initialized) return tsr__err(TSR_ESTATE, "%s: runtime not initialized (call tsr_init first)", what); } while (0)

/* ---- boxes (ispace.c) */
int tsr__box_valid(tsr_box_t b);
void tsr__box_point(tsr_box_t b, int64_t index, int64_t point[3]);
void tsr__tile_range(int64_t lo, int64_t hi, int64_t n, int64_t i, int64_t *tile_lo, int64_t *tile_hi);
int tsr__box_overlap(tsr_box_t a, tsr_box_t b);
char *tsr__box_str(tsr_box_t b, char *buf, size_t n);
char *tsr__color_str(int dim, const int64_t c[3], char *buf, size_t n);

/* ---- field spaces and regions */
struct tsr_fieldinfo {
	char name[TSR_NAME_MAX];
	tsr_type_t type;
	size_t size;
};
struct tsr_fspace {
	uint64_t id;
	int nfields, cap;
	struct tsr_fieldinfo *fields;
};

struct tsr_partition;
struct tsr_region;

/* One StarPU handle per (region or subregion, field): the unit of coherence. */
struct tsr_node {
	starpu_data_handle_t h;
	struct tsr_region *region;
	int field;
	struct tsr_node *parent;              /* same field of the parent region; NULL at the root */
	struct tsr_partition *part;           /* partition that holds this subregion; NULL at the root */
	struct tsr_partition *open_rw;        /* plan of this node open read-write, or NULL */
	struct tsr_partition **open_ro;       /* plans open read-only */
	int nopen_ro, cap_ro;
	int redop_set;                        /* reduction methods installed on h (0: none) */
	void *dag;                            /* root nodes: accesses seen by the graph tracker (trace.c) */
	int max_plan;                         /* most children of any plan made on h so far */
};

struct tsr_region {
	uint64_t id;
	char *name;
	tsr_box_t bounds;
	int nfields;
	struct tsr_fieldinfo *fields;         /* owned by the root */
	struct tsr_region *root;
	struct tsr_partition *parent_part;    /* NULL at the root */
	int color_index;
	struct tsr_node *nodes;               /* nfields */
	struct tsr_partition **parts;         /* partitions of this region */
	int nparts, cap_parts;
	/* root only */
	void **storage;                       /* one array per field */
	int *mapped;                          /* per field: mapped on the host */
};

struct tsr_partition {
	uint64_t id;
	char *name;
	struct tsr_region *parent;
	tsr_box_t colors;
	int ncolors;
	int disjoint;
	tsr_box_t *boxes;                     /* ncolors, global coordinates */
	struct tsr_region **subs;             /* ncolors */
	starpu_data_handle_t **children;      /* per field: ncolors handles (the plan) */
	int *owners;                          /* worker per color (tsr_partition_set_owner), or NULL */
};

int tsr__region_lookup(tsr_region_t r, const char *what, struct tsr_region **out);
int tsr__partition_lookup(tsr_partition_t p, const char *what, struct tsr_partition **out);
struct tsr_region *tsr__subregion_new(struct tsr_partition *p, int c);
void tsr__region_free_tree(struct tsr_region *r);
void tsr__partition_free(struct tsr_partition *p, int detach);
int tsr__color_index(const struct tsr_partition *p, const int64_t color[3]);
int tsr__field_check(const struct tsr_region *r, int f, const char *what);
int tsr__region_aliased(const struct tsr_region *r);
struct tsr_region *tsr__fold_target(struct tsr_region *r);

/* ---- coherence (coherence.c): make a node's handle usable for a read or a write */
void tsr__coh_access(struct tsr_node *n, int write);
void tsr__coh_close_all(struct tsr_node *n);

/* ---- reductions (reduce.c) */
struct starpu_codelet *tsr__redux_cl(tsr_type_t type, int op);
struct starpu_codelet *tsr__init_cl(tsr_type_t type, int op);
int tsr__redop_valid(tsr_type_t type, int op, const char *what);
void tsr__redop_identity(tsr_type_t type, size_t size, int op, void *elem);
void tsr__redop_fold(tsr_type_t type, size_t size, int op, void *acc, const void *val);
const char *tsr__redop_name(int op);
void tsr__node_set_redux(struct tsr_node *n, tsr_type_t type, int op);
void tsr__redops_reset(void);

/* ---- tasks (task.c) */
struct tsr_task {
	uint64_t id;
	char name[TSR_NAME_MAX];
	tsr_variant_fn cpu, cuda;
	tsr_type_t ret_type;
	size_t ret_size;
	struct starpu_codelet cl;
	struct starpu_perfmodel model;
};
int tsr__task_lookup(tsr_task_t t, const char *what, struct tsr_task **out);

/* What one point task carries to its variant (one malloc, freed by StarPU with cl_arg). */
struct tsr_reqrec {
	int kind;
	tsr_privilege_t priv;
	int nfields;
	int first_buf;                        /* futures: StarPU buffer index */
	int fields[8];                        /* field ids */
	int buf[8];                           /* StarPU buffer index of each field */
	int64_t lo[3], hi[3];                 /* requested (sub)region bounds, global coordinates */
	int64_t hlo[3];                       /* lower bound of the region whose handle is passed */
	int view;                             /* the handle is an ancestor's: the accessor is a window */
	int dim;
	const struct tsr_region *region;      /* for names in error messages */
	struct tsr_fieldinfo *finfo;          /* region's field table */
	int reduce_tmp_op;                    /* REDUCE through an aliased partition: fresh buffers start at this identity */
};
struct tsr_ctx {
	struct tsr_task *task;
	void **buffers;                       /* StarPU interfaces */
	int nreqs;
	int point_dim;
	int64_t point[3];
	int ret_buf;                          /* buffer index of the return slot, -1 if none */
	int ret_op;                           /* reduction op of the return slot, 0 for single launches */
	int is_cuda;
	int dag_id;                           /* node in the graph tracker, -1 if not tracked */
	int aff_color, aff_ncolors;           /* color of the first partition requirement (locality) */
	int oob_reported;                     /* a bounds check already failed this point (TSR_CHECK_BOUNDS) */
	size_t arglen;
	void *args;
	struct tsr_reqrec reqs[];             /* nreqs, then args bytes */
};
void tsr__cpu_wrapper(void *buffers[], void *cl_arg);
void tsr__cuda_wrapper(void *buffers[], void *cl_arg);

/* ---- futures (future.c) */
struct tsr_future {
	uint64_t id;
	starpu_data_handle_t h;
	tsr_type_t type;
	size_t size;
	void *value;
	char producer[TSR_NAME_MAX];          /* task that returns it, for messages */
};
int tsr__future_lookup(tsr_future_t f, const char *what, struct tsr_future **out);
struct tsr_future *tsr__future_new(tsr_type_t type, size_t size, const void *init);
void tsr__future_free(void *obj);

/* ---- launches (launch.c) and internal tasks (hostaccess.c) */
int tsr__internal_tasks_init(void);
void tsr__internal_tasks_fini(void);

/* ---- observation (trace.c), mapping (mapper.c), policies (policies.c) */
extern int tsr__obs_on, tsr__dag_on, tsr__critpath_on;
void tsr__obs_init(const tsr_config_t *c, int critpath);
void tsr__obs_fini(const tsr_config_t *c);
void tsr__obs_task(struct starpu_task *task, struct tsr_ctx *ctx);
int tsr__dag_task(const struct tsr_task *t, int pdim, const int64_t point[3]);
void tsr__dag_access(int id, const struct tsr_region *s, int f, tsr_privilege_t priv);
void tsr__dag_set_cost(int id, struct starpu_task *task);
void tsr__dag_node_free(struct tsr_node *n);
int tsr__map_needed(const struct tsr_partition *part);
int tsr__map_decide(const struct tsr_task *t, int pdim, const int64_t point[3], tsr_box_t domain,
                    const struct tsr_partition *part, int color, tsr_mapping_t *m);
void tsr__map_apply(struct starpu_task *task, const tsr_mapping_t *m);
void tsr__mapper_reset(void);
extern struct starpu_sched_policy tsr__locality_policy, tsr__critpath_policy;

#endif
