/* cg_kernels.h: the task variants of conjugate gradient (vector updates, dot products, CSR and
 * matrix-free Poisson operators, and the two scalar steps), each with a CPU, a CUDA and an OpenCL
 * variant. */
#ifndef CG_KERNELS_H
#define CG_KERNELS_H

#include <stdint.h>
#include <tessera.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every vector task works on one block of rows of 1-D f64 regions; its requirements are fixed
 * below (req k = k-th element of the launch's requirement array) and the task learns its fields
 * from them (tsr_ctx_field), so no argument names a field. A "coefficient future" is read as the
 * double at offset 0 of the future's value, so a TSR_F64 future and a TSR_BYTES future whose struct
 * starts with a double (cg_state_t) both work. */
typedef struct cg_tasks {
	tsr_task_t axpy;      /* y += scale * c * x                                   */
	tsr_task_t xpay;      /* y = x + c * y                                        */
	tsr_task_t dot;       /* returns sum over the block of a[i] * b[i] (TSR_F64)  */
	tsr_task_t spmv_csr;  /* y = A x, A in CSR                                    */
	tsr_task_t stencil2d; /* y = A x, A the 2-D 5-point Poisson operator          */
	tsr_task_t stencil3d; /* y = A x, A the 3-D 7-point Poisson operator          */
	tsr_task_t alpha;     /* CG step length from the state and p.Ap (TSR_F64)     */
	tsr_task_t state;     /* CG state after an iteration (TSR_BYTES, cg_state_t)  */
} cg_tasks_t;

/* Register every task above (CPU variants, and CUDA and OpenCL variants when they were
 * compiled). */
int cg_tasks_register(cg_tasks_t *t);
/* Build the OpenCL kernels of the variants (apps/cg/cg.cl) for every OpenCL device: call it after
 * tsr_init; TSR_OK without OpenCL workers or without OpenCL in StarPU, else tsr_opencl_program's
 * code (TSR_EINVAL with the compiler's log in tsr_last_error when they do not build). */
int cg_opencl_load(void);

/* axpy. req 0: x READ (one field); req 1: y READ_WRITE (one field); req 2: coefficient future c.
 * When scale * c == 0 the block is left untouched: y + 0 * x == y for finite x, and CG relies on
 * it to freeze x and r after convergence without the host waiting (see apps/cg/README.md). */
typedef struct cg_axpy_args {
	double scale;
} cg_axpy_args_t;

/* xpay. req 0: x READ (one field); req 1: y READ_WRITE (one field); req 2: coefficient future c.
 * No arguments. */

/* dot of a and b, both READ: a is the first field of req 0; b is its second field if it has two,
 * else the first field of req 1 if there is one, else a itself (a.a). No arguments. Index-launch
 * it with TSR_SUM to get the full product. */

/* spmv_csr over rows lo..hi (the bounds of req 3). No arguments.
 * req 0: row pointers (TSR_I64) over lo..hi+1, READ (an aliased partition: neighbours share one
 *        entry);
 * req 1: the block's nonzeros row_ptr[lo]..row_ptr[hi+1]-1: two fields, columns (TSR_I32) then
 *        values (TSR_F64), READ;
 * req 2: x over at least every column the block's rows touch, READ (an aliased partition of the
 *        vector: the block plus its ghost rows);
 * req 3: y over lo..hi, WRITE. */

/* stencil2d / stencil3d over rows lo..hi (the bounds of req 1) of the Poisson matrix on an
 * nx x ny (x nz) grid numbered x fastest, Dirichlet boundary (neighbours outside the grid are 0):
 * y[i] = 2*dim*x[i] - sum of x over the grid neighbours of i.
 * req 0: x READ over lo-h..hi+h clipped to the vector, h = nx (2-D) or nx*ny (3-D);
 * req 1: y WRITE over lo..hi. nz is ignored in 2-D. */
typedef struct cg_stencil_args {
	int64_t nx, ny, nz;
} cg_stencil_args_t;

/* CG scalars, kept in futures so the host never waits inside an iteration.
 * beta comes first so that the state is itself a coefficient future for xpay. */
typedef struct cg_state {
	double beta;  /* rr / rr of the previous iteration; 0 once converged          */
	double rr;    /* r.r after this iteration (frozen at convergence)             */
	double bb;    /* b.b: the tolerance is relative to |b|                        */
	double tol2;  /* converged when rr <= tol2 * bb                               */
	int64_t iter; /* iterations done (frozen at convergence)                      */
	int64_t live; /* 1 while not converged                                        */
} cg_state_t;

/* alpha: returns (TSR_F64) state.live ? state.rr / pAp : 0.
 * req 0: state future (cg_state_t); req 1: pAp future (TSR_F64). No arguments. */

/* state. First call (args.first = 1): req 0 is the r.r future of the initial residual; returns
 * {beta 0, rr, bb = rr, tol2, iter 0, live = !(rr <= tol2 * bb)}. Later calls: req 0 is the
 * previous state, req 1 the new r.r future; returns the next state, or the previous one with beta =
 * 0 if it had already converged. */
typedef struct cg_state_args {
	double tol2;
	int first;
} cg_state_args_t;

/* Plain C kernels on one contiguous range of rows (cg_range.c), shared by the CPU variants, the
 * OpenMP baseline of apps/cg and the plain MPI CG of apps/bench (so that they differ only by how
 * the work is run). Every array is passed
 * as a pointer to its first element and the global index of that element, so no pointer is ever
 * formed outside an array. */
/* Checks both variants run before their kernels (cg_cpu.c); 1 if fine, else 0 after a task error.
 * cg_rows_cover: input rows x cover output rows y. cg_update_view: the accessors and coefficient of
 * axpy and xpay (x READ covering y READ_WRITE). cg_dot_view: a and b of dot, b covering a.
 * cg_spmv_view: the five accessors of spmv_csr, the row pointers covering y's rows plus one.
 * cg_stencil_view: the stencil's accessors (x READ through the ghost partition, y WRITE), x holding
 * every ghost row y needs. */
int cg_rows_cover(tsr_ctx_t *ctx, const tsr_accessor_t *x, const tsr_accessor_t *y);
int cg_update_view(tsr_ctx_t *ctx, tsr_accessor_t *x, tsr_accessor_t *y, const double **c);
int cg_dot_view(tsr_ctx_t *ctx, tsr_accessor_t *a, tsr_accessor_t *b);
int cg_spmv_view(tsr_ctx_t *ctx, tsr_accessor_t *rp, tsr_accessor_t *col, tsr_accessor_t *val,
		 tsr_accessor_t *x, tsr_accessor_t *y);
int cg_stencil_view(tsr_ctx_t *ctx, const void *args, int dim, tsr_accessor_t *x,
		    tsr_accessor_t *y);
void cg_axpy_range(int64_t n, double a, const double *x, double *y); /* y += a x */
void cg_xpay_range(int64_t n, double a, const double *x, double *y); /* y = x + a y */
double cg_dot_range(int64_t n, const double *a, const double *b);
/* y[i - lo] = sum_k val[k - k0] * x[col[k - k0] - xlo] for rows i = lo..hi, k in
 * rp[i-lo]..rp[i-lo+1]-1, where rp holds row_ptr[lo..hi+1] and k0 = rp[0]. */
void cg_spmv_csr_range(int64_t lo, int64_t hi, const int64_t *rp, const int32_t *col,
		       const double *val, const double *x, int64_t xlo, double *y);
/* y[i - lo] = (A x)[i] for rows lo..hi of the Poisson operator; x[g - xlo] is global row g. */
void cg_stencil2d_range(int64_t lo, int64_t hi, int64_t nx, int64_t ny, const double *x,
			int64_t xlo, double *y);
void cg_stencil3d_range(int64_t lo, int64_t hi, int64_t nx, int64_t ny, int64_t nz, const double *x,
			int64_t xlo, double *y);

/* The scalar steps: one definition for the CPU variants, the CUDA variants (device code) and
 * the sequential reference in apps/cg, so all three take the same decisions. */
#ifdef __CUDACC__
#define CG_HD __host__ __device__
#else
#define CG_HD
#endif
static inline CG_HD double cg_alpha_value(const cg_state_t *s, double pAp)
{
	return s->live ? s->rr / pAp : 0.0;
}
static inline CG_HD int cg_converged(double rr, double tol2, double bb)
{
	return rr <= tol2 * bb; /* false for NaN: a diverged run keeps going to maxiter */
}
static inline CG_HD cg_state_t cg_state_first(double rr, double tol2)
{
	cg_state_t s;
	s.beta = 0.0;
	s.rr = rr;
	s.bb = rr;
	s.tol2 = tol2;
	s.iter = 0;
	s.live = !cg_converged(rr, tol2, rr);
	return s;
}
static inline CG_HD cg_state_t cg_state_next(const cg_state_t *prev, double rr)
{
	cg_state_t s = *prev;
	if (!prev->live) {
		s.beta = 0.0; /* frozen: x and r no longer move (alpha is 0), p is irrelevant */
		return s;
	}
	s.beta = rr / prev->rr;
	s.rr = rr;
	s.iter = prev->iter + 1;
	s.live = !cg_converged(rr, prev->tol2, prev->bb);
	return s;
}

#ifdef TSR_HAVE_CUDA
/* CUDA variants (apps/cg/cg_cuda.cu), registered by cg_tasks_register. */
void cg_axpy_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_xpay_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_dot_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_spmv_csr_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_stencil2d_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_stencil3d_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_alpha_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_state_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
#endif

/* OpenCL variants (apps/cg/cg_opencl.c, compiled when StarPU has OpenCL), registered by
 * cg_tasks_register; their kernels come from cg_opencl_load. */
void cg_axpy_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_xpay_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_dot_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_spmv_csr_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_stencil2d_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_stencil3d_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_alpha_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);
void cg_state_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);

#ifdef __cplusplus
}
#endif
#endif /* CG_KERNELS_H */
