/* mpi_cg.c: apps/cg as a plain MPI C program, its limit on several ranks (make bench-ranks): a
 * block of rows per rank, p's ghost rows by MPI_Isend/Irecv, the dot products by MPI_Allreduce. */
#include "config.h"

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"
#include "cg_kernels.h"

/* The problem and the rule of apps/cg: the n^dim Poisson matrix (5-point in 2-D, 7-point in 3-D,
 * Dirichlet), the same b, x0 = 0, converged when r.r <= tol^2 b.b (cg_state_next), at most
 * maxiter iterations. */
typedef struct opts {
	int64_t n, maxiter;
	int dim, csr, reps;
	double tol;
} opts_t;

/* This rank's share: rows lo..hi of the nx*ny*nz unknowns; the rows h either side of them (one
 * grid line in 2-D, one plane in 3-D) are the ghost rows p must hold before A p. */
typedef struct block {
	int rank, nranks;
	int64_t nx, ny, nz, n, lo, hi, rows, h;
	int dim;
	/* CSR rows lo..hi, global column indices (csr only) */
	int64_t *rp;
	int32_t *col;
	double *val;
	double *b, *x, *r, *q;
	double *pg; /* p with its ghost rows: pg[g - (lo - h)] is global row g */
} block_t;

/* Exit statuses: 2 usage, 3 the true residual misses the tolerance, 4 maxiter without
 * converging. */
enum { EXIT_USAGE = 2, EXIT_CHECK = 3, EXIT_MAXITER = 4 };

/* ------------------------------------------------------------ options */

static void usage(void)
{
	printf("usage: mpirun -np N mpi-cg [-n N] [-dim 2|3] [-tol T] [-maxiter M]\n"
	       "                [--csr|--stencil] [-reps R]\n"
	       "apps/cg's problem and stopping rule as a plain MPI C program (row blocks, halo\n"
	       "rows by Isend/Irecv, dot products by Allreduce); defaults as apps/cg: -n 100,\n"
	       "-dim 2, -tol 1e-8, -maxiter 10000, CSR. -reps R: R timed solves after an untimed\n"
	       "one (R > 1), the median printed. Exit status: 0 converged, 1 failure, 2 usage,\n"
	       "3 the true residual |b - A x| above 10 tol, 4 maxiter reached.\n");
}

static int parse_tol(const char *text, double *tol)
{
	char *end;
	double v = text ? strtod(text, &end) : -1.0;
	if (!text || end == text || *end || !(v >= 0.0)) {
		fprintf(stderr, "mpi-cg: -tol '%s': expected a number >= 0\n", text ? text : "");
		return -1;
	}
	*tol = v;
	return 0;
}

/* One option at argv[*a] (its value after it); 0, 1 for --help, -1 on a mistake (said). */
static int parse_one(int argc, char **argv, int *a, opts_t *o)
{
	const char *opt = argv[*a];
	const char *val = *a + 1 < argc ? argv[*a + 1] : NULL;
	int takes = 1, rc = 0;
	if (!strcmp(opt, "-n"))
		rc = app_parse_i64(opt, val, 1, 46340, &o->n);
	else if (!strcmp(opt, "-dim"))
		rc = app_parse_int(opt, val, 2, 3, &o->dim);
	else if (!strcmp(opt, "-tol"))
		rc = parse_tol(val, &o->tol);
	else if (!strcmp(opt, "-maxiter"))
		rc = app_parse_i64(opt, val, 0, INT32_MAX, &o->maxiter);
	else if (!strcmp(opt, "-reps"))
		rc = app_parse_int(opt, val, 1, 1000, &o->reps);
	else {
		takes = 0;
		if (!strcmp(opt, "--csr"))
			o->csr = 1;
		else if (!strcmp(opt, "--stencil"))
			o->csr = 0;
		else if (!strcmp(opt, "--help") || !strcmp(opt, "-h"))
			return 1;
		else {
			fprintf(stderr, "mpi-cg: unknown option '%s' (see --help)\n", opt);
			return -1;
		}
	}
	*a += takes;
	return rc;
}

static int parse(int argc, char **argv, opts_t *o)
{
	*o = (opts_t){.n = 100, .maxiter = 10000, .dim = 2, .csr = 1, .reps = 1, .tol = 1e-8};
	app_set_name("mpi-cg");
	for (int a = 1; a < argc; a++) {
		int rc = parse_one(argc, argv, &a, o);
		if (rc)
			return rc;
	}
	if (o->dim == 3 && o->n > 1290) {
		fprintf(stderr, "mpi-cg: -n %lld: more unknowns than 32-bit columns hold\n",
			(long long)o->n);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ this rank's rows */

/* Equal blocks, the remainder to the first ranks (as apps/cg's tiles). Every block needs h rows
 * at least, so that its ghost rows come from its two neighbours alone. */
static int block_place(block_t *B, const opts_t *o)
{
	MPI_Comm_rank(MPI_COMM_WORLD, &B->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &B->nranks);
	B->dim = o->dim;
	B->nx = B->ny = o->n;
	B->nz = o->dim == 3 ? o->n : 1;
	B->n = B->nx * B->ny * B->nz;
	B->h = o->dim == 3 ? B->nx * B->ny : B->nx;
	const int64_t base = B->n / B->nranks, rem = B->n % B->nranks;
	B->lo = B->rank * base + (B->rank < rem ? B->rank : rem);
	B->rows = base + (B->rank < rem);
	B->hi = B->lo + B->rows - 1;
	if (base < B->h) {
		if (B->rank == 0)
			fprintf(stderr,
				"mpi-cg: %d ranks for -n %lld: a rank needs %lld rows "
				"(one grid %s) at least; use at most %lld ranks\n",
				B->nranks, (long long)o->n, (long long)B->h,
				o->dim == 3 ? "plane" : "line", (long long)o->n);
		return -1;
	}
	return 0;
}

/* apps/cg's right-hand side: not smooth, so that an error in any row shows. */
static void block_rhs(block_t *B)
{
	for (int64_t g = B->lo; g <= B->hi; g++)
		B->b[g - B->lo] = 1.0 + (double)((g * 7919) % 101) / 101.0;
}

/* The block's CSR rows, in apps/cg's order: z-1, y-1, x-1, diagonal, x+1, y+1, z+1. */
static void block_csr(block_t *B)
{
	const int64_t sy = B->nx, sz = B->nx * B->ny;
	int64_t k = 0;
	for (int64_t g = B->lo; g <= B->hi; g++) {
		const int64_t ix = g % B->nx, iy = (g / B->nx) % B->ny, iz = g / sz;
		const int64_t cols[7] = {iz > 0 ? g - sz : -1,        iy > 0 ? g - sy : -1,
					 ix > 0 ? g - 1 : -1,         g,
					 ix < B->nx - 1 ? g + 1 : -1, iy < B->ny - 1 ? g + sy : -1,
					 iz < B->nz - 1 ? g + sz : -1};
		B->rp[g - B->lo] = k;
		for (int c = 0; c < 7; c++) {
			if (cols[c] < 0)
				continue;
			B->col[k] = (int32_t)cols[c];
			B->val[k] = c == 3 ? 2.0 * B->dim : -1.0;
			k++;
		}
	}
	B->rp[B->rows] = k;
}

static int block_alloc(block_t *B, int csr)
{
	B->b = malloc(B->rows * sizeof *B->b);
	B->x = malloc(B->rows * sizeof *B->x);
	B->r = malloc(B->rows * sizeof *B->r);
	B->q = malloc(B->rows * sizeof *B->q);
	B->pg = calloc(B->rows + 2 * B->h, sizeof *B->pg);
	if (!B->b || !B->x || !B->r || !B->q || !B->pg)
		return -1;
	block_rhs(B);
	if (!csr)
		return 0;
	B->rp = malloc((B->rows + 1) * sizeof *B->rp);
	B->col = malloc(7 * B->rows * sizeof *B->col);
	B->val = malloc(7 * B->rows * sizeof *B->val);
	if (!B->rp || !B->col || !B->val)
		return -1;
	block_csr(B);
	return 0;
}

static void block_free(block_t *B)
{
	free(B->rp);
	free(B->col);
	free(B->val);
	free(B->b);
	free(B->x);
	free(B->r);
	free(B->q);
	free(B->pg);
}

/* ------------------------------------------------------------ the solve */

/* v's ghost rows (v laid out as pg) from the neighbours; the first and last rank have one. */
static void exchange(const block_t *B, double *v)
{
	MPI_Request req[4];
	int n = 0;
	const int count = (int)B->h;
	if (B->rank > 0) {
		MPI_Irecv(v, count, MPI_DOUBLE, B->rank - 1, 0, MPI_COMM_WORLD, &req[n++]);
		MPI_Isend(v + B->h, count, MPI_DOUBLE, B->rank - 1, 1, MPI_COMM_WORLD, &req[n++]);
	}
	if (B->rank < B->nranks - 1) {
		MPI_Irecv(v + B->h + B->rows, count, MPI_DOUBLE, B->rank + 1, 1, MPI_COMM_WORLD,
			  &req[n++]);
		MPI_Isend(v + B->rows, count, MPI_DOUBLE, B->rank + 1, 0, MPI_COMM_WORLD,
			  &req[n++]);
	}
	MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
}

/* y = A v on the block's rows, v laid out as pg with its ghost rows current. */
static void apply(const block_t *B, int csr, const double *v, double *y)
{
	const int64_t vlo = B->lo - B->h;
	if (csr)
		cg_spmv_csr_range(B->lo, B->hi, B->rp, B->col, B->val, v, vlo, y);
	else if (B->dim == 2)
		cg_stencil2d_range(B->lo, B->hi, B->nx, B->ny, v, vlo, y);
	else
		cg_stencil3d_range(B->lo, B->hi, B->nx, B->ny, B->nz, v, vlo, y);
}

static double dot(const block_t *B, const double *a, const double *b)
{
	double mine = cg_dot_range(B->rows, a, b), all;
	MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return all;
}

/* apps/cg's iteration (the same range kernels and scalar steps), the residual tested every
 * iteration since every rank has r.r anyway. Returns the final state; *iters the iterations. */
static cg_state_t solve(block_t *B, const opts_t *o, int64_t *iters)
{
	double *p = B->pg + B->h;
	for (int64_t i = 0; i < B->rows; i++) {
		B->x[i] = 0.0;
		B->r[i] = B->b[i];
		p[i] = B->r[i];
	}
	cg_state_t s = cg_state_first(dot(B, B->r, B->r), o->tol * o->tol);
	int64_t j = 0;
	while (s.live && j < o->maxiter) {
		j++;
		exchange(B, B->pg);
		apply(B, o->csr, B->pg, B->q);
		const double alpha = cg_alpha_value(&s, dot(B, p, B->q));
		cg_axpy_range(B->rows, alpha, p, B->x);
		cg_axpy_range(B->rows, -alpha, B->q, B->r);
		s = cg_state_next(&s, dot(B, B->r, B->r));
		cg_xpay_range(B->rows, s.beta, B->r, p);
	}
	*iters = j;
	return s;
}

/* |b - A x| / |b| computed afresh (x through pg's layout): what the recurrence's r.r says, checked.
 */
static double true_residual(block_t *B, int csr)
{
	memcpy(B->pg + B->h, B->x, B->rows * sizeof *B->x);
	exchange(B, B->pg);
	apply(B, csr, B->pg, B->q);
	for (int64_t i = 0; i < B->rows; i++)
		B->q[i] = B->b[i] - B->q[i];
	return sqrt(dot(B, B->q, B->q) / dot(B, B->b, B->b));
}

/* ------------------------------------------------------------ main */

/* One solve, timed from a barrier to the slowest rank's end: seconds. */
static double timed_solve(block_t *B, const opts_t *o, cg_state_t *s, int64_t *iters)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = MPI_Wtime();
	*s = solve(B, o, iters);
	double mine = MPI_Wtime() - t0, slowest;
	MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return slowest;
}

/* The report (rank 0) and the exit status. */
static int report(const block_t *B, const opts_t *o, const cg_state_t *s, int64_t iters,
		  double *per_iter, double rel_true)
{
	const double rel = sqrt(s->rr / s->bb), t = app_median(per_iter, o->reps);
	const int converged = !s->live;
	const int ok = !converged || o->tol == 0 || rel_true <= 10 * o->tol;
	if (B->rank == 0) {
		printf("mpi-cg: %d-D Poisson %lld^%d, %s, %lld unknowns, %d rank%s, %lld%s rows "
		       "each\n",
		       o->dim, (long long)o->n, o->dim,
		       o->csr ? "CSR matrix" : "matrix-free stencil", (long long)B->n, B->nranks,
		       B->nranks > 1 ? "s" : "", (long long)(B->n / B->nranks),
		       B->n % B->nranks ? " or 1 more" : "");
		printf("iterations: %lld (%s, tol %g)\n", (long long)iters,
		       converged ? "converged" : "maxiter reached", o->tol);
		printf("final residual: |r|/|b| = %.6e; true |b - A x|/|b| = %.6e (bound 10 tol: "
		       "%s)\n",
		       rel, rel_true, ok ? "PASSED" : "FAILED");
		printf("time/iter: %.4f ms (median of %d; best %.4f)\n", 1e3 * t, o->reps,
		       1e3 * per_iter[0]);
	}
	if (!ok)
		return EXIT_CHECK;
	return converged || o->tol == 0 ? 0 : EXIT_MAXITER;
}

static int run(block_t *B, const opts_t *o)
{
	double *per_iter = calloc(o->reps, sizeof *per_iter);
	if (!per_iter || block_alloc(B, o->csr)) {
		fprintf(stderr, "mpi-cg: rank %d: out of memory for %lld rows\n", B->rank,
			(long long)B->rows);
		free(per_iter);
		return 1;
	}
	cg_state_t s = {0}; /* every rep sets it; reps >= 1 */
	int64_t iters = 0;
	const int warm = o->reps > 1;
	for (int i = -warm; i < o->reps; i++) {
		double sec = timed_solve(B, o, &s, &iters);
		if (i >= 0)
			per_iter[i] = sec / (double)(iters > 0 ? iters : 1);
	}
	int status = report(B, o, &s, iters, per_iter, true_residual(B, o->csr));
	free(per_iter);
	return status;
}

int main(int argc, char **argv)
{
	opts_t o;
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int prc = parse(argc, argv, &o);
	int status = prc < 0 ? EXIT_USAGE : 0;
	block_t B;
	memset(&B, 0, sizeof B);
	if (prc > 0 && rank == 0)
		usage();
	if (prc == 0 && block_place(&B, &o))
		status = EXIT_USAGE;
	else if (prc == 0)
		status = run(&B, &o);
	block_free(&B);
	MPI_Finalize();
	return status;
}
