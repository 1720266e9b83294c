/* dag.c: the task graph (TSR_DAG as Graphviz dot) and its critical path. Tessera derives the
 * dependencies itself from the accesses it submits; with costs from the perf models, the same graph
 * feeds the critical-path policy (bottom levels kept up to date as tasks are added, so a ready
 * task's priority is its longest known path to the end). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct dnode {
	const struct tsr_task *task;
	int pdim;
	int64_t point[3];
	double cost, blevel;
	int done;
	int *pred, npred, cappred;
};

struct dedge {
	int from, to;
	char label[160];
};

struct dacc {
	int task;
	long seq;
	tsr_box_t box;
	tsr_privilege_t priv;
};

/* Per root field: writes (and reductions) and reads since, kept apart so that a read only scans
 * the writes; a read-only field (a matrix) then costs nothing however long the run. */
struct daccs {
	struct dacc *w, *r;
	int nw, capw, nr, capr;
	long seq;
};

/* One lock for the graph: points are added by the submitting thread, finished by workers. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct dnode *nodes;
static int nnodes, capnodes;
static struct dedge *edges;
static int nedges, capedges;
int tsr__dag_on, tsr__critpath_on;

int tsr__dag_task(const struct tsr_task *t, int pdim, const int64_t point[3])
{
	pthread_mutex_lock(&lock);
	TSR_GROW(nodes, nnodes, capnodes, 256);

	struct dnode *d = &nodes[nnodes];
	memset(d, 0, sizeof *d);
	d->task = t;
	d->pdim = pdim;
	memcpy(d->point, point, sizeof d->point);
	d->cost = 1.0;
	d->blevel = 1.0;

	int id = nnodes++;
	pthread_mutex_unlock(&lock);
	return id;
}

/* Cost of a node from the perf model of its task on the first worker's architecture. */
void tsr__dag_set_cost(int id, struct starpu_task *task)
{
	if (!tsr__critpath_on)
		return;

	double c =
		starpu_task_expected_length(task,
					    starpu_worker_get_perf_archtype(0, task->sched_ctx), 0);

	pthread_mutex_lock(&lock);
	if (!isnan(c) && c > 0) {
		nodes[id].blevel += c - nodes[id].cost;
		nodes[id].cost = c;
	}
	pthread_mutex_unlock(&lock);
}

/* Raise the bottom levels of the not-yet-finished ancestors of `id`. */
static void propagate(int id)
{
	struct dnode *d = &nodes[id];

	for (int i = 0; i < d->npred; i++) {
		struct dnode *p = &nodes[d->pred[i]];
		if (p->done)
			continue;

		double b = p->cost + d->blevel;
		if (b > p->blevel) {
			p->blevel = b;
			propagate(d->pred[i]);
		}
	}
}

double tsr__dag_priority(int id)
{
	pthread_mutex_lock(&lock);
	double b = id >= 0 && id < nnodes ? nodes[id].blevel : 0;
	pthread_mutex_unlock(&lock);
	return b;
}

static void add_edge(int from, int to, const char *label)
{
	for (int i = nedges - 1; i >= 0 && edges[i].to == to; i--)
		if (edges[i].from == from && !strcmp(edges[i].label, label))
			return;

	TSR_GROW(edges, nedges, capedges, 256);
	edges[nedges].from = from;
	edges[nedges].to = to;
	snprintf(edges[nedges].label, sizeof edges[nedges].label, "%s", label);
	nedges++;

	if (tsr__critpath_on) {
		struct dnode *d = &nodes[to];
		TSR_GROW(d->pred, d->npred, d->cappred, 4);
		d->pred[d->npred++] = from;
	}
}

/* Task `id` accesses field f of subregion s with privilege priv: edges from earlier conflicting
 * accesses to overlapping data, newest first, back to the newest write that covers the box. */
void tsr__dag_access(int id, const struct tsr_region *s, int f, tsr_privilege_t priv)
{
	struct tsr_node *root = &s->root->nodes[f];
	struct daccs *a = root->dag;
	if (!a) {
		a = calloc(1, sizeof *a);
		if (!a)
			abort();
		root->dag = a;
	}

	pthread_mutex_lock(&lock);
	int writes = priv != TSR_READ;
	char label[160];
	long cover = -1; /* seq of the newest covering plain write */

	for (int i = a->nw - 1; i >= 0; i--) {
		struct dacc *e = &a->w[i];
		if (e->task == id || !tsr__box_overlap(e->box, s->bounds))
			continue;

		/* one operator: no order */
		if (!(TSR_PRIV_IS_REDUCE(e->priv) && e->priv == priv)) {
			snprintf(label, sizeof label, "%s.%s %s->%s", s->name, s->fields[f].name,
				 tsr__priv_name(e->priv), tsr__priv_name(priv));
			add_edge(e->task, id, label);
		}

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
			if (e->task == id || !tsr__box_overlap(e->box, s->bounds))
				continue;

			snprintf(label, sizeof label, "%s.%s READ->%s", s->name, s->fields[f].name,
				 tsr__priv_name(priv));
			add_edge(e->task, id, label);
		}

	if (writes && !TSR_PRIV_IS_REDUCE(priv)) {
		/* accesses this write covers are superseded */
		int k = 0;
		for (int i = 0; i < a->nw; i++)
			if (!tsr_box_contains(s->bounds, a->w[i].box))
				a->w[k++] = a->w[i];
		a->nw = k;

		k = 0;
		for (int i = 0; i < a->nr; i++)
			if (!tsr_box_contains(s->bounds, a->r[i].box))
				a->r[k++] = a->r[i];
		a->nr = k;
	}

	struct dacc *e;
	if (writes) {
		TSR_GROW(a->w, a->nw, a->capw, 8);
		e = &a->w[a->nw++];
	} else {
		TSR_GROW(a->r, a->nr, a->capr, 8);
		e = &a->r[a->nr++];
	}

	e->task = id;
	e->seq = a->seq++;
	e->box = s->bounds;
	e->priv = priv;

	if (tsr__critpath_on)
		propagate(id);
	pthread_mutex_unlock(&lock);
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

/* Task callback (worker thread): node `id` has run, so its bottom level no longer matters. */
void tsr__dag_done(int id)
{
	pthread_mutex_lock(&lock);
	nodes[id].done = 1;
	pthread_mutex_unlock(&lock);
}

int tsr__dag_write(const char *file)
{
	FILE *f = fopen(file, "w");
	if (!f)
		return tsr__err(TSR_EINVAL, "tsr_finalize: cannot write graph file '%s': %s", file,
				strerror(errno));

	fprintf(f, "digraph tessera {\n  node [shape=box];\n");

	for (int i = 0; i < nnodes; i++) {
		char pl[64];
		tsr__point_label(nodes[i].pdim, nodes[i].point, pl, sizeof pl);

		fprintf(f, "  t%d [label=\"%d: ", i, i);
		tsr__put_escaped(f, nodes[i].task->name);
		fprintf(f, "%s\"];\n", pl);
	}

	for (int i = 0; i < nedges; i++) {
		fprintf(f, "  t%d -> t%d [label=\"", edges[i].from, edges[i].to);
		tsr__put_escaped(f, edges[i].label);
		fprintf(f, "\"];\n");
	}

	fprintf(f, "}\n");
	return tsr__close_written(f, file, "graph file");
}

/* At tsr_finalize, after the graph was written. */
void tsr__dag_free(void)
{
	for (int i = 0; i < nnodes; i++)
		free(nodes[i].pred);
	free(nodes);
	nodes = NULL;
	nnodes = capnodes = 0;

	free(edges);
	edges = NULL;
	nedges = capedges = 0;

	tsr__dag_on = tsr__critpath_on = 0;
}
