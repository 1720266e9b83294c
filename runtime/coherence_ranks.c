/* coherence_ranks.c: coherence across several ranks, piece by piece: the validity map of each field
 * and the transfers that make a box valid on a rank (coherence_entry.c calls them). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "coherence.h"

/* ------------------------------------------------------------------ several ranks
 *
 * Every rank holds the whole array of every field, but only some boxes of it are current. Per
 * field the root also keeps a validity map: disjoint boxes that cover the region, each with the
 * set of ranks that hold its latest value. Every rank keeps the same map, because every rank
 * makes the same calls: a write by rank r makes its box valid on r alone, a fill or a host write
 * (done by every rank) makes it valid everywhere. Before a rank reads a box, each piece of it
 * that the rank does not hold is sent by the lowest rank that does, and the map notes one more
 * rank on that piece; the same decision is taken on every rank, so a send always meets its
 * receive, under a tag every rank counts alike.
 *
 * A transfer moves a view of exactly the piece's box (a transfer view: a node of its own, kept
 * per field and box, so that the same halo strips reuse the same views every iteration). The
 * pieces above order it with the rank's own tasks: a receive is a write of its view (it waits for
 * the readers and writers of that box, then becomes the box's writer); a send reads the data
 * through its view after a no-op task that reads the box's writers and writes the view, and the
 * view is added to the piece's sends, which a later writer waits for as it waits for readers. That
 * writer lists them read-write: a later send through one of those views then waits for it by the
 * view's own sequential consistency, and needs no no-op (the piece's ordered views). */

static int lowest_rank(uint64_t ranks)
{
	return __builtin_ctzll(ranks);
}

/* The transfer view of box b of root's field, made and registered the first time. NULL when out
 * of memory. */
static struct tsr_node *xview(struct tsr_node *root, const tsr_box_t *b)
{
	struct tsr_xviews *xv = root->xviews;

	for (int i = xv->n - 1; i >= 0; i--)
		if (tsr__box_equal(&xv->v[i]->transfer_box, b))
			return xv->v[i];

	if (xv->n == xv->cap) {
		int ncap = xv->cap ? 2 * xv->cap : 16;
		struct tsr_node **nv = realloc(xv->v, (size_t)ncap * sizeof *nv);
		if (!nv)
			return NULL;
		xv->v = nv;
		xv->cap = ncap;
	}

	struct tsr_node *x = calloc(1, sizeof *x);
	if (!x)
		return NULL;

	x->region = root->region;
	x->field = root->field;
	x->is_transfer = 1;
	x->transfer_box = *b;
	x->piece_hint = -1;
	tsr__register_view(x);
	xv->v[xv->n++] = x;

	return x;
}

static int is_xview(const struct tsr_node *n, const void *arg)
{
	(void)arg;
	return n->is_transfer;
}

/* Unregister root's transfer views (their transfers done) and forget them. */
void tsr__xviews_free(struct tsr_node *root)
{
	struct tsr_xviews *xv = root->xviews;
	if (!xv)
		return;

	for (int i = 0; i < xv->n; i++) {
		tsr__overlaps_free(xv->v[i]);
		starpu_data_unregister(xv->v[i]->h);
		tsr__xview_detach(xv->v[i]);
		free(xv->v[i]);
	}

	free(xv->v);
	free(xv);
	root->xviews = NULL;
}

/* Too many transfer views (boxes that keep changing): the root takes over what they wrote and
 * what they send, and they go. */
int tsr__coh_xviews_flush(struct tsr_node *root)
{
	tsr__hand_to_root(root, is_xview, NULL, "handing transfer views back");
	int rc = tsr__drop_sends(root, "handing transfer views back");
	if (rc)
		return rc;

	root->pieces->geom = ++tsr__geom_seq;
	for (int i = 0; i < root->pieces->n; i++)
		root->pieces->v[i].nordered = 0; /* their views go */

	struct tsr_xviews *xv = root->xviews;
	for (int i = 0; i < xv->n; i++) {
		tsr__overlaps_free(xv->v[i]);
		starpu_data_unregister_submit(xv->v[i]->h);
		tsr__xview_detach(xv->v[i]); /* its queue stays while transfers hold it */
		free(xv->v[i]);
	}
	xv->n = 0;
	return TSR_OK;
}

static int remember_send(struct tsr_piece *p, struct tsr_node *x)
{
	for (int k = 0; k < p->nsends; k++)
		if (p->sends[k] == x)
			return 0;
	p->sends[p->nsends++] = x;
	return 1;
}

/* Whether p's writer listed x read-write (p's ordered views). */
static int ordered_by_writer(const struct tsr_piece *p, const struct tsr_node *x)
{
	for (int k = 0; k < p->nordered; k++)
		if (p->ordered[k] == x)
			return 1;
	return 0;
}

/* This rank sends box b of root's field to rank dst: after the box's writers, through b's view.
 * The steady state of a loop (the same boxes sent after every write) needs no no-op: each writer
 * listed the views of the sends before it read-write, so the view's own handle orders the send. */
int tsr__coh_send_piece(struct tsr_node *root, const tsr_box_t *b, int dst, int64_t tag)
{
	struct tsr_node *x = xview(root, b);
	struct tsr_pieces *ps = root->pieces;
	if (!x || tsr__overlaps(x, ps))
		return TSR_ENOMEM;

	tsr__deps_reset(&tsr__coh_scratch);
	for (int j = 0; j < x->noverlaps; j++) {
		struct tsr_piece *p = &ps->v[x->overlaps[j]];
		if (p->writer == x)
			continue; /* received here earlier: the view itself orders the send */
		if (!ordered_by_writer(p, x) && tsr__piece_deps(&tsr__coh_scratch, x, p, 0))
			return TSR_ENOMEM;

		int known = 0;
		for (int k = 0; k < p->nsends; k++)
			known |= p->sends[k] == x;
		if (!known && p->nsends == TSR_MAX_SENDS) {
			/* no room for one more send: this one waits for the earlier ones, and
			 * stands for them */
			if (tsr__add_sends(&tsr__coh_scratch, p))
				return TSR_ENOMEM;
			p->nsends = 0;
		}
	}

	int rc = TSR_OK;
	if (tsr__coh_scratch.n) {
		if (tsr__deps_add(&tsr__coh_scratch, x->h, STARPU_W))
			return TSR_ENOMEM;
		if ((rc = tsr__submit_noop(&tsr__coh_scratch, root->region->home,
					   "a transfer's send", NULL)))
			return rc;
	}

	for (int j = 0; j < x->noverlaps; j++)
		if (ps->v[x->overlaps[j]].writer != x)
			remember_send(&ps->v[x->overlaps[j]], x);

	size_t bytes = (size_t)tsr_box_volume(*b) * root->region->fields[root->field].size;
	if (tsr__xview_expect(x, 0))
		return TSR_ENOMEM;
	if (tsr__dist_send(x->h, dst, tag, bytes)) {
		tsr__xview_unexpect(x);
		return tsr__err(TSR_ESTARPU,
				"field '%s' of '%s': starpu_mpi_isend_detached to rank %d failed",
				root->region->fields[root->field].name, root->region->name, dst);
	}

	return TSR_OK;
}

/* This rank receives box b of root's field from rank src: after the box's readers and writers;
 * the view then is the box's writer here. */
int tsr__coh_recv_piece(struct tsr_node *root, const tsr_box_t *b, int src, int64_t tag)
{
	struct tsr_node *x = xview(root, b);
	struct tsr_pieces *ps = root->pieces;
	if (!x || tsr__overlaps(x, ps))
		return TSR_ENOMEM;

	struct tsr_piece *ex = tsr__exact_piece(x, ps);
	if (!(ex && ex->writer == x && ex->nsends == 0)) {
		/* the box has other writers or sends here: one no-op waits for them and their
		 * readers */
		tsr__deps_reset(&tsr__coh_scratch);
		for (int j = 0; j < x->noverlaps; j++)
			if (tsr__piece_deps(&tsr__coh_scratch, x, &ps->v[x->overlaps[j]], 1))
				return TSR_ENOMEM;
		if (tsr__deps_add(&tsr__coh_scratch, x->h, STARPU_RW))
			return TSR_ENOMEM;
		int rc = tsr__submit_noop(&tsr__coh_scratch, root->region->home,
					  "a transfer's receive", NULL);
		if (rc)
			return rc;
	}

	if (tsr__xview_expect(x, 1))
		return TSR_ENOMEM;
	if (tsr__dist_recv(x->h, src, tag)) {
		tsr__xview_unexpect(x);
		return tsr__err(TSR_ESTARPU,
				"field '%s' of '%s': starpu_mpi_irecv_detached from rank %d failed",
				root->region->fields[root->field].name, root->region->name, src);
	}

	struct tsr_piece val = {.writer = x, .token_node = x, .written_at = ++tsr__write_seq};
	if (ex) {
		/* the box is one piece already (a loop's halo received again): its boxes stay, and
		 * so do the overlaps every node keeps of them */
		*ex = val;
		ex->box = *b;
		return TSR_OK;
	}

	int idx = tsr__pieces_assign(ps, b, &val);
	if (idx < 0)
		return TSR_ENOMEM;
	x->piece_hint = idx;

	if (ps->n > TSR_MAX_PIECES)
		return tsr__collapse(root);
	return TSR_OK;
}

/* One piece to move: box, from, to, and the ranks that hold it afterwards. */
struct move {
	tsr_box_t box;
	int src, dst;
	uint64_t ranks;
};

static struct move *moves;
static int nmoves, capmoves;

/* The pieces of box b that rank dst lacks, in the validity map's order (the same on every rank). */
static int plan_moves(struct tsr_pieces *vm, const tsr_box_t *b, int dst)
{
	nmoves = 0;

	for (int i = 0; i < vm->n; i++) {
		struct tsr_piece *p = &vm->v[i];
		tsr_box_t in;
		if (tsr__rank_holds(p->ranks, dst) || !tsr_box_intersect(p->box, *b, &in))
			continue;

		TSR_GROW(moves, nmoves, capmoves, 16);
		moves[nmoves].box = in;
		moves[nmoves].src = lowest_rank(p->ranks);
		moves[nmoves].dst = dst;
		moves[nmoves].ranks = p->ranks | tsr__rank_bit(dst);
		nmoves++;
	}

	return TSR_OK;
}

/* Make box b of root's field valid on rank dst: every rank takes its part in the moves. */
static int make_valid_on(struct tsr_node *root, const tsr_box_t *b, int dst)
{
	struct tsr_pieces *vm = root->valid;
	plan_moves(vm, b, dst);

	for (int i = 0; i < nmoves; i++) {
		struct move *mv = &moves[i];
		int64_t tag = tsr__dist_tag();
		int rc = TSR_OK;
		if (mv->src == tsr__dist.rank)
			rc = tsr__coh_send_piece(root, &mv->box, mv->dst, tag);
		else if (mv->dst == tsr__dist.rank)
			rc = tsr__coh_recv_piece(root, &mv->box, mv->src, tag);
		if (rc)
			return rc;

		struct tsr_piece val = {.ranks = mv->ranks};
		if (tsr__pieces_assign(vm, &mv->box, &val) < 0)
			return TSR_ENOMEM;
	}

	return TSR_OK;
}

/* Make box b of root's field valid on `rank`, or on every rank (TSR_ALL_RANKS). */
int tsr__coh_make_valid(struct tsr_node *root, const tsr_box_t *b, int rank)
{
	if (rank != TSR_ALL_RANKS)
		return make_valid_on(root, b, rank);

	for (int r = 0; r < tsr__dist.size; r++) {
		int rc = make_valid_on(root, b, r);
		if (rc)
			return rc;
	}
	return TSR_OK;
}

/* The validity map cut too finely (boxes that keep changing): every rank gets everything, and the
 * field is one piece again. */
int tsr__coh_valid_collapse(struct tsr_node *root)
{
	int rc = tsr__coh_make_valid(root, &root->region->bounds, TSR_ALL_RANKS);
	if (rc)
		return rc;

	root->valid->n = 0;
	root->valid->geom = ++tsr__geom_seq;
	if (tsr__piece_push(root->valid, root->region->bounds, NULL, 0))
		return TSR_ENOMEM;
	root->valid->v[0].ranks = tsr__every_rank();
	return TSR_OK;
}

/* At tsr_finalize: the moves' list. */
void tsr__coh_ranks_shutdown(void)
{
	free(moves);
	moves = NULL;
	nmoves = capmoves = 0;
}
