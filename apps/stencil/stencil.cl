/* stencil.cl: OpenCL C kernels of the stencil tasks (initial condition, fused diffusion step, halo
 * copy), the port of stencil_cuda.cu; embedded into the program by build-aux/cl2h.sh and built at
 * run time (stencil_opencl.c).
 *
 * A field is a buffer, the byte offset of the element the kernel starts from, and its j and k
 * strides in elements. FP_CONTRACT OFF: no a * b + c becomes an FMA, so each Laplacian is summed in
 * the same order and with the same roundings as the CPU kernel (stencil_kernel.c) and the sequential
 * reference, and f64 results are bit-identical on every device. */
#pragma OPENCL FP_CONTRACT OFF
#if defined(cl_khr_fp64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define STENCIL_HAVE_F64 1
#endif

#define STENCIL_HALO 2
/* stencil.h's STENCIL_INITIAL_IS_ONE (this file cannot include it): 1 on the box k in
 * [nz/4, 3nz/4), j in [h + ny/4, h + 3ny/4), i in [h + nx/4, h + 3nx/4), global coordinates. */
#define STENCIL_INITIAL_IS_ONE(nx, ny, nz, k, j, i)                                                  \
	((k) >= (nz) / 4 && (k) < 3 * (nz) / 4 && (j) >= STENCIL_HALO + (ny) / 4 &&                   \
	 (j) < STENCIL_HALO + 3 * (ny) / 4 && (i) >= STENCIL_HALO + (nx) / 4 && (i) < STENCIL_HALO + 3 * (nx) / 4)

/* lap(f) = -4 c + w + e + s + n, left to right, as stencil_kernel.c's rows */
#define STENCIL_LAP5(T, c, w, e, s, n) (((((T)-4 * (c) + (w)) + (e)) + (s)) + (n))

/* One work-group computes an lx x ly patch of one plane (its local size; the host rounds the global
 * size up to it): tmp = lap(in) on the patch grown by one point goes to local memory (tmp holds
 * (ly + 2) x (lx + 2) elements), then out = in - alpha * lap(tmp). in_off is the byte offset of the
 * in element at out's first point, out_off that of out's first point. */
#define STENCIL_DIFFUSION(T, SFX)                                                                    \
	kernel void stencil_diffusion_##SFX(global const uchar *inb, ulong in_off, long isj, long isk,    \
	                                    global uchar *outb, ulong out_off, long osj, long osk, int ni, \
	                                    int nj, T alpha, local T *tmp)                                \
	{                                                                                                 \
		const int lx = (int)get_local_size(0), ly = (int)get_local_size(1);                         \
		const int tx = (int)get_local_id(0), ty = (int)get_local_id(1);                             \
		const int i0 = (int)get_group_id(0) * lx, j0 = (int)get_group_id(1) * ly;                   \
		const long k = (long)get_global_id(2);                                                      \
		global const T *ink = (global const T *)(inb + in_off) + k * isk;                           \
		global T *out = (global T *)(outb + out_off);                                               \
		const int tw = lx + 2;                                                                      \
		for (int x = ty * lx + tx; x < (ly + 2) * tw; x += lx * ly) {                               \
			int pj = x / tw, pi = x % tw;                                                          \
			int i = i0 + pi - 1, j = j0 + pj - 1;                                                  \
			if (i <= ni && j <= nj) { /* i, j >= -1 always */                                      \
				global const T *c = ink + j * isj + i;                                             \
				tmp[x] = STENCIL_LAP5(T, c[0], c[-1], c[1], c[-isj], c[isj]);                      \
			}                                                                                      \
		}                                                                                          \
		barrier(CLK_LOCAL_MEM_FENCE);                                                              \
		const int i = i0 + tx, j = j0 + ty;                                                        \
		if (i < ni && j < nj) {                                                                    \
			const int t = (ty + 1) * tw + tx + 1;                                                  \
			T l = STENCIL_LAP5(T, tmp[t], tmp[t - 1], tmp[t + 1], tmp[t - tw], tmp[t + tw]);       \
			out[k * osk + j * osj + i] = ink[j * isj + i] - alpha * l;                             \
		}                                                                                          \
	}

/* The one-dimensional kernels below take one work-item per element of an ni x nj x nk box, item
 * x being element (x % ni, x / ni % nj, x / (ni nj)); the host rounds the global size up to its
 * fixed work-group size (so that POCL compiles each kernel once, not once per box shape) and the
 * items past the box do nothing. */
#define STENCIL_ITEM(i, j, k, ni, nj, nk)                                                            \
	const long x_ = (long)get_global_id(0);                                                          \
	if (x_ >= (long)(ni) * (nj) * (nk))                                                              \
		return;                                                                                      \
	const long i = x_ % (ni), j = x_ / (ni) % (nj), k = x_ / ((long)(ni) * (nj))

/* The initial condition on a box of ni x nj x nk points whose first point is at global (lo0, lo1,
 * lo2) and at byte offset off. */
#define STENCIL_INIT(T, SFX)                                                                         \
	kernel void stencil_init_##SFX(global uchar *fb, ulong off, long sj, long sk, int ni, int nj, int nk, \
	                               long lo0, long lo1, long lo2, int nx, int ny, int nz)             \
	{                                                                                                 \
		STENCIL_ITEM(i, j, k, ni, nj, nk);                                                            \
		global T *f = (global T *)(fb + off);                                                         \
		f[k * sk + j * sj + i] = STENCIL_INITIAL_IS_ONE(nx, ny, nz, lo2 + k, lo1 + j, lo0 + i) ? (T)1 : (T)0; \
	}

STENCIL_DIFFUSION(float, f32)
STENCIL_INIT(float, f32)
#ifdef STENCIL_HAVE_F64
STENCIL_DIFFUSION(double, f64)
STENCIL_INIT(double, f64)
#endif

/* A box of ni x nj x nk elements of type T from src to dst (byte offsets of their first elements,
 * strides in elements). Other element sizes copy bytes (T uchar, ni and the strides in bytes). */
#define STENCIL_COPY(T, SFX)                                                                         \
	kernel void stencil_copy_##SFX(global const uchar *sb, ulong soff, long ssj, long ssk, global uchar *db, \
	                               ulong doff, long dsj, long dsk, int ni, int nj, int nk)             \
	{                                                                                                 \
		STENCIL_ITEM(i, j, k, ni, nj, nk);                                                            \
		((global T *)(db + doff))[k * dsk + j * dsj + i] = ((global const T *)(sb + soff))[k * ssk + j * ssj + i]; \
	}

STENCIL_COPY(ulong, 8)
STENCIL_COPY(uint, 4)
STENCIL_COPY(uchar, 1)
