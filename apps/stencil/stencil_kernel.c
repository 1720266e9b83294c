/* stencil_kernel.c: the diffusion's fused two-Laplacian kernel and box copy, no runtime in them:
 * the Tessera tasks, the baselines and the plain MPI stencil of apps/bench run them. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
