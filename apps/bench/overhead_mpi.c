/* overhead-mpi: per-task cost of Tessera on one or several MPI ranks against raw StarPU-MPI
 * (starpu_mpi_task_insert, StarPU-MPI's own model: every rank registers every handle with
 * starpu_mpi_data_register, owners, its cache) on the same graph, in one run: overhead's halo
 * program. Built only with MPI; run it under mpirun (alone it is one rank of StarPU-MPI). */
#include "config.h"

#include <limits.h>
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <starpu.h>
#include <starpu_mpi.h>
#include <tessera.h>

#include "app_util.h"

/* elements per tile (the halo is one element on each side) */
#define HALO_TILE 4

struct opts {
	int64_t ntasks;
	int reps;
	int width;
};

/* Tasks this rank ran; summed over the ranks, a run that lost a task is caught. */
static atomic_long ran;

/* CPU seconds the submitting thread spent in the last run's submission loop. */
static double submit_cpu;

static int rank, nranks;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The owner of tile i of w: blocks of tiles per rank, Tessera's default for colors. */
static int tile_owner(int i, int w)
{
	return (int)((int64_t)i * nranks / w);
}

/* ------------------------------------------------------------------ raw StarPU-MPI */
static void raw_body(void *buffers[], void *cl_arg)
{
	(void)buffers;
	(void)cl_arg;
	atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
}

/* A history-based model like every Tessera codelet's, so the ratio measures Tessera's layer. */
static struct starpu_perfmodel raw_model = {.type = STARPU_HISTORY_BASED,
					    .symbol = "overhead_mpi_raw"};
static struct starpu_codelet raw_cl = {
	.cpu_funcs = {raw_body},
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.model = &raw_model,
	.name = "overhead_mpi_raw",
};

/* StarPU-MPI's way: every rank registers every tile of both fields, with a home buffer only where
 * it owns the tile (-1 elsewhere: StarPU-MPI allocates what it receives), and a tag per handle. */
static void raw_register(starpu_data_handle_t *h, double *vals, int w)
{
	for (int i = 0; i < 2 * w; i++) {
		int owner = tile_owner(i % w, w);
		if (owner == rank)
			starpu_vector_data_register(&h[i], STARPU_MAIN_RAM,
						    (uintptr_t)&vals[i * HALO_TILE], HALO_TILE,
						    sizeof *vals);
		else
			starpu_vector_data_register(&h[i], -1, 0, HALO_TILE, sizeof *vals);
		starpu_mpi_data_register_comm(h[i], i, owner, MPI_COMM_WORLD);
	}
}

/* halo, raw: task (t, i) is read-write on tile i of field (t+1) mod 2 and reads tiles i-1, i, i+1
 * of field t mod 2; every rank inserts every task and StarPU-MPI runs it on the owner of the tile
 * it writes, sending the tiles it reads (its cache keeps them until they are written again). */
static double run_raw(long ntasks, int w)
{
	starpu_data_handle_t *h = calloc(2 * w, sizeof *h);
	double *vals = calloc(2 * w * HALO_TILE, sizeof *vals);
	if (!h || !vals) {
		fprintf(stderr, "overhead-mpi: out of memory\n");
		exit(1);
	}
	raw_register(h, vals, w);
	atomic_store(&ran, 0);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = app_now();
	double c0 = thread_cpu();
	for (long k = 0; k < ntasks; k++) {
		long t = k / w;
		int i = (int)(k % w);
		starpu_data_handle_t *out = &h[((t + 1) % 2) * w];
		starpu_data_handle_t *in = &h[(t % 2) * w];
		struct starpu_data_descr d[4];
		int n = 0;
		d[n++] = (struct starpu_data_descr){out[i], STARPU_RW};
		for (int j = i - 1; j <= i + 1; j++)
			if (j >= 0 && j < w)
				d[n++] = (struct starpu_data_descr){in[j], STARPU_R};
		int rc = starpu_mpi_task_insert(MPI_COMM_WORLD, &raw_cl, STARPU_DATA_MODE_ARRAY, d,
						n, 0);
		if (rc) {
			fprintf(stderr, "overhead-mpi: starpu_mpi_task_insert failed (%d)\n", rc);
			exit(1);
		}
	}
	submit_cpu = thread_cpu() - c0;
	starpu_task_wait_for_all();
	starpu_mpi_wait_for_all(MPI_COMM_WORLD);
	double dt = app_now() - t0;
	for (int i = 0; i < 2 * w; i++)
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

/* A failed Tessera call ends the benchmark on every rank: its figures would mean nothing. */
static void die(const char *what, int rc)
{
	app_fail(what, rc);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* halo, Tessera: the natural program, as in overhead. Two fields of a region of w tiles; each
 * step is one index launch that writes field (t+1) mod 2 through the tiles and reads field t mod 2
 * through the halo tiles; Tessera runs point i on the owner of tile i and moves one element from
 * each neighbouring rank. */
static double run_tessera(long ntasks, int w, tsr_task_t task)
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
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = app_now();
	double c0 = thread_cpu();
	for (long t = 0; t < ntasks / w; t++) {
		tsr_req_t reqs[2] = {
			tsr_req_part(tiles, TSR_READ_WRITE, 1, &f[(t + 1) % 2]),
			tsr_req_part(halo, TSR_READ, 1, &f[t % 2]),
		};
		rc = tsr_run(task,
			     &(tsr_launch_t){.domain = tsr_box1(0, w - 1), .reqs = {2, reqs}});
		if (rc)
			die("tsr_run", rc);
	}
	submit_cpu = thread_cpu() - c0;
	if ((rc = tsr_fence()))
		die("tsr_fence", rc);
	double dt = app_now() - t0;
	if ((rc = tsr_region_destroy(r)) || (rc = tsr_fspace_destroy(fs)))
		die("teardown", rc);
	return dt;
}

/* ------------------------------------------------------------------ driver */
/* Every task of the graph ran exactly once, on one rank or another. */
static void check_ran(const char *who, long ntasks)
{
	long mine = atomic_load(&ran), all = 0;
	MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (all != ntasks) {
		fprintf(stderr, "overhead-mpi: %s ran %ld tasks on %d ranks, submitted %ld\n", who,
			all, nranks, ntasks);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

/* The graph is done when its last rank is done: the slowest rank's time. */
static double slowest(double mine)
{
	double all = 0;
	MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return all;
}

/* Submission is replicated: every rank's thread submits the whole graph; the mean over ranks. */
static double mean_over_ranks(double mine)
{
	double all = 0;
	MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return all / nranks;
}

/* 0: run, 1: help or version printed, -1: usage error (said). */
static int parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.ntasks = 20000, .reps = 5, .width = 32};
	const app_opt_t opts[] = {
		{"--tasks", APP_OPT_I64, &o->ntasks, 1, LONG_MAX, NULL, "N",
		 "tasks per repetition, rounded down to whole steps (default 20000)"},
		{"--reps", APP_OPT_INT, &o->reps, 1, INT_MAX, NULL, "R",
		 "repetitions, raw and Tessera alternating (default 5)"},
		{"--width", APP_OPT_INT, &o->width, 1, INT_MAX, NULL, "W",
		 "tiles, tasks per step (default 32)"},
	};
	const app_cli_t cli =
		{"overhead-mpi",
		 "Run as mpirun -np N overhead-mpi. Submits overhead's halo graph of empty tasks\n"
		 "(steps of W tasks; task (t, i) writes tile i of one field and reads tiles\n"
		 "i-1..i+1 of the other) through raw StarPU-MPI (starpu_mpi_task_insert, tiles\n"
		 "owned in blocks of W/N) and through Tessera (one index launch per step, colors\n"
		 "owned in the same blocks) on every rank, and prints microseconds per task of\n"
		 "the whole graph (first submission to the slowest rank's completion), the median\n"
		 "of R repetitions, and the ratio Tessera/raw.",
		 opts, sizeof opts / sizeof opts[0], NULL};
	return app_parse(&cli, argc, argv);
}

/* One measured repetition of one side: wall and submission CPU, us per task. */
static void measure(int tessera, long n, int w, tsr_task_t task, double *wall, double *cpu)
{
	double dt = tessera ? run_tessera(n, w, task) : run_raw(n, w);
	check_ran(tessera ? "tessera" : "raw", n);
	*wall = slowest(dt) * 1e6 / n;
	*cpu = mean_over_ranks(submit_cpu) * 1e6 / n;
}

int main(int argc, char **argv)
{
	struct opts o;
	int prc = parse(argc, argv, &o);
	if (prc)
		return prc > 0 ? 0 : 2;
	/* the raw side needs StarPU-MPI: a run without mpirun is one rank of it, not plain
	 * StarPU */
	setenv("TSR_MPI", "1", 0);
	if (app_start())
		return 1;
	rank = tsr_rank();
	nranks = tsr_nranks();
	int w = o.width;
	if (w < nranks) {
		fprintf(stderr, "overhead-mpi: --width %d gives some of the %d ranks no tile\n", w,
			nranks);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	tsr_task_t task;
	int rc = tsr_task_register(&(tsr_task_desc_t){.name = "overhead_mpi_tsr", .cpu = tsr_body},
				   &task);
	if (rc)
		die("tsr_task_register", rc);
	long n = (long)(o.ntasks / w > 0 ? o.ntasks / w : 1) * w;
	long warm = (n / 10 / w > 0 ? n / 10 / w : 1) * w;
	if (rank == 0) {
		printf("# overhead-mpi: halo, %ld tasks x %d reps, width %d, %d rank(s), policy "
		       "%s, %d CPU worker(s) per rank; us/task of the whole graph, median\n",
		       n, o.reps, w, nranks, tsr_sched_name(), tsr_ncpu_workers());
		printf("# wall: first submission to the slowest rank's completion; cpu: each\n"
		       "# rank's submitting thread's CPU time in the submission loop (every rank\n"
		       "# submits the whole graph), mean over ranks\n");
		printf("%5s %10s %10s %8s %10s %10s %8s\n", "ranks", "raw", "tessera", "ratio",
		       "raw-cpu", "tsr-cpu", "ratio");
	}
	/* warm-up: perf models loaded, plans opened, allocator primed */
	run_raw(warm, w);
	check_ran("raw", warm);
	run_tessera(warm, w, task);
	check_ran("tessera", warm);
	double *raw = calloc(o.reps, sizeof *raw), *tes = calloc(o.reps, sizeof *tes);
	double *rawc = calloc(o.reps, sizeof *rawc), *tesc = calloc(o.reps, sizeof *tesc);
	for (int k = 0; k < o.reps; k++) {
		/* alternate which goes first so drifting machine load hits both alike */
		int tessera_first = k % 2 == 1;
		measure(tessera_first, n, w, task, tessera_first ? &tes[k] : &raw[k],
			tessera_first ? &tesc[k] : &rawc[k]);
		measure(!tessera_first, n, w, task, tessera_first ? &raw[k] : &tes[k],
			tessera_first ? &rawc[k] : &tesc[k]);
	}
	if (rank == 0) {
		double mr = app_median(raw, o.reps), mt = app_median(tes, o.reps);
		double mrc = app_median(rawc, o.reps), mtc = app_median(tesc, o.reps);
		printf("%5d %10.2f %10.2f %8.2f %10.2f %10.2f %8.2f\n", nranks, mr, mt, mt / mr,
		       mrc, mtc, mtc / mrc);
		fflush(stdout);
	}
	free(raw);
	free(tes);
	free(rawc);
	free(tesc);
	/* MPI ends with Tessera: a failure here is reported, not aborted through MPI */
	rc = tsr_finalize();
	if (rc)
		return app_fail("tsr_finalize", rc), 1;
	return 0;
}
