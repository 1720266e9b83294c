/* test_launch.c: single launches on regions and subregions, index launches over color spaces
 * (1-D, 2-D, sub-domains, projections), by-value arguments, launch points, and accessors whose
 * bounds and strides address 2-D and 3-D subregions inside their parent's storage. */
#include "tsr_test.h"

/* Tasks report a wrong observation with tsr_ctx_error: tsr_fence then fails the test. "iota"
 * (tsr_test_iota) writes x[i] = scale * i + offset over the accessor's bounds, args double[2]. */

/* add: x[i] += delta (READ_WRITE). args: double. */
static void add(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &x))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) += *(const double *)args;
}

/* stamp_point: every element of the point's subregion gets 100 * point + its index. */
static void stamp_point(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t p[3];
	tsr_accessor_t x;
	if (tsr_ctx_point(ctx, p) != 1) {
		tsr_ctx_error(ctx, "expected a 1-D launch point");
		return;
	}
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_WRITE, &x))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) = 100.0 * (double)p[0] + (double)i;
}

START_TEST(single_launch_writes_whole_region)
{
	tsr_region_t r = tsr_test_region_f64("v", tsr_box1(0, 9));
	tsr_task_t t = tsr_test_task("iota", tsr_test_iota, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &q, (const double[2]){2.0, 1.0}, 2 * sizeof(double), NULL));
	double v[10];
	tsr_test_read1(r, 0, v, 10);
	for (int i = 0; i < 10; i++)
		ck_assert_double_eq(v[i], 2.0 * i + 1.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Launches run in program order: WRITE then a chain of READ_WRITE adds. */
START_TEST(single_launches_run_in_program_order)
{
	tsr_region_t r = tsr_test_region_f64("v", tsr_box1(0, 7));
	tsr_task_t ti = tsr_test_task("iota", tsr_test_iota, TSR_NONE),
		   ta = tsr_test_task("add", add, TSR_NONE);
	tsr_req_t w = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0)),
		  rw = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(ti, 1, &w, (const double[2]){1.0, 0.0}, 2 * sizeof(double), NULL));
	for (int k = 1; k <= 20; k++) {
		double d = k;
		CK_TSR(tsr_launch(ta, 1, &rw, &d, sizeof d, NULL));
	}
	/* a WRITE after the chain discards it */
	CK_TSR(tsr_launch(ti, 1, &w, (const double[2]){0.0, 5.0}, 2 * sizeof(double), NULL));
	CK_TSR(tsr_launch(ta, 1, &rw, &(double){0.5}, sizeof(double), NULL));
	tsr_test_ck_all1(r, 0, 8, 5.5);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Arguments are copied at launch: changing the caller's buffer afterwards changes nothing. */
START_TEST(launch_copies_arguments)
{
	tsr_region_t r = tsr_test_region_f64("v", tsr_box1(0, 3));
	tsr_task_t t = tsr_test_task("iota", tsr_test_iota, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	double *args = malloc(2 * sizeof *args);
	args[0] = 3.0;
	args[1] = 4.0;
	CK_TSR(tsr_launch(t, 1, &q, args, 2 * sizeof *args, NULL));
	args[0] = -1.0;
	args[1] = -1.0;
	free(args);
	double v[4];
	tsr_test_read1(r, 0, v, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_double_eq(v[i], 3.0 * i + 4.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(single_launch_on_subregion_touches_only_it)
{
	tsr_region_t r = tsr_test_region_f64("v", tsr_box1(0, 11));
	tsr_partition_t p;
	tsr_region_t s;
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 2), "tiles", &p));
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){1, 0, 0}, &s));
	double minus = -1.0;
	CK_TSR(tsr_fill(r, 0, &minus, sizeof minus));
	tsr_task_t t = tsr_test_task("iota", tsr_test_iota, TSR_NONE);
	tsr_req_t q = tsr_req_region(s, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &q, (const double[2]){1.0, 0.0}, 2 * sizeof(double), NULL));
	double v[12];
	tsr_test_read1(r, 0, v, 12);
	for (int i = 0; i < 12; i++)
		ck_assert_double_eq(v[i], i >= 4 && i <= 7 ? (double)i : -1.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(index_launch_1d_each_point_writes_its_tile)
{
	tsr_region_t r = tsr_test_region_f64("v", tsr_box1(0, 9));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	tsr_task_t t = tsr_test_task("stamp_point", stamp_point, TSR_NONE);
	tsr_req_t q = tsr_req_part(p, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	double v[10];
	tsr_test_read1(r, 0, v, 10);
	static const int owner[10] = {0, 0, 0, 1, 1, 1, 2, 2, 3, 3};
	for (int i = 0; i < 10; i++)
		ck_assert_double_eq(v[i], 100.0 * owner[i] + i);
	CK_TSR(tsr_fence());
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A launch domain smaller than the color space launches only those points. */
START_TEST(index_launch_over_part_of_color_space)
{
	tsr_region_t r = tsr_test_region_f64("v", tsr_box1(0, 7));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	tsr_task_t t = tsr_test_task("stamp_point", stamp_point, TSR_NONE);
	tsr_req_t q = tsr_req_part(p, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(t, tsr_box1(1, 2), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	double v[8];
	tsr_test_read1(r, 0, v, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(v[i], i >= 2 && i <= 5 ? 100.0 * (i / 2) + i : 0.0);
	CK_TSR(tsr_fence());
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* shift projection: point p uses color p + 1 */
static int shift_proj(const int64_t point[3], int64_t color[3], void *arg)
{
	color[0] = point[0] + *(int64_t *)arg;
	color[1] = color[2] = 0;
	return 0;
}

/* copy_point: y (req 1, its own tile) = x (req 0, the projected tile) + 1000 * point. */
static void copy_from_proj(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t p[3];
	tsr_ctx_point(ctx, p);
	tsr_accessor_t x, y;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ, &x) ||
	    tsr_ctx_accessor(ctx, 1, 1, TSR_F64, TSR_WRITE, &y))
		return;
	if (x.hi[0] - x.lo[0] != y.hi[0] - y.lo[0]) {
		tsr_ctx_error(ctx, "tiles of different sizes");
		return;
	}
	for (int64_t i = 0; i <= y.hi[0] - y.lo[0]; i++)
		TSR_AT1(&y, double, y.lo[0] + i) =
			TSR_AT1(&x, double, x.lo[0] + i) + 1000.0 * (double)p[0];
}

START_TEST(index_launch_with_projection_reads_neighbour_tile)
{
	tsr_field_t f[2];
	tsr_region_t r =
		tsr_test_region("xy", tsr_box1(0, 7), 2, (const tsr_type_t[]){TSR_F64, TSR_F64},
				(const char *const[]){"x", "y"}, f);
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	tsr_task_t ti = tsr_test_task("iota", tsr_test_iota, TSR_NONE),
		   tc = tsr_test_task("copy_from_proj", copy_from_proj, TSR_NONE);
	tsr_req_t w = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(ti, 1, &w, (const double[2]){1.0, 0.0}, 2 * sizeof(double), NULL));
	int64_t one = 1;
	tsr_req_t q[2] = {tsr_req_part_proj(p, TSR_READ, TSR_FIELDS(0), shift_proj, &one),
			  tsr_req_part(p, TSR_WRITE, TSR_FIELDS(1))};
	CK_TSR(tsr_index_launch(tc, tsr_box1(0, 2), 2, q, NULL, 0, TSR_REDOP_NONE, NULL));
	double y[8];
	tsr_test_read1(r, f[1], y, 8);
	for (int i = 0; i < 6; i++)
		ck_assert_double_eq(y[i], (double)(i + 2) + 1000.0 * (i / 2));
	ck_assert_double_eq(y[6], 0.0);
	ck_assert_double_eq(y[7], 0.0);
	CK_TSR(tsr_fence());
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A region requirement in an index launch is passed whole to every point: each point's tile of
 * field 1 gets the sum of the whole field 0 (tsr_test_sum_into). */
START_TEST(index_launch_passes_region_requirement_whole)
{
	tsr_field_t f[2];
	tsr_region_t r = tsr_test_region("xy", tsr_box1(1, 6), 2,
					 (const tsr_type_t[]){TSR_F64, TSR_F64}, NULL, f);
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 2), "tiles");
	tsr_task_t ti = tsr_test_task("iota", tsr_test_iota, TSR_NONE),
		   ts = tsr_test_task("sum_into_tile", tsr_test_sum_into, TSR_NONE);
	tsr_req_t w = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(ti, 1, &w, (const double[2]){1.0, 0.0}, 2 * sizeof(double), NULL));
	tsr_req_t q[2] = {tsr_req_region(r, TSR_READ, TSR_FIELDS(0)),
			  tsr_req_part(p, TSR_WRITE, TSR_FIELDS(1))};
	CK_TSR(tsr_index_launch(ts, tsr_box1(0, 2), 2, q, NULL, 0, TSR_REDOP_NONE, NULL));
	tsr_test_ck_all1(r, f[1], 6, 21.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* 2-D accessor on a tile: bounds are the tile's, strides the parent's; write 100*y + x. */
static void fill_2d(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const size_t *parent_nx = args;
	int64_t p[3];
	tsr_accessor_t a;
	if (tsr_ctx_point(ctx, p) != 2) {
		tsr_ctx_error(ctx, "expected a 2-D launch point");
		return;
	}
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_WRITE, &a))
		return;
	if (a.dim != 2 || a.stride[0] != 1 || a.stride[1] != *parent_nx)
		tsr_ctx_error(ctx, "accessor dim %d strides %zu %zu, want 2, 1, %zu", a.dim,
			      a.stride[0], a.stride[1], *parent_nx);
	/* tile (i,j) of 3x2 tiles over [10..15]x[0..3] is [10+2i..11+2i]x[2j..2j+1] */
	if (a.lo[0] != 10 + 2 * p[0] || a.hi[0] != 11 + 2 * p[0] || a.lo[1] != 2 * p[1] ||
	    a.hi[1] != 2 * p[1] + 1)
		tsr_ctx_error(ctx, "tile bounds [%lld..%lld]x[%lld..%lld]", (long long)a.lo[0],
			      (long long)a.hi[0], (long long)a.lo[1], (long long)a.hi[1]);
	for (int64_t y = a.lo[1]; y <= a.hi[1]; y++)
		for (int64_t x = a.lo[0]; x <= a.hi[0]; x++)
			TSR_AT2(&a, double, x, y) =
				100.0 * (double)y + (double)x + 0.25 * (double)(p[0] + 3 * p[1]);
}

START_TEST(accessor_2d_strides_and_bounds)
{
	tsr_region_t r = tsr_test_region_f64("plane", tsr_box2(10, 15, 0, 3));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box2(0, 2, 0, 1), "blocks");
	tsr_task_t t = tsr_test_task("fill_2d", fill_2d, TSR_NONE);
	tsr_req_t q = tsr_req_part(p, TSR_WRITE, TSR_FIELDS(0));
	size_t nx = 6;
	CK_TSR(tsr_index_launch(t, tsr_box2(0, 2, 0, 1), 1, &q, &nx, sizeof nx, TSR_REDOP_NONE,
				NULL));
	CK_TSR(tsr_fence());
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, 0, TSR_READ, &a));
	ck_assert_uint_eq(a.stride[1], 6);
	for (int64_t y = 0; y <= 3; y++)
		for (int64_t x = 10; x <= 15; x++) {
			int64_t color = (x - 10) / 2 + 3 * (y / 2);
			ck_assert_double_eq(TSR_AT2(&a, double, x, y),
					    100.0 * y + x + 0.25 * color);
			/* the macro and the formula in the header agree */
			ck_assert_double_eq(((double *)a.ptr)[(x - a.lo[0]) +
							      (y - a.lo[1]) * (int64_t)a.stride[1]],
					    100.0 * y + x + 0.25 * color);
		}
	CK_TSR(tsr_unmap(r, 0));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* 3-D accessor on one brick: check bounds, strides, and write 10000*z + 100*y + x. */
static void fill_3d(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_I64, TSR_WRITE, &a))
		return;
	if (a.dim != 3 || a.stride[1] != 4 || a.stride[2] != 4 * 5)
		tsr_ctx_error(ctx, "3-D strides %zu %zu, want 4 20", a.stride[1], a.stride[2]);
	if (a.lo[0] != 2 || a.hi[0] != 3 || a.lo[1] != 3 || a.hi[1] != 5 || a.lo[2] != -1 ||
	    a.hi[2] != 0)
		tsr_ctx_error(ctx, "brick bounds wrong");
	for (int64_t z = a.lo[2]; z <= a.hi[2]; z++)
		for (int64_t y = a.lo[1]; y <= a.hi[1]; y++)
			for (int64_t x = a.lo[0]; x <= a.hi[0]; x++)
				TSR_AT3(&a, int64_t, x, y, z) = 10000 * z + 100 * y + x;
}

START_TEST(accessor_3d_strides_and_bounds)
{
	tsr_field_t f;
	tsr_fspace_t fs = tsr_test_fspace(1, (const tsr_type_t[]){TSR_I64}, NULL, &f);
	tsr_region_t r;
	CK_TSR(tsr_region_create("cube", tsr_box3(0, 3, 1, 5, -2, 0), fs, &r)); /* 4 x 5 x 3 */
	CK_TSR(tsr_fspace_destroy(fs));
	const tsr_box_t brick = tsr_box3(2, 3, 3, 5, -1, 0);
	tsr_partition_t p;
	tsr_region_t s;
	CK_TSR(tsr_partition_boxes(r, 1, &brick, "brick", &p));
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){0, 0, 0}, &s));
	tsr_task_t t = tsr_test_task("fill_3d", fill_3d, TSR_NONE);
	tsr_req_t q = tsr_req_region(s, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	CK_TSR(tsr_fence());
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, f, TSR_READ, &a));
	for (int64_t z = -2; z <= 0; z++)
		for (int64_t y = 1; y <= 5; y++)
			for (int64_t x = 0; x <= 3; x++) {
				int in = tsr_box_contains(brick, tsr_box3(x, x, y, y, z, z));
				ck_assert_int_eq(TSR_AT3(&a, int64_t, x, y, z),
						 in ? 10000 * z + 100 * y + x : 0);
			}
	CK_TSR(tsr_unmap(r, f));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* One requirement with two fields: one accessor per field, same bounds. */
static void axpy(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x, y;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ, &x) ||
	    tsr_ctx_accessor(ctx, 0, 1, TSR_F32, TSR_READ_WRITE, &y))
		return;
	if (x.lo[0] != y.lo[0] || x.hi[0] != y.hi[0] || y.elem_size != 4)
		tsr_ctx_error(ctx, "fields of one requirement disagree");
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&y, float, i) += (float)(2.0 * TSR_AT1(&x, double, i));
}

START_TEST(requirement_with_two_fields_of_different_types)
{
	tsr_field_t f[2];
	tsr_region_t r =
		tsr_test_region("xy", tsr_box1(0, 9), 2, (const tsr_type_t[]){TSR_F64, TSR_F32},
				(const char *const[]){"x", "y"}, f);
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 1), "halves");
	double x0 = 1.5;
	float y0 = 1.0f;
	CK_TSR(tsr_fill(r, f[0], &x0, sizeof x0));
	CK_TSR(tsr_fill(r, f[1], &y0, sizeof y0));
	tsr_task_t t = tsr_test_task("axpy", axpy, TSR_NONE);
	tsr_req_t q = tsr_req_part(p, TSR_READ_WRITE, TSR_FIELDS(f[0], f[1]));
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	CK_TSR(tsr_fence());
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, f[1], TSR_READ, &a));
	for (int i = 0; i < 10; i++)
		ck_assert_float_eq(TSR_AT1(&a, float, i), 7.0f);
	CK_TSR(tsr_unmap(r, f[1]));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static void name_check(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t p[3];
	if (strcmp(tsr_ctx_task_name(ctx), "name_check") != 0)
		tsr_ctx_error(ctx, "wrong task name %s", tsr_ctx_task_name(ctx));
	if (tsr_ctx_point(ctx, p) != 0)
		tsr_ctx_error(ctx, "single launch reports a launch point");
	if (tsr_ctx_cuda_stream(ctx) != NULL)
		tsr_ctx_error(ctx, "CPU variant has a CUDA stream");
	if (tsr_ctx_worker(ctx) < 0)
		tsr_ctx_error(ctx, "no worker id");
	if (arglen != 0)
		tsr_ctx_error(ctx, "arglen %zu", arglen);
}

START_TEST(task_without_requirements_sees_its_context)
{
	tsr_task_t t = tsr_test_task("name_check", name_check, TSR_NONE);
	for (int i = 0; i < 4; i++)
		CK_TSR(tsr_launch(t, 0, NULL, NULL, 0, NULL));
	CK_TSR(tsr_fence());
}
END_TEST

int main(void)
{
	Suite *s = suite_create("launch");
	TCase *tc = tsr_test_tcase("launch", 1);
	tcase_add_test(tc, single_launch_writes_whole_region);
	tcase_add_test(tc, single_launches_run_in_program_order);
	tcase_add_test(tc, launch_copies_arguments);
	tcase_add_test(tc, single_launch_on_subregion_touches_only_it);
	tcase_add_test(tc, index_launch_1d_each_point_writes_its_tile);
	tcase_add_test(tc, index_launch_over_part_of_color_space);
	tcase_add_test(tc, index_launch_with_projection_reads_neighbour_tile);
	tcase_add_test(tc, index_launch_passes_region_requirement_whole);
	tcase_add_test(tc, accessor_2d_strides_and_bounds);
	tcase_add_test(tc, accessor_3d_strides_and_bounds);
	tcase_add_test(tc, requirement_with_two_fields_of_different_types);
	tcase_add_test(tc, task_without_requirements_sees_its_context);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
