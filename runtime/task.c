/* task.c: task registration (one StarPU codelet per task, variable buffers, history-based perf
 * model named after the task), the wrappers that run a variant, and the tasks' own starpu_task
 * (what the variant sees, tsr_ctx and its accessors, is ctx.c). */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

int tsr_task_register(const tsr_task_desc_t *d, tsr_task_t *out)
{
	TSR_REQUIRE_INIT("tsr_task_register");
	if (!d)
		return tsr__err(TSR_EINVAL, "tsr_task_register: null descriptor");
	if (!d->name || !*d->name)
		return tsr__err(TSR_EINVAL, "tsr_task_register: task name missing");
	if (strlen(d->name) >= TSR_NAME_MAX)
		return tsr__err(TSR_EINVAL,
				"tsr_task_register: task '%s' has a name longer than %d characters",
				d->name, TSR_NAME_MAX - 1);
	if (!out)
		return tsr__err(TSR_EINVAL, "tsr_task_register: task '%s': null output pointer",
				d->name);
	if (!d->cpu && !d->cuda && !d->opencl)
		return tsr__err(TSR_EINVAL,
				"tsr_task_register: task '%s' has no variant (CPU, CUDA or OpenCL)",
				d->name);

	size_t rs = d->ret_type == TSR_BYTES ? d->ret_bytes : tsr_type_size(d->ret_type);
	if (d->ret_type < TSR_NONE || d->ret_type > TSR_BYTES ||
	    (d->ret_type != TSR_NONE && rs == 0))
		return tsr__err(TSR_EINVAL,
				"tsr_task_register: task '%s': invalid return type %d or size",
				d->name, (int)d->ret_type);

	struct tsr_task *t = calloc(1, sizeof *t);
	if (!t)
		return tsr__err(TSR_ENOMEM, "tsr_task_register: task '%s': out of memory", d->name);

	strcpy(t->name, d->name);
	t->cpu = d->cpu;
	t->cuda = d->cuda;
	t->opencl = d->opencl;
	t->ret_type = d->ret_type;
	t->ret_size = rs;

	starpu_codelet_init(&t->cl);
	t->cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
	t->cl.name = t->name;
	t->cl.flags = STARPU_CODELET_NOPLANS; /* views, not partition plans: coherence.c */

	if (d->cpu)
		t->cl.cpu_funcs[0] = tsr__cpu_wrapper;
#ifdef STARPU_USE_CUDA
	if (d->cuda) {
		t->cl.cuda_funcs[0] = tsr__cuda_wrapper;
		t->cl.cuda_flags[0] = STARPU_CUDA_ASYNC;
	}
#endif
#ifdef STARPU_USE_OPENCL
	if (d->opencl)
		t->cl.opencl_funcs[0] = tsr__opencl_wrapper;
#endif

	t->model.type = STARPU_HISTORY_BASED;
	t->model.symbol = t->name;
	t->cl.model = &t->model;

	t->id = tsr__handle_new(TSR_K_TASK, t);
	out->id = t->id;
	return TSR_OK;
}

void tsr__task_free(void *obj)
{
	struct tsr_task *t = obj;
	tsr__handle_free(t->id);
	free(t);
}

/* Start a private buffer (block or variable) at the operator's identity, where the variant runs. */
static void init_private(void *iface, tsr_type_t type, int op, int arch)
{
	struct starpu_codelet *cl = tsr__init_cl(type, op);
	tsr__assert(cl != NULL); /* the launch checked (type, op) */
	void *b[1] = {iface};

	switch (arch) {
	case TSR_ARCH_CUDA:
		cl->cuda_funcs[0](b, NULL);
		break;
	case TSR_ARCH_OPENCL:
		cl->opencl_funcs[0](b, NULL);
		break;
	default:
		cl->cpu_funcs[0](b, NULL);
	}
}

/* Private buffers of REDUCE requirements folded later by a fold task start at identity, and so
 * does this point's partial value of an ordered reduction of the returns. */
static void start_private_buffers(struct tsr_ctx *ctx, void *buffers[], int arch)
{
	for (int r = 0; r < ctx->nreqs; r++) {
		struct tsr_reqrec *q = &ctx->reqs[r];
		if (q->private_redop)
			for (int k = 0; k < q->nfields; k++)
				init_private(buffers[q->buf[k]], q->finfo[q->fields[k]].type,
					     q->private_redop, arch);
	}

	if (ctx->ret_partial)
		init_private(buffers[ctx->ret_buf], ctx->task->ret_type, ctx->ret_op, arch);
}

/* A single launch's result starts at zero (StarPU allocates it uninitialised), as a value the
 * variant does not return always did. */
static void zero_result(struct tsr_ctx *ctx)
{
	if (ctx->ret_buf < 0 || ctx->ret_op)
		return;

	void *slot = (void *)STARPU_VARIABLE_GET_PTR(ctx->buffers[ctx->ret_buf]);

#ifdef STARPU_USE_CUDA
	if (ctx->arch == TSR_ARCH_CUDA) {
		cudaMemsetAsync(slot, 0, ctx->task->ret_size, starpu_cuda_get_local_stream());
		return;
	}
#endif

#ifdef STARPU_USE_OPENCL
	if (ctx->arch == TSR_ARCH_OPENCL) {
		tsr__opencl_zero(ctx->buffers[ctx->ret_buf], ctx->task->ret_size);
		return;
	}
#endif

	memset(slot, 0, ctx->task->ret_size);
}

static tsr_variant_fn variant_of(const struct tsr_ctx *ctx)
{
	switch (ctx->arch) {
	case TSR_ARCH_CUDA:
		return ctx->task->cuda;
	case TSR_ARCH_OPENCL:
		return ctx->task->opencl;
	default:
		return ctx->task->cpu;
	}
}

/* The variant itself, then the poison or health of what it wrote. */
static void run_user_code(struct tsr_ctx *ctx)
{
	tsr_variant_fn fn = variant_of(ctx);
	tsr__assert(fn != NULL); /* StarPU runs a task only where the codelet has a body */
	tsr__set_current_ctx(ctx);
	fn(ctx, ctx->args, ctx->arglen);
	tsr__set_current_ctx(NULL);

	if (ctx->failmsg) {
		tsr__poison_outputs(ctx, ctx->failmsg);
		free(ctx->failmsg);
		ctx->failmsg = NULL;
	} else {
		tsr__heal_outputs(ctx);
	}
}

static void run_variant(void *buffers[], void *cl_arg, int arch)
{
	struct tsr_ctx *ctx = cl_arg;
	ctx->buffers = ctx->ndirect ? ctx->direct : buffers;
	ctx->arch = arch;

	start_private_buffers(ctx, ctx->buffers, arch);
	zero_result(ctx);

	char *inherited = tsr__poison_inherited(ctx);
	if (inherited) {
		/* computing from a failed task's output would pass garbage for a result: skip */
		tsr__poison_outputs(ctx, inherited);
		free(inherited);
	} else if (ctx->task->internal || tsr__dist_runs_variants()) {
		run_user_code(ctx);
	} /* else a fake rank (TSR_FAKE_NRANKS): its analysis and submission are what it measures */

	tsr__ctx_drop_states(ctx);
	/* a CPU variant is done with its views here (a device's may still run: never said) */
	if (ctx->ran && arch == TSR_ARCH_CPU)
		atomic_store_explicit(ctx->ran, 1, memory_order_release);
	if (ctx->dag_cell)
		tsr__dag_finished(ctx->dag_cell); /* the cell's last use by a worker */
	if (!ctx->release_in_callback)
		tsr__ctx_release(ctx); /* the last use of the point's context */
}

void tsr__cpu_wrapper(void *buffers[], void *cl_arg)
{
	run_variant(buffers, cl_arg, TSR_ARCH_CPU);
}

void tsr__cuda_wrapper(void *buffers[], void *cl_arg)
{
	run_variant(buffers, cl_arg, TSR_ARCH_CUDA);
}

#ifdef STARPU_USE_OPENCL
/* A synchronous codelet: what the variant enqueued is done when it returns to StarPU. */
void tsr__opencl_wrapper(void *buffers[], void *cl_arg)
{
	run_variant(buffers, cl_arg, TSR_ARCH_OPENCL);
	tsr__opencl_finish();
}
#endif

/* Give back a task's argument when the task will not run: a pooled context, or malloc'ed. */
static void arg_drop(void *arg, int pooled)
{
	if (pooled)
		tsr__ctx_release(arg);
	else
		free(arg);
}

/* A task of codelet cl that owns arg and has room for nbuf buffers (StarPU's dynamic arrays beyond
 * STARPU_NMAXBUFS). arg is freed with the task, or, pooled (a point's context), given back to the
 * pool by the wrapper or callback. NULL when out of memory, arg then dropped. Point tasks and fold
 * tasks (fold.c) are made here. */
struct starpu_task *tsr__task_new(struct starpu_codelet *cl, void *arg, size_t arg_size, int nbuf,
				  int pooled)
{
	struct starpu_task *task = arg ? starpu_task_create() : NULL;
	if (!task) {
		arg_drop(arg, pooled);
		return NULL;
	}

	task->cl = cl;
	task->cl_arg = arg;
	task->cl_arg_size = arg_size;
	task->cl_arg_free = !pooled;
	task->nbuffers = nbuf;

	if (nbuf > STARPU_NMAXBUFS) {
		task->dyn_handles = malloc(nbuf * sizeof(starpu_data_handle_t));
		task->dyn_modes = malloc(nbuf * sizeof(enum starpu_data_access_mode));
		if (!task->dyn_handles || !task->dyn_modes) {
			task->destroy = 0;
			/* frees the dynamic arrays, and arg unless pooled */
			starpu_task_destroy(task);
			if (pooled)
				tsr__ctx_release(arg);
			return NULL;
		}
	}

	return task;
}
