/* coherence.c: coherence by pieces.
 *
 * Every (region or subregion, field) node has a StarPU handle of its own: a view of the root's
 * array (pointer offset, the root's leading dimensions), registered the first time something uses
 * it. Views of one field overlap and StarPU does not know it: it orders the accesses to one handle
 * only. Tessera orders the rest, the way Legion's dependence analysis does, with intersections:
 *
 * Per field, the root keeps the field's pieces: disjoint boxes that cover the region, each with
 * the node that last wrote it. An access to node n lists, besides n's own handle, the token of
 * every last writer of a piece that overlaps n's box: read-only for a read (so it waits for those
 * writers), read-write for a write (so it also waits for every reader that listed them since).
 * A write then makes n the writer of its box. StarPU's sequential consistency derives the graph:
 * a read through a halo tile waits for the writers of the tiles it overlaps and for nothing else,
 * and no data is gathered anywhere.
 *
 * On one memory node (CPU only) views share memory, and a node's token is its own data handle.
 * With more memory nodes (GPUs) each view has copies of its own. Then tokens are separate void
 * handles (a token accessed read-write must not move or invalidate data), and before n is used,
 * every piece written through another view since n was last brought up to date is flushed to the
 * home node and n's other copies are dropped, by one small sync task on the home node that reads
 * the writers' handles there and writes n's there (no byte of n moves: its home buffer is the
 * region's memory, which the writers' flushes just updated). These syncs are the piece copies
 * the GPU path makes; they never run on one memory node.
 *
 * Memory stays bounded: a write removes the pieces it covers, and a field whose pieces become too
 * many is collapsed to one piece written by the root (after a task that waits for all writers). */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* More pieces than this in one field: collapse (a program that cuts the field in ever new ways). */
#define TSR_MAX_PIECES 16384

struct tsr_piece {
	tsr_box_t box;
	struct tsr_node *writer;
	uint64_t wseq;                        /* when the writer wrote it (several memory nodes) */
};

struct tsr_pieces {
	struct tsr_piece *v;
	int n, cap;
	uint64_t geom;                        /* generation of the pieces' boxes (nodes cache overlaps by it) */
};

static uint64_t write_seq;               /* counts writes; only syncs compare it */
static uint64_t geom_seq;                /* counts changes of any field's piece boxes; never reset */
static int separate_tokens;              /* void tokens and syncs: several memory nodes, or asked for */

/* ------------------------------------------------------------------ handles and tokens */

/* TSR_COHERENCE=tokens runs the several-memory-nodes protocol (void tokens, sync tasks) on one
 * memory node too, so that a machine without GPUs tests its ordering; "shared" (the default) uses
 * it only where StarPU has more than one memory node. Read at tsr_init, before StarPU starts. */
int tsr__coh_init(void)
{
	const char *v = getenv("TSR_COHERENCE");
	write_seq = 0;
	separate_tokens = 0;
	if (!v || !*v || !strcmp(v, "shared"))
		return TSR_OK;
	if (!strcmp(v, "tokens")) {
		separate_tokens = 1;
		return TSR_OK;
	}
	return tsr__err(TSR_EINVAL, "tsr_init: TSR_COHERENCE='%s' is neither 'shared' nor 'tokens'", v);
}

/* Once StarPU runs: its memory nodes decide. */
void tsr__coh_start(void)
{
	if (starpu_memory_nodes_get_count() > 1)
		separate_tokens = 1;
}

/* Register n's view of the root's array, and its token where tokens are separate. */
static void register_view(struct tsr_node *n)
{
	struct tsr_region *root = n->region->root;
	const tsr_box_t *b = &n->region->bounds;
	const tsr_box_t *rb = &root->bounds;
	uint32_t ldy = (uint32_t)(rb->hi[0] - rb->lo[0] + 1);
	uint32_t ldz = ldy * (uint32_t)(rb->dim > 1 ? rb->hi[1] - rb->lo[1] + 1 : 1);
	uint32_t ext[3] = {1, 1, 1};
	size_t off = 0;
	for (int d = 0; d < b->dim; d++) {
		ext[d] = (uint32_t)(b->hi[d] - b->lo[d] + 1);
		size_t stride = d == 0 ? 1 : d == 1 ? ldy : ldz;
		off += (size_t)(b->lo[d] - rb->lo[d]) * stride;
	}
	size_t elem = root->fields[n->field].size;
	uintptr_t ptr = (uintptr_t)root->storage[n->field] + off * elem;
	starpu_block_data_register(&n->h, root->home, ptr, ldy, ldz, ext[0], ext[1], ext[2], elem);
}

void tsr__coh_register(struct tsr_node *n)
{
	if (!n->h)
		register_view(n);
	if (separate_tokens && !n->tok)
		starpu_void_data_register(&n->tok);
}

/* The handle that carries n's ordering. */
static starpu_data_handle_t token(struct tsr_node *n)
{
	return n->tok ? n->tok : n->h;
}

/* ------------------------------------------------------------------ dependency lists */

void tsr__deps_reset(struct tsr_deps *d)
{
	d->n = 0;
}

void tsr__deps_free(struct tsr_deps *d)
{
	free(d->v);
	memset(d, 0, sizeof *d);
}

/* Add h in mode m once; a handle listed read-only and read-write is read-write. */
static int deps_add(struct tsr_deps *d, starpu_data_handle_t h, enum starpu_data_access_mode m)
{
	for (int i = 0; i < d->n; i++)
		if (d->v[i].h == h) {
			if (d->v[i].mode != m)
				d->v[i].mode = STARPU_RW;
			return TSR_OK;
		}
	if (d->n == d->cap) {
		int ncap = d->cap ? 2 * d->cap : 16;
		struct tsr_dep *nv = realloc(d->v, (size_t)ncap * sizeof *nv);
		if (!nv)
			return TSR_ENOMEM;
		d->v = nv;
		d->cap = ncap;
	}
	d->v[d->n].h = h;
	d->v[d->n].mode = m;
	d->n++;
	return TSR_OK;
}

/* ------------------------------------------------------------------ pieces */

static struct tsr_pieces *pieces_of(struct tsr_node *n)
{
	return n->region->root->nodes[n->field].pieces;
}

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

static int piece_push(struct tsr_pieces *ps, tsr_box_t box, struct tsr_node *writer, uint64_t wseq)
{
	if (pieces_reserve(ps, 1))
		return TSR_ENOMEM;
	ps->v[ps->n].box = box;
	ps->v[ps->n].writer = writer;
	ps->v[ps->n].wseq = wseq;
	ps->n++;
	return TSR_OK;
}

/* A field starts as one piece, written by its root (its initial zeros, or whatever the root's
 * first writer leaves). */
int tsr__coh_root_init(struct tsr_node *root)
{
	root->pieces = calloc(1, sizeof *root->pieces);
	if (!root->pieces)
		return TSR_ENOMEM;
	root->pieces->geom = ++geom_seq;
	return piece_push(root->pieces, root->region->bounds, root, 0);
}

/* n's cache of the pieces it overlaps. */
static void overlaps_free(struct tsr_node *n)
{
	free(n->ovl);
	n->ovl = NULL;
	n->novl = n->capovl = 0;
	n->ovl_geom = 0;
}

void tsr__coh_root_free(struct tsr_node *root)
{
	overlaps_free(root);
	if (!root->pieces)
		return;
	free(root->pieces->v);
	free(root->pieces);
	root->pieces = NULL;
}

static int box_equal(const tsr_box_t *a, const tsr_box_t *b)
{
	for (int d = 0; d < a->dim; d++)
		if (a->lo[d] != b->lo[d] || a->hi[d] != b->hi[d])
			return 0;
	return 1;
}

static int box_inside(const tsr_box_t *in, const tsr_box_t *out)
{
	for (int d = 0; d < in->dim; d++)
		if (in->lo[d] < out->lo[d] || in->hi[d] > out->hi[d])
			return 0;
	return 1;
}

/* Append to ps the parts of piece p outside box s (at most two per dimension), keeping its writer. */
static int piece_subtract(struct tsr_pieces *ps, struct tsr_piece p, const tsr_box_t *s)
{
	tsr_box_t rest = p.box;
	for (int d = 0; d < rest.dim; d++) {
		if (rest.lo[d] < s->lo[d]) {
			tsr_box_t below = rest;
			below.hi[d] = s->lo[d] - 1;
			if (piece_push(ps, below, p.writer, p.wseq))
				return TSR_ENOMEM;
			rest.lo[d] = s->lo[d];
		}
		if (rest.hi[d] > s->hi[d]) {
			tsr_box_t above = rest;
			above.lo[d] = s->hi[d] + 1;
			if (piece_push(ps, above, p.writer, p.wseq))
				return TSR_ENOMEM;
			rest.hi[d] = s->hi[d];
		}
	}
	return TSR_OK;
}

/* n's cached index of the piece that is exactly its box, if still so (the steady state of a
 * program that writes through the same tiles again and again): O(1) instead of a scan. */
static struct tsr_piece *exact_piece(struct tsr_node *n, struct tsr_pieces *ps)
{
	if (n->piece_hint >= 0 && n->piece_hint < ps->n && box_equal(&ps->v[n->piece_hint].box, &n->region->bounds))
		return &ps->v[n->piece_hint];
	return NULL;
}

/* The indices of the pieces that overlap n's box, cached on n while the field's piece boxes stay
 * the same (writes through the same tiles change only writers): a read through a halo tile then
 * looks at the few pieces it overlaps instead of scanning all of them. */
static int overlaps(struct tsr_node *n, struct tsr_pieces *ps)
{
	if (n->ovl_geom == ps->geom)
		return TSR_OK;
	n->novl = 0;
	for (int i = 0; i < ps->n; i++) {
		if (!tsr__box_overlap(ps->v[i].box, n->region->bounds))
			continue;
		if (n->novl == n->capovl) {
			int ncap = n->capovl ? 2 * n->capovl : 4;
			int *nv = realloc(n->ovl, (size_t)ncap * sizeof *nv);
			if (!nv)
				return TSR_ENOMEM;
			n->ovl = nv;
			n->capovl = ncap;
		}
		n->ovl[n->novl++] = i;
		if (box_equal(&ps->v[i].box, &n->region->bounds))
			n->piece_hint = i;
	}
	n->ovl_geom = ps->geom;
	return TSR_OK;
}

/* ------------------------------------------------------------------ syncs (several memory nodes) */

static void noop(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

static struct starpu_codelet sync_cl = {
	.cpu_funcs = {noop},
	.cuda_funcs = {noop},
	.cuda_flags = {STARPU_CUDA_ASYNC},
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.name = "tsr_sync",
};

/* Run task on a worker of memory node home (where the region's array is). */
static void place_on_home(struct starpu_task *task, int home)
{
	if (home == STARPU_MAIN_RAM) {
		task->where = STARPU_CPU;
		return;
	}
	for (unsigned w = 0; w < starpu_worker_get_count(); w++)
		if ((int)starpu_worker_get_memory_node(w) == home) {
			task->execute_on_a_specific_worker = 1;
			task->workerid = w;
			return;
		}
}

/* One no-op task on the home node over the listed handles. */
static int submit_noop(struct tsr_deps *d, int home, const char *what)
{
	struct starpu_task *task = starpu_task_create();
	task->cl = &sync_cl;
	task->nbuffers = d->n;
	if (d->n > STARPU_NMAXBUFS) {
		/* StarPU frees these with the task */
		task->dyn_handles = malloc((size_t)d->n * sizeof(starpu_data_handle_t));
		task->dyn_modes = malloc((size_t)d->n * sizeof(enum starpu_data_access_mode));
		if (!task->dyn_handles || !task->dyn_modes) {
			task->destroy = 0;
			starpu_task_destroy(task);
			return tsr__err(TSR_ENOMEM, "%s: out of memory", what);
		}
	}
	for (int i = 0; i < d->n; i++) {
		STARPU_TASK_SET_HANDLE(task, d->v[i].h, i);
		STARPU_TASK_SET_MODE(task, d->v[i].mode, i);
	}
	place_on_home(task, home);
	if (starpu_task_submit(task))
		return tsr__err(TSR_ESTARPU, "%s: starpu_task_submit failed", what);
	return TSR_OK;
}

static struct tsr_deps scratch;          /* sync and retire lists (one host thread) */

/* Bring n's home copy up to date with what other views wrote over its box since it was last
 * brought up to date, and drop n's other copies. */
static int sync_node(struct tsr_node *n, struct tsr_pieces *ps)
{
	tsr__deps_reset(&scratch);
	if (overlaps(n, ps))
		return tsr__err(TSR_ENOMEM, "field '%s' of '%s': out of memory", n->region->fields[n->field].name,
		                n->region->name);
	for (int j = 0; j < n->novl; j++) {
		struct tsr_piece *p = &ps->v[n->ovl[j]];
		if (p->writer != n && p->wseq > n->synced)
			if (deps_add(&scratch, p->writer->h, STARPU_R))
				return tsr__err(TSR_ENOMEM, "field '%s' of '%s': out of memory", n->region->fields[n->field].name,
				                n->region->name);
	}
	n->synced = write_seq;
	if (scratch.n == 0)
		return TSR_OK;
	if (deps_add(&scratch, n->h, STARPU_W))
		return tsr__err(TSR_ENOMEM, "field '%s' of '%s': out of memory", n->region->fields[n->field].name,
		                n->region->name);
	return submit_noop(&scratch, n->region->root->home, "sync of a subregion's copies");
}

/* ------------------------------------------------------------------ accesses */

int tsr__coh_deps(struct tsr_node *n, int write, struct tsr_deps *d)
{
	tsr__coh_register(n);
	struct tsr_pieces *ps = pieces_of(n);
	if (n->tok) {
		int rc = sync_node(n, ps);
		if (rc)
			return rc;
	}
	enum starpu_data_access_mode m = write ? STARPU_RW : STARPU_R;
	/* separate tokens: a writer takes its own token, which its readers and later writers list */
	if (write && n->tok && deps_add(d, n->tok, STARPU_RW))
		return TSR_ENOMEM;
	struct tsr_piece *ex = exact_piece(n, ps);
	if (ex) {
		/* the one piece over n's box: its writer is all n waits for */
		if (ex->writer != n || n->tok)
			return deps_add(d, token(ex->writer), m) ? TSR_ENOMEM : TSR_OK;
		return TSR_OK;
	}
	if (overlaps(n, ps))
		return TSR_ENOMEM;
	for (int j = 0; j < n->novl; j++) {
		struct tsr_piece *p = &ps->v[n->ovl[j]];
		/* on one memory node n's own handle (the task's data buffer) orders n's accesses */
		if (p->writer == n && !n->tok)
			continue;
		if (deps_add(d, token(p->writer), m))
			return TSR_ENOMEM;
	}
	return TSR_OK;
}

/* Hand the pieces whose writer `pick` selects to the root, after one no-op task on the home node
 * that waits for those writers and their readers (read-write on their tokens, and on the root's
 * for the root's readers); on several memory nodes it reads the writers' data there, so that it is
 * home before their handles go. If that task cannot be made, everything is waited for instead:
 * the handover itself never fails, so no piece is left naming a node about to be freed. */
static void hand_to_root(struct tsr_node *root, int (*pick)(const struct tsr_node *n, const void *arg), const void *arg,
                         const char *what)
{
	struct tsr_pieces *ps = root->pieces;
	int rc = TSR_OK;
	tsr__deps_reset(&scratch);
	for (int i = 0; i < ps->n && !rc; i++) {
		struct tsr_node *w = ps->v[i].writer;
		if (w == root || !pick(w, arg))
			continue;
		rc = deps_add(&scratch, w->h, root->tok ? STARPU_R : STARPU_RW);
		if (!rc && root->tok)
			rc = deps_add(&scratch, w->tok, STARPU_RW);
	}
	if (scratch.n == 0 && !rc)
		return;
	if (!rc)
		rc = deps_add(&scratch, root->h, STARPU_RW);
	if (!rc && root->tok)
		rc = deps_add(&scratch, root->tok, STARPU_RW);
	if (!rc)
		rc = submit_noop(&scratch, root->region->home, what);
	if (rc)
		tsr__wait_all();
	uint64_t seq = ++write_seq;
	root->synced = seq;
	for (int i = 0; i < ps->n; i++)
		if (ps->v[i].writer != root && pick(ps->v[i].writer, arg)) {
			ps->v[i].writer = root;
			ps->v[i].wseq = seq;
		}
}

static int any_node(const struct tsr_node *n, const void *arg)
{
	(void)n;
	(void)arg;
	return 1;
}

/* Too many pieces: the root takes them all over, and the field becomes one piece. */
static int collapse(struct tsr_node *root)
{
	struct tsr_pieces *ps = root->pieces;
	hand_to_root(root, any_node, NULL, "collapse of a field's pieces");
	ps->n = 0;
	ps->geom = ++geom_seq;
	return piece_push(ps, root->region->bounds, root, root->synced);
}

int tsr__coh_wrote(struct tsr_node *n)
{
	struct tsr_pieces *ps = pieces_of(n);
	uint64_t seq = ++write_seq;
	n->synced = seq;
	struct tsr_piece *ex = exact_piece(n, ps);
	if (ex) {
		ex->writer = n;
		ex->wseq = seq;
		return TSR_OK;
	}
	/* pieces outside n's box stay where they are; those inside go, those across leave their
	 * parts outside (appended, and outside the box, so the downward walk never meets them) */
	const tsr_box_t *s = &n->region->bounds;
	int across = 0;
	for (int i = 0; i < ps->n; i++)
		across += tsr__box_overlap(ps->v[i].box, *s);
	/* room first: the walk below must not stop halfway, with parts of the field in no piece */
	if (pieces_reserve(ps, across * 2 * s->dim + 1))
		return TSR_ENOMEM;
	ps->geom = ++geom_seq;
	for (int i = ps->n - 1; i >= 0; i--) {
		struct tsr_piece p = ps->v[i];
		if (!tsr__box_overlap(p.box, *s))
			continue;
		ps->v[i] = ps->v[--ps->n];
		if (!box_inside(&p.box, s))
			piece_subtract(ps, p, s);   /* cannot fail: room reserved */
	}
	n->piece_hint = ps->n;
	piece_push(ps, *s, n, seq);   /* cannot fail: room reserved */
	if (ps->n > TSR_MAX_PIECES)
		return collapse(n->region->root->nodes + n->field);
	return TSR_OK;
}

/* ------------------------------------------------------------------ host access */

int tsr__coh_acquire(struct tsr_node *n, int write, struct tsr_deps *held)
{
	tsr__deps_reset(held);
	int rc = tsr__coh_deps(n, write, held);
	if (rc) {
		held->n = 0;   /* nothing acquired yet */
		return rc;
	}
	/* the tokens first, without moving data: the host then holds them until tsr_unmap, so no
	 * later writer of an overlapping view starts while it reads, and no reader while it writes */
	for (int i = 0; i < held->n; i++)
		if (starpu_data_acquire_on_node(held->v[i].h, STARPU_ACQUIRE_NO_NODE, held->v[i].mode)) {
			held->n = i;   /* release what was acquired; StarPU only fails on a handle it does not know */
			return TSR_ESTARPU;
		}
	return TSR_OK;
}

void tsr__coh_release(struct tsr_deps *held)
{
	for (int i = 0; i < held->n; i++)
		starpu_data_release_on_node(held->v[i].h, STARPU_ACQUIRE_NO_NODE);
	held->n = 0;
}

/* ------------------------------------------------------------------ going away */

/* Pieces written through nodes about to be unregistered (those `dying` selects) go to the root. */
void tsr__coh_retire(struct tsr_node *root, int (*dying)(const struct tsr_node *n, const void *arg), const void *arg)
{
	if (root->pieces)
		hand_to_root(root, dying, arg, "retiring a partition's pieces");
}

/* Unregister n's handles once every task using them is done (subregions: the memory is the root's). */
void tsr__coh_unregister(struct tsr_node *n)
{
	overlaps_free(n);
	if (n->h)
		starpu_data_unregister_submit(n->h);
	if (n->tok)
		starpu_data_unregister_submit(n->tok);
	n->h = NULL;
	n->tok = NULL;
}

void tsr__coh_shutdown(void)
{
	tsr__deps_free(&scratch);
}
