/* overhead: per-task cost of Tessera against raw StarPU (starpu_task_insert) on the same graphs of
 * empty tasks, in one run, on the same workers: no data, one RW handle per chain, and a 1-D
 * three-point stencil of width W (task (t,i): RW on i, R on i-1 and i+1). Medians of repetitions. */
#include "config.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <starpu.h>
#include <tessera.h>

#include "app_util.h"

enum pattern { P_NODATA, P_RW, P_STENCIL, NPATTERNS };
static const char *pattern_name[NPATTERNS] = {"nodata", "rw-chains", "stencil"};

struct opts {
	long ntasks;
	int reps;
	int width;          /* 0: number of workers */
	const char *sched;
	int ncpu;
	int only;           /* -1: all patterns */
};

/* Both systems count the tasks they ran, so a run that skipped tasks is caught (same cost). */
static atomic_long ran;

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

static double run_raw(enum pattern p, long ntasks, int w)
{
	starpu_data_handle_t *h = calloc(w, sizeof *h);
	double *vals = calloc(w, sizeof *vals);
	for (int i = 0; i < w && p != P_NODATA; i++)
		starpu_variable_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)&vals[i], sizeof vals[i]);
	atomic_store(&ran, 0);
	double t0 = app_now();
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
			rc = starpu_task_insert(&raw_cl, STARPU_RW, h[i], STARPU_R, h[i - 1], STARPU_R, h[i + 1], 0);
		if (rc) {
			fprintf(stderr, "overhead: starpu_task_insert failed (%d)\n", rc);
			exit(1);
		}
	}
	starpu_task_wait_for_all();
	double dt = app_now() - t0;
	for (int i = 0; i < w && p != P_NODATA; i++)
		starpu_data_unregister(h[i]);
	free(h);
	free(vals);
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
	tsr_req_t (*reqs)[3] = calloc(w, sizeof *reqs);
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
			if ((rc = tsr_partition_subregion(tiles, (const int64_t[3]){i + d, 0, 0}, &s)))
				die("subregion", rc);
			reqs[i][nreqs[i]++] = tsr_req_region(s, TSR_READ, 1, &f);
		}
	}
	atomic_store(&ran, 0);
	double t0 = app_now();
	for (long k = 0; k < ntasks; k++) {
		int i = (int)(k % w);
		const tsr_reqs_t none = {0, NULL};
		const tsr_reqs_t tile = {nreqs[i], reqs[i]};
		rc = tsr_run(task, &(tsr_launch_t){.reqs = p == P_NODATA ? none : tile});
		if (rc)
			die("tsr_run", rc);
	}
	if ((rc = tsr_fence()))
		die("tsr_fence", rc);
	double dt = app_now() - t0;
	if ((rc = tsr_region_destroy(r)) || (rc = tsr_fspace_destroy(fs)))
		die("teardown", rc);
	free(reqs);
	free(nreqs);
	return dt;
}

/* ------------------------------------------------------------------ driver */
static void check_ran(const char *who, enum pattern p, long ntasks)
{
	long n = atomic_load(&ran);
	if (n != ntasks) {
		fprintf(stderr, "overhead: %s %s ran %ld tasks, submitted %ld\n", who, pattern_name[p], n, ntasks);
		exit(1);
	}
}

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: overhead [--tasks N] [--reps R] [--width W] [--sched NAME] [--ncpu N] [--pattern P]\n"
	        "Submits the same graph of empty tasks through raw StarPU (starpu_task_insert) and through\n"
	        "Tessera (tsr_run) in one run and prints microseconds per task (submission to completion),\n"
	        "the median of R repetitions, and the ratio Tessera/raw.\n"
	        "  --tasks N     tasks per repetition and pattern (default 50000)\n"
	        "  --reps R      repetitions, raw and Tessera alternating (default 5)\n"
	        "  --width W     chains / stencil width (default: number of workers)\n"
	        "  --sched NAME  scheduling policy (default: TSR_SCHED or StarPU's)\n"
	        "  --ncpu N      CPU workers (default: TSR_NCPU or StarPU's)\n"
	        "  --pattern P   nodata, rw-chains or stencil (default: all three)\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){50000, 5, 0, NULL, -1, -1};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		}
		if (!v) {
			usage(stderr);
			return -1;
		}
		i++;
		if (!strcmp(a, "--tasks")) {
			int64_t n;
			if (app_parse_i64(a, v, 1, LONG_MAX, &n))
				return -1;
			o->ntasks = (long)n;
		} else if (!strcmp(a, "--reps")) {
			if (app_parse_int(a, v, 1, INT_MAX, &o->reps))
				return -1;
		} else if (!strcmp(a, "--width")) {
			if (app_parse_int(a, v, 0, INT_MAX, &o->width))
				return -1;
		} else if (!strcmp(a, "--sched")) {
			o->sched = v;
		} else if (!strcmp(a, "--ncpu")) {
			if (app_parse_int(a, v, 1, INT_MAX, &o->ncpu))
				return -1;
		} else if (!strcmp(a, "--pattern")) {
			for (int p = 0; p < NPATTERNS; p++)
				if (!strcmp(v, pattern_name[p]))
					o->only = p;
			if (o->only < 0) {
				fprintf(stderr, "overhead: unknown pattern '%s'\n", v);
				return -1;
			}
		} else {
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	app_set_name("overhead");
	if (parse(argc, argv, &o))
		return 2;
	int rc = app_init(o.sched, o.ncpu);
	if (rc)
		return 1;
	int w = o.width ? o.width : tsr_ncpu_workers() + tsr_ncuda_workers();
	tsr_task_t task;
	if ((rc = tsr_task_register(&(tsr_task_desc_t){.name = "overhead_tsr", .cpu = tsr_body}, &task)))
		die("tsr_task_register", rc);
	printf("# overhead: %ld tasks x %d reps, width %d, policy %s, %d CPU workers; us/task, median\n", o.ntasks, o.reps,
	       w, tsr_sched_name(), tsr_ncpu_workers());
	printf("%-10s %10s %10s %8s\n", "pattern", "raw", "tessera", "ratio");
	double *raw = calloc(o.reps, sizeof *raw), *tes = calloc(o.reps, sizeof *tes);
	for (int p = 0; p < NPATTERNS; p++) {
		if (o.only >= 0 && p != o.only)
			continue;
		/* warm-up: perf models loaded, plans opened, allocator primed */
		long warm = o.ntasks / 10 > 1000 ? o.ntasks / 10 : o.ntasks;
		run_raw(p, warm, w);
		run_tessera(p, warm, w, task);
		for (int k = 0; k < o.reps; k++) {
			/* alternate which goes first so drifting machine load hits both alike */
			if (k % 2) {
				tes[k] = run_tessera(p, o.ntasks, w, task) * 1e6 / o.ntasks;
				check_ran("tessera", p, o.ntasks);
				raw[k] = run_raw(p, o.ntasks, w) * 1e6 / o.ntasks;
				check_ran("raw", p, o.ntasks);
			} else {
				raw[k] = run_raw(p, o.ntasks, w) * 1e6 / o.ntasks;
				check_ran("raw", p, o.ntasks);
				tes[k] = run_tessera(p, o.ntasks, w, task) * 1e6 / o.ntasks;
				check_ran("tessera", p, o.ntasks);
			}
		}
		double mr = app_median(raw, o.reps), mt = app_median(tes, o.reps);
		printf("%-10s %10.2f %10.2f %8.2f\n", pattern_name[p], mr, mt, mt / mr);
		fflush(stdout);
	}
	free(raw);
	free(tes);
	rc = tsr_finalize();
	if (rc)
		die("tsr_finalize", rc);
	return 0;
}
