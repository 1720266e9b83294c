/* test_threads.c: Tessera takes calls from the thread that called tsr_init only. Calls from a task
 * variant (which would block a worker inside StarPU) and from a second host thread return
 * TSR_ESTATE naming the call (and the task); two concurrent tsr_init calls do not both succeed;
 * finalize leaves no thread behind. */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include "tsr_test.h"

/* ------------------------------------------------------------ inside a task */
/* What the variant `nested` tried: each call's code and message, read by the host after a fence. */
enum {
	C_FENCE,
	C_WAIT,
	C_MAP,
	C_UNMAP,
	C_FINALIZE,
	C_INIT,
	C_LAUNCH,
	C_INDEX_LAUNCH,
	C_FILL,
	C_COPY,
	C_CREATE,
	C_DESTROY,
	C_FUTURE_CREATE,
	C_FUTURE_DESTROY,
	C_PAUSE,
	C_REGISTER,
	NCALLS
};
static const char *call_name[NCALLS] = {"tsr_fence",         "tsr_future_wait",
					"tsr_map",           "tsr_unmap",
					"tsr_finalize",      "tsr_init",
					"tsr_launch",        "tsr_index_launch",
					"tsr_fill",          "tsr_copy",
					"tsr_region_create", "tsr_region_destroy",
					"tsr_future_create", "tsr_future_destroy",
					"tsr_pause",         "tsr_task_register"};
static int call_rc[NCALLS];
static char call_msg[NCALLS][512];

/* Handles the variant is given to misuse. */
struct victims {
	tsr_region_t r;
	tsr_partition_t p;
	tsr_future_t f;
	tsr_task_t t;
};

static void record(int k, int rc)
{
	call_rc[k] = rc;
	snprintf(call_msg[k], sizeof call_msg[k], "%s", tsr_last_error());
}

static void nested(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const struct victims *v = args;
	tsr_accessor_t a;
	double x = 1.0;
	tsr_fspace_t fs = {0};
	tsr_region_t r2;
	tsr_future_t f2;
	tsr_task_t t2;
	tsr_req_t q = tsr_req_part(v->p, TSR_READ, TSR_FIELDS(0));
	record(C_FENCE, tsr_fence());
	record(C_WAIT, tsr_future_wait(v->f, &x, sizeof x));
	record(C_MAP, tsr_map(v->r, 0, TSR_READ, &a));
	record(C_UNMAP, tsr_unmap(v->r, 0));
	record(C_FINALIZE, tsr_finalize());
	record(C_INIT, tsr_init(NULL));
	record(C_LAUNCH, tsr_launch(v->t, 0, NULL, NULL, 0, NULL));
	record(C_INDEX_LAUNCH,
	       tsr_index_launch(v->t, tsr_box1(0, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	record(C_FILL, tsr_fill(v->r, 0, &x, sizeof x));
	record(C_COPY, tsr_copy(v->r, 0, v->r, 0));
	record(C_CREATE, tsr_region_create("inner", tsr_box1(0, 1), fs, &r2));
	record(C_DESTROY, tsr_region_destroy(v->r));
	record(C_FUTURE_CREATE, tsr_future_create(TSR_F64, 0, &x, &f2));
	record(C_FUTURE_DESTROY, tsr_future_destroy(v->f));
	record(C_PAUSE, tsr_pause());
	record(C_REGISTER,
	       tsr_task_register(&(tsr_task_desc_t){.name = "inner", .cpu = nested}, &t2));
}

static void noop(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
}

/* After the refused calls: the 4 elements of r still hold `value` and f holds `result`; both are
 * then destroyed (the runtime still works). */
static void ck_untouched_and_destroy(tsr_region_t r, double value, tsr_future_t f, double result)
{
	double d[4];
	tsr_test_read1(r, 0, d, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_double_eq(d[i], value);
	double x = 0;
	CK_TSR(tsr_future_wait(f, &x, sizeof x));
	ck_assert_double_eq(x, result);
	CK_TSR(tsr_future_destroy(f));
	CK_TSR(tsr_region_destroy(r));
}

START_TEST(blocking_and_submitting_calls_inside_a_task_are_refused)
{
	struct victims v;
	v.r = tsr_test_region_f64("field", tsr_box1(0, 3));
	CK_TSR(tsr_fill(v.r, 0, &(double){4.0}, sizeof(double)));
	CK_TSR(tsr_partition_tiles(v.r, tsr_box1(0, 1), "halves", &v.p));
	CK_TSR(tsr_future_create(TSR_F64, 0, &(double){2.0}, &v.f));
	CK_TSR(tsr_task_register(&(tsr_task_desc_t){.name = "noop", .cpu = noop}, &v.t));
	tsr_task_t t = tsr_test_task("nested", nested, TSR_NONE);
	for (int k = 0; k < NCALLS; k++)
		call_rc[k] = 1;
	CK_TSR(tsr_launch(t, 0, NULL, &v, sizeof v, NULL));
	/* the refusals are not task failures: the fence is clean */
	CK_TSR(tsr_fence());
	for (int k = 0; k < NCALLS; k++) {
		ck_assert_msg(call_rc[k] == TSR_ESTATE, "%s inside a task returned %s: %s",
			      call_name[k], tsr_err_name(call_rc[k]), call_msg[k]);
		tsr_test_names(call_msg[k], call_name[k],
			       (const char *[]){call_name[k], "task 'nested'", NULL});
	}
	/* nothing was done: the data, the future and the runtime are as before */
	ck_untouched_and_destroy(v.r, 4.0, v.f, 2.0);
}
END_TEST

/* -------------------------------------------------------- a second host thread */
struct intruder {
	tsr_region_t r;
	tsr_future_t f;
	tsr_task_t t;
	int rc[8];
	char msg[8][512];
};
static const char *intruder_call[8] = {"tsr_fill",     "tsr_map",         "tsr_launch",
				       "tsr_fence",    "tsr_future_wait", "tsr_region_destroy",
				       "tsr_finalize", "tsr_init"};

/* Each call's code and this thread's message (tsr_last_error is per thread). */
static void keep(struct intruder *in, int k, int rc)
{
	in->rc[k] = rc;
	snprintf(in->msg[k], sizeof in->msg[k], "%s", tsr_last_error());
}

static void *intrude(void *arg)
{
	struct intruder *in = arg;
	tsr_accessor_t a;
	double x = 9.0;
	keep(in, 0, tsr_fill(in->r, 0, &x, sizeof x));
	keep(in, 1, tsr_map(in->r, 0, TSR_READ_WRITE, &a));
	keep(in, 2, tsr_launch(in->t, 0, NULL, NULL, 0, NULL));
	keep(in, 3, tsr_fence());
	keep(in, 4, tsr_future_wait(in->f, &x, sizeof x));
	keep(in, 5, tsr_region_destroy(in->r));
	keep(in, 6, tsr_finalize());
	keep(in, 7, tsr_init(NULL));
	return NULL;
}

START_TEST(calls_from_a_second_thread_are_refused)
{
	struct intruder in;
	in.r = tsr_test_region_f64("mine", tsr_box1(0, 3));
	CK_TSR(tsr_fill(in.r, 0, &(double){1.0}, sizeof(double)));
	CK_TSR(tsr_future_create(TSR_F64, 0, &(double){3.0}, &in.f));
	CK_TSR(tsr_task_register(&(tsr_task_desc_t){.name = "noop", .cpu = noop}, &in.t));
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, intrude, &in), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	for (int k = 0; k < 7; k++) {
		ck_assert_msg(in.rc[k] == TSR_ESTATE, "%s from a second thread returned %s: %s",
			      intruder_call[k], tsr_err_name(in.rc[k]), in.msg[k]);
		tsr_test_names(in.msg[k], intruder_call[k],
			       (const char *[]){intruder_call[k], "thread", NULL});
	}
	/* a second tsr_init is refused because the runtime is up */
	ck_assert_int_eq(in.rc[7], TSR_ESTATE);
	tsr_test_names(in.msg[7], "tsr_init",
		       (const char *[]){"tsr_init", "already initialized", NULL});
	/* the owner's data, future and runtime are untouched */
	ck_untouched_and_destroy(in.r, 1.0, in.f, 3.0);
	CK_TSR(tsr_fence());
}
END_TEST

/* ---------------------------------------------------------- concurrent init */
static int count_threads(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

#define NRACERS 4
static pthread_barrier_t start, tried;
static int init_rc[NRACERS], finalize_rc[NRACERS];

/* Every racer calls tsr_init at once; the winner (the owner) runs a task, then finalizes once all
 * have tried. */
static void *race(void *arg)
{
	int me = (int)(intptr_t)arg;
	tsr_config_t cfg = tsr_test_config();
	pthread_barrier_wait(&start);
	init_rc[me] = tsr_init(&cfg);
	pthread_barrier_wait(&tried);
	finalize_rc[me] = 1;
	if (init_rc[me] == TSR_OK) {
		tsr_task_t t;
		int rc = tsr_task_register(&(tsr_task_desc_t){.name = "noop", .cpu = noop}, &t);
		if (!rc)
			rc = tsr_launch(t, 0, NULL, NULL, 0, NULL);
		finalize_rc[me] = tsr_finalize();
		if (rc)
			finalize_rc[me] = rc;
	}
	return NULL;
}

START_TEST(concurrent_init_has_one_winner_and_finalize_leaves_no_thread)
{
	/* An OpenCL driver (POCL, say) starts threads of its own the first time StarPU asks it for
	 * devices, and keeps them for the life of the process: one start and stop first, so that
	 * `before` counts them and what is compared is what the runtime itself leaves behind. */
	tsr_test_setup();
	tsr_test_teardown();
	int before = count_threads();
	pthread_t th[NRACERS];
	pthread_barrier_init(&start, NULL, NRACERS);
	pthread_barrier_init(&tried, NULL, NRACERS);
	for (int i = 0; i < NRACERS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, race, (void *)(intptr_t)i), 0);
	for (int i = 0; i < NRACERS; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	pthread_barrier_destroy(&start);
	pthread_barrier_destroy(&tried);
	int winners = 0;
	for (int i = 0; i < NRACERS; i++) {
		if (init_rc[i] == TSR_OK) {
			winners++;
			ck_assert_msg(finalize_rc[i] == TSR_OK, "the winner's finalize returned %s",
				      tsr_err_name(finalize_rc[i]));
			continue;
		}
		ck_assert_msg(init_rc[i] == TSR_ESTATE, "a losing tsr_init returned %s",
			      tsr_err_name(init_rc[i]));
	}
	ck_assert_int_eq(winners, 1);
	/* StarPU's workers are gone with the runtime */
	ck_assert_int_eq(count_threads(), before);
	/* and the runtime starts again, in this thread */
	tsr_test_setup();
	tsr_test_teardown();
	ck_assert_int_eq(count_threads(), before);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_threads");
	TCase *tc = tsr_test_tcase("one_thread", 1);
	tcase_add_test(tc, blocking_and_submitting_calls_inside_a_task_are_refused);
	tcase_add_test(tc, calls_from_a_second_thread_are_refused);
	suite_add_tcase(s, tc);
	TCase *bare = tsr_test_tcase("lifecycle", 0);
	tcase_add_test(bare, concurrent_init_has_one_winner_and_finalize_leaves_no_thread);
	suite_add_tcase(s, bare);
	return tsr_test_run(s);
}
