/* ispace.c: index spaces are plain boxes (values, nothing to destroy); helpers to build,
 * intersect and print them. */
#include <stdint.h>
#include <stdio.h>
#include "internal.h"

tsr_box_t tsr_box1(int64_t lo0, int64_t hi0)
{
	tsr_box_t b = {1, {lo0, 0, 0}, {hi0, 0, 0}};
	return b;
}

tsr_box_t tsr_box2(int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1)
{
	tsr_box_t b = {2, {lo0, lo1, 0}, {hi0, hi1, 0}};
	return b;
}

tsr_box_t tsr_box3(int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1, int64_t lo2, int64_t hi2)
{
	tsr_box_t b = {3, {lo0, lo1, lo2}, {hi0, hi1, hi2}};
	return b;
}

/* Points of b in dimension d (1 beyond the box's dimension), in *e; -1 if hi - lo + 1 does not
 * fit in int64_t (lo = INT64_MIN with hi >= 0, say), so no caller ever sees a wrapped extent. */
int tsr__box_extent(const tsr_box_t *b, int d, int64_t *e)
{
	int64_t span;

	*e = 1;
	if (d >= b->dim)
		return 0;
	if (b->hi[d] < b->lo[d]) {
		*e = 0;
		return 0;
	}

	if (__builtin_sub_overflow(b->hi[d], b->lo[d], &span) || span == INT64_MAX)
		return -1;
	*e = span + 1;
	return 0;
}

/* 0 for an empty box or a dimension outside 1..3; -1 when the count does not fit in int64_t
 * (callers refuse such a box rather than let a wrapped count size an allocation). */
int64_t tsr_box_volume(tsr_box_t b)
{
	if (b.dim < 1 || b.dim > 3)
		return 0;

	int64_t v = 1;
	for (int d = 0; d < b.dim; d++) {
		int64_t e;
		if (tsr__box_extent(&b, d, &e))
			return -1;
		if (e == 0)
			return 0;
		if (__builtin_mul_overflow(v, e, &v))
			return -1;
	}

	return v;
}

int tsr_box_contains(tsr_box_t outer, tsr_box_t inner)
{
	if (outer.dim != inner.dim || outer.dim < 1 || outer.dim > 3)
		return 0;

	for (int d = 0; d < inner.dim; d++)
		if (inner.hi[d] < inner.lo[d])
			return 0; /* empty */

	return tsr__box_inside(&inner, &outer);
}

int tsr_box_intersect(tsr_box_t a, tsr_box_t b, tsr_box_t *out)
{
	tsr_box_t r = a;
	if (a.dim != b.dim || a.dim < 1 || a.dim > 3)
		return 0;

	for (int d = 0; d < a.dim; d++) {
		r.lo[d] = a.lo[d] > b.lo[d] ? a.lo[d] : b.lo[d];
		r.hi[d] = a.hi[d] < b.hi[d] ? a.hi[d] : b.hi[d];
		if (r.hi[d] < r.lo[d])
			return 0;
	}

	if (out)
		*out = r;
	return 1;
}

/* Tile i of n equal tiles of [lo..hi] (one dimension); the first len % n tiles get one more
 * point. tsr_partition_tiles and tsr_box_tile both cut this way. */
void tsr__tile_range(int64_t lo, int64_t hi, int64_t n, int64_t i, int64_t *tile_lo,
		     int64_t *tile_hi)
{
	tsr__assert(n > 0 && i >= 0 && i < n); /* the callers checked the colors */
	int64_t len = hi - lo + 1;
	int64_t q = len / n;
	int64_t rem = len % n;

	*tile_lo = lo + i * q + (i < rem ? i : rem);
	*tile_hi = *tile_lo + (q - 1 + (i < rem ? 1 : 0)); /* lo + q may not exist at the top of
							      int64_t */
}

int tsr_box_tile(tsr_box_t bounds, tsr_box_t colors, const int64_t color[3], tsr_box_t *tile)
{
	char bs[96], cs[96], ps[64];

	if (!color || !tile)
		return tsr__err(TSR_EINVAL, "tsr_box_tile: null color or output");
	if (!tsr__box_valid(bounds) || !tsr__box_valid(colors) || colors.dim != bounds.dim)
		return tsr__err(TSR_EBOUNDS,
				"tsr_box_tile: bounds %s and colors %s must be non-empty boxes of "
				"one dimension",
				tsr__box_str(bounds, bs, sizeof bs),
				tsr__box_str(colors, cs, sizeof cs));

	tsr_box_t b = {bounds.dim, {0, 0, 0}, {0, 0, 0}};
	for (int d = 0; d < bounds.dim; d++) {
		int64_t n = colors.hi[d] - colors.lo[d] + 1;
		if (color[d] < colors.lo[d] || color[d] > colors.hi[d])
			return tsr__err(TSR_EBOUNDS,
					"tsr_box_tile: color %s is outside the colors %s",
					tsr__color_str(colors.dim, color, ps, sizeof ps),
					tsr__box_str(colors, cs, sizeof cs));
		if (n > bounds.hi[d] - bounds.lo[d] + 1)
			return tsr__err(TSR_EBOUNDS,
					"tsr_box_tile: %lld colors in dimension %d but bounds %s "
					"have only %lld points",
					(long long)n, d, tsr__box_str(bounds, bs, sizeof bs),
					(long long)(bounds.hi[d] - bounds.lo[d] + 1));

		tsr__tile_range(bounds.lo[d], bounds.hi[d], n, color[d] - colors.lo[d], &b.lo[d],
				&b.hi[d]);
	}

	*tile = b;
	return TSR_OK;
}

/* The point of linear index `index` in b, dimension 0 fastest (the order of colors and points).
 * b has a volume that fits in int64_t (checked by whoever made it), so every extent fits too.
 * Called for every point of every launch: the last dimension takes what the others leave without
 * a division, and that it fits is the check that index is below b's volume (no volume computed). */
void tsr__box_point(tsr_box_t b, int64_t index, int64_t point[3])
{
	tsr__assert(index >= 0 && b.dim >= 1 && b.dim <= 3);
	point[0] = point[1] = point[2] = 0;

	int last = b.dim - 1;
	for (int d = 0; d < last; d++) {
		int64_t e;
		tsr__box_extent(&b, d, &e);
		/* an empty box has no point: an assert, not a division by zero */
		tsr__assert(e > 0);
		point[d] = b.lo[d] + index % e;
		index /= e;
	}

	int64_t e;
	tsr__box_extent(&b, last, &e);
	tsr__assert(index < e); /* index < b's volume */
	point[last] = b.lo[last] + index;
}

int64_t tsr__box_index(tsr_box_t b, const int64_t point[3])
{
	int64_t index = 0;
	int64_t mul = 1;

	for (int d = 0; d < b.dim; d++) {
		if (point[d] < b.lo[d] || point[d] > b.hi[d])
			return -1;

		int64_t e;
		tsr__box_extent(&b, d, &e);
		index += (point[d] - b.lo[d]) * mul;
		mul *= e;
	}

	return index;
}

/* Why b cannot be a region's bounds, a color space or a launch domain; NULL if it can. */
const char *tsr__box_problem(tsr_box_t b)
{
	if (b.dim < 1 || b.dim > 3)
		return "is not 1-3 dimensional";

	int64_t v = tsr_box_volume(b);
	if (v == 0)
		return "is empty";
	if (v < 0)
		return "has more points than fit in 64 bits";
	return NULL;
}

/* The status code for a box with that problem: a dimension outside 1..3 is an invalid argument
 * (as tessera.h says), an empty or too large box is out of bounds. */
int tsr__box_problem_code(tsr_box_t b)
{
	return b.dim < 1 || b.dim > 3 ? TSR_EINVAL : TSR_EBOUNDS;
}

int tsr__box_valid(tsr_box_t b)
{
	return tsr__box_problem(b) == NULL;
}

int tsr__box_overlap(tsr_box_t a, tsr_box_t b)
{
	return tsr_box_intersect(a, b, NULL);
}

/* Cut a along each dimension in turn: what lies below s, then above it, goes out; the rest,
 * narrowed to s in that dimension, goes on to the next. What is left at the end is a's part
 * inside s. */
int tsr__box_minus(const tsr_box_t *a, const tsr_box_t *s, tsr_box_t *out)
{
	tsr_box_t rest = *a;
	int n = 0;
	tsr__assert(tsr__box_overlap(*a, *s));

	for (int d = 0; d < rest.dim; d++) {
		if (rest.lo[d] < s->lo[d]) {
			out[n] = rest;
			out[n++].hi[d] = s->lo[d] - 1;
			rest.lo[d] = s->lo[d];
		}

		if (rest.hi[d] > s->hi[d]) {
			out[n] = rest;
			out[n++].lo[d] = s->hi[d] + 1;
			rest.hi[d] = s->hi[d];
		}
	}

	return n;
}

char *tsr__box_str(tsr_box_t b, char *buf, size_t n)
{
	if (b.dim == 1)
		snprintf(buf, n, "[%lld..%lld]", (long long)b.lo[0], (long long)b.hi[0]);
	else if (b.dim == 2)
		snprintf(buf, n, "[%lld..%lld]x[%lld..%lld]", (long long)b.lo[0],
			 (long long)b.hi[0], (long long)b.lo[1], (long long)b.hi[1]);
	else if (b.dim == 3)
		snprintf(buf, n, "[%lld..%lld]x[%lld..%lld]x[%lld..%lld]", (long long)b.lo[0],
			 (long long)b.hi[0], (long long)b.lo[1], (long long)b.hi[1],
			 (long long)b.lo[2], (long long)b.hi[2]);
	else
		snprintf(buf, n, "<box of dimension %d>", b.dim);

	return buf;
}

char *tsr__color_str(int dim, const int64_t c[3], char *buf, size_t n)
{
	if (dim == 1)
		snprintf(buf, n, "(%lld)", (long long)c[0]);
	else if (dim == 2)
		snprintf(buf, n, "(%lld,%lld)", (long long)c[0], (long long)c[1]);
	else
		snprintf(buf, n, "(%lld,%lld,%lld)", (long long)c[0], (long long)c[1],
			 (long long)c[2]);

	return buf;
}
