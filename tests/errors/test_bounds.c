/* test_bounds.c: boxes and colors out of bounds are refused with TSR_EBOUNDS, the message names
 * the region, partition, task and color, and nothing is created or launched (data intact). */
#include "tsr_test.h"

START_TEST(region_with_empty_bounds_refused)
{
	tsr_fspace_t fs;
	tsr_field_t f;
	tsr_region_t r = {0};
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "x", TSR_F64, 0, &f));
	CK_TSR_ERR(tsr_region_create("empty", tsr_box1(5, 4), fs, &r), TSR_EBOUNDS, "empty");
	CK_TSR_ERR(tsr_region_create("flat", tsr_box2(0, 3, 2, 1), fs, &r), TSR_EBOUNDS, "flat");
	/* each extent fits, but a plane would wrap StarPU's 32-bit leading dimension */
	CK_TSR_ERR(tsr_region_create("huge", tsr_box3(0, 69999, 0, 69999, 0, 1), fs, &r),
		   TSR_EBOUNDS, "huge", "plane");
	CK_TSR(tsr_fspace_destroy(fs));
}
END_TEST

/* A partition of the witness "line" [0..7] that does not fit it: made by tiling (colors a), tiling
 * with a halo of 1 (domain a, colors b) or two boxes (a and b). The message names the partition
 * (the case) and the region. */
enum part_kind { TILES, HALO, BOXES };
struct bad_partition {
	const char *name;
	enum part_kind kind;
	tsr_box_t a, b;
};
enum { N_BAD_PARTITIONS = 6 };

static struct bad_partition bad_partition(int i)
{
	const struct bad_partition cases[] = {
		/* more tiles than points */
		{.name = "nine", .kind = TILES, .a = tsr_box1(0, 8)},
		/* colors of the wrong dimension, or none */
		{.name = "square", .kind = TILES, .a = tsr_box2(0, 1, 0, 1)},
		{.name = "none", .kind = TILES, .a = tsr_box1(1, 0)},
		/* a halo domain outside the region */
		{.name = "ghost", .kind = HALO, .a = tsr_box1(2, 8), .b = tsr_box1(0, 1)},
		/* a box outside the region, an empty box */
		{.name = "spill", .kind = BOXES, .a = tsr_box1(0, 3), .b = tsr_box1(4, 8)},
		{.name = "hollow", .kind = BOXES, .a = tsr_box1(0, 3), .b = tsr_box1(5, 4)},
	};
	_Static_assert(sizeof cases / sizeof cases[0] == N_BAD_PARTITIONS, "one row per case");
	return cases[i];
}

static int make_partition(const struct bad_partition *c, tsr_region_t r, tsr_partition_t *p)
{
	switch (c->kind) {
	case TILES:
		return tsr_partition_tiles(r, c->a, c->name, p);
	case HALO:
		return tsr_partition_tiles_halo(r, c->a, c->b, (const int64_t[3]){1, 0, 0}, c->name,
						p);
	default:
		return tsr_partition_boxes(r, 2, (const tsr_box_t[]){c->a, c->b}, c->name, p);
	}
}

START_TEST(partition_outside_region_refused)
{
	struct bad_partition c = bad_partition(_i);
	tsr_region_t r = tsr_test_line();
	tsr_partition_t p;
	tsr_test_ck_refused(c.name, make_partition(&c, r, &p), TSR_EBOUNDS,
			    (const char *[]){c.name, "line", NULL});
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A partition of a subregion must stay inside the subregion, not just inside the root. */
START_TEST(box_of_nested_partition_outside_subregion_refused)
{
	tsr_region_t r = tsr_test_line();
	tsr_partition_t top, p;
	tsr_region_t s;
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 1), "top", &top));
	CK_TSR(tsr_partition_subregion(top, (const int64_t[3]){0, 0, 0}, &s)); /* [0..3] */
	const tsr_box_t b[] = {tsr_box1(2, 5)};
	CK_TSR_ERR(tsr_partition_boxes(s, 1, b, "across", &p), TSR_EBOUNDS, "across", "line",
		   "top");
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(subregion_color_outside_partition_refused)
{
	tsr_region_t r = tsr_test_region_f64("plane", tsr_box2(0, 7, 0, 7));
	tsr_partition_t p;
	tsr_region_t s = {0};
	CK_TSR(tsr_partition_tiles(r, tsr_box2(0, 1, 0, 1), "quads", &p));
	CK_TSR_ERR(tsr_partition_subregion(p, (const int64_t[3]){1, 5, 0}, &s), TSR_EBOUNDS,
		   "quads", "plane", "5");
	CK_TSR_ERR(tsr_partition_subregion(p, (const int64_t[3]){-1, 0, 0}, &s), TSR_EBOUNDS,
		   "quads", "-1");
	ck_assert_uint_eq(s.id, 0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* The whole launch is refused: not even the points that have a color run. */
START_TEST(index_launch_domain_outside_colors_refused)
{
	tsr_region_t r = tsr_test_line();
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	tsr_task_t t = tsr_test_task("overwrite", tsr_test_overwrite, TSR_NONE);
	tsr_req_t q = tsr_req_part(p, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 4), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EBOUNDS, "overwrite", "tiles", "4");
	CK_TSR_ERR(tsr_index_launch(t, tsr_box2(0, 1, 0, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EBOUNDS, "overwrite", "tiles");
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(2, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EBOUNDS, "overwrite");
	CK_TSR(tsr_fence());
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static int no_color_for_two(const int64_t point[3], int64_t color[3], void *arg)
{
	color[0] = point[0];
	color[1] = color[2] = 0;
	return point[0] == 2;
}

static int plus_one(const int64_t point[3], int64_t color[3], void *arg)
{
	color[0] = point[0] + 1;
	color[1] = color[2] = 0;
	return 0;
}

START_TEST(projection_without_color_or_outside_refused)
{
	tsr_region_t r = tsr_test_line();
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	tsr_task_t t = tsr_test_task("overwrite", tsr_test_overwrite, TSR_NONE);
	tsr_req_t q = tsr_req_part_proj(p, TSR_WRITE, TSR_FIELDS(0), no_color_for_two, NULL);
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EBOUNDS, "overwrite", "tiles", "2");
	q = tsr_req_part_proj(p, TSR_WRITE, TSR_FIELDS(0), plus_one, NULL);
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EBOUNDS, "overwrite", "tiles", "4");
	CK_TSR(tsr_fence());
	tsr_test_ck_line_intact(r);
	/* the same projection on a domain that stays inside works */
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 2), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	double v[8];
	tsr_test_read1(r, 0, v, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(v[i], i < 2 ? 3.0 : -1.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(copy_between_different_extents_refused)
{
	tsr_region_t r = tsr_test_line(), s = tsr_test_region_f64("short", tsr_box1(0, 6));
	tsr_region_t q = tsr_test_region_f64("square", tsr_box2(0, 3, 0, 1));
	CK_TSR_ERR(tsr_copy(s, 0, r, 0), TSR_EBOUNDS, "short", "line");
	CK_TSR_ERR(tsr_copy(q, 0, r, 0), TSR_EBOUNDS, "square", "line");
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_region_destroy(s));
	CK_TSR(tsr_region_destroy(q));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_bounds");
	TCase *tc = tsr_test_tcase("bounds", 1);
	tcase_add_test(tc, region_with_empty_bounds_refused);
	tcase_add_loop_test(tc, partition_outside_region_refused, 0, N_BAD_PARTITIONS);
	tcase_add_test(tc, box_of_nested_partition_outside_subregion_refused);
	tcase_add_test(tc, subregion_color_outside_partition_refused);
	tcase_add_test(tc, index_launch_domain_outside_colors_refused);
	tcase_add_test(tc, projection_without_color_or_outside_refused);
	tcase_add_test(tc, copy_between_different_extents_refused);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
