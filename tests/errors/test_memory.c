/* test_memory.c: a program that creates, launches with and destroys futures in a loop, with no
 * fence, runs in constant memory: each value is freed once StarPU is done with its handle. */
#include <malloc.h>
#include "tsr_test.h"

/* Under valgrind (make check-valgrind) malloc is memcheck's, which mallinfo2 does not see, and
 * 200,000 tasks take minutes: run a short loop there, for the leak check only. */
static int under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");
	return p && strstr(p, "vgpreload") != NULL;
}

/* next: returns the future it reads plus one (so the loop is one chain of tasks). */
static void next(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const int64_t *in = tsr_ctx_future(ctx, 0);
	int64_t out = *in + 1;
	tsr_ctx_return(ctx, &out);
}

/* Bytes the process has allocated (malloc's arena and its own mmaps). */
static size_t heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();
	return m.uordblks + m.hblkhd;
}

/* Run `n` iterations from future *f; wait for the last one (not a fence) and check its value. */
static void chain(tsr_task_t t, tsr_future_t *f, int64_t *count, long n)
{
	for (long i = 0; i < n; i++) {
		tsr_req_t q = tsr_req_future(*f);
		tsr_future_t g;
		CK_TSR(tsr_launch(t, 1, &q, NULL, 0, &g));
		CK_TSR(tsr_future_destroy(*f));
		*f = g;
	}
	int64_t v = -1;
	CK_TSR(tsr_future_wait(*f, &v, sizeof v));
	*count += n;
	ck_assert_int_eq(v, *count);
}

START_TEST(future_loop_without_fence_runs_in_constant_memory)
{
	tsr_task_t t;
	CK_TSR(tsr_task_register(&(tsr_task_desc_t){.name = "next", .cpu = next, .ret_type = TSR_I64}, &t));
	tsr_future_t f;
	int64_t count = 0;
	CK_TSR(tsr_future_create(TSR_I64, 0, &count, &f));
	/* warm up StarPU's caches (jobs, memory chunks), then measure the next 180,000 iterations */
	int vg = under_valgrind();
	chain(t, &f, &count, vg ? 200 : 20000);
	size_t before = heap_in_use();
	chain(t, &f, &count, vg ? 1800 : 180000);
	size_t after = heap_in_use();
	if (getenv("TSR_TEST_VERBOSE"))
		fprintf(stderr, "heap: %zu bytes before, %zu after\n", before, after);
	/* the graveyard this replaces kept ~40 bytes per iteration: 7 MB here (measured: 5 KB now) */
	if (!vg)
		ck_assert_msg(after < before + (1 << 20), "heap grew by %zu bytes over 180000 iterations",
		              after > before ? after - before : 0);
	CK_TSR(tsr_future_destroy(f));
	CK_TSR(tsr_fence());
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_memory");
	TCase *tc = tsr_test_tcase("memory", 1);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, future_loop_without_fence_runs_in_constant_memory);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
