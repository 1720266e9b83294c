/* test_busy.c: a field mapped on the host is off limits to launches, fills, copies and
 * destruction until tsr_unmap (TSR_EBUSY naming region and field); other fields are not. */
#include "tsr_test.h"

/* incr: adds one to field *args (field 0 when no args) of requirement 0. */
static void incr(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	if (tsr_ctx_accessor(ctx, 0, args ? *(const tsr_field_t *)args : 0, TSR_F64, TSR_READ_WRITE,
			     &a))
		return;
	for (int64_t i = a.lo[0]; i <= a.hi[0]; i++)
		TSR_AT1(&a, double, i) += 1.0;
}

/* Region "line" [0..7] with f64 fields "u" (= 3) and "w" (= 0). */
static tsr_region_t line(void)
{
	tsr_field_t f[2];
	tsr_region_t r =
		tsr_test_region("line", tsr_box1(0, 7), 2, (const tsr_type_t[]){TSR_F64, TSR_F64},
				(const char *const[]){"u", "w"}, f);
	double three = 3.0;
	CK_TSR(tsr_fill(r, 0, &three, sizeof three));
	return r;
}

static tsr_task_t incr_task(void)
{
	tsr_task_t t = tsr_test_task("incr", incr, TSR_NONE);
	return t;
}

/* Field "u" mapped for reading on the host: what the calls below must not touch. */
static tsr_accessor_t map_u(tsr_region_t r)
{
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, 0, TSR_READ, &a));
	return a;
}

START_TEST(launch_on_mapped_field_refused)
{
	tsr_region_t r = line();
	tsr_task_t t = incr_task();
	tsr_accessor_t a = map_u(r);
	tsr_req_t qu = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_launch(t, 1, &qu, NULL, 0, NULL), TSR_EBUSY, "incr", "line", "u");
	/* read-only use is refused too: the host may hold the mapping for writing next */
	tsr_req_t qr = tsr_req_region(r, TSR_READ, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_launch(t, 1, &qr, NULL, 0, NULL), TSR_EBUSY, "incr", "line", "u");
	/* the mapping still shows the data, unchanged */
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(TSR_AT1(&a, double, i), 3.0);
	/* another field of the same region is free */
	tsr_req_t qw = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(1));
	tsr_field_t w = 1;
	CK_TSR(tsr_launch(t, 1, &qw, &w, sizeof w, NULL));
	CK_TSR(tsr_unmap(r, 0));
	CK_TSR(tsr_launch(t, 1, &qu, NULL, 0, NULL));
	double v[8];
	tsr_test_read1(r, 0, v, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(v[i], 4.0);
	tsr_test_read1(r, 1, v, 8);
	ck_assert_double_eq(v[0], 1.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Mapping the root blocks launches on its subregions, and mapping a tile blocks the root. */
START_TEST(mapping_blocks_parents_and_children)
{
	tsr_region_t r = line();
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 1), "halves");
	tsr_region_t s0, s1;
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){0, 0, 0}, &s0));
	CK_TSR(tsr_partition_subregion(p, (const int64_t[3]){1, 0, 0}, &s1));
	tsr_task_t t = incr_task();
	tsr_accessor_t a = map_u(r);
	tsr_req_t q0 = tsr_req_region(s0, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_launch(t, 1, &q0, NULL, 0, NULL), TSR_EBUSY, "incr", "line", "u");
	tsr_req_t qp = tsr_req_part(p, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 1), 1, &qp, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EBUSY, "incr", "line", "u");
	CK_TSR(tsr_unmap(r, 0));
	CK_TSR(tsr_map(s1, 0, TSR_READ_WRITE, &a));
	tsr_req_t qr = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_launch(t, 1, &qr, NULL, 0, NULL), TSR_EBUSY, "incr", "line", "u");
	TSR_AT1(&a, double, 6) = 10.0;
	CK_TSR(tsr_unmap(s1, 0));
	CK_TSR(tsr_launch(t, 1, &qr, NULL, 0, NULL));
	double v[8];
	tsr_test_read1(r, 0, v, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(v[i], i == 6 ? 11.0 : 4.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(fill_copy_and_map_again_on_mapped_field_refused)
{
	tsr_region_t r = line(), o = tsr_test_region_f64("other", tsr_box1(0, 7));
	tsr_accessor_t a, b;
	CK_TSR(tsr_map(r, 0, TSR_READ, &a));
	double nine = 9.0;
	CK_TSR_ERR(tsr_fill(r, 0, &nine, sizeof nine), TSR_EBUSY, "line", "u");
	CK_TSR_ERR(tsr_copy(o, 0, r, 0), TSR_EBUSY, "line", "u");
	CK_TSR_ERR(tsr_map(r, 0, TSR_READ_WRITE, &b), TSR_EBUSY, "line", "u");
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(TSR_AT1(&a, double, i), 3.0);
	CK_TSR(tsr_unmap(r, 0));
	CK_TSR_ERR(tsr_unmap(r, 0), TSR_ESTATE, "line", "u");
	double v[8];
	tsr_test_read1(r, 0, v, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(v[i], 3.0);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_region_destroy(o));
}
END_TEST

START_TEST(destroy_while_mapped_refused)
{
	tsr_region_t r = line();
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 1), "halves");
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, 1, TSR_WRITE, &a));
	CK_TSR_ERR(tsr_region_destroy(r), TSR_EBUSY, "line", "w");
	CK_TSR_ERR(tsr_partition_destroy(p), TSR_EBUSY, "halves", "line", "w");
	for (int i = 0; i < 8; i++)
		TSR_AT1(&a, double, i) = -(double)i;
	CK_TSR(tsr_unmap(r, 1));
	double v[8];
	tsr_test_read1(r, 1, v, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(v[i], -(double)i);
	CK_TSR(tsr_partition_destroy(p));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Mapping an aliased (halo) subregion for writing maps a window of the region above the aliased
 * partition (StarPU's overlapping views are read-only): the write must land in the region and be
 * seen through the other, overlapping subregion. */
START_TEST(map_write_of_halo_subregion_writes_the_region)
{
	tsr_region_t r = line();
	tsr_partition_t g;
	tsr_region_t s, s0;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, 7), tsr_box1(0, 1),
					(const int64_t[3]){1, 0, 0}, "ghost", &g));
	CK_TSR(tsr_partition_subregion(g, (const int64_t[3]){1, 0, 0}, &s));
	CK_TSR(tsr_partition_subregion(g, (const int64_t[3]){0, 0, 0}, &s0));
	tsr_accessor_t a;
	CK_TSR(tsr_map(s, 0, TSR_READ_WRITE, &a));
	ck_assert_int_eq(a.lo[0], 3);
	ck_assert_int_eq(a.hi[0], 7);
	TSR_AT1(&a, double, 3) = 42.0; /* 3 is in both ghost subregions */
	CK_TSR(tsr_unmap(s, 0));
	CK_TSR(tsr_map(s0, 0, TSR_READ, &a));
	ck_assert_int_eq(a.hi[0], 4);
	ck_assert_double_eq(TSR_AT1(&a, double, 3), 42.0);
	ck_assert_double_eq(TSR_AT1(&a, double, 2), 3.0);
	CK_TSR(tsr_unmap(s0, 0));
	CK_TSR(tsr_map(r, 0, TSR_READ, &a));
	for (int i = 0; i < 8; i++)
		ck_assert_double_eq(TSR_AT1(&a, double, i), i == 3 ? 42.0 : 3.0);
	CK_TSR(tsr_unmap(r, 0));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_busy");
	TCase *tc = tsr_test_tcase("busy", 1);
	tcase_add_test(tc, launch_on_mapped_field_refused);
	tcase_add_test(tc, mapping_blocks_parents_and_children);
	tcase_add_test(tc, fill_copy_and_map_again_on_mapped_field_refused);
	tcase_add_test(tc, destroy_while_mapped_refused);
	tcase_add_test(tc, map_write_of_halo_subregion_writes_the_region);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
