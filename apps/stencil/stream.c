/* stream.c: the STREAM triad (a = b + s * c) that --compare uses as the machine's attainable memory
 * bandwidth, measured in the same process as the stencil so that both see the same machine load. */
#include "config.h"

#include <stdlib.h>

#include "stencil_app.h"

struct sp_stream {
	size_t n;
	int nthreads;
	double *a, *b, *c;
};

sp_stream_t *sp_stream_create(size_t n, int nthreads)
{
	struct sp_stream *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->n = n;
	s->nthreads = nthreads;
	s->a = malloc(n * sizeof(double));
	s->b = malloc(n * sizeof(double));
	s->c = malloc(n * sizeof(double));
	if (!s->a || !s->b || !s->c) {
		sp_stream_destroy(s);
		return NULL;
	}
/* first touch by the threads that run the triad, with the same static schedule */
#pragma omp parallel for schedule(static) num_threads(nthreads)
	for (size_t i = 0; i < n; i++) {
		s->a[i] = 0.0;
		s->b[i] = 1.0;
		s->c[i] = 2.0;
	}
	return s;
}

double sp_stream_triad(sp_stream_t *s)
{
	double *restrict a = s->a;
	const double *restrict b = s->b, *restrict c = s->c;
	const double q = 3.0;
	const size_t n = s->n;
	double t0 = app_now();
#pragma omp parallel for schedule(static) num_threads(s->nthreads)
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] + q * c[i];
	double t = app_now() - t0;
	return 3.0 * sizeof(double) * (double)n / t * 1e-9;
}

void sp_stream_destroy(sp_stream_t *s)
{
	if (!s)
		return;
	free(s->a);
	free(s->b);
	free(s->c);
	free(s);
}
