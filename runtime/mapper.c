/* mapper.c: the user's say in where tasks run: a mapper callback per point task and owners per
 * color of a partition, applied on top of whatever scheduling policy is active. */
#include <stdlib.h>
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
	return starpu_worker_get_type(w) == STARPU_CUDA_WORKER ? TSR_WORKER_CUDA : TSR_WORKER_CPU;
}

int tsr_partition_set_owner(tsr_partition_t pid, const int64_t color[3], int worker)
{
	struct tsr_partition *p;
	char cs[64];
	int rc = tsr__partition_lookup(pid, "tsr_partition_set_owner", &p);
	if (rc)
		return rc;
	if (!color)
		return tsr__err(TSR_EINVAL, "tsr_partition_set_owner: partition '%s': null color", p->name);
	int c = tsr__color_index(p, color);
	if (c < 0)
		return tsr__err(TSR_EBOUNDS, "tsr_partition_set_owner: color %s is outside partition '%s'",
		                tsr__color_str(p->colors.dim, color, cs, sizeof cs), p->name);
	if (worker < -1 || worker >= (int)starpu_worker_get_count())
		return tsr__err(TSR_EINVAL, "tsr_partition_set_owner: partition '%s' color %s: worker %d does not exist (%u workers)",
		                p->name, tsr__color_str(p->colors.dim, color, cs, sizeof cs), worker, starpu_worker_get_count());
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

/* Apply owner and mapper decisions to a point task about to be submitted. */
int tsr__map_task(struct starpu_task *task, struct tsr_ctx *ctx, const struct tsr_partition *part, int color,
                  tsr_box_t domain)
{
	int owner = part && part->owners ? part->owners[color] : -1;
	if (part) {
		ctx->aff_color = color;
		ctx->aff_ncolors = part->ncolors;
	}
	if (!mapper && owner < 0)
		return TSR_OK;
	tsr_mapping_t m = {TSR_WORKER_ANY, owner, 0};
	if (mapper) {
		tsr_map_query_t q = {ctx->task->name, ctx->point_dim, {ctx->point[0], ctx->point[1], ctx->point[2]}, domain, owner};
		mapper(&q, &m, mapper_arg);
	}
	char ps[64];
	if (m.worker >= (int)starpu_worker_get_count() || m.worker < -1)
		return tsr__err(TSR_EINVAL, "mapper: task '%s' point %s: worker %d does not exist (%u workers)", ctx->task->name,
		                tsr__color_str(ctx->point_dim ? ctx->point_dim : 1, ctx->point, ps, sizeof ps), m.worker,
		                starpu_worker_get_count());
	if (m.worker >= 0) {
		tsr_worker_kind_t k = tsr_worker_kind(m.worker);
		if ((k == TSR_WORKER_CPU && !ctx->task->cpu) || (k == TSR_WORKER_CUDA && !ctx->task->cuda))
			return tsr__err(TSR_ENODEV, "mapper: task '%s' has no %s variant for worker %d", ctx->task->name,
			                k == TSR_WORKER_CPU ? "CPU" : "CUDA", m.worker);
		task->execute_on_a_specific_worker = 1;
		task->workerid = m.worker;
	} else if (m.kind == TSR_WORKER_CPU) {
		task->where = STARPU_CPU;
	} else if (m.kind == TSR_WORKER_CUDA) {
		task->where = STARPU_CUDA;
	}
	task->priority = m.priority;
	return TSR_OK;
}
