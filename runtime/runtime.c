/* runtime.c: tsr_init / tsr_finalize / tsr_fence. Configuration comes from tsr_config_t, then
 * TSR_* environment variables; StarPU's own STARPU_* variables still apply on top. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

struct tsr_runtime tsr__rt;

int tsr__launch_init(void);
void tsr__launch_fini(void);
void tsr__task_free(void *obj);
int tsr__region_free_all(void);
void tsr__fspace_free_all(void);
void tsr__future_graveyard_flush(int release);
int tsr__unmap_all(char *names, size_t len);

void tsr_config_init(tsr_config_t *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof *cfg);
	cfg->ncpu = -1;
	cfg->ncuda = -1;
}

static int env_int(const char *name, int *out)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	long x = strtol(v, &end, 10);
	if (*end || x < -1 || x > 4096)
		return tsr__err(TSR_EINVAL, "tsr_init: environment variable %s='%s' is not a worker count", name, v);
	*out = (int)x;
	return 0;
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

int tsr_init(const tsr_config_t *cfg)
{
	if (tsr__rt.initialized)
		return tsr__err(TSR_ESTATE, "tsr_init: the runtime is already initialized");
	tsr_config_t c;
	tsr_config_init(&c);
	if (cfg)
		c = *cfg;
	const char *s;
	if ((s = getenv("TSR_SCHED")) && *s)
		c.sched = s;
	if (env_int("TSR_NCPU", &c.ncpu) || env_int("TSR_NCUDA", &c.ncuda))
		return TSR_EINVAL;
	if ((s = getenv("TSR_TRACE")) && *s)
		c.trace_file = s;
	if ((s = getenv("TSR_DAG")) && *s)
		c.dag_file = s;
	if ((s = getenv("TSR_STATS")) && *s)
		c.stats = atoi(s);
	if (c.sched && !sched_known(c.sched)) {
		char list[1024] = "";
		struct starpu_sched_policy **p = starpu_sched_get_predefined_policies();
		for (; p && *p; p++)
			if ((*p)->policy_name && strlen(list) + strlen((*p)->policy_name) + 2 < sizeof list) {
				strcat(list, " ");
				strcat(list, (*p)->policy_name);
			}
		return tsr__err(TSR_EINVAL, "tsr_init: unknown scheduling policy '%s'; known:%s", c.sched, list);
	}
	struct starpu_conf conf;
	starpu_conf_init(&conf);
	const char *env_sched = getenv("STARPU_SCHED");
	if (env_sched && *env_sched)
		c.sched = env_sched;   /* StarPU's variable wins, and must name one of StarPU's policies */
	else if (tsr_policy(c.sched))
		conf.sched_policy = tsr_policy(c.sched);
	else if (c.sched)
		conf.sched_policy_name = c.sched;
	if (c.ncpu >= 0)
		conf.ncpus = c.ncpu;
	if (c.ncuda >= 0)
		conf.ncuda = c.ncuda;
	conf.nopencl = 0;
	int rc = starpu_init(&conf);
	if (rc == -ENODEV)
		return tsr__err(TSR_ENODEV, "tsr_init: StarPU found no worker (ncpu=%d, ncuda=%d)", c.ncpu, c.ncuda);
	if (rc)
		return tsr__err(TSR_ESTARPU, "tsr_init: starpu_init failed (%d)", rc);
	tsr__rt.cfg = c;
	tsr__rt.quiet = c.quiet;
	tsr__rt.ncpu = starpu_cpu_worker_get_count();
	tsr__rt.ncuda = starpu_cuda_worker_get_count();
	tsr__rt.initialized = 1;
	tsr__redops_reset();
	tsr__launch_init();
	tsr__mapper_reset();
	tsr__obs_init(&c, conf.sched_policy == &tsr__critpath_policy);
	if ((rc = tsr__internal_tasks_init())) {
		tsr_finalize();
		return rc;
	}
	return TSR_OK;
}

int tsr_fence(void)
{
	TSR_REQUIRE_INIT("tsr_fence");
	if (tsr__rt.paused)
		return tsr__err(TSR_ESTATE, "tsr_fence: the workers are paused (tsr_resume first), waiting would never end");
	starpu_task_wait_for_all();
	tsr__future_graveyard_flush(0);
	return tsr__take_task_error();
}

/* Names of live objects for the finalize report. */
static char live_names[400];
static void name_root(void *obj)
{
	struct tsr_region *r = obj;
	size_t used = strlen(live_names);
	if (r->root == r && used + 1 < sizeof live_names)
		snprintf(live_names + used, sizeof live_names - used, "%s'%s'", used ? ", " : "", r->name);
}
static void name_future(void *obj)
{
	struct tsr_future *f = obj;
	size_t used = strlen(live_names);
	if (used + 1 < sizeof live_names)
		snprintf(live_names + used, sizeof live_names - used, "%sfuture of %s", used ? ", " : "",
		         f->producer[0] ? f->producer : "tsr_future_create");
}

int tsr_finalize(void)
{
	TSR_REQUIRE_INIT("tsr_finalize");
	if (tsr__rt.paused) {
		starpu_resume();
		tsr__rt.paused = 0;
	}
	/* release host mappings first: nothing can depend on mapped data (launches on it are refused) */
	char mapped_names[400] = "";
	int nmapped = tsr__unmap_all(mapped_names, sizeof mapped_names);
	starpu_task_wait_for_all();
	int task_rc = tsr__take_task_error();
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
	starpu_task_wait_for_all();
	tsr__obs_fini(&tsr__rt.cfg);
	starpu_shutdown();
	tsr__future_graveyard_flush(1);
	tsr__handle_foreach(TSR_K_TASK, tsr__task_free);
	tsr__handles_reset();
	tsr__rt.initialized = 0;
	int live = nregions + nfutures + nfspaces + nmapped;
	if (live) {
		int rc = tsr__err(TSR_ELIVE, "tsr_finalize: destroyed what was still alive: %d region%s/subregion%s, %d partition%s, "
		                  "%d future%s, %d field space%s, %d host mapping%s [%s%s%s]", nregions, nregions == 1 ? "" : "s",
		                  nregions == 1 ? "" : "s", nparts, nparts == 1 ? "" : "s", nfutures, nfutures == 1 ? "" : "s",
		                  nfspaces, nfspaces == 1 ? "" : "s", nmapped, nmapped == 1 ? "" : "s", live_names,
		                  live_names[0] && mapped_names[0] ? "; mapped: " : mapped_names[0] ? "mapped: " : "", mapped_names);
		if (!tsr__rt.quiet)
			fprintf(stderr, "tessera: %s\n", tsr_last_error());
		return rc;
	}
	return task_rc;
}

int tsr_policy_list(const char **names, const char **descriptions, int max)
{
	int n = 0;
	struct starpu_sched_policy *own[] = {&tsr__locality_policy, &tsr__critpath_policy};
	for (size_t i = 0; i < sizeof own / sizeof own[0]; i++, n++)
		if (n < max) {
			if (names) names[n] = own[i]->policy_name;
			if (descriptions) descriptions[n] = own[i]->policy_description;
		}
	for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; p++) {
		if (!(*p)->policy_name)
			continue;
		if (n < max) {
			if (names) names[n] = (*p)->policy_name;
			if (descriptions) descriptions[n] = (*p)->policy_description ? (*p)->policy_description : "";
		}
		n++;
	}
	return n;
}

void tsr__wait_all(void)
{
	if (tsr__rt.paused)
		starpu_resume();
	starpu_task_wait_for_all();
	if (tsr__rt.paused)
		starpu_pause();
}

void tsr__wait_handle(starpu_data_handle_t h)
{
	if (tsr__rt.paused)
		starpu_resume();
	starpu_data_acquire(h, STARPU_R);
	starpu_data_release(h);
	if (tsr__rt.paused)
		starpu_pause();
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

int tsr_ncpu_workers(void) { return tsr__rt.initialized ? tsr__rt.ncpu : 0; }
int tsr_ncuda_workers(void) { return tsr__rt.initialized ? tsr__rt.ncuda : 0; }

const char *tsr_sched_name(void)
{
	if (!tsr__rt.initialized)
		return NULL;
	struct starpu_sched_policy *p = starpu_sched_ctx_get_sched_policy(0);
	return p && p->policy_name ? p->policy_name : "default";
}
