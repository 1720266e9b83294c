/* cg_range.c: conjugate gradient's plain C kernels on one contiguous range of rows, no runtime in
 * them: the CPU task variants, the OpenMP baseline and the plain MPI CG of apps/bench run them. */
#include "config.h"
#include "cg_kernels.h"

void cg_axpy_range(int64_t n, double a, const double *x, double *y)
{
	for (int64_t i = 0; i < n; i++)
		y[i] += a * x[i];
}

void cg_xpay_range(int64_t n, double a, const double *x, double *y)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] + a * y[i];
}

/* Four partial sums: a single accumulator makes the loop latency-bound (one add in flight),
 * slower than memory; the order is fixed, so the result does not depend on the machine. */
double cg_dot_range(int64_t n, const double *a, const double *b)
{
	double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
	int64_t i = 0;
	for (; i + 3 < n; i += 4) {
		s0 += a[i] * b[i];
		s1 += a[i + 1] * b[i + 1];
		s2 += a[i + 2] * b[i + 2];
		s3 += a[i + 3] * b[i + 3];
	}
	for (; i < n; i++)
		s0 += a[i] * b[i];
	return (s0 + s1) + (s2 + s3);
}

void cg_spmv_csr_range(int64_t lo, int64_t hi, const int64_t *rp, const int32_t *col,
		       const double *val, const double *x, int64_t xlo, double *y)
{
	const int64_t k0 = rp[0];
	for (int64_t i = 0; i <= hi - lo; i++) {
		double s = 0.0;
		for (int64_t k = rp[i] - k0; k < rp[i + 1] - k0; k++)
			s += val[k] * x[col[k] - xlo];
		y[i] = s;
	}
}

/* One grid line at a time (rows row0..row0+nx-1, clipped to lo..hi), one pass per neighbour so
 * each loop is branch-free and vectorizes; the line stays in L1 between passes. The order of the
 * subtractions (west, east, then the neighbour lines in `off` order) is the same on every line. */
static void stencil_lines(int64_t lo, int64_t hi, int64_t nx, int64_t ny, int64_t nz, int dim,
			  const double *x, int64_t xlo, double *y)
{
	const double diag = 2.0 * dim;
	for (int64_t line = lo / nx; line <= hi / nx; line++) {
		const int64_t row0 = line * nx;
		const int64_t g0 = lo > row0 ? lo : row0;
		const int64_t g1 = hi < row0 + nx - 1 ? hi : row0 + nx - 1;
		const int64_t iy = line % ny, iz = line / ny;
		/* neighbour lines: y-1, y+1, z-1, z+1 (0 offset: outside the grid) */
		int64_t off[4] = {iy > 0 ? -nx : 0, iy < ny - 1 ? nx : 0, 0, 0};
		if (dim == 3) {
			off[2] = iz > 0 ? -nx * ny : 0;
			off[3] = iz < nz - 1 ? nx * ny : 0;
		}
		for (int64_t g = g0; g <= g1; g++)
			y[g - lo] = diag * x[g - xlo];
		for (int64_t g = g0 > row0 ? g0 : row0 + 1; g <= g1; g++)
			y[g - lo] -= x[g - 1 - xlo];
		for (int64_t g = g0, e = g1 < row0 + nx - 2 ? g1 : row0 + nx - 2; g <= e; g++)
			y[g - lo] -= x[g + 1 - xlo];
		for (int k = 0; k < 4; k++) {
			const int64_t o = off[k];
			if (o)
				for (int64_t g = g0; g <= g1; g++)
					y[g - lo] -= x[g + o - xlo];
		}
	}
}

void cg_stencil2d_range(int64_t lo, int64_t hi, int64_t nx, int64_t ny, const double *x,
			int64_t xlo, double *y)
{
	stencil_lines(lo, hi, nx, ny, 1, 2, x, xlo, y);
}

void cg_stencil3d_range(int64_t lo, int64_t hi, int64_t nx, int64_t ny, int64_t nz, const double *x,
			int64_t xlo, double *y)
{
	stencil_lines(lo, hi, nx, ny, nz, 3, x, xlo, y);
}
