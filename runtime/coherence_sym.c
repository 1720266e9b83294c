/* coherence_sym.c: several ranks: a field's validity told by the launch that last wrote it, so
 * that a rank finds what to send and what to receive from its own points and their neighbours,
 * not by looking at every point of the job.
 *
 * coherence_ranks.c keeps, per field, a validity map that every rank updates for every point of
 * every launch: correct for any launch, but a rank's work then grows with the job. An index launch
 * through a disjoint partition with the identity projection says the same thing in one line: the
 * box of color c was written by the rank that ran point c. A field written so keeps that line (its
 * "structured write": the partition written, the launch's mapping partition, its domain, and the
 * box the written boxes cover, which must be one box) instead of pieces, and a later structured
 * launch that reads the field through any partition (a halo, say) finds its transfers with the
 * partitions' geometry (geom.c):
 *   - a rank receives, for each of its own points, the parts of the point's box that boxes written
 *     by other ranks cover (the written partition's boxes that meet it);
 *   - a rank sends, for each box it wrote, the parts other ranks' points read (the read
 *     partition's boxes that meet it).
 * Both sides compute the same moves from the same replicated facts, and name each move's tag
 * after the reader's point and the writer's color (from a range of tags every rank reserves alike),
 * so no rank enumerates another's points. What lies outside the covered box goes by the validity
 * map as before, piece by piece.
 *
 * Any other access to the field (a single launch, a fill, a host map, a launch the structured path
 * does not take) first flattens the structured write into the validity map, once, with one piece
 * per written box: then coherence_ranks.c goes on as it always did. A partition a structured write
 * names is flattened away before it is destroyed or its ranks change. Receives are not recorded
 * as copies (a second read of the same data moves it again): moves stay a function of the last
 * write alone, which is what keeps them cheap to agree on. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "coherence.h"

struct tsr_sym {
	const struct tsr_partition *wpart; /* the partition written: color c's box */
	const struct tsr_partition *mpart; /* the launch's mapping partition: point p's rank */
	tsr_box_t domain;                  /* the launch's points (colors, identity projection) */
	tsr_box_t cover;                   /* the union of wpart's boxes over domain */
};

/* Roots that hold a structured write (a few fields: scanned when a partition goes). */
static struct tsr_node **holders;
static int nholders, capholders;

static struct tsr_ivec found; /* one host thread: the colors a query finds */

/* ---------------------------------------------------------------- ranks and colors */

static int rank_of_point(const struct tsr_partition *m, const int64_t point[3])
{
	return tsr__rank_of_color(m, (int)tsr__box_index(m->colors, point));
}

/* The colors of m that rank r runs, ascending: [*lo, *hi) of m's colors, or m's index. */
static const int *colors_of_rank(const struct tsr_partition *m, int r, int *lo, int *hi)
{
	if (m->ranks) {
		*lo = m->rank_start[r];
		*hi = m->rank_start[r + 1];
		return m->rank_colors;
	}

	/* blocks: color c runs on floor(c * N / ncolors) */
	int64_t n = tsr_nranks();
	*lo = (int)(((int64_t)r * m->ncolors + n - 1) / n);
	*hi = (int)(((int64_t)(r + 1) * m->ncolors + n - 1) / n);
	return NULL;
}

/* ---------------------------------------------------------------- boxes */

/* x minus c, as at most 6 disjoint boxes; their count. */
static int box_minus(tsr_box_t x, const tsr_box_t *c, tsr_box_t out[6])
{
	int n = 0;
	tsr_box_t in;
	if (!tsr_box_intersect(x, *c, &in)) {
		out[0] = x;
		return 1;
	}

	for (int d = 0; d < x.dim; d++) {
		if (x.lo[d] < in.lo[d]) {
			out[n] = x;
			out[n++].hi[d] = in.lo[d] - 1;
		}
		if (x.hi[d] > in.hi[d]) {
			out[n] = x;
			out[n++].lo[d] = in.hi[d] + 1;
		}
		x.lo[d] = in.lo[d];
		x.hi[d] = in.hi[d];
	}

	return n;
}

/* ---------------------------------------------------------------- tags */

/* Tags per reader point: one per written color, then six per validity piece (the parts of the
 * point's box outside the covered box, met with each piece). */
static int64_t tags_per_point(const struct tsr_node *root)
{
	int64_t w = root->sym ? root->sym->wpart->ncolors : 0;
	return w + 6 * (int64_t)root->valid->n;
}

int64_t tsr__coh_sym_tags(const struct tsr_node *root, const struct tsr_sym_req *r)
{
	return tsr_box_volume(r->domain) * tags_per_point(root);
}

/* ---------------------------------------------------------------- the covered box */

/* The moves of the covered box, gathered before they are made: per peer, a box another move of
 * the launch already carries goes once (two points of a rank read the same strip of one written
 * box), and moves that join into one box go as one message (the strips of the written tiles that
 * the points of a neighbour read: one message per side of a stencil's rank), under the tag of the
 * group's first move.
 * Sender and receiver gather the same moves of each pair and sort them by (reader point, written
 * color), so they cut and join alike, and tags still match.
 *
 * A rank makes all its sends of a launch before its receives (tsr__coh_sym_read). A receive's
 * no-op waits, as a write, for the tokens of the pieces its box meets, and sometimes for an
 * earlier receive of an overlapping box to complete; a send's no-op reads such tokens too. Had a
 * send come after a receive, it could wait for a receive whose own send, on the other rank, waits
 * for a receive there in the same way: a cycle across the two ranks. That hung oracle seed 13428
 * on 2 ranks, and seed 40884 when boxes of two written colors were joined (their receives meet
 * more pieces). With the sends first, a send waits only for what earlier launches did, so every
 * launch's sends complete, and then its receives (StarPU-MPI takes a message whose receive is not
 * posted yet as early data). */
struct sym_move {
	tsr_box_t box;
	int peer;   /* the rank at the other end */
	int send;   /* this rank's side: 1 sends, 0 receives */
	int64_t pi; /* the reader point (its index in the launch's domain) */
	int cw;     /* the written color: with pi, the move's tag */
};

static struct sym_move *smoves; /* one host thread */
static int nsmoves, capsmoves;

static void gather(const tsr_box_t *y, int peer, int send, int64_t pi, int cw)
{
	TSR_GROW(smoves, nsmoves, capsmoves, 32);
	smoves[nsmoves++] =
		(struct sym_move){.box = *y, .peer = peer, .send = send, .pi = pi, .cw = cw};
}

static int by_pair_then_point(const void *a, const void *b)
{
	const struct sym_move *x = a;
	const struct sym_move *y = b;
	if (x->send != y->send)
		return y->send - x->send; /* sends first */
	if (x->peer != y->peer)
		return x->peer - y->peer;
	if (x->pi != y->pi)
		return (x->pi > y->pi) - (x->pi < y->pi);
	return x->cw - y->cw;
}

/* Widen *u to the bounding box of *u and b. */
static void widen(tsr_box_t *u, const tsr_box_t *b)
{
	for (int d = 0; d < b->dim; d++) {
		u->lo[d] = b->lo[d] < u->lo[d] ? b->lo[d] : u->lo[d];
		u->hi[d] = b->hi[d] > u->hi[d] ? b->hi[d] : u->hi[d];
	}
}

/* Whether a and b together are one box (*u, their bounding box). */
static int joins(const tsr_box_t *a, const tsr_box_t *b, tsr_box_t *u)
{
	*u = *a;
	widen(u, b);

	tsr_box_t in;
	int64_t both = tsr_box_intersect(*a, *b, &in) ? tsr_box_volume(in) : 0;
	return tsr_box_volume(*u) == tsr_box_volume(*a) + tsr_box_volume(*b) - both;
}

/* Whether box b lies in one of the moves made[0..n). */
static int carried(const struct sym_move *made, int n, const tsr_box_t *b)
{
	for (int i = 0; i < n; i++)
		if (tsr_box_contains(made[i].box, *b))
			return 1;
	return 0;
}

/* One pair's moves g[0..n), sorted: each box once, joined where they make one box. The joined
 * moves are written back over g's front (the pair's list is read ahead of them); their count. */
static int join_pair(struct sym_move *g, int n)
{
	int made = 0;
	struct sym_move cur = g[0];

	for (int i = 1; i < n; i++) {
		tsr_box_t u;
		if (tsr_box_contains(cur.box, g[i].box) || carried(g, made, &g[i].box))
			continue;
		if (joins(&cur.box, &g[i].box, &u)) {
			cur.box = u;
			continue;
		}

		g[made++] = cur;
		cur = g[i];
	}

	g[made++] = cur;
	return made;
}

/* The gathered moves, sorted, joined pair by pair in place: nsmoves is then the joined count. */
static void join_gathered(void)
{
	int out = 0;
	int i = 0;
	while (i < nsmoves) {
		int j = i + 1;
		while (j < nsmoves && smoves[j].send == smoves[i].send &&
		       smoves[j].peer == smoves[i].peer)
			j++;
		int made = join_pair(&smoves[i], j - i);
		memmove(&smoves[out], &smoves[i], (size_t)made * sizeof *smoves);
		out += made;
		i = j;
	}
	nsmoves = out;
}

/* This rank's point pi (at point) reads box x: receive what other ranks wrote of it. */
static int receive_written(struct tsr_node *root, int64_t pi, const tsr_box_t *x)
{
	const struct tsr_sym *s = root->sym;
	tsr_box_t xin;
	if (!tsr_box_intersect(*x, s->cover, &xin))
		return TSR_OK;
	if (tsr__geom_meeting(&s->wpart->geom, s->wpart->boxes, &xin, &found))
		return TSR_ENOMEM;

	for (int i = 0; i < found.n; i++) {
		int cw = found.v[i];
		int64_t wp[3];
		tsr__box_point(s->wpart->colors, cw, wp);
		if (tsr__box_index(s->domain, wp) < 0)
			continue; /* not written by the launch (cannot meet the cover: disjoint) */

		int src = rank_of_point(s->mpart, wp);
		if (src == tsr__dist.rank)
			continue;

		tsr_box_t y;
		tsr_box_intersect(s->wpart->boxes[cw], xin, &y);
		gather(&y, src, 0, pi, cw);
	}

	return TSR_OK;
}

/* This rank wrote box z (color cw of the written partition): send its parts other ranks' points
 * of the launch read. */
static int send_written(struct tsr_node *root, const struct tsr_sym_req *r, int cw)
{
	const struct tsr_partition *h = r->part;
	const tsr_box_t *z = &root->sym->wpart->boxes[cw];
	if (tsr__geom_meeting(&h->geom, h->boxes, z, &found))
		return TSR_ENOMEM;

	for (int i = 0; i < found.n; i++) {
		int64_t pt[3];
		tsr__box_point(h->colors, found.v[i], pt);
		int64_t pi = tsr__box_index(r->domain, pt);
		if (pi < 0)
			continue; /* not a point of this launch */

		int dst = rank_of_point(r->mpart, pt);
		if (dst == tsr__dist.rank)
			continue;

		tsr_box_t y;
		tsr_box_intersect(h->boxes[found.v[i]], *z, &y);
		gather(&y, dst, 1, pi, cw);
	}

	return TSR_OK;
}

/* Every box this rank wrote in the structured write, sent where the launch reads it. */
static int send_all_written(struct tsr_node *root, const struct tsr_sym_req *r)
{
	const struct tsr_sym *s = root->sym;
	int lo;
	int hi;
	const int *index = colors_of_rank(s->mpart, tsr__dist.rank, &lo, &hi);

	for (int k = lo; k < hi; k++) {
		int64_t wp[3];
		tsr__box_point(s->mpart->colors, index ? index[k] : k, wp);
		if (tsr__box_index(s->domain, wp) < 0)
			continue; /* this rank ran no point there */

		int rc = send_written(root, r, (int)tsr__box_index(s->wpart->colors, wp));
		if (rc)
			return rc;
	}

	return TSR_OK;
}

/* ---------------------------------------------------------------- outside the covered box */

/* Whether every rank holds validity piece p (nothing to move for it). */
static int held_everywhere(const struct tsr_piece *p)
{
	uint64_t every = tsr__every_rank();
	return (p->ranks & every) == every;
}

/* The parts of point pi's box x outside the cover, met with validity piece j: move each one
 * rank pi's rank lacks from the piece's lowest holder. `send` picks this rank's side. */
static int move_outside(struct tsr_node *root, int64_t pi, const tsr_box_t *x, int dst, int send,
			int64_t base)
{
	tsr_box_t part[6];
	int np = root->sym ? box_minus(*x, &root->sym->cover, part) : 1;
	if (!root->sym)
		part[0] = *x;

	struct tsr_pieces *vm = root->valid;
	int64_t first =
		base + pi * tags_per_point(root) + (root->sym ? root->sym->wpart->ncolors : 0);
	for (int j = 0; j < vm->n; j++) {
		const struct tsr_piece *p = &vm->v[j];
		int src = __builtin_ctzll(p->ranks);
		if (held_everywhere(p) || (dst < 64 && (p->ranks >> dst & 1)))
			continue; /* every rank holds it, or the reader's does */
		if (send && src != tsr__dist.rank)
			continue;

		for (int k = 0; k < np; k++) {
			tsr_box_t y;
			if (!tsr_box_intersect(part[k], p->box, &y))
				continue;

			int64_t tag = first + 6 * (int64_t)j + k;
			int rc = send ? tsr__coh_send_piece(root, &y, dst, tag)
				      : tsr__coh_recv_piece(root, &y, src, tag);
			if (rc)
				return rc;
		}
	}

	return TSR_OK;
}

/* Whether any part of the launch's reads lies outside the covered box. */
static int reads_outside(const struct tsr_node *root, const struct tsr_sym_req *r)
{
	if (!root->sym)
		return 1;
	return !tsr_box_contains(root->sym->cover, r->part->parent->bounds);
}

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a;
	int y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The colors of h whose boxes meet a validity piece this rank holds first (and not every rank
 * does), each once, into readers. */
static int readers_of_mine(struct tsr_node *root, const struct tsr_partition *h,
			   struct tsr_ivec *readers)
{
	struct tsr_pieces *vm = root->valid;
	readers->n = 0;

	for (int j = 0; j < vm->n; j++) {
		const struct tsr_piece *p = &vm->v[j];
		if (held_everywhere(p) || __builtin_ctzll(p->ranks) != tsr__dist.rank)
			continue;
		if (tsr__geom_meeting(&h->geom, h->boxes, &p->box, &found))
			return TSR_ENOMEM;

		for (int i = 0; i < found.n; i++) {
			TSR_GROW(readers->v, readers->n, readers->cap, 16);
			readers->v[readers->n++] = found.v[i];
		}
	}

	if (readers->n > 1) /* none: readers->v may still be NULL */
		qsort(readers->v, (size_t)readers->n, sizeof *readers->v, by_value);
	int n = 0;
	for (int i = 0; i < readers->n; i++)
		if (i == 0 || readers->v[i] != readers->v[n - 1])
			readers->v[n++] = readers->v[i];
	readers->n = n;
	return TSR_OK;
}

/* Sends of the pieces this rank holds first in the validity map, to every point of the launch
 * whose box meets them and whose rank lacks them: each such point once, as its rank receives. */
static int send_outside(struct tsr_node *root, const struct tsr_sym_req *r, int64_t base)
{
	const struct tsr_partition *h = r->part;
	struct tsr_ivec readers = {0};
	int rc = readers_of_mine(root, h, &readers);

	for (int i = 0; i < readers.n && !rc; i++) {
		int64_t pt[3];
		tsr__box_point(h->colors, readers.v[i], pt);
		int64_t pi = tsr__box_index(r->domain, pt);
		if (pi < 0)
			continue; /* a color the launch leaves out: no point, no rank */
		int dst = rank_of_point(r->mpart, pt);
		if (dst != tsr__dist.rank)
			rc = move_outside(root, pi, &h->boxes[readers.v[i]], dst, 1, base);
	}

	free(readers.v);
	return rc;
}

/* ---------------------------------------------------------------- entry points */

/* The box this rank's point i of the launch reads. */
static const tsr_box_t *box_of_mine(const struct tsr_sym_req *r, int i)
{
	int64_t pt[3];
	tsr__box_point(r->domain, r->mine[i], pt);
	return &r->part->boxes[tsr__box_index(r->part->colors, pt)];
}

/* What this rank's points lack of the covered box, gathered. */
static int gather_receives(struct tsr_node *root, const struct tsr_sym_req *r)
{
	int rc = TSR_OK;
	for (int i = 0; i < r->nmine && !rc && root->sym; i++)
		rc = receive_written(root, r->mine[i], box_of_mine(r, i));
	return rc;
}

/* What this rank's points lack outside the covered box, received. */
static int receive_outside(struct tsr_node *root, const struct tsr_sym_req *r, int64_t base)
{
	int rc = TSR_OK;
	for (int i = 0; i < r->nmine && !rc; i++)
		rc = move_outside(root, r->mine[i], box_of_mine(r, i), tsr__dist.rank, 0, base);
	return rc;
}

/* ---------------------------------------------------------------- the plans of launch shapes */

/* A loop reads a field through the same partition, with the same points on the same ranks, after
 * the same structured write, iteration after iteration: its moves of the covered box are the same
 * each time but for their tags' base. So the joined moves are kept per launch shape, as a plan:
 * the field (its region's id: never reused), the read's partition, mapping partition (and its
 * ranks' generation, tsr_partition_set_rank) and domain, and the structured write's partitions,
 * ranks' generation, domain and covered box. Partitions are named by their ids, which a destroyed
 * partition never passes on. Nothing else goes into these moves: the validity map's pieces only
 * change the tags' stride (tags_per_point, taken at each launch) and the moves outside the
 * covered box, which are found afresh every time. A plan's moves are in the order they are made:
 * its sends, then its receives. */
struct sym_shape {
	uint64_t region;
	int field;
	uint64_t rpart, rmpart;
	unsigned rmgen;
	tsr_box_t rdomain;
	uint64_t wpart, wmpart;
	unsigned wmgen;
	tsr_box_t wdomain, cover;
};

struct sym_plan {
	struct sym_shape shape;
	struct sym_move *v;
	int n, nsends;
};

/* A few plans: a program's loops read few fields through few partitions (the stencil, two). */
enum { SYM_PLANS = 8 };
static struct sym_plan plans[SYM_PLANS];
static int nplans, next_out;

static void shape_of(const struct tsr_node *root, const struct tsr_sym_req *r, struct sym_shape *k)
{
	const struct tsr_sym *s = root->sym;
	k->region = root->region->id;
	k->field = root->field;
	k->rpart = r->part->id;
	k->rmpart = r->mpart->id;
	k->rmgen = r->mpart->ranks_gen;
	k->rdomain = r->domain;
	k->wpart = s->wpart->id;
	k->wmpart = s->mpart->id;
	k->wmgen = s->mpart->ranks_gen;
	k->wdomain = s->domain;
	k->cover = s->cover;
}

/* Field by field, boxes by their dimensions only (as fold_ranks.c's plans): a box built in place
 * may leave the coordinates beyond its dimension unset. */
static int same_shape(const struct sym_shape *a, const struct sym_shape *b)
{
	return a->region == b->region && a->field == b->field && a->rpart == b->rpart &&
	       a->rmpart == b->rmpart && a->rmgen == b->rmgen && a->wpart == b->wpart &&
	       a->wmpart == b->wmpart && a->wmgen == b->wmgen &&
	       tsr__box_equal(&a->rdomain, &b->rdomain) &&
	       tsr__box_equal(&a->wdomain, &b->wdomain) && tsr__box_equal(&a->cover, &b->cover);
}

static struct sym_plan *plan_find(const struct sym_shape *k)
{
	for (int i = 0; i < nplans; i++)
		if (same_shape(&plans[i].shape, k))
			return &plans[i];
	return NULL;
}

/* How many of the sorted moves v[0..n) are sends (they come first). */
static int count_sends(const struct sym_move *v, int n)
{
	int nsends = 0;
	while (nsends < n && v[nsends].send)
		nsends++;
	return nsends;
}

/* The joined moves just gathered (smoves), kept as the plan of shape k; the oldest plan makes
 * room. NULL when out of memory (the launch makes its moves without a plan). */
static struct sym_plan *plan_keep(const struct sym_shape *k)
{
	struct sym_move *v = malloc((size_t)(nsmoves ? nsmoves : 1) * sizeof *v);
	if (!v)
		return NULL;
	if (nsmoves > 0) /* none: smoves may still be NULL */
		memcpy(v, smoves, (size_t)nsmoves * sizeof *v);

	struct sym_plan *p = nplans < SYM_PLANS ? &plans[nplans++] : &plans[next_out++ % SYM_PLANS];
	free(p->v);
	p->shape = *k;
	p->v = v;
	p->n = nsmoves;
	p->nsends = count_sends(v, nsmoves);
	return p;
}

/* The covered box's moves of the launch: gathered, sorted and joined (smoves). */
static int gather_moves(struct tsr_node *root, const struct tsr_sym_req *r)
{
	/* what this rank's points lack, and what other ranks' points lack of this rank's */
	int rc = gather_receives(root, r);
	if (!rc && root->sym)
		rc = send_all_written(root, r);
	if (rc)
		return rc;

	if (nsmoves > 1) /* none: smoves may still be NULL */
		qsort(smoves, (size_t)nsmoves, sizeof *smoves, by_pair_then_point);
	join_gathered();
	return TSR_OK;
}

/* This rank's side of move m, under the tag of its reader point and written color. */
static int make_move(struct tsr_node *root, const struct sym_move *m, int64_t base)
{
	int64_t tag = base + m->pi * tags_per_point(root) + m->cw;
	return m->send ? tsr__coh_send_piece(root, &m->box, m->peer, tag)
		       : tsr__coh_recv_piece(root, &m->box, m->peer, tag);
}

/* Moves v[lo..hi), in order. */
static int make_range(struct tsr_node *root, const struct sym_move *v, int lo, int hi, int64_t base)
{
	int rc = TSR_OK;
	for (int i = lo; i < hi && !rc; i++)
		rc = make_move(root, &v[i], base);
	return rc;
}

/* Every send of the launch, then every receive (see the moves of the covered box, above): those of
 * the covered box from v[0..n) (sends first, nsends of them), the others found here. */
static int make_moves(struct tsr_node *root, const struct tsr_sym_req *r, int64_t base,
		      const struct sym_move *v, int n, int nsends)
{
	int outside = reads_outside(root, r);

	int rc = make_range(root, v, 0, nsends, base);
	if (!rc && outside)
		rc = send_outside(root, r, base);
	if (!rc)
		rc = make_range(root, v, nsends, n, base);
	if (!rc && outside)
		rc = receive_outside(root, r, base);
	return rc;
}

/* The launch's moves, from its shape's plan (made the first time). */
static int make_planned(struct tsr_node *root, const struct tsr_sym_req *r, int64_t base)
{
	struct sym_shape k;
	shape_of(root, r, &k);
	struct sym_plan *p = plan_find(&k);

	if (p)
		return make_moves(root, r, base, p->v, p->n, p->nsends);

	int rc = gather_moves(root, r);
	if (!rc) {
		p = plan_keep(&k);
		/* out of memory for the plan: the moves just gathered */
		rc = p ? make_moves(root, r, base, p->v, p->n, p->nsends)
		       : make_moves(root, r, base, smoves, nsmoves, count_sends(smoves, nsmoves));
	}
	nsmoves = 0; /* made, or dropped with the launch's failure */
	return rc;
}

int tsr__coh_sym_read(struct tsr_node *root, const struct tsr_sym_req *r, int64_t base)
{
	int rc;
	if (root->sym) {
		rc = make_planned(root, r, base);
	} else {
		/* no structured write: nothing in a covered box, the validity map's moves only */
		rc = make_moves(root, r, base, NULL, 0, 0);
	}

	if (!rc && root->xviews->n > TSR_MAX_XVIEWS)
		rc = tsr__coh_xviews_flush(root);
	return rc;
}

/* The box of color pt of p. */
static const tsr_box_t *box_at(const struct tsr_partition *p, const int64_t pt[3])
{
	return &p->boxes[tsr__box_index(p->colors, pt)];
}

/* The union of p's boxes over domain when it is one box (*cover); 0 otherwise. */
int tsr__coh_sym_cover(const struct tsr_partition *p, tsr_box_t domain, tsr_box_t *cover)
{
	if (!p->disjoint)
		return 0;

	if (p->geom.kind == TSR_GEOM_TILES) {
		/* a box of tiles is a box: from the first tile's lo to the last one's hi */
		int64_t lo[3] = {domain.lo[0], domain.lo[1], domain.lo[2]};
		int64_t hi[3] = {domain.hi[0], domain.hi[1], domain.hi[2]};
		*cover = *box_at(p, lo);
		for (int d = 0; d < domain.dim; d++)
			cover->hi[d] = box_at(p, hi)->hi[d];
		return 1;
	}

	/* a list: disjoint boxes fill their bounding box exactly when their volumes add up to it */
	int64_t sum = 0;
	int64_t n = tsr_box_volume(domain);
	for (int64_t i = 0; i < n; i++) {
		int64_t pt[3];
		tsr__box_point(domain, i, pt);
		const tsr_box_t *b = box_at(p, pt);
		sum += tsr_box_volume(*b);

		if (i == 0)
			*cover = *b;
		widen(cover, b);
	}

	return sum == tsr_box_volume(*cover);
}

static int hold(struct tsr_node *root)
{
	for (int i = 0; i < nholders; i++)
		if (holders[i] == root)
			return TSR_OK;

	TSR_GROW(holders, nholders, capholders, 8);
	holders[nholders++] = root;
	return TSR_OK;
}

static void unhold(struct tsr_node *root)
{
	for (int i = 0; i < nholders; i++)
		if (holders[i] == root) {
			holders[i] = holders[--nholders];
			return;
		}
}

static void drop(struct tsr_node *root)
{
	struct tsr_sym *s = root->sym;
	((struct tsr_partition *)s->wpart)->sym_refs--;
	((struct tsr_partition *)s->mpart)->sym_refs--;
	free(s);
	root->sym = NULL;
	unhold(root);
}

/* Whether root's structured write is the one r with covered box *cover would leave. */
static int same_write(const struct tsr_node *root, const struct tsr_sym_req *r,
		      const tsr_box_t *cover)
{
	const struct tsr_sym *s = root->sym;
	return s && s->wpart == r->part && s->mpart == r->mpart &&
	       tsr__box_equal(&s->domain, &r->domain) && tsr__box_equal(&s->cover, cover);
}

int tsr__coh_sym_wrote(struct tsr_node *root, const struct tsr_sym_req *r, const tsr_box_t *cover)
{
	/* a loop's steady state: the write says what the last one said */
	if (same_write(root, r, cover))
		return TSR_OK;

	/* an older structured write this one does not cover must be told piece by piece first */
	if (root->sym && !tsr_box_contains(*cover, root->sym->cover)) {
		int rc = tsr__coh_sym_flatten(root);
		if (rc)
			return rc;
	}

	if (root->sym)
		drop(root);

	struct tsr_sym *s = malloc(sizeof *s);
	if (!s || hold(root)) {
		free(s);
		return TSR_ENOMEM;
	}

	*s = (struct tsr_sym){.wpart = r->part,
			      .mpart = r->mpart,
			      .domain = r->domain,
			      .cover = *cover};
	((struct tsr_partition *)r->part)->sym_refs++;
	((struct tsr_partition *)r->mpart)->sym_refs++;
	root->sym = s;
	return TSR_OK;
}

int tsr__coh_sym_flatten(struct tsr_node *root)
{
	struct tsr_sym *s = root->sym;
	if (!s)
		return TSR_OK;
	if (tsr__dist.size > 64)
		return tsr__err(TSR_EINVAL,
				"field '%s' of region '%s': on %d ranks (more than 64), a field "
				"written by an index launch can only be read by index launches "
				"through partitions (the validity of each box cannot be kept "
				"piece by piece)",
				root->region->fields[root->field].name, root->region->name,
				tsr__dist.size);

	int64_t n = tsr_box_volume(s->domain);
	for (int64_t i = 0; i < n; i++) {
		int64_t pt[3];
		tsr__box_point(s->domain, i, pt);
		int cw = (int)tsr__box_index(s->wpart->colors, pt);
		struct tsr_piece val = {.ranks = tsr__rank_bit(rank_of_point(s->mpart, pt))};

		if (tsr__pieces_assign(root->valid, &s->wpart->boxes[cw], &val) < 0)
			return TSR_ENOMEM;
	}

	drop(root);
	if (root->valid->n > TSR_MAX_PIECES)
		return tsr__coh_valid_collapse(root);
	return TSR_OK;
}

/* Whether a write of box b leaves nothing of the structured write: then it just goes. */
int tsr__coh_sym_overwritten(struct tsr_node *root, const tsr_box_t *b)
{
	if (!root->sym || !tsr_box_contains(*b, root->sym->cover))
		return 0;

	drop(root);
	return 1;
}

int tsr__coh_sym_forget(struct tsr_partition *p)
{
	for (int i = nholders - 1; p->sym_refs > 0 && i >= 0; i--) {
		struct tsr_node *root = holders[i];
		if (root->sym->wpart != p && root->sym->mpart != p)
			continue;

		int rc = tsr__coh_sym_flatten(root);
		if (rc)
			return rc;
	}

	return TSR_OK;
}

void tsr__coh_sym_abandon(struct tsr_partition *p)
{
	for (int i = nholders - 1; p->sym_refs > 0 && i >= 0; i--)
		if (holders[i]->sym->wpart == p || holders[i]->sym->mpart == p)
			drop(holders[i]);
}

void tsr__coh_sym_free(struct tsr_node *root)
{
	if (root->sym)
		drop(root);
}

void tsr__coh_sym_shutdown(void)
{
	free(holders);
	holders = NULL;
	nholders = capholders = 0;
	free(found.v);
	found = (struct tsr_ivec){0};
	free(smoves);
	smoves = NULL;
	nsmoves = capsmoves = 0;
	for (int i = 0; i < nplans; i++)
		free(plans[i].v);
	memset(plans, 0, sizeof plans);
	nplans = next_out = 0;
}
