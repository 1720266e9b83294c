/* stencil_cpu.c: CPU side of the fourth-order diffusion: the fused two-Laplacian kernel (shared
 * with the baselines of apps/stencil, so that comparisons measure the runtime, not the arithmetic)
 * and the Tessera task variants built on it. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <starpu_config.h> /* STARPU_USE_OPENCL */

#include "stencil.h"

/* The kernel is memory-bound only when its inner loops run on wide vectors: with SSE2 (the x86-64
 * baseline) the arithmetic of the two Laplacians costs about as much as the memory traffic. GCC
 * builds one clone per instruction set and picks one at load time, so the binary still runs on any
 * x86-64. The results do not depend on the clone: every clone evaluates the same additions in the
 * same order (the build disables FMA contraction with -ffp-contract=off, and none of these targets
 * enables FMA anyway). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
	!defined(__SANITIZE_ADDRESS__)
#define STENCIL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define STENCIL_CLONES
#endif

/* One row of tmp = lap(in) over n points, c = &in[j][first i], t = that row of the ring. */
/* clang-format off */
#define STENCIL_LAP_ROW(T, SFX)                                                                    \
	static inline void lap_row_##SFX(const T *restrict c, ptrdiff_t sj, T *restrict t, int n)     \
	{                                                                                          \
		_Pragma("omp simd")                                                                    \
		for (int i = 0; i < n; i++)                                                            \
			t[i] = (T)-4 * c[i] + c[i - 1] + c[i + 1] + c[i - sj] + c[i + sj];                  \
	}

/* One row of out = in - alpha * lap(tmp); tm, tc, tp are the ring rows j-1, j, j+1, each starting
 * one point left of the box (tmp covers the box extended by one point). */
#define STENCIL_OUT_ROW(T, SFX)                                                                    \
	static inline void out_row_##SFX(const T *restrict in, const T *restrict tm,                   \
	                                 const T *restrict tc, const T *restrict tp, T *restrict o,  \
	                                 int n, T alpha)                                             \
	{                                                                                          \
		_Pragma("omp simd")                                                                    \
		for (int i = 0; i < n; i++) {                                                          \
			T l = (T)-4 * tc[i + 1] + tc[i] + tc[i + 2] + tm[i + 1] + tp[i + 1];               \
			o[i] = in[i] - alpha * l;                                                          \
		}                                                                                      \
	}
/* clang-format on */

/* Non-temporal (streaming) stores of out: when the fields do not fit in the last-level cache, a
 * normal store first reads each line of out from memory (write-allocate), a third of the step's
 * traffic; streaming stores skip that read. AVX2 rows with a scalar head up to the 32-byte
 * alignment the stores need and a scalar tail, all with the same operations in the same order as
 * out_row, so the results do not change. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define STENCIL_OUT_ROW_NT(T, SFX, V, SET1, LOADU, ADD, SUB, MUL, STREAM, W)                       \
	__attribute__((target(                                                                     \
		"avx2"))) static void out_row_nt_##SFX(const T *restrict in, const T *restrict tm, \
						       const T *restrict tc, const T *restrict tp, \
						       T *restrict o, int n, T alpha)              \
	{                                                                                          \
		int i = 0;                                                                         \
		for (; i < n && ((uintptr_t)(o + i) & 31) != 0; i++)                               \
			o[i] = in[i] - alpha * ((T)-4 * tc[i + 1] + tc[i] + tc[i + 2] +            \
						tm[i + 1] + tp[i + 1]);                            \
		const V m4 = SET1((T)-4), al = SET1(alpha);                                        \
		for (; i + W <= n; i += W) {                                                       \
			V l = MUL(m4, LOADU(tc + i + 1));                                          \
			l = ADD(l, LOADU(tc + i));                                                 \
			l = ADD(l, LOADU(tc + i + 2));                                             \
			l = ADD(l, LOADU(tm + i + 1));                                             \
			l = ADD(l, LOADU(tp + i + 1));                                             \
			STREAM(o + i, SUB(LOADU(in + i), MUL(al, l)));                             \
		}                                                                                  \
		for (; i < n; i++)                                                                 \
			o[i] = in[i] - alpha * ((T)-4 * tc[i + 1] + tc[i] + tc[i + 2] +            \
						tm[i + 1] + tp[i + 1]);                            \
	}
STENCIL_OUT_ROW_NT(double, f64, __m256d, _mm256_set1_pd, _mm256_loadu_pd, _mm256_add_pd,
		   _mm256_sub_pd, _mm256_mul_pd, _mm256_stream_pd, 4)
STENCIL_OUT_ROW_NT(float, f32, __m256, _mm256_set1_ps, _mm256_loadu_ps, _mm256_add_ps,
		   _mm256_sub_ps, _mm256_mul_ps, _mm256_stream_ps, 8)

static int nt_supported(void)
{
	static int ok = -1; /* a benign race: every thread computes the same value */
	if (ok < 0) {
		__builtin_cpu_init();
		ok = __builtin_cpu_supports("avx2") ? 1 : 0;
	}
	return ok;
}
#define STENCIL_ROW_NT(SFX, ...) out_row_nt_##SFX(__VA_ARGS__)
#define STENCIL_NT_FENCE() _mm_sfence()
#else
static int nt_supported(void)
{
	return 0;
}
#define STENCIL_ROW_NT(SFX, ...) out_row_##SFX(__VA_ARGS__)
#define STENCIL_NT_FENCE() ((void)0)
#endif

/* Plane by plane, row by row: the tmp row j+1 is computed just before the out row j that needs it,
 * into a ring of three rows, so each point of in is read from memory once per step and tmp stays
 * in L1. */
#define STENCIL_FUSED(T, SFX)                                                                      \
	STENCIL_CLONES void stencil_fused_##SFX(const T *in, ptrdiff_t isj, ptrdiff_t isk, T *out, \
						ptrdiff_t osj, ptrdiff_t osk, int ni, int nj,      \
						int nk, T alpha, T *ring, int nt)                  \
	{                                                                                          \
		const ptrdiff_t rl = (ptrdiff_t)ni + 2;                                            \
		nt = nt && nt_supported();                                                         \
		for (int k = 0; k < nk; k++) {                                                     \
			const T *ink = in + k * isk;                                               \
			T *outk = out + k * osk;                                                   \
			/* ring slot of tmp row j (j from -1 to nj) is (j + 1) % 3 */              \
			lap_row_##SFX(ink - isj - 1, isj, ring, ni + 2);                           \
			lap_row_##SFX(ink - 1, isj, ring + rl, ni + 2);                            \
			for (int j = 0; j < nj; j++) {                                             \
				T *tm = ring + (ptrdiff_t)(j % 3) * rl;                            \
				T *tc = ring + (ptrdiff_t)((j + 1) % 3) * rl;                      \
				T *tp = ring + (ptrdiff_t)((j + 2) % 3) * rl;                      \
				lap_row_##SFX(ink + (j + 1) * isj - 1, isj, tp, ni + 2);           \
				if (nt)                                                            \
					STENCIL_ROW_NT(SFX, ink + j * isj, tm, tc, tp,             \
						       outk + j * osj, ni, alpha);                 \
				else                                                               \
					out_row_##SFX(ink + j * isj, tm, tc, tp, outk + j * osj,   \
						      ni, alpha);                                  \
			}                                                                          \
		}                                                                                  \
		/* streaming stores are weakly ordered: make them visible before the task ends */  \
		if (nt)                                                                            \
			STENCIL_NT_FENCE();                                                        \
	}

STENCIL_LAP_ROW(double, f64)
STENCIL_OUT_ROW(double, f64)
STENCIL_FUSED(double, f64)
STENCIL_LAP_ROW(float, f32)
STENCIL_OUT_ROW(float, f32)
STENCIL_FUSED(float, f32)

/* Size of the largest cache of CPU 0 from sysfs (glibc's sysconf reports 10x the L3 in some VMs);
 * 32 MiB when sysfs has none. */
static size_t last_level_cache(void)
{
	size_t best = 0;
	for (int i = 0; i < 8; i++) {
		char path[96], unit = 0;
		unsigned long v;
		FILE *f;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (!(f = fopen(path, "r")))
			continue;
		if (fscanf(f, "%lu%c", &v, &unit) >= 1) {
			size_t b = v * (unit == 'K' ? 1024UL : unit == 'M' ? 1024UL * 1024 : 1UL);
			if (b > best)
				best = b;
		}
		fclose(f);
	}
	return best ? best : (size_t)32 << 20;
}

int stencil_nontemporal_pays(size_t field_bytes)
{
	return 2 * field_bytes > last_level_cache();
}

void stencil_copy_box(const void *src, ptrdiff_t ssj, ptrdiff_t ssk, void *dst, ptrdiff_t dsj,
		      ptrdiff_t dsk, int ni, int nj, int nk, size_t elem_size)
{
	const char *s = src;
	char *d = dst;
	size_t row = (size_t)ni * elem_size;
	for (int k = 0; k < nk; k++)
		for (int j = 0; j < nj; j++)
			stencil_copy_row(d + (k * dsk + j * dsj) * (ptrdiff_t)elem_size,
					 s + (k * ssk + j * ssj) * (ptrdiff_t)elem_size, row);
}

int stencil_init_view(tsr_ctx_t *ctx, const void *args, size_t arglen, tsr_accessor_t *f)
{
	if (arglen != sizeof(stencil_init_args_t)) {
		tsr_ctx_error(ctx, "stencil_init: %zu bytes of arguments, expected %zu", arglen,
			      sizeof(stencil_init_args_t));
		return 0;
	}
	if (tsr_ctx_field(ctx, 0, 0, TSR_NONE, TSR_WRITE, f) != TSR_OK) {
		tsr_ctx_error(ctx, "stencil_init: %s", tsr_last_error());
		return 0;
	}
	if (f->dim != 3 || (f->type != TSR_F64 && f->type != TSR_F32)) {
		tsr_ctx_error(ctx, "stencil_init: the field must be f64 or f32 on a 3-D region");
		return 0;
	}
	return f->hi[0] >= f->lo[0] && f->hi[1] >= f->lo[1] && f->hi[2] >= f->lo[2];
}

void stencil_init_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const stencil_init_args_t *a = args;
	tsr_accessor_t f;

	if (!stencil_init_view(ctx, args, arglen, &f))
		return;
	for (int64_t k = f.lo[2]; k <= f.hi[2]; k++)
		for (int64_t j = f.lo[1]; j <= f.hi[1]; j++)
			for (int64_t i = f.lo[0]; i <= f.hi[0]; i++) {
				int one = STENCIL_INITIAL_IS_ONE(a->nx, a->ny, a->nz, k, j, i);
				if (f.type == TSR_F64)
					TSR_AT3(&f, double, i, j, k) = one;
				else
					TSR_AT3(&f, float, i, j, k) = (float)one;
			}
}

int stencil_diffusion_view(tsr_ctx_t *ctx, const void *args, size_t arglen, tsr_accessor_t *in,
			   tsr_accessor_t *out, stencil_tile_t *t)
{
	const stencil_args_t *a = args;
	const char *why;

	if (arglen != sizeof *a) {
		tsr_ctx_error(ctx, "stencil_diffusion: %zu bytes of arguments, expected %zu",
			      arglen, sizeof *a);
		return 0;
	}
	if (tsr_ctx_field(ctx, 0, 0, TSR_NONE, TSR_READ, in) != TSR_OK ||
	    tsr_ctx_field(ctx, 1, 0, TSR_NONE, TSR_WRITE, out) != TSR_OK) {
		tsr_ctx_error(ctx, "stencil_diffusion: %s", tsr_last_error());
		return 0;
	}
	if (stencil_tile_of(in, out, t, &why) != 0) {
		tsr_ctx_error(ctx, "stencil_diffusion: %s", why);
		return 0;
	}
	return t->ni > 0 && t->nj > 0 && t->nk > 0;
}

void stencil_diffusion_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const stencil_args_t *a = args;
	tsr_accessor_t in, out;
	stencil_tile_t t;
	void *ring;

	if (!stencil_diffusion_view(ctx, args, arglen, &in, &out, &t))
		return;
	/* Per call, not per worker: a few KiB against a tile of megabytes, and no state to clean
	 * up. */
	ring = malloc(stencil_ring_elems(t.ni) * in.elem_size);
	if (!ring) {
		tsr_ctx_error(ctx, "stencil_diffusion: out of memory for a tile of %d points in i",
			      t.ni);
		return;
	}
	if (in.type == TSR_F64)
		stencil_fused_f64((const double *)in.ptr + t.in_off, t.isj, t.isk, out.ptr, t.osj,
				  t.osk, t.ni, t.nj, t.nk, a->alpha, ring, a->nontemporal);
	else
		stencil_fused_f32((const float *)in.ptr + t.in_off, t.isj, t.isk, out.ptr, t.osj,
				  t.osk, t.ni, t.nj, t.nk, (float)a->alpha, ring, a->nontemporal);
	free(ring);
}

int stencil_halo_view(tsr_ctx_t *ctx, const void *args, size_t arglen, tsr_accessor_t *src,
		      tsr_accessor_t *dst, const char **from)
{
	const stencil_copy_args_t *a = args;
	if (arglen != sizeof *a || a->ndst < 1 || a->ndst > STENCIL_MAX_DST) {
		tsr_ctx_error(ctx,
			      "stencil_halo_copy: bad arguments (%zu bytes, expected %zu, with 1 "
			      "to %d destinations)",
			      arglen, sizeof *a, STENCIL_MAX_DST);
		return 0;
	}
	if (tsr_ctx_field(ctx, 0, 0, TSR_NONE, TSR_READ, src) != TSR_OK) {
		tsr_ctx_error(ctx, "stencil_halo_copy: %s", tsr_last_error());
		return 0;
	}
	for (int m = 0; m < a->ndst; m++) {
		if (tsr_ctx_field(ctx, 1 + m, 0, src->type, TSR_WRITE, &dst[m]) != TSR_OK) {
			tsr_ctx_error(ctx, "stencil_halo_copy: %s", tsr_last_error());
			return 0;
		}
		if (stencil_copy_source(src, &dst[m], a->shift[m], &from[m]) != 0) {
			tsr_ctx_error(ctx,
				      "stencil_halo_copy: destination %d shifted by (%lld, %lld, "
				      "%lld) leaves the source",
				      m, (long long)a->shift[m][0], (long long)a->shift[m][1],
				      (long long)a->shift[m][2]);
			return 0;
		}
	}
	return 1;
}

void stencil_halo_copy_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const stencil_copy_args_t *a = args;
	tsr_accessor_t src, dst[STENCIL_MAX_DST];
	const char *from[STENCIL_MAX_DST];
	int64_t k0 = INT64_MAX, k1 = INT64_MIN;

	if (!stencil_halo_view(ctx, args, arglen, &src, dst, from))
		return;
	for (int m = 0; m < a->ndst; m++) {
		if (dst[m].lo[2] < k0)
			k0 = dst[m].lo[2];
		if (dst[m].hi[2] > k1)
			k1 = dst[m].hi[2];
	}
	/* Plane by plane over every destination: the left and right columns of a plane share the
	 * cache lines of its rows, which then come from memory once. Destinations are halo, sources
	 * interior, so the order is free. */
	const ptrdiff_t es = (ptrdiff_t)src.elem_size;
	for (int64_t k = k0; k <= k1; k++)
		for (int m = 0; m < a->ndst; m++) {
			const tsr_accessor_t *d = &dst[m];
			if (k < d->lo[2] || k > d->hi[2])
				continue;
			const ptrdiff_t dk = (ptrdiff_t)(k - d->lo[2]);
			const size_t row = (size_t)(d->hi[0] - d->lo[0] + 1) * (size_t)es;
			for (int64_t j = 0; j <= d->hi[1] - d->lo[1]; j++)
				stencil_copy_row((char *)d->ptr + (dk * (ptrdiff_t)d->stride[2] +
								   j * (ptrdiff_t)d->stride[1]) *
									  es,
						 from[m] + (dk * (ptrdiff_t)src.stride[2] +
							    j * (ptrdiff_t)src.stride[1]) *
								   es,
						 row);
		}
}

int stencil_tasks_register(stencil_tasks_t *t)
{
	tsr_task_desc_t d = {0};
	int rc;

	d.name = "stencil_init";
	d.cpu = stencil_init_cpu;
#ifdef TSR_HAVE_CUDA
	d.cuda = stencil_init_cuda;
#endif
#ifdef STARPU_USE_OPENCL
	d.opencl = stencil_init_opencl;
#endif
	d.ret_type = TSR_NONE;
	if ((rc = tsr_task_register(&d, &t->init)) != TSR_OK)
		return rc;
	d.name = "stencil_diffusion";
	d.cpu = stencil_diffusion_cpu;
#ifdef TSR_HAVE_CUDA
	d.cuda = stencil_diffusion_cuda;
#endif
#ifdef STARPU_USE_OPENCL
	d.opencl = stencil_diffusion_opencl;
#endif
	d.ret_type = TSR_NONE;
	if ((rc = tsr_task_register(&d, &t->diffusion)) != TSR_OK)
		return rc;
	d.name = "stencil_halo_copy";
	d.cpu = stencil_halo_copy_cpu;
#ifdef TSR_HAVE_CUDA
	d.cuda = stencil_halo_copy_cuda;
#endif
#ifdef STARPU_USE_OPENCL
	d.opencl = stencil_halo_copy_opencl;
#endif
	return tsr_task_register(&d, &t->halo_copy);
}
