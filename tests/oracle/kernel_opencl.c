/* kernel_opencl.c: the oracle's task body on an OpenCL device. What the oracle tests is how the
 * runtime orders tasks and moves data between memory nodes, not a kernel: so the variant runs
 * kernel.c's very body over the device's own buffers, mapped into host memory with the OpenCL API
 * (clEnqueueMapBuffer) for the time of the body and unmapped after it, which sends every write
 * back to the device's copy. The buffers are the ones StarPU placed on the device's memory node,
 * so a value the runtime failed to move or order shows up exactly as a kernel's would. */
#define CL_TARGET_OPENCL_VERSION 120
#include <string.h>
#include <starpu_config.h>
#include "oracle.h"

#ifdef STARPU_USE_OPENCL
#include <CL/cl.h>

/* Bytes an accessor's box spans in its buffer, from the element at lo to the one at hi. */
static size_t span_bytes(const tsr_accessor_t *a)
{
	size_t last = 0;
	for (int d = 0; d < 3; d++)
		last += (size_t)(a->hi[d] - a->lo[d]) * (d == 0 ? 1 : a->stride[d]);
	return (last + 1) * a->elem_size;
}

static size_t type_bytes(int32_t t)
{
	return t == TSR_F64 || t == TSR_I64 ? 8 : 4;
}

struct mapped {
	cl_mem mem;
	void *host;
};

static void unmap_all(cl_command_queue q, const struct mapped *maps, int n)
{
	for (int i = 0; i < n; i++)
		clEnqueueUnmapMemObject(q, maps[i].mem, maps[i].host, 0, NULL, NULL);
}

/* Map every region accessor's box; acc[r][k].ptr becomes the host address of its element at lo.
 * Returns how many mappings were made (all of them, or -1 after an error on ctx). */
static int map_regions(tsr_ctx_t *ctx, cl_command_queue q, const or_kargs_t *a,
		       tsr_accessor_t acc[][OR_MAXF], struct mapped *maps)
{
	int n = 0;
	for (int r = 0; r < a->nreq; r++) {
		if (a->req[r].kind == RQ_FUTURE)
			continue;
		for (int k = 0; k < a->req[r].nf; k++) {
			tsr_accessor_t *x = &acc[r][k];
			cl_map_flags flags =
				x->priv == TSR_READ ? CL_MAP_READ : CL_MAP_READ | CL_MAP_WRITE;
			cl_int err;
			void *host =
				clEnqueueMapBuffer(q, (cl_mem)x->ptr, CL_TRUE, flags, x->offset,
						   span_bytes(x), 0, NULL, NULL, &err);
			if (err != CL_SUCCESS) {
				tsr_ctx_error(ctx,
					      "oracle task: mapping requirement %d field %d: "
					      "OpenCL error %d",
					      r, k, err);
				unmap_all(q, maps, n);
				return -1;
			}
			maps[n].mem = (cl_mem)x->ptr;
			maps[n].host = host;
			n++;
			x->ptr = host;
			x->offset = 0;
		}
	}
	return n;
}

/* Each future's value, read from its buffer into host memory (vals[r]). */
static int read_futures(tsr_ctx_t *ctx, cl_command_queue q, const or_kargs_t *a, const void *fut[],
			uint64_t vals[OR_MAXREQ])
{
	for (int r = 0; r < a->nreq; r++) {
		if (a->req[r].kind != RQ_FUTURE)
			continue;
		cl_int err =
			clEnqueueReadBuffer(q, (cl_mem)fut[r], CL_TRUE, 0,
					    type_bytes(a->req[r].type[0]), &vals[r], 0, NULL, NULL);
		if (err != CL_SUCCESS) {
			tsr_ctx_error(ctx,
				      "oracle task: reading future requirement %d: OpenCL error %d",
				      r, err);
			return -1;
		}
		fut[r] = &vals[r];
	}
	return 0;
}

/* The return slot is a buffer: an index launch's reduction slot holds the identity, folded into
 * as tsr_ctx_return does on a CPU; a single launch's slot is written. */
static void write_return(tsr_ctx_t *ctx, cl_command_queue q, const or_kargs_t *a,
			 const uint64_t *ret)
{
	cl_mem slot = tsr_ctx_return_slot(ctx);
	if (!slot || a->ret_type == TSR_NONE)
		return;
	size_t size = type_bytes(a->ret_type);
	uint64_t value = 0;
	cl_int err = CL_SUCCESS;
	if (a->ret_op) {
		err = clEnqueueReadBuffer(q, slot, CL_TRUE, 0, size, &value, 0, NULL, NULL);
		or_fold((tsr_type_t)a->ret_type, TSR_REDOP_ID(a->ret_op), &value, ret);
	} else {
		memcpy(&value, ret, size);
	}
	if (err == CL_SUCCESS)
		err = clEnqueueWriteBuffer(q, slot, CL_TRUE, 0, size, &value, 0, NULL, NULL);
	if (err != CL_SUCCESS)
		tsr_ctx_error(ctx, "oracle task: writing the return value: OpenCL error %d", err);
}

void or_opencl_variant(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t acc[OR_MAXREQ][OR_MAXF];
	const void *fut[OR_MAXREQ] = {0};
	uint64_t fut_vals[OR_MAXREQ];
	struct mapped maps[OR_MAXREQ * OR_MAXF];
	if (or_gather(ctx, args, arglen, acc, fut))
		return;
	const or_kargs_t *a = args;
	cl_command_queue q = tsr_ctx_opencl_queue(ctx);
	if (read_futures(ctx, q, a, fut, fut_vals))
		return;
	int nmaps = map_regions(ctx, q, a, acc, maps);
	if (nmaps < 0)
		return;
	int64_t point[3] = {0, 0, 0};
	int pdim = tsr_ctx_point(ctx, point);
	uint64_t ret = 0;
	or_kernel(a, pdim < 0 ? 0 : pdim, point, acc, fut, &ret);
	unmap_all(q, maps, nmaps);
	write_return(ctx, q, a, &ret);
}
#endif
