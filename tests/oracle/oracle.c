/* oracle.c: the sequential-semantics oracle's driver. With no argument it is the `make check`
 * test: a self-test of the generator and interpreter, then batches of random programs under
 * six runtime configurations, one TAP line each. With --seed it replays (and minimises) one. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "oracle.h"

int or_selftest(FILE *out); /* selftest.c */

/* Valid programs that the runtime refuses today (see README): not generated unless asked. */
#define OR_DEFAULT_AVOID "none"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: oracle [options]\n"
		"Random Tessera programs, run by Tessera and by a plain sequential interpreter,\n"
		"compared bit for bit.\n"
		"With no mode option: the `make check` run (TAP): a self-test, then batches of\n"
		"programs under eager, lws, dmda, tsr-locality and tsr-critpath with 1 and 2 CPU\n"
		"workers, each batch in its own process: classic programs, then the\n"
		"coherence-by-pieces families (--shape pieces, 2/5 as many per batch), then loops\n"
		"(--shape repeat: repeated blocks with and without traces, 1/5 as many), each\n"
		"followed by fault injection; with --shape NAME every batch is of that shape.\n"
		"  --seed N        run the one program of seed N (exit 0 if it matches, 1 if not)\n"
		"  --first N       first seed of a batch (default: TSR_ORACLE_SEED or 1)\n"
		"  --count K       programs per batch (default: TSR_ORACLE_COUNT or 1000)\n"
		"  --sched NAME    scheduling policy for --seed / --first (default: TSR_SCHED or\n"
		"                  StarPU's)\n"
		"  --ncpu N        CPU workers for --seed / --first (default: TSR_NCPU or\n"
		"                  StarPU's)\n"
		"  --ncuda N       CUDA workers for --seed / --first (default 0); then --ncpu 0\n"
		"                  (the default with --ncuda) means no CPU worker: every task\n"
		"                  runs the CUDA variant\n"
		"  --nopencl N     OpenCL workers, as --ncuda (POCL's CPU device needs\n"
		"                  STARPU_OPENCL_ON_CPUS=1, which the oracle sets when it is not\n"
		"                  set); with no OpenCL device: exit 77\n"
		"  --keep LIST     with --seed: keep only these ops (comma-separated op numbers)\n"
		"  --repeat R      run each program R times (failures that depend on timing)\n"
		"  --minimize      with --seed: drop ops while the program still fails the same\n"
		"                  way (mismatch, crash or hang; each try in a fresh process);\n"
		"                  print what is left\n"
		"  --print         with --seed: print the program and stop\n"
		"  --dry           run the interpreter only (no Tessera): with --seed or\n"
		"                  --first/--count\n"
		"  --selftest      only the self-test of generator, validator and interpreter\n"
		"  --timeout S     check mode: a program running longer than S seconds is a hang\n"
		"                  (default 60 times CK_TIMEOUT_MULTIPLIER, which make check sets\n"
		"                  to 4; fault injection gets twice that)\n"
		"  --shape NAME    family of programs: mix (default: half classic, half pieces,\n"
		"                  by a hash of the seed), pieces (alternate, overlap, nested,\n"
		"                  war in turn: seed modulo 4), classic, alternate, overlap,\n"
		"                  nested, war, repeat (loops; README, \"Shapes\")\n"
		"  --avoid LIST    valid programs not to generate (the runtime refuses them):\n"
		"                  aliased-write, same-field-copy, or none\n"
		"                  (default: TSR_ORACLE_AVOID or " OR_DEFAULT_AVOID ")\n"
		"  -v              print the program and each op as it runs\n"
		"  --progress      batch mode: print \"# seed N\" before each program\n"
		"                  (the last names a hang)\n"
		"  --help          this text\n"
		"Replay a failure printed by make check: oracle --seed N --sched S --ncpu C -v\n");
}

typedef struct {
	uint64_t seed, first;
	int have_seed, have_first, count, repeat, minimize, print, dry, selftest, verbose, progress,
		ncpu;
	double timeout;
	const char *sched, *keep;
} opts_t;

/* --ncuda, --nopencl: device workers (0: none, the default configuration of make check). */
static int or_ncuda, or_nopencl;

/* Exit status of a run that asked for OpenCL workers on a machine with no OpenCL device: the
 * test is skipped (automake's 77), not failed. */
#define OR_NO_DEVICE 77
static int or_no_device;

/* Whether device workers are asked for: then --ncpu 0 means no CPU worker at all. */
static int or_devices(void)
{
	return or_ncuda > 0 || or_nopencl > 0;
}

static int start_runtime(const char *sched, int ncpu)
{
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	/* an explicit configuration is the one under test: the environment must not replace it */
	if (sched) {
		cfg.sched = sched;
		unsetenv("TSR_SCHED");
	}
	/* with device workers, 0 CPU workers is a configuration */
	if (ncpu > 0 || or_devices()) {
		cfg.ncpu = ncpu;
		unsetenv("TSR_NCPU");
	}
	cfg.ncuda = or_ncuda; /* a CUDA variant exists when built with nvcc (kernel_cuda.cu) */
	unsetenv("TSR_NCUDA");
	cfg.nopencl = or_nopencl; /* kernel_opencl.c */
	unsetenv("TSR_NOPENCL");
	if (or_nopencl > 0) {
		setenv("STARPU_OPENCL_ON_CPUS", "1", 0); /* POCL's device is a CPU */
		/* StarPU keeps one bus calibration per host name, and counting POCL's device
		 * changes it: test processes with and without it rewrote each other's files as they
		 * read them (an assertion in load_bus_affinity_file_content, make check -j2). Runs
		 * with the device count under a name of their own. */
		setenv("STARPU_HOSTNAME", "opencl-on-cpus", 0);
	}
	int rc = tsr_init(&cfg);
	if (rc) {
		printf("# tsr_init(sched=%s, ncpu=%d) returned %s: %s\n", sched ? sched : "default",
		       ncpu, tsr_err_name(rc), tsr_last_error());
		return rc;
	}
	if (or_nopencl > 0 && tsr_nopencl_workers() == 0) {
		printf("# no OpenCL device: StarPU started no OpenCL worker (is an OpenCL platform "
		       "such as POCL installed?)\n");
		tsr_finalize();
		or_no_device = 1;
		return OR_NO_DEVICE;
	}
	if ((sched && (!tsr_sched_name() || strcmp(tsr_sched_name(), sched))) ||
	    ((ncpu > 0 || or_devices()) && tsr_ncpu_workers() != ncpu) ||
	    tsr_ncuda_workers() != or_ncuda || tsr_nopencl_workers() != or_nopencl) {
		printf("# runtime runs sched=%s with %d CPU, %d CUDA and %d OpenCL workers, asked "
		       "for %s, %d, %d and %d\n",
		       tsr_sched_name(), tsr_ncpu_workers(), tsr_ncuda_workers(),
		       tsr_nopencl_workers(), sched, ncpu, or_ncuda, or_nopencl);
		tsr_finalize();
		return TSR_ESTATE;
	}
	if ((rc = or_exec_register())) {
		tsr_finalize();
		return rc;
	}
	return 0;
}

static int stop_runtime(void)
{
	int rc = tsr_finalize();
	if (rc)
		printf("# tsr_finalize returned %s: %s\n", tsr_err_name(rc), tsr_last_error());
	return rc;
}

static or_prog_t *make_prog(uint64_t seed, const char *keep)
{
	or_prog_t *p = malloc(sizeof *p);
	if (!p) {
		perror("oracle");
		exit(2);
	}
	or_generate(seed, p);
	if (keep) {
		unsigned char k[OR_MAXOP] = {0};
		for (const char *s = keep; *s;) {
			char *end;
			long i = strtol(s, &end, 10);
			if (end == s || i < 0 || i >= OR_MAXOP) {
				fprintf(stderr, "oracle: bad --keep list '%s'\n", keep);
				exit(2);
			}
			k[i] = 1;
			s = *end == ',' ? end + 1 : end;
		}
		or_filter(p, k);
	}
	return p;
}

/* Run p `repeat` times under the running runtime (or the interpreter alone): 1 if any failed. */
static int run_prog(const or_prog_t *p, const opts_t *o, int verbose, char *msg, size_t len)
{
	char why[512];
	if (or_validate(p, why, sizeof why)) {
		snprintf(msg, len, "invalid program: %s", why);
		return 1;
	}
	for (int r = 0; r < (o->repeat > 0 ? o->repeat : 1); r++) {
		if (o->dry) {
			or_interp_t in;
			if (or_interp_init(&in, p)) {
				snprintf(msg, len, "out of memory");
				return 1;
			}
			for (int i = 0; i < p->nop; i++)
				or_interp_op(&in, i);
			or_interp_free(&in);
			continue;
		}
		if (or_exec(p, verbose, msg, len)) {
			if (o->repeat > 1) {
				size_t n = strlen(msg);
				snprintf(msg + n, len - n, " (run %d of %d)", r + 1, o->repeat);
			}
			return 1;
		}
	}
	return 0;
}

static void replay_hint(FILE *out, uint64_t seed, const opts_t *o)
{
	fprintf(out, "#   replay: tests/oracle/oracle --seed %llu", (unsigned long long)seed);
	if (o->sched)
		fprintf(out, " --sched %s", o->sched);
	if (o->ncpu > 0 || or_devices())
		fprintf(out, " --ncpu %d", o->ncpu);
	if (or_ncuda > 0)
		fprintf(out, " --ncuda %d", or_ncuda);
	if (or_nopencl > 0)
		fprintf(out, " --nopencl %d", or_nopencl);
	char av[96];
	/* the seed's own shape: the same program as mix or pieces gave it, and it says what it
	 * is */
	fprintf(out, " --shape %s --avoid %s -v\n", or_shape_str(or_shape_of(seed, or_shape)),
		or_avoid_str(or_avoid, av, sizeof av));
}

enum { RUN_PASS, RUN_MISMATCH, RUN_CRASH, RUN_HANG };
static const char *run_kind[] = {"match", "mismatch", "crash", "hang"};

/* Run p in a child process with a fresh runtime, so that a crash or a hang is a result too and
 * no state is left over from an earlier candidate. */
static int try_prog(const or_prog_t *p, const opts_t *o, char *msg, size_t len)
{
	char *shared = mmap(NULL, 1024, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		perror("oracle: mmap");
		exit(2);
	}
	shared[0] = 0;
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		perror("oracle: fork");
		exit(2);
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, 1); /* the parent reports */
		if (!o->dry && start_runtime(o->sched, o->ncpu))
			_exit(3);
		int f = run_prog(p, o, 0, shared, 1024);
		if (!o->dry && stop_runtime() && !f) {
			snprintf(shared, 1024, "tsr_finalize failed: %s", tsr_last_error());
			f = 1;
		}
		_exit(f ? 1 : 0);
	}
	int status = 0, kind = RUN_PASS;
	double t0 = now();
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (now() - t0 > o->timeout) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			kind = RUN_HANG;
			break;
		}
		usleep(10000);
	}
	if (kind == RUN_HANG)
		snprintf(msg, len, "no progress in %.0f s: hangs", o->timeout);
	else if (WIFSIGNALED(status))
		kind = RUN_CRASH, snprintf(msg, len, "%s", strsignal(WTERMSIG(status)));
	else if (WEXITSTATUS(status) == 3)
		kind = RUN_MISMATCH, snprintf(msg, len, "the runtime did not start");
	else if (WEXITSTATUS(status))
		kind = RUN_MISMATCH, snprintf(msg, len, "%s", shared);
	munmap(shared, 1024);
	return kind;
}

/* Drop ops, last first, while the program stays valid and fails the same way; print the rest. */
static int minimize(const opts_t *o)
{
	or_prog_t *full = make_prog(o->seed, NULL), *cand = malloc(sizeof *cand);
	if (!cand)
		exit(2);
	unsigned char keep[OR_MAXOP] = {0};
	*cand = *full;
	if (o->keep) {
		free(cand);
		cand = make_prog(o->seed, o->keep);
	}
	for (int i = 0; i < cand->nop; i++)
		keep[cand->op_id[i]] = 1;
	char why[1024], last[1024];
	int kind = try_prog(cand, o, last, sizeof last);
	printf("seed %llu: %s%s%s\n", (unsigned long long)o->seed, run_kind[kind], kind ? ": " : "",
	       kind ? last : "");
	if (kind == RUN_PASS) {
		free(full);
		free(cand);
		return 0;
	}
	for (int changed = 1; changed;) {
		changed = 0;
		for (int id = OR_MAXOP - 1; id >= 0; id--) {
			if (!keep[id])
				continue;
			keep[id] = 0;
			*cand = *full;
			or_filter(cand, keep);
			if (!or_validate(cand, why, sizeof why) &&
			    try_prog(cand, o, why, sizeof why) == kind) {
				changed = 1;
				snprintf(last, sizeof last, "%s", why);
				if (o->verbose)
					printf("  without op #%d: still %s\n", id, run_kind[kind]);
			} else {
				keep[id] = 1;
			}
		}
	}
	*cand = *full;
	or_filter(cand, keep);
	printf("minimal program (%d of %d ops):\n", cand->nop, full->nop);
	or_print_prog(stdout, cand);
	printf("%s: %s\nreplay: tests/oracle/oracle --seed %llu --keep ", run_kind[kind], last,
	       (unsigned long long)o->seed);
	for (int i = 0; i < cand->nop; i++)
		printf("%s%d", i ? "," : "", cand->op_id[i]);
	if (o->sched)
		printf(" --sched %s", o->sched);
	if (o->ncpu > 0 || or_devices())
		printf(" --ncpu %d", o->ncpu);
	if (or_ncuda > 0)
		printf(" --ncuda %d", or_ncuda);
	if (or_nopencl > 0)
		printf(" --nopencl %d", or_nopencl);
	if (o->repeat > 1)
		printf(" --repeat %d", o->repeat);
	char av[96];
	printf(" --shape %s --avoid %s -v\n", or_shape_str(or_shape_of(o->seed, or_shape)),
	       or_avoid_str(or_avoid, av, sizeof av));
	free(full);
	free(cand);
	return 1;
}

/* --seed N: one program in this process. */
static int replay(const opts_t *o)
{
	if (o->minimize)
		return minimize(o);
	or_prog_t *p = make_prog(o->seed, o->keep);
	if (o->verbose || o->print)
		or_print_prog(stdout, p);
	if (o->print) {
		free(p);
		return 0;
	}
	if (!o->dry && start_runtime(o->sched, o->ncpu)) {
		free(p);
		return 2;
	}
	char msg[1024];
	if (o->verbose)
		printf("running under %s with %d CPU, %d CUDA and %d OpenCL workers:\n",
		       tsr_sched_name() ? tsr_sched_name() : "?", tsr_ncpu_workers(),
		       tsr_ncuda_workers(), tsr_nopencl_workers());
	int failed = run_prog(p, o, o->verbose, msg, sizeof msg);
	printf("seed %llu: %s%s\n", (unsigned long long)o->seed, failed ? "MISMATCH: " : "match",
	       failed ? msg : "");
	free(p);
	if (!o->dry && stop_runtime())
		failed = 1;
	return failed;
}

/* What a batch's process shares with its parent, so that a hang or a crash names its seed. */
typedef struct {
	volatile uint64_t current; /* seed running now */
	/* when it started (CLOCK_MONOTONIC, shared by all processes) */
	volatile double started;
	volatile int done, failed, finalize_failed;
	volatile uint64_t failed_seeds[8]; /* the first ones, for the TAP line */
} shared_t;

/* Seeds first..first+count-1 under one runtime start. Returns the number of failures. */
static int batch(const opts_t *o, uint64_t first, int count, shared_t *sh)
{
	if (!o->dry && start_runtime(o->sched, o->ncpu))
		return -1;
	int failed = 0;
	char msg[1024];
	for (int k = 0; k < count; k++) {
		uint64_t seed = first + (uint64_t)k;
		if (sh) {
			sh->current = seed;
			sh->started = now();
		}
		or_prog_t *p = make_prog(seed, NULL);
		if (o->progress)
			/* the last one names a hang (tests/mpi/oracle.sh) */
			printf("# seed %llu\n", (unsigned long long)seed);
		if (o->verbose)
			or_print_prog(stdout, p);
		if (run_prog(p, o, o->verbose, msg, sizeof msg)) {
			failed++;
			printf("# FAIL seed %llu (sched %s, ncpu %d, ncuda %d): %s\n",
			       (unsigned long long)seed, o->sched ? o->sched : "default", o->ncpu,
			       or_ncuda, msg);
			replay_hint(stdout, seed, o);
			if (sh && failed <= 8)
				sh->failed_seeds[failed - 1] = seed;
		}
		free(p);
		fflush(stdout);
		if (sh) {
			sh->done = k + 1;
			sh->failed = failed;
		}
	}
	if (!o->dry && stop_runtime()) {
		failed++;
		if (sh)
			sh->finalize_failed = 1;
	}
	return failed;
}

/* StarPU 1.3 can abort in starpu_shutdown on a data request still queued (an upstream assertion;
 * tests/cg/verify.sh retries on it too): after every program of a batch matched, that abort
 * reruns the batch once instead of failing it. */
static const char upstream_abort[] = "_starpu_data_request_prio_list_deinit: Assertion";

/* A file for a child's stderr ("" and -1 when none could be made: the child keeps ours). */
static int child_stderr_file(char *path, size_t n)
{
	const char *t = getenv("TMPDIR");
	snprintf(path, n, "%s/tsr-oracle-err.XXXXXX", t && *t ? t : "/tmp");
	int fd = mkstemp(path);
	if (fd < 0)
		path[0] = 0;
	return fd;
}

/* Copy a child's stderr file to ours and remove it; 1 if it holds StarPU's known abort. */
static int echo_child_stderr(const char *path)
{
	int upstream = 0;
	FILE *f = path[0] ? fopen(path, "r") : NULL;
	char line[1024];
	while (f && fgets(line, sizeof line, f)) {
		fputs(line, stderr);
		upstream |= strstr(line, upstream_abort) != NULL;
	}
	if (f)
		fclose(f);
	if (path[0])
		unlink(path);
	return upstream;
}

/* One configuration in child processes; a child that hangs or crashes is replaced by one that
 * goes on after the seed it was running. */
static int run_config(int tapno, const opts_t *base, const char *sched, int ncpu, uint64_t first,
		      int count)
{
	/* the children inherit or_shape: the caller sets it for the batch */
	opts_t o = *base;
	o.sched = sched;
	o.ncpu = ncpu;
	shared_t *sh =
		mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		printf("not ok %d - sched=%s ncpu=%d: mmap failed\n", tapno, sched, ncpu);
		return 1;
	}
	double t0 = now();
	int failed = 0, done = 0, restarts = 0;
	char bad[512] = "";
	size_t nb = 0;
	int reran_upstream_abort = 0;
	while (done < count && restarts < 4) {
		memset((void *)sh, 0, sizeof *sh);
		sh->started = now();
		char errpath[256];
		int errfd = child_stderr_file(errpath, sizeof errpath);
		fflush(stdout);
		fflush(stderr);
		pid_t pid = fork();
		if (pid < 0) {
			printf("# fork failed: %s\n", strerror(errno));
			if (errfd >= 0)
				close(errfd);
			echo_child_stderr(errpath); /* removes the file */
			break;
		}
		if (pid == 0) {
			if (errfd >= 0)
				dup2(errfd, 2);
			int f = batch(&o, first + (uint64_t)done, count - done, sh);
			fflush(stdout);
			_exit(f < 0 ? 3 : f ? 1 : 0);
		}
		int status = 0, hung = 0;
		for (;;) {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid)
				break;
			if (w < 0 && errno != EINTR)
				break;
			if (now() - sh->started > o.timeout) {
				hung = 1;
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				break;
			}
			usleep(20000);
		}
		if (errfd >= 0)
			close(errfd);
		int upstream = echo_child_stderr(errpath);
		int ran = sh->done;
		failed += sh->failed;
		for (int k = 0; k < sh->failed && k < 8; k++)
			nb += (size_t)snprintf(bad + nb, nb < sizeof bad ? sizeof bad - nb : 0,
					       " %llu", (unsigned long long)sh->failed_seeds[k]);
		if (sh->failed > 8)
			nb += (size_t)snprintf(bad + nb, nb < sizeof bad ? sizeof bad - nb : 0,
					       " ...");
		if (!hung && WIFEXITED(status) && WEXITSTATUS(status) == 3) {
			failed++;
			nb += (size_t)snprintf(bad + nb, nb < sizeof bad ? sizeof bad - nb : 0,
					       " (tsr_init)");
			break;
		}
		if (ran == count - done) {
			/* every program ran; tsr_finalize may still have failed, crashed or hung */
			if (!hung && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
			    upstream && sh->failed == 0 && !reran_upstream_abort) {
				printf("# tsr_finalize (sched %s, ncpu %d): StarPU's shutdown "
				       "assertion (%s): the batch runs again once\n",
				       sched, ncpu, upstream_abort);
				reran_upstream_abort = 1;
				continue;
			}
			if (hung || WIFSIGNALED(status) || sh->finalize_failed) {
				failed++;
				printf("# tsr_finalize (sched %s, ncpu %d) %s\n", sched, ncpu,
				       hung                  ? "hangs (killed)"
				       : WIFSIGNALED(status) ? strsignal(WTERMSIG(status))
							     : "failed");
				nb += (size_t)snprintf(bad + nb,
						       nb < sizeof bad ? sizeof bad - nb : 0,
						       " (finalize)");
			}
			done = count;
			break;
		}
		/* the child died inside the program of seed sh->current */
		uint64_t seed = sh->current;
		failed++;
		printf("# FAIL seed %llu (sched %s, ncpu %d): %s\n", (unsigned long long)seed,
		       sched, ncpu,
		       hung                  ? "no progress: the program hangs (killed)"
		       : WIFSIGNALED(status) ? strsignal(WTERMSIG(status))
					     : "runtime start or stop failed");
		replay_hint(stdout, seed, &o);
		nb += (size_t)snprintf(bad + nb, nb < sizeof bad ? sizeof bad - nb : 0,
				       " %llu (%s)", (unsigned long long)seed,
				       hung ? "hang" : "crash");
		done += ran + 1;
		restarts++;
	}
	double t = now() - t0;
	int ok = failed == 0 && done >= count;
	char devs[48] = "";
	if (or_ncuda > 0)
		snprintf(devs, sizeof devs, " ncuda=%d", or_ncuda);
	if (or_nopencl > 0)
		snprintf(devs + strlen(devs), sizeof devs - strlen(devs), " nopencl=%d",
			 or_nopencl);
	printf("%s %d - oracle shape=%s sched=%s ncpu=%d%s: %d programs (seeds %llu..%llu) in %.1f "
	       "s",
	       ok ? "ok" : "not ok", tapno, or_shape_str(or_shape), sched, ncpu, devs, count,
	       (unsigned long long)first, (unsigned long long)(first + count - 1), t);
	if (!ok)
		printf(": %d failed, seeds%s", failed, bad);
	printf("\n");
	fflush(stdout);
	munmap((void *)sh, sizeof *sh);
	return !ok;
}

/* The comparison must catch a wrong runtime: programs that match are run again with one launch
 * withheld from Tessera, and most of them must then fail. */
static int injection(int tapno, const opts_t *o, uint64_t first, int count)
{
	struct {
		volatile int eligible, detected;
	} *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		printf("not ok %d - fault injection: mmap failed\n", tapno);
		return 1;
	}
	sh->eligible = sh->detected = 0;
	double t0 = now();
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		/* with a device: data moves between nodes */
		if (start_runtime("eager", or_devices() ? 1 : 2))
			_exit(1);
		char msg[1024];
		for (int k = 0; k < count; k++) {
			or_prog_t *p = make_prog(first + (uint64_t)k, NULL);
			or_exec_skip = -1;
			if (!or_exec(p, 0, msg, sizeof msg)) {
				or_exec_skip = k;
				sh->detected += or_exec(p, 0, msg, sizeof msg);
				sh->eligible++;
			}
			free(p);
		}
		_exit(stop_runtime() ? 1 : 0);
	}
	int status = 0;
	while (pid > 0 && waitpid(pid, &status, WNOHANG) == 0) {
		if (now() - t0 > o->timeout * 2) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		usleep(20000);
	}
	int ok = pid > 0 && WIFEXITED(status) && sh->eligible >= count / 2 &&
		 sh->detected * 10 >= sh->eligible * 7;
	printf("%s %d - oracle sees a launch withheld from Tessera in %d of %d programs (shape %s, "
	       "seeds %llu..%llu)\n",
	       ok ? "ok" : "not ok", tapno, sh->detected, sh->eligible, or_shape_str(or_shape),
	       (unsigned long long)first, (unsigned long long)(first + count - 1));
	munmap((void *)sh, 4096);
	return !ok;
}

/* The configurations of a check run: every policy with 1 and 2 CPU workers; with device workers
 * (--ncuda, --nopencl), StarPU's main policies with 0, 1 and 2 CPU workers beside them. */
struct or_config {
	const char *sched;
	int ncpu;
};
static const struct or_config cpu_configs[] = {
	{"eager", 1},        {"eager", 2},        {"lws", 1},          {"lws", 2},
	{"dmda", 1},         {"dmda", 2},         {"tsr-locality", 1}, {"tsr-locality", 2},
	{"tsr-critpath", 1}, {"tsr-critpath", 2},
};
static const struct or_config device_configs[] = {
	{"eager", 0}, {"eager", 1}, {"eager", 2}, {"lws", 0},  {"lws", 1},
	{"lws", 2},   {"dmda", 0},  {"dmda", 1},  {"dmda", 2},
};

static const struct or_config *check_configs(int *n)
{
	if (or_devices()) {
		*n = (int)(sizeof device_configs / sizeof device_configs[0]);
		return device_configs;
	}
	*n = (int)(sizeof cpu_configs / sizeof cpu_configs[0]);
	return cpu_configs;
}

/* Batches of one shape under every configuration, each with its own seeds from first on; the
 * next TAP number is *tapno. Returns the number of failed batches. */
static int run_shape(int *tapno, const opts_t *o, int shape, uint64_t first, int count)
{
	int n;
	const struct or_config *cfg = check_configs(&n);
	int saved = or_shape, bad = 0;
	or_shape = shape;
	for (int c = 0; c < n; c++)
		bad += run_config((*tapno)++, o, cfg[c].sched, cfg[c].ncpu,
				  first + (uint64_t)c * (uint64_t)count, count);
	or_shape = saved;
	return bad;
}

/* Whether the device workers asked for start, tried in a child process (the check run forks its
 * batches: StarPU must not run in the parent). */
static int device_present(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int rc = start_runtime(NULL, 0);
		if (rc == 0)
			stop_runtime();
		_exit(rc == OR_NO_DEVICE ? OR_NO_DEVICE : 0);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 0;
	return !(WIFEXITED(status) && WEXITSTATUS(status) == OR_NO_DEVICE);
}

/* The make check run: the classic programs under every configuration, then (unless --shape
 * names one shape for everything) the coherence-by-pieces families, 2/5 as many per batch,
 * then fault injection into both. */
static int check_mode(const opts_t *o, int shape_given)
{
	/* 2/5 of a classic batch (400 by default, a multiple of 4): 1000 programs of each family */
	int both = !shape_given, pcount = o->count * 2 / 5 > 0 ? o->count * 2 / 5 : 1;
	/* loops (traces and their replays): 1/5 of a classic batch, each program 3 to 4 times as
	 * long */
	int rcount = o->count / 5 > 0 ? o->count / 5 : 1;
	int tapno = 2, bad = 0;
	int nconfig;
	check_configs(&nconfig);
	printf("1..%d\n", 1 + nconfig * (both ? 3 : 1) + (both ? 3 : 1));
	char av[96];
	printf("# not generated (TSR_ORACLE_AVOID / --avoid): %s\n",
	       or_avoid_str(or_avoid, av, sizeof av));
	fflush(stdout);
	double t0 = now();
	if (or_selftest(stdout)) {
		printf("not ok 1 - oracle self-test (generator, validator, interpreter)\n");
		bad++;
	} else {
		printf("ok 1 - oracle self-test (generator, validator, interpreter) in %.1f s\n",
		       now() - t0);
	}
	/* every batch gets its own seeds: the classic seeds are those of before the families
	 * came */
	int main_shape = both ? OR_SHAPE_CLASSIC : or_shape;
	uint64_t next = o->first;
	bad += run_shape(&tapno, o, main_shape, next, o->count);
	next += (uint64_t)nconfig * (uint64_t)o->count;
	int saved = or_shape;
	or_shape = main_shape;
	bad += injection(tapno++, o, next, 100);
	next += 100;
	if (both) {
		bad += run_shape(&tapno, o, OR_SHAPE_PIECES, next, pcount);
		next += (uint64_t)nconfig * (uint64_t)pcount;
		or_shape = OR_SHAPE_PIECES;
		bad += injection(tapno++, o, next, 100);
		next += 100;
		bad += run_shape(&tapno, o, OR_SHAPE_REPEAT, next, rcount);
		next += (uint64_t)nconfig * (uint64_t)rcount;
		or_shape = OR_SHAPE_REPEAT;
		bad += injection(tapno++, o, next, 100);
	}
	or_shape = saved;
	printf("# %d programs in %.1f s\n", nconfig * (o->count + (both ? pcount + rcount : 0)),
	       now() - t0);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	opts_t o = {0};
	o.count = getenv("TSR_ORACLE_COUNT") ? atoi(getenv("TSR_ORACLE_COUNT")) : 1000;
	o.first = getenv("TSR_ORACLE_SEED") ? strtoull(getenv("TSR_ORACLE_SEED"), NULL, 10) : 1;
	/* a guard against a hang only: 60 s on a quiet machine, stretched by the tests' one knob */
	const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
	o.timeout = 60 * (mult && atof(mult) > 0 ? atof(mult) : 1);
	o.repeat = 1;
	const char *avoid =
		getenv("TSR_ORACLE_AVOID") ? getenv("TSR_ORACLE_AVOID") : OR_DEFAULT_AVOID;
	const char *shape = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int takes = 1;
		if (!strcmp(a, "--seed") && v)
			o.seed = strtoull(v, NULL, 10), o.have_seed = 1;
		else if (!strcmp(a, "--first") && v)
			o.first = strtoull(v, NULL, 10), o.have_first = 1;
		else if (!strcmp(a, "--count") && v)
			o.count = atoi(v);
		else if (!strcmp(a, "--sched") && v)
			o.sched = v;
		else if (!strcmp(a, "--ncpu") && v)
			o.ncpu = atoi(v);
		else if (!strcmp(a, "--ncuda") && v)
			or_ncuda = atoi(v);
		else if (!strcmp(a, "--nopencl") && v)
			or_nopencl = atoi(v);
		else if (!strcmp(a, "--keep") && v)
			o.keep = v;
		else if (!strcmp(a, "--repeat") && v)
			o.repeat = atoi(v);
		else if (!strcmp(a, "--timeout") && v)
			o.timeout = atof(v);
		else if (!strcmp(a, "--avoid") && v)
			avoid = v;
		else if (!strcmp(a, "--shape") && v)
			shape = v;
		else {
			takes = 0;
			if (!strcmp(a, "--minimize"))
				o.minimize = 1;
			else if (!strcmp(a, "--print"))
				o.print = 1;
			else if (!strcmp(a, "--dry"))
				o.dry = 1;
			else if (!strcmp(a, "--selftest"))
				o.selftest = 1;
			else if (!strcmp(a, "-v"))
				o.verbose = 1;
			else if (!strcmp(a, "--progress"))
				o.progress = 1;
			else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
				usage(stdout);
				return 0;
			} else {
				fprintf(stderr, "oracle: unknown or incomplete option '%s'\n", a);
				usage(stderr);
				return 2;
			}
		}
		i += takes;
	}
	if (or_ncuda < 0 || or_nopencl < 0 || o.ncpu < 0) {
		fprintf(stderr, "oracle: --ncpu, --ncuda and --nopencl must not be negative\n");
		return 2;
	}
	if (o.count < 1 || o.repeat < 1 || o.timeout <= 0) {
		fprintf(stderr, "oracle: --count, --repeat and --timeout must be positive\n");
		return 2;
	}
	if (or_parse_avoid(avoid, &or_avoid)) {
		fprintf(stderr, "oracle: bad --avoid list '%s'\n", avoid);
		return 2;
	}
	if (shape && or_parse_shape(shape, &or_shape)) {
		fprintf(stderr,
			"oracle: unknown --shape '%s' (mix, pieces, classic, alternate, overlap, "
			"nested, war, repeat)\n",
			shape);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.selftest) {
		int rc = or_selftest(stdout);
		printf("1..1\n%s 1 - oracle self-test\n", rc ? "not ok" : "ok");
		return rc ? 1 : 0;
	}
	if (o.have_seed) {
		int rc = replay(&o);
		return or_no_device ? OR_NO_DEVICE : rc;
	}
	if (o.have_first || o.dry) {
		double t0 = now();
		int f = batch(&o, o.first, o.count, NULL);
		if (or_no_device)
			return OR_NO_DEVICE;
		printf("%d of %d programs failed (seeds %llu..%llu) in %.1f s\n", f, o.count,
		       (unsigned long long)o.first, (unsigned long long)(o.first + o.count - 1),
		       now() - t0);
		return f ? 1 : 0;
	}
	if (or_devices() && !device_present()) {
		printf("1..0 # SKIP no device: StarPU starts no %s worker here\n",
		       or_ncuda > 0 ? "CUDA" : "OpenCL");
		return OR_NO_DEVICE;
	}
	return check_mode(&o, shape != NULL);
}
