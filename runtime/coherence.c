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
 * writers), read-write for a write (so it also waits for every reader that listed them since;
 * where order.c orders the tasks, a write waits so without becoming the token's writer, see
 * TSR_WAIT_AS_WRITE, and writes of disjoint parts of one piece do not wait for each other).
 * A write then makes n the writer of its box. The graph follows from those lists by the rule of
 * sequential consistency, applied per handle (order.c applies it itself with one memory node, but
 * to the transfer views of several ranks; StarPU does elsewhere): a read through a halo tile waits
 * for the writers of the tiles it overlaps and for nothing else, and no data is gathered anywhere.
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
#include "coherence.h"

uint64_t tsr__write_seq; /* counts writes; only syncs compare it */
/* counts changes of any field's pieces: writers or boxes (a replay compares it, replay.c) */
uint64_t tsr__coh_changes;

/* void tokens and syncs: several memory nodes, or asked for */
static int separate_tokens;

/* ------------------------------------------------------------------ handles and tokens */

/* TSR_COHERENCE=tokens runs the several-memory-nodes protocol (void tokens, sync tasks) on one
 * memory node too, so that a machine without GPUs tests its ordering; "shared" (the default) uses
 * it only where StarPU has more than one memory node. Read at tsr_init, before StarPU starts. */
int tsr__coh_init(void)
{
	enum { SHARED, TOKENS };
	int mode;

	tsr__write_seq = 0;
	int rc = tsr__env_choice("TSR_COHERENCE", "tsr_init", &mode);
	separate_tokens = rc == TSR_OK && mode == TOKENS;
	return rc;
}

/* Whether the views' tasks are ordered through void tokens: asked for (TSR_COHERENCE=tokens), or
 * several memory nodes (known once tsr__coh_start has run). */
int tsr__coh_tokens(void)
{
	return separate_tokens;
}

/* Once StarPU runs: its memory nodes decide. */
void tsr__coh_start(void)
{
	if (starpu_memory_nodes_get_count() > 1)
		separate_tokens = 1;
	tsr__order_start(!separate_tokens && tsr__redux_ordered());
}

/* A block handle over the part of a field's array (base, on node home) that starts off bytes in.
 * On an OpenCL node an array is a buffer object, not an address: the view is the buffer and a
 * byte offset in it, as StarPU's own block filters describe one; elsewhere its address says all. */
static void register_block_view(starpu_data_handle_t *h, int home, uintptr_t base, size_t off,
				uint32_t ldy, uint32_t ldz, const uint32_t ext[3], size_t elem,
				struct starpu_data_interface_ops *ops)
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

	starpu_data_register(h, home, &b, ops);
}

/* Register n's view of the root's array, and its token where tokens are separate. */
void tsr__register_view(struct tsr_node *n)
{
	struct tsr_region *root = n->region->root;
	const tsr_box_t *b = tsr__node_box(n);
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
	/* a transfer view's interface differs from a block's by its id only: its id gives it
	 * Tessera's MPI datatype, which sends the sender's poison marks with the values (xfer.c) */
	register_block_view(&n->h, root->home, (uintptr_t)root->storage[n->field], off * elem, ldy,
			    ldz, ext, elem,
			    n->is_transfer ? tsr__xview_ops() : &starpu_interface_block_ops);
	if (n->is_transfer)
		tsr__xview_attach(n);

	/* A transfer view keeps StarPU's ordering: StarPU-MPI's sends and receives go through its
	 * handle, and order the tasks around them by its sequential consistency. Out of memory for
	 * a view's state: the handle keeps StarPU's ordering, which is as correct. */
	if (!n->is_transfer)
		(void)tsr__order_track(n->h);
}

void tsr__coh_register(struct tsr_node *n)
{
	if (!n->h)
		tsr__register_view(n);
	if (separate_tokens && !n->token)
		starpu_void_data_register(&n->token);
}

/* The handle that carries n's ordering. */
static starpu_data_handle_t token(struct tsr_node *n)
{
	return n->token ? n->token : n->h;
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

/* Add h in mode m once; a handle listed read-only and read-write is read-write. A wait as a write
 * is kept apart from the handle's other modes (a read of it stays a read), and so is a wait as a
 * read (the two waits of one handle: a write's wait waits for more). */
int tsr__deps_add(struct tsr_deps *d, starpu_data_handle_t h, enum starpu_data_access_mode m)
{
	int waits = tsr__dep_waits_only(m);

	for (int i = 0; i < d->n; i++)
		if (d->v[i].h == h && tsr__dep_waits_only(d->v[i].mode) == waits &&
		    (!waits || d->v[i].mode == m)) {
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

/* ----------------------------------------------------------------- syncs (several memory nodes) */

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

/* A sync's node in the task graph: it reads the pieces the node's box gathers, and the task
 * whose access needs it follows. -1 if none. */
static int dag_sync(const struct tsr_node *n, int pdim, const int64_t point[3])
{
	if (!n || !tsr__dag_on)
		return -1;

	int id = tsr__dag_sync(pdim, point);
	tsr__dag_access(id, n->region, n->field, TSR_READ);
	return id;
}

/* One no-op task on the home node over the listed handles. */
int tsr__submit_noop(struct tsr_deps *d, int home, const char *what, const struct tsr_node *sync)
{
	struct starpu_task *task = starpu_task_create();
	task->cl = &tsr__noop_cl;
	int nbuf = tsr__deps_nbuffers(d);
	task->nbuffers = nbuf;

	if (d->n > TSR_NOOP_MAX_BUFFERS) {
		task->destroy = 0;
		starpu_task_destroy(task);
		return tsr__err(TSR_ENOMEM, "%s: %d handles for one no-op task (at most %d)", what,
				d->n, TSR_NOOP_MAX_BUFFERS);
	}

	if (nbuf > STARPU_NMAXBUFS) {
		/* StarPU frees these with the task */
		task->dyn_handles = malloc((size_t)nbuf * sizeof(starpu_data_handle_t));
		task->dyn_modes = malloc((size_t)nbuf * sizeof(enum starpu_data_access_mode));
		if (!task->dyn_handles || !task->dyn_modes) {
			task->destroy = 0;
			starpu_task_destroy(task);
			return tsr__err(TSR_ENOMEM, "%s: out of memory", what);
		}
	}

	for (int i = 0, b = 0; i < d->n; i++) {
		if (tsr__dep_waits_only(d->v[i].mode))
			continue;
		STARPU_TASK_SET_HANDLE(task, d->v[i].h, b);
		STARPU_TASK_SET_MODE(task, d->v[i].mode, b);
		b++;
	}

	place_on_home(task, home);
	int64_t point[3] = {0, 0, 0};
	int pdim = sync ? tsr__region_point(sync->region, point) : 0;
	struct tsr_obs_rec *obs =
		tsr__obs_internal(task, "tsr_sync", pdim, point, dag_sync(sync, pdim, point));
	int rc = tsr__order_submit(task, d);
	if (rc) {
		tsr__obs_drop(obs);
		if (rc == TSR_ENOMEM)
			return tsr__err_of(rc, "%s", what);
		return tsr__err(rc, "%s: starpu_task_submit failed", what);
	}
	return TSR_OK;
}

struct tsr_deps tsr__coh_scratch; /* sync, retire and transfer lists (one host thread) */

/* Bring n's home copy up to date with what other views wrote over its box since it was last
 * brought up to date, and drop n's other copies. */
static int sync_node(struct tsr_node *n, struct tsr_pieces *ps)
{
	tsr__deps_reset(&tsr__coh_scratch);
	if (tsr__overlaps(n, ps))
		return tsr__err(TSR_ENOMEM, "field '%s' of '%s': out of memory",
				n->region->fields[n->field].name, n->region->name);

	for (int j = 0; j < n->noverlaps; j++) {
		struct tsr_piece *p = &ps->v[n->overlaps[j]];
		if (p->writer != n && p->written_at > n->synced)
			if (tsr__deps_add(&tsr__coh_scratch, p->writer->h, STARPU_R))
				return tsr__err(TSR_ENOMEM, "field '%s' of '%s': out of memory",
						n->region->fields[n->field].name, n->region->name);
	}

	n->synced = tsr__write_seq;
	if (tsr__coh_scratch.n == 0)
		return TSR_OK;

	if (tsr__deps_add(&tsr__coh_scratch, n->h, STARPU_W))
		return tsr__err(TSR_ENOMEM, "field '%s' of '%s': out of memory",
				n->region->fields[n->field].name, n->region->name);
	return tsr__submit_noop(&tsr__coh_scratch, n->region->root->home,
				"sync of a subregion's copies", n);
}

/* ------------------------------------------------------------------ accesses */

/* A write waits for the transfers that send the piece's current data, as for its readers. */
int tsr__add_sends(struct tsr_deps *d, const struct tsr_piece *p)
{
	for (int k = 0; k < p->nsends; k++)
		if (tsr__deps_add(d, p->sends[k]->h, STARPU_RW))
			return TSR_ENOMEM;
	return TSR_OK;
}

/* Group tokens. A task that writes several nodes of one field (a copy into the border pieces of a
 * tile) makes the first one's token carry the ordering of all its writes: a later reader lists that
 * one token for all of them, instead of one handle per node. The token stands for the task only as
 * long as nothing else wrote through it; after that (write_gen moved on) the piece's own writer's
 * token is listed instead, and a later writer lists both: the group's token for those who read
 * through it before, the writer's for the rest. */
static int group_current(const struct tsr_piece *p)
{
	return p->token_node == p->writer || p->token_node->write_gen == p->token_gen;
}

/* List node o's token for an access to n (a write when write is set), unless n's own handle (the
 * task's data buffer, on one memory node) already orders it. Where Tessera orders its tasks, a
 * write waits for the token's readers as a write (TSR_WAIT_AS_WRITE) and a read waits for its
 * writer as a read (TSR_WAIT_AS_READ), neither a buffer of the task; where StarPU does, the token
 * is listed read-write or read-only. */
static int add_token(struct tsr_deps *d, struct tsr_node *o, struct tsr_node *n, int write)
{
	if (o == n && !n->token)
		return TSR_OK;

	starpu_data_handle_t h = token(o);
	int tracked = tsr__order_tracks(h);
	enum starpu_data_access_mode w = tracked ? TSR_WAIT_AS_WRITE : STARPU_RW;
	enum starpu_data_access_mode r = tracked ? TSR_WAIT_AS_READ : STARPU_R;
	return tsr__deps_add(d, h, write ? w : r);
}

/* What an access to n lists for piece p: its last write's token (read-only for a read); for a write
 * also the sends of p's data, and a stale group's token for those who read through it. */
int tsr__piece_deps(struct tsr_deps *d, struct tsr_node *n, const struct tsr_piece *p, int write)
{
	int current = group_current(p);

	if (add_token(d, current ? p->token_node : p->writer, n, write))
		return TSR_ENOMEM;

	if (!write)
		return TSR_OK;
	if (!current && add_token(d, p->token_node, n, 1))
		return TSR_ENOMEM;
	return tsr__add_sends(d, p);
}

int tsr__coh_deps(struct tsr_node *n, int write, struct tsr_deps *d)
{
	tsr__coh_register(n);
	struct tsr_pieces *ps = tsr__pieces_of(n);
	if (n->token) {
		int rc = sync_node(n, ps);
		if (rc)
			return rc;
	}

	/* separate tokens: a writer takes its own token, which its readers and later writers
	 * list */
	if (write && n->token && tsr__deps_add(d, n->token, STARPU_RW))
		return TSR_ENOMEM;

	struct tsr_piece *ex = tsr__exact_piece(n, ps);
	if (ex) {
		/* the one piece over n's box: its writer (and, for a write, its sends) is all n
		 * waits for */
		return tsr__piece_deps(d, n, ex, write);
	}

	if (tsr__overlaps(n, ps))
		return TSR_ENOMEM;
	for (int j = 0; j < n->noverlaps; j++)
		if (tsr__piece_deps(d, n, &ps->v[n->overlaps[j]], write))
			return TSR_ENOMEM;
	return TSR_OK;
}

/* Whether piece p goes to the root: its writer, or the node whose token it names, is picked. */
static int handed(const struct tsr_piece *p, const struct tsr_node *root,
		  int (*pick)(const struct tsr_node *n, const void *arg), const void *arg)
{
	if (p->writer == root && p->token_node == root)
		return 0;
	return pick(p->writer, arg) || pick(p->token_node, arg);
}

/* Hand the pieces `handed` selects to the root, after one no-op task on the home node
 * that waits for those writers and their readers (read-write on their tokens, and on the root's
 * for the root's readers); on several memory nodes it reads the writers' data there, so that it is
 * home before their handles go. If that task cannot be made, everything is waited for instead:
 * the handover itself never fails, so no piece is left naming a node about to be freed. */
void tsr__hand_to_root(struct tsr_node *root,
		       int (*pick)(const struct tsr_node *n, const void *arg), const void *arg,
		       const char *what)
{
	struct tsr_pieces *ps = root->pieces;
	int rc = TSR_OK;
	tsr__deps_reset(&tsr__coh_scratch);

	for (int i = 0; i < ps->n && !rc; i++) {
		struct tsr_node *w = ps->v[i].writer;
		if (!handed(&ps->v[i], root, pick, arg))
			continue;

		rc = tsr__deps_add(&tsr__coh_scratch, w->h, root->token ? STARPU_R : STARPU_RW);
		if (!rc && root->token)
			rc = tsr__deps_add(&tsr__coh_scratch, w->token, STARPU_RW);

		/* a group's token: its readers too */
		if (!rc && ps->v[i].token_node != w)
			rc = tsr__deps_add(&tsr__coh_scratch, token(ps->v[i].token_node),
					   STARPU_RW);
		if (!rc)
			rc = tsr__add_sends(&tsr__coh_scratch, &ps->v[i]);
	}

	if (tsr__coh_scratch.n == 0 && !rc)
		return;

	if (!rc)
		rc = tsr__deps_add(&tsr__coh_scratch, root->h, STARPU_RW);
	if (!rc && root->token)
		rc = tsr__deps_add(&tsr__coh_scratch, root->token, STARPU_RW);
	if (!rc)
		rc = tsr__submit_noop(&tsr__coh_scratch, root->region->home, what, NULL);
	if (rc)
		tsr__wait_all();

	/* The root's home copy now holds the handed pieces, and only those: root->synced stays, so
	 * that the root's next sync still flushes the pieces other live views wrote (taking it
	 * forward here lost those writes on a device: the H100's wrong answers). */
	uint64_t seq = ++tsr__write_seq;
	tsr__coh_changes++;
	for (int i = 0; i < ps->n; i++)
		if (handed(&ps->v[i], root, pick, arg)) {
			ps->v[i].writer = root;
			ps->v[i].token_node = root;
			ps->v[i].written_at = seq;
			ps->v[i].nsends = 0;
			ps->v[i].nordered = 0;
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
int tsr__drop_sends(struct tsr_node *root, const char *what)
{
	struct tsr_pieces *ps = root->pieces;
	tsr__deps_reset(&tsr__coh_scratch);

	for (int i = 0; i < ps->n; i++)
		if (tsr__add_sends(&tsr__coh_scratch, &ps->v[i]))
			return TSR_ENOMEM;

	if (tsr__coh_scratch.n == 0)
		return TSR_OK;

	if (tsr__deps_add(&tsr__coh_scratch, root->h, STARPU_RW))
		return TSR_ENOMEM;
	int rc = tsr__submit_noop(&tsr__coh_scratch, root->region->home, what, NULL);
	if (rc)
		return rc;

	for (int i = 0; i < ps->n; i++)
		ps->v[i].nsends = 0;
	return TSR_OK;
}

/* Too many pieces: the root takes them all over, and the field becomes one piece. */
int tsr__collapse(struct tsr_node *root)
{
	struct tsr_pieces *ps = root->pieces;

	tsr__hand_to_root(root, any_node, NULL, "collapse of a field's pieces");
	int rc = tsr__drop_sends(root, "collapse of a field's pieces");
	if (rc)
		return rc;

	/* every piece was handed: the root's home copy holds every write so far */
	root->synced = tsr__write_seq;
	tsr__coh_changes++;
	ps->n = 0;
	ps->geom = ++tsr__geom_seq;
	return tsr__piece_push(ps, root->region->bounds, root, root->synced);
}

/* The sends of p that its new writer listed read-write (tsr__piece_deps), kept as ordered. */
static void keep_ordered(struct tsr_piece *p, int listed)
{
	p->nordered = listed ? p->nsends : 0;
	memcpy(p->ordered, p->sends, (size_t)p->nordered * sizeof *p->ordered);
}

int tsr__coh_wrote(struct tsr_node *n, struct tsr_node *group, int listed)
{
	struct tsr_pieces *ps = tsr__pieces_of(n);
	uint64_t seq = ++tsr__write_seq;

	tsr__coh_changes++;
	n->synced = seq;
	n->write_gen++;
	if (!group)
		group = n;

	struct tsr_piece *ex = tsr__exact_piece(n, ps);
	if (ex) {
		ex->writer = n;
		ex->token_node = group;
		ex->token_gen = group->write_gen;
		ex->written_at = seq;
		keep_ordered(ex, listed);
		ex->nsends = 0;
		return TSR_OK;
	}

	struct tsr_piece val = {.writer = n,
				.token_node = group,
				.token_gen = group->write_gen,
				.written_at = seq};
	int idx = tsr__pieces_assign(ps, tsr__node_box(n), &val);
	if (idx < 0)
		return TSR_ENOMEM;
	n->piece_hint = idx;

	if (ps->n > TSR_MAX_PIECES)
		return tsr__collapse(n->region->root->nodes + n->field);
	return TSR_OK;
}

/* ------------------------------------------------------------------ going away */

/* Pieces written through nodes about to be unregistered (those `dying` selects) go to the root. */
void tsr__coh_retire(struct tsr_node *root, int (*dying)(const struct tsr_node *n, const void *arg),
		     const void *arg)
{
	if (root->pieces)
		tsr__hand_to_root(root, dying, arg, "retiring a partition's pieces");
}

/* Unregister n's handles once every task using them is done (subregions: the memory is the
 * root's). */
void tsr__coh_unregister(struct tsr_node *n)
{
	tsr__overlaps_free(n);

	if (n->h) {
		tsr__order_untrack(n->h);
		starpu_data_unregister_submit(n->h);
	}
	if (n->token)
		starpu_data_unregister_submit(n->token);

	n->h = NULL;
	n->token = NULL;
}

/* A field starts as one piece, written by its root (its initial zeros, or whatever the root's
 * first writer leaves). */
int tsr__coh_pieces_init(struct tsr_node *root)
{
	root->pieces = calloc(1, sizeof *root->pieces);
	if (!root->pieces)
		return TSR_ENOMEM;

	root->pieces->geom = ++tsr__geom_seq;
	tsr__coh_changes++;
	return tsr__piece_push(root->pieces, root->region->bounds, root, 0);
}

void tsr__coh_pieces_free(struct tsr_node *root)
{
	if (!root->pieces)
		return;
	tsr__coh_changes++;
	free(root->pieces->v);
	free(root->pieces);
	root->pieces = NULL;
}

/* ------------------------------------------------------------------ replay's precondition */

/* What the dependence analysis reads from a root's field: each piece's box, its last writer, the
 * node whose token stands for that write and whether that token is current (group tokens). Nodes
 * are named by their region's id, which no later region reuses (a freed node's memory may be). */
static void piece_print(const struct tsr_piece *p, struct tsr_piece_print *out)
{
	out->box = p->box;
	out->writer = p->writer->region->id;
	out->token = p->token_node->region->id;
	out->current = group_current(p);
}

int tsr__coh_print(struct tsr_node *root, struct tsr_piece_print *out, int max)
{
	struct tsr_pieces *ps = root->pieces;
	if (!ps)
		return 0;

	for (int i = 0; i < ps->n && i < max; i++)
		piece_print(&ps->v[i], &out[i]);
	return ps->n;
}

void tsr__coh_local_shutdown(void)
{
	tsr__deps_free(&tsr__coh_scratch);
}
