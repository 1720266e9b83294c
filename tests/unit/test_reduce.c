/* test_reduce.c: the REDUCE privilege on region fields, through single launches, disjoint and
 * aliased partitions, several launches in flight at once; a READ afterwards sees the total.
 * Built-in sum/min/max/prod on f64/i32/i64, and user-registered operators. */
#include "tsr_test.h"

struct fold_args {
	tsr_redop_t op;
	tsr_type_t type;
	double value; /* folded into every element; plus the launch point when per_point */
	int per_point;
};

static double apply(tsr_redop_t op, double a, double b)
{
	if (op.id == TSR_SUM.id)
		return a + b;
	if (op.id == TSR_PROD.id)
		return a * b;
	if (op.id == TSR_MIN.id)
		return a < b ? a : b;
	return a > b ? a : b;
}

/* fold_value: fold args->value (+ point) into every element of requirement 0, field 0. */
static void fold_value(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const struct fold_args *fa = args;
	int64_t p[3] = {0, 0, 0};
	double v = fa->value;
	if (tsr_ctx_point(ctx, p) && fa->per_point)
		v += (double)p[0];
	tsr_accessor_t a;
	if (tsr_ctx_accessor(ctx, 0, 0, fa->type, TSR_REDUCE(fa->op), &a))
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		switch (fa->type) {
		case TSR_F64:
			TSR_AT1(&a, double, i) = apply(fa->op, TSR_AT1(&a, double, i), v);
			break;
		case TSR_I32:
			TSR_AT1(&a, int32_t, i) =
				(int32_t)apply(fa->op, TSR_AT1(&a, int32_t, i), v);
			break;
		default:
			TSR_AT1(&a, int64_t, i) =
				(int64_t)apply(fa->op, (double)TSR_AT1(&a, int64_t, i), v);
		}
}

static tsr_task_t fold_task(void)
{
	tsr_task_t t = tsr_test_task("fold_value", fold_value, TSR_NONE);
	return t;
}

static void single_fold(tsr_task_t t, tsr_region_t r, tsr_redop_t op, tsr_type_t type, double v)
{
	struct fold_args fa = {op, type, v, 0};
	tsr_req_t q = tsr_req_region(r, TSR_REDUCE(op), TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &q, &fa, sizeof fa, NULL));
}

static void index_fold(tsr_task_t t, tsr_partition_t p, tsr_box_t dom, tsr_redop_t op, double v)
{
	struct fold_args fa = {op, TSR_F64, v, 1};
	tsr_req_t q = tsr_req_part(p, TSR_REDUCE(op), TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(t, dom, 1, &q, &fa, sizeof fa, TSR_REDOP_NONE, NULL));
}

START_TEST(reduce_sum_through_disjoint_tiles)
{
	tsr_region_t r = tsr_test_region_f64("acc", tsr_box1(0, 11));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	double ten = 10.0, v[12];
	CK_TSR(tsr_fill(r, 0, &ten, sizeof ten));
	index_fold(fold_task(), p, tsr_box1(0, 3), TSR_SUM, 1.0);
	tsr_test_read1(r, 0, v, 12);
	for (int i = 0; i < 12; i++)
		ck_assert_double_eq(v[i], 10.0 + 1.0 + i / 3);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Through halo tiles, elements in two tiles receive both contributions. */
START_TEST(reduce_sum_through_aliased_halo_tiles)
{
	tsr_region_t r = tsr_test_region_f64("acc", tsr_box1(0, 11));
	tsr_partition_t p;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, 11), tsr_box1(0, 3),
					(const int64_t[3]){1, 0, 0}, "ghost", &p));
	ck_assert_int_eq(tsr_partition_is_disjoint(p), 0);
	double ten = 10.0, v[12];
	CK_TSR(tsr_fill(r, 0, &ten, sizeof ten));
	index_fold(fold_task(), p, tsr_box1(0, 3), TSR_SUM, 1.0);
	tsr_test_read1(r, 0, v, 12);
	for (int i = 0; i < 12; i++) {
		double want = 10.0;
		for (int c = 0; c < 4; c++)
			if (i >= 3 * c - 1 && i <= 3 * c + 3)
				want += 1.0 + c;
		ck_assert_msg(v[i] == want, "element %d: %g, want %g", i, v[i], want);
	}
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Many REDUCE launches in flight (single, through tiles, through halo tiles, on a subregion),
 * then a READ task and a host map both see the total. */
START_TEST(concurrent_reduce_launches_then_read_sees_total)
{
	tsr_region_t r = tsr_test_region_f64("acc", tsr_box1(0, 15));
	tsr_partition_t tiles, ghost;
	tsr_region_t s;
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 3), "tiles", &tiles));
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, 15), tsr_box1(0, 1),
					(const int64_t[3]){2, 0, 0}, "ghost", &ghost));
	CK_TSR(tsr_partition_subregion(tiles, (const int64_t[3]){2, 0, 0}, &s));
	tsr_task_t t = fold_task();
	double want[16];
	for (int i = 0; i < 16; i++)
		want[i] = 1.0;
	double one = 1.0;
	CK_TSR(tsr_fill(r, 0, &one, sizeof one));
	for (int k = 1; k <= 5; k++) {
		single_fold(t, r, TSR_SUM, TSR_F64, k);
		for (int i = 0; i < 16; i++)
			want[i] += k;
		index_fold(t, tiles, tsr_box1(0, 3), TSR_SUM, 10.0 * k);
		for (int i = 0; i < 16; i++)
			want[i] += 10.0 * k + i / 4;
		index_fold(t, ghost, tsr_box1(0, 1), TSR_SUM, 100.0);
		for (int i = 0; i < 16; i++)
			want[i] += (i <= 9 ? 100.0 : 0.0) + (i >= 6 ? 101.0 : 0.0);
		single_fold(t, s, TSR_SUM, TSR_F64, 1000.0);
		for (int i = 8; i <= 11; i++)
			want[i] += 1000.0;
	}
	tsr_task_t rs = tsr_test_task("read_sum", tsr_test_sum, TSR_F64);
	tsr_req_t q = tsr_req_region(r, TSR_READ, TSR_FIELDS(0));
	tsr_future_t f;
	CK_TSR(tsr_launch(rs, 1, &q, NULL, 0, &f));
	double total = 0, v[16];
	for (int i = 0; i < 16; i++)
		total += want[i];
	ck_assert_double_eq(tsr_test_take_f64(f), total);
	tsr_test_read1(r, 0, v, 16);
	for (int i = 0; i < 16; i++)
		ck_assert_msg(v[i] == want[i], "element %d: %g, want %g", i, v[i], want[i]);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A reduction epoch ends at a READ_WRITE task; a second epoch starts from its result. */
START_TEST(reduce_epochs_separated_by_read_write)
{
	tsr_region_t r = tsr_test_region_f64("acc", tsr_box1(0, 7));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 1), "halves");
	tsr_task_t t = fold_task(), d;
	d = tsr_test_task("double_it", tsr_test_affine, TSR_NONE);
	tsr_req_t rw = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0));
	single_fold(t, r, TSR_SUM, TSR_F64, 3.0);
	index_fold(t, p, tsr_box1(0, 1), TSR_SUM, 1.0); /* +1 / +2 */
	/* x2 */
	CK_TSR(tsr_launch(d, 1, &rw, (const double[2]){2.0, 0.0}, 2 * sizeof(double), NULL));
	index_fold(t, p, tsr_box1(0, 1), TSR_SUM, 0.0); /* +0 / +1 */
	single_fold(t, r, TSR_SUM, TSR_F64, 0.5);
	double v[8];
	tsr_test_read1(r, 0, v, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(v[i], i < 4 ? 8.5 : 11.5);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Consecutive REDUCE launches with different operators: each epoch must end before the next
 * operator starts (max, then sum, then prod, then min, then sum again). */
START_TEST(reduce_with_different_ops_in_sequence)
{
	tsr_region_t r = tsr_test_region_f64("acc", tsr_box1(0, 5));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 1), "halves");
	double five = 5.0, v[6];
	CK_TSR(tsr_fill(r, 0, &five, sizeof five));
	tsr_task_t t = fold_task();
	single_fold(t, r, TSR_MAX, TSR_F64, 10.0);       /* 10 */
	single_fold(t, r, TSR_SUM, TSR_F64, 1.0);        /* 11 */
	index_fold(t, p, tsr_box1(0, 1), TSR_PROD, 2.0); /* 22 / 33 */
	single_fold(t, r, TSR_MIN, TSR_F64, 30.0);       /* 22 / 30 */
	index_fold(t, p, tsr_box1(0, 1), TSR_SUM, -2.0); /* 20 / 29 */
	tsr_test_read1(r, 0, v, 6);
	for (int i = 0; i < 6; i++)
		ck_assert_msg(v[i] == (i < 3 ? 20.0 : 29.0), "element %d: %g, want %g", i, v[i],
			      i < 3 ? 20.0 : 29.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A region requirement with REDUCE in an index launch: every point folds into the whole region. */
START_TEST(index_launch_reduce_on_region_requirement)
{
	tsr_region_t r = tsr_test_region_f64("acc", tsr_box1(0, 4));
	double one = 1.0, v[5];
	CK_TSR(tsr_fill(r, 0, &one, sizeof one));
	struct fold_args fa = {TSR_SUM, TSR_F64, 1.0, 1};
	tsr_req_t q = tsr_req_region(r, TSR_REDUCE(TSR_SUM), TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(fold_task(), tsr_box1(0, 3), 1, &q, &fa, sizeof fa, TSR_REDOP_NONE,
				NULL));
	tsr_test_read1(r, 0, v, 5);
	for (int i = 0; i < 5; i++)
		ck_assert_msg(v[i] == 1.0 + 1 + 2 + 3 + 4, "element %d: %g, want 11", i, v[i]);
	/* and a MAX epoch right after, again from every point */
	fa = (struct fold_args){TSR_MAX, TSR_F64, 10.0, 1};
	q = tsr_req_region(r, TSR_REDUCE(TSR_MAX), TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(fold_task(), tsr_box1(0, 3), 1, &q, &fa, sizeof fa, TSR_REDOP_NONE,
				NULL));
	tsr_test_read1(r, 0, v, 5);
	for (int i = 0; i < 5; i++)
		ck_assert_msg(v[i] == 13.0, "element %d: %g, want 13", i, v[i]);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* min, max and prod on f64, i32 and i64 fields through single and index launches. */
static void check_op(tsr_type_t type, tsr_redop_t op, double init, const double *vals, int n,
		     double want_base)
{
	tsr_field_t f;
	tsr_region_t r =
		tsr_test_region("ops", tsr_box1(0, 5), 1, &type, (const char *const[]){"acc"}, &f);
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 2), "tiles");
	int32_t i32 = (int32_t)init;
	int64_t i64 = (int64_t)init;
	CK_TSR(tsr_fill(r, f,
			type == TSR_F64   ? (const void *)&init
			: type == TSR_I32 ? (const void *)&i32
					  : (const void *)&i64,
			tsr_type_size(type)));
	tsr_task_t t = fold_task();
	for (int k = 0; k < n; k++)
		single_fold(t, r, op, type, vals[k]);
	/* per point: tile c folds vals[0] + c */
	struct fold_args fa = {op, type, vals[0], 1};
	tsr_req_t q = tsr_req_part(p, TSR_REDUCE(op), TSR_FIELDS(f));
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 2), 1, &q, &fa, sizeof fa, TSR_REDOP_NONE, NULL));
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, f, TSR_READ, &a));
	for (int i = 0; i < 6; i++) {
		double want = apply(op, want_base, vals[0] + i / 2);
		double got = type == TSR_F64   ? TSR_AT1(&a, double, i)
			     : type == TSR_I32 ? TSR_AT1(&a, int32_t, i)
					       : (double)TSR_AT1(&a, int64_t, i);
		ck_assert_msg(got == want, "%s op %d element %d: %g, want %g", tsr_type_name(type),
			      op.id, i, got, want);
	}
	CK_TSR(tsr_unmap(r, f));
	CK_TSR(tsr_region_destroy(r));
}

START_TEST(reduce_min_max_prod_f64)
{
	const double v[] = {4.0, -2.5, 7.0};
	check_op(TSR_F64, TSR_MIN, 1.0, v, 3, -2.5);
	check_op(TSR_F64, TSR_MAX, 1.0, v, 3, 7.0);
	check_op(TSR_F64, TSR_PROD, 2.0, v, 3, 2.0 * 4.0 * -2.5 * 7.0);
}
END_TEST

START_TEST(reduce_min_max_prod_i32)
{
	const double v[] = {3, -4, 5};
	check_op(TSR_I32, TSR_MIN, 0, v, 3, -4);
	check_op(TSR_I32, TSR_MAX, 0, v, 3, 5);
	check_op(TSR_I32, TSR_PROD, -1, v, 3, 60);
	check_op(TSR_I32, TSR_SUM, 100, v, 3, 104);
}
END_TEST

START_TEST(reduce_min_max_prod_i64)
{
	const double v[] = {1e6, -3, 1e3};
	check_op(TSR_I64, TSR_MIN, 9, v, 3, -3);
	check_op(TSR_I64, TSR_MAX, 9, v, 3, 1e6);
	check_op(TSR_I64, TSR_PROD, 2, v, 3, -6e9); /* needs 64 bits */
	check_op(TSR_I64, TSR_SUM, 2, v, 3, 1001e3 - 1);
}
END_TEST

/* User operators: bitwise or on i64, and a (sum, count) pair on 16-byte elements. */
static void or_identity(void *e)
{
	*(int64_t *)e = 0;
}
static void or_fold(void *acc, const void *val)
{
	*(int64_t *)acc |= *(const int64_t *)val;
}

struct pair {
	double sum;
	int64_t count;
};
static void pair_identity(void *e)
{
	*(struct pair *)e = (struct pair){0.0, 0};
}
static void pair_fold(void *acc, const void *val)
{
	struct pair *a = acc;
	const struct pair *b = val;
	a->sum += b->sum;
	a->count += b->count;
}

/* or_bits: point p folds bit p into every element of its subregion (REDUCE(op)), and returns bit p
 * + 8. */
static void or_bits(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_redop_t op = *(const tsr_redop_t *)args;
	int64_t p[3];
	tsr_ctx_point(ctx, p);
	tsr_accessor_t a;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_I64, TSR_REDUCE(op), &a))
		return;
	/* the private buffer starts at the operator's identity */
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++) {
		if (TSR_AT1(&a, int64_t, i) != 0)
			tsr_ctx_error(ctx, "REDUCE buffer does not start at the identity");
		TSR_AT1(&a, int64_t, i) |= INT64_C(1) << p[0];
	}
	int64_t r = INT64_C(1) << (p[0] + 8);
	tsr_ctx_return(ctx, &r);
}

START_TEST(user_redop_on_region_and_future)
{
	tsr_redop_t op;
	CK_TSR(tsr_redop_register("bitor", TSR_I64, 0, or_identity, or_fold, &op));
	ck_assert_int_ge(op.id, TSR_REDOP_USER);
	tsr_field_t f;
	tsr_region_t r = tsr_test_region("mask", tsr_box1(0, 9), 1, (const tsr_type_t[]){TSR_I64},
					 (const char *const[]){"bits"}, &f);
	int64_t init = INT64_C(1) << 40;
	CK_TSR(tsr_fill(r, f, &init, sizeof init));
	tsr_partition_t p;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, 9), tsr_box1(0, 4),
					(const int64_t[3]){1, 0, 0}, "ghost", &p));
	tsr_task_t t = tsr_test_task("or_bits", or_bits, TSR_I64);
	tsr_req_t q = tsr_req_part(p, TSR_REDUCE(op), TSR_FIELDS(f));
	tsr_future_t fut;
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 4), 1, &q, &op, sizeof op, op, &fut));
	int64_t all;
	CK_TSR(tsr_future_wait(fut, &all, sizeof all));
	ck_assert_int_eq(all, INT64_C(0x1f) << 8);
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, f, TSR_READ, &a));
	for (int i = 0; i < 10; i++) {
		int64_t want = init;
		for (int c = 0; c < 5; c++)
			if (i >= 2 * c - 1 && i <= 2 * c + 2)
				want |= INT64_C(1) << c;
		ck_assert_int_eq(TSR_AT1(&a, int64_t, i), want);
	}
	CK_TSR(tsr_unmap(r, f));
	CK_TSR(tsr_future_destroy(fut));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* pair_point: point p returns (p * 1.5, 1) and folds the same into its tile of a 16-byte field. */
static void pair_point(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_redop_t op = *(const tsr_redop_t *)args;
	int64_t p[3];
	tsr_ctx_point(ctx, p);
	struct pair v = {1.5 * (double)p[0], 1};
	tsr_accessor_t a;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_BYTES, TSR_REDUCE(op), &a))
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		pair_fold(&TSR_AT1(&a, struct pair, i), &v);
	tsr_ctx_return(ctx, &v);
}

START_TEST(user_redop_on_bytes)
{
	tsr_redop_t op;
	CK_TSR(tsr_redop_register("pair_sum", TSR_BYTES, sizeof(struct pair), pair_identity,
				  pair_fold, &op));
	tsr_fspace_t fs;
	tsr_field_t f;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "pair", TSR_BYTES, sizeof(struct pair), &f));
	tsr_region_t r;
	CK_TSR(tsr_region_create("pairs", tsr_box1(0, 7), fs, &r));
	CK_TSR(tsr_fspace_destroy(fs));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	tsr_task_t t;
	CK_TSR(tsr_task_register(&(tsr_task_desc_t){.name = "pair_point",
						    .cpu = pair_point,
						    .ret_type = TSR_BYTES,
						    .ret_bytes = sizeof(struct pair)},
				 &t));
	tsr_req_t q = tsr_req_part(p, TSR_REDUCE(op), TSR_FIELDS(f));
	tsr_future_t f1, f2;
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, &op, sizeof op, op, &f1));
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, &op, sizeof op, op, &f2));
	struct pair v;
	CK_TSR(tsr_future_wait(f2, &v, sizeof v));
	ck_assert_double_eq(v.sum, 9.0);
	ck_assert_int_eq(v.count, 4);
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, f, TSR_READ, &a));
	for (int i = 0; i < 8; i++) {
		ck_assert_double_eq(TSR_AT1(&a, struct pair, i).sum, 2 * 1.5 * (i / 2));
		ck_assert_int_eq(TSR_AT1(&a, struct pair, i).count, 2);
	}
	CK_TSR(tsr_unmap(r, f));
	CK_TSR(tsr_future_destroy(f1));
	CK_TSR(tsr_future_destroy(f2));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* ---- color order: reductions give the same bits whatever the workers, policy and timing; each
 * test starts the runtime itself (2 CPU workers under one policy) in its forked process */

/* Values whose sum depends on the order it is taken in (1e16 + 1 rounds back to 1e16). */
static const double order_values[8] = {1e16, 1.0, -1e16, 1.0, 0.1, 3.0, -0.7, 2.5e15};
static const char *const order_policies[] = {"eager", "lws", "dmda", "tsr-locality",
					     "tsr-critpath"};

/* The value point p of launch `launch` contributes to element i. */
static double order_value(int launch, int64_t p, int64_t i)
{
	return order_values[(launch * 3 + p * 5 + i) % 8];
}

/* Spin a point- and launch-dependent time, so that points finish in a different order from
 * one launch to the next. */
static void order_spin(int launch, int64_t p)
{
	double until = tsr_test_now() + 20e-6 * (double)((launch * 5 + p * 3) % 7);
	while (tsr_test_now() < until)
		;
}

/* order_point: returns order_value(launch, p, 0); folds order_value(launch, p, i) into element
 * i of requirement 0 when the launch has one. */
static void order_point(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const int *launch = args;
	int64_t p[3] = {0, 0, 0};
	tsr_ctx_point(ctx, p);
	order_spin(*launch, p[0]);
	if (tsr_ctx_nreqs(ctx) > 0) {
		tsr_accessor_t a;
		if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_REDUCE(TSR_SUM), &a))
			return;
		for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
			TSR_AT1(&a, double, i) += order_value(*launch, p[0], i);
	}
	double v = order_value(*launch, p[0], 0);
	tsr_ctx_return(ctx, &v);
}

static tsr_task_t order_task(void)
{
	tsr_task_t t = tsr_test_task("order_point", order_point, TSR_F64);
	return t;
}

/* 15 identical index launches of 8 points, each reducing its returns by SUM into a future: every
 * future holds the same bits, those of the sequential fold identity + v(0) + v(1) + ... + v(7). */
START_TEST(future_sum_is_the_color_order_fold_under_every_policy)
{
	tsr_test_init_with(order_policies[_i], 2);
	tsr_task_t t = order_task();
	volatile double want = 0.0;
	for (int64_t p = 0; p < 8; p++)
		want = want + order_value(0, p, 0);
	volatile double reverse = 0.0;
	for (int64_t p = 7; p >= 0; p--)
		reverse = reverse + order_value(0, p, 0);
	ck_assert_msg(want != reverse, "the values must make the order visible");
	int launch = 0;
	tsr_future_t f[15];
	for (int k = 0; k < 15; k++)
		CK_TSR(tsr_index_launch(t, tsr_box1(0, 7), 0, NULL, &launch, sizeof launch, TSR_SUM,
					&f[k]));
	for (int k = 0; k < 15; k++) {
		double got;
		CK_TSR(tsr_future_wait(f[k], &got, sizeof got));
		double w = want;
		ck_assert_msg(memcmp(&got, &w, sizeof got) == 0,
			      "%s: launch %d gave %.17g, the color-order fold is %.17g",
			      order_policies[_i], k, got, w);
		CK_TSR(tsr_future_destroy(f[k]));
	}
	CK_TSR(tsr_finalize());
}
END_TEST

/* Sequential model of one REDUCE(SUM) launch: points in color order, each one's contribution
 * to an element starting at the identity (0.0) and then folded into the element. */
static void order_model(double *x, int launch, int npoints, const tsr_box_t *boxes)
{
	for (int p = 0; p < npoints; p++)
		for (int64_t i = boxes[p].lo[0]; i <= boxes[p].hi[0]; i++) {
			volatile double partial = 0.0 + order_value(launch, p, i);
			x[i] = x[i] + partial;
		}
}

/* REDUCE(SUM) 15 launches in a row, through disjoint tiles, through halo tiles (elements in two
 * tiles), and onto the whole region from every point: the field holds, bit for bit, the launches
 * folded one after another, each one's points in color order. */
START_TEST(reduce_privilege_is_the_color_order_fold_under_every_policy)
{
	tsr_test_init_with(order_policies[_i], 2);
	tsr_task_t t = order_task();
	tsr_region_t r = tsr_test_region_f64("acc", tsr_box1(0, 7));
	tsr_partition_t tiles, ghost;
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 3), "tiles", &tiles));
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, 7), tsr_box1(0, 3),
					(const int64_t[3]){1, 0, 0}, "ghost", &ghost));
	tsr_box_t tile_boxes[4], ghost_boxes[4], whole[8];
	for (int c = 0; c < 4; c++) {
		tile_boxes[c] = tsr_box1(2 * c, 2 * c + 1);
		ghost_boxes[c] = tsr_box1(c == 0 ? 0 : 2 * c - 1, c == 3 ? 7 : 2 * c + 2);
	}
	for (int p = 0; p < 8; p++)
		whole[p] = tsr_box1(0, 7);
	double want[8], got[8], half = 0.5;
	for (int i = 0; i < 8; i++)
		want[i] = half;
	CK_TSR(tsr_fill(r, 0, &half, sizeof half));
	for (int launch = 0; launch < 15; launch++) {
		tsr_req_t q;
		if (launch % 3 == 0) {
			q = tsr_req_part(tiles, TSR_REDUCE(TSR_SUM), TSR_FIELDS(0));
			CK_TSR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, &launch, sizeof launch,
						TSR_REDOP_NONE, NULL));
			order_model(want, launch, 4, tile_boxes);
		} else if (launch % 3 == 1) {
			q = tsr_req_part(ghost, TSR_REDUCE(TSR_SUM), TSR_FIELDS(0));
			CK_TSR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, &launch, sizeof launch,
						TSR_REDOP_NONE, NULL));
			order_model(want, launch, 4, ghost_boxes);
		} else {
			q = tsr_req_region(r, TSR_REDUCE(TSR_SUM), TSR_FIELDS(0));
			CK_TSR(tsr_index_launch(t, tsr_box1(0, 7), 1, &q, &launch, sizeof launch,
						TSR_REDOP_NONE, NULL));
			order_model(want, launch, 8, whole);
		}
	}
	tsr_test_read1(r, 0, got, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_msg(memcmp(&got[i], &want[i], sizeof got[i]) == 0,
			      "%s: element %d is %.17g, the color-order fold is %.17g",
			      order_policies[_i], i, got[i], want[i]);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_finalize());
}
END_TEST

/* A single launch reduces into private storage at the identity, folded into the field after it. */
START_TEST(single_launch_reduce_folds_its_partial_into_the_field)
{
	tsr_test_init_with("lws", 2);
	tsr_region_t r = tsr_test_region_f64("acc", tsr_box1(0, 7));
	double big = 1e16, got[8];
	CK_TSR(tsr_fill(r, 0, &big, sizeof big));
	struct fold_args fa = {TSR_SUM, TSR_F64, 1.0, 0};
	tsr_req_t q = tsr_req_region(r, TSR_REDUCE(TSR_SUM), TSR_FIELDS(0));
	tsr_task_t t = fold_task();
	/* the task folds 1.0 once per element: 1e16 + (0 + 1) rounds back to 1e16, twice */
	CK_TSR(tsr_launch(t, 1, &q, &fa, sizeof fa, NULL));
	CK_TSR(tsr_launch(t, 1, &q, &fa, sizeof fa, NULL));
	tsr_test_read1(r, 0, got, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_msg(got[i] == 1e16, "element %d is %.17g, want 1e16", i, got[i]);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_finalize());
}
END_TEST

/* TSR_REDUX=unordered keeps StarPU's REDUX (arrival order): exact integer sums stay right. */
START_TEST(unordered_opt_out_still_reduces)
{
	setenv("TSR_REDUX", "unordered", 1);
	tsr_test_init_with("lws", 2);
	tsr_region_t r = tsr_test_region_f64("acc", tsr_box1(0, 11));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	tsr_task_t t = fold_task();
	for (int k = 0; k < 5; k++)
		index_fold(t, p, tsr_box1(0, 3), TSR_SUM, 1.0);
	tsr_task_t rs = tsr_test_task("read_sum", tsr_test_sum, TSR_F64);
	tsr_req_t q = tsr_req_part(p, TSR_READ, TSR_FIELDS(0));
	tsr_future_t f;
	CK_TSR(tsr_index_launch(rs, tsr_box1(0, 3), 1, &q, NULL, 0, TSR_SUM, &f));
	/* 5 launches of (1 + color) into 3 elements per tile: 5 * 3 * (1 + 2 + 3 + 4) */
	ck_assert_double_eq(tsr_test_take_f64(f), 150.0);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_finalize());
	unsetenv("TSR_REDUX");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reduce");
	TCase *tc = tsr_test_tcase("reduce", 1);
	tcase_add_test(tc, reduce_sum_through_disjoint_tiles);
	tcase_add_test(tc, reduce_sum_through_aliased_halo_tiles);
	tcase_add_test(tc, concurrent_reduce_launches_then_read_sees_total);
	tcase_add_test(tc, reduce_epochs_separated_by_read_write);
	tcase_add_test(tc, reduce_with_different_ops_in_sequence);
	tcase_add_test(tc, index_launch_reduce_on_region_requirement);
	tcase_add_test(tc, reduce_min_max_prod_f64);
	tcase_add_test(tc, reduce_min_max_prod_i32);
	tcase_add_test(tc, reduce_min_max_prod_i64);
	tcase_add_test(tc, user_redop_on_region_and_future);
	tcase_add_test(tc, user_redop_on_bytes);
	suite_add_tcase(s, tc);
	TCase *order = tsr_test_tcase("color_order", 0);
	int npol = (int)(sizeof order_policies / sizeof order_policies[0]);
	tcase_add_loop_test(order, future_sum_is_the_color_order_fold_under_every_policy, 0, npol);
	tcase_add_loop_test(order, reduce_privilege_is_the_color_order_fold_under_every_policy, 0,
			    npol);
	tcase_add_test(order, single_launch_reduce_folds_its_partial_into_the_field);
	tcase_add_test(order, unordered_opt_out_still_reduces);
	suite_add_tcase(s, order);
	return tsr_test_run(s);
}
