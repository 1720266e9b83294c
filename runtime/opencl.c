/* opencl.c: OpenCL devices. Programs built once per run for every OpenCL device StarPU started
 * (Tessera's own, kernels.cl, and those a program loads with tsr_opencl_program), the kernels each
 * worker made from them, and the bodies of Tessera's own tasks on an OpenCL memory node.
 *
 * StarPU runs one worker thread per OpenCL device, and a cl_kernel must not have its arguments set
 * by two threads at once: so each worker keeps the kernels it made in a list only it touches, and
 * no lock is needed. Every OpenCL body here enqueues on the worker's queue; the codelets wait for
 * the queue before they return (they are synchronous codelets, as StarPU then expects). */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#ifdef STARPU_USE_OPENCL
#include "kernels.cl.h"

#define TSR_MAX_CL_PROGRAMS 32

struct clprog {
	char name[TSR_NAME_MAX];
	cl_program per_dev[STARPU_MAXOPENCLDEVS]; /* by StarPU's OpenCL device id */
};

static struct clprog progs[TSR_MAX_CL_PROGRAMS];
static int nprogs; /* written by the host thread with release order */

struct clkernel {
	char name[TSR_NAME_MAX];
	cl_kernel k;
};

struct worker_kernels {
	struct clkernel *v;
	int n, cap;
};

static struct worker_kernels wkernels[STARPU_NMAXWORKERS];

/* The OpenCL device ids of the workers StarPU started, and how many. */
static int opencl_devids(int *devids, int max)
{
	int n = 0;
	for (unsigned w = 0; w < starpu_worker_get_count() && n < max; w++)
		if (starpu_worker_get_type((int)w) == STARPU_OPENCL_WORKER)
			devids[n++] = starpu_worker_get_devid((int)w);

	return n;
}

/* Build `source` for device devid; on failure the compiler's log goes into log. */
static cl_program build_for(int devid, const char *source, const char *options, char *log,
			    size_t loglen)
{
	cl_context context;
	cl_device_id device;
	cl_int err;

	starpu_opencl_get_context(devid, &context);
	starpu_opencl_get_device(devid, &device);

	cl_program p = clCreateProgramWithSource(context, 1, &source, NULL, &err);
	if (err != CL_SUCCESS) {
		snprintf(log, loglen, "clCreateProgramWithSource: %s",
			 starpu_opencl_error_string(err));
		return NULL;
	}

	err = clBuildProgram(p, 1, &device, options ? options : "", NULL, NULL);
	if (err == CL_SUCCESS)
		return p;

	size_t used = (size_t)snprintf(log, loglen, "%s: ", starpu_opencl_error_string(err));
	if (used < loglen)
		clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, loglen - used, log + used,
				      NULL);
	log[loglen - 1] = '\0';
	clReleaseProgram(p);
	return NULL;
}

static void release_program(struct clprog *pr)
{
	for (int d = 0; d < STARPU_MAXOPENCLDEVS; d++)
		if (pr->per_dev[d]) {
			clReleaseProgram(pr->per_dev[d]);
			pr->per_dev[d] = NULL;
		}
}

static int load_program(const char *what, const char *name, const char *source, const char *options)
{
	int devids[STARPU_MAXOPENCLDEVS];
	int ndev = opencl_devids(devids, STARPU_MAXOPENCLDEVS);
	if (ndev == 0)
		return TSR_OK; /* nothing to build for: OpenCL variants simply never run */

	if (nprogs == TSR_MAX_CL_PROGRAMS)
		return tsr__err(TSR_EINVAL, "%s: OpenCL program '%s': at most %d programs per run",
				what, name, TSR_MAX_CL_PROGRAMS);

	struct clprog *pr = &progs[nprogs];
	memset(pr, 0, sizeof *pr);
	snprintf(pr->name, sizeof pr->name, "%s", name);

	for (int i = 0; i < ndev; i++) {
		char log[2048];
		pr->per_dev[devids[i]] = build_for(devids[i], source, options, log, sizeof log);
		if (!pr->per_dev[devids[i]]) {
			release_program(pr);
			return tsr__err(TSR_EINVAL,
					"%s: OpenCL program '%s' does not build for OpenCL device "
					"%d: %s",
					what, name, devids[i], log);
		}
	}

	/* a worker looking for a kernel sees the whole entry or none of it */
	__atomic_store_n(&nprogs, nprogs + 1, __ATOMIC_RELEASE);
	return TSR_OK;
}

int tsr__opencl_start(void)
{
	nprogs = 0;
	return load_program("tsr_init", "tessera", kernels_cl_source, NULL);
}

void tsr__opencl_stop(void)
{
	for (int w = 0; w < STARPU_NMAXWORKERS; w++) {
		struct worker_kernels *wk = &wkernels[w];
		for (int i = 0; i < wk->n; i++)
			clReleaseKernel(wk->v[i].k);
		free(wk->v);
		memset(wk, 0, sizeof *wk);
	}

	for (int i = 0; i < nprogs; i++)
		release_program(&progs[i]);
	nprogs = 0;
}

/* The running worker's kernel `name`, made from the first program that defines it; NULL if none. */
void *tsr__opencl_worker_kernel(const char *name)
{
	int w = starpu_worker_get_id();
	if (w < 0 || strlen(name) >= TSR_NAME_MAX)
		return NULL;

	struct worker_kernels *wk = &wkernels[w];
	for (int i = 0; i < wk->n; i++)
		if (!strcmp(wk->v[i].name, name))
			return wk->v[i].k;

	int devid = starpu_worker_get_devid(w);
	int n = __atomic_load_n(&nprogs, __ATOMIC_ACQUIRE);
	for (int p = 0; p < n; p++) {
		cl_int err;
		cl_program prog = progs[p].per_dev[devid];
		if (!prog)
			continue;
		cl_kernel k = clCreateKernel(prog, name, &err);
		if (err != CL_SUCCESS)
			continue;

		TSR_GROW(wk->v, wk->n, wk->cap, 8);
		snprintf(wk->v[wk->n].name, TSR_NAME_MAX, "%s", name);
		wk->v[wk->n].k = k;
		wk->n++;
		return k;
	}

	return NULL;
}

void tsr__opencl_finish(void)
{
	cl_command_queue q;
	starpu_opencl_get_current_queue(&q);

	cl_int err = clFinish(q);
	if (err != CL_SUCCESS)
		tsr__task_error("OpenCL worker %d: clFinish failed: %s", starpu_worker_get_id(),
				starpu_opencl_error_string(err));
}

/* ------------------------------------------------------------------ Tessera's own task bodies */

/* A block or variable interface on an OpenCL node as the kernels take it. */
struct clview {
	cl_mem mem;
	cl_ulong off; /* bytes */
	cl_uint nx, ny, nz;
	cl_ulong ldy, ldz; /* elements */
};

static struct clview view_of(void *iface)
{
	struct clview v;

	if (((struct starpu_block_interface *)iface)->id == STARPU_BLOCK_INTERFACE_ID) {
		struct starpu_block_interface *b = iface;
		v.mem = (cl_mem)b->dev_handle;
		v.off = b->offset;
		v.nx = b->nx;
		v.ny = b->ny;
		v.nz = b->nz;
		v.ldy = b->ldy;
		v.ldz = b->ldz;
	} else {
		size_t off;
		v.mem = (cl_mem)tsr__variable_buffer(iface, &off);
		v.off = off;
		v.nx = v.ny = v.nz = 1;
		v.ldy = v.ldz = 1;
	}

	return v;
}

static struct clview view_of_accessor(const tsr_accessor_t *a)
{
	struct clview v;

	v.mem = (cl_mem)a->ptr;
	v.off = a->offset;
	v.nx = (cl_uint)(a->hi[0] - a->lo[0] + 1);
	v.ny = (cl_uint)(a->hi[1] - a->lo[1] + 1);
	v.nz = (cl_uint)(a->hi[2] - a->lo[2] + 1);
	v.ldy = a->stride[1];
	v.ldz = a->stride[2];

	return v;
}

/* Sets kernel k's arguments and enqueues it on queue q: CL_SUCCESS, or the OpenCL error of the
 * argument *bad_arg (-1: of the enqueue). Tessera's own bodies and tsr_ctx_opencl_launch share it.
 */
int tsr__opencl_enqueue(void *kernel, void *queue, const tsr_kernel_arg_t *args, int nargs,
			int dims, const size_t *global, const size_t *local, int *bad_arg)
{
	cl_kernel k = kernel;
	cl_int err = CL_SUCCESS;

	for (int i = 0; i < nargs; i++) {
		err = clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].value);
		if (err != CL_SUCCESS) {
			*bad_arg = i;
			return err;
		}
	}

	*bad_arg = -1;
	return clEnqueueNDRangeKernel(queue, k, (cl_uint)dims, NULL, global, local, 0, NULL, NULL);
}

/* Kernel `name` over the n elements of a box, on the running worker's queue. */
static int enqueue(const char *name, const tsr_kernel_arg_t *args, int nargs, size_t n)
{
	cl_kernel k = tsr__opencl_worker_kernel(name);
	if (!k) {
		tsr__task_error("OpenCL worker %d: Tessera's kernel '%s' is missing (a device "
				"without 64-bit floats has no f64 reductions)",
				starpu_worker_get_id(), name);
		return -1;
	}

	cl_command_queue q;
	starpu_opencl_get_current_queue(&q);

	int bad_arg;
	cl_int err = tsr__opencl_enqueue(k, q, args, nargs, 1, &n, NULL, &bad_arg);
	if (err != CL_SUCCESS && bad_arg >= 0) {
		tsr__task_error("OpenCL worker %d: kernel '%s': argument %d: %s",
				starpu_worker_get_id(), name, bad_arg,
				starpu_opencl_error_string(err));
		return -1;
	}
	if (err != CL_SUCCESS) {
		tsr__task_error("OpenCL worker %d: kernel '%s' over %zu work-items: %s",
				starpu_worker_get_id(), name, n, starpu_opencl_error_string(err));
		return -1;
	}

	return 0;
}

static size_t elements(const struct clview *v)
{
	return (size_t)v->nx * v->ny * v->nz;
}

int tsr__opencl_fill(const tsr_accessor_t *a, const void *value)
{
	struct clview v = view_of_accessor(a);
	cl_uint es = (cl_uint)a->elem_size;
	cl_context context;
	cl_int err;

	starpu_opencl_get_current_context(&context);

	/* released at once: OpenCL keeps it until the kernel that reads it is done */
	cl_mem val = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, es,
				    (void *)value, &err);
	if (err != CL_SUCCESS) {
		tsr__task_error("OpenCL worker %d: fill value of %u bytes: %s",
				starpu_worker_get_id(), es, starpu_opencl_error_string(err));
		return -1;
	}

	tsr_kernel_arg_t args[] = {TSR_KARG(v.mem), TSR_KARG(v.off), TSR_KARG(v.nx),
				   TSR_KARG(v.ny),  TSR_KARG(v.nz),  TSR_KARG(v.ldy),
				   TSR_KARG(v.ldz), TSR_KARG(es),    TSR_KARG(val)};
	int rc = enqueue("tsr_fill", args, 9, elements(&v));
	clReleaseMemObject(val);
	return rc;
}

int tsr__opencl_copy(const tsr_accessor_t *d, const tsr_accessor_t *s)
{
	struct clview dv = view_of_accessor(d), sv = view_of_accessor(s);
	cl_uint es = (cl_uint)d->elem_size;
	tsr_kernel_arg_t args[] = {TSR_KARG(dv.mem), TSR_KARG(dv.off), TSR_KARG(dv.ldy),
				   TSR_KARG(dv.ldz), TSR_KARG(sv.mem), TSR_KARG(sv.off),
				   TSR_KARG(sv.ldy), TSR_KARG(sv.ldz), TSR_KARG(dv.nx),
				   TSR_KARG(dv.ny),  TSR_KARG(dv.nz),  TSR_KARG(es)};
	return enqueue("tsr_copy", args, 12, elements(&dv));
}

void tsr__opencl_redop(int type, int op, int init, void *dst, void *src)
{
	char name[32];
	struct clview d = view_of(dst);
	cl_int cop = op;

	/* kernels.cl names each body after the element type as tsr_type_name spells it */
	snprintf(name, sizeof name, "tsr_%s_%s", init ? "init" : "redux",
		 tsr_type_name((tsr_type_t)type));

	if (init) {
		tsr_kernel_arg_t args[] = {TSR_KARG(d.mem), TSR_KARG(d.off), TSR_KARG(d.nx),
					   TSR_KARG(d.ny),  TSR_KARG(d.nz),  TSR_KARG(d.ldy),
					   TSR_KARG(d.ldz), TSR_KARG(cop)};
		enqueue(name, args, 8, elements(&d));
		return;
	}

	struct clview s = view_of(src);
	tsr_kernel_arg_t args[] = {TSR_KARG(d.mem), TSR_KARG(d.off), TSR_KARG(d.ldy),
				   TSR_KARG(d.ldz), TSR_KARG(s.mem), TSR_KARG(s.off),
				   TSR_KARG(s.ldy), TSR_KARG(s.ldz), TSR_KARG(d.nx),
				   TSR_KARG(d.ny),  TSR_KARG(d.nz),  TSR_KARG(cop)};
	enqueue(name, args, 12, elements(&d));
}

void tsr__opencl_zero(void *variable_iface, size_t size)
{
	struct clview v = view_of(variable_iface);
	cl_ulong n = size;
	tsr_kernel_arg_t args[] = {TSR_KARG(v.mem), TSR_KARG(v.off), TSR_KARG(n)};
	enqueue("tsr_zero", args, 3, size);
}

/* StarPU without OpenCL: programs have nothing to build for, and no variant asks for a kernel */
#else

int tsr__opencl_start(void)
{
	return TSR_OK;
}

void tsr__opencl_stop(void)
{
}
#endif

int tsr_opencl_program(const char *name, const char *source, const char *options)
{
	TSR_REQUIRE_INIT("tsr_opencl_program");
	if (!name || !*name || strlen(name) >= TSR_NAME_MAX)
		return tsr__err(TSR_EINVAL,
				"tsr_opencl_program: a program needs a name of 1 to %d characters",
				TSR_NAME_MAX - 1);
	if (!source)
		return tsr__err(TSR_EINVAL, "tsr_opencl_program: OpenCL program '%s': null source",
				name);

#ifdef STARPU_USE_OPENCL
	return load_program("tsr_opencl_program", name, source, options);
#else
	return TSR_OK; /* no OpenCL device: nothing to build for */
#endif
}
