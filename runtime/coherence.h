/* coherence.h: what the coherence files share, and no other file includes: the pieces
 * (pieces.c), coherence in one process (coherence.c), across ranks (coherence_ranks.c,
 * coherence_sym.c), and the entry points the floors above call (coherence_entry.c), which
 * internal.h declares (tsr__coh_*). */
#ifndef TSR_COHERENCE_H
#define TSR_COHERENCE_H

#include "internal.h"

/* More pieces than this in one field: collapse (a program that cuts the field in ever new ways). */
#define TSR_MAX_PIECES 16384
/* Several ranks: transfer views a piece's sends may use before later writers wait for them all. */
#define TSR_MAX_SENDS 4
/* Several ranks: transfer views kept per field before they are all handed back to the root. */
#define TSR_MAX_XVIEWS 4096

/* One piece: a box of a field and what the last write to it left. */
struct tsr_piece {
	tsr_box_t box;
	struct tsr_node *writer;
	/* whose token carries the write's ordering: the writer, or a node its task wrote first (a
	 * group), while its write_gen is token_gen */
	struct tsr_node *token_node;
	uint64_t token_gen;
	/* when the writer wrote it (several memory nodes) */
	uint64_t written_at;
	/* validity map: the ranks that hold its latest value */
	uint64_t ranks;
	/* several ranks: transfer views that send its data; a later writer waits for them as it
	 * waits for readers */
	struct tsr_node *sends[TSR_MAX_SENDS];
	int nsends;
	/* several ranks: transfer views this rank's writer of the piece listed read-write (the
	 * sends it waited for): the writer is then the last writer of each such view's handle, or
	 * comes before it, so a later send through one of them is ordered after the write by the
	 * view's own sequential consistency, with no no-op task */
	struct tsr_node *ordered[TSR_MAX_SENDS];
	int nordered;
};

struct tsr_pieces {
	struct tsr_piece *v;
	int n, cap;
	/* generation of the pieces' boxes (nodes cache overlaps by it) */
	uint64_t geom;
};

/* Several ranks: the transfer views of one field (coherence_ranks.c). */
struct tsr_xviews {
	struct tsr_node **v;
	int n, cap;
};

/* ---- pieces.c */
/* counts changes of any field's piece boxes; never reset */
extern uint64_t tsr__geom_seq;
int tsr__piece_push(struct tsr_pieces *ps, tsr_box_t box, struct tsr_node *writer,
		    uint64_t written_at);
/* Make box s one piece saying what val says; its index, or -1 when out of memory (nothing
 * changed). */
int tsr__pieces_assign(struct tsr_pieces *ps, const tsr_box_t *s, const struct tsr_piece *val);
int tsr__overlaps(struct tsr_node *n, struct tsr_pieces *ps); /* fills n->overlaps for ps's boxes */
void tsr__overlaps_free(struct tsr_node *n);

/* The box a node stands for: its region's, or a transfer view's own. */
static inline const tsr_box_t *tsr__node_box(const struct tsr_node *n)
{
	return n->is_transfer ? &n->transfer_box : &n->region->bounds;
}

static inline struct tsr_pieces *tsr__pieces_of(struct tsr_node *n)
{
	return n->region->root->nodes[n->field].pieces;
}

/* n's cached index of the piece that is exactly its box, if still so (the steady state of a
 * program that writes through the same tiles again and again): O(1) instead of a scan. */
static inline struct tsr_piece *tsr__exact_piece(struct tsr_node *n, struct tsr_pieces *ps)
{
	if (n->piece_hint >= 0 && n->piece_hint < ps->n &&
	    tsr__box_equal(&ps->v[n->piece_hint].box, tsr__node_box(n)))
		return &ps->v[n->piece_hint];
	return NULL;
}

/* ---- coherence.c, for the ranks' part */
extern uint64_t tsr__write_seq;          /* counts writes; only syncs compare it */
extern struct tsr_deps tsr__coh_scratch; /* sync, retire and transfer lists (one host thread) */
int tsr__coh_pieces_init(struct tsr_node *root);
void tsr__coh_pieces_free(struct tsr_node *root);
void tsr__coh_local_shutdown(void);
void tsr__register_view(struct tsr_node *n);
int tsr__deps_add(struct tsr_deps *d, starpu_data_handle_t h, enum starpu_data_access_mode m);
/* sync: the node whose home copy it gathers (a node of the task graph, reading it), else NULL */
int tsr__submit_noop(struct tsr_deps *d, int home, const char *what, const struct tsr_node *sync);
int tsr__piece_deps(struct tsr_deps *d, struct tsr_node *n, const struct tsr_piece *p, int write);
int tsr__add_sends(struct tsr_deps *d, const struct tsr_piece *p);
void tsr__hand_to_root(struct tsr_node *root,
		       int (*pick)(const struct tsr_node *n, const void *arg), const void *arg,
		       const char *what);
int tsr__drop_sends(struct tsr_node *root, const char *what);
int tsr__collapse(struct tsr_node *root);

/* ---- xfer.c: transfer views carry the sender's poison marks with their data */
struct starpu_data_interface_ops *tsr__xview_ops(void);
void tsr__xview_attach(struct tsr_node *x);
void tsr__xview_detach(struct tsr_node *x);
/* before each transfer of x is submitted (recv: a receive); unexpect if StarPU-MPI refused it */
int tsr__xview_expect(struct tsr_node *x, int recv);
void tsr__xview_unexpect(struct tsr_node *x);

/* ---- coherence_ranks.c */
void tsr__xviews_free(struct tsr_node *root);
/* This rank's side of one move of box b of root's field (the other rank makes the other side,
 * under the same tag). */
int tsr__coh_send_piece(struct tsr_node *root, const tsr_box_t *b, int dst, int64_t tag);
int tsr__coh_recv_piece(struct tsr_node *root, const tsr_box_t *b, int src, int64_t tag);
int tsr__coh_xviews_flush(struct tsr_node *root);
int tsr__coh_valid_collapse(struct tsr_node *root);
/* Make box b of root's field valid on `rank`, or on every rank (TSR_ALL_RANKS). */
int tsr__coh_make_valid(struct tsr_node *root, const tsr_box_t *b, int rank);
void tsr__coh_ranks_shutdown(void);
/* The validity map matters only where there is somewhere else to be valid: one rank (TSR_MPI=1
 * without mpirun, or mpirun -np 1) holds everything and skips it. */
static inline int tsr__coh_several_ranks(void)
{
	return tsr__dist.on && tsr__dist.size > 1;
}

/* ---- coherence_sym.c */
/* A write of box b leaves nothing of root's structured write: it goes (1), else 0. */
int tsr__coh_sym_overwritten(struct tsr_node *root, const tsr_box_t *b);
void tsr__coh_sym_free(struct tsr_node *root); /* the field goes */
void tsr__coh_sym_shutdown(void);

/* A rank's bit in a piece's rank set: ranks 0..63 only (callers refuse more, tsr__coh_wrote_by). */
static inline uint64_t tsr__rank_bit(int r)
{
	return 1ULL << r;
}

/* Whether rank r holds a piece held by `ranks`. Beyond 64 ranks (fake ranks: TSR_FAKE_NRANKS)
 * every set is the whole job, ~0: what would make a smaller one (a write on one rank told piece
 * by piece, tsr__coh_sym_flatten) is refused there, and structured launches keep no set. */
static inline int tsr__rank_holds(uint64_t ranks, int r)
{
	return r < 64 ? (int)(ranks >> r & 1) : ranks == ~0ULL;
}

static inline uint64_t tsr__every_rank(void)
{
	return tsr__dist.size >= 64 ? ~0ULL : tsr__rank_bit(tsr__dist.size) - 1;
}

#endif
