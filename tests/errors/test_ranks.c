/* test_ranks.c: the several-ranks calls in one process (issue 10). An owner rank outside
 * 0..nranks-1, a color outside the partition, a stale partition and a mapper's rank out of range
 * are refused with a message naming the partition and color (or the task and point), and
 * nothing is launched; without MPI the process is rank 0 of 1; TSR_MPI must be 0 or 1. A fake
 * rank (TSR_FAKE_NRANKS, issue 27) is the rank it plays, runs no variant, and does not hang on
 * what other ranks would send; its mistakes are refused by tsr_init. */
#include "tsr_test.h"

/* tiles "halves" of the witness line: colors (0) and (1) */
static tsr_partition_t halves_of(tsr_region_t r)
{
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 1), "halves");
	return p;
}

START_TEST(one_process_is_rank_0_of_1)
{
	ck_assert_int_eq(tsr_rank(), 0);
	ck_assert_int_eq(tsr_nranks(), 1);
}
END_TEST

/* One refused tsr_partition_set_rank on "halves": the color given (NULL: none), the rank, whether
 * the partition was destroyed first (or is the zero handle), the code and what the message names.
 * Colors are left on their ranks: rank 0 still works. */
struct set_rank_case {
	const char *what;
	const int64_t *color;
	int rank;
	enum { LIVE, GONE, ZERO } partition;
	int code;
	const char *names[5];
};
enum { N_SET_RANK_CASES = 7 };

static struct set_rank_case set_rank_case(int i)
{
	static const int64_t c0[3] = {0, 0, 0}, c1[3] = {1, 0, 0}, c2[3] = {2, 0, 0},
			     cminus[3] = {-1, 0, 0};
	const struct set_rank_case cases[] = {
		{"rank -1", c1, -1, LIVE, TSR_EBOUNDS, {"rank -1", "halves", "(1)"}},
		/* one process has rank 0 only: rank 1 is the first rank that does not exist */
		{"no process", c0, 1, LIVE, TSR_EBOUNDS, {"rank 1", "halves", "(0)", "1 rank"}},
		/* colors outside the partition, or none */
		{"color 2", c2, 0, LIVE, TSR_EBOUNDS, {"(2)", "halves"}},
		{"color -1", cminus, 0, LIVE, TSR_EBOUNDS, {"(-1)", "halves"}},
		{"no color", NULL, 0, LIVE, TSR_EINVAL, {"color", "halves"}},
		/* a stale partition: destroyed, or the zero handle */
		{"destroyed", c0, 0, GONE, TSR_ESTALE, {"partition", "tsr_partition_set_rank"}},
		{"zero", c0, 0, ZERO, TSR_ESTALE, {"partition", "tsr_partition_set_rank"}},
	};
	_Static_assert(sizeof cases / sizeof cases[0] == N_SET_RANK_CASES, "one row per case");
	return cases[i];
}

START_TEST(set_rank_refused)
{
	struct set_rank_case c = set_rank_case(_i);
	tsr_region_t r = tsr_test_line();
	tsr_partition_t p = halves_of(r);
	if (c.partition == GONE)
		CK_TSR(tsr_partition_destroy(p));
	tsr_partition_t target = c.partition == ZERO ? (tsr_partition_t){0} : p;
	tsr_test_ck_refused(c.what, tsr_partition_set_rank(target, c.color, c.rank), c.code,
			    c.names);
	if (c.partition == LIVE)
		CK_TSR(tsr_partition_set_rank(p, (const int64_t[3]){0, 0, 0}, 0));
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A mapper that sends point 1 (or a single launch) to *arg, every other point to rank 0. */
static void rank_mapper(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	if (q->point_dim == 0 || q->point[0] == 1)
		m->rank = *(const int *)arg;
}

/* The task "spoil" (tsr_test_overwrite) would overwrite the witness: it must never run when its
 * launch is refused. */
START_TEST(mapper_rank_out_of_range_refused)
{
	tsr_region_t r = tsr_test_line();
	tsr_partition_t p = halves_of(r);
	tsr_task_t t = tsr_test_task("spoil", tsr_test_overwrite, TSR_NONE);
	const int bad[] = {1, -1, 7};
	for (int k = 0; k < 3; k++) {
		char rank[16];
		snprintf(rank, sizeof rank, "rank %d", bad[k]);
		CK_TSR(tsr_set_mapper(rank_mapper, (void *)&bad[k]));
		/* index launch: point 0 is fine, point 1 is not; no point may be submitted */
		CK_TSR_ERR(tsr_run(t, &(tsr_launch_t){.domain = tsr_box1(0, 1),
						      .reqs = TSR_REQS(
							      tsr_req_part(p, TSR_WRITE_DISCARD,
									   TSR_FIELDS(0)))}),
			   TSR_EBOUNDS, "spoil", "(1)", rank);
		CK_TSR(tsr_fence());
		tsr_test_ck_line_intact(r);
	}
	CK_TSR(tsr_set_mapper(NULL, NULL));
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A mapper that records the rank each point would run on (what *m says on entry). */
static void record_rank(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	int *seen = arg;
	seen[q->point[0]] = m->rank;
}

/* Setting one color's rank leaves the others on their blocks (rank 0 in one process), and every
 * point still runs. (The defaults used to be copied from the freshly allocated table itself; this
 * test does not catch that reliably, the oracle's batches with random owners did: see README.) */
START_TEST(other_colors_keep_their_rank)
{
	tsr_region_t r = tsr_test_line();
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 5), "sixths");
	CK_TSR(tsr_partition_set_rank(p, (const int64_t[3]){0, 0, 0}, 0));
	int seen[6] = {-1, -1, -1, -1, -1, -1};
	tsr_task_t t = tsr_test_task("spoil", tsr_test_overwrite, TSR_NONE);
	CK_TSR(tsr_set_mapper(record_rank, seen));
	CK_TSR(tsr_run(t, &(tsr_launch_t){.domain = tsr_box1(0, 5),
					  .reqs = TSR_REQS(tsr_req_part(p, TSR_WRITE_DISCARD,
									TSR_FIELDS(0)))}));
	CK_TSR(tsr_set_mapper(NULL, NULL));
	for (int c = 0; c < 6; c++)
		ck_assert_msg(seen[c] == 0, "color %d of 'sixths' runs on rank %d in one process",
			      c, seen[c]);
	/* and every point ran: the whole line was overwritten */
	double v[8];
	tsr_test_read1(r, 0, v, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_msg(v[i] == -1.0, "element %d is %g: its point did not run", i, v[i]);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* TSR_MPI chooses one process (0) or several ranks (1); anything else is a mistake to report,
 * not a guess. The runtime is not started, so the next tsr_init works. */
START_TEST(tsr_mpi_banana_refused)
{
	setenv("TSR_MPI", "banana", 1);
	tsr_config_t cfg = tsr_test_config();
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "TSR_MPI", "banana");
	setenv("TSR_MPI", "0", 1);
	CK_TSR(tsr_init(&cfg));
	ck_assert_int_eq(tsr_nranks(), 1);
	CK_TSR(tsr_finalize());
	unsetenv("TSR_MPI");
}
END_TEST

/* ---- fake ranks (TSR_FAKE_NRANKS, TSR_FAKE_RANK): each test starts the runtime itself */

static void fake_env(const char *nranks, const char *rank)
{
	unsetenv("TSR_MPI");
	if (nranks)
		setenv("TSR_FAKE_NRANKS", nranks, 1);
	else
		unsetenv("TSR_FAKE_NRANKS");
	if (rank)
		setenv("TSR_FAKE_RANK", rank, 1);
	else
		unsetenv("TSR_FAKE_RANK");
}

static int fake_init(void)
{
	tsr_config_t cfg = tsr_test_config();
	return tsr_init(&cfg);
}

/* Counts the points whose variant ran (a fake rank runs none). */
static int variant_runs;

static void counted_spoil(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	__atomic_add_fetch(&variant_runs, 1, __ATOMIC_RELAXED);
	tsr_test_overwrite(ctx, args, arglen);
}

/* The sum of a tile's values as its point's return value (a fake rank runs none). */
static void tile_sum(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	__atomic_add_fetch(&variant_runs, 1, __ATOMIC_RELAXED);
	double s = 1.0;
	tsr_ctx_return(ctx, &s);
}

/* The tiles of r over colors [0..n-1] (named `name`) and their halo of one element. */
static void tiles_and_halo(tsr_region_t r, int64_t n, const char *name, tsr_partition_t *tiles,
			   tsr_partition_t *halo)
{
	tsr_box_t colors = tsr_box1(0, n - 1);
	tsr_box_t bounds;
	CK_TSR(tsr_region_bounds(r, &bounds));
	CK_TSR(tsr_partition_tiles(r, colors, name, tiles));
	CK_TSR(tsr_partition_tiles_halo(r, bounds, colors, (const int64_t[3]){1}, "halo", halo));
}

/* One step on the n tiles: spoiler (counted_spoil) writes each tile (privilege priv), then sum
 * (tile_sum) reads each halo and the returns are folded by SUM; the folded value. */
static double spoil_and_sum(tsr_task_t spoiler, tsr_task_t sum, tsr_partition_t tiles,
			    tsr_partition_t halo, int64_t n, tsr_privilege_t priv)
{
	tsr_test_run_part(spoiler, tiles, n, priv);
	tsr_future_t total;
	CK_TSR(tsr_run(sum, &(tsr_launch_t){.domain = tsr_box1(0, n - 1),
					    .reqs = TSR_REQS(
						    tsr_req_part(halo, TSR_READ, TSR_FIELDS(0))),
					    .redop = TSR_SUM,
					    .result = &total}));
	double value = -1.0;
	CK_TSR(tsr_future_wait(total, &value, sizeof value));
	CK_TSR(tsr_future_destroy(total));
	return value;
}

/* Rank 2 of 4: tsr_rank and tsr_nranks say so; the points of every rank are analysed, but no
 * variant runs; Tessera's own tasks do (the fill); a halo read's receives, a reduction gathered
 * from every rank and a map of the whole line neither hang nor change what the fill wrote. */
START_TEST(fake_rank_plays_its_rank_without_variants)
{
	fake_env("4", "2");
	CK_TSR(fake_init());
	ck_assert_int_eq(tsr_rank(), 2);
	ck_assert_int_eq(tsr_nranks(), 4);

	tsr_region_t r = tsr_test_line();
	tsr_partition_t tiles, halo;
	tiles_and_halo(r, 4, "quarters", &tiles, &halo);
	tsr_task_t spoiler = tsr_test_task("spoil", counted_spoil, TSR_NONE);
	tsr_task_t sum = tsr_test_task("tile_sum", tile_sum, TSR_F64);
	double value = spoil_and_sum(spoiler, sum, tiles, halo, 4, TSR_WRITE_DISCARD);
	CK_TSR(tsr_fence());

	ck_assert_int_eq(__atomic_load_n(&variant_runs, __ATOMIC_RELAXED), 0);
	/* no point computed its value, here or on the ranks it stands for */
	ck_assert_msg(value == 0.0, "the fake rank's gathered sum is %g", value);
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_finalize());
	fake_env(NULL, NULL);
}
END_TEST

/* One rank of 1: the same (tsr_rank 0 of 1) with the runtime's several-ranks path. */
START_TEST(fake_rank_of_one)
{
	fake_env("1", NULL);
	CK_TSR(fake_init());
	ck_assert_int_eq(tsr_rank(), 0);
	ck_assert_int_eq(tsr_nranks(), 1);
	tsr_region_t r = tsr_test_line();
	tsr_test_ck_line_intact(r);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_finalize());
	fake_env(NULL, NULL);
}
END_TEST

/* What tsr_init refuses, each with a message naming the switch; the runtime is then down and
 * the next tsr_init works. */
START_TEST(fake_rank_mistakes_refused)
{
	fake_env(NULL, "1");
	CK_TSR_ERR(fake_init(), TSR_EINVAL, "TSR_FAKE_RANK=1", "TSR_FAKE_NRANKS");
	fake_env("4", "4");
	CK_TSR_ERR(fake_init(), TSR_EINVAL, "TSR_FAKE_RANK=4", "TSR_FAKE_NRANKS=4", "0..3");
	fake_env("4", "-1");
	CK_TSR_ERR(fake_init(), TSR_EINVAL, "TSR_FAKE_RANK", "-1");
	const char *bad[] = {"0", "1025", "many"};
	for (int i = 0; i < 3; i++) {
		fake_env(bad[i], NULL);
		CK_TSR_ERR(fake_init(), TSR_EINVAL, "TSR_FAKE_NRANKS", bad[i], "1 to 1024");
	}
	/* fake ranks play a job without MPI */
	fake_env("4", "1");
	setenv("TSR_MPI", "1", 1);
	CK_TSR_ERR(fake_init(), TSR_EINVAL, "TSR_MPI");
	fake_env(NULL, NULL);
	CK_TSR(fake_init());
	ck_assert_int_eq(tsr_nranks(), 1);
	CK_TSR(tsr_finalize());
}
END_TEST

/* Beyond 64 fake ranks (a piece's rank set holds 64): index launches through disjoint partitions
 * run, halo reads and a gathered reduction included; a write on one rank (a single launch) is
 * refused, naming the field and the region; the runtime then finalizes. */
START_TEST(fake_ranks_beyond_64_take_the_structured_path)
{
	fake_env("100", "70");
	CK_TSR(fake_init());
	ck_assert_int_eq(tsr_rank(), 70);
	ck_assert_int_eq(tsr_nranks(), 100);

	tsr_region_t r = tsr_test_region_f64("long line", tsr_box1(0, 399));
	double three = 3.0;
	CK_TSR(tsr_fill(r, 0, &three, sizeof three));
	tsr_partition_t tiles, halo;
	tiles_and_halo(r, 100, "tiles", &tiles, &halo);
	tsr_task_t spoiler = tsr_test_task("spoil", counted_spoil, TSR_NONE);
	tsr_task_t sum = tsr_test_task("tile_sum", tile_sum, TSR_F64);
	for (int it = 0; it < 2; it++)
		spoil_and_sum(spoiler, sum, tiles, halo, 100, TSR_READ_WRITE);
	CK_TSR(tsr_fence());
	ck_assert_int_eq(__atomic_load_n(&variant_runs, __ATOMIC_RELAXED), 0);

	CK_TSR_ERR(tsr_run(spoiler,
			   &(tsr_launch_t){.reqs = TSR_REQS(tsr_req_region(r, TSR_READ_WRITE,
									   TSR_FIELDS(0)))}),
		   TSR_EINVAL, "field 'x' of region 'long line'", "100 ranks", "more than 64");
	/* refused before anything was submitted or recorded: the runtime goes on */
	CK_TSR(tsr_fence());
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_finalize());
	fake_env(NULL, NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ranks");
	TCase *tc = tsr_test_tcase("ranks", 1);
	tcase_add_test(tc, one_process_is_rank_0_of_1);
	tcase_add_test(tc, mapper_rank_out_of_range_refused);
	tcase_add_test(tc, other_colors_keep_their_rank);
	tcase_add_loop_test(tc, set_rank_refused, 0, N_SET_RANK_CASES);
	suite_add_tcase(s, tc);
	/* no fixture: these start the runtime themselves */
	TCase *env = tsr_test_tcase("environment", 0);
	TCase *fake = tsr_test_tcase("fake ranks", 0);
	tcase_add_test(env, tsr_mpi_banana_refused);
	tcase_add_test(fake, fake_rank_plays_its_rank_without_variants);
	tcase_add_test(fake, fake_rank_of_one);
	tcase_add_test(fake, fake_rank_mistakes_refused);
	tcase_add_test(fake, fake_ranks_beyond_64_take_the_structured_path);
	suite_add_tcase(s, env);
	suite_add_tcase(s, fake);
	return tsr_test_run(s);
}
