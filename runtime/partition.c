/* partition.c: partitions of a region into boxes (equal tiles, halo tiles, explicit lists).
 * A subregion's fields are views of the root's arrays, each with a handle of its own that
 * coherence.c registers when first used and orders against the other views. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int tsr__color_index(const struct tsr_partition *p, const int64_t color[3])
{
	int64_t idx = 0, mul = 1;

	for (int d = 0; d < p->colors.dim; d++) {
		if (color[d] < p->colors.lo[d] || color[d] > p->colors.hi[d])
			return -1;
		idx += (color[d] - p->colors.lo[d]) * mul;
		mul *= p->colors.hi[d] - p->colors.lo[d] + 1;
	}

	tsr__assert(idx < p->ncolors);
	return (int)idx;
}

/* Build the partition object and its subregions from a list of boxes. */
/* tiles: the geometry of a tiles partition (geom.c); NULL for a list of boxes, indexed here. */
static int partition_build(struct tsr_region *r, tsr_box_t colors, tsr_box_t *boxes,
			   const struct tsr_geom *tiles, const char *name, const char *what,
			   tsr_partition_t *out)
{
	int n = (int)tsr_box_volume(colors);
	tsr__assert(n > 0); /* the callers checked the colors */
	struct tsr_partition *p = calloc(1, sizeof *p);
	if (!p) {
		free(boxes);
		return tsr__err(TSR_ENOMEM, "%s: out of memory", what);
	}

	p->name = strdup(name ? name : "part");
	p->parent = r;
	p->colors = colors;
	p->ncolors = n;
	p->boxes = boxes;
	p->subs = calloc(n, sizeof *p->subs);
	if (!p->name || !p->subs)
		goto nomem;

	/* Disjointness: sort-free pairwise test; partitions have at most thousands of colors. */
	p->disjoint = 1;
	for (int i = 0; i < n && p->disjoint; i++)
		for (int j = i + 1; j < n; j++)
			if (tsr__box_overlap(boxes[i], boxes[j])) {
				p->disjoint = 0;
				break;
			}

	for (int c = 0; c < n; c++) {
		p->subs[c] = tsr__subregion_new(p, c);
		if (!p->subs[c])
			goto nomem;
	}

	if (tiles)
		p->geom = *tiles;
	else if (tsr__geom_list(&p->geom, boxes, n))
		goto nomem;

	if (r->nparts == r->cap_parts) {
		int ncap = r->cap_parts ? 2 * r->cap_parts : 4;
		struct tsr_partition **np = realloc(r->parts, ncap * sizeof *np);
		if (!np)
			goto nomem;
		r->parts = np;
		r->cap_parts = ncap;
	}

	r->parts[r->nparts++] = p;
	p->id = tsr__handle_new(TSR_K_PARTITION, p);
	out->id = p->id;
	return TSR_OK;

nomem:
	tsr__partition_free(p, 0);
	return tsr__err(TSR_ENOMEM, "%s: partition '%s' of region '%s': out of memory", what,
			name ? name : "part", r->name);
}

static int in_partition(const struct tsr_node *n, const void *arg)
{
	return n->part == arg;
}

/* Destroy nested partitions, hand what this one's subregions wrote to the root, unregister
 * their views (once their tasks are done), free. */
void tsr__partition_free(struct tsr_partition *p, int detach)
{
	struct tsr_region *r = p->parent;

	for (int c = 0; c < p->ncolors; c++)
		if (p->subs && p->subs[c]) {
			struct tsr_region *s = p->subs[c];
			while (s->nparts > 0)
				tsr__partition_free(s->parts[s->nparts - 1], 1);
		}

	for (int f = 0; f < r->nfields && p->subs; f++) {
		tsr__coh_retire(&r->root->nodes[f], in_partition, p);
		for (int c = 0; c < p->ncolors; c++)
			if (p->subs[c])
				tsr__coh_unregister(&p->subs[c]->nodes[f]);
	}

	for (int c = 0; c < p->ncolors && p->subs; c++)
		if (p->subs[c]) {
			tsr__handle_free(p->subs[c]->id);
			free(p->subs[c]->nodes);
			free(p->subs[c]->parts);
			free(p->subs[c]->name);
			free(p->subs[c]);
		}

	if (detach)
		for (int i = 0; i < r->nparts; i++)
			if (r->parts[i] == p) {
				r->parts[i] = r->parts[--r->nparts];
				break;
			}

	if (p->id)
		tsr__handle_free(p->id);

	/* several ranks: what launches through p said of fields, told piece by piece (or, where
	 * that cannot be, forgotten: tsr_partition_destroy refuses first) */
	if (tsr__coh_sym_forget(p))
		tsr__coh_sym_abandon(p);
	tsr__geom_free(&p->geom);
	free(p->owners);
	free(p->ranks);
	free(p->rank_start);
	free(p->rank_colors);
	free(p->subs);
	free(p->boxes);
	free(p->name);
	free(p);
}

static int check_colors(struct tsr_region *r, tsr_box_t colors, const char *name, const char *what)
{
	char bs[96];
	const char *why = tsr__box_problem(colors);
	if (why)
		return tsr__err(tsr__box_problem_code(colors),
				"%s: partition '%s' of region '%s': color space %s %s", what, name,
				r->name, tsr__box_str(colors, bs, sizeof bs), why);

	if (colors.dim != r->bounds.dim)
		return tsr__err(TSR_EBOUNDS,
				"%s: partition '%s' of region '%s': color space %s must be a "
				"non-empty %d-D box",
				what, name, r->name, tsr__box_str(colors, bs, sizeof bs),
				r->bounds.dim);

	/* colors are counted in int (and handed to StarPU as an unsigned child count) */
	if (tsr_box_volume(colors) > INT_MAX)
		return tsr__err(TSR_EBOUNDS,
				"%s: partition '%s' of region '%s': color space %s has %lld "
				"colors, more than %d",
				what, name, r->name, tsr__box_str(colors, bs, sizeof bs),
				(long long)tsr_box_volume(colors), INT_MAX);

	return TSR_OK;
}

/* lo - halo and hi + halo, clipped to [blo, bhi] without computing a sum that could overflow
 * (a halo of INT64_MAX means "everything"). lo and hi lie in [blo, bhi]. */
static int64_t halo_lo(int64_t lo, int64_t halo, int64_t blo)
{
	tsr__assert(lo >= blo && halo >= 0);
	return lo - blo <= halo ? blo : lo - halo;
}

static int64_t halo_hi(int64_t hi, int64_t halo, int64_t bhi)
{
	tsr__assert(hi <= bhi && halo >= 0);
	return bhi - hi <= halo ? bhi : hi + halo;
}

int tsr_partition_tiles_halo(tsr_region_t rid, tsr_box_t domain, tsr_box_t colors,
			     const int64_t halo[3], const char *name, tsr_partition_t *out)
{
	const char *what = "tsr_partition_tiles_halo";
	struct tsr_region *r;
	int rc = tsr__region_lookup(rid, what, &r);
	if (rc)
		return rc;

	if (!name)
		name = "tiles";
	if (!out)
		return tsr__err(TSR_EINVAL, "%s: null output pointer", what);
	if ((rc = check_colors(r, colors, name, what)))
		return rc;

	char bs[96], bs2[96];
	if (!tsr_box_contains(r->bounds, domain))
		return tsr__err(TSR_EBOUNDS,
				"%s: partition '%s': domain %s is not inside region '%s' %s", what,
				name, tsr__box_str(domain, bs, sizeof bs), r->name,
				tsr__box_str(r->bounds, bs2, sizeof bs2));

	int64_t n[3] = {1, 1, 1};
	for (int d = 0; d < r->bounds.dim; d++) {
		n[d] = colors.hi[d] - colors.lo[d] + 1;
		if (n[d] > domain.hi[d] - domain.lo[d] + 1)
			return tsr__err(TSR_EBOUNDS,
					"%s: partition '%s' of region '%s': %lld colors in "
					"dimension %d but only %lld points",
					what, name, r->name, (long long)n[d], d,
					(long long)(domain.hi[d] - domain.lo[d] + 1));
		if (halo && halo[d] < 0)
			return tsr__err(TSR_EINVAL,
					"%s: partition '%s' of region '%s': negative halo %lld in "
					"dimension %d",
					what, name, r->name, (long long)halo[d], d);
	}

	int total = (int)tsr_box_volume(colors);
	tsr_box_t *boxes = malloc(total * sizeof *boxes);
	if (!boxes)
		return tsr__err(TSR_ENOMEM, "%s: out of memory", what);

	for (int c = 0; c < total; c++) {
		int64_t rest = c;
		tsr_box_t b = {r->bounds.dim, {0, 0, 0}, {0, 0, 0}};

		for (int d = 0; d < r->bounds.dim; d++) {
			int64_t i = rest % n[d];
			rest /= n[d];
			int64_t lo, hi;
			tsr__tile_range(domain.lo[d], domain.hi[d], n[d], i, &lo, &hi);
			int64_t h = halo ? halo[d] : 0;
			b.lo[d] = halo_lo(lo, h, r->bounds.lo[d]);
			b.hi[d] = halo_hi(hi, h, r->bounds.hi[d]);
		}
		boxes[c] = b;
	}

	struct tsr_geom tiles;
	tsr__geom_tiles(&tiles, domain, n, halo);
	return partition_build(r, colors, boxes, &tiles, name, what, out);
}

int tsr_partition_tiles(tsr_region_t rid, tsr_box_t colors, const char *name, tsr_partition_t *out)
{
	struct tsr_region *r;
	int rc = tsr__region_lookup(rid, "tsr_partition_tiles", &r);
	if (rc)
		return rc;
	return tsr_partition_tiles_halo(rid, r->bounds, colors, NULL, name ? name : "tiles", out);
}

int tsr_partition_boxes(tsr_region_t rid, int nboxes, const tsr_box_t *boxes, const char *name,
			tsr_partition_t *out)
{
	const char *what = "tsr_partition_boxes";
	struct tsr_region *r;
	int rc = tsr__region_lookup(rid, what, &r);
	if (rc)
		return rc;

	if (!name)
		name = "boxes";
	if (!out || !boxes || nboxes <= 0)
		return tsr__err(TSR_EINVAL,
				"%s: partition '%s' of region '%s': need a positive box count, a "
				"box array and an output",
				what, name, r->name);

	char bs[96], bs2[96];
	for (int i = 0; i < nboxes; i++)
		if (!tsr_box_contains(r->bounds, boxes[i]) || !tsr__box_valid(boxes[i]))
			return tsr__err(TSR_EBOUNDS,
					"%s: partition '%s': box %d %s is empty or not inside "
					"region '%s' %s",
					what, name, i, tsr__box_str(boxes[i], bs, sizeof bs),
					r->name, tsr__box_str(r->bounds, bs2, sizeof bs2));

	tsr_box_t *copy = malloc(nboxes * sizeof *copy);
	if (!copy)
		return tsr__err(TSR_ENOMEM, "%s: out of memory", what);
	memcpy(copy, boxes, nboxes * sizeof *copy);
	return partition_build(r, tsr_box1(0, nboxes - 1), copy, NULL, name, what, out);
}

int tsr_partition_subregion(tsr_partition_t pid, const int64_t color[3], tsr_region_t *sub)
{
	struct tsr_partition *p;
	int rc = tsr__partition_lookup(pid, "tsr_partition_subregion", &p);
	if (rc)
		return rc;

	if (!color || !sub)
		return tsr__err(TSR_EINVAL,
				"tsr_partition_subregion: partition '%s': null color or output",
				p->name);

	int c = tsr__color_index(p, color);
	char cs[64], bs[96];
	if (c < 0)
		return tsr__err(TSR_EBOUNDS,
				"tsr_partition_subregion: color %s is outside partition '%s' of "
				"region '%s' (colors %s)",
				tsr__color_str(p->colors.dim, color, cs, sizeof cs), p->name,
				p->parent->name, tsr__box_str(p->colors, bs, sizeof bs));

	sub->id = p->subs[c]->id;
	return TSR_OK;
}

int tsr_partition_colors(tsr_partition_t pid, tsr_box_t *colors)
{
	struct tsr_partition *p;
	int rc = tsr__partition_lookup(pid, "tsr_partition_colors", &p);
	if (rc)
		return rc;

	if (!colors)
		return tsr__err(TSR_EINVAL, "tsr_partition_colors: null output");
	*colors = p->colors;
	return TSR_OK;
}

int tsr_partition_is_disjoint(tsr_partition_t pid)
{
	struct tsr_partition *p;
	int rc = tsr__partition_lookup(pid, "tsr_partition_is_disjoint", &p);
	return rc ? rc : p->disjoint;
}

int tsr_partition_destroy(tsr_partition_t pid)
{
	struct tsr_partition *p;
	int rc = tsr__partition_lookup(pid, "tsr_partition_destroy", &p);
	if (rc)
		return rc;

	for (int f = 0; f < p->parent->nfields; f++)
		if (p->parent->root->mapped[f])
			return tsr__err(TSR_EBUSY,
					"tsr_partition_destroy: partition '%s': field '%s' of "
					"region '%s' is mapped on the host",
					p->name, p->parent->fields[f].name, p->parent->root->name);

	if ((rc = tsr__coh_sym_forget(p)))
		return tsr__err(rc, "tsr_partition_destroy: partition '%s': %s", p->name,
				rc == TSR_ENOMEM ? "out of memory" : tsr_last_error());

	tsr__partition_free(p, 1);
	return TSR_OK;
}
