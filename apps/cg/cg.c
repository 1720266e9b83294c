/* cg.c: conjugate gradient on Tessera for the 2-D / 3-D Poisson problem, as a CSR matrix or
 * matrix-free, with a sequential C reference (--verify) and an OpenMP baseline (--compare). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tessera.h>
#include "app_util.h"
#include "cg_kernels.h"

/* Tolerances of --verify (see README.md: why these are the bounds). */
#define VERIFY_X_RTOL 1e-10
#define VERIFY_HIST_RTOL 1e-6

/* ------------------------------------------------------------ options */

struct opts {
	int64_t n;  /* grid side */
	int dim;    /* 2 or 3 */
	double tol; /* on |r| / |b|; 0: run maxiter iterations */
	int64_t maxiter;
	int blocks;    /* row blocks; 0: 2 per worker */
	int csr;       /* 1: CSR matrix, 0: matrix-free stencil */
	int64_t check; /* convergence checked every `check` iterations */
	int verify, compare, reps;
};

/* An iteration's launches in a trace (tsr_trace_begin/end); --no-trace leaves it out. */
static int use_traces = 1;

/* Exit statuses (--help says them). */
enum { EXIT_USAGE = 2, EXIT_VERIFY = 3, EXIT_MAXITER = 4 };

static const char about[] =
	"Solve A x = b by conjugate gradient on Tessera, A the Poisson matrix of an n^dim grid\n"
	"(5-point in 2-D, 7-point in 3-D, Dirichlet), x0 = 0, until |r| <= tol |b| or maxiter.";
static const char epilog[] =
	"Exit status: 0 converged (with -tol 0: maxiter iterations run), 1 failure, 2 usage\n"
	"error, 3 --verify failed, 4 stopped at maxiter without reaching the tolerance.";

/* 0: run, 1: help or version printed, -1: usage error (said). */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.n = 100,
			   .dim = 2,
			   .tol = 1e-8,
			   .maxiter = 10000,
			   .csr = 1,
			   .check = 10};
	const app_opt_t opts[] = {
		{"-n", APP_OPT_I64, &o->n, 1, INT64_MAX, NULL, "N", "grid side (default 100)"},
		{"-dim", APP_OPT_INT, &o->dim, 2, 3, NULL, "2|3", "dimension (default 2)"},
		{"-tol", APP_OPT_DOUBLE, &o->tol, 0, 0, NULL, "T",
		 "relative residual tolerance (default 1e-8); 0: no tolerance,\n"
		 "run maxiter iterations (for timings)"},
		{"-maxiter", APP_OPT_I64, &o->maxiter, 0, INT64_MAX, NULL, "M",
		 "iteration limit (default 10000)"},
		{"-blocks", APP_OPT_INT, &o->blocks, 1, 1 << 20, NULL, "B",
		 "row blocks (default 2 per worker)"},
		{"--csr", APP_OPT_SET, &o->csr, 1, 0, NULL, NULL,
		 "store A as a CSR matrix (default)"},
		{"--stencil", APP_OPT_SET, &o->csr, 0, 0, NULL, NULL, "apply A matrix-free"},
		{"-check", APP_OPT_I64, &o->check, 1, INT64_MAX, NULL, "K",
		 "wait for the residual every K iterations (default 10)"},
		{"-reps", APP_OPT_INT, &o->reps, 1, 1000, NULL, "R",
		 "timed repetitions, the median is reported (default 1, 5 with --compare)"},
		{"--verify", APP_OPT_SET, &o->verify, 1, 0, NULL, NULL,
		 "compare with a sequential C CG: iterations, solution, residual history"},
		{"--compare", APP_OPT_SET, &o->compare, 1, 0, NULL, NULL,
		 "time a plain C/OpenMP CG in the same run and print the ratio"},
		{"--no-trace", APP_OPT_SET, &use_traces, 0, 0, NULL, NULL,
		 "no tsr_trace_begin/end around an iteration's launches (TSR_REPLAY=off\n"
		 "also stops Tessera from finding the loop by itself)"},
		{"-workers", APP_OPT_GONE, NULL, 0, 0, NULL, NULL,
		 "the CPU workers are Tessera's flag --ncpu N (or TSR_NCPU)"},
	};
	const app_cli_t cli = {"cg", about, opts, sizeof opts / sizeof opts[0], epilog};
	int rc = app_parse(&cli, argc, argv);
	if (rc)
		return rc;

	if (!o->reps)
		o->reps = o->compare ? 5 : 1;
	int64_t unknowns = o->n * o->n * (o->dim == 3 ? o->n : 1);
	if (o->n > (o->dim == 3 ? 1290 : 46340) || unknowns > INT32_MAX) {
		fprintf(stderr,
			"cg: -n %lld: %lld unknowns, more than CSR's 32-bit column indices hold\n",
			(long long)o->n, (long long)unknowns);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ the problem */

struct problem {
	int dim;
	int64_t nx, ny, nz, n; /* grid and unknowns */
	int64_t nnz;
	/* CSR, built for --csr only (the reference and the baseline use it too) */
	int64_t *rp;
	int32_t *col;
	double *val;
	double *b;
};

/* Rows in grid order, columns ascending: z-1, y-1, x-1, diagonal, x+1, y+1, z+1. */
static int problem_build(struct problem *P, int64_t side, int dim, int with_csr)
{
	memset(P, 0, sizeof *P);
	P->dim = dim;
	P->nx = P->ny = side;
	P->nz = dim == 3 ? side : 1;
	P->n = P->nx * P->ny * P->nz;
	/* nonzeros: the diagonal, plus two per interior grid edge in each dimension */
	P->nnz = P->n + 2 * ((P->nx - 1) * P->ny * P->nz + P->nx * (P->ny - 1) * P->nz +
			     P->nx * P->ny * (P->nz - 1));
	P->b = malloc(P->n * sizeof *P->b);
	if (!P->b)
		return -1;
	/* A b that is not smooth, so that errors in any row show in the solution. */
	for (int64_t i = 0; i < P->n; i++)
		P->b[i] = 1.0 + (double)((i * 7919) % 101) / 101.0;
	if (!with_csr)
		return 0;
	P->rp = malloc((P->n + 1) * sizeof *P->rp);
	P->col = malloc(P->nnz * sizeof *P->col);
	P->val = malloc(P->nnz * sizeof *P->val);
	if (!P->rp || !P->col || !P->val)
		return -1;
	const int64_t sx = 1, sy = P->nx, sz = P->nx * P->ny;
	int64_t k = 0;
	for (int64_t iz = 0; iz < P->nz; iz++)
		for (int64_t iy = 0; iy < P->ny; iy++)
			for (int64_t ix = 0; ix < P->nx; ix++) {
				const int64_t i = ix * sx + iy * sy + iz * sz;
				P->rp[i] = k;
#define NZ(c, v)                          \
	do {                              \
		P->col[k] = (int32_t)(c); \
		P->val[k] = (v);          \
		k++;                      \
	} while (0)
				if (iz > 0)
					NZ(i - sz, -1.0);
				if (iy > 0)
					NZ(i - sy, -1.0);
				if (ix > 0)
					NZ(i - sx, -1.0);
				NZ(i, 2.0 * dim);
				if (ix < P->nx - 1)
					NZ(i + sx, -1.0);
				if (iy < P->ny - 1)
					NZ(i + sy, -1.0);
				if (iz < P->nz - 1)
					NZ(i + sz, -1.0);
#undef NZ
			}
	P->rp[P->n] = k;
	return k == P->nnz ? 0 : -1;
}

static void problem_free(struct problem *P)
{
	free(P->rp);
	free(P->col);
	free(P->val);
	free(P->b);
}

/* Bytes one CG iteration moves (README.md, "effective bandwidth"): 14 vector sweeps of n doubles,
 * plus the matrix for CSR (values, column indices, row pointers). */
static double bytes_per_iter(const struct problem *P, int csr)
{
	double v = 14.0 * 8.0 * (double)P->n;
	if (csr)
		v += 12.0 * (double)P->nnz + 8.0 * (double)(P->n + 1);
	return v;
}

/* Outcome of one solve; rr[j] is r.r after iteration j (rr[0]: the initial residual). */
struct result {
	int64_t iters; /* iterations to convergence, or maxiter */
	/* iterations run (Tessera: includes the frozen ones after convergence) */
	int64_t submitted;
	int converged;
	double *rr; /* maxiter + 1 */
	double *x;  /* n */
	double seconds;
};

/* ------------------------------------------------------------ sequential reference */
/* Written independently of apps/cg/cg_cpu.c (textbook loops, one accumulator) so that --verify
 * also checks the kernels. */

static void ref_apply(const struct problem *P, int csr, const double *p, double *q)
{
	if (csr) {
		for (int64_t i = 0; i < P->n; i++) {
			double s = 0.0;
			for (int64_t k = P->rp[i]; k < P->rp[i + 1]; k++)
				s += P->val[k] * p[P->col[k]];
			q[i] = s;
		}
		return;
	}
	const int64_t sy = P->nx, sz = P->nx * P->ny;
	for (int64_t i = 0; i < P->n; i++) {
		const int64_t ix = i % P->nx, iy = (i / P->nx) % P->ny, iz = i / sz;
		double v = 2.0 * P->dim * p[i];
		if (ix > 0)
			v -= p[i - 1];
		if (ix < P->nx - 1)
			v -= p[i + 1];
		if (iy > 0)
			v -= p[i - sy];
		if (iy < P->ny - 1)
			v -= p[i + sy];
		if (P->dim == 3 && iz > 0)
			v -= p[i - sz];
		if (P->dim == 3 && iz < P->nz - 1)
			v -= p[i + sz];
		q[i] = v;
	}
}

static double ref_dot(int64_t n, const double *a, const double *b)
{
	double s = 0.0;
	for (int64_t i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

static int ref_solve(const struct problem *P, const struct opts *o, struct result *R)
{
	const int64_t n = P->n;
	double *r = malloc(n * sizeof *r), *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q);
	if (!r || !p || !q) {
		free(r), free(p), free(q);
		return -1;
	}
	for (int64_t i = 0; i < n; i++) {
		R->x[i] = 0.0;
		r[i] = P->b[i];
		p[i] = r[i];
	}
	cg_state_t s = cg_state_first(ref_dot(n, r, r), o->tol * o->tol);
	R->rr[0] = s.rr;
	int64_t j = 0;
	while (s.live && j < o->maxiter) {
		j++;
		ref_apply(P, o->csr, p, q);
		const double alpha = cg_alpha_value(&s, ref_dot(n, p, q));
		for (int64_t i = 0; i < n; i++) {
			R->x[i] += alpha * p[i];
			r[i] -= alpha * q[i];
		}
		s = cg_state_next(&s, ref_dot(n, r, r));
		R->rr[j] = s.rr;
		for (int64_t i = 0; i < n; i++)
			p[i] = r[i] + s.beta * p[i];
	}
	R->iters = R->submitted = j;
	R->converged = !s.live;
	free(r), free(p), free(q);
	return 0;
}

/* ------------------------------------------------------------ OpenMP baseline */
/* The same CG, the same range kernels, on `nt` static row blocks: one parallel loop per operation,
 * the residual tested every iteration. What a C programmer writes with OpenMP. */

static double omp_solve(const struct problem *P, const struct opts *o, int nt, struct result *R)
{
	const int64_t n = P->n;
	double *x = R->x, *r = malloc(n * sizeof *r), *p = malloc(n * sizeof *p),
	       *q = malloc(n * sizeof *q);
	int64_t *lo = malloc((nt + 1) * sizeof *lo);
	if (!r || !p || !q || !lo) {
		free(r), free(p), free(q), free(lo);
		return -1;
	}
	/* equal blocks, the remainder to the first ones, as tiles do */
	for (int t = 0; t <= nt; t++)
		lo[t] = t * (n / nt) + (t < n % nt ? t : n % nt);
	const int csr = o->csr, dim = P->dim;
	double t0 = app_now(), dot;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
	for (int t = 0; t < nt; t++)
		for (int64_t i = lo[t]; i < lo[t + 1]; i++) {
			x[i] = 0.0;
			r[i] = P->b[i];
			p[i] = r[i];
		}
/* clang-format off */
#define OMP_DOT(a, b)                                                                     \
	do {                                                                                  \
		dot = 0.0;                                                                        \
		_Pragma("omp parallel for num_threads(nt) schedule(static, 1) reduction(+ : dot)") \
		for (int t = 0; t < nt; t++)                                                      \
			dot += cg_dot_range(lo[t + 1] - lo[t], (a) + lo[t], (b) + lo[t]);             \
	} while (0)
	/* clang-format on */
	OMP_DOT(r, r);
	cg_state_t s = cg_state_first(dot, o->tol * o->tol);
	R->rr[0] = s.rr;
	int64_t j = 0;
	while (s.live && j < o->maxiter) {
		j++;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
		for (int t = 0; t < nt; t++) {
			if (csr)
				cg_spmv_csr_range(lo[t], lo[t + 1] - 1, P->rp + lo[t],
						  P->col + P->rp[lo[t]], P->val + P->rp[lo[t]], p,
						  0, q + lo[t]);
			else if (dim == 2)
				cg_stencil2d_range(lo[t], lo[t + 1] - 1, P->nx, P->ny, p, 0,
						   q + lo[t]);
			else
				cg_stencil3d_range(lo[t], lo[t + 1] - 1, P->nx, P->ny, P->nz, p, 0,
						   q + lo[t]);
		}
		OMP_DOT(p, q);
		const double alpha = cg_alpha_value(&s, dot);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
		for (int t = 0; t < nt; t++)
			cg_axpy_range(lo[t + 1] - lo[t], alpha, p + lo[t], x + lo[t]);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
		for (int t = 0; t < nt; t++)
			cg_axpy_range(lo[t + 1] - lo[t], -alpha, q + lo[t], r + lo[t]);
		OMP_DOT(r, r);
		s = cg_state_next(&s, dot);
		R->rr[j] = s.rr;
#pragma omp parallel for num_threads(nt) schedule(static, 1)
		for (int t = 0; t < nt; t++)
			cg_xpay_range(lo[t + 1] - lo[t], s.beta, r + lo[t], p + lo[t]);
	}
#undef OMP_DOT
	R->seconds = app_now() - t0;
	R->iters = R->submitted = j;
	R->converged = !s.live;
	free(r), free(p), free(q), free(lo);
	return 0;
}

/* ------------------------------------------------------------ Tessera */

struct tcg {
	cg_tasks_t tk;
	tsr_region_t vec, rowptr, nz;
	tsr_field_t fx, fr, fp, fq, fb, frp, fcol, fval;
	tsr_partition_t rows;  /* disjoint row blocks of the vectors */
	tsr_partition_t ghost; /* aliased: each block's rows plus the rows of p it reads */
	/* row pointers lo..hi+1 of each block (aliased: one shared entry) */
	tsr_partition_t rp_part;
	tsr_partition_t nz_part; /* nonzeros of each block */
	tsr_box_t colors;
	int blocks, have_vec, have_csr_regions;
	const struct problem *P;
	const struct opts *o;
};

/* tsr_map of field f (named `fname` in messages), checked before the caller copies `bytes`
 * through acc->ptr: the call's status, then what the copy relies on (a pointer, one contiguous 1-D
 * array of exactly that many bytes). A failure is reported here, naming the region and the field,
 * and its code returned: tsr_map's, or TSR_ESTATE for a mapping that succeeded but cannot be used
 * (it is unmapped again). */
static int map_checked(tsr_region_t r, tsr_field_t f, const char *fname, tsr_privilege_t priv,
		       size_t bytes, tsr_accessor_t *acc)
{
	char what[192];
	const char *rname = tsr_region_name(r);
	snprintf(what, sizeof what, "mapping field '%s' of region '%s' for %s", fname,
		 rname ? rname : "(stale)", priv == TSR_READ ? "reading" : "writing");
	int rc = tsr_map(r, f, priv, acc);
	if (rc != TSR_OK)
		return app_fail(what, rc);
	const int64_t count = acc->hi[0] - acc->lo[0] + 1;
	const char *bad = !acc->ptr                              ? "a NULL pointer"
			  : acc->dim != 1 || acc->stride[0] != 1 ? "not one contiguous 1-D array"
			  : count < 0 || (size_t)count * acc->elem_size != bytes
				  ? "an array of another size"
				  : NULL;
	if (!bad)
		return TSR_OK;
	fprintf(stderr,
		"cg: %s: tsr_map returned TSR_OK but %s (ptr %p, dim %d, %lld elements of %zu "
		"bytes; %zu bytes expected)\n",
		what, bad, acc->ptr, acc->dim, (long long)count, acc->elem_size, bytes);
	tsr_unmap(r, f); /* the mapping is unusable: its own status adds nothing to the report */
	return TSR_ESTATE;
}

static int map_write(tsr_region_t r, tsr_field_t f, const char *fname, const void *src,
		     size_t bytes)
{
	tsr_accessor_t acc;
	PASS(map_checked(r, f, fname, TSR_WRITE, bytes, &acc));
	memcpy(acc.ptr, src, bytes);
	TRY(tsr_unmap(r, f));
	return TSR_OK;
}

static int tcg_setup(struct tcg *T, const struct problem *P, const struct opts *o)
{
	T->P = P;
	T->o = o;
	TRY(cg_tasks_register(&T->tk));
	/* 2 per worker of the whole job: every rank's workers get blocks of their own */
	int nw = tsr_ncpu_workers() + tsr_ncuda_workers() + tsr_nopencl_workers();
	T->blocks = o->blocks ? o->blocks : 2 * (nw > 0 ? nw : 1) * tsr_nranks();
	if (T->blocks > P->n) {
		fprintf(stderr, "cg: %d blocks for %lld unknowns: at most one block per unknown\n",
			T->blocks, (long long)P->n);
		return TSR_EINVAL;
	}
	T->colors = tsr_box1(0, T->blocks - 1);

	tsr_fspace_t fs;
	TRY(tsr_fspace_create(&fs));
	TRY(tsr_fspace_add(fs, "x", TSR_F64, 0, &T->fx));
	TRY(tsr_fspace_add(fs, "r", TSR_F64, 0, &T->fr));
	TRY(tsr_fspace_add(fs, "p", TSR_F64, 0, &T->fp));
	TRY(tsr_fspace_add(fs, "Ap", TSR_F64, 0, &T->fq));
	TRY(tsr_fspace_add(fs, "b", TSR_F64, 0, &T->fb));
	TRY(tsr_region_create("cg_vectors", tsr_box1(0, P->n - 1), fs, &T->vec));
	T->have_vec = 1;
	TRY(tsr_fspace_destroy(fs));
	PASS(map_write(T->vec, T->fb, "b", P->b, P->n * sizeof(double)));
	TRY(tsr_partition_tiles(T->vec, T->colors, "rows", &T->rows));

	/* The row blocks as the runtime cut them: the CSR partitions and ghost ranges follow
	 * them. */
	tsr_box_t *blk = malloc(T->blocks * sizeof *blk), *nzb = malloc(T->blocks * sizeof *nzb),
		  *rpb = malloc(T->blocks * sizeof *rpb), *gb = malloc(T->blocks * sizeof *gb);
	int rc = (blk && nzb && rpb && gb) ? TSR_OK : TSR_ENOMEM;
	for (int c = 0; c < T->blocks && rc == TSR_OK; c++) {
		tsr_region_t sub;
		const int64_t color[3] = {c, 0, 0};
		if ((rc = tsr_partition_subregion(T->rows, color, &sub)) ||
		    (rc = tsr_region_bounds(sub, &blk[c])))
			break;
		const int64_t lo = blk[c].lo[0], hi = blk[c].hi[0];
		if (o->csr) {
			rpb[c] = tsr_box1(lo, hi + 1);
			nzb[c] = tsr_box1(P->rp[lo], P->rp[hi + 1] - 1);
			int64_t cmin = lo, cmax = hi; /* the columns this block's rows touch */
			for (int64_t k = P->rp[lo]; k < P->rp[hi + 1]; k++) {
				cmin = P->col[k] < cmin ? P->col[k] : cmin;
				cmax = P->col[k] > cmax ? P->col[k] : cmax;
			}
			gb[c] = tsr_box1(cmin, cmax);
		}
	}
	if (rc == TSR_OK) {
		if (o->csr) {
			tsr_fspace_t fr, fn;
			if (!(rc = tsr_fspace_create(&fr)) &&
			    !(rc = tsr_fspace_add(fr, "row_ptr", TSR_I64, 0, &T->frp)) &&
			    !(rc = tsr_region_create("cg_row_ptr", tsr_box1(0, P->n), fr,
						     &T->rowptr)) &&
			    !(rc = tsr_fspace_destroy(fr)) && !(rc = tsr_fspace_create(&fn)) &&
			    !(rc = tsr_fspace_add(fn, "col", TSR_I32, 0, &T->fcol)) &&
			    !(rc = tsr_fspace_add(fn, "val", TSR_F64, 0, &T->fval)) &&
			    !(rc = tsr_region_create("cg_nonzeros", tsr_box1(0, P->nnz - 1), fn,
						     &T->nz)) &&
			    !(rc = tsr_fspace_destroy(fn))) {
				T->have_csr_regions = 1;
				if (!(rc = map_write(T->rowptr, T->frp, "row_ptr", P->rp,
						     (P->n + 1) * sizeof *P->rp)) &&
				    !(rc = map_write(T->nz, T->fcol, "col", P->col,
						     P->nnz * sizeof *P->col)) &&
				    !(rc = map_write(T->nz, T->fval, "val", P->val,
						     P->nnz * sizeof *P->val)) &&
				    !(rc = tsr_partition_boxes(T->rowptr, T->blocks, rpb, "blocks",
							       &T->rp_part)) &&
				    !(rc = tsr_partition_boxes(T->nz, T->blocks, nzb, "blocks",
							       &T->nz_part)))
					rc = tsr_partition_boxes(T->vec, T->blocks, gb, "ghost",
								 &T->ghost);
			}
		} else {
			/* A block of rows reads p up to one grid line (2-D) or plane (3-D) away. */
			const int64_t halo[3] = {P->dim == 2 ? P->nx : P->nx * P->ny, 0, 0};
			rc = tsr_partition_tiles_halo(T->vec, tsr_box1(0, P->n - 1), T->colors,
						      halo, "ghost", &T->ghost);
		}
	}
	free(blk), free(nzb), free(rpb), free(gb);
	if (rc != TSR_OK)
		app_fail("setting up the regions", rc);
	return rc;
}

static int tcg_teardown(struct tcg *T)
{
	int rc = TSR_OK, r;
	if (T->have_csr_regions) {
		if ((r = tsr_region_destroy(T->rowptr)))
			rc = r;
		if ((r = tsr_region_destroy(T->nz)))
			rc = r;
	}
	if (T->have_vec && (r = tsr_region_destroy(T->vec)))
		rc = r;
	T->have_vec = T->have_csr_regions = 0;
	if (rc)
		app_fail("destroying the regions", rc);
	return rc;
}

/* q = A p, block by block: through the CSR matrix, or matrix-free. */
static int tcg_apply(struct tcg *T)
{
	const cg_tasks_t *k = &T->tk;
	if (T->o->csr) {
		TRY(tsr_run(k->spmv_csr,
			    &(tsr_launch_t){
				    .domain = T->colors,
				    .reqs = TSR_REQS(tsr_req_part(T->rp_part, TSR_READ,
								  TSR_FIELDS(T->frp)),
						     tsr_req_part(T->nz_part, TSR_READ,
								  TSR_FIELDS(T->fcol, T->fval)),
						     tsr_req_part(T->ghost, TSR_READ,
								  TSR_FIELDS(T->fp)),
						     tsr_req_part(T->rows, TSR_WRITE,
								  TSR_FIELDS(T->fq))),
			    }));
		return TSR_OK;
	}
	const cg_stencil_args_t a = {T->P->nx, T->P->ny, T->P->nz};
	TRY(tsr_run(T->P->dim == 2 ? k->stencil2d : k->stencil3d,
		    &(tsr_launch_t){
			    .domain = T->colors,
			    .reqs = TSR_REQS(tsr_req_part(T->ghost, TSR_READ, TSR_FIELDS(T->fp)),
					     tsr_req_part(T->rows, TSR_WRITE, TSR_FIELDS(T->fq))),
			    TSR_ARGS(a),
		    }));
	return TSR_OK;
}

/* Submit one CG iteration: S_prev is the state after the previous iteration; *S_next receives the
 * new one. Nothing here waits: every scalar travels in a future. */
static int tcg_iteration(struct tcg *T, tsr_future_t S_prev, tsr_future_t *S_next)
{
	const cg_tasks_t *k = &T->tk;
	tsr_future_t pAp, alpha, rr;
	PASS(tcg_apply(T));
	{ /* pAp = p . Ap */
		TRY(tsr_run(k->dot,
			    &(tsr_launch_t){
				    .domain = T->colors,
				    .reqs = TSR_REQS(tsr_req_part(T->rows, TSR_READ,
								  TSR_FIELDS(T->fp, T->fq))),
				    .redop = TSR_SUM,
				    .result = &pAp,
			    }));
	}
	{ /* alpha = rr / pAp, or 0 once converged */
		TRY(tsr_run(k->alpha,
			    &(tsr_launch_t){
				    .reqs = TSR_REQS(tsr_req_future(S_prev), tsr_req_future(pAp)),
				    .result = &alpha,
			    }));
		TRY(tsr_future_destroy(pAp));
	}
	/* r -= alpha Ap first, x += alpha p after the state: r.r and the state are on the critical
	 * path, the x update is not (only the next xpay, which overwrites p, must wait for it), so
	 * it can fill the workers while the reduction and the state task run. */
	const cg_axpy_args_t ax = {1.0};
	const cg_axpy_args_t ar = {-1.0};
	{ /* r -= alpha Ap */
		TRY(tsr_run(k->axpy, &(tsr_launch_t){
					     .domain = T->colors,
					     .reqs = TSR_REQS(tsr_req_part(T->rows, TSR_READ,
									   TSR_FIELDS(T->fq)),
							      tsr_req_part(T->rows, TSR_READ_WRITE,
									   TSR_FIELDS(T->fr)),
							      tsr_req_future(alpha)),
					     TSR_ARGS(ar),
				     }));
	}
	{ /* rr = r . r */
		TRY(tsr_run(k->dot, &(tsr_launch_t){
					    .domain = T->colors,
					    .reqs = TSR_REQS(tsr_req_part(T->rows, TSR_READ,
									  TSR_FIELDS(T->fr))),
					    .redop = TSR_SUM,
					    .result = &rr,
				    }));
	}
	{ /* the new state: beta, convergence */
		const cg_state_args_t a = {0.0, 0};
		TRY(tsr_run(k->state,
			    &(tsr_launch_t){
				    .reqs = TSR_REQS(tsr_req_future(S_prev), tsr_req_future(rr)),
				    TSR_ARGS(a),
				    .result = S_next,
			    }));
		TRY(tsr_future_destroy(rr));
	}
	{ /* x += alpha p */
		TRY(tsr_run(k->axpy, &(tsr_launch_t){
					     .domain = T->colors,
					     .reqs = TSR_REQS(tsr_req_part(T->rows, TSR_READ,
									   TSR_FIELDS(T->fp)),
							      tsr_req_part(T->rows, TSR_READ_WRITE,
									   TSR_FIELDS(T->fx)),
							      tsr_req_future(alpha)),
					     TSR_ARGS(ax),
				     }));
		TRY(tsr_future_destroy(alpha));
	}
	{ /* p = r + beta p (the state future starts with beta) */
		TRY(tsr_run(k->xpay, &(tsr_launch_t){
					     .domain = T->colors,
					     .reqs = TSR_REQS(tsr_req_part(T->rows, TSR_READ,
									   TSR_FIELDS(T->fr)),
							      tsr_req_part(T->rows, TSR_READ_WRITE,
									   TSR_FIELDS(T->fp)),
							      tsr_req_future(*S_next)),
				     }));
	}
	return TSR_OK;
}

/* STEP: the next call only while all went well; a failure is reported once and rc keeps its code,
 * so that the cleanup after it runs whatever failed. */
#define STEP(call)                                   \
	if (rc == TSR_OK && (rc = (call)) != TSR_OK) \
		app_fail(#call, rc);

/* One solve's state futures: S[j] is the state after iteration j, held[j] while it is not
 * destroyed; iterations submitted, states read (-1: none), the converged iteration (-1: none). */
struct states {
	tsr_future_t *S;
	char *held;
	int64_t submitted, checked, conv;
};

/* x = 0, r = p = b, and the first state from r.r. */
static int tcg_start(struct tcg *T, struct states *st)
{
	const double zero = 0.0;
	tsr_future_t rr0;
	int rc = TSR_OK;

	STEP(tsr_fill(T->vec, T->fx, &zero, sizeof zero));
	STEP(tsr_copy(T->vec, T->fb, T->vec, T->fr));
	STEP(tsr_copy(T->vec, T->fb, T->vec, T->fp));
	STEP(tsr_run(T->tk.dot,
		     &(tsr_launch_t){
			     .domain = T->colors,
			     .reqs = TSR_REQS(tsr_req_part(T->rows, TSR_READ, TSR_FIELDS(T->fr))),
			     .redop = TSR_SUM,
			     .result = &rr0,
		     }));
	if (rc != TSR_OK)
		return rc;
	const cg_state_args_t sa = {T->o->tol * T->o->tol, 1};
	STEP(tsr_run(T->tk.state, &(tsr_launch_t){
					  .reqs = TSR_REQS(tsr_req_future(rr0)),
					  TSR_ARGS(sa),
					  .result = &st->S[0],
				  }));
	st->held[0] = rc == TSR_OK;
	STEP(tsr_future_destroy(rr0));
	return rc;
}

/* The next window of `check` iterations, up to maxiter. */
static int submit_window(struct tcg *T, struct states *st)
{
	const int64_t maxiter = T->o->maxiter;
	const int64_t upto =
		st->submitted + T->o->check < maxiter ? st->submitted + T->o->check : maxiter;
	int rc = TSR_OK;

	while (rc == TSR_OK && st->submitted < upto) {
		if (use_traces)
			STEP(tsr_trace_begin(1));
		STEP(tcg_iteration(T, st->S[st->submitted], &st->S[st->submitted + 1]));
		if (use_traces)
			STEP(tsr_trace_end(1));
		if (rc == TSR_OK)
			st->held[++st->submitted] = 1;
	}
	return rc;
}

/* Read every state but the newest window's, unless nothing more will be submitted. The newest
 * readable state is waited for first: the others precede it in the dependency chain, so the host
 * blocks (and takes a core from the workers) once per window. */
static int read_window(struct tcg *T, struct states *st, struct result *R)
{
	const int64_t maxiter = T->o->maxiter;
	const int64_t readable =
		st->submitted < maxiter ? st->submitted - T->o->check : st->submitted;
	int rc = TSR_OK;

	if (st->checked < readable && st->conv < 0) {
		cg_state_t last;
		STEP(tsr_future_wait(st->S[readable], &last, sizeof last));
	}
	while (rc == TSR_OK && st->checked < readable && st->conv < 0) {
		cg_state_t s;
		int64_t j = ++st->checked;
		STEP(tsr_future_wait(st->S[j], &s, sizeof s));
		if (rc != TSR_OK)
			break;
		R->rr[j] = s.rr;
		/* S[submitted] still feeds the next iteration */
		if (j < st->submitted) {
			STEP(tsr_future_destroy(st->S[j]));
			st->held[j] = 0;
		}
		if (!s.live)
			st->conv = j;
	}
	if (rc == TSR_OK && st->checked > 0)
		app_progress_done(st->checked);
	return rc;
}

/* Every state future still held, destroyed (also after an error: leave nothing behind). */
static int release_states(struct states *st, int rc)
{
	for (int64_t j = 0; j <= st->submitted; j++) {
		int d = st->held[j] ? tsr_future_destroy(st->S[j]) : TSR_OK;
		if (d != TSR_OK && rc == TSR_OK) {
			rc = d;
			app_fail("destroying a state future", d);
		}
	}
	return rc;
}

/* x into R. Reading it waits for the iterations submitted past convergence: they leave it as it
 * was. */
static int read_x(struct tcg *T, struct result *R)
{
	tsr_accessor_t acc;
	int rc = map_checked(T->vec, T->fx, "x", TSR_READ, T->P->n * sizeof(double), &acc);
	if (rc == TSR_OK) {
		memcpy(R->x, acc.ptr, T->P->n * sizeof(double));
		STEP(tsr_unmap(T->vec, T->fx));
	}
	return rc;
}

/* The solve. The host submits iterations in windows of `check`; after submitting window w+1 it
 * reads the states of window w, which are ready or nearly so while window w+1 keeps the workers
 * busy. Convergence is exact without the host ever stopping an iteration: the state task freezes
 * the state at the first converged iteration j, so every later alpha is 0 and the axpy tasks
 * leave x and r untouched; the iterations submitted past j therefore leave x equal to x_j (see
 * README.md). */
static int tcg_solve(struct tcg *T, struct result *R)
{
	const int64_t maxiter = T->o->maxiter;
	struct states st = {.S = malloc((maxiter + 1) * sizeof *st.S),
			    .held = calloc(maxiter + 1, 1),
			    .checked = -1,
			    .conv = -1};
	if (!st.S || !st.held) {
		free(st.S), free(st.held);
		fprintf(stderr, "cg: out of memory for %lld state futures\n",
			(long long)maxiter + 1);
		return TSR_ENOMEM;
	}
	const double t0 = app_now();
	app_progress_begin("iteration", maxiter, 1);
	int rc = tcg_start(T, &st);
	while (rc == TSR_OK) {
		rc = submit_window(T, &st);
		if (rc == TSR_OK)
			rc = read_window(T, &st, R);
		if (st.conv >= 0 || st.checked == maxiter)
			break;
	}
	rc = release_states(&st, rc);
	if (rc == TSR_OK)
		rc = read_x(T, R);
	STEP(tsr_fence());
	R->seconds = app_now() - t0;
	R->converged = st.conv >= 0;
	R->iters = st.conv >= 0 ? st.conv : maxiter;
	R->submitted = st.submitted;
	app_progress_end(R->iters);
	free(st.S), free(st.held);
	return rc;
}
#undef STEP

/* The baseline runs in this process while the runtime is up. This StarPU is built with polling
 * drivers (STARPU_NON_BLOCKING_DRIVERS): idle workers spin on their cores and would take them
 * from the OpenMP threads, so the workers are paused for the baseline's duration. Every Tessera
 * task has finished when this runs: tcg_solve ends with tsr_fence. */
static int run_baseline(const struct problem *P, const struct opts *o, int nt, struct result *B)
{
	int rc = tsr_pause();
	if (rc)
		return rc;
	rc = omp_solve(P, o, nt, B);
	int rc2 = tsr_resume();
	return rc ? rc : rc2;
}

/* ------------------------------------------------------------ main */

static int result_alloc(struct result *R, const struct problem *P, const struct opts *o)
{
	memset(R, 0, sizeof *R);
	R->rr = calloc(o->maxiter + 1, sizeof *R->rr);
	R->x = malloc(P->n * sizeof *R->x);
	return R->rr && R->x ? 0 : -1;
}

static void result_free(struct result *R)
{
	free(R->rr);
	free(R->x);
}

/* FNV-1a over the bytes of x: one number for the solution, bit for bit, which runs that must agree
 * exactly compare (one process and several ranks with the same -blocks: tests/mpi/ranks.sh). */
static uint64_t x_digest(const double *x, int64_t n)
{
	const unsigned char *b = (const unsigned char *)x;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < (size_t)n * sizeof *x; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* --verify: same iteration count, solution within VERIFY_X_RTOL, residual history within
 * VERIFY_HIST_RTOL of the sequential reference. Returns 1 if it passes. */
static int verify(const struct problem *P, const struct opts *o, const struct result *T)
{
	struct result S;
	if (result_alloc(&S, P, o) || ref_solve(P, o, &S)) {
		fprintf(stderr, "cg: out of memory for the reference solve\n");
		result_free(&S);
		return 0;
	}
	double dx = 0.0, nx = 0.0, hist = 0.0;
	for (int64_t i = 0; i < P->n; i++) {
		dx += (T->x[i] - S.x[i]) * (T->x[i] - S.x[i]);
		nx += S.x[i] * S.x[i];
	}
	const double xerr = nx > 0 ? sqrt(dx / nx) : sqrt(dx);
	/* History: relative difference at every iteration before convergence. The converged
	 * iteration itself is left out of the bound (both runs are below tol there, which the equal
	 * iteration counts already say): where CG terminates early, as on tiny grids, r collapses
	 * to rounding level in one step and its relative value is noise. Without convergence every
	 * iteration is compared. */
	int64_t m = T->iters < S.iters ? T->iters : S.iters;
	if (!(T->converged && S.converged))
		m++;
	for (int64_t j = 0; j < m; j++) {
		const double a = sqrt(T->rr[j]), b = sqrt(S.rr[j]);
		const double e = b > 0 ? fabs(a - b) / b : fabs(a);
		hist = e > hist || isnan(e) ? e : hist;
	}
	const int ok = T->iters == S.iters && T->converged == S.converged &&
		       xerr <= VERIFY_X_RTOL && hist <= VERIFY_HIST_RTOL;
	app_printf("verify: iterations %lld (sequential %lld), final |r| %.6e (sequential %.6e), "
		   "solution relative error %.3g (bound %g), residual history max relative "
		   "difference %.3g over %lld iterations (bound %g): %s\n",
		   (long long)T->iters, (long long)S.iters, sqrt(T->rr[T->iters]),
		   sqrt(S.rr[S.iters]), xerr, VERIFY_X_RTOL, hist, (long long)m, VERIFY_HIST_RTOL,
		   ok ? "PASSED" : "FAILED");
	app_printf("verify: solution digest %016llx (FNV-1a of x, bits)\n",
		   (unsigned long long)x_digest(T->x, P->n));
	result_free(&S);
	return ok;
}

/* The timed solves: with repetitions, one untimed run first (StarPU's first tasks, perf-model
 * calibration); Tessera and OpenMP then alternate so that machine noise hits both alike. tt[i]
 * and tb[i]: seconds per iteration of run i. 0 on success. */
static int run_solves(struct tcg *T, const struct problem *P, const struct opts *o, int nt,
		      struct result *R, struct result *B, double *tt, double *tb)
{
	const int warm = o->reps > 1;
	for (int i = -warm; i < o->reps; i++) {
		if (tcg_solve(T, R))
			return -1;
		if (i >= 0)
			tt[i] = R->seconds / (double)(R->submitted > 0 ? R->submitted : 1);
		if (!o->compare)
			continue;
		if (run_baseline(P, o, nt, B))
			return -1;
		if (i >= 0)
			tb[i] = B->seconds / (double)(B->submitted > 0 ? B->submitted : 1);
	}
	return 0;
}

/* --compare's lines: the baseline's times and the ratios. tt, tb are sorted by app_median. */
static void report_compare(const struct opts *o, int nt, const struct result *R,
			   const struct result *B, double *tt, double *tb, double bpi)
{
	/* Per-pair ratios first (app_median() sorts in place). */
	double *pair = calloc(o->reps, sizeof *pair);
	for (int i = 0; pair && i < o->reps; i++)
		pair[i] = tb[i] / tt[i];
	const double t = app_median(tt, o->reps), tbest = tt[0];
	const double tbm = app_median(tb, o->reps), tbbest = tb[0];
#ifdef _OPENMP
	const char *omp = "OpenMP";
#else
	const char *omp = "sequential (no OpenMP in this build)";
#endif
	app_printf("baseline: %s, %d threads, %lld iterations, time/iter %.4f ms "
		   "(median of %d; best %.4f), %.2f GB/s\n",
		   omp, nt, (long long)B->iters, 1e3 * tbm, o->reps, 1e3 * tbbest, bpi / tbm / 1e9);
	app_printf("ratio: Tessera speed / %s speed = %.3f (medians), %.3f (median "
		   "of the %d paired runs), %.3f (best runs)\n",
		   omp, tbm / t, pair ? app_median(pair, o->reps) : NAN, o->reps, tbbest / tbest);
	if (B->iters != R->iters)
		app_printf("warning: the baseline ran %lld iterations, Tessera %lld\n",
			   (long long)B->iters, (long long)R->iters);
	free(pair);
}

/* The report: iterations, residual, time per iteration and bandwidth; on a shared machine other
 * jobs only add time, so the best run is printed next to the median. */
static void report(const struct problem *P, const struct opts *o, const struct result *R,
		   double *tt)
{
	const double bnorm = sqrt(R->rr[0]), res = sqrt(R->rr[R->iters]);
	app_printf("iterations: %lld (%s, tol %g; %lld submitted)\n", (long long)R->iters,
		   R->converged ? "converged" : "maxiter reached", o->tol, (long long)R->submitted);
	app_printf("final residual: |r| = %.6e, |r|/|b| = %.6e\n", res,
		   bnorm > 0 ? res / bnorm : res);
	double *sorted = malloc(o->reps * sizeof *sorted);
	if (!sorted)
		return;
	memcpy(sorted, tt, o->reps * sizeof *sorted); /* tt stays paired with tb */
	const double bpi = bytes_per_iter(P, o->csr), t = app_median(sorted, o->reps),
		     tbest = sorted[0];
	app_printf("time/iter: %.4f ms (median of %d; best %.4f), effective bandwidth: "
		   "%.2f GB/s (best %.2f; %.1f MB per iteration)\n",
		   1e3 * t, o->reps, 1e3 * tbest, bpi / t / 1e9, bpi / tbest / 1e9, bpi / 1e6);
	free(sorted);
}

/* The exit status of a solve that ran: --verify's, then convergence's (-tol 0 asks for none). */
static int outcome(const struct problem *P, const struct opts *o, const struct result *R)
{
	if (o->verify && !verify(P, o, R))
		return EXIT_VERIFY;
	if (!R->converged && o->tol > 0) {
		fprintf(stderr,
			"cg: stopped at maxiter (%lld iterations) without reaching -tol %g\n",
			(long long)o->maxiter, o->tol);
		return EXIT_MAXITER;
	}
	return 0;
}

/* Everything between tsr_init and tsr_finalize, once P is built; the exit status. */
static int run(const struct problem *P, const struct opts *o)
{
	struct tcg T;
	struct result R, B;
	memset(&T, 0, sizeof T);
	memset(&R, 0, sizeof R);
	memset(&B, 0, sizeof B);
	double *tt = calloc(o->reps, sizeof *tt), *tb = calloc(o->reps, sizeof *tb);
	const int nt = tsr_ncpu_workers() > 0 ? tsr_ncpu_workers() : 1;
	int status = 1;

	if (!tt || !tb || result_alloc(&R, P, o) || (o->compare && result_alloc(&B, P, o)))
		fprintf(stderr, "cg: out of memory\n");
	else if (tcg_setup(&T, P, o) == TSR_OK) {
		app_printf("cg: %d-D Poisson %lld^%d, %s, %lld unknowns, %lld nonzeros\n", P->dim,
			   (long long)o->n, P->dim, o->csr ? "CSR matrix" : "matrix-free stencil",
			   (long long)P->n, (long long)P->nnz);
		app_printf("tessera: policy %s, %d CPU + %d CUDA + %d OpenCL workers%s, %d blocks, "
			   "residual read every %lld iterations\n",
			   tsr_sched_name(), tsr_ncpu_workers(), tsr_ncuda_workers(),
			   tsr_nopencl_workers(), app_ranks_note(), T.blocks, (long long)o->check);
		if (run_solves(&T, P, o, nt, &R, &B, tt, tb) == 0) {
			report(P, o, &R, tt);
			if (o->compare)
				report_compare(o, nt, &R, &B, tt, tb, bytes_per_iter(P, o->csr));
			status = outcome(P, o, &R);
		}
	}
	if (tcg_teardown(&T) && !status)
		status = 1;
	result_free(&R);
	result_free(&B);
	free(tt), free(tb);
	return status;
}

int main(int argc, char **argv)
{
	struct opts o;
	int prc = parse_opts(argc, argv, &o);
	if (prc)
		return prc > 0 ? 0 : EXIT_USAGE;
	struct problem P;
	if (problem_build(&P, o.n, o.dim, o.csr)) {
		fprintf(stderr, "cg: out of memory building a %lld^%d problem\n", (long long)o.n,
			o.dim);
		problem_free(&P);
		return 1;
	}
	if (app_start()) {
		problem_free(&P);
		return 1;
	}
	int status = 1;
	/* The OpenCL variants' kernels, built for every OpenCL device (nothing to do without
	 * one). */
	int rc = cg_opencl_load();
	if (rc != TSR_OK)
		app_fail("building the OpenCL kernels (apps/cg/cg.cl)", rc);
	else
		status = run(&P, &o);
	problem_free(&P);
	fflush(stdout); /* the results are out even if the runtime's shutdown dies */
	rc = tsr_finalize();
	if (rc) {
		app_fail("tsr_finalize", rc);
		if (!status)
			status = 1;
	}
	return status;
}
