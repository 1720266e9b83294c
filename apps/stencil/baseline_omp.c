/* baseline_omp.c: the plain C/OpenMP loop nest that --compare measures Tessera against: two whole
 * fields, the same fused kernel (apps/stencil/stencil_kernel.c) over blocks of (k, j), OpenMP
 * threads. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "stencil_app.h"

struct sp_omp {
	stencil_problem_t p;
	void *f[2];
	void *rings; /* one ring of tmp rows per thread */
	int result;  /* index of the field holding the final result */
	int jblocks; /* blocks of rows per plane, so that small nz still feeds every thread */
};

/* Both fields are first touched by the threads that will use them (no NUMA effect on a 2-core VM,
 * but the right habit for a bandwidth benchmark). */
static void omp_init(struct sp_omp *o)
{
	const stencil_problem_t *p = &o->p;
#pragma omp parallel for schedule(static) num_threads(p->nthreads)
	for (int k = 0; k < p->nz; k++) {
		sp_initial(p, o->f[0], sp_sj(p), sp_sk(p), k, k + 1);
		memset((char *)o->f[1] + (size_t)k * (size_t)sp_sk(p) * sp_elem(p), 0,
		       (size_t)sp_sk(p) * sp_elem(p));
	}
}

sp_omp_t *sp_omp_create(const stencil_problem_t *p)
{
	struct sp_omp *o = calloc(1, sizeof *o);
	if (!o)
		return NULL;
	o->p = *p;
	o->f[0] = malloc(sp_bytes(p));
	o->f[1] = malloc(sp_bytes(p));
	o->rings = malloc((size_t)p->nthreads * stencil_ring_elems(p->nx) * sp_elem(p));
	if (!o->f[0] || !o->f[1] || !o->rings) {
		sp_omp_destroy(o);
		return NULL;
	}
	o->jblocks = p->nz >= 4 * p->nthreads ? 1 : 4 * p->nthreads;
	if (o->jblocks > p->ny)
		o->jblocks = p->ny;
	omp_init(o);
	return o;
}

static void omp_halo(struct sp_omp *o, void *field)
{
	const stencil_problem_t *p = &o->p;
#pragma omp for schedule(static)
	for (int k = 0; k < p->nz; k++)
		sp_halo_host(p, field, sp_sj(p), sp_sk(p), k, k + 1);
}

double sp_omp_run(sp_omp_t *o)
{
	const stencil_problem_t *p = &o->p;
	const ptrdiff_t sj = sp_sj(p), sk = sp_sk(p);
	const int nb = o->jblocks;
	double t0, t1;

	omp_init(o);
	t0 = app_now();
#pragma omp parallel num_threads(p->nthreads)
	{
#ifdef _OPENMP
		int tid = omp_get_thread_num();
#else
		int tid = 0;
#endif
		void *ring =
			(char *)o->rings + (size_t)tid * stencil_ring_elems(p->nx) * sp_elem(p);
		/* each thread swaps its own copy of the field index, in step with the others */
		int cur = 0;
		for (int n = 0; n < p->iter; n++) {
			void *fin = o->f[cur], *fout = o->f[1 - cur];
			omp_halo(o, fin); /* ends with the implicit barrier of omp for */
#pragma omp for collapse(2) schedule(static)
			for (int k = 0; k < p->nz; k++)
				for (int b = 0; b < nb; b++) {
					int j0, nj;
					sp_tile_range(p->ny, nb, b, &j0, &nj);
					ptrdiff_t off =
						(ptrdiff_t)k * sk + (ptrdiff_t)(j0 + SH) * sj + SH;
					if (p->f32)
						stencil_fused_f32((const float *)fin + off, sj, sk,
								  (float *)fout + off, sj, sk,
								  p->nx, nj, 1,
								  (float)STENCIL_ALPHA, ring,
								  p->nt);
					else
						stencil_fused_f64((const double *)fin + off, sj, sk,
								  (double *)fout + off, sj, sk,
								  p->nx, nj, 1, STENCIL_ALPHA, ring,
								  p->nt);
				}
			if (n < p->iter - 1)
				cur = 1 - cur;
			else
				omp_halo(o, fout);
		}
	}
	t1 = app_now();
	/* iter steps swap the fields iter - 1 times; the last step's output holds the result */
	o->result = 1 - (p->iter - 1) % 2;
	return t1 - t0;
}

const void *sp_omp_result(const sp_omp_t *o)
{
	return o->f[o->result];
}

void sp_omp_destroy(sp_omp_t *o)
{
	if (!o)
		return;
	free(o->f[0]);
	free(o->f[1]);
	free(o->rings);
	free(o);
}
