/* test_boxes.c: index spaces are plain boxes; volume, containment and intersection follow
 * the inclusive-bounds convention in 1, 2 and 3 dimensions. No runtime needed. */
#include "tsr_test.h"

START_TEST(box_constructors_fill_dim_lo_hi)
{
	tsr_box_t b1 = tsr_box1(-2, 5);
	ck_assert_int_eq(b1.dim, 1);
	ck_assert_int_eq(b1.lo[0], -2);
	ck_assert_int_eq(b1.hi[0], 5);
	tsr_box_t b2 = tsr_box2(0, 3, 10, 12);
	ck_assert_int_eq(b2.dim, 2);
	ck_assert_int_eq(b2.lo[1], 10);
	ck_assert_int_eq(b2.hi[1], 12);
	tsr_box_t b3 = tsr_box3(1, 2, 3, 4, 5, 6);
	ck_assert_int_eq(b3.dim, 3);
	ck_assert_int_eq(b3.lo[2], 5);
	ck_assert_int_eq(b3.hi[2], 6);
}
END_TEST

START_TEST(box_volume_counts_inclusive_points)
{
	ck_assert_int_eq(tsr_box_volume(tsr_box1(0, 0)), 1);
	ck_assert_int_eq(tsr_box_volume(tsr_box1(-2, 5)), 8);
	ck_assert_int_eq(tsr_box_volume(tsr_box2(0, 3, 10, 12)), 12);
	ck_assert_int_eq(tsr_box_volume(tsr_box3(0, 1, 0, 2, 0, 3)), 24);
}
END_TEST

START_TEST(box_volume_of_empty_box_is_zero)
{
	ck_assert_int_eq(tsr_box_volume(tsr_box1(3, 2)), 0);
	ck_assert_int_eq(tsr_box_volume(tsr_box2(0, 3, 5, 4)), 0);
	ck_assert_int_eq(tsr_box_volume(tsr_box3(0, 1, 0, 1, 1, 0)), 0);
}
END_TEST

START_TEST(box_contains_needs_every_dimension_inside)
{
	tsr_box_t outer = tsr_box2(0, 9, 0, 9);
	ck_assert_int_eq(tsr_box_contains(outer, tsr_box2(0, 9, 0, 9)), 1);
	ck_assert_int_eq(tsr_box_contains(outer, tsr_box2(2, 3, 4, 9)), 1);
	ck_assert_int_eq(tsr_box_contains(outer, tsr_box2(2, 3, 4, 10)), 0);
	ck_assert_int_eq(tsr_box_contains(outer, tsr_box2(-1, 3, 4, 5)), 0);
	/* a 1-D box is not inside a 2-D one, even with matching numbers */
	ck_assert_int_eq(tsr_box_contains(outer, tsr_box1(0, 3)), 0);
	ck_assert_int_eq(tsr_box_contains(tsr_box3(0, 4, 0, 4, 0, 4), tsr_box3(1, 1, 2, 2, 4, 4)),
			 1);
	ck_assert_int_eq(tsr_box_contains(tsr_box3(0, 4, 0, 4, 0, 4), tsr_box3(1, 1, 2, 2, 4, 5)),
			 0);
}
END_TEST

START_TEST(box_intersect_returns_overlap)
{
	tsr_box_t out;
	ck_assert_int_eq(tsr_box_intersect(tsr_box1(0, 5), tsr_box1(3, 9), &out), 1);
	ck_assert_int_eq(out.dim, 1);
	ck_assert_int_eq(out.lo[0], 3);
	ck_assert_int_eq(out.hi[0], 5);
	ck_assert_int_eq(tsr_box_intersect(tsr_box2(0, 5, 0, 5), tsr_box2(5, 8, -3, 0), &out), 1);
	ck_assert_int_eq(out.lo[0], 5);
	ck_assert_int_eq(out.hi[0], 5);
	ck_assert_int_eq(out.lo[1], 0);
	ck_assert_int_eq(out.hi[1], 0);
	ck_assert_int_eq(tsr_box_intersect(tsr_box3(0, 3, 0, 3, 0, 3), tsr_box3(1, 2, 2, 5, 3, 9),
					   &out),
			 1);
	ck_assert_int_eq(tsr_box_volume(out), 2 * 2 * 1);
}
END_TEST

START_TEST(box_intersect_of_disjoint_boxes_is_empty)
{
	tsr_box_t out;
	ck_assert_int_eq(tsr_box_intersect(tsr_box1(0, 5), tsr_box1(6, 9), &out), 0);
	/* overlapping in one dimension only is not enough */
	ck_assert_int_eq(tsr_box_intersect(tsr_box2(0, 5, 0, 5), tsr_box2(0, 5, 6, 7), NULL), 0);
	ck_assert_int_eq(tsr_box_intersect(tsr_box1(0, 5), tsr_box2(0, 5, 0, 5), NULL), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("boxes");
	TCase *tc = tsr_test_tcase("boxes", 0);
	tcase_add_test(tc, box_constructors_fill_dim_lo_hi);
	tcase_add_test(tc, box_volume_counts_inclusive_points);
	tcase_add_test(tc, box_volume_of_empty_box_is_zero);
	tcase_add_test(tc, box_contains_needs_every_dimension_inside);
	tcase_add_test(tc, box_intersect_returns_overlap);
	tcase_add_test(tc, box_intersect_of_disjoint_boxes_is_empty);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
