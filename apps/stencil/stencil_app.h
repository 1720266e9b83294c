/* stencil_app.h: what the parts of apps/stencil share: the problem, the host-side pieces of the
 * algorithm (initial condition, periodic halo update, the sequential reference) and the
 * baselines. */
#ifndef STENCIL_APP_H
#define STENCIL_APP_H

#include <stddef.h>
#include <stdint.h>

#include "app_util.h"
#include "stencil.h"

#define SH STENCIL_HALO

typedef struct stencil_problem {
	int nx, ny, nz; /* interior points in i, j, k */
	int iter;       /* diffusion steps */
	int f32;        /* 1: float32, 0: float64 */
	int tx, ty, tz; /* tiles in i, j, k */
	int nthreads;   /* OpenMP threads of the plain baseline and of STREAM */
	int nt;         /* streaming stores for out in every version (stencil_fused_f64) */
} stencil_problem_t;

/* Field of shape (nz, ny + 2h, nx + 2h), i fastest. */
static inline size_t sp_elem(const stencil_problem_t *p)
{
	return p->f32 ? sizeof(float) : sizeof(double);
}
static inline ptrdiff_t sp_sj(const stencil_problem_t *p)
{
	return (ptrdiff_t)p->nx + 2 * SH;
}
static inline ptrdiff_t sp_sk(const stencil_problem_t *p)
{
	return sp_sj(p) * ((ptrdiff_t)p->ny + 2 * SH);
}
static inline size_t sp_points(const stencil_problem_t *p)
{
	return (size_t)sp_sk(p) * (size_t)p->nz;
}
static inline size_t sp_bytes(const stencil_problem_t *p)
{
	return sp_points(p) * sp_elem(p);
}
/* Effective bytes per step: one read and one write of every interior point. */
static inline double sp_step_bytes(const stencil_problem_t *p)
{
	return 2.0 * (double)sp_elem(p) * p->nx * (double)p->ny * p->nz;
}
/* The diffusion coefficient of the course: 1/32, exact in both precisions. */
#define STENCIL_ALPHA (1.0 / 32.0)

/* Extent of tile t (0..n-1) of a dimension of `len` points split into n: the remainder goes to the
 * first tiles, as tsr_partition_tiles does. */
static inline void sp_tile_range(int len, int n, int t, int *lo, int *cnt)
{
	int base = len / n, rem = len % n;
	*cnt = base + (t < rem);
	*lo = t * base + (t < rem ? t : rem);
}

/* Host pieces of the algorithm (stencil_ref.c). `field` is a whole field with strides sj, sk. */
/* Zeros, and 1 on the box k in [nz/4, 3nz/4), j in [h + ny/4, h + 3ny/4), i in [h + nx/4, h +
 * 3nx/4). */
int sp_initial_is_one(const stencil_problem_t *p, int k, int j, int i); /* global coordinates */
void sp_initial(const stencil_problem_t *p, void *field, ptrdiff_t sj, ptrdiff_t sk, int k0,
		int k1);
/* Periodic halo update of planes [k0, k1): the j-edges without corners, then the i-edges with
 * them. */
void sp_halo_host(const stencil_problem_t *p, void *field, ptrdiff_t sj, ptrdiff_t sk, int k0,
		  int k1);
/* The plain sequential implementation of the algorithm (separate tmp field, three passes);
 * writes the final field, halo included, into result (sp_points elements). 0, or -1 out of
 * memory. */
int sp_reference(const stencil_problem_t *p, void *result);
/* Compare a result with the reference: bit for bit in f64, max relative error in f32 (pointwise,
 * |a - r| / |r|, or |a| where r == 0). Returns 1 if it passes; *err gets the error (0 if
 * identical). */
int sp_compare(const stencil_problem_t *p, const void *got, const void *ref, double *err,
	       size_t *where);
/* Write a field as a NumPy .npy (v1.0) file of shape (nz, ny + 2h, nx + 2h). 0, or -1 (errno
 * set). */
int sp_write_npy(const stencil_problem_t *p, const char *path, const void *field, ptrdiff_t sj,
		 ptrdiff_t sk);

/* The plain C/OpenMP baseline (baseline_omp.c): same fused kernel, OpenMP over k and j. */
typedef struct sp_omp sp_omp_t;
sp_omp_t *sp_omp_create(const stencil_problem_t *p);
/* one timed run from the initial condition: seconds */
double sp_omp_run(sp_omp_t *o);
const void *sp_omp_result(const sp_omp_t *o); /* the final field, contiguous */
void sp_omp_destroy(sp_omp_t *o);

/* STREAM triad a = b + s * c with nthreads OpenMP threads (stream.c). */
typedef struct sp_stream sp_stream_t;
sp_stream_t *sp_stream_create(size_t n, int nthreads);
/* one timed triad: GB/s counting 3 x 8 bytes per element */
double sp_stream_triad(sp_stream_t *s);
void sp_stream_destroy(sp_stream_t *s);

/* Raw StarPU baseline (baseline_starpu.c): per-tile buffers with their halo, pack/unpack tasks;
 * uses the StarPU instance that tsr_init started. */
typedef struct sp_raw sp_raw_t;
sp_raw_t *sp_raw_create(const stencil_problem_t *p);
double sp_raw_run(sp_raw_t *r);              /* one timed run; < 0 on failure */
int sp_raw_result(sp_raw_t *r, void *field); /* gather the final field (sp_points elements) */
/* The policy and the number of workers of the scheduling context its tasks go to. */
const char *sp_raw_policy(int *nworkers);
void sp_raw_destroy(sp_raw_t *r);

#endif /* STENCIL_APP_H */
