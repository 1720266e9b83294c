/* hello-device: the smallest Tessera program with device variants (StarPU's vector_scal, in
 * Tessera). A vector x[i] = i is scaled by a factor held in a future, by tasks with a CPU, an
 * OpenCL and a CUDA variant; then a sum over its tiles reduces into a future, which the host checks
 * against the exact sum. StarPU picks the worker of each task: TSR_NOPENCL=1 gives an OpenCL
 * device (POCL's on the CPU with STARPU_OPENCL_ON_CPUS=1), TSR_NCPU=0 leaves the devices alone. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tessera.h>

enum { N = 1000, NTILES = 4 };

/* The OpenCL kernels, built at run time for every OpenCL device (tsr_opencl_program). A field
 * arrives as its buffer and the byte offset of the tile in it; the factor (a future) and the
 * return slot arrive as buffers of their own holding one double. double needs cl_khr_fp64. The
 * sum runs in one work-item, in the CPU's order, so that every variant gives the same bits; it
 * folds into the slot (which holds TSR_SUM's identity, 0), never overwrites it. */
static const char *kernels =
	"#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
	"kernel void scale(global uchar *base, ulong offset, uint n, global const double *factor)\n"
	"{\n"
	"	uint i = get_global_id(0);\n"
	"	if (i < n)\n"
	"		((global double *)(base + offset))[i] *= factor[0];\n"
	"}\n"
	"kernel void sum(global const uchar *base, ulong offset, uint n, global double *ret)\n"
	"{\n"
	"	global const double *x = (global const double *)(base + offset);\n"
	"	double s = 0.0;\n"
	"	for (uint i = 0; i < n; i++)\n"
	"		s += x[i];\n"
	"	ret[0] += s;\n"
	"}\n";

/* CUDA variants (hello_device_cuda.cu), compiled when configure finds nvcc. */
#ifdef TSR_HAVE_CUDA
void scale_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void sum_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
#else
#define scale_cuda NULL
#define sum_cuda NULL
#endif

/* Task "scale": x *= factor over this point's tile (requirement 0), the factor read from the
 * future passed as requirement 1. On error the task has failed with the message: just return. */
static void scale_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	const double *factor = tsr_ctx_future(ctx, 1);
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &x) != TSR_OK || !factor)
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) *= *factor;
}

/* The same on an OpenCL device: OpenCL's types without its header (cl_mem is a pointer, ulong a
 * uint64_t, uint a uint32_t), and tsr_ctx_opencl_launch sets the arguments and enqueues. */
static void scale_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	const void *factor = tsr_ctx_future(ctx, 1); /* a cl_mem */
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &x) != TSR_OK || !factor)
		return;
	void *buffer = x.ptr; /* the field's cl_mem */
	uint64_t offset = x.offset;
	uint32_t n = (uint32_t)(x.hi[0] - x.lo[0] + 1);
	const tsr_kernel_arg_t karg[] = {TSR_KARG(buffer), TSR_KARG(offset), TSR_KARG(n),
					 TSR_KARG(factor)};
	size_t global = n;
	tsr_ctx_opencl_launch(ctx, "scale", karg, 4, 1, &global, NULL);
}

/* Task "sum": the sum of x over this point's tile, returned; the launch adds up the points'. */
static void sum_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &x) != TSR_OK)
		return;
	double s = 0.0;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		s += TSR_AT1(&x, double, i);
	tsr_ctx_return(ctx, &s);
}

static void sum_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	void *slot = tsr_ctx_return_slot(ctx); /* a cl_mem; NULL if nobody asked for the value */
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &x) != TSR_OK || !slot)
		return;
	void *buffer = x.ptr;
	uint64_t offset = x.offset;
	uint32_t n = (uint32_t)(x.hi[0] - x.lo[0] + 1);
	const tsr_kernel_arg_t karg[] = {TSR_KARG(buffer), TSR_KARG(offset), TSR_KARG(n),
					 TSR_KARG(slot)};
	size_t one = 1;
	tsr_ctx_opencl_launch(ctx, "sum", karg, 4, 1, &one, NULL);
}

static void check(int rc)
{
	if (rc == TSR_OK)
		return;
	fprintf(stderr, "hello-device: %s: %s\n", tsr_err_name(rc), tsr_last_error());
	exit(1);
}

int main(int argc, char **argv)
{
	/* Tessera's flags leave argv first (--ncpu 0 --nopencl 1, --sched eager, ...): they win
	 * over TSR_NCPU and the other variables */
	if (tsr_args(&argc, argv) != TSR_OK) {
		fprintf(stderr, "hello-device: %s\n", tsr_last_error());
		return 2;
	}
	if (argc > 1 && strcmp(argv[1], "--help") == 0) {
		puts("usage: hello-device [--version] [Tessera's flags: --ncpu N, --ncuda N, "
		     "--nopencl N, --sched NAME, ...]");
		puts("Scales x[i] = i by 3 in 4 tiles and sums it into a future, on CPUs, OpenCL "
		     "devices and CUDA GPUs; exits 1 unless the sum is exact.");
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("hello-device (Tessera) %s\n", tsr_version(NULL, NULL, NULL));
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "hello-device: unknown argument '%s' (it takes none; see --help)\n",
			argv[1]);
		return 2;
	}
	check(tsr_init(NULL));
	check(tsr_opencl_program("hello-device", kernels, NULL)); /* nothing without OpenCL */

	/* The data: x[i] = i over 0..N-1, one f64 field, cut into NTILES tiles. */
	tsr_fspace_t fs;
	tsr_field_t fx;
	tsr_region_t vec;
	tsr_partition_t tiles;
	check(tsr_fspace_create(&fs));
	check(tsr_fspace_add(fs, "x", TSR_F64, 0, &fx));
	check(tsr_region_create("vector", tsr_box1(0, N - 1), fs, &vec));
	check(tsr_partition_tiles(vec, tsr_box1(0, NTILES - 1), "tiles", &tiles));
	static double host[N];
	for (int i = 0; i < N; i++)
		host[i] = i;
	check(tsr_region_write(vec, fx, host, sizeof host));

	/* One task, three variants: StarPU runs each point where a worker is free. */
	tsr_task_desc_t scale_desc = {.name = "scale",
				      .cpu = scale_cpu,
				      .opencl = scale_opencl,
				      .cuda = scale_cuda};
	tsr_task_desc_t sum_desc = {.name = "sum",
				    .cpu = sum_cpu,
				    .opencl = sum_opencl,
				    .cuda = sum_cuda,
				    .ret_type = TSR_F64};
	tsr_task_t scale, sum;
	check(tsr_task_register(&scale_desc, &scale));
	check(tsr_task_register(&sum_desc, &sum));

	/* x *= 3 tile by tile, the factor from a future; then the tiles' sums, into a future. */
	const double three = 3.0;
	tsr_future_t factor, total;
	check(tsr_future_create(TSR_F64, 0, &three, &factor));
	tsr_launch_t scale_all = {
		.domain = tsr_box1(0, NTILES - 1),
		.reqs = TSR_REQS(tsr_req_part(tiles, TSR_READ_WRITE, TSR_FIELDS(fx)),
				 tsr_req_future(factor)),
	};
	check(tsr_run(scale, &scale_all));
	tsr_launch_t sum_all = {
		.domain = tsr_box1(0, NTILES - 1),
		.reqs = TSR_REQS(tsr_req_part(tiles, TSR_READ, TSR_FIELDS(fx))),
		.redop = TSR_SUM,
		.result = &total,
	};
	check(tsr_run(sum, &sum_all));
	double got;
	check(tsr_future_take(total, &got, sizeof got));
	check(tsr_future_destroy(factor));

	const double want = 3.0 * N * (N - 1) / 2; /* exact in double, as every partial sum is */
	printf("workers: %d CPU, %d CUDA, %d OpenCL\n", tsr_ncpu_workers(), tsr_ncuda_workers(),
	       tsr_nopencl_workers());
	printf("sum of 3*i for i in 0..%d = %.17g (expected %.17g): %s\n", N - 1, got, want,
	       got == want ? "ok" : "WRONG");

	check(tsr_region_destroy(vec));
	check(tsr_fspace_destroy(fs));
	check(tsr_finalize());
	return got == want ? 0 : 1;
}
