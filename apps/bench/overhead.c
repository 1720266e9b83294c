/* overhead: per-task cost of Tessera against raw StarPU (starpu_task_insert) on the same graphs of
 * empty tasks, in one run, on the same workers: no data, one RW handle per chain, a 1-D
 * three-point stencil of width W (task (t,i): RW on i, R on i-1 and i+1), and the halo program
 * (step t writes tile i of one field and reads halo tile i of the other); halo-trace is the halo
 * program with each step in tsr_trace_begin/end (replayed), against halo-expl's raw side (the
 * dependences given explicitly: a replay's floor). Medians of repetitions. */
#include "config.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <starpu.h>
#include <tessera.h>

#include "app_util.h"

enum pattern { P_NODATA, P_RW, P_STENCIL, P_HALO, P_HALO_EXPLICIT, P_HALO_TRACE, NPATTERNS };
static const char *pattern_name[NPATTERNS] = {"nodata", "rw-chains", "stencil",
					      "halo",   "halo-expl", "halo-trace"};

/* Which side runs: both (the ratio), or one alone (a profile of one submitting thread). */
enum side { SIDE_BOTH, SIDE_RAW, SIDE_TESSERA };

/* halo: elements per tile (the halo is one element on each side) */
#define HALO_TILE 4

struct opts {
	int64_t ntasks;
	int reps;
	int width; /* 0: number of workers */
	int only;  /* -1: all patterns */
	enum side side;
};

/* Both systems count the tasks they ran, so a run that skipped tasks is caught (same cost). */
static atomic_long ran;

/* CPU seconds the submitting thread spent in the last run's submission loop (before the wait):
 * what submission costs, whatever share of a core the loaded machine gave the thread. */
static double submit_cpu;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------ raw StarPU */
static void raw_body(void *buffers[], void *cl_arg)
{
	(void)buffers;
	(void)cl_arg;
	atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

/* Same shape as a Tessera codelet: variable buffers and a history-based model, so that the ratio
 * measures Tessera's own layer, not a difference in what StarPU is asked to do. */
static struct starpu_perfmodel raw_model = {.type = STARPU_HISTORY_BASED, .symbol = "overhead_raw"};
static struct starpu_codelet raw_cl = {
	.cpu_funcs = {raw_body},
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.model = &raw_model,
	.name = "overhead_raw",
};

/* A failed StarPU call ends the benchmark: its figures would mean nothing. */
static void raw_ok(int rc, const char *call)
{
	if (rc) {
		fprintf(stderr, "overhead: %s failed (%d)\n", call, rc);
		exit(1);
	}
}

/* After a raw submission loop begun at wall time t0 and thread CPU time c0: the loop's CPU time
 * into submit_cpu, then wait for the tasks; returns the wall time from t0. */
static double raw_finish(double t0, double c0)
{
	submit_cpu = thread_cpu() - c0;
	starpu_task_wait_for_all();
	return app_now() - t0;
}

static double run_raw(enum pattern p, long ntasks, int w)
{
	starpu_data_handle_t *h = calloc(w, sizeof *h);
	double *vals = calloc(w, sizeof *vals);
	for (int i = 0; i < w && p != P_NODATA; i++)
		starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)&vals[i],
					      sizeof vals[i]);
	atomic_store(&ran, 0);
	double t0 = app_now();
	double c0 = thread_cpu();
	for (long k = 0; k < ntasks; k++) {
		int i = (int)(k % w), rc;
		if (p == P_NODATA)
			rc = starpu_task_insert(&raw_cl, 0);
		else if (p == P_RW)
			rc = starpu_task_insert(&raw_cl, STARPU_RW, h[i], 0);
		else if (i == 0 && i == w - 1)
			rc = starpu_task_insert(&raw_cl, STARPU_RW, h[i], 0);
		else if (i == 0)
			rc = starpu_task_insert(&raw_cl, STARPU_RW, h[i], STARPU_R, h[i + 1], 0);
		else if (i == w - 1)
			rc = starpu_task_insert(&raw_cl, STARPU_RW, h[i], STARPU_R, h[i - 1], 0);
		else
			rc = starpu_task_insert(&raw_cl, STARPU_RW, h[i], STARPU_R, h[i - 1],
						STARPU_R, h[i + 1], 0);
		raw_ok(rc, "starpu_task_insert");
	}
	double dt = raw_finish(t0, c0);
	for (int i = 0; i < w && p != P_NODATA; i++)
		starpu_data_unregister(h[i]);
	free(h);
	free(vals);
	return dt;
}

/* halo, raw: one handle per tile and field (h[f * w + i]); task (t, i) is read-write on tile i of
 * field (t+1) mod 2 and reads tiles i-1, i, i+1 of field t mod 2, the handles a StarPU programmer
 * lists by hand for a halo. ntasks is a whole number of steps of w tasks. */
struct halo_data {
	starpu_data_handle_t *h;
	double *vals;
	int w;
};

/* The 2 w handles; consistent: StarPU orders the accesses to each (sequential consistency). */
static struct halo_data halo_register(int w, int consistent)
{
	struct halo_data hd = {calloc(2 * w, sizeof *hd.h),
			       calloc(2 * w * HALO_TILE, sizeof *hd.vals), w};
	for (int i = 0; i < 2 * w; i++) {
		starpu_vector_data_register(&hd.h[i], STARPU_MAIN_RAM,
					    (uintptr_t)&hd.vals[i * HALO_TILE], HALO_TILE,
					    sizeof *hd.vals);
		starpu_data_set_sequential_consistency_flag(hd.h[i], (unsigned)consistent);
	}
	return hd;
}

static void halo_unregister(struct halo_data *hd)
{
	for (int i = 0; i < 2 * hd->w; i++)
		starpu_data_unregister(hd->h[i]);
	free(hd->h);
	free(hd->vals);
}

/* Task k's data: out tile i read-write, then the in tiles i-1..i+1 that exist, read-only. Returns
 * how many. */
static int halo_task_data(const struct halo_data *hd, long k, struct starpu_data_descr d[4])
{
	int w = hd->w;
	long t = k / w;
	int i = (int)(k % w);
	starpu_data_handle_t *out = &hd->h[((t + 1) % 2) * w];
	starpu_data_handle_t *in = &hd->h[(t % 2) * w];
	int n = 0;
	d[n++] = (struct starpu_data_descr){out[i], STARPU_RW};
	for (int j = i - 1; j <= i + 1; j++)
		if (j >= 0 && j < w)
			d[n++] = (struct starpu_data_descr){in[j], STARPU_R};
	return n;
}

static double run_raw_halo(long ntasks, int w)
{
	struct halo_data hd = halo_register(w, 1);
	atomic_store(&ran, 0);
	double t0 = app_now();
	double c0 = thread_cpu();
	for (long k = 0; k < ntasks; k++) {
		struct starpu_data_descr d[4];
		int n = halo_task_data(&hd, k, d);
		int rc = starpu_task_insert(&raw_cl, STARPU_DATA_MODE_ARRAY, d, n, 0);
		raw_ok(rc, "starpu_task_insert");
	}
	double dt = raw_finish(t0, c0);
	halo_unregister(&hd);
	return dt;
}

/* halo-expl, raw: the halo graph with the dependences given explicitly, as a replay of a captured
 * loop body could give them (apps/bench/README.md): the handles' sequential consistency is off, and
 * task (t, i) is declared to depend on tasks (t-1, i-1..i+1), which both wrote what it reads and
 * read what it overwrites (its in tiles are their out tiles, its out tile their in tiles). Tasks
 * stay valid after they run (destroy = 0), since a later task may name them; they are destroyed
 * after the wait. */
static double run_raw_halo_explicit(long ntasks, int w)
{
	struct halo_data hd = halo_register(w, 0);
	struct starpu_task **tasks = calloc(ntasks, sizeof *tasks);
	atomic_store(&ran, 0);
	double t0 = app_now();
	double c0 = thread_cpu();
	for (long k = 0; k < ntasks; k++) {
		struct starpu_data_descr d[4];
		int n = halo_task_data(&hd, k, d);
		struct starpu_task *task = starpu_task_create();
		task->cl = &raw_cl;
		task->destroy = 0;
		task->nbuffers = n;
		for (int b = 0; b < n; b++) {
			STARPU_TASK_SET_HANDLE(task, d[b].handle, b);
			STARPU_TASK_SET_MODE(task, d[b].mode, b);
		}
		int i = (int)(k % w);
		struct starpu_task *deps[3];
		int nd = 0;
		for (int j = i - 1; j <= i + 1 && k >= w; j++)
			if (j >= 0 && j < w)
				deps[nd++] = tasks[k - w + (j - i)];
		starpu_task_declare_deps_array(task, nd, deps);
		tasks[k] = task;
		raw_ok(starpu_task_submit(task), "starpu_task_submit");
	}
	double dt = raw_finish(t0, c0);
	for (long k = 0; k < ntasks; k++)
		starpu_task_destroy(tasks[k]);
	free(tasks);
	halo_unregister(&hd);
	return dt;
}

/* ------------------------------------------------------------------ Tessera */
static void tsr_body(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	(void)ctx;
	(void)args;
	(void)arglen;
	atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

/* A failed Tessera call ends the benchmark: its figures would mean nothing. */
static void die(const char *what, int rc)
{
	app_fail(what, rc);
	exit(1);
}

/* A 1-D region of w elements tiled into w tiles; requirements per task built once up front, as an
 * application would keep them, so the loop measures the launch itself. */
static double run_tessera(enum pattern p, long ntasks, int w, tsr_task_t task)
{
	tsr_fspace_t fs;
	tsr_field_t f;
	tsr_region_t r;
	tsr_partition_t tiles;
	int rc;
	if ((rc = tsr_fspace_create(&fs)) || (rc = tsr_fspace_add(fs, "x", TSR_F64, 0, &f)) ||
	    (rc = tsr_region_create("chains", tsr_box1(0, w - 1), fs, &r)) ||
	    (rc = tsr_partition_tiles(r, tsr_box1(0, w - 1), "tiles", &tiles)))
		die("setup", rc);
	tsr_req_t(*reqs)[3] = calloc(w, sizeof *reqs);
	int *nreqs = calloc(w, sizeof *nreqs);
	for (int i = 0; i < w; i++) {
		tsr_region_t s;
		if ((rc = tsr_partition_subregion(tiles, (const int64_t[3]){i, 0, 0}, &s)))
			die("subregion", rc);
		reqs[i][nreqs[i]++] = tsr_req_region(s, TSR_READ_WRITE, 1, &f);
		if (p != P_STENCIL)
			continue;
		for (int d = -1; d <= 1; d += 2) {
			if (i + d < 0 || i + d >= w)
				continue;
			if ((rc = tsr_partition_subregion(tiles, (const int64_t[3]){i + d, 0, 0},
							  &s)))
				die("subregion", rc);
			reqs[i][nreqs[i]++] = tsr_req_region(s, TSR_READ, 1, &f);
		}
	}
	atomic_store(&ran, 0);
	double t0 = app_now();
	double c0 = thread_cpu();
	for (long k = 0; k < ntasks; k++) {
		int i = (int)(k % w);
		const tsr_reqs_t none = {0, NULL};
		const tsr_reqs_t tile = {nreqs[i], reqs[i]};
		rc = tsr_run(task, &(tsr_launch_t){.reqs = p == P_NODATA ? none : tile});
		if (rc)
			die("tsr_run", rc);
	}
	submit_cpu = thread_cpu() - c0;
	if ((rc = tsr_fence()))
		die("tsr_fence", rc);
	double dt = app_now() - t0;
	if ((rc = tsr_region_destroy(r)) || (rc = tsr_fspace_destroy(fs)))
		die("teardown", rc);
	free(reqs);
	free(nreqs);
	return dt;
}

/* halo-trace: the tasks of the replayed launches since tsr_init. */
static long replayed_tasks(void)
{
	tsr_trace_stats_t st;
	int rc = tsr_trace_stats(&st);
	if (rc)
		die("tsr_trace_stats", rc);
	return st.replayed_tasks;
}

/* One step of the halo program; in a trace per parity of t when traced (the two fields swap
 * roles, so a step's launch recurs every other step). */
static void halo_step(long t, int w, int traced, tsr_task_t task, tsr_partition_t tiles,
		      tsr_partition_t halo, const tsr_field_t f[2])
{
	int rc;
	if (traced && (rc = tsr_trace_begin((uint32_t)(t % 2))))
		die("tsr_trace_begin", rc);
	tsr_req_t reqs[2] = {
		tsr_req_part(tiles, TSR_READ_WRITE, 1, &f[(t + 1) % 2]),
		tsr_req_part(halo, TSR_READ, 1, &f[t % 2]),
	};
	rc = tsr_run(task, &(tsr_launch_t){.domain = tsr_box1(0, w - 1), .reqs = {2, reqs}});
	if (rc)
		die("tsr_run", rc);
	if (traced && (rc = tsr_trace_end((uint32_t)(t % 2))))
		die("tsr_trace_end", rc);
}

/* halo, Tessera: the natural program. Two fields of a region of w tiles; each step is one index
 * launch over the tiles that writes field (t+1) mod 2 through the tiles and reads field t mod 2
 * through the halo tiles (an aliased partition: tile i widened by one element each side). Traced:
 * most tasks must have been replayed, or the figure would not be a replay's. */
static double run_tessera_halo(long ntasks, int w, int traced, tsr_task_t task)
{
	tsr_fspace_t fs;
	tsr_field_t f[2];
	tsr_region_t r;
	tsr_partition_t tiles, halo;
	const tsr_box_t bounds = tsr_box1(0, (int64_t)w * HALO_TILE - 1);
	const int64_t width[3] = {1, 0, 0};
	int rc;
	if ((rc = tsr_fspace_create(&fs)) || (rc = tsr_fspace_add(fs, "u0", TSR_F64, 0, &f[0])) ||
	    (rc = tsr_fspace_add(fs, "u1", TSR_F64, 0, &f[1])) ||
	    (rc = tsr_region_create("grid", bounds, fs, &r)) ||
	    (rc = tsr_partition_tiles(r, tsr_box1(0, w - 1), "tiles", &tiles)) ||
	    (rc = tsr_partition_tiles_halo(r, bounds, tsr_box1(0, w - 1), width, "halo", &halo)))
		die("setup", rc);
	atomic_store(&ran, 0);
	long replayed0 = traced ? replayed_tasks() : 0;
	double t0 = app_now();
	double c0 = thread_cpu();
	for (long t = 0; t < ntasks / w; t++)
		halo_step(t, w, traced, task, tiles, halo, f);
	submit_cpu = thread_cpu() - c0;
	if (traced && replayed_tasks() - replayed0 < ntasks / 2) {
		fprintf(stderr, "overhead: halo-trace replayed %ld of %ld tasks\n",
			replayed_tasks() - replayed0, ntasks);
		exit(1);
	}
	if ((rc = tsr_fence()))
		die("tsr_fence", rc);
	double dt = app_now() - t0;
	if ((rc = tsr_region_destroy(r)) || (rc = tsr_fspace_destroy(fs)))
		die("teardown", rc);
	return dt;
}

/* One repetition of one side; seconds. */
static double run_side(enum side side, enum pattern p, long ntasks, int w, tsr_task_t task)
{
	int halo = p == P_HALO || p == P_HALO_EXPLICIT || p == P_HALO_TRACE;
	if (side == SIDE_RAW && (p == P_HALO_EXPLICIT || p == P_HALO_TRACE))
		return run_raw_halo_explicit(ntasks, w);
	if (side == SIDE_RAW)
		return halo ? run_raw_halo(ntasks, w) : run_raw(p, ntasks, w);
	return halo ? run_tessera_halo(ntasks, w, p == P_HALO_TRACE, task)
		    : run_tessera(p, ntasks, w, task);
}

/* ------------------------------------------------------------------ driver */
static void check_ran(const char *who, enum pattern p, long ntasks)
{
	long n = atomic_load(&ran);
	if (n != ntasks) {
		fprintf(stderr, "overhead: %s %s ran %ld tasks, submitted %ld\n", who,
			pattern_name[p], n, ntasks);
		exit(1);
	}
}

/* 0: run, 1: help or version printed, -1: usage error (said). */
static int parse(int argc, char **argv, struct opts *o)
{
	int side = -1; /* raw|tessera; -1: both */
	*o = (struct opts){.ntasks = 50000, .reps = 5, .only = -1, .side = SIDE_BOTH};
	const app_opt_t opts[] = {
		{"--tasks", APP_OPT_I64, &o->ntasks, 1, LONG_MAX, NULL, "N",
		 "tasks per repetition and pattern (default 50000)"},
		{"--reps", APP_OPT_INT, &o->reps, 1, INT_MAX, NULL, "R",
		 "repetitions, raw and Tessera alternating (default 5)"},
		{"--width", APP_OPT_INT, &o->width, 0, INT_MAX, NULL, "W",
		 "chains / stencil width (default: number of workers)"},
		{"--pattern", APP_OPT_WORDS, &o->only, 0, 0,
		 "nodata|rw-chains|stencil|halo|halo-expl|halo-trace", "P",
		 "nodata, rw-chains, stencil, halo, halo-expl or halo-trace (default:\n"
		 "all six); halo runs whole steps of W tasks (N rounded down to a\n"
		 "multiple of W); halo-expl is halo against raw StarPU given the\n"
		 "dependences explicitly (a replay's floor); halo-trace the same with\n"
		 "Tessera's steps in traces (tsr-cpu: host us per replayed task)"},
		{"--only", APP_OPT_WORDS, &side, 0, 0, "raw|tessera", "raw|tessera",
		 "run only raw or only tessera (to profile one submitting thread alone)"},
	};
	const app_cli_t cli = {"overhead",
			       "Submits the same graph of empty tasks through raw StarPU\n"
			       "(starpu_task_insert) and through\n"
			       "Tessera (tsr_run) in one run and prints microseconds per task\n"
			       "(submission to completion),\n"
			       "the median of R repetitions, and the ratio Tessera/raw.",
			       opts, sizeof opts / sizeof opts[0], NULL};
	int rc = app_parse(&cli, argc, argv);
	if (side >= 0)
		o->side = side == 0 ? SIDE_RAW : SIDE_TESSERA;
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	int prc = parse(argc, argv, &o);
	if (prc)
		return prc > 0 ? 0 : 2;
	int rc = app_start();
	if (rc)
		return 1;
	int w = o.width ? o.width : tsr_ncpu_workers() + tsr_ncuda_workers();
	tsr_task_t task;
	if ((rc = tsr_task_register(&(tsr_task_desc_t){.name = "overhead_tsr", .cpu = tsr_body},
				    &task)))
		die("tsr_task_register", rc);
	printf("# overhead: %lld tasks x %d reps, width %d, policy %s, %d CPU workers; "
	       "us/task, median\n",
	       (long long)o.ntasks, o.reps, w, tsr_sched_name(), tsr_ncpu_workers());
	printf("# wall: first submission to last completion; cpu: the submitting thread's CPU\n"
	       "# time in the submission loop (robust to a loaded machine)\n");
	printf("%-10s %10s %10s %8s %10s %10s %8s\n", "pattern", "raw", "tessera", "ratio",
	       "raw-cpu", "tsr-cpu", "ratio");
	double *raw = calloc(o.reps, sizeof *raw), *tes = calloc(o.reps, sizeof *tes);
	double *rawc = calloc(o.reps, sizeof *rawc), *tesc = calloc(o.reps, sizeof *tesc);
	int run_raw_side = o.side != SIDE_TESSERA, run_tes_side = o.side != SIDE_RAW;
	for (int p = 0; p < NPATTERNS; p++) {
		if (o.only >= 0 && p != o.only)
			continue;
		/* halo submits whole steps of w tasks */
		int halo = p == P_HALO || p == P_HALO_EXPLICIT || p == P_HALO_TRACE;
		long n = halo ? (o.ntasks / w > 0 ? o.ntasks / w : 1) * w : o.ntasks;
		/* warm-up: perf models loaded, plans opened, allocator primed */
		long warm = n / 10 > 1000 ? n / 10 : n;
		if (halo)
			warm = (warm / w > 0 ? warm / w : 1) * w;
		if (run_raw_side)
			run_side(SIDE_RAW, p, warm, w, task);
		if (run_tes_side)
			run_side(SIDE_TESSERA, p, warm, w, task);
		for (int k = 0; k < o.reps; k++) {
			/* alternate which goes first so drifting machine load hits both alike */
			for (int j = 0; j < 2; j++) {
				int tessera_now = (j == 0) == (k % 2 == 1);
				if (tessera_now && run_tes_side) {
					tes[k] = run_side(SIDE_TESSERA, p, n, w, task) * 1e6 / n;
					tesc[k] = submit_cpu * 1e6 / n;
					check_ran("tessera", p, n);
				} else if (!tessera_now && run_raw_side) {
					raw[k] = run_side(SIDE_RAW, p, n, w, task) * 1e6 / n;
					rawc[k] = submit_cpu * 1e6 / n;
					check_ran("raw", p, n);
				}
			}
		}
		if (o.side == SIDE_BOTH) {
			double mr = app_median(raw, o.reps), mt = app_median(tes, o.reps);
			double mrc = app_median(rawc, o.reps), mtc = app_median(tesc, o.reps);
			printf("%-10s %10.2f %10.2f %8.2f %10.2f %10.2f %8.2f\n", pattern_name[p],
			       mr, mt, mt / mr, mrc, mtc, mtc / mrc);
		} else if (o.side == SIDE_RAW) {
			printf("%-10s %10.2f %10s %8s %10.2f %10s %8s\n", pattern_name[p],
			       app_median(raw, o.reps), "-", "-", app_median(rawc, o.reps), "-",
			       "-");
		} else {
			printf("%-10s %10s %10.2f %8s %10s %10.2f %8s\n", pattern_name[p], "-",
			       app_median(tes, o.reps), "-", "-", app_median(tesc, o.reps), "-");
		}
		fflush(stdout);
	}
	free(raw);
	free(tes);
	free(rawc);
	free(tesc);
	rc = tsr_finalize();
	if (rc)
		die("tsr_finalize", rc);
	return 0;
}
