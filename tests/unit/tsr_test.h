/* tsr_test.h: what every Check test of Tessera shares (unit and error-path tests).
 * Each test runs in its own forked process, so the runtime is started by a checked fixture. */
#ifndef TSR_TEST_H
#define TSR_TEST_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tessera.h>

/* A call that must succeed; on failure show the code and the runtime's message. */
#define CK_TSR(call)                                                                         \
	do {                                                                                 \
		int rc_ = (call);                                                            \
		ck_assert_msg(rc_ == TSR_OK, "%s returned %s: %s", #call, tsr_err_name(rc_), \
			      tsr_last_error());                                             \
	} while (0)

/* A call that must fail with `code`, leaving a message that names every string given
 * (the object names: region, field, partition, color, task). */
#define CK_TSR_ERR(call, code, ...)                                                           \
	do {                                                                                  \
		int rc_ = (call);                                                             \
		ck_assert_msg(rc_ == (code), "%s returned %s (%s), expected %s", #call,       \
			      tsr_err_name(rc_), tsr_last_error(), tsr_err_name(code));       \
		tsr_test_names(tsr_last_error(), #call, (const char *[]){__VA_ARGS__, NULL}); \
	} while (0)

static inline void tsr_test_names(const char *msg, const char *call, const char *const *names)
{
	ck_assert_msg(msg && *msg, "%s: tsr_last_error() is empty", call);
	for (int i = 0; names[i]; i++)
		ck_assert_msg(strstr(msg, names[i]) != NULL,
			      "%s: message \"%s\" does not name '%s'", call, msg, names[i]);
}

/* The defaults, quiet: tsr_test_setup's configuration, and a start point for a test that starts
 * the runtime itself. */
static inline tsr_config_t tsr_test_config(void)
{
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.quiet = 1;
	return cfg;
}

/* Fixture: the runtime with the defaults (TSR_* and STARPU_* environment still apply). */
static inline void tsr_test_setup(void)
{
	tsr_config_t cfg = tsr_test_config();
	int rc = tsr_init(&cfg);
	ck_assert_msg(rc == TSR_OK, "tsr_init: %s: %s", tsr_err_name(rc), tsr_last_error());
}

/* Every test destroys what it created: finalize must find nothing alive and no task error. */
static inline void tsr_test_teardown(void)
{
	int rc = tsr_finalize();
	ck_assert_msg(rc == TSR_OK, "tsr_finalize: %s: %s", tsr_err_name(rc), tsr_last_error());
}

static inline TCase *tsr_test_tcase(const char *name, int with_runtime)
{
	TCase *tc = tcase_create(name);
	if (with_runtime)
		tcase_add_checked_fixture(tc, tsr_test_setup, tsr_test_teardown);
	tcase_set_timeout(tc, 30);
	return tc;
}

static inline int tsr_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

static inline double tsr_test_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The one knob of every time limit in the tests: CK_TIMEOUT_MULTIPLIER, which Check applies to
 * its per-test timeouts (make check sets it: Makefile.am); 1 where it is unset or not a number. */
static inline double tsr_test_time_scale(void)
{
	const char *e = getenv("CK_TIMEOUT_MULTIPLIER");
	char *end;
	double m = e ? strtod(e, &end) : 1;
	return e && end != e && *end == '\0' && m > 0 ? m : 1;
}

/* Wait until *flag is nonzero (set by another thread with release semantics), polling every
 * 100 us (a sleep, not a spin: under valgrind one thread runs at a time). The ceiling, `seconds`
 * times tsr_test_time_scale(), only guards against a hang: returns 1 once the flag is set, 0
 * if the ceiling passed first. */
static inline int tsr_test_wait_flag(const int *flag, double seconds)
{
	double until = tsr_test_now() + seconds * tsr_test_time_scale();
	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (tsr_test_now() > until)
			return 0;
		struct timespec ts = {0, 100000};
		nanosleep(&ts, NULL);
	}
	return 1;
}

/* A task `name` whose CPU variant is fn, returning a value of type ret (TSR_NONE: none) of
 * ret_bytes bytes (TSR_BYTES only). */
static inline tsr_task_t tsr_test_task_bytes(const char *name, tsr_variant_fn fn, tsr_type_t ret,
					     size_t ret_bytes)
{
	tsr_task_t t;
	tsr_task_desc_t d = {.name = name, .cpu = fn, .ret_type = ret, .ret_bytes = ret_bytes};
	CK_TSR(tsr_task_register(&d, &t));
	return t;
}

static inline tsr_task_t tsr_test_task(const char *name, tsr_variant_fn fn, tsr_type_t ret)
{
	return tsr_test_task_bytes(name, fn, ret, 0);
}

/* A field space with one field of each given type, named "f0", "f1", ... unless names given. */
static inline tsr_fspace_t tsr_test_fspace(int n, const tsr_type_t *types, const char *const *names,
					   tsr_field_t *fids)
{
	tsr_fspace_t fs;
	CK_TSR(tsr_fspace_create(&fs));
	for (int i = 0; i < n; i++) {
		char nm[16];
		snprintf(nm, sizeof nm, "f%d", i);
		CK_TSR(tsr_fspace_add(fs, names ? names[i] : nm, types[i],
				      types[i] == TSR_BYTES ? 16 : 0, &fids[i]));
	}
	return fs;
}

/* A region `name` over `bounds` with the fields tsr_test_fspace makes of types and names; their
 * ids in fids. The field space is destroyed: the region keeps its own copy. */
static inline tsr_region_t tsr_test_region(const char *name, tsr_box_t bounds, int n,
					   const tsr_type_t *types, const char *const *names,
					   tsr_field_t *fids)
{
	tsr_fspace_t fs = tsr_test_fspace(n, types, names, fids);
	tsr_region_t r;
	CK_TSR(tsr_region_create(name, bounds, fs, &r));
	CK_TSR(tsr_fspace_destroy(fs));
	return r;
}

/* A region `name` over `bounds` with one f64 field "x" (fid 0). */
static inline tsr_region_t tsr_test_region_f64(const char *name, tsr_box_t bounds)
{
	tsr_field_t f;
	return tsr_test_region(name, bounds, 1, (const tsr_type_t[]){TSR_F64},
			       (const char *const[]){"x"}, &f);
}

/* Region r cut into tiles over the color space `colors` (tsr_partition_tiles), named `name`. */
static inline tsr_partition_t tsr_test_tiles(tsr_region_t r, tsr_box_t colors, const char *name)
{
	tsr_partition_t p;
	CK_TSR(tsr_partition_tiles(r, colors, name, &p));
	return p;
}

/* Host view of a 1-D f64 field: copy it out through tsr_map (waits for the writers). */
static inline void tsr_test_read1(tsr_region_t r, tsr_field_t f, double *out, int64_t n)
{
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, f, TSR_READ, &a));
	ck_assert_int_eq(a.dim, 1);
	ck_assert_int_eq(a.hi[0] - a.lo[0] + 1, n);
	for (int64_t i = 0; i < n; i++)
		out[i] = TSR_AT1(&a, double, a.lo[0] + i);
	CK_TSR(tsr_unmap(r, f));
}

/* Set a 1-D f64 field from the host. */
static inline void tsr_test_write1(tsr_region_t r, tsr_field_t f, const double *in, int64_t n)
{
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, f, TSR_WRITE, &a));
	ck_assert_int_eq(a.hi[0] - a.lo[0] + 1, n);
	for (int64_t i = 0; i < n; i++)
		TSR_AT1(&a, double, a.lo[0] + i) = in[i];
	CK_TSR(tsr_unmap(r, f));
}

/* The witness of the error tests: a 1-D f64 region `name` over [0..n-1] filled with 3.0. */
enum { TSR_TEST_WITNESS_MAX = 64 };
static inline tsr_region_t tsr_test_witness(const char *name, int n)
{
	ck_assert_int_le(n, TSR_TEST_WITNESS_MAX);
	tsr_region_t r = tsr_test_region_f64(name, tsr_box1(0, n - 1));
	double three = 3.0;
	CK_TSR(tsr_fill(r, 0, &three, sizeof three));
	return r;
}

/* The witness of n elements still holds 3.0 everywhere: a refused call changed nothing. */
static inline void tsr_test_ck_witness(tsr_region_t r, int n)
{
	double v[TSR_TEST_WITNESS_MAX];
	tsr_test_read1(r, 0, v, n);
	for (int i = 0; i < n; i++)
		ck_assert_msg(v[i] == 3.0, "element %d changed to %g after a refused call", i,
			      v[i]);
}

/* The usual witness: "line" over [0..7]. */
static inline tsr_region_t tsr_test_line(void)
{
	return tsr_test_witness("line", 8);
}

static inline void tsr_test_ck_line_intact(tsr_region_t r)
{
	tsr_test_ck_witness(r, 8);
}

/* ---- helpers shared by the error tests */

/* A refused call: its status rc must be `code` and tsr_last_error() must name every string of the
 * NULL-terminated `names`; `what` (the case of a table, or the call) heads any failure. */
static inline void tsr_test_ck_refused(const char *what, int rc, int code, const char *const *names)
{
	ck_assert_msg(rc == code, "%s: returned %s (%s), expected %s", what, tsr_err_name(rc),
		      tsr_last_error(), tsr_err_name(code));
	tsr_test_names(tsr_last_error(), what, names);
}

/* After a fence (every task launched before ended, none failed) the witness of n elements still
 * holds 3.0 everywhere. */
static inline void tsr_test_fence_ck_witness(tsr_region_t r, int n)
{
	CK_TSR(tsr_fence());
	tsr_test_ck_witness(r, n);
}

/* The subregion of p of the 1-D color c. */
static inline tsr_region_t tsr_test_subregion(tsr_partition_t p, int64_t c)
{
	tsr_region_t s;
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){c, 0, 0}, &s));
	return s;
}

/* Task t over every color of p's color space [0..ncolors-1], on field 0 with privilege priv. */
static inline void tsr_test_run_part(tsr_task_t t, tsr_partition_t p, int64_t ncolors,
				     tsr_privilege_t priv)
{
	CK_TSR(tsr_run(t, &(tsr_launch_t){.domain = tsr_box1(0, ncolors - 1),
					  .reqs = TSR_REQS(tsr_req_part(p, priv, TSR_FIELDS(0)))}));
}

/* Variants over requirement 0's f64 field 0, 1-D: set every element to -1 (what a refused
 * launch must never get to do), or add 1 to every element. */
static inline void tsr_test_overwrite(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_WRITE, &a))
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		TSR_AT1(&a, double, i) = -1.0;
}

static inline void tsr_test_add_one(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &a))
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		TSR_AT1(&a, double, i) += 1.0;
}

/* ---- helpers shared by unit and observe tests */

/* tsr_init, quiet, with the scheduling policy `sched` and ncpu CPU workers. */
static inline void tsr_test_init_with(const char *sched, int ncpu)
{
	tsr_config_t cfg = tsr_test_config();
	cfg.sched = sched;
	cfg.ncpu = ncpu;
	CK_TSR(tsr_init(&cfg));
}

/* In a variant: *sum := the sum of the 1-D f64 field f of requirement req (READ). Returns the
 * accessor's code; where it is not TSR_OK the task has failed already and *sum is unset. */
static inline int tsr_test_sum1(tsr_ctx_t *ctx, int req, tsr_field_t f, double *sum)
{
	tsr_accessor_t a;
	int rc = tsr_ctx_accessor(ctx, req, f, TSR_F64, TSR_READ, &a);
	if (rc != TSR_OK)
		return rc;
	*sum = 0;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		*sum += TSR_AT1(&a, double, i);
	return TSR_OK;
}

/* Variant: returns the sum of requirement 0's f64 field 0 (1-D, READ) as an f64. */
static inline void tsr_test_sum(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	double s;
	if (tsr_test_sum1(ctx, 0, 0, &s) == TSR_OK)
		tsr_ctx_return(ctx, &s);
}

/* Variant: every element of requirement 1's f64 field 1 (WRITE) := the sum of requirement 0's
 * f64 field 0 (READ), both 1-D. */
static inline void tsr_test_sum_into(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	double s;
	tsr_accessor_t out;
	if (tsr_test_sum1(ctx, 0, 0, &s) != TSR_OK ||
	    tsr_ctx_accessor(ctx, 1, 1, TSR_F64, TSR_WRITE, &out) != TSR_OK)
		return;
	for (int64_t i = out.lo[0]; i <= out.hi[0]; i++)
		TSR_AT1(&out, double, i) = s;
}

/* The f64 a future holds, once it is ready; the future is destroyed. */
static inline double tsr_test_take_f64(tsr_future_t f)
{
	double v;
	CK_TSR(tsr_future_wait(f, &v, sizeof v));
	CK_TSR(tsr_future_destroy(f));
	return v;
}

/* Requirement 0's 1-D f64 field 0, x[i] := ab[0] * y + ab[1], where y is x[i] (`keep`,
 * READ_WRITE) or i (WRITE). */
static inline void tsr_test_affine1(tsr_ctx_t *ctx, const double *ab, int keep)
{
	tsr_accessor_t x;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, keep ? TSR_READ_WRITE : TSR_WRITE, &x))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++) {
		double y = keep ? TSR_AT1(&x, double, i) : (double)i;
		TSR_AT1(&x, double, i) = ab[0] * y + ab[1];
	}
}

/* Variants, args double[2] {a, b}: x[i] := a * i + b (iota), x[i] := a * x[i] + b (affine). */
static inline void tsr_test_iota(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_test_affine1(ctx, args, 0);
}

static inline void tsr_test_affine(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_test_affine1(ctx, args, 1);
}

/* Every one of the n elements of r's 1-D f64 field f is `want`. */
enum { TSR_TEST_ALL1_MAX = 64 };
static inline void tsr_test_ck_all1(tsr_region_t r, tsr_field_t f, int n, double want)
{
	double v[TSR_TEST_ALL1_MAX];
	ck_assert_int_le(n, TSR_TEST_ALL1_MAX);
	tsr_test_read1(r, f, v, n);
	for (int i = 0; i < n; i++)
		ck_assert_msg(v[i] == want, "element %d is %g, want %g", i, v[i], want);
}

/* The n elements of r's 1-D f64 field 0 are want[0..n-1]; a failure names TSR_HOME=home and
 * what r is. */
enum { TSR_TEST_HOME_MAX = 64 };
static inline void tsr_test_ck_home_values(tsr_region_t r, int n, const double *want,
					   const char *home, const char *what)
{
	double v[TSR_TEST_HOME_MAX];
	tsr_test_read1(r, 0, v, n);
	for (int i = 0; i < n; i++)
		ck_assert_msg(v[i] == want[i], "TSR_HOME=%s: %s[%d] = %g, expected %g", home, what,
			      i, v[i], want[i]);
}

/* Regions a and b of n f64 elements made under TSR_HOME=home: a fresh region is zero, and takes a
 * fill, a copy and a host write (through tsr_map, which must give a pointer), wherever it lives. */
static inline void tsr_test_home_round_trip(const char *home, int n)
{
	ck_assert_int_le(n, TSR_TEST_HOME_MAX);
	setenv("TSR_HOME", home, 1);
	tsr_region_t a = tsr_test_region_f64("a", tsr_box1(0, n - 1));
	tsr_region_t b = tsr_test_region_f64("b", tsr_box1(0, n - 1));
	unsetenv("TSR_HOME");
	double want[TSR_TEST_HOME_MAX] = {0};
	tsr_test_ck_home_values(a, n, want, home, "new region a");
	double seven = 7.25;
	CK_TSR(tsr_fill(a, 0, &seven, sizeof seven));
	CK_TSR(tsr_copy(a, 0, b, 0));
	for (int i = 0; i < n; i++)
		want[i] = seven;
	tsr_test_ck_home_values(b, n, want, home, "b after fill and copy");
	tsr_accessor_t x;
	CK_TSR(tsr_map(a, 0, TSR_WRITE, &x));
	ck_assert_msg(x.ptr != NULL, "TSR_HOME=%s: tsr_map gave a NULL pointer", home);
	for (int i = 0; i < n; i++) {
		want[i] = -(double)i;
		TSR_AT1(&x, double, i) = want[i];
	}
	CK_TSR(tsr_unmap(a, 0));
	CK_TSR(tsr_copy(a, 0, b, 0));
	tsr_test_ck_home_values(b, n, want, home, "b after host write and copy");
	CK_TSR(tsr_region_destroy(a));
	CK_TSR(tsr_region_destroy(b));
}

#endif
