/* cg_cpu.c: CPU variants of the conjugate-gradient tasks (on cg_range.c's kernels) and the
 * registration of every CG task (CUDA and OpenCL variants attached when they were compiled). */
#include "config.h"
#include <stdio.h>
#include <string.h>
/* STARPU_USE_OPENCL: the OpenCL variants exist (apps/cg/cg_opencl.c) */
#include <starpu_config.h>
#include "cg_kernels.h"

/* ------------------------------------------------------------ CPU variants */
/* A failing tsr_ctx_field has already recorded the task error; the variant just returns. */

static const double *coef_future(tsr_ctx_t *ctx, int req)
{
	return (const double *)tsr_ctx_future(ctx, req);
}

/* x must cover y's rows (both come through the same row blocks). */
int cg_rows_cover(tsr_ctx_t *ctx, const tsr_accessor_t *x, const tsr_accessor_t *y)
{
	if (x->lo[0] > y->lo[0] || x->hi[0] < y->hi[0]) {
		tsr_ctx_error(ctx, "input rows %lld..%lld do not cover output rows %lld..%lld",
			      (long long)x->lo[0], (long long)x->hi[0], (long long)y->lo[0],
			      (long long)y->hi[0]);
		return 0;
	}
	return 1;
}

int cg_update_view(tsr_ctx_t *ctx, tsr_accessor_t *x, tsr_accessor_t *y, const double **c)
{
	*c = coef_future(ctx, 2);
	if (!*c || tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, x) ||
	    tsr_ctx_field(ctx, 1, 0, TSR_F64, TSR_READ_WRITE, y))
		return 0;
	return cg_rows_cover(ctx, x, y);
}

/* Where dot's b comes from: see cg_kernels.h. */
int cg_dot_view(tsr_ctx_t *ctx, tsr_accessor_t *a, tsr_accessor_t *b)
{
	tsr_req_info_t first;
	if (tsr_ctx_req(ctx, 0, &first) || tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, a))
		return 0;
	int rc = TSR_OK;
	if (first.nfields == 2)
		rc = tsr_ctx_field(ctx, 0, 1, TSR_F64, TSR_READ, b);
	else if (tsr_ctx_nreqs(ctx) > 1)
		rc = tsr_ctx_field(ctx, 1, 0, TSR_F64, TSR_READ, b);
	else
		*b = *a;
	return rc == TSR_OK && cg_rows_cover(ctx, b, a);
}

int cg_spmv_view(tsr_ctx_t *ctx, tsr_accessor_t *rp, tsr_accessor_t *col, tsr_accessor_t *val,
		 tsr_accessor_t *x, tsr_accessor_t *y)
{
	if (tsr_ctx_field(ctx, 0, 0, TSR_I64, TSR_READ, rp) ||
	    tsr_ctx_field(ctx, 1, 0, TSR_I32, TSR_READ, col) ||
	    tsr_ctx_field(ctx, 1, 1, TSR_F64, TSR_READ, val) ||
	    tsr_ctx_field(ctx, 2, 0, TSR_F64, TSR_READ, x) ||
	    tsr_ctx_field(ctx, 3, 0, TSR_F64, TSR_WRITE, y))
		return 0;
	if (rp->lo[0] > y->lo[0] || rp->hi[0] < y->hi[0] + 1) {
		tsr_ctx_error(ctx, "row pointers %lld..%lld do not cover rows %lld..%lld plus one",
			      (long long)rp->lo[0], (long long)rp->hi[0], (long long)y->lo[0],
			      (long long)y->hi[0]);
		return 0;
	}
	return 1;
}

static void axpy_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const cg_axpy_args_t *a = args;
	tsr_accessor_t x, y;
	const double *c;
	if (!cg_update_view(ctx, &x, &y, &c))
		return;
	const double s = a->scale * *c;
	if (s == 0.0)
		return;
	cg_axpy_range(y.hi[0] - y.lo[0] + 1, s, &TSR_AT1(&x, const double, y.lo[0]),
		      (double *)y.ptr);
}

static void xpay_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x, y;
	const double *c;
	if (!cg_update_view(ctx, &x, &y, &c))
		return;
	cg_xpay_range(y.hi[0] - y.lo[0] + 1, *c, &TSR_AT1(&x, const double, y.lo[0]),
		      (double *)y.ptr);
}

static void dot_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t u, v;
	if (!cg_dot_view(ctx, &u, &v))
		return;
	double s = cg_dot_range(u.hi[0] - u.lo[0] + 1, (const double *)u.ptr,
				&TSR_AT1(&v, const double, u.lo[0]));
	tsr_ctx_return(ctx, &s);
}

static void spmv_csr_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t rp, col, val, x, y;
	if (!cg_spmv_view(ctx, &rp, &col, &val, &x, &y))
		return;
	const int64_t lo = y.lo[0], hi = y.hi[0];
	const int64_t *r = &TSR_AT1(&rp, const int64_t, lo);
	if (col.lo[0] > r[0] || col.hi[0] < r[hi - lo + 1] - 1) {
		tsr_ctx_error(ctx,
			      "nonzeros %lld..%lld do not cover rows %lld..%lld (nonzeros "
			      "%lld..%lld)",
			      (long long)col.lo[0], (long long)col.hi[0], (long long)lo,
			      (long long)hi, (long long)r[0], (long long)r[hi - lo + 1] - 1);
		return;
	}
	/* The block's columns are not checked against x's bounds here: that is a pass over every
	 * column index; apps/cg builds x's partition from the columns themselves. */
	cg_spmv_csr_range(lo, hi, r, &TSR_AT1(&col, const int32_t, r[0]),
			  &TSR_AT1(&val, const double, r[0]), (const double *)x.ptr, x.lo[0],
			  (double *)y.ptr);
}

int cg_stencil_view(tsr_ctx_t *ctx, const void *args, int dim, tsr_accessor_t *x, tsr_accessor_t *y)
{
	const cg_stencil_args_t *a = args;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, x) ||
	    tsr_ctx_field(ctx, 1, 0, TSR_F64, TSR_WRITE, y))
		return 0;
	const int64_t h = dim == 2 ? a->nx : a->nx * a->ny;
	const int64_t last = a->nx * a->ny * (dim == 2 ? 1 : a->nz) - 1;
	const int64_t need_lo = y->lo[0] - h < 0 ? 0 : y->lo[0] - h;
	const int64_t need_hi = y->hi[0] + h > last ? last : y->hi[0] + h;
	if (x->lo[0] > need_lo || x->hi[0] < need_hi) {
		tsr_ctx_error(ctx,
			      "input rows %lld..%lld do not hold the ghost rows %lld..%lld of rows "
			      "%lld..%lld",
			      (long long)x->lo[0], (long long)x->hi[0], (long long)need_lo,
			      (long long)need_hi, (long long)y->lo[0], (long long)y->hi[0]);
		return 0;
	}
	return 1;
}

static void stencil_cpu(tsr_ctx_t *ctx, const void *args, int dim)
{
	const cg_stencil_args_t *a = args;
	tsr_accessor_t x, y;
	if (!cg_stencil_view(ctx, args, dim, &x, &y))
		return;
	if (dim == 2)
		cg_stencil2d_range(y.lo[0], y.hi[0], a->nx, a->ny, (const double *)x.ptr, x.lo[0],
				   (double *)y.ptr);
	else
		cg_stencil3d_range(y.lo[0], y.hi[0], a->nx, a->ny, a->nz, (const double *)x.ptr,
				   x.lo[0], (double *)y.ptr);
}

static void stencil2d_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	stencil_cpu(ctx, args, 2);
}

static void stencil3d_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	stencil_cpu(ctx, args, 3);
}

static void alpha_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const cg_state_t *s = tsr_ctx_future(ctx, 0);
	const double *pAp = tsr_ctx_future(ctx, 1);
	if (!s || !pAp)
		return;
	double alpha = cg_alpha_value(s, *pAp);
	tsr_ctx_return(ctx, &alpha);
}

static void state_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const cg_state_args_t *a = args;
	cg_state_t s;
	if (a->first) {
		const double *rr = tsr_ctx_future(ctx, 0);
		if (!rr)
			return;
		s = cg_state_first(*rr, a->tol2);
	} else {
		const cg_state_t *prev = tsr_ctx_future(ctx, 0);
		const double *rr = tsr_ctx_future(ctx, 1);
		if (!prev || !rr)
			return;
		s = cg_state_next(prev, *rr);
	}
	tsr_ctx_return(ctx, &s);
}

/* ------------------------------------------------------------ registration */

#ifdef TSR_HAVE_CUDA
#define CUDA_VARIANT(f) f
#else
#define CUDA_VARIANT(f) NULL
#endif
#ifdef STARPU_USE_OPENCL
#define OPENCL_VARIANT(f) f
#else
#define OPENCL_VARIANT(f) NULL
#endif

int cg_tasks_register(cg_tasks_t *t)
{
	const struct {
		tsr_task_t *slot;
		tsr_task_desc_t d;
	} all[] = {
		{&t->axpy,
		 {.name = "cg_axpy",
		  .cpu = axpy_cpu,
		  .cuda = CUDA_VARIANT(cg_axpy_cuda),
		  .opencl = OPENCL_VARIANT(cg_axpy_opencl),
		  .ret_type = TSR_NONE}},
		{&t->xpay,
		 {.name = "cg_xpay",
		  .cpu = xpay_cpu,
		  .cuda = CUDA_VARIANT(cg_xpay_cuda),
		  .opencl = OPENCL_VARIANT(cg_xpay_opencl),
		  .ret_type = TSR_NONE}},
		{&t->dot,
		 {.name = "cg_dot",
		  .cpu = dot_cpu,
		  .cuda = CUDA_VARIANT(cg_dot_cuda),
		  .opencl = OPENCL_VARIANT(cg_dot_opencl),
		  .ret_type = TSR_F64}},
		{&t->spmv_csr,
		 {.name = "cg_spmv_csr",
		  .cpu = spmv_csr_cpu,
		  .cuda = CUDA_VARIANT(cg_spmv_csr_cuda),
		  .opencl = OPENCL_VARIANT(cg_spmv_csr_opencl),
		  .ret_type = TSR_NONE}},
		{&t->stencil2d,
		 {.name = "cg_stencil2d",
		  .cpu = stencil2d_cpu,
		  .cuda = CUDA_VARIANT(cg_stencil2d_cuda),
		  .opencl = OPENCL_VARIANT(cg_stencil2d_opencl),
		  .ret_type = TSR_NONE}},
		{&t->stencil3d,
		 {.name = "cg_stencil3d",
		  .cpu = stencil3d_cpu,
		  .cuda = CUDA_VARIANT(cg_stencil3d_cuda),
		  .opencl = OPENCL_VARIANT(cg_stencil3d_opencl),
		  .ret_type = TSR_NONE}},
		{&t->alpha,
		 {.name = "cg_alpha",
		  .cpu = alpha_cpu,
		  .cuda = CUDA_VARIANT(cg_alpha_cuda),
		  .opencl = OPENCL_VARIANT(cg_alpha_opencl),
		  .ret_type = TSR_F64}},
		{&t->state,
		 {.name = "cg_state",
		  .cpu = state_cpu,
		  .cuda = CUDA_VARIANT(cg_state_cuda),
		  .opencl = OPENCL_VARIANT(cg_state_opencl),
		  .ret_type = TSR_BYTES,
		  .ret_bytes = sizeof(cg_state_t)}},
	};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		int rc = tsr_task_register(&all[i].d, all[i].slot);
		if (rc)
			return rc;
	}
	return TSR_OK;
}
