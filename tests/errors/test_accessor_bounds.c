/* test_accessor_bounds.c: TSR_AT1/2/3 built with -DTSR_CHECK_BOUNDS (as every test is): an index
 * outside the accessor's bounds fails the task with a message naming task, point, requirement,
 * region, field and index, and touches no memory that is not the task's; in-bounds runs are
 * fine. */
#include "tsr_test.h"

#ifndef TSR_CHECK_BOUNDS
#error "the test suite is built with -DTSR_CHECK_BOUNDS"
#endif

/* Jacobi step on a 1-D grid: v[i] = (u[i-1] + u[i] + u[i+1]) / 3 inside the grid. Requirement 0
 * gives u (read), requirement 1 gives v (written, the point's own tile). */
static void jacobi(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const int64_t *last = args;
	tsr_accessor_t u, v;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &u) ||
	    tsr_ctx_field(ctx, 1, 0, TSR_F64, TSR_WRITE, &v))
		return;
	for (int64_t i = v.lo[0]; i <= v.hi[0]; i++) {
		if (i == 0 || i == *last)
			TSR_AT1(&v, double, i) = TSR_AT1(&u, double, i);
		else
			TSR_AT1(&v, double, i) =
				(TSR_AT1(&u, double, i - 1) + TSR_AT1(&u, double, i) +
				 TSR_AT1(&u, double, i + 1)) /
				3;
	}
}

struct grid {
	tsr_region_t r;
	tsr_field_t u, v;
	tsr_partition_t tiles, halo;
	tsr_task_t jacobi;
};

static struct grid grid_make(void)
{
	struct grid g;
	tsr_field_t f[2];
	tsr_fspace_t fs = tsr_test_fspace(2, (const tsr_type_t[]){TSR_F64, TSR_F64},
					  (const char *const[]){"u", "v"}, f);
	g.u = f[0];
	g.v = f[1];
	CK_TSR(tsr_region_create("grid", tsr_box1(0, 15), fs, &g.r));
	CK_TSR(tsr_fspace_destroy(fs));
	double init[16];
	for (int i = 0; i < 16; i++)
		init[i] = i * i;
	CK_TSR(tsr_region_write(g.r, g.u, init, sizeof init));
	CK_TSR(tsr_partition_tiles(g.r, tsr_box1(0, 3), "tiles", &g.tiles));
	CK_TSR(tsr_partition_tiles_halo(g.r, tsr_box1(0, 15), tsr_box1(0, 3),
					(const int64_t[3]){1, 0, 0}, "halo", &g.halo));
	CK_TSR(tsr_task_register(&(tsr_task_desc_t){.name = "jacobi", .cpu = jacobi}, &g.jacobi));
	return g;
}

/* jacobi over the 4 tiles: u read through `neighbours`, v written through the tiles. */
static void run_jacobi(const struct grid *g, tsr_partition_t neighbours)
{
	int64_t last = 15;
	CK_TSR(tsr_run(g->jacobi,
		       &(tsr_launch_t){.domain = tsr_box1(0, 3),
				       .reqs = TSR_REQS(tsr_req_part(neighbours, TSR_READ,
								     TSR_FIELDS(g->u)),
							tsr_req_part(g->tiles, TSR_WRITE,
								     TSR_FIELDS(g->v))),
				       TSR_ARGS(last)}));
}

START_TEST(read_through_halo_partition_is_in_bounds)
{
	struct grid g = grid_make();
	run_jacobi(&g, g.halo);
	CK_TSR(tsr_fence());
	double v[16];
	CK_TSR(tsr_region_read(g.r, g.v, v, sizeof v));
	for (int i = 1; i < 15; i++)
		ck_assert_double_eq_tol(v[i],
					((i - 1.0) * (i - 1) + i * i + (i + 1.0) * (i + 1)) / 3,
					1e-12);
	CK_TSR(tsr_region_destroy(g.r));
}
END_TEST

START_TEST(read_through_disjoint_tiles_is_reported)
{
	struct grid g = grid_make();
	/* the mistake of the issue: neighbours read through the disjoint tiles, not the halo */
	run_jacobi(&g, g.tiles);
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "task 'jacobi' point (", "requirement 0", "field 'u'",
		   "region 'grid", "outside the requested bounds");
	/* u, which the tasks only read, is unchanged */
	double u[16];
	CK_TSR(tsr_region_read(g.r, g.u, u, sizeof u));
	for (int i = 0; i < 16; i++)
		ck_assert_double_eq(u[i], i * i);
	CK_TSR(tsr_region_destroy(g.r));
}
END_TEST

/* Writes its tile and one element past its end (x = hi + 1), which belongs to the next tile. */
static void write_past_end(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_WRITE, &a))
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0] + 1; i++)
		TSR_AT1(&a, double, i) = 100.0 + i;
}

START_TEST(write_past_tile_end_is_reported_and_neighbour_intact)
{
	tsr_region_t r = tsr_test_region_f64("row", tsr_box1(0, 7));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 1), "halves");
	tsr_region_t second;
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){1, 0, 0}, &second));
	tsr_task_t t = tsr_test_task("write_past_end", write_past_end, TSR_NONE);
	/* a single launch on the first half only: element 4 is not the task's */
	tsr_region_t first;
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){0, 0, 0}, &first));
	CK_TSR(tsr_run(t, &(tsr_launch_t){.reqs = TSR_REQS(tsr_req_region(first, TSR_WRITE,
									  TSR_FIELDS(0)))}));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "task 'write_past_end'", "index (4)", "field 'x'",
		   "row/halves", "[0..3]");
	/* the failed task poisoned what it wrote: the whole field cannot be read... */
	double whole[8];
	CK_TSR_ERR(tsr_region_read(r, 0, whole, sizeof whole), TSR_ETASK, "task 'write_past_end'",
		   "index (4)");
	/* ...but the neighbour's half, which the stray write must not have touched, can */
	double v[4];
	CK_TSR(tsr_region_read(second, 0, v, sizeof v));
	for (int i = 0; i < 4; i++)
		ck_assert_double_eq(v[i], 0.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Reads (x, y, z) = lo + offset of a 3-D accessor; offset comes in the arguments. */
static void read_at_offset(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const int64_t *off = args;
	tsr_accessor_t a;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &a))
		return;
	double x = TSR_AT3(&a, double, a.lo[0] + off[0], a.lo[1] + off[1], a.lo[2] + off[2]);
	tsr_ctx_return(ctx, &x);
}

START_TEST(three_d_index_checked_in_every_dimension)
{
	tsr_region_t r = tsr_test_region_f64("cube", tsr_box3(0, 3, 0, 3, 0, 3));
	tsr_task_t t = tsr_test_task("read_at_offset", read_at_offset, TSR_F64);
	int64_t inside[3] = {3, 3, 3};
	tsr_future_t f;
	CK_TSR(tsr_run(t,
		       &(tsr_launch_t){.reqs = TSR_REQS(tsr_req_region(r, TSR_READ, TSR_FIELDS(0))),
				       TSR_ARGS(inside),
				       .result = &f}));
	double x;
	CK_TSR(tsr_future_take(f, &x, sizeof x));
	CK_TSR(tsr_fence());
	const int64_t outside[3][3] = {{4, 0, 0}, {0, -1, 0}, {0, 0, 4}};
	const char *index[3] = {"(4,0,0)", "(0,-1,0)", "(0,0,4)"};
	for (int d = 0; d < 3; d++) {
		CK_TSR(tsr_run(t, &(tsr_launch_t){.reqs = TSR_REQS(tsr_req_region(r, TSR_READ,
										  TSR_FIELDS(0))),
						  TSR_ARGS(outside[d]),
						  .result = &f}));
		CK_TSR(tsr_future_destroy(f));
		CK_TSR_ERR(tsr_fence(), TSR_ETASK, "read_at_offset", index[d], "cube");
	}
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(host_mapping_out_of_bounds_is_reported_data_intact)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box2(0, 3, 0, 1));
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, 0, TSR_READ_WRITE, &a));
	TSR_AT2(&a, double, 3, 1) = 5.0;
	/* (4,0) would be (0,1) in memory without the check */
	TSR_AT2(&a, double, 4, 0) = 7.0;
	tsr_test_names(tsr_last_error(), "TSR_AT2",
		       (const char *[]){"host mapping", "field 'x'", "region 'grid'", "(4,0)",
					"[0..3, 0..1]", NULL});
	ck_assert_double_eq(TSR_AT2(&a, double, 0, 1), 0.0);
	ck_assert_double_eq(TSR_AT2(&a, double, 3, 1), 5.0);
	CK_TSR(tsr_unmap(r, 0));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_accessor_bounds");
	TCase *tc = tsr_test_tcase("accessor_bounds", 1);
	tcase_add_test(tc, read_through_halo_partition_is_in_bounds);
	tcase_add_test(tc, read_through_disjoint_tiles_is_reported);
	tcase_add_test(tc, write_past_tile_end_is_reported_and_neighbour_intact);
	tcase_add_test(tc, three_d_index_checked_in_every_dimension);
	tcase_add_test(tc, host_mapping_out_of_bounds_is_reported_data_intact);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
