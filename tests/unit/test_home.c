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

/* A region `name` asked for under TSR_HOME=value is refused with `code`, by a message that names
 * every string of `names` (NULL-terminated); no region is made. */
static void ck_home_refused(const char *value, const char *name, int code, const char *const *names)
{
	tsr_field_t f;
	tsr_fspace_t fs =
		tsr_test_fspace(1, (const tsr_type_t[]){TSR_F64}, (const char *const[]){"x"}, &f);
	tsr_region_t r = {0};
	setenv("TSR_HOME", value, 1);
	int rc = tsr_region_create(name, tsr_box1(0, 9), fs, &r);
	unsetenv("TSR_HOME");
	ck_assert_msg(rc == code, "TSR_HOME=%s: tsr_region_create returned %s (%s), expected %s",
		      value, tsr_err_name(rc), tsr_last_error(), tsr_err_name(code));
	tsr_test_names(tsr_last_error(), "tsr_region_create", names);
	ck_assert_msg(tsr_region_name(r) == NULL, "a refused region must not exist");
	CK_TSR(tsr_fspace_destroy(fs));
}

START_TEST(home_host_and_auto)
{
	tsr_test_home_round_trip("host", N);
	tsr_test_home_round_trip("auto", N);
	tsr_test_home_round_trip("", N);
}
END_TEST

START_TEST(home_unknown_value)
{
	tsr_region_t w = witness();
	ck_home_refused("gpu0", "temperature", TSR_EINVAL,
			(const char *const[]){"temperature", "TSR_HOME", "gpu0",
					      "host|device|auto|cuda", NULL});
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
		tsr_test_home_round_trip("device", N);
		tsr_test_home_round_trip("cuda", N);
	} else {
		ck_home_refused("cuda", "pressure", TSR_ENODEV,
				(const char *const[]){"pressure", "TSR_HOME=cuda",
						      "no device worker", NULL});
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
