/* stats.c: the statistics of a run (TSR_STATS, tsr_stats_get): time per task and worker kind
 * (Tessera's own tasks, folds and syncs, under their names), idle fraction, and the bytes StarPU
 * moved over each bus. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* Rows are added by workers (task callbacks) and read by tsr_stats_get. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static tsr_task_stats_t *rows;
static int nrows, caprows;

/* Task callback (worker thread): one more run of the task called `name` on a worker of that
 * kind. */
void tsr__stats_add(const char *name, int kind, double us)
{
	pthread_mutex_lock(&lock);
	int i;
	for (i = 0; i < nrows; i++)
		if (rows[i].kind == kind && !strcmp(rows[i].name, name))
			break;

	if (i == nrows) {
		TSR_GROW(rows, nrows, caprows, 16);
		memset(&rows[i], 0, sizeof rows[i]);
		snprintf(rows[i].name, sizeof rows[i].name, "%s", name);
		rows[i].kind = kind;
		nrows++;
	}

	rows[i].count++;
	rows[i].total_us += us;
	pthread_mutex_unlock(&lock);
}

/* StarPU's transfer totals per bus (reading them resets them, so obs_fini reads them once). */
int tsr__bus_read(struct bus_row *out, int max)
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

const char *tsr__bus_node_kind(int node)
{
	return starpu_node_get_kind((unsigned)node) == STARPU_CPU_RAM ? "host" : "device";
}

void tsr__node_label(int node, char *buf, size_t n)
{
	enum starpu_node_kind k = starpu_node_get_kind((unsigned)node);
	int dev = starpu_memory_node_get_devid((unsigned)node);

	if (k == STARPU_CPU_RAM)
		snprintf(buf, n, "node %d (host RAM)", node);
	else if (k == STARPU_CUDA_RAM)
		snprintf(buf, n, "node %d (CUDA %d memory)", node, dev);
	else if (k == STARPU_OPENCL_RAM)
		snprintf(buf, n, "node %d (OpenCL %d memory)", node, dev);
	else
		snprintf(buf, n, "node %d", node);
}

/* Each line's label: on several ranks, which rank's figures these are (each rank prints its
 * own). */
static const char *who(void)
{
	static char label[64];
	if (tsr__dist.on && tsr__dist.size > 1)
		snprintf(label, sizeof label, "tessera stats [rank %d of %d]: ", tsr__dist.rank,
			 tsr__dist.size);
	else
		snprintf(label, sizeof label, "tessera stats: ");

	return label;
}

/* Bytes moved between host and devices over the run: what a device-resident app keeps near zero. */
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
			fprintf(stderr, "%sbus %d->%d (%s->%s) %lld bytes in %d transfers\n", who(),
				bus[b].src, bus[b].dst, tsr__bus_node_kind(bus[b].src),
				tsr__bus_node_kind(bus[b].dst), bus[b].bytes, bus[b].count);
	}

	fprintf(stderr, "%sbytes host->device %lld device->host %lld device->device %lld\n", who(),
		h2d, d2h, d2d);
}

static const char *kind_label(int kind)
{
	return kind == TSR_WORKER_CUDA ? "cuda" : kind == TSR_WORKER_OPENCL ? "opencl" : "cpu";
}

static void print_stats(void)
{
	fprintf(stderr, "%s%-24s %-6s %10s %14s %12s\n", who(), "task", "kind", "count",
		"total (ms)", "mean (us)");
	for (int i = 0; i < nrows; i++)
		fprintf(stderr, "%s%-24s %-6s %10ld %14.3f %12.2f\n", who(), rows[i].name,
			kind_label(rows[i].kind), rows[i].count, rows[i].total_us / 1e3,
			rows[i].total_us / rows[i].count);

	int nw = starpu_worker_get_count();
	double tot = 0, exec = 0;
	for (int w = 0; w < nw; w++) {
		struct starpu_profiling_worker_info wi;
		if (starpu_profiling_worker_get_info(w, &wi))
			continue;
		tot += tsr__ts_us(&wi.total_time);
		exec += tsr__ts_us(&wi.executing_time);
	}

	if (tot > 0)
		fprintf(stderr, "%sidle fraction %.3f over %d workers\n", who(), 1.0 - exec / tot,
			nw);
}

int tsr_stats_get(tsr_task_stats_t *out, int max)
{
	TSR_REQUIRE_INIT("tsr_stats_get");
	if (!out || max < 0)
		return tsr__err(TSR_EINVAL, "tsr_stats_get: null output or negative count");

	pthread_mutex_lock(&lock);
	int n = nrows < max ? nrows : max;
	/* rows is NULL before the first task: memcpy's arguments must be valid even for 0 bytes */
	if (n > 0)
		memcpy(out, rows, n * sizeof *out);
	pthread_mutex_unlock(&lock);
	return n;
}

/* Traces (replay.c counts): how many launches inside traces were replayed, and why not. */
struct tsr_replay_counts tsr__replay_counts;

static void print_replay(void)
{
	const struct tsr_replay_counts *c = &tsr__replay_counts;
	if (!c->launches)
		return;

	fprintf(stderr,
		"%straces: %ld launches in traces, %ld replayed (%ld tasks), %ld recorded, %ld "
		"analysed in full%s%s%s; %ld iterations replayed whole, %ld fallbacks, %ld "
		"recorded again; %ld sequences found by TSR_REPLAY=auto\n",
		who(), c->launches, c->replayed, c->replayed_tasks, c->recorded, c->full,
		c->full_reason ? " (" : "", c->full_reason ? c->full_reason : "",
		c->full_reason ? ")" : "", c->iterations, c->fallbacks, c->rerecorded,
		c->auto_found);
}

/* The handoff (idle.c sums it here): where the pushes of eager's tasks went. */
struct tsr_handoff_counts tsr__handoff_counts;

static void print_handoff(void)
{
	const struct tsr_handoff_counts c = tsr__handoff_counts;
	if (!c.on)
		return;

	fprintf(stderr,
		"%shandoff (eager): %ld tasks to an idle worker, %ld kept by the worker that made "
		"them ready, %ld through the queue; %ld taken from another worker's slot\n",
		who(), c.to_idle, c.kept, c.queued, c.stolen);
}

/* TSR_STATS at tsr_finalize: the task table, the traces, the handoff, then the bus totals. */
void tsr__stats_print(const struct bus_row *bus, int nbus)
{
	print_stats();
	print_replay();
	print_handoff();
	print_bus(bus, nbus);
}

void tsr__stats_free(void)
{
	memset(&tsr__handoff_counts, 0, sizeof tsr__handoff_counts);
	free(rows);
	rows = NULL;
	nrows = caprows = 0;
}
