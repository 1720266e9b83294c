/* test_fields.c: fields that are not in the region, types that do not match, fields a task did
 * not request and privileges it did not ask for. Host calls fail at once; inside a task the
 * accessor call fails, the variant writes nothing, tsr_fence reports TSR_ETASK naming it all, and
 * what the task could have written is poisoned until the host replaces it. */
#include <stdatomic.h>
#include "tsr_test.h"

/* Region "line" [0..7] with f64 "x" = 3 and i32 "n" = 5. */
static tsr_region_t line(tsr_field_t *x, tsr_field_t *n)
{
	tsr_field_t f[2];
	tsr_region_t r =
		tsr_test_region("line", tsr_box1(0, 7), 2, (const tsr_type_t[]){TSR_F64, TSR_I32},
				(const char *const[]){"x", "n"}, f);
	double three = 3.0;
	int32_t five = 5;
	CK_TSR(tsr_fill(r, f[0], &three, sizeof three));
	CK_TSR(tsr_fill(r, f[1], &five, sizeof five));
	if (x)
		*x = f[0];
	if (n)
		*n = f[1];
	return r;
}

static void noop(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
}

static void ck_intact(tsr_region_t r)
{
	tsr_accessor_t a;
	double v[8];
	tsr_test_read1(r, 0, v, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_msg(v[i] == 3.0, "x[%d] changed to %g", i, v[i]);
	CK_TSR(tsr_map(r, 1, TSR_READ, &a));
	for (int i = 0; i < 8; i++)
		ck_assert_msg(TSR_AT1(&a, int32_t, i) == 5, "n[%d] changed to %d", i,
			      TSR_AT1(&a, int32_t, i));
	CK_TSR(tsr_unmap(r, 1));
}

START_TEST(requirement_field_not_in_region_refused)
{
	tsr_region_t r = line(NULL, NULL);
	tsr_task_t t = tsr_test_task("ghostly", noop, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_READ, TSR_FIELDS(2));
	CK_TSR_ERR(tsr_launch(t, 1, &q, NULL, 0, NULL), TSR_ENOFIELD, "ghostly", "line");
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 1), "halves");
	tsr_req_t qp = tsr_req_part(p, TSR_WRITE, TSR_FIELDS(0, 7));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 1), 1, &qp, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_ENOFIELD, "ghostly", "line");
	qp = tsr_req_part(p, TSR_WRITE, TSR_FIELDS(-1));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 1), 1, &qp, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_ENOFIELD, "ghostly", "line");
	ck_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(host_calls_with_field_not_in_region_refused)
{
	tsr_region_t r = line(NULL, NULL), o = tsr_test_region_f64("other", tsr_box1(0, 7));
	double v = 1.0;
	tsr_accessor_t a;
	CK_TSR_ERR(tsr_fill(r, 2, &v, sizeof v), TSR_ENOFIELD, "line");
	CK_TSR_ERR(tsr_map(r, 9, TSR_READ, &a), TSR_ENOFIELD, "line");
	CK_TSR_ERR(tsr_unmap(r, 9), TSR_ENOFIELD, "line");
	CK_TSR_ERR(tsr_copy(o, 1, r, 0), TSR_ENOFIELD, "other");
	CK_TSR_ERR(tsr_copy(o, 0, r, 3), TSR_ENOFIELD, "line");
	ck_intact(r);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_region_destroy(o));
}
END_TEST

START_TEST(host_calls_with_wrong_type_refused)
{
	tsr_field_t x, n;
	tsr_region_t r = line(&x, &n);
	int32_t i = 1;
	CK_TSR_ERR(tsr_copy(r, n, r, x), TSR_ETYPE, "line", "x", "n");
	CK_TSR_ERR(tsr_fill(r, x, &i, sizeof i), TSR_ETYPE, "line", "x");
	ck_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(duplicate_field_name_refused)
{
	tsr_fspace_t fs;
	tsr_field_t a, b;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "mass", TSR_F64, 0, &a));
	CK_TSR_ERR(tsr_fspace_add(fs, "mass", TSR_F32, 0, &b), TSR_EINVAL, "mass");
	CK_TSR_ERR(tsr_fspace_add(fs, "blob", TSR_BYTES, 0, &b), TSR_EINVAL, "blob");
	/* the field space is still usable and has one field */
	tsr_region_t r;
	CK_TSR(tsr_region_create("r", tsr_box1(0, 1), fs, &r));
	CK_TSR_ERR(tsr_fill(r, 1, &(double){0}, sizeof(double)), TSR_ENOFIELD, "r");
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_fspace_destroy(fs));
}
END_TEST

/* ---- inside a task: the accessor call's status is kept here for the host to check */
static atomic_int seen_rc;

/* bad_access: asks requirement 0 for field args[0] with type args[1] and privilege args[2];
 * on success it would overwrite everything with -1 (so a wrong success shows in the data). */
static void bad_access(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const int *w = args;
	tsr_accessor_t a;
	int rc = tsr_ctx_accessor(ctx, 0, w[0], (tsr_type_t)w[1], w[2], &a);
	atomic_store(&seen_rc, rc);
	if (rc)
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		memset((char *)a.ptr + (i - a.lo[0]) * a.elem_size, 0xff, a.elem_size);
}

/* Launch bad_access (named `name`) on `q` asking (field, type, want); expect `code` from the
 * accessor, then TSR_ETASK from tsr_fence with a message naming task, field and region. */
static void in_task(tsr_region_t r, const char *name, tsr_req_t q, int field, tsr_type_t type,
		    int want, int code, const char *field_name)
{
	tsr_task_t t;
	CK_TSR(tsr_task_register(&(tsr_task_desc_t){.name = name, .cpu = bad_access}, &t));
	atomic_store(&seen_rc, 1);
	const int w[3] = {field, (int)type, want};
	CK_TSR(tsr_launch(t, 1, &q, w, sizeof w, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, name, field_name, "line");
	ck_assert_msg(atomic_load(&seen_rc) == code, "task '%s': accessor returned %s, expected %s",
		      name, tsr_err_name(atomic_load(&seen_rc)), tsr_err_name(code));
	/* reported once: the next fence is clean */
	CK_TSR(tsr_fence());
	/* what the failed task could write is poisoned: reading it is refused, naming the task */
	tsr_accessor_t a;
	for (int k = 0; k < q.nfields && q.priv != TSR_READ; k++)
		CK_TSR_ERR(tsr_map(r, q.fields[k], TSR_READ, &a), TSR_ETASK, name, "line");
	/* a WRITE requirement discards the old contents by definition: nothing to keep intact */
	if (q.priv == TSR_WRITE)
		return;
	/* mapping for WRITE replaces the poisoned values: the host sees that the variant wrote
	 * nothing */
	for (int k = 0; k < q.nfields && q.priv != TSR_READ; k++) {
		CK_TSR(tsr_map(r, q.fields[k], TSR_WRITE, &a));
		CK_TSR(tsr_unmap(r, q.fields[k]));
	}
	ck_intact(r);
}

/* One wrong access inside a task: the launch's requirement (privilege req on field x or n),
 * what the variant asks (field, type, privilege), the accessor's code. The task's name (its
 * message names it, the field and the region) shows which case failed. */
struct access_case {
	const char *task;
	int req_on_n;
	tsr_privilege_t req;
	int on_n;
	tsr_type_t type;
	tsr_privilege_t want;
	int code;
};
enum { N_ACCESS_CASES = 8 };

static struct access_case access_case(int i)
{
	const struct access_case cases[] = {
		/* the type does not match */
		{"typo", 0, TSR_READ_WRITE, 0, TSR_F32, TSR_READ_WRITE, TSR_ETYPE},
		{"typo_n", 1, TSR_READ, 1, TSR_I64, TSR_READ, TSR_ETYPE},
		/* a field the launch did not request */
		{"greedy", 0, TSR_READ_WRITE, 1, TSR_I32, TSR_READ, TSR_ENOFIELD},
		/* a write on a read requirement; WRITE does not cover READ (Legion's write-discard)
		 */
		{"sneaky", 0, TSR_READ, 0, TSR_F64, TSR_WRITE, TSR_EPRIV},
		{"sneaky_rw", 0, TSR_READ, 0, TSR_F64, TSR_READ_WRITE, TSR_EPRIV},
		{"peek", 1, TSR_WRITE, 1, TSR_I32, TSR_READ, TSR_EPRIV},
		/* a reduce requirement read, or folded with another operator */
		{"reader", 0, TSR_REDUCE(TSR_SUM), 0, TSR_F64, TSR_READ, TSR_EPRIV},
		{"other_op", 0, TSR_REDUCE(TSR_SUM), 0, TSR_F64, TSR_REDUCE(TSR_MAX), TSR_EPRIV},
	};
	_Static_assert(sizeof cases / sizeof cases[0] == N_ACCESS_CASES, "one row per case");
	return cases[i];
}

START_TEST(wrong_access_in_task)
{
	struct access_case c = access_case(_i);
	tsr_field_t f[2];
	tsr_region_t r = line(&f[0], &f[1]);
	in_task(r, c.task, tsr_req_region(r, c.req, TSR_FIELDS(f[c.req_on_n])), f[c.on_n], c.type,
		c.want, c.code, c.on_n ? "n" : "x");
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A point task of an index launch: the message names the point too. */
START_TEST(accessor_error_in_index_launch_names_point)
{
	tsr_field_t x, n;
	tsr_region_t r = line(&x, &n);
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 1), "halves");
	tsr_task_t t = tsr_test_task("pointy", bad_access, TSR_NONE);
	const int w[3] = {x, TSR_F64, TSR_WRITE};
	tsr_req_t q = tsr_req_part(p, TSR_READ, TSR_FIELDS(x));
	CK_TSR(tsr_index_launch(t, tsr_box1(1, 1), 1, &q, w, sizeof w, TSR_REDOP_NONE, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "pointy", "x", "line", "1");
	ck_assert_int_eq(atomic_load(&seen_rc), TSR_EPRIV);
	ck_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A reduction operator that does not fit the field's type is refused at launch. */
START_TEST(reduce_on_field_of_wrong_type_refused)
{
	tsr_fspace_t fs;
	tsr_field_t b;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "blob", TSR_BYTES, 12, &b));
	tsr_region_t r;
	CK_TSR(tsr_region_create("line", tsr_box1(0, 3), fs, &r));
	CK_TSR(tsr_fspace_destroy(fs));
	tsr_task_t t = tsr_test_task("blobsum", noop, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_REDUCE(TSR_SUM), TSR_FIELDS(b));
	CK_TSR_ERR(tsr_launch(t, 1, &q, NULL, 0, NULL), TSR_ETYPE, "blobsum", "blob", "line");
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A future waited on with the wrong size: refused, names the task that produced it. */
static void answer(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t v = 42;
	tsr_ctx_return(ctx, &v);
}

START_TEST(future_wait_with_wrong_size_refused)
{
	tsr_task_t t = tsr_test_task("answer", answer, TSR_I64);
	tsr_future_t f;
	CK_TSR(tsr_launch(t, 0, NULL, NULL, 0, &f));
	int32_t small = 0;
	CK_TSR_ERR(tsr_future_wait(f, &small, sizeof small), TSR_EINVAL, "answer");
	int64_t v = 0;
	CK_TSR(tsr_future_wait(f, &v, sizeof v));
	ck_assert_int_eq(v, 42);
	CK_TSR(tsr_future_destroy(f));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_fields");
	TCase *tc = tsr_test_tcase("fields", 1);
	tcase_add_test(tc, requirement_field_not_in_region_refused);
	tcase_add_test(tc, host_calls_with_field_not_in_region_refused);
	tcase_add_test(tc, host_calls_with_wrong_type_refused);
	tcase_add_test(tc, duplicate_field_name_refused);
	tcase_add_loop_test(tc, wrong_access_in_task, 0, N_ACCESS_CASES);
	tcase_add_test(tc, accessor_error_in_index_launch_names_point);
	tcase_add_test(tc, reduce_on_field_of_wrong_type_refused);
	tcase_add_test(tc, future_wait_with_wrong_size_refused);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
