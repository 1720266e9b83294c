/** @file tessera.h
 * @brief The whole public API of Tessera, a regions-and-tasks runtime on StarPU.
 *
 * Read it top to bottom: it is grouped by concept, and every call's comment says what it does
 * in its first sentence, then its parameters, the codes it returns and whom it may be called
 * from. It is also the reference manual: Doxygen makes HTML and man pages (section 3, one per
 * function: `man tsr_index_launch`) from these comments; `make doc` builds them and `make install`
 * installs them.
 *
 * Every call that can fail returns #TSR_OK (0) or a negative `TSR_E*` code, and
 * tsr_last_error() then names the object (task, point, region, field, partition, color) and what
 * was wrong. Each call's page lists the codes it returns (`Return values`).
 *
 * @par Threads
 * The thread that calls tsr_init() owns the runtime until tsr_finalize(). Every call that touches
 * runtime state made from another thread returns #TSR_ESTATE naming the call; so does any such
 * call made from inside a task variant (it names the task): a variant cannot wait, launch or map,
 * it returns its value and the host or a later task goes on. Of two threads calling tsr_init() at
 * once, one wins and the other gets #TSR_ESTATE. Pure helpers (tsr_box_*, tsr_type_*, error
 * names and tsr_last_error(), which is per thread) and the tsr_ctx_* calls of a variant are free;
 * queries that return no status (tsr_region_name(), tsr_ncpu_workers()...) are not checked: call
 * them from the owner too. Each call's page says which of these it is (`Threads`).
 *
 * @par Failed tasks
 * A variant fails when it reports an error (a tsr_ctx_* call failed, or it called
 * tsr_ctx_error()). Its results are then poisoned instead of passing for values: its future, every
 * future computed from it, and the data it could write (WRITE, READ_WRITE, REDUCE) make
 * tsr_future_wait() and tsr_map() return #TSR_ETASK with the original message (task, point,
 * region, field); later tasks that read a poisoned future or poisoned data do not run their
 * variant and poison their own results in turn. Data heals where it is replaced: what tsr_fill(),
 * a task that WRITEs and succeeds, or a host #TSR_WRITE mapping replaces is healthy again, and the
 * rest of what the failed task wrote stays poisoned (a region poisoned whole, then written tile
 * by tile, heals with its last tile).
 *
 * @par Handles and memory
 * Handles (tsr_fspace_t, tsr_region_t, tsr_partition_t, tsr_task_t, tsr_future_t) are small
 * values holding an id: copy them freely. A handle stays valid until its destroy call (a
 * subregion until its partition goes, a task until tsr_finalize()); a destroyed handle, or one
 * made before the last tsr_init(), is refused with #TSR_ESTALE, never dereferenced. Tessera copies
 * what it is given (names, requirement arrays, task arguments, boxes, fill values) before the
 * call returns, unless a call's page says otherwise; strings it returns belong to it (each page
 * says how long they stay valid). tsr_finalize() destroys whatever is still alive. */
#ifndef TESSERA_H
#define TESSERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @defgroup tessera_version Version
 * The version of the header a program is compiled against; tsr_version() says which library it
 * runs with.
 * @{ */
/** Major version. 0.3: devices as memory nodes (tsr_task_desc_t.opencl, tsr_accessor_t.offset,
 * tsr_config_t.nopencl). 0.4: the error codes moved away from errno's (#TSR_E_BASE),
 * tsr_env_switches(), tsr_ctx_opencl_launch(); libtessera.so.2. 0.5: command-line flags
 * (tsr_args()), tsr_settings(), tsr_version(), the patch level. */
#define TSR_VERSION_MAJOR 0
/** Minor version (see #TSR_VERSION_MAJOR for what each one brought). */
#define TSR_VERSION_MINOR 5
/** Patch level: fixes that change no interface. */
#define TSR_VERSION_PATCH 0
/** The three as text, "MAJOR.MINOR.PATCH". */
#define TSR_VERSION_STRING "0.5.0"
/** The version of the library the program runs with (which may be newer than its header's).
 * @param major filled with the major version; may be NULL
 * @param minor filled with the minor version; may be NULL
 * @param patch filled with the patch level; may be NULL
 * @return "MAJOR.MINOR.PATCH", a static string (the library's #TSR_VERSION_STRING)
 * @par Threads
 * Any thread, before tsr_init() too. */
const char *tsr_version(int *major, int *minor, int *patch);
/** @} */

/* ------------------------------------------------------------------ errors */
/** @defgroup tessera_errors Errors
 * Status codes, their names and messages, and the detailed message of the last failure.
 *
 * Every call returns #TSR_OK (0) or one of these negative codes; tsr_last_error() then holds a
 * message naming the object (task, region, field, partition, color). The codes lie far below
 * -errno (errno values are under 4096 on Linux), so a Tessera code is never a negative errno, as
 * StarPU returns them: tsr_err_name(-ENOMEM) is "TSR_EUNKNOWN", not #TSR_ENODEV.
 * @{ */
/** The codes start below -TSR_E_BASE, away from every -errno. */
#define TSR_E_BASE 10000
/** The status codes every call returns. */
enum {
	TSR_OK = 0, /**< success */
	/** invalid argument (null pointer, dimension not 1-3, bad size, unknown operator or
	 * path) */
	TSR_EINVAL = -(TSR_E_BASE + 1),
	/** box or color empty, too large to count, of another dimension than, or outside the bounds
	   it must lie in */
	TSR_EBOUNDS = -(TSR_E_BASE + 2),
	/** element type mismatch */
	TSR_ETYPE = -(TSR_E_BASE + 3),
	/** access not covered by the requested privilege */
	TSR_EPRIV = -(TSR_E_BASE + 4),
	/** requirements of one launch interfere (aliased write, conflicting partitions) */
	TSR_EINTERFERE = -(TSR_E_BASE + 5),
	/** handle was destroyed, or never created */
	TSR_ESTALE = -(TSR_E_BASE + 6),
	/** field not in the region, or not requested by the task */
	TSR_ENOFIELD = -(TSR_E_BASE + 7),
	/** allocation failed */
	TSR_ENOMEM = -(TSR_E_BASE + 8),
	/** StarPU refused a call */
	TSR_ESTARPU = -(TSR_E_BASE + 9),
	/** runtime not initialized, or object in a state that forbids the call */
	TSR_ESTATE = -(TSR_E_BASE + 10),
	/** tsr_finalize found live objects (they were destroyed) */
	TSR_ELIVE = -(TSR_E_BASE + 11),
	/** no worker can run the task (a CUDA-only task and no GPU, say) */
	TSR_ENODEV = -(TSR_E_BASE + 12),
	/** object is mapped on the host or still in use */
	TSR_EBUSY = -(TSR_E_BASE + 13),
	/** a task variant reported an error, or a result depends on one that did */
	TSR_ETASK = -(TSR_E_BASE + 14),
	/** several MPI ranks: the ranks made different calls (see "Several ranks") */
	TSR_EDIVERGE = -(TSR_E_BASE + 15),
};

/** The name of a status code: "TSR_EBOUNDS".
 * @param code a status code
 * @return the code's name, or "TSR_EUNKNOWN" for a value that is no Tessera code (a negative
 *         errno, say); a static string
 * @par Threads
 * Any thread, before tsr_init() too. */
const char *tsr_err_name(int code);
/** The one-line meaning of a status code: "box or color out of bounds".
 * @param code a status code
 * @return the code's meaning, or "unknown error code"; a static string
 * @par Threads
 * Any thread, before tsr_init() too. */
const char *tsr_strerror(int code);
/** The detailed message of the last failure in this thread, naming the object and the problem.
 * @return the message ("" if no call of this thread has failed yet); a buffer of this thread's,
 *         overwritten by its next failing call
 * @par Threads
 * Any thread: each keeps its own message. */
const char *tsr_last_error(void);
/** @} */

/* ----------------------------------------------------------------- runtime */
/** @defgroup tessera_runtime Runtime
 * Starting and stopping the runtime, waiting for every task, and what it runs with.
 * @{ */
/** How to start the runtime (tsr_init()); tsr_config_init() fills it with the defaults. */
typedef struct tsr_config {
	/** StarPU policy name ("eager", "lws", "dmda", ...) or Tessera's; NULL: StarPU default */
	const char *sched;
	int ncpu;                  /**< CPU workers; -1: StarPU default */
	int ncuda;                 /**< CUDA workers; -1: StarPU default, 0: none */
	const char *timeline_file; /**< the run's timeline (trace events, Perfetto); NULL: none */
	const char *dag_file;      /**< Graphviz dot of the derived task graph; NULL: none */
	int stats;                 /**< print per-task statistics at finalize */
	int quiet; /**< do not print warnings (live objects at finalize) on stderr */
	/** OpenCL workers; 0 (the default): none, -1: StarPU default. POCL's CPU devices count only
	 * with STARPU_OPENCL_ON_CPUS=1 (StarPU skips them otherwise) */
	int nopencl;
} tsr_config_t;

/** Fill `cfg` with the defaults: every field "StarPU default / off".
 * @param cfg the configuration to fill; NULL is ignored
 * @par Threads
 * Any thread, before tsr_init() too. */
void tsr_config_init(tsr_config_t *cfg);
/** Start the runtime. Each setting comes from, first found first: its command-line flag
 * (tsr_args()), its TSR_ variable (TSR_SCHED, TSR_NCPU, TSR_NCUDA, TSR_NOPENCL, TSR_TIMELINE,
 * TSR_DAG, TSR_STATS and the others of tsr_env_switches()), StarPU's variable for the same setting
 * (STARPU_SCHED, STARPU_NCPU, STARPU_NCUDA, STARPU_NOPENCL), cfg, then the default; StarPU's other
 * STARPU_* variables keep working. Tessera's policies (tsr-locality, tsr-critpath) are reached by
 * every route. Where StarPU starts fewer workers than asked for (more CPU workers than the machine
 * has CPUs, an OpenCL or CUDA device it does not find), a warning on stderr says so and why, once
 * per process (not with tsr_config_t.quiet). The calling thread becomes the host thread, the one
 * every other call must come from.
 * @param cfg the configuration (copied; the strings it points to must stay valid until
 *        tsr_finalize()); NULL: the defaults of tsr_config_init()
 * @retval TSR_OK      the runtime runs
 * @retval TSR_EINVAL  a flag or variable with a value outside its rule (the values column of
 *                     tsr_env_switches(): TSR_STATS=abc, TSR_NCPU=1x; the message names the switch
 *                     and what it takes), an unknown policy or `help` as the policy (the message
 *                     lists every policy), or a timeline/graph file that cannot be created
 * @retval TSR_ENODEV  StarPU found no worker (with OpenCL asked for: POCL's device also needs
 *                     STARPU_OPENCL_ON_CPUS=1, the message says so)
 * @retval TSR_ESTARPU StarPU failed to start
 * @retval TSR_ESTATE  the runtime is already initialized (or being initialized or finalized by
 *                     another thread), or the call comes from a task variant
 * @par Threads
 * Any thread, once at a time: it becomes the host thread. */
int tsr_init(const tsr_config_t *cfg);
/** Take Tessera's own command-line flags out of argv, for every later tsr_init(), where they win
 * over everything else: one flag per switch of tsr_env_switches() (tsr_settings() gives its name):
 * --sched NAME, --ncpu N, --ncuda N, --nopencl N, --home WHERE, --redux, --deps, --coherence,
 * --mpi, --timeline FILE, --dag FILE, --stats, --nice N. A value follows as the next argument or
 * after
 * '=' (--ncpu 2, --ncpu=2); a 0|1 switch's flag alone means 1 (--stats) and takes a value after '='
 * only (--stats=0). Flags start with two dashes; "--" ends them (it stays in argv, with what
 * follows). The rest of argv is the program's, in order. Call it before tsr_init() and before
 * parsing the program's own options.
 * @param argc main's argc: the count left
 * @param argv main's argv (*argc + 1 pointers, argv[*argc] NULL before and after): the flags and
 *             their values leave it
 * @retval TSR_OK     taken (none is an error)
 * @retval TSR_EINVAL a flag with a missing or wrong value (the message names the flag and what it
 *                    takes; argv is then unchanged and no flag of it is kept), or argc or argv
 *                    NULL (only one of them: tsr_args(NULL, NULL) forgets the flags kept so far)
 * @retval TSR_ENOMEM out of memory
 * @retval TSR_ESTATE the runtime runs (flags apply at tsr_init())
 * @par Threads
 * The thread that then calls tsr_init() (not thread-safe). --sched help is accepted here (a
 * program lists tsr_policy_list()'s policies), refused by tsr_init(). */
int tsr_args(int *argc, char **argv);
/** One setting of a run, as tsr_settings() reports it. */
typedef struct tsr_setting {
	const char *name;  /**< the switch: "TSR_NCPU" */
	const char *flag;  /**< its flag: "--ncpu"; NULL for a switch without one (TSR_MPI_NICE) */
	const char *value; /**< as text: "2", "eager"; where nothing sets it, the default's */
	/** where it came from: "--ncpu", "TSR_NCPU", "STARPU_NCPU" (or "STARPU_NCPUS"),
	 * "tsr_config_t" or "default" */
	const char *source;
} tsr_setting_t;
/** What tsr_init(cfg) would use, and where each value comes from: one row per switch, in
 * tsr_env_switches()' order. Checks nothing (tsr_init() does).
 * @param cfg  the configuration tsr_init() would be given; NULL: the defaults
 * @param rows filled with at most max rows; the strings stay valid until the next tsr_settings()
 *             or tsr_args() call, or a change of the environment
 * @param max  room in rows
 * @return how many switches there are (fills at most max), or #TSR_EINVAL for a negative max or
 *         NULL rows with max > 0
 * @par Threads
 * Any thread, before tsr_init() too (not thread-safe). */
int tsr_settings(const tsr_config_t *cfg, tsr_setting_t *rows, int max);
/** Wait for every task, destroy what is still alive, stop StarPU. The runtime is stopped whatever
 * it returns; handles made before it are stale afterwards. TSR_TIMELINE, TSR_DAG and TSR_STATS are
 * written here (a program that exits without it still gets TSR_TIMELINE's and TSR_DAG's files, from
 * an exit handler, with what was recorded by then).
 * @retval TSR_OK       nothing was left alive
 * @retval TSR_ETASK    a task variant reported an error since the last fence (its message; with
 *                      live objects the message names them too)
 * @retval TSR_ELIVE    regions, futures, field spaces or host mappings were still alive: they
 *                      were destroyed (the message names them, and is printed on stderr unless
 *                      tsr_config_t.quiet)
 * @retval TSR_EINVAL   the timeline or graph file could not be written (the runtime is stopped
 *                      anyway)
 * @retval TSR_EDIVERGE several ranks made different calls: the job is ended
 * @retval TSR_ESTATE   not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_finalize(void);
/** Wait for every submitted task. Reports a task variant's error since the last fence (the first
 * one's message; each error is reported by one fence, while its poison stays, see "Failed tasks"
 * at the top of this file).
 * @retval TSR_OK       every task is done and none failed since the last fence
 * @retval TSR_ETASK    a task failed (its message)
 * @retval TSR_EDIVERGE several ranks made different calls
 * @retval TSR_ESTATE   not initialized, not the host thread, or the workers are paused
 *                      (tsr_pause(): the wait would never end)
 * @par Threads
 * Host thread only. */
int tsr_fence(void);
/** Put the workers to sleep until tsr_resume(). For a program that times a baseline of its own in
 * the same process, say: idle StarPU workers poll. Tasks submitted meanwhile wait. Calls
 * that wait (tsr_fence(), tsr_future_wait(), tsr_map()) are refused while paused.
 * @retval TSR_OK     paused
 * @retval TSR_ESTATE already paused, not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_pause(void);
/** Wake the workers tsr_pause() put to sleep.
 * @retval TSR_OK     running again
 * @retval TSR_ESTATE not paused, not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_resume(void);
/** CPU workers running.
 * @return the count; 0 before tsr_init()
 * @par Threads
 * Host thread (not checked). */
int tsr_ncpu_workers(void);
/** CUDA workers running.
 * @return the count; 0 before tsr_init()
 * @par Threads
 * Host thread (not checked). */
int tsr_ncuda_workers(void);
/** OpenCL workers running.
 * @return the count; 0 before tsr_init()
 * @par Threads
 * Host thread (not checked). */
int tsr_nopencl_workers(void);
/** Memory node of a worker (0: host RAM; a device's own memory otherwise).
 * @param worker a StarPU worker id, 0 to tsr_worker_count() - 1
 * @return its memory node; -1 if no such worker (or before tsr_init())
 * @par Threads
 * Host thread (not checked). */
int tsr_worker_node(int worker);
/** The scheduling policy in use.
 * @return its name ("default" if StarPU's has none); NULL before tsr_init(); a static string
 * @par Threads
 * Host thread (not checked). */
const char *tsr_sched_name(void);
/** Who orders the tasks on a region's views. "explicit" (Tessera, from its own per-view state,
 * with explicit StarPU dependences: one process, one memory node, the default there) or
 * "implicit" (StarPU's sequential consistency: GPUs, several ranks, TSR_REDUX=unordered, or
 * TSR_DEPS=implicit).
 * @return "explicit" or "implicit"; NULL before tsr_init(); a static string
 * @par Threads
 * Host thread (not checked). */
const char *tsr_deps_name(void);
/** How a task reaches the views Tessera orders. "direct" (where tsr_deps_name() is "explicit" and
 * the program runs in one process, the default: the task lists no StarPU data, its accessors
 * point at the views' host arrays, where the data always is) or "buffers" (each view is a StarPU
 * buffer of the task: devices, several ranks, TSR_DEPS=implicit, or TSR_TASKDATA=buffers).
 * A task whose data Tessera does not order (futures, private reduction buffers) lists it as
 * buffers either way.
 * @return "direct" or "buffers"; NULL before tsr_init(); a static string
 * @par Threads
 * Host thread (not checked). */
const char *tsr_taskdata_name(void);
/** What a CPU worker with nothing to run does (TSR_IDLE). "spin" (StarPU's own loop), "park"
 * (asleep until a task is pushed: where several ranks share a node's cores, or TSR_IDLE=park),
 * "yield" (StarPU's loop, giving its core away between two tries: one process, the default) or
 * "yield+gate": yield, and the policy's queues, where one lock guards them for all workers
 * (eager, prio, tsr-locality, tsr-critpath), entered through a gate where a thread that finds
 * another inside waits on its CPU instead of asleep in the kernel, whose wake-up costs tens of
 * microseconds where idle cores halt (virtual machines), or "yield+handoff": the gate, and under
 * eager with CPU workers only a slot of one task per worker, where a task made ready goes to an
 * idle worker, or stays with the worker that made it ready, before eager's queue (kept by
 * Tessera, in eager's order).
 * @return one of those; NULL before tsr_init(); a static string
 * @par Threads
 * Host thread (not checked). */
const char *tsr_idle_name(void);
/** @} */

/* ------------------------------------------------------------ index spaces */
/** @defgroup tessera_ispace Index spaces
 * Boxes: the bounds of regions, the colors of partitions, the domains of index launches. Plain
 * values; nothing to create or destroy, and every call here is free of the runtime (any thread,
 * before tsr_init() too).
 * @{ */
/** A dense box of 1..3 dimensions; lo and hi are inclusive. Dimension 0 varies fastest in
 * memory. */
typedef struct tsr_box {
	int dim;       /**< 1 to 3 (0: "no box", as a tsr_launch_t.domain left out) */
	int64_t lo[3]; /**< first point in each dimension; beyond dim: 0 */
	int64_t hi[3]; /**< last point in each dimension (inclusive); beyond dim: 0 */
} tsr_box_t;

/** A 1-D box lo0..hi0.
 * @param lo0 first point
 * @param hi0 last point (inclusive)
 * @return the box */
tsr_box_t tsr_box1(int64_t lo0, int64_t hi0);
/** A 2-D box lo0..hi0 x lo1..hi1.
 * @param lo0 first point in dimension 0 (the fastest in memory)
 * @param hi0 last point in dimension 0 (inclusive)
 * @param lo1 first point in dimension 1
 * @param hi1 last point in dimension 1 (inclusive)
 * @return the box */
tsr_box_t tsr_box2(int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1);
/** A 3-D box lo0..hi0 x lo1..hi1 x lo2..hi2.
 * @param lo0 first point in dimension 0 (the fastest in memory)
 * @param hi0 last point in dimension 0 (inclusive)
 * @param lo1 first point in dimension 1
 * @param hi1 last point in dimension 1 (inclusive)
 * @param lo2 first point in dimension 2
 * @param hi2 last point in dimension 2 (inclusive)
 * @return the box */
tsr_box_t tsr_box3(int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1, int64_t lo2, int64_t hi2);
/** Number of points of a box.
 * @param b the box
 * @return the count: 0 if empty or the dimension is not 1-3, -1 if the count does not fit in
 *         int64_t (a box of 2^63 points or more; every call given such a box refuses it) */
int64_t tsr_box_volume(tsr_box_t b);
/** Whether inner lies in outer.
 * @param outer the enclosing box
 * @param inner the box tested
 * @return 1 if inner is non-empty and lies in outer (same dimension), else 0 */
int tsr_box_contains(tsr_box_t outer, tsr_box_t inner);
/** The intersection of two boxes.
 * @param a   a box
 * @param b   a box of the same dimension
 * @param out the intersection, when non-empty (may be NULL)
 * @return 1 if non-empty, else 0 (also for boxes of different or invalid dimensions) */
int tsr_box_intersect(tsr_box_t a, tsr_box_t b, tsr_box_t *out);
/** The box of one tile, without making a partition. The box of tile `color` when `bounds` is cut
 * into equal tiles over the color box `colors`
 * (the boxes of tsr_partition_tiles(), remainder to the first tiles), without making a partition.
 * @param bounds the box cut into tiles
 * @param colors the color box, of the same dimension
 * @param color  the tile's color (dimension of colors; the rest ignored)
 * @param tile   its box
 * @retval TSR_OK      *tile is the tile's box
 * @retval TSR_EINVAL  color or tile is NULL
 * @retval TSR_EBOUNDS bounds or colors empty, too large or of different dimensions, color outside
 *                     colors, or more colors than points in a dimension */
int tsr_box_tile(tsr_box_t bounds, tsr_box_t colors, const int64_t color[3], tsr_box_t *tile);
/** @} */

/* ------------------------------------------------------------ field spaces */
/** @defgroup tessera_fspace Field spaces
 * Named, typed fields; a region is created over the fields a field space has at that moment.
 * @{ */
/** Element type of a field, a future or a reduction operator. */
typedef enum tsr_type {
	TSR_NONE = 0, /**< no type: a task that returns nothing; "any" where a type is checked */
	TSR_F32,      /**< float */
	TSR_F64,      /**< double */
	TSR_I32,      /**< int32_t */
	TSR_I64,      /**< int64_t */
	TSR_BYTES     /**< raw bytes of a size given with it */
} tsr_type_t;
/** Field id, local to its field space: 0, 1, ... in order of addition. */
typedef int tsr_field_t;
/** Handle of a field space (tsr_fspace_create()). */
typedef struct {
	uint64_t id; /**< opaque; 0 is never a valid id */
} tsr_fspace_t;

/** Create an empty field space.
 * @param fs the new field space
 * @retval TSR_OK     *fs is the field space; destroy it with tsr_fspace_destroy()
 * @retval TSR_EINVAL fs is NULL
 * @retval TSR_ENOMEM out of memory
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_fspace_create(tsr_fspace_t *fs);
/** Add a typed field; bytes is the element size for #TSR_BYTES and ignored otherwise.
 * @param fs    the field space
 * @param name  the field's name, 1 to 63 characters, unique in fs (copied)
 * @param type  #TSR_F32, #TSR_F64, #TSR_I32, #TSR_I64 or #TSR_BYTES
 * @param bytes the element size for #TSR_BYTES
 * @param fid   the new field's id (may be NULL)
 * @retval TSR_OK     added
 * @retval TSR_EINVAL name missing, too long or already in fs; invalid type or zero size
 * @retval TSR_ENOMEM out of memory
 * @retval TSR_ESTALE fs was destroyed
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_fspace_add(tsr_fspace_t fs, const char *name, tsr_type_t type, size_t bytes,
		   tsr_field_t *fid);
/** Destroy a field space; regions created from it keep their fields.
 * @param fs the field space
 * @retval TSR_OK     destroyed
 * @retval TSR_ESTALE fs was destroyed already
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_fspace_destroy(tsr_fspace_t fs);
/** Size of one element of a type.
 * @param type the type
 * @return 4, 8, 4, 8 for f32, f64, i32, i64; 0 for #TSR_NONE and #TSR_BYTES
 * @par Threads
 * Any thread, before tsr_init() too. */
size_t tsr_type_size(tsr_type_t type);
/** Name of a type.
 * @param type the type
 * @return "f64" (and "none", "f32", "i32", "i64", "bytes"; "?" for another value); a static
 *         string
 * @par Threads
 * Any thread, before tsr_init() too. */
const char *tsr_type_name(tsr_type_t type);
/** Most fields one requirement may list (tsr_req_t, tsr_req_info_t). */
#define TSR_MAX_REQ_FIELDS 8
/** @} */

/* ----------------------------------------------------------------- regions */
/** @defgroup tessera_regions Regions
 * A region (or a subregion: same handle type) is index space x field space, one contiguous array
 * per field (struct of arrays), zero-initialised.
 * @{ */
/** Handle of a region or a subregion (tsr_region_create(), tsr_partition_subregion()). */
typedef struct {
	uint64_t id; /**< opaque; 0 is never a valid id */
} tsr_region_t;

/** Create a root region. It is the box `bounds` times the fields fs has at this moment (fs may be
 * destroyed afterwards), every element zero. Where its fields live (host RAM or a device) follows
 * TSR_HOME, read here.
 * @param name   names the region in messages, timelines and graphs (copied); NULL: "region"
 * @param bounds its index space
 * @param fs     its fields
 * @param r      the new region; destroy it with tsr_region_destroy()
 * @retval TSR_OK      *r is the region
 * @retval TSR_EINVAL  r is NULL, fs has no fields, bounds are not 1-3 dimensional, or TSR_HOME
 *                     has a value it does not take
 * @retval TSR_EBOUNDS bounds empty, or too large (for memory, or for StarPU's 32-bit extents)
 * @retval TSR_ENODEV  TSR_HOME=device but no device worker runs
 * @retval TSR_ENOMEM  out of memory
 * @retval TSR_ESTALE  fs was destroyed
 * @retval TSR_ESTATE  not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_region_create(const char *name, tsr_box_t bounds, tsr_fspace_t fs, tsr_region_t *r);
/** Destroy a root region, its partitions and their subregions; waits for the tasks that use it.
 * @param r the root region
 * @retval TSR_OK     destroyed
 * @retval TSR_EINVAL r is a subregion (destroy its partition instead)
 * @retval TSR_EBUSY  one of its fields is mapped on the host (tsr_unmap() first)
 * @retval TSR_ESTALE r was destroyed already
 * @retval TSR_ESTATE not initialized, not the host thread, or the workers are paused
 * @par Threads
 * Host thread only. */
int tsr_region_destroy(tsr_region_t r);
/** The bounds of a region or subregion.
 * @param r      the region
 * @param bounds its bounds, in the root region's coordinates
 * @retval TSR_OK     *bounds is set
 * @retval TSR_EINVAL bounds is NULL
 * @retval TSR_ESTALE r was destroyed
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_region_bounds(tsr_region_t r, tsr_box_t *bounds);
/** The name of a region or subregion.
 * @param r the region
 * @return "grid" or "grid/tiles(1,2)", valid until the region (or the subregion's partition) is
 *         destroyed; NULL if stale
 * @par Threads
 * Host thread (not checked). */
const char *tsr_region_name(tsr_region_t r);
/** @} */

/* -------------------------------------------------------------- partitions */
/** @defgroup tessera_partitions Partitions
 * Cuts of a region into subregions, one per color of a color box: equal tiles, tiles with halos
 * (aliased), or a list of boxes. A subregion is a region: launch on it, map it, partition it
 * again.
 * @{ */
/** Handle of a partition. */
typedef struct {
	uint64_t id; /**< opaque; 0 is never a valid id */
} tsr_partition_t;

/** Equal tiles of a region. Equal tiles of region r over the color box `colors` (same dimension as
 * r); the remainder goes to the first tiles. Disjoint.
 * @param r      the region (or subregion) cut
 * @param colors the color box: one tile per color
 * @param name   names it in subregion names, messages and timelines (copied); NULL: "tiles"
 * @param p      the new partition; its lifetime is r's (or tsr_partition_destroy())
 * @retval TSR_OK      *p is the partition
 * @retval TSR_EINVAL  p is NULL, or colors are not 1-3 dimensional
 * @retval TSR_EBOUNDS colors empty, of another dimension than r, more than INT_MAX colors, or
 *                     more colors than points in a dimension
 * @retval TSR_ENOMEM  out of memory
 * @retval TSR_ESTALE  r was destroyed
 * @retval TSR_ESTATE  not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_partition_tiles(tsr_region_t r, tsr_box_t colors, const char *name, tsr_partition_t *p);
/** Tiles with halos (aliased). Tiles of the box `domain` (inside r) extended by halo[d] points on
 * each side in dimension d, clipped to r's bounds. Aliased when a halo is non-zero; halo NULL means
 * none.
 * @param r      the region (or subregion) cut
 * @param domain the box cut into tiles (r's bounds for tiles of the whole region)
 * @param colors the color box: one tile per color
 * @param halo   points added on each side per dimension (>= 0), or NULL
 * @param name   names it (copied); NULL: "tiles"
 * @param p      the new partition
 * @retval TSR_OK      *p is the partition
 * @retval TSR_EINVAL  p is NULL, colors not 1-3 dimensional, or a negative halo
 * @retval TSR_EBOUNDS domain not inside r; colors empty, of another dimension, too many, or more
 *                     than the points of domain in a dimension
 * @retval TSR_ENOMEM  out of memory
 * @retval TSR_ESTALE  r was destroyed
 * @retval TSR_ESTATE  not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_partition_tiles_halo(tsr_region_t r, tsr_box_t domain, tsr_box_t colors,
			     const int64_t halo[3], const char *name, tsr_partition_t *p);
/** One subregion per box, colors 0..nboxes-1 (1-D); disjoint unless two boxes overlap.
 * @param r      the region (or subregion) cut
 * @param nboxes how many boxes, > 0
 * @param boxes  the boxes, each non-empty and inside r (copied)
 * @param name   names it (copied); NULL: "boxes"
 * @param p      the new partition
 * @retval TSR_OK      *p is the partition
 * @retval TSR_EINVAL  nboxes <= 0, or boxes or p NULL
 * @retval TSR_EBOUNDS a box is empty or not inside r
 * @retval TSR_ENOMEM  out of memory
 * @retval TSR_ESTALE  r was destroyed
 * @retval TSR_ESTATE  not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_partition_boxes(tsr_region_t r, int nboxes, const tsr_box_t *boxes, const char *name,
			tsr_partition_t *p);
/** The subregion of one color. The subregion of color `color` (dimension of the color space),
 * usable as a region: launch on it, map it, partition it again. Its lifetime is the partition's.
 * @param p     the partition
 * @param color the color (the color box's dimension; the rest ignored)
 * @param sub   the subregion (not to be destroyed on its own)
 * @retval TSR_OK      *sub is the subregion
 * @retval TSR_EINVAL  color or sub is NULL
 * @retval TSR_EBOUNDS color outside the partition's colors
 * @retval TSR_ESTALE  p was destroyed
 * @retval TSR_ESTATE  not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_partition_subregion(tsr_partition_t p, const int64_t color[3], tsr_region_t *sub);
/** The color box of a partition.
 * @param p      the partition
 * @param colors its color box
 * @retval TSR_OK     *colors is set
 * @retval TSR_EINVAL colors is NULL
 * @retval TSR_ESTALE p was destroyed
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_partition_colors(tsr_partition_t p, tsr_box_t *colors);
/** Whether a partition's subregions are disjoint.
 * @param p the partition
 * @return 1 (disjoint), 0 (aliased), or a negative error: #TSR_ESTALE (p destroyed),
 *         #TSR_ESTATE (not initialized, or not the host thread)
 * @par Threads
 * Host thread only. */
int tsr_partition_is_disjoint(tsr_partition_t p);
/** Destroy a partition and its subregions; also destroys partitions of its subregions. Tasks
 * still using them are not disturbed.
 * @param p the partition
 * @retval TSR_OK     destroyed
 * @retval TSR_EBUSY  a field of the region is mapped on the host
 * @retval TSR_ESTALE p was destroyed already (or its region was)
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_partition_destroy(tsr_partition_t p);
/** @} */

/* -------------------------------------------------------------- privileges */
/** @defgroup tessera_privileges Privileges and reductions
 * What a task may do with the data of a requirement, and the reduction operators.
 *
 * A reduction operator is a struct, not an int, so that an operator and a privilege cannot be
 * swapped: TSR_REDUCE(TSR_MAX) passed where an operator is expected, or #TSR_MAX where a
 * privilege is expected, is a compile error. (One hole C leaves: `.redop = TSR_REDUCE(TSR_MAX)`
 * in a designated initialiser fills .redop.id by brace elision with only a -Wmissing-braces
 * warning (-Wall); the launch then refuses it, saying to write .redop = TSR_MAX.) Compare
 * operators by id: op.id == TSR_MAX.id.
 *
 * The built-in operators work on f32, f64, i32 and i64 elements, and fold the same way on CPUs,
 * CUDA and OpenCL devices:
 *
 * | operator | identity (what a private buffer or a return slot starts at) | fold `acc op v` |
 * | --- | --- | --- |
 * | #TSR_SUM | 0 | `acc + v` |
 * | #TSR_PROD | 1 | `acc * v` |
 * | #TSR_MIN | +INFINITY (f32, f64), INT32_MAX, INT64_MAX | `v < acc ? v : acc` |
 * | #TSR_MAX | -INFINITY (f32, f64), INT32_MIN, INT64_MIN | `v > acc ? v : acc` |
 *
 * (so MIN and MAX skip a NaN value, and keep a NaN the field already holds).
 *
 * Reductions (REDUCE privileges and the reduction of an index launch's returns) give the same bits
 * whatever the workers, the policy or the timing: they are folded in COLOR ORDER. A launch's
 * color order is the order of its domain's points linearised with dimension 0 fastest (point
 * (x,y,z) of domain lo..hi has index (x-lo0) + (y-lo1)*n0 + (z-lo2)*n0*n1, n = extents); a
 * single launch has one point. Each point reduces into private storage that starts at the
 * operator's identity (its partial value); after the launch, for each element, the partial
 * values are folded into the field one after another in color order (within a point,
 * requirements then fields in the order given):  x = (((x op p0) op p1) ...). An index launch's
 * result is ((identity op r0) op r1) ... over the points' returns, in color order. Launches fold
 * in program order. TSR_REDUX=unordered (read at tsr_init) gives StarPU's REDUX instead, folded
 * in arrival order (results may then differ in the last bits from run to run).
 * @{ */
/** A reduction operator: #TSR_SUM, #TSR_PROD, #TSR_MIN, #TSR_MAX or one of
 * tsr_redop_register(). */
typedef struct tsr_redop {
	int id; /**< the operator's number; compare operators by it */
} tsr_redop_t;
#ifdef __cplusplus
#define TSR_REDOP_ID(n) (tsr_redop_t{(n)})
#else
/** The operator of number n (a tsr_redop_t value). */
#define TSR_REDOP_ID(n) ((tsr_redop_t){(n)})
#endif
/** no operator (a launch that asks for no reduced result) */
#define TSR_REDOP_NONE TSR_REDOP_ID(0)
/** sum; identity 0 */
#define TSR_SUM TSR_REDOP_ID(1)
/** product; identity 1 */
#define TSR_PROD TSR_REDOP_ID(2)
/** minimum; identity +INFINITY for f32 and f64, INT32_MAX and INT64_MAX for i32 and i64 */
#define TSR_MIN TSR_REDOP_ID(3)
/** maximum; identity -INFINITY for f32 and f64, INT32_MIN and INT64_MIN for i32 and i64 */
#define TSR_MAX TSR_REDOP_ID(4)
#define TSR_REDOP_USER 16 /**< id of the first operator returned by tsr_redop_register */

/** A privilege: #TSR_READ, #TSR_WRITE_DISCARD (#TSR_WRITE), #TSR_READ_WRITE or TSR_REDUCE(op). */
typedef int tsr_privilege_t;
/** The privileges. */
enum {
	TSR_READ = 1, /**< read only */
	/** Write only, and every element: the old contents are DISCARDED (Legion's WRITE_DISCARD):
	 * the task may not see them, and elements it does not write are undefined afterwards. To
	 * update some elements and keep the others, ask for TSR_READ_WRITE. */
	TSR_WRITE_DISCARD = 2,
	TSR_WRITE = TSR_WRITE_DISCARD, /**< the same privilege, shorter name */
	TSR_READ_WRITE = 3,            /**< read and write; elements not written keep their value */
	TSR_REDUCE_BASE = 8            /**< use TSR_REDUCE(op) */
};
/** The privilege "fold values into the elements with operator op".
 * @param op the operator (a tsr_redop_t)
 * @return the privilege REDUCE(op)
 * @par Threads
 * Any thread. */
static inline tsr_privilege_t tsr_reduce(tsr_redop_t op)
{
	/* unsigned shift: a negative id (refused by the launch) must not be undefined behaviour
	 * here */
	return (tsr_privilege_t)(TSR_REDUCE_BASE | ((unsigned)op.id << 8));
}
/** The privilege REDUCE(op): tsr_reduce(op). */
#define TSR_REDUCE(op) tsr_reduce(op)
/** 1 if privilege p is a REDUCE privilege. */
#define TSR_PRIV_IS_REDUCE(p) (((p)&TSR_REDUCE_BASE) != 0)
#define TSR_PRIV_REDOP(p) TSR_REDOP_ID((p) >> 8) /**< the operator of a REDUCE privilege */

/** Identity of a registered operator: sets the element at `elem` to the identity. */
typedef void (*tsr_redop_identity_fn)(void *elem);
/** Fold of a registered operator: *acc = *acc op *val. */
typedef void (*tsr_redop_fold_fn)(void *acc, const void *val);
/** Register a reduction operator. On elements of `type` (size bytes for #TSR_BYTES): identity
 * fills one element, fold does *acc = *acc op *val. Both are CPU code: a point task that REDUCEs
 * with it, or whose return value it reduces, runs on a CPU worker (its CPU variant). Such a launch
 * of a task without a CPU variant, or where no CPU worker runs, or whose mapper sends a point to a
 * device, is refused with #TSR_ENODEV naming the task and the operator. The identity must be one
 * (identity op v == v); with TSR_REDUX=unordered the operator must also be associative and
 * commutative. Operators last until tsr_finalize() (register them again after the next
 * tsr_init()).
 * @param name     1 to 63 characters, unique: messages print REDUCE(name) (copied)
 * @param type     the element type
 * @param bytes    the element size for #TSR_BYTES, ignored otherwise
 * @param identity the identity function, called from worker threads
 * @param fold     the fold function, called from worker threads
 * @param op       the new operator
 * @retval TSR_OK     *op is the operator
 * @retval TSR_EINVAL name missing, too long or already registered; identity, fold or op NULL;
 *                    invalid type or zero size
 * @retval TSR_ENOMEM 16 operators are registered already
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_redop_register(const char *name, tsr_type_t type, size_t bytes,
		       tsr_redop_identity_fn identity, tsr_redop_fold_fn fold, tsr_redop_t *op);
/** @} */

/* ------------------------------------------------------------------- tasks */
/** @defgroup tessera_tasks Tasks
 * A task is a name and its variants: the code that runs on a CPU, a CUDA or an OpenCL worker.
 * A variant runs on a StarPU worker thread, with a context (tsr_ctx_t) that gives it its data.
 * @{ */
/** What a running variant sees: its requirements' data, its point, its return slot (opaque). */
typedef struct tsr_ctx tsr_ctx_t;
/** A task variant. It is called on a worker with its context and a copy of the launch's arguments
 * (`arglen` bytes, owned by Tessera until the variant returns). */
typedef void (*tsr_variant_fn)(tsr_ctx_t *ctx, const void *args, size_t arglen);
/** Handle of a registered task; valid until tsr_finalize(). */
typedef struct {
	uint64_t id; /**< opaque; 0 is never a valid id */
} tsr_task_t;

/** What tsr_task_register() makes a task of. */
typedef struct tsr_task_desc {
	const char *name;    /**< names the task in errors, timelines, perf models */
	tsr_variant_fn cpu;  /**< CPU variant (may be NULL if a device variant is set) */
	tsr_variant_fn cuda; /**< CUDA variant, called on the worker's stream; NULL: none */
	tsr_type_t ret_type; /**< type of the returned value; TSR_NONE: returns nothing */
	size_t ret_bytes;    /**< size for TSR_BYTES */
	/** OpenCL variant: enqueues kernels (tsr_ctx_opencl_kernel) on tsr_ctx_opencl_queue;
	 * Tessera waits for the queue when it returns */
	tsr_variant_fn opencl;
} tsr_task_desc_t;

/** Register a task: its name, its variants and the type of the value it returns. StarPU keeps a
 * history-based performance model named after it.
 * @param desc the task (copied, name included); the name has 1 to 63 characters
 * @param task the new task, valid until tsr_finalize()
 * @retval TSR_OK     *task is the task
 * @retval TSR_EINVAL desc or task NULL, name missing or too long, no variant at all, or an invalid
 *                    return type or size
 * @retval TSR_ENOMEM out of memory
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_task_register(const tsr_task_desc_t *desc, tsr_task_t *task);
/** @} */

/** @defgroup tessera_variant Inside a variant
 * What a running variant asks its context: accessors for its requirements' fields, the
 * requirements themselves, its point, its return value, and how to fail.
 *
 * These calls take the ctx the variant received and may be called only from inside that variant
 * (on its worker thread). A call that fails also fails the task with its message (the task's
 * results are poisoned, see "Failed tasks" at the top of this file): a variant that gets an error
 * simply returns.
 * @{ */
/** Typed view of one field of one requirement. ptr is the address of the element at lo (a
 * device address in a CUDA variant); element (x,y,z) is at ptr + (x-lo0) + (y-lo1)*stride[1] +
 * (z-lo2)*stride[2]. In an OpenCL variant ptr is the field's cl_mem and offset the byte offset of
 * the element at lo in it (a kernel takes both); offset is 0 everywhere else. */
typedef struct tsr_accessor {
	void *ptr;            /**< element at lo (a host or CUDA address; OpenCL: the cl_mem) */
	size_t offset;        /**< OpenCL: byte offset of the element at lo in the cl_mem; else 0 */
	int dim;              /**< dimension, 1 to 3 */
	int64_t lo[3];        /**< first point, in the region's global coordinates */
	int64_t hi[3];        /**< last point (inclusive), in the region's global coordinates */
	size_t stride[3];     /**< in elements; stride[0] == 1 */
	tsr_type_t type;      /**< element type */
	size_t elem_size;     /**< element size in bytes */
	tsr_privilege_t priv; /**< the privilege it was requested (or mapped) with */
	/* Whose view this is, for the messages of bounds checks: */
	tsr_ctx_t *ctx;    /**< the task's context; NULL for a host mapping (tsr_map) */
	int req;           /**< requirement index; -1 for a host mapping */
	tsr_field_t field; /**< field id */
	/** host mappings: id of the region (or subregion) mapped; 0 in a task */
	uint64_t region;
} tsr_accessor_t;

/* TSR_AT1/2/3(acc, T, x[, y[, z]]): the element at (x, y, z) of an accessor, checked against its
 * bounds in a -DTSR_CHECK_BOUNDS build (this first branch: see TSR_AT1 for what the check does),
 * plain indexing otherwise (the second). */
#if defined(TSR_CHECK_BOUNDS) && !defined(__CUDA_ARCH__)
/** Out-of-line half of the check: reports the index and returns a zeroed scratch element. Called
 * by TSR_AT1/2/3 in a checked build; not for direct use.
 * @param a         the accessor
 * @param elem_size the size of the element accessed
 * @param dim       how many of x, y, z are indices
 * @param x         index in dimension 0
 * @param y         index in dimension 1
 * @param z         index in dimension 2
 * @return a zeroed scratch element (up to 4 KiB) of the calling thread
 * @par Threads
 * Any thread (a variant's or the host's). */
void *tsr_accessor_out_of_bounds(const tsr_accessor_t *a, size_t elem_size, int dim, int64_t x,
				 int64_t y, int64_t z);
/** The checked address of element (x, y, z) of an accessor (TSR_AT1/2/3 in a checked build).
 * @param a         the accessor
 * @param elem_size the size of the element accessed
 * @param dim       how many of x, y, z are indices
 * @param x         index in dimension 0
 * @param y         index in dimension 1
 * @param z         index in dimension 2
 * @return the element's address, or a scratch element when an index is out of bounds
 * @par Threads
 * Any thread. */
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
/** The element at global coordinate x of a 1-D accessor, as an lvalue of type T.
 *
 * TSR_AT1/2/3(acc, T, x[, y[, z]]): the element at global coordinates (x, y, z), as an lvalue of
 * type T. Built with -DTSR_CHECK_BOUNDS (or in a Tessera configured with --enable-bounds-check,
 * whose tessera.pc adds it), every index is checked against the accessor's bounds: an index
 * outside them fails the task with #TSR_ETASK (tsr_fence() returns it) and a message naming the
 * task, point, requirement, region, field and index (once per point task), and the access reads
 * or writes a zeroed scratch element (up to 4 KiB) instead of memory that is not the task's. A
 * host mapping (tsr_map()) reports through tsr_last_error() and stderr. Inside CUDA device code
 * the macros never check (a kernel cannot report): run the CPU variant (TSR_NCUDA=0) to check a
 * kernel's indexing. Without -DTSR_CHECK_BOUNDS they index ptr with the strides, unchecked.
 * @param a pointer to the accessor
 * @param T the element's C type
 * @param x the index */
#define TSR_AT1(a, T, x) (*(T *)tsr_accessor_at((a), sizeof(T), 1, (x), 0, 0))
/** The element at global coordinates (x, y) of a 2-D accessor, as an lvalue of type T (checked as
 * TSR_AT1 says).
 * @param a pointer to the accessor
 * @param T the element's C type
 * @param x the index in dimension 0
 * @param y the index in dimension 1 */
#define TSR_AT2(a, T, x, y) (*(T *)tsr_accessor_at((a), sizeof(T), 2, (x), (y), 0))
/** The element at global coordinates (x, y, z) of a 3-D accessor, as an lvalue of type T (checked
 * as TSR_AT1 says).
 * @param a pointer to the accessor
 * @param T the element's C type
 * @param x the index in dimension 0
 * @param y the index in dimension 1
 * @param z the index in dimension 2 */
#define TSR_AT3(a, T, x, y, z) (*(T *)tsr_accessor_at((a), sizeof(T), 3, (x), (y), (z)))
#else
#define TSR_AT1(a, T, x) (((T *)(a)->ptr)[(x) - (a)->lo[0]])
#define TSR_AT2(a, T, x, y) \
	(((T *)(a)->ptr)[((x) - (a)->lo[0]) + ((y) - (a)->lo[1]) * (int64_t)(a)->stride[1]])
#define TSR_AT3(a, T, x, y, z)                                                               \
	(((T *)(a)->ptr)[((x) - (a)->lo[0]) + ((y) - (a)->lo[1]) * (int64_t)(a)->stride[1] + \
			 ((z) - (a)->lo[2]) * (int64_t)(a)->stride[2]])
#endif

/** Accessor for `field` of requirement `req`. `type` must match the field's type (#TSR_NONE:
 * any); `want` (#TSR_READ, #TSR_WRITE_DISCARD, #TSR_READ_WRITE or TSR_REDUCE(op)) must be covered
 * by the requested privilege. A REDUCE accessor points at a private buffer holding the operator's
 * identity: fold into it.
 * @param ctx   the variant's context
 * @param req   the requirement's index in the launch, from 0
 * @param field the field id (one the requirement listed)
 * @param type  the field's type, or #TSR_NONE for any
 * @param want  the access the variant makes
 * @param acc   the accessor, valid until the variant returns
 * @retval TSR_OK      *acc is set
 * @retval TSR_EINVAL  ctx or acc NULL, no requirement `req`, or `req` is a future
 * @retval TSR_ENOFIELD the requirement did not list `field`
 * @retval TSR_ETYPE   the field holds another type
 * @retval TSR_EPRIV   `want` is not covered by the requested privilege
 * @par Threads
 * Inside the variant only. On failure the task fails with the message. */
int tsr_ctx_accessor(tsr_ctx_t *ctx, int req, tsr_field_t field, tsr_type_t type,
		     tsr_privilege_t want, tsr_accessor_t *acc);
/** What a requirement is, as a variant sees it (tsr_ctx_req()). A variant learns its fields
 * here instead of from its arguments. The names are the region's and partition's own strings: do
 * not destroy a region while tasks that ask for them may still run. */
typedef struct tsr_req_info {
	int kind;             /**< TSR_REQ_REGION, TSR_REQ_PARTITION or TSR_REQ_FUTURE */
	tsr_privilege_t priv; /**< the privilege requested */
	/** operator of a REDUCE privilege; TSR_REDOP_NONE otherwise */
	tsr_redop_t redop;
	const char *region; /**< (sub)region this point sees, "grid/tiles(1,2)"; NULL: future */
	/** partition the launch named; NULL for a region or a future */
	const char *partition;
	tsr_box_t bounds; /**< bounds of that (sub)region; dim 0 for a future */
	int nfields;      /**< how many fields the requirement listed */
	/** field ids, in the order of the requirement */
	tsr_field_t fields[TSR_MAX_REQ_FIELDS];
	const char *field_names[TSR_MAX_REQ_FIELDS]; /**< the fields' names, in the same order */
	tsr_type_t field_types[TSR_MAX_REQ_FIELDS];  /**< the fields' types, in the same order */
} tsr_req_info_t;
/** What requirement `req` of the running point is. Kind, privilege, operator, region and
 * partition names, bounds, and the fields' ids, names and types.
 * @param ctx  the variant's context
 * @param req  the requirement's index, from 0
 * @param info what it is; its strings are the region's and partition's own
 * @retval TSR_OK     *info is set
 * @retval TSR_EINVAL ctx or info NULL, or no requirement `req` (which fails the task)
 * @par Threads
 * Inside the variant only. */
int tsr_ctx_req(const tsr_ctx_t *ctx, int req, tsr_req_info_t *info);
/** Accessor for the k-th field of requirement `req`. The k-th (0-based, in the order the launch
 * listed them): tsr_ctx_accessor() without knowing the field id.
 * @param ctx  the variant's context
 * @param req  the requirement's index, from 0
 * @param k    the field's position in the requirement, from 0
 * @param type the field's type, or #TSR_NONE for any
 * @param want the access the variant makes
 * @param acc  the accessor, valid until the variant returns
 * @retval TSR_OK       *acc is set
 * @retval TSR_EINVAL   ctx or acc NULL, no requirement `req`, or `req` is a future
 * @retval TSR_ENOFIELD the requirement has no k-th field
 * @retval TSR_ETYPE    the field holds another type
 * @retval TSR_EPRIV    `want` is not covered by the requested privilege
 * @par Threads
 * Inside the variant only. On failure the task fails with the message. */
int tsr_ctx_field(tsr_ctx_t *ctx, int req, int k, tsr_type_t type, tsr_privilege_t want,
		  tsr_accessor_t *acc);
/** Value of the future passed as requirement `req`.
 * @param ctx the variant's context
 * @param req the requirement's index, from 0 (a tsr_req_future())
 * @return the value: its address in a CPU variant, a device address in a CUDA variant, a cl_mem
 *         holding it at offset 0 in an OpenCL variant; NULL on error (`req` is not a future, or
 *         ctx is NULL), which fails the task
 * @par Threads
 * Inside the variant only. */
const void *tsr_ctx_future(tsr_ctx_t *ctx, int req);
/** The launch point of the running task.
 * @param ctx   the variant's context
 * @param point its coordinates (may be NULL); a single launch's point is 0
 * @return its dimension (0: single launch, or ctx NULL)
 * @par Threads
 * Inside the variant only. */
int tsr_ctx_point(const tsr_ctx_t *ctx, int64_t point[3]);
/** Number of requirements of the launch.
 * @param ctx the variant's context
 * @return the count (0 if ctx is NULL)
 * @par Threads
 * Inside the variant only. */
int tsr_ctx_nreqs(const tsr_ctx_t *ctx);
/** Name of the running task.
 * @param ctx the variant's context
 * @return the name given to tsr_task_register(), valid until tsr_finalize(); NULL if ctx is NULL
 * @par Threads
 * Inside the variant only. */
const char *tsr_ctx_task_name(const tsr_ctx_t *ctx);
/** The StarPU worker running the variant.
 * @param ctx the variant's context
 * @return the worker id (see tsr_worker_kind(), tsr_worker_node()); -1 outside a worker
 * @par Threads
 * Inside the variant only. */
int tsr_ctx_worker(const tsr_ctx_t *ctx);
/** @} */

/** @defgroup tessera_devices Devices: CUDA and OpenCL variants
 * What a device variant gets: the worker's stream or queue, OpenCL programs and kernels, and how
 * data and values look on a device.
 *
 * A device variant runs on its worker's thread (on the host) and enqueues work; it does not wait.
 * Tessera (StarPU) waits for the worker's CUDA stream or OpenCL queue when the variant returns.
 * Its accessors (tsr_ctx_accessor(), tsr_ctx_field()) point into device memory:
 * - CUDA: tsr_accessor_t.ptr is a device address of the element at lo; index it with the strides
 *   in a kernel (TSR_AT1/2/3 work in device code, unchecked).
 * - OpenCL: tsr_accessor_t.ptr is the field's cl_mem and tsr_accessor_t.offset the BYTE offset of
 *   the element at lo in it (OpenCL has no device pointers): pass both to the kernel, which takes
 *   `global uchar *base, ulong offset` and reads `((global double *)(base + offset))[i]` (strides
 *   in elements, as on the host).
 *
 * A value to return goes into tsr_ctx_return_slot(): a device address (CUDA) or a cl_mem of its
 * own holding the value at offset 0 (OpenCL: pass it with TSR_KARG(slot) to a kernel parameter
 * `global double *ret`, of the task's return type). It starts at 0 in a single launch, and at
 * the operator's identity in an index launch with a reduction (#TSR_SUM: 0, #TSR_MAX: -INFINITY;
 * see "Privileges and reductions"): the kernel FOLDS its value into it (ret[0] += s for a sum;
 * with several work-groups or blocks, atomically or through a second kernel), never overwrites
 * it. A future given as a requirement arrives the same way (tsr_ctx_future()).
 *
 * OpenCL C has `double` only on devices with the cl_khr_fp64 extension (POCL's CPU device and
 * most GPUs have it): a kernel on f64 data starts with
 * `#pragma OPENCL EXTENSION cl_khr_fp64 : enable`; on a device without it such a program does not
 * build (tsr_opencl_program() returns #TSR_EINVAL with the compiler's log), and Tessera's own f64
 * reductions fail the task that needs them. f32, i32 and i64 need no extension.
 * @{ */
/** cudaStream_t of a CUDA variant: launch its kernels there, asynchronously.
 * @param ctx the variant's context
 * @return the worker's stream; NULL elsewhere (a CPU or OpenCL variant, ctx NULL, or a StarPU
 *         without CUDA)
 * @par Threads
 * Inside the variant only. */
void *tsr_ctx_cuda_stream(const tsr_ctx_t *ctx);
/** cl_command_queue of an OpenCL variant: enqueue its kernels there, without waiting.
 * @param ctx the variant's context
 * @return the worker's queue; NULL elsewhere
 * @par Threads
 * Inside the variant only (on its own thread, while it runs). */
void *tsr_ctx_opencl_queue(const tsr_ctx_t *ctx);
/** Build an OpenCL program for every OpenCL device. Builds `source` (OpenCL C) with `options` (plus
 * -cl-kernel-arg-info, for the launch's checks) for every OpenCL device, once per run (after
 * tsr_init(); nothing is built without OpenCL workers).
 *
 * The name names the program in messages and loads once per run (Tessera's own is "tessera");
 * kernels are found by their own names across every program loaded in this run, and a kernel
 * belongs to one program: a program that defines a kernel another loaded program defines is
 * refused. Kernel names starting with "tsr_" are reserved for Tessera's own kernels; kernel names
 * may be of any length. At most 32 programs per run; they last until tsr_finalize() (load them
 * again after the next tsr_init()). Kernels that must give the CPU's bits keep
 * "#pragma OPENCL FP_CONTRACT OFF" (OpenCL may otherwise fuse a * b + c); kernels on double need
 * cl_khr_fp64 (see "Devices").
 * @param name    names the program in messages, 1 to 63 characters
 * @param source  the OpenCL C source (not kept: it is built before the call returns)
 * @param options clBuildProgram's options ("-D N=4", ...); NULL: none
 * @retval TSR_OK     built for every OpenCL device (or there is none)
 * @retval TSR_EINVAL naming the program: it does not build (the message holds the compiler's log),
 *                    name missing, too long or already loaded, source NULL, 32 programs are
 *                    loaded already, or it defines a kernel another loaded program defines or
 *                    whose name starts with "tsr_"
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_opencl_program(const char *name, const char *source, const char *options);
/** The cl_kernel named `kernel` for the running worker. It is made once per worker from the
 * program loaded (tsr_opencl_program()) that defines it: set its arguments and enqueue it on
 * tsr_ctx_opencl_queue(), or let tsr_ctx_opencl_launch() do both (checked). The worker's tasks
 * share that cl_kernel: when a task first gets it, its buffer arguments are cleared (NULL), so
 * that no other task's buffer is left in it; set every argument before enqueueing.
 * @param ctx    the variant's context
 * @param kernel the kernel's name in the OpenCL source
 * @return the kernel, owned by the worker (do not release it); NULL, and the task fails naming
 *         the kernel, if no program loaded defines it or it names one of Tessera's; from a CPU or
 *         CUDA variant NULL, and the task fails naming itself; on the host, or on a thread the
 *         variant started, NULL with tsr_last_error() saying why, and no fence is affected
 * @par Threads
 * Inside the OpenCL variant only: each worker has its own kernels, so no two threads set one's
 * arguments at once. */
void *tsr_ctx_opencl_kernel(tsr_ctx_t *ctx, const char *kernel);

/** One argument of an OpenCL kernel. By position: its size and address, as clSetKernelArg takes
 * them (an accessor's cl_mem is `ptr`; a NULL value with a size reserves local memory).
 * TSR_KARG(x), in an initializer, makes one of a variable. */
typedef struct tsr_kernel_arg {
	size_t size;       /**< bytes of the argument (of local memory when value is NULL) */
	const void *value; /**< address of the argument's value; NULL: local memory */
} tsr_kernel_arg_t;
/** The tsr_kernel_arg_t of variable x, in an initializer: {sizeof(x), &(x)}. Pass variables of
 * the kernel parameter's OpenCL type: cl_mem for a buffer, cl_ulong for ulong, cl_int for int. */
/* The formatter reads a braced initializer in a macro as a block: kept as written. */
/* clang-format off */
#define TSR_KARG(x) {sizeof(x), &(x)}
/* clang-format on */

/** Set an OpenCL kernel's arguments and enqueue it. In an OpenCL variant: sets the arguments of
 * `kernel` (tsr_ctx_opencl_kernel()'s) and enqueues it on the worker's queue over `dims` (1 to 3)
 * dimensions of global[] work-items, in work-groups of local[] (NULL: the implementation chooses).
 *
 * Checked first, so that neither another task's arguments nor OpenCL's own failures (an abort
 * inside POCL) can follow: nargs must be the kernel's argument count (every argument is set at
 * each launch), each argument of the kind the kernel declares where the platform says (a global or
 * constant buffer: a non-null cl_mem; local memory: a size and a NULL value; a value: its address
 * and size), no global size 0, at most 2^48 work-items in all (a larger count is a size computed
 * wrong), work-groups of 1 or more work-items within the device's and the kernel's limits that
 * divide the global sizes (OpenCL C 1.x, and devices without partial work-groups): round global[]
 * up to a multiple of local[], and let the kernel ignore the work-items past the end of its data.
 * @param ctx    the variant's context (not read on the host)
 * @param kernel the kernel's name
 * @param args   its arguments, in order (copied by OpenCL before the call returns)
 * @param nargs  how many: the kernel's argument count
 * @param dims   1 to 3
 * @param global work-items per dimension
 * @param local  work-group size per dimension, or NULL
 * @retval TSR_OK     enqueued
 * @retval TSR_ETASK  the task failed with a message that names it, its point, the kernel and what
 *                    went wrong: a kernel no program defines, the counts, the argument, the sizes,
 *                    or the enqueue's OpenCL error (or dims, global or args invalid)
 * @retval TSR_ESTATE called on the host or on a thread the variant started: no task fails, no
 *                    fence is affected
 * @par Threads
 * Inside the OpenCL variant only. */
int tsr_ctx_opencl_launch(tsr_ctx_t *ctx, const char *kernel, const tsr_kernel_arg_t *args,
			  int nargs, int dims, const size_t *global, const size_t *local);
/** @} */

/** @addtogroup tessera_variant
 * @{ */
/** Slot of the task's return value. A device address in a CUDA variant, a cl_mem in an OpenCL one.
 * For an index launch with a reduction, it holds the operator's identity on entry: fold the value
 * into it.
 * @param ctx the variant's context
 * @return the slot: its host address in a CPU variant, a device address (CUDA), a cl_mem with the
 *         value at offset 0 (OpenCL); NULL when the launch asked for no result (write nothing
 *         then) or ctx is NULL
 * @par Threads
 * Inside the variant only. */
void *tsr_ctx_return_slot(tsr_ctx_t *ctx);
/** CPU variants: return a value (folded into the launch's reduction where there is one). Device
 * variants write tsr_ctx_return_slot().
 * @param ctx   the variant's context
 * @param value the value, of the task's return type (copied)
 * @retval TSR_OK     returned (or nobody asked for it)
 * @retval TSR_EINVAL value or ctx NULL, the task returns nothing (ret_type #TSR_NONE), or the
 *                    variant is not a CPU variant; the task fails
 * @par Threads
 * Inside the CPU variant only. */
int tsr_ctx_return(tsr_ctx_t *ctx, const void *value);
/** Report an error from inside a variant. The task fails (its results are poisoned, see "Failed
 * tasks" at the top of this file) and tsr_fence()/tsr_finalize() return #TSR_ETASK with this
 * message. ctx NULL inside a variant means the running task; on the host (no task) the call only
 * sets tsr_last_error() and affects nothing.
 * @param ctx the variant's context, or NULL
 * @param fmt printf format of the message (the task and point are prefixed)
 * @param ... its arguments
 * @par Threads
 * Inside the variant; called on the host it only sets tsr_last_error(). */
void tsr_ctx_error(tsr_ctx_t *ctx, const char *fmt, ...);
/** @} */

/* ---------------------------------------------------------------- futures */
/** @defgroup tessera_futures Futures
 * A task's return value, or the reduction of an index launch's values, to wait for on the host
 * or to pass to later tasks (tsr_req_future()) without waiting.
 * @{ */
/** Handle of a future. */
typedef struct {
	uint64_t id; /**< opaque; 0 is never a valid id */
} tsr_future_t;

/** Block until the value is ready and copy it (size must equal the task's return size).
 * @param f     the future
 * @param value where to copy the value
 * @param size  its size: the task's return size
 * @retval TSR_OK       *value holds the value
 * @retval TSR_ETASK    a task it depends on failed (the message is that task's); value untouched
 * @retval TSR_EINVAL   value NULL, or size is not the value's
 * @retval TSR_EDIVERGE several ranks made different calls
 * @retval TSR_ESTARPU  StarPU refused to acquire the value
 * @retval TSR_ESTALE   f was destroyed
 * @retval TSR_ESTATE   not initialized, not the host thread, or the workers are paused
 * @par Threads
 * Host thread only. */
int tsr_future_wait(tsr_future_t f, void *value, size_t size);
/** A ready future holding a value (to feed tasks that take a future).
 * @param type  its type
 * @param bytes its size for #TSR_BYTES, ignored otherwise
 * @param value the value (copied)
 * @param f     the new future; destroy it with tsr_future_destroy()
 * @retval TSR_OK     *f is the future
 * @retval TSR_EINVAL value or f NULL, or a type without a size
 * @retval TSR_ENOMEM out of memory
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_future_create(tsr_type_t type, size_t bytes, const void *value, tsr_future_t *f);
/** Destroy a future. Asynchronous: tasks still using it are not disturbed, and its memory is freed
 * as soon as they are done (no fence needed: a loop of launches runs in constant memory).
 * @param f the future
 * @retval TSR_OK     destroyed (its memory goes when its tasks are done)
 * @retval TSR_ESTALE f was destroyed already
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_future_destroy(tsr_future_t f);
/** Wait for a future's value, then destroy it. tsr_future_wait(), then tsr_future_destroy(): the
 * future is gone whatever the wait returned.
 * @param f     the future
 * @param value where to copy the value
 * @param size  its size: the task's return size
 * @return what tsr_future_wait() returns (the future is destroyed in every case but #TSR_ESTALE,
 *         and #TSR_ESTATE before tsr_init() or from another thread)
 * @par Threads
 * Host thread only. */
int tsr_future_take(tsr_future_t f, void *value, size_t size);
/** @} */

/* ----------------------------------------------------------------- launches */
/** @defgroup tessera_launches Launches
 * Requirements (which data a task touches, with which privilege) and the launches of tasks:
 * single launches, and index launches of one point task per point of a domain.
 *
 * A launch returns once its tasks are submitted; they run when their data is ready, in an order
 * that gives the same result as running them one by one in program order. Everything a launch is
 * given (requirements, arguments) is copied before it returns. A launch is checked completely
 * before any of its points is submitted: a launch that fails leaves nothing behind.
 * @{ */
/** What a requirement names. */
typedef enum {
	TSR_REQ_REGION = 1,    /**< a region or subregion (tsr_req_region()) */
	TSR_REQ_PARTITION = 2, /**< a partition, one subregion per point (tsr_req_part()) */
	TSR_REQ_FUTURE = 3     /**< a future, read (tsr_req_future()) */
} tsr_req_kind_t;
/** Maps a launch point to a color of the requirement's partition. Return 0, or nonzero if the
 * point has no color (the launch then fails with #TSR_EBOUNDS). Called on the host thread during
 * the launch, once per point. */
typedef int (*tsr_projection_fn)(const int64_t point[3], int64_t color[3], void *arg);

/** A requirement: which data a task touches, with which privilege. It holds its field ids by
 * value: it can be built in one scope and launched in
 * another (an array of requirements filled in a loop, say). Make one with tsr_req_region(),
 * tsr_req_part(), tsr_req_part_proj() or tsr_req_future(). */
typedef struct tsr_req {
	tsr_req_kind_t kind;  /**< region, partition or future */
	uint64_t handle;      /**< region, partition or future id */
	tsr_privilege_t priv; /**< the privilege (futures: TSR_READ) */
	int nfields;          /**< 1 to TSR_MAX_REQ_FIELDS */
	/** the field ids; unused ones -1 */
	tsr_field_t fields[TSR_MAX_REQ_FIELDS];
	tsr_projection_fn proj; /**< index launches: NULL means color = point */
	void *proj_arg;         /**< passed to proj */
} tsr_req_t;

/** TSR_FIELDS(a, b) expands to the count and the array of field ids (copied by tsr_req_*). */
/* The formatter reads the compound literal in a macro as a block: kept as written. */
/* clang-format off */
#define TSR_FIELDS(...) \
	(int)(sizeof((tsr_field_t[]){__VA_ARGS__}) / sizeof(tsr_field_t)), \
	(const tsr_field_t[]){__VA_ARGS__}
/* clang-format on */

/** A requirement of any kind; tsr_req_region() and the others call it.
 * @param kind    what handle names
 * @param handle  the region, partition or future id
 * @param priv    the privilege
 * @param nfields how many field ids (more than #TSR_MAX_REQ_FIELDS is refused by the launch)
 * @param fields  the field ids (copied)
 * @param proj    projection of an index launch's points to colors, or NULL
 * @param arg     passed to proj
 * @return the requirement
 * @par Threads
 * Any thread. */
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
/** A region (or subregion) requirement: every point of a launch gets the whole of r.
 * @param r       the region
 * @param priv    the privilege
 * @param nfields how many fields (TSR_FIELDS(...) gives nfields and fields)
 * @param fields  their ids (copied)
 * @return the requirement
 * @par Threads
 * Any thread. */
static inline tsr_req_t tsr_req_region(tsr_region_t r, tsr_privilege_t priv, int nfields,
				       const tsr_field_t *fields)
{
	return tsr_req_make(TSR_REQ_REGION, r.id, priv, nfields, fields, NULL, NULL);
}
/** A partition requirement of an index launch: point p gets the subregion of color p.
 * @param p       the partition
 * @param priv    the privilege
 * @param nfields how many fields (TSR_FIELDS(...) gives nfields and fields)
 * @param fields  their ids (copied)
 * @return the requirement
 * @par Threads
 * Any thread. */
static inline tsr_req_t tsr_req_part(tsr_partition_t p, tsr_privilege_t priv, int nfields,
				     const tsr_field_t *fields)
{
	return tsr_req_make(TSR_REQ_PARTITION, p.id, priv, nfields, fields, NULL, NULL);
}
/** A partition requirement whose color per point a projection gives (a neighbour's tile, say).
 * @param p       the partition
 * @param priv    the privilege
 * @param nfields how many fields (TSR_FIELDS(...) gives nfields and fields)
 * @param fields  their ids (copied)
 * @param proj    the projection, called for each point of the launch
 * @param arg     passed to proj
 * @return the requirement
 * @par Threads
 * Any thread. */
static inline tsr_req_t tsr_req_part_proj(tsr_partition_t p, tsr_privilege_t priv, int nfields,
					  const tsr_field_t *fields, tsr_projection_fn proj,
					  void *arg)
{
	return tsr_req_make(TSR_REQ_PARTITION, p.id, priv, nfields, fields, proj, arg);
}
/** A future requirement: the task reads its value (tsr_ctx_future()) once it is computed.
 * @param f the future
 * @return the requirement
 * @par Threads
 * Any thread. */
static inline tsr_req_t tsr_req_future(tsr_future_t f)
{
	return tsr_req_make(TSR_REQ_FUTURE, f.id, TSR_READ, 0, NULL, NULL, NULL);
}

/** The requirements of a launch (tsr_launch_t.reqs): TSR_REQS(a, b, ...), or {n, array}. */
typedef struct tsr_reqs {
	int n;               /**< how many requirements */
	const tsr_req_t *at; /**< the requirements (copied by the launch) */
} tsr_reqs_t;
/** How to launch a task (tsr_run()), written with designated initialisers; fields left out are
 * "none":
 * @code
 *   tsr_run(jacobi, &(tsr_launch_t){
 *           .domain = colors,
 *           .reqs = TSR_REQS(tsr_req_part(halo, TSR_READ, TSR_FIELDS(u)),
 *                            tsr_req_part(tiles, TSR_WRITE_DISCARD, TSR_FIELDS(v))),
 *           TSR_ARGS(params),
 *           .redop = TSR_MAX,
 *           .result = &residual});
 * @endcode
 * With no .domain it is a single launch (requirements are regions); with one it is an index
 * launch, one point task per point of the domain (see tsr_index_launch()). */
typedef struct tsr_launch {
	/** index launch over these points; left out (dim 0): a single launch */
	tsr_box_t domain;
	/** TSR_REQS(a, b, ...), or {n, array} for requirements built in a loop */
	tsr_reqs_t reqs;
	const void *args; /**< copied into every point task (arglen bytes) */
	size_t arglen;    /**< bytes at args */
	/** index launches asking for a .result: how the points' values combine */
	tsr_redop_t redop;
	/** where to put the future of the returned value; NULL: not wanted */
	tsr_future_t *result;
} tsr_launch_t;
#ifndef __cplusplus /* C++ has no compound-literal arrays: fill .reqs = {n, array} there */
/** The tsr_reqs_t of the requirements listed: .reqs = TSR_REQS(tsr_req_region(...), ...). */
#define TSR_REQS(...)                                                                \
	((tsr_reqs_t){(int)(sizeof((tsr_req_t[]){__VA_ARGS__}) / sizeof(tsr_req_t)), \
		      (tsr_req_t[]){__VA_ARGS__}})
#endif
/** .args and .arglen of a by-value argument: TSR_ARGS(params) */
#define TSR_ARGS(x) .args = &(x), .arglen = sizeof(x)
/** Launch `task` as `how` says (tsr_launch() or tsr_index_launch() underneath).
 * @param task the task
 * @param how  the launch (copied, with its requirements and arguments)
 * @return what tsr_launch() or tsr_index_launch() returns, or:
 * @retval TSR_EINVAL how NULL; a .redop without a .domain; an index launch asking for a .result
 *                    of a task that returns a value without a .redop
 * @par Threads
 * Host thread only. */
int tsr_run(tsr_task_t task, const tsr_launch_t *how);

/** Launch one task. Requirements are regions (or subregions) and futures; args (arglen bytes) are
 * copied. If result is not NULL and the task returns a value, *result is its future.
 * @param task   the task
 * @param nreqs  how many requirements (0 to 64)
 * @param reqs   the requirements (copied)
 * @param args   the argument bytes the variant receives (copied), or NULL when arglen is 0
 * @param arglen their size
 * @param result the future of the task's value (destroy it with tsr_future_destroy() or take it
 *               with tsr_future_take()); NULL: not wanted
 * @retval TSR_OK         submitted
 * @retval TSR_EINVAL     a bad count or NULL array; a requirement naming a partition, of an
 *                        unknown kind or privilege, with 0 or more than #TSR_MAX_REQ_FIELDS
 *                        fields or a field listed twice; a result asked of a task that returns
 *                        nothing; an unknown operator; a mapper's worker that does not exist
 * @retval TSR_ESTALE     the task, or a requirement's region or future, was destroyed
 * @retval TSR_ENOFIELD   a requirement lists a field its region does not have
 * @retval TSR_EBUSY      a field is mapped on the host (tsr_unmap() first)
 * @retval TSR_ETYPE      a REDUCE operator that is not defined on the field's type
 * @retval TSR_EINTERFERE two requirements interfere (one writes what the other touches)
 * @retval TSR_EBOUNDS    the mapper chose a rank that does not exist
 * @retval TSR_ENODEV     no running worker has a variant for the task (or for what the mapper
 *                        chose)
 * @retval TSR_ENOMEM     out of memory
 * @retval TSR_ESTARPU    StarPU refused the task
 * @retval TSR_ESTATE     not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_launch(tsr_task_t task, int nreqs, const tsr_req_t *reqs, const void *args, size_t arglen,
	       tsr_future_t *result);
/** Launch one point task per point of `domain` (an index launch). Partition requirements are
 * projected to a color per point (identity by default), regions and futures are passed whole to
 * every point. Writes through an aliased partition, or any two points writing the same subregion,
 * are refused. If result is not NULL, *result is the reduction by `redop` of the points' return
 * values (in color order, see "Privileges and reductions"). A redop that is not #TSR_REDOP_NONE
 * must be a known operator even when no result is asked.
 * @param task   the task
 * @param domain the launch domain: one point task per point (1-3 dimensional, non-empty)
 * @param nreqs  how many requirements (0 to 64)
 * @param reqs   the requirements (copied)
 * @param args   the argument bytes every point receives (copied), or NULL when arglen is 0
 * @param arglen their size
 * @param redop  how the points' values combine into *result; #TSR_REDOP_NONE when no result is
 *               asked
 * @param result the future of the reduced value; NULL: not wanted
 * @retval TSR_OK         submitted
 * @retval TSR_EINVAL     as tsr_launch(); a domain not 1-3 dimensional; an unknown redop, or
 *                        #TSR_REDOP_NONE with a result
 * @retval TSR_ESTALE     the task, or a requirement's region, partition or future, was destroyed
 * @retval TSR_ENOFIELD   a requirement lists a field its region does not have
 * @retval TSR_EBUSY      a field is mapped on the host
 * @retval TSR_ETYPE      an operator not defined on the field's or the result's type
 * @retval TSR_EINTERFERE a write through an aliased partition, two points writing one
 *                        subregion, every point writing one whole region, or two requirements
 *                        that interfere
 * @retval TSR_EBOUNDS    an empty or too large domain; a point whose color lies outside its
 *                        partition, or that a projection gives no color; a domain of another
 *                        dimension than a partition's colors (without a projection); a mapper's
 *                        rank that does not exist
 * @retval TSR_ENODEV     no running worker has a variant for the task (or for what the mapper
 *                        chose)
 * @retval TSR_ENOMEM     out of memory
 * @retval TSR_ESTARPU    StarPU refused a task
 * @retval TSR_ESTATE     not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_index_launch(tsr_task_t task, tsr_box_t domain, int nreqs, const tsr_req_t *reqs,
		     const void *args, size_t arglen, tsr_redop_t redop, tsr_future_t *result);
/** @} */

/* ------------------------------------------------------ traces */
/** @defgroup tessera_traces Traces: a loop body analysed once, then replayed
 * A loop body between tsr_trace_begin() and tsr_trace_end() is analysed once and recorded; later
 * iterations replay the recording instead of working out again what each point waits for (the
 * launches' dependence analysis), as Legion's traces do. "Trace" is this word only: the timeline
 * of a run is TSR_TIMELINE's (see Observation; TSR_TRACE is that switch's older name).
 *
 * A replay never changes what the program computes: each launch is still checked (an error is
 * reported as without a trace), and the recorded dependences are used only while the launches
 * name the same tasks, regions, partitions, fields, privileges and domains as the recording and
 * the data's state is the one the recording started from. Otherwise (another launch, a host map
 * or a fill in the middle, a destroyed partition, the first iteration after the fields were set)
 * the rest of the iteration is analysed in full and the body recorded again: a warning says so
 * once per trace, and tsr_trace_stats() and TSR_STATS=1 count it. Futures, fences, failed tasks,
 * reductions and mappers keep their meaning inside traces; the arguments' bytes and the futures
 * a launch reads may change from one iteration to the next. A projection is called again at each
 * replay, and a replay goes on only if it gives the recorded colors.
 *
 * Without any call, TSR_REPLAY=auto (the default) finds a sequence of launches that repeats
 * (up to 32 launches long, seen repeated over at least 8 launches) and replays it the same way;
 * TSR_REPLAY=off replays only the traces the program opens. Replays happen in one process with
 * one memory node; with devices (several memory nodes) or several ranks, traces are accepted
 * and analysed in full (TSR_STATS says so).
 * @{ */
/** Open an iteration of trace `id` around a loop body: the first iteration (and any whose state
 * or launches differ from the recording) is analysed and recorded, later ones replay it. A
 * sequence the automatic mode follows ends here.
 * @param id the trace: any number naming one loop body (a program may have several)
 * @retval TSR_OK     the trace is open
 * @retval TSR_ESTATE another trace is open (traces do not nest), not initialized, or not the host
 *                    thread
 * @retval TSR_ENOMEM out of memory
 * @par Threads
 * Host thread only. */
int tsr_trace_begin(uint32_t id);
/** Close the iteration tsr_trace_begin() opened. The launches submitted stay submitted: the call
 * waits for nothing.
 * @param id the trace given to tsr_trace_begin()
 * @retval TSR_OK     closed
 * @retval TSR_EINVAL another trace is open (its id is named)
 * @retval TSR_ESTATE no trace is open, not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_trace_end(uint32_t id);
/** What the traces did since tsr_init(), over the program's traces and the automatic mode's. */
typedef struct tsr_trace_stats {
	long launches;       /**< launches inside traces */
	long recorded;       /**< of those, analysed in full and recorded */
	long replayed;       /**< of those, replayed: their dependence analysis skipped */
	long replayed_tasks; /**< the point tasks of the replayed launches */
	long full;           /**< of those, analysed in full and not recorded (the rest of an
				  iteration that could not be replayed; devices; several ranks) */
	long iterations;     /**< iterations replayed whole */
	long fallbacks;      /**< iterations whose replay stopped: a launch differed from the
				  recording, failed, or the data's state changed behind it */
	long rerecorded;     /**< iterations that recorded the body again (its state at the start
				  or the body itself differed from the recording) */
	long auto_found;     /**< repeated sequences TSR_REPLAY=auto found */
} tsr_trace_stats_t;
/** Read the traces' counters.
 * @param out filled with the counters
 * @retval TSR_OK     filled
 * @retval TSR_EINVAL out is NULL
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_trace_stats(tsr_trace_stats_t *out);
/** @} */

/* ------------------------------------------------------ fill, copy, host access */
/** @defgroup tessera_data Fill, copy, host access
 * Tessera's own tasks on a field (fill, copy), and the host's access to a field (maps, whole-field
 * reads and writes). Fills and copies are launches: they return at once and run in order with the
 * tasks; maps wait for exactly the tasks that touch the field.
 * @{ */
/** Set every element of field f of region (or subregion) r to *value (size = the field's element
 * size). A launch: it runs after the tasks before it that touch the field, and heals data a
 * failed task poisoned.
 * @param r     the region or subregion
 * @param f     the field
 * @param value the element value (copied)
 * @param size  its size: the field's element size
 * @retval TSR_OK       submitted
 * @retval TSR_EINVAL   value NULL
 * @retval TSR_ETYPE    size is not the field's element size
 * @retval TSR_ENOFIELD r has no field f
 * @retval TSR_EBUSY    the field is mapped on the host
 * @retval TSR_ESTALE   r was destroyed
 * @retval TSR_ENOMEM   out of memory
 * @retval TSR_ESTARPU  StarPU refused the task
 * @retval TSR_ESTATE   not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_fill(tsr_region_t r, tsr_field_t f, const void *value, size_t size);
/** Copy one field into another. Copy field fsrc of src into field fdst of dst: same extents and
 * same type required (the boxes may lie anywhere). A launch, as tsr_fill().
 * @param src  the source region or subregion
 * @param fsrc its field
 * @param dst  the destination region or subregion
 * @param fdst its field
 * @retval TSR_OK         submitted
 * @retval TSR_EBOUNDS    src and dst differ in dimension or extent
 * @retval TSR_ETYPE      the fields differ in type
 * @retval TSR_ENOFIELD   a region has no such field
 * @retval TSR_EBUSY      a field is mapped on the host
 * @retval TSR_EINTERFERE src and dst overlap in the same field
 * @retval TSR_ESTALE     a region was destroyed
 * @retval TSR_ENOMEM     out of memory
 * @retval TSR_ESTARPU    StarPU refused the task
 * @retval TSR_ESTATE     not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_copy(tsr_region_t src, tsr_field_t fsrc, tsr_region_t dst, tsr_field_t fdst);
/** Map a field on the host. Make field f of r readable (#TSR_READ) or writable (#TSR_WRITE_DISCARD
 * / #TSR_READ_WRITE) on the host, waiting only for the tasks that touch it. Launches touching the
 * field are refused until tsr_unmap(). #TSR_WRITE_DISCARD (the host replaces every value) succeeds
 * and heals data a failed task poisoned.
 * @param r    the region or subregion
 * @param f    the field
 * @param priv #TSR_READ, #TSR_WRITE_DISCARD or #TSR_READ_WRITE
 * @param acc  a host accessor of the field over r's bounds (TSR_AT1/2/3), valid until tsr_unmap()
 * @retval TSR_OK       mapped
 * @retval TSR_ETASK    READ or READ_WRITE, and a failed task should have written part of it (the
 *                      message is that task's)
 * @retval TSR_EINVAL   acc NULL, or another privilege
 * @retval TSR_EBUSY    the field (of r's root region) is mapped already
 * @retval TSR_ENOFIELD r has no field f
 * @retval TSR_EDIVERGE several ranks made different calls
 * @retval TSR_ESTARPU  StarPU refused to acquire the data
 * @retval TSR_ENOMEM   out of memory
 * @retval TSR_ESTALE   r was destroyed
 * @retval TSR_ESTATE   not initialized, not the host thread, or the workers are paused
 * @par Threads
 * Host thread only. */
int tsr_map(tsr_region_t r, tsr_field_t f, tsr_privilege_t priv, tsr_accessor_t *acc);
/** End the host mapping of field f of r; the accessor is invalid afterwards.
 * @param r the region or subregion mapped
 * @param f the field
 * @retval TSR_OK       unmapped
 * @retval TSR_ESTATE   the field of r is not mapped; or not initialized, or not the host thread
 * @retval TSR_ENOFIELD r has no field f
 * @retval TSR_ESTALE   r was destroyed
 * @par Threads
 * Host thread only. */
int tsr_unmap(tsr_region_t r, tsr_field_t f);
/** Copy a host buffer into a whole field. Into field f of region (or subregion) r, every element,
 * in memory order (dimension 0 fastest); size must be the volume times the field's element size.
 * Waits for the tasks that touch the field (it maps and unmaps it).
 * @param r    the region or subregion
 * @param f    the field
 * @param buf  the values (read before the call returns)
 * @param size its size in bytes
 * @return #TSR_OK, what tsr_map() returns, or:
 * @retval TSR_EINVAL buf NULL, or size is not the field's size
 * @par Threads
 * Host thread only. */
int tsr_region_write(tsr_region_t r, tsr_field_t f, const void *buf, size_t size);
/** Copy a whole field into a host buffer. Copy field f of region (or subregion) r into a host
 * buffer, as tsr_region_write() lays it out.
 * @param r    the region or subregion
 * @param f    the field
 * @param buf  where the values go
 * @param size its size in bytes: the volume times the field's element size
 * @return #TSR_OK, what tsr_map() returns (#TSR_ETASK for values a failed task should have
 *         written), or:
 * @retval TSR_EINVAL buf NULL, or size is not the field's size
 * @par Threads
 * Host thread only. */
int tsr_region_read(tsr_region_t r, tsr_field_t f, void *buf, size_t size);
/** @} */

/* ------------------------------------------------------------------ mappers */
/** @defgroup tessera_mappers Scheduling and mappers
 * Where each point task runs. Scheduling policies are chosen by name (tsr_config_t.sched,
 * TSR_SCHED): StarPU's, plus Tessera's "tsr-locality" (a color keeps its worker from launch to
 * launch, idle workers steal) and "tsr-critpath" (ready task with the longest path to the end of
 * the known graph first). A mapper callback or partition owners pin tasks on top of any policy.
 * @{ */
/** A kind of worker. */
typedef enum {
	TSR_WORKER_ANY = 0,   /**< any kind (no restriction; also "no such worker") */
	TSR_WORKER_CPU = 1,   /**< a CPU core */
	TSR_WORKER_CUDA = 2,  /**< a CUDA GPU */
	TSR_WORKER_OPENCL = 3 /**< an OpenCL device */
} tsr_worker_kind_t;
/** What a mapper is asked about: one point task. */
typedef struct tsr_map_query {
	const char *task_name; /**< the task's name */
	int point_dim;         /**< 0 for a single launch */
	int64_t point[3];      /**< the point */
	tsr_box_t domain;      /**< launch domain (index launches) */
	/** owner of the color of the first partition requirement that writes (else the first
	 * partition requirement), or -1 */
	int owner;
} tsr_map_query_t;
/** A mapper's answer: where the point task runs. */
typedef struct tsr_mapping {
	tsr_worker_kind_t kind; /**< restrict to one kind of worker (ANY: no restriction) */
	int worker;             /**< exact StarPU worker id, or -1 */
	int priority;           /**< StarPU priority (higher first, for policies that use it) */
	/** several ranks: the rank that runs the task (same answer on every rank) */
	int rank;
} tsr_mapping_t;
/** Called for every point task at submission; on entry *m says "owner, else anywhere". Called on
 * the host thread, inside the launch: it must not call Tessera. */
typedef void (*tsr_mapper_fn)(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg);
/** Install a mapper, called for every point task of later launches. A mapping it makes that
 * cannot be honoured (no such worker, a kind the task has no variant for) fails the launch.
 * @param fn  the mapper; NULL: back to the default
 * @param arg passed to fn (not copied: it must stay valid while the mapper is installed)
 * @retval TSR_OK     installed (until tsr_finalize())
 * @retval TSR_ESTATE not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_set_mapper(tsr_mapper_fn fn, void *arg);
/** Pin the point tasks of a color to a worker. Pins the point tasks of index launches whose
 * mapping requirement (see tsr_map_query_t.owner)
 * has this color to `worker` (-1: unpin).
 * @param p      the partition
 * @param color  the color
 * @param worker a StarPU worker id, or -1
 * @retval TSR_OK      pinned
 * @retval TSR_EINVAL  color NULL, or no such worker
 * @retval TSR_EBOUNDS color outside the partition's colors
 * @retval TSR_ENOMEM  out of memory
 * @retval TSR_ESTALE  p was destroyed
 * @retval TSR_ESTATE  not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_partition_set_owner(tsr_partition_t p, const int64_t color[3], int worker);
/** @} */

/* ------------------------------------------------------------------ several ranks */
/** @defgroup tessera_ranks Several ranks
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
 * every rank. Without MPI, tsr_rank is 0 and tsr_nranks 1.
 *
 * A fake rank (TSR_FAKE_NRANKS=N, TSR_FAKE_RANK=r, without mpirun) plays rank r of an N-rank
 * job in one process, to measure one rank's analysis and submission: tsr_rank is r and
 * tsr_nranks N, every decision is rank r's, but no task variant runs (Tessera's own fill and
 * copy do), a send is dropped, a receive leaves its data as it was (a future's value: zero), and
 * blocking calls answer as if every rank agreed. Futures then hold no computed value: a program
 * measured so must not steer by them.
 * @{ */
/** This process's rank.
 * @return 0 to tsr_nranks() - 1; 0 without MPI; TSR_FAKE_RANK on a fake rank
 * @par Threads
 * Host thread (not checked). */
int tsr_rank(void);
/** Ranks running the program.
 * @return the count; 1 without MPI; TSR_FAKE_NRANKS on a fake rank
 * @par Threads
 * Host thread (not checked). */
int tsr_nranks(void);
/** Run the point tasks mapped by this color on `rank` (0..tsr_nranks()-1).
 * @param p     the partition
 * @param color the color
 * @param rank  the rank
 * @retval TSR_OK      set
 * @retval TSR_EBOUNDS rank outside 0..tsr_nranks()-1, or color outside the partition's colors
 * @retval TSR_EINVAL  color NULL
 * @retval TSR_ENOMEM  out of memory
 * @retval TSR_ESTALE  p was destroyed
 * @retval TSR_ESTATE  not initialized, or not the host thread
 * @par Threads
 * Host thread only. */
int tsr_partition_set_rank(tsr_partition_t p, const int64_t color[3], int rank);
/** @} */
/** Every selectable scheduling policy. Names and one-line descriptions of every selectable
 * policy (StarPU's and Tessera's); works before tsr_init.
 * @ingroup tessera_mappers
 * @param names        filled with at most max names (static strings); may be NULL
 * @param descriptions filled with at most max descriptions (static strings); may be NULL
 * @param max          room in each array
 * @return how many policies exist (fills at most max)
 * @par Threads
 * Any thread, before tsr_init() too. */
int tsr_policy_list(const char **names, const char **descriptions, int max);
/** One of Tessera's environment switches. The switches (TSR_*) are read at tsr_init (TSR_HOME at
 * each region's creation): name, the values it takes, its default and what it does. The values
 * are the rule tsr_init() (and tsr_args(), for the flags) checks: "a|b" one of the words, "LO..HI"
 * a whole number in that range, "N" a whole number >= 0, "file" a path to create, "policy" a name
 * of tsr_policy_list() (or help). Works before tsr_init; *table stays valid for the life of the
 * process.
 * @ingroup tessera_runtime */
typedef struct tsr_env_switch {
	const char *name;     /**< "TSR_SCHED" */
	const char *values;   /**< what it takes: "a|b", "LO..HI", "N", "file", "policy" */
	const char *fallback; /**< the default */
	const char *meaning;  /**< what it does */
} tsr_env_switch_t;
/** Tessera's environment switches: the table tsr_env_switch_t describes.
 * @ingroup tessera_runtime
 * @param table the table (may be NULL), valid for the life of the process
 * @return how many switches it has
 * @par Threads
 * Any thread, before tsr_init() too. */
int tsr_env_switches(const tsr_env_switch_t **table);
/** All workers.
 * @ingroup tessera_mappers
 * @return how many workers run (CPU, CUDA and OpenCL); 0 before tsr_init()
 * @par Threads
 * Host thread (not checked). */
int tsr_worker_count(void);
/** The kind of a worker.
 * @ingroup tessera_mappers
 * @param worker a StarPU worker id
 * @return #TSR_WORKER_CPU, #TSR_WORKER_CUDA or #TSR_WORKER_OPENCL; #TSR_WORKER_ANY if no such
 *         worker (or before tsr_init())
 * @par Threads
 * Host thread (not checked). */
tsr_worker_kind_t tsr_worker_kind(int worker);

/* ------------------------------------------------------------ observation */
/** @defgroup tessera_observation Observation
 * TSR_TIMELINE=timeline.json (the run's timeline in the Trace Event Format, for Perfetto: each rank
 * a process, the host thread and each worker a named track of its tasks, Tessera's own fills,
 * copies, folds and syncs included, the data tasks fetched on a track per bus, numeric counters;
 * TSR_TIMELINE_FLOWS=1 adds an arrow per dependence), TSR_DAG=graph.dot (the dependencies Tessera
 * derived, drawn for people: one edge per pair of tasks, each launch boxed inside its iteration;
 * TSR_DAG_LABELS=1 puts region, field and privileges on every edge, TSR_DAG_ITERS=N writes the
 * first N iterations), TSR_STATS=1 (per task and worker kind: count, total and mean time,
 * printed at finalize). TSR_TIMELINE, TSR_DAG and TSR_STATS also exist in tsr_config_t; the
 * README's "Seeing a run" says more.
 * @{ */
/** One row of the statistics: a task name on one kind of worker. */
typedef struct tsr_task_stats {
	char name[64];   /**< the task's name */
	int kind;        /**< tsr_worker_kind_t */
	long count;      /**< how many of its tasks ran on that kind (Tessera's own under theirs) */
	double total_us; /**< their total time, in microseconds */
} tsr_task_stats_t;
/** Copy up to max rows of the statistics gathered so far (needs stats or trace on).
 * @param rows where the rows go, in the order each task and kind first ran
 * @param max  room in rows
 * @return how many rows were copied; or #TSR_EINVAL (rows NULL or max negative), #TSR_ESTATE
 *         (not initialized, or not the host thread)
 * @par Threads
 * Host thread only. */
int tsr_stats_get(tsr_task_stats_t *rows, int max);
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* TESSERA_H */
