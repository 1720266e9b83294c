/* timeline.c: TSR_TIMELINE's file, in the Trace Event Format (JSON) that Perfetto and
 * chrome://tracing read. One process per rank (pid rank + 1), named; one named thread track for
 * the host thread, one per worker, one per bus (the data tasks fetched over it); slices ("X") on
 * them, split over numbered overlap tracks where two would overlap on one track (Perfetto nests
 * the slices of a track strictly); StarPU-MPI transfers as async slices ("b"/"e", which may
 * overlap: many are in flight at once); counters ("C") with numbers only; dependence arrows
 * ("s"/"f" flow events) from the task graph when asked for. */
#define _GNU_SOURCE /* program_invocation_short_name */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "timeline.h"

/* A thread track (its tid is its index + 1) and its lanes: lane 0 is the track itself, lane k
 * its k-th overlap track, each with its tid and the end of its last slice. */
struct lane {
	int tid;
	int64_t end;
};

struct track {
	char name[192];
	struct lane *lanes;
	int nlanes, caplanes;
};

enum slice_kind { SL_TASK, SL_HOST, SL_XFER };

struct slice {
	int track, tid;
	int kind;
	size_t idx;
	int64_t start, end;
};

struct writer {
	FILE *f;
	const struct tl_run *run;
	int pid;
	int first; /* no event written yet */
	struct track *tracks;
	int ntracks, captracks;
	int next_tid;
	struct slice *sl;
	size_t nsl;
	size_t *task_slice; /* each task's slice */
	int *node_task;     /* each graph node's task, or -1 */
	int nnodes;
	long flow_id;
};

/* ------------------------------------------------------------------ output */

static void next_event(struct writer *w)
{
	fputs(w->first ? "\n" : ",\n", w->f);
	w->first = 0;
}

/* A time in microseconds, exact to the nanosecond, from tsr_init. */
static void put_ts(struct writer *w, const char *key, int64_t ns)
{
	int64_t t = ns - w->run->t0;
	if (t < 0)
		t = 0;
	fprintf(w->f, "\"%s\":%lld.%03d", key, (long long)(t / 1000), (int)(t % 1000));
}

static void put_str(struct writer *w, const char *key, const char *s)
{
	fprintf(w->f, "\"%s\":\"", key);
	tsr__put_escaped(w->f, s);
	fputc('"', w->f);
}

/* ------------------------------------------------------------------ tracks */

/* The track called name (made on first use). */
static int track_of(struct writer *w, const char *name)
{
	for (int i = 0; i < w->ntracks; i++)
		if (!strcmp(w->tracks[i].name, name))
			return i;

	TSR_GROW(w->tracks, w->ntracks, w->captracks, 16);
	struct track *t = &w->tracks[w->ntracks];
	memset(t, 0, sizeof *t);
	snprintf(t->name, sizeof t->name, "%s", name);
	return w->ntracks++;
}

static const char *kind_name(int worker)
{
	enum starpu_worker_archtype t = starpu_worker_get_type(worker);
	return t == STARPU_CUDA_WORKER ? "CUDA" : t == STARPU_OPENCL_WORKER ? "OpenCL" : "CPU";
}

/* Tracks 0 (the host thread) and 1 + w (worker w), present even when idle. */
static void fixed_tracks(struct writer *w)
{
	track_of(w, "host thread (the one that called tsr_init)");

	int nw = (int)starpu_worker_get_count();
	for (int k = 0; k < nw; k++) {
		char node[96], name[192];
		tsr__node_label((int)starpu_worker_get_memory_node((unsigned)k), node, sizeof node);
		snprintf(name, sizeof name, "worker %d: %s %d, %s", k, kind_name(k),
			 starpu_worker_get_devid(k), node);
		track_of(w, name);
	}
}

static int xfer_track(struct writer *w, const struct tl_xfer *x)
{
	char a[64], b[64], name[192];
	tsr__node_label(x->src, a, sizeof a);
	tsr__node_label(x->dst, b, sizeof b);

	if (x->kind == TL_COPY)
		snprintf(name, sizeof name, "copies in %s", a);
	else
		snprintf(name, sizeof name, "bus %s -> %s", a, b);
	return track_of(w, name);
}

/* ------------------------------------------------------------------ slices */

static void add_slice(struct writer *w, int track, int kind, size_t idx, int64_t start, int64_t end)
{
	struct slice *s = &w->sl[w->nsl++];
	s->track = track;
	s->tid = 0;
	s->kind = kind;
	s->idx = idx;
	s->start = start;
	s->end = end > start + 1 ? end : start + 2; /* at least 2 ns: arrows bind inside */
}

static int gather_slices(struct writer *w)
{
	const struct tl_run *r = w->run;
	w->sl = malloc((r->ntasks + r->nhost + r->nxfers + 1) * sizeof *w->sl);
	if (!w->sl)
		return TSR_ENOMEM;

	for (size_t i = 0; i < r->ntasks; i++)
		add_slice(w, 1 + r->tasks[i].worker, SL_TASK, i, r->tasks[i].start,
			  r->tasks[i].end);
	for (size_t i = 0; i < r->nhost; i++)
		add_slice(w, 0, SL_HOST, i, r->host[i].start, r->host[i].end);
	for (size_t i = 0; i < r->nxfers; i++)
		add_slice(w, xfer_track(w, &r->xfers[i]), SL_XFER, i, r->xfers[i].start,
			  r->xfers[i].end);
	tsr__assert(w->nsl == r->ntasks + r->nhost + r->nxfers); /* the room allocated */
	return TSR_OK;
}

/* By track, then time (lanes are given in that order). */
static int track_cmp(const void *x, const void *y)
{
	const struct slice *a = x, *b = y;
	if (a->track != b->track)
		return a->track < b->track ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* By time, then track (the file's order: a reader that takes events in turn sees the run in
 * order, as apps/bench/policies.sh does). */
static int time_cmp(const void *x, const void *y)
{
	const struct slice *a = x, *b = y;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->track < b->track ? -1 : a->track > b->track;
}

/* The tid of the first lane of track k free at `start` (a new lane if none is), which then
 * holds the slice until `end`. */
static int lane_for(struct writer *w, int k, int64_t start, int64_t end)
{
	struct track *t = &w->tracks[k];
	int l = 0;
	while (l < t->nlanes && t->lanes[l].end > start)
		l++;

	if (l == t->nlanes) {
		TSR_GROW(t->lanes, t->nlanes, t->caplanes, 4);
		t->lanes[l].tid = l ? w->next_tid++ : k + 1;
		t->nlanes++;
	}

	t->lanes[l].end = end;
	return t->lanes[l].tid;
}

/* Tids: the host thread 1, worker w 2 + w, the other tracks after, then the overlap lanes. The
 * slices end in time order. */
static void assign_tids(struct writer *w)
{
	qsort(w->sl, w->nsl, sizeof *w->sl, track_cmp);
	w->next_tid = w->ntracks + 1;
	for (size_t i = 0; i < w->nsl; i++)
		w->sl[i].tid = lane_for(w, w->sl[i].track, w->sl[i].start, w->sl[i].end);

	qsort(w->sl, w->nsl, sizeof *w->sl, time_cmp);
	for (size_t i = 0; i < w->nsl; i++)
		if (w->sl[i].kind == SL_TASK)
			w->task_slice[w->sl[i].idx] = i;
}

/* ---------------------------------------------------------------- metadata */

static void thread_meta(struct writer *w, int tid, const char *name, int lane)
{
	next_event(w);
	fprintf(w->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{",
		w->pid, tid);
	put_str(w, "name", name);
	if (lane)
		fprintf(w->f, ",\"overlap\":%d", lane);
	fprintf(w->f, "}}");

	next_event(w);
	fprintf(w->f,
		"{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
		"\"args\":{\"sort_index\":%d}}",
		w->pid, tid, tid);
}

static void write_metadata(struct writer *w)
{
	char name[160];
	if (tsr__dist.on)
		snprintf(name, sizeof name, "tessera: %s (rank %d of %d)",
			 program_invocation_short_name, tsr__dist.rank, tsr__dist.size);
	else
		snprintf(name, sizeof name, "tessera: %s", program_invocation_short_name);

	next_event(w);
	fprintf(w->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{", w->pid);
	put_str(w, "name", name);
	fprintf(w->f, "}}");
	next_event(w);
	fprintf(w->f,
		"{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":%d,"
		"\"args\":{\"sort_index\":%d}}",
		w->pid, w->pid);

	for (int i = 0; i < w->ntracks; i++) {
		struct track *t = &w->tracks[i];
		thread_meta(w, i + 1, t->name, 0); /* named even when idle */

		for (int l = 1; l < t->nlanes; l++) {
			char lane[224];
			snprintf(lane, sizeof lane, "%s (overlap %d)", t->name, l);
			thread_meta(w, t->lanes[l].tid, lane, l);
		}
	}
}

/* ------------------------------------------------------------------ events */

static void slice_head(struct writer *w, const struct slice *s, const char *cat)
{
	next_event(w);
	fprintf(w->f, "{\"ph\":\"X\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,", cat, w->pid, s->tid);
	put_ts(w, "ts", s->start);
	fprintf(w->f, ",\"dur\":%lld.%03d,", (long long)((s->end - s->start) / 1000),
		(int)((s->end - s->start) % 1000));
}

static void task_slice(struct writer *w, const struct slice *s)
{
	const struct tl_task *t = &w->run->tasks[s->idx];
	char pl[64];
	tsr__point_label(t->pdim, t->point, pl, sizeof pl);

	slice_head(w, s, t->internal ? "tessera" : "task");
	fprintf(w->f, "\"name\":\"");
	tsr__put_escaped(w->f, t->name);
	fprintf(w->f, "%s\",\"args\":{", pl);
	put_str(w, "task", t->name);
	fprintf(w->f, ",\"color\":\"%s\",\"worker\":%d,\"launch\":%d", pl, t->worker,
		t->launch + 1);
	if (t->dag_id >= 0)
		fprintf(w->f, ",\"graph_node\":%d", t->dag_id);
	fprintf(w->f, "}}");
}

static void host_slice(struct writer *w, const struct slice *s)
{
	const struct tl_host *h = &w->run->host[s->idx];
	slice_head(w, s, "launch");
	fprintf(w->f, "\"name\":\"launch ");
	tsr__put_escaped(w->f, h->name);
	fprintf(w->f, "\",\"args\":{");
	put_str(w, "task", h->name);
	fprintf(w->f, ",\"launch\":%d}}", h->launch + 1);
}

static void xfer_slice(struct writer *w, const struct slice *s)
{
	const struct tl_xfer *x = &w->run->xfers[s->idx];
	const struct tl_task *t = &w->run->tasks[x->task];
	char pl[64];
	tsr__point_label(t->pdim, t->point, pl, sizeof pl);

	slice_head(w, s, "transfer");
	fprintf(w->f, "\"name\":\"%s ", x->kind == TL_COPY ? "copy by" : "fetch for");
	tsr__put_escaped(w->f, t->name);
	fprintf(w->f,
		"%s\",\"args\":{\"bytes\":%lld,\"src_node\":%d,\"dst_node\":%d,\"worker\":%d}}", pl,
		x->bytes, x->src, x->dst, t->worker);
}

static void write_slices(struct writer *w)
{
	for (size_t i = 0; i < w->nsl; i++) {
		const struct slice *s = &w->sl[i];
		if (s->kind == SL_TASK)
			task_slice(w, s);
		else if (s->kind == SL_HOST)
			host_slice(w, s);
		else
			xfer_slice(w, s);
	}
}

/* A StarPU-MPI transfer, from its posting to its completion (waiting for its data or for its
 * match included), as an async slice: "send to rank 1" begins, then ends, under one id. */
static void mpi_event(struct writer *w, const struct tsr_mpi_xfer *x, long id, int end)
{
	next_event(w);
	const char *dir = x->send ? "send to rank" : "receive from rank";
	fprintf(w->f, "{\"ph\":\"%c\",\"cat\":\"mpi\",\"name\":\"%s %d\",", end ? 'e' : 'b', dir,
		x->peer);
	fprintf(w->f, "\"id\":%ld,\"pid\":%d,\"tid\":1,", id, w->pid);
	put_ts(w, "ts", end ? (x->done > x->posted ? x->done : x->posted + 1) : x->posted);
	if (!end)
		fprintf(w->f, ",\"args\":{\"bytes\":%lld,\"peer\":%d}", x->bytes, x->peer);
	fputc('}', w->f);
}

static void write_mpi(struct writer *w)
{
	for (size_t i = 0; i < w->run->nmpi; i++) {
		mpi_event(w, &w->run->mpi[i], (long)i + 1, 0);
		mpi_event(w, &w->run->mpi[i], (long)i + 1, 1);
	}
}

/* ---------------------------------------------------------------- counters */

/* One step of a counter: at time t, value += d0 (and a second series += d1). */
struct step {
	int64_t t;
	long long d0, d1;
};

static int step_cmp(const void *x, const void *y)
{
	const struct step *a = x, *b = y;
	return a->t < b->t ? -1 : a->t > b->t;
}

/* A counter from its steps: one sample per distinct time, series k0 (and k1 unless NULL). */
static void write_counter(struct writer *w, const char *name, struct step *st, size_t n,
			  const char *k0, const char *k1)
{
	qsort(st, n, sizeof *st, step_cmp);
	long long v0 = 0, v1 = 0;

	for (size_t i = 0; i < n; i++) {
		v0 += st[i].d0;
		v1 += st[i].d1;
		if (i + 1 < n && st[i + 1].t == st[i].t)
			continue;

		next_event(w);
		fprintf(w->f, "{\"ph\":\"C\",\"pid\":%d,", w->pid);
		put_str(w, "name", name);
		fputc(',', w->f);
		put_ts(w, "ts", st[i].t);
		fprintf(w->f, ",\"args\":{\"%s\":%lld", k0, v0);
		if (k1)
			fprintf(w->f, ",\"%s\":%lld", k1, v1);
		fprintf(w->f, "}}");
	}
}

/* Tasks waiting (submitted, not started) and running, from StarPU's profiling of each. */
static void tasks_counter(struct writer *w)
{
	const struct tl_run *r = w->run;
	struct step *st = malloc((3 * r->ntasks + 1) * sizeof *st);
	if (!st)
		return;

	size_t n = 0;
	st[n++] = (struct step){r->t0, 0, 0};
	for (size_t i = 0; i < r->ntasks; i++) {
		const struct tl_task *t = &r->tasks[i];
		int64_t sub = t->submit > r->t0 && t->submit <= t->start ? t->submit : t->start;
		st[n++] = (struct step){sub, 1, 0};
		st[n++] = (struct step){t->start, -1, 1};
		st[n++] = (struct step){t->end > t->start ? t->end : t->start + 1, 0, -1};
	}
	tsr__assert(n == 3 * r->ntasks + 1); /* the room allocated */

	write_counter(w, "tasks", st, n, "waiting", "running");
	free(st);
}

/* Per bus: the bytes the tasks' fetches moved so far (the transfer slices' sum). */
static void fetch_counters(struct writer *w)
{
	const struct tl_run *r = w->run;
	struct step *st = malloc((r->nxfers + 1) * sizeof *st);
	char *done = calloc(r->nxfers + 1, 1);

	for (size_t i = 0; st && done && i < r->nxfers; i++) {
		const struct tl_xfer *a = &r->xfers[i];
		if (done[i] || a->kind != TL_FETCH)
			continue;

		size_t n = 0;
		st[n++] = (struct step){r->t0, 0, 0};
		for (size_t j = i; j < r->nxfers; j++) {
			const struct tl_xfer *b = &r->xfers[j];
			if (b->kind == TL_FETCH && b->src == a->src && b->dst == a->dst) {
				st[n++] = (struct step){b->end, b->bytes, 0};
				done[j] = 1;
			}
		}

		char name[96];
		snprintf(name, sizeof name, "bytes fetched by tasks, bus %d->%d", a->src, a->dst);
		write_counter(w, name, st, n, "bytes", NULL);
	}

	free(st);
	free(done);
}

/* StarPU's own totals per bus (every transfer, prefetches and write-backs included): 0 at the
 * start, the total at the end. */
static void bus_counters(struct writer *w, int64_t end)
{
	const struct tl_run *r = w->run;
	for (int b = 0; b < r->nbus; b++) {
		char name[96];
		struct step st[2] = {{r->t0, 0, 0},
				     {end, r->bus[b].bytes, (long long)r->bus[b].count}};
		snprintf(name, sizeof name, "StarPU bus %d->%d total", r->bus[b].src,
			 r->bus[b].dst);
		write_counter(w, name, st, 2, "bytes", "transfers");
	}
}

/* StarPU-MPI: bytes sent and received so far, at each transfer's completion. */
static void mpi_counters(struct writer *w)
{
	const struct tl_run *r = w->run;
	struct step *st = malloc((r->nmpi + 1) * sizeof *st);
	if (!st || !r->nmpi) {
		free(st);
		return;
	}

	size_t n = 0;
	st[n++] = (struct step){r->t0, 0, 0};
	for (size_t i = 0; i < r->nmpi; i++)
		st[n++] = (struct step){r->mpi[i].done, r->mpi[i].send ? r->mpi[i].bytes : 0,
					r->mpi[i].send ? 0 : r->mpi[i].bytes};
	write_counter(w, "MPI bytes", st, n, "sent", "received");
	free(st);
}

static int64_t last_end(const struct writer *w)
{
	int64_t end = w->run->t0;
	for (size_t i = 0; i < w->nsl; i++)
		if (w->sl[i].end > end)
			end = w->sl[i].end;
	return end;
}

/* ------------------------------------------------------------------- arrows */

/* One dependence: from the end of the earlier task's slice to the start of the later one's, each
 * end 1 ns inside its slice, which it binds to (Perfetto binds "s" to the slice open on its
 * track, "f" with "bp":"e" to the enclosing one; at a slice's very start or end that would
 * depend on the order of events with equal times). */
static void flow(int from, int to, void *arg)
{
	struct writer *w = arg;
	if (from >= w->nnodes || to >= w->nnodes || w->node_task[from] < 0 || w->node_task[to] < 0)
		return;

	const struct slice *a = &w->sl[w->task_slice[w->node_task[from]]];
	const struct slice *b = &w->sl[w->task_slice[w->node_task[to]]];
	long id = ++w->flow_id;

	next_event(w);
	fprintf(w->f,
		"{\"ph\":\"s\",\"name\":\"dependence\",\"cat\":\"dependence\","
		"\"id\":%ld,\"pid\":%d,\"tid\":%d,",
		id, w->pid, a->tid);
	put_ts(w, "ts", a->end - 1);
	fprintf(w->f, "}");

	next_event(w);
	fprintf(w->f,
		"{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"dependence\",\"cat\":\"dependence\","
		"\"id\":%ld,\"pid\":%d,\"tid\":%d,",
		id, w->pid, b->tid);
	put_ts(w, "ts", b->start + 1);
	fprintf(w->f, "}");
}

static void write_flows(struct writer *w)
{
	w->nnodes = tsr__dag_count();
	w->node_task = malloc(((size_t)w->nnodes + 1) * sizeof *w->node_task);
	if (!w->node_task)
		return;

	for (int i = 0; i < w->nnodes; i++)
		w->node_task[i] = -1;
	for (size_t i = 0; i < w->run->ntasks; i++) {
		int id = w->run->tasks[i].dag_id;
		if (id >= 0 && id < w->nnodes)
			w->node_task[id] = (int)i;
	}

	tsr__dag_pairs(flow, w);
}

/* ------------------------------------------------------------------ the file */

static void write_events(struct writer *w)
{
	fprintf(w->f, "{\"traceEvents\":[");
	write_metadata(w);
	write_slices(w);
	write_mpi(w);
	tasks_counter(w);
	fetch_counters(w);
	bus_counters(w, last_end(w));
	mpi_counters(w);
	if (w->run->flows)
		write_flows(w);

	fprintf(w->f,
		"\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"producer\":\"tessera %d.%d\","
		"\"clock\":\"StarPU's, microseconds from tsr_init\",\"rank\":%d,\"ranks\":%d,"
		"\"tasks\":%zu,\"complete\":%s}}\n",
		TSR_VERSION_MAJOR, TSR_VERSION_MINOR, tsr__dist.rank,
		tsr__dist.on ? tsr__dist.size : 1, w->run->ntasks,
		w->run->complete ? "true" : "false");
}

static void writer_free(struct writer *w)
{
	for (int i = 0; i < w->ntracks; i++)
		free(w->tracks[i].lanes);
	free(w->tracks);
	free(w->sl);
	free(w->task_slice);
	free(w->node_task);
}

int tsr__timeline_write(const char *file, const struct tl_run *run)
{
	struct writer w = {.run = run, .pid = (tsr__dist.on ? tsr__dist.rank : 0) + 1, .first = 1};
	w.task_slice = malloc((run->ntasks + 1) * sizeof *w.task_slice);
	fixed_tracks(&w);
	if (!w.task_slice || gather_slices(&w)) {
		writer_free(&w);
		return tsr__err(TSR_ENOMEM,
				"tsr_finalize: timeline file (TSR_TIMELINE) '%s': out of memory",
				file);
	}
	assign_tids(&w);

	w.f = fopen(file, "w");
	if (!w.f) {
		writer_free(&w);
		return tsr__err(TSR_EINVAL,
				"tsr_finalize: cannot write timeline file (TSR_TIMELINE) '%s': %s",
				file, strerror(errno));
	}

	write_events(&w);
	writer_free(&w);
	return tsr__close_written(w.f, file, "timeline file (TSR_TIMELINE)");
}
