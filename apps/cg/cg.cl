/* cg.cl: OpenCL C kernels of the conjugate-gradient tasks (apps/cg/cg_kernels.h), embedded in apps/cg
 * as cg_cl_source and built at run time (tsr_opencl_program); apps/cg/cg_opencl.c enqueues them.
 *
 * Every array comes as a buffer and the index of its first element in it (the accessor's byte
 * offset over the element size): the kernel adds it, so no pointer is formed outside a buffer.
 * Element-wise kernels and the operators give the CPU variants' bits: no contraction of a * b + c,
 * and each output element is computed in the order apps/cg/cg_cpu.c uses. The dot product folds in
 * a fixed tree (the same bits from run to run and device to device for a given block length),
 * which is not the CPU's order: like the CUDA variant, it differs from it in the last bits. */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

/* cg_kernels.h's cg_state_t, field for field (six 8-byte fields: the same layout on both sides). */
typedef struct cg_state {
	double beta;
	double rr;
	double bb;
	double tol2;
	long iter;
	long live;
} cg_state_t;

/* y += scale * c * x, nothing when scale * c == 0 (CG freezes x and r with it: y stays bit-identical). */
kernel void cg_axpy(long n, double scale, global const double *c, global const double *x, ulong xo,
                    global double *y, ulong yo)
{
	const double a = scale * c[0];
	const long i = get_global_id(0);
	if (a == 0.0 || i >= n)
		return;
	y[yo + i] += a * x[xo + i];
}

/* y = x + c * y */
kernel void cg_xpay(long n, global const double *c, global const double *x, ulong xo, global double *y, ulong yo)
{
	const long i = get_global_id(0);
	if (i < n)
		y[yo + i] = x[xo + i] + c[0] * y[yo + i];
}

/* The dot product in two kernels of CG_DOT_WG work-items per group (cg_opencl.c launches them with
 * the same constant). cg_dot_part: group g of G folds the elements g*WG + l + k*G*WG (item l, k =
 * 0, 1, ...) per item, then the items in a tree; part[g] gets the group's sum. cg_dot_fold (one
 * group): the G <= WG partial sums in a tree, added to the return slot (which holds the identity,
 * 0, or the sum so far). */
#define CG_DOT_WG 128

double tree_sum(local double *s, uint l)
{
	barrier(CLK_LOCAL_MEM_FENCE);
	for (uint w = CG_DOT_WG / 2; w > 0; w /= 2) {
		if (l < w)
			s[l] += s[l + w];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	return s[0];
}

kernel __attribute__((reqd_work_group_size(CG_DOT_WG, 1, 1))) void
cg_dot_part(long n, global const double *a, ulong ao, global const double *b, ulong bo, global double *part)
{
	local double s[CG_DOT_WG];
	const uint l = get_local_id(0);
	const long stride = (long)get_global_size(0);
	double acc = 0.0;
	for (long i = (long)get_global_id(0); i < n; i += stride)
		acc += a[ao + i] * b[bo + i];
	s[l] = acc;
	const double sum = tree_sum(s, l);
	if (l == 0)
		part[get_group_id(0)] = sum;
}

kernel __attribute__((reqd_work_group_size(CG_DOT_WG, 1, 1))) void
cg_dot_fold(uint groups, global const double *part, global double *out)
{
	local double s[CG_DOT_WG];
	const uint l = get_local_id(0);
	s[l] = l < groups ? part[l] : 0.0;
	const double sum = tree_sum(s, l);
	if (l == 0)
		out[0] = out[0] + sum;
}

/* One work-item per row, the nonzeros in order from 0.0 (cg_spmv_csr_range). rp holds the row
 * pointers of rows lo..hi+1 (from element rpo on); the nonzeros' buffers start at global nonzero
 * nzlo (element colo / valo); x's element xo is global row xlo. */
kernel void cg_spmv_csr(long nrows, global const long *rp, ulong rpo, global const int *col, ulong colo,
                        global const double *val, ulong valo, long nzlo, global const double *x, ulong xo, long xlo,
                        global double *y, ulong yo)
{
	const long i = get_global_id(0);
	if (i >= nrows)
		return;
	rp += rpo;
	col += colo;
	val += valo;
	x += xo;
	double s = 0.0;
	for (long k = rp[i] - nzlo; k < rp[i + 1] - nzlo; k++)
		s += val[k] * x[col[k] - xlo];
	y[yo + i] = s;
}

/* Rows lo..lo+n-1 of the Poisson operator, one work-item per row, subtracting in the CPU variant's
 * order: west, east, y-1, y+1, z-1, z+1 (stencil_lines). x's element xo is global row xlo. */
kernel void cg_stencil(long lo, long n, long nx, long ny, long nz, int dim, global const double *x, ulong xo, long xlo,
                       global double *y, ulong yo)
{
	const long t = get_global_id(0);
	if (t >= n)
		return;
	const long g = lo + t, ix = g % nx, line = g / nx, iy = line % ny, iz = line / ny;
	global const double *c = x + xo + (g - xlo);
	double v = (2.0 * dim) * c[0];
	if (ix > 0)
		v -= c[-1];
	if (ix < nx - 1)
		v -= c[1];
	if (iy > 0)
		v -= c[-nx];
	if (iy < ny - 1)
		v -= c[nx];
	if (dim == 3) {
		if (iz > 0)
			v -= c[-nx * ny];
		if (iz < nz - 1)
			v -= c[nx * ny];
	}
	y[yo + t] = v;
}

/* The scalar steps: cg_kernels.h's cg_alpha_value, cg_state_first and cg_state_next, one work-item. */
int converged(double rr, double tol2, double bb)
{
	return rr <= tol2 * bb;   /* false for NaN */
}

kernel void cg_alpha(global const cg_state_t *s, global const double *pAp, global double *out)
{
	out[0] = s->live ? s->rr / pAp[0] : 0.0;
}

kernel void cg_state_first(global const double *rr, double tol2, global cg_state_t *out)
{
	cg_state_t s;
	s.beta = 0.0;
	s.rr = rr[0];
	s.bb = rr[0];
	s.tol2 = tol2;
	s.iter = 0;
	s.live = !converged(s.rr, tol2, s.rr);
	*out = s;
}

kernel void cg_state_next(global const cg_state_t *prev, global const double *rr, global cg_state_t *out)
{
	cg_state_t s = *prev;
	if (!prev->live) {
		s.beta = 0.0;
		*out = s;
		return;
	}
	s.beta = rr[0] / prev->rr;
	s.rr = rr[0];
	s.iter = prev->iter + 1;
	s.live = !converged(rr[0], prev->tol2, prev->bb);
	*out = s;
}
