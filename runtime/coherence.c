/* coherence.c: the per-field state machine over StarPU partition plans.
 * Every (region or subregion, field) node records which of its plans are open read-only and
 * which one is open read-write. Before a task touches a node, tsr__coh_access opens the plans on
 * the path from the root down to it, closing the conflicting ones (children first), with
 * StarPU's asynchronous partition calls; StarPU's sequential consistency then orders the tasks.
 * Invariants: open_rw and open_ro are never both set; a node with open plans is reachable from
 * the root through open plans (closing a plan first closes every plan below it). */
#include <stdlib.h>
#include "internal.h"

static void close_plan(struct tsr_node *n, struct tsr_partition *p)
{
	starpu_data_handle_t *children = p->children[n->field];
	for (int c = 0; c < p->ncolors; c++)
		tsr__coh_close_all(&p->subs[c]->nodes[n->field]);
	starpu_data_unpartition_submit(n->h, p->ncolors, children, tsr__gather_node(n));
	if (n->open_rw == p) {
		n->open_rw = NULL;
	} else {
		for (int i = 0; i < n->nopen_ro; i++)
			if (n->open_ro[i] == p) {
				n->open_ro[i] = n->open_ro[--n->nopen_ro];
				break;
			}
	}
}

void tsr__coh_close_all(struct tsr_node *n)
{
	if (n->open_rw)
		close_plan(n, n->open_rw);
	while (n->nopen_ro > 0)
		close_plan(n, n->open_ro[n->nopen_ro - 1]);
}

static int ro_index(const struct tsr_node *n, const struct tsr_partition *p)
{
	for (int i = 0; i < n->nopen_ro; i++)
		if (n->open_ro[i] == p)
			return i;
	return -1;
}

static void reach(struct tsr_node *n, int write);

/* Open plan p on node x for reading or writing its children. */
static void open_plan(struct tsr_node *x, struct tsr_partition *p, int write)
{
	if (x->open_rw == p)
		return;                   /* open read-write: fine for both */
	reach(x, write);
	starpu_data_handle_t *children = p->children[x->field];
	if (!write) {
		if (ro_index(x, p) >= 0)
			return;
		if (x->open_rw)
			close_plan(x, x->open_rw);
		if (x->nopen_ro == x->cap_ro) {
			int ncap = x->cap_ro ? 2 * x->cap_ro : 4;
			struct tsr_partition **np = realloc(x->open_ro, ncap * sizeof *np);
			if (!np)
				abort();      /* a few pointers: treat as fatal like malloc in StarPU */
			x->open_ro = np;
			x->cap_ro = ncap;
		}
		starpu_data_partition_readonly_submit(x->h, p->ncolors, children);
		x->open_ro[x->nopen_ro++] = p;
		return;
	}
	if (x->open_rw)
		close_plan(x, x->open_rw);
	for (int i = x->nopen_ro - 1; i >= 0; i--)
		if (x->open_ro[i] != p)
			close_plan(x, x->open_ro[i]);
	if (x->nopen_ro == 1) {
		/* p is open read-only and alone: upgrade, after closing plans below its children
		 * (they were read-only views of data that is about to change) */
		for (int c = 0; c < p->ncolors; c++)
			tsr__coh_close_all(&p->subs[c]->nodes[x->field]);
		starpu_data_partition_readwrite_upgrade_submit(x->h, p->ncolors, children);
		x->nopen_ro = 0;
	} else {
		starpu_data_partition_submit(x->h, p->ncolors, children);
	}
	x->open_rw = p;
}

/* Make node n's handle valid for reading (write = 0) or writing from above. */
static void reach(struct tsr_node *n, int write)
{
	if (n->parent)
		open_plan(n->parent, n->part, write);
}

void tsr__coh_access(struct tsr_node *n, int write)
{
	reach(n, write);
	if (write)
		tsr__coh_close_all(n);
	else if (n->open_rw)
		close_plan(n, n->open_rw);
}
