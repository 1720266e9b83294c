/* test_mapper.c: the user's say in where tasks run. A mapper callback pins points to workers,
 * restricts the worker kind, sets priorities; partition owners pin colors; bad workers and colors
 * are refused with a message naming the task or partition. The worker a task really ran on is
 * recorded by the task itself (tsr_ctx_worker) in a region field and checked on the host. Also:
 * the list of policies, and selecting one by name. */
#include <stdatomic.h>
#include "observe.h"

enum { NCOLORS = 8, TILE = 4 };

/* where: every element of the point's tile (req 0, field "who", i32) gets the worker it runs on. */
static void where(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t w;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_I32, TSR_WRITE, &w))
		return;
	for (int64_t i = w.lo[0]; i <= w.hi[0]; i++)
		TSR_AT1(&w, int32_t, i) = tsr_ctx_worker(ctx);
}

/* Region "grid" of NCOLORS tiles of TILE i32 elements (field "who"), and its partition "tiles". */
static tsr_region_t grid(tsr_partition_t *tiles)
{
	tsr_field_t f;
	tsr_region_t r =
		tsr_test_region("grid", tsr_box1(0, NCOLORS * TILE - 1), 1,
				(const tsr_type_t[]){TSR_I32}, (const char *const[]){"who"}, &f);
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, NCOLORS - 1), "tiles", tiles));
	return r;
}

/* The runtime under policy sched with ncpu CPU workers, and a grid on it. */
static tsr_region_t grid_start(const char *sched, int ncpu, tsr_partition_t *tiles)
{
	obs_init(sched, ncpu, NULL, NULL, 0);
	return grid(tiles);
}

/* The grid destroyed, then the runtime stopped: tsr_finalize must find nothing alive. */
static void grid_end(tsr_region_t r)
{
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_finalize());
}

/* Worker recorded by each color's tile (every element of a tile must agree). */
static void read_workers(tsr_region_t r, int *who)
{
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, 0, TSR_READ, &a));
	for (int c = 0; c < NCOLORS; c++) {
		who[c] = TSR_AT1(&a, int32_t, (int64_t)c * TILE);
		for (int i = 1; i < TILE; i++)
			ck_assert_int_eq(TSR_AT1(&a, int32_t, (int64_t)c * TILE + i), who[c]);
	}
	CK_TSR(tsr_unmap(r, 0));
}

static void launch_where(tsr_task_t t, tsr_partition_t tiles)
{
	tsr_req_t q = tsr_req_part(tiles, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(t, tsr_box1(0, NCOLORS - 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
}

/* ------------------------------------------------------------------ mapper */
/* What the mapper saw, filled on the submitting thread. */
struct seen {
	int calls;
	int bad_query; /* a query field differed from what the launch implies */
	int owner[NCOLORS];
	int entry_worker[NCOLORS];
};

/* Pin point p to worker p % nworkers, and check the query against the launch. */
static void pin_modulo(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	struct seen *s = arg;
	s->calls++;
	if (strcmp(q->task_name, "where") || q->point_dim != 1 || q->point[0] < 0 ||
	    q->point[0] >= NCOLORS || q->domain.dim != 1 || q->domain.lo[0] != 0 ||
	    q->domain.hi[0] != NCOLORS - 1 || m->worker != q->owner || m->kind != TSR_WORKER_ANY)
		s->bad_query++;
	else
		s->owner[q->point[0]] = q->owner;
	m->worker = (int)(q->point[0] % tsr_worker_count());
}

START_TEST(mapper_pins_each_point_to_its_worker)
{
	obs_init("lws", 2, NULL, NULL, 0);
	int nw = tsr_worker_count();
	ck_assert_int_eq(nw, 2);
	tsr_partition_t tiles;
	tsr_region_t r = grid(&tiles);
	tsr_task_t t = tsr_test_task("where", where, TSR_NONE);
	struct seen s = {0};
	CK_TSR(tsr_set_mapper(pin_modulo, &s));
	/* several launches: the pin holds every time, whatever the policy would have done */
	for (int l = 0; l < 4; l++) {
		launch_where(t, tiles);
		int who[NCOLORS];
		read_workers(r, who);
		for (int c = 0; c < NCOLORS; c++)
			ck_assert_msg(who[c] == c % nw,
				      "launch %d color %d ran on worker %d, mapper said %d", l, c,
				      who[c], c % nw);
	}
	ck_assert_int_eq(s.calls, 4 * NCOLORS);
	ck_assert_int_eq(s.bad_query, 0);
	for (int c = 0; c < NCOLORS; c++)
		ck_assert_int_eq(s.owner[c], -1); /* no owners set */
	/* NULL: back to the default, no more calls */
	CK_TSR(tsr_set_mapper(NULL, NULL));
	launch_where(t, tiles);
	CK_TSR(tsr_fence());
	ck_assert_int_eq(s.calls, 4 * NCOLORS);
	grid_end(r);
}
END_TEST

/* The mapper is called for single launches too, with point_dim 0. */
static void pin_last(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	int *calls = arg;
	if (q->point_dim == 0 && !strcmp(q->task_name, "where"))
		(*calls)++;
	m->worker = tsr_worker_count() - 1;
}

START_TEST(mapper_pins_single_launches)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid_start("eager", 2, &tiles);
	tsr_task_t t = tsr_test_task("where", where, TSR_NONE);
	int calls = 0;
	CK_TSR(tsr_set_mapper(pin_last, &calls));
	tsr_region_t sub;
	for (int c = 0; c < NCOLORS; c++) {
		CK_TSR(tsr_partition_subregion(tiles, (const int64_t[3]){c, 0, 0}, &sub));
		tsr_req_t q = tsr_req_region(sub, TSR_WRITE, TSR_FIELDS(0));
		CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	}
	int who[NCOLORS];
	read_workers(r, who);
	for (int c = 0; c < NCOLORS; c++)
		ck_assert_int_eq(who[c], tsr_worker_count() - 1);
	ck_assert_int_eq(calls, NCOLORS);
	grid_end(r);
}
END_TEST

/* Mappers that set one field of the mapping from what arg points to: the worker kind, or the
 * worker. */
static void kind_from_arg(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	m->kind = *(const tsr_worker_kind_t *)arg;
}

static void worker_from_arg(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	m->worker = *(const int *)arg;
}

/* Restricting to CPU workers keeps tasks on CPU workers; restricting a task that has only a CPU
 * variant to CUDA workers leaves no worker able to run it: TSR_ENODEV naming the task. */
START_TEST(mapper_restricts_worker_kind)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid_start(NULL, 2, &tiles);
	tsr_task_t t = tsr_test_task("where", where, TSR_NONE);
	tsr_worker_kind_t kind = TSR_WORKER_CPU;
	CK_TSR(tsr_set_mapper(kind_from_arg, &kind));
	launch_where(t, tiles);
	int who[NCOLORS];
	read_workers(r, who);
	for (int c = 0; c < NCOLORS; c++)
		ck_assert_int_eq(tsr_worker_kind(who[c]), TSR_WORKER_CPU);
	kind = TSR_WORKER_CUDA;
	tsr_req_t q = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_launch(t, 1, &q, NULL, 0, NULL), TSR_ENODEV, "where");
	/* the refused launch left the data as it was */
	int again[NCOLORS];
	read_workers(r, again);
	ck_assert_int_eq(memcmp(who, again, sizeof who), 0);
	grid_end(r);
}
END_TEST

/* A worker that does not exist is a launch error that names the task and the worker. */
START_TEST(mapper_invalid_worker_fails_the_launch)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid_start(NULL, 2, &tiles);
	tsr_task_t t = tsr_test_task("where", where, TSR_NONE);
	int bad = 99;
	CK_TSR(tsr_set_mapper(worker_from_arg, &bad));
	tsr_req_t q = tsr_req_part(tiles, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, NCOLORS - 1), 1, &q, NULL, 0, TSR_REDOP_NONE,
				    NULL),
		   TSR_EINVAL, "where", "99");
	tsr_req_t qr = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_launch(t, 1, &qr, NULL, 0, NULL), TSR_EINVAL, "where", "99");
	bad = -2;
	CK_TSR_ERR(tsr_launch(t, 1, &qr, NULL, 0, NULL), TSR_EINVAL, "where", "-2");
	bad = tsr_worker_count(); /* one past the last */
	CK_TSR_ERR(tsr_launch(t, 1, &qr, NULL, 0, NULL), TSR_EINVAL, "where");
	/* -1 is "anywhere": fine */
	bad = -1;
	launch_where(t, tiles);
	CK_TSR(tsr_fence());
	grid_end(r);
}
END_TEST

/* A launch refused for the mapping of one point runs no point at all: a failed call has no
 * effect. */
static void last_point_from_arg(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	const tsr_mapping_t *bad = arg;
	if (q->point[0] == NCOLORS - 1)
		*m = *bad;
}

START_TEST(mapper_refusal_runs_no_point)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid_start(NULL, 2, &tiles);
	tsr_task_t t = tsr_test_task("where", where, TSR_NONE);
	int32_t v = -7, who[NCOLORS];
	CK_TSR(tsr_fill(r, 0, &v, sizeof v));
	tsr_mapping_t bad = {.kind = TSR_WORKER_ANY, .worker = 99, .priority = 0, .rank = 0};
	CK_TSR(tsr_set_mapper(last_point_from_arg, &bad));
	tsr_req_t q = tsr_req_part(tiles, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, NCOLORS - 1), 1, &q, NULL, 0, TSR_REDOP_NONE,
				    NULL),
		   TSR_EINVAL, "where", "99");
	read_workers(r, who);
	for (int c = 0; c < NCOLORS; c++)
		ck_assert_msg(who[c] == -7, "color %d was written by a launch that failed", c);
	/* no worker can run it: the task has no CUDA variant */
	bad = (tsr_mapping_t){.kind = TSR_WORKER_CUDA, .worker = -1, .priority = 0, .rank = 0};
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, NCOLORS - 1), 1, &q, NULL, 0, TSR_REDOP_NONE,
				    NULL),
		   TSR_ENODEV, "where");
	read_workers(r, who);
	for (int c = 0; c < NCOLORS; c++)
		ck_assert_msg(who[c] == -7, "color %d was written by a launch that failed", c);
	grid_end(r);
}
END_TEST

/* --------------------------------------------------------------- priorities */
/* With one worker and the "prio" policy, ready tasks run highest priority first. A gate task
 * holds the worker until every point is queued, so all of them are ready at once. */
static atomic_int gate_open, gate_running, order_counter;

static void gate(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	atomic_store(&gate_running, 1);
	while (!atomic_load(&gate_open))
		;
}

/* rank: the tile records the position at which this point ran. */
static void rank(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t w;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_I32, TSR_WRITE, &w))
		return;
	int k = atomic_fetch_add(&order_counter, 1);
	for (int64_t i = w.lo[0]; i <= w.hi[0]; i++)
		TSR_AT1(&w, int32_t, i) = k;
}

/* priority = point (0..4) for the ranked points, 5 (first) for the gate: inside the prio policy's
 * default range */
static void prio_by_point(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	m->priority = q->point_dim ? (int)q->point[0] % 5 : 5;
}

START_TEST(mapper_priority_orders_ready_tasks)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid_start("prio", 1, &tiles);
	tsr_task_t tg = tsr_test_task("gate", gate, TSR_NONE),
		   tr = tsr_test_task("rank", rank, TSR_NONE);
	/* a first launch through the tiles, so that no partitioning work is pending later */
	launch_where(tsr_test_task("where", where, TSR_NONE), tiles);
	CK_TSR(tsr_fence());
	CK_TSR(tsr_set_mapper(prio_by_point, NULL));
	CK_TSR(tsr_launch(tg, 0, NULL, NULL, 0, NULL));
	while (!atomic_load(&gate_running))
		;
	/* points 0..4 only, so every priority is distinct */
	tsr_req_t q = tsr_req_part(tiles, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(tr, tsr_box1(0, 4), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	atomic_store(&gate_open, 1);
	int pos[NCOLORS];
	read_workers(r, pos);
	for (int c = 0; c < 5; c++)
		ck_assert_msg(pos[c] == 4 - c, "point %d (priority %d) ran in position %d", c, c,
			      pos[c]);
	grid_end(r);
}
END_TEST

/* ------------------------------------------------------------------- owners */
static void record_owner(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	struct seen *s = arg;
	s->calls++;
	if (q->point_dim == 1 && q->point[0] >= 0 && q->point[0] < NCOLORS) {
		s->owner[q->point[0]] = q->owner;
		s->entry_worker[q->point[0]] = m->worker;
	} else {
		s->bad_query++;
	}
}

START_TEST(partition_owner_pins_colors)
{
	obs_init("lws", 2, NULL, NULL, 0);
	int nw = tsr_worker_count();
	tsr_partition_t tiles;
	tsr_region_t r = grid(&tiles);
	tsr_task_t t = tsr_test_task("where", where, TSR_NONE);
	/* colors 0..5 owned by worker (c + 1) % nw; 6 and 7 left to the policy */
	for (int c = 0; c < 6; c++)
		CK_TSR(tsr_partition_set_owner(tiles, (const int64_t[3]){c, 0, 0}, (c + 1) % nw));
	for (int l = 0; l < 3; l++) {
		launch_where(t, tiles);
		int who[NCOLORS];
		read_workers(r, who);
		for (int c = 0; c < 6; c++)
			ck_assert_msg(who[c] == (c + 1) % nw,
				      "launch %d color %d ran on worker %d, owner is %d", l, c,
				      who[c], (c + 1) % nw);
	}
	/* the mapper sees the owner, and on entry the mapping already says "owner" */
	struct seen s = {0};
	CK_TSR(tsr_set_mapper(record_owner, &s));
	launch_where(t, tiles);
	CK_TSR(tsr_fence());
	ck_assert_int_eq(s.calls, NCOLORS);
	ck_assert_int_eq(s.bad_query, 0);
	for (int c = 0; c < NCOLORS; c++) {
		int want = c < 6 ? (c + 1) % nw : -1;
		ck_assert_int_eq(s.owner[c], want);
		ck_assert_int_eq(s.entry_worker[c], want);
	}
	/* unpin: -1 */
	CK_TSR(tsr_partition_set_owner(tiles, (const int64_t[3]){2, 0, 0}, -1));
	launch_where(t, tiles);
	CK_TSR(tsr_fence());
	ck_assert_int_eq(s.owner[2], -1);
	/* a mapper overrides the owner it was given. Its argument is a named variable: a compound
	 * literal inside CK_TSR's do-block would die before the launch calls the mapper. */
	struct seen s2 = {0};
	CK_TSR(tsr_set_mapper(pin_modulo, &s2));
	launch_where(t, tiles);
	int who[NCOLORS];
	read_workers(r, who);
	for (int c = 0; c < NCOLORS; c++)
		ck_assert_int_eq(who[c], c % nw);
	grid_end(r);
}
END_TEST

START_TEST(partition_owner_errors_name_the_partition)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid_start(NULL, 2, &tiles);
	CK_TSR_ERR(tsr_partition_set_owner(tiles, (const int64_t[3]){NCOLORS, 0, 0}, 0),
		   TSR_EBOUNDS, "tiles", "(8)");
	CK_TSR_ERR(tsr_partition_set_owner(tiles, (const int64_t[3]){-1, 0, 0}, 0), TSR_EBOUNDS,
		   "tiles", "(-1)");
	CK_TSR_ERR(tsr_partition_set_owner(tiles, (const int64_t[3]){1, 0, 0}, 99), TSR_EINVAL,
		   "tiles", "99");
	CK_TSR_ERR(tsr_partition_set_owner(tiles, (const int64_t[3]){1, 0, 0}, -2), TSR_EINVAL,
		   "tiles", "-2");
	CK_TSR_ERR(tsr_partition_set_owner(tiles, (const int64_t[3]){1, 0, 0}, tsr_worker_count()),
		   TSR_EINVAL, "tiles");
	CK_TSR_ERR(tsr_partition_set_owner(tiles, NULL, 0), TSR_EINVAL, "tiles");
	CK_TSR_ERR(tsr_partition_set_owner((tsr_partition_t){0xdead}, (const int64_t[3]){1, 0, 0},
					   0),
		   TSR_ESTALE, "tsr_partition_set_owner");
	/* a destroyed partition is stale */
	tsr_partition_t p2 = tsr_test_tiles(r, tsr_box1(0, 1), "halves");
	CK_TSR(tsr_partition_destroy(p2));
	CK_TSR_ERR(tsr_partition_set_owner(p2, (const int64_t[3]){0, 0, 0}, 0), TSR_ESTALE,
		   "tsr_partition_set_owner");
	/* the failed calls pinned nothing: the mapper sees no owner anywhere */
	struct seen s = {0};
	CK_TSR(tsr_set_mapper(record_owner, &s));
	launch_where(tsr_test_task("where", where, TSR_NONE), tiles);
	CK_TSR(tsr_fence());
	for (int c = 0; c < NCOLORS; c++)
		ck_assert_int_eq(s.owner[c], -1);
	grid_end(r);
}
END_TEST

/* ---------------------------------------------------------- policy names */
static int listed(const char *name, const char **names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

/* Works before tsr_init (tessera-info uses it that way). */
START_TEST(policy_list_has_starpu_and_tessera_policies)
{
	int total = tsr_policy_list(NULL, NULL, 0);
	ck_assert_int_ge(total, 4);
	const char *names[128], *desc[128];
	ck_assert_int_le(total, 128);
	ck_assert_int_eq(tsr_policy_list(names, desc, 128), total);
	static const char *const must[] = {"tsr-locality", "tsr-critpath", "eager", "lws",
					   "ws",           "prio",         "dmda",  NULL};
	for (int i = 0; must[i]; i++)
		ck_assert_msg(listed(must[i], names, total) >= 0, "policy '%s' is not listed",
			      must[i]);
	for (int i = 0; i < total; i++) {
		ck_assert_msg(desc[i] && *desc[i], "policy '%s' has no description", names[i]);
		ck_assert_msg(listed(names[i], names, i) < 0, "policy '%s' listed twice", names[i]);
	}
	/* max bounds what is written */
	const char *two[2] = {NULL, NULL};
	ck_assert_int_eq(tsr_policy_list(two, NULL, 1), total);
	ck_assert_ptr_nonnull(two[0]);
	ck_assert_ptr_null(two[1]);
}
END_TEST

START_TEST(policies_selected_by_name)
{
	static const char *const pol[] = {"tsr-locality", "tsr-critpath", "eager", "dmda"};
	for (int i = 0; i < 4; i++) {
		obs_init(pol[i], 1, NULL, NULL, 0);
		ck_assert_str_eq(tsr_sched_name(), pol[i]);
		CK_TSR(tsr_finalize());
	}
	/* an unknown name is refused, and the message names it */
	obs_clean_env();
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.sched = "no-such-policy";
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "no-such-policy");
	setenv("TSR_SCHED", "tsr-nonsense", 1);
	CK_TSR_ERR(tsr_init(NULL), TSR_EINVAL, "tsr-nonsense");
	/* TSR_SCHED picks Tessera's policies too */
	setenv("TSR_SCHED", "tsr-critpath", 1);
	CK_TSR(tsr_init(NULL));
	ck_assert_str_eq(tsr_sched_name(), "tsr-critpath");
	CK_TSR(tsr_finalize());
}
END_TEST

/* Mapper and owners need a running runtime. */
START_TEST(mapper_calls_need_the_runtime)
{
	CK_TSR_ERR(tsr_set_mapper(pin_modulo, NULL), TSR_ESTATE, "tsr_set_mapper");
	ck_assert_int_eq(tsr_worker_count(), 0);
	ck_assert_int_eq(tsr_worker_kind(0), TSR_WORKER_ANY);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mapper");
	TCase *tc = tsr_test_tcase("mapper", 0);
	tcase_add_test(tc, mapper_pins_each_point_to_its_worker);
	tcase_add_test(tc, mapper_pins_single_launches);
	tcase_add_test(tc, mapper_restricts_worker_kind);
	tcase_add_test(tc, mapper_invalid_worker_fails_the_launch);
	tcase_add_test(tc, mapper_refusal_runs_no_point);
	tcase_add_test(tc, mapper_priority_orders_ready_tasks);
	tcase_add_test(tc, mapper_calls_need_the_runtime);
	suite_add_tcase(s, tc);
	tc = tsr_test_tcase("owners", 0);
	tcase_add_test(tc, partition_owner_pins_colors);
	tcase_add_test(tc, partition_owner_errors_name_the_partition);
	suite_add_tcase(s, tc);
	tc = tsr_test_tcase("policies", 0);
	tcase_add_test(tc, policy_list_has_starpu_and_tessera_policies);
	tcase_add_test(tc, policies_selected_by_name);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
