/* launch_check.c: a launch is validated completely before anything is submitted: handles, field
 * ids, privileges, counts, the launch domain, colors and projections, and requirements that
 * interfere (two of one launch that alias and write, two points that write one subregion). Each
 * error names the task, the requirement and the object. Nothing here changes any state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "launch.h"

/* A future requirement: its future. */
static int resolve_future(const char *tn, int i, const tsr_req_t *u, struct resolved_req *q)
{
	if (tsr__future_lookup((tsr_future_t){u->handle}, "launch", &q->fut))
		return tsr__err(TSR_ESTALE,
				"task '%s': requirement %d: future id %#llx was destroyed "
				"or never created",
				tn, i, (unsigned long long)u->handle);
	return TSR_OK;
}

/* A region or partition requirement: the object it names, its region and the region's root. */
static int resolve_object(const char *tn, int i, const tsr_req_t *u, int index,
			  struct resolved_req *q)
{
	if (u->kind == TSR_REQ_REGION) {
		q->region = tsr__handle_get(TSR_K_REGION, u->handle);
		if (!q->region)
			return tsr__err(TSR_ESTALE,
					"task '%s': requirement %d: region id %#llx was destroyed "
					"or never created",
					tn, i, (unsigned long long)u->handle);
	} else if (u->kind == TSR_REQ_PARTITION) {
		q->part = tsr__handle_get(TSR_K_PARTITION, u->handle);
		if (!index)
			return tsr__err(TSR_EINVAL,
					"task '%s': requirement %d names partition '%s': a single "
					"launch takes regions (tsr_partition_subregion) and an "
					"index launch takes partitions",
					tn, i, q->part ? q->part->name : "(destroyed)");
		if (!q->part)
			return tsr__err(TSR_ESTALE,
					"task '%s': requirement %d: partition id %#llx was "
					"destroyed or never created",
					tn, i, (unsigned long long)u->handle);
		q->region = q->part->parent;
	} else {
		return tsr__err(TSR_EINVAL, "task '%s': requirement %d: unknown kind %d", tn, i,
				(int)u->kind);
	}

	q->root = q->region->root;
	tsr__assert(q->root != NULL); /* every live region knows its root */
	return TSR_OK;
}

/* The requirement's fields: 1 to TSR_MAX_REQ_FIELDS ids of its region, each once, none mapped
 * on the host. rn: the region's or partition's name. */
static int resolve_fields(const char *tn, int i, const tsr_req_t *u, const char *rn,
			  struct resolved_req *q)
{
	if (u->nfields < 1 || u->nfields > TSR_MAX_REQ_FIELDS)
		return tsr__err(TSR_EINVAL,
				"task '%s': requirement %d on '%s': needs 1 to %d fields, got %d",
				tn, i, rn, TSR_MAX_REQ_FIELDS, u->nfields);

	q->nfields = u->nfields;
	for (int k = 0; k < u->nfields; k++) {
		int f = u->fields[k];
		if (f < 0 || f >= q->region->nfields)
			return tsr__err(TSR_ENOFIELD,
					"task '%s': requirement %d: field id %d is not in region "
					"'%s' (it has %d fields)",
					tn, i, f, q->region->name, q->region->nfields);

		for (int j = 0; j < k; j++)
			if (q->fields[j] == f)
				return tsr__err(TSR_EINVAL,
						"task '%s': requirement %d: field '%s' listed "
						"twice",
						tn, i, q->region->fields[f].name);
		q->fields[k] = f;
		if (q->root->mapped[f])
			return tsr__err(TSR_EBUSY,
					"task '%s': requirement %d: field '%s' of region '%s' is "
					"mapped on the host; tsr_unmap it before launching",
					tn, i, q->region->fields[f].name, q->root->name);
	}

	return TSR_OK;
}

/* The privilege: READ, WRITE, READ_WRITE, or REDUCE by an operator valid for every field. */
static int resolve_privilege(const char *tn, int i, const char *rn, struct resolved_req *q)
{
	tsr_privilege_t p = q->priv;
	if (p < 0) /* a negative value would reach TSR_REDUCE's shift below */
		return tsr__err(TSR_EINVAL,
				"task '%s': requirement %d on '%s': invalid privilege %d", tn, i,
				rn, (int)p);

	if (!TSR_PRIV_IS_REDUCE(p)) {
		if (p != TSR_READ && p != TSR_WRITE && p != TSR_READ_WRITE)
			return tsr__err(TSR_EINVAL,
					"task '%s': requirement %d on '%s': invalid privilege %#x",
					tn, i, rn, (unsigned)p);
		return TSR_OK;
	}

	q->redop = TSR_PRIV_REDOP(p).id;
	if (p != TSR_REDUCE(TSR_PRIV_REDOP(p)))
		return tsr__err(TSR_EINVAL, "task '%s': requirement %d: invalid privilege %#x", tn,
				i, (unsigned)p);

	for (int k = 0; k < q->nfields; k++) {
		const struct tsr_fieldinfo *fd = &q->region->fields[q->fields[k]];
		char what[160];
		snprintf(what, sizeof what, "task '%s': requirement %d: field '%s' of '%s'", tn, i,
			 fd->name, rn);
		int rc = tsr__redop_valid(fd->type, q->redop, what);
		if (rc)
			return rc;
	}

	return TSR_OK;
}

/* Requirement i of task tn as the launch uses it, or the error that names what is wrong with it,
 * step by step: the object, its fields, its privilege, then aliasing. */
static int resolve(const char *tn, int i, const tsr_req_t *u, int index, struct resolved_req *q)
{
	memset(q, 0, sizeof *q);
	q->kind = u->kind;
	q->priv = u->priv;
	q->proj = u->proj;
	q->proj_arg = u->proj_arg;

	if (u->kind == TSR_REQ_FUTURE)
		return resolve_future(tn, i, u, q);

	int rc = resolve_object(tn, i, u, index, q);
	if (rc)
		return rc;

	const char *rn = q->part ? q->part->name : q->region->name;
	if ((rc = resolve_fields(tn, i, u, rn, q)) || (rc = resolve_privilege(tn, i, rn, q)))
		return rc;

	tsr_privilege_t p = q->priv;
	int aliased = q->part ? (!q->part->disjoint || tsr__region_aliased(q->region))
			      : tsr__region_aliased(q->region);
	if (index && q->part && !q->part->disjoint && (p == TSR_WRITE || p == TSR_READ_WRITE))
		return tsr__err(TSR_EINTERFERE,
				"task '%s': requirement %d: %s of field '%s' through '%s', which "
				"is aliased (its subregions overlap): writes must go through a "
				"disjoint partition",
				tn, i, tsr__priv_name(p), q->region->fields[q->fields[0]].name, rn);

	if (q->redop && (aliased || tsr__redux_ordered()))
		q->private_redop = q->redop;
	return TSR_OK;
}

/* The first field two requirements share (messages name it), or -1. */
static int common_field(const struct resolved_req *a, const struct resolved_req *b)
{
	for (int i = 0; i < a->nfields; i++)
		for (int j = 0; j < b->nfields; j++)
			if (a->fields[i] == b->fields[j])
				return a->fields[i];
	return -1;
}

static int fields_overlap(const struct resolved_req *a, const struct resolved_req *b)
{
	return common_field(a, b) >= 0;
}

/* Pairs of requirements of one launch that cannot be honoured together. */
int tsr__check_pairs(const char *tn, int n, struct resolved_req *q, int index)
{
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++) {
			if (a == b || q[a].kind == TSR_REQ_FUTURE || q[b].kind == TSR_REQ_FUTURE ||
			    q[a].priv == TSR_READ)
				continue;
			if (q[a].root != q[b].root || !fields_overlap(&q[a], &q[b]))
				continue;
			if (q[a].redop && q[b].redop == q[a].redop)
				continue; /* reductions with one operator commute */
			if (index && q[a].kind == TSR_REQ_PARTITION &&
			    q[b].kind == TSR_REQ_PARTITION)
				/* decided point by point once colors are known (check_points) */
				continue;
			/* only data that can overlap interferes: for an index launch, the regions
			 * the two partitions cut (e.g. the private and shared halves of one
			 * disjoint partition) */
			if (!tsr__box_overlap(q[a].region->bounds, q[b].region->bounds))
				continue;

			return tsr__err(TSR_EINTERFERE,
					"task '%s': requirements %d (%s on '%s') "
					"and %d (%s on '%s') both touch field '%s' "
					"of region '%s' and interfere",
					tn, a, tsr__priv_name(q[a].priv),
					q[a].part ? q[a].part->name : q[a].region->name, b,
					tsr__priv_name(q[b].priv),
					q[b].part ? q[b].part->name : q[b].region->name,
					q[a].root->fields[common_field(&q[a], &q[b])].name,
					q[a].root->name);
		}

	return TSR_OK;
}

/* Index launch, partition requirements a (which writes) and b on a common field: an error naming
 * the first point of a whose subregion overlaps one of b at any point, or TSR_OK. */
static int points_interfere(const char *tn, int n, const struct resolved_req *q, int a, int b,
			    int64_t npoints, const int *colors)
{
	int common = common_field(&q[a], &q[b]);
	tsr__assert(common >= 0); /* the caller saw the fields overlap */
	const char *field = q[a].root->fields[common].name;
	char bs[96], bs2[96];

	for (int64_t pi = 0; pi < npoints; pi++) {
		tsr_box_t ba = q[a].part->boxes[colors[pi * n + a]];
		for (int64_t pj = 0; pj < npoints; pj++) {
			tsr_box_t bb = q[b].part->boxes[colors[pj * n + b]];
			if (!tsr__box_overlap(ba, bb))
				continue;
			return tsr__err(TSR_EINTERFERE,
					"task '%s': requirement %d (%s on '%s') at point %lld "
					"writes field '%s' of %s, which requirement %d "
					"(%s on '%s') touches at point %lld (%s): "
					"the points interfere",
					tn, a, tsr__priv_name(q[a].priv), q[a].part->name,
					(long long)pi, field, tsr__box_str(ba, bs, sizeof bs), b,
					tsr__priv_name(q[b].priv), q[b].part->name, (long long)pj,
					tsr__box_str(bb, bs2, sizeof bs2));
		}
	}

	return TSR_OK;
}

/* Index launch: two partition requirements on one field interfere if a subregion one of them
 * writes at some point overlaps a subregion the other touches at any point (Legion's rule). */
int tsr__check_points(const char *tn, int n, const struct resolved_req *q, int64_t npoints,
		      const int *colors)
{
	for (int a = 0; a < n; a++) {
		if (q[a].kind != TSR_REQ_PARTITION || q[a].priv == TSR_READ)
			continue;

		for (int b = 0; b < n; b++) {
			if (b == a || q[b].kind != TSR_REQ_PARTITION || q[a].root != q[b].root ||
			    !fields_overlap(&q[a], &q[b]))
				continue;
			if (q[a].redop && q[b].redop == q[a].redop)
				continue;
			if (!tsr__box_overlap(q[a].region->bounds, q[b].region->bounds))
				continue;

			if (npoints > 2048)
				return tsr__err(TSR_EINTERFERE,
						"task '%s': requirements %d and %d write and "
						"access field '%s' of region '%s' through "
						"partitions '%s' and '%s'; with %lld points the "
						"launch is not checked point by point: split it",
						tn, a, b, q[a].region->fields[q[a].fields[0]].name,
						q[a].root->name, q[a].part->name, q[b].part->name,
						(long long)npoints);

			int rc = points_interfere(tn, n, q, a, b, npoints, colors);
			if (rc)
				return rc;
		}
	}

	return TSR_OK;
}

int tsr__check_counts(const char *fn, const struct tsr_task *t, int nreqs, const tsr_req_t *reqs,
		      const void *args, size_t arglen)
{
	if (nreqs < 0 || nreqs > TSR_MAX_REQS || (nreqs && !reqs) || (arglen && !args))
		return tsr__err(TSR_EINVAL,
				"%s: task '%s': bad requirement count %d or null array/args", fn,
				t->name, nreqs);
	return TSR_OK;
}

int tsr__resolve_all(const char *tn, int nreqs, const tsr_req_t *reqs, int index,
		     struct resolved_req *q)
{
	for (int i = 0; i < nreqs; i++) {
		int rc = resolve(tn, i, &reqs[i], index, &q[i]);
		if (rc)
			return rc;
	}
	return TSR_OK;
}

int tsr__check_index_args(const struct tsr_task *t, tsr_box_t domain, int nreqs,
			  const tsr_req_t *reqs, const void *args, size_t arglen, tsr_redop_t redop,
			  const tsr_future_t *result)
{
	int rc = tsr__check_counts("tsr_index_launch", t, nreqs, reqs, args, arglen);
	if (rc)
		return rc;

	char bs[96];
	if (!tsr__box_valid(domain))
		return tsr__err(tsr__box_problem_code(domain),
				"tsr_index_launch: task '%s': launch domain %s %s", t->name,
				tsr__box_str(domain, bs, sizeof bs), tsr__box_problem(domain));

	/* even when no result is asked: a typo is a typo */
	if (redop.id != TSR_REDOP_NONE.id && !tsr__redop_known(redop.id)) {
		char what[128];
		snprintf(what, sizeof what, "tsr_index_launch: task '%s'", t->name);
		return tsr__redop_unknown(redop.id, what);
	}

	if (result && t->ret_type != TSR_NONE) {
		char what[128];
		snprintf(what, sizeof what, "tsr_index_launch: task '%s': result", t->name);
		return tsr__redop_valid(t->ret_type, redop.id, what);
	}

	return TSR_OK;
}

/* The color requirement i names at a point: the point itself, or what its projection gives. */
static int project(const struct index_launch *L, const int64_t point[3], int i, int64_t color[3])
{
	const struct resolved_req *q = &L->q[i];
	char cs[64];

	memcpy(color, point, 3 * sizeof *color);
	if (q->proj) {
		color[0] = color[1] = color[2] = 0;
		if (q->proj(point, color, q->proj_arg))
			return tsr__err(TSR_EBOUNDS,
					"tsr_index_launch: task '%s' point %s: requirement %d: "
					"projection gives no color of partition '%s'",
					L->t->name,
					tsr__color_str(L->domain.dim, point, cs, sizeof cs), i,
					q->part->name);
	} else if (L->domain.dim != q->part->colors.dim) {
		return tsr__err(TSR_EBOUNDS,
				"tsr_index_launch: task '%s': requirement %d: launch domain is "
				"%d-D but partition '%s' has %d-D colors",
				L->t->name, i, L->domain.dim, q->part->name, q->part->colors.dim);
	}

	return TSR_OK;
}

/* Requirement i's color index at a point (-1 for a region or a future). A region that every
 * point of a launch of several points would write interferes with itself. */
static int color_of(const struct index_launch *L, const int64_t point[3], int i, int *c)
{
	const struct resolved_req *q = &L->q[i];
	*c = -1;

	if (q->kind == TSR_REQ_REGION && q->priv != TSR_READ && !q->redop && L->npoints > 1)
		return tsr__err(TSR_EINTERFERE,
				"tsr_index_launch: task '%s': requirement %d: every point would %s "
				"field '%s' of the whole region '%s'; write through a disjoint "
				"partition instead",
				L->t->name, i, tsr__priv_name(q->priv),
				q->region->fields[q->fields[0]].name, q->region->name);
	if (q->kind != TSR_REQ_PARTITION)
		return TSR_OK;

	int64_t color[3];
	int rc = project(L, point, i, color);
	if (rc)
		return rc;

	*c = tsr__color_index(q->part, color);
	if (*c < 0) {
		char bs[96], cs[64], cs2[96];
		return tsr__err(TSR_EBOUNDS,
				"tsr_index_launch: task '%s' point %s: requirement %d: color %s is "
				"outside partition '%s' of region '%s' (colors %s)",
				L->t->name, tsr__color_str(L->domain.dim, point, cs, sizeof cs), i,
				tsr__color_str(q->part->colors.dim, color, cs2, sizeof cs2),
				q->part->name, q->part->parent->name,
				tsr__box_str(q->part->colors, bs, sizeof bs));
	}

	return TSR_OK;
}

/* Every point's colors, checked before anything is submitted. */
int tsr__compute_colors(struct index_launch *L)
{
	size_t bytes;
	if (!tsr__size_mul((size_t)L->npoints, (size_t)(L->n ? L->n : 1) * sizeof *L->colors,
			   &bytes))
		L->colors = bytes <= sizeof L->few_colors ? L->few_colors : malloc(bytes);
	if (!L->colors)
		return tsr__err(TSR_ENOMEM, "tsr_index_launch: task '%s': out of memory",
				L->t->name);

	for (int64_t pi = 0; pi < L->npoints; pi++) {
		int64_t point[3];
		tsr__box_point(L->domain, pi, point);

		for (int i = 0; i < L->n; i++) {
			int rc = color_of(L, point, i, &L->colors[pi * L->n + i]);
			if (rc)
				return rc;
		}
	}

	return TSR_OK;
}

/* Requirement i writes: no two points may reach one subregion (the projection must be
 * injective). */
static int check_distinct(const struct index_launch *L, int i)
{
	const struct resolved_req *q = &L->q[i];
	char *seen = calloc(q->part->ncolors, 1);
	if (!seen)
		return tsr__err(TSR_ENOMEM, "tsr_index_launch: out of memory");

	int rc = TSR_OK;
	for (int64_t pi = 0; pi < L->npoints && !rc; pi++) {
		int c = L->colors[pi * L->n + i];
		if (seen[c])
			rc = tsr__err(TSR_EINTERFERE,
				      "tsr_index_launch: task '%s': requirement %d: two points %s "
				      "field '%s' of subregion '%s' (projection is not injective)",
				      L->t->name, i, tsr__priv_name(q->priv),
				      q->region->fields[q->fields[0]].name, q->part->subs[c]->name);
		seen[c] = 1;
	}

	free(seen);
	return rc;
}

/* Writes must reach distinct subregions. */
int tsr__check_writes_distinct(const struct index_launch *L)
{
	for (int i = 0; i < L->n; i++) {
		const struct resolved_req *q = &L->q[i];
		if (q->kind != TSR_REQ_PARTITION || q->priv == TSR_READ || q->redop)
			continue;

		int rc = check_distinct(L, i);
		if (rc)
			return rc;
	}

	return TSR_OK;
}

/* An index launch's result combines the points' values: without an operator there is nothing to
 * combine them with. Said here, in the words of tsr_launch_t, rather than as an unknown
 * operator. */
int tsr__check_result_redop(const struct tsr_task *t, const tsr_launch_t *how)
{
	if (!how->result || t->ret_type == TSR_NONE || how->redop.id != TSR_REDOP_NONE.id)
		return TSR_OK;
	return tsr__err(TSR_EINVAL,
			"tsr_run: task '%s': an index launch asking for a .result needs an "
			"operator to combine the points' values: pass .redop = TSR_SUM (or "
			"TSR_PROD, TSR_MIN, TSR_MAX, or an operator from tsr_redop_register)",
			t->name);
}

/* "CPU and OpenCL": the variants a task has. */
static void variants_str(const struct tsr_task *t, char *buf, size_t n)
{
	const char *names[3] = {"", "", ""};
	int k = 0;

	if (t->cpu)
		names[k++] = "CPU";
	if (t->cuda)
		names[k++] = "CUDA";
	if (t->opencl)
		names[k++] = "OpenCL";

	if (k == 1)
		snprintf(buf, n, "%s %s variant only", names[0][0] == 'O' ? "an" : "a", names[0]);
	else if (k == 2)
		snprintf(buf, n, "%s and %s variants", names[0], names[1]);
	else
		snprintf(buf, n, "%s, %s and %s variants", names[0], names[1], names[2]);
}

int tsr__no_worker_error(const struct tsr_task *t, const char *cpu_why)
{
	char vs[64];

	variants_str(t, vs, sizeof vs);
	return tsr__err(TSR_ENODEV,
			"task '%s': no worker can run it (it has %s%s%s; the runtime runs %d CPU, "
			"%d CUDA and %d OpenCL workers)",
			t->name, vs, cpu_why ? ", and " : "", cpu_why ? cpu_why : "", tsr__rt.ncpu,
			tsr__rt.ncuda, tsr__rt.nopencl);
}

/* Whether a running worker has code for the task. */
static int some_worker_runs(const struct tsr_task *t, int cpu_only)
{
	int cpu = t->cpu && tsr__rt.ncpu > 0;
	if (cpu_only)
		return cpu;

	return cpu || (t->cuda && tsr__rt.ncuda > 0) || (t->opencl && tsr__rt.nopencl > 0);
}

/* The launch's first use of a registered operator (a REDUCE requirement, then the reduction of
 * the returns), said in pl->why; 0 if it uses none. */
static int registered_operator_use(int n, const struct resolved_req *q, int ret_op,
				   struct tsr_placement *pl)
{
	for (int i = 0; i < n; i++)
		if (q[i].redop && !tsr__redop_on_devices(q[i].redop)) {
			snprintf(pl->why, sizeof pl->why,
				 "requirement %d (field '%s' of '%s') reduces with the registered "
				 "operator '%s', whose identity and fold are CPU code",
				 i, q[i].region->fields[q[i].fields[0]].name,
				 q[i].part ? q[i].part->name : q[i].region->name,
				 tsr__redop_name(q[i].redop));
			return 1;
		}

	if (ret_op && !tsr__redop_on_devices(ret_op)) {
		snprintf(pl->why, sizeof pl->why,
			 "its returns are reduced with the registered operator '%s', "
			 "whose identity and fold are CPU code",
			 tsr__redop_name(ret_op));
		return 1;
	}

	return 0;
}

int tsr__check_placement(const struct tsr_task *t, int n, const struct resolved_req *q, int ret_op,
			 struct tsr_placement *pl)
{
	pl->why[0] = '\0';
	pl->cpu_only = registered_operator_use(n, q, ret_op, pl);

	if (pl->cpu_only && !t->cpu) {
		char vs[64];
		variants_str(t, vs, sizeof vs);
		return tsr__err(TSR_ENODEV,
				"task '%s': %s, but the task has %s: give it a CPU variant, or "
				"reduce with a built-in operator (TSR_SUM, TSR_PROD, TSR_MIN, "
				"TSR_MAX)",
				t->name, pl->why, vs);
	}

	if (!some_worker_runs(t, pl->cpu_only))
		return tsr__no_worker_error(t, pl->cpu_only ? pl->why : NULL);
	return TSR_OK;
}
