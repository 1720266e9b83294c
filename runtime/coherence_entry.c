/* coherence_entry.c: the entry points of coherence that the floors above call (region.c, fold.c,
 * launch.c, hostaccess.c): each adds the ranks' part (coherence_ranks.c, coherence_sym.c) to what
 * coherence.c does in one process; with one rank each is coherence.c's call. */
#include <stdint.h>
#include <stdlib.h>
#include "internal.h"
#include "coherence.h"

/* ------------------------------------------------------------------ tasks' accesses */

/* Beyond 64 ranks a piece's rank set cannot name one rank (tsr__rank_holds): a write on one rank
 * must take the structured path. */
static int one_rank_beyond_sets(const struct tsr_node *n, int rank)
{
	if (rank == TSR_ALL_RANKS || tsr__dist.size <= 64)
		return TSR_OK;

	const struct tsr_region *r = n->region->root;
	return tsr__err(TSR_EINVAL,
			"field '%s' of region '%s': on %d ranks (more than 64), a field can be "
			"written on one rank only by an index launch through a disjoint partition "
			"(its validity cannot be kept piece by piece)",
			r->fields[n->field].name, r->name, tsr__dist.size);
}

int tsr__coh_access(struct tsr_node *n, int reads, int write, int rank, struct tsr_deps *d)
{
	if (write && one_rank_beyond_sets(n, rank))
		return TSR_EINVAL; /* before the task is submitted anywhere */

	if (tsr__coh_several_ranks() && reads) {
		struct tsr_node *root = n->region->root->nodes + n->field;
		int rc = tsr__coh_sym_flatten(root); /* told piece by piece from here on */
		if (!rc)
			rc = tsr__coh_make_valid(root, tsr__node_box(n), rank);
		if (!rc && root->xviews->n > TSR_MAX_XVIEWS)
			rc = tsr__coh_xviews_flush(root);
		if (rc)
			return rc;
	}

	if (!tsr__here(rank))
		return TSR_OK;
	return tsr__coh_deps(n, write, d);
}

int64_t tsr__coh_missing(struct tsr_node *n, int rank)
{
	if (!tsr__coh_several_ranks())
		return 0;

	struct tsr_node *root = n->region->root->nodes + n->field;
	if (tsr__coh_sym_flatten(root))
		return INT64_MAX / 2; /* cannot tell: as if everything had to come */

	struct tsr_pieces *vm = root->valid;
	int64_t points = 0;

	for (int i = 0; i < vm->n; i++) {
		tsr_box_t in;
		if (!tsr__rank_holds(vm->v[i].ranks, rank) &&
		    tsr_box_intersect(vm->v[i].box, *tsr__node_box(n), &in))
			points += tsr_box_volume(in);
	}

	return points * (int64_t)root->region->fields[root->field].size;
}

int tsr__coh_wrote_by(struct tsr_node *n, struct tsr_node *group, int rank)
{
	if (one_rank_beyond_sets(n, rank))
		return TSR_EINVAL; /* tsr__coh_access refused it already */

	if (tsr__here(rank)) {
		int rc = tsr__coh_wrote(n, group, 1);
		if (rc)
			return rc;
	}

	if (!tsr__coh_several_ranks())
		return TSR_OK;

	struct tsr_node *root = n->region->root->nodes + n->field;
	if (!tsr__coh_sym_overwritten(root, tsr__node_box(n))) {
		int rc = tsr__coh_sym_flatten(root);
		if (rc)
			return rc;
	}

	struct tsr_pieces *vm = root->valid;
	uint64_t ranks = rank == TSR_ALL_RANKS ? tsr__every_rank() : tsr__rank_bit(rank);

	/* the steady state (the same tiles written again, none of them sent since): one piece is
	 * exactly n's box, and only its ranks change; no scan of the map */
	int h = n->valid_hint;
	if (h >= 0 && h < vm->n && tsr__box_equal(&vm->v[h].box, tsr__node_box(n))) {
		vm->v[h].ranks = ranks;
		return TSR_OK;
	}

	struct tsr_piece val = {.ranks = ranks};
	int idx = tsr__pieces_assign(vm, tsr__node_box(n), &val);
	if (idx < 0)
		return TSR_ENOMEM;
	n->valid_hint = idx;

	if (root->valid->n > TSR_MAX_PIECES)
		return tsr__coh_valid_collapse(root);
	return TSR_OK;
}

/* ------------------------------------------------------------------ host access */

int tsr__coh_acquire(struct tsr_node *n, int reads, int write, struct tsr_deps *held)
{
	tsr__deps_reset(held);
	int rc = tsr__coh_access(n, reads, write, TSR_ALL_RANKS, held);
	if (rc) {
		held->n = 0; /* nothing acquired yet */
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
	 * later writer of an overlapping view starts while it reads, and no reader while it
	 * writes */
	for (int i = 0; i < held->n; i++)
		if (starpu_data_acquire_on_node(held->v[i].h, STARPU_ACQUIRE_NO_NODE,
						tsr__dep_starpu_mode(held->v[i].mode))) {
			/* release what was acquired; StarPU only fails on a handle it does not
			 * know */
			held->n = i;
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

/* ------------------------------------------------------------------ a field's life */

/* A field starts as one piece, written by its root (its initial zeros, or whatever the root's
 * first writer leaves). */
int tsr__coh_root_init(struct tsr_node *root)
{
	if (tsr__coh_pieces_init(root))
		return TSR_ENOMEM;
	if (!tsr__dist.on)
		return TSR_OK;

	/* every rank starts with the same zeros: valid everywhere */
	root->valid = calloc(1, sizeof *root->valid);
	root->xviews = calloc(1, sizeof *root->xviews);
	if (!root->valid || !root->xviews)
		return TSR_ENOMEM;

	if (tsr__piece_push(root->valid, root->region->bounds, NULL, 0))
		return TSR_ENOMEM;
	root->valid->v[0].ranks = tsr__every_rank();
	return TSR_OK;
}

/* After the root's handle is unregistered (its tasks are done); waits for its transfers. */
void tsr__coh_root_free(struct tsr_node *root)
{
	tsr__coh_sym_free(root);
	tsr__overlaps_free(root);
	tsr__xviews_free(root);
	if (root->valid) {
		free(root->valid->v);
		free(root->valid);
		root->valid = NULL;
	}
	tsr__coh_pieces_free(root);
}

void tsr__coh_shutdown(void)
{
	tsr__coh_sym_shutdown();
	tsr__coh_ranks_shutdown();
	tsr__coh_local_shutdown();
}
