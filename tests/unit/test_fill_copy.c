/* test_fill_copy.c: tsr_fill sets a field of a region or subregion; tsr_copy copies a field
 * between regions (or subregions) of the same extents; both are ordered with tasks. */
#include "tsr_test.h"

START_TEST(fill_every_type)
{
	tsr_field_t f[5];
	tsr_region_t r =
		tsr_test_region("all", tsr_box2(0, 3, 0, 2), 5,
				(const tsr_type_t[]){TSR_F32, TSR_F64, TSR_I32, TSR_I64, TSR_BYTES},
				NULL, f);
	float vf = 1.5f;
	double vd = -2.75;
	int32_t vi = -7;
	int64_t vl = INT64_C(1) << 45;
	unsigned char vb[16];
	for (int i = 0; i < 16; i++)
		vb[i] = (unsigned char)(0xa0 + i);
	CK_TSR(tsr_fill(r, f[0], &vf, sizeof vf));
	CK_TSR(tsr_fill(r, f[1], &vd, sizeof vd));
	CK_TSR(tsr_fill(r, f[2], &vi, sizeof vi));
	CK_TSR(tsr_fill(r, f[3], &vl, sizeof vl));
	CK_TSR(tsr_fill(r, f[4], vb, sizeof vb));
	const void *want[5] = {&vf, &vd, &vi, &vl, vb};
	for (int k = 0; k < 5; k++) {
		tsr_accessor_t a;
		CK_TSR(tsr_map(r, f[k], TSR_READ, &a));
		for (int64_t y = 0; y <= 2; y++)
			for (int64_t x = 0; x <= 3; x++) {
				const unsigned char *e =
					(const unsigned char *)a.ptr +
					(x + y * (int64_t)a.stride[1]) * (int64_t)a.elem_size;
				ck_assert_msg(memcmp(e, want[k], a.elem_size) == 0,
					      "field %d at (%lld,%lld)", k, (long long)x,
					      (long long)y);
			}
		CK_TSR(tsr_unmap(r, f[k]));
	}
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(fill_subregion_leaves_the_rest)
{
	tsr_region_t r = tsr_test_region_f64("v", tsr_box2(0, 5, 0, 5));
	tsr_partition_t p;
	tsr_region_t s;
	CK_TSR(tsr_partition_tiles(r, tsr_box2(0, 1, 0, 1), "quads", &p));
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){1, 0, 0}, &s));
	double one = 1.0, nine = 9.0;
	CK_TSR(tsr_fill(r, 0, &one, sizeof one));
	CK_TSR(tsr_fill(s, 0, &nine, sizeof nine));
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, 0, TSR_READ, &a));
	for (int64_t y = 0; y <= 5; y++)
		for (int64_t x = 0; x <= 5; x++)
			ck_assert_double_eq(TSR_AT2(&a, double, x, y),
					    x >= 3 && y <= 2 ? 9.0 : 1.0);
	CK_TSR(tsr_unmap(r, 0));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Fills are ordered with tasks: fill, task adds, fill again, task adds. */
START_TEST(fill_is_ordered_with_tasks)
{
	tsr_region_t r = tsr_test_region_f64("v", tsr_box1(0, 9));
	tsr_task_t t = tsr_test_task("add_one", tsr_test_add_one, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0));
	double a = 5.0, b = 20.0, v[10];
	CK_TSR(tsr_fill(r, 0, &a, sizeof a));
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	tsr_test_read1(r, 0, v, 10);
	ck_assert_double_eq(v[9], 7.0);
	CK_TSR(tsr_fill(r, 0, &b, sizeof b));
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	tsr_test_ck_all1(r, 0, 10, 21.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Copy between two regions of the same extents but different bounds: element order is kept,
 * and a later write to the source does not reach the copy. */
START_TEST(copy_between_regions_with_shifted_bounds)
{
	tsr_region_t src = tsr_test_region_f64("src", tsr_box1(0, 9)),
		     dst = tsr_test_region_f64("dst", tsr_box1(100, 109));
	tsr_task_t t = tsr_test_task("iota", tsr_test_iota, TSR_NONE);
	tsr_req_t q = tsr_req_region(src, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &q, (const double[2]){1.0, 0.0}, 2 * sizeof(double), NULL));
	CK_TSR(tsr_copy(src, 0, dst, 0));
	double zero = 0.0, v[10];
	CK_TSR(tsr_fill(src, 0, &zero, sizeof zero));
	tsr_test_read1(dst, 0, v, 10);
	for (int i = 0; i < 10; i++)
		ck_assert_double_eq(v[i], (double)i);
	tsr_test_read1(src, 0, v, 10);
	ck_assert_double_eq(v[9], 0.0);
	CK_TSR(tsr_region_destroy(src));
	CK_TSR(tsr_region_destroy(dst));
}
END_TEST

/* Copy between two fields of one region, and between subregions of a 2-D region. */
START_TEST(copy_between_fields_and_subregions)
{
	tsr_field_t f[2];
	tsr_region_t r = tsr_test_region("ab", tsr_box2(0, 3, 0, 3), 2,
					 (const tsr_type_t[]){TSR_I32, TSR_I32},
					 (const char *const[]){"a", "b"}, f);
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, f[0], TSR_WRITE, &a));
	for (int64_t y = 0; y <= 3; y++)
		for (int64_t x = 0; x <= 3; x++)
			TSR_AT2(&a, int32_t, x, y) = (int32_t)(10 * y + x);
	CK_TSR(tsr_unmap(r, f[0]));
	CK_TSR(tsr_copy(r, f[0], r, f[1]));
	/* the top-left quadrant of a onto the bottom-right quadrant of b */
	tsr_partition_t p;
	tsr_region_t tl, br;
	CK_TSR(tsr_partition_tiles(r, tsr_box2(0, 1, 0, 1), "quads", &p));
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){0, 0, 0}, &tl));
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){1, 1, 0}, &br));
	CK_TSR(tsr_copy(tl, f[0], br, f[1]));
	CK_TSR(tsr_map(r, f[1], TSR_READ, &a));
	for (int64_t y = 0; y <= 3; y++)
		for (int64_t x = 0; x <= 3; x++) {
			int32_t want = x >= 2 && y >= 2 ? (int32_t)(10 * (y - 2) + (x - 2))
							: (int32_t)(10 * y + x);
			ck_assert_int_eq(TSR_AT2(&a, int32_t, x, y), want);
		}
	CK_TSR(tsr_unmap(r, f[1]));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fill_copy");
	TCase *tc = tsr_test_tcase("fill_copy", 1);
	tcase_add_test(tc, fill_every_type);
	tcase_add_test(tc, fill_subregion_leaves_the_rest);
	tcase_add_test(tc, fill_is_ordered_with_tasks);
	tcase_add_test(tc, copy_between_regions_with_shifted_bounds);
	tcase_add_test(tc, copy_between_fields_and_subregions);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
