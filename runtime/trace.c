/* trace.c: what the runtime did. Task timings come from StarPU's profiling info in a callback
 * (TSR_TRACE as Chrome trace events, TSR_STATS as a table); the dependency graph is derived by
 * Tessera itself from the accesses it submits (TSR_DAG as Graphviz dot). The same graph, with
 * costs from the perf models, feeds the critical-path policy (bottom levels kept up to date as
 * tasks are added, so a ready task's priority is its longest known path to the end). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"

struct ev { const struct tsr_task *task; int pdim; int64_t point[3]; int worker; double start, end; };
struct dnode {
	const struct tsr_task *task;
	int pdim;
	int64_t point[3];
	double cost, blevel;
	int done;
	int *pred, npred, cappred;
};
struct dedge { int from, to; char label[160]; };
struct dacc { int task; long seq; tsr_box_t box; tsr_privilege_t priv; };
/* Per root field: writes (and reductions) and reads since, kept apart so that a read only scans
 * the writes; a read-only field (a matrix) then costs nothing however long the run. */
struct daccs { struct dacc *w, *r; int nw, capw, nr, capr; long seq; };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ev *evs;
static size_t nevs, capevs;
static tsr_task_stats_t *rows;
static int nrows, caprows;
static struct dnode *nodes;
static int nnodes, capnodes;
static struct dedge *edges;
static int nedges, capedges;
static double t0;
int tsr__obs_on, tsr__dag_on, tsr__critpath_on;

#define GROW(arr, n, cap, init) do { if ((n) == (cap)) { size_t nc_ = (cap) ? 2 * (size_t)(cap) : (init); \
	void *np_ = realloc((arr), nc_ * sizeof *(arr)); if (!np_) abort(); (arr) = np_; (cap) = nc_; } } while (0)

static double ts_us(const struct timespec *t)
{
	return t->tv_sec * 1e6 + t->tv_nsec / 1e3;
}

void tsr__obs_init(const tsr_config_t *c, int critpath)
{
	tsr__obs_on = c->trace_file || c->stats;
	tsr__dag_on = c->dag_file != NULL || critpath;
	tsr__critpath_on = critpath;
	if (tsr__obs_on)
		starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	t0 = ts_us(&now);
}

static void stats_add(const struct tsr_task *t, int kind, double us)
{
	int i;
	for (i = 0; i < nrows; i++)
		if (rows[i].kind == kind && !strcmp(rows[i].name, t->name))
			break;
	if (i == nrows) {
		GROW(rows, nrows, caprows, 16);
		memset(&rows[i], 0, sizeof rows[i]);
		snprintf(rows[i].name, sizeof rows[i].name, "%s", t->name);
		rows[i].kind = kind;
		nrows++;
	}
	rows[i].count++;
	rows[i].total_us += us;
}

/* Task callback (worker thread): record the profiling info of a Tessera task. */
static void obs_callback(void *arg)
{
	struct starpu_task *task = starpu_task_get_current();
	struct tsr_ctx *ctx = task ? task->cl_arg : NULL;
	if (ctx && ctx->dag_id >= 0 && tsr__critpath_on) {
		pthread_mutex_lock(&lock);
		nodes[ctx->dag_id].done = 1;
		pthread_mutex_unlock(&lock);
	}
	if (!ctx || !task->profiling_info || !tsr__obs_on)
		return;
	struct starpu_profiling_task_info *pi = task->profiling_info;
	double s = ts_us(&pi->start_time), e = ts_us(&pi->end_time);
	int kind = starpu_worker_get_type(pi->workerid) == STARPU_CUDA_WORKER ? TSR_WORKER_CUDA : TSR_WORKER_CPU;
	pthread_mutex_lock(&lock);
	GROW(evs, nevs, capevs, 1024);
	struct ev *v = &evs[nevs++];
	v->task = ctx->task;
	v->pdim = ctx->point_dim;
	memcpy(v->point, ctx->point, sizeof v->point);
	v->worker = pi->workerid;
	v->start = s;
	v->end = e;
	stats_add(ctx->task, kind, e - s);
	pthread_mutex_unlock(&lock);
}

/* At submission of a point task. */
void tsr__obs_task(struct starpu_task *task, struct tsr_ctx *ctx)
{
	if (tsr__obs_on || tsr__critpath_on)
		task->callback_func = obs_callback;
}

int tsr__dag_task(const struct tsr_task *t, int pdim, const int64_t point[3])
{
	pthread_mutex_lock(&lock);
	GROW(nodes, nnodes, capnodes, 256);
	struct dnode *d = &nodes[nnodes];
	memset(d, 0, sizeof *d);
	d->task = t;
	d->pdim = pdim;
	memcpy(d->point, point, sizeof d->point);
	d->cost = 1.0;
	d->blevel = 1.0;
	int id = nnodes++;
	pthread_mutex_unlock(&lock);
	return id;
}

/* Cost of a node from the perf model of its task on the first worker's architecture. */
void tsr__dag_set_cost(int id, struct starpu_task *task)
{
	if (!tsr__critpath_on)
		return;
	double c = starpu_task_expected_length(task, starpu_worker_get_perf_archtype(0, task->sched_ctx), 0);
	pthread_mutex_lock(&lock);
	if (!isnan(c) && c > 0) {
		nodes[id].blevel += c - nodes[id].cost;
		nodes[id].cost = c;
	}
	pthread_mutex_unlock(&lock);
}

/* Raise the bottom levels of the not-yet-finished ancestors of `id`. */
static void propagate(int id)
{
	struct dnode *d = &nodes[id];
	for (int i = 0; i < d->npred; i++) {
		struct dnode *p = &nodes[d->pred[i]];
		if (p->done)
			continue;
		double b = p->cost + d->blevel;
		if (b > p->blevel) {
			p->blevel = b;
			propagate(d->pred[i]);
		}
	}
}

double tsr__dag_priority(int id)
{
	pthread_mutex_lock(&lock);
	double b = id >= 0 && id < nnodes ? nodes[id].blevel : 0;
	pthread_mutex_unlock(&lock);
	return b;
}

static void add_edge(int from, int to, const char *label)
{
	for (int i = nedges - 1; i >= 0 && edges[i].to == to; i--)
		if (edges[i].from == from && !strcmp(edges[i].label, label))
			return;
	GROW(edges, nedges, capedges, 256);
	edges[nedges].from = from;
	edges[nedges].to = to;
	snprintf(edges[nedges].label, sizeof edges[nedges].label, "%s", label);
	nedges++;
	if (tsr__critpath_on) {
		struct dnode *d = &nodes[to];
		GROW(d->pred, d->npred, d->cappred, 4);
		d->pred[d->npred++] = from;
	}
}

/* Task `id` accesses field f of subregion s with privilege priv: edges from earlier conflicting
 * accesses to overlapping data, newest first, back to the newest write that covers the box. */
void tsr__dag_access(int id, const struct tsr_region *s, int f, tsr_privilege_t priv)
{
	struct tsr_node *root = &s->root->nodes[f];
	struct daccs *a = root->dag;
	if (!a) {
		a = calloc(1, sizeof *a);
		if (!a)
			abort();
		root->dag = a;
	}
	pthread_mutex_lock(&lock);
	int writes = priv != TSR_READ;
	char label[160];
	long cover = -1;   /* seq of the newest covering plain write */
	for (int i = a->nw - 1; i >= 0; i--) {
		struct dacc *e = &a->w[i];
		if (e->task == id || !tsr__box_overlap(e->box, s->bounds))
			continue;
		if (!(TSR_PRIV_IS_REDUCE(e->priv) && e->priv == priv)) {   /* one operator: no order */
			snprintf(label, sizeof label, "%s.%s %s->%s", s->name, s->fields[f].name, tsr__priv_name(e->priv), tsr__priv_name(priv));
			add_edge(e->task, id, label);
		}
		if (!TSR_PRIV_IS_REDUCE(e->priv) && tsr_box_contains(e->box, s->bounds)) {
			cover = e->seq;
			break;
		}
	}
	if (writes)
		for (int i = a->nr - 1; i >= 0; i--) {
			struct dacc *e = &a->r[i];
			if (e->seq < cover)
				break;
			if (e->task == id || !tsr__box_overlap(e->box, s->bounds))
				continue;
			snprintf(label, sizeof label, "%s.%s READ->%s", s->name, s->fields[f].name, tsr__priv_name(priv));
			add_edge(e->task, id, label);
		}
	if (writes && !TSR_PRIV_IS_REDUCE(priv)) {
		/* accesses this write covers are superseded */
		int k = 0;
		for (int i = 0; i < a->nw; i++)
			if (!tsr_box_contains(s->bounds, a->w[i].box))
				a->w[k++] = a->w[i];
		a->nw = k;
		k = 0;
		for (int i = 0; i < a->nr; i++)
			if (!tsr_box_contains(s->bounds, a->r[i].box))
				a->r[k++] = a->r[i];
		a->nr = k;
	}
	struct dacc *e;
	if (writes) {
		GROW(a->w, a->nw, a->capw, 8);
		e = &a->w[a->nw++];
	} else {
		GROW(a->r, a->nr, a->capr, 8);
		e = &a->r[a->nr++];
	}
	e->task = id;
	e->seq = a->seq++;
	e->box = s->bounds;
	e->priv = priv;
	if (tsr__critpath_on)
		propagate(id);
	pthread_mutex_unlock(&lock);
}

void tsr__dag_node_free(struct tsr_node *n)
{
	struct daccs *a = n->dag;
	if (a) {
		free(a->w);
		free(a->r);
		free(a);
		n->dag = NULL;
	}
}

static void point_label(int pdim, const int64_t p[3], char *buf, size_t n)
{
	if (pdim == 0)
		buf[0] = 0;
	else
		tsr__color_str(pdim, p, buf, n);
}

/* Write s with the characters that JSON strings and dot labels cannot hold bare escaped. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
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
			return tsr__err(TSR_EINVAL, "tsr_init: %s '%s' cannot be written: %s", kind, path, strerror(errno));
		return TSR_OK;
	}
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == dir)
		dir[1] = 0;   /* a file in / */
	else
		*slash = 0;
	if (access(dir, W_OK | X_OK))
		return tsr__err(TSR_EINVAL, "tsr_init: %s '%s' cannot be created: directory '%s': %s", kind, path, dir,
		                strerror(errno));
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

/* fclose that reports a write error (a full disk) as one naming the file. */
static int close_written(FILE *f, const char *file, const char *kind)
{
	int bad = ferror(f);
	if (fclose(f) || bad)
		return tsr__err(TSR_EINVAL, "tsr_finalize: %s '%s' could not be written completely", kind, file);
	return TSR_OK;
}

/* StarPU's transfer totals per bus (reading them resets them, so obs_fini reads them once). */
#define TSR_MAX_BUS 64
struct bus_row { int src, dst; long long bytes; int count; };

static int read_bus(struct bus_row *out, int max)
{
	int nbus = starpu_bus_get_count(), n = 0;
	for (int b = 0; b < nbus && n < max; b++) {
		struct starpu_profiling_bus_info bi;
		if (starpu_bus_get_profiling_info(b, &bi))
			continue;
		out[n].src = starpu_bus_get_src(b);
		out[n].dst = starpu_bus_get_dst(b);
		out[n].bytes = bi.transferred_bytes;
		out[n].count = bi.transfer_count;
		n++;
	}
	return n;
}

static const char *node_kind(int node)
{
	return starpu_node_get_kind((unsigned)node) == STARPU_CPU_RAM ? "host" : "gpu";
}

static int write_trace(const char *file, const struct bus_row *bus, int nbus)
{
	FILE *f = fopen(file, "w");
	if (!f)
		return tsr__err(TSR_EINVAL, "tsr_finalize: cannot write trace file '%s': %s", file, strerror(errno));
	double base = nevs ? evs[0].start : 0;
	for (size_t i = 0; i < nevs; i++)
		if (evs[i].start < base)
			base = evs[i].start;
	fprintf(f, "{\"traceEvents\":[\n");
	int nw = starpu_worker_get_count();
	for (int w = 0; w < nw; w++) {
		char name[64];
		starpu_worker_get_name(w, name, sizeof name);
		fprintf(f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,\"args\":{\"name\":\"", w);
		put_escaped(f, name);
		fprintf(f, "\"}},\n");
	}
	for (size_t i = 0; i < nevs; i++) {
		char pl[64];
		point_label(evs[i].pdim, evs[i].point, pl, sizeof pl);
		fprintf(f, "{\"name\":\"");
		put_escaped(f, evs[i].task->name);
		fprintf(f, "%s\",\"cat\":\"task\",\"ph\":\"X\",\"pid\":0,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"task\":\"", pl,
		        evs[i].worker, evs[i].start - base, evs[i].end - evs[i].start);
		put_escaped(f, evs[i].task->name);
		fprintf(f, "\",\"color\":\"%s\",\"worker\":%d}},\n", pl, evs[i].worker);
	}
	/* Transfers: StarPU (without FxT) reports totals per bus. */
	for (int b = 0; b < nbus; b++)
		fprintf(f, "{\"name\":\"bus %d->%d\",\"cat\":\"transfer\",\"ph\":\"C\",\"pid\":0,\"ts\":0,"
		        "\"args\":{\"bytes\":%lld,\"transfers\":%d,\"from\":\"%s\",\"to\":\"%s\"}},\n", bus[b].src,
		        bus[b].dst, bus[b].bytes, bus[b].count, node_kind(bus[b].src), node_kind(bus[b].dst));
	fprintf(f, "{\"name\":\"tessera\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":\"tessera\",\"tasks\":%zu}}\n]}\n", nevs);
	return close_written(f, file, "trace file");
}

static int write_dag(const char *file)
{
	FILE *f = fopen(file, "w");
	if (!f)
		return tsr__err(TSR_EINVAL, "tsr_finalize: cannot write graph file '%s': %s", file, strerror(errno));
	fprintf(f, "digraph tessera {\n  node [shape=box];\n");
	for (int i = 0; i < nnodes; i++) {
		char pl[64];
		point_label(nodes[i].pdim, nodes[i].point, pl, sizeof pl);
		fprintf(f, "  t%d [label=\"%d: ", i, i);
		put_escaped(f, nodes[i].task->name);
		fprintf(f, "%s\"];\n", pl);
	}
	for (int i = 0; i < nedges; i++) {
		fprintf(f, "  t%d -> t%d [label=\"", edges[i].from, edges[i].to);
		put_escaped(f, edges[i].label);
		fprintf(f, "\"];\n");
	}
	fprintf(f, "}\n");
	return close_written(f, file, "graph file");
}

/* Bytes moved between host and GPUs over the run: what a GPU-resident app keeps near zero. */
static void print_bus(const struct bus_row *bus, int nbus)
{
	long long h2d = 0, d2h = 0, d2d = 0;
	for (int b = 0; b < nbus; b++) {
		int src_host = starpu_node_get_kind((unsigned)bus[b].src) == STARPU_CPU_RAM;
		int dst_host = starpu_node_get_kind((unsigned)bus[b].dst) == STARPU_CPU_RAM;
		if (src_host && !dst_host)
			h2d += bus[b].bytes;
		else if (!src_host && dst_host)
			d2h += bus[b].bytes;
		else
			d2d += bus[b].bytes;
		if (bus[b].count)
			fprintf(stderr, "tessera stats: bus %d->%d (%s->%s) %lld bytes in %d transfers\n", bus[b].src, bus[b].dst,
			        node_kind(bus[b].src), node_kind(bus[b].dst), bus[b].bytes, bus[b].count);
	}
	fprintf(stderr, "tessera stats: bytes host->gpu %lld gpu->host %lld gpu->gpu %lld\n", h2d, d2h, d2d);
}

static void print_stats(void)
{
	fprintf(stderr, "tessera stats: %-24s %-5s %10s %14s %12s\n", "task", "kind", "count", "total (ms)", "mean (us)");
	for (int i = 0; i < nrows; i++)
		fprintf(stderr, "tessera stats: %-24s %-5s %10ld %14.3f %12.2f\n", rows[i].name,
		        rows[i].kind == TSR_WORKER_CUDA ? "cuda" : "cpu", rows[i].count, rows[i].total_us / 1e3,
		        rows[i].total_us / rows[i].count);
	int nw = starpu_worker_get_count();
	double tot = 0, exec = 0;
	for (int w = 0; w < nw; w++) {
		struct starpu_profiling_worker_info wi;
		if (starpu_profiling_worker_get_info(w, &wi))
			continue;
		tot += ts_us(&wi.total_time);
		exec += ts_us(&wi.executing_time);
	}
	if (tot > 0)
		fprintf(stderr, "tessera stats: idle fraction %.3f over %d workers\n", 1.0 - exec / tot, nw);
}

int tsr_stats_get(tsr_task_stats_t *out, int max)
{
	TSR_REQUIRE_INIT("tsr_stats_get");
	if (!out || max < 0)
		return tsr__err(TSR_EINVAL, "tsr_stats_get: null output or negative count");
	pthread_mutex_lock(&lock);
	int n = nrows < max ? nrows : max;
	if (n > 0)   /* rows is NULL before the first task: memcpy's arguments must be valid even for 0 bytes */
		memcpy(out, rows, n * sizeof *out);
	pthread_mutex_unlock(&lock);
	return n;
}

/* Before starpu_shutdown (profiling info is still readable); everything is idle. */
int tsr__obs_fini(const tsr_config_t *c)
{
	struct bus_row bus[TSR_MAX_BUS];
	int nbus = tsr__obs_on ? read_bus(bus, TSR_MAX_BUS) : 0;
	int rc = TSR_OK;
	if (c->trace_file)
		rc = write_trace(c->trace_file, bus, nbus);
	if (c->dag_file) {
		int rc2 = write_dag(c->dag_file);
		rc = rc ? rc : rc2;
	}
	if (c->stats) {
		print_stats();
		print_bus(bus, nbus);
	}
	free(evs); evs = NULL; nevs = capevs = 0;
	free(rows); rows = NULL; nrows = caprows = 0;
	for (int i = 0; i < nnodes; i++)
		free(nodes[i].pred);
	free(nodes); nodes = NULL; nnodes = capnodes = 0;
	free(edges); edges = NULL; nedges = capedges = 0;
	tsr__obs_on = tsr__dag_on = tsr__critpath_on = 0;
	return rc;
}
