/* dist.c: one Tessera program on several MPI ranks, by control replication over StarPU-MPI.
 *
 * Every rank runs the whole program and makes every call in the same order, so every rank builds
 * the same regions, partitions, pieces and decisions; handles are the same names everywhere.
 * A point task runs on one rank (its owner, launch.c); coherence.c decides which pieces each rank
 * must receive before a task reads them, and this file carries them with StarPU-MPI's detached
 * sends and receives of views (StarPU-MPI moves the bytes, honouring the views' sequential
 * consistency on both sides). Tags are a counter every rank advances for every transfer, so a
 * send and its receive name the same tag without ever talking about it.
 *
 * Calls that block (tsr_fence, tsr_future_wait, tsr_map, tsr_finalize) first compare a hash of
 * every rank's stream of calls: ranks that diverged (different launches on different ranks) are
 * reported instead of waiting forever for a transfer the other rank never makes. Their outcome is
 * then agreed, so that a task that failed on one rank fails the call on every rank.
 *
 * Tessera calls MPI itself (the collectives above) from the host thread while StarPU-MPI's
 * progress thread calls it too: MPI is initialised with MPI_THREAD_MULTIPLE, by Tessera unless
 * the program did it already. Both use communicators of their own, duplicated from
 * MPI_COMM_WORLD, so their messages never match each other's or the program's.
 *
 * Fake ranks (TSR_FAKE_NRANKS=N, TSR_FAKE_RANK=r): one process plays rank r of an N-rank job
 * without MPI (built with it or not), so that one rank's analysis and submission can be measured
 * at a scale no machine here runs. StarPU starts alone; tsr_rank() is r and tsr_nranks() N, so
 * every decision is rank r's; task variants do not run (task.c asks tsr__dist_runs_variants); a
 * send is counted and dropped; a receive is counted and replaced by a local task that writes its
 * buffer, so that StarPU holds a valid copy and the dependences keep their shape; the collectives
 * answer as if every rank agreed. TSR_STATS prints the same counts for fake and real ranks: the
 * tasks submitted per codelet and the transfers, so that the two can be compared rank by rank. */
#include "config.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "internal.h"

struct tsr_dist tsr__dist = {0, 0, 1};

/* The call stream: FNV-1a over what every call names (its kind and its arguments). */
static uint64_t call_hash = 1469598103934665603ULL;
static int64_t ncalls;
static char last_call[96];

void tsr__dist_note(const char *call, const void *data, size_t n)
{
	if (!tsr__dist.on)
		return;

	const unsigned char *p = (const unsigned char *)call;
	for (; *p; p++)
		call_hash = (call_hash ^ *p) * 1099511628211ULL;

	p = data;
	for (size_t i = 0; i < n; i++)
		call_hash = (call_hash ^ p[i]) * 1099511628211ULL;

	ncalls++;
	snprintf(last_call, sizeof last_call, "%s", call);
}

/* TSR_MPI, if set, is 0 or 1, whether Tessera was built with MPI or not (a program must not
 * depend on how Tessera was built): the rule of env.c's table. */
static int check_tsr_mpi(void)
{
	int on;
	if (!tsr__env("TSR_MPI"))
		return TSR_OK; /* its default depends on mpirun: no word of the list */
	return tsr__env_choice("TSR_MPI", "tsr_init", &on);
}

/* The timeline's log of transfers (TSR_TIMELINE): StarPU-MPI's completion callbacks (its progress
 * thread) append, the timeline copies. */
int tsr__dist_log_on;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tsr_mpi_xfer *xlog;
static size_t nxlog, capxlog;

int tsr__dist_log_copy(struct tsr_mpi_xfer **out)
{
	pthread_mutex_lock(&log_lock);
	size_t n = nxlog;
	*out = malloc((n ? n : 1) * sizeof **out);
	if (*out && n)
		memcpy(*out, xlog, n * sizeof **out);
	pthread_mutex_unlock(&log_lock);
	return *out ? (int)n : 0;
}

void tsr__dist_log_free(void)
{
	pthread_mutex_lock(&log_lock);
	free(xlog);
	xlog = NULL;
	nxlog = capxlog = 0;
	tsr__dist_log_on = 0;
	pthread_mutex_unlock(&log_lock);
}

/* ------------------------------------------------------------------ what a rank counts
 *
 * Per rank, for TSR_STATS, real and fake ranks alike: the bytes sent to each rank, the sends and
 * receives, and the tasks Tessera submitted (tsr__order_submit, every task of the program's
 * launches, fills, copies, folds and no-ops) per codelet. A fake receive's own task is counted
 * apart: a real rank has none. */
struct task_count {
	const struct starpu_codelet *cl;
	char name[TSR_NAME_MAX];
	int64_t n;
};

static size_t *sent_bytes; /* per destination rank */
static int64_t nsends, nrecvs;
static struct task_count *counts;
static int ncounts, capcounts;
static int64_t nfake_tasks;
static int64_t nstructured, nfull; /* index launches analysed for this rank's points, or all */

static int counts_start(void)
{
	sent_bytes = calloc((size_t)tsr__dist.size, sizeof *sent_bytes);
	if (!sent_bytes)
		return tsr__err(TSR_ENOMEM, "tsr_init: out of memory");
	nsends = nrecvs = nfake_tasks = 0;
	nstructured = nfull = 0;
	ncounts = 0;
	return TSR_OK;
}

static void counts_free(void)
{
	free(sent_bytes);
	sent_bytes = NULL;
	free(counts);
	counts = NULL;
	ncounts = capcounts = 0;
}

void tsr__dist_count_task(const struct starpu_codelet *cl)
{
	if (!tsr__dist.on)
		return;

	/* a task's codelet lives as long as the task (tsr_task_t) or forever (Tessera's own) */
	for (int i = 0; i < ncounts; i++)
		if (counts[i].cl == cl) {
			counts[i].n++;
			return;
		}

	TSR_GROW(counts, ncounts, capcounts, 16);
	struct task_count *c = &counts[ncounts++];
	c->cl = cl;
	snprintf(c->name, sizeof c->name, "%s", cl && cl->name ? cl->name : "(no codelet)");
	c->n = 1;
}

void tsr__dist_count_launch(int structured)
{
	if (structured)
		nstructured++;
	else
		nfull++;
}

/* ------------------------------------------------------------------ fake ranks */

static struct {
	int on;
	int nranks, rank;
} fake;

/* TSR_FAKE_NRANKS and TSR_FAKE_RANK: 1 (fake ranks, fake filled in), 0 (not asked), or an
 * error. */
static int fake_wanted(void)
{
	int n = 0;
	int r = 0;
	fake.on = 0;

	if (tsr__env_int("TSR_FAKE_NRANKS", 1, TSR_FAKE_MAX_RANKS, &n) ||
	    tsr__env_int("TSR_FAKE_RANK", 0, TSR_FAKE_MAX_RANKS - 1, &r))
		return TSR_EINVAL;
	if (!n && tsr__env("TSR_FAKE_RANK"))
		return tsr__err(TSR_EINVAL,
				"tsr_init: TSR_FAKE_RANK=%d names a rank of a fake job, but "
				"TSR_FAKE_NRANKS (how many ranks it has) is not set",
				r);
	if (!n)
		return 0;
	if (r >= n)
		return tsr__err(TSR_EINVAL,
				"tsr_init: TSR_FAKE_RANK=%d is not a rank of TSR_FAKE_NRANKS=%d "
				"(0..%d)",
				r, n, n - 1);

	fake.on = 1;
	fake.nranks = n;
	fake.rank = r;
	return 1;
}

/* A receive here: a task that writes its buffer, as the real receive would. A future's value or a
 * gather's buffer (a variable) starts at zero; a transfer view's data already lies in its region's
 * storage, which the task leaves as it is. */
static void fake_recv_variable(void *buffers[], void *cl_arg)
{
	(void)cl_arg;
	memset((void *)STARPU_VARIABLE_GET_PTR(buffers[0]), 0,
	       STARPU_VARIABLE_GET_ELEMSIZE(buffers[0]));
}

static struct starpu_codelet fake_recv_variable_cl = {
	.cpu_funcs = {fake_recv_variable},
	.nbuffers = 1,
	.modes = {STARPU_W},
	.name = "tsr_fake_recv",
};

static void fake_recv_view(void *buffers[], void *cl_arg)
{
	(void)buffers;
	(void)cl_arg;
}

static struct starpu_codelet fake_recv_view_cl = {
	.cpu_funcs = {fake_recv_view},
	.nbuffers = 1,
	.modes = {STARPU_W},
	.name = "tsr_fake_recv",
};

/* Several ranks have one memory node each (runtime.c refuses devices with them): the task runs
 * on a CPU worker, where a receive would have left the data. StarPU's sequential consistency
 * orders it after the buffer's readers and before its next ones, as it orders StarPU-MPI's
 * receive (Tessera's own ordering, order.c, is off on several ranks). */
static int fake_recv(starpu_data_handle_t h)
{
	struct starpu_task *task = starpu_task_create();
	if (!task)
		return TSR_ENOMEM;

	int variable = starpu_data_get_interface_id(h) == STARPU_VARIABLE_INTERFACE_ID;
	task->cl = variable ? &fake_recv_variable_cl : &fake_recv_view_cl;
	task->handles[0] = h;
	task->where = STARPU_CPU;
	int rc = tsr__starpu_code(starpu_task_submit(task));
	if (rc)
		return rc;

	nfake_tasks++;
	return TSR_OK;
}

/* A task that failed on `rank` since the last fence fails the blocking call on every rank. */
static int task_failed_error(int rank, const char *msg)
{
	return tsr__err(TSR_ETASK,
			"a task failed on rank %d since the last tsr_fence, and values computed on "
			"other ranks may depend on what it wrote (tsr_fence reports it and clears "
			"this): %s",
			rank, msg);
}

/* Every other rank agrees with this one: its failure, else a task of its own that failed. */
static int fake_agree(int rc)
{
	char msg[512];
	if (rc || !tsr__peek_task_error(msg, sizeof msg))
		return rc;
	return task_failed_error(tsr__dist.rank, msg);
}

int tsr__dist_runs_variants(void)
{
	return !(fake.on && tsr__dist.on);
}

int tsr__dist_fake(void)
{
	return fake.on && tsr__dist.on;
}

/* ------------------------------------------------------------------ MPI ranks */

#ifdef TSR_HAVE_MPI
#include <hwloc.h>
#include <starpu_mpi.h>

static MPI_Comm xfer_comm = MPI_COMM_NULL; /* StarPU-MPI's transfers */
static MPI_Comm coll_comm = MPI_COMM_NULL; /* Tessera's own collectives */
static int we_init_mpi;

/* Started by mpirun (Open MPI, or a PMI launcher), or TSR_MPI=1. TSR_MPI=0 runs one process
 * even under mpirun (every rank then computes everything alone). */
static int mpi_wanted(void)
{
	const char *v = tsr__env("TSR_MPI");
	if (v && *v)
		return strcmp(v, "0") != 0;
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

#if STARPU_MAJOR_VERSION > 1 || STARPU_MINOR_VERSION >= 4
/* Cores of the calling thread's binding, counted as StarPU 1.4 counts them (a core counts when one
 * of its hardware threads is allowed); 0 when hwloc cannot tell. */
static int bound_cores(void)
{
	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo))
		return 0;
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int n = 0;
	if (set && !hwloc_topology_load(topo) &&
	    !hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_THREAD)) {
		hwloc_obj_type_t type = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0
						? HWLOC_OBJ_CORE
						: HWLOC_OBJ_PU;
		hwloc_obj_t o = NULL;
		while ((o = hwloc_get_next_obj_by_type(topo, type, o)))
			n += hwloc_bitmap_intersects(o->cpuset, set);
	}
	hwloc_bitmap_free(set);
	hwloc_topology_destroy(topo);
	return n;
}
#endif

/* StarPU-MPI 1.4 reserves a core for its progress thread when the CPU workers are left to StarPU
 * (conf->ncpus -1), and StarPU 1.4 uses only the cores of the process's binding
 * (STARPU_WORKERS_GETBIND, on by default). Open MPI binds each rank to one core when it starts at
 * most 2: `mpirun -np 2` then left no core for a worker, and tsr_init failed with TSR_ENODEV. A
 * rank with a single core gets one CPU worker, which shares it with the progress thread, as on
 * StarPU 1.3, whose StarPU-MPI reserves no core (there too a rank bound to one core runs one). */
static void one_worker_per_lone_core(struct starpu_conf *conf)
{
#if STARPU_MAJOR_VERSION > 1 || STARPU_MINOR_VERSION >= 4
	if (conf->ncpus == -1 && bound_cores() == 1)
		conf->ncpus = 1;
#else
	(void)conf;
#endif
}

/* Open MPI's progress loop, which StarPU-MPI's thread runs without pause through MPI_Test,
 * gives the core away (sched_yield) when it finds nothing to do if mpi_yield_when_idle is set.
 * mpirun sets it only when it places more ranks than a node has slots; but a rank's worker and
 * StarPU-MPI's thread share a core whenever ranks share a node's cores (place.c), and the thread
 * then takes half the core from a worker that computes (2 ranks on 2 cores: cg -n 512 ran at
 * 3.10 ms/iter without, 1.15 with; the stencil 32.4 and 18.1). Only before MPI_Init, and only
 * where the user said nothing; TSR_IDLE=spin leaves it alone as it leaves the workers. */
static void yield_when_idle(void)
{
	const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
	int idle = TSR_IDLE_AUTO;

	tsr__env_choice("TSR_IDLE", "tsr_init", &idle); /* runtime.c reports a wrong value */
	if (idle == TSR_IDLE_SPIN || !local || strtol(local, NULL, 10) < 2)
		return;
	setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
}

/* MPI (with MPI_THREAD_MULTIPLE), the communicators, this rank's place on its node. */
static int mpi_start(struct starpu_conf *conf)
{
	int inited = 0;
	int provided = 0;

	MPI_Initialized(&inited);
	if (!inited) {
		yield_when_idle();
		if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
			return tsr__err(TSR_ESTARPU, "tsr_init: MPI_Init_thread failed");
		we_init_mpi = 1;
	} else {
		MPI_Query_thread(&provided);
	}

	if (provided < MPI_THREAD_MULTIPLE)
		return tsr__err(TSR_ESTARPU,
				"tsr_init: this MPI gives thread level %d, Tessera needs "
				"MPI_THREAD_MULTIPLE (it calls MPI from the host thread while "
				"StarPU-MPI's thread does too)",
				provided);

	MPI_Comm_dup(MPI_COMM_WORLD, &xfer_comm);
	MPI_Comm_dup(MPI_COMM_WORLD, &coll_comm);
	MPI_Comm_rank(coll_comm, &tsr__dist.rank);
	MPI_Comm_size(coll_comm, &tsr__dist.size);

	enum { BIND_AUTO, BIND_STARPU }; /* TSR_BIND's words (env.c) */
	int bind;
	int rc = tsr__env_choice("TSR_BIND", "tsr_init", &bind);
	if (!rc)
		rc = tsr__place_rank(bind == BIND_AUTO, conf);
	if (!rc)
		one_worker_per_lone_core(conf); /* where placement did not count them */
	return rc;
}

static int mpi_start_starpu(struct starpu_conf *conf)
{
	int entered = tsr__place_enter();
	int starpu_rc = starpu_mpi_init_conf(NULL, NULL, 0, xfer_comm, conf);
	tsr__place_leave(entered);
	int rc = tsr__starpu_code(starpu_rc);
	if (rc == TSR_ENODEV)
		return tsr__err(rc, "tsr_init: StarPU found no worker (ncpu=%d, ncuda=%d)",
				conf->ncpus, conf->ncuda);
	if (rc)
		return tsr__err(rc, "tsr_init: starpu_mpi_init_conf failed (%d)", starpu_rc);
	return TSR_OK;
}

/* StarPU-MPI's shutdown also stops StarPU (it started it). */
static void mpi_shutdown(void)
{
	starpu_mpi_shutdown();
}

static void mpi_stop(void)
{
	if (coll_comm != MPI_COMM_NULL)
		MPI_Comm_free(&coll_comm);
	if (xfer_comm != MPI_COMM_NULL)
		MPI_Comm_free(&xfer_comm);

	tsr__place_free();
	if (we_init_mpi) {
		int fin = 0;
		MPI_Finalized(&fin);
		if (!fin)
			MPI_Finalize();
		we_init_mpi = 0;
	}
}

static int64_t now_ns(void)
{
	return llround(starpu_timing_now() * 1e3); /* StarPU's clock, as its profiling's */
}

/* Completion callback of a logged transfer (StarPU-MPI's progress thread). */
static void logged_done(void *arg)
{
	struct tsr_mpi_xfer *x = arg;
	x->done = now_ns();

	pthread_mutex_lock(&log_lock);
	TSR_GROW(xlog, nxlog, capxlog, 64);
	xlog[nxlog++] = *x;
	pthread_mutex_unlock(&log_lock);
	free(x);
}

/* A transfer to log, posted now; NULL when not logging (or out of memory: it goes unlogged). */
static struct tsr_mpi_xfer *log_post(int peer, int send, size_t bytes)
{
	struct tsr_mpi_xfer *x = tsr__dist_log_on ? malloc(sizeof *x) : NULL;
	if (x) {
		x->peer = peer;
		x->send = send;
		x->bytes = (long long)bytes;
		x->posted = now_ns();
	}
	return x;
}

static int mpi_send(starpu_data_handle_t h, int dest, int64_t tag, size_t bytes)
{
	struct tsr_mpi_xfer *x = log_post(dest, 1, bytes);
	if (starpu_mpi_isend_detached(h, dest, tag, xfer_comm, x ? logged_done : NULL, x)) {
		free(x);
		return TSR_ESTARPU;
	}
	return TSR_OK;
}

static int mpi_recv(starpu_data_handle_t h, int src, int64_t tag)
{
	struct tsr_mpi_xfer *x = log_post(src, 0, starpu_data_get_size(h));
	if (starpu_mpi_irecv_detached(h, src, tag, xfer_comm, x ? logged_done : NULL, x)) {
		free(x);
		return TSR_ESTARPU;
	}
	return TSR_OK;
}

/* A gather's wait: tests without sleeping first, then one test per nap. */
enum { GATHER_SPINS = 100 };
static const struct timespec gather_nap = {0, 50000};

/* What each rank says at a blocking call. */
struct rank_word {
	uint64_t hash;
	int64_t ncalls;
	int32_t rc;
	/* a task failed here since the last fence (msg says how) */
	int32_t task_failed;
	char call[96];
	char msg[512];
};

/* Wait for a collective request, testing it between short sleeps after the first `spins` tests,
 * and at most `naps` sleeps (-1: no bound). */
static void wait_request(MPI_Request *req, int spins, long naps)
{
	int done = 0;
	for (long i = 0; !done; i++) {
		MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (done || i < spins)
			continue;
		if (naps >= 0 && i - spins >= naps)
			break;
		nanosleep(&gather_nap, NULL);
	}
}

/* MPI_Allgather busy-polls until the last rank arrives, and the ranks that wait for a late one
 * take the core from that rank's own threads when ranks share cores (mpirun --oversubscribe, or
 * more ranks than cores): the late rank's worker and StarPU-MPI's thread then run in the slices
 * the poller leaves. The non-blocking form, tested between short sleeps, leaves them the core.
 * The first tests come without sleep, so that a gather that completes at once costs no sleep. */
static void wait_allgather(const void *mine, void *all, int bytes)
{
	MPI_Request req;
	MPI_Iallgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, coll_comm, &req);
	wait_request(&req, GATHER_SPINS, -1);
}

/* Every rank's word, gathered on every rank; NULL when out of memory (then nothing is compared). */
static struct rank_word *gather_words(int rc)
{
	struct rank_word mine;
	memset(&mine, 0, sizeof mine);
	mine.hash = call_hash;
	mine.ncalls = ncalls;
	mine.rc = rc;
	snprintf(mine.call, sizeof mine.call, "%s", last_call);
	if (rc)
		snprintf(mine.msg, sizeof mine.msg, "%s", tsr_last_error());
	else
		mine.task_failed = tsr__peek_task_error(mine.msg, sizeof mine.msg);

	struct rank_word *all = malloc((size_t)tsr__dist.size * sizeof *all);
	if (!all)
		return NULL;

	wait_allgather(&mine, all, (int)sizeof mine);
	return all;
}

/* The first rank whose call stream differs from rank 0's, or 0. */
static int first_divergent(const struct rank_word *all)
{
	for (int r = 1; r < tsr__dist.size; r++)
		if (all[r].hash != all[0].hash || all[r].ncalls != all[0].ncalls)
			return r;
	return 0;
}

/* 1 and TSR_EDIVERGE's message when the ranks' call streams differ; TSR_ENOMEM; else TSR_OK. */
static int mpi_check(const char *what, int *diverged)
{
	struct rank_word *all = gather_words(TSR_OK);
	if (!all)
		return tsr__err(TSR_ENOMEM, "%s: out of memory", what);

	int r = first_divergent(all);
	int rc = TSR_OK;
	if (r) {
		*diverged = 1;
		rc = tsr__err(TSR_EDIVERGE,
			      "%s: the ranks made different calls: rank 0 is at call %lld (last: "
			      "%s), rank %d at call %lld (last: %s); every rank must make the same "
			      "calls in the same order",
			      what, (long long)all[0].ncalls, all[0].call[0] ? all[0].call : "none",
			      r, (long long)all[r].ncalls, all[r].call[0] ? all[r].call : "none");
	}

	free(all);
	return rc;
}

static int mpi_agree(int rc)
{
	char mine[512];
	snprintf(mine, sizeof mine, "%s", rc ? tsr_last_error() : "");
	struct rank_word *all = gather_words(rc);
	if (!all)
		return rc;

	for (int r = 0; r < tsr__dist.size; r++)
		if (all[r].rc) {
			int code = all[r].rc;
			if (r == tsr__dist.rank)
				tsr__err(code, "%s", mine);
			else
				tsr__err(code, "rank %d: %s", r, all[r].msg);
			free(all);
			return code;
		}

	for (int r = 0; r < tsr__dist.size; r++)
		if (all[r].task_failed) {
			int code = task_failed_error(r, all[r].msg);
			free(all);
			return code;
		}

	free(all);
	return TSR_OK;
}

static void mpi_wait_all(void)
{
	starpu_mpi_wait_for_all(xfer_comm); /* tasks and requests (1.3: with a barrier) */
}

/* How long a diverged rank waits for the others to reach tsr_finalize before it ends the job. */
enum { ABORT_WAIT_NAPS = 100000 }; /* of gather_nap (50 us): 5 s at least */

/* A diverged program cannot finish its transfers: end every rank rather than hang. The first
 * rank to get here would kill the others before they report their own TSR_EDIVERGE, so it waits
 * for them in a barrier first, a bounded time: a rank that never comes does not hold the job. */
static void mpi_abort(void)
{
	MPI_Request req;
	MPI_Ibarrier(coll_comm, &req);
	wait_request(&req, 0, ABORT_WAIT_NAPS);

	MPI_Abort(MPI_COMM_WORLD, 1);
}

#else /* built without MPI: one process, or fake ranks */

/* TSR_MPI=1, or mpirun starting several processes: an error (every rank would compute
 * everything alone), unless TSR_MPI=0 says that is what the user wants. */
static int mpi_wanted(void)
{
	const char *v = tsr__env("TSR_MPI");
	const char *np = getenv("OMPI_COMM_WORLD_SIZE");
	if (!np)
		np = getenv("PMI_SIZE");

	if (v && !strcmp(v, "1"))
		return tsr__err(TSR_EINVAL,
				"tsr_init: %s asks for several ranks (1) but this Tessera was "
				"built without MPI (configure found no StarPU-MPI or MPI; install "
				"libopenmpi-dev and reconfigure)",
				tsr__env_from("TSR_MPI"));

	char *end = NULL;
	long ranks = np ? strtol(np, &end, 10) : 0;
	if ((!v || strcmp(v, "0")) && np && !*end && ranks > 1)
		return tsr__err(TSR_EINVAL,
				"tsr_init: started on %s MPI ranks but this Tessera was built "
				"without MPI: every rank would compute everything alone "
				"(reconfigure with libopenmpi-dev installed, or set TSR_MPI=0 to "
				"allow it)",
				np);

	return 0;
}

/* Never called: mpi_wanted is never 1 here, and the fake ranks go round these. */
static int mpi_start(struct starpu_conf *conf)
{
	(void)conf;
	return tsr__err(TSR_EINVAL, "tsr_init: this Tessera was built without MPI");
}

static int mpi_start_starpu(struct starpu_conf *conf)
{
	return mpi_start(conf);
}

static void mpi_shutdown(void)
{
}

static void mpi_stop(void)
{
}

static int mpi_send(starpu_data_handle_t h, int dest, int64_t tag, size_t bytes)
{
	(void)h;
	(void)dest;
	(void)tag;
	(void)bytes;
	return TSR_ESTARPU;
}

static int mpi_recv(starpu_data_handle_t h, int src, int64_t tag)
{
	return mpi_send(h, src, tag, 0);
}

static int mpi_check(const char *what, int *diverged)
{
	(void)what;
	(void)diverged;
	return TSR_OK;
}

static int mpi_agree(int rc)
{
	return rc;
}

static void mpi_wait_all(void)
{
	starpu_task_wait_for_all();
}

static void mpi_abort(void)
{
}

#endif

/* ------------------------------------------------------------------ every kind of rank */

static int64_t next_tag;
static int diverged;

int tsr__dist_wanted(void)
{
	int rc = check_tsr_mpi();
	if (rc)
		return rc;

	int f = fake_wanted();
	if (f < 0)
		return f;
	int m = mpi_wanted();
	if (m < 0)
		return m;

	if (f && m) {
		fake.on = 0;
		return tsr__err(TSR_EINVAL,
				"tsr_init: TSR_FAKE_NRANKS plays one rank of a job without MPI, "
				"but "
				"this process is one of an MPI job (mpirun, or TSR_MPI=1): unset "
				"TSR_FAKE_NRANKS, or set TSR_MPI=0");
	}
	return f || m;
}

int tsr__dist_start(struct starpu_conf *conf)
{
	int rc = TSR_OK;
	if (fake.on) {
		tsr__dist.rank = fake.rank;
		tsr__dist.size = fake.nranks;
	} else {
		rc = mpi_start(conf);
	}

	if (!rc)
		rc = counts_start();
	if (rc)
		tsr__dist_stop_mpi();
	return rc;
}

/* Fake ranks: StarPU alone, as one process starts it. */
static int fake_start_starpu(struct starpu_conf *conf)
{
	int starpu_rc = starpu_init(conf);
	int rc = tsr__starpu_code(starpu_rc);
	if (rc == TSR_ENODEV)
		return tsr__err(rc, "tsr_init: StarPU found no worker (ncpu=%d, ncuda=%d)",
				conf->ncpus, conf->ncuda);
	if (rc)
		return tsr__err(rc, "tsr_init: starpu_init failed (%d)", starpu_rc);
	return TSR_OK;
}

int tsr__dist_start_starpu(struct starpu_conf *conf)
{
	int rc = fake.on ? fake_start_starpu(conf) : mpi_start_starpu(conf);
	if (rc) {
		tsr__dist_stop_mpi();
		return rc;
	}

	tsr__nice_pollers(); /* StarPU's threads exist now (nice.c) */
	tsr__dist.on = 1;
	next_tag = 1;
	diverged = 0;
	call_hash = 1469598103934665603ULL;
	ncalls = 0;
	last_call[0] = 0;
	return TSR_OK;
}

void tsr__dist_shutdown(void)
{
	if (fake.on)
		starpu_shutdown();
	else
		mpi_shutdown();
	tsr__dist.on = 0;
}

void tsr__dist_stop_mpi(void)
{
	counts_free();
	if (!fake.on)
		mpi_stop();

	fake.on = 0;
	tsr__dist.on = 0;
	tsr__dist.rank = 0;
	tsr__dist.size = 1;
}

int64_t tsr__dist_tag(void)
{
	return next_tag++;
}

int64_t tsr__dist_tags(int n)
{
	int64_t first = next_tag;
	next_tag += n;
	return first;
}

int tsr__dist_send(starpu_data_handle_t h, int dest, int64_t tag, size_t bytes)
{
	/* fake ranks: counted, and dropped */
	if (!fake.on && mpi_send(h, dest, tag, bytes))
		return TSR_ESTARPU;

	sent_bytes[dest] += bytes;
	nsends++;
	return TSR_OK;
}

int tsr__dist_recv(starpu_data_handle_t h, int src, int64_t tag)
{
	int rc = fake.on ? fake_recv(h) : mpi_recv(h, src, tag);
	if (rc)
		return TSR_ESTARPU;

	nrecvs++;
	return TSR_OK;
}

int tsr__dist_check(const char *what)
{
	if (!tsr__dist.on)
		return TSR_OK;
	if (diverged)
		return tsr__err(TSR_EDIVERGE,
				"%s: the ranks diverged earlier; nothing more can be waited for",
				what);
	if (fake.on)
		return TSR_OK; /* every rank made this rank's calls */
	return mpi_check(what, &diverged);
}

int tsr__dist_agree(int rc)
{
	if (!tsr__dist.on || diverged)
		return rc;
	return fake.on ? fake_agree(rc) : mpi_agree(rc);
}

void tsr__dist_wait_all(void)
{
	if (tsr__dist.on && !fake.on)
		mpi_wait_all();
	else
		starpu_task_wait_for_all();
}

/* Fake ranks never diverge (tsr__dist_check): there is no job to end. */
void tsr__dist_abort(void)
{
	if (!fake.on)
		mpi_abort();
}

/* The rank's peak resident memory (VmHWM of /proc/self/status, kB; -1 where there is none):
 * what a rank really touched, to compare with what it owns and reads (regions are mapped
 * lazily). */
static long peak_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	long kb = -1;
	if (!f)
		return -1;

	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;

	fclose(f);
	return kb;
}

/* The tasks submitted, in total and per codelet, in the order first submitted. */
static void print_task_counts(FILE *out)
{
	int64_t total = 0;
	for (int i = 0; i < ncounts; i++)
		total += counts[i].n;

	fprintf(out, "tessera: rank %d: %lld tasks submitted\n", tsr__dist.rank, (long long)total);
	for (int i = 0; i < ncounts; i++)
		fprintf(out, "tessera: rank %d submitted %lld tasks of '%s'\n", tsr__dist.rank,
			(long long)counts[i].n, counts[i].name);
}

void tsr__dist_print_stats(FILE *out)
{
	if (fake.on)
		fprintf(out,
			"tessera: rank %d of %d is fake (TSR_FAKE_NRANKS): no task variant ran, "
			"sends were dropped, %lld receives were local tasks\n",
			tsr__dist.rank, tsr__dist.size, (long long)nfake_tasks);

	long kb = peak_rss_kb();
	if (kb >= 0)
		fprintf(out, "tessera: rank %d peak RSS (VmHWM) %ld kB\n", tsr__dist.rank, kb);

	for (int r = 0; r < tsr__dist.size; r++)
		if (sent_bytes[r])
			fprintf(out, "tessera: rank %d sent %zu bytes to rank %d\n", tsr__dist.rank,
				sent_bytes[r], r);

	fprintf(out, "tessera: rank %d: %lld sends, %lld receives\n", tsr__dist.rank,
		(long long)nsends, (long long)nrecvs);
	fprintf(out,
		"tessera: rank %d: %lld index launches analysed for this rank's points, %lld for "
		"every point\n",
		tsr__dist.rank, (long long)nstructured, (long long)nfull);
	print_task_counts(out);
}

int tsr_rank(void)
{
	return tsr__dist.on ? tsr__dist.rank : 0;
}

int tsr_nranks(void)
{
	return tsr__dist.on ? tsr__dist.size : 1;
}
