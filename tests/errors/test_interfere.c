/* test_interfere.c: launches whose requirements interfere are refused with TSR_EINTERFERE
 * before anything runs: writes through an aliased partition, two points writing one subregion,
 * one field through two partitions (or a region and its subregion) in one launch. */
#include "tsr_test.h"

/* The witness here: "line" over [0..11]; a refused launch leaves it intact (tsr_test.h). */
static tsr_region_t line(void)
{
	return tsr_test_witness("line", 12);
}

static void sum_tile(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	double s = 0;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ, &a))
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		s += TSR_AT1(&a, double, i);
	tsr_ctx_return(ctx, &s);
}

/* A task `name` that overwrites what it gets: it must never run when its launch is refused. */
static tsr_task_t task(const char *name)
{
	return tsr_test_task(name, tsr_test_overwrite, TSR_NONE);
}

/* The ghost partition of the line: 3 tiles, each with one element of its neighbours. */
static tsr_partition_t ghost_of(tsr_region_t r)
{
	tsr_partition_t g;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, 11), tsr_box1(0, 2),
					(const int64_t[3]){1, 0, 0}, "ghost", &g));
	return g;
}

/* One refused index launch on the line, each case with its task's name (which the message names,
 * with the partition or region at fault): its requirements (the cases of make_reqs) and its
 * domain. Nothing runs: the line stays intact. */
enum reqs_kind {
	GHOST_WRITE,        /* writes through the aliased ghost partition */
	GHOST_READ_WRITE,   /* the same with READ_WRITE */
	OVERLAP_READ_WRITE, /* writes through overlapping boxes */
	WHOLE_WRITE,        /* every point writes the whole line */
	TILES_AND_GHOST,    /* one field written through the tiles, read through the ghost */
};
struct refusal {
	const char *task;
	enum reqs_kind reqs;
	tsr_box_t domain;
	const char *names[3];
};
enum { N_REFUSALS = 6 };

static struct refusal refusal(int i)
{
	const struct refusal cases[] = {
		{"smudge", GHOST_WRITE, tsr_box1(0, 2), {"smudge", "ghost"}},
		{"smudge", GHOST_READ_WRITE, tsr_box1(0, 2), {"smudge", "ghost"}},
		/* even a launch domain of one point: the subregions overlap others, writes through
		 * shadow views are lost */
		{"smudge", GHOST_READ_WRITE, tsr_box1(1, 1), {"smudge", "ghost"}},
		{"smudge", OVERLAP_READ_WRITE, tsr_box1(0, 1), {"smudge", "overlap"}},
		/* a region requirement written by every point of an index launch is a collision */
		{"everyone", WHOLE_WRITE, tsr_box1(0, 1), {"everyone", "line"}},
		{"mixed", TILES_AND_GHOST, tsr_box1(0, 2), {"mixed", "x"}},
	};
	_Static_assert(sizeof cases / sizeof cases[0] == N_REFUSALS, "one row per case");
	return cases[i];
}

/* The requirements of a refusal, made on the line r; how many. */
static int make_reqs(enum reqs_kind kind, tsr_region_t r, tsr_req_t q[2])
{
	switch (kind) {
	case GHOST_WRITE:
		q[0] = tsr_req_part(ghost_of(r), TSR_WRITE, TSR_FIELDS(0));
		return 1;
	case GHOST_READ_WRITE:
		q[0] = tsr_req_part(ghost_of(r), TSR_READ_WRITE, TSR_FIELDS(0));
		return 1;
	case OVERLAP_READ_WRITE: {
		tsr_partition_t p;
		const tsr_box_t b[] = {tsr_box1(0, 6), tsr_box1(5, 11)};
		CK_TSR(tsr_partition_boxes(r, 2, b, "overlap", &p));
		q[0] = tsr_req_part(p, TSR_READ_WRITE, TSR_FIELDS(0));
		return 1;
	}
	case WHOLE_WRITE:
		q[0] = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
		return 1;
	default:
		q[0] = tsr_req_part(tsr_test_tiles(r, tsr_box1(0, 2), "tiles"), TSR_WRITE,
				    TSR_FIELDS(0));
		q[1] = tsr_req_part(ghost_of(r), TSR_READ, TSR_FIELDS(0));
		return 2;
	}
}

START_TEST(interfering_index_launch_refused)
{
	struct refusal c = refusal(_i);
	tsr_region_t r = line();
	tsr_req_t q[2];
	int nreq = make_reqs(c.reqs, r, q);
	tsr_test_ck_refused(c.task,
			    tsr_index_launch(task(c.task), c.domain, nreq, q, NULL, 0,
					     TSR_REDOP_NONE, NULL),
			    TSR_EINTERFERE, c.names);
	tsr_test_fence_ck_witness(r, 12);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static int all_to_zero(const int64_t point[3], int64_t color[3], void *arg)
{
	color[0] = color[1] = color[2] = 0;
	return 0;
}

static int pair_up(const int64_t point[3], int64_t color[3], void *arg)
{
	color[0] = point[0] / 2; /* points 0,1 -> 0; 2,3 -> 1 */
	color[1] = color[2] = 0;
	return 0;
}

START_TEST(two_points_writing_one_subregion_refused)
{
	tsr_region_t r = line();
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	tsr_task_t t = task("collide");
	tsr_req_t q = tsr_req_part_proj(p, TSR_WRITE, TSR_FIELDS(0), all_to_zero, NULL);
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EINTERFERE, "collide", "tiles");
	q = tsr_req_part_proj(p, TSR_READ_WRITE, TSR_FIELDS(0), pair_up, NULL);
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EINTERFERE, "collide", "tiles");
	tsr_test_fence_ck_witness(r, 12);
	/* READ through the same projection is fine: points may share what they read */
	q = tsr_req_part_proj(p, TSR_READ, TSR_FIELDS(0), pair_up, NULL);
	tsr_task_t rd = tsr_test_task("shared_read", sum_tile, TSR_F64);
	tsr_future_t f;
	CK_TSR(tsr_index_launch(rd, tsr_box1(0, 3), 1, &q, NULL, 0, TSR_SUM, &f));
	double total;
	CK_TSR(tsr_future_wait(f, &total, sizeof total));
	ck_assert_double_eq(total, 4 * 3 * 3.0);
	CK_TSR(tsr_future_destroy(f));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static int plus(const int64_t point[3], int64_t color[3], void *arg)
{
	color[0] = point[0] + *(const int64_t *)arg;
	return 0;
}

/* copy_from: requirement 1 (WRITE) gets the values of requirement 0 (READ), shifted by tile. */
static void copy_from(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t s, d;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ, &s) ||
	    tsr_ctx_accessor(ctx, 1, 0, TSR_F64, TSR_WRITE, &d))
		return;
	for (int64_t i = 0; i <= d.hi[0] - d.lo[0]; i++)
		TSR_AT1(&d, double, d.lo[0] + i) = TSR_AT1(&s, double, s.lo[0] + i) + 1.0;
}

/* Legion's rule, point by point: points 0,1 write quarters 0,1 and read quarters 2,3 of the same
 * partition (no point writes what another touches): accepted and right. Reading the next
 * quarter instead makes point 0 read what point 1 writes: refused, nothing runs. */
START_TEST(index_launch_same_partition_checked_point_by_point)
{
	tsr_region_t r = line();
	double v[12];
	for (int i = 0; i < 12; i++)
		v[i] = i;
	tsr_test_write1(r, 0, v, 12);
	tsr_partition_t quarters;
	const tsr_box_t b[4] = {tsr_box1(0, 2), tsr_box1(3, 5), tsr_box1(6, 8), tsr_box1(9, 11)};
	CK_TSR(tsr_partition_boxes(r, 4, b, "quarters", &quarters));
	tsr_task_t t = tsr_test_task("copy_from", copy_from, TSR_NONE);
	int64_t two = 2, one = 1;
	tsr_req_t ok[2] = {tsr_req_part_proj(quarters, TSR_READ, TSR_FIELDS(0), plus, &two),
			   tsr_req_part(quarters, TSR_WRITE, TSR_FIELDS(0))};
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 1), 2, ok, NULL, 0, TSR_REDOP_NONE, NULL));
	tsr_test_read1(r, 0, v, 12);
	for (int i = 0; i < 12; i++)
		ck_assert_double_eq(v[i], i < 6 ? i + 6 + 1.0 : (double)i);
	tsr_req_t bad[2] = {tsr_req_part_proj(quarters, TSR_READ, TSR_FIELDS(0), plus, &one),
			    tsr_req_part(quarters, TSR_WRITE, TSR_FIELDS(0))};
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 1), 2, bad, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EINTERFERE, "copy_from", "quarters", "point");
	double after[12];
	tsr_test_read1(r, 0, after, 12);
	for (int i = 0; i < 12; i++)
		ck_assert_double_eq(after[i], v[i]);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A single launch cannot write a region and read one of its subregions (or two overlapping
 * subregions) of the same field: the task would see two views of one array. */
START_TEST(single_launch_region_and_its_subregion_refused)
{
	tsr_region_t r = line();
	tsr_partition_t tiles = tsr_test_tiles(r, tsr_box1(0, 2), "tiles");
	tsr_partition_t ghost = ghost_of(r);
	tsr_region_t s = tsr_test_subregion(tiles, 1), g0 = tsr_test_subregion(ghost, 0),
		     g1 = tsr_test_subregion(ghost, 1);
	tsr_task_t t = task("nested");
	tsr_req_t q[2] = {tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0)),
			  tsr_req_region(s, TSR_READ, TSR_FIELDS(0))};
	CK_TSR_ERR(tsr_launch(t, 2, q, NULL, 0, NULL), TSR_EINTERFERE, "nested", "line");
	tsr_req_t q2[2] = {tsr_req_region(g0, TSR_WRITE, TSR_FIELDS(0)),
			   tsr_req_region(g1, TSR_READ, TSR_FIELDS(0))};
	CK_TSR_ERR(tsr_launch(t, 2, q2, NULL, 0, NULL), TSR_EINTERFERE, "nested", "ghost");
	tsr_test_fence_ck_witness(r, 12);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* After a refused launch the runtime keeps working: the same data, a valid launch, right result. */
START_TEST(runtime_usable_after_interference)
{
	tsr_task_t t = task("smudge");
	tsr_region_t r = line();
	tsr_partition_t tiles = tsr_test_tiles(r, tsr_box1(0, 2), "tiles");
	tsr_partition_t ghost = ghost_of(r);
	tsr_req_t bad = tsr_req_part(ghost, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 2), 1, &bad, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EINTERFERE, "ghost");
	tsr_req_t good = tsr_req_part(tiles, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(t, tsr_box1(1, 1), 1, &good, NULL, 0, TSR_REDOP_NONE, NULL));
	double v[12];
	tsr_test_read1(r, 0, v, 12);
	for (int i = 0; i < 12; i++)
		ck_assert_double_eq(v[i], i >= 4 && i <= 7 ? -1.0 : 3.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_interfere");
	TCase *tc = tsr_test_tcase("interfere", 1);
	tcase_add_loop_test(tc, interfering_index_launch_refused, 0, N_REFUSALS);
	tcase_add_test(tc, two_points_writing_one_subregion_refused);
	tcase_add_test(tc, single_launch_region_and_its_subregion_refused);
	tcase_add_test(tc, index_launch_same_partition_checked_point_by_point);
	tcase_add_test(tc, runtime_usable_after_interference);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
