/* test_map.c: host access. tsr_map waits for the tasks writing the field (and only those),
 * gives an accessor over the region or subregion, and tasks see what the host wrote. */
#include <stdatomic.h>
#include <unistd.h>
#include "tsr_test.h"

static atomic_int finished;

/* slow_write: sleeps, then writes args (double) into field 0 of requirement 0. */
static void slow_write(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	usleep(200000);
	tsr_accessor_t a;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_WRITE, &a))
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		TSR_AT1(&a, double, i) = *(const double *)args;
	atomic_store(&finished, 1);
}

/* The sum of r's field 0 as a task ("sum_field", READ) sees it. */
static double task_sum(tsr_region_t r)
{
	tsr_task_t t = tsr_test_task("sum_field", tsr_test_sum, TSR_F64);
	tsr_req_t q = tsr_req_region(r, TSR_READ, TSR_FIELDS(0));
	tsr_future_t fut;
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, &fut));
	return tsr_test_take_f64(fut);
}

START_TEST(map_read_waits_for_the_writer)
{
	atomic_store(&finished, 0);
	tsr_region_t r = tsr_test_region_f64("v", tsr_box1(0, 99));
	tsr_task_t t = tsr_test_task("slow_write", slow_write, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	double v = 4.0;
	CK_TSR(tsr_launch(t, 1, &q, &v, sizeof v, NULL));
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, 0, TSR_READ, &a));
	ck_assert_int_eq(atomic_load(&finished), 1);
	ck_assert_int_eq(a.lo[0], 0);
	ck_assert_int_eq(a.hi[0], 99);
	for (int i = 0; i < 100; i++)
		ck_assert_double_eq(TSR_AT1(&a, double, i), 4.0);
	CK_TSR(tsr_unmap(r, 0));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(map_write_is_seen_by_later_tasks)
{
	tsr_region_t r = tsr_test_region_f64("v", tsr_box1(1, 10));
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, 0, TSR_WRITE, &a));
	for (int64_t i = 1; i <= 10; i++)
		TSR_AT1(&a, double, i) = (double)i;
	CK_TSR(tsr_unmap(r, 0));
	ck_assert_double_eq(task_sum(r), 55.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* READ_WRITE map: the host sees task results and its changes reach later tasks. */
START_TEST(map_read_write_round_trip)
{
	tsr_region_t r = tsr_test_region_f64("v", tsr_box1(0, 9));
	double three = 3.0;
	CK_TSR(tsr_fill(r, 0, &three, sizeof three));
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, 0, TSR_READ_WRITE, &a));
	for (int i = 0; i < 10; i++) {
		ck_assert_double_eq(TSR_AT1(&a, double, i), 3.0);
		TSR_AT1(&a, double, i) *= (double)i;
	}
	CK_TSR(tsr_unmap(r, 0));
	ck_assert_double_eq(task_sum(r), 135.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Mapping a subregion gives its bounds and the parent's strides, after tiles were written. */
static void write_color(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t p[3];
	tsr_ctx_point(ctx, p);
	tsr_accessor_t a;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_WRITE, &a))
		return;
	for (int64_t y = a.lo[1]; y <= a.hi[1]; y++)
		for (int64_t x = a.lo[0]; x <= a.hi[0]; x++)
			TSR_AT2(&a, double, x, y) = (double)(p[0] + 10 * p[1]);
}

START_TEST(map_subregion_after_index_launch)
{
	tsr_region_t r = tsr_test_region_f64("plane", tsr_box2(0, 7, 0, 3));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box2(0, 1, 0, 1), "quads");
	tsr_task_t t = tsr_test_task("write_color", write_color, TSR_NONE);
	tsr_req_t q = tsr_req_part(p, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(t, tsr_box2(0, 1, 0, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	tsr_region_t s;
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){1, 1, 0}, &s));
	tsr_accessor_t a;
	CK_TSR(tsr_map(s, 0, TSR_READ_WRITE, &a));
	ck_assert_int_eq(a.dim, 2);
	ck_assert_int_eq(a.lo[0], 4);
	ck_assert_int_eq(a.hi[0], 7);
	ck_assert_int_eq(a.lo[1], 2);
	ck_assert_int_eq(a.hi[1], 3);
	ck_assert_uint_eq(a.stride[1], 8);
	for (int64_t y = 2; y <= 3; y++)
		for (int64_t x = 4; x <= 7; x++) {
			ck_assert_double_eq(TSR_AT2(&a, double, x, y), 11.0);
			TSR_AT2(&a, double, x, y) = -1.0;
		}
	CK_TSR(tsr_unmap(s, 0));
	CK_TSR(tsr_map(r, 0, TSR_READ, &a));
	for (int64_t y = 0; y <= 3; y++)
		for (int64_t x = 0; x <= 7; x++)
			ck_assert_double_eq(TSR_AT2(&a, double, x, y),
					    x >= 4 && y >= 2 ? -1.0
							     : (double)(x / 4 + 10 * (y / 2)));
	CK_TSR(tsr_unmap(r, 0));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Mapping one field does not wait for a task that writes only another field. */
START_TEST(map_waits_only_for_tasks_on_that_field)
{
	atomic_store(&finished, 0);
	tsr_field_t f[2];
	tsr_region_t r =
		tsr_test_region("two", tsr_box1(0, 9), 2, (const tsr_type_t[]){TSR_F64, TSR_F64},
				(const char *const[]){"slow", "fast"}, f);
	double seven = 7.0;
	CK_TSR(tsr_fill(r, f[1], &seven, sizeof seven));
	tsr_task_t t = tsr_test_task("slow_write", slow_write, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(f[0]));
	double v = 1.0;
	CK_TSR(tsr_launch(t, 1, &q, &v, sizeof v, NULL));
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, f[1], TSR_READ, &a));
	ck_assert_msg(atomic_load(&finished) == 0,
		      "mapping field 'fast' waited for the task writing 'slow'");
	ck_assert_double_eq(TSR_AT1(&a, double, 3), 7.0);
	CK_TSR(tsr_unmap(r, f[1]));
	CK_TSR(tsr_map(r, f[0], TSR_READ, &a));
	ck_assert_int_eq(atomic_load(&finished), 1);
	ck_assert_double_eq(TSR_AT1(&a, double, 3), 1.0);
	CK_TSR(tsr_unmap(r, f[0]));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Mapping one tile does not wait for a task writing another tile of the same field. */
START_TEST(map_tile_waits_only_for_tasks_on_that_tile)
{
	atomic_store(&finished, 0);
	tsr_region_t r = tsr_test_region_f64("v", tsr_box1(0, 9));
	tsr_partition_t p;
	tsr_region_t s0, s1;
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 1), "halves", &p));
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){0, 0, 0}, &s0));
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){1, 0, 0}, &s1));
	double two = 2.0, five = 5.0;
	CK_TSR(tsr_fill(s1, 0, &two, sizeof two));
	tsr_task_t t = tsr_test_task("slow_write", slow_write, TSR_NONE);
	tsr_req_t q = tsr_req_region(s0, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &q, &five, sizeof five, NULL));
	tsr_accessor_t a;
	CK_TSR(tsr_map(s1, 0, TSR_READ, &a));
	ck_assert_msg(atomic_load(&finished) == 0,
		      "mapping tile 1 waited for the task writing tile 0");
	for (int i = 5; i <= 9; i++)
		ck_assert_double_eq(TSR_AT1(&a, double, i), 2.0);
	CK_TSR(tsr_unmap(s1, 0));
	double v[10];
	tsr_test_read1(r, 0, v, 10);
	for (int i = 0; i < 10; i++)
		ck_assert_double_eq(v[i], i < 5 ? 5.0 : 2.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("map");
	TCase *tc = tsr_test_tcase("map", 1);
	tcase_add_test(tc, map_read_waits_for_the_writer);
	tcase_add_test(tc, map_write_is_seen_by_later_tasks);
	tcase_add_test(tc, map_read_write_round_trip);
	tcase_add_test(tc, map_subregion_after_index_launch);
	tcase_add_test(tc, map_waits_only_for_tasks_on_that_field);
	tcase_add_test(tc, map_tile_waits_only_for_tasks_on_that_tile);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
