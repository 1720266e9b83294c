/* test_overflow.c: sizes that do not fit are refused, never wrapped. Box volumes that overflow
 * int64_t, point counts times element sizes that overflow size_t, halos that would overflow
 * hi + halo, color spaces too large to count: each call fails with its code, names the object,
 * creates nothing (tsr_finalize in the teardown finds nothing alive) and leaves data intact. */
#include "tsr_test.h"

static tsr_fspace_t one_field(const char *name, tsr_type_t type, size_t bytes)
{
	tsr_fspace_t fs;
	tsr_field_t f;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, name, type, bytes, &f));
	return fs;
}

START_TEST(box_volume_that_does_not_fit_is_minus_one)
{
	/* 2^64 points: used to come back as 0 */
	ck_assert_int_eq(tsr_box_volume(tsr_box1(INT64_MIN, INT64_MAX)), -1);
	/* 2^63 points in one dimension: hi - lo + 1 itself overflows */
	ck_assert_int_eq(tsr_box_volume(tsr_box1(0, INT64_MAX)), -1);
	/* 3 x 3074457345618258603 = 2^63 + 1 points: used to come back negative */
	ck_assert_int_eq(tsr_box_volume(tsr_box2(0, 2, 0, 3074457345618258602LL)), -1);
	/* the largest counts that fit are still exact */
	ck_assert_int_eq(tsr_box_volume(tsr_box2(0, (1LL << 31) - 1, 0, (1LL << 31) - 1)),
			 1LL << 62);
	ck_assert_int_eq(tsr_box_volume(tsr_box1(1, INT64_MAX)), INT64_MAX);
	/* empty and invalid boxes keep their documented 0 */
	ck_assert_int_eq(tsr_box_volume(tsr_box1(INT64_MAX, INT64_MIN)), 0);
	tsr_box_t bad = tsr_box1(0, 3);
	bad.dim = 4;
	ck_assert_int_eq(tsr_box_volume(bad), 0);
}
END_TEST

START_TEST(region_whose_bytes_overflow_refused)
{
	/* 2^21 x 2^10 x 2^30 = 2^61 f64 points: every extent and the plane fit StarPU's 32 bits,
	 * but 2^61 x 8 bytes wraps to 0 */
	tsr_fspace_t fs = one_field("phi", TSR_F64, 0);
	tsr_region_t r = {0};
	CK_TSR_ERR(tsr_region_create("galaxy",
				     tsr_box3(0, (1 << 21) - 1, 0, (1 << 10) - 1, 0, (1 << 30) - 1),
				     fs, &r),
		   TSR_EBOUNDS, "galaxy", "phi", "overflow");
	ck_assert_int_eq(r.id, 0);
	CK_TSR(tsr_fspace_destroy(fs));
}
END_TEST

START_TEST(bytes_field_whose_array_overflows_refused)
{
	/* 4 elements of 2^62 bytes: 2^64 bytes, a 0-byte allocation once wrapped */
	tsr_fspace_t fs = one_field("blob", TSR_BYTES, (size_t)1 << 62);
	tsr_region_t r = {0};
	CK_TSR_ERR(tsr_region_create("four", tsr_box1(0, 3), fs, &r), TSR_EBOUNDS, "four", "blob",
		   "overflow");
	ck_assert_int_eq(r.id, 0);
	CK_TSR(tsr_fspace_destroy(fs));
}
END_TEST

START_TEST(region_of_2_64_points_refused)
{
	tsr_fspace_t fs = one_field("x", TSR_F64, 0);
	tsr_region_t r = {0};
	CK_TSR_ERR(tsr_region_create("everything", tsr_box1(INT64_MIN, INT64_MAX), fs, &r),
		   TSR_EBOUNDS, "everything", "64 bits");
	CK_TSR_ERR(tsr_region_create("half", tsr_box2(0, 2, 0, 3074457345618258602LL), fs, &r),
		   TSR_EBOUNDS, "half", "64 bits");
	ck_assert_int_eq(r.id, 0);
	CK_TSR(tsr_fspace_destroy(fs));
}
END_TEST

/* A halo of INT64_MAX means "the whole region": clipped, never wrapped negative. */
START_TEST(halo_of_int64_max_clips_to_the_region)
{
	tsr_region_t r = tsr_test_line();
	tsr_partition_t p;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, 7), tsr_box1(0, 1),
					(const int64_t[3]){INT64_MAX, 0, 0}, "all", &p));
	ck_assert_int_eq(tsr_partition_is_disjoint(p), 0);
	for (int64_t c = 0; c < 2; c++) {
		tsr_region_t s;
		tsr_box_t b;
		CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){c, 0, 0}, &s));
		CK_TSR(tsr_region_bounds(s, &b));
		ck_assert_int_eq(b.lo[0], 0);
		ck_assert_int_eq(b.hi[0], 7);
	}
	CK_TSR(tsr_partition_destroy(p));
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static void overwrite(tsr_ctx_t *ctx, const void *args, size_t arglen);

/* A region at the very top (and bottom) of int64_t: hi + 1 and lo - 1 do not exist. */
START_TEST(halo_at_the_ends_of_int64_clips)
{
	tsr_region_t top = tsr_test_region_f64("top", tsr_box1(INT64_MAX - 7, INT64_MAX));
	tsr_region_t bottom = tsr_test_region_f64("bottom", tsr_box1(INT64_MIN, INT64_MIN + 7));
	tsr_partition_t pt, pb;
	CK_TSR(tsr_partition_tiles_halo(top, tsr_box1(INT64_MAX - 7, INT64_MAX), tsr_box1(0, 1),
					(const int64_t[3]){1, 0, 0}, "rim", &pt));
	CK_TSR(tsr_partition_tiles_halo(bottom, tsr_box1(INT64_MIN, INT64_MIN + 7), tsr_box1(0, 1),
					(const int64_t[3]){INT64_MAX, 0, 0}, "rim", &pb));
	tsr_region_t s;
	tsr_box_t b;
	CK_TSR(tsr_partition_subregion(pt, (const int64_t[3]){1, 0, 0}, &s));
	CK_TSR(tsr_region_bounds(s, &b));
	ck_assert_int_eq(b.lo[0], INT64_MAX - 4);
	ck_assert_int_eq(b.hi[0], INT64_MAX);
	CK_TSR(tsr_partition_subregion(pb, (const int64_t[3]){0, 0, 0}, &s));
	CK_TSR(tsr_region_bounds(s, &b));
	ck_assert_int_eq(b.lo[0], INT64_MIN);
	ck_assert_int_eq(b.hi[0], INT64_MIN + 7);
	/* a task on the top tile sees its true bounds (lo + extent would overflow there) */
	tsr_task_t t = tsr_test_task("edge", overwrite, TSR_NONE);
	tsr_partition_t tiles = tsr_test_tiles(top, tsr_box1(0, 1), "tiles");
	tsr_req_t q = tsr_req_part(tiles, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	double w[8];
	tsr_test_read1(top, 0, w, 8);
	for (int i = 0; i < 8; i++)
		ck_assert(w[i] == -1.0);
	/* the views really are the region's data: a fill through the rim reaches the root */
	double two = 2.0, v[8];
	CK_TSR(tsr_fill(s, 0, &two, sizeof two));
	tsr_test_read1(bottom, 0, v, 8);
	for (int i = 0; i < 8; i++)
		ck_assert(v[i] == 2.0);
	CK_TSR(tsr_region_destroy(top));
	CK_TSR(tsr_region_destroy(bottom));
}
END_TEST

START_TEST(color_space_too_large_refused)
{
	tsr_region_t r = tsr_test_line();
	tsr_partition_t p = {0};
	CK_TSR_ERR(tsr_partition_tiles(r, tsr_box1(INT64_MIN, INT64_MAX), "myriad", &p),
		   TSR_EBOUNDS, "myriad", "line", "64 bits");
	CK_TSR_ERR(tsr_partition_tiles(r, tsr_box1(0, (int64_t)1 << 40), "myriad", &p), TSR_EBOUNDS,
		   "myriad", "line");
	ck_assert_int_eq(p.id, 0);
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* overwrite: field 0 of requirement 0 set to -1. It counts offsets from lo, since with
 * hi = INT64_MAX the usual `i <= hi; i++` would never end. */
static void overwrite(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_WRITE, &a))
		return;
	for (int64_t k = 0; k <= a.hi[0] - a.lo[0]; k++)
		TSR_AT1(&a, double, a.lo[0] + k) = -1.0;
}

START_TEST(launch_domain_too_large_refused)
{
	tsr_region_t r = tsr_test_line();
	tsr_task_t t = tsr_test_task("everywhere", overwrite, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_READ, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, INT64_MAX), 1, &q, NULL, 0, TSR_REDOP_NONE,
				    NULL),
		   TSR_EBOUNDS, "everywhere", "64 bits");
	CK_TSR_ERR(tsr_index_launch(t, tsr_box3(INT64_MIN, INT64_MAX, 0, 1, 0, 1), 1, &q, NULL, 0,
				    TSR_REDOP_NONE, NULL),
		   TSR_EBOUNDS, "everywhere", "64 bits");
	CK_TSR(tsr_fence());
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* tessera.h: TSR_EINVAL is "bad dimension"; a box of the right kind but empty or too large is
 * TSR_EBOUNDS. */
START_TEST(bad_dimension_is_einval)
{
	tsr_region_t r = tsr_test_line();
	tsr_fspace_t fs = one_field("x", TSR_F64, 0);
	tsr_box_t four = tsr_box3(0, 1, 0, 1, 0, 1);
	four.dim = 4;
	tsr_region_t bad = {0};
	CK_TSR_ERR(tsr_region_create("tesseract", four, fs, &bad), TSR_EINVAL, "tesseract",
		   "1-3 dimensional");
	tsr_box_t zero = tsr_box1(0, 1);
	zero.dim = 0;
	tsr_partition_t p = {0};
	CK_TSR_ERR(tsr_partition_tiles(r, zero, "flatland", &p), TSR_EINVAL, "flatland", "line");
	tsr_task_t t = tsr_test_task("hyper", overwrite, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_READ, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_index_launch(t, four, 1, &q, NULL, 0, TSR_REDOP_NONE, NULL), TSR_EINVAL,
		   "hyper");
	ck_assert_int_eq(bad.id, 0);
	ck_assert_int_eq(p.id, 0);
	CK_TSR(tsr_fspace_destroy(fs));
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A negative privilege has the REDUCE bit set: it must be refused before TSR_REDUCE's shift. */
START_TEST(negative_privilege_refused)
{
	tsr_region_t r = tsr_test_line();
	tsr_task_t t = tsr_test_task("minus", overwrite, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, -1, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_launch(t, 1, &q, NULL, 0, NULL), TSR_EINVAL, "minus", "line", "privilege");
	q.priv = INT32_MIN | TSR_REDUCE_BASE;
	CK_TSR_ERR(tsr_launch(t, 1, &q, NULL, 0, NULL), TSR_EINVAL, "minus", "line", "privilege");
	CK_TSR(tsr_fence());
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_overflow");
	TCase *plain = tsr_test_tcase("volume", 0);
	tcase_add_test(plain, box_volume_that_does_not_fit_is_minus_one);
	suite_add_tcase(s, plain);
	TCase *tc = tsr_test_tcase("overflow", 1);
	tcase_add_test(tc, region_whose_bytes_overflow_refused);
	tcase_add_test(tc, bytes_field_whose_array_overflows_refused);
	tcase_add_test(tc, region_of_2_64_points_refused);
	tcase_add_test(tc, halo_of_int64_max_clips_to_the_region);
	tcase_add_test(tc, halo_at_the_ends_of_int64_clips);
	tcase_add_test(tc, color_space_too_large_refused);
	tcase_add_test(tc, launch_domain_too_large_refused);
	tcase_add_test(tc, bad_dimension_is_einval);
	tcase_add_test(tc, negative_privilege_refused);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
