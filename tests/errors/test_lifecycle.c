/* test_lifecycle.c: objects used after destroy, destroyed twice, left alive at finalize, and
 * calls made before tsr_init or after tsr_finalize: each returns its status, names the object
 * (or the call), and the runtime goes on working. */
#include "tsr_test.h"

static int answer_value;
static void answer(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t v = 42 + answer_value;
	tsr_ctx_return(ctx, &v);
}

START_TEST(region_use_after_destroy)
{
	tsr_region_t r = tsr_test_region_f64("gone", tsr_box1(0, 7)),
		     keep = tsr_test_region_f64("kept", tsr_box1(0, 7));
	tsr_task_t t = tsr_test_task("incr", tsr_test_add_one, TSR_NONE);
	CK_TSR(tsr_region_destroy(r));
	double v = 1.0;
	tsr_box_t b;
	tsr_accessor_t a;
	tsr_partition_t p;
	ck_assert_ptr_null(tsr_region_name(r));
	CK_TSR_ERR(tsr_fill(r, 0, &v, sizeof v), TSR_ESTALE, "tsr_fill", "region");
	CK_TSR_ERR(tsr_region_bounds(r, &b), TSR_ESTALE, "tsr_region_bounds", "region");
	CK_TSR_ERR(tsr_map(r, 0, TSR_READ, &a), TSR_ESTALE, "tsr_map", "region");
	CK_TSR_ERR(tsr_partition_tiles(r, tsr_box1(0, 1), "late", &p), TSR_ESTALE, "region");
	CK_TSR_ERR(tsr_copy(keep, 0, r, 0), TSR_ESTALE, "tsr_copy", "region");
	tsr_req_t q = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_launch(t, 1, &q, NULL, 0, NULL), TSR_ESTALE, "incr", "region");
	/* a new region may reuse the storage slot: the old id must still be stale */
	tsr_region_t n = tsr_test_region_f64("new", tsr_box1(0, 3));
	CK_TSR_ERR(tsr_fill(r, 0, &v, sizeof v), TSR_ESTALE, "tsr_fill", "region");
	ck_assert_str_eq(tsr_region_name(n), "new");
	/* the live regions are untouched */
	double kv[8];
	tsr_test_read1(keep, 0, kv, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(kv[i], 0.0);
	CK_TSR(tsr_region_destroy(n));
	CK_TSR(tsr_region_destroy(keep));
}
END_TEST

/* Region "grid" [0..7] cut in "halves" (*p); *s is the half of color c. */
static tsr_region_t grid_halves(tsr_partition_t *p, int64_t c, tsr_region_t *s)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, 7));
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 1), "halves", p));
	CK_TSR(tsr_partition_subregion(*p, (const int64_t[3]){c, 0, 0}, s));
	return r;
}

START_TEST(partition_and_subregion_use_after_destroy)
{
	tsr_partition_t p;
	tsr_region_t s;
	tsr_region_t r = grid_halves(&p, 1, &s);
	CK_TSR(tsr_partition_destroy(p));
	tsr_box_t b;
	CK_TSR_ERR(tsr_partition_colors(p, &b), TSR_ESTALE, "tsr_partition_colors", "partition");
	CK_TSR_ERR(tsr_partition_subregion(p, (const int64_t[3]){0, 0, 0}, &s), TSR_ESTALE,
		   "partition");
	ck_assert_int_eq(tsr_partition_is_disjoint(p), TSR_ESTALE);
	double v = 2.0;
	CK_TSR_ERR(tsr_fill(s, 0, &v, sizeof v), TSR_ESTALE, "tsr_fill", "region");
	tsr_task_t t = tsr_test_task("incr", tsr_test_add_one, TSR_NONE);
	tsr_req_t q = tsr_req_part(p, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_ESTALE, "incr", "partition");
	double rv[8];
	tsr_test_read1(r, 0, rv, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(rv[i], 0.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(fspace_and_future_use_after_destroy)
{
	tsr_fspace_t fs;
	tsr_field_t f;
	tsr_region_t r;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_destroy(fs));
	CK_TSR_ERR(tsr_fspace_add(fs, "x", TSR_F64, 0, &f), TSR_ESTALE, "tsr_fspace_add",
		   "field space");
	CK_TSR_ERR(tsr_region_create("orphan", tsr_box1(0, 3), fs, &r), TSR_ESTALE, "field space");
	tsr_task_t t = tsr_test_task("answer", answer, TSR_I64);
	tsr_future_t fut;
	CK_TSR(tsr_launch(t, 0, NULL, NULL, 0, &fut));
	CK_TSR(tsr_future_destroy(fut));
	int64_t v;
	CK_TSR_ERR(tsr_future_wait(fut, &v, sizeof v), TSR_ESTALE, "tsr_future_wait", "future");
	tsr_req_t q = tsr_req_future(fut);
	CK_TSR_ERR(tsr_launch(t, 1, &q, NULL, 0, NULL), TSR_ESTALE, "answer", "future");
	CK_TSR(tsr_fence());
}
END_TEST

START_TEST(unknown_ids_are_stale)
{
	tsr_region_t r = {UINT64_C(0xdeadbeef)};
	tsr_partition_t p = {0};
	tsr_future_t f = {~UINT64_C(0)};
	tsr_task_t t = {12345};
	double v = 0;
	CK_TSR_ERR(tsr_fill(r, 0, &v, sizeof v), TSR_ESTALE, "region");
	CK_TSR_ERR(tsr_partition_destroy(p), TSR_ESTALE, "partition");
	CK_TSR_ERR(tsr_future_wait(f, &v, sizeof v), TSR_ESTALE, "future");
	CK_TSR_ERR(tsr_launch(t, 0, NULL, NULL, 0, NULL), TSR_ESTALE, "task");
	/* an id of one kind is not accepted as another */
	tsr_region_t real = tsr_test_region_f64("real", tsr_box1(0, 1));
	tsr_partition_t fake = {real.id};
	CK_TSR_ERR(tsr_partition_destroy(fake), TSR_ESTALE, "partition");
	CK_TSR(tsr_region_destroy(real));
}
END_TEST

START_TEST(double_destroy_is_stale_not_a_crash)
{
	tsr_field_t f;
	tsr_fspace_t fs =
		tsr_test_fspace(1, (const tsr_type_t[]){TSR_F64}, (const char *const[]){"x"}, &f);
	tsr_region_t r, r2;
	CK_TSR(tsr_region_create("twice", tsr_box1(0, 3), fs, &r));
	CK_TSR(tsr_region_create("other", tsr_box1(0, 3), fs, &r2));
	tsr_partition_t p = tsr_test_tiles(r2, tsr_box1(0, 1), "halves");
	tsr_future_t fut;
	CK_TSR(tsr_future_create(TSR_I32, 0, &(int32_t){3}, &fut));
	CK_TSR(tsr_fspace_destroy(fs));
	CK_TSR_ERR(tsr_fspace_destroy(fs), TSR_ESTALE, "tsr_fspace_destroy", "field space");
	CK_TSR(tsr_region_destroy(r));
	CK_TSR_ERR(tsr_region_destroy(r), TSR_ESTALE, "tsr_region_destroy", "region");
	CK_TSR(tsr_partition_destroy(p));
	CK_TSR_ERR(tsr_partition_destroy(p), TSR_ESTALE, "tsr_partition_destroy", "partition");
	CK_TSR(tsr_future_destroy(fut));
	CK_TSR_ERR(tsr_future_destroy(fut), TSR_ESTALE, "tsr_future_destroy", "future");
	/* "other" survived all of that */
	double one = 1.0, v[4];
	CK_TSR(tsr_fill(r2, f, &one, sizeof one));
	tsr_test_read1(r2, f, v, 4);
	ck_assert_double_eq(v[3], 1.0);
	CK_TSR(tsr_region_destroy(r2));
	CK_TSR_ERR(tsr_region_destroy(r2), TSR_ESTALE, "region");
}
END_TEST

/* Subregions die with their partition; destroying one directly is refused. */
START_TEST(destroying_a_subregion_refused)
{
	tsr_partition_t p;
	tsr_region_t s;
	tsr_region_t r = grid_halves(&p, 0, &s);
	CK_TSR_ERR(tsr_region_destroy(s), TSR_EINVAL, "grid", "halves");
	tsr_box_t b;
	CK_TSR(tsr_region_bounds(s, &b));
	ck_assert_int_eq(b.hi[0], 3);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Destroying a region while tasks on it are still queued waits for them or defers: no crash. */
START_TEST(destroy_region_with_tasks_in_flight)
{
	tsr_region_t r = tsr_test_region_f64("busy", tsr_box1(0, 1023));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 7), "tiles");
	tsr_task_t t = tsr_test_task("incr", tsr_test_add_one, TSR_NONE);
	tsr_req_t q = tsr_req_part(p, TSR_READ_WRITE, TSR_FIELDS(0));
	for (int k = 0; k < 20; k++)
		CK_TSR(tsr_index_launch(t, tsr_box1(0, 7), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_fence());
}
END_TEST

/* ---- no fixture: these start and stop the runtime themselves */

START_TEST(finalize_with_live_objects_reports_and_cleans)
{
	tsr_config_t cfg = tsr_test_config();
	CK_TSR(tsr_init(&cfg));
	tsr_fspace_t fs;
	tsr_field_t f;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "x", TSR_F64, 0, &f));
	tsr_region_t r;
	CK_TSR(tsr_region_create("leaky", tsr_box2(0, 31, 0, 31), fs, &r));
	tsr_partition_t p, g;
	CK_TSR(tsr_partition_tiles(r, tsr_box2(0, 1, 0, 1), "quads", &p));
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box2(0, 31, 0, 31), tsr_box2(0, 1, 0, 1),
					(const int64_t[3]){1, 1, 0}, "ghost", &g));
	tsr_region_t s;
	tsr_partition_t inner;
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){1, 1, 0}, &s));
	CK_TSR(tsr_partition_tiles(s, tsr_box2(0, 1, 0, 0), "inner", &inner));
	tsr_task_t t = tsr_test_task("answer", answer, TSR_I64);
	tsr_future_t fut;
	CK_TSR(tsr_launch(t, 0, NULL, NULL, 0, &fut));
	double one = 1.0;
	CK_TSR(tsr_fill(s, f, &one, sizeof one));
	CK_TSR_ERR(tsr_finalize(), TSR_ELIVE, "leaky");
	/* everything is gone: a fresh runtime starts clean and finalizes with nothing alive */
	CK_TSR(tsr_init(&cfg));
	CK_TSR_ERR(tsr_fill(r, f, &one, sizeof one), TSR_ESTALE, "region");
	CK_TSR(tsr_finalize());
}
END_TEST

/* A field still mapped on the host at finalize is unmapped and reported, not waited on forever. */
START_TEST(finalize_with_mapped_field)
{
	tsr_config_t cfg = tsr_test_config();
	CK_TSR(tsr_init(&cfg));
	tsr_region_t r = tsr_test_region_f64("mapped", tsr_box1(0, 15));
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, 0, TSR_READ_WRITE, &a));
	TSR_AT1(&a, double, 3) = 1.0;
	CK_TSR_ERR(tsr_finalize(), TSR_ELIVE, "mapped");
}
END_TEST

START_TEST(calls_before_init_refused)
{
	tsr_fspace_t fs = {0};
	tsr_region_t r = {0};
	tsr_task_t t;
	tsr_future_t f = {0};
	tsr_accessor_t a;
	double v = 0;
	CK_TSR_ERR(tsr_fspace_create(&fs), TSR_ESTATE, "tsr_fspace_create");
	CK_TSR_ERR(tsr_region_create("early", tsr_box1(0, 3), fs, &r), TSR_ESTATE,
		   "tsr_region_create");
	CK_TSR_ERR(tsr_task_register(&(tsr_task_desc_t){.name = "answer",
							.cpu = answer,
							.ret_type = TSR_I64},
				     &t),
		   TSR_ESTATE, "tsr_task_register");
	CK_TSR_ERR(tsr_future_create(TSR_F64, 0, &v, &f), TSR_ESTATE, "tsr_future_create");
	CK_TSR_ERR(tsr_future_wait(f, &v, sizeof v), TSR_ESTATE, "tsr_future_wait");
	CK_TSR_ERR(tsr_fill(r, 0, &v, sizeof v), TSR_ESTATE, "tsr_fill");
	CK_TSR_ERR(tsr_map(r, 0, TSR_READ, &a), TSR_ESTATE, "tsr_map");
	CK_TSR_ERR(tsr_fence(), TSR_ESTATE, "tsr_fence");
	CK_TSR_ERR(tsr_finalize(), TSR_ESTATE, "tsr_finalize");
	ck_assert_ptr_null(tsr_region_name(r));
	ck_assert_int_eq(tsr_ncpu_workers(), 0);
	/* and after all that, the runtime starts normally */
	tsr_test_setup();
	tsr_test_teardown();
}
END_TEST

START_TEST(calls_after_finalize_refused)
{
	tsr_test_setup();
	tsr_region_t r = tsr_test_region_f64("late", tsr_box1(0, 3));
	CK_TSR(tsr_region_destroy(r));
	tsr_test_teardown();
	tsr_fspace_t fs;
	CK_TSR_ERR(tsr_fspace_create(&fs), TSR_ESTATE, "tsr_fspace_create");
	CK_TSR_ERR(tsr_fence(), TSR_ESTATE, "tsr_fence");
	CK_TSR_ERR(tsr_finalize(), TSR_ESTATE, "tsr_finalize");
}
END_TEST

START_TEST(init_twice_refused)
{
	tsr_test_setup();
	CK_TSR_ERR(tsr_init(NULL), TSR_ESTATE, "tsr_init");
	/* the first runtime is still fine */
	tsr_region_t r = tsr_test_region_f64("still", tsr_box1(0, 3));
	CK_TSR(tsr_region_destroy(r));
	tsr_test_teardown();
}
END_TEST

/* Ids from a previous tsr_init are stale in the next one, even when slots are reused. */
START_TEST(ids_from_previous_runtime_are_stale)
{
	tsr_test_setup();
	tsr_region_t old = tsr_test_region_f64("old", tsr_box1(0, 3));
	tsr_task_t t = tsr_test_task("incr", tsr_test_add_one, TSR_NONE);
	CK_TSR(tsr_region_destroy(old));
	old = tsr_test_region_f64("old", tsr_box1(0, 3));
	ck_assert_int_eq(tsr_finalize(), TSR_ELIVE);
	tsr_test_setup();
	tsr_region_t fresh = tsr_test_region_f64("fresh", tsr_box1(0, 3));
	double v = 1;
	CK_TSR_ERR(tsr_fill(old, 0, &v, sizeof v), TSR_ESTALE, "region");
	tsr_req_t q = tsr_req_region(fresh, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_launch(t, 1, &q, NULL, 0, NULL), TSR_ESTALE, "task");
	CK_TSR(tsr_region_destroy(fresh));
	tsr_test_teardown();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_lifecycle");
	TCase *tc = tsr_test_tcase("destroyed", 1);
	tcase_add_test(tc, region_use_after_destroy);
	tcase_add_test(tc, partition_and_subregion_use_after_destroy);
	tcase_add_test(tc, fspace_and_future_use_after_destroy);
	tcase_add_test(tc, unknown_ids_are_stale);
	tcase_add_test(tc, double_destroy_is_stale_not_a_crash);
	tcase_add_test(tc, destroying_a_subregion_refused);
	tcase_add_test(tc, destroy_region_with_tasks_in_flight);
	suite_add_tcase(s, tc);
	TCase *own = tsr_test_tcase("runtime", 0);
	tcase_add_test(own, finalize_with_live_objects_reports_and_cleans);
	tcase_add_test(own, finalize_with_mapped_field);
	tcase_add_test(own, calls_before_init_refused);
	tcase_add_test(own, calls_after_finalize_refused);
	tcase_add_test(own, init_twice_refused);
	tcase_add_test(own, ids_from_previous_runtime_are_stale);
	suite_add_tcase(s, own);
	return tsr_test_run(s);
}
