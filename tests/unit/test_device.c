/* test_device.c: Tessera with a memory node of its own, an OpenCL device (POCL's, on the CPU, on
 * every machine that has it; any OpenCL GPU elsewhere). Each test is one of the failures of the
 * first run on an H100, where no test had ever had a second memory node: host maps of a
 * device-homed field, reductions with only device workers, Tessera's own tasks where no CPU
 * worker runs, and the errors a user gets when a task cannot run there. Without an OpenCL device
 * the whole file is skipped (a TAP plan of 0). */
#include <starpu_config.h>
#ifndef STARPU_USE_OPENCL
#include <stdio.h>
int main(void)
{
	printf("1..0 # SKIP the StarPU this tree is built with has no OpenCL\n");
	return 0;
}
#else
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tsr_test.h"

enum { N = 64, NTILES = 4 };

/* x += v over a 1-D f64 view; the dot of a view with itself, folded into a one-element sum. */
static const char *kernels =
	"#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
	"kernel void add(global uchar *p, ulong off, uint n, double v)\n"
	"{ uint i = get_global_id(0); if (i < n) ((global double *)(p + off))[i] += v; }\n"
	"kernel void sumsq(global uchar *p, ulong off, uint n, global double *acc)\n"
	"{ double s = 0; global double *x = (global double *)(p + off);\n"
	"  for (uint i = 0; i < n; i++) s += x[i] * x[i]; acc[0] += s; }\n"
	"kernel void fold_max(global uchar *p, ulong off, uint n, double v)\n"
	"{ uint i = get_global_id(0); if (i < n) { global double *x = (global double *)(p + off);\n"
	"  x[i] = v > x[i] ? v : x[i]; } }\n";

static cl_ulong extent(const tsr_accessor_t *a)
{
	return (cl_ulong)(a->hi[0] - a->lo[0] + 1);
}

/* One kernel over an accessor's elements (one work-item each, or a single one for a sum):
 * buffer, offset, count, then one more argument. */
static void run_kernel(tsr_ctx_t *ctx, const char *name, const tsr_accessor_t *a, size_t last_size,
		       const void *last, int single)
{
	cl_mem m = a->ptr;
	cl_ulong off = a->offset;
	cl_uint n = (cl_uint)extent(a);
	const tsr_kernel_arg_t args[] = {TSR_KARG(m),
					 TSR_KARG(off),
					 TSR_KARG(n),
					 {last_size, last}};
	size_t global = single ? 1 : n;

	tsr_ctx_opencl_launch(ctx, name, args, 4, 1, &global, NULL);
}

/* add: x += 1.5 (READ_WRITE) */
static void add_cl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	double v = 1.5;
	if (!tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &a))
		run_kernel(ctx, "add", &a, sizeof v, &v, 0);
}

/* sumsq: returns the sum of x^2 over the point's view, folded into the launch's TSR_SUM */
static void sumsq_cl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	cl_mem slot = tsr_ctx_return_slot(ctx);
	if (!tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &a) && slot)
		run_kernel(ctx, "sumsq", &a, sizeof slot, &slot, 1);
}

/* raise: REDUCE(max) of the point's color + 100 into every element of its (aliased) view */
static void raise_cl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	int64_t p[3];
	tsr_ctx_point(ctx, p);
	double v = 100.0 + (double)p[0];
	if (!tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_REDUCE(TSR_MAX), &a))
		run_kernel(ctx, "fold_max", &a, sizeof v, &v, 0);
}

static void add_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &a))
		return;
	for (int64_t x = a.lo[0]; x <= a.hi[0]; x++)
		TSR_AT1(&a, double, x) += 1.5;
}

static void nothing_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
}

/* Whether StarPU starts an OpenCL worker here: asked in a child process, which then stops. */
static int opencl_device_present(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		tsr_config_t cfg;
		tsr_config_init(&cfg);
		cfg.nopencl = 1;
		cfg.quiet = 1;
		int ok = tsr_init(&cfg) == TSR_OK && tsr_nopencl_workers() == 1;
		if (tsr_ncpu_workers() >= 0)
			tsr_finalize();
		_exit(ok ? 0 : 1);
	}
	int status = 0;
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

static int ncpu_of_tcase;
static const char *sched_of_tcase; /* NULL: StarPU's default */

static void device_setup(void)
{
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.nopencl = 1;
	cfg.ncpu = ncpu_of_tcase;
	cfg.sched = sched_of_tcase;
	cfg.quiet = 1;
	int rc = tsr_init(&cfg);
	ck_assert_msg(rc == TSR_OK, "tsr_init: %s: %s", tsr_err_name(rc), tsr_last_error());
	ck_assert_int_eq(tsr_nopencl_workers(), 1);
	ck_assert_int_eq(tsr_ncpu_workers(), ncpu_of_tcase);
	CK_TSR(tsr_opencl_program("test_device", kernels, NULL));
}

static tsr_task_t task_of(const char *name, tsr_variant_fn cpu, tsr_variant_fn opencl,
			  tsr_type_t ret)
{
	tsr_task_t t;
	tsr_task_desc_t d = {.name = name, .cpu = cpu, .opencl = opencl, .ret_type = ret};
	CK_TSR(tsr_task_register(&d, &t));
	return t;
}

/* values[i] = i, written through a host map (the map's pointer must be a host address). */
static void write_ramp(tsr_region_t r)
{
	tsr_accessor_t a;
	CK_TSR(tsr_map(r, 0, TSR_WRITE, &a));
	ck_assert_msg(a.ptr != NULL, "tsr_map of a field homed on the device gave a NULL pointer");
	for (int64_t i = 0; i < N; i++)
		TSR_AT1(&a, double, i) = (double)i;
	CK_TSR(tsr_unmap(r, 0));
}

static void check_values(tsr_region_t r, double add, const char *what)
{
	double v[N];
	tsr_test_read1(r, 0, v, N);
	for (int64_t i = 0; i < N; i++)
		ck_assert_msg(v[i] == (double)i + add, "%s: x[%lld] = %g, expected %g", what,
			      (long long)i, v[i], (double)i + add);
}

/* NTILES tiles of r, and the same tiles grown by one point on each side. */
static void tiles_and_halo(tsr_region_t r, tsr_partition_t *tiles, tsr_partition_t *halo)
{
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, NTILES - 1), "tiles", tiles));
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, N - 1), tsr_box1(0, NTILES - 1),
					(int64_t[3]){1, 0, 0}, "halo", halo));
}

/* A device-homed field (the default with only device workers): a host map gives a pointer the
 * host can use, for writing and for reading what device tasks wrote. */
START_TEST(map_of_a_device_homed_field_gives_a_host_pointer)
{
	tsr_region_t r = tsr_test_region_f64("temperature", tsr_box1(0, N - 1));
	write_ramp(r);
	tsr_partition_t tiles = tsr_test_tiles(r, tsr_box1(0, NTILES - 1), "tiles");
	tsr_task_t add = task_of("add", add_cpu, add_cl, TSR_NONE);
	tsr_field_t x = 0;
	tsr_req_t q = tsr_req_part(tiles, TSR_READ_WRITE, 1, &x);
	for (int k = 0; k < 3; k++)
		CK_TSR(tsr_index_launch(add, tsr_box1(0, NTILES - 1), 1, &q, NULL, 0,
					TSR_REDOP_NONE, NULL));
	check_values(r, 4.5, "after 3 launches of add");
	CK_TSR(tsr_partition_destroy(tiles));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* An index launch whose points' returns fold into a future (partial values and their fold on
 * the device), and REDUCE(max) through an aliased partition (private buffers, then their folds). */
START_TEST(reductions_run_on_the_device)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	write_ramp(r);
	tsr_partition_t tiles, halo;
	tiles_and_halo(r, &tiles, &halo);
	tsr_field_t x = 0;
	tsr_task_t sumsq = task_of("sumsq", NULL, sumsq_cl, TSR_F64);
	tsr_req_t q = tsr_req_part(tiles, TSR_READ, 1, &x);
	tsr_future_t f;
	CK_TSR(tsr_index_launch(sumsq, tsr_box1(0, NTILES - 1), 1, &q, NULL, 0, TSR_SUM, &f));
	double got, want = 0;
	for (int64_t i = 0; i < N; i++)
		want += (double)i * (double)i;
	CK_TSR(tsr_future_take(f, &got, sizeof got));
	ck_assert_msg(got == want, "sum of squares %g, expected %g", got, want);
	/* every element ends at the largest color whose halo tile covers it, plus 100 */
	tsr_task_t raise = task_of("raise", NULL, raise_cl, TSR_NONE);
	tsr_req_t rq = tsr_req_part(halo, TSR_REDUCE(TSR_MAX), 1, &x);
	CK_TSR(tsr_index_launch(raise, tsr_box1(0, NTILES - 1), 1, &rq, NULL, 0, TSR_REDOP_NONE,
				NULL));
	double v[N];
	tsr_test_read1(r, 0, v, N);
	const int64_t per = N / NTILES;
	for (int64_t i = 0; i < N; i++) {
		int64_t top = (i + 1) / per < NTILES ? (i + 1) / per : NTILES - 1;
		double expect = (double)i > 100.0 + (double)top ? (double)i : 100.0 + (double)top;
		ck_assert_msg(v[i] == expect, "after REDUCE(max): x[%lld] = %g, expected %g",
			      (long long)i, v[i], expect);
	}
	CK_TSR(tsr_partition_destroy(halo));
	CK_TSR(tsr_partition_destroy(tiles));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* TSR_HOME=device, its spelling cuda, and host, whatever workers run: a fresh region is zero and
 * takes a fill, a copy and a host write (Tessera's own fill and copy tasks run where the data
 * is). */
START_TEST(fill_copy_and_host_writes_on_either_home)
{
	tsr_test_home_round_trip("device", N);
	tsr_test_home_round_trip("host", N);
	tsr_test_home_round_trip("cuda", N);
}
END_TEST

/* Host-homed data and only device workers: a read through halo tiles after writes through tiles
 * needs Tessera's syncs, which must run although no CPU worker does. */
START_TEST(host_home_with_device_workers_switches_partitions)
{
	setenv("TSR_HOME", "host", 1);
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	unsetenv("TSR_HOME");
	write_ramp(r);
	tsr_partition_t tiles, halo;
	tiles_and_halo(r, &tiles, &halo);
	tsr_field_t x = 0;
	tsr_task_t add = task_of("add", add_cpu, add_cl, TSR_NONE);
	tsr_task_t sumsq = task_of("sumsq", NULL, sumsq_cl, TSR_F64);
	tsr_req_t wq = tsr_req_part(tiles, TSR_READ_WRITE, 1, &x);
	tsr_req_t rq = tsr_req_part(halo, TSR_READ, 1, &x);
	for (int k = 0; k < 2; k++) {
		CK_TSR(tsr_index_launch(add, tsr_box1(0, NTILES - 1), 1, &wq, NULL, 0,
					TSR_REDOP_NONE, NULL));
		tsr_future_t f;
		CK_TSR(tsr_index_launch(sumsq, tsr_box1(0, NTILES - 1), 1, &rq, NULL, 0, TSR_SUM,
					&f));
		double got, want = 0;
		const int64_t per = N / NTILES;
		for (int64_t c = 0; c < NTILES; c++)
			for (int64_t i = c * per - 1; i <= (c + 1) * per; i++)
				if (i >= 0 && i < N)
					want += ((double)i + 1.5 * (k + 1)) *
						((double)i + 1.5 * (k + 1));
		CK_TSR(tsr_future_take(f, &got, sizeof got));
		ck_assert_msg(got == want, "step %d: halo sum of squares %g, expected %g", k, got,
			      want);
	}
	check_values(r, 3.0, "after 2 steps");
	CK_TSR(tsr_partition_destroy(halo));
	CK_TSR(tsr_partition_destroy(tiles));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* What cannot run on the device is refused at the launch, with a message that says why. */
START_TEST(what_only_a_cpu_can_run_is_refused_by_name)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	tsr_field_t x = 0;
	tsr_task_t cpu_only = task_of("host_stats", nothing_cpu, NULL, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_READ, 1, &x);
	CK_TSR_ERR(tsr_launch(cpu_only, 1, &q, NULL, 0, NULL), TSR_ENODEV, "host_stats",
		   "CPU variant only", "0 CPU", "1 OpenCL");
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* A program that does not build, and a kernel no program defines: errors, not crashes. */
START_TEST(opencl_programs_and_kernels_fail_cleanly)
{
	CK_TSR_ERR(tsr_opencl_program("broken",
				      "kernel void k(global int *p) { p[0] = undefined_name; }",
				      NULL),
		   TSR_EINVAL, "broken", "does not build");
	CK_TSR_ERR(tsr_opencl_program("", "", NULL), TSR_EINVAL, "name");
	CK_TSR_ERR(tsr_opencl_program("nosource", NULL, NULL), TSR_EINVAL, "nosource",
		   "null source");
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	write_ramp(r);
	CK_TSR(tsr_fence());
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static void missing_kernel_cl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_ctx_opencl_kernel(ctx, "no_such_kernel");
}

START_TEST(a_kernel_no_program_defines_fails_its_task)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	tsr_field_t x = 0;
	tsr_task_t t = task_of("lost", NULL, missing_kernel_cl, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_READ_WRITE, 1, &x);
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "lost", "no_such_kernel");
	double zero = 0;
	CK_TSR(tsr_fill(r, 0, &zero, sizeof zero)); /* heals the poisoned field */
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* tsr_ctx_opencl_launch with what OpenCL refuses: each fails its task, with a message that names
 * the kernel and what was wrong, and the next fence reports it. */
static void wrong_arg_size_cl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &a))
		return;

	cl_mem m = a.ptr;
	cl_ulong off = a.offset;
	cl_uint n = (cl_uint)extent(&a);
	char v = 1; /* the kernel's last argument is a double */
	const tsr_kernel_arg_t ka[] = {TSR_KARG(m), TSR_KARG(off), TSR_KARG(n), TSR_KARG(v)};
	size_t global = n;
	ck_assert_int_eq(tsr_ctx_opencl_launch(ctx, "add", ka, 4, 1, &global, NULL), TSR_ETASK);
}

static void four_dimensions_cl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	size_t global[4] = {1, 1, 1, 1};
	ck_assert_int_eq(tsr_ctx_opencl_launch(ctx, "add", NULL, 0, 4, global, NULL), TSR_ETASK);
}

static void missing_kernel_launch_cl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	size_t global = 1;
	ck_assert_int_eq(tsr_ctx_opencl_launch(ctx, "no_such_kernel", NULL, 0, 1, &global, NULL),
			 TSR_ETASK);
}

/* One launch of `variant` on the region's field 0, then the fence's error, then a fill that heals
 * the poisoned field. */
static void expect_launch_error(tsr_region_t r, const char *task, tsr_variant_fn variant,
				const char *what1, const char *what2)
{
	tsr_field_t x = 0;
	tsr_task_t t = task_of(task, NULL, variant, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_READ_WRITE, 1, &x);
	double zero = 0;

	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, task, what1, what2);
	CK_TSR(tsr_fill(r, 0, &zero, sizeof zero));
}

START_TEST(opencl_launch_errors_fail_the_task_naming_the_kernel)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));

	expect_launch_error(r, "wrong_size", wrong_arg_size_cl,
			    "kernel 'add': argument 3 (1 bytes)", "Invalid argument size (-51)");
	expect_launch_error(r, "four_dims", four_dimensions_cl, "kernel 'add'",
			    "dimensions go from 1 to 3");
	expect_launch_error(r, "lost_kernel", missing_kernel_launch_cl, "no_such_kernel",
			    "no OpenCL program loaded");

	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Every point task on the OpenCL worker: what it writes is then on the device only. */
static void on_the_device(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	m->kind = TSR_WORKER_OPENCL;
}

/* Writes through tiles on the device, then through a nested partition of one tile that is
 * destroyed (its pieces are handed to the root), then a read of the whole region: the tiles the
 * nested partition never touched must still be read from the device. Handing over once made the
 * root claim it held every write, and the host then read zeros there (the H100's wrong answers
 * with GPU + CPUs; oracle seed 61230). */
START_TEST(handing_pieces_to_the_root_keeps_the_other_tiles_writes)
{
	setenv("TSR_HOME", "host", 1);
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	unsetenv("TSR_HOME");
	write_ramp(r);
	CK_TSR(tsr_set_mapper(on_the_device, NULL));
	tsr_partition_t tiles, inner;
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, NTILES - 1), "tiles", &tiles));
	tsr_field_t x = 0;
	tsr_task_t add = task_of("add", add_cpu, add_cl, TSR_NONE);
	tsr_req_t q = tsr_req_part(tiles, TSR_READ_WRITE, 1, &x);
	CK_TSR(tsr_index_launch(add, tsr_box1(0, NTILES - 1), 1, &q, NULL, 0, TSR_REDOP_NONE,
				NULL));
	tsr_region_t tile1;
	CK_TSR(tsr_partition_subregion(tiles, (int64_t[3]){1, 0, 0}, &tile1));
	CK_TSR(tsr_partition_tiles(tile1, tsr_box1(0, 1), "inner", &inner));
	tsr_req_t iq = tsr_req_part(inner, TSR_READ_WRITE, 1, &x);
	CK_TSR(tsr_index_launch(add, tsr_box1(0, 0), 1, &iq, NULL, 0, TSR_REDOP_NONE, NULL));
	CK_TSR(tsr_partition_destroy(inner));
	double v[N];
	tsr_test_read1(r, 0, v, N);
	const int64_t per = N / NTILES;
	for (int64_t i = 0; i < N; i++) {
		double expect = (double)i + (i >= per && i < per + per / 2 ? 3.0 : 1.5);
		ck_assert_msg(v[i] == expect, "x[%lld] = %g, expected %g", (long long)i, v[i],
			      expect);
	}
	CK_TSR(tsr_set_mapper(NULL, NULL));
	CK_TSR(tsr_partition_destroy(tiles));
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static void ncpu0(void)
{
	ncpu_of_tcase = 0;
	sched_of_tcase = NULL;
	device_setup();
}

static void ncpu1(void)
{
	ncpu_of_tcase = 1;
	sched_of_tcase = NULL;
	device_setup();
}

/* eager with an OpenCL worker beside 2 CPU workers: the workers do not all run the same tasks,
 * so eager keeps its own queue behind the gate, without the handoff's slots (idle.c) */
static void eager_ncpu2(void)
{
	ncpu_of_tcase = 2;
	sched_of_tcase = "eager";
	device_setup();
}

START_TEST(eager_beside_a_device_keeps_its_own_queue)
{
	ck_assert_str_eq(tsr_idle_name(), "yield+gate");
}
END_TEST

static TCase *device_tcase(const char *name, void (*setup)(void))
{
	TCase *tc = tcase_create(name);
	tcase_add_checked_fixture(tc, setup, tsr_test_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, map_of_a_device_homed_field_gives_a_host_pointer);
	tcase_add_test(tc, reductions_run_on_the_device);
	tcase_add_test(tc, fill_copy_and_host_writes_on_either_home);
	tcase_add_test(tc, host_home_with_device_workers_switches_partitions);
	tcase_add_test(tc, opencl_programs_and_kernels_fail_cleanly);
	tcase_add_test(tc, a_kernel_no_program_defines_fails_its_task);
	tcase_add_test(tc, opencl_launch_errors_fail_the_task_naming_the_kernel);
	return tc;
}

int main(void)
{
	/* POCL's device is a CPU: StarPU skips it otherwise */
	setenv("STARPU_OPENCL_ON_CPUS", "1", 0);
	/* StarPU keeps one bus calibration per host name, and counting POCL's device changes it:
	 * test processes with and without it rewrote each other's files as they read them (an
	 * assertion in load_bus_affinity_file_content, make check -j2). Runs with the device count
	 * under a name of their own. */
	setenv("STARPU_HOSTNAME", "opencl-on-cpus", 0);
	if (!opencl_device_present()) {
		printf("1..0 # SKIP no OpenCL device (an OpenCL platform such as pocl-opencl-icd, "
		       "and a StarPU with OpenCL)\n");
		return 0; /* the TAP plan says it */
	}
	Suite *s = suite_create("device");
	TCase *alone = device_tcase("opencl_alone", ncpu0);
	tcase_add_test(alone, what_only_a_cpu_can_run_is_refused_by_name);
	suite_add_tcase(s, alone);
	TCase *both = device_tcase("opencl_and_cpu", ncpu1);
	tcase_add_test(both, handing_pieces_to_the_root_keeps_the_other_tiles_writes);
	suite_add_tcase(s, both);
	TCase *eager = device_tcase("opencl_and_cpus_under_eager", eager_ncpu2);
	tcase_add_test(eager, eager_beside_a_device_keeps_its_own_queue);
	tcase_add_test(eager, handing_pieces_to_the_root_keeps_the_other_tiles_writes);
	suite_add_tcase(s, eager);
	return tsr_test_run(s);
}
#endif
