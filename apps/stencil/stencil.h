/* stencil.h: the fourth-order horizontal diffusion of apps/stencil as reusable pieces: the fused
 * two-Laplacian kernel on a box (shared by the Tessera tasks and the baselines) and the two
 * tasks. */
#ifndef TSR_TASKS_STENCIL_H
#define TSR_TASKS_STENCIL_H

#include <stddef.h>
#include <string.h>
#include <tessera.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Halo width the kernel needs on each side in i and j (two nested 5-point Laplacians). */
#define STENCIL_HALO 2

/* One diffusion step on a box of ni x nj x nk points:
 *   tmp = lap(in) on the box extended by 1 point in i and j,
 *   out = in - alpha * lap(tmp) on the box,
 * with lap(f)[j][i] = -4 f[j][i] + f[j][i-1] + f[j][i+1] + f[j-1][i] + f[j+1][i], summed left to
 * right in that order (so results are bit-identical to a sequential loop with the same order).
 * `in` points at the box's first point and must be readable STENCIL_HALO points around it in i and
 * j; isj/isk and osj/osk are the j and k strides in elements. `ring` is scratch of at least
 * stencil_ring_elems(ni) elements: three rows of tmp, so tmp never leaves the cache. `nt`: write
 * out with non-temporal stores where the CPU has them (AVX2), which pays when the fields are much
 * larger than the last-level cache (see stencil_nontemporal_pays) and costs otherwise. */
void stencil_fused_f64(const double *in, ptrdiff_t isj, ptrdiff_t isk, double *out, ptrdiff_t osj,
		       ptrdiff_t osk, int ni, int nj, int nk, double alpha, double *ring, int nt);
void stencil_fused_f32(const float *in, ptrdiff_t isj, ptrdiff_t isk, float *out, ptrdiff_t osj,
		       ptrdiff_t osk, int ni, int nj, int nk, float alpha, float *ring, int nt);
/* 1 when two fields of `field_bytes` each do not fit in this machine's last-level cache: out would
 * be evicted before the next step reads it anyway, so streaming stores save traffic. */
int stencil_nontemporal_pays(size_t field_bytes);
static inline size_t stencil_ring_elems(int ni)
{
	return 3 * ((size_t)ni + 2);
}

/* memcpy for the short rows of halo columns (h elements): constant sizes compile to a couple of
 * moves, where a library call per row would cost more than the copy itself. */
static inline void stencil_copy_row(void *dst, const void *src, size_t bytes)
{
	switch (bytes) {
	case 8:
		memcpy(dst, src, 8);
		break;
	case 16:
		memcpy(dst, src, 16);
		break;
	case 32:
		memcpy(dst, src, 32);
		break;
	default:
		memcpy(dst, src, bytes);
		break;
	}
}

/* Copy a box of ni x nj x nk elements of elem_size bytes between two strided arrays. */
void stencil_copy_box(const void *src, ptrdiff_t ssj, ptrdiff_t ssk, void *dst, ptrdiff_t dsj,
		      ptrdiff_t dsk, int ni, int nj, int nk, size_t elem_size);

/* The initial condition of the course, on a field of nx x ny x nz interior points, in global
 * coordinates (halo included): 1 on the box k in [nz/4, 3nz/4), j in [h + ny/4, h + 3ny/4),
 * i in [h + nx/4, h + 3nx/4), 0 elsewhere. A macro so that CUDA device code can use it. */
#define STENCIL_INITIAL_IS_ONE(nx, ny, nz, k, j, i)                                 \
	((k) >= (nz) / 4 && (k) < 3 * (nz) / 4 && (j) >= STENCIL_HALO + (ny) / 4 && \
	 (j) < STENCIL_HALO + 3 * (ny) / 4 && (i) >= STENCIL_HALO + (nx) / 4 &&     \
	 (i) < STENCIL_HALO + 3 * (nx) / 4)

/* By-value arguments of the "stencil_init" task. */
typedef struct stencil_init_args {
	int nx, ny, nz; /* interior extents of the whole field */
} stencil_init_args_t;

/* By-value arguments of the "stencil_diffusion" task. */
typedef struct stencil_args {
	double alpha;    /* diffusion coefficient (converted to float for f32 fields) */
	int nontemporal; /* CPU variant: streaming stores for out (see stencil_fused_f64) */
} stencil_args_t;

/* By-value arguments of the "stencil_halo_copy" task. */
#define STENCIL_MAX_DST 8
typedef struct stencil_copy_args {
	int ndst;                          /* destinations: requirements 1..ndst */
	int64_t shift[STENCIL_MAX_DST][3]; /* destination point x gets source point x + shift */
} stencil_copy_args_t;

typedef struct stencil_tasks {
	/* Requirement 0: WRITE of one field on any box (3-D region): writes the initial condition
	 * there, on the device that runs it, so that a GPU run never starts from a host copy. */
	tsr_task_t init;
	/* Requirement 0: READ of one field (in) on the tile extended by STENCIL_HALO in i and j;
	 * requirement 1: WRITE of one field (out) on the tile. Writes the tile of out. */
	tsr_task_t diffusion;
	/* Pairs of requirements: READ of a source box, then WRITE of a destination box of the same
	 * extents (all of one field; no destination may overlap a source): the periodic halo update
	 * is made of these. Both strips of an edge pair in one task share each row's cache
	 * lines. */
	tsr_task_t halo_copy;
} stencil_tasks_t;

/* Where a diffusion tile lies in its two accessors (shared by the CPU, CUDA and OpenCL
 * variants). */
typedef struct stencil_tile {
	ptrdiff_t in_off; /* elements from in.ptr to the in element at out's first point */
	ptrdiff_t isj, isk, osj, osk;
	int ni, nj, nk;
} stencil_tile_t;

/* Fill *t from the accessors of the diffusion task; returns 0, or -1 (with a reason in why) when
 * `in` does not cover `out` extended by STENCIL_HALO in i and j, or their types differ. */
static inline int stencil_tile_of(const tsr_accessor_t *in, const tsr_accessor_t *out,
				  stencil_tile_t *t, const char **why)
{
	int d;
	if (in->type != out->type || (in->type != TSR_F64 && in->type != TSR_F32)) {
		*why = "fields 'in' and 'out' must both be f64 or both f32";
		return -1;
	}
	if (in->dim < 2 || in->dim != out->dim) {
		*why = "regions must be 2-D or 3-D";
		return -1;
	}
	for (d = 0; d < in->dim; d++) {
		int64_t h = d < 2 ? STENCIL_HALO : 0;
		if (in->lo[d] > out->lo[d] - h || in->hi[d] < out->hi[d] + h) {
			*why = "the READ requirement does not cover the written tile plus its "
			       "2-point halo in i and j";
			return -1;
		}
	}
	t->ni = (int)(out->hi[0] - out->lo[0] + 1);
	t->nj = (int)(out->hi[1] - out->lo[1] + 1);
	t->nk = in->dim == 3 ? (int)(out->hi[2] - out->lo[2] + 1) : 1;
	t->isj = (ptrdiff_t)in->stride[1];
	t->osj = (ptrdiff_t)out->stride[1];
	t->isk = in->dim == 3 ? (ptrdiff_t)in->stride[2] : 0;
	t->osk = out->dim == 3 ? (ptrdiff_t)out->stride[2] : 0;
	t->in_off = (ptrdiff_t)(out->lo[0] - in->lo[0]) +
		    (ptrdiff_t)(out->lo[1] - in->lo[1]) * t->isj +
		    (in->dim == 3 ? (ptrdiff_t)(out->lo[2] - in->lo[2]) * t->isk : 0);
	return 0;
}

/* Where destination box `dst` (3-D) reads from in `src` under `shift` (destination point x gets
 * source point x + shift): *from is the source address of dst's first point (a device address
 * when the accessors hold device addresses; with OpenCL accessors, whose ptr is a cl_mem, only
 * *from - src->ptr means something: the bytes past src->offset). Returns 0, or -1 when the
 * shifted box leaves src or the accessors are not 3-D. */
static inline int stencil_copy_source(const tsr_accessor_t *src, const tsr_accessor_t *dst,
				      const int64_t shift[3], const char **from)
{
	ptrdiff_t off = 0;
	if (src->dim != 3 || dst->dim != 3)
		return -1;
	for (int d = 0; d < 3; d++) {
		if (dst->lo[d] + shift[d] < src->lo[d] || dst->hi[d] + shift[d] > src->hi[d])
			return -1;
		off += (ptrdiff_t)(dst->lo[d] + shift[d] - src->lo[d]) *
		       (d ? (ptrdiff_t)src->stride[d] : 1);
	}
	*from = (const char *)src->ptr + off * (ptrdiff_t)src->elem_size;
	return 0;
}

/* Register the three tasks (CPU variants, CUDA variants where Tessera was built with CUDA, OpenCL
 * variants where StarPU has OpenCL). */
int stencil_tasks_register(stencil_tasks_t *t);
/* Build the OpenCL variants' kernels (stencil.cl) for every OpenCL device: after tsr_init, before
 * the first launch. TSR_OK (also without OpenCL), or tsr_opencl_program's error with the build log
 * in tsr_last_error. */
int stencil_opencl_load(void);

/* Task variants (exposed so that other programs can register them under their own names). */
void stencil_init_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen);
void stencil_init_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void stencil_diffusion_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen);
void stencil_halo_copy_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen);
void stencil_diffusion_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void stencil_halo_copy_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen);
void stencil_init_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);
void stencil_diffusion_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);
void stencil_halo_copy_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen);

/* The arguments and accessors of each task, fetched and checked once for the CPU, CUDA and OpenCL
 * variants alike (stencil_cpu.c). Each returns 1 when the variant has work to do, else 0, after a
 * task error where something was wrong. */
int stencil_init_view(tsr_ctx_t *ctx, const void *args, size_t arglen, tsr_accessor_t *f);
int stencil_diffusion_view(tsr_ctx_t *ctx, const void *args, size_t arglen, tsr_accessor_t *in,
			   tsr_accessor_t *out, stencil_tile_t *t);
/* dst and from hold the ((const stencil_copy_args_t *)args)->ndst destinations and their
 * sources. */
int stencil_halo_view(tsr_ctx_t *ctx, const void *args, size_t arglen, tsr_accessor_t *src,
		      tsr_accessor_t *dst, const char **from);

#ifdef __cplusplus
}
#endif
#endif /* TSR_TASKS_STENCIL_H */
