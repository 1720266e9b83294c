/* fold_ranks.c: several ranks: an index launch's reduced value, folded on every rank.
 *
 * Each rank holds the partial values of the points it ran. Every rank gathers every partial value
 * (Bruck's allgather: ceil(log2 N) rounds; in round k rank r sends what it holds to rank r - 2^k
 * and receives what rank r + 2^k holds), then folds them all in color order as one process would:
 * the same bits on every rank, and no broadcast afterwards, so a value needed everywhere (a dot
 * product in CG) costs one round of messages on 2 ranks instead of two (the values to one rank,
 * then its result back). Before, every partial value went to the first point's rank, which folded
 * them and sent the result to every other rank: N - 1 messages in and N - 1 out on one rank, two
 * hops for every value.
 *
 * The values travel in blocks: rank q's block has room for m values (the most points any rank
 * ran), its points' values in color order, then the operator's identity in the unused slots, which
 * the fold never reads. A rank packs its own block with a small task (or sends its one partial
 * value as it is); in round k it holds the blocks of ranks r .. r + 2^k - 1 (mod N) in one buffer,
 * sends that buffer, receives rank r + 2^k's, and a merge task joins the two for the next round
 * (the last round's two buffers go to the fold task as they are). Per rank and launch: one send and
 * one receive per round, at most one pack task, ceil(log2 N) - 1 merge tasks and the fold task. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* Scratch buffers of one fold: pooled variable handles, each a set of one (tsr__partials_take),
 * given back with the points' partial values when the fold task is done. Rounds: ceil(log2) of
 * the most ranks, fake ones included. */
enum { MAX_ROUNDS = 10, MAX_SETS = 2 * MAX_ROUNDS + 2 };
_Static_assert(1 << MAX_ROUNDS >= TSR_FAKE_MAX_RANKS && TSR_FAKE_MAX_RANKS >= TSR_MAX_RANKS,
	       "Bruck's rounds must reach every rank");

struct gather {
	struct tsr_partials *points; /* the partial values of this rank's points, in color order */
	const int *dag_ids; /* every point's graph node, -1 if none (NULL: the graph is off) */
	struct tsr_partials *sets[MAX_SETS];
	int nsets;
};

/* What the fold task needs to find point i's value: at[i], its slot counted from the start of
 * buffer 1 and on into buffer 2 (its rank's block, then its place in the block). */
struct gather_fold_arg {
	tsr_type_t type;
	size_t size;
	int op;
	int64_t held; /* slots in buffer 1 (the blocks of ranks me .. me + nheld - 1) */
	int rest;     /* 1: buffer 2 holds the blocks of the ranks after them */
	int64_t npoints;
	int64_t at[];
};

struct pack_arg {
	tsr_type_t type;
	size_t size;
	int op;
	int m, n; /* slots, and this rank's values (buffers 1..n) */
};

struct merge_arg {
	size_t held, taken; /* bytes of buffer 1, bytes taken from the start of buffer 2 */
};

static struct starpu_codelet pack_cl, merge_cl, gather_fold_cl;

/* Buffer 0: this rank's block; buffers 1..n: its points' partial values, in color order. */
static void pack_cpu(void *buffers[], void *cl_arg)
{
	const struct pack_arg *a = cl_arg;
	char *block = (char *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	tsr__assert(a->n <= a->m); /* m: the most points any rank runs */

	for (int j = 0; j < a->m; j++) {
		char *slot = block + (size_t)j * a->size;
		if (j < a->n)
			memcpy(slot, (const void *)STARPU_VARIABLE_GET_PTR(buffers[1 + j]),
			       a->size);
		else
			tsr__redop_identity(a->type, a->size, a->op, slot);
	}
}

/* Buffer 0 = buffer 1, then the first bytes of buffer 2. */
static void merge_cpu(void *buffers[], void *cl_arg)
{
	const struct merge_arg *a = cl_arg;
	char *out = (char *)STARPU_VARIABLE_GET_PTR(buffers[0]);

	memcpy(out, (const void *)STARPU_VARIABLE_GET_PTR(buffers[1]), a->held);
	memcpy(out + a->held, (const void *)STARPU_VARIABLE_GET_PTR(buffers[2]), a->taken);
}

/* Buffer 0: the result; buffer 1: the blocks of ranks me .. me + nheld - 1; buffer 2 (when there
 * is one): the blocks of the ranks after them. Points are folded in color order. */
static void gather_fold_cpu(void *buffers[], void *cl_arg)
{
	const struct gather_fold_arg *a = cl_arg;
	void *acc = (void *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	const char *held = (const char *)STARPU_VARIABLE_GET_PTR(buffers[1]);
	const char *rest = a->rest ? (const char *)STARPU_VARIABLE_GET_PTR(buffers[2]) : NULL;

	tsr__redop_identity(a->type, a->size, a->op, acc);
	for (int64_t i = 0; i < a->npoints; i++) {
		int64_t at = a->at[i];
		/* every rank's block was gathered */
		tsr__assert(at >= 0 && (at < a->held || rest));
		const char *v = at < a->held ? held + (size_t)at * a->size
					     : rest + (size_t)(at - a->held) * a->size;

		tsr__redop_fold(a->type, a->size, a->op, acc, v);
	}
}

static void codelet_init(struct starpu_codelet *cl, starpu_cpu_func_t f, const char *name)
{
	starpu_codelet_init(cl);
	cl->cpu_funcs[0] = f;
	cl->nbuffers = STARPU_VARIABLE_NBUFFERS;
	cl->name = name;
}

void tsr__fold_ranks_init(void)
{
	codelet_init(&pack_cl, pack_cpu, "tsr_gather_pack");
	codelet_init(&merge_cl, merge_cpu, "tsr_gather_merge");
	codelet_init(&gather_fold_cl, gather_fold_cpu, "tsr_gather_fold");
}

/* A pooled scratch buffer of `bytes`, given back with the gather; NULL when out of memory. */
static starpu_data_handle_t scratch(struct gather *g, size_t bytes)
{
	if (g->nsets == MAX_SETS)
		return NULL;

	struct tsr_partials *set = tsr__partials_take(1, bytes);
	if (!set)
		return NULL;

	g->sets[g->nsets++] = set;
	return set->h[0];
}

static void gather_give_back(void *arg)
{
	struct gather *g = arg;

	for (int i = 0; i < g->nsets; i++)
		tsr__partials_release(g->sets[i], 0);
	tsr__partials_release(g->points, 0);
	free(g);
}

/* Submit a CPU task of cl over handles (the first written, the others read), observed under the
 * codelet's name as graph node dag_id (-1: none); takes arg. */
static int submit_cpu(struct starpu_codelet *cl, void *arg, size_t arg_size,
		      starpu_data_handle_t *h, int nh, struct gather *owner, int dag_id)
{
	struct starpu_task *task = tsr__task_new(cl, arg, arg_size, nh, 0);
	if (!task)
		return TSR_ENOMEM;

	for (int i = 0; i < nh; i++) {
		STARPU_TASK_SET_HANDLE(task, h[i], i);
		/* a variable: StarPU 1.4's macro tests its mode argument as a boolean */
		enum starpu_data_access_mode mode = i == 0 ? STARPU_W : STARPU_R;
		STARPU_TASK_SET_MODE(task, mode, i);
	}

	task->where = STARPU_CPU;
	if (owner) {
		task->callback_func = gather_give_back;
		task->callback_arg = owner;
	}

	struct tsr_obs_rec *obs = tsr__obs_internal(task, cl->name, 0, NULL, dag_id);
	int rc = tsr__order_submit(task, NULL);
	if (rc)
		tsr__obs_drop(obs);
	return rc;
}

/* The gathered fold's node in the task graph, after this rank's points (-1 when it is off). */
static int dag_gather_fold(int64_t npoints, const int *dag_ids)
{
	if (!tsr__dag_on)
		return -1;

	int id = tsr__dag_internal("tsr_gather_fold", 0, NULL);
	for (int64_t i = 0; dag_ids && i < npoints; i++)
		if (dag_ids[i] >= 0)
			tsr__dag_edge(dag_ids[i], id, "partial value");
	return id;
}

/* This rank's block: its one partial value as it is when a block holds one, else packed. */
static int pack_block(struct gather *g, const struct tsr_future *res, int op, int m,
		      starpu_data_handle_t *block)
{
	int n = 0;
	starpu_data_handle_t *h = malloc((size_t)(1 + m) * sizeof *h);
	struct pack_arg *a = malloc(sizeof *a);
	if (!h || !a) {
		free(h);
		free(a);
		return TSR_ENOMEM;
	}

	for (int64_t i = 0; i < g->points->n; i++)
		h[1 + n++] = g->points->h[i];

	int rc = TSR_OK;
	if (m == 1 && n == 1) {
		*block = h[1];
		free(a);
	} else if (!(*block = scratch(g, (size_t)m * res->size))) {
		free(a);
		rc = TSR_ENOMEM;
	} else {
		*a = (struct pack_arg){.type = res->type,
				       .size = res->size,
				       .op = op,
				       .m = m,
				       .n = n};
		h[0] = *block;
		rc = submit_cpu(&pack_cl, a, sizeof *a, h, 1 + n, NULL, -1);
	}

	free(h);
	return rc;
}

/* Buffer for the next round: held, then the first `taken` bytes of got. */
static int merge(struct gather *g, starpu_data_handle_t held, size_t held_bytes,
		 starpu_data_handle_t got, size_t taken, starpu_data_handle_t *out)
{
	struct merge_arg *a = malloc(sizeof *a);
	*out = scratch(g, held_bytes + taken);
	if (!a || !*out) {
		free(a);
		return TSR_ENOMEM;
	}

	*a = (struct merge_arg){.held = held_bytes, .taken = taken};
	starpu_data_handle_t h[3] = {*out, held, got};
	return submit_cpu(&merge_cl, a, sizeof *a, h, 3, NULL, -1);
}

/* Where each point's value lies in the gathered buffers, in color order: in its rank's block
 * (rank q's is block (q - me) mod N), after the values of that rank's earlier points. used: one
 * counter per rank, zeroed here. */
static void value_slots(const int *ranks, int64_t np, int m, int *used, int64_t *at)
{
	int n = tsr__dist.size;
	int me = tsr__dist.rank;
	memset(used, 0, (size_t)n * sizeof *used);

	for (int64_t i = 0; i < np; i++) {
		int q = ranks[i];
		int64_t block = (q - me + n) % n;
		at[i] = block * m + used[q]++;
	}
}

/* The fold of every point's value into res, on this rank. */
static int fold_gathered(struct gather *g, struct tsr_future *res, int op, const int *ranks,
			 int64_t np, int m, int *used, int nheld, starpu_data_handle_t held,
			 starpu_data_handle_t rest)
{
	size_t bytes = sizeof(struct gather_fold_arg) + (size_t)np * sizeof(int64_t);
	struct gather_fold_arg *a = malloc(bytes);
	if (!a)
		return TSR_ENOMEM;

	*a = (struct gather_fold_arg){.type = res->type,
				      .size = res->size,
				      .op = op,
				      .held = (int64_t)nheld * m,
				      .rest = rest != NULL,
				      .npoints = np};
	value_slots(ranks, np, m, used, a->at);

	starpu_data_handle_t h[3] = {res->h, held, rest};
	return submit_cpu(&gather_fold_cl, a, bytes, h, rest ? 3 : 2, g,
			  dag_gather_fold(np, g->dag_ids));
}

/* The most points one rank ran; count: one counter per rank, zeroed here. */
static int most_points(const int *ranks, int64_t npoints, int *count)
{
	int most = 1;
	memset(count, 0, (size_t)tsr__dist.size * sizeof *count);

	for (int64_t i = 0; i < npoints; i++)
		if (++count[ranks[i]] > most)
			most = count[ranks[i]];
	return most;
}

/* Bruck's rounds: held holds the blocks of ranks me .. me + nheld - 1; the last round's buffers
 * go to the fold. */
static int gather_rounds(struct gather *g, struct tsr_future *res, int op, const int *ranks,
			 int64_t np, int m, int *used, starpu_data_handle_t held)
{
	int n = tsr__dist.size;
	int me = tsr__dist.rank;
	size_t block = (size_t)m * res->size;
	int64_t tag = tsr__dist_tags(MAX_ROUNDS);

	if (n == 1) /* TSR_MPI=1 on one rank: nothing to gather */
		return fold_gathered(g, res, op, ranks, np, m, used, 1, held, NULL);

	for (int k = 0, nheld = 1;; k++, nheld *= 2) {
		starpu_data_handle_t got = scratch(g, (size_t)nheld * block);
		if (!got)
			return TSR_ENOMEM;

		int to = (me - nheld + n) % n;
		int from = (me + nheld) % n;
		if (tsr__dist_send(held, to, tag + k, (size_t)nheld * block) ||
		    tsr__dist_recv(got, from, tag + k))
			return TSR_ESTARPU;

		if (2 * nheld >= n)
			return fold_gathered(g, res, op, ranks, np, m, used, nheld, held, got);

		int rc = merge(g, held, (size_t)nheld * block, got, (size_t)nheld * block, &held);
		if (rc)
			return rc;
	}
}

int tsr__future_fold_ranks(const char *tn, struct tsr_future *res, int op, struct tsr_partials *ps,
			   const int *ranks, int64_t npoints, const int *dag_ids)
{
	struct gather *g = calloc(1, sizeof *g);
	int *per_rank = malloc((size_t)tsr__dist.size * sizeof *per_rank); /* counters */
	if (!g || !per_rank) {
		free(g);
		free(per_rank);
		tsr__partials_release(ps, 0);
		return tsr__err(TSR_ENOMEM, "task '%s': out of memory", tn);
	}

	g->points = ps;
	g->dag_ids = dag_ids;
	int m = most_points(ranks, npoints, per_rank);
	starpu_data_handle_t held = NULL;
	int rc = pack_block(g, res, op, m, &held);
	if (!rc)
		rc = gather_rounds(g, res, op, ranks, npoints, m, per_rank, held);
	free(per_rank);
	if (!rc)
		return TSR_OK; /* the fold task gives everything back */

	/* what was submitted keeps its handles until done: StarPU orders a later writer of a
	 * pooled handle after it */
	gather_give_back(g);
	return tsr__err(rc, "task '%s': gathering the points' values on every rank failed", tn);
}
