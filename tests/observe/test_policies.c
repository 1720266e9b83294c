/* test_policies.c: Tessera's own scheduling policies, tsr-locality and tsr-critpath, run a
 * stencil-like program (1-D line, tiles and halo partitions, 20 steps reading the halo of one
 * field and writing the tiles of the other, alternating) with 1 and 2 CPU workers; the result
 * must equal the sequential computation bit for bit. Under tsr-locality each color must also
 * keep its worker from launch to launch when no stealing is needed (a program built so that
 * no worker runs dry before the last step). */
#include <errno.h>
#include <stdatomic.h>
#include <starpu.h> /* the perf models' files, which the calibrated-cost tests start without */
#include "observe.h"

enum { NTILES = 8, TILE = 1 << 15, N = NTILES * TILE, NSTEPS = 20 };

/* One relaxation step on [lo, hi] of a line of n points: interior points average their
 * neighbours, the two ends keep their value. The task and the sequential reference both call it,
 * so they do the same floating-point operations in the same order. */
static void relax(const double *src, double *dst, int64_t lo, int64_t hi, int64_t n)
{
	for (int64_t i = lo; i <= hi; i++)
		dst[i] = (i == 0 || i == n - 1)
				 ? src[i]
				 : 0.25 * src[i - 1] + 0.5 * src[i] + 0.25 * src[i + 1];
}

struct step_args {
	int step;
	int src, dst;
};

/* req 0: halo of the source field (READ); req 1: tile of the destination field (WRITE);
 * req 2: this color's column of the log (READ_WRITE): log[color, step] = worker. */
static void step_task(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const struct step_args *a = args;
	tsr_accessor_t s, d, log;
	int64_t p[3];
	tsr_ctx_point(ctx, p);
	if (tsr_ctx_accessor(ctx, 0, a->src, TSR_F64, TSR_READ, &s) ||
	    tsr_ctx_accessor(ctx, 1, a->dst, TSR_F64, TSR_WRITE, &d) ||
	    tsr_ctx_accessor(ctx, 2, 0, TSR_I32, TSR_READ_WRITE, &log))
		return;
	/* global index i is at s.ptr + (i - s.lo) and d.ptr + (i - d.lo): shift the bases so that
	 * relax() can use global indices on both. The stride is 1 in dimension 0. */
	const double *src = (const double *)s.ptr - s.lo[0];
	double *dst = (double *)d.ptr - d.lo[0];
	relax(src, dst, d.lo[0], d.hi[0], N);
	TSR_AT2(&log, int32_t, p[0], a->step) = tsr_ctx_worker(ctx);
}

/* point c of the launch -> color (c, 0) of the log's 2-D column partition */
static int column_of(const int64_t point[3], int64_t color[3], void *arg)
{
	color[0] = point[0];
	color[1] = 0;
	return 0;
}

static double initial(int64_t i)
{
	/* a few steps and a ramp: values that relaxation changes everywhere near the steps */
	return (double)((i * 7919) % 1009) + (i % 4096 < 64 ? 1000.0 : 0.0);
}

/* Run the program under `sched` with `ncpu` workers; compare with the sequential result and
 * return the fraction of tasks that ran on their color's most frequent worker (for information:
 * on a shared machine it depends on how the OS schedules the worker threads). */
static double run_stencil(const char *sched, int ncpu)
{
	obs_init(sched, ncpu, NULL, NULL, 0);
	ck_assert_str_eq(tsr_sched_name(), sched);
	tsr_fspace_t fs;
	tsr_field_t fu[2], fw;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "u0", TSR_F64, 0, &fu[0]));
	CK_TSR(tsr_fspace_add(fs, "u1", TSR_F64, 0, &fu[1]));
	tsr_region_t line, log;
	CK_TSR(tsr_region_create("line", tsr_box1(0, N - 1), fs, &line));
	CK_TSR(tsr_fspace_destroy(fs));
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "worker", TSR_I32, 0, &fw));
	CK_TSR(tsr_region_create("log", tsr_box2(0, NTILES - 1, 0, NSTEPS - 1), fs, &log));
	CK_TSR(tsr_fspace_destroy(fs));
	tsr_partition_t tiles, halo, cols;
	CK_TSR(tsr_partition_tiles(line, tsr_box1(0, NTILES - 1), "tiles", &tiles));
	CK_TSR(tsr_partition_tiles_halo(line, tsr_box1(0, N - 1), tsr_box1(0, NTILES - 1),
					(const int64_t[3]){1, 0, 0}, "halo", &halo));
	/* one column of the log per color: colors (c, 0) of a 2-D tiling, projected from point c */
	CK_TSR(tsr_partition_tiles(log, tsr_box2(0, NTILES - 1, 0, 0), "cols", &cols));

	double *ref = malloc(N * sizeof *ref), *tmp = malloc(N * sizeof *tmp);
	ck_assert(ref && tmp);
	for (int64_t i = 0; i < N; i++)
		ref[i] = initial(i);
	tsr_test_write1(line, fu[0], ref, N);
	int32_t none = -1;
	CK_TSR(tsr_fill(log, fw, &none, sizeof none));

	tsr_task_t t = tsr_test_task("relax", step_task, TSR_NONE);
	for (int s = 0; s < NSTEPS; s++) {
		struct step_args a = {s, fu[s % 2], fu[(s + 1) % 2]};
		/* the written tiles come before the log: the policy's color is the first written
		 * partition's */
		tsr_req_t q[3] = {tsr_req_part(halo, TSR_READ, 1, &fu[s % 2]),
				  tsr_req_part(tiles, TSR_WRITE, 1, &fu[(s + 1) % 2]),
				  tsr_req_part_proj(cols, TSR_READ_WRITE, TSR_FIELDS(fw), column_of,
						    NULL)};
		CK_TSR(tsr_index_launch(t, tsr_box1(0, NTILES - 1), 3, q, &a, sizeof a,
					TSR_REDOP_NONE, NULL));
	}
	/* sequential: the same steps in order */
	for (int s = 0; s < NSTEPS; s++) {
		relax(ref, tmp, 0, N - 1, N);
		double *x = ref;
		ref = tmp;
		tmp = x;
	}
	double *got = malloc(N * sizeof *got);
	ck_assert_ptr_nonnull(got);
	tsr_test_read1(line, fu[NSTEPS % 2], got, N);
	for (int64_t i = 0; i < N; i++)
		ck_assert_msg(memcmp(&got[i], &ref[i], sizeof(double)) == 0,
			      "%s, %d CPUs: u[%ld] = %.17g, sequential %.17g", sched, ncpu, (long)i,
			      got[i], ref[i]);

	/* the worker of every (color, step): each color's most frequent worker, and how often */
	tsr_accessor_t a;
	CK_TSR(tsr_map(log, fw, TSR_READ, &a));
	int same = 0;
	for (int c = 0; c < NTILES; c++) {
		int count[64] = {0}, best = 0;
		for (int s = 0; s < NSTEPS; s++) {
			int w = TSR_AT2(&a, int32_t, c, s);
			ck_assert_msg(w >= 0 && w < tsr_worker_count(),
				      "color %d step %d: worker %d", c, s, w);
			count[w]++;
			if (count[w] > count[best])
				best = w;
		}
		same += count[best];
	}
	CK_TSR(tsr_unmap(log, fw));
	free(ref);
	free(tmp);
	free(got);
	CK_TSR(tsr_region_destroy(line));
	CK_TSR(tsr_region_destroy(log));
	CK_TSR(tsr_finalize());
	return (double)same / (NTILES * NSTEPS);
}

START_TEST(locality_1_cpu_matches_sequential)
{
	ck_assert_double_eq(run_stencil("tsr-locality", 1), 1.0); /* one worker: trivially */
}
END_TEST

START_TEST(locality_2_cpus_matches_sequential)
{
	double same = run_stencil("tsr-locality", 2);
	fprintf(stderr,
		"# tsr-locality, 2 CPUs, stencil: %.0f%% of tasks on their color's usual worker\n",
		100 * same);
}
END_TEST

START_TEST(critpath_1_cpu_matches_sequential)
{
	run_stencil("tsr-critpath", 1);
}
END_TEST

START_TEST(critpath_2_cpus_matches_sequential)
{
	run_stencil("tsr-critpath", 2);
}
END_TEST

/* ---------------------------------------------------- locality, no steal needed */
/* A worker steals only when its own queue is empty; on a shared machine that happens whenever
 * the OS holds the other worker's thread, so counting moves in an ordinary program measures the
 * machine's load. This program leaves no room for it: every color is an independent chain of
 * tasks, both workers are held by gate tasks until the whole program is submitted (so every
 * first task sits in its owner's queue), and a task of step s spins until every task of step
 * s-1 has finished (lockstep). A worker that finishes a task has then just queued that color's
 * next step for its owner, itself, so its queue is never empty before the last step: colors can
 * move only in the last step, and at most NTILES/2 - 1 tasks can (the other worker's last
 * queued ones). Under eager the same program moves colors at most steps (and lockstep waits were
 * seen to time out there, a later step queued ahead of an earlier one), so it is not run here. */
/* The gates and lockstep waits are condition waits; their ceiling (LOCKSTEP_TIMEOUT_S times
 * CK_TIMEOUT_MULTIPLIER, under the test's timeout) only turns a deadlock into a failure: on a busy
 * machine the other worker's thread can be held for seconds. */
enum { NCHAIN = 16, SPIN_US = 100, LOCKSTEP_TIMEOUT_S = 20 };
static double lockstep_ceiling;

static atomic_int gates_running, gates_open, chain_done, lockstep_broken;

static void spin_until(double t)
{
	while (tsr_test_now() < t)
		;
}

static void gate_task(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	atomic_fetch_add(&gates_running, 1);
	double t0 = tsr_test_now();
	while (!atomic_load(&gates_open))
		if (tsr_test_now() - t0 > lockstep_ceiling) {
			atomic_store(&lockstep_broken, 1);
			return;
		}
}

/* req 0: the color's tile (READ_WRITE, += 1); req 1: its log column; args: the step. */
static void chain_task(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int step = *(const int *)args;
	int64_t p[3];
	tsr_accessor_t x, log;
	tsr_ctx_point(ctx, p);
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &x) ||
	    tsr_ctx_accessor(ctx, 1, 0, TSR_I32, TSR_READ_WRITE, &log))
		return;
	/* lockstep: wait for the previous step everywhere (a timeout rather than a hang if not) */
	double t0 = tsr_test_now();
	/* one timeout is enough */
	while (atomic_load(&chain_done) < step * NTILES && !atomic_load(&lockstep_broken))
		if (tsr_test_now() - t0 > lockstep_ceiling) {
			atomic_store(&lockstep_broken, 1);
			break;
		}
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) += 1.0;
	spin_until(tsr_test_now() + SPIN_US * 1e-6);
	TSR_AT2(&log, int32_t, p[0], step) = tsr_ctx_worker(ctx);
	atomic_fetch_add(&chain_done, 1);
}

static void pin_to_arg(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	m->worker = *(const int *)arg;
}

/* Run the chains under `sched` on 2 CPUs; log[c][s] = worker of color c at step s. */
static void run_chains(const char *sched, int log_out[NTILES][NCHAIN])
{
	lockstep_ceiling = LOCKSTEP_TIMEOUT_S * tsr_test_time_scale();
	obs_init(sched, 2, NULL, NULL, 0);
	tsr_region_t line = tsr_test_region_f64("line", tsr_box1(0, NTILES * 16 - 1));
	tsr_field_t fw;
	tsr_region_t log = tsr_test_region("log", tsr_box2(0, NTILES - 1, 0, NCHAIN - 1), 1,
					   (const tsr_type_t[]){TSR_I32},
					   (const char *const[]){"worker"}, &fw);
	tsr_partition_t tiles, cols;
	CK_TSR(tsr_partition_tiles(line, tsr_box1(0, NTILES - 1), "tiles", &tiles));
	CK_TSR(tsr_partition_tiles(log, tsr_box2(0, NTILES - 1, 0, 0), "cols", &cols));
	tsr_task_t tg, tc;
	tg = tsr_test_task("gate", gate_task, TSR_NONE);
	tc = tsr_test_task("chain", chain_task, TSR_NONE);
	/* make the partitions' plans active first, so that no runtime task is queued behind the
	 * gates */
	tsr_req_t q[2] = {tsr_req_part(tiles, TSR_READ_WRITE, TSR_FIELDS(0)),
			  tsr_req_part_proj(cols, TSR_READ_WRITE, TSR_FIELDS(fw), column_of, NULL)};
	int warm = 0;
	atomic_store(&chain_done, 0);
	CK_TSR(tsr_index_launch(tc, tsr_box1(0, NTILES - 1), 2, q, &warm, sizeof warm,
				TSR_REDOP_NONE, NULL));
	CK_TSR(tsr_fence());
	atomic_store(&chain_done, 0);
	for (int w = 0; w < 2; w++) {
		CK_TSR(tsr_set_mapper(pin_to_arg, &w));
		CK_TSR(tsr_launch(tg, 0, NULL, NULL, 0, NULL));
		CK_TSR(tsr_set_mapper(NULL, NULL));
	}
	while (atomic_load(&gates_running) < 2)
		;
	for (int s = 0; s < NCHAIN; s++)
		CK_TSR(tsr_index_launch(tc, tsr_box1(0, NTILES - 1), 2, q, &s, sizeof s,
					TSR_REDOP_NONE, NULL));
	atomic_store(&gates_open, 1);
	CK_TSR(tsr_fence());
	ck_assert_msg(!atomic_load(&lockstep_broken), "a gate or a lockstep wait timed out");
	double v[NTILES * 16];
	tsr_test_read1(line, 0, v, NTILES * 16);
	for (int i = 0; i < NTILES * 16; i++)
		ck_assert_double_eq(v[i], NCHAIN + 1);
	tsr_accessor_t a;
	CK_TSR(tsr_map(log, fw, TSR_READ, &a));
	for (int c = 0; c < NTILES; c++)
		for (int s = 0; s < NCHAIN; s++)
			log_out[c][s] = TSR_AT2(&a, int32_t, c, s);
	CK_TSR(tsr_unmap(log, fw));
	CK_TSR(tsr_region_destroy(line));
	CK_TSR(tsr_region_destroy(log));
	CK_TSR(tsr_finalize());
}

START_TEST(locality_keeps_each_color_on_its_worker)
{
	int log[NTILES][NCHAIN];
	run_chains("tsr-locality", log);
	int moved_last = 0, home[NTILES];
	for (int c = 0; c < NTILES; c++) {
		home[c] = log[c][0];
		for (int s = 1; s < NCHAIN - 1; s++)
			ck_assert_msg(log[c][s] == home[c],
				      "color %d ran on worker %d at step 0 but on worker %d at "
				      "step %d",
				      c, home[c], log[c][s], s);
		moved_last += log[c][NCHAIN - 1] != home[c];
	}
	ck_assert_int_le(moved_last, NTILES / 2 - 1);
	/* both workers own colors: keeping everything on one worker is not locality */
	int distinct = 0;
	for (int c = 1; c < NTILES; c++)
		distinct |= home[c] != home[0];
	ck_assert_msg(distinct, "every color ran on worker %d", home[0]);
}
END_TEST

/* ---------------------------------------------------- critical path: the longer chain first */
/* One worker, held by a gate task while the program is submitted: P writes both tiles, then A
 * (one task on tile 0) and the chain B1 -> B2 -> B3 -> B4 (tile 1) wait for it. When P ends, A
 * and B1 are ready at once; B1 has the longer path to the end (4 tasks against 1), so
 * tsr-critpath runs it first (eager would run A, submitted first). It does so after a loop of
 * 3,000 finished tasks, whose nodes and accesses the critical path alone no longer keeps (dag.c):
 * the graph's newer nodes must still be found. */
enum { CP_WARM = 1500, CP_CHAIN = 4 };
static atomic_int cp_order_next;
static int cp_order[CP_CHAIN + 2];

/* args: the slot where the task writes when it ran (its rank among the logged tasks), -1 none */
static void cp_step(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int slot = *(const int *)args;
	tsr_accessor_t x;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &x))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) += 1.0;
	if (slot >= 0)
		cp_order[slot] = atomic_fetch_add(&cp_order_next, 1);
}

static void cp_launch(tsr_task_t t, tsr_region_t sub, int slot)
{
	tsr_req_t q = tsr_req_region(sub, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &q, &slot, sizeof slot, NULL));
}

START_TEST(critpath_runs_the_longer_chain_first_after_a_long_loop)
{
	lockstep_ceiling = LOCKSTEP_TIMEOUT_S * tsr_test_time_scale();
	obs_init("tsr-critpath", 1, NULL, NULL, 0);
	tsr_region_t line = tsr_test_region_f64("line", tsr_box1(0, 15));
	tsr_partition_t tiles;
	CK_TSR(tsr_partition_tiles(line, tsr_box1(0, 1), "tiles", &tiles));
	tsr_region_t t0, t1;
	CK_TSR(tsr_partition_subregion(tiles, (const int64_t[3]){0, 0, 0}, &t0));
	CK_TSR(tsr_partition_subregion(tiles, (const int64_t[3]){1, 0, 0}, &t1));
	tsr_task_t tg = tsr_test_task("gate", gate_task, TSR_NONE);
	tsr_task_t tc = tsr_test_task("step", cp_step, TSR_NONE);

	int none = -1;
	tsr_req_t q = tsr_req_part(tiles, TSR_READ_WRITE, TSR_FIELDS(0));
	for (int i = 0; i < CP_WARM; i++)
		CK_TSR(tsr_index_launch(tc, tsr_box1(0, 1), 1, &q, &none, sizeof none,
					TSR_REDOP_NONE, NULL));
	CK_TSR(tsr_fence());

	atomic_store(&gates_running, 0);
	atomic_store(&gates_open, 0);
	atomic_store(&lockstep_broken, 0);
	atomic_store(&cp_order_next, 0);
	CK_TSR(tsr_launch(tg, 0, NULL, NULL, 0, NULL));
	while (atomic_load(&gates_running) < 1)
		;
	cp_launch(tc, line, CP_CHAIN + 1); /* P */
	cp_launch(tc, t0, 0);              /* A */
	for (int k = 1; k <= CP_CHAIN; k++)
		cp_launch(tc, t1, k); /* B1 .. B4 */
	atomic_store(&gates_open, 1);
	CK_TSR(tsr_fence());
	ck_assert_msg(!atomic_load(&lockstep_broken), "the gate timed out");

	ck_assert_int_eq(cp_order[CP_CHAIN + 1], 0); /* P first: the others wait for it */
	ck_assert_msg(cp_order[1] < cp_order[0],
		      "A (1 task to the end) ran %d-th, before B1 (4 tasks to the end, %d-th)",
		      cp_order[0], cp_order[1]);
	double v[16];
	tsr_test_read1(line, 0, v, 16);
	for (int i = 0; i < 16; i++)
		ck_assert_double_eq(v[i], CP_WARM + 1 + (i < 8 ? 1 : CP_CHAIN));
	CK_TSR(tsr_region_destroy(line));
	CK_TSR(tsr_finalize());
}
END_TEST

/* ---------------------------------------------------- critical path: calibrated costs */
/* With perf models calibrated (a first runtime runs each task often enough, and StarPU keeps the
 * models in STARPU_HOME for the second), a task's bottom level weighs its successors' costs. P
 * writes both tiles; then S1 -> S2 -> S3 (short tasks, tile 1) and A1 (short) -> A2 (long, about
 * 40 times a short one), tile 0, A2 submitted last. When P ends, S1 and A1 are ready: A1 has the
 * longer path to the end (short + long against three shorts). The newest task's cost must reach
 * its ancestors when it is added, not only once a later task raises it: A2 is the newest. */
enum { CP_SHORT_US = 50, CP_LONG_US = 2000, CP_CALIBRATE = 16 };

/* args: {slot, microseconds to spin} */
static void cp_timed(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const int *a = args;
	tsr_accessor_t x;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &x))
		return;
	spin_until(tsr_test_now() + a[1] * 1e-6);
	if (a[0] >= 0)
		cp_order[a[0]] = atomic_fetch_add(&cp_order_next, 1);
}

static void cp_timed_launch(tsr_task_t t, tsr_region_t sub, int slot, int us)
{
	int a[2] = {slot, us};
	tsr_req_t q = tsr_req_region(sub, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &q, a, sizeof a, NULL));
}

/* The region, its two tiles and the two tasks of one runtime. */
struct cp_prog {
	tsr_region_t line, t0, t1;
	tsr_task_t gate, shortt, longt;
};

/* The short and the long task's names: their perf models' symbols. */
struct cp_names {
	const char *shortt, *longt;
};

static void cp_prog_make(struct cp_prog *g, const char *sched, const struct cp_names *nm)
{
	obs_init(sched, 1, NULL, NULL, 0);
	g->line = tsr_test_region_f64("line", tsr_box1(0, 15));
	tsr_partition_t tiles;
	CK_TSR(tsr_partition_tiles(g->line, tsr_box1(0, 1), "tiles", &tiles));
	CK_TSR(tsr_partition_subregion(tiles, (const int64_t[3]){0, 0, 0}, &g->t0));
	CK_TSR(tsr_partition_subregion(tiles, (const int64_t[3]){1, 0, 0}, &g->t1));
	g->gate = tsr_test_task("gate", gate_task, TSR_NONE);
	g->shortt = tsr_test_task(nm->shortt, cp_timed, TSR_NONE);
	g->longt = tsr_test_task(nm->longt, cp_timed, TSR_NONE);
}

/* What earlier runs measured for the two models (StarPU keeps them in STARPU_HOME) goes, so that
 * the costs the measured run finds are this run's calibration's. Called while the runtime runs
 * and before the models' first tasks: StarPU loads a model at its first task. */
static void cp_forget_models(const struct cp_names *nm)
{
	const char *symbols[2] = {nm->shortt, nm->longt};
	for (int i = 0; i < 2; i++) {
		char path[1024];
		starpu_perfmodel_get_model_path(symbols[i], path, sizeof path);
		if (unlink(path) != 0)
			ck_assert_msg(errno == ENOENT, "removing %s: %s", path, strerror(errno));
	}
}

/* Calibrate under `sched`: each task on each tile, the footprints the measured run has. Then
 * the measured run, under tsr-critpath. */
static void cp_calibrated_run(const char *sched, const struct cp_names *nm)
{
	lockstep_ceiling = LOCKSTEP_TIMEOUT_S * tsr_test_time_scale();
	struct cp_prog g;

	/* A spin's time is the wall clock's: on a loaded machine some last far longer, and StarPU
	 * would flush a history whose samples deviate by more than 50% (its MAX_ERROR variable) */
	setenv("STARPU_HISTORY_MAX_ERROR", "100000", 1);
	cp_prog_make(&g, sched, nm);
	cp_forget_models(nm);
	for (int i = 0; i < CP_CALIBRATE; i++)
		for (int k = 0; k < 2; k++) {
			tsr_region_t sub = k ? g.t1 : g.t0;
			cp_timed_launch(g.shortt, sub, -1, CP_SHORT_US);
			cp_timed_launch(g.longt, sub, -1, CP_LONG_US);
		}
	CK_TSR(tsr_fence());
	CK_TSR(tsr_region_destroy(g.line));
	CK_TSR(tsr_finalize()); /* StarPU writes the models */

	cp_prog_make(&g, "tsr-critpath", nm);
	atomic_store(&gates_running, 0);
	atomic_store(&gates_open, 0);
	atomic_store(&lockstep_broken, 0);
	atomic_store(&cp_order_next, 0);
	CK_TSR(tsr_launch(g.gate, 0, NULL, NULL, 0, NULL));
	while (atomic_load(&gates_running) < 1)
		;
	cp_timed_launch(g.shortt, g.line, 5, CP_SHORT_US); /* P */
	for (int k = 1; k <= 3; k++)
		cp_timed_launch(g.shortt, g.t1, k, CP_SHORT_US); /* S1 .. S3 */
	cp_timed_launch(g.shortt, g.t0, 0, CP_SHORT_US);         /* A1 */
	cp_timed_launch(g.longt, g.t0, 4, CP_LONG_US);           /* A2, the newest */
	atomic_store(&gates_open, 1);
	CK_TSR(tsr_fence());
	ck_assert_msg(!atomic_load(&lockstep_broken), "the gate timed out");

	ck_assert_int_eq(cp_order[5], 0); /* P first */
	ck_assert_msg(cp_order[0] < cp_order[1],
		      "A1 (a short and a long task to the end) ran %d-th, after S1 (three short "
		      "ones, %d-th): the models calibrated under %s were not found",
		      cp_order[0], cp_order[1], sched);
	CK_TSR(tsr_region_destroy(g.line));
	CK_TSR(tsr_finalize());
	unsetenv("STARPU_HISTORY_MAX_ERROR");
}

START_TEST(critpath_weighs_the_newest_tasks_calibrated_cost)
{
	const struct cp_names nm = {"critpath_short", "critpath_long"};
	cp_calibrated_run("tsr-critpath", &nm);
}
END_TEST

/* The same costs calibrated under dmda, which asks for a task's length as it pushes the task,
 * when the task reaches its views directly and lists no StarPU data any more (order.c): the
 * history must be filed under the views' footprint all the same, or tsr-critpath, which asks
 * before, finds nothing. (eager asks for no length: StarPU calibrates nothing under it unless
 * STARPU_CALIBRATE says so.) */
START_TEST(critpath_finds_costs_calibrated_under_dmda)
{
	const struct cp_names nm = {"critpath_short_dmda", "critpath_long_dmda"};
	cp_calibrated_run("dmda", &nm);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("policies");
	TCase *tc = tsr_test_tcase("policies", 0);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, locality_1_cpu_matches_sequential);
	tcase_add_test(tc, locality_2_cpus_matches_sequential);
	tcase_add_test(tc, critpath_1_cpu_matches_sequential);
	tcase_add_test(tc, critpath_2_cpus_matches_sequential);
	tcase_add_test(tc, locality_keeps_each_color_on_its_worker);
	tcase_add_test(tc, critpath_runs_the_longer_chain_first_after_a_long_loop);
	tcase_add_test(tc, critpath_weighs_the_newest_tasks_calibrated_cost);
	tcase_add_test(tc, critpath_finds_costs_calibrated_under_dmda);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
