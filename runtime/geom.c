/* geom.c: which boxes of a partition meet a given box, without looking at every box: by
 * arithmetic for tiles (tsr_partition_tiles_halo: a box cut into equal tiles, each grown by a halo
 * and clipped), through an index sorted along dimension 0 for a list of boxes.
 *
 * Several ranks ask it to find who reads what they wrote and who wrote what they read without
 * scanning every point of a launch (coherence_sym.c): a rank's cost then follows its own points
 * and their neighbours, not the job's size. The answers are candidates checked against the boxes
 * themselves, so an index that over-approximates is still exact. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* The tile of [lo, hi] cut into n that holds x (tsr__tile_range's inverse; lo <= x <= hi). */
static int64_t tile_of(int64_t lo, int64_t hi, int64_t n, int64_t x)
{
	int64_t len = hi - lo + 1;
	int64_t q = len / n;
	int64_t rem = len % n;
	int64_t off = x - lo;
	int64_t big = rem * (q + 1); /* the first rem tiles hold q + 1 points */

	/* a tiling gives every tile a point */
	tsr__assert(q >= 1 && off >= 0 && off < len);

	int64_t t = off < big ? off / (q + 1) : rem + (off - big) / q;
	tsr__assert(t < n);
	return t;
}

/* Candidate tile indexes [*a, *b] in dimension d for x; 0 if none. */
static int tile_span(const struct tsr_geom *g, int d, const tsr_box_t *x, int64_t *a, int64_t *b)
{
	int64_t lo = g->domain.lo[d];
	int64_t hi = g->domain.hi[d];
	int64_t h = g->halo[d];

	/* a tile grown by h reaches x when the tile itself reaches [x.lo - h, x.hi + h] */
	int64_t from = x->lo[d] - lo <= h ? lo : x->lo[d] - h;
	int64_t to = hi - x->hi[d] <= h ? hi : x->hi[d] + h;
	if (from > hi || to < lo)
		return 0;

	*a = tile_of(lo, hi, g->n[d], from < lo ? lo : from);
	*b = tile_of(lo, hi, g->n[d], to > hi ? hi : to);
	tsr__assert(*a <= *b);
	return 1;
}

static int push(struct tsr_ivec *out, int c)
{
	if (out->n == out->cap) {
		int ncap = out->cap ? 2 * out->cap : 64;
		int *nv = realloc(out->v, (size_t)ncap * sizeof *nv);
		if (!nv)
			return -1;
		out->v = nv;
		out->cap = ncap;
	}

	out->v[out->n++] = c;
	return 0;
}

static int tiles_meeting(const struct tsr_geom *g, const tsr_box_t *boxes, const tsr_box_t *x,
			 struct tsr_ivec *out)
{
	int64_t a[3] = {0, 0, 0};
	int64_t b[3] = {0, 0, 0};

	for (int d = 0; d < g->domain.dim; d++)
		if (!tile_span(g, d, x, &a[d], &b[d]))
			return 0;

	for (int64_t k = a[2]; k <= b[2]; k++)
		for (int64_t j = a[1]; j <= b[1]; j++)
			for (int64_t i = a[0]; i <= b[0]; i++) {
				int c = (int)(i + g->n[0] * (j + g->n[1] * k));
				if (tsr__box_overlap(boxes[c], *x) && push(out, c))
					return -1;
			}

	return 0;
}

/* A list: the boxes whose lo[0] is at most x's hi[0], walked down from the last while the running
 * maximum of hi[0] still reaches x's lo[0]. */
static int list_meeting(const struct tsr_geom *g, const tsr_box_t *boxes, const tsr_box_t *x,
			struct tsr_ivec *out)
{
	int lo = 0;
	int hi = g->nboxes; /* first sorted position whose lo[0] exceeds x's hi[0] */

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (boxes[g->order[mid]].lo[0] <= x->hi[0])
			lo = mid + 1;
		else
			hi = mid;
	}

	for (int k = lo - 1; k >= 0 && g->maxhi[k] >= x->lo[0]; k--) {
		int c = g->order[k];
		if (tsr__box_overlap(boxes[c], *x) && push(out, c))
			return -1;
	}

	return 0;
}

int tsr__geom_meeting(const struct tsr_geom *g, const tsr_box_t *boxes, const tsr_box_t *x,
		      struct tsr_ivec *out)
{
	out->n = 0;
	if (g->kind == TSR_GEOM_TILES)
		return tiles_meeting(g, boxes, x, out);
	return list_meeting(g, boxes, x, out);
}

void tsr__geom_tiles(struct tsr_geom *g, tsr_box_t domain, const int64_t n[3],
		     const int64_t halo[3])
{
	memset(g, 0, sizeof *g);
	g->kind = TSR_GEOM_TILES;
	g->domain = domain;
	for (int d = 0; d < 3; d++) {
		g->n[d] = n[d];
		g->halo[d] = halo ? halo[d] : 0;
	}
}

static const tsr_box_t *sort_boxes; /* qsort's comparison has no argument: one host thread */

static int by_lo0(const void *a, const void *b)
{
	int64_t x = sort_boxes[*(const int *)a].lo[0];
	int64_t y = sort_boxes[*(const int *)b].lo[0];
	return (x > y) - (x < y);
}

int tsr__geom_list(struct tsr_geom *g, const tsr_box_t *boxes, int n)
{
	memset(g, 0, sizeof *g);
	g->kind = TSR_GEOM_LIST;
	g->nboxes = n;
	g->order = malloc((size_t)n * sizeof *g->order);
	g->maxhi = malloc((size_t)n * sizeof *g->maxhi);
	if (!g->order || !g->maxhi) {
		tsr__geom_free(g);
		return TSR_ENOMEM;
	}

	for (int i = 0; i < n; i++)
		g->order[i] = i;
	sort_boxes = boxes;
	qsort(g->order, (size_t)n, sizeof *g->order, by_lo0);

	for (int i = 0; i < n; i++) {
		int64_t h = boxes[g->order[i]].hi[0];
		g->maxhi[i] = i && g->maxhi[i - 1] > h ? g->maxhi[i - 1] : h;
	}

	return TSR_OK;
}

void tsr__geom_free(struct tsr_geom *g)
{
	free(g->order);
	free(g->maxhi);
	g->order = NULL;
	g->maxhi = NULL;
}
