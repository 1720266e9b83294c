/* floor_main.cc: Task Bench (github.com/StanfordLegion/task-bench) on raw StarPU, submitted the
 * leanest way a replay of the steps could submit them: the floor under Tessera's traced METG.
 *
 * Issue 28 asks Tessera's METG to be at most 0.35x that of Task Bench's StarPU backend. That
 * backend gives StarPU data handles and lets StarPU derive the order (starpu_task_insert). This one
 * does what Tessera's replay does, without Tessera and with less: no data handles at all (a point
 * task reads and writes a host array through the pointers its argument gives: one memory node, CPU
 * workers), its order only from explicit dependences (starpu_task_declare_deps_array) on the tasks
 * that wrote what it reads, read what it overwrites, or last wrote its slot; at most WINDOW tasks in
 * flight (starpu_task_wait_for_n_submitted, as Tessera's TSR_WINDOW); tasks destroyed by the host
 * once StarPU finished them and no later task can name them; an idle worker gives its core away
 * between two empty pops (a wrapper of the policy's pop_task, as Tessera's TSR_IDLE=yield). What
 * Tessera adds to this is its analysis or replay, two data handles per task, its contexts, checks
 * and poison. Task Bench's kernels check every input (build.sh keeps the core's asserts); the host
 * checks the last step's outputs at the end, as the Tessera backend does. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <starpu.h>
#include <starpu_scheduler.h>

#include "core.h"
#include "step_deps.h"
#include "timer.h"

/* One kind of step's dependencies (step_deps.h), and their reverse: the points of step t that read
 * x of step t-1 are readers[rfirst[x]] .. readers[rfirst[x+1]-1]. */
struct DepPlan : StepDeps {
	std::vector<long> rfirst;
	std::vector<long> readers;
};

/* One task graph: its outputs (F slots per point: step t writes slot t % F), its plans, and the
 * tasks of its last F + 1 steps (a step names tasks at most F steps back). */
struct GraphData {
	const TaskGraph *g;
	std::vector<char> store;
	std::vector<DepPlan *> plans;
	std::vector<const DepPlan *> step_plan;       /* per timestep */
	std::vector<std::vector<starpu_task *> > ring; /* [t % (F + 1)][x] */
	std::vector<starpu_data_handle_t> handles;     /* -floor-buffers: one per slot, [f][x] */
};

/* A point task's argument (StarPU frees it with the task). */
struct PointArg {
	const GraphData *gd;
	long t;
	long x;
};

static std::vector<char *> scratch;   /* per StarPU worker: Task Bench's scratch buffer, or empty */
static int nbuffers;                  /* -floor-buffers: StarPU data a task lists (0, 1 or 2) */

static void die(const char *what, int rc)
{
	fprintf(stderr, "starpu-floor: %s failed (%d)\n", what, rc);
	exit(1);
}

/* ------------------------------------------------------------------ outputs and the point task */

static char *slot(const GraphData *gd, long t, long x)
{
	const TaskGraph &g = *gd->g;
	size_t per_field = (size_t)g.max_width * g.output_bytes_per_task;
	return (char *)gd->store.data() + (size_t)(t % g.nb_fields) * per_field + (size_t)x * g.output_bytes_per_task;
}

static void point_cpu(void *buffers[], void *argp)
{
	(void)buffers;
	const PointArg *a = (const PointArg *)argp;
	const GraphData *gd = a->gd;
	const TaskGraph &g = *gd->g;
	const DepPlan *plan = gd->step_plan[a->t];
	/* reused from task to task on this worker thread: no allocation per task */
	static thread_local std::vector<const char *> inputs;
	static thread_local std::vector<size_t> input_bytes;
	inputs.clear();
	input_bytes.clear();
	for (long i = plan->first[a->x]; i < plan->first[a->x + 1]; i++) {
		inputs.push_back(slot(gd, a->t - 1, plan->deps[i]));
		input_bytes.push_back(g.output_bytes_per_task);
	}
	char *scratch_of = scratch.empty() ? NULL : scratch[starpu_worker_get_id()];
	g.execute_point(a->t, a->x, slot(gd, a->t, a->x), g.output_bytes_per_task, inputs.data(),
	                input_bytes.data(), inputs.size(), scratch_of, g.scratch_bytes_per_task);
}

static struct starpu_codelet point_cl;

/* ------------------------------------------------------------------ dependency plans */

static DepPlan *make_plan(const TaskGraph &g, long t)
{
	DepPlan *plan = new DepPlan();
	step_deps_init(plan, g, t);
	std::vector<std::vector<long> > readers(g.max_width);
	for (long x = 0; x < g.max_width; x++)
		for (long i = plan->first[x]; i < plan->first[x + 1]; i++)
			readers[plan->deps[i]].push_back(x);
	for (long x = 0; x < g.max_width; x++) {
		plan->rfirst.push_back((long)plan->readers.size());
		plan->readers.insert(plan->readers.end(), readers[x].begin(), readers[x].end());
	}
	plan->rfirst.push_back((long)plan->readers.size());
	return plan;
}

static const DepPlan *plan_for_step(GraphData *gd, long t)
{
	const TaskGraph &g = *gd->g;
	for (DepPlan *plan : gd->plans) {
		if (step_deps_match(*plan, g, t))
			return plan;
	}
	gd->plans.push_back(make_plan(g, t));
	return gd->plans.back();
}

/* ------------------------------------------------------------------ submission */

/* Tasks no later task names, oldest first: destroyed once StarPU has finished them, at most
 * `budget` at a time. A step destroys no more tasks than it makes, as Tessera (runtime/order.c):
 * what it frees is what it allocates next, from the allocator's per-thread cache, where a batch
 * (the tasks that ended while the window waited) overflowed it (apps/bench/README.md, "One reap a
 * submission"). */
static std::deque<starpu_task *> unnamed;

static void reap_finished_head(size_t budget)
{
	while (budget > 0 && !unnamed.empty() && starpu_task_finished(unnamed.front())) {
		starpu_task_destroy(unnamed.front());
		unnamed.pop_front();
		budget--;
	}
}

static starpu_task *task_at(const GraphData *gd, long t, long x)
{
	if (t < 0)
		return NULL;
	const std::vector<starpu_task *> &step = gd->ring[t % gd->ring.size()];
	return step[x];
}

static void add_dep(std::vector<starpu_task *> *deps, starpu_task *task)
{
	if (!task)
		return;
	for (starpu_task *d : *deps)
		if (d == task)
			return;
	deps->push_back(task);
}

/* What point x of step t waits for: the writers of what it reads (step t-1), the readers of the
 * slot it overwrites (step t-F+1 read step t-F's outputs there), and that slot's last writer. */
static void point_deps(const GraphData *gd, long t, long x, std::vector<starpu_task *> *deps)
{
	const TaskGraph &g = *gd->g;
	deps->clear();
	const DepPlan *plan = gd->step_plan[t];
	for (long i = plan->first[x]; i < plan->first[x + 1]; i++)
		add_dep(deps, task_at(gd, t - 1, plan->deps[i]));
	long r = t - g.nb_fields + 1;
	if (r >= 1 && r < t) {
		const DepPlan *rplan = gd->step_plan[r];
		for (long i = rplan->rfirst[x]; i < rplan->rfirst[x + 1]; i++)
			add_dep(deps, task_at(gd, r, rplan->readers[i]));
	}
	add_dep(deps, task_at(gd, t - g.nb_fields, x));
}

/* -floor-buffers: what a task costs StarPU when it lists data, as Tessera's tasks do (their tile
 * written, the box of their dependencies read): the slot it writes, then its own slot of the step
 * before. The kernel still reads through the pointers: only the cost is measured, the order stays
 * the explicit dependences' (the handles have StarPU's sequential consistency off). */
static void add_buffers(const GraphData *gd, long t, long x, starpu_task *task)
{
	const TaskGraph &g = *gd->g;
	int n = 0;
	if (nbuffers >= 1) {
		STARPU_TASK_SET_HANDLE(task, gd->handles[(size_t)(t % g.nb_fields) * g.max_width + x], n);
		STARPU_TASK_SET_MODE(task, STARPU_W, n);
		n++;
	}
	if (nbuffers >= 2 && t >= 1) {
		STARPU_TASK_SET_HANDLE(task, gd->handles[(size_t)((t - 1) % g.nb_fields) * g.max_width + x], n);
		STARPU_TASK_SET_MODE(task, STARPU_R, n);
		n++;
	}
	task->nbuffers = n;
}

static void register_slots(GraphData *gd)
{
	const TaskGraph &g = *gd->g;
	for (long f = 0; f < g.nb_fields && nbuffers > 0; f++) {
		for (long x = 0; x < g.max_width; x++) {
			starpu_data_handle_t h;
			starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)slot(gd, f, x), 1,
			                            g.output_bytes_per_task);
			starpu_data_set_sequential_consistency_flag(h, 0);
			gd->handles.push_back(h);
		}
	}
}

static void submit_point(GraphData *gd, long t, long x, std::vector<starpu_task *> *deps)
{
	PointArg *arg = (PointArg *)malloc(sizeof *arg);
	if (!arg)
		die("malloc", 0);
	arg->gd = gd;
	arg->t = t;
	arg->x = x;

	starpu_task *task = starpu_task_create();
	task->cl = &point_cl;
	task->cl_arg = arg;
	task->cl_arg_size = sizeof *arg;
	task->cl_arg_free = 1;
	task->detach = 0;    /* starpu_task_finished tells when the host may destroy it */
	task->destroy = 0;   /* a later task may name it: the host destroys it */
	add_buffers(gd, t, x, task);
	point_deps(gd, t, x, deps);
	if (!deps->empty())
		starpu_task_declare_deps_array(task, (unsigned)deps->size(), deps->data());
	int rc = starpu_task_submit(task);
	if (rc)
		die("starpu_task_submit", rc);
	gd->ring[t % gd->ring.size()][x] = task;
}

/* After step t: the tasks of step t-F are named by no later step. */
static void retire_step(GraphData *gd, long t)
{
	long old = t - gd->g->nb_fields;
	if (old < 0)
		return;
	std::vector<starpu_task *> &step = gd->ring[old % gd->ring.size()];
	for (starpu_task *&task : step) {
		if (task)
			unnamed.push_back(task);
		task = NULL;
	}
}

static void submit_step(GraphData *gd, long t, long window, std::vector<starpu_task *> *deps)
{
	if (window > 0 && starpu_task_nsubmitted() > window)
		starpu_task_wait_for_n_submitted((unsigned)(window / 2));
	const TaskGraph &g = *gd->g;
	reap_finished_head((size_t)g.width_at_timestep(t));
	long offset = g.offset_at_timestep(t);
	for (long x = offset; x < offset + g.width_at_timestep(t); x++)
		submit_point(gd, t, x, deps);
	retire_step(gd, t);
}

/* ------------------------------------------------------------------ idle workers */

static struct starpu_sched_policy *base_policy;
static struct starpu_sched_policy yielding;

/* As Tessera's TSR_IDLE=yield (runtime/idle.c): between two empty pops a worker gives its core to
 * whatever else is runnable there (the host thread, or the worker the others wait for). */
static struct starpu_task *yield_pop(unsigned ctx)
{
	struct starpu_task *task = base_policy->pop_task(ctx);
	if (task)
		return task;
	starpu_worker_relax_on();
	sched_yield();
	starpu_worker_relax_off();
	return NULL;
}

static void use_yielding_policy(struct starpu_conf *conf, const char *name)
{
	for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; p++)
		if ((*p)->policy_name && !strcmp((*p)->policy_name, name))
			base_policy = *p;
	if (!base_policy) {
		fprintf(stderr, "starpu-floor: no StarPU policy named '%s'\n", name);
		exit(1);
	}
	if (!base_policy->pop_task)
		return;   /* a policy that feeds the workers' own lists: nothing to wrap */
	yielding = *base_policy;
	yielding.pop_task = yield_pop;
	conf->sched_policy = &yielding;
	conf->sched_policy_name = NULL;
	/* StarPU 1.3 reads STARPU_SCHED again while it starts, and the variable would win over the
	 * structure given (as Tessera, runtime.c, which hides it for the time of starpu_init) */
	unsetenv("STARPU_SCHED");
}

/* ------------------------------------------------------------------ main */

/* The backend's own flags. */
struct OwnFlags {
	long window;
	int spin;
	int buffers;
};

static OwnFlags parse_own_flags(int argc, char **argv)
{
	OwnFlags f = {256, 0, 0};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-floor-window") && i + 1 < argc)
			f.window = atol(argv[i + 1]);
		if (!strcmp(argv[i], "-floor-spin"))
			f.spin = 1;
		if (!strcmp(argv[i], "-floor-buffers") && i + 1 < argc)
			f.buffers = atoi(argv[i + 1]) < 0 ? 0 : atoi(argv[i + 1]) > 2 ? 2 : atoi(argv[i + 1]);
		if (!strcmp(argv[i], "-h")) {
			printf("StarPU floor backend: -floor-window N  at most N tasks in flight (default 256; 0: no bound)\n"
			       "                      -floor-spin      StarPU's own idle loop (default: idle workers yield)\n"
			       "                      -floor-buffers N each task lists N StarPU data (0-2, default 0;\n"
			       "                                       2: its slot written, its slot of the step before read)\n"
			       "  STARPU_SCHED names the policy (default eager), STARPU_NCPU the CPU workers\n");
		}
	}
	return f;
}

/* The same check as the Tessera backend's: every point of the last step holds (last step, point). */
static int verify_last_step(const GraphData *gd, long index)
{
	const TaskGraph &g = *gd->g;
	long t = g.timesteps - 1;
	long offset = g.offset_at_timestep(t);
	for (long x = offset; x < offset + g.width_at_timestep(t); x++) {
		const std::pair<long, long> *val = (const std::pair<long, long> *)slot(gd, t, x);
		for (size_t i = 0; i < g.output_bytes_per_task / sizeof *val; i++) {
			if (val[i].first != t || val[i].second != x) {
				fprintf(stderr, "starpu-floor: graph %ld point %ld: output %zu of step %ld holds "
				        "(step %ld, point %ld)\n", index, x, i, t, val[i].first, val[i].second);
				return 0;
			}
		}
	}
	return 1;
}

static void prepare_graph(const TaskGraph &g, GraphData *gd)
{
	if (g.nb_fields < 2) {
		fprintf(stderr, "starpu-floor: graph %ld: -field %d: give -field 2 or more (step t writes slot "
		        "t %% F while step t+1 reads the one before)\n", g.graph_index, g.nb_fields);
		exit(1);
	}
	gd->g = &g;
	gd->store.assign((size_t)g.nb_fields * g.max_width * g.output_bytes_per_task, 0);
	for (long t = 0; t < g.timesteps; t++)
		gd->step_plan.push_back(plan_for_step(gd, t));
	gd->ring.assign((size_t)g.nb_fields + 1, std::vector<starpu_task *>(g.max_width, (starpu_task *)NULL));
}

static void make_scratch(const std::vector<TaskGraph> &graphs)
{
	size_t bytes = 0;
	for (const TaskGraph &g : graphs)
		bytes = g.scratch_bytes_per_task > bytes ? g.scratch_bytes_per_task : bytes;
	if (bytes == 0)
		return;
	for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
		char *s = (char *)malloc(bytes);
		if (!s)
			die("malloc of the scratch buffers", 0);
		TaskGraph::prepare_scratch(s, bytes);
		scratch.push_back(s);
	}
}

int main(int argc, char **argv)
{
	OwnFlags own = parse_own_flags(argc, argv);
	App app(argc, argv);

	struct starpu_conf conf;
	starpu_conf_init(&conf);
	std::string policy = getenv("STARPU_SCHED") ? getenv("STARPU_SCHED") : "eager";
	conf.sched_policy_name = policy.c_str();   /* eager unless STARPU_SCHED says otherwise */
	if (!own.spin)
		use_yielding_policy(&conf, policy.c_str());
	conf.ncuda = 0;
	conf.nopencl = 0;
	int rc = starpu_init(&conf);
	if (rc)
		die("starpu_init", rc);
	setenv("STARPU_SCHED", policy.c_str(), 1);
	starpu_codelet_init(&point_cl);
	point_cl.cpu_funcs[0] = point_cpu;
	point_cl.nbuffers = STARPU_VARIABLE_NBUFFERS;
	nbuffers = own.buffers;
	point_cl.name = "task_bench_point";

	std::vector<GraphData> data(app.graphs.size());
	for (size_t i = 0; i < app.graphs.size(); i++)
		prepare_graph(app.graphs[i], &data[i]);
	for (GraphData &gd : data)
		register_slots(&gd);
	make_scratch(app.graphs);

	app.display();
	printf("StarPU floor: policy %s, %u CPU workers, window %ld, idle workers %s, %d StarPU data per task\n",
	       policy.c_str(), starpu_cpu_worker_get_count(), own.window, own.spin ? "spin" : "yield", nbuffers);
	std::vector<starpu_task *> deps;
	Timer::time_start();
	for (size_t i = 0; i < app.graphs.size(); i++)
		for (long t = 0; t < app.graphs[i].timesteps; t++)
			submit_step(&data[i], t, own.window, &deps);
	starpu_task_wait_for_all();
	double elapsed = Timer::time_end();
	app.report_timing(elapsed);

	for (GraphData &gd : data)
		for (long t = gd.g->timesteps - gd.g->nb_fields; t < gd.g->timesteps; t++)
			retire_step(&gd, t + gd.g->nb_fields);
	reap_finished_head(SIZE_MAX);
	int ok = unnamed.empty();
	if (!ok)
		fprintf(stderr, "starpu-floor: %zu tasks unfinished after the wait\n", unnamed.size());
	for (size_t i = 0; i < data.size(); i++)
		ok = verify_last_step(&data[i], (long)i) && ok;
	for (GraphData &gd : data) {
		for (DepPlan *plan : gd.plans)
			delete plan;
		for (starpu_data_handle_t h : gd.handles)
			starpu_data_unregister(h);
	}
	for (char *s : scratch)
		free(s);
	starpu_shutdown();
	if (!ok)
		return 1;
	printf("StarPU floor: outputs of the last step verified\n");
	return 0;
}
