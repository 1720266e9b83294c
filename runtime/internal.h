/* internal.h: structures shared by the runtime's files; never installed.
 * The API takes calls from the thread that called tsr_init only (TSR_REQUIRE_INIT refuses the
 * others, task variants included); task variants only see tsr_ctx. */

/* Errors inside the runtime: one space, the TSR_* codes. StarPU's and the C library's codes
 * (-ENODEV, -ENOMEM, errno) never travel: they become TSR_* codes where they are read
 * (tsr__starpu_code), as libuv converts errno. Lower floors return a bare code and the caller
 * names the object: out of memory (TSR_ENOMEM) is always bare below the public call, as are
 * StarPU's refusals of tsr__order_submit and tsr__coh_acquire (TSR_ESTARPU, TSR_ENODEV), since
 * only the caller knows which task, region or field it was for; tsr__err_of names them. A code
 * that only the lower floor can explain (TSR_EINVAL: a field one rank cannot see) comes with
 * its message, written there with tsr__err, and passes up unchanged. */
#ifndef TSR_INTERNAL_H
#define TSR_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <starpu.h>
#include "tessera.h"

/* The declarations below follow runtime/FLOORS bottom-up, one section per floor, one block per
 * file in the plan's order: a file may call what its own floor and the floors before it declare,
 * never what a later section does: the one call up is tsr__rt.fill (state.c), and the one read up
 * a partition's ranks (tsr__rank_of_color, inline, by coherence_sym.c). The files a floor holds
 * that declare nothing here share their own headers (coherence.h, launch.h, timeline.h). */

#define TSR_NAME_MAX 64
#define TSR_MAX_REQS 64

/* Growing arrays, and times in microseconds and nanoseconds: tools of every floor (the records,
 * the statistics, the ranks' transfers). TSR_GROW aborts when out of memory. */
#define TSR_GROW(arr, n, cap, init)                                      \
	do {                                                             \
		if ((n) == (cap)) {                                      \
			size_t nc_ = (cap) ? 2 * (size_t)(cap) : (init); \
			void *np_ = realloc((arr), nc_ * sizeof *(arr)); \
			if (!np_)                                        \
				abort();                                 \
			(arr) = np_;                                     \
			(cap) = nc_;                                     \
		}                                                        \
	} while (0)

static inline double tsr__ts_us(const struct timespec *t)
{
	return t->tv_sec * 1e6 + t->tv_nsec / 1e3;
}

static inline int64_t tsr__ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* The objects every floor passes around, each defined with the file that makes it: field spaces
 * (fspace.c), regions and their views (region.c), partitions (partition.c), tasks and their
 * contexts (task.c), futures (future.c). Lower floors may read their fields; they call nothing
 * above them. */
struct tsr_fspace;
struct tsr_region;
struct tsr_partition;
struct tsr_task;
struct tsr_future;
struct tsr_node;
struct tsr_ctx;
struct tsr_fstate;

/* ===== floor: services ===========================================================================
 * ctxpool.c, error.c, state.c, env.c, nice.c, place.c, dist.c, handles.c, ispace.c, geom.c,
 * text.c, fspace.c, poison.c, stats.c */

/* ---- point tasks' contexts (ctxpool.c): tsr__ctx_alloc on the host thread, tsr__ctx_release
 * by whoever uses one last (the task's wrapper or callback, or the launch that could not submit
 * it). */
void *tsr__ctx_alloc(size_t size);
void tsr__ctx_release(void *ctx);
void tsr__ctx_pool_drain(void);         /* tsr_finalize, every task done */
struct tsr_ctx *tsr__current_ctx(void); /* the task this worker thread is running, or NULL */
void tsr__set_current_ctx(struct tsr_ctx *ctx); /* by the task's wrapper, around the variant */

/* ---- errors (error.c) */
/* Invariants of the runtime's own code: tsr__assert(cond) aborts, naming the file, line, function
 * and condition, when what Tessera itself guarantees does not hold. Never for user input: a user's
 * mistake returns an error code and a message. On in every build, configure's default and make
 * check's included, whatever NDEBUG says: NDEBUG is a program's switch for its own assert(), and
 * the conditions cost a compare each. A build that wants them off defines TSR_NO_ASSERT (cond is
 * then not evaluated, so it never has a side effect). tests/layout/asserts.sh counts them. */
#ifdef TSR_NO_ASSERT
#define tsr__assert(cond) ((void)sizeof(cond))
#else
#define tsr__assert(cond) ((cond) ? (void)0 : tsr__assert_fail(#cond, __FILE__, __LINE__, __func__))
#endif
void tsr__assert_fail(const char *cond, const char *file, int line, const char *func)
	__attribute__((noreturn));
int tsr__err(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* rc from a lower floor, named by its caller (the rule atop this file): a bare TSR_ENOMEM becomes
 * "<fmt's object>: out of memory"; TSR_OK, and a code that carries its message, pass as they
 * are. */
int tsr__err_of(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A StarPU call's result as a TSR_* code: 0 TSR_OK, -ENODEV TSR_ENODEV, -ENOMEM TSR_ENOMEM, any
 * other failure TSR_ESTARPU. */
int tsr__starpu_code(int starpu_rc);
/* Messages of any length: a malloc'd string (NULL out of memory), and one that grows (*s NULL
 * at first; TSR_ENOMEM leaves it as it was). */
char *tsr__vformat(const char *fmt, va_list ap);
char *tsr__format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tsr__append(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tsr__task_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tsr__take_task_error(void);
/* 1 and the message if a task failed since the last fence */
int tsr__peek_task_error(char *buf, size_t n);

/* ---- runtime state (state.c; tsr_init fills it) */
struct tsr_runtime {
	int initialized;
	tsr_config_t cfg;
	int ncpu, ncuda, nopencl;
	/* ncuda + nopencl: workers on a memory node of their own */
	int ndevice;
	int quiet;
	int paused;
	/* the thread that called tsr_init: the only one served */
	pthread_t owner;
	int redux_unordered; /* TSR_REDUX=unordered */
	/* The one call up that the top installs (runtime.c, at tsr_init): region.c zeroes a field
	 * homed on a device with the fill task of hostaccess.c, a floor above it
	 * (runtime/FLOORS). */
	int (*fill)(tsr_region_t r, int field, const void *value, size_t size);
};
extern struct tsr_runtime tsr__rt;
int tsr__redux_ordered(void); /* 1 unless TSR_REDUX=unordered */
/* Refusal of a call made from a task variant (names the task) or from a second host thread. */
int tsr__refuse_thread(const char *what);
/* Calls that must wait for tasks cannot do so while the workers are paused. */
#define TSR_REQUIRE_RUNNING(what)                                                                 \
	do {                                                                                      \
		if (tsr__rt.paused)                                                               \
			return tsr__err(TSR_ESTATE,                                               \
					"%s: the workers are paused (tsr_resume first); waiting " \
					"would never end",                                        \
					what);                                                    \
	} while (0)

/* Internal waits (a reduction operator change) resume the workers for the time of the wait. */
void tsr__wait_handle(starpu_data_handle_t h);

#define TSR_REQUIRE_INIT(what)                                                               \
	do {                                                                                 \
		if (!tsr__rt.initialized)                                                    \
			return tsr__err(TSR_ESTATE,                                          \
					"%s: runtime not initialized (call tsr_init first)", \
					what);                                               \
		if (!pthread_equal(pthread_self(), tsr__rt.owner))                           \
			return tsr__refuse_thread(what);                                     \
	} while (0)

/* ---- switches (env.c): the one table; getenv of a TSR_ variable happens only there. A switch's
 * value is its flag's (tsr_args), else its TSR_ variable's, else StarPU's variable's for the same
 * setting (STARPU_NCPU for TSR_NCPU); config.c puts tsr_config_t and the defaults below. */
const char *tsr__env(const char *name); /* that value, or NULL when none is set (or it is empty) */
/* Where it came from: the flag ("--ncpu"), the variable ("TSR_NCPU", "STARPU_NCPU"); NULL: unset */
const char *tsr__env_from(const char *name);
/* A keyword switch: the index of its value (or default) in the table's "a|b|c", else TSR_EINVAL
 * naming `what`, the switch and the words it takes. */
int tsr__env_choice(const char *name, const char *what, int *out);
/* A number from lo to hi in *out when set (left alone when not), else TSR_EINVAL. */
int tsr__env_int(const char *name, long lo, long hi, int *out);
/* The table's rows by index (0 .. tsr__env_count() - 1). */
int tsr__env_count(void);
const char *tsr__env_name(int i);
const char *tsr__env_flag(int i); /* NULL: the switch has no flag */
const char *tsr__env_fallback(int i);
/* Row i as an older name read with a warning: the newer name, and why it changed in *because;
 * NULL for every other row. */
const char *tsr__env_renamed(int i, const char **because);
/* A switch's values column read as its rule. */
enum tsr__rule_kind {
	TSR_RULE_NONE,
	TSR_RULE_WORDS,
	TSR_RULE_RANGE,
	TSR_RULE_FILE,
	TSR_RULE_POLICY
};
struct tsr__rule {
	enum tsr__rule_kind kind;
	long lo, hi; /* TSR_RULE_RANGE */
};
int tsr__env_rule(int i, struct tsr__rule *r); /* returns r->kind */
/* Value v of switch i, given as `from` (a flag or a variable), against its rule; a policy's name
 * passes here (config.c checks it). TSR_EINVAL naming `what`, `from`, v and the values taken. */
int tsr__env_check_value(int i, const char *from, const char *v, const char *what);
/* Every switch that is set, against its rule; names of policies through policy_ok. */
int tsr__env_check_all(const char *what, int (*policy_ok)(const char *from, const char *v));
/* tsr_args: the flags taken out of argv and kept (all checked first: on failure nothing
 * changes); forget drops them. */
int tsr__env_take_flags(int *argc, char **argv, int (*policy_ok)(const char *from, const char *v));
void tsr__env_forget_flags(void);

/* ---- nice.c: StarPU's polling threads yield to the host thread (TSR_NICE, read at tsr_init). */
int tsr__nice_read(void);
void tsr__nice_pollers(void);

/* ---- place.c: ranks that share a node's cores each take a share of their own (TSR_BIND). */
struct tsr_place {
	int node_ranks; /* ranks on this rank's node (1 in one process) */
	int npus;       /* the cores of this rank's share (0: StarPU places the threads) */
	unsigned *pus;  /* their first processing units, StarPU's (hwloc logical) numbers */
};
extern struct tsr_place tsr__place;
/* after MPI_Init: find the share; with bind, the workers' binding and count into conf */
int tsr__place_rank(int bind, struct starpu_conf *conf);
int tsr__place_enter(void); /* around starpu_mpi_init_conf: the MPI thread inside the share */
void tsr__place_leave(int entered);
void tsr__place_free(void);

/* ---- several ranks (dist.c): control replication over StarPU-MPI */
struct tsr_dist {
	/* started on several ranks (even a single one, by TSR_MPI=1), real or fake */
	int on;
	int rank, size;
};
extern struct tsr_dist tsr__dist;
/* before StarPU starts: 1 (MPI, or fake ranks: TSR_FAKE_NRANKS), 0, or an error */
int tsr__dist_wanted(void);
/* MPI, and the rank's place on its node (place.c); then StarPU-MPI, which starts StarPU (fake
 * ranks: StarPU alone) */
int tsr__dist_start(struct starpu_conf *conf);
int tsr__dist_start_starpu(struct starpu_conf *conf);
void tsr__dist_shutdown(void); /* StarPU-MPI, then StarPU */
void tsr__dist_stop_mpi(void); /* after it: MPI, if Tessera started it */
/* into the call stream's hash */
void tsr__dist_note(const char *call, const void *data, size_t n);
int64_t tsr__dist_tag(void);   /* next transfer's tag: the same on every rank */
int64_t tsr__dist_tags(int n); /* the first of n consecutive tags */
/* the most MPI ranks Tessera runs on (a piece's ranks are a 64-bit set in coherence_ranks.c:
 * tsr_init refuses more) */
#define TSR_MAX_RANKS 64
/* the most ranks TSR_FAKE_NRANKS may name; what is sized by rank count (fold_ranks.c's rounds)
 * holds this many, and beyond 64 a write on one rank must take the structured path
 * (coherence.h's tsr__rank_holds) */
#define TSR_FAKE_MAX_RANKS 1024
int tsr__dist_send(starpu_data_handle_t h, int dest, int64_t tag, size_t bytes);
int tsr__dist_recv(starpu_data_handle_t h, int src, int64_t tag);
void tsr__dist_print_stats(FILE *out);
/* The timeline's record of StarPU-MPI transfers: each send and receive from its posting to its
 * completion (StarPU's clock, ns), kept while tsr__dist_log_on. */
struct tsr_mpi_xfer {
	int peer, send;
	long long bytes;
	int64_t posted, done;
};
extern int tsr__dist_log_on;
int tsr__dist_log_copy(struct tsr_mpi_xfer **out); /* a malloc'd copy of the completed ones */
void tsr__dist_log_free(void);
/* Several ranks: an index launch analysed for this rank's points (1) or for every point (0). */
void tsr__dist_count_launch(int structured);
/* Several ranks: one more task of codelet cl submitted (tsr__order_submit), for TSR_STATS. */
void tsr__dist_count_task(const struct starpu_codelet *cl);
/* Fake ranks (TSR_FAKE_NRANKS): this process plays one rank of a job without MPI. Task variants
 * are then not run (task.c's wrapper asks), transfers are counted and replaced (dist.c). */
int tsr__dist_fake(void);
/* xfer.c: transfer views' and futures' values' datatypes, registered once StarPU-MPI runs (real
 * ranks with MPI; elsewhere they do nothing), and dropped after its shutdown, before MPI's */
int tsr__xview_mpi_start(void);
/* a transfer view's handle, or a future value's: its user data is xfer.c's (order.c skips it) */
int tsr__is_xfer(starpu_data_handle_t h);
/* Futures' values and partial values (future.c, fold.c): registered, then sent and received with
 * the future fs's poison; forgotten before they are unregistered. */
void tsr__xvalue_register(starpu_data_handle_t *h, size_t size);
void tsr__xvalue_forget(starpu_data_handle_t h);
int tsr__xvalue_send(starpu_data_handle_t h, struct tsr_fstate *fs, int dest, int64_t tag,
		     size_t bytes);
int tsr__xvalue_recv(starpu_data_handle_t h, struct tsr_fstate *fs, int src, int64_t tag);
void tsr__xview_mpi_stop(void);
int tsr__dist_runs_variants(void); /* 0 on a fake rank; any thread */
/* Before a blocking call: TSR_EDIVERGE, on every rank, if the ranks' calls differ. */
int tsr__dist_check(const char *what);
/* After it: the first failure of any rank, in rank order, becomes every rank's (message included);
 * with no failure, a task that failed on any rank since the last fence fails it (TSR_ETASK): the
 * poison of its data does not travel with the data to other ranks, so a value computed there may
 * depend on it. */
int tsr__dist_agree(int rc);
/* Several ranks: wait for every task and transfer of this rank (a collective: every rank calls
 * it). */
void tsr__dist_wait_all(void);
void tsr__dist_abort(void);
/* Ranks that run an access: one rank, or every rank (fills, host maps). */
#define TSR_ALL_RANKS (-1)
static inline int tsr__here(int rank)
{
	/* one process runs all */
	return !tsr__dist.on || rank == TSR_ALL_RANKS || rank == tsr__dist.rank;
}

/* ---- handle table (handles.c): ids carry kind, generation and slot, so stale ids are detected */
enum tsr_kind {
	TSR_K_FSPACE = 1,
	TSR_K_REGION,
	TSR_K_PARTITION,
	TSR_K_TASK,
	TSR_K_FUTURE,
	TSR_K_NKINDS
};
uint64_t tsr__handle_new(enum tsr_kind kind, void *obj);
void *tsr__handle_get(enum tsr_kind kind, uint64_t id); /* NULL if stale or wrong kind */
void tsr__handle_free(uint64_t id);
/* Calls fn on every live object of `kind` (in creation order); returns how many. */
int tsr__handle_foreach(enum tsr_kind kind, void (*fn)(void *obj));
void tsr__handles_reset(void);
const char *tsr__kind_name(enum tsr_kind kind);
/* The live object behind a user's handle, or TSR_ESTALE with a message that names the call, the
 * kind and the id (TSR_ESTATE before tsr_init); *out is NULL on failure. The one lookup every
 * public call makes; the typed wrappers below spare the call sites a cast. */
int tsr__lookup(enum tsr_kind kind, uint64_t id, const char *what, void **out);
#define TSR_DEFINE_LOOKUP(name, kind, handle_type, object_type)                    \
	static inline int name(handle_type h, const char *what, object_type **out) \
	{                                                                          \
		void *obj;                                                         \
		int rc = tsr__lookup(kind, h.id, what, &obj);                      \
		*out = obj;                                                        \
		return rc;                                                         \
	}
TSR_DEFINE_LOOKUP(tsr__fspace_lookup, TSR_K_FSPACE, tsr_fspace_t, struct tsr_fspace)
TSR_DEFINE_LOOKUP(tsr__region_lookup, TSR_K_REGION, tsr_region_t, struct tsr_region)
TSR_DEFINE_LOOKUP(tsr__partition_lookup, TSR_K_PARTITION, tsr_partition_t, struct tsr_partition)
TSR_DEFINE_LOOKUP(tsr__task_lookup, TSR_K_TASK, tsr_task_t, struct tsr_task)
TSR_DEFINE_LOOKUP(tsr__future_lookup, TSR_K_FUTURE, tsr_future_t, struct tsr_future)

/* ---- boxes (ispace.c) */
int tsr__box_valid(tsr_box_t b);
int tsr__box_extent(const tsr_box_t *b, int d, int64_t *e); /* -1 if the extent overflows */
const char *tsr__box_problem(tsr_box_t b);                  /* NULL if valid, else why not */
/* TSR_EINVAL (dimension) or TSR_EBOUNDS */
int tsr__box_problem_code(tsr_box_t b);

/* a * b in *out; nonzero if the product does not fit in size_t (every size given to
 * malloc/StarPU) */
static inline int tsr__size_mul(size_t a, size_t b, size_t *out)
{
	return __builtin_mul_overflow(a, b, out);
}

void tsr__box_point(tsr_box_t b, int64_t index, int64_t point[3]);
/* The linear index of point in b (tsr__box_point's inverse); -1 if point is outside b. */
int64_t tsr__box_index(tsr_box_t b, const int64_t point[3]);
void tsr__tile_range(int64_t lo, int64_t hi, int64_t n, int64_t i, int64_t *tile_lo,
		     int64_t *tile_hi);
int tsr__box_overlap(tsr_box_t a, tsr_box_t b);
/* The parts of a outside s, which a meets: at most two per dimension, disjoint, in out (room for
 * TSR_BOX_MINUS_MAX). Returns how many. */
#define TSR_BOX_MINUS_MAX 6
int tsr__box_minus(const tsr_box_t *a, const tsr_box_t *s, tsr_box_t *out);

/* The one "box inside box" and "same box" (coherence's hot paths, poison's heals,
 * tsr_box_contains): both of one valid dimension, which the callers know. */
static inline int tsr__box_inside(const tsr_box_t *in, const tsr_box_t *out)
{
	for (int d = 0; d < in->dim; d++)
		if (in->lo[d] < out->lo[d] || in->hi[d] > out->hi[d])
			return 0;
	return 1;
}

/* The same box: the same dimension and the same bounds. */
static inline int tsr__box_equal(const tsr_box_t *a, const tsr_box_t *b)
{
	if (a->dim != b->dim)
		return 0;
	for (int d = 0; d < a->dim; d++)
		if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d])
			return 0;
	return 1;
}

char *tsr__box_str(tsr_box_t b, char *buf, size_t n);
char *tsr__color_str(int dim, const int64_t c[3], char *buf, size_t n);

/* ---- geom.c: which boxes of a partition meet a box, without a scan: tiles by arithmetic, a list
 * of boxes through an index sorted along dimension 0. */
/* A growable array of ints. */
struct tsr_ivec {
	int *v;
	int n, cap;
};

enum { TSR_GEOM_TILES = 1, TSR_GEOM_LIST };
struct tsr_geom {
	int kind;
	/* tiles: domain cut into n[d] tiles per dimension, each grown by halo[d] (then clipped) */
	tsr_box_t domain;
	int64_t n[3], halo[3];
	/* list: colors sorted by their box's lo[0], and the running maximum of hi[0] */
	int nboxes;
	int *order;
	int64_t *maxhi;
};
void tsr__geom_tiles(struct tsr_geom *g, tsr_box_t domain, const int64_t n[3],
		     const int64_t halo[3]);
int tsr__geom_list(struct tsr_geom *g, const tsr_box_t *boxes, int n);
void tsr__geom_free(struct tsr_geom *g);
/* The colors whose box meets x, into out (replaced); -1 when out of memory. */
int tsr__geom_meeting(const struct tsr_geom *g, const tsr_box_t *boxes, const tsr_box_t *x,
		      struct tsr_ivec *out);

/* ---- text.c: a point's label ("" for single launches), escaping, files written whole */
void tsr__point_label(int pdim, const int64_t p[3], char *buf, size_t n);
void tsr__put_escaped(FILE *f, const char *s); /* for JSON strings and dot labels */
int tsr__close_written(FILE *f, const char *file, const char *kind);

/* ---- field spaces (fspace.c) */
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
int tsr__fspace_fields(tsr_fspace_t fs, const char *what, int *n,
		       const struct tsr_fieldinfo **fields);
void tsr__fspace_free_all(void);

/* ---- poison (poison.c): what a failed task writes is marked with its message. A future's state
 * is reference-counted (the future and each task using it hold one); a field's poison is a list of
 * boxes per (root region, field). Workers write it before their task's data is released, the host
 * reads it after acquiring the data, so StarPU's own synchronisation orders the two. */
struct tsr_fstate *tsr__fstate_new(void);
void tsr__fstate_ref(struct tsr_fstate *s);
void tsr__fstate_unref(struct tsr_fstate *s);
const char *tsr__fstate_poison(struct tsr_fstate *s);               /* NULL: healthy */
void tsr__fstate_set_poison(struct tsr_fstate *s, const char *msg); /* the first message stays */
/* poisoned boxes alive (fast test) */
extern int tsr__npoison;
/* The marks of tasks submitted before `before` (UINT64_MAX: all): a malloc'd message, or NULL. */
char *tsr__field_poison_find(uint64_t root, int field, tsr_box_t box, uint64_t before);
/* Marks carry the submission order of the task that failed, and a heal clears only the marks of
 * tasks submitted before the healer: a REDUCE point reaches its field only through a fold task, so
 * it may run (and fail) before an earlier fill of the field runs and heals. */
void tsr__field_poison_add(uint64_t root, int field, tsr_box_t box, const char *msg, uint64_t seq);
/* what lies inside box: the marks lose it, and keep the rest */
void tsr__field_poison_clear(uint64_t root, int field, tsr_box_t box, uint64_t before);
void tsr__poison_forget_region(uint64_t root);
/* Marks between ranks (xfer.c carries them with each transfer): the sender's marks that meet box
 * (cut to it, at most max; returns how many), and the receiver's update once the data arrived. */
int tsr__field_poison_marks(uint64_t root, int field, tsr_box_t box, uint64_t before,
			    tsr_box_t *out, int max, char *msg, size_t msgsize);
void tsr__field_poison_received(uint64_t root, int field, tsr_box_t box, uint64_t before,
				const tsr_box_t *marks, int n, const char *msg);
/* The policy the task wrapper applies (task.c): the first poisoned input's message (malloc'd) or
 * NULL; poison what a failed or skipped task should have written; heal what a task WROTE. */
char *tsr__poison_inherited(const struct tsr_ctx *ctx);
void tsr__poison_outputs(const struct tsr_ctx *ctx, const char *msg);
void tsr__heal_outputs(const struct tsr_ctx *ctx);
void tsr__poison_reset(void);
/* A point task holds a reference on every future state it reads or writes from submission until its
 * wrapper ends; launch.c takes them just before starpu_task_submit and drops them if it fails. */
void tsr__ctx_hold_states(struct tsr_ctx *ctx);
void tsr__ctx_drop_states(struct tsr_ctx *ctx);

/* ---- TSR_STATS (stats.c): time per task and worker kind, bytes per bus; the counts of traces
 * (replay.c counts, stats.c prints them at finalize) */
struct tsr_replay_counts {
	long launches; /* inside traces: the user's, or a sequence the automatic mode follows */
	long recorded; /* analysed in full and recorded */
	long replayed; /* replayed: the dependence analysis skipped */
	long replayed_tasks;     /* point tasks of the replayed launches */
	long full;               /* analysed in full, not recorded (fallbacks, devices, ranks) */
	long iterations;         /* iterations replayed whole */
	long fallbacks;          /* iterations whose replay stopped */
	long rerecorded;         /* iterations that recorded the body again */
	long auto_found;         /* sequences the automatic mode found */
	const char *full_reason; /* why this run analyses traces in full, or NULL */
};
extern struct tsr_replay_counts tsr__replay_counts;

/* The handoff's pushes (idle.c: under eager, a task made ready goes to a worker's slot): to an
 * idle worker's slot, kept in the pushing worker's own, through the queue; and the tasks a worker
 * took from another's slot. idle.c sums them here at finalize, stats.c prints them. */
struct tsr_handoff_counts {
	int on; /* the handoff ran */
	long to_idle;
	long kept;
	long queued;
	long stolen;
};
extern struct tsr_handoff_counts tsr__handoff_counts;

/* StarPU's transfer totals per bus (reading them resets them, so tsr__obs_fini reads them once). */
#define TSR_MAX_BUS 64
struct bus_row {
	int src, dst;
	long long bytes;
	int count;
};
int tsr__bus_read(struct bus_row *out, int max);
const char *tsr__bus_node_kind(int node); /* "host" or "device" */
/* "node 1 (OpenCL 0 memory)": a memory node for people */
void tsr__node_label(int node, char *buf, size_t n);
void tsr__stats_add(const char *name, int kind, double us);
void tsr__stats_print(const struct bus_row *bus, int nbus);
void tsr__stats_free(void);

/* ===== floor: kernels ============================================================================
 * opencl.c, reduce_cuda.cu, reduce.c */

/* ---- OpenCL devices (opencl.c): programs, each worker's kernels, Tessera's own task bodies there.
 * The bodies enqueue on the running worker's queue; tsr__opencl_finish waits for it. */
/* tsr_init: builds Tessera's kernels for every OpenCL device */
int tsr__opencl_start(void);
void tsr__opencl_stop(void); /* tsr_finalize, every task done, before StarPU stops */
void tsr__opencl_finish(void);
/* In a user's OpenCL variant (task number seq): the running worker's kernel `name`, holding no
 * other task's buffers (for the variant to enqueue itself); NULL with what was wrong in msg. */
void *tsr__opencl_user_kernel(const char *name, uint64_t seq, char *msg, size_t n);
/* Kernel `name` with its arguments over global[dims] work-items (local: the work-groups, NULL:
 * OpenCL chooses) on the running worker's queue, checked first against the kernel (argument count
 * and kinds) and the device (sizes); 0, or -1 with what was wrong in msg. */
int tsr__opencl_user_launch(const char *name, const tsr_kernel_arg_t *args, int nargs, int dims,
			    const size_t *global, const size_t *local, uint64_t seq, char *msg,
			    size_t n);
int tsr__opencl_fill(const tsr_accessor_t *a, const void *value);
int tsr__opencl_copy(const tsr_accessor_t *d, const tsr_accessor_t *s);
void tsr__opencl_redop(int type, int op, int init, void *dst, void *src); /* as tsr__cuda_redop */
void tsr__opencl_zero(void *variable_iface, size_t size);

/* A variable's buffer on a device: StarPU 1.4 keeps it in dev_handle (at offset), 1.3 in ptr
 * alone. */
static inline uintptr_t tsr__variable_buffer(const struct starpu_variable_interface *v,
					     size_t *offset)
{
	*offset = v->dev_handle ? v->offset : 0;
	return v->dev_handle ? v->dev_handle : v->ptr;
}

/* ---- CUDA bodies of the reduction codelets (reduce_cuda.cu) */
void tsr__cuda_redop(int type, int op, int init, void *dst, void *src); /* reduce_cuda.cu */

/* ---- reductions (reduce.c) */
struct starpu_codelet *tsr__redux_cl(tsr_type_t type, int op);
struct starpu_codelet *tsr__init_cl(tsr_type_t type, int op);
int tsr__redop_valid(tsr_type_t type, int op, const char *what);
void tsr__redop_identity(tsr_type_t type, size_t size, int op, void *elem);
void tsr__redop_fold(tsr_type_t type, size_t size, int op, void *acc, const void *val);
const char *tsr__redop_name(int op);
const char *tsr__redop_priv_name(int op); /* "REDUCE(max)" */
/* "READ", "WRITE", "READ_WRITE" or "REDUCE(op)"; valid until four more calls in this thread, so
 * that one message may name several privileges. */
const char *tsr__priv_name(tsr_privilege_t p);
int tsr__redop_known(int op);
int tsr__redop_on_devices(int op); /* built-in: has CUDA and OpenCL code; registered: CPU only */
/* The error for an operator id that is neither built in nor registered (a privilege, say). */
int tsr__redop_unknown(int op, const char *what);
void tsr__node_set_redux(struct tsr_node *n, tsr_type_t type, int op);
void tsr__redops_reset(void);

/* ===== floor: records ============================================================================
 * dag.c, records.c */

/* ---- the task graph (dag.c): nodes in submission order, grouped by launch and iteration. */
extern int tsr__dag_on, tsr__critpath_on;
/* the whole graph is kept (TSR_DAG's file, the timeline's arrows); else, for the critical path
 * alone, what no longer matters (done tasks, their accesses) is dropped as the run goes */
extern int tsr__dag_whole;
int tsr__dag_switches(void); /* TSR_DAG_LABELS, TSR_DAG_ITERS, at tsr_init */
void tsr__dag_launch(const void *key, int single);
/* A node's cell (tsr-critpath): what a worker needs of a task's node, at an address that stays
 * while the host moves and drops nodes; the policy reads the bottom level at push, and the end of
 * the task says it finished, neither under the graph's lock (which the host holds while it raises
 * bottom levels). tsr__dag_task gives a point's node's cell, NULL without the critical path. */
struct tsr_dcell;
int tsr__dag_task(const char *name, int pdim, const int64_t point[3], struct tsr_dcell **cell);
int tsr__dag_internal(const char *name, int pdim, const int64_t point[3]);
/* a sync, which the next task (point or fold) made in its launch follows */
int tsr__dag_sync(int pdim, const int64_t point[3]);
void tsr__dag_access(int id, const struct tsr_region *s, int f, tsr_privilege_t priv);
void tsr__dag_fold_access(int id, const struct tsr_region *s, int f, int op);
void tsr__dag_edge(int from, int to, const char *why); /* why: the label, when kept */
void tsr__dag_set_cost(int id, struct starpu_task *task);
void tsr__dag_node_free(struct tsr_node *n);
/* The policy's push (worker): the bottom level, now fixed for the task, which is ready */
double tsr__dag_push_key(struct tsr_dcell *c);
/* The task's last use of its cell (worker): the host may free it */
void tsr__dag_finished(struct tsr_dcell *c);
int tsr__dag_count(void);
/* fn on every pair of tasks with an edge, once (the timeline's arrows) */
void tsr__dag_pairs(void (*fn)(int from, int to, void *arg), void *arg);
void tsr__dag_done(int id);
int tsr__dag_write(const char *file);
void tsr__dag_free(void);

/* ---- observation (records.c) */
extern int tsr__obs_on;
void tsr__obs_init(const tsr_config_t *c, int critpath);
/* before starpu_init: TSR_EINVAL naming an unwritable path or a bad observation switch */
int tsr__obs_check_paths(const tsr_config_t *c);
/* TSR_EINVAL naming a file that could not be written */
int tsr__obs_fini(const tsr_config_t *c);
/* A task about to be submitted is observed (timeline, statistics, critical path) through a
 * record its callback ends; NULL when nothing observes. If the submit fails, tsr__obs_drop. A
 * point task's record releases its context; an internal task (a fold, a sync) is shown under
 * `name` (a literal), at its point (pdim 0: none), as graph node dag_id (-1: none). */
struct tsr_obs_rec;
struct tsr_obs_rec *tsr__obs_task(struct starpu_task *task, struct tsr_ctx *ctx);
struct tsr_obs_rec *tsr__obs_internal(struct starpu_task *task, const char *name, int pdim,
				      const int64_t point[3], int dag_id);
void tsr__obs_drop(struct tsr_obs_rec *rec);
/* Around each launch (launch.c): its slice on the host thread's timeline, its box in the graph
 * (single: not an index launch). */
void tsr__obs_launch_begin(const struct tsr_task *t, int single);
void tsr__obs_launch_end(void);
/* The point a subregion is the color of (its dimension), or 0 for a root region. */
int tsr__region_point(const struct tsr_region *r, int64_t point[3]);

/* ===== floor: coherence ==========================================================================
 * order.c, coherence.c, coherence_sym.c, coherence_entry.c */

/* ---- order.c: Tessera's own ordering of the tasks on its views (one process, one memory node).
 * Its input, and coherence's answer: which earlier tasks an access to a node waits for. */
struct tsr_dep {
	starpu_data_handle_t h;
	enum starpu_data_access_mode mode;
};

struct tsr_deps { /* handles a task lists besides its data, for ordering */
	struct tsr_dep *v;
	int n, cap;
};

/* The mode in which a write lists the token of another node's piece it overlaps, where Tessera
 * orders the tasks itself (order.c): wait as a write does (for the readers since the token's last
 * write, else for that write), but neither become the token's writer nor one of its readers.
 * Listed read-write, the token made two writes of disjoint parts of one piece wait for each other
 * (circuit's first loop ran its pieces one at a time: every piece's first write overlapped the
 * piece the initial host writes left to the root). Never a StarPU mode: such an entry is no buffer
 * of the task, and a host acquire holds the handle read-only (tsr__dep_starpu_mode). */
#define TSR_WAIT_AS_WRITE ((enum starpu_data_access_mode)0x40000000)

/* The mode in which a read lists the token of another node's piece, where Tessera orders the
 * tasks itself: wait for the token's last writer and become one of its readers (so that its next
 * writer waits for this task), as a read-only buffer would, but without being a buffer of the
 * task. On one memory node the token is another view of the memory the task reads through its own
 * handle: as a buffer it only cost StarPU a fetch, a release and a place in the sorted buffers per
 * task (apps/bench/README.md, traces). Never a StarPU mode (tsr__dep_starpu_mode). */
#define TSR_WAIT_AS_READ ((enum starpu_data_access_mode)0x20000000)

/* Whether an entry of a task's list is order.c's only, no buffer of the task. */
static inline int tsr__dep_waits_only(enum starpu_data_access_mode m)
{
	return m == TSR_WAIT_AS_WRITE || m == TSR_WAIT_AS_READ;
}

static inline enum starpu_data_access_mode tsr__dep_starpu_mode(enum starpu_data_access_mode m)
{
	return tsr__dep_waits_only(m) ? STARPU_R : m;
}

/* How many of d's entries a task lists as buffers (order.c's waits are none). */
static inline int tsr__deps_nbuffers(const struct tsr_deps *d)
{
	int n = 0;
	for (int i = 0; i < d->n; i++)
		n += !tsr__dep_waits_only(d->v[i].mode);
	return n;
}

/* at tsr_init, before StarPU starts (TSR_DEPS, and whether the libstarpu loaded has the notify
 * fix; quiet: do not say on stderr that it lacks it) */
int tsr__order_init(int quiet);
/* once StarPU runs: whether this run can use it */
void tsr__order_start(int can);
int tsr__order_active(void);
int tsr__order_direct(void); /* tasks reach the views it orders directly (TSR_TASKDATA) */
int tsr__order_track(starpu_data_handle_t h);    /* a view's handle, just registered */
void tsr__order_untrack(starpu_data_handle_t h); /* before it is unregistered */
int tsr__order_tracks(starpu_data_handle_t h);   /* whether Tessera orders h's tasks */
/* starpu_task_submit; on failure the task is gone, and the code is bare (TSR_ENOMEM, TSR_ENODEV:
 * no worker can run it, TSR_ESTARPU): the caller names the task. waits (or NULL): the listed
 * handles, of which the TSR_WAIT_AS_WRITE and TSR_WAIT_AS_READ entries (no buffers of the task)
 * are waited for too, and a TSR_WAIT_AS_READ one makes the task one of the handle's readers. */
int tsr__order_submit(struct starpu_task *task, const struct tsr_deps *waits);
/* The same for a task whose variant reads its views through ctx (a point's context, launch.c): it
 * may then reach them directly (TSR_TASKDATA) */
int tsr__order_submit_point(struct starpu_task *task, const struct tsr_deps *waits,
			    struct tsr_ctx *ctx);
int tsr__order_wait(const struct tsr_deps *held, const struct tsr_dep *own); /* host access */
/* after a full wait: forget, destroy finished tasks */
void tsr__order_waited(void);
/* after another wait: destroy the finished tasks */
void tsr__order_reap(void);
void tsr__order_shutdown(void);
extern struct starpu_codelet tsr__noop_cl;  /* no-op tasks over any handles (order.c) */
void tsr__noop(void *buffers[], void *arg); /* its body */
/* Wait for every task (the workers resumed for the time of the wait), then forget them here. */
void tsr__wait_all(void);

/* ---- coherence by pieces in one process (coherence.c) */
/* at tsr_init, before StarPU starts (TSR_COHERENCE) */
int tsr__coh_init(void);
/* at tsr_init, once StarPU runs */
void tsr__coh_start(void);
/* void tokens in use: TSR_COHERENCE=tokens or several memory nodes */
int tsr__coh_tokens(void);
void tsr__deps_reset(struct tsr_deps *d);
void tsr__deps_free(struct tsr_deps *d);
void tsr__coh_register(struct tsr_node *n); /* register n's view (and token) if not yet */
/* Add to d what an access to n (write: anything but READ) must list; several memory nodes: bring
 * n's home copy up to date first. Then, for a write, tsr__coh_wrote once the task is submitted. */
int tsr__coh_deps(struct tsr_node *n, int write, struct tsr_deps *d);
/* A task wrote n. group: another node the same task wrote earlier (recorded first), of the same
 * field of the same region, through its own handle in an exclusive mode, whose token then carries
 * the ordering of this write too (one handle for later readers to list instead of one per node the
 * task wrote); NULL or n: n's own. listed: the write was this rank's own (a task or a host map
 * that listed what tsr__coh_deps gave for n, sends included); 0: another rank's, noted here. */
int tsr__coh_wrote(struct tsr_node *n, struct tsr_node *group, int listed);
/* Replay (replay.c): tsr__coh_changes counts every change of a field's pieces, so that a replay
 * sees a change it did not make itself; tsr__coh_print says what the dependence analysis reads
 * from a root's field (piece boxes, writers, tokens), for a replay's precondition. */
extern uint64_t tsr__coh_changes;
struct tsr_piece_print {
	tsr_box_t box;
	uint64_t writer; /* the region id of the piece's last writer */
	uint64_t token;  /* ... and of the node whose token stands for that write */
	int current;     /* that token still stands for the write alone (group tokens) */
};
/* The prints of the field's pieces into out (at most max); returns how many pieces it has. */
int tsr__coh_print(struct tsr_node *root, struct tsr_piece_print *out, int max);
/* Hand the pieces written through dying nodes to the root; then unregister them. */
void tsr__coh_retire(struct tsr_node *root, int (*dying)(const struct tsr_node *n, const void *arg),
		     const void *arg);
void tsr__coh_unregister(struct tsr_node *n);

/* ---- several ranks, structured index launches (coherence_sym.c): a requirement through a
 * partition with the identity projection, the launch's mapping partition (the rank of each
 * point) and this rank's points (linear indexes of domain). */
struct tsr_sym_req {
	const struct tsr_partition *part;
	const struct tsr_partition *mpart;
	tsr_box_t domain;
	const int *mine;
	int nmine;
};
/* Tags the moves of a read of root's field through r may use (reserve that many first). */
int64_t tsr__coh_sym_tags(const struct tsr_node *root, const struct tsr_sym_req *r);
/* A read through r: this rank's receives and sends, tags from base on. */
int tsr__coh_sym_read(struct tsr_node *root, const struct tsr_sym_req *r, int64_t base);
/* The union of p's boxes over domain when it is one box; 0 otherwise. */
int tsr__coh_sym_cover(const struct tsr_partition *p, tsr_box_t domain, tsr_box_t *cover);
/* After this rank's points wrote through r (cover from tsr__coh_sym_cover): the field's validity
 * is the launch's. */
int tsr__coh_sym_wrote(struct tsr_node *root, const struct tsr_sym_req *r, const tsr_box_t *cover);
/* The structured write told piece by piece in the validity map, and forgotten. */
int tsr__coh_sym_flatten(struct tsr_node *root);
/* Before partition p goes or its ranks change: flatten the writes that name it. */
int tsr__coh_sym_forget(struct tsr_partition *p);
/* The same when flattening is not possible: forget them (their fields' validity is then lost). */
void tsr__coh_sym_abandon(struct tsr_partition *p);

/* ---- the entry points the floors above call (coherence_entry.c): coherence.c's calls, plus
 * the ranks' part */
int tsr__coh_root_init(struct tsr_node *root);
void tsr__coh_root_free(struct tsr_node *root);
/* Several ranks: an access by `rank` (or TSR_ALL_RANKS) that reads (reads = 1) first makes n's box
 * valid there, every rank sending or receiving its share of the pieces; then, on the ranks that
 * run it, tsr__coh_deps. After a write, tsr__coh_wrote_by records where the new value lives (and,
 * where it runs, tsr__coh_wrote). With one rank they are tsr__coh_deps and tsr__coh_wrote. */
int tsr__coh_access(struct tsr_node *n, int reads, int write, int rank, struct tsr_deps *d);
int tsr__coh_wrote_by(struct tsr_node *n, struct tsr_node *group, int rank);
/* bytes of n's box `rank` does not hold */
int64_t tsr__coh_missing(struct tsr_node *n, int rank);
/* Host maps: hold the tokens an access to n needs (in held) until tsr__coh_release. */
int tsr__coh_acquire(struct tsr_node *n, int reads, int write, struct tsr_deps *held);
void tsr__coh_release(struct tsr_deps *held);
void tsr__coh_shutdown(void);

/* ===== floor: data ===============================================================================
 * region.c, partition.c, mapper.c */

/* ---- regions and subregions (region.c) */
/* One StarPU handle per (region or subregion, field): a view of the root's array (coherence.c). */
struct tsr_pieces;
struct tsr_node {
	starpu_data_handle_t h; /* the view; subregions: NULL until first used */
	/* several memory nodes: the node's dependency token; else NULL */
	starpu_data_handle_t token;
	struct tsr_region *region;
	int field;
	/* same field of the parent region; NULL at the root */
	struct tsr_node *parent;
	/* partition that holds this subregion; NULL at the root */
	struct tsr_partition *part;
	/* root only: the field's pieces and their last writers */
	struct tsr_pieces *pieces;
	/* index of the piece that is exactly this node's box, if any */
	int piece_hint;
	/* indices of the pieces that overlap this node's box ... */
	int *overlaps, noverlaps, cap_overlaps;
	/* ... while the field's pieces are those of this generation */
	uint64_t overlaps_geom;
	/* several memory nodes: writes this node's home copy includes */
	uint64_t synced;
	int redop_set; /* reduction methods installed on h (0: none) */
	/* tasks that wrote through this node's handle (group tokens) */
	uint64_t write_gen;
	/* root nodes: accesses seen by the graph tracker (dag.c) */
	void *dag;
	/* several ranks (coherence_ranks.c) */
	/* root only: which ranks hold the latest value of each box */
	struct tsr_pieces *valid;
	struct tsr_xviews *xviews; /* root only: the views transfers send and receive */
	/* root only: the structured write that tells its validity instead (coherence_sym.c) */
	struct tsr_sym *sym;
	int is_transfer; /* this node is such a transfer view of box transfer_box */
	/* index of the validity piece that is exactly its box, if any */
	int valid_hint;
	tsr_box_t transfer_box;
	struct tsr_xstate *xstate; /* a transfer view's queue of transfers (xfer.c) */
};

struct tsr_region {
	uint64_t id;
	char *name;
	tsr_box_t bounds;
	int nfields;
	struct tsr_fieldinfo *fields; /* owned by the root */
	struct tsr_region *root;
	struct tsr_partition *parent_part; /* NULL at the root */
	int color_index;
	struct tsr_node *nodes;       /* nfields */
	struct tsr_partition **parts; /* partitions of this region */
	int nparts, cap_parts;
	/* root only */
	void **storage; /* one array per field */
	int *mapped;    /* per field: mapped on the host */
	/* memory node of storage: STARPU_MAIN_RAM or a GPU's */
	int home;
};

struct tsr_region *tsr__subregion_new(struct tsr_partition *p, int c);
void tsr__region_free_tree(struct tsr_region *r);
int tsr__field_check(const struct tsr_region *r, int f, const char *what);
int tsr__region_aliased(const struct tsr_region *r);
int tsr__region_free_all(void);

/* ---- partitions (partition.c) */
struct tsr_partition {
	uint64_t id;
	char *name;
	struct tsr_region *parent;
	tsr_box_t colors;
	int ncolors;
	int disjoint;
	tsr_box_t *boxes;         /* ncolors, global coordinates */
	struct tsr_region **subs; /* ncolors */
	/* worker per color (tsr_partition_set_owner), or NULL */
	int *owners;
	/* rank per color (tsr_partition_set_rank), or NULL: blocks */
	int *ranks;
	/* with ranks: each rank's colors, rank_colors[rank_start[r] .. rank_start[r + 1]), built
	 * when first asked (tsr__partition_rank_index); NULL until then */
	int *rank_start, *rank_colors;
	/* one more each time tsr_partition_set_rank changes ranks: what was derived from them
	 * (fold_ranks.c's plans) knows it is stale */
	unsigned ranks_gen;
	struct tsr_geom geom; /* several ranks: which colors meet a box (geom.c) */
	/* several ranks: fields whose validity a launch through this partition describes
	 * (coherence_sym.c); they forget it before the partition goes or its ranks change */
	int sym_refs;
};

/* The rank that runs color c of p: tsr_partition_set_rank's, else blocks of colors. */
static inline int tsr__rank_of_color(const struct tsr_partition *p, int c)
{
	if (p->ranks)
		return p->ranks[c];
	return (int)((int64_t)c * tsr_nranks() / p->ncolors);
}

void tsr__partition_free(struct tsr_partition *p, int detach);
int tsr__color_index(const struct tsr_partition *p, const int64_t color[3]);

/* ---- the user's mapper (mapper.c) */
int tsr__map_needed(const struct tsr_partition *part);
/* cpu_why: what keeps the task on CPUs (a registered operator), or NULL */
int tsr__map_decide(const struct tsr_task *t, int pdim, const int64_t point[3], tsr_box_t domain,
		    const struct tsr_partition *part, int color, int rank, const char *cpu_why,
		    tsr_mapping_t *m);
/* several ranks: the rank of color c */
int tsr__color_rank(const struct tsr_partition *p, int c);
/* p's colors by rank (p->rank_start, p->rank_colors), built if p has ranks set and no index */
int tsr__partition_rank_index(struct tsr_partition *p);
int tsr__region_rank(const struct tsr_region *r); /* of its color; 0 for a root */
void tsr__map_apply(struct starpu_task *task, const tsr_mapping_t *m);
const char *tsr__worker_kind_name(tsr_worker_kind_t k); /* "CPU", "CUDA", "OpenCL" */
void tsr__mapper_reset(void);

/* ===== floor: execution ==========================================================================
 * task.c, fold.c, fold_ranks.c, future.c, replay.c, launch.c, hostaccess.c, idle.c, policies.c */

/* ---- tasks (task.c) */
struct tsr_task {
	uint64_t id;
	char name[TSR_NAME_MAX];
	tsr_variant_fn cpu, cuda, opencl;
	tsr_type_t ret_type;
	size_t ret_size;
	struct starpu_codelet cl;
	struct starpu_perfmodel model;
	int on_every_rank; /* several ranks: every rank runs it (tsr_fill) */
	int internal;      /* Tessera's own (tsr_fill, tsr_copy): shown as such on the timeline,
			    * and run on a fake rank too (TSR_FAKE_NRANKS) */
	int copies;        /* tsr_copy: its data moves, shown on the timeline as a transfer */
};

/* What one point task carries to its variant (in its context's block of the context pool,
 * ctxpool.c, released by whoever uses the context last). */
struct tsr_reqrec {
	int kind;
	tsr_privilege_t priv;
	int nfields;
	int first_buf;                  /* futures: StarPU buffer index */
	int fields[TSR_MAX_REQ_FIELDS]; /* field ids */
	int buf[TSR_MAX_REQ_FIELDS];    /* StarPU buffer index of each field */
	int64_t lo[3], hi[3];           /* requested (sub)region bounds, global coordinates */
	int dim;
	const struct tsr_region *region; /* for names in error messages */
	/* its root's id: the poison a failed task leaves is per root field, and the subregion may
	 * be destroyed (its partition) while the task is pending, so a worker must not reach it */
	uint64_t root_id;
	struct tsr_fieldinfo *finfo; /* region's field table */
	/* futures: its poison state (one reference held by the task) */
	struct tsr_fstate *fstate;
	/* REDUCE into a private buffer (launch.h): the operator, whose identity the fresh buffer
	 * starts at; 0 otherwise */
	int private_redop;
};

struct tsr_ctx {
	struct tsr_task *task;
	void **buffers; /* StarPU interfaces */
	int nreqs;
	int point_dim;
	int64_t point[3];
	int ret_buf; /* buffer index of the return slot, -1 if none */
	/* reduction op of the return slot, 0 for single launches */
	int ret_op;
	/* the return slot is this point's partial value: starts at identity */
	int ret_partial;
	int arch;   /* enum tsr_arch: which variant runs */
	int dag_id; /* node in the graph tracker, -1 if not tracked */
	/* submission order (poison marks and heals compare it) */
	uint64_t seq;
	/* color of the first partition requirement (locality) */
	int aff_color, aff_ncolors;
	/* poison state of the result future (one reference), or NULL */
	struct tsr_fstate *ret_state;
	/* first error the variant reported (tsr__task_error), or NULL */
	char *failmsg;
	/* a bounds check already failed this point (TSR_CHECK_BOUNDS) */
	int oob_reported;
	/* the task's callback, not its wrapper, is the last to use it */
	int release_in_callback;
	/* TSR_TASKDATA=direct: the task lists no StarPU data; these are its views' interfaces on
	 * the host, in the order it would have listed them (order.c) */
	int ndirect;
	void *direct[STARPU_NMAXBUFS];
	/* order.c's record of the task, where it keeps one: set once the CPU variant has run, so
	 * that dropping a finished reader needs no StarPU lock (order.c), NULL otherwise */
	_Atomic int *ran;
	/* the task's node under tsr-critpath (dag.c), NULL otherwise */
	struct tsr_dcell *dag_cell;
	size_t arglen;
	void *args;
	struct tsr_reqrec reqs[]; /* nreqs, then args bytes */
};

enum tsr_arch { TSR_ARCH_CPU, TSR_ARCH_CUDA, TSR_ARCH_OPENCL };
void tsr__cpu_wrapper(void *buffers[], void *cl_arg);
void tsr__cuda_wrapper(void *buffers[], void *cl_arg);
void tsr__opencl_wrapper(void *buffers[], void *cl_arg);
void tsr__task_free(void *obj);
/* A task of cl owning arg, with room for nbuf buffers; NULL when out of memory (arg freed)
 * (task.c). */
struct starpu_task *tsr__task_new(struct starpu_codelet *cl, void *arg, size_t arg_size, int nbuf,
				  int pooled);

/* ---- reductions of launches (fold.c): private buffers, fold tasks, partial values */
/* A private REDUCE buffer of subregion sub, folded into sub's fold target after the point's
 * task. */
struct tsr_pending_fold {
	struct tsr_region *sub;
	int field;
	starpu_data_handle_t tmp;
	int op;
	int rank;
	int dag_src; /* the point's node in the task graph, or -1 */
	/* the point's seq (a point another rank runs: the seq the next task of this rank gets): its
	 * fold's transfers carry the marks of tasks submitted before it (xfer.c) */
	uint64_t seq;
};

/* Where a point's return value goes: the future itself (single launches; StarPU's REDUX when
 * reductions are unordered), or the point's own partial value, which starts at the identity and
 * is folded into the future in launch order (partial = 1). */
struct tsr_ret_slot {
	starpu_data_handle_t h;
	int op;
	int partial;
	struct tsr_fstate *state;
};

/* The partial values lent to one launch; pool is NULL when all size slots were taken, and the
 * handles are then unregistered after the fold. */
struct partial_pool;
struct tsr_partials {
	struct partial_pool *pool;
	int64_t n;
	starpu_data_handle_t h[];
};
void tsr__fold_init(void);
void tsr__fold_fini(void); /* at tsr_finalize, once every task has run */
starpu_data_handle_t tsr__fold_private(struct tsr_region *s, int f, int op,
				       struct tsr_pending_fold *folds, int *nfolds);
/* returns rc or the first failure */
int tsr__folds_submit(struct tsr_pending_fold *folds, int nfolds, int rc);
/* NULL when out of memory */
struct tsr_partials *tsr__partials_take(int64_t npoints, size_t size);
/* dag_ids: the points' nodes in the task graph (NULL when it is off) */
int tsr__future_fold_submit(const char *tn, struct tsr_future *res, int op, struct tsr_partials *ps,
			    const int *dag_ids);
void tsr__partials_release(struct tsr_partials *ps, int folded);
int tsr__partials_pooled(const struct tsr_partials *ps);

/* ---- several ranks (fold_ranks.c) */
void tsr__fold_ranks_init(void);
void tsr__fold_ranks_fini(void); /* at tsr_finalize, once every task has run */
/* Where a launch's points' values lie once gathered (their ranks decide it), shared and counted:
 * from every point's rank, or from the mapping partition's ranks over the launch domain (kept for
 * the next launch over both). NULL when out of memory. */
struct tsr_fold_plan;
struct tsr_fold_plan *tsr__fold_plan_ranks(const int *ranks, int64_t npoints);
struct tsr_fold_plan *tsr__fold_plan_part(const struct tsr_partition *m, tsr_box_t domain);
void tsr__fold_plan_drop(struct tsr_fold_plan *p); /* NULL: nothing */
/* Every point's partial value is gathered and folded in color order: on every rank (*from =
 * TSR_ALL_RANKS), or on rank *from, which the caller then broadcasts res from
 * (tsr__future_bcast). ps: the values of this rank's points, in color order; plan: where every
 * point's value lies. Owns ps and the caller's reference to plan from the call on. */
int tsr__future_fold_ranks(const char *tn, struct tsr_future *res, int op, struct tsr_partials *ps,
			   struct tsr_fold_plan *plan, const int *dag_ids, int *from);

/* ---- futures (future.c) */
struct tsr_future {
	uint64_t id;
	/* StarPU owns the value's memory: it goes with the handle */
	starpu_data_handle_t h;
	tsr_type_t type;
	size_t size;
	/* poison, shared with the tasks that use the future */
	struct tsr_fstate *state;
	char producer[TSR_NAME_MAX]; /* task that returns it, for messages */
};
struct tsr_future *tsr__future_new(tsr_type_t type, size_t size, const void *init);
void tsr__future_free(void *obj);
/* Several ranks: rank `from` computed f's value; every other rank receives it, down a binomial
 * tree rooted at `from` (ceil(log2 N) rounds, at most that many sends per rank). */
int tsr__future_bcast(struct tsr_future *f, int from);

/* ---- traces (replay.c) */
int tsr__replay_init(void);   /* tsr_init, before StarPU starts: TSR_REPLAY */
void tsr__replay_start(void); /* once coherence knows the memory nodes and ranks */
void tsr__replay_fini(void);

/* ---- launches (launch.c) */
int tsr__launch_init(void);
int tsr__launch_read_window(void); /* TSR_WINDOW, at tsr_init */
void tsr__launch_fini(void);       /* forgets the cached partial-value handles and its lists */
/* poison.c: host thread: the last point task's seq (launch.c counts), and nonzero while a fold's
 * transfers are submitted (fold.c): the seq of the point whose private buffer it folds, which they
 * serve (xfer.c); 0: they serve the next task */
extern uint64_t tsr__submit_seq;
extern uint64_t tsr__xfer_seq;

/* ---- maps, fills and copies (hostaccess.c) */
int tsr__internal_tasks_init(void);
/* Drops every host mapping; appends "field 'f' of 'r'" for each to *names (malloc'd, grown). */
int tsr__unmap_all(char **names);

/* TSR_IDLE's words, in env.c's order (tsr__env_choice gives their index) */
enum tsr_idle_word { TSR_IDLE_AUTO, TSR_IDLE_PARK, TSR_IDLE_SPIN, TSR_IDLE_YIELD };

/* ---- idle.c: idle workers parked until a task is pushed (TSR_IDLE); *parking says whether
 * they are */
int tsr__idle_park(struct starpu_conf *conf, int *parking);
/* idle workers that yield their core between two empty pops (TSR_IDLE) */
void tsr__idle_yield(struct starpu_conf *conf);
/* StarPU started: with yielding workers under eager, all of them CPU workers, tasks go to idle
 * workers' slots (the handoff) */
void tsr__idle_started(void);
/* The handoff's counts summed over the workers and the other threads into tsr__handoff_counts,
 * for TSR_STATS (at finalize, the workers idle) */
void tsr__idle_count(void);
/* The policy a (maybe parked) policy structure runs. */
const struct starpu_sched_policy *tsr__idle_base(const struct starpu_sched_policy *p);
/* what idle workers do, tsr_idle_name()'s answer (the runtime started) */
const char *tsr__idle_name(void);

/* ---- Tessera's StarPU scheduling policies (policies.c) */
extern struct starpu_sched_policy tsr__locality_policy, tsr__critpath_policy;

/* ===== floor: top ================================================================================
 * config.c */

/* ---- the settings of a run (config.c, top floor) */
/* Tessera's policy of that name, NULL for StarPU's or none. */
struct starpu_sched_policy *tsr__own_policy(const char *name);
/* What tsr_init starts with: cfg (or tsr_config_init's) under STARPU_*, TSR_* and the flags, every
 * switch checked against its rule, the policy known; TSR_EINVAL naming the switch otherwise. */
int tsr__config_resolve(const tsr_config_t *cfg, tsr_config_t *c);
/* Once StarPU runs: a warning (once per process) where it started fewer workers than c asked. */
void tsr__config_warn(const tsr_config_t *c);

#endif
