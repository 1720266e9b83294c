/* dag.c: the task graph (TSR_DAG as Graphviz dot) and its critical path. Tessera derives the
 * dependencies itself from the accesses it submits, Tessera's own tasks (folds, syncs) included;
 * with costs from the perf models, the same graph feeds the critical-path policy (bottom levels
 * kept up to date as tasks are added, so a ready task's priority is its longest known path to the
 * end) and the timeline's dependence arrows (TSR_TIMELINE_FLOWS). The dot file is drawn for people:
 * one edge per pair of tasks, labels on request, each launch a box inside its iteration's box.
 *
 * The file and the arrows want the whole graph, kept to the end. The critical path alone wants
 * only what can still raise a pending task's bottom level: no edge list; a task's recorded
 * accesses go once the policy has taken its key (an edge from a task already pushed raises
 * nothing), and its node and predecessors once it finished. Kept whole, a loop of 16,000 steps of
 * Task Bench's stencil_1d under tsr-critpath took 105 us a step against 20 for 1,000 steps (each
 * write scanned every read of the run: a halo's reads are never covered by one write) and held all
 * its nodes. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct dnode {
	const char *name; /* a registered task's name (alive until finalize) or a literal */
	int internal;     /* one of Tessera's own tasks (a fold, a sync) */
	int sync;         /* a sync: the next task made (whose access needed it) follows it */
	int pdim;
	int64_t point[3];
	int launch, iter;
	double cost, blevel;
	int done;
	struct tsr_dcell *cell; /* the critical path's (NULL without it) */
	int *pred, npred, cappred;
};

/* A node's bottom level as the policy reads it, and what the workers say of its task, without the
 * graph's lock: the host raises bottom levels under it for microseconds at a time (every pending
 * ancestor of each new task), and workers that waited for it there slept in the kernel (Task
 * Bench stencil_1d, 16 kernel iterations: 6,800 context switches in 20,000 steps, 600 under
 * eager). Pushed: the task is ready, its key fixed, and every task it waited for finished, so
 * raising it or its ancestors changes nothing. Finished: the workers are done with the cell. */
struct tsr_dcell {
	_Atomic double blevel;
	atomic_int pushed;
	atomic_int finished;
	struct tsr_dcell *next; /* on the host's list of spare cells */
};

/* One reason for an edge; several reasons for one pair are kept only when labels are asked
 * for (TSR_DAG_LABELS=1), and then drawn as one edge with every reason on its label. */
struct dedge {
	int from, to;
	char *label; /* NULL without labels */
};

struct dacc {
	int task;
	long seq;
	tsr_box_t box;
	tsr_privilege_t priv;
	int fold_op; /* a fold task's write (labelled FOLD(op)); 0 otherwise */
};

/* Per root field: writes (and reductions) and reads since, kept apart so that a read only scans
 * the writes; a read-only field (a matrix) then costs nothing however long the run. */
struct daccs {
	struct dacc *w, *r;
	int nw, capw, nr, capr;
	int keptw, keptr; /* critical path alone: the lengths when done tasks were last dropped */
	long seq;
};

/* One lock for the graph: points are added by the submitting thread, finished by workers. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Nodes base .. nnodes - 1 (ids count every node made), node id at nodes[id - base]: below base,
 * done nodes dropped (the critical path alone; base stays 0 for the whole graph). done_prefix:
 * how many of the kept nodes from the first on are known done. */
static struct dnode *nodes;
static int nnodes, capnodes, base, done_prefix;
/* The oldest done nodes go in batches, at least this many and at least as many as stay: moving
 * the rest down then costs at most one node moved per node dropped. */
#define DROP_BATCH 1024
static struct dedge *edges;
static int nedges, capedges;
int tsr__dag_on, tsr__critpath_on, tsr__dag_whole;

/* What the dot file shows (TSR_DAG_LABELS, TSR_DAG_ITERS; read at tsr_init). */
static int with_labels, max_iters;

/* Launches and iterations: an iteration ends where a task launched in it is launched again (a
 * loop's body launches each of its tasks once per turn), a run of single launches of one task
 * counting as one (a body may launch a task once per tile). iter_tasks: the current one's tasks;
 * run_key: the task of the run of single launches going on, if any. */
static int cur_launch = -1, cur_iter;
static const void *run_key;
/* Syncs since pending_syncs wait for the next task made in their launch. */
static int pending_syncs;
static const void **iter_tasks;
static int niter_tasks, capiter_tasks;

int tsr__dag_switches(void)
{
	enum { WITHOUT, WITH }; /* TSR_DAG_LABELS's words (env.c) */
	int labels;
	int rc = tsr__env_choice("TSR_DAG_LABELS", "tsr_init", &labels);
	if (rc)
		return rc;

	int iters = 0;
	if (tsr__env_int("TSR_DAG_ITERS", 0, 1L << 30, &iters))
		return TSR_EINVAL;

	with_labels = labels == WITH;
	max_iters = iters;
	return TSR_OK;
}

/* A launch of task `key` begins (single: not an index launch): the nodes added until the next
 * one belong to it. */
void tsr__dag_launch(const void *key, int single)
{
	pthread_mutex_lock(&lock);
	cur_launch++;

	int again = 0;
	if (!(single && key == run_key))
		for (int i = 0; i < niter_tasks && !again; i++)
			again = iter_tasks[i] == key;
	run_key = single ? key : NULL;

	if (again) {
		cur_iter++;
		niter_tasks = 0;
	}

	TSR_GROW(iter_tasks, niter_tasks, capiter_tasks, 16);
	iter_tasks[niter_tasks++] = key;
	pending_syncs = nnodes; /* a host map's syncs feed no task */
	pthread_mutex_unlock(&lock);
}

/* Node id, or NULL once it was dropped (done). */
static struct dnode *node(int id)
{
	tsr__assert(id >= 0 && id < nnodes);
	return id >= base ? &nodes[id - base] : NULL;
}

/* Whether node id no longer matters to the critical path: done, or dropped (done before). */
static int node_done(int id)
{
	const struct dnode *d = node(id);
	if (!d || d->done)
		return 1;
	return d->cell && (atomic_load_explicit(&d->cell->pushed, memory_order_acquire) ||
			   atomic_load_explicit(&d->cell->finished, memory_order_acquire));
}

/* Whether no worker will touch node d again (a node is dropped only then) */
static int node_finished(const struct dnode *d)
{
	if (d->done)
		return 1;
	return d->cell && atomic_load_explicit(&d->cell->finished, memory_order_acquire);
}

/* Under lock: node d's bottom level, for the host and for the policy. */
static void set_blevel(struct dnode *d, double b)
{
	d->blevel = b;
	if (d->cell)
		atomic_store_explicit(&d->cell->blevel, b, memory_order_relaxed);
}

/* Cells the host dropped, for its next nodes: made and freed by the host thread alone, and
 * through malloc every worker that freed into the host's arena would wait for its lock. */
static struct tsr_dcell *spare_cells;

static struct tsr_dcell *cell_new(void)
{
	struct tsr_dcell *c = spare_cells;
	if (c)
		spare_cells = c->next;
	else if (!(c = malloc(sizeof *c)))
		abort(); /* as the graph's other allocations */

	atomic_init(&c->blevel, 0.0);
	atomic_init(&c->pushed, 0);
	atomic_init(&c->finished, 0);
	c->next = NULL;
	return c;
}

static void cell_free_all(void)
{
	while (spare_cells) {
		struct tsr_dcell *c = spare_cells;
		spare_cells = c->next;
		free(c);
	}
}

static void node_free(struct dnode *d)
{
	free(d->pred);
	if (d->cell) {
		d->cell->next = spare_cells;
		spare_cells = d->cell;
	}
}

double tsr__dag_push_key(struct tsr_dcell *c)
{
	double b = atomic_load_explicit(&c->blevel, memory_order_relaxed);
	atomic_store_explicit(&c->pushed, 1, memory_order_release);
	return b;
}

void tsr__dag_finished(struct tsr_dcell *c)
{
	atomic_store_explicit(&c->finished, 1, memory_order_release);
}

/* Under lock, the critical path alone: drop the oldest nodes once they are done and enough of
 * them (DROP_BATCH). Nothing asks for a dropped node again: the policy asks for a task's bottom
 * level before it runs, and an edge from a done task is not kept. */
static void drop_done(void)
{
	int kept = nnodes - base;
	while (done_prefix < kept && node_finished(&nodes[done_prefix]))
		done_prefix++;

	int k = done_prefix;
	if (k < DROP_BATCH || k < kept - k)
		return;

	for (int i = 0; i < k; i++)
		node_free(&nodes[i]);
	memmove(nodes, nodes + k, (size_t)(kept - k) * sizeof *nodes);
	base += k;
	done_prefix = 0;
}

/* Under lock: a new node of the current launch. */
static int new_node(const char *name, int internal, int pdim, const int64_t point[3])
{
	if (!tsr__dag_whole)
		drop_done();
	int kept = nnodes - base;
	TSR_GROW(nodes, kept, capnodes, 256);

	struct dnode *d = &nodes[kept];
	memset(d, 0, sizeof *d);
	d->name = name;
	d->internal = internal;
	d->pdim = pdim;
	if (pdim)
		memcpy(d->point, point, sizeof d->point);
	d->launch = cur_launch < 0 ? 0 : cur_launch;
	d->iter = cur_iter;
	d->cost = 1.0;
	if (tsr__critpath_on)
		d->cell = cell_new();
	set_blevel(d, 1.0);
	return nnodes++;
}

static void add_edge(int from, int to, const char *label);

/* Under lock: a task that syncs made just before were for (their first edges into it). */
static int consumer_node(const char *name, int internal, int pdim, const int64_t point[3])
{
	int id = new_node(name, internal, pdim, point);
	for (int i = pending_syncs > base ? pending_syncs : base; i < id; i++)
		if (node(i)->sync)
			add_edge(i, id, with_labels ? "synced home copy" : NULL);
	pending_syncs = id + 1;
	return id;
}

int tsr__dag_task(const char *name, int pdim, const int64_t point[3], struct tsr_dcell **cell)
{
	pthread_mutex_lock(&lock);
	int id = consumer_node(name, 0, pdim, point);
	*cell = node(id)->cell;
	pthread_mutex_unlock(&lock);
	return id;
}

int tsr__dag_internal(const char *name, int pdim, const int64_t point[3])
{
	pthread_mutex_lock(&lock);
	int id = consumer_node(name, 1, pdim, point);
	pthread_mutex_unlock(&lock);
	return id;
}

int tsr__dag_sync(int pdim, const int64_t point[3])
{
	pthread_mutex_lock(&lock);
	int id = new_node("tsr_sync", 1, pdim, point);
	node(id)->sync = 1;
	pthread_mutex_unlock(&lock);
	return id;
}

/* A node's cost: the perf model's expected length of its task on the first worker's
 * architecture, asked again every COST_REFRESH tasks of one codelet and data footprint. StarPU
 * reads a model under a lock that every worker ending a task of the model takes to write it
 * (while the model calibrates), and the host thread that asked at each task slept on it: with
 * the graph's lock, 6,800 context switches in 20,000 steps of Task Bench's stencil_1d (16 kernel
 * iterations), 1,150 without the graph's lock, 250-400 with this (eager: 600). A calibrating
 * model is followed within COST_REFRESH tasks. */
enum { COST_SLOTS = 16, COST_REFRESH = 64 };
static struct cost_slot {
	const struct starpu_codelet *cl;
	uint32_t footprint;
	int uses;
	double length;
} costs[COST_SLOTS];

static double expected_length(struct starpu_task *task)
{
	struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(0, task->sched_ctx);
	struct starpu_perfmodel *model = task->cl->model;
	if (!model->is_loaded) /* StarPU loads a model as it answers about it, not before */
		(void)starpu_task_expected_length(task, arch, 0);
	/* fixed in the task's job while it still lists its views (here, or order.c's fix_footprint
	 * for direct task data) */
	uint32_t fp = starpu_task_footprint(model, task, arch, 0);
	struct cost_slot *s = &costs[((uintptr_t)task->cl / 64 + fp) % COST_SLOTS];

	if (s->cl != task->cl || s->footprint != fp || s->uses % COST_REFRESH == 0) {
		s->cl = task->cl;
		s->footprint = fp;
		s->uses = 0;
		s->length = starpu_task_expected_length(task, arch, 0);
	}

	s->uses++;
	return s->length;
}

void tsr__dag_set_cost(int id, struct starpu_task *task)
{
	if (!tsr__critpath_on)
		return;

	double c = expected_length(task);

	pthread_mutex_lock(&lock);
	struct dnode *d = node(id); /* made just before: not done */
	if (!isnan(c) && c > 0) {
		set_blevel(d, d->blevel + c - d->cost);
		d->cost = c;
	}
	pthread_mutex_unlock(&lock);
}

/* Raise the bottom levels of the not-yet-finished ancestors of `id`. */
static void propagate(int id)
{
	struct dnode *d = node(id);
	if (!d)
		return;

	for (int i = 0; i < d->npred; i++) {
		if (node_done(d->pred[i]))
			continue;

		struct dnode *p = node(d->pred[i]);
		double b = p->cost + d->blevel;
		if (b > p->blevel) {
			set_blevel(p, b);
			propagate(d->pred[i]);
		}
	}
}

/* Whether the edge from -> to (with this label, when labels are kept) is known. A node's edges
 * are added together, just after the node (the host thread adds nodes one at a time), so the
 * edges into `to` are the last ones. */
static int known_edge(int from, int to, const char *label)
{
	for (int i = nedges - 1; i >= 0 && edges[i].to == to; i--)
		if (edges[i].from == from && (!label || !strcmp(edges[i].label, label)))
			return 1;
	return 0;
}

/* Whether `from` is among the predecessors of `to` (the critical path alone keeps no edge list). */
static int known_pred(int from, int to)
{
	const struct dnode *d = node(to);
	for (int i = d->npred - 1; i >= 0; i--)
		if (d->pred[i] == from)
			return 1;
	return 0;
}

/* Under lock: `from` joins the predecessors of `to` (the critical path's bottom levels). */
static void push_pred(int from, int to)
{
	struct dnode *d = node(to);
	TSR_GROW(d->pred, d->npred, d->cappred, 4);
	d->pred[d->npred++] = from;
}

/* Under lock, the critical path alone: `from` becomes a predecessor of `to` unless it is done. */
static void add_pred(int from, int to)
{
	if (!node_done(from) && !known_pred(from, to))
		push_pred(from, to);
}

/* Under lock. label: NULL without labels. */
static void add_edge(int from, int to, const char *label)
{
	/* nodes are numbered in submission order, and a task waits only for earlier ones: the graph
	 * is acyclic, so propagate ends */
	tsr__assert(from >= 0 && from < to && to < nnodes);
	if (!tsr__dag_whole) {
		add_pred(from, to);
		return;
	}

	int new_pair = !known_edge(from, to, NULL);
	if (!new_pair && (!label || known_edge(from, to, label)))
		return;

	TSR_GROW(edges, nedges, capedges, 256);
	edges[nedges].from = from;
	edges[nedges].to = to;
	edges[nedges].label = label ? strdup(label) : NULL;
	if (label && !edges[nedges].label)
		abort();
	nedges++;

	if (tsr__critpath_on && new_pair)
		push_pred(from, to);
}

void tsr__dag_edge(int from, int to, const char *why)
{
	if (from < 0 || to < 0)
		return;

	pthread_mutex_lock(&lock);
	add_edge(from, to, with_labels ? why : NULL);
	if (tsr__critpath_on)
		propagate(to);
	pthread_mutex_unlock(&lock);
}

/* An access's name on labels: its privilege, or FOLD(op) for a fold task's write. */
static const char *acc_name(tsr_privilege_t priv, int fold_op, char *buf, size_t n)
{
	if (!fold_op)
		return tsr__priv_name(priv);

	snprintf(buf, n, "FOLD(%s)", tsr__redop_name(fold_op));
	return buf;
}

/* Under lock: the edge from an earlier access e to this one (label only when kept). */
static void access_edge(const struct dacc *e, int id, const struct tsr_region *s, int f,
			tsr_privilege_t priv, int fold_op)
{
	if (!with_labels) {
		add_edge(e->task, id, NULL);
		return;
	}

	char label[256], b1[48], b2[48];
	snprintf(label, sizeof label, "%s.%s %s->%s", s->name, s->fields[f].name,
		 acc_name(e->priv, e->fold_op, b1, sizeof b1),
		 acc_name(priv, fold_op, b2, sizeof b2));
	add_edge(e->task, id, label);
}

/* Under lock: drop the recorded accesses that a write of box b covers (later accesses meet the
 * write first and stop there). */
static void supersede(struct daccs *a, tsr_box_t b)
{
	int k = 0;
	for (int i = 0; i < a->nw; i++)
		if (!tsr_box_contains(b, a->w[i].box))
			a->w[k++] = a->w[i];
	a->nw = k;

	k = 0;
	for (int i = 0; i < a->nr; i++)
		if (!tsr_box_contains(b, a->r[i].box))
			a->r[k++] = a->r[i];
	a->nr = k;
}

/* Under lock, the critical path alone: drop the accesses of done tasks once the list has doubled
 * since it was last pruned (they give no edge that matters; a covering write dropped with them
 * only lets a later scan go on to older accesses, which that write waited for: done too). */
static void prune_accesses(struct dacc *v, int *n, int *kept)
{
	if (tsr__dag_whole || *n < 2 * *kept + 16)
		return;

	int k = 0;
	for (int i = 0; i < *n; i++)
		if (!node_done(v[i].task))
			v[k++] = v[i];
	*n = k;
	*kept = k;
}

static struct daccs *field_accesses(const struct tsr_region *s, int f)
{
	struct tsr_node *root = &s->root->nodes[f];
	if (!root->dag) {
		root->dag = calloc(1, sizeof(struct daccs));
		if (!root->dag)
			abort();
	}
	return root->dag;
}

/* Task `id` accesses field f of subregion s with privilege priv: edges from earlier conflicting
 * accesses to overlapping data, newest first, back to the newest write that covers the box. */
static void record_access(int id, const struct tsr_region *s, int f, tsr_privilege_t priv,
			  int fold_op)
{
	struct daccs *a = field_accesses(s, f);

	pthread_mutex_lock(&lock);
	int writes = priv != TSR_READ;
	long cover = -1; /* seq of the newest covering plain write */

	for (int i = a->nw - 1; i >= 0; i--) {
		struct dacc *e = &a->w[i];
		if (e->task == id || !tsr__box_overlap(e->box, s->bounds))
			continue;

		/* one operator: no order */
		if (!(TSR_PRIV_IS_REDUCE(e->priv) && e->priv == priv))
			access_edge(e, id, s, f, priv, fold_op);

		if (!TSR_PRIV_IS_REDUCE(e->priv) && tsr_box_contains(e->box, s->bounds)) {
			cover = e->seq;
			break;
		}
	}

	if (writes)
		for (int i = a->nr - 1; i >= 0; i--) {
			struct dacc *e = &a->r[i];
			if (e->seq < cover)
				break;
			if (e->task != id && tsr__box_overlap(e->box, s->bounds))
				access_edge(e, id, s, f, priv, fold_op);
		}

	if (writes && !TSR_PRIV_IS_REDUCE(priv))
		supersede(a, s->bounds);

	struct dacc *e;
	if (writes) {
		prune_accesses(a->w, &a->nw, &a->keptw);
		TSR_GROW(a->w, a->nw, a->capw, 8);
		e = &a->w[a->nw++];
	} else {
		prune_accesses(a->r, &a->nr, &a->keptr);
		TSR_GROW(a->r, a->nr, a->capr, 8);
		e = &a->r[a->nr++];
	}

	e->task = id;
	e->seq = a->seq++;
	e->box = s->bounds;
	e->priv = priv;
	e->fold_op = fold_op;

	if (tsr__critpath_on)
		propagate(id);
	pthread_mutex_unlock(&lock);
}

void tsr__dag_access(int id, const struct tsr_region *s, int f, tsr_privilege_t priv)
{
	record_access(id, s, f, priv, 0);
}

/* A fold task combines a private buffer into s: it reads and writes s, after the earlier folds
 * into it (color order), so it is a READ_WRITE for the graph, labelled FOLD(op). */
void tsr__dag_fold_access(int id, const struct tsr_region *s, int f, int op)
{
	record_access(id, s, f, TSR_READ_WRITE, op);
}

void tsr__dag_node_free(struct tsr_node *n)
{
	struct daccs *a = n->dag;
	if (a) {
		free(a->w);
		free(a->r);
		free(a);
		n->dag = NULL;
	}
}

/* Task callback (worker thread) of one of Tessera's own tasks (a point's node ends through its
 * cell): node `id` has run, so its bottom level no longer matters, nor (the critical path alone)
 * its predecessors. */
void tsr__dag_done(int id)
{
	pthread_mutex_lock(&lock);
	struct dnode *d = node(id); /* NULL: dropped, so done already */
	if (d)
		d->done = 1;
	if (d && !tsr__dag_whole) {
		free(d->pred);
		d->pred = NULL;
		d->npred = d->cappred = 0;
	}
	pthread_mutex_unlock(&lock);
}

int tsr__dag_count(void)
{
	pthread_mutex_lock(&lock);
	int n = nnodes;
	pthread_mutex_unlock(&lock);
	return n;
}

/* Whether edge i's pair was met before, among the edges into its target. */
static int pair_seen(int i)
{
	for (int j = i - 1; j >= 0 && edges[j].to == edges[i].to; j--)
		if (edges[j].from == edges[i].from)
			return 1;
	return 0;
}

void tsr__dag_pairs(void (*fn)(int from, int to, void *arg), void *arg)
{
	pthread_mutex_lock(&lock);
	for (int i = 0; i < nedges; i++)
		if (!pair_seen(i))
			fn(edges[i].from, edges[i].to, arg);
	pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------------------ the dot file */

/* Nodes written: those of the first max_iters iterations (all when 0). */
static int written(int id)
{
	return !max_iters || nodes[id].iter < max_iters;
}

/* Nodes lo..hi-1 of launch nodes[lo].launch: its label names the task it launched. */
static void launch_label(FILE *f, int lo, int hi)
{
	fprintf(f, "label=\"launch %d", nodes[lo].launch + 1);
	for (int i = lo; i < hi; i++)
		if (!nodes[i].internal) {
			fprintf(f, ": ");
			tsr__put_escaped(f, nodes[i].name);
			break;
		}
	fprintf(f, "\";\n");
}

/* A node: in its launch's box, an index launch's point shows its point only; the tooltip (and
 * the tests) have its number and full name. Tessera's own tasks are drawn dashed. */
static void write_node(FILE *f, int id, int in_box)
{
	const struct dnode *d = &nodes[id];
	char pl[64];
	tsr__point_label(d->pdim, d->point, pl, sizeof pl);

	fprintf(f, "  t%d [label=\"", id);
	if (!in_box || d->internal || !d->pdim)
		tsr__put_escaped(f, d->name);
	fprintf(f, "%s\", tooltip=\"%d: ", pl, id);
	tsr__put_escaped(f, d->name);
	fprintf(f, "%s\"%s];\n", pl, d->internal ? ", style=dashed" : "");
}

/* One launch's nodes lo..hi-1: a box of their own when there are several. */
static void write_launch(FILE *f, int lo, int hi)
{
	int box = hi - lo > 1;
	if (box) {
		fprintf(f, "subgraph cluster_l%d {\n", nodes[lo].launch);
		launch_label(f, lo, hi);
	}

	for (int i = lo; i < hi; i++)
		write_node(f, i, box);

	if (box)
		fprintf(f, "}\n");
}

/* One iteration's nodes lo..hi-1, launch by launch; boxed when the graph has several. */
static void write_iteration(FILE *f, int lo, int hi, int boxed)
{
	if (boxed)
		fprintf(f, "subgraph cluster_i%d {\nlabel=\"iteration %d\";\n", nodes[lo].iter,
			nodes[lo].iter + 1);

	for (int i = lo; i < hi;) {
		int j = i + 1;
		while (j < hi && nodes[j].launch == nodes[i].launch)
			j++;
		write_launch(f, i, j);
		i = j;
	}

	if (boxed)
		fprintf(f, "}\n");
}

/* Every reason for the pair of edge i, one per line, on one label. */
static void write_reasons(FILE *f, int i)
{
	int first = 1;
	for (int j = i; j < nedges && edges[j].to == edges[i].to; j++) {
		if (edges[j].from != edges[i].from)
			continue;
		if (!first)
			fprintf(f, "\\n");
		tsr__put_escaped(f, edges[j].label);
		first = 0;
	}
}

/* Each node's predecessors, once each and sorted (CSR: preds of n at pred[first[n]..first[n+1]),
 * for the edges a path through another task implies. NULL arrays when out of memory. */
struct preds {
	int *first, *pred;
};

static int int_cmp(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return a < b ? -1 : a > b;
}

static void preds_make(struct preds *p)
{
	p->first = calloc((size_t)nnodes + 1, sizeof *p->first);
	p->pred = malloc(((size_t)nedges + 1) * sizeof *p->pred);
	if (!p->first || !p->pred)
		return;

	int k = 0;
	for (int i = 0, n = 0; n < nnodes; n++) {
		p->first[n] = k;
		for (; i < nedges && edges[i].to == n; i++)
			if (!pair_seen(i))
				p->pred[k++] = edges[i].from;
		qsort(p->pred + p->first[n], (size_t)(k - p->first[n]), sizeof(int), int_cmp);
	}
	p->first[nnodes] = k;
}

static int has_pred(const struct preds *p, int n, int a)
{
	return bsearch(&a, p->pred + p->first[n], (size_t)(p->first[n + 1] - p->first[n]),
		       sizeof(int), int_cmp) != NULL;
}

/* Whether a -> c also goes a -> b -> c through another task b (then the drawing leaves it out;
 * with labels every edge is drawn). Nodes are numbered in submission order, so a < b < c. A
 * node with very many predecessors is not searched (the cost is their number squared). */
static int implied(const struct preds *p, int a, int c)
{
	enum { MAX_SEARCHED = 512 };
	int lo = p->first[c], hi = p->first[c + 1];
	if (with_labels || !p->pred || hi - lo > MAX_SEARCHED)
		return 0;

	for (int j = hi - 1; j >= lo && p->pred[j] > a; j--)
		if (has_pred(p, p->pred[j], a))
			return 1;
	return 0;
}

static void write_edges(FILE *f)
{
	struct preds p = {NULL, NULL};
	if (!with_labels)
		preds_make(&p);

	for (int i = 0; i < nedges; i++) {
		if (pair_seen(i) || !written(edges[i].from) || !written(edges[i].to))
			continue;
		if (p.first && implied(&p, edges[i].from, edges[i].to))
			continue;

		fprintf(f, "  t%d -> t%d", edges[i].from, edges[i].to);
		if (edges[i].label) {
			fprintf(f, " [label=\"");
			write_reasons(f, i);
			fprintf(f, "\"]");
		}
		fprintf(f, ";\n");
	}

	free(p.first);
	free(p.pred);
}

/* What the file leaves out (TSR_DAG_ITERS), said on the graph itself. */
static void write_omission(FILE *f, int shown)
{
	int last = nnodes ? nodes[nnodes - 1].iter + 1 : 0;
	if (shown == nnodes)
		return;

	fprintf(f,
		"  label=\"iterations %d to %d not written (TSR_DAG_ITERS=%d): %d of %d tasks "
		"shown\";\n  labelloc=b;\n",
		max_iters + 1, last, max_iters, shown, nnodes);
}

/* Under lock; the whole graph was kept (nodes[id] is node id). */
static void write_graph(FILE *f)
{
	tsr__assert(base == 0);
	fprintf(f, "digraph tessera {\n"
		   "  graph [fontsize=10, ranksep=0.3, nodesep=0.15];\n"
		   "  node [shape=box, fontsize=10, height=0.25, margin=\"0.04,0.02\"];\n"
		   "  edge [arrowsize=0.5];\n");

	int shown = 0;
	while (shown < nnodes && written(shown))
		shown++;

	int boxed = shown > 0 && nodes[shown - 1].iter > 0;
	for (int i = 0; i < shown;) {
		int j = i + 1;
		while (j < shown && nodes[j].iter == nodes[i].iter)
			j++;
		write_iteration(f, i, j, boxed);
		i = j;
	}

	write_edges(f);
	write_omission(f, shown);
	fprintf(f, "}\n");
}

int tsr__dag_write(const char *file)
{
	FILE *f = fopen(file, "w");
	if (!f)
		return tsr__err(TSR_EINVAL, "tsr_finalize: cannot write graph file '%s': %s", file,
				strerror(errno));

	pthread_mutex_lock(&lock);
	write_graph(f);
	pthread_mutex_unlock(&lock);
	return tsr__close_written(f, file, "graph file");
}

/* At tsr_finalize, after the graph was written. */
void tsr__dag_free(void)
{
	for (int i = 0; i < nnodes - base; i++)
		node_free(&nodes[i]);
	cell_free_all();
	memset(costs, 0, sizeof costs);
	free(nodes);
	nodes = NULL;
	nnodes = capnodes = base = done_prefix = 0;

	for (int i = 0; i < nedges; i++)
		free(edges[i].label);
	free(edges);
	edges = NULL;
	nedges = capedges = 0;

	free(iter_tasks);
	iter_tasks = NULL;
	niter_tasks = capiter_tasks = 0;
	cur_launch = -1;
	cur_iter = 0;
	run_key = NULL;
	pending_syncs = 0;

	tsr__dag_on = tsr__critpath_on = tsr__dag_whole = 0;
}
