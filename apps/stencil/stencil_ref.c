/* stencil_ref.c: the host-side pieces of apps/stencil: initial condition, periodic halo update, the
 * plain sequential reference that --verify compares against, the comparison and the .npy writer. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stencil_app.h"

int sp_initial_is_one(const stencil_problem_t *p, int k, int j, int i)
{
	return STENCIL_INITIAL_IS_ONE(p->nx, p->ny, p->nz, k, j, i);
}

void sp_initial(const stencil_problem_t *p, void *field, ptrdiff_t sj, ptrdiff_t sk, int k0, int k1)
{
	size_t es = sp_elem(p);
	const double one64 = 1.0;
	const float one32 = 1.0f;
	const void *one = p->f32 ? (const void *)&one32 : (const void *)&one64;

	for (int k = k0; k < k1; k++) {
		for (int j = 0; j < p->ny + 2 * SH; j++) {
			char *row = (char *)field +
				    ((ptrdiff_t)k * sk + (ptrdiff_t)j * sj) * (ptrdiff_t)es;
			memset(row, 0, (size_t)(p->nx + 2 * SH) * es);
			for (int i = SH + p->nx / 4; i < SH + 3 * p->nx / 4; i++)
				if (sp_initial_is_one(p, k, j, i))
					memcpy(row + (size_t)i * es, one, es);
		}
	}
}

void sp_halo_host(const stencil_problem_t *p, void *field, ptrdiff_t sj, ptrdiff_t sk, int k0,
		  int k1)
{
	const ptrdiff_t es = (ptrdiff_t)sp_elem(p);
	const int nx = p->nx, ny = p->ny;

	for (int k = k0; k < k1; k++) {
		char *pl = (char *)field + (ptrdiff_t)k * sk * es;
		/* j-edges, i in [h, nx + h): rows [0, h) <- [ny, ny + h), rows [ny + h, ny + 2h) <-
		 * [h, 2h) */
		for (int j = 0; j < SH; j++) {
			memcpy(pl + (j * sj + SH) * es, pl + ((j + ny) * sj + SH) * es,
			       (size_t)(nx * es));
			memcpy(pl + ((j + ny + SH) * sj + SH) * es, pl + ((j + SH) * sj + SH) * es,
			       (size_t)(nx * es));
		}
		/* i-edges over every j, corners included: cols [0, h) <- [nx, nx + h), [nx + h, nx
		 * + 2h) <- [h, 2h) */
		for (int j = 0; j < ny + 2 * SH; j++) {
			char *row = pl + j * sj * es;
			stencil_copy_row(row, row + nx * es, (size_t)(SH * es));
			stencil_copy_row(row + (nx + SH) * es, row + SH * es, (size_t)(SH * es));
		}
	}
}

/* lap(f) on rows [j0, j1) and columns [i0, i1) of every plane, in the order of terms. */
#define SP_REF_LAP(T, SFX)                                                                      \
	static void ref_lap_##SFX(const stencil_problem_t *p, const T *f, T *l, int ext)        \
	{                                                                                       \
		const ptrdiff_t sj = sp_sj(p), sk = sp_sk(p);                                   \
		for (int k = 0; k < p->nz; k++)                                                 \
			for (int j = SH - ext; j < p->ny + SH + ext; j++)                       \
				for (int i = SH - ext; i < p->nx + SH + ext; i++) {             \
					ptrdiff_t x = k * sk + j * sj + i;                      \
					l[x] = (T)-4 * f[x] + f[x - 1] + f[x + 1] + f[x - sj] + \
					       f[x + sj];                                       \
				}                                                               \
	}                                                                                       \
	static void ref_update_##SFX(const stencil_problem_t *p, const T *in, T *out, T alpha)  \
	{                                                                                       \
		const ptrdiff_t sj = sp_sj(p), sk = sp_sk(p);                                   \
		for (int k = 0; k < p->nz; k++)                                                 \
			for (int j = SH; j < p->ny + SH; j++)                                   \
				for (int i = SH; i < p->nx + SH; i++) {                         \
					ptrdiff_t x = k * sk + j * sj + i;                      \
					out[x] = in[x] - alpha * out[x];                        \
				}                                                               \
	}

SP_REF_LAP(double, f64)
SP_REF_LAP(float, f32)

int sp_reference(const stencil_problem_t *p, void *result)
{
	const size_t bytes = sp_bytes(p);
	void *a = calloc(1, bytes), *b = calloc(1, bytes), *tmp = calloc(1, bytes);
	void *in = a, *out = b;
	int rc = -1;

	if (!a || !b || !tmp)
		goto done;
	sp_initial(p, in, sp_sj(p), sp_sk(p), 0, p->nz);
	for (int n = 0; n < p->iter; n++) {
		sp_halo_host(p, in, sp_sj(p), sp_sk(p), 0, p->nz);
		if (p->f32) {
			ref_lap_f32(p, in, tmp, 1);
			ref_lap_f32(p, tmp, out, 0);
			ref_update_f32(p, in, out, (float)STENCIL_ALPHA);
		} else {
			ref_lap_f64(p, in, tmp, 1);
			ref_lap_f64(p, tmp, out, 0);
			ref_update_f64(p, in, out, STENCIL_ALPHA);
		}
		if (n < p->iter - 1) {
			void *t = in;
			in = out;
			out = t;
		} else {
			sp_halo_host(p, out, sp_sj(p), sp_sk(p), 0, p->nz);
		}
	}
	memcpy(result, out, bytes);
	rc = 0;
done:
	free(a);
	free(b);
	free(tmp);
	return rc;
}

int sp_compare(const stencil_problem_t *p, const void *got, const void *ref, double *err,
	       size_t *where)
{
	const size_t n = sp_points(p);
	double worst = 0.0;
	size_t at = 0;

	if (!p->f32) {
		/* f64 must be bit-identical; report the largest absolute difference if it is not */
		const double *g = got, *r = ref;
		if (memcmp(got, ref, sp_bytes(p)) == 0) {
			*err = 0.0;
			*where = 0;
			return 1;
		}
		for (size_t x = 0; x < n; x++) {
			double d = fabs(g[x] - r[x]);
			if (!(d <= worst)) { /* also catches NaN */
				worst = isnan(d) ? INFINITY : d;
				at = x;
			}
		}
		if (worst == 0.0) /* differences only in bits that compare equal (signed zeros) */
			worst = 0x1p-1074;
		*err = worst;
		*where = at;
		return 0;
	}
	const float *g = got, *r = ref;
	for (size_t x = 0; x < n; x++) {
		double d = fabs((double)g[x] - (double)r[x]);
		double e = r[x] != 0.0f ? d / fabs((double)r[x]) : d;
		if (!(e <= worst)) {
			worst = isnan(e) ? INFINITY : e;
			at = x;
		}
	}
	*err = worst;
	*where = at;
	return worst < 1e-6;
}

int sp_write_npy(const stencil_problem_t *p, const char *path, const void *field, ptrdiff_t sj,
		 ptrdiff_t sk)
{
	char hdr[256];
	const size_t es = sp_elem(p), row = (size_t)(p->nx + 2 * SH) * es;
	FILE *f;
	int len, pad, ok = 1;

	/* NPY 1.0: magic, version, little-endian header length, then a dict padded with spaces and
	 * a newline so that the data starts on a multiple of 64 bytes. */
	len = snprintf(hdr, sizeof hdr,
		       "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d, %d), }",
		       p->f32 ? "<f4" : "<f8", p->nz, p->ny + 2 * SH, p->nx + 2 * SH);
	pad = 64 - (10 + len + 1) % 64;
	if (pad == 64)
		pad = 0;
	memset(hdr + len, ' ', (size_t)pad);
	len += pad;
	hdr[len++] = '\n';
	if (!(f = fopen(path, "wb")))
		return -1;
	unsigned char pre[10] = {0x93,
				 'N',
				 'U',
				 'M',
				 'P',
				 'Y',
				 1,
				 0,
				 (unsigned char)(len & 0xff),
				 (unsigned char)(len >> 8)};
	ok = fwrite(pre, 1, sizeof pre, f) == sizeof pre &&
	     fwrite(hdr, 1, (size_t)len, f) == (size_t)len;
	for (int k = 0; ok && k < p->nz; k++)
		for (int j = 0; ok && j < p->ny + 2 * SH; j++)
			ok = fwrite((const char *)field +
					    ((ptrdiff_t)k * sk + (ptrdiff_t)j * sj) * (ptrdiff_t)es,
				    1, row, f) == row;
	if (fclose(f) != 0)
		ok = 0;
	if (!ok && errno == 0)
		errno = EIO;
	return ok ? 0 : -1;
}
