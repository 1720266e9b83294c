/* stencil_cpu.c: the CPU task variants of the fourth-order diffusion, built on the fused kernel of
 * stencil_kernel.c (shared with the baselines, so that comparisons measure the runtime, not the
 * arithmetic). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <starpu_config.h> /* STARPU_USE_OPENCL */

#include "stencil.h"

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
