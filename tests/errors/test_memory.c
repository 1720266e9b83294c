/* test_memory.c: a program that creates, launches with and destroys futures in a loop, with no
 * fence, runs in constant memory: each value is freed once StarPU is done with its handle. So does
 * one that switches between partitions of a field whose edges do not line up (coherence by
 * pieces). */
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
	tsr_task_t t = tsr_test_task("next", next, TSR_I64);
	tsr_future_t f;
	int64_t count = 0;
	CK_TSR(tsr_future_create(TSR_I64, 0, &count, &f));
	/* warm up StarPU's caches (jobs, memory chunks), then measure the next 180,000
	 * iterations */
	int vg = under_valgrind();
	chain(t, &f, &count, vg ? 200 : 20000);
	size_t before = heap_in_use();
	chain(t, &f, &count, vg ? 1800 : 180000);
	size_t after = heap_in_use();
	if (getenv("TSR_TEST_VERBOSE"))
		fprintf(stderr, "heap: %zu bytes before, %zu after\n", before, after);
	/* the graveyard this replaces kept ~40 bytes per iteration: 7 MB here (measured: 5 KB
	 * now) */
	if (!vg)
		ck_assert_msg(after<before + (1 << 20),
				      "heap grew by %zu bytes over 180000 iterations", after>
					      before
				      ? after - before
				      : 0);
	CK_TSR(tsr_future_destroy(f));
	CK_TSR(tsr_fence());
}
END_TEST

/* "add" (tsr_test_add_one): u += 1 over the point's subregion (READ_WRITE); look: reads u
 * through its subregion. */
static void look(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t u;
	tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ, &u);
}

#define MEM_N 60

/* One round: write through 4 tiles, read through their halos, write through 7 tiles whose edges
 * do not line up with the 4, read through boxes that straddle them, then read it all back. */
static void pieces_round(tsr_task_t ta, tsr_task_t tl, tsr_region_t r, tsr_partition_t parts[4],
			 int iters, double *expect)
{
	for (int i = 0; i < iters; i++) {
		tsr_test_run_part(ta, parts[0], 4, TSR_READ_WRITE);
		tsr_test_run_part(tl, parts[1], 4, TSR_READ);
		tsr_test_run_part(ta, parts[2], 7, TSR_READ_WRITE);
		tsr_test_run_part(tl, parts[3], 3, TSR_READ);
	}
	*expect += 2.0 * iters;
	double v[MEM_N];
	CK_TSR(tsr_region_read(r, 0, v, sizeof v));
	for (int i = 0; i < MEM_N; i++)
		ck_assert_msg(v[i] == *expect, "u[%d] = %g after the round, expected %g", i, v[i],
			      *expect);
}

/* Region u of MEM_N f64 (field *f), cut into 4 tiles and into their halos of 2 points. */
static tsr_region_t mem_region(tsr_field_t *f, tsr_partition_t *tiles, tsr_partition_t *halo)
{
	tsr_region_t r = tsr_test_region("u", tsr_box1(0, MEM_N - 1), 1,
					 (const tsr_type_t[]){TSR_F64}, NULL, f);
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 3), "tiles4", tiles));
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, MEM_N - 1), tsr_box1(0, 3),
					(const int64_t[3]){2, 0, 0}, "halo4", halo));
	return r;
}

/* Coherence by pieces keeps, per field, the pieces last written and by whom: alternating
 * partitions whose edges do not line up must not make that list (or the views' handles) grow. */
START_TEST(alternating_partitions_run_in_constant_memory)
{
	tsr_task_t ta, tl;
	ta = tsr_test_task("add", tsr_test_add_one, TSR_NONE);
	tl = tsr_test_task("look", look, TSR_NONE);
	tsr_field_t f;
	tsr_partition_t parts[4];
	tsr_region_t r = mem_region(&f, &parts[0], &parts[1]);
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 6), "tiles7", &parts[2]));
	tsr_box_t boxes[3] = {tsr_box1(5, 30), tsr_box1(20, 47), tsr_box1(40, MEM_N - 1)};
	CK_TSR(tsr_partition_boxes(r, 3, boxes, "straddle", &parts[3]));
	int vg = under_valgrind();
	double expect = 0;
	pieces_round(ta, tl, r, parts, vg ? 20 : 1000, &expect);
	size_t before = heap_in_use();
	pieces_round(ta, tl, r, parts, vg ? 100 : 6000, &expect);
	size_t after = heap_in_use();
	if (getenv("TSR_TEST_VERBOSE"))
		fprintf(stderr, "heap: %zu bytes before, %zu after\n", before, after);
	if (!vg)
		ck_assert_msg(
			after<before + (1 << 20),
				"heap grew by %zu bytes over 6000 rounds of 4 partitions", after>
					before
				? after - before
				: 0);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_fence());
}
END_TEST

/* tsr-critpath keeps a task graph to give a ready task its longest path to the end. A halo's reads
 * are never covered by one write, and every task stays in the graph: kept whole, a loop's graph,
 * and the time to add each access to it, grew with the run. Done tasks are dropped now. */
START_TEST(critpath_halo_loop_runs_in_constant_memory)
{
	tsr_config_t cfg = tsr_test_config();
	cfg.sched = "tsr-critpath";
	cfg.ncpu = 2;
	CK_TSR(tsr_init(&cfg));
	tsr_task_t ta, tl;
	ta = tsr_test_task("add", tsr_test_add_one, TSR_NONE);
	tl = tsr_test_task("look", look, TSR_NONE);
	tsr_field_t f;
	tsr_partition_t tiles, halo;
	tsr_region_t r = mem_region(&f, &tiles, &halo);
	int vg = under_valgrind();
	long warm = vg ? 20 : 1000, more = vg ? 100 : 6000;
	for (long i = 0; i < warm; i++) {
		tsr_test_run_part(ta, tiles, 4, TSR_READ_WRITE);
		tsr_test_run_part(tl, halo, 4, TSR_READ);
	}
	CK_TSR(tsr_fence());
	size_t before = heap_in_use();
	for (long i = 0; i < more; i++) {
		tsr_test_run_part(ta, tiles, 4, TSR_READ_WRITE);
		tsr_test_run_part(tl, halo, 4, TSR_READ);
	}
	CK_TSR(tsr_fence());
	size_t after = heap_in_use();
	if (getenv("TSR_TEST_VERBOSE"))
		fprintf(stderr, "heap: %zu bytes before, %zu after\n", before, after);
	double v[MEM_N];
	CK_TSR(tsr_region_read(r, f, v, sizeof v));
	for (int i = 0; i < MEM_N; i++)
		ck_assert_double_eq(v[i], (double)(warm + more));
	/* kept whole: 13 MB over these 48,000 tasks (measured; 2 KB now) */
	if (!vg)
		ck_assert_msg(after<before + (1 << 20),
				      "heap grew by %zu bytes over %ld iterations of 8 tasks",
				      after>
					      before
				      ? after - before
				      : 0,
			      more);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_finalize());
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_memory");
	TCase *tc = tsr_test_tcase("memory", 1);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, future_loop_without_fence_runs_in_constant_memory);
	tcase_add_test(tc, alternating_partitions_run_in_constant_memory);
	suite_add_tcase(s, tc);
	TCase *own = tsr_test_tcase("memory, own runtime", 0);
	tcase_set_timeout(own, 120);
	tcase_add_test(own, critpath_halo_loop_runs_in_constant_memory);
	suite_add_tcase(s, own);
	return tsr_test_run(s);
}
