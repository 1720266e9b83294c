/* test_future.c: futures hold a single task's return value or the reduction (sum, min, max,
 * prod) of an index launch's values; later tasks take them as inputs without the host waiting. */
#include <stdatomic.h>
#include <unistd.h>
#include "tsr_test.h"

/* ret_arg: returns its argument (whatever its size) as the task's value. */
static void ret_arg(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_ctx_return(ctx, args);
}

START_TEST(single_task_future_of_each_type)
{
	tsr_future_t f;
	double d = 6.5, dv;
	CK_TSR(tsr_launch(tsr_test_task("ret_f64", ret_arg, TSR_F64), 0, NULL, &d, sizeof d, &f));
	CK_TSR(tsr_future_wait(f, &dv, sizeof dv));
	ck_assert_double_eq(dv, 6.5);
	CK_TSR(tsr_future_destroy(f));

	float s = -2.25f, sv;
	CK_TSR(tsr_launch(tsr_test_task("ret_f32", ret_arg, TSR_F32), 0, NULL, &s, sizeof s, &f));
	CK_TSR(tsr_future_wait(f, &sv, sizeof sv));
	ck_assert_float_eq(sv, -2.25f);
	CK_TSR(tsr_future_destroy(f));

	int32_t i = -123456, iv;
	CK_TSR(tsr_launch(tsr_test_task("ret_i32", ret_arg, TSR_I32), 0, NULL, &i, sizeof i, &f));
	CK_TSR(tsr_future_wait(f, &iv, sizeof iv));
	ck_assert_int_eq(iv, -123456);
	CK_TSR(tsr_future_destroy(f));

	int64_t l = INT64_C(1) << 50, lv;
	CK_TSR(tsr_launch(tsr_test_task("ret_i64", ret_arg, TSR_I64), 0, NULL, &l, sizeof l, &f));
	CK_TSR(tsr_future_wait(f, &lv, sizeof lv));
	ck_assert_int_eq(lv, INT64_C(1) << 50);
	/* waiting again gives the same value */
	lv = 0;
	CK_TSR(tsr_future_wait(f, &lv, sizeof lv));
	ck_assert_int_eq(lv, INT64_C(1) << 50);
	CK_TSR(tsr_future_destroy(f));

	struct {
		double a;
		int32_t b[3];
	} st = {1.5, {7, 8, 9}}, stv;
	CK_TSR(tsr_launch(tsr_test_task_bytes("ret_bytes", ret_arg, TSR_BYTES, sizeof st), 0, NULL,
			  &st, sizeof st, &f));
	memset(&stv, 0, sizeof stv);
	CK_TSR(tsr_future_wait(f, &stv, sizeof stv));
	ck_assert_double_eq(stv.a, 1.5);
	ck_assert_int_eq(stv.b[2], 9);
	CK_TSR(tsr_future_destroy(f));
}
END_TEST

/* point_value: the point p returns 3 * (p - 2) + 1 (-5, -2, 1, 4, 7 over 0..4), in the task's
 * type. */
static void point_value(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t p[3];
	tsr_ctx_point(ctx, p);
	int64_t v = 3 * (p[0] - 2) + 1;
	switch (*(const tsr_type_t *)args) {
	case TSR_F64: {
		double d = (double)v;
		tsr_ctx_return(ctx, &d);
		break;
	}
	case TSR_F32: {
		float d = (float)v;
		tsr_ctx_return(ctx, &d);
		break;
	}
	case TSR_I32: {
		int32_t d = (int32_t)v;
		tsr_ctx_return(ctx, &d);
		break;
	}
	default:
		tsr_ctx_return(ctx, &v);
	}
}

static double reduce_points(tsr_type_t type, tsr_redop_t op)
{
	tsr_task_t t = tsr_test_task("point_value", point_value, type);
	tsr_future_t f;
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 4), 0, NULL, &type, sizeof type, op, &f));
	double out = 0;
	switch (type) {
	case TSR_F64:
		CK_TSR(tsr_future_wait(f, &out, sizeof out));
		break;
	case TSR_F32: {
		float v;
		CK_TSR(tsr_future_wait(f, &v, sizeof v));
		out = v;
		break;
	}
	case TSR_I32: {
		int32_t v;
		CK_TSR(tsr_future_wait(f, &v, sizeof v));
		out = v;
		break;
	}
	default: {
		int64_t v;
		CK_TSR(tsr_future_wait(f, &v, sizeof v));
		out = (double)v;
	}
	}
	CK_TSR(tsr_future_destroy(f));
	return out;
}

static void check_reductions(tsr_type_t type)
{
	ck_assert_double_eq(reduce_points(type, TSR_SUM), 5.0);
	ck_assert_double_eq(reduce_points(type, TSR_MIN), -5.0);
	ck_assert_double_eq(reduce_points(type, TSR_MAX), 7.0);
	ck_assert_double_eq(reduce_points(type, TSR_PROD), 280.0);
}

START_TEST(index_launch_reductions_f64)
{
	check_reductions(TSR_F64);
}
END_TEST
START_TEST(index_launch_reductions_f32)
{
	check_reductions(TSR_F32);
}
END_TEST
START_TEST(index_launch_reductions_i32)
{
	check_reductions(TSR_I32);
}
END_TEST
START_TEST(index_launch_reductions_i64)
{
	check_reductions(TSR_I64);
}
END_TEST

/* point_2d: (i, j) returns 10 * i + j. */
static void point_2d(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t p[3];
	tsr_ctx_point(ctx, p);
	int64_t v = 10 * p[0] + p[1];
	tsr_ctx_return(ctx, &v);
}

START_TEST(index_launch_2d_sum_and_max)
{
	tsr_task_t t = tsr_test_task("point_2d", point_2d, TSR_I64);
	tsr_future_t fs, fm;
	CK_TSR(tsr_index_launch(t, tsr_box2(1, 3, 0, 1), 0, NULL, NULL, 0, TSR_SUM, &fs));
	CK_TSR(tsr_index_launch(t, tsr_box2(1, 3, 0, 1), 0, NULL, NULL, 0, TSR_MAX, &fm));
	int64_t s, m;
	CK_TSR(tsr_future_wait(fs, &s, sizeof s));
	CK_TSR(tsr_future_wait(fm, &m, sizeof m));
	ck_assert_int_eq(s, 2 * (10 + 20 + 30) + 3);
	ck_assert_int_eq(m, 31);
	CK_TSR(tsr_future_destroy(fs));
	CK_TSR(tsr_future_destroy(fm));
}
END_TEST

/* slow_answer waits until the host has submitted every launch (`submitted`), then returns 21 and
 * raises `done`: if a launch blocked on it, the two would wait for each other, and it gives up at
 * SUBMIT_CEILING_S (times CK_TIMEOUT_MULTIPLIER, under the test's timeout) and says so in
 * `gave_up`. A condition, not a time: the host may take long to submit on a busy machine. */
enum { SUBMIT_CEILING_S = 10 };
static atomic_int done;
static int submitted, gave_up;
static void slow_answer(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	if (!tsr_test_wait_flag(&submitted, SUBMIT_CEILING_S))
		__atomic_store_n(&gave_up, 1, __ATOMIC_RELEASE);
	int64_t v = 21;
	atomic_store(&done, 1);
	tsr_ctx_return(ctx, &v);
}

/* twice: returns 2 * (future 0) + its argument. */
static void twice(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const int64_t *in = tsr_ctx_future(ctx, 0);
	if (!in)
		return;
	if (!atomic_load(&done))
		tsr_ctx_error(ctx, "ran before the task producing its future");
	int64_t v = 2 * *in + (args ? *(const int64_t *)args : 0);
	tsr_ctx_return(ctx, &v);
}

/* write_future: every element of region requirement 1 = future 0 (an i64). */
static void write_future(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const int64_t *in = tsr_ctx_future(ctx, 0);
	tsr_accessor_t x;
	if (!in || tsr_ctx_accessor(ctx, 1, 0, TSR_F64, TSR_WRITE, &x))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) = (double)*in;
}

START_TEST(future_feeds_later_tasks_without_host_wait)
{
	atomic_store(&done, 0);
	__atomic_store_n(&submitted, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&gave_up, 0, __ATOMIC_RELEASE);
	tsr_task_t ts = tsr_test_task("slow_answer", slow_answer, TSR_I64),
		   tt = tsr_test_task("twice", twice, TSR_I64);
	tsr_task_t tw = tsr_test_task("write_future", write_future, TSR_NONE);
	tsr_region_t r = tsr_test_region_f64("out", tsr_box1(0, 5));
	tsr_future_t a, b, c;
	CK_TSR(tsr_launch(ts, 0, NULL, NULL, 0, &a));
	tsr_req_t qa = tsr_req_future(a);
	CK_TSR(tsr_launch(tt, 1, &qa, NULL, 0, &b));
	tsr_req_t qb = tsr_req_future(b);
	int64_t plus = 3;
	CK_TSR(tsr_launch(tt, 1, &qb, &plus, sizeof plus, &c));
	tsr_req_t qc[2] = {tsr_req_future(c), tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0))};
	CK_TSR(tsr_launch(tw, 2, qc, NULL, 0, NULL));
	/* the host did not block on the producer: it got here while the producer still waited */
	__atomic_store_n(&submitted, 1, __ATOMIC_RELEASE);
	ck_assert_msg(!__atomic_load_n(&gave_up, __ATOMIC_ACQUIRE),
		      "launches blocked on the producer until it gave up waiting for them");
	int64_t v;
	CK_TSR(tsr_future_wait(c, &v, sizeof v));
	ck_assert_int_eq(v, 2 * 2 * 21 + 3);
	tsr_test_ck_all1(r, 0, 6, 87.0);
	CK_TSR(tsr_fence());
	CK_TSR(tsr_future_destroy(a));
	CK_TSR(tsr_future_destroy(b));
	CK_TSR(tsr_future_destroy(c));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Destroying a future right after passing it on does not disturb the task reading it. */
START_TEST(future_destroyed_while_task_reads_it)
{
	atomic_store(&done, 0);
	tsr_task_t ts = tsr_test_task("slow_answer", slow_answer, TSR_I64),
		   tt = tsr_test_task("twice", twice, TSR_I64);
	tsr_future_t a, b;
	CK_TSR(tsr_launch(ts, 0, NULL, NULL, 0, &a));
	tsr_req_t qa = tsr_req_future(a);
	CK_TSR(tsr_launch(tt, 1, &qa, NULL, 0, &b));
	CK_TSR(tsr_future_destroy(a));
	int64_t v;
	CK_TSR(tsr_future_wait(b, &v, sizeof v));
	ck_assert_int_eq(v, 42);
	CK_TSR(tsr_future_destroy(b));
	CK_TSR(tsr_fence());
}
END_TEST

/* A ready future made on the host feeds every point of an index launch, whose sum comes back. */
static void point_times_future(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t p[3];
	tsr_ctx_point(ctx, p);
	const double *k = tsr_ctx_future(ctx, 0);
	if (!k)
		return;
	double v = *k * (double)p[0];
	tsr_ctx_return(ctx, &v);
}

START_TEST(host_future_feeds_index_launch)
{
	tsr_future_t k, s;
	double kv = 0.5;
	CK_TSR(tsr_future_create(TSR_F64, 0, &kv, &k));
	double back;
	CK_TSR(tsr_future_wait(k, &back, sizeof back));
	ck_assert_double_eq(back, 0.5);
	tsr_task_t t = tsr_test_task("point_times_future", point_times_future, TSR_F64);
	tsr_req_t q = tsr_req_future(k);
	CK_TSR(tsr_index_launch(t, tsr_box1(1, 10), 1, &q, NULL, 0, TSR_SUM, &s));
	double v;
	CK_TSR(tsr_future_wait(s, &v, sizeof v));
	ck_assert_double_eq(v, 27.5);
	CK_TSR(tsr_future_destroy(k));
	CK_TSR(tsr_future_destroy(s));
}
END_TEST

/* Reduction future of one index launch feeds the next: a running total without host waits. */
START_TEST(reduction_future_chains_into_next_launch)
{
	tsr_task_t t = tsr_test_task("point_times_future", point_times_future, TSR_F64);
	tsr_future_t f;
	double one = 1.0;
	CK_TSR(tsr_future_create(TSR_F64, 0, &one, &f));
	/* f <- sum over p in 1..3 of f * p = 6 f, four times: 6^4 */
	for (int i = 0; i < 4; i++) {
		tsr_req_t q = tsr_req_future(f);
		tsr_future_t g;
		CK_TSR(tsr_index_launch(t, tsr_box1(1, 3), 1, &q, NULL, 0, TSR_SUM, &g));
		CK_TSR(tsr_future_destroy(f));
		f = g;
	}
	double v;
	CK_TSR(tsr_future_wait(f, &v, sizeof v));
	ck_assert_double_eq(v, 1296.0);
	CK_TSR(tsr_future_destroy(f));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("future");
	TCase *tc = tsr_test_tcase("future", 1);
	tcase_add_test(tc, single_task_future_of_each_type);
	tcase_add_test(tc, index_launch_reductions_f64);
	tcase_add_test(tc, index_launch_reductions_f32);
	tcase_add_test(tc, index_launch_reductions_i32);
	tcase_add_test(tc, index_launch_reductions_i64);
	tcase_add_test(tc, index_launch_2d_sum_and_max);
	tcase_add_test(tc, future_feeds_later_tasks_without_host_wait);
	tcase_add_test(tc, future_destroyed_while_task_reads_it);
	tcase_add_test(tc, host_future_feeds_index_launch);
	tcase_add_test(tc, reduction_future_chains_into_next_launch);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
