/* pieces.c: a field's pieces, the geometry under coherence (coherence.c). Per field the root keeps
 * disjoint boxes that cover the region, each saying who last wrote it (and, on several ranks, in
 * a second list of the same kind, which ranks hold it): a write makes its box one piece, cutting
 * the pieces across it; a node caches which pieces its box overlaps while their boxes stay the
 * same. Nothing here orders a task or touches StarPU. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "coherence.h"

/* counts changes of any field's piece boxes; never reset */
uint64_t tsr__geom_seq;

/* Room for `extra` more pieces. */
static int pieces_reserve(struct tsr_pieces *ps, int extra)
{
	if (ps->n + extra <= ps->cap)
		return TSR_OK;

	int ncap = ps->cap ? ps->cap : 8;
	while (ncap < ps->n + extra)
		ncap *= 2;

	struct tsr_piece *nv = realloc(ps->v, (size_t)ncap * sizeof *nv);
	if (!nv)
		return TSR_ENOMEM;

	ps->v = nv;
	ps->cap = ncap;
	return TSR_OK;
}

/* Append a copy of p over box. */
static int piece_push_copy(struct tsr_pieces *ps, const struct tsr_piece *p, tsr_box_t box)
{
	if (pieces_reserve(ps, 1))
		return TSR_ENOMEM;

	ps->v[ps->n] = *p;
	ps->v[ps->n].box = box;
	ps->n++;
	return TSR_OK;
}

int tsr__piece_push(struct tsr_pieces *ps, tsr_box_t box, struct tsr_node *writer,
		    uint64_t written_at)
{
	struct tsr_piece p = {.box = box,
			      .writer = writer,
			      .token_node = writer,
			      .written_at = written_at};
	return piece_push_copy(ps, &p, box);
}

/* n's cache of the pieces it overlaps. */
void tsr__overlaps_free(struct tsr_node *n)
{
	free(n->overlaps);
	n->overlaps = NULL;
	n->noverlaps = n->cap_overlaps = 0;
	n->overlaps_geom = 0;
}

/* Append to ps the parts of piece p outside box s (at most two per dimension), keeping the rest
 * of what p says (writer, ranks, transfer views). */
static int piece_subtract(struct tsr_pieces *ps, struct tsr_piece p, const tsr_box_t *s)
{
	tsr_box_t outside[TSR_BOX_MINUS_MAX];
	int n = tsr__box_minus(&p.box, s, outside);

	for (int i = 0; i < n; i++)
		if (piece_push_copy(ps, &p, outside[i]))
			return TSR_ENOMEM;
	return TSR_OK;
}

/* Make box s one piece saying what val says: pieces inside s go, pieces across it leave their
 * parts outside (appended, and outside s, so the downward walk never meets them). Returns the new
 * piece's index, or -1 when out of memory (then nothing changed). */
int tsr__pieces_assign(struct tsr_pieces *ps, const tsr_box_t *s, const struct tsr_piece *val)
{
	int across = 0;
	for (int i = 0; i < ps->n; i++)
		across += tsr__box_overlap(ps->v[i].box, *s);

	/* room first: the walk below must not stop halfway, with parts of the field in no piece */
	if (pieces_reserve(ps, across * 2 * s->dim + 1))
		return -1;

	ps->geom = ++tsr__geom_seq;
	for (int i = ps->n - 1; i >= 0; i--) {
		struct tsr_piece p = ps->v[i];
		if (!tsr__box_overlap(p.box, *s))
			continue;
		ps->v[i] = ps->v[--ps->n];
		if (tsr__box_inside(&p.box, s))
			continue;
		int rc = piece_subtract(ps, p, s);
		tsr__assert(rc == TSR_OK); /* room reserved */
	}

	int idx = ps->n;
	int rc = piece_push_copy(ps, val, *s);
	tsr__assert(rc == TSR_OK); /* room reserved */
	return idx;
}

/* The indices of the pieces that overlap n's box, cached on n while the field's piece boxes stay
 * the same (writes through the same tiles change only writers): a read through a halo tile then
 * looks at the few pieces it overlaps instead of scanning all of them. */
int tsr__overlaps(struct tsr_node *n, struct tsr_pieces *ps)
{
	if (n->overlaps_geom == ps->geom)
		return TSR_OK;

	n->noverlaps = 0;
	for (int i = 0; i < ps->n; i++) {
		if (!tsr__box_overlap(ps->v[i].box, *tsr__node_box(n)))
			continue;

		if (n->noverlaps == n->cap_overlaps) {
			int ncap = n->cap_overlaps ? 2 * n->cap_overlaps : 4;
			int *nv = realloc(n->overlaps, (size_t)ncap * sizeof *nv);
			if (!nv)
				return TSR_ENOMEM;
			n->overlaps = nv;
			n->cap_overlaps = ncap;
		}

		n->overlaps[n->noverlaps++] = i;
		if (tsr__box_equal(&ps->v[i].box, tsr__node_box(n)))
			n->piece_hint = i;
	}

	n->overlaps_geom = ps->geom;
	return TSR_OK;
}
