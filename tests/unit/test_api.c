/* test_api.c: the calls that make a program short: requirement introspection (tsr_ctx_req,
 * tsr_ctx_field), the one launch call (tsr_run), tsr_future_take, whole-field host copies
 * (tsr_region_write/read) and tile boxes (tsr_box_tile). */
#include "tsr_test.h"

/* What each point of a launch saw through tsr_ctx_req (one slot per point, written by the
 * variant). */
#define MAX_POINTS 4
static tsr_req_info_t seen[MAX_POINTS][3];
static int seen_status[MAX_POINTS][3];

static void describe(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t point[3];
	int dim = tsr_ctx_point(ctx, point);
	int slot = dim ? (int)point[0] : 0;
	for (int r = 0; r < tsr_ctx_nreqs(ctx) && r < 3; r++)
		seen_status[slot][r] = tsr_ctx_req(ctx, r, &seen[slot][r]);
}

START_TEST(ctx_req_describes_each_requirement)
{
	tsr_field_t fid[2];
	tsr_region_t grid =
		tsr_test_region("grid", tsr_box1(0, 7), 2, (const tsr_type_t[]){TSR_F64, TSR_I32},
				(const char *const[]){"u", "mask"}, fid);
	tsr_partition_t tiles = tsr_test_tiles(grid, tsr_box1(0, 1), "tiles");
	tsr_future_t scale;
	double two = 2.0;
	CK_TSR(tsr_future_create(TSR_F64, 0, &two, &scale));
	tsr_task_t t = tsr_test_task("describe", describe, TSR_NONE);
	CK_TSR(tsr_run(t, &(tsr_launch_t){
				  .domain = tsr_box1(0, 1),
				  .reqs = TSR_REQS(tsr_req_part(tiles, TSR_READ_WRITE,
								TSR_FIELDS(fid[1], fid[0])),
						   tsr_req_future(scale)),
			  }));
	CK_TSR(tsr_fence());
	for (int p = 0; p < 2; p++) {
		const tsr_req_info_t *q = &seen[p][0];
		CK_TSR(seen_status[p][0]);
		ck_assert_int_eq(q->kind, TSR_REQ_PARTITION);
		ck_assert_int_eq(q->priv, TSR_READ_WRITE);
		ck_assert_int_eq(q->redop.id, TSR_REDOP_NONE.id);
		ck_assert_str_eq(q->partition, "tiles");
		ck_assert_ptr_nonnull(strstr(q->region, "grid"));
		ck_assert_int_eq(q->bounds.dim, 1);
		ck_assert_int_eq(q->bounds.lo[0], 4 * p);
		ck_assert_int_eq(q->bounds.hi[0], 4 * p + 3);
		/* fields come in the order the launch listed them, not in id order */
		ck_assert_int_eq(q->nfields, 2);
		ck_assert_int_eq(q->fields[0], fid[1]);
		ck_assert_int_eq(q->fields[1], fid[0]);
		ck_assert_str_eq(q->field_names[0], "mask");
		ck_assert_str_eq(q->field_names[1], "u");
		ck_assert_int_eq(q->field_types[0], TSR_I32);
		ck_assert_int_eq(q->field_types[1], TSR_F64);
		CK_TSR(seen_status[p][1]);
		ck_assert_int_eq(seen[p][1].kind, TSR_REQ_FUTURE);
		ck_assert_ptr_null(seen[p][1].region);
	}
	CK_TSR(tsr_future_destroy(scale));
	CK_TSR(tsr_region_destroy(grid));
}
END_TEST

START_TEST(ctx_req_names_region_and_reduction)
{
	tsr_region_t r = tsr_test_region_f64("acc", tsr_box2(0, 3, 0, 2));
	tsr_task_t t = tsr_test_task("describe", describe, TSR_NONE);
	CK_TSR(tsr_run(t, &(tsr_launch_t){.reqs = TSR_REQS(tsr_req_region(r, TSR_REDUCE(TSR_MAX),
									  TSR_FIELDS(0)))}));
	CK_TSR(tsr_fence());
	const tsr_req_info_t *q = &seen[0][0];
	CK_TSR(seen_status[0][0]);
	ck_assert_int_eq(q->kind, TSR_REQ_REGION);
	ck_assert_int_eq(q->priv, TSR_REDUCE(TSR_MAX));
	ck_assert_int_eq(q->redop.id, TSR_MAX.id);
	ck_assert_str_eq(q->region, "acc");
	ck_assert_ptr_null(q->partition);
	ck_assert_int_eq(q->bounds.dim, 2);
	ck_assert_int_eq(q->bounds.hi[0], 3);
	ck_assert_int_eq(q->bounds.hi[1], 2);
	ck_assert_str_eq(q->field_names[0], "x");
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Writes point + 10 * k into the k-th field of requirement 0, whatever the field ids are. */
static void fill_by_position(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_req_info_t info;
	if (tsr_ctx_req(ctx, 0, &info))
		return;
	for (int k = 0; k < info.nfields; k++) {
		tsr_accessor_t a;
		if (tsr_ctx_field(ctx, 0, k, TSR_F64, TSR_WRITE_DISCARD, &a))
			return;
		for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
			TSR_AT1(&a, double, i) = (double)i + 10.0 * k;
	}
}

START_TEST(ctx_field_by_position_without_ids_in_args)
{
	tsr_field_t fid[3];
	tsr_region_t r =
		tsr_test_region("r", tsr_box1(0, 9), 3,
				(const tsr_type_t[]){TSR_F64, TSR_F64, TSR_F64}, NULL, fid);
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 2), "tiles");
	tsr_task_t t = tsr_test_task("fill_by_position", fill_by_position, TSR_NONE);
	/* fields 2 then 0: position 0 is f2, position 1 is f0; f1 is not requested */
	CK_TSR(tsr_run(t, &(tsr_launch_t){.domain = tsr_box1(0, 2),
					  .reqs = TSR_REQS(
						  tsr_req_part(p, TSR_WRITE_DISCARD,
							       TSR_FIELDS(fid[2], fid[0])))}));
	double f0[10], f1[10], f2[10];
	CK_TSR(tsr_region_read(r, fid[0], f0, sizeof f0));
	CK_TSR(tsr_region_read(r, fid[1], f1, sizeof f1));
	CK_TSR(tsr_region_read(r, fid[2], f2, sizeof f2));
	for (int i = 0; i < 10; i++) {
		ck_assert_double_eq(f2[i], i);
		ck_assert_double_eq(f0[i], i + 10.0);
		ck_assert_double_eq(f1[i], 0.0);
	}
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static void third_field(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	tsr_ctx_field(ctx, 0, 2, TSR_F64, TSR_READ, &a);
}

START_TEST(ctx_field_position_out_of_range_fails_task)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, 3));
	tsr_task_t t = tsr_test_task("third_field", third_field, TSR_NONE);
	CK_TSR(tsr_run(t, &(tsr_launch_t){
				  .reqs = TSR_REQS(tsr_req_region(r, TSR_READ, TSR_FIELDS(0)))}));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "third_field", "grid", "requirement 0", "position 2");
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static void missing_req(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_req_info_t info;
	tsr_ctx_req(ctx, 3, &info);
}

START_TEST(ctx_req_out_of_range_fails_task)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, 3));
	tsr_task_t t = tsr_test_task("missing_req", missing_req, TSR_NONE);
	CK_TSR(tsr_run(t, &(tsr_launch_t){
				  .reqs = TSR_REQS(tsr_req_region(r, TSR_READ, TSR_FIELDS(0)))}));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "missing_req", "requirement 3", "has 1");
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

struct scale_args {
	double factor;
};

/* Returns factor * (sum of its tile); MAX over the points gives the largest tile sum. */
static void scaled_sum(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const struct scale_args *a = args;
	tsr_accessor_t x;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &x))
		return;
	double sum = 0.0;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		sum += TSR_AT1(&x, double, i);
	double value = a->factor * sum;
	tsr_ctx_return(ctx, &value);
}

START_TEST(run_index_launch_with_args_and_result)
{
	tsr_region_t r = tsr_test_region_f64("values", tsr_box1(0, 7));
	double init[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	CK_TSR(tsr_region_write(r, 0, init, sizeof init));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "pairs");
	tsr_task_t t = tsr_test_task("scaled_sum", scaled_sum, TSR_F64);
	struct scale_args args = {.factor = 0.5};
	tsr_future_t largest;
	CK_TSR(tsr_run(t, &(tsr_launch_t){
				  .domain = tsr_box1(0, 3),
				  .reqs = TSR_REQS(tsr_req_part(p, TSR_READ, TSR_FIELDS(0))),
				  TSR_ARGS(args),
				  .redop = TSR_MAX,
				  .result = &largest,
			  }));
	double v = 0.0;
	CK_TSR(tsr_future_take(largest, &v, sizeof v));
	ck_assert_double_eq(v, 0.5 * (7 + 8));
	/* taken: the future is gone */
	CK_TSR_ERR(tsr_future_wait(largest, &v, sizeof v), TSR_ESTALE, "future");
	/* a single launch on one subregion, same task */
	tsr_region_t first;
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){0, 0, 0}, &first));
	tsr_future_t one;
	CK_TSR(tsr_run(t, &(tsr_launch_t){.reqs = TSR_REQS(
						  tsr_req_region(first, TSR_READ, TSR_FIELDS(0))),
					  TSR_ARGS(args),
					  .result = &one}));
	CK_TSR(tsr_future_take(one, &v, sizeof v));
	ck_assert_double_eq(v, 0.5 * (1 + 2));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(run_result_without_operator_says_what_to_write)
{
	tsr_region_t r = tsr_test_region_f64("values", tsr_box1(0, 7));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "pairs");
	tsr_task_t t = tsr_test_task("scaled_sum", scaled_sum, TSR_F64);
	struct scale_args args = {.factor = 1.0};
	tsr_future_t f = {0};
	CK_TSR_ERR(tsr_run(t, &(tsr_launch_t){.domain = tsr_box1(0, 3),
					      .reqs = TSR_REQS(
						      tsr_req_part(p, TSR_READ, TSR_FIELDS(0))),
					      TSR_ARGS(args),
					      .result = &f}),
		   TSR_EINVAL, "scaled_sum", ".redop = TSR_SUM");
	/* the older call says the same in its own words */
	tsr_req_t req = tsr_req_part(p, TSR_READ, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 3), 1, &req, &args, sizeof args, TSR_REDOP_NONE,
				    &f),
		   TSR_EINVAL, "scaled_sum", "no reduction operator", "TSR_SUM");
	/* `.redop = TSR_REDUCE(TSR_MAX)` compiles through brace elision (a -Wmissing-braces
	 * warning): written here with the braces that elision implies */
	CK_TSR_ERR(tsr_run(t, &(tsr_launch_t){.domain = tsr_box1(0, 3),
					      .reqs = TSR_REQS(
						      tsr_req_part(p, TSR_READ, TSR_FIELDS(0))),
					      TSR_ARGS(args),
					      .redop = {TSR_REDUCE(TSR_MAX)},
					      .result = &f}),
		   TSR_EINVAL, "scaled_sum", "privilege REDUCE(max)", ".redop = TSR_MAX");
	/* an operator on a single launch has nothing to combine */
	tsr_region_t first;
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){0, 0, 0}, &first));
	CK_TSR_ERR(tsr_run(t, &(tsr_launch_t){.reqs = TSR_REQS(tsr_req_region(first, TSR_READ,
									      TSR_FIELDS(0))),
					      TSR_ARGS(args),
					      .redop = TSR_SUM,
					      .result = &f}),
		   TSR_EINVAL, "scaled_sum", ".domain");
	CK_TSR_ERR(tsr_run(t, NULL), TSR_EINVAL, "scaled_sum");
	CK_TSR(tsr_fence());
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(future_take_of_destroyed_future_is_stale)
{
	tsr_future_t f;
	int64_t seven = 7;
	CK_TSR(tsr_future_create(TSR_I64, 0, &seven, &f));
	int32_t small;
	/* a wrong size is the wait's error; the future is destroyed all the same */
	CK_TSR_ERR(tsr_future_take(f, &small, sizeof small), TSR_EINVAL, "holds 8 bytes");
	int64_t v;
	CK_TSR_ERR(tsr_future_take(f, &v, sizeof v), TSR_ESTALE, "future");
}
END_TEST

/* Field 0 of r reads back (tsr_region_read) as the `bytes` bytes at want. */
static void ck_reads_back(tsr_region_t r, const void *want, size_t bytes)
{
	unsigned char got[256];
	ck_assert_uint_le(bytes, sizeof got);
	CK_TSR(tsr_region_read(r, 0, got, bytes));
	ck_assert_mem_eq(got, want, bytes);
}

START_TEST(region_write_read_round_trip_on_subregion)
{
	tsr_region_t r = tsr_test_region_f64("plane", tsr_box2(0, 5, 0, 3));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box2(0, 1, 0, 1), "quarters");
	tsr_region_t q;
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){1, 1, 0}, &q));
	/* quarter (1,1) is [3..5]x[2..3]: 6 elements, row by row */
	double in[6] = {1, 2, 3, 4, 5, 6};
	CK_TSR(tsr_region_write(q, 0, in, sizeof in));
	double whole[24];
	CK_TSR(tsr_region_read(r, 0, whole, sizeof whole));
	for (int y = 0; y < 4; y++)
		for (int x = 0; x < 6; x++) {
			double want = x >= 3 && y >= 2 ? in[(x - 3) + 3 * (y - 2)] : 0.0;
			ck_assert_double_eq(whole[x + 6 * y], want);
		}
	ck_reads_back(q, in, sizeof in);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(region_write_with_wrong_size_refused_data_intact)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, 3));
	double in[4] = {1, 2, 3, 4};
	CK_TSR(tsr_region_write(r, 0, in, sizeof in));
	double big[5] = {9, 9, 9, 9, 9};
	CK_TSR_ERR(tsr_region_write(r, 0, big, sizeof big), TSR_EINVAL, "grid", "'x'", "32 bytes",
		   "40");
	CK_TSR_ERR(tsr_region_read(r, 0, big, 3 * sizeof(double)), TSR_EINVAL, "grid", "'x'");
	CK_TSR_ERR(tsr_region_write(r, 5, in, sizeof in), TSR_ENOFIELD, "grid");
	CK_TSR_ERR(tsr_region_write(r, 0, NULL, sizeof in), TSR_EINVAL, "null");
	ck_reads_back(r, in, sizeof in);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(box_tile_matches_partition_tiles)
{
	tsr_box_t bounds = tsr_box3(1, 10, -3, 3, 0, 4);
	tsr_box_t colors = tsr_box3(0, 2, 0, 1, 1, 3);
	tsr_region_t r = tsr_test_region_f64("cube", bounds);
	tsr_partition_t p = tsr_test_tiles(r, colors, "tiles");
	for (int64_t c = 0; c < tsr_box_volume(colors); c++) {
		int64_t color[3] = {c % 3, (c / 3) % 2, 1 + c / 6};
		tsr_region_t sub;
		CK_TSR(tsr_partition_subregion(p, color, &sub));
		tsr_box_t want, got;
		CK_TSR(tsr_region_bounds(sub, &want));
		CK_TSR(tsr_box_tile(bounds, colors, color, &got));
		ck_assert_int_eq(got.dim, 3);
		for (int d = 0; d < 3; d++) {
			ck_assert_int_eq(got.lo[d], want.lo[d]);
			ck_assert_int_eq(got.hi[d], want.hi[d]);
		}
	}
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(box_tile_refuses_bad_color_and_too_many_tiles)
{
	tsr_box_t tile;
	CK_TSR_ERR(tsr_box_tile(tsr_box1(0, 9), tsr_box1(0, 3), (const int64_t[3]){4, 0, 0}, &tile),
		   TSR_EBOUNDS, "color (4)", "[0..3]");
	CK_TSR_ERR(tsr_box_tile(tsr_box1(0, 2), tsr_box1(0, 3), (const int64_t[3]){0, 0, 0}, &tile),
		   TSR_EBOUNDS, "4 colors", "3 points");
	CK_TSR_ERR(tsr_box_tile(tsr_box1(0, 9), tsr_box2(0, 1, 0, 1), (const int64_t[3]){0, 0, 0},
				&tile),
		   TSR_EBOUNDS, "[0..9]");
	CK_TSR_ERR(tsr_box_tile(tsr_box1(0, 9), tsr_box1(0, 1), NULL, &tile), TSR_EINVAL, "null");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tsr_test_tcase("api", 1);
	tcase_add_test(tc, ctx_req_describes_each_requirement);
	tcase_add_test(tc, ctx_req_names_region_and_reduction);
	tcase_add_test(tc, ctx_field_by_position_without_ids_in_args);
	tcase_add_test(tc, ctx_field_position_out_of_range_fails_task);
	tcase_add_test(tc, ctx_req_out_of_range_fails_task);
	tcase_add_test(tc, run_index_launch_with_args_and_result);
	tcase_add_test(tc, run_result_without_operator_says_what_to_write);
	tcase_add_test(tc, future_take_of_destroyed_future_is_stale);
	tcase_add_test(tc, region_write_read_round_trip_on_subregion);
	tcase_add_test(tc, region_write_with_wrong_size_refused_data_intact);
	tcase_add_test(tc, box_tile_matches_partition_tiles);
	suite_add_tcase(s, tc);
	TCase *boxes = tsr_test_tcase("boxes", 0);
	tcase_add_test(boxes, box_tile_refuses_bad_color_and_too_many_tiles);
	suite_add_tcase(s, boxes);
	return tsr_test_run(s);
}
