/* nice.c: StarPU's polling threads yield the core to the host thread.
 *
 * With more threads than cores (StarPU starts a CPU worker per core by default, and the host thread
 * comes on top; under `mpirun --oversubscribe` a rank's threads share one core), the host thread
 * shares a core with threads that never sleep while they wait: StarPU 1.3's last awake worker spins
 * for tasks (a single worker always spins), and StarPU-MPI's progress thread spins on MPI_Test
 * while any receive is posted. The host thread, which submits every task (and, on several ranks,
 * decides every transfer), then gets a fraction of its core, and with small tasks the submission is
 * the critical path. Lowering the polling threads' priority (nice, TSR_NICE levels below the host
 * thread; default 10) gives the core to the host thread whenever it has work, and to a polling
 * thread as soon as the host thread sleeps; a worker that runs a task then competes only with the
 * host thread, which is idle once it has submitted. Where every thread has a core of its own,
 * nice changes nothing.
 *
 * Measured: the oracle, 30 programs on 2 ranks, 3 runs each, interleaved: 6.5-8.8 s with the
 * pollers at nice 0, 4.4-6.4 s at nice 15. The small stencil (64 x 64 x 4, 4 tiles, 2 workers on 2
 * cores, lws, 7 interleaved --compare runs): Tessera 0.108 ms/iter at nice 0, 0.089 at nice 10;
 * raw StarPU in the same processes 0.084 and 0.076.
 *
 * TSR_NICE=0 leaves the threads alone. The price: nice is not private to the process, so a niced
 * worker also yields to other programs on the same cores (other tests of a parallel make check).
 * TSR_MPI_NICE, the older name from when only ranks did this, is read when TSR_NICE is not set. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#ifdef __linux__
#include <dirent.h>
#include <sys/resource.h>
#endif

enum { POLLER_NICE_DEFAULT = 10 };
static int poller_nice = POLLER_NICE_DEFAULT;

int tsr__nice_read(void)
{
	const char *name = "TSR_NICE";
	const char *v = getenv(name);
	if (!v || !*v) {
		name = "TSR_MPI_NICE";
		v = getenv(name);
	}
	poller_nice = POLLER_NICE_DEFAULT;
	if (!v || !*v)
		return TSR_OK;
	char *end = NULL;
	long n = strtol(v, &end, 10);
	if (*end || n < 0 || n > 19)
		return tsr__err(TSR_EINVAL, "tsr_init: %s='%s' is not a number of nice levels from 0 (leave StarPU's "
		                "polling threads alone) to 19", name, v);
	poller_nice = (int)n;
	return TSR_OK;
}

#ifdef __linux__
/* StarPU names its threads: "CPU <n>" for CPU workers, "MPI" for StarPU-MPI's progress thread. */
static int is_poller(const char *comm)
{
	return !strncmp(comm, "CPU ", 4) || !strcmp(comm, "MPI\n");
}

/* `by` nice levels below where the thread is (it inherited the host thread's), at most 19. */
static void lower_priority(id_t tid, int by)
{
	errno = 0;
	int now = getpriority(PRIO_PROCESS, tid);
	if (errno)
		return;
	int want = now + by > 19 ? 19 : now + by;
	setpriority(PRIO_PROCESS, tid, want);
}

/* The thread's name, from /proc (empty if it cannot be read). */
static void thread_name(const char *tid, char *comm, size_t n)
{
	char path[300];
	snprintf(path, sizeof path, "/proc/self/task/%s/comm", tid);
	comm[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(comm, (int)n, f))
		comm[0] = 0;
	fclose(f);
}
#endif

/* Linux gives each thread its own nice value; elsewhere, or if /proc cannot be read, nothing
 * changes (slower, never wrong). Called once StarPU (and StarPU-MPI) started, when all the polling
 * threads exist. */
void tsr__nice_pollers(void)
{
#ifdef __linux__
	if (!poller_nice)
		return;
	DIR *dir = opendir("/proc/self/task");
	if (!dir)
		return;
	struct dirent *e;
	while ((e = readdir(dir))) {
		char comm[32];
		thread_name(e->d_name, comm, sizeof comm);
		if (is_poller(comm))
			lower_priority((id_t)atoi(e->d_name), poller_nice);
	}
	closedir(dir);
#endif
}
