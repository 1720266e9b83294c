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
 * A write then makes n the writer of its box. The graph follows from those lists by the rule of
 * sequential consistency, applied per handle (order.c applies it itself in one process with one
 * memory node, StarPU does elsewhere): a read through a halo tile waits for the writers of the
 * tiles it overlaps and for nothing else, and no data is gathered anywhere.
 *
 * On one memory node (CPU only) views share memory, and a node's token is its own data handle.
 * A task that writes several nodes of one field (a copy into a tile's border pieces) leaves one
 * token for them all, its first node's, so that a later reader lists one handle per writing task
 * rather than one per piece (group tokens, below).
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
/* Several ranks: transfer views a piece's sends may use before later writers wait for them all. */
#define TSR_MAX_XR 4
/* Several ranks: transfer views kept per field before they are all handed back to the root. */
#define TSR_MAX_XVIEWS 4096

struct tsr_piece {
	tsr_box_t box;
	struct tsr_node *writer;
	struct tsr_node *tnode;               /* whose token carries the write's ordering: the writer, or a */
	uint64_t tgen;                        /* node its task wrote first (a group), while its wgen is tgen */
	uint64_t wseq;                        /* when the writer wrote it (several memory nodes) */
	uint64_t ranks;                       /* validity map: the ranks that hold its latest value */
	struct tsr_node *xr[TSR_MAX_XR];      /* several ranks: transfer views that send its data; a later */
	int nxr;                              /* writer waits for them as it waits for readers */
};

struct tsr_pieces {
	struct tsr_piece *v;
	int n, cap;
	uint64_t geom;                        /* generation of the pieces' boxes (nodes cache overlaps by it) */
};

/* Several ranks: the transfer views of one field (coherence's last section). */
struct tsr_xviews {
	struct tsr_node **v;
	int n, cap;
};

static uint64_t rank_bit(int r)
{
	return 1ULL << r;
}

static uint64_t every_rank(void)
{
	return tsr__dist.size >= 64 ? ~0ULL : rank_bit(tsr__dist.size) - 1;
}

static void xviews_free(struct tsr_node *root);

static uint64_t write_seq;               /* counts writes; only syncs compare it */
static uint64_t geom_seq;                /* counts changes of any field's piece boxes; never reset */
static int separate_tokens;              /* void tokens and syncs: several memory nodes, or asked for */

/* ------------------------------------------------------------------ handles and tokens */

/* TSR_COHERENCE=tokens runs the several-memory-nodes protocol (void tokens, sync tasks) on one
 * memory node too, so that a machine without GPUs tests its ordering; "shared" (the default) uses
 * it only where StarPU has more than one memory node. Read at tsr_init, before StarPU starts. */
int tsr__coh_init(void)
{
	enum { SHARED, TOKENS };
	int mode;
	write_seq = 0;
	int rc = tsr__env_choice("TSR_COHERENCE", "tsr_init", &mode);
	separate_tokens = rc == TSR_OK && mode == TOKENS;
	return rc;
}

/* Once StarPU runs: its memory nodes decide. */
void tsr__coh_start(void)
{
	if (starpu_memory_nodes_get_count() > 1)
		separate_tokens = 1;
	tsr__order_start(!separate_tokens && !tsr__dist.on && tsr__redux_ordered());
}

/* The box a node stands for: its region's, or a transfer view's own. */
static const tsr_box_t *node_box(const struct tsr_node *n)
{
	return n->xfer ? &n->xbox : &n->region->bounds;
}

/* A block handle over the part of a field's array (base, on node home) that starts off bytes in.
 * On an OpenCL node an array is a buffer object, not an address: the view is the buffer and a
 * byte offset in it, as StarPU's own block filters describe one; elsewhere its address says all. */
static void register_block_view(starpu_data_handle_t *h, int home, uintptr_t base, size_t off, uint32_t ldy,
                                uint32_t ldz, const uint32_t ext[3], size_t elem)
{
	struct starpu_block_interface b = {
		.id = STARPU_BLOCK_INTERFACE_ID,
		.ptr = base + off,
		.dev_handle = base + off,
		.offset = 0,
		.nx = ext[0],
		.ny = ext[1],
		.nz = ext[2],
		.ldy = ldy,
		.ldz = ldz,
		.elemsize = elem,
	};
	if (home >= 0 && starpu_node_get_kind((unsigned)home) == STARPU_OPENCL_RAM) {
		b.dev_handle = base;
		b.offset = off;
	}
	starpu_data_register(h, home, &b, &starpu_interface_block_ops);
}

/* Register n's view of the root's array, and its token where tokens are separate. */
static void register_view(struct tsr_node *n)
{
	struct tsr_region *root = n->region->root;
	const tsr_box_t *b = node_box(n);
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
	register_block_view(&n->h, root->home, (uintptr_t)root->storage[n->field], off * elem, ldy, ldz, ext, elem);
	/* out of memory for its state: the handle keeps StarPU's ordering, which is as correct */
	(void)tsr__order_track(n->h);
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

static int piece_push(struct tsr_pieces *ps, tsr_box_t box, struct tsr_node *writer, uint64_t wseq)
{
	struct tsr_piece p = {.box = box, .writer = writer, .tnode = writer, .wseq = wseq};
	return piece_push_copy(ps, &p, box);
}

/* A field starts as one piece, written by its root (its initial zeros, or whatever the root's
 * first writer leaves). */
int tsr__coh_root_init(struct tsr_node *root)
{
	root->pieces = calloc(1, sizeof *root->pieces);
	if (!root->pieces)
		return TSR_ENOMEM;
	root->pieces->geom = ++geom_seq;
	if (piece_push(root->pieces, root->region->bounds, root, 0))
		return TSR_ENOMEM;
	if (!tsr__dist.on)
		return TSR_OK;
	/* every rank starts with the same zeros: valid everywhere */
	root->valid = calloc(1, sizeof *root->valid);
	root->xviews = calloc(1, sizeof *root->xviews);
	if (!root->valid || !root->xviews)
		return TSR_ENOMEM;
	if (piece_push(root->valid, root->region->bounds, NULL, 0))
		return TSR_ENOMEM;
	root->valid->v[0].ranks = every_rank();
	return TSR_OK;
}

/* n's cache of the pieces it overlaps. */
static void overlaps_free(struct tsr_node *n)
{
	free(n->ovl);
	n->ovl = NULL;
	n->novl = n->capovl = 0;
	n->ovl_geom = 0;
}

/* After the root's handle is unregistered (its tasks are done); waits for its transfers. */
void tsr__coh_root_free(struct tsr_node *root)
{
	overlaps_free(root);
	xviews_free(root);
	if (root->valid) {
		free(root->valid->v);
		free(root->valid);
		root->valid = NULL;
	}
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

/* Append to ps the parts of piece p outside box s (at most two per dimension), keeping the rest
 * of what p says (writer, ranks, transfer views). */
static int piece_subtract(struct tsr_pieces *ps, struct tsr_piece p, const tsr_box_t *s)
{
	tsr_box_t rest = p.box;
	for (int d = 0; d < rest.dim; d++) {
		if (rest.lo[d] < s->lo[d]) {
			tsr_box_t below = rest;
			below.hi[d] = s->lo[d] - 1;
			if (piece_push_copy(ps, &p, below))
				return TSR_ENOMEM;
			rest.lo[d] = s->lo[d];
		}
		if (rest.hi[d] > s->hi[d]) {
			tsr_box_t above = rest;
			above.lo[d] = s->hi[d] + 1;
			if (piece_push_copy(ps, &p, above))
				return TSR_ENOMEM;
			rest.hi[d] = s->hi[d];
		}
	}
	return TSR_OK;
}

/* Make box s one piece saying what val says: pieces inside s go, pieces across it leave their
 * parts outside (appended, and outside s, so the downward walk never meets them). Returns the new
 * piece's index, or -1 when out of memory (then nothing changed). */
static int pieces_assign(struct tsr_pieces *ps, const tsr_box_t *s, const struct tsr_piece *val)
{
	int across = 0;
	for (int i = 0; i < ps->n; i++)
		across += tsr__box_overlap(ps->v[i].box, *s);
	/* room first: the walk below must not stop halfway, with parts of the field in no piece */
	if (pieces_reserve(ps, across * 2 * s->dim + 1))
		return -1;
	ps->geom = ++geom_seq;
	for (int i = ps->n - 1; i >= 0; i--) {
		struct tsr_piece p = ps->v[i];
		if (!tsr__box_overlap(p.box, *s))
			continue;
		ps->v[i] = ps->v[--ps->n];
		if (!box_inside(&p.box, s))
			piece_subtract(ps, p, s);   /* cannot fail: room reserved */
	}
	int idx = ps->n;
	piece_push_copy(ps, val, *s);   /* cannot fail: room reserved */
	return idx;
}

/* n's cached index of the piece that is exactly its box, if still so (the steady state of a
 * program that writes through the same tiles again and again): O(1) instead of a scan. */
static struct tsr_piece *exact_piece(struct tsr_node *n, struct tsr_pieces *ps)
{
	if (n->piece_hint >= 0 && n->piece_hint < ps->n && box_equal(&ps->v[n->piece_hint].box, node_box(n)))
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
		if (!tsr__box_overlap(ps->v[i].box, *node_box(n)))
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
		if (box_equal(&ps->v[i].box, node_box(n)))
			n->piece_hint = i;
	}
	n->ovl_geom = ps->geom;
	return TSR_OK;
}

/* ------------------------------------------------------------------ syncs (several memory nodes) */

/* Where no CPU worker runs, a no-op over host-homed data runs on a device worker with every buffer
 * kept on the host (StarPU's specific nodes: host_nodes is all STARPU_MAIN_RAM), so it gathers
 * and orders the data there as a CPU worker would. The most buffers a no-op lists: a sync lists a
 * writer per piece, a handover up to three handles per piece, and a field has at most
 * TSR_MAX_PIECES + 1 pieces before it collapses. */
#define TSR_NOOP_MAX_BUFFERS (4 * TSR_MAX_PIECES + 64)
static int host_nodes[TSR_NOOP_MAX_BUFFERS];
static struct starpu_codelet noop_on_host_cl = {
	.cpu_funcs = {tsr__noop},
	.cuda_funcs = {tsr__noop},
	.cuda_flags = {STARPU_CUDA_ASYNC},
	.opencl_funcs = {tsr__noop},
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.specific_nodes = 1,
	.dyn_nodes = host_nodes,
	.name = "tsr_sync",
};

/* Run task on a worker of memory node home (where the region's array is). */
static void place_on_home(struct starpu_task *task, int home)
{
	if (home == STARPU_MAIN_RAM) {
		if (tsr__rt.ncpu > 0)
			task->where = STARPU_CPU;
		else
			task->cl = &noop_on_host_cl;
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
	task->cl = &tsr__noop_cl;
	task->nbuffers = d->n;
	if (d->n > TSR_NOOP_MAX_BUFFERS) {
		task->destroy = 0;
		starpu_task_destroy(task);
		return tsr__err(TSR_ENOMEM, "%s: %d handles for one no-op task (at most %d)", what, d->n, TSR_NOOP_MAX_BUFFERS);
	}
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
	if (tsr__order_submit(task))
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

/* A write waits for the transfers that send the piece's current data, as for its readers. */
static int add_sends(struct tsr_deps *d, const struct tsr_piece *p)
{
	for (int k = 0; k < p->nxr; k++)
		if (deps_add(d, p->xr[k]->h, STARPU_RW))
			return TSR_ENOMEM;
	return TSR_OK;
}

/* Group tokens. A task that writes several nodes of one field (a copy into the border pieces of a
 * tile) makes the first one's token carry the ordering of all its writes: a later reader lists that
 * one token for all of them, instead of one handle per node. The token stands for the task only as
 * long as nothing else wrote through it; after that (wgen moved on) the piece's own writer's token
 * is listed instead, and a later writer lists both: the group's token for those who read through it
 * before, the writer's for the rest. */
static int group_current(const struct tsr_piece *p)
{
	return p->tnode == p->writer || p->tnode->wgen == p->tgen;
}

/* List node o's token in mode m for an access to n, unless n's own handle (the task's data buffer,
 * on one memory node) already orders it. */
static int add_token(struct tsr_deps *d, struct tsr_node *o, struct tsr_node *n, enum starpu_data_access_mode m)
{
	if (o == n && !n->tok)
		return TSR_OK;
	return deps_add(d, token(o), m);
}

/* What an access to n lists for piece p: its last write's token (read-only for a read); for a write
 * also the sends of p's data, and a stale group's token for those who read through it. */
static int piece_deps(struct tsr_deps *d, struct tsr_node *n, const struct tsr_piece *p, int write)
{
	enum starpu_data_access_mode m = write ? STARPU_RW : STARPU_R;
	int current = group_current(p);
	if (add_token(d, current ? p->tnode : p->writer, n, m))
		return TSR_ENOMEM;
	if (!write)
		return TSR_OK;
	if (!current && add_token(d, p->tnode, n, STARPU_RW))
		return TSR_ENOMEM;
	return add_sends(d, p);
}

int tsr__coh_deps(struct tsr_node *n, int write, struct tsr_deps *d)
{
	tsr__coh_register(n);
	struct tsr_pieces *ps = pieces_of(n);
	if (n->tok) {
		int rc = sync_node(n, ps);
		if (rc)
			return rc;
	}
	/* separate tokens: a writer takes its own token, which its readers and later writers list */
	if (write && n->tok && deps_add(d, n->tok, STARPU_RW))
		return TSR_ENOMEM;
	struct tsr_piece *ex = exact_piece(n, ps);
	if (ex) {
		/* the one piece over n's box: its writer (and, for a write, its sends) is all n waits for */
		return piece_deps(d, n, ex, write);
	}
	if (overlaps(n, ps))
		return TSR_ENOMEM;
	for (int j = 0; j < n->novl; j++)
		if (piece_deps(d, n, &ps->v[n->ovl[j]], write))
			return TSR_ENOMEM;
	return TSR_OK;
}

/* Whether piece p goes to the root: its writer, or the node whose token it names, is picked. */
static int handed(const struct tsr_piece *p, const struct tsr_node *root,
                  int (*pick)(const struct tsr_node *n, const void *arg), const void *arg)
{
	if (p->writer == root && p->tnode == root)
		return 0;
	return pick(p->writer, arg) || pick(p->tnode, arg);
}

/* Hand the pieces `handed` selects to the root, after one no-op task on the home node
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
		if (!handed(&ps->v[i], root, pick, arg))
			continue;
		rc = deps_add(&scratch, w->h, root->tok ? STARPU_R : STARPU_RW);
		if (!rc && root->tok)
			rc = deps_add(&scratch, w->tok, STARPU_RW);
		/* a group's token: its readers too */
		if (!rc && ps->v[i].tnode != w)
			rc = deps_add(&scratch, token(ps->v[i].tnode), STARPU_RW);
		if (!rc)
			rc = add_sends(&scratch, &ps->v[i]);
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
	/* The root's home copy now holds the handed pieces, and only those: root->synced stays, so
	 * that the root's next sync still flushes the pieces other live views wrote (taking it forward
	 * here lost those writes on a device: the H100's wrong answers). */
	uint64_t seq = ++write_seq;
	for (int i = 0; i < ps->n; i++)
		if (handed(&ps->v[i], root, pick, arg)) {
			ps->v[i].writer = root;
			ps->v[i].tnode = root;
			ps->v[i].wseq = seq;
			ps->v[i].nxr = 0;
		}
}

static int any_node(const struct tsr_node *n, const void *arg)
{
	(void)n;
	(void)arg;
	return 1;
}

/* Several ranks: the pieces forget the sends of their data, after a no-op on the root that waits
 * for them (later writers of the root then wait for it). */
static int drop_sends(struct tsr_node *root, const char *what)
{
	struct tsr_pieces *ps = root->pieces;
	tsr__deps_reset(&scratch);
	for (int i = 0; i < ps->n; i++)
		if (add_sends(&scratch, &ps->v[i]))
			return TSR_ENOMEM;
	if (scratch.n == 0)
		return TSR_OK;
	if (deps_add(&scratch, root->h, STARPU_RW))
		return TSR_ENOMEM;
	int rc = submit_noop(&scratch, root->region->home, what);
	if (rc)
		return rc;
	for (int i = 0; i < ps->n; i++)
		ps->v[i].nxr = 0;
	return TSR_OK;
}

/* Too many pieces: the root takes them all over, and the field becomes one piece. */
static int collapse(struct tsr_node *root)
{
	struct tsr_pieces *ps = root->pieces;
	hand_to_root(root, any_node, NULL, "collapse of a field's pieces");
	int rc = drop_sends(root, "collapse of a field's pieces");
	if (rc)
		return rc;
	/* every piece was handed: the root's home copy holds every write so far */
	root->synced = write_seq;
	ps->n = 0;
	ps->geom = ++geom_seq;
	return piece_push(ps, root->region->bounds, root, root->synced);
}

int tsr__coh_wrote(struct tsr_node *n, struct tsr_node *group)
{
	struct tsr_pieces *ps = pieces_of(n);
	uint64_t seq = ++write_seq;
	n->synced = seq;
	n->wgen++;
	if (!group)
		group = n;
	struct tsr_piece *ex = exact_piece(n, ps);
	if (ex) {
		ex->writer = n;
		ex->tnode = group;
		ex->tgen = group->wgen;
		ex->wseq = seq;
		ex->nxr = 0;
		return TSR_OK;
	}
	struct tsr_piece val = {.writer = n, .tnode = group, .tgen = group->wgen, .wseq = seq};
	int idx = pieces_assign(ps, node_box(n), &val);
	if (idx < 0)
		return TSR_ENOMEM;
	n->piece_hint = idx;
	if (ps->n > TSR_MAX_PIECES)
		return collapse(n->region->root->nodes + n->field);
	return TSR_OK;
}

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
 * view is added to the piece's sends, which a later writer waits for as it waits for readers. */

/* The validity map matters only where there is somewhere else to be valid: one rank (TSR_MPI=1
 * without mpirun, or mpirun -np 1) holds everything and skips it. */
static int several_ranks(void)
{
	return tsr__dist.on && tsr__dist.size > 1;
}

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
		if (box_equal(&xv->v[i]->xbox, b))
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
	x->xfer = 1;
	x->xbox = *b;
	x->piece_hint = -1;
	register_view(x);
	xv->v[xv->n++] = x;
	return x;
}

static int is_xview(const struct tsr_node *n, const void *arg)
{
	(void)arg;
	return n->xfer;
}

/* Unregister root's transfer views (their transfers done) and forget them. */
static void xviews_free(struct tsr_node *root)
{
	struct tsr_xviews *xv = root->xviews;
	if (!xv)
		return;
	for (int i = 0; i < xv->n; i++) {
		overlaps_free(xv->v[i]);
		starpu_data_unregister(xv->v[i]->h);
		free(xv->v[i]);
	}
	free(xv->v);
	free(xv);
	root->xviews = NULL;
}

/* Too many transfer views (boxes that keep changing): the root takes over what they wrote and
 * what they send, and they go. */
static int xviews_flush(struct tsr_node *root)
{
	hand_to_root(root, is_xview, NULL, "handing transfer views back");
	int rc = drop_sends(root, "handing transfer views back");
	if (rc)
		return rc;
	root->pieces->geom = ++geom_seq;
	struct tsr_xviews *xv = root->xviews;
	for (int i = 0; i < xv->n; i++) {
		overlaps_free(xv->v[i]);
		starpu_data_unregister_submit(xv->v[i]->h);
		free(xv->v[i]);
	}
	xv->n = 0;
	return TSR_OK;
}

static int remember_send(struct tsr_piece *p, struct tsr_node *x)
{
	for (int k = 0; k < p->nxr; k++)
		if (p->xr[k] == x)
			return 0;
	p->xr[p->nxr++] = x;
	return 1;
}

/* This rank sends box b of root's field to rank dst: after the box's writers, through b's view. */
static int send_piece(struct tsr_node *root, const tsr_box_t *b, int dst, int64_t tag)
{
	struct tsr_node *x = xview(root, b);
	struct tsr_pieces *ps = root->pieces;
	if (!x || overlaps(x, ps))
		return TSR_ENOMEM;
	tsr__deps_reset(&scratch);
	for (int j = 0; j < x->novl; j++) {
		struct tsr_piece *p = &ps->v[x->ovl[j]];
		if (p->writer == x)
			continue;   /* received here earlier: the view itself orders the send */
		if (piece_deps(&scratch, x, p, 0))
			return TSR_ENOMEM;
		int known = 0;
		for (int k = 0; k < p->nxr; k++)
			known |= p->xr[k] == x;
		if (!known && p->nxr == TSR_MAX_XR) {
			/* no room for one more send: this one waits for the earlier ones, and stands for them */
			if (add_sends(&scratch, p))
				return TSR_ENOMEM;
			p->nxr = 0;
		}
	}
	int rc = TSR_OK;
	if (scratch.n) {
		if (deps_add(&scratch, x->h, STARPU_W))
			return TSR_ENOMEM;
		if ((rc = submit_noop(&scratch, root->region->home, "a transfer's send")))
			return rc;
	}
	for (int j = 0; j < x->novl; j++)
		if (ps->v[x->ovl[j]].writer != x)
			remember_send(&ps->v[x->ovl[j]], x);
	size_t bytes = (size_t)tsr_box_volume(*b) * root->region->fields[root->field].size;
	if (tsr__dist_send(x->h, dst, tag, bytes))
		return tsr__err(TSR_ESTARPU, "field '%s' of '%s': starpu_mpi_isend_detached to rank %d failed",
		                root->region->fields[root->field].name, root->region->name, dst);
	return TSR_OK;
}

/* This rank receives box b of root's field from rank src: after the box's readers and writers;
 * the view then is the box's writer here. */
static int recv_piece(struct tsr_node *root, const tsr_box_t *b, int src, int64_t tag)
{
	struct tsr_node *x = xview(root, b);
	struct tsr_pieces *ps = root->pieces;
	if (!x || overlaps(x, ps))
		return TSR_ENOMEM;
	struct tsr_piece *ex = exact_piece(x, ps);
	if (!(ex && ex->writer == x && ex->nxr == 0)) {
		/* the box has other writers or sends here: one no-op waits for them and their readers */
		tsr__deps_reset(&scratch);
		for (int j = 0; j < x->novl; j++)
			if (piece_deps(&scratch, x, &ps->v[x->ovl[j]], 1))
				return TSR_ENOMEM;
		if (deps_add(&scratch, x->h, STARPU_RW))
			return TSR_ENOMEM;
		int rc = submit_noop(&scratch, root->region->home, "a transfer's receive");
		if (rc)
			return rc;
	}
	if (tsr__dist_recv(x->h, src, tag))
		return tsr__err(TSR_ESTARPU, "field '%s' of '%s': starpu_mpi_irecv_detached from rank %d failed",
		                root->region->fields[root->field].name, root->region->name, src);
	struct tsr_piece val = {.writer = x, .tnode = x, .wseq = ++write_seq};
	int idx = pieces_assign(ps, b, &val);
	if (idx < 0)
		return TSR_ENOMEM;
	x->piece_hint = idx;
	if (ps->n > TSR_MAX_PIECES)
		return collapse(root);
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
		if ((p->ranks & rank_bit(dst)) || !tsr_box_intersect(p->box, *b, &in))
			continue;
		TSR_GROW(moves, nmoves, capmoves, 16);
		moves[nmoves].box = in;
		moves[nmoves].src = lowest_rank(p->ranks);
		moves[nmoves].dst = dst;
		moves[nmoves].ranks = p->ranks | rank_bit(dst);
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
			rc = send_piece(root, &mv->box, mv->dst, tag);
		else if (mv->dst == tsr__dist.rank)
			rc = recv_piece(root, &mv->box, mv->src, tag);
		if (rc)
			return rc;
		struct tsr_piece val = {.ranks = mv->ranks};
		if (pieces_assign(vm, &mv->box, &val) < 0)
			return TSR_ENOMEM;
	}
	return TSR_OK;
}

static int make_valid(struct tsr_node *root, const tsr_box_t *b, int rank)
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
static int valid_collapse(struct tsr_node *root)
{
	int rc = make_valid(root, &root->region->bounds, TSR_ALL_RANKS);
	if (rc)
		return rc;
	root->valid->n = 0;
	root->valid->geom = ++geom_seq;
	if (piece_push(root->valid, root->region->bounds, NULL, 0))
		return TSR_ENOMEM;
	root->valid->v[0].ranks = every_rank();
	return TSR_OK;
}

int tsr__coh_access(struct tsr_node *n, int reads, int write, int rank, struct tsr_deps *d)
{
	if (several_ranks() && reads) {
		struct tsr_node *root = n->region->root->nodes + n->field;
		int rc = make_valid(root, node_box(n), rank);
		if (!rc && root->xviews->n > TSR_MAX_XVIEWS)
			rc = xviews_flush(root);
		if (rc)
			return rc;
	}
	if (!tsr__here(rank))
		return TSR_OK;
	return tsr__coh_deps(n, write, d);
}

int64_t tsr__coh_missing(struct tsr_node *n, int rank)
{
	if (!several_ranks())
		return 0;
	struct tsr_node *root = n->region->root->nodes + n->field;
	struct tsr_pieces *vm = root->valid;
	int64_t points = 0;
	for (int i = 0; i < vm->n; i++) {
		tsr_box_t in;
		if (!(vm->v[i].ranks & rank_bit(rank)) && tsr_box_intersect(vm->v[i].box, *node_box(n), &in))
			points += tsr_box_volume(in);
	}
	return points * (int64_t)root->region->fields[root->field].size;
}

int tsr__coh_wrote_by(struct tsr_node *n, struct tsr_node *group, int rank)
{
	if (tsr__here(rank)) {
		int rc = tsr__coh_wrote(n, group);
		if (rc)
			return rc;
	}
	if (!several_ranks())
		return TSR_OK;
	struct tsr_node *root = n->region->root->nodes + n->field;
	struct tsr_pieces *vm = root->valid;
	uint64_t ranks = rank == TSR_ALL_RANKS ? every_rank() : rank_bit(rank);
	/* the steady state (the same tiles written again, none of them sent since): one piece is
	 * exactly n's box, and only its ranks change; no scan of the map */
	int h = n->vhint;
	if (h >= 0 && h < vm->n && box_equal(&vm->v[h].box, node_box(n))) {
		vm->v[h].ranks = ranks;
		return TSR_OK;
	}
	struct tsr_piece val = {.ranks = ranks};
	int idx = pieces_assign(vm, node_box(n), &val);
	if (idx < 0)
		return TSR_ENOMEM;
	n->vhint = idx;
	if (root->valid->n > TSR_MAX_PIECES)
		return valid_collapse(root);
	return TSR_OK;
}

/* ------------------------------------------------------------------ host access */

int tsr__coh_acquire(struct tsr_node *n, int reads, int write, struct tsr_deps *held)
{
	tsr__deps_reset(held);
	int rc = tsr__coh_access(n, reads, write, TSR_ALL_RANKS, held);
	if (rc) {
		held->n = 0;   /* nothing acquired yet */
		return rc;
	}
	/* where Tessera orders the views' tasks (order.c), StarPU's acquire does not wait for them:
	 * first wait for what the host's access waits for, the tokens listed and n's own handle */
	struct tsr_dep own = {n->h, !write ? STARPU_R : reads ? STARPU_RW : STARPU_W};
	if ((rc = tsr__order_wait(held, &own))) {
		held->n = 0;
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
	if (n->h) {
		tsr__order_untrack(n->h);
		starpu_data_unregister_submit(n->h);
	}
	if (n->tok)
		starpu_data_unregister_submit(n->tok);
	n->h = NULL;
	n->tok = NULL;
}

void tsr__coh_shutdown(void)
{
	tsr__deps_free(&scratch);
	free(moves);
	moves = NULL;
	nmoves = capmoves = 0;
}
