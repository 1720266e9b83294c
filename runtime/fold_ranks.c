/* fold_ranks.c: several ranks: an index launch's reduced value, folded in color order on one rank
 * or on every rank, with the same bits as in one process.
 *
 * Each rank holds the partial values of the points it ran; the fold needs all of them in one
 * place, in color order. Two ways, chosen by the ranks' count N alike on every rank:
 *  - N < TREE_FROM: every rank gathers every partial value (Bruck's allgather: ceil(log2 N)
 *    rounds; in round k rank r sends what it holds to rank r - 2^k and receives what rank r + 2^k
 *    holds), then folds them all: no broadcast afterwards, so a value needed everywhere (a dot
 *    product in CG) costs one round of messages on 2 ranks instead of two.
 *  - N >= TREE_FROM: the values go up a binomial tree to one root, which folds them; launch.c then
 *    broadcasts the result down the same tree (tsr__future_bcast). The root changes from one fold
 *    to the next (every rank counts the folds alike), so that what a rank does per fold is, on
 *    average over N folds, one send and one receive up, one receive and one send down, and 1/N of
 *    a fold: it does not grow with N, where Bruck's rounds cost every rank log2 N sends, receives
 *    and merges and a fold of every value, per fold (N log2 N messages in all, against 2 (N - 1)).
 *    The price is latency: 2 log2 N hops instead of log2 N.
 *
 * The values travel in blocks: rank q's block has room for m values (the most points any rank
 * ran), its points' values in color order, then the operator's identity in the unused slots, which
 * the fold never reads. A rank packs its own block with a small task (or sends its one partial
 * value as it is). Bruck: in round k it holds the blocks of ranks r .. r + 2^k - 1 (mod N) in one
 * buffer, sends that buffer, receives rank r + 2^k's, and a merge task joins the two for the next
 * round (the last round's two buffers go to the fold task as they are). Tree: a rank receives its
 * children's subtrees in rank order, merging each into what it holds, and sends the whole to its
 * parent; the root's last two buffers go to the fold task.
 *
 * Where each point's value lies in the gathered buffers depends on the points' ranks only: a plan
 * (m, and every point's slot) is computed once per mapping partition and domain and kept for the
 * next launch over them, so that a launch of N ranks' points costs this rank no walk over the
 * points; the fold tasks share it, counted. Only the fold task reads every value (it must: the
 * values fold one after the other in color order). */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* Scratch buffers of one fold: pooled variable handles, each a set of one (tsr__partials_take),
 * given back with the points' partial values when the fold task is done (a rank of the tree that
 * does not fold: once its send is submitted). Rounds, and a tree's children: at most ceil(log2)
 * of the most ranks, fake ones included; one receive and one merge each, and the packed block. */
enum { MAX_ROUNDS = 10, MAX_SETS = 2 * MAX_ROUNDS + 2 };
_Static_assert(1 << MAX_ROUNDS >= TSR_FAKE_MAX_RANKS && TSR_FAKE_MAX_RANKS >= TSR_MAX_RANKS,
	       "Bruck's rounds and a tree's children must reach every rank");

/* The tree from 4 ranks on: there Bruck's allgather already costs every rank 2 sends, 2 receives,
 * a merge and a fold of every value per fold, as much host work as the tree's average, and it
 * grows from there. np 2 and 3 keep the single hop. Tests: np 2 is Bruck's, np 4 and 8 the tree's
 * (tests/mpi: ranks.sh, oracle.sh). */
enum { TREE_FROM = 4 };

/* Folds so far: every rank counts them alike, and the tree's root follows the count. */
static int64_t nfolds;

/* Where each point's value lies once gathered: at[i], point i's slot counted as if rank 0's block
 * came first (its rank's block, then its place in the block). The folding rank's buffers start
 * with the root's block (with Bruck's, its own): the fold shifts every slot by the root's blocks,
 * mod N. Shared by the plan cache and the fold tasks that read it, each holding a reference. */
struct tsr_fold_plan {
	int refs;
	int m; /* slots per block: the most points one rank runs */
	int64_t npoints;
	int64_t at[];
};

struct gather {
	struct tsr_partials *points; /* the partial values of this rank's points, in color order */
	const int *dag_ids; /* every point's graph node, -1 if none (NULL: the graph is off) */
	struct tsr_fold_plan *plan; /* a reference, dropped with the gather */
	struct tsr_partials *sets[MAX_SETS];
	int nsets;
};

/* What the fold task needs to find point i's value: plan->at[i], its slot counted from the start
 * of buffer 1 and on into buffer 2. The gather holds the plan until the task is done. */
struct gather_fold_arg {
	tsr_type_t type;
	size_t size;
	int op;
	int64_t held;  /* slots in buffer 1 (the blocks of ranks root .. root + nheld - 1) */
	int rest;      /* 1: buffer 2 holds the blocks of the ranks after them */
	int64_t shift; /* slots before the root's block, counted from rank 0's */
	int64_t total; /* slots of every rank */
	const struct tsr_fold_plan *plan;
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
	for (int64_t i = 0; i < a->plan->npoints; i++) {
		int64_t at = (a->plan->at[i] - a->shift + a->total) % a->total;
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
	nfolds = 0;
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
	tsr__fold_plan_drop(g->plan);
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

/* The fold of every point's value into res, on this rank, from the buffers that start with the
 * block of rank `root`. */
static int fold_gathered(struct gather *g, struct tsr_future *res, int op, int root, int nheld,
			 starpu_data_handle_t held, starpu_data_handle_t rest)
{
	struct gather_fold_arg *a = malloc(sizeof *a);
	if (!a)
		return TSR_ENOMEM;

	*a = (struct gather_fold_arg){.type = res->type,
				      .size = res->size,
				      .op = op,
				      .held = (int64_t)nheld * g->plan->m,
				      .rest = rest != NULL,
				      .shift = (int64_t)root * g->plan->m,
				      .total = (int64_t)tsr__dist.size * g->plan->m,
				      .plan = g->plan};

	starpu_data_handle_t h[3] = {res->h, held, rest};
	return submit_cpu(&gather_fold_cl, a, sizeof *a, h, rest ? 3 : 2, g,
			  dag_gather_fold(g->plan->npoints, g->dag_ids));
}

/* Up the binomial tree rooted at `root` (tsr__future_bcast's, in ranks relative to the root: v's
 * parent is v without its lowest set bit, its children v + 2^k below that bit, each the root of the
 * next 2^k ranks or fewer): held holds this rank's block; the root folds, the others send what
 * their subtree gathered and are done. Each rank receives from distinct children and sends once:
 * one tag serves the whole gathering. */
static int gather_tree(struct gather *g, struct tsr_future *res, int op, int root,
		       starpu_data_handle_t held)
{
	int n = tsr__dist.size;
	int v = (tsr__dist.rank - root + n) % n;
	int span = v ? v & -v : n; /* ranks v .. v + span - 1 of the subtree, before the end */
	size_t block = (size_t)g->plan->m * res->size;
	int64_t tag = tsr__dist_tag();
	starpu_data_handle_t got = NULL;
	int nheld = 1;
	int ngot = 0;

	int rc = TSR_OK;
	for (int k = 1; k < span && v + k < n; k <<= 1) {
		if (got && (rc = merge(g, held, nheld * block, got, ngot * block, &held)))
			return rc;
		nheld += ngot;

		int child = v + k;
		ngot = child + k <= n ? k : n - child; /* its subtree's ranks */
		got = scratch(g, ngot * block);
		if (!got)
			return TSR_ENOMEM;
		if (tsr__xvalue_recv(got, res->state, (child + root) % n, tag))
			return TSR_ESTARPU;
	}

	if (!v)
		return fold_gathered(g, res, op, root, nheld, held, got);

	if (got && (rc = merge(g, held, nheld * block, got, ngot * block, &held)))
		return rc;
	nheld += ngot;
	if (tsr__xvalue_send(held, res->state, (v - (v & -v) + root) % n, tag, nheld * block))
		return TSR_ESTARPU;

	/* StarPU orders a later writer of a pooled buffer after the send that reads it */
	gather_give_back(g);
	return TSR_OK;
}

/* Bruck's rounds: held holds the blocks of ranks me .. me + nheld - 1; the last round's buffers
 * go to the fold. */
static int gather_rounds(struct gather *g, struct tsr_future *res, int op,
			 starpu_data_handle_t held)
{
	int n = tsr__dist.size;
	int me = tsr__dist.rank;
	size_t block = (size_t)g->plan->m * res->size;
	int64_t tag = tsr__dist_tags(MAX_ROUNDS);

	if (n == 1) /* TSR_MPI=1 on one rank: nothing to gather */
		return fold_gathered(g, res, op, me, 1, held, NULL);

	for (int k = 0, nheld = 1;; k++, nheld *= 2) {
		starpu_data_handle_t got = scratch(g, (size_t)nheld * block);
		if (!got)
			return TSR_ENOMEM;

		int to = (me - nheld + n) % n;
		int from = (me + nheld) % n;
		if (tsr__xvalue_send(held, res->state, to, tag + k, (size_t)nheld * block) ||
		    tsr__xvalue_recv(got, res->state, from, tag + k))
			return TSR_ESTARPU;

		if (2 * nheld >= n)
			return fold_gathered(g, res, op, me, nheld, held, got);

		int rc = merge(g, held, (size_t)nheld * block, got, (size_t)nheld * block, &held);
		if (rc)
			return rc;
	}
}

int tsr__future_fold_ranks(const char *tn, struct tsr_future *res, int op, struct tsr_partials *ps,
			   struct tsr_fold_plan *plan, const int *dag_ids, int *from)
{
	int n = tsr__dist.size;
	int root = (int)(nfolds++ % n);
	*from = n < TREE_FROM ? TSR_ALL_RANKS : root;

	struct gather *g = calloc(1, sizeof *g);
	if (!g) {
		tsr__partials_release(ps, 0);
		tsr__fold_plan_drop(plan);
		return tsr__err(TSR_ENOMEM, "task '%s': out of memory", tn);
	}

	g->points = ps;
	g->plan = plan;
	g->dag_ids = dag_ids;
	starpu_data_handle_t held = NULL;
	int rc = pack_block(g, res, op, plan->m, &held);
	if (!rc && *from == TSR_ALL_RANKS)
		rc = gather_rounds(g, res, op, held);
	else if (!rc)
		rc = gather_tree(g, res, op, root, held);
	if (!rc)
		return TSR_OK; /* the fold task (or the tree's send) gave everything back */

	/* what was submitted keeps its handles until done: StarPU orders a later writer of a
	 * pooled handle after it */
	gather_give_back(g);
	return tsr__err(rc, "task '%s': gathering the points' values on every rank failed", tn);
}

/* ------------------------------------------------------------------ plans */

/* Point i's rank is rank_of(arg, i). */
typedef int (*rank_of_fn)(const void *arg, int64_t i);

/* The most points one rank runs; used: one counter per rank, zeroed here. */
static int most_points(int64_t npoints, rank_of_fn rank_of, const void *arg, int *used)
{
	int most = 1;
	memset(used, 0, (size_t)tsr__dist.size * sizeof *used);

	for (int64_t i = 0; i < npoints; i++) {
		int q = rank_of(arg, i);
		tsr__assert(q >= 0 && q < tsr__dist.size);
		if (++used[q] > most)
			most = used[q];
	}
	return most;
}

/* The slots: each point's rank's block (rank q's is block q), then the values of that rank's
 * earlier points. used: one counter per rank, zeroed here. */
static void value_slots(struct tsr_fold_plan *p, rank_of_fn rank_of, const void *arg, int *used)
{
	memset(used, 0, (size_t)tsr__dist.size * sizeof *used);

	for (int64_t i = 0; i < p->npoints; i++) {
		int q = rank_of(arg, i);
		p->at[i] = (int64_t)q * p->m + used[q]++;
	}
}

/* The plan of npoints points whose ranks rank_of tells; NULL when out of memory. */
static struct tsr_fold_plan *plan_new(int64_t npoints, rank_of_fn rank_of, const void *arg)
{
	struct tsr_fold_plan *p = malloc(sizeof *p + (size_t)npoints * sizeof p->at[0]);
	int *used = malloc((size_t)tsr__dist.size * sizeof *used); /* counters per rank */
	if (!p || !used) {
		free(p);
		free(used);
		return NULL;
	}

	p->refs = 1;
	p->npoints = npoints;
	p->m = most_points(npoints, rank_of, arg, used);
	value_slots(p, rank_of, arg, used);
	free(used);
	return p;
}

static int rank_in_array(const void *ranks, int64_t i)
{
	return ((const int *)ranks)[i];
}

struct tsr_fold_plan *tsr__fold_plan_ranks(const int *ranks, int64_t npoints)
{
	return plan_new(npoints, rank_in_array, ranks);
}

void tsr__fold_plan_drop(struct tsr_fold_plan *p)
{
	if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(p);
}

/* The plans of the last launches through a mapping partition, by its id (a destroyed
 * partition's id never comes back), its ranks' generation (tsr_partition_set_rank) and the
 * launch domain. A few: a program's reductions go through few partitions. */
enum { PLAN_CACHE = 8 };
static struct cached_plan {
	uint64_t part;
	unsigned ranks_gen;
	tsr_box_t domain;
	struct tsr_fold_plan *plan;
} plans[PLAN_CACHE];
static int nplans, next_out;

struct color_of_point {
	const struct tsr_partition *m;
	tsr_box_t domain;
};

static int rank_of_point(const void *arg, int64_t i)
{
	const struct color_of_point *c = arg;
	int64_t pt[3];
	tsr__box_point(c->domain, i, pt);
	return tsr__rank_of_color(c->m, (int)tsr__box_index(c->m->colors, pt));
}

static struct cached_plan *plan_cached(const struct tsr_partition *m, tsr_box_t domain)
{
	for (int i = 0; i < nplans; i++)
		if (plans[i].part == m->id && plans[i].ranks_gen == m->ranks_gen &&
		    tsr__box_equal(&plans[i].domain, &domain))
			return &plans[i];
	return NULL;
}

struct tsr_fold_plan *tsr__fold_plan_part(const struct tsr_partition *m, tsr_box_t domain)
{
	struct cached_plan *c = plan_cached(m, domain);
	if (!c) {
		struct color_of_point arg = {m, domain};
		struct tsr_fold_plan *p = plan_new(tsr_box_volume(domain), rank_of_point, &arg);
		if (!p)
			return NULL;

		/* the oldest entry makes room */
		c = nplans < PLAN_CACHE ? &plans[nplans++] : &plans[next_out++ % PLAN_CACHE];
		if (c->plan)
			tsr__fold_plan_drop(c->plan);
		*c = (struct cached_plan){m->id, m->ranks_gen, domain, p};
	}

	__atomic_add_fetch(&c->plan->refs, 1, __ATOMIC_RELAXED);
	return c->plan;
}

void tsr__fold_ranks_fini(void)
{
	for (int i = 0; i < nplans; i++)
		tsr__fold_plan_drop(plans[i].plan);
	memset(plans, 0, sizeof plans);
	nplans = next_out = 0;
}
