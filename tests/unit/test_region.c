/* test_region.c: regions of 1, 2 and 3 dimensions with fields of every type: zero-initialised,
 * named, bounded, and written by a task through every field with the values read back on the
 * host. */
#include "tsr_test.h"

#define NTYPES 5
static const tsr_type_t all_types[NTYPES] = {TSR_F32, TSR_F64, TSR_I32, TSR_I64, TSR_BYTES};

/* Element (x,y,z) of an accessor of any type and dimension, as a byte pointer. */
static unsigned char *elem(const tsr_accessor_t *a, int64_t x, int64_t y, int64_t z)
{
	int64_t off = x - a->lo[0];
	if (a->dim >= 2)
		off += (y - a->lo[1]) * (int64_t)a->stride[1];
	if (a->dim >= 3)
		off += (z - a->lo[2]) * (int64_t)a->stride[2];
	return (unsigned char *)a->ptr + off * (int64_t)a->elem_size;
}

/* The value the test stores at linear index k for field type t (distinct per type and element). */
static void pattern(tsr_type_t t, int64_t k, unsigned char *out)
{
	switch (t) {
	case TSR_F32: {
		float v = (float)k + 0.5f;
		memcpy(out, &v, 4);
		break;
	}
	case TSR_F64: {
		double v = (double)k * 1.25 - 3.0;
		memcpy(out, &v, 8);
		break;
	}
	case TSR_I32: {
		int32_t v = -(int32_t)k - 1;
		memcpy(out, &v, 4);
		break;
	}
	case TSR_I64: {
		int64_t v = (k << 33) + 5;
		memcpy(out, &v, 8);
		break;
	}
	default:
		for (int j = 0; j < 16; j++)
			out[j] = (unsigned char)(k * 7 + j);
	}
}

static int64_t linear(tsr_box_t b, int64_t x, int64_t y, int64_t z)
{
	int64_t nx = b.hi[0] - b.lo[0] + 1, ny = b.dim >= 2 ? b.hi[1] - b.lo[1] + 1 : 1;
	return (x - b.lo[0]) + (b.dim >= 2 ? (y - b.lo[1]) * nx : 0) +
	       (b.dim >= 3 ? (z - b.lo[2]) * nx * ny : 0);
}

#define FOR_BOX(b, x, y, z)                                                                      \
	for (int64_t z = (b).dim >= 3 ? (b).lo[2] : 0; z <= ((b).dim >= 3 ? (b).hi[2] : 0); z++) \
		for (int64_t y = (b).dim >= 2 ? (b).lo[1] : 0;                                   \
		     y <= ((b).dim >= 2 ? (b).hi[1] : 0); y++)                                   \
			for (int64_t x = (b).lo[0]; x <= (b).hi[0]; x++)

static tsr_box_t acc_box(const tsr_accessor_t *a)
{
	tsr_box_t b = {a->dim, {a->lo[0], a->lo[1], a->lo[2]}, {a->hi[0], a->hi[1], a->hi[2]}};
	return b;
}

/* Task: write the pattern into all five fields (requirement 0, WRITE). args: region bounds. */
static void write_pattern(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const tsr_box_t *rb = args;
	for (int f = 0; f < NTYPES; f++) {
		tsr_accessor_t a;
		if (tsr_ctx_accessor(ctx, 0, f, all_types[f], TSR_WRITE, &a))
			return;
		FOR_BOX(acc_box(&a), x, y, z)
		pattern(all_types[f], linear(*rb, x, y, z), elem(&a, x, y, z));
	}
}

/* Task: count elements that differ from the pattern (READ), returned as an i64. */
static void count_wrong(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const tsr_box_t *rb = args;
	int64_t wrong = 0;
	unsigned char want[16];
	for (int f = 0; f < NTYPES; f++) {
		tsr_accessor_t a;
		if (tsr_ctx_accessor(ctx, 0, f, all_types[f], TSR_READ, &a))
			return;
		FOR_BOX(acc_box(&a), x, y, z)
		{
			pattern(all_types[f], linear(*rb, x, y, z), want);
			wrong += memcmp(want, elem(&a, x, y, z), a.elem_size) != 0;
		}
	}
	tsr_ctx_return(ctx, &wrong);
}

static void check_region(tsr_box_t bounds, const char *name)
{
	tsr_field_t fid[NTYPES];
	tsr_region_t r = tsr_test_region(name, bounds, NTYPES, all_types, NULL, fid);
	ck_assert_str_eq(tsr_region_name(r), name);
	tsr_box_t got;
	CK_TSR(tsr_region_bounds(r, &got));
	ck_assert_int_eq(got.dim, bounds.dim);
	for (int d = 0; d < bounds.dim; d++) {
		ck_assert_int_eq(got.lo[d], bounds.lo[d]);
		ck_assert_int_eq(got.hi[d], bounds.hi[d]);
	}
	/* zero-initialised, with bounds and strides of a dense array */
	for (int f = 0; f < NTYPES; f++) {
		tsr_accessor_t a;
		CK_TSR(tsr_map(r, fid[f], TSR_READ, &a));
		ck_assert_int_eq(a.dim, bounds.dim);
		ck_assert_uint_eq(a.stride[0], 1);
		if (bounds.dim >= 2)
			ck_assert_uint_eq(a.stride[1], bounds.hi[0] - bounds.lo[0] + 1);
		if (bounds.dim >= 3)
			ck_assert_uint_eq(a.stride[2], (bounds.hi[0] - bounds.lo[0] + 1) *
							       (bounds.hi[1] - bounds.lo[1] + 1));
		for (int d = 0; d < bounds.dim; d++) {
			ck_assert_int_eq(a.lo[d], bounds.lo[d]);
			ck_assert_int_eq(a.hi[d], bounds.hi[d]);
		}
		unsigned char zero[16] = {0};
		FOR_BOX(bounds, x, y, z)
		ck_assert(memcmp(elem(&a, x, y, z), zero, a.elem_size) == 0);
		CK_TSR(tsr_unmap(r, fid[f]));
	}
	tsr_task_t tw, tc;
	tw = tsr_test_task("write_pattern", write_pattern, TSR_NONE);
	tc = tsr_test_task("count_wrong", count_wrong, TSR_I64);
	tsr_req_t w = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0, 1, 2, 3, 4));
	tsr_req_t rd = tsr_req_region(r, TSR_READ, TSR_FIELDS(0, 1, 2, 3, 4));
	tsr_future_t fut;
	CK_TSR(tsr_launch(tw, 1, &w, &bounds, sizeof bounds, NULL));
	CK_TSR(tsr_launch(tc, 1, &rd, &bounds, sizeof bounds, &fut));
	int64_t wrong = -1;
	CK_TSR(tsr_future_wait(fut, &wrong, sizeof wrong));
	ck_assert_int_eq(wrong, 0);
	CK_TSR(tsr_future_destroy(fut));
	/* and the host sees the same values */
	for (int f = 0; f < NTYPES; f++) {
		tsr_accessor_t a;
		unsigned char want[16];
		CK_TSR(tsr_map(r, fid[f], TSR_READ, &a));
		FOR_BOX(bounds, x, y, z)
		{
			pattern(all_types[f], linear(bounds, x, y, z), want);
			ck_assert_msg(memcmp(elem(&a, x, y, z), want, a.elem_size) == 0,
				      "field %d at (%lld,%lld,%lld)", f, (long long)x, (long long)y,
				      (long long)z);
		}
		CK_TSR(tsr_unmap(r, fid[f]));
	}
	CK_TSR(tsr_region_destroy(r));
}

START_TEST(region_1d_all_types)
{
	check_region(tsr_box1(0, 36), "line");
}
END_TEST

START_TEST(region_1d_negative_lower_bound)
{
	check_region(tsr_box1(-10, 5), "shifted");
}
END_TEST

START_TEST(region_2d_all_types)
{
	check_region(tsr_box2(-3, 4, 10, 14), "plane");
}
END_TEST

START_TEST(region_3d_all_types)
{
	check_region(tsr_box3(1, 5, 0, 3, -2, 1), "cube");
}
END_TEST

START_TEST(region_single_element)
{
	check_region(tsr_box3(7, 7, 7, 7, 7, 7), "dot");
}
END_TEST

START_TEST(regions_do_not_share_storage)
{
	tsr_region_t a = tsr_test_region_f64("a", tsr_box1(0, 9)),
		     b = tsr_test_region_f64("b", tsr_box1(0, 9));
	double one = 1.0, two = 2.0, va[10], vb[10];
	CK_TSR(tsr_fill(a, 0, &one, sizeof one));
	CK_TSR(tsr_fill(b, 0, &two, sizeof two));
	tsr_test_read1(a, 0, va, 10);
	tsr_test_read1(b, 0, vb, 10);
	for (int i = 0; i < 10; i++) {
		ck_assert_double_eq(va[i], 1.0);
		ck_assert_double_eq(vb[i], 2.0);
	}
	CK_TSR(tsr_region_destroy(a));
	CK_TSR(tsr_region_destroy(b));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("region");
	TCase *tc = tsr_test_tcase("region", 1);
	tcase_add_test(tc, region_1d_all_types);
	tcase_add_test(tc, region_1d_negative_lower_bound);
	tcase_add_test(tc, region_2d_all_types);
	tcase_add_test(tc, region_3d_all_types);
	tcase_add_test(tc, region_single_element);
	tcase_add_test(tc, regions_do_not_share_storage);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
