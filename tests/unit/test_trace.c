/* test_trace.c: traces (tsr_trace_begin / tsr_trace_end, and TSR_REPLAY=auto): a halo loop gives
 * what a plain C model gives whether its iterations are recorded, replayed or analysed in full;
 * replays happen where they should (tsr_trace_stats), and a body that differs from its recording
 * (another launch, a host map, a new partition, a failed task) falls back without a wrong value. */
#include <pthread.h>

#include "tsr_test.h"

#define N 32
#define TILES 4

/* What a step is given: the fields it reads and writes, and its argument. */
struct step_args {
	double arg;
	int in, out;
};

/* step: out[i] = in[i-1] + in[i] + in[i+1] (where they exist) + arg, modulo 3, over the point's
 * tile; in through the halo tile (req 0, READ), out through the tile (req 1, WRITE). A negative
 * arg makes point 1 fail instead (tsr_ctx_error), after writing nothing. Returns the tile's
 * sum. */
static void step(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const struct step_args *a = args;
	int64_t p[3] = {0, 0, 0};
	tsr_ctx_point(ctx, p);
	if (a->arg < 0 && p[0] == 1) {
		tsr_ctx_error(ctx, "step told to fail at point 1");
		return;
	}

	tsr_accessor_t in, out;
	if (tsr_ctx_accessor(ctx, 0, a->in, TSR_F64, TSR_READ, &in) ||
	    tsr_ctx_accessor(ctx, 1, a->out, TSR_F64, TSR_WRITE, &out))
		return;
	double sum = 0;
	for (int64_t i = out.lo[0]; i <= out.hi[0]; i++) {
		double s = TSR_AT1(&in, double, i) + a->arg;
		if (i > 0)
			s += TSR_AT1(&in, double, i - 1);
		if (i < N - 1)
			s += TSR_AT1(&in, double, i + 1);
		/* keep the values small: exact in double for the whole test */
		s = s - 3.0 * (double)(int64_t)(s / 3.0);
		TSR_AT1(&out, double, i) = s;
		sum += s;
	}
	tsr_ctx_return(ctx, &sum);
}

/* scale: u[i] = u[i] / 2 if the future f > 100 (u: field *args, READ_WRITE, req 0; f: req 1). */
static void scale(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const double *f = tsr_ctx_future(ctx, 1);
	tsr_accessor_t u;
	if (!f || tsr_ctx_accessor(ctx, 0, *(const int *)args, TSR_F64, TSR_READ_WRITE, &u))
		return;
	for (int64_t i = u.lo[0]; i <= u.hi[0]; i++)
		TSR_AT1(&u, double, i) = TSR_AT1(&u, double, i) * (*f > 100 ? 0.5 : 1.0);
}

struct world {
	tsr_region_t r;
	tsr_field_t f[2];
	tsr_partition_t tiles, halo;
	tsr_task_t step, scale;
	double m[2][N]; /* the sequential model */
};

static void world_init(struct world *w)
{
	tsr_fspace_t fs = tsr_test_fspace(2, (const tsr_type_t[]){TSR_F64, TSR_F64},
					  (const char *const[]){"u", "v"}, w->f);
	CK_TSR(tsr_region_create("grid", tsr_box1(0, N - 1), fs, &w->r));
	CK_TSR(tsr_fspace_destroy(fs));
	CK_TSR(tsr_partition_tiles(w->r, tsr_box1(0, TILES - 1), "tiles", &w->tiles));
	CK_TSR(tsr_partition_tiles_halo(w->r, tsr_box1(0, N - 1), tsr_box1(0, TILES - 1),
					(const int64_t[3]){1, 0, 0}, "halo", &w->halo));
	tsr_task_desc_t d = {.name = "step", .cpu = step, .ret_type = TSR_F64};
	CK_TSR(tsr_task_register(&d, &w->step));
	tsr_task_desc_t s = {.name = "scale", .cpu = scale};
	CK_TSR(tsr_task_register(&s, &w->scale));
	for (int i = 0; i < N; i++) {
		w->m[0][i] = i % 3;
		w->m[1][i] = 0;
	}
	CK_TSR(tsr_region_write(w->r, w->f[0], w->m[0], sizeof w->m[0]));
	CK_TSR(tsr_region_write(w->r, w->f[1], w->m[1], sizeof w->m[1]));
}

static void world_free(struct world *w)
{
	CK_TSR(tsr_region_destroy(w->r));
}

/* The world of the loop tests: made once the runtime runs, destroyed before it stops (fixture). */
static struct world w;

static void world_setup(void)
{
	tsr_test_setup();
	world_init(&w);
}

static void world_teardown(void)
{
	world_free(&w);
	tsr_test_teardown();
}

/* One step on Tessera and on the model: field `from` through the halo into field 1 - from. */
static void launch_step(struct world *w, int from, double arg, tsr_future_t *sum)
{
	tsr_req_t reqs[2] = {tsr_req_part(w->halo, TSR_READ, 1, &w->f[from]),
			     tsr_req_part(w->tiles, TSR_WRITE, 1, &w->f[1 - from])};
	struct step_args a = {arg, w->f[from], w->f[1 - from]};
	CK_TSR(tsr_index_launch(w->step, tsr_box1(0, TILES - 1), 2, reqs, &a, sizeof a,
				sum ? TSR_SUM : TSR_REDOP_NONE, sum));
}

static double model_step(struct world *w, int from, double arg)
{
	double sum = 0;
	for (int i = 0; i < N; i++) {
		double s = w->m[from][i] + arg + (i > 0 ? w->m[from][i - 1] : 0) +
			   (i < N - 1 ? w->m[from][i + 1] : 0);
		s = s - 3.0 * (double)(int64_t)(s / 3.0);
		w->m[1 - from][i] = s;
		sum += s;
	}
	return sum;
}

/* Both fields equal the model's. */
static void check_fields(struct world *w, const char *when)
{
	for (int f = 0; f < 2; f++) {
		double got[N];
		CK_TSR(tsr_region_read(w->r, w->f[f], got, sizeof got));
		for (int i = 0; i < N; i++)
			ck_assert_msg(got[i] == w->m[f][i],
				      "%s: field %d element %d: %g, expected %g", when, f, i,
				      got[i], w->m[f][i]);
	}
}

/* Iteration it of the loop: two steps, arguments depending on it (a loop's step number). */
static void iteration(struct world *w, int it)
{
	launch_step(w, 0, (double)(it % 5), NULL);
	model_step(w, 0, (double)(it % 5));
	launch_step(w, 1, 1.0, NULL);
	model_step(w, 1, 1.0);
}

/* Iterations from .. to - 1 of the loop, each one inside trace `id`. */
static void traced_iterations(int id, int from, int to)
{
	for (int it = from; it < to; it++) {
		CK_TSR(tsr_trace_begin(id));
		iteration(&w, it);
		CK_TSR(tsr_trace_end(id));
	}
}

static tsr_trace_stats_t stats(void)
{
	tsr_trace_stats_t s;
	CK_TSR(tsr_trace_stats(&s));
	return s;
}

START_TEST(traced_loop_replays)
{
	traced_iterations(7, 0, 20);
	check_fields(&w, "after 20 traced iterations");

	/* iteration 0 records; iteration 1 starts from the data the steps wrote, not from the
	 * host's write: it records again; from iteration 2 on, each one replays */
	tsr_trace_stats_t s = stats();
	ck_assert_int_eq(s.launches, 40);
	ck_assert_int_eq(s.iterations, 18);
	ck_assert_int_eq(s.replayed, 36);
	ck_assert_int_eq(s.replayed_tasks, 36 * TILES);
	ck_assert_int_eq(s.recorded, 4);
	ck_assert_int_eq(s.rerecorded, 1);
	ck_assert_int_eq(s.fallbacks, 0);
}
END_TEST

START_TEST(automatic_mode_finds_the_loop)
{
	for (int it = 0; it < 40; it++)
		iteration(&w, it);
	check_fields(&w, "after 40 iterations without trace calls");

	tsr_trace_stats_t s = stats();
	ck_assert_int_ge(s.auto_found, 1);
	ck_assert_int_ge(s.iterations, 30);
	ck_assert_int_ge(s.replayed, 60);
	ck_assert_int_eq(s.fallbacks, 0);
}
END_TEST

/* Iteration 9 launches the steps the other way round (another stream): it falls back, records
 * again, and later iterations replay again. */
START_TEST(another_launch_falls_back)
{
	traced_iterations(1, 0, 9);
	CK_TSR(tsr_trace_begin(1));
	launch_step(&w, 1, 2.0, NULL);
	model_step(&w, 1, 2.0);
	iteration(&w, 9);
	CK_TSR(tsr_trace_end(1));
	traced_iterations(1, 10, 20);
	check_fields(&w, "after a different iteration");

	tsr_trace_stats_t s = stats();
	ck_assert_int_eq(s.fallbacks, 1);
	ck_assert_int_ge(s.rerecorded, 2);
	ck_assert_int_ge(s.iterations, 14);
}
END_TEST

/* A host write in the middle of an iteration: the launch after it must see the new values. */
START_TEST(host_map_in_the_body_falls_back)
{
	for (int it = 0; it < 12; it++) {
		CK_TSR(tsr_trace_begin(2));
		launch_step(&w, 0, 1.0, NULL);
		model_step(&w, 0, 1.0);
		if (it == 7) {
			tsr_accessor_t a;
			tsr_region_t t1;
			CK_TSR(tsr_partition_subregion(w.tiles, (const int64_t[3]){1, 0, 0}, &t1));
			CK_TSR(tsr_map(t1, w.f[1], TSR_READ_WRITE, &a));
			for (int64_t i = a.lo[0]; i <= a.hi[0]; i++) {
				TSR_AT1(&a, double, i) = 2.0;
				w.m[1][i] = 2.0;
			}
			CK_TSR(tsr_unmap(t1, w.f[1]));
		}
		launch_step(&w, 1, 0.0, NULL);
		model_step(&w, 1, 0.0);
		CK_TSR(tsr_trace_end(2));
	}
	check_fields(&w, "after a host write inside the body");
	ck_assert_int_eq(stats().fallbacks, 1);
}
END_TEST

/* The halo partition is destroyed and made again between two iterations: the launches name a new
 * partition and the pieces were handed back to the root, so the body records again. */
START_TEST(new_partition_records_again)
{
	traced_iterations(3, 0, 6);
	CK_TSR(tsr_partition_destroy(w.halo));
	CK_TSR(tsr_partition_tiles_halo(w.r, tsr_box1(0, N - 1), tsr_box1(0, TILES - 1),
					(const int64_t[3]){1, 0, 0}, "halo2", &w.halo));
	traced_iterations(3, 6, 12);
	check_fields(&w, "after a new partition");
	tsr_trace_stats_t s = stats();
	ck_assert_int_eq(s.fallbacks, 1);
	ck_assert_int_ge(s.iterations, 7);
}
END_TEST

/* A point fails in iteration 4: its tile is poisoned, the next steps that read it are skipped and
 * poison what they write, the fence reports the failure, a read of the poisoned field is refused;
 * rewriting both fields heals them, and the loop goes on replaying with the right values. */
START_TEST(failed_task_poisons_inside_traces)
{
	traced_iterations(4, 0, 4);
	CK_TSR(tsr_trace_begin(4));
	launch_step(&w, 0, -1.0, NULL); /* point 1 fails */
	launch_step(&w, 1, 1.0, NULL);
	CK_TSR(tsr_trace_end(4));
	traced_iterations(4, 5, 6);
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "step told to fail at point 1");
	double got[N];
	CK_TSR_ERR(tsr_region_read(w.r, w.f[0], got, sizeof got), TSR_ETASK, "step");

	for (int i = 0; i < N; i++)
		w.m[0][i] = w.m[1][i] = i % 2;
	CK_TSR(tsr_region_write(w.r, w.f[0], w.m[0], sizeof w.m[0]));
	CK_TSR(tsr_region_write(w.r, w.f[1], w.m[1], sizeof w.m[1]));
	traced_iterations(4, 6, 16);
	check_fields(&w, "after healing");
	ck_assert_int_ge(stats().iterations, 10);
}
END_TEST

/* A reduced future in every iteration, passed to a later launch of the same iteration, and waited
 * for: futures keep their meaning, and fences and waits inside the body do not stop replays. */
START_TEST(futures_fences_and_waits_inside)
{
	for (int it = 0; it < 12; it++) {
		CK_TSR(tsr_trace_begin(5));
		tsr_future_t sum;
		launch_step(&w, 0, 1.0, &sum);
		double msum = model_step(&w, 0, 1.0);
		tsr_req_t reqs[2] = {tsr_req_part(w.tiles, TSR_READ_WRITE, 1, &w.f[1]),
				     tsr_req_future(sum)};
		CK_TSR(tsr_index_launch(w.scale, tsr_box1(0, TILES - 1), 2, reqs, &w.f[1],
					sizeof w.f[1], TSR_REDOP_NONE, NULL));
		for (int i = 0; i < N; i++)
			w.m[1][i] *= msum > 100 ? 0.5 : 1.0;
		double got;
		CK_TSR(tsr_future_wait(sum, &got, sizeof got));
		ck_assert_msg(got == msum, "iteration %d: sum %g, expected %g", it, got, msum);
		CK_TSR(tsr_future_destroy(sum));
		if (it % 3 == 0)
			CK_TSR(tsr_fence());
		launch_step(&w, 1, 0.0, NULL);
		model_step(&w, 1, 0.0);
		CK_TSR(tsr_trace_end(5));
	}
	check_fields(&w, "after futures, waits and fences");
	tsr_trace_stats_t s = stats();
	ck_assert_int_eq(s.fallbacks, 0);
	ck_assert_int_ge(s.iterations, 9);
}
END_TEST

/* A launch on a field left mapped is refused inside a trace as outside one; the refused launch
 * stops that iteration's replay, and the loop replays again once the field is unmapped. */
START_TEST(mapped_field_refused_in_a_replay)
{
	traced_iterations(6, 0, 5);
	tsr_accessor_t a;
	CK_TSR(tsr_map(w.r, w.f[1], TSR_READ, &a));
	CK_TSR(tsr_trace_begin(6));
	tsr_req_t reqs[2] = {tsr_req_part(w.halo, TSR_READ, 1, &w.f[0]),
			     tsr_req_part(w.tiles, TSR_WRITE, 1, &w.f[1])};
	struct step_args arg = {0, w.f[0], w.f[1]};
	CK_TSR_ERR(tsr_index_launch(w.step, tsr_box1(0, TILES - 1), 2, reqs, &arg, sizeof arg,
				    TSR_REDOP_NONE, NULL),
		   TSR_EBUSY, "v", "grid");
	CK_TSR(tsr_trace_end(6));
	CK_TSR(tsr_unmap(w.r, w.f[1]));
	traced_iterations(6, 5, 12);
	check_fields(&w, "after a refused launch");
}
END_TEST

/* gather: every element of the point's tile (req 1, WRITE, field a->out) becomes arg plus the
 * sum of the halo tile req 0 gives it (READ, field a->in), modulo 7. */
static void gather(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const struct step_args *a = args;
	tsr_accessor_t in, out;
	if (tsr_ctx_accessor(ctx, 0, a->in, TSR_F64, TSR_READ, &in) ||
	    tsr_ctx_accessor(ctx, 1, a->out, TSR_F64, TSR_WRITE, &out))
		return;
	double s = a->arg;
	for (int64_t i = in.lo[0]; i <= in.hi[0]; i++)
		s += TSR_AT1(&in, double, i);
	s = s - 7.0 * (double)(int64_t)(s / 7.0);
	for (int64_t i = out.lo[0]; i <= out.hi[0]; i++)
		TSR_AT1(&out, double, i) = s;
}

/* Point p reads the halo tile of color p + *shift (modulo TILES): a projection whose answer the
 * program changes between two iterations, behind the same call. */
static int shifted(const int64_t point[3], int64_t color[3], void *arg)
{
	color[0] = (point[0] + *(const int *)arg) % TILES;
	color[1] = color[2] = 0;
	return 0;
}

/* The model of one gather from field `from` through the halo tiles shifted by `shift`. */
static void model_gather(struct world *w, int from, double arg, int shift)
{
	int len = N / TILES;
	double next[N];
	for (int t = 0; t < TILES; t++) {
		int c = (t + shift) % TILES;
		int lo = c * len > 0 ? c * len - 1 : 0;
		int hi = (c + 1) * len < N ? (c + 1) * len : N - 1;
		double s = arg;
		for (int i = lo; i <= hi; i++)
			s += w->m[from][i];
		s = s - 7.0 * (double)(int64_t)(s / 7.0);
		for (int i = t * len; i < (t + 1) * len; i++)
			next[i] = s;
	}
	memcpy(w->m[1 - from], next, sizeof next);
}

/* A replay takes what a launch resolved to from its recording only where nothing but the call
 * decides it: a projection is asked again at every replay, and when it answers other colors (the
 * program changed what its argument points to) the iteration falls back and records again. */
START_TEST(projection_answering_otherwise_falls_back)
{
	tsr_task_desc_t d = {.name = "gather", .cpu = gather};
	tsr_task_t g;
	CK_TSR(tsr_task_register(&d, &g));
	int shift = 1;

	for (int it = 0; it < 14; it++) {
		if (it == 7)
			shift = 2;
		CK_TSR(tsr_trace_begin(9));
		for (int from = 0; from < 2; from++) {
			tsr_req_t reqs[2] = {tsr_req_part_proj(w.halo, TSR_READ, 1, &w.f[from],
							       shifted, &shift),
					     tsr_req_part(w.tiles, TSR_WRITE, 1, &w.f[1 - from])};
			struct step_args a = {(double)from, w.f[from], w.f[1 - from]};
			CK_TSR(tsr_index_launch(g, tsr_box1(0, TILES - 1), 2, reqs, &a, sizeof a,
						TSR_REDOP_NONE, NULL));
			model_gather(&w, from, (double)from, shift);
		}
		CK_TSR(tsr_trace_end(9));
	}

	check_fields(&w, "after a projection changed its answer");
	tsr_trace_stats_t s = stats();
	ck_assert_int_eq(s.fallbacks, 1);
	ck_assert_int_ge(s.replayed, 16);
}
END_TEST

START_TEST(api_misuse_is_refused)
{
	tsr_trace_stats_t s;
	CK_TSR_ERR(tsr_trace_end(1), TSR_ESTATE, "tsr_trace_end(1)", "no trace is open");
	CK_TSR(tsr_trace_begin(1));
	CK_TSR_ERR(tsr_trace_begin(2), TSR_ESTATE, "tsr_trace_begin(2)", "trace 1 is open",
		   "do not nest");
	CK_TSR_ERR(tsr_trace_end(2), TSR_EINVAL, "tsr_trace_end(2)", "the open trace is 1");
	CK_TSR(tsr_trace_end(1));
	CK_TSR_ERR(tsr_trace_stats(NULL), TSR_EINVAL, "tsr_trace_stats");
	CK_TSR(tsr_trace_stats(&s));
	/* a trace left open at tsr_finalize is closed by it */
	CK_TSR(tsr_trace_begin(3));
}
END_TEST

START_TEST(api_needs_the_runtime)
{
	tsr_trace_stats_t s;
	CK_TSR_ERR(tsr_trace_begin(1), TSR_ESTATE, "tsr_trace_begin", "tsr_init");
	CK_TSR_ERR(tsr_trace_end(1), TSR_ESTATE, "tsr_trace_end", "tsr_init");
	CK_TSR_ERR(tsr_trace_stats(&s), TSR_ESTATE, "tsr_trace_stats", "tsr_init");
}
END_TEST

static void *begin_elsewhere(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)tsr_trace_begin(1);
}

START_TEST(api_from_another_thread_is_refused)
{
	pthread_t t;
	void *rc;
	pthread_create(&t, NULL, begin_elsewhere, NULL);
	pthread_join(t, &rc);
	ck_assert_int_eq((int)(intptr_t)rc, TSR_ESTATE);
}
END_TEST

/* TSR_REPLAY=off: no replay without trace calls, the program's own traces still replay. */
static void setup_off(void)
{
	setenv("TSR_REPLAY", "off", 1);
	world_setup();
}

START_TEST(automatic_mode_off)
{
	for (int it = 0; it < 20; it++)
		iteration(&w, it);
	ck_assert_int_eq(stats().launches, 0);
	traced_iterations(8, 20, 30);
	check_fields(&w, "with TSR_REPLAY=off");
	tsr_trace_stats_t s = stats();
	ck_assert_int_eq(s.auto_found, 0);
	ck_assert_int_ge(s.iterations, 7);
}
END_TEST

/* The flag --replay off wins over TSR_REPLAY=auto (the env table's order). */
static void setup_flag_off(void)
{
	setenv("TSR_REPLAY", "auto", 1);
	char *argv[] = {"prog", "--replay", "off", NULL};
	int argc = 3;
	CK_TSR(tsr_args(&argc, argv));
	ck_assert_int_eq(argc, 1);
	world_setup();
}

/* Leave no switch behind for the next test (check-valgrind runs them in one process). */
static void teardown_off(void)
{
	world_teardown();
	tsr_args(NULL, NULL);
	unsetenv("TSR_REPLAY");
}

/* A bad TSR_REPLAY value fails tsr_init, naming the switch and its words. */
START_TEST(bad_switch_value)
{
	setenv("TSR_REPLAY", "sometimes", 1);
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.quiet = 1;
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "TSR_REPLAY", "sometimes", "auto|off");
	unsetenv("TSR_REPLAY");
}
END_TEST

/* A test case whose every test gets the runtime and the world, made by setup. */
static TCase *world_tcase(const char *name, void (*setup)(void), void (*teardown)(void))
{
	TCase *tc = tsr_test_tcase(name, 0);
	tcase_add_checked_fixture(tc, setup, teardown);
	return tc;
}

int main(void)
{
	Suite *s = suite_create("trace");
	TCase *bare = tsr_test_tcase("trace-bare", 0);
	tcase_add_test(bare, api_needs_the_runtime);
	tcase_add_test(bare, bad_switch_value);
	suite_add_tcase(s, bare);

	TCase *tc = world_tcase("trace", world_setup, world_teardown);
	tcase_add_test(tc, traced_loop_replays);
	tcase_add_test(tc, automatic_mode_finds_the_loop);
	tcase_add_test(tc, another_launch_falls_back);
	tcase_add_test(tc, host_map_in_the_body_falls_back);
	tcase_add_test(tc, new_partition_records_again);
	tcase_add_test(tc, failed_task_poisons_inside_traces);
	tcase_add_test(tc, projection_answering_otherwise_falls_back);
	tcase_add_test(tc, futures_fences_and_waits_inside);
	tcase_add_test(tc, mapped_field_refused_in_a_replay);
	suite_add_tcase(s, tc);

	TCase *api = tsr_test_tcase("trace-api", 1);
	tcase_add_test(api, api_misuse_is_refused);
	tcase_add_test(api, api_from_another_thread_is_refused);
	suite_add_tcase(s, api);

	/* replay switched off by TSR_REPLAY, and by the flag that wins over it */
	const char *const off_names[] = {"trace-off", "trace-flag-off"};
	void (*const off_setups[])(void) = {setup_off, setup_flag_off};
	for (int k = 0; k < 2; k++) {
		TCase *off = world_tcase(off_names[k], off_setups[k], teardown_off);
		tcase_add_test(off, automatic_mode_off);
		suite_add_tcase(s, off);
	}
	return tsr_test_run(s);
}
