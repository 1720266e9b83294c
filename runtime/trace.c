/* trace.c: the timeline of a run (TSR_TRACE as Chrome trace events) and the switches of
 * observation: a task callback takes StarPU's profiling info to the timeline (here), the
 * statistics (stats.c) and the task graph (dag.c); tsr_finalize writes what was asked. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"

struct ev {
	const struct tsr_task *task;
	int pdim;
	int64_t point[3];
	int worker;
	double start, end;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ev *evs;
static size_t nevs, capevs;
static double t0;
int tsr__obs_on;

void tsr__obs_init(const tsr_config_t *c, int critpath)
{
	tsr__obs_on = c->trace_file || c->stats;
	tsr__dag_on = c->dag_file != NULL || critpath;
	tsr__critpath_on = critpath;
	if (tsr__obs_on)
		starpu_profiling_status_set(STARPU_PROFILING_ENABLE);

	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	t0 = tsr__ts_us(&now);
}

/* The timeline event and the statistics of a task that ran. */
static void record(struct starpu_task *task, const struct tsr_ctx *ctx)
{
	struct starpu_profiling_task_info *pi = task->profiling_info;
	double s = tsr__ts_us(&pi->start_time), e = tsr__ts_us(&pi->end_time);
	int kind = tsr_worker_kind(pi->workerid);

	pthread_mutex_lock(&lock);
	TSR_GROW(evs, nevs, capevs, 1024);
	struct ev *v = &evs[nevs++];
	v->task = ctx->task;
	v->pdim = ctx->point_dim;
	memcpy(v->point, ctx->point, sizeof v->point);
	v->worker = pi->workerid;
	v->start = s;
	v->end = e;
	pthread_mutex_unlock(&lock);

	tsr__stats_add(ctx->task, kind, e - s);
}

/* Task callback (worker thread) of a point task: its end in the task graph, its profiling info. */
static void obs_callback(void *arg)
{
	struct starpu_task *task = starpu_task_get_current();
	struct tsr_ctx *ctx = task ? task->cl_arg : NULL;
	if (!ctx)
		return;

	if (ctx->dag_id >= 0 && tsr__critpath_on)
		tsr__dag_done(ctx->dag_id);
	if (task->profiling_info && tsr__obs_on)
		record(task, ctx);
	tsr__ctx_release(ctx); /* the last use of the point's context */
}

/* At submission of a point task. */
void tsr__obs_task(struct starpu_task *task, struct tsr_ctx *ctx)
{
	if (tsr__obs_on || tsr__critpath_on) {
		task->callback_func = obs_callback;
		ctx->release_in_callback = 1;
	}
}

/* Can `path` be created or overwritten? Checked at tsr_init, so that a typo in TSR_TRACE fails
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

int tsr__obs_check_paths(const tsr_config_t *c)
{
	int rc = TSR_OK;
	if (c->trace_file)
		rc = check_path(c->trace_file, "trace file (TSR_TRACE)");
	if (!rc && c->dag_file)
		rc = check_path(c->dag_file, "graph file (TSR_DAG)");
	return rc;
}

static int write_trace(const char *file, const struct bus_row *bus, int nbus)
{
	FILE *f = fopen(file, "w");
	if (!f)
		return tsr__err(TSR_EINVAL, "tsr_finalize: cannot write trace file '%s': %s", file,
				strerror(errno));

	double base = nevs ? evs[0].start : 0;
	for (size_t i = 0; i < nevs; i++)
		if (evs[i].start < base)
			base = evs[i].start;

	fprintf(f, "{\"traceEvents\":[\n");
	int nw = starpu_worker_get_count();
	for (int w = 0; w < nw; w++) {
		char name[64];
		starpu_worker_get_name(w, name, sizeof name);
		fprintf(f,
			"{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,\"args\":{"
			"\"name\":\"",
			w);
		tsr__put_escaped(f, name);
		fprintf(f, "\"}},\n");
	}

	for (size_t i = 0; i < nevs; i++) {
		char pl[64];
		tsr__point_label(evs[i].pdim, evs[i].point, pl, sizeof pl);
		fprintf(f, "{\"name\":\"");
		tsr__put_escaped(f, evs[i].task->name);
		fprintf(f,
			"%s\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":0,\"tid\":%d,\"ts\":%.3f,"
			"\"dur\":%.3f,\"args\":{\"task\":\"",
			pl, evs[i].worker, evs[i].start - base, evs[i].end - evs[i].start);
		tsr__put_escaped(f, evs[i].task->name);
		fprintf(f, "\",\"color\":\"%s\",\"worker\":%d}},\n", pl, evs[i].worker);
	}

	/* Transfers: StarPU (without FxT) reports totals per bus. */
	for (int b = 0; b < nbus; b++)
		fprintf(f,
			"{\"name\":\"bus "
			"%d->%d\",\"cat\":\"transfer\",\"ph\":\"C\",\"pid\":0,\"ts\":0,"
			"\"args\":{\"bytes\":%lld,\"transfers\":%d,\"from\":\"%s\",\"to\":\"%s\"}},"
			"\n",
			bus[b].src, bus[b].dst, bus[b].bytes, bus[b].count,
			tsr__bus_node_kind(bus[b].src), tsr__bus_node_kind(bus[b].dst));

	fprintf(f,
		"{\"name\":\"tessera\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"tessera\","
		"\"tasks\":%zu}}\n]}\n",
		nevs);
	return tsr__close_written(f, file, "trace file");
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

/* Before starpu_shutdown (profiling info is still readable); everything is idle. */
int tsr__obs_fini(const tsr_config_t *c)
{
	struct bus_row bus[TSR_MAX_BUS];
	int nbus = tsr__obs_on ? tsr__bus_read(bus, TSR_MAX_BUS) : 0;
	int rc = TSR_OK;
	char path[4096];

	if (c->trace_file)
		rc = write_trace(rank_path(c->trace_file, path, sizeof path), bus, nbus);
	if (c->dag_file) {
		int rc2 = tsr__dag_write(rank_path(c->dag_file, path, sizeof path));
		rc = rc ? rc : rc2;
	}
	if (c->stats)
		tsr__stats_print(bus, nbus);

	free(evs);
	evs = NULL;
	nevs = capevs = 0;
	tsr__stats_free();
	tsr__dag_free();
	tsr__obs_on = 0;
	return rc;
}