/* test_poison.c: a task that fails poisons what it should have produced. Its future (and every
 * future computed from it) and the data it should have written report TSR_ETASK with the original
 * message (task, point, region, field) instead of passing an identity or stale values for a result;
 * tasks that consume poisoned inputs do not run. A write heals what it replaces, and no more. */
#include <math.h>
#include <stdatomic.h>
#include "tsr_test.h"

/* Which launch point of `residual` fails (-1: none), and how many consumers actually ran. */
static atomic_int fail_point = -1;
static atomic_int ran;

/* Region "grid" [0..7] with f64 "u" = 1 and f64 "v" = 2; tiles "tiles" of 4 colors. */
static tsr_region_t grid(tsr_partition_t *tiles)
{
	tsr_field_t f[2];
	tsr_region_t r =
		tsr_test_region("grid", tsr_box1(0, 7), 2, (const tsr_type_t[]){TSR_F64, TSR_F64},
				(const char *const[]){"u", "v"}, f);
	CK_TSR(tsr_fill(r, 0, &(double){1.0}, sizeof(double)));
	CK_TSR(tsr_fill(r, 1, &(double){2.0}, sizeof(double)));
	if (tiles)
		CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 3), "tiles", tiles));
	return r;
}

static int my_point(tsr_ctx_t *ctx)
{
	int64_t p[3];
	tsr_ctx_point(ctx, p);
	return (int)p[0];
}

/* residual: MAX of field u over its tile, written back as u + 1. The failing point asks for the
 * field with the wrong type, as a typo would. */
static void residual(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	int bad = tsr_ctx_point(ctx, NULL) > 0 && my_point(ctx) == atomic_load(&fail_point);
	if (tsr_ctx_accessor(ctx, 0, 0, bad ? TSR_F32 : TSR_F64, TSR_READ_WRITE, &a))
		return;
	double m = -INFINITY;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++) {
		TSR_AT1(&a, double, i) += 1.0;
		m = fmax(m, TSR_AT1(&a, double, i));
	}
	tsr_ctx_return(ctx, &m);
}

/* plus_one: returns the future it reads plus one. */
static void plus_one(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	atomic_fetch_add(&ran, 1);
	const double *in = tsr_ctx_future(ctx, 0);
	double out = *in + 1.0;
	tsr_ctx_return(ctx, &out);
}

/* scale_by: writes field u of requirement 1 = the future of requirement 0. */
static void scale_by(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	atomic_fetch_add(&ran, 1);
	const double *s = tsr_ctx_future(ctx, 0);
	if (tsr_ctx_accessor(ctx, 1, 0, TSR_F64, TSR_WRITE, &a))
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		TSR_AT1(&a, double, i) = *s;
}

/* sum_u: returns the sum of field u of requirement 0 (READ). */
static void sum_u(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	atomic_fetch_add(&ran, 1);
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ, &a))
		return;
	double s = 0;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		s += TSR_AT1(&a, double, i);
	tsr_ctx_return(ctx, &s);
}

/* complain: reports an error through tsr_ctx_error and returns a plausible value anyway. */
static void complain(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	double v = 42.0;
	tsr_ctx_error(ctx, "matrix '%s' is singular", "A");
	tsr_ctx_return(ctx, &v);
}

/* write_u: WRITE of field u of requirement 0 with the value in args. */
static void write_u(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	atomic_fetch_add(&ran, 1);
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_WRITE, &a))
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		TSR_AT1(&a, double, i) = *(const double *)args;
}

/* The index launch of `residual` over the 4 tiles with MAX, point `bad` failing. */
static tsr_future_t launch_residual(tsr_partition_t tiles, int bad)
{
	tsr_future_t f;
	atomic_store(&fail_point, bad);
	tsr_req_t q = tsr_req_part(tiles, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(tsr_test_task("residual", residual, TSR_F64), tsr_box1(0, 3), 1, &q,
				NULL, 0, TSR_MAX, &f));
	return f;
}

/* Map field f of r for reading and check every value (the map must succeed). */
static void ck_values(tsr_region_t r, tsr_field_t f, double want)
{
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, f, TSR_READ, &a));
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		ck_assert_msg(TSR_AT1(&a, double, i) == want, "element %lld is %g, expected %g",
			      (long long)i, TSR_AT1(&a, double, i), want);
	CK_TSR(tsr_unmap(r, f));
}

START_TEST(failed_point_poisons_its_reduction)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid(&tiles);
	tsr_future_t f = launch_residual(tiles, 2);
	double m = 12345.0;
	/* not the MAX of the other points, not -inf: an error naming the task, the point, region
	 * and field */
	CK_TSR_ERR(tsr_future_wait(f, &m, sizeof m), TSR_ETASK, "residual", "point (2)", "grid",
		   "'u'", "f32");
	ck_assert_double_eq(m, 12345.0);
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "residual", "point (2)");
	/* once the poisoned tile is rewritten, the same launch with no failure gives the value */
	CK_TSR(tsr_future_destroy(f));
	CK_TSR(tsr_fill(r, 0, &(double){1.0}, sizeof(double)));
	f = launch_residual(tiles, -1);
	CK_TSR(tsr_future_wait(f, &m, sizeof m));
	ck_assert_double_eq(m, 2.0);
	CK_TSR(tsr_future_destroy(f));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(ctx_error_poisons_a_single_launch)
{
	tsr_future_t f;
	CK_TSR(tsr_launch(tsr_test_task("solve", complain, TSR_F64), 0, NULL, NULL, 0, &f));
	double v = 0.0;
	CK_TSR_ERR(tsr_future_wait(f, &v, sizeof v), TSR_ETASK, "solve", "singular", "'A'");
	ck_assert_double_eq(v, 0.0);
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "solve");
	CK_TSR(tsr_future_destroy(f));
}
END_TEST

START_TEST(poison_flows_through_futures_and_skips_consumers)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid(&tiles);
	tsr_region_t out = tsr_test_region_f64("out", tsr_box1(0, 3));
	tsr_future_t f0 = launch_residual(tiles, 1);
	atomic_store(&ran, 0);
	/* two generations of futures computed from the failed one, then data written from the
	 * last */
	tsr_future_t f1, f2;
	tsr_req_t q0 = tsr_req_future(f0);
	CK_TSR(tsr_launch(tsr_test_task("plus_one", plus_one, TSR_F64), 1, &q0, NULL, 0, &f1));
	tsr_req_t q1 = tsr_req_future(f1);
	CK_TSR(tsr_launch(tsr_test_task("plus_one", plus_one, TSR_F64), 1, &q1, NULL, 0, &f2));
	tsr_req_t qs[2] = {tsr_req_future(f2), tsr_req_region(out, TSR_WRITE, TSR_FIELDS(0))};
	CK_TSR(tsr_launch(tsr_test_task("scale_by", scale_by, TSR_NONE), 2, qs, NULL, 0, NULL));
	/* the producer may be destroyed before its consumers run */
	CK_TSR(tsr_future_destroy(f0));
	CK_TSR(tsr_future_destroy(f1));
	double v = -1.0;
	CK_TSR_ERR(tsr_future_wait(f2, &v, sizeof v), TSR_ETASK, "residual", "point (1)", "grid",
		   "'u'");
	ck_assert_double_eq(v, -1.0);
	tsr_accessor_t a;
	CK_TSR_ERR(tsr_map(out, 0, TSR_READ, &a), TSR_ETASK, "'x'", "'out'", "residual",
		   "point (1)");
	/* no consumer ran */
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "residual");
	ck_assert_int_eq(atomic_load(&ran), 0);
	CK_TSR(tsr_future_destroy(f2));
	CK_TSR(tsr_region_destroy(out));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* What a failed point task wrote is refused to tsr_map (the region, and the point's tile) until
 * something replaces it; what healthy points wrote is not. */
START_TEST(map_of_data_a_failed_task_wrote)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid(&tiles);
	tsr_future_t f = launch_residual(tiles, 3);
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "residual");
	CK_TSR(tsr_future_destroy(f));
	tsr_accessor_t a;
	/* the region, and the tile the failed point owned, are refused for READ and READ_WRITE */
	CK_TSR_ERR(tsr_map(r, 0, TSR_READ, &a), TSR_ETASK, "tsr_map", "'u'", "'grid'", "residual",
		   "point (3)");
	tsr_region_t t3 = tsr_test_subregion(tiles, 3), t0 = tsr_test_subregion(tiles, 0);
	CK_TSR_ERR(tsr_map(t3, 0, TSR_READ_WRITE, &a), TSR_ETASK, "'u'", "grid/tiles(3)",
		   "residual", "point (3)");
	/* a tile a healthy point wrote, and the field nobody wrote, are fine */
	ck_values(t0, 0, 2.0);
	ck_values(r, 1, 2.0);
	/* still refused when asked again (nothing healed it) */
	CK_TSR_ERR(tsr_map(r, 0, TSR_READ, &a), TSR_ETASK, "residual");
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(readers_of_poisoned_data_do_not_run)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid(&tiles);
	tsr_future_t f = launch_residual(tiles, 0);
	CK_TSR(tsr_future_destroy(f));
	atomic_store(&ran, 0);
	/* a reader of the whole region and a reader of the poisoned tile: skipped, their futures
	 * poisoned */
	tsr_region_t t0 = tsr_test_subregion(tiles, 0), t1 = tsr_test_subregion(tiles, 1);
	tsr_task_t sum = tsr_test_task("sum_u", sum_u, TSR_F64);
	tsr_future_t whole, tile0, tile1;
	tsr_req_t q = tsr_req_region(r, TSR_READ, TSR_FIELDS(0));
	CK_TSR(tsr_launch(sum, 1, &q, NULL, 0, &whole));
	q = tsr_req_region(t0, TSR_READ, TSR_FIELDS(0));
	CK_TSR(tsr_launch(sum, 1, &q, NULL, 0, &tile0));
	q = tsr_req_region(t1, TSR_READ, TSR_FIELDS(0));
	CK_TSR(tsr_launch(sum, 1, &q, NULL, 0, &tile1));
	double s = 0;
	CK_TSR_ERR(tsr_future_wait(whole, &s, sizeof s), TSR_ETASK, "residual", "point (0)", "'u'");
	CK_TSR_ERR(tsr_future_wait(tile0, &s, sizeof s), TSR_ETASK, "residual", "point (0)");
	/* the healthy tile is read as usual: 2 elements of 1 + 1 */
	CK_TSR(tsr_future_wait(tile1, &s, sizeof s));
	ck_assert_double_eq(s, 4.0);
	ck_assert_int_eq(atomic_load(&ran), 1);
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "residual");
	CK_TSR(tsr_future_destroy(whole));
	CK_TSR(tsr_future_destroy(tile0));
	CK_TSR(tsr_future_destroy(tile1));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(a_full_write_heals_poisoned_data)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid(&tiles);
	tsr_accessor_t a;
	/* tsr_fill replaces every value */
	tsr_future_t f = launch_residual(tiles, 2);
	CK_TSR(tsr_future_destroy(f));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "residual");
	CK_TSR(tsr_fill(r, 0, &(double){7.0}, sizeof(double)));
	ck_values(r, 0, 7.0);
	/* so does a task that WRITEs the whole region and succeeds */
	f = launch_residual(tiles, 1);
	CK_TSR(tsr_future_destroy(f));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "residual");
	tsr_req_t q = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(tsr_test_task("write_u", write_u, TSR_NONE), 1, &q, &(double){5.0},
			  sizeof(double), NULL));
	ck_values(r, 0, 5.0);
	/* a WRITE of another box leaves the failed one poisoned */
	f = launch_residual(tiles, 1);
	CK_TSR(tsr_future_destroy(f));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "residual");
	tsr_region_t t0 = tsr_test_subregion(tiles, 0);
	q = tsr_req_region(t0, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(tsr_test_task("write_u", write_u, TSR_NONE), 1, &q, &(double){9.0},
			  sizeof(double), NULL));
	CK_TSR_ERR(tsr_map(r, 0, TSR_READ, &a), TSR_ETASK, "residual", "point (1)");
	ck_values(t0, 0, 9.0);
	/* a host WRITE mapping discards the old values too */
	CK_TSR(tsr_map(r, 0, TSR_WRITE, &a));
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		TSR_AT1(&a, double, i) = 3.0;
	CK_TSR(tsr_unmap(r, 0));
	ck_values(r, 0, 3.0);
	CK_TSR(tsr_fence());
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* write_all: WRITE of field 0 of requirement 0 (1 or 2 dimensions) with the value in args. */
static void write_all(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	atomic_fetch_add(&ran, 1);
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_WRITE, &a))
		return;
	int64_t hi1 = a.dim > 1 ? a.hi[1] : a.lo[1];
	for (int64_t j = a.lo[1]; j <= hi1; j++)
		for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
			*(double *)tsr_accessor_at(&a, sizeof(double), a.dim, i, j, 0) =
				*(const double *)args;
}

/* One launch of `complain` that could WRITE field 0 of all of r: it fails, and poisons r whole. */
static void poison_whole(tsr_region_t r)
{
	tsr_req_t q = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(tsr_test_task("solve", complain, TSR_F64), 1, &q, NULL, 0, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "solve");
}

static void write_with(tsr_region_t r, double v)
{
	tsr_req_t q = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(tsr_test_task("write_all", write_all, TSR_NONE), 1, &q, &v, sizeof v,
			  NULL));
}

/* A region poisoned whole and rewritten tile by tile: each tile is healthy once written (its
 * readers run), the region only once the last tile is. */
START_TEST(a_write_heals_its_part_of_a_larger_failure)
{
	tsr_partition_t tiles;
	tsr_region_t r = grid(&tiles);
	tsr_accessor_t a;
	poison_whole(r);
	for (int c = 0; c < 4; c++) {
		CK_TSR_ERR(tsr_map(r, 0, TSR_READ, &a), TSR_ETASK, "solve", "singular");
		tsr_region_t t = tsr_test_subregion(tiles, c);
		write_with(t, 10.0 + c);
		ck_values(t, 0, 10.0 + c);
		if (c < 3)
			CK_TSR_ERR(tsr_map(tsr_test_subregion(tiles, c + 1), 0, TSR_READ, &a),
				   TSR_ETASK, "solve");
	}

	/* a reader of the region runs again: the four tiles' 2 elements each */
	atomic_store(&ran, 0);
	tsr_future_t sum;
	tsr_req_t q = tsr_req_region(r, TSR_READ, TSR_FIELDS(0));
	CK_TSR(tsr_launch(tsr_test_task("sum_u", sum_u, TSR_F64), 1, &q, NULL, 0, &sum));
	double s = 0;
	CK_TSR(tsr_future_wait(sum, &s, sizeof s));
	ck_assert_double_eq(s, 2 * (10.0 + 11.0 + 12.0 + 13.0));
	ck_assert_int_eq(atomic_load(&ran), 1);
	CK_TSR(tsr_future_destroy(sum));
	CK_TSR(tsr_fence());
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* In two dimensions: a write of the middle of a poisoned plate leaves the ring around it poisoned;
 * writing the ring, piece by piece, heals the plate. */
START_TEST(a_write_in_the_middle_leaves_the_ring_poisoned)
{
	tsr_region_t r = tsr_test_region_f64("plate", tsr_box2(0, 3, 0, 3));
	/* the middle, then rows 0 and 3 whole and the two columns between them: a ring cut
	 * otherwise than the four boxes left of the failure */
	const tsr_box_t boxes[5] = {tsr_box2(1, 2, 1, 2), tsr_box2(0, 3, 0, 0),
				    tsr_box2(0, 3, 3, 3), tsr_box2(0, 0, 1, 2),
				    tsr_box2(3, 3, 1, 2)};
	tsr_partition_t parts;
	CK_TSR(tsr_partition_boxes(r, 5, boxes, "parts", &parts));
	tsr_accessor_t a;
	poison_whole(r);
	write_with(tsr_test_subregion(parts, 0), 4.0);
	CK_TSR(tsr_map(tsr_test_subregion(parts, 0), 0, TSR_READ, &a));
	CK_TSR(tsr_unmap(tsr_test_subregion(parts, 0), 0));
	for (int c = 1; c < 5; c++) {
		CK_TSR_ERR(tsr_map(r, 0, TSR_READ, &a), TSR_ETASK, "solve");
		CK_TSR_ERR(tsr_map(tsr_test_subregion(parts, c), 0, TSR_READ, &a), TSR_ETASK,
			   "solve");
		write_with(tsr_test_subregion(parts, c), 4.0);
	}
	CK_TSR(tsr_map(r, 0, TSR_READ, &a));
	for (int64_t j = 0; j <= 3; j++)
		for (int64_t i = 0; i <= 3; i++)
			ck_assert_double_eq(TSR_AT2(&a, double, i, j), 4.0);
	CK_TSR(tsr_unmap(r, 0));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* gate_field: spins 50 ms, then WRITEs field f of requirement 0 with 2: a task that a reader of f
 * waits for, long enough for a later task to run and fail before the reader starts. gate: on v. */
static void gate_field(tsr_ctx_t *ctx, tsr_field_t f)
{
	tsr_accessor_t a;
	double t0 = tsr_test_now();
	while (tsr_test_now() - t0 < 0.05)
		;
	if (tsr_ctx_accessor(ctx, 0, f, TSR_F64, TSR_WRITE, &a))
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		TSR_AT1(&a, double, i) = 2.0;
}

static void gate(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	gate_field(ctx, 1);
}

/* sum_uv: returns the sum of u over requirement 0 (READ) after reading v of requirement 1. */
static void sum_uv(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t u, v;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ, &u) ||
	    tsr_ctx_accessor(ctx, 1, 1, TSR_F64, TSR_READ, &v))
		return;
	double s = 0;
	for (int64_t i = u.lo[0]; i <= u.hi[0]; i++)
		s += TSR_AT1(&u, double, i) + 0 * TSR_AT1(&v, double, i);
	tsr_ctx_return(ctx, &s);
}

/* A REDUCE point reaches its field through a fold task only, so it runs at once and may fail
 * before a reader submitted earlier (waiting for another task) starts: that reader's inputs are
 * the values before the failed task, and it must run (the oracle's loops found readers skipped). */
START_TEST(a_later_failure_does_not_poison_an_earlier_reader)
{
	tsr_region_t r = grid(NULL);
	tsr_req_t w = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(1));
	CK_TSR(tsr_launch(tsr_test_task("gate", gate, TSR_NONE), 1, &w, NULL, 0, NULL));
	tsr_future_t sum;
	tsr_req_t both[2] = {tsr_req_region(r, TSR_READ, TSR_FIELDS(0)),
			     tsr_req_region(r, TSR_READ, TSR_FIELDS(1))};
	CK_TSR(tsr_launch(tsr_test_task("sum_uv", sum_uv, TSR_F64), 2, both, NULL, 0, &sum));
	tsr_req_t red = tsr_req_region(r, TSR_REDUCE(TSR_SUM), TSR_FIELDS(0));
	CK_TSR(tsr_launch(tsr_test_task("complain", complain, TSR_F64), 1, &red, NULL, 0, NULL));
	double s = 0;
	CK_TSR(tsr_future_wait(sum, &s, sizeof s));
	ck_assert_double_eq(s, 8.0);
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "singular");
	tsr_accessor_t a;
	CK_TSR_ERR(tsr_map(r, 0, TSR_READ, &a), TSR_ETASK, "singular");
	CK_TSR(tsr_future_destroy(sum));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* gate_u: as gate, on field u. */
static void gate_u(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	gate_field(ctx, 0);
}

/* A WRITE heals what failed before it, not a REDUCE point submitted after it that ran ahead of it
 * and failed on the same box (a loop of the oracle lost that later failure). */
START_TEST(a_heal_keeps_a_later_failure_of_the_same_box)
{
	tsr_region_t r = grid(NULL);
	tsr_task_t bad = tsr_test_task("complain", complain, TSR_F64);
	tsr_req_t red = tsr_req_region(r, TSR_REDUCE(TSR_SUM), TSR_FIELDS(0));
	CK_TSR(tsr_launch(bad, 1, &red, NULL, 0, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "singular");
	tsr_req_t w = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(tsr_test_task("gate_u", gate_u, TSR_NONE), 1, &w, NULL, 0, NULL));
	CK_TSR(tsr_launch(bad, 1, &red, NULL, 0, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "singular");
	tsr_accessor_t a;
	CK_TSR_ERR(tsr_map(r, 0, TSR_READ, &a), TSR_ETASK, "singular");
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(host_ctx_error_with_null_context_is_harmless)
{
	tsr_ctx_error(NULL, "nothing to see in %s", "main");
	tsr_test_names(tsr_last_error(), "tsr_ctx_error",
		       (const char *[]){"tsr_ctx_error", "main", NULL});
	/* no task failed: the fence is clean, futures and data work */
	CK_TSR(tsr_fence());
	tsr_future_t f;
	CK_TSR(tsr_future_create(TSR_F64, 0, &(double){1.5}, &f));
	tsr_req_t q = tsr_req_future(f);
	tsr_future_t g;
	CK_TSR(tsr_launch(tsr_test_task("plus_one", plus_one, TSR_F64), 1, &q, NULL, 0, &g));
	double v;
	CK_TSR(tsr_future_wait(g, &v, sizeof v));
	ck_assert_double_eq(v, 2.5);
	CK_TSR(tsr_future_destroy(f));
	CK_TSR(tsr_future_destroy(g));
	CK_TSR(tsr_fence());
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_poison");
	TCase *tc = tsr_test_tcase("poison", 1);
	tcase_add_test(tc, failed_point_poisons_its_reduction);
	tcase_add_test(tc, ctx_error_poisons_a_single_launch);
	tcase_add_test(tc, poison_flows_through_futures_and_skips_consumers);
	tcase_add_test(tc, map_of_data_a_failed_task_wrote);
	tcase_add_test(tc, readers_of_poisoned_data_do_not_run);
	tcase_add_test(tc, a_full_write_heals_poisoned_data);
	tcase_add_test(tc, a_write_heals_its_part_of_a_larger_failure);
	tcase_add_test(tc, a_write_in_the_middle_leaves_the_ring_poisoned);
	tcase_add_test(tc, a_later_failure_does_not_poison_an_earlier_reader);
	tcase_add_test(tc, a_heal_keeps_a_later_failure_of_the_same_box);
	tcase_add_test(tc, host_ctx_error_with_null_context_is_harmless);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
