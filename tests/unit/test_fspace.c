/* test_fspace.c: field spaces hand out field ids in order of addition, keep their types and
 * sizes, and a region takes a snapshot of them (the field space may go away). */
#include "tsr_test.h"

START_TEST(fspace_ids_follow_order_of_addition)
{
	tsr_fspace_t fs;
	tsr_field_t a, b, c, d, e;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "a", TSR_F32, 0, &a));
	CK_TSR(tsr_fspace_add(fs, "b", TSR_F64, 0, &b));
	CK_TSR(tsr_fspace_add(fs, "c", TSR_I32, 0, &c));
	CK_TSR(tsr_fspace_add(fs, "d", TSR_I64, 0, &d));
	CK_TSR(tsr_fspace_add(fs, "e", TSR_BYTES, 24, &e));
	ck_assert_int_eq(a, 0);
	ck_assert_int_eq(b, 1);
	ck_assert_int_eq(c, 2);
	ck_assert_int_eq(d, 3);
	ck_assert_int_eq(e, 4);
	CK_TSR(tsr_fspace_destroy(fs));
}
END_TEST

START_TEST(two_fspaces_number_fields_independently)
{
	tsr_fspace_t f1, f2;
	tsr_field_t x, y, z;
	CK_TSR(tsr_fspace_create(&f1));
	CK_TSR(tsr_fspace_create(&f2));
	CK_TSR(tsr_fspace_add(f1, "x", TSR_F64, 0, &x));
	CK_TSR(tsr_fspace_add(f1, "y", TSR_F64, 0, &y));
	CK_TSR(tsr_fspace_add(f2, "z", TSR_I32, 0, &z));
	ck_assert_int_eq(y, 1);
	ck_assert_int_eq(z, 0);
	ck_assert_uint_ne(f1.id, f2.id);
	CK_TSR(tsr_fspace_destroy(f1));
	CK_TSR(tsr_fspace_destroy(f2));
}
END_TEST

/* The region's fields keep type and element size: a map of each shows them. */
START_TEST(region_keeps_field_types_after_fspace_destroy)
{
	tsr_field_t fid[5];
	tsr_region_t r =
		tsr_test_region("typed", tsr_box1(0, 3), 5,
				(const tsr_type_t[]){TSR_F32, TSR_F64, TSR_I32, TSR_I64, TSR_BYTES},
				NULL, fid);
	static const tsr_type_t types[5] = {TSR_F32, TSR_F64, TSR_I32, TSR_I64, TSR_BYTES};
	static const size_t sizes[5] = {4, 8, 4, 8, 16};
	for (int i = 0; i < 5; i++) {
		tsr_accessor_t a;
		CK_TSR(tsr_map(r, fid[i], TSR_READ, &a));
		ck_assert_int_eq(a.type, types[i]);
		ck_assert_uint_eq(a.elem_size, sizes[i]);
		CK_TSR(tsr_unmap(r, fid[i]));
	}
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A field added to the space after the region exists is not part of that region. */
START_TEST(region_ignores_fields_added_later)
{
	tsr_field_t f0, f1;
	tsr_fspace_t fs;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "early", TSR_F64, 0, &f0));
	tsr_region_t r1, r2;
	CK_TSR(tsr_region_create("before", tsr_box1(0, 3), fs, &r1));
	CK_TSR(tsr_fspace_add(fs, "late", TSR_I32, 0, &f1));
	CK_TSR(tsr_region_create("after", tsr_box1(0, 3), fs, &r2));
	int v = 7;
	CK_TSR(tsr_fill(r2, f1, &v, sizeof v));
	CK_TSR_ERR(tsr_fill(r1, f1, &v, sizeof v), TSR_ENOFIELD, "before");
	tsr_accessor_t a;
	CK_TSR(tsr_map(r2, f1, TSR_READ, &a));
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(TSR_AT1(&a, int32_t, i), 7);
	CK_TSR(tsr_unmap(r2, f1));
	CK_TSR(tsr_region_destroy(r1));
	CK_TSR(tsr_region_destroy(r2));
	CK_TSR(tsr_fspace_destroy(fs));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fspace");
	TCase *tc = tsr_test_tcase("fspace", 1);
	tcase_add_test(tc, fspace_ids_follow_order_of_addition);
	tcase_add_test(tc, two_fspaces_number_fields_independently);
	tcase_add_test(tc, region_keeps_field_types_after_fspace_destroy);
	tcase_add_test(tc, region_ignores_fields_added_later);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
