/* runtime.c: tsr_init / tsr_finalize / tsr_fence. The settings come from config.c (flags, then
 * TSR_* variables, then STARPU_*, then tsr_config_t, then the defaults). The thread that calls
 * tsr_init owns the runtime: calls from any other thread (task variants included) are refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* 0: down, 1: tsr_init or tsr_finalize under way, 2: up. Two threads racing to start the runtime
 * cannot both win the 0 -> 1 exchange. */
static int lifecycle;

static int init_locked(const tsr_config_t *cfg);

/* What several ranks do not do (yet): checked once StarPU runs, on every rank alike. */
static int dist_limits(void)
{
	/* fake ranks go further: beyond 64 a piece's rank set is the whole job or refused
	 * (coherence.h), which is all a structured launch needs; real ranks stay where they are
	 * tested */
	if (!tsr__dist_fake() && tsr__dist.size > TSR_MAX_RANKS)
		return tsr__err(TSR_EINVAL,
				"tsr_init: %d MPI ranks; Tessera runs on at most %d "
				"(a piece's ranks are a %d-bit set)",
				tsr__dist.size, TSR_MAX_RANKS, TSR_MAX_RANKS);
	if (tsr__coh_tokens()) /* several memory nodes, or TSR_COHERENCE=tokens (tsr__coh_start) */
		return tsr__err(TSR_EINVAL, "tsr_init: several MPI ranks with devices (CUDA or "
					    "OpenCL workers, or TSR_COHERENCE=tokens) are not "
					    "supported yet: run one rank per GPU machine without "
					    "MPI, or set TSR_NCUDA=0 and TSR_NOPENCL=0");
	if (!tsr__redux_ordered())
		return tsr__err(TSR_EINVAL, "tsr_init: TSR_REDUX=unordered folds in arrival order, "
					    "which differs from rank to rank; several MPI ranks "
					    "always fold in color order (unset TSR_REDUX)");

	return TSR_OK;
}

int tsr_init(const tsr_config_t *cfg)
{
	if (tsr__current_ctx())
		return tsr__refuse_thread("tsr_init");

	int down = 0;
	if (!__atomic_compare_exchange_n(&lifecycle, &down, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return tsr__err(TSR_ESTATE, "tsr_init: the runtime is already initialized (or "
					    "being initialized or finalized by another thread)");

	int rc = init_locked(cfg);
	__atomic_store_n(&lifecycle, rc == TSR_OK ? 2 : 0, __ATOMIC_RELEASE);
	return rc;
}

/* StarPU reads these itself, and they would win over starpu_conf; Tessera has read them already,
 * as the level under its flags and TSR_ variables (env.c), so StarPU must not see them while it
 * starts: tsr_init takes them out of the environment for the time of starpu_init and puts them
 * back (before StarPU starts any thread that could read the environment meanwhile). */
static const char *const starpu_own[] = {"STARPU_SCHED", "STARPU_NCPU", "STARPU_NCPUS",
					 "STARPU_NCUDA", "STARPU_NOPENCL"};
enum { NOWN = sizeof starpu_own / sizeof starpu_own[0] };

static void hide_starpu_own(char *saved[NOWN])
{
	for (int i = 0; i < NOWN; i++) {
		const char *v = getenv(starpu_own[i]);
		saved[i] = v ? strdup(v) : NULL;
		if (saved[i])
			unsetenv(starpu_own[i]);
	}
}

static void restore_starpu_own(char *saved[NOWN])
{
	for (int i = 0; i < NOWN; i++)
		if (saved[i]) {
			setenv(starpu_own[i], saved[i], 1);
			free(saved[i]);
		}
}

/* StarPU's configuration from Tessera's: policy and worker counts. */
static void starpu_settings(const tsr_config_t *c, struct starpu_conf *conf)
{
	starpu_conf_init(conf); /* which reads STARPU_SCHED and the counts: c holds them already */
	conf->sched_policy = tsr__own_policy(c->sched);
	conf->sched_policy_name = conf->sched_policy ? NULL : c->sched;
	conf->ncpus = c->ncpu >= 0 ? c->ncpu : -1;
	conf->ncuda = c->ncuda >= 0 ? c->ncuda : -1;
	conf->nopencl = c->nopencl >= 0 ? c->nopencl : -1;
}

/* The switches read before StarPU starts: reductions, coherence, ordering, ranks, idle workers,
 * nice levels, the trace and graph files. *dist: whether to start on several ranks. */
static int read_switches(const tsr_config_t *c, int *dist, int *idle)
{
	enum { ORDERED, UNORDERED }; /* TSR_REDUX's words (env.c) */
	int redux;
	int rc = tsr__env_choice("TSR_REDUX", "tsr_init", &redux);
	tsr__rt.redux_unordered = rc == TSR_OK && redux == UNORDERED;
	if (!rc)
		rc = tsr__env_choice("TSR_IDLE", "tsr_init", idle);
	if (!rc)
		rc = tsr__coh_init();
	if (!rc)
		rc = tsr__order_init(c->quiet);
	if (!rc)
		rc = tsr__replay_init();
	if (!rc)
		rc = tsr__launch_read_window();
	if (rc)
		return rc;

	*dist = tsr__dist_wanted();
	if (*dist < 0)
		return *dist;
	if ((rc = tsr__nice_read()))
		return rc;
	return tsr__obs_check_paths(c);
}

/* Whether idle workers park (idle.c): TSR_IDLE=park, or auto where several ranks share the node's
 * cores (place.c found them), since there a spinning worker takes the core from the thread that has
 * work and every rank's threads are many; else, auto, they yield their core between two empty
 * pops: the host thread comes on top of one worker per core, and StarPU's loop answers a new task
 * as soon (idle.c). */
static int idle_parks(int idle)
{
	return idle == TSR_IDLE_PARK || (idle == TSR_IDLE_AUTO && tsr__place.node_ranks > 1);
}

static int idle_yields(int idle)
{
	return idle == TSR_IDLE_YIELD || (idle == TSR_IDLE_AUTO && !idle_parks(idle));
}

/* StarPU (or StarPU-MPI) started with conf; a failure named with what was asked for. On several
 * ranks MPI comes first: it tells which ranks share this node (place.c), which decides where the
 * workers go and whether they park. */
static int start_starpu(const tsr_config_t *c, struct starpu_conf *conf, int dist, int idle)
{
	char *saved[NOWN];
	int parking;
	int rc;

	if (dist && (rc = tsr__dist_start(conf)))
		return rc;
	if (idle_parks(idle))
		tsr__idle_park(conf, &parking);
	else if (idle_yields(idle))
		tsr__idle_yield(conf);

	hide_starpu_own(saved);
	if (dist)
		rc = tsr__dist_start_starpu(conf);
	else
		rc = tsr__starpu_code(starpu_init(conf));
	restore_starpu_own(saved);
	if (dist && !rc && (rc = tsr__xview_mpi_start())) {
		tsr__dist_shutdown();
		tsr__dist_stop_mpi();
	}
	if (!rc)
		tsr__idle_started(); /* no task pushed yet */
	if (dist)
		return rc;

	if (!rc)
		tsr__nice_pollers(); /* the workers exist now (nice.c) */
	if (rc == TSR_ENODEV)
		return tsr__err(TSR_ENODEV,
				"tsr_init: StarPU found no worker (ncpu=%d, ncuda=%d, "
				"nopencl=%d%s)",
				c->ncpu, c->ncuda, c->nopencl,
				c->nopencl > 0 && !getenv("STARPU_OPENCL_ON_CPUS")
					? "; an OpenCL device on the CPU, such as POCL's, also "
					  "needs STARPU_OPENCL_ON_CPUS=1"
					: "");
	if (rc)
		return tsr__err(rc, "tsr_init: starpu_init failed (%s)", tsr_err_name(rc));
	return TSR_OK;
}

static int init_locked(const tsr_config_t *cfg)
{
	tsr_config_t c;
	int dist;
	int idle;
	int rc = tsr__config_resolve(cfg, &c);
	if (!rc)
		rc = read_switches(&c, &dist, &idle);
	if (rc)
		return rc;

	struct starpu_conf conf;
	starpu_settings(&c, &conf);
	if ((rc = start_starpu(&c, &conf, dist, idle)))
		return rc;

	tsr__rt.cfg = c;
	tsr__rt.quiet = c.quiet;
	tsr__rt.owner = pthread_self();
	tsr__rt.fill = tsr_fill;
	tsr__rt.ncpu = starpu_cpu_worker_get_count();
	tsr__rt.ncuda = starpu_cuda_worker_get_count();
	tsr__rt.nopencl = starpu_opencl_worker_get_count();
	tsr__rt.ndevice = tsr__rt.ncuda + tsr__rt.nopencl;
	tsr__rt.initialized = 1;
	tsr__config_warn(&c);

	tsr__coh_start();
	tsr__replay_start();
	if (tsr__dist.on && (rc = dist_limits())) {
		tsr_finalize();
		return rc;
	}

	tsr__redops_reset();
	tsr__launch_init();
	tsr__mapper_reset();
	tsr__obs_init(&c, tsr__idle_base(conf.sched_policy) == &tsr__critpath_policy);
	if ((rc = tsr__internal_tasks_init()) || (rc = tsr__opencl_start())) {
		tsr_finalize();
		return rc;
	}

	return TSR_OK;
}

int tsr_fence(void)
{
	TSR_REQUIRE_INIT("tsr_fence");
	if (tsr__rt.paused)
		return tsr__err(TSR_ESTATE, "tsr_fence: the workers are paused (tsr_resume first), "
					    "waiting would never end");

	tsr__dist_note("tsr_fence", NULL, 0);
	int rc = tsr__dist_check("tsr_fence");
	if (rc)
		return rc;

	if (tsr__dist.on)
		tsr__dist_wait_all(); /* the transfers too */
	else
		starpu_task_wait_for_all();

	tsr__order_waited();
	return tsr__dist_agree(tsr__take_task_error());
}

/* Names of live objects for the finalize report (malloc'd, grown: never cut). */
static char *live_names;

static void name_root(void *obj)
{
	struct tsr_region *r = obj;

	if (r->root == r)
		tsr__append(&live_names, "%s'%s'", live_names ? ", " : "", r->name);
}

static void name_future(void *obj)
{
	struct tsr_future *f = obj;

	tsr__append(&live_names, "%sfuture of %s", live_names ? ", " : "",
		    f->producer[0] ? f->producer : "tsr_future_create");
}

/* What was still alive, counted before finalize destroyed it. */
struct live {
	int nregions, nparts, nfutures, nfspaces, nmapped;
	char *mapped; /* names of the host mappings (malloc'd) */
};

/* TSR_ELIVE naming what was alive, after the first failed task's message if there was one
 * (task_msg, with task_rc). */
static int report_live(const struct live *l, int task_rc, const char *task_msg)
{
	const char *names = live_names ? live_names : "";
	const char *mapped = l->mapped ? l->mapped : "";
	int rc = tsr__err(TSR_ELIVE,
			  "tsr_finalize: destroyed what was still alive: %d "
			  "region%s/subregion%s, %d partition%s, %d future%s, %d field "
			  "space%s, %d host mapping%s [%s%s%s]",
			  l->nregions, l->nregions == 1 ? "" : "s", l->nregions == 1 ? "" : "s",
			  l->nparts, l->nparts == 1 ? "" : "s", l->nfutures,
			  l->nfutures == 1 ? "" : "s", l->nfspaces, l->nfspaces == 1 ? "" : "s",
			  l->nmapped, l->nmapped == 1 ? "" : "s", names,
			  names[0] && mapped[0] ? "; mapped: "
			  : mapped[0]           ? "mapped: "
						: "",
			  mapped);

	if (!tsr__rt.quiet)
		fprintf(stderr, "tessera: %s\n", tsr_last_error());

	/* a task's failure comes first, as tessera.h promises; what was alive after it */
	if (task_rc) {
		char *live_msg = strdup(tsr_last_error());
		rc = tsr__err(task_rc, "%s; and %s", task_msg, live_msg ? live_msg : "");
		free(live_msg);
	}

	return rc;
}

/* With no CPU worker, no StarPU driver serves the host node's data requests: only a host thread
 * waiting for data does. Asynchronous unregistrations (destroyed futures, views) may leave some
 * queued there when starpu_shutdown tears the node down, which StarPU asserts against (about half
 * of device-only runs ending on a chain of 40 futures). So the host thread waits for data once
 * more, and serves them meanwhile: a scratch variable is written on a device by a no-op task,
 * then read back on the host. */
static void drain_host_requests(void)
{
	if (tsr__rt.ncpu > 0 || tsr__rt.ndevice == 0)
		return;

	uint64_t scratch = 0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&scratch, sizeof scratch);

	struct starpu_task *task = starpu_task_create();
	task->cl = &tsr__noop_cl;
	task->handles[0] = h;
	task->modes[0] = STARPU_W;
	task->nbuffers = 1;
	task->synchronous = 1;

	if (starpu_task_submit(task) == 0) {
		starpu_data_acquire_on_node(h, STARPU_MAIN_RAM, STARPU_R);
		starpu_data_release_on_node(h, STARPU_MAIN_RAM);
	}

	starpu_data_unregister(h);
}

int tsr_finalize(void)
{
	TSR_REQUIRE_INIT("tsr_finalize");
	if (tsr__rt.paused) {
		starpu_resume();
		tsr__rt.paused = 0;
	}

	/* release host mappings first: nothing can depend on mapped data (launches on it are
	 * refused) */
	struct live l = {0};
	l.nmapped = tsr__unmap_all(&l.mapped);

	tsr__dist_note("tsr_finalize", NULL, 0);
	if (tsr__dist_check("tsr_finalize") == TSR_EDIVERGE) {
		/* the transfers of diverged ranks never meet: waiting for them would hang every
		 * rank */
		fprintf(stderr, "tessera: rank %d: %s; ending the job\n", tsr__dist.rank,
			tsr_last_error());
		tsr__dist_abort();
	}

	tsr__dist_wait_all();
	int task_rc = tsr__dist_agree(tsr__take_task_error());
	char *task_msg = task_rc ? strdup(tsr_last_error()) : NULL;

	free(live_names);
	live_names = NULL;
	tsr__handle_foreach(TSR_K_REGION, name_root);
	tsr__handle_foreach(TSR_K_FUTURE, name_future);
	l.nregions = tsr__handle_foreach(TSR_K_REGION, NULL);
	l.nparts = tsr__handle_foreach(TSR_K_PARTITION, NULL);
	l.nfutures = tsr__handle_foreach(TSR_K_FUTURE, NULL);
	l.nfspaces = tsr__handle_foreach(TSR_K_FSPACE, NULL);

	tsr__handle_foreach(TSR_K_FUTURE, tsr__future_free);
	tsr__region_free_all();
	tsr__fspace_free_all();
	tsr__launch_fini();
	tsr__coh_shutdown(); /* coherence's scratch lists, once the regions are gone */
	tsr__dist_wait_all();
	tsr__order_shutdown(); /* destroys the tasks it kept, before StarPU goes */

	/* every task is done: the kernels and programs go before the devices */
	tsr__opencl_stop();
	drain_host_requests();
	tsr__idle_count(); /* for TSR_STATS, which tsr__obs_fini prints */
	int obs_rc = tsr__obs_fini(&tsr__rt.cfg);
	if (tsr__dist.on) {
		if (tsr__rt.cfg.stats)
			tsr__dist_print_stats(stderr);
		tsr__dist_shutdown();
		tsr__xview_mpi_stop(); /* after StarPU-MPI's shutdown, before MPI's */
		tsr__dist_stop_mpi();
	} else {
		starpu_shutdown();
	}

	tsr__poison_reset();
	tsr__ctx_pool_drain();
	tsr__handle_foreach(TSR_K_TASK, tsr__task_free);
	tsr__handles_reset();
	tsr__rt.initialized = 0;
	__atomic_store_n(&lifecycle, 0, __ATOMIC_RELEASE);

	int rc = obs_rc;
	if (l.nregions + l.nfutures + l.nfspaces + l.nmapped)
		rc = report_live(&l, task_rc, task_msg ? task_msg : "");
	else if (task_rc) /* the task's message was replaced by the trace's, if that failed too */
		rc = tsr__err(task_rc, "%s", task_msg ? task_msg : "");

	free(task_msg);
	free(l.mapped);
	free(live_names);
	live_names = NULL;
	return rc;
}

int tsr_pause(void)
{
	TSR_REQUIRE_INIT("tsr_pause");
	if (tsr__rt.paused)
		return tsr__err(TSR_ESTATE, "tsr_pause: the workers are already paused");

	starpu_pause();
	tsr__rt.paused = 1;
	return TSR_OK;
}

int tsr_resume(void)
{
	TSR_REQUIRE_INIT("tsr_resume");
	if (!tsr__rt.paused)
		return tsr__err(TSR_ESTATE, "tsr_resume: the workers are not paused");

	starpu_resume();
	tsr__rt.paused = 0;
	return TSR_OK;
}

int tsr_ncpu_workers(void)
{
	return tsr__rt.initialized ? tsr__rt.ncpu : 0;
}

int tsr_ncuda_workers(void)
{
	return tsr__rt.initialized ? tsr__rt.ncuda : 0;
}

int tsr_nopencl_workers(void)
{
	return tsr__rt.initialized ? tsr__rt.nopencl : 0;
}

const char *tsr_deps_name(void)
{
	if (!tsr__rt.initialized)
		return NULL;
	return tsr__order_active() ? "explicit" : "implicit";
}

const char *tsr_taskdata_name(void)
{
	if (!tsr__rt.initialized)
		return NULL;
	return tsr__order_direct() ? "direct" : "buffers";
}

const char *tsr_idle_name(void)
{
	if (!tsr__rt.initialized)
		return NULL;
	return tsr__idle_name();
}

const char *tsr_sched_name(void)
{
	if (!tsr__rt.initialized)
		return NULL;
	struct starpu_sched_policy *p = starpu_sched_ctx_get_sched_policy(0);
	return p && p->policy_name ? p->policy_name : "default";
}
