/* runtime.c: tsr_init / tsr_finalize / tsr_fence. Configuration comes from tsr_config_t, then
 * TSR_* environment variables; StarPU's own STARPU_* variables still apply on top. The thread that
 * calls tsr_init owns the runtime: calls from any other thread (task variants included) are
 * refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

void tsr_config_init(tsr_config_t *cfg)
{
	if (!cfg)
		return;

	memset(cfg, 0, sizeof *cfg);
	cfg->ncpu = -1;
	cfg->ncuda = -1;
	/* StarPU would start OpenCL workers on every GPU it also drives with CUDA */
	cfg->nopencl = 0;
}

static struct starpu_sched_policy *tsr_policy(const char *name)
{
	if (name && !strcmp(name, tsr__locality_policy.policy_name))
		return &tsr__locality_policy;
	if (name && !strcmp(name, tsr__critpath_policy.policy_name))
		return &tsr__critpath_policy;
	return NULL;
}

static int sched_known(const char *name)
{
	if (tsr_policy(name))
		return 1;

	struct starpu_sched_policy **p = starpu_sched_get_predefined_policies();
	for (; p && *p; p++)
		if ((*p)->policy_name && !strcmp((*p)->policy_name, name))
			return 1;
	return 0;
}

/* 0: down, 1: tsr_init or tsr_finalize under way, 2: up. Two threads racing to start the runtime
 * cannot both win the 0 -> 1 exchange. */
static int lifecycle;

static int init_locked(const tsr_config_t *cfg);

/* What several ranks do not do (yet): checked once StarPU runs, on every rank alike. */
static int dist_limits(void)
{
	if (tsr__dist.size > 64)
		return tsr__err(TSR_EINVAL, "tsr_init: %d MPI ranks; Tessera runs on at most 64",
				tsr__dist.size);
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

static int init_locked(const tsr_config_t *cfg)
{
	tsr_config_t c;
	tsr_config_init(&c);
	if (cfg)
		c = *cfg;

	const char *s;
	if ((s = tsr__env("TSR_SCHED")))
		c.sched = s;
	if (tsr__env_int("TSR_NCPU", -1, 4096, &c.ncpu) ||
	    tsr__env_int("TSR_NCUDA", -1, 4096, &c.ncuda) ||
	    tsr__env_int("TSR_NOPENCL", -1, 4096, &c.nopencl))
		return TSR_EINVAL;
	if ((s = tsr__env("TSR_TRACE")))
		c.trace_file = s;
	if ((s = tsr__env("TSR_DAG")))
		c.dag_file = s;
	if ((s = tsr__env("TSR_STATS")))
		c.stats = atoi(s);

	if (c.sched && !sched_known(c.sched)) {
		/* the same list as tsr_policy_list: Tessera's policies, then StarPU's */
		char list[1024] = "";
		const char *names[64];
		int n = tsr_policy_list(names, NULL, 64);
		for (int i = 0; i < n && i < 64; i++)
			if (strlen(list) + strlen(names[i]) + 2 < sizeof list) {
				strcat(list, " ");
				strcat(list, names[i]);
			}
		return tsr__err(TSR_EINVAL, "tsr_init: unknown scheduling policy '%s'; known:%s",
				c.sched, list);
	}

	enum { ORDERED, UNORDERED }; /* TSR_REDUX's words (env.c) */
	int redux;
	int rc = tsr__env_choice("TSR_REDUX", "tsr_init", &redux);
	tsr__rt.redux_unordered = rc == TSR_OK && redux == UNORDERED;
	if (!rc)
		rc = tsr__coh_init();
	if (!rc)
		rc = tsr__order_init();
	if (!rc)
		rc = tsr__replay_init();
	if (rc)
		return rc;

	int dist = tsr__dist_wanted();
	if (dist < 0)
		return dist;
	if ((rc = tsr__nice_read()))
		return rc;
	rc = tsr__obs_check_paths(&c);
	if (rc)
		return rc;

	struct starpu_conf conf;
	starpu_conf_init(&conf);
	const char *env_sched = getenv("STARPU_SCHED");
	if (env_sched && *env_sched)
		/* StarPU's variable wins, and must name one of StarPU's policies */
		c.sched = env_sched;
	else if (tsr_policy(c.sched))
		conf.sched_policy = tsr_policy(c.sched);
	else if (c.sched)
		conf.sched_policy_name = c.sched;
	if (c.ncpu >= 0)
		conf.ncpus = c.ncpu;
	if (c.ncuda >= 0)
		conf.ncuda = c.ncuda;
	if (c.nopencl >= 0)
		conf.nopencl = c.nopencl;

	if (dist && (rc = tsr__dist_start(&conf)))
		return rc;
	if (!dist)
		rc = starpu_init(&conf);
	if (!dist && !rc)
		tsr__nice_pollers(); /* the workers exist now (nice.c) */
	if (rc == -ENODEV)
		return tsr__err(TSR_ENODEV,
				"tsr_init: StarPU found no worker (ncpu=%d, ncuda=%d, "
				"nopencl=%d%s)",
				c.ncpu, c.ncuda, c.nopencl,
				c.nopencl > 0 && !getenv("STARPU_OPENCL_ON_CPUS")
					? "; an OpenCL device on the CPU, such as POCL's, also "
					  "needs STARPU_OPENCL_ON_CPUS=1"
					: "");
	if (rc)
		return tsr__err(TSR_ESTARPU, "tsr_init: starpu_init failed (%d)", rc);

	tsr__rt.cfg = c;
	tsr__rt.quiet = c.quiet;
	tsr__rt.owner = pthread_self();
	tsr__rt.fill = tsr_fill;
	tsr__rt.ncpu = starpu_cpu_worker_get_count();
	tsr__rt.ncuda = starpu_cuda_worker_get_count();
	tsr__rt.nopencl = starpu_opencl_worker_get_count();
	tsr__rt.ndevice = tsr__rt.ncuda + tsr__rt.nopencl;
	tsr__rt.initialized = 1;

	tsr__coh_start();
	tsr__replay_start();
	if (tsr__dist.on && (rc = dist_limits())) {
		tsr_finalize();
		return rc;
	}

	tsr__redops_reset();
	tsr__launch_init();
	tsr__mapper_reset();
	tsr__obs_init(&c, conf.sched_policy == &tsr__critpath_policy);
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

/* Names of live objects for the finalize report. */
static char live_names[400];

static void name_root(void *obj)
{
	struct tsr_region *r = obj;
	size_t used = strlen(live_names);

	if (r->root == r && used + 1 < sizeof live_names)
		snprintf(live_names + used, sizeof live_names - used, "%s'%s'", used ? ", " : "",
			 r->name);
}

static void name_future(void *obj)
{
	struct tsr_future *f = obj;
	size_t used = strlen(live_names);

	if (used + 1 < sizeof live_names)
		snprintf(live_names + used, sizeof live_names - used, "%sfuture of %s",
			 used ? ", " : "", f->producer[0] ? f->producer : "tsr_future_create");
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
	char mapped_names[400] = "";
	int nmapped = tsr__unmap_all(mapped_names, sizeof mapped_names);

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
	char task_msg[512];
	snprintf(task_msg, sizeof task_msg, "%s", tsr_last_error());

	live_names[0] = 0;
	tsr__handle_foreach(TSR_K_REGION, name_root);
	tsr__handle_foreach(TSR_K_FUTURE, name_future);
	int nregions = tsr__handle_foreach(TSR_K_REGION, NULL);
	int nparts = tsr__handle_foreach(TSR_K_PARTITION, NULL);
	int nfutures = tsr__handle_foreach(TSR_K_FUTURE, NULL);
	int nfspaces = tsr__handle_foreach(TSR_K_FSPACE, NULL);

	tsr__handle_foreach(TSR_K_FUTURE, tsr__future_free);
	tsr__region_free_all();
	tsr__fspace_free_all();
	tsr__launch_fini();
	tsr__dist_wait_all();
	tsr__order_shutdown(); /* destroys the tasks it kept, before StarPU goes */

	/* every task is done: the kernels and programs go before the devices */
	tsr__opencl_stop();
	drain_host_requests();
	int obs_rc = tsr__obs_fini(&tsr__rt.cfg);
	if (tsr__dist.on) {
		if (tsr__rt.cfg.stats)
			tsr__dist_print_stats(stderr);
		tsr__dist_shutdown();
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

	int live = nregions + nfutures + nfspaces + nmapped;
	if (live) {
		int rc = tsr__err(TSR_ELIVE,
				  "tsr_finalize: destroyed what was still alive: %d "
				  "region%s/subregion%s, %d partition%s, %d future%s, %d field "
				  "space%s, %d host mapping%s [%s%s%s]",
				  nregions, nregions == 1 ? "" : "s", nregions == 1 ? "" : "s",
				  nparts, nparts == 1 ? "" : "s", nfutures,
				  nfutures == 1 ? "" : "s", nfspaces, nfspaces == 1 ? "" : "s",
				  nmapped, nmapped == 1 ? "" : "s", live_names,
				  live_names[0] && mapped_names[0] ? "; mapped: "
				  : mapped_names[0]                ? "mapped: "
								   : "",
				  mapped_names);

		if (!tsr__rt.quiet)
			fprintf(stderr, "tessera: %s\n", tsr_last_error());

		/* a task's failure comes first, as tessera.h promises; what was alive after it */
		if (task_rc) {
			char live_msg[1024];
			snprintf(live_msg, sizeof live_msg, "%s", tsr_last_error());
			return tsr__err(task_rc, "%s; and %s", task_msg, live_msg);
		}

		return rc;
	}

	/* the task's message was replaced by the trace's, if that failed too: restore it */
	if (task_rc)
		return tsr__err(task_rc, "%s", task_msg);
	return obs_rc;
}

int tsr_policy_list(const char **names, const char **descriptions, int max)
{
	int n = 0;
	struct starpu_sched_policy *own[] = {&tsr__locality_policy, &tsr__critpath_policy};

	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++, n++)
		if (n < max) {
			if (names)
				names[n] = own[i]->policy_name;
			if (descriptions)
				descriptions[n] = own[i]->policy_description;
		}

	for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p;
	     p++) {
		if (!(*p)->policy_name)
			continue;
		if (n < max) {
			if (names)
				names[n] = (*p)->policy_name;
			if (descriptions)
				descriptions[n] =
					(*p)->policy_description ? (*p)->policy_description : "";
		}
		n++;
	}

	return n;
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

const char *tsr_sched_name(void)
{
	if (!tsr__rt.initialized)
		return NULL;
	struct starpu_sched_policy *p = starpu_sched_ctx_get_sched_policy(0);
	return p && p->policy_name ? p->policy_name : "default";
}
