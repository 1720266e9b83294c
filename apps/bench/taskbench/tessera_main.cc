/* tessera_main.cc: Task Bench (github.com/StanfordLegion/task-bench) on Tessera's public API, built
 * against Task Bench's core by build.sh. One region per task graph, one index launch per timestep.
 *
 * Natural mapping (default): graph g is a region of max_width points whose fields out0..out{F-1}
 * hold each point's output (TSR_BYTES elements of output_bytes_per_task bytes; step t writes field
 * t % F, as Task Bench's other backends double-buffer with -field). Step t is one index launch over
 * the step's points: requirement 0 writes the point's own element through the disjoint partition
 * "points" (one tile per point), requirement 1 reads field (t-1) % F through an aliased partition
 * of boxes, one box per point: the hull of the point's dependencies at step t-1.
 * -tessera-proj: no aliased partition; requirement 1+k reads the k-th dependency's tile of
 * "points" through a projection (point -> color of its k-th dependency).
 * The variant runs Task Bench's execute_point, which checks every input (its asserts are kept:
 * build.sh builds the core without NDEBUG); the host checks the last step's outputs at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utility>
#include <vector>

#include <tessera.h>

#include "core.h"
#include "step_deps.h"
#include "timer.h"

/* The dependencies of every point at one kind of step, and the partition (natural mapping) or
 * projections (-tessera-proj) that read them. Steps with the same dependence set and the same
 * previous offset and width share one plan (stencil_1d and nearest: a single plan). */
struct DepPlan;

/* What a projection of -tessera-proj needs: the plan and which dependency it picks. */
struct ProjArg {
	const DepPlan *plan;
	int k;
};

struct DepPlan : StepDeps {        /* what each point reads (step_deps.h) */
	int max_deps;                   /* most dependencies of one point: requirements per launch */
	bool has_boxes;
	tsr_partition_t boxes;          /* natural mapping: the hull of each point's dependencies */
	std::vector<ProjArg> proj;      /* -tessera-proj: one projection argument per requirement */
};

/* One task graph on Tessera: its region, its tiles and its dependency plans. */
struct GraphData {
	tsr_region_t region;
	tsr_partition_t points;         /* one tile per point: what a point task writes */
	std::vector<tsr_field_t> fields;
	std::vector<DepPlan *> plans;
};

/* Copied into every point task of a step: the graph is POD, the plan outlives the run. */
struct PointArgs {
	/* app.graphs outlives every task: a pointer, not a copy (the arguments are copied into every
	 * point's task; a TaskGraph by value tripled what a worker reads from the host's cache) */
	const TaskGraph *graph;
	long timestep;
	const DepPlan *plan;
	int projections;
	char *const *scratch;           /* per StarPU worker: Task Bench's scratch buffer, or NULL */
};

static void die(int rc, const char *what)
{
	fprintf(stderr, "tessera-taskbench: %s: %s (%s)\n", what, tsr_last_error(), tsr_err_name(rc));
	exit(1);
}

static void check(int rc, const char *what)
{
	if (rc != TSR_OK)
		die(rc, what);
}

/* ------------------------------------------------------------------ the point task */

/* Where dependency d of point x lies in what the task was given: an element of the box
 * (natural mapping), or the tile of requirement 1+k (-tessera-proj). NULL after reporting the
 * error if the runtime handed the task something else (a bug in the runtime or in this file). */
static const char *input_natural(tsr_ctx_t *ctx, const tsr_accessor_t *box, long x, long t, long d)
{
	if (d < box->lo[0] || d > box->hi[0]) {
		tsr_ctx_error(ctx, "task-bench point %ld of step %ld: dependency %ld lies outside the box "
		              "[%lld, %lld] it was given", x, t, d, (long long)box->lo[0], (long long)box->hi[0]);
		return NULL;
	}
	return (const char *)box->ptr + (d - box->lo[0]) * (long)box->elem_size;
}

static const char *input_projected(tsr_ctx_t *ctx, int k, long x, long t, long d)
{
	tsr_accessor_t tile;
	if (tsr_ctx_field(ctx, 1 + k, 0, TSR_BYTES, TSR_READ, &tile) != TSR_OK)
		return NULL;   /* the failed call already made the task fail, with its message */
	if (tile.lo[0] != d || tile.hi[0] != d) {
		tsr_ctx_error(ctx, "task-bench point %ld of step %ld: requirement %d holds [%lld, %lld], "
		              "not dependency %ld", x, t, 1 + k, (long long)tile.lo[0], (long long)tile.hi[0], d);
		return NULL;
	}
	return (const char *)tile.ptr;
}

/* The addresses of point x's inputs, in the order execute_point checks them. 0 if a ctx call
 * failed or the runtime gave the task other data than asked (the task then fails with the message). */
static int gather_inputs(tsr_ctx_t *ctx, const PointArgs *a, long x, size_t bytes,
                         std::vector<const char *> *inputs, std::vector<size_t> *input_bytes)
{
	const DepPlan *plan = a->plan;
	long ndeps = plan->first[x + 1] - plan->first[x];
	tsr_accessor_t box;
	if (ndeps > 0 && !a->projections && tsr_ctx_field(ctx, 1, 0, TSR_BYTES, TSR_READ, &box) != TSR_OK)
		return 0;
	for (long k = 0; k < ndeps; k++) {
		long d = plan->deps[plan->first[x] + k];
		const char *in = a->projections ? input_projected(ctx, (int)k, x, a->timestep, d)
		                                : input_natural(ctx, &box, x, a->timestep, d);
		if (!in)
			return 0;
		inputs->push_back(in);
		input_bytes->push_back(bytes);
	}
	return 1;
}

static void point_task(tsr_ctx_t *ctx, const void *argp, size_t arglen)
{
	(void)arglen;
	const PointArgs *a = (const PointArgs *)argp;
	int64_t point[3];
	tsr_ctx_point(ctx, point);
	long x = (long)point[0];

	tsr_accessor_t out;
	if (tsr_ctx_field(ctx, 0, 0, TSR_BYTES, TSR_WRITE_DISCARD, &out) != TSR_OK)
		return;
	/* Reused from task to task on this worker thread: no allocation per task. */
	static thread_local std::vector<const char *> inputs;
	static thread_local std::vector<size_t> input_bytes;
	inputs.clear();
	input_bytes.clear();
	if (!gather_inputs(ctx, a, x, out.elem_size, &inputs, &input_bytes))
		return;

	char *scratch = a->scratch ? a->scratch[tsr_ctx_worker(ctx)] : NULL;
	a->graph->execute_point(a->timestep, x, (char *)out.ptr, out.elem_size, inputs.data(), input_bytes.data(),
	                        inputs.size(), scratch, a->graph->scratch_bytes_per_task);
}

/* ------------------------------------------------------------------ dependency plans */

/* The box point x reads in the natural mapping: the hull of its dependencies. A point with none
 * (some points of tree or dom, say) still needs a box, an index launch names one partition for all
 * its points: it reads its own element, which costs an ordering with step t-1 and nothing else. */
static tsr_box_t dependency_hull(const DepPlan *plan, long x)
{
	long lo = x;
	long hi = x;
	for (long i = plan->first[x]; i < plan->first[x + 1]; i++) {
		long d = plan->deps[i];
		if (i == plan->first[x] || d < lo)
			lo = d;
		if (i == plan->first[x] || d > hi)
			hi = d;
	}
	return tsr_box1(lo, hi);
}

static void make_boxes(const TaskGraph &g, GraphData *gd, DepPlan *plan)
{
	std::vector<tsr_box_t> boxes;
	for (long x = 0; x < g.max_width; x++)
		boxes.push_back(dependency_hull(plan, x));
	char name[64];
	snprintf(name, sizeof name, "deps%ld", plan->dset);
	check(tsr_partition_boxes(gd->region, (int)g.max_width, boxes.data(), name, &plan->boxes),
	      "partition of dependency boxes");
	plan->has_boxes = true;
}

static DepPlan *make_plan(const TaskGraph &g, GraphData *gd, long t, int projections)
{
	DepPlan *plan = new DepPlan();
	step_deps_init(plan, g, t);
	plan->max_deps = 0;
	plan->has_boxes = false;
	for (long x = 0; x < g.max_width; x++) {
		int n = (int)(plan->first[x + 1] - plan->first[x]);
		if (n > plan->max_deps)
			plan->max_deps = n;
	}
	if (plan->max_deps == 0)
		return plan;   /* nothing to read: the launch has the write requirement only */
	if (projections) {
		for (int k = 0; k < plan->max_deps; k++)
			plan->proj.push_back(ProjArg{plan, k});
	} else {
		make_boxes(g, gd, plan);
	}
	return plan;
}

/* The plan of step t, made the first time a step of its kind is met. */
static DepPlan *plan_for_step(const TaskGraph &g, GraphData *gd, long t, int projections)
{
	for (DepPlan *plan : gd->plans) {
		if (step_deps_match(*plan, g, t))
			return plan;
	}
	gd->plans.push_back(make_plan(g, gd, t, projections));
	return gd->plans.back();
}

/* -tessera-proj: requirement 1+k of point x reads the tile of its k-th dependency. A point with
 * fewer dependencies reads its last one again (or its own tile if it has none): every point of an
 * index launch has the same requirements, and a second READ of a tile costs no ordering. */
static int project_dependency(const int64_t point[3], int64_t color[3], void *argp)
{
	const ProjArg *arg = (const ProjArg *)argp;
	const DepPlan *plan = arg->plan;
	long x = (long)point[0];
	long n = plan->first[x + 1] - plan->first[x];
	color[0] = x;
	if (n > 0)
		color[0] = plan->deps[plan->first[x] + (arg->k < n ? arg->k : n - 1)];
	return 0;
}

/* ------------------------------------------------------------------ graphs and launches */

static void create_graph(const TaskGraph &g, long index, GraphData *gd)
{
	tsr_fspace_t fs;
	check(tsr_fspace_create(&fs), "field space");
	for (int f = 0; f < g.nb_fields; f++) {
		char name[32];
		snprintf(name, sizeof name, "out%d", f);
		tsr_field_t fid;
		check(tsr_fspace_add(fs, name, TSR_BYTES, g.output_bytes_per_task, &fid), "field");
		gd->fields.push_back(fid);
	}
	char name[32];
	snprintf(name, sizeof name, "graph%ld", index);
	check(tsr_region_create(name, tsr_box1(0, g.max_width - 1), fs, &gd->region), "region");
	check(tsr_fspace_destroy(fs), "field space");
	check(tsr_partition_tiles(gd->region, tsr_box1(0, g.max_width - 1), "points", &gd->points), "partition of points");
}

/* A step reads the previous step's outputs from another field than the one it writes: with a single
 * field, point x would overwrite what its neighbour is about to read. */
static void check_fields(const TaskGraph &g, long index)
{
	if (g.nb_fields >= 2)
		return;
	for (long t = 1; t < g.timesteps; t++) {
		long dset = g.dependence_set_at_timestep(t);
		for (long x = g.offset_at_timestep(t); x < g.offset_at_timestep(t) + g.width_at_timestep(t); x++) {
			if (!g.dependencies(dset, x).empty()) {
				fprintf(stderr, "tessera-taskbench: graph %ld: -field %d: step %ld reads step %ld's outputs "
				        "from the field it writes; give -field 2 or more\n", index, g.nb_fields, t, t - 1);
				exit(1);
			}
		}
	}
}

static void launch_step(const TaskGraph &g, const GraphData *gd, const DepPlan *plan, long t,
                        int projections, char *const *scratch, tsr_task_t task)
{
	tsr_field_t written = gd->fields[t % g.nb_fields];
	tsr_field_t read = gd->fields[(t + g.nb_fields - 1) % g.nb_fields];
	/* Reused from step to step: a vector made per step cost the host thread two allocations a
	 * step, which the other backends do not pay (they list their inputs in fixed arrays). */
	static std::vector<tsr_req_t> reqs;
	reqs.clear();
	reqs.push_back(tsr_req_part(gd->points, TSR_WRITE_DISCARD, 1, &written));
	if (plan->max_deps > 0 && projections) {
		for (const ProjArg &arg : plan->proj)
			reqs.push_back(tsr_req_part_proj(gd->points, TSR_READ, 1, &read, project_dependency, (void *)&arg));
	} else if (plan->max_deps > 0) {
		reqs.push_back(tsr_req_part(plan->boxes, TSR_READ, 1, &read));
	}
	PointArgs args;
	args.graph = &g;
	args.timestep = t;
	args.plan = plan;
	args.projections = projections;
	args.scratch = scratch;
	long offset = g.offset_at_timestep(t);
	tsr_box_t domain = tsr_box1(offset, offset + g.width_at_timestep(t) - 1);
	int rc = tsr_index_launch(task, domain, (int)reqs.size(), reqs.data(), &args, sizeof args,
	                          TSR_REDOP_NONE, NULL);
	if (rc != TSR_OK) {
		/* -tessera-proj asks for one requirement per dependency: wide all_to_all graphs exceed
		 * what a launch takes, and the runtime's message says so; name the step and the count */
		char what[96];
		snprintf(what, sizeof what, "step %ld of graph %ld (%zu requirements)", t, g.graph_index, reqs.size());
		die(rc, what);
	}
}

/* Task Bench's kernels already checked every input; this checks what the runtime kept: every point
 * of the last step holds (last step, point). */
static int verify_last_step(const TaskGraph &g, const GraphData *gd, long index)
{
	long t = g.timesteps - 1;
	size_t bytes = g.output_bytes_per_task;
	std::vector<char> buf(bytes * g.max_width);
	check(tsr_region_read(gd->region, gd->fields[t % g.nb_fields], buf.data(), buf.size()), "reading the outputs");
	long offset = g.offset_at_timestep(t);
	for (long x = offset; x < offset + g.width_at_timestep(t); x++) {
		const std::pair<long, long> *val = (const std::pair<long, long> *)(buf.data() + x * bytes);
		for (size_t i = 0; i < bytes / sizeof *val; i++) {
			if (val[i].first != t || val[i].second != x) {
				fprintf(stderr, "tessera-taskbench: graph %ld point %ld: output %zu of step %ld holds "
				        "(step %ld, point %ld)\n", index, x, i, t, val[i].first, val[i].second);
				return 0;
			}
		}
	}
	return 1;
}

/* ------------------------------------------------------------------ main */

/* Task Bench's scratch buffer per worker (memory-bound kernels), prepared as its backends do. */
static std::vector<char *> make_scratch(const std::vector<TaskGraph> &graphs)
{
	size_t bytes = 0;
	for (const TaskGraph &g : graphs)
		bytes = g.scratch_bytes_per_task > bytes ? g.scratch_bytes_per_task : bytes;
	std::vector<char *> scratch(tsr_worker_count(), (char *)NULL);
	for (size_t w = 0; w < scratch.size() && bytes > 0; w++) {
		scratch[w] = (char *)malloc(bytes);
		if (!scratch[w]) {
			fprintf(stderr, "tessera-taskbench: no memory for %zu bytes of scratch\n", bytes);
			exit(1);
		}
		TaskGraph::prepare_scratch(scratch[w], bytes);
	}
	return scratch;
}

/* The backend's own flags. */
struct OwnFlags {
	int projections;
	int traces;
};

static OwnFlags parse_own_flags(int argc, char **argv)
{
	OwnFlags f = {0, 0};
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-tessera-proj"))
			f.projections = 1;
		if (!strcmp(argv[i], "-tessera-trace"))
			f.traces = 1;
		if (!strcmp(argv[i], "-h")) {
			printf("Tessera backend: -tessera-proj  read dependencies through projections onto the tiles\n"
			       "                 (default: through a partition of boxes, one per point)\n"
			       "                 -tessera-trace each graph's steps 1.. in traces of -field steps\n"
			       "                 (tsr_trace_begin/end: the loop body recorded once, then replayed)\n"
			       "  Tessera's flags: --sched NAME (policy), --ncpu N (CPU workers), --replay off\n"
			       "  (no trace found without the calls; auto, the default, finds them), ...; each\n"
			       "  wins over its TSR_ variable, which wins over STARPU_SCHED / STARPU_NCPU\n");
		}
	}
	return f;
}

/* -tessera-trace: steps 1.. of a graph in traces of -field steps (the fields' period: step t
 * writes field t % F, so F steps repeat the same launches; step 0 reads nothing and stays out).
 * One trace per graph, named by its index. */
static void trace_step(const TaskGraph &g, long index, long t, int traces, int begin)
{
	if (!traces || t == 0)
		return;
	long phase = (t - 1) % g.nb_fields;
	if (begin && phase == 0)
		check(tsr_trace_begin((uint32_t)index), "tsr_trace_begin");
	if (!begin && (phase == g.nb_fields - 1 || t == g.timesteps - 1))
		check(tsr_trace_end((uint32_t)index), "tsr_trace_end");
}

int main(int argc, char **argv)
{
	/* Tessera's own flags (--ncpu, --sched, ...) leave argv before Task Bench parses it */
	check(tsr_args(&argc, argv), "tsr_args");
	OwnFlags own = parse_own_flags(argc, argv);
	int projections = own.projections;
	App app(argc, argv);
	for (size_t i = 0; i < app.graphs.size(); i++)
		check_fields(app.graphs[i], (long)i);

	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.ncuda = 0;   /* Task Bench's kernels are CPU code */
	check(tsr_init(&cfg), "tsr_init");
	tsr_task_desc_t desc = {};
	desc.name = "task_bench_point";
	desc.cpu = point_task;
	tsr_task_t task;
	check(tsr_task_register(&desc, &task), "task");

	std::vector<GraphData> data(app.graphs.size());
	for (size_t i = 0; i < app.graphs.size(); i++) {
		create_graph(app.graphs[i], (long)i, &data[i]);
		for (long t = 0; t < app.graphs[i].timesteps; t++)
			plan_for_step(app.graphs[i], &data[i], t, projections);   /* partitions made before timing */
	}
	std::vector<char *> scratch = make_scratch(app.graphs);
	char *const *scratch_of = scratch.empty() || !scratch[0] ? NULL : scratch.data();

	app.display();
	printf("Tessera: %s mapping, policy %s, %d CPU workers%s\n", projections ? "projection" : "natural",
	       tsr_sched_name(), tsr_ncpu_workers(), own.traces ? ", steps in traces" : "");
	Timer::time_start();
	for (size_t i = 0; i < app.graphs.size(); i++) {
		const TaskGraph &g = app.graphs[i];
		for (long t = 0; t < g.timesteps; t++) {
			trace_step(g, (long)i, t, own.traces, 1);
			launch_step(g, &data[i], plan_for_step(g, &data[i], t, projections), t, projections, scratch_of, task);
			trace_step(g, (long)i, t, own.traces, 0);
		}
	}
	check(tsr_fence(), "running the graphs");
	double elapsed = Timer::time_end();
	app.report_timing(elapsed);

	int ok = 1;
	for (size_t i = 0; i < app.graphs.size(); i++)
		ok = verify_last_step(app.graphs[i], &data[i], (long)i) && ok;
	for (GraphData &gd : data) {
		for (DepPlan *plan : gd.plans)
			delete plan;
		check(tsr_region_destroy(gd.region), "region");   /* and its partitions */
	}
	for (char *s : scratch)
		free(s);
	check(tsr_finalize(), "tsr_finalize");
	if (!ok)
		return 1;
	printf("Tessera: outputs of the last step verified\n");
	return 0;
}
