/* launch_ranks.c: where a launch's points run on several ranks, and the call stream every rank
 * repeats (dist.c compares it). Every rank takes the same decisions from the same calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "launch.h"

/* The rank of a single launch's first region requirement that writes, else of its first one,
 * else rank 0. */
static int owner_rank(int n, const struct resolved_req *q)
{
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++)
			if (q[i].kind == TSR_REQ_REGION && (pass == 1 || q[i].priv != TSR_READ))
				return tsr__region_rank(q[i].region);

	return 0;
}

/* Bytes rank r would receive to run a single launch: what its reads cover and r lacks. */
static int64_t bytes_to_move(int n, const struct resolved_req *q, int r)
{
	int64_t bytes = 0;
	for (int i = 0; i < n; i++) {
		if (!tsr__uses_tree(&q[i]) || q[i].priv == TSR_WRITE)
			continue;

		for (int k = 0; k < q[i].nfields; k++)
			bytes += tsr__coh_missing(&q[i].region->nodes[q[i].fields[k]], r);
	}

	return bytes;
}

/* Whether a launch reaches a region (else it reads futures and arguments only). */
static int touches_regions(int n, const struct resolved_req *q)
{
	for (int i = 0; i < n; i++)
		if (q[i].kind != TSR_REQ_FUTURE)
			return 1;
	return 0;
}

/* Several ranks: a single launch (a copy into a border piece, a task on a whole region) has no
 * color to follow, and the owner of what it writes may hold none of what it reads: it runs where
 * the least data has to come, the owner of what it writes on a tie. tsr_fill runs on every rank,
 * and so does a launch that reaches no region (a scalar step such as CG's alpha, from futures
 * every rank holds): every rank needs its value, and computing it costs less than a message to
 * every rank, which would stand between the value and the next launch. */
int tsr__single_rank(const struct tsr_task *t, int n, const struct resolved_req *q)
{
	if (t->on_every_rank || !touches_regions(n, q))
		return TSR_ALL_RANKS;

	int best = owner_rank(n, q);
	if (tsr_nranks() == 1)
		return best;

	int64_t least = bytes_to_move(n, q, best);
	for (int r = 0; r < tsr_nranks() && least > 0; r++) {
		int64_t b = bytes_to_move(n, q, r);
		if (b < least) {
			least = b;
			best = r;
		}
	}

	return best;
}

/* The call stream every rank must repeat (dist.c): the task, its requirements, its domain. */
void tsr__note_launch(const char *call, const struct tsr_task *t, int nreqs, const tsr_req_t *reqs,
		      tsr_box_t domain)
{
	if (!tsr__dist.on)
		return;

	tsr__dist_note(call, t->name, strlen(t->name));

	/* values, not the structures' bytes: their padding differs from rank to rank */
	int64_t b[7] = {domain.dim};
	for (int d = 0; d < domain.dim && d < 3; d++) {
		b[1 + d] = domain.lo[d];
		b[4 + d] = domain.hi[d];
	}
	tsr__dist_note(call, b, sizeof b);

	for (int i = 0; i < nreqs; i++) {
		int64_t w[3 + TSR_MAX_REQ_FIELDS] = {reqs[i].kind, (int64_t)reqs[i].handle,
						     reqs[i].priv};
		for (int k = 0; k < reqs[i].nfields && k < TSR_MAX_REQ_FIELDS; k++)
			w[3 + k] = reqs[i].fields[k];
		tsr__dist_note(call, w, sizeof w);
	}

	char what[96];
	snprintf(what, sizeof what, "%s of task '%.48s'", call, t->name);
	tsr__dist_note(what, NULL, 0);
}

/* Several ranks: each point runs on the rank of its mapping requirement's color; points of a
 * launch with no partition requirement are spread in blocks. */
int tsr__decide_ranks(struct index_launch *L)
{
	if (!tsr__dist.on)
		return TSR_OK; /* one process: every point runs here (rank 0) */

	L->ranks = malloc((size_t)L->npoints * sizeof *L->ranks);
	if (!L->ranks)
		return tsr__err(TSR_ENOMEM, "tsr_index_launch: out of memory");

	int mr = tsr__map_req(L->n, L->q);
	for (int64_t pi = 0; pi < L->npoints; pi++) {
		if (mr >= 0)
			L->ranks[pi] = tsr__color_rank(L->q[mr].part, L->colors[pi * L->n + mr]);
		else
			L->ranks[pi] = (int)(pi * tsr_nranks() / L->npoints);
		tsr__assert(L->ranks[pi] >= 0 && L->ranks[pi] < tsr_nranks());
	}

	return TSR_OK;
}

/* ---------------------------------------------------------------- structured launches */

/* Whether requirement q goes through a partition by the identity projection over the domain. */
static int plain_partition(const struct resolved_req *q, tsr_box_t domain)
{
	return q->kind == TSR_REQ_PARTITION && !q->proj && !q->redop && !q->private_redop &&
	       q->part->colors.dim == domain.dim && tsr_box_contains(q->part->colors, domain);
}

/* Two partition requirements of the launch on one field where one writes: the full path checks
 * them point against point (tsr__check_points). */
static int points_may_interfere(int n, const struct resolved_req *q)
{
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++)
			if (a != b && q[a].kind == TSR_REQ_PARTITION && q[a].priv != TSR_READ &&
			    q[b].kind == TSR_REQ_PARTITION && q[a].root == q[b].root)
				for (int i = 0; i < q[a].nfields; i++)
					for (int j = 0; j < q[b].nfields; j++)
						if (q[a].fields[i] == q[b].fields[j])
							return 1;
	return 0;
}

int tsr__launch_structured(const struct index_launch *L, tsr_box_t covers[])
{
	if (!tsr__dist.on || tsr__dist.size < 2 || tsr__map_needed(NULL))
		return 0; /* one rank, or a mapper that may send any point anywhere */
	if (tsr__map_req(L->n, L->q) < 0 || points_may_interfere(L->n, L->q))
		return 0;

	for (int i = 0; i < L->n; i++) {
		const struct resolved_req *q = &L->q[i];
		if (q->kind == TSR_REQ_FUTURE)
			continue;
		if (!plain_partition(q, L->domain))
			return 0;
		if (q->priv != TSR_READ && !tsr__coh_sym_cover(q->part, L->domain, &covers[i]))
			return 0;
	}

	return 1;
}

int tsr__launch_mine(const struct index_launch *L, struct tsr_ivec *mine)
{
	struct tsr_partition *m = L->q[tsr__map_req(L->n, L->q)].part;
	if (tsr__partition_rank_index(m))
		return tsr__err(TSR_ENOMEM, "tsr_index_launch: task '%s': out of memory",
				L->t->name);

	int lo;
	int hi;
	int n = tsr__dist.size;
	if (m->ranks) {
		lo = m->rank_start[tsr__dist.rank];
		hi = m->rank_start[tsr__dist.rank + 1];
	} else {
		/* blocks: color c runs on floor(c * N / ncolors) */
		lo = (int)(((int64_t)tsr__dist.rank * m->ncolors + n - 1) / n);
		hi = (int)(((int64_t)(tsr__dist.rank + 1) * m->ncolors + n - 1) / n);
	}

	mine->n = 0;
	for (int k = lo; k < hi; k++) {
		int64_t pt[3];
		tsr__box_point(m->colors, m->ranks ? m->rank_colors[k] : k, pt);
		int64_t pi = tsr__box_index(L->domain, pt);
		if (pi < 0)
			continue;

		TSR_GROW(mine->v, mine->n, mine->cap, 16);
		mine->v[mine->n++] = (int)pi;
	}

	return TSR_OK;
}
