/* env.c: Tessera's environment switches, in one table (name, values, default, meaning) that every
 * file reads them through, tessera-info prints (--env) and the README's table is checked against
 * (tests/layout/env.sh). No other file of runtime/ calls getenv on a TSR_ variable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static const tsr_env_switch_t switches[] = {
	{"TSR_SCHED", "name", "StarPU's default",
	 "scheduling policy (see `tessera-info`); STARPU_SCHED wins if both are set"},
	{"TSR_NCPU", "N", "StarPU's default", "CPU workers (-1: StarPU's default)"},
	{"TSR_NCUDA", "N", "StarPU's default", "CUDA workers (-1: StarPU's default, 0: none)"},
	{"TSR_NOPENCL", "N", "0",
	 "OpenCL workers (-1: StarPU's default); POCL's CPU devices count only with "
	 "STARPU_OPENCL_ON_CPUS=1"},
	{"TSR_HOME", "host|device|auto|cuda", "auto",
	 "where regions' fields live: host RAM, the first device (a CUDA GPU, else an OpenCL "
	 "device; `cuda` is another spelling), or the device when only device workers run (auto)"},
	{"TSR_REDUX", "ordered|unordered", "ordered",
	 "reductions fold in color order (reproducible) or in StarPU's arrival order (the operator "
	 "must then be associative and commutative)"},
	{"TSR_DEPS", "explicit|implicit", "explicit",
	 "who orders the tasks on the views: Tessera, with explicit StarPU dependences (where it "
	 "can: one process, one memory node, ordered reductions, a StarPU with the notify fix) or "
	 "StarPU's sequential consistency. `tessera-info` and `tsr_deps_name()` say which is in "
	 "use"},
	{"TSR_REPLAY", "auto|off", "auto",
	 "traces (replay): a repeated sequence of launches is found without tsr_trace_begin, "
	 "analysed once and replayed (auto), or only traces the program opens are (off); one "
	 "process with one memory node, elsewhere traces are analysed in full"},
	{"TSR_COHERENCE", "shared|tokens", "shared",
	 "how views of one field are ordered: void tokens and sync tasks only where StarPU has "
	 "several memory nodes (shared), or everywhere (tokens: the device path's ordering tested "
	 "on a CPU-only machine)"},
	{"TSR_MPI", "0|1", "1 under mpirun, else 0",
	 "1 runs one program on all ranks (StarPU-MPI); 0 makes every rank a separate one-process "
	 "run"},
	{"TSR_TRACE", "file", "none",
	 "Chrome trace events (open in Perfetto): one event per task with name, color, worker, "
	 "start, end; StarPU's bus transfer totals; on several ranks one file per rank "
	 "(trace.rank0.json, ...)"},
	{"TSR_DAG", "file", "none",
	 "the dependency graph Tessera derived, as Graphviz dot; edges carry region, field and "
	 "both privileges"},
	{"TSR_STATS", "0|1", "0",
	 "at finalize: per task name and worker kind, count, total and mean time; the workers' "
	 "idle fraction; bytes moved per bus"},
	{"TSR_NICE", "0..19", "0",
	 "StarPU's polling threads run this many nice levels below the host thread, so that where "
	 "threads share cores the core goes to the thread that submits; for a machine of its own: "
	 "on a shared one they yield to every other program too (runtime/nice.c)"},
	{"TSR_MPI_NICE", "0..19", "unset",
	 "the older name of TSR_NICE, read when TSR_NICE is not set"},
};
enum { NSWITCHES = sizeof switches / sizeof switches[0] };

int tsr_env_switches(const tsr_env_switch_t **table)
{
	if (table)
		*table = switches;
	return NSWITCHES;
}

static const tsr_env_switch_t *find(const char *name)
{
	for (int i = 0; i < NSWITCHES; i++)
		if (!strcmp(switches[i].name, name))
			return &switches[i];
	abort(); /* a switch missing from the table is Tessera's bug: every switch is listed */
}

const char *tsr__env(const char *name)
{
	find(name);
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

/* Whether v is word number k of the '|'-separated list, for each k in turn. */
static int choice_index(const char *list, const char *v)
{
	size_t len = strlen(v);
	int k = 0;

	for (const char *p = list; *p; k++) {
		size_t n = strcspn(p, "|");
		if (n == len && !strncmp(p, v, n))
			return k;

		p += n;
		if (*p == '|')
			p++;
	}

	return -1;
}

int tsr__env_choice(const char *name, const char *what, int *out)
{
	const tsr_env_switch_t *s = find(name);
	const char *v = tsr__env(name);
	int k = choice_index(s->values, v ? v : s->fallback);

	if (k < 0) {
		char words[128];
		snprintf(words, sizeof words, "%s", s->values);
		for (char *p = words; (p = strchr(p, '|'));)
			*p = '/';
		return tsr__err(TSR_EINVAL, "%s: %s='%s' is not one of %s", what, name, v, words);
	}

	*out = k;
	return TSR_OK;
}

int tsr__env_int(const char *name, long lo, long hi, int *out)
{
	const char *v = tsr__env(name);
	if (!v)
		return TSR_OK;

	char *end;
	long x = strtol(v, &end, 10);
	if (*end || x < lo || x > hi)
		return tsr__err(TSR_EINVAL,
				"tsr_init: %s='%s' is not a number from %ld to %ld (%s)", name, v,
				lo, hi, find(name)->meaning);

	*out = (int)x;
	return TSR_OK;
}
