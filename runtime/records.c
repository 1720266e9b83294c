/* records.c: what a run shows of itself. The observation switches (TSR_TIMELINE,
 * TSR_TIMELINE_FLOWS, TSR_STATS, TSR_DAG) and the records behind them: each task that ran, a
 * point's or one of Tessera's own (fills, copies, folds, syncs), from StarPU's profiling, with the
 * data its fetch waited for; each launch on the host thread. The statistics (stats.c), the task
 * graph (dag.c) and the timeline (timeline.c) are made from them; tsr_finalize writes the files
 * asked for, and so does a run that exits without it (an atexit handler). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"
#include "timeline.h"

/* ------------------------------------------------------------------ switches */

int tsr__obs_on;   /* statistics or timeline: every task's profiling is recorded */
static int tl_on;  /* the timeline (TSR_TIMELINE) */
static int flows;  /* its dependence arrows (TSR_TIMELINE_FLOWS) */
static int64_t t0; /* tsr_init, on StarPU's clock */
/* The files asked for, copied: the exit handler may run after the caller's strings are gone. */
static char *timeline_path, *dag_path;

/* Tasks, transfers and launches recorded; workers append under lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tl_task *tasks;
static size_t ntasks, captasks;
static struct tl_xfer *xfers;
static size_t nxfers, capxfers;
static struct tl_host *host;
static size_t nhost, caphost;

/* The launch being submitted (host thread): its number and its start. */
static int launch_seq = -1;
static const char *launch_name;
static int64_t launch_start;

static int64_t now_ns(void)
{
	return llround(starpu_timing_now() * 1e3);
}

/* ---------------------------------------------------- a task's observation */

/* The most buses one task's fetch is split over on the timeline (more are added to the last). */
#define TSR_OBS_FETCH 4

/* What observes one task, from its submission to its callback. */
struct tsr_obs_rec {
	const char *name;
	int internal;
	int pdim;
	int64_t point[3];
	int dag_id;
	int launch;
	long long copy_bytes; /* a tsr_copy's bytes, else 0 */
	struct tsr_ctx *ctx;  /* a point task's context, released at the end */
	void (*chain)(void *);
	void *chain_arg;
	int nfetch;
	struct {
		int src, dst;
		long long bytes;
	} fetch[TSR_OBS_FETCH];
};

/* Where StarPU fetches buffer b of the task: the worker's own node, or the one its codelet
 * names. */
static int fetch_node(const struct starpu_task *task, unsigned b, int local)
{
	if (!task->cl || !task->cl->specific_nodes)
		return local;

	int n = STARPU_CODELET_GET_NODE(task->cl, b);
	if (n >= 0)
		return n;
	return n == STARPU_SPECIFIC_NODE_CPU ? STARPU_MAIN_RAM : local;
}

/* A node that holds a valid copy of h, other than dst (the host first); -1 if none. */
static int valid_source(starpu_data_handle_t h, int dst)
{
	int found = -1;
	unsigned nn = starpu_memory_nodes_get_count();

	for (unsigned n = 0; n < nn && found != STARPU_MAIN_RAM; n++) {
		int valid = 0;
		if ((int)n == dst)
			continue;
		starpu_data_query_status(h, (int)n, NULL, &valid, NULL);
		if (valid && (found < 0 || (int)n == STARPU_MAIN_RAM))
			found = (int)n;
	}

	return found;
}

static void add_fetch(struct tsr_obs_rec *rec, int src, int dst, long long bytes)
{
	int i = 0;
	while (i < rec->nfetch && (rec->fetch[i].src != src || rec->fetch[i].dst != dst))
		i++;

	if (i == rec->nfetch && rec->nfetch == TSR_OBS_FETCH)
		i = TSR_OBS_FETCH - 1;
	else if (i == rec->nfetch) {
		rec->fetch[i].src = src;
		rec->fetch[i].dst = dst;
		rec->fetch[i].bytes = 0;
		rec->nfetch++;
	}

	rec->fetch[i].bytes += bytes;
}

/* StarPU popped the task (worker thread), before fetching its data: the buffers it reads that
 * are not valid where it fetches them are what the fetch moves (StarPU's own hint, lock-free;
 * data already on its way counts, data prefetched earlier does not). */
static void obs_popped(void *arg)
{
	struct tsr_obs_rec *rec = arg;
	struct starpu_task *task = starpu_task_get_current();
	int w = starpu_worker_get_id();
	if (!task || w < 0)
		return;

	int local = (int)starpu_worker_get_memory_node((unsigned)w);
	rec->nfetch = 0;

	for (unsigned b = 0; b < STARPU_TASK_GET_NBUFFERS(task); b++) {
		enum starpu_data_access_mode m = STARPU_TASK_GET_MODE(task, b);
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, b);
		size_t size = starpu_data_get_size(h);
		int dst = fetch_node(task, b, local);
		int valid = 0;

		if (!(m & STARPU_R) || (m & STARPU_REDUX) || size == 0)
			continue;
		starpu_data_query_status(h, dst, NULL, &valid, NULL);
		if (valid)
			continue;

		int src = valid_source(h, dst);
		if (src >= 0)
			add_fetch(rec, src, dst, (long long)size);
	}
}

/* Under lock: the transfers of task `idx` (its fetches, or its copy). */
static void record_xfers(const struct tsr_obs_rec *rec, const struct starpu_profiling_task_info *pi,
			 size_t idx, int node)
{
	for (int i = 0; i < rec->nfetch; i++) {
		TSR_GROW(xfers, nxfers, capxfers, 256);
		xfers[nxfers++] = (struct tl_xfer){TL_FETCH,
						   rec->fetch[i].src,
						   rec->fetch[i].dst,
						   rec->fetch[i].bytes,
						   tsr__ts_ns(&pi->acquire_data_start_time),
						   tsr__ts_ns(&pi->acquire_data_end_time),
						   idx};
	}

	if (rec->copy_bytes) {
		TSR_GROW(xfers, nxfers, capxfers, 256);
		xfers[nxfers++] = (struct tl_xfer){TL_COPY,
						   node,
						   node,
						   rec->copy_bytes,
						   tsr__ts_ns(&pi->start_time),
						   tsr__ts_ns(&pi->end_time),
						   idx};
	}
}

static int worker_kind(int w)
{
	enum starpu_worker_archtype t = starpu_worker_get_type(w);
	return t == STARPU_CUDA_WORKER     ? TSR_WORKER_CUDA
	       : t == STARPU_OPENCL_WORKER ? TSR_WORKER_OPENCL
					   : TSR_WORKER_CPU;
}

/* The statistics and the timeline of a task that ran. */
static void record(const struct starpu_task *task, const struct tsr_obs_rec *rec)
{
	const struct starpu_profiling_task_info *pi = task->profiling_info;
	int64_t s = tsr__ts_ns(&pi->start_time), e = tsr__ts_ns(&pi->end_time);
	tsr__stats_add(rec->name, worker_kind(pi->workerid), (double)(e - s) / 1e3);
	if (!tl_on)
		return;

	struct tl_task t = {rec->name,
			    rec->internal,
			    rec->pdim,
			    {0, 0, 0},
			    pi->workerid,
			    rec->dag_id,
			    rec->launch,
			    tsr__ts_ns(&pi->submit_time),
			    s,
			    e};
	memcpy(t.point, rec->point, sizeof t.point);
	int node = (int)starpu_worker_get_memory_node((unsigned)pi->workerid);

	pthread_mutex_lock(&lock);
	TSR_GROW(tasks, ntasks, captasks, 1024);
	tasks[ntasks] = t;
	record_xfers(rec, pi, ntasks, node);
	ntasks++;
	pthread_mutex_unlock(&lock);
}

/* Task callback (worker thread): the task ran. The callback the task had before runs after. */
static void obs_done(void *arg)
{
	struct tsr_obs_rec *rec = arg;
	struct starpu_task *task = starpu_task_get_current();

	/* a point's node is done in its wrapper (task.c), without the graph's lock */
	if (rec->dag_id >= 0 && tsr__critpath_on && !rec->ctx)
		tsr__dag_done(rec->dag_id);
	if (task && task->profiling_info && tsr__obs_on)
		record(task, rec);
	if (rec->chain)
		rec->chain(rec->chain_arg);
	if (rec->ctx)
		tsr__ctx_release(rec->ctx); /* the last use of the point's context */
	free(rec);
}

/* A record in the task's callbacks; NULL when out of memory (the task then goes unobserved). */
static struct tsr_obs_rec *rec_new(struct starpu_task *task, const char *name, int pdim,
				   const int64_t point[3], int dag_id)
{
	struct tsr_obs_rec *rec = calloc(1, sizeof *rec);
	if (!rec)
		return NULL;

	rec->name = name;
	rec->pdim = pdim;
	if (pdim)
		memcpy(rec->point, point, sizeof rec->point);
	rec->dag_id = dag_id;
	rec->launch = launch_seq < 0 ? 0 : launch_seq;
	rec->chain = task->callback_func;
	rec->chain_arg = task->callback_arg;

	task->callback_func = obs_done;
	task->callback_arg = rec;
	if (tl_on) {
		task->prologue_callback_pop_func = obs_popped;
		task->prologue_callback_pop_arg = rec;
	}
	return rec;
}

/* The bytes a tsr_copy writes: its destination (requirement 1) whole. */
static long long copy_bytes(const struct tsr_ctx *ctx)
{
	const struct tsr_reqrec *d = &ctx->reqs[1];
	long long n = (long long)d->finfo[d->fields[0]].size;
	for (int k = 0; k < d->dim; k++)
		n *= d->hi[k] - d->lo[k] + 1;
	return n;
}

struct tsr_obs_rec *tsr__obs_task(struct starpu_task *task, struct tsr_ctx *ctx)
{
	if (!tsr__obs_on)
		return NULL; /* the critical path's node is done in the wrapper (task.c) */

	const struct tsr_task *t = ctx->task;
	struct tsr_obs_rec *rec = rec_new(task, t->name, ctx->point_dim, ctx->point, ctx->dag_id);
	if (!rec)
		return NULL;

	rec->internal = t->internal;
	rec->ctx = ctx;
	if (t->copies && ctx->nreqs == 2)
		rec->copy_bytes = copy_bytes(ctx);
	ctx->release_in_callback = 1;
	return rec;
}

struct tsr_obs_rec *tsr__obs_internal(struct starpu_task *task, const char *name, int pdim,
				      const int64_t point[3], int dag_id)
{
	if (!tsr__obs_on && !tsr__critpath_on)
		return NULL;

	struct tsr_obs_rec *rec = rec_new(task, name, pdim, point, dag_id);
	if (rec)
		rec->internal = 1;
	return rec;
}

/* The submit failed: the task is gone without its callbacks (StarPU never ran them). */
void tsr__obs_drop(struct tsr_obs_rec *rec)
{
	free(rec);
}

/* ------------------------------------------------------- launches (host thread) */

void tsr__obs_launch_begin(const struct tsr_task *t, int single)
{
	/* launch_seq, launch_name and launch_start belong to the one host thread */
	tsr__assert(pthread_equal(pthread_self(), tsr__rt.owner));
	launch_seq++;
	if (tsr__dag_on)
		tsr__dag_launch(t, single);
	if (!tl_on)
		return;

	launch_name = t->name;
	launch_start = now_ns();
}

void tsr__obs_launch_end(void)
{
	if (!tl_on || !launch_name)
		return;

	struct tl_host h = {launch_name, launch_seq, launch_start, now_ns()};
	pthread_mutex_lock(&lock);
	TSR_GROW(host, nhost, caphost, 256);
	host[nhost++] = h;
	pthread_mutex_unlock(&lock);
	launch_name = NULL;
}

int tsr__region_point(const struct tsr_region *r, int64_t point[3])
{
	const struct tsr_partition *p = r->parent_part;
	if (!p)
		return 0;

	tsr__assert(r->color_index >= 0 && r->color_index < p->ncolors);
	tsr__box_point(p->colors, r->color_index, point);
	return p->colors.dim;
}

/* ------------------------------------------------------------ start and end */

/* Can `path` be created or overwritten? Checked at tsr_init, so that a typo in TSR_TIMELINE fails
 * at once and not after the run; `kind` names the switch in the message. */
static int check_path(const char *path, const char *kind)
{
	struct stat st;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return tsr__err(TSR_EINVAL, "tsr_init: %s '%s' is a directory", kind, path);
		if (access(path, W_OK))
			return tsr__err(TSR_EINVAL, "tsr_init: %s '%s' cannot be written: %s", kind,
					path, strerror(errno));
		return TSR_OK;
	}

	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == dir)
		dir[1] = 0; /* a file in / */
	else
		*slash = 0;

	if (access(dir, W_OK | X_OK))
		return tsr__err(TSR_EINVAL,
				"tsr_init: %s '%s' cannot be created: directory '%s': %s", kind,
				path, dir, strerror(errno));

	return TSR_OK;
}

/* The timeline's path, named by what set it (its flag, TSR_TIMELINE or its older name). */
static int check_timeline_path(const char *path)
{
	const char *from = tsr__env_from("TSR_TIMELINE");
	char what[64];
	snprintf(what, sizeof what, "timeline file (%s)", from ? from : "TSR_TIMELINE");
	return check_path(path, what);
}

/* The files' paths, and the switches that shape them (TSR_TIMELINE_FLOWS, TSR_DAG_*). */
int tsr__obs_check_paths(const tsr_config_t *c)
{
	enum { NO_ARROWS, ARROWS }; /* TSR_TIMELINE_FLOWS's words (env.c) */
	int arrows;
	int rc = tsr__env_choice("TSR_TIMELINE_FLOWS", "tsr_init", &arrows);
	if (!rc)
		rc = tsr__dag_switches();
	if (!rc && c->timeline_file)
		rc = check_timeline_path(c->timeline_file);
	if (!rc && c->dag_file)
		rc = check_path(c->dag_file, "graph file (TSR_DAG)");

	flows = !rc && arrows == ARROWS;
	return rc;
}

/* Files asked for and not written yet: tsr_finalize or the exit handler writes them, whichever
 * comes first, under write_lock (the other one then finds nothing to do). */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static int files_pending;

static int write_files(const struct bus_row *bus, int nbus, int complete);

/* A program that returns from main or calls exit without tsr_finalize: StarPU still runs, and
 * tasks may still be running; what has been recorded so far is written (each rank its own
 * files), the tasks that had not ended are not in it. */
static void write_at_exit(void)
{
	if (!tsr__rt.initialized)
		return;

	struct bus_row bus[TSR_MAX_BUS];
	int nbus = tsr__obs_on ? tsr__bus_read(bus, TSR_MAX_BUS) : 0;
	if (write_files(bus, nbus, 0))
		fprintf(stderr, "tessera: at exit: %s\n", tsr_last_error()); /* no caller to tell */
}

void tsr__obs_init(const tsr_config_t *c, int critpath)
{
	static int handler;

	tl_on = c->timeline_file != NULL;
	tsr__obs_on = tl_on || c->stats;
	tsr__dag_whole = c->dag_file != NULL || (tl_on && flows);
	tsr__dag_on = tsr__dag_whole || critpath;
	tsr__critpath_on = critpath;
	tsr__dist_log_on = tl_on;
	if (tsr__obs_on)
		starpu_profiling_status_set(STARPU_PROFILING_ENABLE);

	t0 = now_ns();
	launch_seq = -1;
	timeline_path = c->timeline_file ? strdup(c->timeline_file) : NULL;
	dag_path = c->dag_file ? strdup(c->dag_file) : NULL;
	files_pending = timeline_path || dag_path;
	if (files_pending && !handler)
		handler = atexit(write_at_exit) == 0;
}

/* Several ranks: each rank writes its own file, "trace.json" becoming "trace.rank1.json" (the
 * rank before the extension of the last path component; appended where it has none). */
static const char *rank_path(const char *file, char *buf, size_t n)
{
	if (!tsr__dist.on)
		return file;

	const char *base = strrchr(file, '/');
	const char *dot = strrchr(base ? base : file, '.');
	if (!dot || dot == (base ? base + 1 : file))
		snprintf(buf, n, "%s.rank%d", file, tsr__dist.rank);
	else
		snprintf(buf, n, "%.*s.rank%d%s", (int)(dot - file), file, tsr__dist.rank, dot);

	return buf;
}

/* Under lock: the timeline's file. */
static int write_timeline(const char *file, const struct bus_row *bus, int nbus, int complete)
{
	struct tsr_mpi_xfer *mpi = NULL;
	int nmpi = tsr__dist_log_copy(&mpi);
	struct tl_run run = {.tasks = tasks,
			     .ntasks = ntasks,
			     .xfers = xfers,
			     .nxfers = nxfers,
			     .host = host,
			     .nhost = nhost,
			     .mpi = mpi,
			     .nmpi = (size_t)nmpi,
			     .bus = bus,
			     .nbus = nbus,
			     .t0 = t0,
			     .flows = flows,
			     .complete = complete};

	int rc = tsr__timeline_write(file, &run);
	free(mpi);
	return rc;
}

/* The graph's file after the timeline's, which returned rc: if both fail, the message says both. */
static int write_graph(const char *file, int rc)
{
	char first[512];
	snprintf(first, sizeof first, "%s", rc ? tsr_last_error() : "");

	int rc2 = tsr__dag_write(file);
	if (!rc || !rc2)
		return rc ? rc : rc2;

	char second[512]; /* tsr__err writes where tsr_last_error points */
	snprintf(second, sizeof second, "%s", tsr_last_error());
	return tsr__err(rc, "%s; and %s", first, second);
}

static int write_files(const struct bus_row *bus, int nbus, int complete)
{
	char path[4096];
	int rc = TSR_OK;

	pthread_mutex_lock(&write_lock);
	if (files_pending && timeline_path) {
		pthread_mutex_lock(&lock);
		rc = write_timeline(rank_path(timeline_path, path, sizeof path), bus, nbus,
				    complete);
		pthread_mutex_unlock(&lock);
	}
	if (files_pending && dag_path)
		rc = write_graph(rank_path(dag_path, path, sizeof path), rc);
	files_pending = 0;
	pthread_mutex_unlock(&write_lock);
	return rc;
}

static void records_free(void)
{
	pthread_mutex_lock(&lock);
	free(tasks);
	tasks = NULL;
	ntasks = captasks = 0;
	free(xfers);
	xfers = NULL;
	nxfers = capxfers = 0;
	free(host);
	host = NULL;
	nhost = caphost = 0;
	pthread_mutex_unlock(&lock);
}

/* Before starpu_shutdown (profiling info is still readable); everything is idle. */
int tsr__obs_fini(const tsr_config_t *c)
{
	struct bus_row bus[TSR_MAX_BUS];
	int nbus = tsr__obs_on ? tsr__bus_read(bus, TSR_MAX_BUS) : 0;

	int rc = write_files(bus, nbus, 1);
	if (c->stats)
		tsr__stats_print(bus, nbus);

	pthread_mutex_lock(&write_lock);
	records_free();
	free(timeline_path);
	free(dag_path);
	timeline_path = dag_path = NULL;
	tsr__stats_free();
	tsr__dag_free();
	tsr__dist_log_free();
	tsr__obs_on = tl_on = 0;
	pthread_mutex_unlock(&write_lock);
	return rc;
}
