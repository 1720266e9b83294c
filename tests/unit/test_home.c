/* test_home.c: where a root region's fields live (TSR_HOME, region.c's home_node). Without a
 * device worker the host path must stay as it was and the device requests must fail cleanly,
 * naming the region; with a CUDA or OpenCL worker the same tests check a device-homed region end
 * to end (tests/unit/test_device.c does that on an OpenCL device in every run). */
#include "tsr_test.h"

static const int64_t N = 64;

/* A region whose field x holds i + 0.5 at point i, set from the host. */
static tsr_region_t witness(void)
{
	tsr_region_t w = tsr_test_region_f64("witness", tsr_box1(0, N - 1));
	double v[64];
	for (int64_t i = 0; i < N; i++)
		v[i] = (double)i + 0.5;
	tsr_test_write1(w, 0, v, N);
	return w;
}

static void check_witness(tsr_region_t w)
{
	double v[64];
	tsr_test_read1(w, 0, v, N);
	for (int64_t i = 0; i < N; i++)
		ck_assert_msg(v[i] == (double)i + 0.5, "witness[%lld] = %g, expected %g",
			      (long long)i, v[i], (double)i + 0.5);
}

/* A fresh region is zero, takes a fill, a copy and a host write, wherever it lives. */
static void round_trip(const char *home)
{
	setenv("TSR_HOME", home, 1);
	tsr_region_t a = tsr_test_region_f64("a", tsr_box1(0, N - 1));
	tsr_region_t b = tsr_test_region_f64("b", tsr_box1(0, N - 1));
	unsetenv("TSR_HOME");
	double v[64];
	tsr_test_read1(a, 0, v, N);
	for (int64_t i = 0; i < N; i++)
		ck_assert_msg(v[i] == 0.0, "TSR_HOME=%s: new region a[%lld] = %g, expected 0", home,
			      (long long)i, v[i]);
	double seven = 7.25;
	CK_TSR(tsr_fill(a, 0, &seven, sizeof seven));
	CK_TSR(tsr_copy(a, 0, b, 0));
	tsr_test_read1(b, 0, v, N);
	for (int64_t i = 0; i < N; i++)
		ck_assert_msg(v[i] == 7.25,
			      "TSR_HOME=%s: b[%lld] = %g after fill and copy, expected 7.25", home,
			      (long long)i, v[i]);
	for (int64_t i = 0; i < N; i++)
		v[i] = -(double)i;
	tsr_test_write1(a, 0, v, N);
	CK_TSR(tsr_copy(a, 0, b, 0));
	tsr_test_read1(b, 0, v, N);
	for (int64_t i = 0; i < N; i++)
		ck_assert_msg(v[i] == -(double)i,
			      "TSR_HOME=%s: b[%lld] = %g after host write and copy", home,
			      (long long)i, v[i]);
	CK_TSR(tsr_region_destroy(a));
	CK_TSR(tsr_region_destroy(b));
}

START_TEST(home_host_and_auto)
{
	round_trip("host");
	round_trip("auto");
	round_trip("");
}
END_TEST

START_TEST(home_unknown_value)
{
	tsr_region_t w = witness();
	setenv("TSR_HOME", "gpu0", 1);
	tsr_field_t f;
	tsr_fspace_t fs =
		tsr_test_fspace(1, (const tsr_type_t[]){TSR_F64}, (const char *const[]){"x"}, &f);
	tsr_region_t r = {0};
	CK_TSR_ERR(tsr_region_create("temperature", tsr_box1(0, 9), fs, &r), TSR_EINVAL,
		   "temperature", "TSR_HOME", "gpu0", "host|device|auto|cuda");
	unsetenv("TSR_HOME");
	ck_assert_msg(tsr_region_name(r) == NULL, "a refused region must not exist");
	CK_TSR(tsr_fspace_destroy(fs));
	check_witness(w);
	CK_TSR(tsr_region_destroy(w));
}
END_TEST

/* TSR_HOME=device (and its spelling cuda): a device-homed region where a device worker runs (a
 * CUDA GPU, or an OpenCL device: tests/gpu/apps.gpu runs this file with one), a clean refusal
 * where none does. */
START_TEST(home_device)
{
	tsr_region_t w = witness();
	if (tsr_ncuda_workers() + tsr_nopencl_workers() > 0) {
		round_trip("device");
		round_trip("cuda");
	} else {
		setenv("TSR_HOME", "cuda", 1);
		tsr_field_t f;
		tsr_fspace_t fs = tsr_test_fspace(1, (const tsr_type_t[]){TSR_F64},
						  (const char *const[]){"x"}, &f);
		tsr_region_t r = {0};
		CK_TSR_ERR(tsr_region_create("pressure", tsr_box1(0, 9), fs, &r), TSR_ENODEV,
			   "pressure", "TSR_HOME=cuda", "no device worker");
		unsetenv("TSR_HOME");
		ck_assert_msg(tsr_region_name(r) == NULL, "a refused region must not exist");
		CK_TSR(tsr_fspace_destroy(fs));
	}
	check_witness(w);
	CK_TSR(tsr_region_destroy(w));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("home");
	TCase *tc = tsr_test_tcase("home", 1);
	tcase_add_test(tc, home_host_and_auto);
	tcase_add_test(tc, home_unknown_value);
	tcase_add_test(tc, home_device);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
