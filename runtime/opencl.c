/* opencl.c: OpenCL devices. Programs built once per run for every OpenCL device StarPU started
 * (Tessera's own, kernels.cl, and those a program loads with tsr_opencl_program), the kernels each
 * worker made from them, and the bodies of Tessera's own tasks on an OpenCL memory node.
 *
 * StarPU runs one worker thread per OpenCL device, and a cl_kernel must not have its arguments set
 * by two threads at once: so each worker keeps the kernels it made in a list only it touches, and
 * no lock is needed. Every OpenCL body here enqueues on the worker's queue; the codelets wait for
 * the queue before they return (they are synchronous codelets, as StarPU then expects). */
/* OpenCL 1.2 for the kernels' names and argument kinds (StarPU's header asks for 1.0 otherwise);
 * a platform without them answers with an error code, and those checks are skipped. */
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#ifdef STARPU_USE_OPENCL
#include "kernels.cl.h"

#define TSR_MAX_CL_PROGRAMS 32
/* Kernel names that start with this are Tessera's own (kernels.cl): a user program may not
 * define one, since the lookup would give one of the two to both. */
#define TSR_RESERVED_PREFIX "tsr_"
/* At most this many work-items per launch (2^48, days of work even for a GPU): a larger count is
 * a size computed wrong, such as (size_t)-1, which POCL would run for ever. */
#define TSR_MAX_WORK_ITEMS ((size_t)1 << 48)
#ifndef CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT
#define CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT 0x1069 /* OpenCL 3.0 */
#endif

struct clprog {
	char name[TSR_NAME_MAX];
	int user; /* loaded by tsr_opencl_program (not Tessera's kernels.cl) */
	int cl2;  /* built as OpenCL C 2.0 or later: work-groups may then be partial */
	/* ";k1;k2;": the kernels it defines (NULL: the platform does not say, or no device) */
	char *kernels;
	cl_program per_dev[STARPU_MAXOPENCLDEVS]; /* by StarPU's OpenCL device id */
};

static struct clprog progs[TSR_MAX_CL_PROGRAMS];
static int nprogs; /* written by the host thread with release order */

/* What a launch is checked against, per OpenCL device (read at tsr_init). */
struct cldev {
	size_t max_item[3]; /* CL_DEVICE_MAX_WORK_ITEM_SIZES */
	size_t max_group;   /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
	size_t max_size;    /* the largest size_t of the device (CL_DEVICE_ADDRESS_BITS) */
	int nonuniform;     /* partial work-groups possible (OpenCL 2.x, or 3.0 that says so) */
};

static struct cldev devs[STARPU_MAXOPENCLDEVS];

struct clkernel {
	char *name;
	cl_kernel k;
	int prog; /* index in progs */
	cl_uint nargs;
	/* each argument's address space (CL_KERNEL_ARG_ADDRESS_*); NULL if the platform does not
	 * say */
	cl_uint *space;
	size_t max_group; /* CL_KERNEL_WORK_GROUP_SIZE on the worker's device; 0: unknown */
	/* submission number of the task whose arguments it holds (0: Tessera's own bodies) */
	uint64_t args_of;
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

/* "OpenCL 2.1 ..." -> 2 */
static int major_version(cl_device_id device)
{
	char v[64] = "";
	clGetDeviceInfo(device, CL_DEVICE_VERSION, sizeof v, v, NULL);
	v[sizeof v - 1] = '\0';
	return !strncmp(v, "OpenCL ", 7) ? atoi(v + 7) : 1;
}

static void read_device(int devid)
{
	cl_device_id device;
	struct cldev *d = &devs[devid];
	cl_uint bits = 32;
	cl_bool nonuniform = CL_FALSE;

	starpu_opencl_get_device(devid, &device);
	memset(d, 0, sizeof *d);
	clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof d->max_item, d->max_item,
			NULL);
	clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof d->max_group, &d->max_group,
			NULL);
	clGetDeviceInfo(device, CL_DEVICE_ADDRESS_BITS, sizeof bits, &bits, NULL);
	d->max_size = bits >= 64 ? SIZE_MAX : ((size_t)1 << bits) - 1;

	int major = major_version(device);
	if (major >= 3)
		clGetDeviceInfo(device, CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, sizeof nonuniform,
				&nonuniform, NULL);
	d->nonuniform = major == 2 || nonuniform == CL_TRUE;
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

	err = clBuildProgram(p, 1, &device, options, NULL, NULL);
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

	free(pr->kernels);
	pr->kernels = NULL;
}

/* Whether the list ";k1;k2;" holds `name`. */
static int defines(const char *list, const char *name)
{
	size_t len = strlen(name);
	if (len == 0)
		return 0; /* and each match below leaves at least one character to step over */

	for (const char *at = list; at && (at = strstr(at, name)); at++)
		if (at > list && at[-1] == ';' && at[len] == ';')
			return 1;

	return 0;
}

/* ";k1;k2;" of a built program (the names OpenCL 1.2 lists); NULL if the platform does not say. */
static char *kernel_list(cl_program p)
{
	size_t size = 0;
	if (clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &size) != CL_SUCCESS || !size)
		return NULL;

	char *list = malloc(size + 2);
	if (!list)
		return NULL;

	list[0] = ';';
	if (clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, size, list + 1, NULL) != CL_SUCCESS) {
		free(list);
		return NULL;
	}

	list[size] = '\0';
	strcat(list, ";");
	return list;
}

/* The first kernel of `list` that a user program may not define: one of Tessera's names, or one
 * an earlier program defines (*owner: that program, NULL for the prefix). Copied into bad. */
static int kernel_clash(const char *list, int user, char *bad, size_t n, const char **owner)
{
	for (const char *k = list + 1; *k; k += strcspn(k, ";") + 1) {
		snprintf(bad, n, "%.*s", (int)strcspn(k, ";"), k);
		*owner = NULL;
		if (user && !strncmp(bad, TSR_RESERVED_PREFIX, strlen(TSR_RESERVED_PREFIX)))
			return 1;

		for (int p = 0; p < nprogs; p++)
			if (progs[p].kernels && defines(progs[p].kernels, bad)) {
				*owner = progs[p].name;
				return 1;
			}
	}

	return 0;
}

/* The build options of every program: the user's, then the argument kinds asked for (the
 * launch checks them). NULL when out of memory. */
static char *build_options(const char *options)
{
	const char *mine = "-cl-kernel-arg-info";
	size_t n = (options ? strlen(options) : 0) + strlen(mine) + 2;
	char *all = malloc(n);

	if (all)
		snprintf(all, n, "%s%s%s", options ? options : "", options ? " " : "", mine);
	return all;
}

/* Build the program on every device into pr; 0, or an error naming it. */
static int build_all(const char *what, struct clprog *pr, const char *source, const char *options,
		     const int *devids, int ndev)
{
	char *all = build_options(options);
	if (!all)
		return tsr__err(TSR_ENOMEM, "%s: OpenCL program '%s': out of memory", what,
				pr->name);

	for (int i = 0; i < ndev; i++) {
		char log[2048];
		pr->per_dev[devids[i]] = build_for(devids[i], source, all, log, sizeof log);
		if (!pr->per_dev[devids[i]]) {
			free(all);
			return tsr__err(TSR_EINVAL,
					"%s: OpenCL program '%s' does not build for OpenCL device "
					"%d: %s",
					what, pr->name, devids[i], log);
		}
	}

	free(all);
	return TSR_OK;
}

/* The program's kernels, refused when one would be shadowed by (or shadow) another's. */
static int list_kernels(const char *what, struct clprog *pr, int devid)
{
	pr->kernels = kernel_list(pr->per_dev[devid]);
	if (!pr->kernels)
		return TSR_OK; /* the platform does not say: kernels are looked up by trying */

	char bad[256];
	const char *owner;
	if (!kernel_clash(pr->kernels, pr->user, bad, sizeof bad, &owner))
		return TSR_OK;

	if (owner)
		return tsr__err(TSR_EINVAL,
				"%s: OpenCL program '%s' defines kernel '%s', which OpenCL program "
				"'%s' already defines (a kernel name belongs to one program)",
				what, pr->name, bad, owner);
	return tsr__err(TSR_EINVAL,
			"%s: OpenCL program '%s' defines kernel '%s': kernel names starting with "
			"'" TSR_RESERVED_PREFIX "' are Tessera's own (rename it)",
			what, pr->name, bad);
}

static int load_program(const char *what, const char *name, const char *source, const char *options,
			int user)
{
	for (int p = 0; p < nprogs; p++)
		if (!strcmp(progs[p].name, name))
			return tsr__err(TSR_EINVAL,
					"%s: OpenCL program '%s' is already loaded "
					"(a program loads once per run)",
					what, name);

	if (nprogs == TSR_MAX_CL_PROGRAMS)
		return tsr__err(TSR_EINVAL, "%s: OpenCL program '%s': at most %d programs per run",
				what, name, TSR_MAX_CL_PROGRAMS);

	struct clprog *pr = &progs[nprogs];
	memset(pr, 0, sizeof *pr);
	snprintf(pr->name, sizeof pr->name, "%s", name);
	pr->user = user;
	pr->cl2 = options && (strstr(options, "-cl-std=CL2") || strstr(options, "-cl-std=CL3"));

	/* without a device nothing is built (OpenCL variants simply never run), but the name is
	 * taken as anywhere else */
	int devids[STARPU_MAXOPENCLDEVS];
	int ndev = opencl_devids(devids, STARPU_MAXOPENCLDEVS);
	int rc = build_all(what, pr, source, options, devids, ndev);
	if (!rc && ndev > 0)
		rc = list_kernels(what, pr, devids[0]);
	if (rc) {
		release_program(pr);
		return rc;
	}

	/* a worker looking for a kernel sees the whole entry or none of it */
	__atomic_store_n(&nprogs, nprogs + 1, __ATOMIC_RELEASE);
	return TSR_OK;
}

int tsr__opencl_start(void)
{
	int devids[STARPU_MAXOPENCLDEVS];
	int ndev = opencl_devids(devids, STARPU_MAXOPENCLDEVS);

	for (int i = 0; i < ndev; i++)
		read_device(devids[i]);

	nprogs = 0;
	return load_program("tsr_init", "tessera", kernels_cl_source, NULL, 0);
}

void tsr__opencl_stop(void)
{
	for (int w = 0; w < STARPU_NMAXWORKERS; w++) {
		struct worker_kernels *wk = &wkernels[w];
		for (int i = 0; i < wk->n; i++) {
			clReleaseKernel(wk->v[i].k);
			free(wk->v[i].name);
			free(wk->v[i].space);
		}
		free(wk->v);
		memset(wk, 0, sizeof *wk);
	}

	for (int i = 0; i < nprogs; i++)
		release_program(&progs[i]);
	nprogs = 0;
}

/* What the launch checks of a new kernel: its arguments (count, address spaces) and largest
 * work-group on the device. */
static void describe(struct clkernel *e, cl_device_id device)
{
	e->nargs = 0;
	e->space = NULL;
	e->max_group = 0;
	e->args_of = 0;

	clGetKernelInfo(e->k, CL_KERNEL_NUM_ARGS, sizeof e->nargs, &e->nargs, NULL);
	clGetKernelWorkGroupInfo(e->k, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof e->max_group,
				 &e->max_group, NULL);

	cl_uint *space = e->nargs ? calloc(e->nargs, sizeof *space) : NULL;
	for (cl_uint i = 0; space && i < e->nargs; i++) {
		cl_kernel_arg_address_qualifier q;
		if (clGetKernelArgInfo(e->k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q,
				       NULL) != CL_SUCCESS) {
			free(space);
			return; /* the platform does not say */
		}
		space[i] = (cl_uint)q;
	}
	e->space = space;
}

/* Make kernel `name` from program p for worker w (device devid); NULL if p does not define it. */
static struct clkernel *make_kernel(struct worker_kernels *wk, int p, const char *name, int devid)
{
	cl_program prog = progs[p].per_dev[devid];
	if (!prog || (progs[p].kernels && !defines(progs[p].kernels, name)))
		return NULL;

	cl_int err;
	cl_kernel k = clCreateKernel(prog, name, &err);
	char *copy = err == CL_SUCCESS ? strdup(name) : NULL;
	if (!copy) {
		if (err == CL_SUCCESS)
			clReleaseKernel(k);
		return NULL;
	}

	cl_device_id device;
	starpu_opencl_get_device(devid, &device);
	TSR_GROW(wk->v, wk->n, wk->cap, 8);
	struct clkernel *e = &wk->v[wk->n++];
	e->name = copy;
	e->k = k;
	e->prog = p;
	describe(e, device);
	return e;
}

/* The running worker's kernel `name`, made from the program that defines it; NULL if none. */
static struct clkernel *worker_kernel(const char *name)
{
	int w = starpu_worker_get_id();
	if (w < 0 || !name || starpu_worker_get_type(w) != STARPU_OPENCL_WORKER)
		return NULL;

	struct worker_kernels *wk = &wkernels[w];
	for (int i = 0; i < wk->n; i++)
		if (!strcmp(wk->v[i].name, name))
			return &wk->v[i];

	int devid = starpu_worker_get_devid(w);
	int n = __atomic_load_n(&nprogs, __ATOMIC_ACQUIRE);
	for (int p = 0; p < n; p++) {
		struct clkernel *e = make_kernel(wk, p, name, devid);
		if (e)
			return e;
	}

	return NULL;
}

/* A kernel a user's variant asks for: not one of Tessera's; NULL with what was wrong in msg. */
static struct clkernel *user_kernel(const char *name, char *msg, size_t n)
{
	if (!name) {
		snprintf(msg, n, "null kernel name");
		return NULL;
	}
	if (!strncmp(name, TSR_RESERVED_PREFIX, strlen(TSR_RESERVED_PREFIX))) {
		snprintf(msg, n,
			 "kernel '%s': names starting with '" TSR_RESERVED_PREFIX "' are Tessera's "
			 "own kernels, which no variant launches",
			 name);
		return NULL;
	}

	struct clkernel *e = worker_kernel(name);
	if (!e)
		snprintf(msg, n,
			 "no OpenCL program loaded (tsr_opencl_program) defines kernel '%s'", name);
	return e;
}

/* The variant enqueues the kernel itself: it must hold no other task's buffers, so its buffer
 * arguments are cleared the first time task `seq` gets it. */
void *tsr__opencl_user_kernel(const char *name, uint64_t seq, char *msg, size_t n)
{
	struct clkernel *e = user_kernel(name, msg, n);
	if (!e)
		return NULL;

	if (e->args_of != seq && e->space) {
		for (cl_uint i = 0; i < e->nargs; i++)
			if (e->space[i] == CL_KERNEL_ARG_ADDRESS_GLOBAL ||
			    e->space[i] == CL_KERNEL_ARG_ADDRESS_CONSTANT)
				clSetKernelArg(e->k, i, sizeof(cl_mem), NULL);
		e->args_of = seq;
	}

	return e->k;
}

/* "8 x 8" for the work-items of a message */
static const char *sizes_str(int dims, const size_t *sizes, char *buf, size_t n)
{
	int at = snprintf(buf, n, "%zu", sizes[0]);

	for (int d = 1; d < dims && at > 0 && (size_t)at < n; d++)
		at += snprintf(buf + at, n - (size_t)at, " x %zu", sizes[d]);

	return buf;
}

static const char *space_name(cl_uint space)
{
	switch (space) {
	case CL_KERNEL_ARG_ADDRESS_GLOBAL:
		return "a global buffer";
	case CL_KERNEL_ARG_ADDRESS_CONSTANT:
		return "a constant buffer";
	case CL_KERNEL_ARG_ADDRESS_LOCAL:
		return "local memory";
	default:
		return "a value";
	}
}

/* The arguments against the kernel: as many as it takes (each launch sets every one, so none is
 * left from another task), and of the kind each one is where the platform says. */
static int check_args(const struct clkernel *e, const tsr_kernel_arg_t *args, int nargs, char *msg,
		      size_t n)
{
	if (nargs < 0 || (nargs > 0 && !args)) {
		snprintf(msg, n, "kernel '%s': %d argument(s)%s", e->name, nargs,
			 nargs < 0 ? ": a negative count" : " from a null array");
		return -1;
	}
	if ((cl_uint)nargs != e->nargs) {
		snprintf(msg, n, "kernel '%s' takes %u argument(s), but %d were given", e->name,
			 e->nargs, nargs);
		return -1;
	}

	for (int i = 0; i < nargs && e->space; i++) {
		cl_uint sp = e->space[i];
		int buffer =
			sp == CL_KERNEL_ARG_ADDRESS_GLOBAL || sp == CL_KERNEL_ARG_ADDRESS_CONSTANT;
		const char *bad = NULL;

		if (sp == CL_KERNEL_ARG_ADDRESS_LOCAL && (args[i].value || !args[i].size))
			bad = "a size in bytes and a null value";
		else if (buffer && (args[i].size != sizeof(cl_mem) || !args[i].value ||
				    !*(const cl_mem *)args[i].value))
			bad = "a cl_mem (an accessor's ptr, or the variant's own buffer)";
		else if (sp == CL_KERNEL_ARG_ADDRESS_PRIVATE && (!args[i].value || !args[i].size))
			bad = "its value's address and size";

		if (bad) {
			snprintf(msg, n,
				 "kernel '%s': argument %d is %s: it takes %s (got %zu bytes at "
				 "%p)",
				 e->name, i, space_name(sp), bad, args[i].size, args[i].value);
			return -1;
		}
	}

	return 0;
}

/* The global sizes: 1 to 3 dimensions, none 0, within the device's size_t, and a total that
 * neither overflows nor exceeds TSR_MAX_WORK_ITEMS. */
static int check_global(const struct clkernel *e, const struct cldev *d, int dims,
			const size_t *global, char *msg, size_t n)
{
	char gs[96];

	if (dims < 1 || dims > 3 || !global) {
		snprintf(msg, n,
			 "kernel '%s': %d dimension(s)%s: dimensions go from 1 to 3, and the "
			 "global sizes must be given",
			 e->name, dims, global ? "" : " of null global sizes");
		return -1;
	}

	size_t total = 1;
	for (int k = 0; k < dims; k++) {
		const char *bad = NULL;
		if (global[k] == 0)
			bad = "a global size of 0";
		else if (global[k] > d->max_size)
			bad = "a global size beyond the device's size_t";
		else if (total > SIZE_MAX / global[k])
			bad = "more work-items than a size_t counts";
		else if ((total *= global[k]) > TSR_MAX_WORK_ITEMS)
			bad = "more than 2^48 work-items (a size computed wrong?)";

		if (bad) {
			snprintf(msg, n, "kernel '%s' over %s work-items: %s in dimension %d",
				 e->name, sizes_str(dims, global, gs, sizeof gs), bad, k);
			return -1;
		}
	}

	return 0;
}

/* The work-group sizes (NULL: OpenCL chooses): none 0, within the device's and the kernel's
 * limits, and dividing the global sizes unless partial work-groups are possible. */
static int check_local(const struct clkernel *e, const struct cldev *d, int dims,
		       const size_t *global, const size_t *local, char *msg, size_t n)
{
	if (!local)
		return 0;

	char gs[96], ls[96];
	size_t group = 1;
	size_t max = e->max_group && e->max_group < d->max_group ? e->max_group : d->max_group;
	int uniform = !(d->nonuniform && progs[e->prog].cl2);

	for (int k = 0; k < dims; k++) {
		char bad[160] = "";
		if (local[k] == 0)
			snprintf(bad, sizeof bad, "a work-group size of 0");
		else if (d->max_item[k] && local[k] > d->max_item[k])
			snprintf(bad, sizeof bad, "more than the device's %zu work-items",
				 d->max_item[k]);
		else if (uniform && global[k] % local[k])
			snprintf(bad, sizeof bad,
				 "a work-group size that does not divide the global size (OpenCL C "
				 "1.x needs whole work-groups: round the global size up)");
		else if (max && local[k] > max / group)
			snprintf(bad, sizeof bad,
				 "work-groups of more than the %zu work-items the kernel allows on "
				 "this device",
				 max);
		else
			group *= local[k];

		if (*bad) {
			snprintf(msg, n,
				 "kernel '%s' over %s work-items in work-groups of %s: %s in "
				 "dimension %d",
				 e->name, sizes_str(dims, global, gs, sizeof gs),
				 sizes_str(dims, local, ls, sizeof ls), bad, k);
			return -1;
		}
	}

	return 0;
}

/* Sets every argument of e and enqueues it on the worker's queue; OpenCL's refusals named. */
static int set_and_enqueue(struct clkernel *e, const tsr_kernel_arg_t *args, int nargs, int dims,
			   const size_t *global, const size_t *local, uint64_t seq, char *msg,
			   size_t n)
{
	cl_command_queue q;
	char gs[96];

	starpu_opencl_get_current_queue(&q);
	e->args_of = seq;
	for (int i = 0; i < nargs; i++) {
		cl_int err = clSetKernelArg(e->k, (cl_uint)i, args[i].size, args[i].value);
		if (err != CL_SUCCESS) {
			snprintf(msg, n, "OpenCL kernel '%s': argument %d (%zu bytes): %s (%d)",
				 e->name, i, args[i].size, starpu_opencl_error_string(err),
				 (int)err);
			return -1;
		}
	}

	cl_int err =
		clEnqueueNDRangeKernel(q, e->k, (cl_uint)dims, NULL, global, local, 0, NULL, NULL);
	if (err != CL_SUCCESS) {
		snprintf(msg, n, "OpenCL kernel '%s' over %s work-items: %s (%d)", e->name,
			 sizes_str(dims, global, gs, sizeof gs), starpu_opencl_error_string(err),
			 (int)err);
		return -1;
	}

	return 0;
}

/* Checks, then sets and enqueues, e for task seq. */
static int launch(struct clkernel *e, const tsr_kernel_arg_t *args, int nargs, int dims,
		  const size_t *global, const size_t *local, uint64_t seq, char *msg, size_t n)
{
	const struct cldev *d = &devs[starpu_worker_get_devid(starpu_worker_get_id())];

	if (check_global(e, d, dims, global, msg, n) || check_args(e, args, nargs, msg, n) ||
	    check_local(e, d, dims, global, local, msg, n))
		return -1;

	return set_and_enqueue(e, args, nargs, dims, global, local, seq, msg, n);
}

int tsr__opencl_user_launch(const char *name, const tsr_kernel_arg_t *args, int nargs, int dims,
			    const size_t *global, const size_t *local, uint64_t seq, char *msg,
			    size_t n)
{
	struct clkernel *e = user_kernel(name, msg, n);
	if (!e)
		return -1;

	return launch(e, args, nargs, dims, global, local, seq, msg, n);
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

/* Kernel `name` over the n elements of a box, on the running worker's queue. */
static int enqueue(const char *name, const tsr_kernel_arg_t *args, int nargs, size_t n)
{
	struct clkernel *e = worker_kernel(name);
	if (!e) {
		tsr__task_error("OpenCL worker %d: Tessera's kernel '%s' is missing (a device "
				"without 64-bit floats has no f64 reductions)",
				starpu_worker_get_id(), name);
		return -1;
	}

	char msg[400];
	if (launch(e, args, nargs, 1, &n, NULL, 0, msg, sizeof msg)) {
		tsr__task_error("OpenCL worker %d: %s", starpu_worker_get_id(), msg);
		return -1;
	}

	return 0;
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
	return load_program("tsr_opencl_program", name, source, options, 1);
#else
	return TSR_OK; /* no OpenCL device: nothing to build for */
#endif
}
