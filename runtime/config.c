/* config.c: how a run is set, the same way for every program: flags (tsr_args), then TSR_*
 * variables, then StarPU's STARPU_* for the same settings, then tsr_config_t, then the defaults;
 * every switch checked against its rule (env.c) before anything starts. The scheduling policies
 * by name (Tessera's and StarPU's), what tsr_settings reports, and the warnings said once when
 * StarPU starts fewer workers than were asked for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

/* ------------------------------------------------------------------ policies */

static struct starpu_sched_policy *const own_policies[] = {&tsr__locality_policy,
							   &tsr__critpath_policy};
enum { NOWN = sizeof own_policies / sizeof own_policies[0] };

struct starpu_sched_policy *tsr__own_policy(const char *name)
{
	for (int i = 0; name && i < NOWN; i++)
		if (!strcmp(name, own_policies[i]->policy_name))
			return own_policies[i];
	return NULL;
}

int tsr_policy_list(const char **names, const char **descriptions, int max)
{
	int n = 0;

	for (int i = 0; i < NOWN; i++, n++)
		if (n < max) {
			if (names)
				names[n] = own_policies[i]->policy_name;
			if (descriptions)
				descriptions[n] = own_policies[i]->policy_description;
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

static int policy_known(const char *name)
{
	if (tsr__own_policy(name))
		return 1;

	struct starpu_sched_policy **p = starpu_sched_get_predefined_policies();
	for (; p && *p; p++)
		if ((*p)->policy_name && !strcmp((*p)->policy_name, name))
			return 1;
	return 0;
}

/* Every policy, one per line with its description when `long_form`, else their names; malloc'd
 * (NULL out of memory). */
static char *policy_text(int long_form)
{
	int n = tsr_policy_list(NULL, NULL, 0);
	const char **names = calloc((size_t)n + 1, sizeof *names);
	const char **desc = calloc((size_t)n + 1, sizeof *desc);
	char *s = NULL;

	if (names && desc) {
		tsr_policy_list(names, desc, n);
		for (int i = 0; i < n; i++)
			if (long_form ? tsr__append(&s, "\n  %-22s %s", names[i], desc[i])
				      : tsr__append(&s, "%s%s", i ? " " : "", names[i]))
				break;
	}

	free(names);
	free(desc);
	return s;
}

/* `help`, or a name that is not a policy, given as `from` (a flag, a variable, tsr_config_t):
 * TSR_EINVAL with the list (never cut). */
static int policy_refused(const char *what, const char *from, const char *v)
{
	int help = !strcmp(v, "help");
	char *list = policy_text(help);
	const char *sep = from[0] == '-' ? " " : "=";
	int rc;

	if (help)
		rc = tsr__err(TSR_EINVAL, "%s: %s%s%s: the scheduling policies are:%s", what, from,
			      sep, v, list ? list : " (out of memory for the list)");
	else
		rc = tsr__err(TSR_EINVAL,
			      "%s: %s%s'%s' is not a scheduling policy; the policies: %s", what,
			      from, sep, v, list ? list : "(out of memory for the list)");
	free(list);
	return rc;
}

/* The policy rule of env.c's table. `help` passes tsr_args (a program lists the policies), not
 * tsr_init. */
static int args_policy_ok(const char *from, const char *v)
{
	if (!strcmp(v, "help") || policy_known(v))
		return TSR_OK;
	return policy_refused("tsr_args", from, v);
}

static int init_policy_ok(const char *from, const char *v)
{
	if (policy_known(v))
		return TSR_OK;
	return policy_refused("tsr_init", from, v);
}

/* ------------------------------------------------------------------ flags */

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

int tsr_args(int *argc, char **argv)
{
	if (!argc && !argv) {
		tsr__env_forget_flags();
		return TSR_OK;
	}
	if (!argc || !argv || *argc < 0)
		return tsr__err(TSR_EINVAL, "tsr_args: %s",
				!argc   ? "null argc"
				: !argv ? "null argv"
					: "negative argc");
	if (tsr__rt.initialized)
		return tsr__err(TSR_ESTATE, "tsr_args: the runtime is running; flags apply at "
					    "tsr_init, so call tsr_args before it");

	return tsr__env_take_flags(argc, argv, args_policy_ok);
}

/* ------------------------------------------------------------------ resolution */

int tsr__config_resolve(const tsr_config_t *cfg, tsr_config_t *c)
{
	tsr_config_init(c);
	if (cfg)
		*c = *cfg;

	int rc = tsr__env_check_all("tsr_init", init_policy_ok);
	if (rc)
		return rc;

	const char *s;
	if ((s = tsr__env("TSR_SCHED")))
		c->sched = s;
	if ((rc = tsr__env_int("TSR_NCPU", -1, 4096, &c->ncpu)) ||
	    (rc = tsr__env_int("TSR_NCUDA", -1, 4096, &c->ncuda)) ||
	    (rc = tsr__env_int("TSR_NOPENCL", -1, 4096, &c->nopencl)))
		return rc;
	if ((s = tsr__env("TSR_TIMELINE")))
		c->timeline_file = s;
	if ((s = tsr__env("TSR_DAG")))
		c->dag_file = s;
	if (tsr__env("TSR_STATS") && (rc = tsr__env_choice("TSR_STATS", "tsr_init", &c->stats)))
		return rc;

	if (c->sched && (!strcmp(c->sched, "help") || !policy_known(c->sched))) {
		const char *from = tsr__env_from("TSR_SCHED");
		return policy_refused("tsr_init", from ? from : "tsr_config_t.sched", c->sched);
	}

	return TSR_OK;
}

/* A number of tsr_config_t as text, or NULL where it is tsr_config_init's. */
static const char *cfg_number(int value, int fallback, char *num, size_t n)
{
	if (value == fallback)
		return NULL;
	snprintf(num, n, "%d", value);
	return num;
}

/* tsr_config_t's value of switch `name` as text, or NULL where the program left the default. */
static const char *cfg_value(const tsr_config_t *cfg, const char *name, char *num, size_t n)
{
	tsr_config_t d;
	tsr_config_init(&d);
	if (!cfg)
		return NULL;

	if (!strcmp(name, "TSR_SCHED"))
		return cfg->sched;
	if (!strcmp(name, "TSR_NCPU"))
		return cfg_number(cfg->ncpu, d.ncpu, num, n);
	if (!strcmp(name, "TSR_NCUDA"))
		return cfg_number(cfg->ncuda, d.ncuda, num, n);
	if (!strcmp(name, "TSR_NOPENCL"))
		return cfg_number(cfg->nopencl, d.nopencl, num, n);
	if (!strcmp(name, "TSR_TIMELINE"))
		return cfg->timeline_file;
	if (!strcmp(name, "TSR_DAG"))
		return cfg->dag_file;
	if (!strcmp(name, "TSR_STATS"))
		return cfg->stats ? "1" : NULL;
	return NULL;
}

int tsr_settings(const tsr_config_t *cfg, tsr_setting_t *rows, int max)
{
	static char nums[64][16]; /* numbers from cfg, as text: valid until the next call */
	int n = tsr__env_count();

	if (max < 0 || (max > 0 && !rows))
		return tsr__err(TSR_EINVAL, "tsr_settings: %s",
				max < 0 ? "negative max" : "null rows");

	for (int i = 0; i < n && i < max; i++) {
		const char *name = tsr__env_name(i);
		tsr_setting_t *r = &rows[i];
		r->name = name;
		r->flag = tsr__env_flag(i);
		r->value = tsr__env(name);
		r->source = tsr__env_from(name);
		if (!r->value && i < 64 &&
		    (r->value = cfg_value(cfg, name, nums[i], sizeof nums[i])))
			r->source = "tsr_config_t";
		if (!r->value) {
			r->value = tsr__env_fallback(i);
			r->source = "default";
		}
	}

	return n;
}

/* ------------------------------------------------------------------ what StarPU started */

/* A warning on stderr, once per process for each kind, unless the program asked for quiet. */
static void warn_once(int kind, const tsr_config_t *c, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void warn_once(int kind, const tsr_config_t *c, const char *fmt, ...)
{
	static int said;
	if (c->quiet || (said & (1 << kind)))
		return;
	said |= 1 << kind;

	va_list ap;
	va_start(ap, fmt);
	char *s = tsr__vformat(fmt, ap);
	va_end(ap);
	if (s)
		fprintf(stderr, "tessera: warning: %s\n", s);
	free(s);
}

/* Where a worker count came from, for the warnings. */
static const char *count_from(const char *name)
{
	const char *from = tsr__env_from(name);
	return from ? from : "tsr_config_t";
}

/* Why StarPU started fewer OpenCL or CUDA workers than asked for. */
static const char *device_reason(int opencl, int started)
{
#ifndef STARPU_USE_OPENCL
	if (opencl)
		return "this StarPU was built without OpenCL";
#endif
#ifndef STARPU_USE_CUDA
	if (!opencl)
		return "this StarPU was built without CUDA";
#endif
	if (opencl && !started && !getenv("STARPU_OPENCL_ON_CPUS"))
		return "StarPU found no OpenCL device it counts; an OpenCL device on the CPU, such "
		       "as POCL's, counts only with STARPU_OPENCL_ON_CPUS=1";
	return opencl ? "StarPU found no more OpenCL devices" : "StarPU found no more CUDA devices";
}

/* A warning for each switch set by an older name that env.c's table says to warn about. */
static void warn_older_names(const tsr_config_t *c)
{
	int kind = 4; /* warn_once's kinds after the worker counts' */
	for (int i = 0; i < tsr__env_count(); i++) {
		const char *because;
		const char *newer = tsr__env_renamed(i, &because);
		if (!newer)
			continue;

		const char *older = tsr__env_name(i);
		const char *from = tsr__env_from(newer);
		if (from && !strcmp(from, older))
			warn_once(kind, c, "%s is the older name of %s: %s; set %s instead", older,
				  newer, because, newer);
		kind++;
	}
}

void tsr__config_warn(const tsr_config_t *c)
{
	warn_older_names(c);

	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int ncpu = starpu_cpu_worker_get_count();

	if (c->ncpu > 0 && cpus > 0 && c->ncpu > cpus)
		warn_once(0, c,
			  "%d CPU workers asked for (%s) on a machine of %ld logical CPUs: StarPU "
			  "started %d, and workers that share a core slow each other down",
			  c->ncpu, count_from("TSR_NCPU"), cpus, ncpu);
	else if (c->ncpu > 0 && ncpu < c->ncpu)
		warn_once(1, c, "%d CPU workers asked for (%s): StarPU started %d", c->ncpu,
			  count_from("TSR_NCPU"), ncpu);

	int nocl = starpu_opencl_worker_get_count();
	if (c->nopencl > 0 && nocl < c->nopencl)
		warn_once(2, c, "%d OpenCL worker%s asked for (%s): StarPU started %d (%s)",
			  c->nopencl, c->nopencl == 1 ? "" : "s", count_from("TSR_NOPENCL"), nocl,
			  device_reason(1, nocl));

	int ncuda = starpu_cuda_worker_get_count();
	if (c->ncuda > 0 && ncuda < c->ncuda)
		warn_once(3, c, "%d CUDA worker%s asked for (%s): StarPU started %d (%s)", c->ncuda,
			  c->ncuda == 1 ? "" : "s", count_from("TSR_NCUDA"), ncuda,
			  device_reason(0, ncuda));
}

/* ------------------------------------------------------------------ version */

const char *tsr_version(int *major, int *minor, int *patch)
{
	if (major)
		*major = TSR_VERSION_MAJOR;
	if (minor)
		*minor = TSR_VERSION_MINOR;
	if (patch)
		*patch = TSR_VERSION_PATCH;
	return TSR_VERSION_STRING;
}
