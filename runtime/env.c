/* env.c: Tessera's switches, in one table (name, values, default, meaning, flag) that every file
 * reads them through, tessera-info prints (--env) and the README's table is checked against
 * (tests/layout/env.sh). The values column is each switch's rule as well: "a|b" words, "LO..HI"
 * or "N" integers, "file", "policy" (a scheduling policy's name, which config.c checks); a value
 * outside it is refused, naming the switch and what it takes. A switch's value comes, first
 * found first, from its command-line flag (tsr_args: --ncpu for TSR_NCPU), its TSR_ variable,
 * then StarPU's variable for the same setting (STARPU_NCPU); tsr_config_t and the default lie
 * below (config.c). No other file of runtime/ calls getenv on a TSR_ variable. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* One switch: what tsr_env_switches shows, and where else its value may come from. */
struct row {
	const char *name, *values, *fallback, *meaning;
	/* the command-line flag (tsr_args); NULL: none */
	const char *flag;
	/* StarPU's variables for the same setting, the first found wins; NULL: none */
	const char *starpu[2];
	/* an older name: the switch it names, which wins when both are set */
	const char *older_name_of;
	/* an older name read with a warning: why the name changed; NULL: read silently */
	const char *renamed_because;
};

static const struct row rows[] = {
	{"TSR_SCHED", "policy", "StarPU's default",
	 "scheduling policy: one of `tessera-info --policies` (Tessera's own included), or `help` "
	 "to list them; wins over STARPU_SCHED",
	 .flag = "--sched", .starpu = {"STARPU_SCHED"}},
	{"TSR_NCPU", "-1..4096", "StarPU's default",
	 "CPU workers (-1: StarPU's default; 0: none, where a device worker runs); wins over "
	 "STARPU_NCPU",
	 .flag = "--ncpu", .starpu = {"STARPU_NCPU", "STARPU_NCPUS"}},
	{"TSR_NCUDA", "-1..4096", "StarPU's default",
	 "CUDA workers (-1: StarPU's default, 0: none); wins over STARPU_NCUDA", .flag = "--ncuda",
	 .starpu = {"STARPU_NCUDA"}},
	{"TSR_NOPENCL", "-1..4096", "0",
	 "OpenCL workers (-1: StarPU's default); POCL's CPU devices count only with "
	 "STARPU_OPENCL_ON_CPUS=1; wins over STARPU_NOPENCL",
	 .flag = "--nopencl", .starpu = {"STARPU_NOPENCL"}},
	{"TSR_HOME", "host|device|auto|cuda", "auto",
	 "where regions' fields live: host RAM, the first device (a CUDA GPU, else an OpenCL "
	 "device; `cuda` is another spelling), or the device when only device workers run (auto)",
	 .flag = "--home"},
	{"TSR_REDUX", "ordered|unordered", "ordered",
	 "reductions fold in color order (reproducible) or in StarPU's arrival order (the operator "
	 "must then be associative and commutative)",
	 .flag = "--redux"},
	{"TSR_DEPS", "explicit|implicit", "explicit",
	 "who orders the tasks on the views: Tessera, with explicit StarPU dependences (where it "
	 "can: one process, one memory node, ordered reductions, a StarPU with the notify fix) or "
	 "StarPU's sequential consistency. `tessera-info` and `tsr_deps_name()` say which is in "
	 "use",
	 .flag = "--deps"},
	{"TSR_TASKDATA", "direct|buffers", "direct",
	 "how a task whose views Tessera orders (TSR_DEPS explicit, one process) reaches them: "
	 "through their host addresses, listing no StarPU data (direct: StarPU neither fetches "
	 "nor releases what is already in place), or as StarPU buffers (buffers)",
	 .flag = "--taskdata"},
	{"TSR_REPLAY", "auto|off", "auto",
	 "traces (replay): a repeated sequence of launches is found without tsr_trace_begin, "
	 "analysed once and replayed (auto), or only traces the program opens are (off); one "
	 "process with one memory node, elsewhere traces are analysed in full",
	 .flag = "--replay"},
	{"TSR_WINDOW", "0..1048576", "256",
	 "how far the host thread may run ahead: a launch that finds more than this many StarPU "
	 "tasks submitted and not yet finished first waits until half as many are left (0: no "
	 "window); Legion's -lg:window, StarPU's STARPU_LIMIT_MAX_SUBMITTED_TASKS at launch "
	 "boundaries (runtime/launch.c)",
	 .flag = "--window"},
	{"TSR_COHERENCE", "shared|tokens", "shared",
	 "how views of one field are ordered: void tokens and sync tasks only where StarPU has "
	 "several memory nodes (shared), or everywhere (tokens: the device path's ordering tested "
	 "on a CPU-only machine)",
	 .flag = "--coherence"},
	{"TSR_MPI", "0|1", "1 under mpirun, else 0",
	 "1 runs one program on all ranks (StarPU-MPI); 0 makes every rank a separate one-process "
	 "run",
	 .flag = "--mpi"},
	{"TSR_TIMELINE", "file", "none",
	 "the run's timeline as trace events (JSON; open in Perfetto): each rank a process (pid "
	 "rank+1), the host thread and each worker a named track of its tasks (Tessera's fills, "
	 "copies, folds and syncs included), the data tasks fetched as slices on a track per bus, "
	 "StarPU-MPI transfers per peer, numeric counters (tasks waiting and running, bytes per "
	 "bus); written at tsr_finalize, or at exit without it; one file per rank "
	 "(trace.rank0.json, ...)",
	 .flag = "--timeline"},
	{"TSR_TIMELINE_FLOWS", "0|1", "0",
	 "1: the timeline also draws each dependence of the task graph as an arrow (flow events)",
	 .flag = "--timeline-flows"},
	{"TSR_TRACE", "file", "unset",
	 "the older name of TSR_TIMELINE, read when TSR_TIMELINE is not set, with a warning: a trace "
	 "now is a replayed loop body (tsr_trace_begin, TSR_REPLAY)",
	 .older_name_of = "TSR_TIMELINE",
	 .renamed_because =
		 "the timeline file; a trace now is a replayed loop body (tsr_trace_begin)"},
	{"TSR_TRACE_FLOWS", "0|1", "0",
	 "the older name of TSR_TIMELINE_FLOWS, read when TSR_TIMELINE_FLOWS is not set, with a "
	 "warning",
	 .older_name_of = "TSR_TIMELINE_FLOWS",
	 .renamed_because = "the timeline's dependence arrows; a trace now is a replayed loop body "
			    "(tsr_trace_begin)"},
	{"TSR_DAG", "file", "none",
	 "the dependency graph Tessera derived, as Graphviz dot (Tessera's folds and syncs "
	 "included), drawn for people: one unlabelled edge per pair of tasks, none where a path "
	 "through another task implies it, each launch boxed inside its iteration (an iteration "
	 "ends where a task launched in it is launched again, a run of single launches of one task "
	 "counting as one); written at tsr_finalize, or at exit without it",
	 .flag = "--dag"},
	{"TSR_DAG_LABELS", "0|1", "0",
	 "1: TSR_DAG draws every dependence, its reasons on its edge (region, field, both "
	 "privileges)",
	 .flag = "--dag-labels"},
	{"TSR_DAG_ITERS", "N", "0",
	 "TSR_DAG writes the first N iterations only (0: all), so that a long run draws in seconds",
	 .flag = "--dag-iters"},
	{"TSR_STATS", "0|1", "0",
	 "at finalize: per task name and worker kind, count, total and mean time; the workers' "
	 "idle fraction; under eager's handoff, where the ready tasks went; bytes moved per bus",
	 .flag = "--stats"},
	{"TSR_NICE", "0..19", "0",
	 "StarPU's polling threads run this many nice levels below the host thread, so that where "
	 "threads share cores the core goes to the thread that submits; for a machine of its own: "
	 "on a shared one they yield to every other program too (runtime/nice.c)",
	 .flag = "--nice"},
	{"TSR_IDLE", "auto|park|spin|yield", "auto",
	 "what a CPU worker with nothing to run does: park (sleep until a task is pushed), spin "
	 "(StarPU's own loop: ask the policy again and again), yield (StarPU's loop, giving the "
	 "core to another thread waiting for it between two tries; under a policy whose queues one "
	 "lock guards, eager, prio, tsr-locality or tsr-critpath, a thread that finds them taken "
	 "waits on its CPU, not asleep; under eager with CPU workers only, a task made ready goes "
	 "straight to an idle worker, or stays with the worker that made it ready), auto (park "
	 "where several ranks share a node's cores, yield elsewhere; runtime/idle.c, "
	 "tsr_idle_name())",
	 .flag = "--idle"},
	{"TSR_BIND", "auto|starpu", "auto",
	 "several ranks on one node: each rank's CPU workers and StarPU-MPI thread on a share of "
	 "the node's cores of its own, as many workers as it has cores unless told (auto), or "
	 "StarPU's own placement, which puts every rank's threads on the same cores (starpu; "
	 "runtime/place.c)",
	 .flag = "--bind"},
	{"TSR_MPI_NICE", "0..19", "unset",
	 "the older name of TSR_NICE, read when TSR_NICE is not set", .older_name_of = "TSR_NICE"},
	{"TSR_FAKE_NRANKS", "1..1024", "unset",
	 "one process plays one rank (TSR_FAKE_RANK) of a job of this many ranks, without MPI, to "
	 "measure a rank's analysis: task variants do not run, a send is counted and dropped, a "
	 "receive is counted and replaced by a local task, collectives answer as if every rank "
	 "agreed (runtime/dist.c); above 64 ranks a field may be written on one rank only by an "
	 "index launch through a disjoint partition (a piece's ranks are a 64-bit set)",
	 .flag = NULL},
	{"TSR_FAKE_RANK", "0..1023", "0",
	 "the rank a fake-rank process plays, below TSR_FAKE_NRANKS", .flag = NULL},
};
enum { NSWITCHES = sizeof rows / sizeof rows[0] };

/* ------------------------------------------------------------------ the table */

static tsr_env_switch_t public_rows[NSWITCHES];
static pthread_once_t public_once = PTHREAD_ONCE_INIT;

static void fill_public_rows(void)
{
	for (int i = 0; i < NSWITCHES; i++)
		public_rows[i] = (tsr_env_switch_t){rows[i].name, rows[i].values, rows[i].fallback,
						    rows[i].meaning};
}

int tsr_env_switches(const tsr_env_switch_t **table)
{
	pthread_once(&public_once, fill_public_rows);
	if (table)
		*table = public_rows;
	return NSWITCHES;
}

static int index_of(const char *name)
{
	for (int i = 0; i < NSWITCHES; i++)
		if (!strcmp(rows[i].name, name))
			return i;
	return -1;
}

static int find(const char *name)
{
	int i = index_of(name);
	tsr__assert(i >= 0); /* every switch Tessera reads is in the table */
	return i;
}

int tsr__env_count(void)
{
	return NSWITCHES;
}

const char *tsr__env_name(int i)
{
	return rows[i].name;
}

const char *tsr__env_flag(int i)
{
	return rows[i].flag;
}

const char *tsr__env_fallback(int i)
{
	return rows[i].fallback;
}

const char *tsr__env_renamed(int i, const char **because)
{
	*because = rows[i].renamed_because;
	return rows[i].renamed_because ? rows[i].older_name_of : NULL;
}

/* ------------------------------------------------------------------ rules */

/* A values column read as a rule. */
int tsr__env_rule(int i, struct tsr__rule *r)
{
	const char *v = rows[i].values;
	char *end;

	memset(r, 0, sizeof *r);
	r->kind = TSR_RULE_NONE;
	if (strchr(v, '|'))
		r->kind = TSR_RULE_WORDS;
	else if (!strcmp(v, "file"))
		r->kind = TSR_RULE_FILE;
	else if (!strcmp(v, "policy"))
		r->kind = TSR_RULE_POLICY;
	else if (!strcmp(v, "N")) {
		r->kind = TSR_RULE_RANGE;
		r->lo = 0;
		r->hi = INT_MAX;
	} else if (strstr(v, "..")) {
		r->lo = strtol(v, &end, 10);
		if (end != v && !strncmp(end, "..", 2)) {
			const char *h = end + 2;
			r->hi = strtol(h, &end, 10);
			if (end != h && !*end && r->lo <= r->hi)
				r->kind = TSR_RULE_RANGE;
		}
	}

	return r->kind;
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

/* A whole decimal integer in [lo, hi]: no blank, no trailing text, no overflow. */
static int whole_number(const char *v, long lo, long hi, long *out)
{
	char *end;

	if (!*v || isspace((unsigned char)*v))
		return 0;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || *end || x < lo || x > hi)
		return 0;

	*out = x;
	return 1;
}

/* How a value was given, for messages: "--ncpu 'x'" or "TSR_NCPU='x'". */
static const char *joiner(const char *from)
{
	return from[0] == '-' ? " " : "=";
}

int tsr__env_check_value(int i, const char *from, const char *v, const char *what)
{
	struct tsr__rule r;
	long x;

	switch (tsr__env_rule(i, &r)) {
	case TSR_RULE_WORDS:
		if (choice_index(rows[i].values, v) >= 0)
			return TSR_OK;
		return tsr__err(TSR_EINVAL, "%s: %s%s'%s' is not one of %s (%s)", what, from,
				joiner(from), v, rows[i].values, rows[i].name);
	case TSR_RULE_RANGE:
		if (whole_number(v, r.lo, r.hi, &x))
			return TSR_OK;
		return tsr__err(TSR_EINVAL,
				"%s: %s%s'%s' is not a whole number from %ld to %ld (%s)", what,
				from, joiner(from), v, r.lo, r.hi, rows[i].name);
	case TSR_RULE_FILE:
		if (*v)
			return TSR_OK;
		return tsr__err(TSR_EINVAL, "%s: %s needs a file name (%s)", what, from,
				rows[i].name);
	default: /* policy: config.c knows the policies */
		return TSR_OK;
	}
}

/* ------------------------------------------------------------------ values and their sources */

/* Flags given to tsr_args, by switch (copies: the program may reuse its argv). */
static char *flag_values[NSWITCHES];

/* The value of switch i's older name (a row whose older_name_of is i), read when nothing else
 * sets switch i; NULL when there is none or it is unset. */
static const char *lookup_older(int i, const char **from)
{
	for (int k = 0; k < NSWITCHES; k++) {
		const char *newer = rows[k].older_name_of;
		if (!newer || strcmp(newer, rows[i].name))
			continue;

		const char *v = getenv(rows[k].name);
		if (v && *v) {
			*from = rows[k].name;
			return v;
		}
	}

	*from = NULL;
	return NULL;
}

/* The value that wins and where it came from (a flag, the variable, StarPU's, the older name);
 * NULL when nothing sets it. */
static const char *lookup(int i, const char **from)
{
	if (flag_values[i]) {
		*from = rows[i].flag;
		return flag_values[i];
	}

	const char *v = getenv(rows[i].name);
	if (v && *v) {
		*from = rows[i].name;
		return v;
	}

	for (int k = 0; k < 2 && rows[i].starpu[k]; k++) {
		v = getenv(rows[i].starpu[k]);
		if (v && *v) {
			*from = rows[i].starpu[k];
			return v;
		}
	}

	return lookup_older(i, from);
}

const char *tsr__env(const char *name)
{
	const char *from;
	return lookup(find(name), &from);
}

const char *tsr__env_from(const char *name)
{
	const char *from;
	lookup(find(name), &from);
	return from;
}

int tsr__env_choice(const char *name, const char *what, int *out)
{
	int i = find(name);
	const char *from;
	const char *v = lookup(i, &from);

	if (v && tsr__env_check_value(i, from, v, what))
		return TSR_EINVAL;

	int k = choice_index(rows[i].values, v ? v : rows[i].fallback);
	tsr__assert(k >= 0); /* a value was checked above, a default is in its list (test_config) */

	*out = k;
	return TSR_OK;
}

int tsr__env_int(const char *name, long lo, long hi, int *out)
{
	int i = find(name);
	const char *from;
	const char *v = lookup(i, &from);
	long x;

	if (!v)
		return TSR_OK;
	if (tsr__env_check_value(i, from, v, "tsr_init"))
		return TSR_EINVAL;
	if (!whole_number(v, lo, hi, &x))
		return tsr__err(TSR_EINVAL,
				"tsr_init: %s%s'%s' is not a whole number from %ld to %ld", from,
				joiner(from), v, lo, hi);

	*out = (int)x;
	return TSR_OK;
}

int tsr__env_check_all(const char *what, int (*policy_ok)(const char *from, const char *v))
{
	for (int i = 0; i < NSWITCHES; i++) {
		const char *from;
		const char *v = lookup(i, &from);
		const char *newer = rows[i].older_name_of;
		if (!v || (newer && tsr__env(newer)))
			continue; /* unset, or an older name that the newer one overrides */

		int rc = tsr__env_check_value(i, from, v, what);
		struct tsr__rule r;
		if (!rc && tsr__env_rule(i, &r) == TSR_RULE_POLICY)
			rc = policy_ok(from, v);
		if (rc)
			return rc;
	}

	return TSR_OK;
}

/* ------------------------------------------------------------------ flags */

/* The switch whose flag `arg` is ("--ncpu" or "--ncpu=2"), -1 if none; *eq: after the '='. */
static int match_flag(const char *arg, const char **eq)
{
	*eq = NULL;
	for (int i = 0; i < NSWITCHES; i++) {
		const char *f = rows[i].flag;
		size_t n = f ? strlen(f) : 0;
		if (!f || strncmp(arg, f, n))
			continue;
		if (arg[n] == '=')
			*eq = arg + n + 1;
		if (arg[n] == '=' || !arg[n])
			return i;
	}

	return -1;
}

/* A 0|1 switch's flag alone means 1 (--stats); its value comes after '=' only (--stats=0), so
 * that a program's own argument after it is never taken for one. */
static int on_off(int i)
{
	return !strcmp(rows[i].values, "0|1");
}

/* The value of the flag at argv[*a] (moving *a past a separate value), checked; NULL with the
 * message set when it is missing or wrong. */
static const char *flag_value(int i, int argc, char **argv, int *a,
			      int (*policy_ok)(const char *from, const char *v))
{
	const char *eq;
	match_flag(argv[*a], &eq);

	const char *v = eq;
	if (!v && on_off(i))
		v = "1";
	else if (!v && *a + 1 < argc)
		v = argv[++*a];
	if (!v || !*v) {
		tsr__err(TSR_EINVAL, "tsr_args: %s needs a value (%s: %s)", rows[i].flag,
			 rows[i].name, rows[i].values);
		return NULL;
	}

	struct tsr__rule r;
	if (tsr__env_check_value(i, rows[i].flag, v, "tsr_args") ||
	    (tsr__env_rule(i, &r) == TSR_RULE_POLICY && policy_ok(rows[i].flag, v)))
		return NULL;
	return v;
}

int tsr__env_take_flags(int *argc, char **argv, int (*policy_ok)(const char *from, const char *v))
{
	const char *found[NSWITCHES] = {0};

	/* first every flag checked, so that a refused command line changes nothing */
	for (int a = 1; a < *argc && strcmp(argv[a], "--"); a++) {
		const char *eq;
		int i = match_flag(argv[a], &eq);
		if (i >= 0 && !(found[i] = flag_value(i, *argc, argv, &a, policy_ok)))
			return TSR_EINVAL;
	}

	for (int i = 0; i < NSWITCHES; i++) {
		char *copy = found[i] ? strdup(found[i]) : NULL;
		if (found[i] && !copy)
			return tsr__err(TSR_ENOMEM, "tsr_args: out of memory for %s", rows[i].flag);
		if (copy) {
			free(flag_values[i]);
			flag_values[i] = copy;
		}
	}

	/* then the flags and their values leave argv; "--" and what follows stay */
	int out = 1, a = 1;
	for (; a < *argc && strcmp(argv[a], "--"); a++) {
		const char *eq;
		int i = match_flag(argv[a], &eq);
		if (i < 0)
			argv[out++] = argv[a];
		else if (!eq && !on_off(i))
			a++; /* its value */
	}
	while (a < *argc)
		argv[out++] = argv[a++];

	argv[out] = NULL;
	*argc = out;
	return TSR_OK;
}

void tsr__env_forget_flags(void)
{
	for (int i = 0; i < NSWITCHES; i++) {
		free(flag_values[i]);
		flag_values[i] = NULL;
	}
}
