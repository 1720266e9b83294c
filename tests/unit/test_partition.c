/* test_partition.c: equal tiles (1-3-D, remainder to the first tiles), halo tiles (extended,
 * clipped, aliased), explicit box lists, nested partitions, disjointness flags, subregion
 * bounds and names, and the lifetime of subregions. */
#include "tsr_test.h"

static tsr_box_t sub_bounds(tsr_partition_t p, int64_t c0, int64_t c1, int64_t c2)
{
	tsr_region_t s;
	tsr_box_t b;
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){c0, c1, c2}, &s));
	CK_TSR(tsr_region_bounds(s, &b));
	return b;
}

static void ck_box(tsr_box_t got, tsr_box_t want)
{
	ck_assert_int_eq(got.dim, want.dim);
	for (int d = 0; d < want.dim; d++) {
		ck_assert_msg(got.lo[d] == want.lo[d] && got.hi[d] == want.hi[d],
			      "dimension %d: got [%lld..%lld], want [%lld..%lld]", d,
			      (long long)got.lo[d], (long long)got.hi[d], (long long)want.lo[d],
			      (long long)want.hi[d]);
	}
}

START_TEST(tiles_1d_give_remainder_to_first_tiles)
{
	tsr_region_t r = tsr_test_region_f64("line", tsr_box1(0, 9));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 2), "tiles");
	ck_box(sub_bounds(p, 0, 0, 0), tsr_box1(0, 3));
	ck_box(sub_bounds(p, 1, 0, 0), tsr_box1(4, 6));
	ck_box(sub_bounds(p, 2, 0, 0), tsr_box1(7, 9));
	ck_assert_int_eq(tsr_partition_is_disjoint(p), 1);
	tsr_box_t colors;
	CK_TSR(tsr_partition_colors(p, &colors));
	ck_box(colors, tsr_box1(0, 2));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(tiles_color_space_may_start_anywhere)
{
	tsr_region_t r = tsr_test_region_f64("line", tsr_box1(100, 109));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(5, 6), "halves");
	ck_box(sub_bounds(p, 5, 0, 0), tsr_box1(100, 104));
	ck_box(sub_bounds(p, 6, 0, 0), tsr_box1(105, 109));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(tiles_2d_bounds)
{
	tsr_region_t r = tsr_test_region_f64("plane", tsr_box2(0, 7, 0, 5));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box2(0, 1, 0, 2), "blocks");
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++)
			ck_box(sub_bounds(p, i, j, 0),
			       tsr_box2(4 * i, 4 * i + 3, 2 * j, 2 * j + 1));
	ck_assert_int_eq(tsr_partition_is_disjoint(p), 1);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* 3-D tiles with uneven extents cover every point exactly once. */
START_TEST(tiles_3d_cover_region_exactly_once)
{
	tsr_box_t rb = tsr_box3(0, 6, -1, 3, 2, 4); /* 7 x 5 x 3 */
	tsr_region_t r = tsr_test_region_f64("cube", rb);
	tsr_partition_t p = tsr_test_tiles(r, tsr_box3(0, 2, 0, 1, 0, 2), "bricks");
	int count[7][5][3] = {{{0}}};
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 3; k++) {
				tsr_box_t b = sub_bounds(p, i, j, k);
				ck_assert_int_eq(b.dim, 3);
				ck_assert_int_eq(tsr_box_volume(b),
						 (i == 0 ? 3 : 2) * (j == 0 ? 3 : 2) * 1);
				for (int64_t z = b.lo[2]; z <= b.hi[2]; z++)
					for (int64_t y = b.lo[1]; y <= b.hi[1]; y++)
						for (int64_t x = b.lo[0]; x <= b.hi[0]; x++)
							count[x][y + 1][z - 2]++;
			}
	for (int x = 0; x < 7; x++)
		for (int y = 0; y < 5; y++)
			for (int z = 0; z < 3; z++)
				ck_assert_int_eq(count[x][y][z], 1);
	ck_assert_int_eq(tsr_partition_is_disjoint(p), 1);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(halo_tiles_1d_extend_and_clip)
{
	tsr_region_t r = tsr_test_region_f64("line", tsr_box1(0, 11));
	tsr_partition_t p;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(1, 10), tsr_box1(0, 1),
					(const int64_t[3]){1, 0, 0}, "ghost", &p));
	ck_box(sub_bounds(p, 0, 0, 0), tsr_box1(0, 6));
	ck_box(sub_bounds(p, 1, 0, 0), tsr_box1(5, 11));
	ck_assert_int_eq(tsr_partition_is_disjoint(p), 0);
	/* halo 2 on the full domain is clipped at both ends */
	tsr_partition_t q;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, 11), tsr_box1(0, 2),
					(const int64_t[3]){2, 0, 0}, "wide", &q));
	ck_box(sub_bounds(q, 0, 0, 0), tsr_box1(0, 5));
	ck_box(sub_bounds(q, 1, 0, 0), tsr_box1(2, 9));
	ck_box(sub_bounds(q, 2, 0, 0), tsr_box1(6, 11));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(halo_tiles_without_halo_are_disjoint)
{
	tsr_region_t r = tsr_test_region_f64("line", tsr_box1(0, 11));
	tsr_partition_t p, q;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(2, 9), tsr_box1(0, 1), NULL, "inner", &p));
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, 11), tsr_box1(0, 1),
					(const int64_t[3]){0, 0, 0}, "zero", &q));
	ck_box(sub_bounds(p, 0, 0, 0), tsr_box1(2, 5));
	ck_box(sub_bounds(p, 1, 0, 0), tsr_box1(6, 9));
	ck_assert_int_eq(tsr_partition_is_disjoint(p), 1);
	ck_assert_int_eq(tsr_partition_is_disjoint(q), 1);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(halo_tiles_2d_per_dimension_halo)
{
	tsr_region_t r = tsr_test_region_f64("plane", tsr_box2(0, 9, 0, 9));
	tsr_partition_t p;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box2(0, 9, 0, 9), tsr_box2(0, 1, 0, 1),
					(const int64_t[3]){1, 2, 0}, "ghost", &p));
	ck_box(sub_bounds(p, 0, 0, 0), tsr_box2(0, 5, 0, 6));
	ck_box(sub_bounds(p, 1, 0, 0), tsr_box2(4, 9, 0, 6));
	ck_box(sub_bounds(p, 0, 1, 0), tsr_box2(0, 5, 3, 9));
	ck_box(sub_bounds(p, 1, 1, 0), tsr_box2(4, 9, 3, 9));
	ck_assert_int_eq(tsr_partition_is_disjoint(p), 0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(halo_tiles_3d_bounds)
{
	tsr_region_t r = tsr_test_region_f64("cube", tsr_box3(0, 7, 0, 7, 0, 7));
	tsr_partition_t p;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box3(1, 6, 1, 6, 1, 6), tsr_box3(0, 1, 0, 0, 0, 2),
					(const int64_t[3]){1, 1, 1}, "ghost", &p));
	ck_box(sub_bounds(p, 0, 0, 0), tsr_box3(0, 4, 0, 7, 0, 3));
	ck_box(sub_bounds(p, 1, 0, 2), tsr_box3(3, 7, 0, 7, 4, 7));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(box_list_disjoint_flag_follows_overlap)
{
	tsr_region_t r = tsr_test_region_f64("line", tsr_box1(0, 9));
	tsr_partition_t d, a;
	const tsr_box_t apart[] = {tsr_box1(6, 9), tsr_box1(0, 3)};
	const tsr_box_t overlap[] = {tsr_box1(0, 5), tsr_box1(4, 9), tsr_box1(9, 9)};
	CK_TSR(tsr_partition_boxes(r, 2, apart, "apart", &d));
	CK_TSR(tsr_partition_boxes(r, 3, overlap, "overlap", &a));
	ck_assert_int_eq(tsr_partition_is_disjoint(d), 1);
	ck_assert_int_eq(tsr_partition_is_disjoint(a), 0);
	tsr_box_t colors;
	CK_TSR(tsr_partition_colors(a, &colors));
	ck_box(colors, tsr_box1(0, 2));
	/* colors follow the list order; the boxes need not cover the region */
	ck_box(sub_bounds(d, 0, 0, 0), tsr_box1(6, 9));
	ck_box(sub_bounds(d, 1, 0, 0), tsr_box1(0, 3));
	ck_box(sub_bounds(a, 2, 0, 0), tsr_box1(9, 9));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(box_list_2d)
{
	tsr_region_t r = tsr_test_region_f64("plane", tsr_box2(0, 9, 0, 9));
	tsr_partition_t p;
	const tsr_box_t boxes[] = {tsr_box2(0, 9, 0, 0), tsr_box2(0, 0, 1, 9),
				   tsr_box2(1, 9, 1, 9)};
	CK_TSR(tsr_partition_boxes(r, 3, boxes, "edges", &p));
	ck_assert_int_eq(tsr_partition_is_disjoint(p), 1);
	ck_box(sub_bounds(p, 1, 0, 0), tsr_box2(0, 0, 1, 9));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(nested_partitions_two_levels)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, 15));
	tsr_partition_t top, mid, low;
	tsr_region_t s1, s11;
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 1), "top", &top));
	CK_TSR(tsr_partition_subregion(top, (const int64_t[3]){1, 0, 0}, &s1));
	CK_TSR(tsr_partition_tiles(s1, tsr_box1(0, 1), "mid", &mid));
	ck_box(sub_bounds(mid, 0, 0, 0), tsr_box1(8, 11));
	ck_box(sub_bounds(mid, 1, 0, 0), tsr_box1(12, 15));
	CK_TSR(tsr_partition_subregion(mid, (const int64_t[3]){1, 0, 0}, &s11));
	const tsr_box_t b[] = {tsr_box1(12, 12), tsr_box1(13, 15)};
	CK_TSR(tsr_partition_boxes(s11, 2, b, "low", &low));
	ck_box(sub_bounds(low, 1, 0, 0), tsr_box1(13, 15));
	ck_assert_int_eq(tsr_partition_is_disjoint(mid), 1);
	ck_assert_int_eq(tsr_partition_is_disjoint(low), 1);
	/* names show the path from the root */
	const char *n = tsr_region_name(s11);
	ck_assert_ptr_nonnull(n);
	ck_assert_ptr_nonnull(strstr(n, "grid"));
	ck_assert_ptr_nonnull(strstr(n, "top"));
	ck_assert_ptr_nonnull(strstr(n, "mid"));
	tsr_region_t leaf;
	CK_TSR(tsr_partition_subregion(low, (const int64_t[3]){0, 0, 0}, &leaf));
	ck_assert_ptr_nonnull(strstr(tsr_region_name(leaf), "low"));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A halo partition of a subregion: the halo is clipped to the subregion, not to the root. */
START_TEST(halo_partition_of_subregion_clips_to_it)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, 19));
	tsr_partition_t top, h;
	tsr_region_t s;
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 1), "top", &top));
	CK_TSR(tsr_partition_subregion(top, (const int64_t[3]){1, 0, 0}, &s));
	CK_TSR(tsr_partition_tiles_halo(s, tsr_box1(10, 19), tsr_box1(0, 1),
					(const int64_t[3]){2, 0, 0}, "ghost", &h));
	ck_box(sub_bounds(h, 0, 0, 0), tsr_box1(10, 16));
	ck_box(sub_bounds(h, 1, 0, 0), tsr_box1(13, 19));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(several_partitions_of_one_region_coexist)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, 11));
	tsr_partition_t a, b, c;
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 1), "halves", &a));
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 2), "thirds", &b));
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, 11), tsr_box1(0, 3),
					(const int64_t[3]){1, 0, 0}, "ghost", &c));
	ck_box(sub_bounds(a, 1, 0, 0), tsr_box1(6, 11));
	ck_box(sub_bounds(b, 1, 0, 0), tsr_box1(4, 7));
	ck_box(sub_bounds(c, 1, 0, 0), tsr_box1(2, 6));
	CK_TSR(tsr_partition_destroy(b));
	ck_box(sub_bounds(a, 0, 0, 0), tsr_box1(0, 5));
	ck_box(sub_bounds(c, 3, 0, 0), tsr_box1(8, 11));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(partition_destroy_takes_subregions_and_nested_partitions)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, 15));
	tsr_partition_t top, mid;
	tsr_region_t s, t;
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 1), "top", &top));
	CK_TSR(tsr_partition_subregion(top, (const int64_t[3]){0, 0, 0}, &s));
	CK_TSR(tsr_partition_tiles(s, tsr_box1(0, 1), "mid", &mid));
	CK_TSR(tsr_partition_subregion(mid, (const int64_t[3]){0, 0, 0}, &t));
	CK_TSR(tsr_partition_destroy(top));
	ck_assert_ptr_null(tsr_region_name(s));
	ck_assert_ptr_null(tsr_region_name(t));
	tsr_box_t b;
	ck_assert_int_eq(tsr_partition_colors(mid, &b), TSR_ESTALE);
	ck_assert_int_eq(tsr_region_bounds(t, &b), TSR_ESTALE);
	/* the root is untouched */
	CK_TSR(tsr_region_bounds(r, &b));
	ck_box(b, tsr_box1(0, 15));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(region_destroy_takes_its_partitions)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, 15));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	CK_TSR(tsr_region_destroy(r));
	ck_assert_int_eq(tsr_partition_is_disjoint(p), TSR_ESTALE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("partition");
	TCase *tc = tsr_test_tcase("partition", 1);
	tcase_add_test(tc, tiles_1d_give_remainder_to_first_tiles);
	tcase_add_test(tc, tiles_color_space_may_start_anywhere);
	tcase_add_test(tc, tiles_2d_bounds);
	tcase_add_test(tc, tiles_3d_cover_region_exactly_once);
	tcase_add_test(tc, halo_tiles_1d_extend_and_clip);
	tcase_add_test(tc, halo_tiles_without_halo_are_disjoint);
	tcase_add_test(tc, halo_tiles_2d_per_dimension_halo);
	tcase_add_test(tc, halo_tiles_3d_bounds);
	tcase_add_test(tc, box_list_disjoint_flag_follows_overlap);
	tcase_add_test(tc, box_list_2d);
	tcase_add_test(tc, nested_partitions_two_levels);
	tcase_add_test(tc, halo_partition_of_subregion_clips_to_it);
	tcase_add_test(tc, several_partitions_of_one_region_coexist);
	tcase_add_test(tc, partition_destroy_takes_subregions_and_nested_partitions);
	tcase_add_test(tc, region_destroy_takes_its_partitions);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
