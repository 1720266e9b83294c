/* test_device_adversarial.c: the device surface (OpenCL programs, kernels and launches, reduction
 * operators) tried as a careless or hostile user would: null and garbage arguments, wrong counts
 * and sizes, names at every length limit, calls from the wrong place (the host, a CPU variant,
 * another thread). Each call fails with a message naming the object, and nothing hangs, crashes,
 * fails a later fence or writes outside the task's regions. The tests that need an OpenCL device
 * (POCL's on the CPU, STARPU_OPENCL_ON_CPUS=1) are left out where there is none. */
#include <starpu_config.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>
#include "tsr_test.h"

#ifdef STARPU_USE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#endif

enum { N = 16 };

/* ------------------------------------------------------------ shared pieces */
static int ncpu_of_tcase, nopencl_of_tcase;

static void setup(void)
{
	tsr_config_t cfg = tsr_test_config();
	cfg.ncpu = ncpu_of_tcase;
	cfg.nopencl = nopencl_of_tcase;
	int rc = tsr_init(&cfg);
	ck_assert_msg(rc == TSR_OK, "tsr_init: %s: %s", tsr_err_name(rc), tsr_last_error());
}

static tsr_task_t task_of(const char *name, tsr_variant_fn cpu, tsr_variant_fn opencl,
			  tsr_variant_fn cuda, tsr_type_t ret)
{
	tsr_task_t t;
	tsr_task_desc_t d = {.name = name,
			     .cpu = cpu,
			     .opencl = opencl,
			     .cuda = cuda,
			     .ret_type = ret};
	CK_TSR(tsr_task_register(&d, &t));
	return t;
}

static void fill(tsr_region_t r, double v)
{
	CK_TSR(tsr_fill(r, 0, &v, sizeof v));
}

/* Every element of r's field 0 is v. */
static void ck_all(tsr_region_t r, double v, const char *what)
{
	double x[N];
	tsr_test_read1(r, 0, x, N);
	for (int i = 0; i < N; i++)
		ck_assert_msg(x[i] == v, "%s: element %d is %g, expected %g", what, i, x[i], v);
}

/* A sum operator registered by the user (its identity and fold are CPU code). */
static void sum_identity(void *e)
{
	*(double *)e = 0.0;
}

static void sum_fold(void *acc, const void *v)
{
	*(double *)acc += *(const double *)v;
}

static tsr_redop_t user_sum(void)
{
	tsr_redop_t op;
	CK_TSR(tsr_redop_register("my_sum", TSR_F64, 0, sum_identity, sum_fold, &op));
	return op;
}

static void nothing(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
}

/* The CPU variant of a REDUCE(my_sum) task: adds 1 + its color to every element of its view. */
static void add_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	int64_t p[3] = {0, 0, 0};
	tsr_ctx_point(ctx, p);
	const tsr_redop_t *op = args;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_REDUCE(*op), &a))
		return;
	for (int64_t x = a.lo[0]; x <= a.hi[0]; x++)
		TSR_AT1(&a, double, x) += 1.0 + (double)p[0];
}

/* ------------------------------------------------ registered operators and placement */
/* A task without a CPU variant that reduces with a registered operator: refused at the launch,
 * naming the task, the operator and what is missing (it used to wait in starpu_task_submit for a
 * CPU that could run it, for ever). */
static void ck_device_only_refused(tsr_task_t t, const char *task, tsr_redop_t op,
				   const char *variant)
{
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	tsr_partition_t tiles = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	tsr_field_t x = 0;
	tsr_req_t q = tsr_req_part(tiles, TSR_REDUCE(op), 1, &x);

	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_ENODEV, task, "my_sum", variant, "CPU variant", "tiles");
	tsr_region_t sub;
	CK_TSR(tsr_partition_subregion(tiles, (const int64_t[3]){1, 0, 0}, &sub));
	tsr_req_t sq = tsr_req_region(sub, TSR_REDUCE(op), 1, &x);
	CK_TSR_ERR(tsr_launch(t, 1, &sq, NULL, 0, NULL), TSR_ENODEV, task, "my_sum", variant);
	CK_TSR(tsr_fence());
	CK_TSR(tsr_region_destroy(r));
}

START_TEST(a_device_only_task_reducing_with_a_registered_operator_is_refused)
{
	tsr_redop_t op = user_sum();
	ck_device_only_refused(task_of("ocl_reduce", NULL, nothing, NULL, TSR_NONE), "ocl_reduce",
			       op, "an OpenCL variant only");
	ck_device_only_refused(task_of("cuda_reduce", NULL, NULL, nothing, TSR_NONE), "cuda_reduce",
			       op, "a CUDA variant only");
}
END_TEST

/* The same for the reduction of an index launch's returns. */
START_TEST(device_only_returns_reduced_by_a_registered_operator_are_refused)
{
	tsr_redop_t op = user_sum();
	tsr_task_t t = task_of("ocl_value", NULL, nothing, NULL, TSR_F64);
	tsr_future_t f = {0};
	CK_TSR_ERR(tsr_run(t, &(tsr_launch_t){.domain = tsr_box1(0, 3), .redop = op, .result = &f}),
		   TSR_ENODEV, "ocl_value", "my_sum", "returns", "OpenCL variant only");
	ck_assert_int_eq(f.id, 0);
	CK_TSR(tsr_fence());
}
END_TEST

/* A task with a CPU variant reduces with a registered operator on the CPU workers, whatever else
 * runs, with the values of a sequential run. */
START_TEST(a_registered_operator_runs_its_task_on_the_cpus)
{
	tsr_redop_t op = user_sum();
	tsr_task_t t = task_of("add_both", add_cpu, nothing, NULL, TSR_NONE);
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	tsr_partition_t halo;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, N - 1), tsr_box1(0, 3),
					(const int64_t[3]){1, 0, 0}, "halo", &halo));
	fill(r, 10.0);
	tsr_field_t x = 0;
	tsr_req_t q = tsr_req_part(halo, TSR_REDUCE(op), 1, &x);
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, &op, sizeof op, TSR_REDOP_NONE, NULL));

	double v[N];
	tsr_test_read1(r, 0, v, N);
	for (int i = 0; i < N; i++) {
		double want = 10.0;
		for (int c = 0; c < 4; c++)
			if (i >= c * 4 - 1 && i <= c * 4 + 4)
				want += 1.0 + c;
		ck_assert_msg(v[i] == want, "x[%d] = %g, expected %g", i, v[i], want);
	}
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* With no CPU worker, a registered operator cannot run anywhere: the message names it. */
START_TEST(no_cpu_worker_refuses_a_registered_operator_by_name)
{
	tsr_redop_t op = user_sum();
	tsr_task_t t = task_of("add_both", add_cpu, nothing, NULL, TSR_NONE);
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	tsr_field_t x = 0;
	tsr_req_t q = tsr_req_region(r, TSR_REDUCE(op), 1, &x);
	CK_TSR_ERR(tsr_launch(t, 1, &q, &op, sizeof op, NULL), TSR_ENODEV, "add_both", "my_sum",
		   "0 CPU", "no worker can run it");
	CK_TSR(tsr_fence());
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static void to_opencl(const tsr_map_query_t *q, tsr_mapping_t *m, void *arg)
{
	m->kind = TSR_WORKER_OPENCL;
}

/* A mapper that sends such a task to a device is refused too, before any point is submitted. */
START_TEST(a_mapper_cannot_send_a_registered_operator_to_a_device)
{
	tsr_redop_t op = user_sum();
	tsr_task_t t = task_of("add_both", add_cpu, nothing, NULL, TSR_NONE);
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	tsr_partition_t tiles = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	fill(r, 1.0);
	CK_TSR(tsr_set_mapper(to_opencl, NULL));
	tsr_field_t x = 0;
	tsr_req_t q = tsr_req_part(tiles, TSR_REDUCE(op), 1, &x);
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, &op, sizeof op, TSR_REDOP_NONE, NULL),
		   TSR_ENODEV, "mapper", "add_both", "OpenCL worker", "my_sum");
	CK_TSR(tsr_set_mapper(NULL, NULL));
	ck_all(r, 1.0, "after the refused launch");
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* StarPU's own reduction (TSR_REDUX=unordered) of a registered operator also stays on CPUs. */
START_TEST(an_unordered_registered_reduction_stays_on_the_cpus)
{
	CK_TSR(tsr_finalize());
	setenv("TSR_REDUX", "unordered", 1);
	setup();
	unsetenv("TSR_REDUX");
	tsr_redop_t op = user_sum();
	tsr_task_t t = task_of("add_both", add_cpu, nothing, NULL, TSR_NONE);
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	tsr_partition_t tiles = tsr_test_tiles(r, tsr_box1(0, 3), "tiles");
	fill(r, 1.0);
	tsr_field_t x = 0;
	tsr_req_t q = tsr_req_part(tiles, TSR_REDUCE(op), 1, &x);
	for (int k = 0; k < 3; k++)
		CK_TSR(tsr_index_launch(t, tsr_box1(0, 3), 1, &q, &op, sizeof op, TSR_REDOP_NONE,
					NULL));
	double v[N];
	tsr_test_read1(r, 0, v, N);
	for (int i = 0; i < N; i++)
		ck_assert_msg(v[i] == 1.0 + 3.0 * (1.0 + i / 4), "x[%d] = %g", i, v[i]);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* tsr_redop_register with every wrong argument, and names at the length limit. */
START_TEST(redop_register_refuses_garbage_by_name)
{
	tsr_redop_t op;
	char name63[64], name64[65];
	memset(name63, 'o', 63);
	name63[63] = '\0';
	memset(name64, 'o', 64);
	name64[64] = '\0';

	CK_TSR_ERR(tsr_redop_register(NULL, TSR_F64, 0, sum_identity, sum_fold, &op), TSR_EINVAL,
		   "name missing");
	CK_TSR_ERR(tsr_redop_register("", TSR_F64, 0, sum_identity, sum_fold, &op), TSR_EINVAL,
		   "name missing");
	CK_TSR_ERR(tsr_redop_register(name64, TSR_F64, 0, sum_identity, sum_fold, &op), TSR_EINVAL,
		   "longer than 63");
	CK_TSR_ERR(tsr_redop_register("op", TSR_F64, 0, NULL, sum_fold, &op), TSR_EINVAL, "'op'",
		   "identity");
	CK_TSR_ERR(tsr_redop_register("op", TSR_F64, 0, sum_identity, NULL, &op), TSR_EINVAL,
		   "'op'", "fold");
	CK_TSR_ERR(tsr_redop_register("op", TSR_F64, 0, sum_identity, sum_fold, NULL), TSR_EINVAL,
		   "'op'", "output");
	CK_TSR_ERR(tsr_redop_register("op", TSR_BYTES, 0, sum_identity, sum_fold, &op), TSR_EINVAL,
		   "'op'", "zero byte size");
	CK_TSR_ERR(tsr_redop_register("op", (tsr_type_t)99, 8, sum_identity, sum_fold, &op),
		   TSR_EINVAL, "'op'", "invalid type 99");
	CK_TSR(tsr_redop_register(name63, TSR_F64, 0, sum_identity, sum_fold, &op));
	CK_TSR_ERR(tsr_redop_register(name63, TSR_F64, 0, sum_identity, sum_fold, &op), TSR_EINVAL,
		   name63, "already registered");

	int made = 1;
	for (int k = 0; k < 40; k++) {
		char nm[16];
		snprintf(nm, sizeof nm, "op%d", k);
		int rc = tsr_redop_register(nm, TSR_F64, 0, sum_identity, sum_fold, &op);
		if (rc) {
			ck_assert_int_eq(rc, TSR_ENOMEM);
			tsr_test_names(tsr_last_error(), "17th operator",
				       (const char *[]){nm, "at most", NULL});
			break;
		}
		made++;
	}
	ck_assert_int_eq(made, 16);
	CK_TSR(tsr_fence());
}
END_TEST

/* ------------------------------------------------ calls from the wrong place */
/* The host is no OpenCL variant: these calls return an error naming the kernel, and no fence
 * reports them (they used to fail the next tsr_fence with TSR_ETASK although no task had run). */
START_TEST(host_calls_fail_without_touching_the_fence)
{
	size_t g = 1;
	CK_TSR_ERR(tsr_ctx_opencl_launch(NULL, "put", NULL, 0, 1, &g, NULL), TSR_ESTATE, "'put'",
		   "tsr_ctx_opencl_launch", "outside any task");
	ck_assert_ptr_null(tsr_ctx_opencl_kernel(NULL, "put"));
	tsr_test_names(tsr_last_error(), "tsr_ctx_opencl_kernel",
		       (const char *[]){"'put'", "outside any task", NULL});
	/* a context that is not one (never read: it may be gone) */
	tsr_ctx_t *garbage = (tsr_ctx_t *)(uintptr_t)0x10;
	CK_TSR_ERR(tsr_ctx_opencl_launch(garbage, NULL, NULL, -5, 9, NULL, NULL), TSR_ESTATE,
		   "(null)", "outside any task");
	ck_assert_ptr_null(tsr_ctx_opencl_kernel(garbage, "put"));
	ck_assert_ptr_null(tsr_ctx_opencl_queue(NULL));
	ck_assert_ptr_null(tsr_ctx_opencl_queue(garbage));
	CK_TSR(tsr_fence());
}
END_TEST

static atomic_int thread_rc, thread_program_rc, thread_redop_rc;
static char thread_msg[512], thread_program_msg[512];

/* A second host thread launches, loads a program and registers an operator. */
static void *launch_from_thread(void *arg)
{
	size_t g = 1;
	tsr_redop_t op;
	atomic_store(&thread_rc, tsr_ctx_opencl_launch(arg, "put", NULL, 0, 1, &g, NULL));
	snprintf(thread_msg, sizeof thread_msg, "%s", tsr_last_error());
	atomic_store(&thread_program_rc,
		     tsr_opencl_program("from_thread", "kernel void k() {}", NULL));
	snprintf(thread_program_msg, sizeof thread_program_msg, "%s", tsr_last_error());
	atomic_store(&thread_redop_rc,
		     tsr_redop_register("thread_op", TSR_F64, 0, sum_identity, sum_fold, &op));
	return NULL;
}

/* Another host thread: the same error, in that thread, and still no fence affected; the calls
 * that change the runtime are the owner thread's (TSR_ESTATE naming the call). */
START_TEST(another_host_thread_fails_without_touching_the_fence)
{
	pthread_t th;
	atomic_store(&thread_rc, 0);
	ck_assert_int_eq(pthread_create(&th, NULL, launch_from_thread, NULL), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(atomic_load(&thread_rc), TSR_ESTATE);
	tsr_test_names(thread_msg, "thread", (const char *[]){"'put'", "outside any task", NULL});
	ck_assert_int_eq(atomic_load(&thread_program_rc), TSR_ESTATE);
	tsr_test_names(thread_program_msg, "thread", (const char *[]){"tsr_opencl_program", NULL});
	ck_assert_int_eq(atomic_load(&thread_redop_rc), TSR_ESTATE);
	CK_TSR(tsr_fence());
}
END_TEST

static atomic_int cpu_rc;
static atomic_intptr_t cpu_kernel;

/* A CPU variant asks for OpenCL: its task fails, named, and the other calls refuse it. */
static void opencl_from_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	size_t g = 4;
	atomic_store(&cpu_kernel, (intptr_t)tsr_ctx_opencl_kernel(ctx, "put"));
	atomic_store(&cpu_rc, tsr_ctx_opencl_launch(NULL, "put", NULL, 0, 1, &g, NULL));
	if (tsr_ctx_opencl_queue(ctx))
		atomic_store(&cpu_rc, 1);
}

START_TEST(a_cpu_variant_asking_for_opencl_fails_its_task_by_name)
{
	tsr_task_t t = task_of("cpu_caller", opencl_from_cpu, NULL, NULL, TSR_NONE);
	CK_TSR(tsr_launch(t, 0, NULL, NULL, 0, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "task 'cpu_caller'", "'put'", "CPU variant");
	ck_assert_int_eq(atomic_load(&cpu_rc), TSR_ETASK);
	ck_assert_int_eq(atomic_load(&cpu_kernel), 0);
	CK_TSR(tsr_fence()); /* reported once */
}
END_TEST

/* A context that is not the running task's: the running task fails, naming itself. */
static void foreign_ctx(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	size_t g = 4;
	atomic_store(&cpu_rc, tsr_ctx_opencl_launch((tsr_ctx_t *)(uintptr_t)0x10, "put", NULL, 0, 1,
						    &g, NULL));
}

START_TEST(a_context_that_is_not_the_tasks_fails_the_running_task)
{
	tsr_task_t t = task_of("borrower", foreign_ctx, NULL, NULL, TSR_NONE);
	CK_TSR(tsr_launch(t, 0, NULL, NULL, 0, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "task 'borrower'", "'put'", "not this task's");
	ck_assert_int_eq(atomic_load(&cpu_rc), TSR_ETASK);
}
END_TEST

/* Inside a variant, the calls that load programs or register operators are refused by name. */
static atomic_int nested_program_rc, nested_redop_rc;

static void loads_in_variant(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_redop_t op;
	atomic_store(&nested_program_rc, tsr_opencl_program("inner", "kernel void k() {}", NULL));
	atomic_store(&nested_redop_rc,
		     tsr_redop_register("inner_op", TSR_F64, 0, sum_identity, sum_fold, &op));
}

START_TEST(programs_and_operators_are_refused_inside_a_variant)
{
	tsr_task_t t = task_of("loader", loads_in_variant, NULL, NULL, TSR_NONE);
	CK_TSR(tsr_launch(t, 0, NULL, NULL, 0, NULL));
	CK_TSR(tsr_fence());
	ck_assert_int_eq(atomic_load(&nested_program_rc), TSR_ESTATE);
	ck_assert_int_eq(atomic_load(&nested_redop_rc), TSR_ESTATE);
}
END_TEST

/* tsr_opencl_program's arguments, checked before anything is built (so on every machine). */
START_TEST(opencl_program_refuses_garbage_by_name)
{
	char name63[64], name64[65];
	memset(name63, 'p', 63);
	name63[63] = '\0';
	memset(name64, 'p', 64);
	name64[64] = '\0';
	CK_TSR_ERR(tsr_opencl_program(NULL, "", NULL), TSR_EINVAL, "name of 1 to 63");
	CK_TSR_ERR(tsr_opencl_program("", "", NULL), TSR_EINVAL, "name of 1 to 63");
	CK_TSR_ERR(tsr_opencl_program(name64, "", NULL), TSR_EINVAL, "name of 1 to 63");
	CK_TSR_ERR(tsr_opencl_program(name63, NULL, NULL), TSR_EINVAL, name63, "null source");
	CK_TSR(tsr_fence());
}
END_TEST

/* A region made from a destroyed field space: the message names the region. */
START_TEST(a_region_of_a_destroyed_field_space_is_named)
{
	tsr_field_t f;
	tsr_fspace_t fs =
		tsr_test_fspace(1, (const tsr_type_t[]){TSR_F64}, (const char *const[]){"x"}, &f);
	CK_TSR(tsr_fspace_destroy(fs));
	tsr_region_t r;
	CK_TSR_ERR(tsr_region_create("orphan", tsr_box1(0, 3), fs, &r), TSR_ESTALE, "'orphan'",
		   "field space");
}
END_TEST

/* ------------------------------------------------------------ an OpenCL device */
#ifdef STARPU_USE_OPENCL
/* put: x[i] = v over n elements; put_if: the same, unless the buffer is null; put_local: put with
 * a local scratch argument. */
static const char *kernels =
	"#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
	"kernel void put(global uchar *p, ulong off, uint n, double v)\n"
	"{ uint i = get_global_id(0); if (i < n) ((global double *)(p + off))[i] = v; }\n"
	"kernel void put_if(global uchar *p, ulong off, uint n, double v)\n"
	"{ uint i = get_global_id(0); if (p && i < n) ((global double *)(p + off))[i] = v; }\n"
	"kernel void put_local(global uchar *p, ulong off, uint n, double v, local double *t)\n"
	"{ uint i = get_global_id(0); t[get_local_id(0)] = v; barrier(CLK_LOCAL_MEM_FENCE);\n"
	"  if (i < n) ((global double *)(p + off))[i] = t[get_local_id(0)]; }\n";

/* How the variant `writer` launches: a kernel of put's or put_local's shape, and what goes
 * wrong. */
enum fault {
	F_NONE,
	F_BUFFER_SIZE, /* argument 0 given 4 bytes */
	F_NULL_BUFFER, /* argument 0 a null cl_mem */
	F_NULL_VALUE,  /* argument 3 (a double) with no value */
	F_LOCAL_VALUE, /* put_local's local argument given a value */
	F_NULL_ARGS,   /* a null argument array */
	F_RAW,         /* put_if enqueued by the variant itself, its buffer argument left unset */
};

struct spec {
	char kernel[320];
	int nargs, dims;
	size_t global[3], local[3];
	int has_local, null_global;
	enum fault fault;
	double v;
};

static atomic_int writer_rc;

/* The variant enqueues put_if itself: sets every argument but the buffer. A kernel another task
 * launched must not still hold that task's buffer. */
static int enqueue_raw(tsr_ctx_t *ctx, cl_ulong off, cl_uint n, double v)
{
	cl_kernel k = tsr_ctx_opencl_kernel(ctx, "put_if");
	cl_command_queue q = tsr_ctx_opencl_queue(ctx);
	size_t g = n;
	if (!k || !q)
		return -1;
	if (clSetKernelArg(k, 1, sizeof off, &off) || clSetKernelArg(k, 2, sizeof n, &n) ||
	    clSetKernelArg(k, 3, sizeof v, &v))
		return -2;
	return clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL) ? -3 : 0;
}

static void writer_cl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const struct spec *s = args;
	tsr_accessor_t a;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_WRITE, &a))
		return;
	cl_mem m = a.ptr, none = NULL;
	cl_ulong off = a.offset;
	cl_uint n = N;
	double v = s->v;
	tsr_kernel_arg_t ka[] = {TSR_KARG(m),
				 TSR_KARG(off),
				 TSR_KARG(n),
				 TSR_KARG(v),
				 {sizeof(double) * 64, NULL}};
	const tsr_kernel_arg_t *kp = ka;

	switch (s->fault) {
	case F_BUFFER_SIZE:
		ka[0].size = 4;
		break;
	case F_NULL_BUFFER:
		ka[0].value = &none;
		break;
	case F_NULL_VALUE:
		ka[3].value = NULL;
		break;
	case F_LOCAL_VALUE:
		ka[4].value = &v;
		break;
	case F_NULL_ARGS:
		kp = NULL;
		break;
	case F_RAW:
		atomic_store(&writer_rc, enqueue_raw(ctx, off, n, v));
		return;
	default:
		break;
	}

	atomic_store(&writer_rc, tsr_ctx_opencl_launch(ctx, s->kernel, kp, s->nargs, s->dims,
						       s->null_global ? NULL : s->global,
						       s->has_local ? s->local : NULL));
}

static struct spec put_spec(double v)
{
	struct spec s = {.kernel = "put", .nargs = 4, .dims = 1, .global = {N, 1, 1}, .v = v};
	return s;
}

/* put of 99 with one mistake. */
static struct spec put_fault(int fault)
{
	struct spec s = put_spec(99.0);
	s.fault = fault;
	return s;
}

static tsr_task_t writer(void)
{
	return task_of("writer", NULL, writer_cl, NULL, TSR_NONE);
}

static void write_with(tsr_task_t t, tsr_region_t r, const struct spec *s)
{
	tsr_field_t x = 0;
	tsr_req_t q = tsr_req_region(r, TSR_WRITE, 1, &x);
	CK_TSR(tsr_launch(t, 1, &q, s, sizeof *s, NULL));
}

/* Regions A and B homed on the device; A was last written by put (the worker's put kernel then
 * holds A's buffer) and then set to 1 by a fill. */
struct pair {
	tsr_task_t t;
	tsr_region_t a, b;
};

static struct pair pair_make(void)
{
	struct pair p = {writer(), tsr_test_region_f64("A", tsr_box1(0, N - 1)),
			 tsr_test_region_f64("B", tsr_box1(0, N - 1))};
	struct spec s = put_spec(7.0);
	write_with(p.t, p.a, &s);
	CK_TSR(tsr_fence());
	ck_all(p.a, 7.0, "A after put");
	fill(p.a, 1.0);
	fill(p.b, 2.0);
	return p;
}

/* The program of kernels built, then the pair (most tests start so). */
static struct pair adversary_pair(void)
{
	CK_TSR(tsr_opencl_program("adversary", kernels, NULL));
	return pair_make();
}

static void pair_free(struct pair *p)
{
	CK_TSR(tsr_region_destroy(p->a));
	CK_TSR(tsr_region_destroy(p->b));
}

/* A launch of s on B fails the task naming the kernel and what was wrong; A (which B's task does
 * not hold) keeps its 1s; B is then healed by a fill. */
static void ck_refused(struct pair *p, const struct spec *s, const char *what1, const char *what2)
{
	atomic_store(&writer_rc, 12345);
	write_with(p->t, p->b, s);
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "task 'writer'", what1, what2);
	ck_assert_int_eq(atomic_load(&writer_rc), TSR_ETASK);
	ck_all(p->a, 1.0, "A, which the failed task does not hold");
	fill(p->b, 2.0);
	CK_TSR(tsr_fence());
}

/* Fewer (or more) arguments than the kernel takes: the task fails naming the kernel and both
 * counts, and the arguments another task left on the worker's kernel are never used (a launch of
 * put with 0 arguments used to write 7s into A through them). */
START_TEST(a_launch_with_the_wrong_argument_count_fails_and_writes_nothing)
{
	struct pair p = adversary_pair();
	for (int nargs = 0; nargs <= 5; nargs++) {
		if (nargs == 4)
			continue;
		struct spec s = put_spec(99.0);
		s.nargs = nargs;
		char counts[64];
		snprintf(counts, sizeof counts, "but %d were given", nargs);
		ck_refused(&p, &s, "kernel 'put' takes 4 argument(s)", counts);
	}
	struct spec neg = put_spec(99.0);
	neg.nargs = -1;
	ck_refused(&p, &neg, "kernel 'put'", "negative count");
	struct spec nul = put_fault(F_NULL_ARGS);
	ck_refused(&p, &nul, "kernel 'put'", "null array");
	pair_free(&p);
}
END_TEST

/* Arguments of the wrong kind (where the platform says each argument's address space). */
START_TEST(arguments_of_the_wrong_kind_fail_by_position)
{
	struct pair p = adversary_pair();
	struct spec s = put_fault(F_BUFFER_SIZE);
	ck_refused(&p, &s, "kernel 'put': argument 0", "global buffer");
	s.fault = F_NULL_BUFFER;
	ck_refused(&p, &s, "kernel 'put': argument 0", "cl_mem");
	s.fault = F_NULL_VALUE;
	ck_refused(&p, &s, "kernel 'put': argument 3", "value");
	struct spec l = put_spec(99.0);
	snprintf(l.kernel, sizeof l.kernel, "put_local");
	l.nargs = 5;
	l.has_local = 1;
	l.local[0] = 16;
	write_with(p.t, p.b, &l); /* right: B gets 99 */
	CK_TSR(tsr_fence());
	ck_all(p.b, 99.0, "B after put_local");
	l.fault = F_LOCAL_VALUE;
	ck_refused(&p, &l, "kernel 'put_local': argument 4", "local memory");
	pair_free(&p);
}
END_TEST

/* A variant that enqueues the kernel itself, leaving its buffer unset: the kernel holds no buffer
 * of the task that used it before (put_if then writes nothing, instead of into A). */
START_TEST(a_kernel_handed_to_a_variant_holds_no_other_tasks_buffer)
{
	struct pair p = adversary_pair();
	struct spec s = put_spec(5.0);
	snprintf(s.kernel, sizeof s.kernel, "put_if");
	write_with(p.t, p.a, &s); /* put_if now holds A's buffer */
	CK_TSR(tsr_fence());
	ck_all(p.a, 5.0, "A after put_if");
	fill(p.a, 1.0);
	s.fault = F_RAW;
	write_with(p.t, p.b, &s);
	CK_TSR(tsr_fence());
	ck_assert_int_eq(atomic_load(&writer_rc), 0);
	ck_all(p.a, 1.0, "A, after another task enqueued put_if without its buffer");
	pair_free(&p);
}
END_TEST

static void ck_sizes(struct pair *p, int dims, const size_t *global, const size_t *local,
		     const char *what1, const char *what2)
{
	struct spec s = put_spec(99.0);
	s.dims = dims;
	s.null_global = global == NULL;
	if (global)
		memcpy(s.global, global, sizeof s.global);
	s.has_local = local != NULL;
	if (local)
		memcpy(s.local, local, sizeof s.local);
	ck_refused(p, &s, what1, what2);
}

/* Work sizes OpenCL (POCL) would abort on, run for ever, or refuse: each fails the task naming
 * the kernel and the sizes. */
START_TEST(work_sizes_beyond_the_device_fail_the_task)
{
	struct pair p = adversary_pair();
	const size_t big = (size_t)1 << 33;
	ck_sizes(&p, 2, (const size_t[3]){big, big, 1}, NULL, "kernel 'put'", "size_t");
	ck_sizes(&p, 3, (const size_t[3]){SIZE_MAX / 2, 2, 2}, NULL, "kernel 'put'", "work-items");
	ck_sizes(&p, 1, (const size_t[3]){SIZE_MAX, 1, 1}, NULL, "18446744073709551615",
		 "2^48 work-items");
	ck_sizes(&p, 1, (const size_t[3]){0, 1, 1}, NULL, "kernel 'put'", "global size of 0");
	ck_sizes(&p, 1, (const size_t[3]){N, 1, 1}, (const size_t[3]){0, 1, 1}, "work-groups of 0",
		 "work-group size of 0");
	ck_sizes(&p, 1, (const size_t[3]){N, 1, 1}, (const size_t[3]){5, 1, 1}, "work-groups of 5",
		 "does not divide");
	ck_sizes(&p, 1, (const size_t[3]){(size_t)1 << 24, 1, 1},
		 (const size_t[3]){(size_t)1 << 24, 1, 1}, "kernel 'put'", "the device's");
	ck_sizes(&p, 2, (const size_t[3]){4096, 4096, 1}, (const size_t[3]){4096, 4096, 1},
		 "kernel 'put'", "work-items");
	ck_sizes(&p, 0, (const size_t[3]){N, 1, 1}, NULL, "kernel 'put'", "1 to 3");
	ck_sizes(&p, 4, (const size_t[3]){N, 1, 1}, NULL, "kernel 'put'", "1 to 3");
	ck_sizes(&p, 1, NULL, NULL, "kernel 'put'", "null global sizes");
	struct spec s = put_spec(99.0);
	s.has_local = 1;
	s.local[0] = 4; /* 16 in groups of 4: right */
	write_with(p.t, p.b, &s);
	CK_TSR(tsr_fence());
	ck_all(p.b, 99.0, "B after a launch in groups of 4");
	pair_free(&p);
}
END_TEST

/* A kernel named n characters long defines a kernel of that name that launches. */
static void ck_long_name(int n)
{
	struct spec s = put_spec(3.0 + n);
	memset(s.kernel, 'k', (size_t)n);
	s.kernel[n] = '\0';
	char src[1024], prog[32];
	snprintf(src, sizeof src,
		 "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
		 "kernel void %s(global uchar *p, ulong off, uint n, double v)\n"
		 "{ uint i = get_global_id(0); if (i < n) ((global double *)(p + off))[i] = v; }\n",
		 s.kernel);
	snprintf(prog, sizeof prog, "long%d", n);
	CK_TSR(tsr_opencl_program(prog, src, NULL));
	tsr_region_t r = tsr_test_region_f64("grid", tsr_box1(0, N - 1));
	tsr_task_t t = writer();
	write_with(t, r, &s);
	CK_TSR(tsr_fence());
	ck_all(r, 3.0 + n, prog);
	CK_TSR(tsr_region_destroy(r));
}

/* Kernel names at and past 63 characters (64 and more used to be "defined by no program"). */
START_TEST(kernel_names_of_any_length_launch)
{
	ck_long_name(63);
	ck_long_name(64);
	ck_long_name(250);
}
END_TEST

/* Tessera's kernels keep their names: a program defining one is refused, naming it, and a variant
 * asking for one fails (a user's tsr_fill used to be shadowed by Tessera's, then POCL aborted). */
START_TEST(the_tsr_prefix_is_reserved)
{
	CK_TSR(tsr_opencl_program("adversary", kernels, NULL));
	CK_TSR_ERR(tsr_opencl_program("shadow",
				      "kernel void tsr_fill(global double *p) { p[0] = 6; }\n",
				      NULL),
		   TSR_EINVAL, "'shadow'", "'tsr_fill'", "Tessera's own");
	struct pair p = pair_make();
	struct spec s = put_spec(99.0);
	snprintf(s.kernel, sizeof s.kernel, "tsr_fill");
	s.nargs = 1;
	ck_refused(&p, &s, "'tsr_fill'", "Tessera's own");
	s.kernel[0] = '\0';
	ck_refused(&p, &s, "''", "no OpenCL program");
	pair_free(&p);
}
END_TEST

/* A program name loads once, and a kernel belongs to one program. */
START_TEST(programs_load_once_and_kernels_belong_to_one)
{
	const char *src = "kernel void twice(global int *p) { p[0] = 1; }\n";
	CK_TSR(tsr_opencl_program("first", src, NULL));
	CK_TSR_ERR(tsr_opencl_program("first", src, NULL), TSR_EINVAL, "'first'", "already loaded");
	CK_TSR_ERR(tsr_opencl_program("second", src, NULL), TSR_EINVAL, "'second'", "'twice'",
		   "'first'");
	CK_TSR_ERR(tsr_opencl_program("tessera", "kernel void k(global int *p) {}\n", NULL),
		   TSR_EINVAL, "'tessera'", "already loaded");
	CK_TSR_ERR(tsr_opencl_program("bad_options", "kernel void k98(global int *p) {}\n",
				      "-no-such-option"),
		   TSR_EINVAL, "'bad_options'", "does not build");
	/* refusals take no slot: 30 more programs fit beside Tessera's and "first" */
	for (int k = 0; k < 30; k++) {
		char name[16], source[96];
		snprintf(name, sizeof name, "p%d", k);
		snprintf(source, sizeof source, "kernel void k%d(global int *p) { p[0] = %d; }\n",
			 k, k);
		CK_TSR(tsr_opencl_program(name, source, NULL));
	}
	CK_TSR_ERR(tsr_opencl_program("one_too_many", "kernel void k99(global int *p) {}\n", NULL),
		   TSR_EINVAL, "'one_too_many'", "at most 32");
}
END_TEST

static atomic_int inner_rc;

static void *launch_from_worker_thread(void *ctx)
{
	size_t g = N;
	atomic_store(&inner_rc, tsr_ctx_opencl_launch(ctx, "put", NULL, 0, 1, &g, NULL));
	return NULL;
}

/* A thread the OpenCL variant starts is no variant: its call fails there (TSR_ESTATE), and the
 * task, which did nothing wrong, does not fail. */
static void spawner_cl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	pthread_t th;
	if (pthread_create(&th, NULL, launch_from_worker_thread, ctx) == 0)
		pthread_join(th, NULL);
}

START_TEST(a_thread_of_a_variant_cannot_launch)
{
	CK_TSR(tsr_opencl_program("adversary", kernels, NULL));
	tsr_task_t t = task_of("spawner", NULL, spawner_cl, NULL, TSR_NONE);
	atomic_store(&inner_rc, 0);
	CK_TSR(tsr_launch(t, 0, NULL, NULL, 0, NULL));
	CK_TSR(tsr_fence());
	ck_assert_int_eq(atomic_load(&inner_rc), TSR_ESTATE);
}
END_TEST

/* Whether StarPU starts an OpenCL worker here: asked in a child process, which then stops. */
static int opencl_device_present(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		tsr_config_t cfg = tsr_test_config();
		cfg.nopencl = 1;
		int ok = tsr_init(&cfg) == TSR_OK && tsr_nopencl_workers() == 1;
		if (tsr_ncpu_workers() >= 0)
			tsr_finalize();
		_exit(ok ? 0 : 1);
	}
	int status = 0;
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}
#endif

/* ------------------------------------------------------------ the suite */
static void cpus_only(void)
{
	ncpu_of_tcase = -1;
	nopencl_of_tcase = 0;
	setup();
}

static void opencl_alone(void)
{
	ncpu_of_tcase = 0;
	nopencl_of_tcase = 1;
	setup();
}

static void opencl_and_cpu(void)
{
	ncpu_of_tcase = 1;
	nopencl_of_tcase = 1;
	setup();
}

static TCase *tcase_with(const char *name, void (*fixture)(void))
{
	TCase *tc = tcase_create(name);
	tcase_add_checked_fixture(tc, fixture, tsr_test_teardown);
	tcase_set_timeout(tc, 60);
	return tc;
}

/* What a machine without an OpenCL device runs too. */
static TCase *host_tcase(void)
{
	TCase *tc = tcase_with("cpus_only", cpus_only);
	tcase_add_test(tc, a_device_only_task_reducing_with_a_registered_operator_is_refused);
	tcase_add_test(tc, device_only_returns_reduced_by_a_registered_operator_are_refused);
	tcase_add_test(tc, a_registered_operator_runs_its_task_on_the_cpus);
	tcase_add_test(tc, redop_register_refuses_garbage_by_name);
	tcase_add_test(tc, host_calls_fail_without_touching_the_fence);
	tcase_add_test(tc, another_host_thread_fails_without_touching_the_fence);
	tcase_add_test(tc, a_cpu_variant_asking_for_opencl_fails_its_task_by_name);
	tcase_add_test(tc, a_context_that_is_not_the_tasks_fails_the_running_task);
	tcase_add_test(tc, programs_and_operators_are_refused_inside_a_variant);
	tcase_add_test(tc, opencl_program_refuses_garbage_by_name);
	tcase_add_test(tc, a_region_of_a_destroyed_field_space_is_named);
	return tc;
}

int main(void)
{
	/* POCL's device is a CPU: StarPU skips it otherwise; and the runs that count it keep a bus
	 * calibration of their own (see tests/unit/test_device.c) */
	setenv("STARPU_OPENCL_ON_CPUS", "1", 0);
	setenv("STARPU_HOSTNAME", "opencl-on-cpus", 0);
	/* asked before anything is allocated: the child that asks exits without freeing (under
	 * valgrind a leak there would read as "no device") */
	int device = 0;
#ifdef STARPU_USE_OPENCL
	device = opencl_device_present();
#endif
	(void)device;
	Suite *s = suite_create("device_adversarial");
	suite_add_tcase(s, host_tcase());

#ifdef STARPU_USE_OPENCL
	if (device) {
		TCase *alone = tcase_with("opencl_alone", opencl_alone);
		tcase_add_test(alone,
			       a_device_only_task_reducing_with_a_registered_operator_is_refused);
		tcase_add_test(alone, no_cpu_worker_refuses_a_registered_operator_by_name);
		tcase_add_test(alone,
			       a_launch_with_the_wrong_argument_count_fails_and_writes_nothing);
		tcase_add_test(alone, arguments_of_the_wrong_kind_fail_by_position);
		tcase_add_test(alone, a_kernel_handed_to_a_variant_holds_no_other_tasks_buffer);
		tcase_add_test(alone, work_sizes_beyond_the_device_fail_the_task);
		tcase_add_test(alone, kernel_names_of_any_length_launch);
		tcase_add_test(alone, the_tsr_prefix_is_reserved);
		tcase_add_test(alone, programs_load_once_and_kernels_belong_to_one);
		tcase_add_test(alone, a_thread_of_a_variant_cannot_launch);
		tcase_add_test(alone, host_calls_fail_without_touching_the_fence);
		suite_add_tcase(s, alone);

		TCase *both = tcase_with("opencl_and_cpu", opencl_and_cpu);
		tcase_add_test(both,
			       a_device_only_task_reducing_with_a_registered_operator_is_refused);
		tcase_add_test(both,
			       device_only_returns_reduced_by_a_registered_operator_are_refused);
		tcase_add_test(both, a_registered_operator_runs_its_task_on_the_cpus);
		tcase_add_test(both, a_mapper_cannot_send_a_registered_operator_to_a_device);
		tcase_add_test(both, an_unordered_registered_reduction_stays_on_the_cpus);
		suite_add_tcase(s, both);
	} else {
		printf("# the OpenCL tests are skipped: no OpenCL device (an OpenCL platform such "
		       "as pocl-opencl-icd, and a StarPU with OpenCL)\n");
	}
#endif
	return tsr_test_run(s);
}
