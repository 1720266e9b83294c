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
 * MPI_COMM_WORLD, so their messages never match each other's or the program's. */
#include "config.h"
#include <errno.h>
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

/* The timeline's log of transfers (TSR_TRACE): StarPU-MPI's completion callbacks (its progress
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

#ifdef TSR_HAVE_MPI
#include <hwloc.h>
#include <starpu_mpi.h>

static MPI_Comm xfer_comm = MPI_COMM_NULL; /* StarPU-MPI's transfers */
static MPI_Comm coll_comm = MPI_COMM_NULL; /* Tessera's own collectives */
static int we_init_mpi;
static int64_t next_tag;
static size_t *sent_bytes; /* per destination rank */
static int64_t nsends, nrecvs;
static int diverged;

/* Started by mpirun (Open MPI, or a PMI launcher), or TSR_MPI=1. TSR_MPI=0 runs one process
 * even under mpirun (every rank then computes everything alone). */
static int launched_by_mpi(void)
{
	const char *v = tsr__env("TSR_MPI");
	if (v && *v)
		return strcmp(v, "0") != 0;
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

int tsr__dist_wanted(void)
{
	int rc = check_tsr_mpi();
	if (rc)
		return rc;
	return launched_by_mpi();
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

int tsr__dist_start(struct starpu_conf *conf)
{
	int inited = 0;
	int provided = 0;

	MPI_Initialized(&inited);
	if (!inited) {
		if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
			return tsr__err(TSR_ESTARPU, "tsr_init: MPI_Init_thread failed");
		we_init_mpi = 1;
	} else {
		MPI_Query_thread(&provided);
	}

	if (provided < MPI_THREAD_MULTIPLE) {
		tsr__dist_stop_mpi();
		return tsr__err(TSR_ESTARPU,
				"tsr_init: this MPI gives thread level %d, Tessera needs "
				"MPI_THREAD_MULTIPLE (it calls MPI from the host thread while "
				"StarPU-MPI's thread does too)",
				provided);
	}

	MPI_Comm_dup(MPI_COMM_WORLD, &xfer_comm);
	MPI_Comm_dup(MPI_COMM_WORLD, &coll_comm);
	MPI_Comm_rank(coll_comm, &tsr__dist.rank);
	MPI_Comm_size(coll_comm, &tsr__dist.size);

	sent_bytes = calloc((size_t)tsr__dist.size, sizeof *sent_bytes);
	if (!sent_bytes) {
		tsr__dist_stop_mpi();
		return tsr__err(TSR_ENOMEM, "tsr_init: out of memory");
	}

	one_worker_per_lone_core(conf);
	int rc = starpu_mpi_init_conf(NULL, NULL, 0, xfer_comm, conf);
	if (rc) {
		tsr__dist_stop_mpi();
		if (rc == -ENODEV)
			return tsr__err(TSR_ENODEV,
					"tsr_init: StarPU found no worker (ncpu=%d, ncuda=%d)",
					conf->ncpus, conf->ncuda);
		return tsr__err(TSR_ESTARPU, "tsr_init: starpu_mpi_init_conf failed (%d)", rc);
	}

	tsr__nice_pollers(); /* StarPU-MPI's progress thread exists now (nice.c) */
	tsr__dist.on = 1;
	next_tag = 1;
	nsends = nrecvs = 0;
	diverged = 0;
	call_hash = 1469598103934665603ULL;
	ncalls = 0;
	last_call[0] = 0;
	return TSR_OK;
}

/* StarPU-MPI's shutdown also stops StarPU (it started it). */
void tsr__dist_shutdown(void)
{
	starpu_mpi_shutdown();
	tsr__dist.on = 0;
}

void tsr__dist_stop_mpi(void)
{
	free(sent_bytes);
	sent_bytes = NULL;

	if (coll_comm != MPI_COMM_NULL)
		MPI_Comm_free(&coll_comm);
	if (xfer_comm != MPI_COMM_NULL)
		MPI_Comm_free(&xfer_comm);

	if (we_init_mpi) {
		int fin = 0;
		MPI_Finalized(&fin);
		if (!fin)
			MPI_Finalize();
		we_init_mpi = 0;
	}

	tsr__dist.on = 0;
	tsr__dist.rank = 0;
	tsr__dist.size = 1;
}

int64_t tsr__dist_tag(void)
{
	return next_tag++;
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

int tsr__dist_send(starpu_data_handle_t h, int dest, int64_t tag, size_t bytes)
{
	struct tsr_mpi_xfer *x = log_post(dest, 1, bytes);
	if (starpu_mpi_isend_detached(h, dest, tag, xfer_comm, x ? logged_done : NULL, x)) {
		free(x);
		return TSR_ESTARPU;
	}
	sent_bytes[dest] += bytes;
	nsends++;
	return TSR_OK;
}

int tsr__dist_recv(starpu_data_handle_t h, int src, int64_t tag)
{
	struct tsr_mpi_xfer *x = log_post(src, 0, starpu_data_get_size(h));
	if (starpu_mpi_irecv_detached(h, src, tag, xfer_comm, x ? logged_done : NULL, x)) {
		free(x);
		return TSR_ESTARPU;
	}
	nrecvs++;
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

/* MPI_Allgather busy-polls until the last rank arrives, and the ranks that wait for a late one
 * take the core from that rank's own threads when ranks share cores (mpirun --oversubscribe, or
 * more ranks than cores): the late rank's worker and StarPU-MPI's thread then run in the slices
 * the poller leaves. The non-blocking form, tested between short sleeps, leaves them the core.
 * The first tests come without sleep, so that a gather that completes at once costs no sleep. */
static void wait_allgather(const void *mine, void *all, int bytes)
{
	MPI_Request req;
	MPI_Iallgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, coll_comm, &req);

	int done = 0;
	for (int spins = 0; !done; spins++) {
		MPI_Test(&req, &done, MPI_STATUS_IGNORE);
		if (!done && spins >= GATHER_SPINS)
			nanosleep(&gather_nap, NULL);
	}
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

int tsr__dist_check(const char *what)
{
	if (!tsr__dist.on)
		return TSR_OK;
	if (diverged)
		return tsr__err(TSR_EDIVERGE,
				"%s: the ranks diverged earlier; nothing more can be waited for",
				what);

	struct rank_word *all = gather_words(TSR_OK);
	if (!all)
		return tsr__err(TSR_ENOMEM, "%s: out of memory", what);

	int r = first_divergent(all);
	int rc = TSR_OK;
	if (r) {
		diverged = 1;
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

int tsr__dist_agree(int rc)
{
	if (!tsr__dist.on || diverged)
		return rc;

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
			int code = tsr__err(TSR_ETASK,
					    "a task failed on rank %d since the last tsr_fence, "
					    "and values computed on other ranks may depend on what "
					    "it wrote (tsr_fence reports it and clears this): %s",
					    r, all[r].msg);
			free(all);
			return code;
		}

	free(all);
	return TSR_OK;
}

void tsr__dist_wait_all(void)
{
	if (tsr__dist.on)
		starpu_mpi_wait_for_all(xfer_comm); /* tasks and requests (1.3: with a barrier) */
	else
		starpu_task_wait_for_all();
}

/* A diverged program cannot finish its transfers: end every rank rather than hang. */
void tsr__dist_abort(void)
{
	MPI_Abort(MPI_COMM_WORLD, 1);
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

void tsr__dist_print_stats(FILE *out)
{
	long kb = peak_rss_kb();
	if (kb >= 0)
		fprintf(out, "tessera: rank %d peak RSS (VmHWM) %ld kB\n", tsr__dist.rank, kb);

	for (int r = 0; r < tsr__dist.size; r++)
		if (sent_bytes[r])
			fprintf(out, "tessera: rank %d sent %zu bytes to rank %d\n", tsr__dist.rank,
				sent_bytes[r], r);

	fprintf(out, "tessera: rank %d: %lld sends, %lld receives\n", tsr__dist.rank,
		(long long)nsends, (long long)nrecvs);
}

#else /* one process only */

int tsr__dist_wanted(void)
{
	const char *v = tsr__env("TSR_MPI");
	const char *np = getenv("OMPI_COMM_WORLD_SIZE");
	if (!np)
		np = getenv("PMI_SIZE");

	int rc = check_tsr_mpi();
	if (rc)
		return rc;

	if (v && !strcmp(v, "1"))
		return tsr__err(TSR_EINVAL,
				"tsr_init: %s asks for several ranks (1) but this Tessera was "
				"built "
				"without MPI (configure found no StarPU-MPI or MPI; install "
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

int tsr__dist_start(struct starpu_conf *conf)
{
	(void)conf;
	return tsr__err(TSR_EINVAL, "tsr_init: this Tessera was built without MPI");
}

void tsr__dist_shutdown(void)
{
}

void tsr__dist_stop_mpi(void)
{
}

int64_t tsr__dist_tag(void)
{
	return 0;
}

int tsr__dist_send(starpu_data_handle_t h, int dest, int64_t tag, size_t bytes)
{
	return TSR_ESTARPU;
}

int tsr__dist_recv(starpu_data_handle_t h, int src, int64_t tag)
{
	return TSR_ESTARPU;
}

int tsr__dist_check(const char *what)
{
	return TSR_OK;
}

int tsr__dist_agree(int rc)
{
	return rc;
}

void tsr__dist_wait_all(void)
{
	starpu_task_wait_for_all();
}

void tsr__dist_abort(void)
{
}

void tsr__dist_print_stats(FILE *out)
{
}

#endif

int tsr_rank(void)
{
	return tsr__dist.on ? tsr__dist.rank : 0;
}

int tsr_nranks(void)
{
	return tsr__dist.on ? tsr__dist.size : 1;
}
