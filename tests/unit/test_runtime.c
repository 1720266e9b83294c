/* test_runtime.c: starting and stopping the runtime: config fields, the TSR_* environment
 * overriding them, StarPU's own STARPU_* variables still honoured, restart, error tables, the
 * window that keeps the host thread from running far ahead (TSR_WINDOW). */
#include "config.h" /* TSR_STARPU_NOTIFY_FIXED */
#include <stdatomic.h>
#include <unistd.h>
#include <starpu.h>
#include "tsr_test.h"

/* The tests below set the environment themselves: start from a clean one (each test is forked). */
static void clean_env(void)
{
	unsetenv("TSR_SCHED");
	unsetenv("TSR_NCPU");
	unsetenv("TSR_NCUDA");
	unsetenv("STARPU_SCHED");
	unsetenv("STARPU_NCPU");
	unsetenv("STARPU_NCPUS");
	unsetenv("TSR_WINDOW");
	unsetenv("TSR_TASKDATA");
	unsetenv("TSR_DEPS");
	unsetenv("TSR_IDLE");
}

START_TEST(config_init_sets_starpu_defaults)
{
	tsr_config_t cfg;
	memset(&cfg, 0x5a, sizeof cfg);
	tsr_config_init(&cfg);
	ck_assert_ptr_null(cfg.sched);
	ck_assert_int_eq(cfg.ncpu, -1);
	ck_assert_int_eq(cfg.ncuda, -1);
	ck_assert_ptr_null(cfg.timeline_file);
	ck_assert_ptr_null(cfg.dag_file);
	ck_assert_int_eq(cfg.stats, 0);
	ck_assert_int_eq(cfg.quiet, 0);
}
END_TEST

START_TEST(init_with_config_uses_its_sched_and_ncpu)
{
	clean_env();
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.sched = "eager";
	cfg.ncpu = 1;
	cfg.ncuda = 0;
	CK_TSR(tsr_init(&cfg));
	ck_assert_str_eq(tsr_sched_name(), "eager");
	ck_assert_int_eq(tsr_ncpu_workers(), 1);
	ck_assert_int_eq(tsr_ncuda_workers(), 0);
	CK_TSR(tsr_finalize());
}
END_TEST

/* Tessera orders the views' tasks itself where it can (one process, one memory node, ordered
 * reductions), and leaves it to StarPU when asked or where StarPU must do it. */
START_TEST(deps_explicit_by_default_implicit_where_asked_or_needed)
{
	clean_env();
	ck_assert_ptr_null(tsr_deps_name());
	const char *cases[][3] = {
#ifdef TSR_STARPU_NOTIFY_FIXED
		{"", "", "explicit"},
		{"TSR_DEPS", "explicit", "explicit"},
#else
		/* StarPU 1.4 without the notify fix: explicit is refused (test_messages) */
		{"", "", "implicit"},
#endif
		{"TSR_DEPS", "implicit", "implicit"},
		{"TSR_COHERENCE", "tokens", "implicit"}, /* the several-memory-nodes protocol */
		/* StarPU's REDUX folds under its own ordering */
		{"TSR_REDUX", "unordered", "implicit"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (*cases[i][0])
			setenv(cases[i][0], cases[i][1], 1);
		CK_TSR(tsr_init(NULL));
		if (tsr_ncuda_workers() == 0)
			ck_assert_msg(!strcmp(tsr_deps_name(), cases[i][2]),
				      "%s=%s: ordering %s, not %s", cases[i][0], cases[i][1],
				      tsr_deps_name(), cases[i][2]);
		else
			/* GPUs: several memory nodes */
			ck_assert_str_eq(tsr_deps_name(), "implicit");
		CK_TSR(tsr_finalize());
		if (*cases[i][0])
			unsetenv(cases[i][0]);
	}
}
END_TEST

START_TEST(init_with_null_config_uses_starpu_defaults)
{
	clean_env();
	CK_TSR(tsr_init(NULL));
	ck_assert_int_ge(tsr_ncpu_workers(), 1);
	ck_assert_ptr_nonnull(tsr_sched_name());
	ck_assert_int_gt((int)strlen(tsr_sched_name()), 0);
	CK_TSR(tsr_finalize());
}
END_TEST

/* Where the policy and the CPU worker count come from when the environment names them: TSR_SCHED
 * and TSR_NCPU override the config, apply without one, and StarPU's own STARPU_SCHED and
 * STARPU_NCPU still work where Tessera sets nothing. One Check test per row. */
static const struct env_case {
	const char *name;
	const char *env[2][2]; /* {variable, value} */
	int with_config;       /* tsr_init gets {sched "eager", ncpu 1}, else NULL */
	const char *sched;     /* what runs */
	int ncpu;
} env_cases[] = {
	{"TSR_* over the config", {{"TSR_SCHED", "lws"}, {"TSR_NCPU", "2"}}, 1, "lws", 2},
	{"TSR_* without a config", {{"TSR_SCHED", "dmda"}, {"TSR_NCPU", "1"}}, 0, "dmda", 1},
	{"STARPU_* alone", {{"STARPU_SCHED", "eager"}, {"STARPU_NCPU", "1"}}, 0, "eager", 1},
};

START_TEST(env_names_sched_and_ncpu)
{
	const struct env_case *c = &env_cases[_i];
	clean_env();
	for (int k = 0; k < 2; k++)
		setenv(c->env[k][0], c->env[k][1], 1);
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.sched = "eager";
	cfg.ncpu = 1;
	CK_TSR(tsr_init(c->with_config ? &cfg : NULL));
	const char *sched = tsr_sched_name();
	ck_assert_msg(sched && !strcmp(sched, c->sched), "%s: policy %s, want %s", c->name,
		      sched ? sched : "(none)", c->sched);
	ck_assert_msg(tsr_ncpu_workers() == c->ncpu, "%s: %d CPU workers, want %d", c->name,
		      tsr_ncpu_workers(), c->ncpu);
	CK_TSR(tsr_finalize());
}
END_TEST

/* A task that adds one to every element: proves the runtime does real work after a restart. */
static void run_once(void)
{
	tsr_task_t t = tsr_test_task("incr", tsr_test_add_one, TSR_NONE);
	tsr_region_t r = tsr_test_region_f64("restart", tsr_box1(0, 7));
	tsr_req_t req = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &req, NULL, 0, NULL));
	CK_TSR(tsr_launch(t, 1, &req, NULL, 0, NULL));
	tsr_test_ck_all1(r, 0, 8, 2.0);
	CK_TSR(tsr_region_destroy(r));
}

START_TEST(runtime_restarts_after_finalize)
{
	clean_env();
	CK_TSR(tsr_init(NULL));
	run_once();
	CK_TSR(tsr_finalize());
	CK_TSR(tsr_init(NULL));
	run_once();
	CK_TSR(tsr_finalize());
}
END_TEST

START_TEST(fence_with_nothing_submitted_returns_ok)
{
	CK_TSR(tsr_fence());
	CK_TSR(tsr_fence());
}
END_TEST

START_TEST(error_codes_have_names_and_messages)
{
	static const struct {
		int code;
		const char *name;
	} codes[] = {
		{TSR_OK, "TSR_OK"},           {TSR_EINVAL, "TSR_EINVAL"},
		{TSR_EBOUNDS, "TSR_EBOUNDS"}, {TSR_ETYPE, "TSR_ETYPE"},
		{TSR_EPRIV, "TSR_EPRIV"},     {TSR_EINTERFERE, "TSR_EINTERFERE"},
		{TSR_ESTALE, "TSR_ESTALE"},   {TSR_ENOFIELD, "TSR_ENOFIELD"},
		{TSR_ENOMEM, "TSR_ENOMEM"},   {TSR_ESTARPU, "TSR_ESTARPU"},
		{TSR_ESTATE, "TSR_ESTATE"},   {TSR_ELIVE, "TSR_ELIVE"},
		{TSR_ENODEV, "TSR_ENODEV"},   {TSR_EBUSY, "TSR_EBUSY"},
		{TSR_ETASK, "TSR_ETASK"},
	};
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
		ck_assert_str_eq(tsr_err_name(codes[i].code), codes[i].name);
		ck_assert_ptr_nonnull(tsr_strerror(codes[i].code));
		ck_assert_int_gt((int)strlen(tsr_strerror(codes[i].code)), 0);
	}
	/* messages are distinct: a table with a copy-paste slip would repeat one */
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
		for (size_t j = i + 1; j < sizeof codes / sizeof codes[0]; j++)
			ck_assert_str_ne(tsr_strerror(codes[i].code), tsr_strerror(codes[j].code));
	ck_assert_ptr_nonnull(tsr_err_name(-999));
}
END_TEST

START_TEST(type_sizes_and_names)
{
	ck_assert_uint_eq(tsr_type_size(TSR_F32), 4);
	ck_assert_uint_eq(tsr_type_size(TSR_F64), 8);
	ck_assert_uint_eq(tsr_type_size(TSR_I32), 4);
	ck_assert_uint_eq(tsr_type_size(TSR_I64), 8);
	ck_assert_uint_eq(tsr_type_size(TSR_NONE), 0);
	ck_assert_uint_eq(tsr_type_size(TSR_BYTES), 0);
	ck_assert_str_eq(tsr_type_name(TSR_F32), "f32");
	ck_assert_str_eq(tsr_type_name(TSR_F64), "f64");
	ck_assert_str_eq(tsr_type_name(TSR_I32), "i32");
	ck_assert_str_eq(tsr_type_name(TSR_I64), "i64");
}
END_TEST

static void count_up(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &a) == TSR_OK)
		TSR_AT1(&a, double, 0) += 1.0;
}

/* Paused workers run nothing; calls that would wait say so instead of hanging; resume runs
 * what was submitted meanwhile, in order. */
START_TEST(pause_holds_tasks_and_refuses_waits)
{
	tsr_region_t r = tsr_test_region_f64("counter", tsr_box1(0, 0));
	tsr_task_t t = tsr_test_task("count_up", count_up, TSR_NONE);
	CK_TSR(tsr_pause());
	CK_TSR_ERR(tsr_pause(), TSR_ESTATE, "paused");
	for (int i = 0; i < 5; i++)
		CK_TSR(tsr_launch(t, 1,
				  (tsr_req_t[]){tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0))},
				  NULL, 0, NULL));
	tsr_accessor_t a;
	CK_TSR_ERR(tsr_map(r, 0, TSR_READ, &a), TSR_ESTATE, "tsr_map", "paused");
	CK_TSR_ERR(tsr_fence(), TSR_ESTATE, "tsr_fence", "paused");
	CK_TSR(tsr_resume());
	CK_TSR_ERR(tsr_resume(), TSR_ESTATE, "not paused");
	double v;
	tsr_test_read1(r, 0, &v, 1);
	ck_assert_double_eq(v, 5.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* The window (TSR_WINDOW): a launch that finds more than N tasks in flight waits until N / 2 are
 * left, so after each launch at most N + 1 are unfinished, whatever the workers' speed. */
static atomic_int slow_done;

static void slow_tick(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	usleep(300);
	atomic_fetch_add(&slow_done, 1);
}

enum { WINDOW = 8, WINDOW_LAUNCHES = 60 };

static void launch_slow_ticks(tsr_task_t t, int n)
{
	for (int i = 0; i < n; i++) {
		CK_TSR(tsr_launch(t, 0, NULL, NULL, 0, NULL));
		ck_assert_int_ge(atomic_load(&slow_done), i + 1 - (WINDOW + 1));
	}
}

START_TEST(window_bounds_the_tasks_in_flight)
{
	clean_env();
	setenv("TSR_WINDOW", "8", 1);
	setenv("TSR_NCPU", "1", 1);
	CK_TSR(tsr_init(NULL));
	tsr_task_t t = tsr_test_task("slow_tick", slow_tick, TSR_NONE);
	atomic_store(&slow_done, 0);
	launch_slow_ticks(t, WINDOW_LAUNCHES);
	CK_TSR(tsr_fence());
	ck_assert_int_eq(atomic_load(&slow_done), WINDOW_LAUNCHES);

	/* paused workers finish nothing: the window must not wait for them */
	atomic_store(&slow_done, 0);
	CK_TSR(tsr_pause());
	for (int i = 0; i < 3 * WINDOW; i++)
		CK_TSR(tsr_launch(t, 0, NULL, NULL, 0, NULL));
	CK_TSR(tsr_resume());
	CK_TSR(tsr_fence());
	ck_assert_int_eq(atomic_load(&slow_done), 3 * WINDOW);
	CK_TSR(tsr_finalize());
}
END_TEST

/* ------------------------------------------------------------------ task data */

enum { TD_N = 64, TD_TILES = 4 };

/* The most StarPU data any task of the run listed (direct: none). */
static atomic_int td_listed;

static void td_note_listed(void)
{
	int n = (int)starpu_task_get_current()->nbuffers;
	int seen = atomic_load(&td_listed);
	while (n > seen && !atomic_compare_exchange_weak(&td_listed, &seen, n))
		;
}

/* v[i] = i over the point's tile. */
static void td_fill(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	(void)args;
	(void)arglen;
	td_note_listed();
	tsr_accessor_t v;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_WRITE_DISCARD, &v) != TSR_OK)
		return;
	double *p = v.ptr;
	for (int64_t i = v.lo[0]; i <= v.hi[0]; i++)
		p[i - v.lo[0]] = (double)i;
}

/* w[i] = v[i-1] + v[i] + v[i+1] (those in the region) over the tile, v read through the tile's
 * halo: two views of v that alias, ordered only by the dependences. */
static void td_sum(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	(void)args;
	(void)arglen;
	td_note_listed();
	tsr_accessor_t w;
	tsr_accessor_t v;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_WRITE_DISCARD, &w) != TSR_OK ||
	    tsr_ctx_field(ctx, 1, 0, TSR_F64, TSR_READ, &v) != TSR_OK)
		return;
	double *out = w.ptr;
	const double *in = v.ptr;
	for (int64_t i = w.lo[0]; i <= w.hi[0]; i++) {
		double sum = 0;
		for (int64_t j = i - 1; j <= i + 1; j++)
			if (j >= v.lo[0] && j <= v.hi[0])
				sum += in[j - v.lo[0]];
		out[i - w.lo[0]] = sum;
	}
}

/* A region of TD_N points with fields v and w, cut into TD_TILES tiles and into their halos (each
 * tile and one point on either side, within the region). */
struct td_region {
	tsr_region_t r;
	tsr_field_t v, w;
	tsr_partition_t tiles, halos;
};

static struct td_region td_region(const char *name)
{
	struct td_region d;
	tsr_fspace_t fs;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "v", TSR_F64, 0, &d.v));
	CK_TSR(tsr_fspace_add(fs, "w", TSR_F64, 0, &d.w));
	CK_TSR(tsr_region_create(name, tsr_box1(0, TD_N - 1), fs, &d.r));
	CK_TSR(tsr_fspace_destroy(fs));
	CK_TSR(tsr_partition_tiles(d.r, tsr_box1(0, TD_TILES - 1), "tiles", &d.tiles));
	tsr_box_t boxes[TD_TILES];
	int per = TD_N / TD_TILES;
	for (int c = 0; c < TD_TILES; c++)
		boxes[c] = tsr_box1(c * per > 0 ? c * per - 1 : 0,
				    (c + 1) * per < TD_N ? (c + 1) * per : TD_N - 1);
	CK_TSR(tsr_partition_boxes(d.r, TD_TILES, boxes, "halos", &d.halos));
	return d;
}

/* `steps` steps over d's tiles: `first` on each tile through `first_req` (of v), then td_sum's
 * w = v[i-1] + v[i] + v[i+1] through the halos; w read back into w. */
static void td_steps(const struct td_region *d, tsr_task_t first, tsr_req_t first_req, int steps,
		     double w[TD_N])
{
	tsr_task_t sum = tsr_test_task("td_sum", td_sum, TSR_NONE);
	tsr_req_t sreq[2] = {tsr_req_part(d->tiles, TSR_WRITE_DISCARD, 1, &d->w),
			     tsr_req_part(d->halos, TSR_READ, 1, &d->v)};
	for (int step = 0; step < steps; step++) {
		CK_TSR(tsr_index_launch(first, tsr_box1(0, TD_TILES - 1), 1, &first_req, NULL, 0,
					TSR_REDOP_NONE, NULL));
		CK_TSR(tsr_index_launch(sum, tsr_box1(0, TD_TILES - 1), 2, sreq, NULL, 0,
					TSR_REDOP_NONE, NULL));
	}
	CK_TSR(tsr_region_read(d->r, d->w, w, TD_N * sizeof *w));
}

/* Steps of fill then sum, v rewritten in place (w[i] += ... each step through the same views), so
 * that a missing dependence shows in the sums; the result checked, the data listed returned. */
static int td_run(void)
{
	struct td_region d = td_region("td");

	tsr_task_t fill = tsr_test_task("td_fill", td_fill, TSR_NONE);
	atomic_store(&td_listed, 0);
	double w[TD_N];
	td_steps(&d, fill, tsr_req_part(d.tiles, TSR_WRITE_DISCARD, 1, &d.v), 20, w);
	for (int i = 0; i < TD_N; i++) {
		double want = (double)i + (i > 0 ? i - 1 : 0) + (i < TD_N - 1 ? i + 1 : 0);
		ck_assert_msg(w[i] == want, "w[%d] = %g, not %g", i, w[i], want);
	}
	CK_TSR(tsr_region_destroy(d.r));
	return atomic_load(&td_listed);
}

START_TEST(task_data_direct_where_tessera_orders_buffers_elsewhere)
{
	const char *cases[][3] = {
#ifdef TSR_STARPU_NOTIFY_FIXED
		{"", "", "direct"},
		{"TSR_TASKDATA", "direct", "direct"},
#endif
		{"TSR_TASKDATA", "buffers", "buffers"},
		{"TSR_DEPS", "implicit", "buffers"}, /* StarPU orders them: it must see the data */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		clean_env();
		setenv("TSR_NCPU", "2", 1);
		if (*cases[i][0])
			setenv(cases[i][0], cases[i][1], 1);
		CK_TSR(tsr_init(NULL));
		const char *want = tsr_ncuda_workers() == 0 ? cases[i][2] : "buffers"; /* GPUs */
		ck_assert_msg(!strcmp(tsr_taskdata_name(), want), "%s=%s: task data %s, not %s",
			      cases[i][0], cases[i][1], tsr_taskdata_name(), want);
		int listed = td_run();
		if (!strcmp(want, "direct"))
			ck_assert_msg(listed == 0, "direct: a task listed %d StarPU data", listed);
		else
			/* the tile written and the halo read at least (pieces and waits may add
			 * more) */
			ck_assert_msg(listed >= 2, "buffers: tasks listed at most %d StarPU data",
				      listed);
		CK_TSR(tsr_finalize());
	}
	ck_assert_ptr_null(tsr_taskdata_name());
}
END_TEST

/* ---------------------------------------------------- idle workers, the gate and the handoff */

enum { GATE_STEPS = 300 };

/* v += 1 over the point's tile */
static void gate_inc(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	(void)args;
	(void)arglen;
	tsr_accessor_t v;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &v) != TSR_OK)
		return;
	double *p = v.ptr;
	for (int64_t i = v.lo[0]; i <= v.hi[0]; i++)
		p[i - v.lo[0]] += 1.0;
}

/* Each step: every tile's v incremented, then w = v[i-1] + v[i] + v[i+1] read through the
 * halos, so that every task waits for its neighbours' and many become ready at once: the workers
 * push and pop concurrently, through the gate where there is one. The result after the last step
 * says whether every task ran once, after what it waits for. */
static void gate_run(void)
{
	struct td_region d = td_region("gate");
	CK_TSR(tsr_fill(d.r, d.v, &(double){0.0}, sizeof(double)));

	tsr_task_t inc = tsr_test_task("gate_inc", gate_inc, TSR_NONE);
	double w[TD_N];
	td_steps(&d, inc, tsr_req_part(d.tiles, TSR_READ_WRITE, 1, &d.v), GATE_STEPS, w);
	for (int i = 0; i < TD_N; i++) {
		double want = GATE_STEPS * (1.0 + (i > 0) + (i < TD_N - 1));
		ck_assert_msg(w[i] == want, "%s: w[%d] = %g, not %g", tsr_idle_name(), i, w[i],
			      want);
	}
	CK_TSR(tsr_region_destroy(d.r));
}

START_TEST(idle_workers_yield_one_queue_policies_take_the_gate_eager_hands_off)
{
	const char *cases[][4] = {
		/* TSR_SCHED, TSR_IDLE, TSR_NCPU, what the workers do */
		/* eager's queue kept by Tessera, with a slot per worker (idle.c's handoff) */
		{"eager", "", "2", "yield+handoff"},
		{"eager", "", "3", "yield+handoff"}, /* more workers than cores: the waits yield */
		{"eager", "", "4", "yield+handoff"},
		{"eager", "yield", "1", "yield+handoff"},
		{"prio", "", "2", "yield+gate"},
		{"tsr-locality", "", "2", "yield+gate"},
		{"tsr-critpath", "", "2", "yield+gate"},
		{"lws", "", "2", "yield"}, /* a queue and a lock per worker: no gate */
		{"dmda", "", "2", "yield"},
		{"eager", "spin", "2", "spin"},
		{"eager", "park", "2", "park"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		clean_env();
		setenv("TSR_SCHED", cases[i][0], 1);
		if (*cases[i][1])
			setenv("TSR_IDLE", cases[i][1], 1);
		setenv("TSR_NCPU", cases[i][2], 1);
		CK_TSR(tsr_init(NULL));
		ck_assert_msg(!strcmp(tsr_idle_name(), cases[i][3]), "%s, TSR_IDLE=%s: %s, not %s",
			      cases[i][0], cases[i][1], tsr_idle_name(), cases[i][3]);
		gate_run();
		CK_TSR(tsr_finalize());
	}
	ck_assert_ptr_null(tsr_idle_name());
}
END_TEST

int main(void)
{
	Suite *s = suite_create("runtime");
	TCase *own = tsr_test_tcase("init", 0);
	tcase_add_test(own, config_init_sets_starpu_defaults);
	tcase_add_test(own, init_with_config_uses_its_sched_and_ncpu);
	tcase_add_test(own, init_with_null_config_uses_starpu_defaults);
	tcase_add_test(own, deps_explicit_by_default_implicit_where_asked_or_needed);
	tcase_add_loop_test(own, env_names_sched_and_ncpu, 0,
			    (int)(sizeof env_cases / sizeof env_cases[0]));
	tcase_add_test(own, runtime_restarts_after_finalize);
	tcase_add_test(own, error_codes_have_names_and_messages);
	tcase_add_test(own, type_sizes_and_names);
	tcase_add_test(own, window_bounds_the_tasks_in_flight);
	tcase_add_test(own, task_data_direct_where_tessera_orders_buffers_elsewhere);
	tcase_add_test(own, idle_workers_yield_one_queue_policies_take_the_gate_eager_hands_off);
	suite_add_tcase(s, own);
	TCase *rt = tsr_test_tcase("running", 1);
	tcase_add_test(rt, fence_with_nothing_submitted_returns_ok);
	tcase_add_test(rt, pause_holds_tasks_and_refuses_waits);
	suite_add_tcase(s, rt);
	return tsr_test_run(s);
}
