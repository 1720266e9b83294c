/* kernels.cl: OpenCL C bodies of Tessera's own tasks (fill, copy, the reduction operators' identity
 * and fold), embedded into libtessera at build time and built once per run (opencl.c).
 *
 * A view is a buffer, the byte offset of its first element, and its leading dimensions in elements
 * (StarPU's block interface on an OpenCL node). One work-item handles one element; the global size
 * is nx * ny * nz, and the item finds its (x, y, z) from its linear index. */
#pragma OPENCL FP_CONTRACT OFF
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define TSR_HAVE_F64 1
#endif

/* Element offset of item i of an nx x ny x nz box laid out with leading dimensions ldy, ldz. */
inline ulong tsr_elem(ulong i, uint nx, uint ny, ulong ldy, ulong ldz)
{
	ulong x = i % nx;
	ulong y = (i / nx) % ny;
	ulong z = i / ((ulong)nx * ny);
	return x + y * ldy + z * ldz;
}

/* Every element of the box gets the es-byte value. */
kernel void tsr_fill(global uchar *dst, ulong off, uint nx, uint ny, uint nz, ulong ldy, ulong ldz, uint es,
                     global const uchar *value)
{
	ulong i = get_global_id(0);
	if (i >= (ulong)nx * ny * nz)
		return;
	global uchar *p = dst + off + tsr_elem(i, nx, ny, ldy, ldz) * es;
	for (uint b = 0; b < es; b++)
		p[b] = value[b];
}

/* n bytes from off on are zero (a single launch's result starts at zero). */
kernel void tsr_zero(global uchar *dst, ulong off, ulong n)
{
	ulong i = get_global_id(0);
	if (i < n)
		dst[off + i] = 0;
}

/* The box of src into the box of dst (same extents, each with its own offset and leading dimensions). */
kernel void tsr_copy(global uchar *dst, ulong doff, ulong dldy, ulong dldz, global const uchar *src, ulong soff,
                     ulong sldy, ulong sldz, uint nx, uint ny, uint nz, uint es)
{
	ulong i = get_global_id(0);
	if (i >= (ulong)nx * ny * nz)
		return;
	global uchar *d = dst + doff + tsr_elem(i, nx, ny, dldy, dldz) * es;
	global const uchar *s = src + soff + tsr_elem(i, nx, ny, sldy, sldz) * es;
	for (uint b = 0; b < es; b++)
		d[b] = s[b];
}

/* op: 1 sum, 2 prod, 3 min, 4 max (tessera.h's tsr_redop_t). The folds are written as reduce.c's
 * CPU folds are, so that both give the same bits (min and max included, NaNs and all). */
#define TSR_REDOPS(T, TN, ID_MIN, ID_MAX)                                                             \
	kernel void tsr_init_##TN(global uchar *dst, ulong off, uint nx, uint ny, uint nz, ulong ldy, ulong ldz,  \
	                          int op)                                                                 \
	{                                                                                                 \
		ulong i = get_global_id(0);                                                                   \
		if (i >= (ulong)nx * ny * nz)                                                                 \
			return;                                                                                   \
		global T *p = (global T *)(dst + off) + tsr_elem(i, nx, ny, ldy, ldz);                        \
		*p = op == 1 ? (T)0 : op == 2 ? (T)1 : op == 3 ? ID_MIN : ID_MAX;                             \
	}                                                                                                 \
	kernel void tsr_redux_##TN(global uchar *dst, ulong doff, ulong dldy, ulong dldz, global const uchar *src, \
	                           ulong soff, ulong sldy, ulong sldz, uint nx, uint ny, uint nz, int op)  \
	{                                                                                                 \
		ulong i = get_global_id(0);                                                                   \
		if (i >= (ulong)nx * ny * nz)                                                                 \
			return;                                                                                   \
		global T *p = (global T *)(dst + doff) + tsr_elem(i, nx, ny, dldy, dldz);                     \
		T q = ((global const T *)(src + soff))[tsr_elem(i, nx, ny, sldy, sldz)];                      \
		T a = *p;                                                                                     \
		*p = op == 1 ? a + q : op == 2 ? a * q : op == 3 ? (q < a ? q : a) : (q > a ? q : a);         \
	}

TSR_REDOPS(float, f32, INFINITY, -INFINITY)
#ifdef TSR_HAVE_F64
TSR_REDOPS(double, f64, (double)INFINITY, -(double)INFINITY)
#endif
TSR_REDOPS(int, i32, INT_MAX, INT_MIN)
TSR_REDOPS(long, i64, LONG_MAX, LONG_MIN)
