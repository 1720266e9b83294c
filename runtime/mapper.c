/* mapper.c: the user's say in where tasks run: a mapper callback per point task and owners per
 * color of a partition, applied on top of whatever scheduling policy is active. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static tsr_mapper_fn mapper;
static void *mapper_arg;

int tsr_set_mapper(tsr_mapper_fn fn, void *arg)
{
	TSR_REQUIRE_INIT("tsr_set_mapper");
	mapper = fn;
	mapper_arg = arg;
	return TSR_OK;
}

void tsr__mapper_reset(void)
{
	mapper = NULL;
	mapper_arg = NULL;
}

int tsr_worker_count(void)
{
	return tsr__rt.initialized ? (int)starpu_worker_get_count() : 0;
}

tsr_worker_kind_t tsr_worker_kind(int w)
{
	if (!tsr__rt.initialized || w < 0 || w >= (int)starpu_worker_get_count())
		return TSR_WORKER_ANY;

	switch (starpu_worker_get_type(w)) {
	case STARPU_CUDA_WORKER:
		return TSR_WORKER_CUDA;
	case STARPU_OPENCL_WORKER:
		return TSR_WORKER_OPENCL;
	default:
		return TSR_WORKER_CPU;
	}
}

int tsr_worker_node(int w)
{
	if (!tsr__rt.initialized || w < 0 || w >= (int)starpu_worker_get_count())
		return -1;
	return (int)starpu_worker_get_memory_node((unsigned)w);
}

/* What each kind of worker is: its name, StarPU's, and whether a task has code for it. */
const char *tsr__worker_kind_name(tsr_worker_kind_t k)
{
	switch (k) {
	case TSR_WORKER_CPU:
		return "CPU";
	case TSR_WORKER_CUDA:
		return "CUDA";
	case TSR_WORKER_OPENCL:
		return "OpenCL";
	default:
		return "any";
	}
}

static enum starpu_worker_archtype starpu_type_of(tsr_worker_kind_t k)
{
	switch (k) {
	case TSR_WORKER_CUDA:
		return STARPU_CUDA_WORKER;
	case TSR_WORKER_OPENCL:
		return STARPU_OPENCL_WORKER;
	default:
		return STARPU_CPU_WORKER;
	}
}

static uint32_t where_of(tsr_worker_kind_t k)
{
	switch (k) {
	case TSR_WORKER_CUDA:
		return STARPU_CUDA;
	case TSR_WORKER_OPENCL:
		return STARPU_OPENCL;
	default:
		return STARPU_CPU;
	}
}

static int has_variant(const struct tsr_task *t, tsr_worker_kind_t k)
{
	switch (k) {
	case TSR_WORKER_CUDA:
		return t->cuda != NULL;
	case TSR_WORKER_OPENCL:
		return t->opencl != NULL;
	default:
		return t->cpu != NULL;
	}
}

int tsr_partition_set_owner(tsr_partition_t pid, const int64_t color[3], int worker)
{
	struct tsr_partition *p;
	char cs[64];
	int rc = tsr__partition_lookup(pid, "tsr_partition_set_owner", &p);
	if (rc)
		return rc;

	if (!color)
		return tsr__err(TSR_EINVAL, "tsr_partition_set_owner: partition '%s': null color",
				p->name);
	int c = tsr__color_index(p, color);
	if (c < 0)
		return tsr__err(TSR_EBOUNDS,
				"tsr_partition_set_owner: color %s is outside partition '%s'",
				tsr__color_str(p->colors.dim, color, cs, sizeof cs), p->name);
	if (worker < -1 || worker >= (int)starpu_worker_get_count())
		return tsr__err(TSR_EINVAL,
				"tsr_partition_set_owner: partition '%s' color %s: worker %d does "
				"not exist (%u workers)",
				p->name, tsr__color_str(p->colors.dim, color, cs, sizeof cs),
				worker, starpu_worker_get_count());

	if (!p->owners) {
		p->owners = malloc(p->ncolors * sizeof *p->owners);
		if (!p->owners)
			return tsr__err(TSR_ENOMEM, "tsr_partition_set_owner: out of memory");
		for (int i = 0; i < p->ncolors; i++)
			p->owners[i] = -1;
	}

	p->owners[c] = worker;
	return TSR_OK;
}

/* Several ranks: the rank of each color, spread in blocks unless set. */
int tsr_partition_set_rank(tsr_partition_t pid, const int64_t color[3], int rank)
{
	struct tsr_partition *p;
	char cs[64];
	int rc = tsr__partition_lookup(pid, "tsr_partition_set_rank", &p);
	if (rc)
		return rc;

	if (!color)
		return tsr__err(TSR_EINVAL, "tsr_partition_set_rank: partition '%s': null color",
				p->name);
	int c = tsr__color_index(p, color);
	if (c < 0)
		return tsr__err(TSR_EBOUNDS,
				"tsr_partition_set_rank: color %s is outside partition '%s'",
				tsr__color_str(p->colors.dim, color, cs, sizeof cs), p->name);
	int n = tsr_nranks();
	if (rank < 0 || rank >= n)
		return tsr__err(TSR_EBOUNDS,
				"tsr_partition_set_rank: partition '%s' color %s: rank %d is "
				"outside 0..%d (%d rank%s)",
				p->name, tsr__color_str(p->colors.dim, color, cs, sizeof cs), rank,
				n - 1, n, n == 1 ? "" : "s");
	tsr__dist_note("tsr_partition_set_rank", &rank, sizeof rank);

	/* what launches through p said of fields assumed the old ranks */
	if ((rc = tsr__coh_sym_forget(p)))
		return tsr__err(rc, "tsr_partition_set_rank: partition '%s': %s", p->name,
				rc == TSR_ENOMEM ? "out of memory" : tsr_last_error());
	free(p->rank_start);
	free(p->rank_colors);
	p->rank_start = p->rank_colors = NULL;
	p->ranks_gen++;

	if (!p->ranks) {
		int *ranks = malloc(p->ncolors * sizeof *ranks);
		if (!ranks)
			return tsr__err(TSR_ENOMEM, "tsr_partition_set_rank: out of memory");

		/* the other colors keep their blocks: computed while p->ranks is still NULL (once
		 * it is set, tsr__color_rank reads it, and would copy uninitialised memory as
		 * ranks) */
		for (int i = 0; i < p->ncolors; i++)
			ranks[i] = tsr__color_rank(p, i);
		p->ranks = ranks;
	}

	p->ranks[c] = rank;
	return TSR_OK;
}

int tsr__color_rank(const struct tsr_partition *p, int c)
{
	tsr__assert(c >= 0 && c < p->ncolors);
	return tsr__rank_of_color(p, c);
}

int tsr__partition_rank_index(struct tsr_partition *p)
{
	if (!p->ranks || p->rank_start)
		return TSR_OK;

	int n = tsr_nranks();
	int *start = calloc((size_t)n + 1, sizeof *start);
	int *colors = malloc((size_t)p->ncolors * sizeof *colors);
	int *next = malloc((size_t)n * sizeof *next);
	if (!start || !colors || !next) {
		free(start);
		free(colors);
		free(next);
		return TSR_ENOMEM;
	}

	/* counting sort of the colors by rank, colors ascending within a rank */
	for (int c = 0; c < p->ncolors; c++)
		start[p->ranks[c] + 1]++;
	for (int r = 0; r < n; r++)
		start[r + 1] += start[r];

	memcpy(next, start, (size_t)n * sizeof *next);
	for (int c = 0; c < p->ncolors; c++)
		colors[next[p->ranks[c]]++] = c;

	free(next);
	p->rank_start = start;
	p->rank_colors = colors;
	return TSR_OK;
}

int tsr__region_rank(const struct tsr_region *r)
{
	return r->parent_part ? tsr__color_rank(r->parent_part, r->color_index) : 0;
}

/* Does any point of a launch whose mapping partition is `part` need a decision? */
int tsr__map_needed(const struct tsr_partition *part)
{
	return mapper != NULL || (part && part->owners);
}

/* Decide where a point task runs (owner, then the mapper), validated before anything is
 * submitted so that a refused mapping leaves no point of the launch behind. */
int tsr__map_decide(const struct tsr_task *t, int pdim, const int64_t point[3], tsr_box_t domain,
		    const struct tsr_partition *part, int color, int rank, const char *cpu_why,
		    tsr_mapping_t *m)
{
	int owner = part && part->owners ? part->owners[color] : -1;
	m->kind = TSR_WORKER_ANY;
	m->worker = owner;
	m->priority = 0;
	m->rank = rank;

	if (mapper) {
		tsr_map_query_t q = {t->name, pdim, {point[0], point[1], point[2]}, domain, owner};
		mapper(&q, m, mapper_arg);
	}

	char ps[64];
	tsr__color_str(pdim ? pdim : 1, point, ps, sizeof ps);
	int nw = (int)starpu_worker_get_count();

	if (m->rank < 0 || m->rank >= tsr_nranks())
		return tsr__err(TSR_EBOUNDS, "mapper: task '%s' point %s: rank %d is outside 0..%d",
				t->name, ps, m->rank, tsr_nranks() - 1);
	if (m->worker >= nw || m->worker < -1)
		return tsr__err(TSR_EINVAL,
				"mapper: task '%s' point %s: worker %d does not exist (%d workers)",
				t->name, ps, m->worker, nw);
	if (m->kind < TSR_WORKER_ANY || m->kind > TSR_WORKER_OPENCL)
		return tsr__err(TSR_EINVAL, "mapper: task '%s' point %s: invalid worker kind %d",
				t->name, ps, (int)m->kind);

	tsr_worker_kind_t k = m->worker >= 0 ? tsr_worker_kind(m->worker) : m->kind;
	if (k == TSR_WORKER_ANY)
		return TSR_OK;

	const char *kn = tsr__worker_kind_name(k);
	if (cpu_why && k != TSR_WORKER_CPU)
		return tsr__err(TSR_ENODEV,
				"mapper: task '%s' point %s was mapped to %s %s worker, but %s: it "
				"runs on CPU workers only",
				t->name, ps, k == TSR_WORKER_OPENCL ? "an" : "a", kn, cpu_why);
	if (!has_variant(t, k))
		return tsr__err(TSR_ENODEV,
				"mapper: task '%s' point %s was mapped to %s %s worker but has no "
				"%s variant",
				t->name, ps, k == TSR_WORKER_OPENCL ? "an" : "a", kn, kn);
	if (m->worker < 0 && starpu_worker_get_count_by_type(starpu_type_of(k)) == 0)
		return tsr__err(TSR_ENODEV,
				"mapper: task '%s' point %s was mapped to %s workers but none is "
				"running",
				t->name, ps, kn);
	return TSR_OK;
}

void tsr__map_apply(struct starpu_task *task, const tsr_mapping_t *m)
{
	if (m->worker >= 0) {
		task->execute_on_a_specific_worker = 1;
		task->workerid = m->worker;
	} else if (m->kind != TSR_WORKER_ANY) {
		task->where = where_of(m->kind);
	}

	task->priority = m->priority;
}
