/* nice.c: with TSR_NICE, StarPU's polling threads yield the core to the host thread (off by
 * default).
 *
 * With more threads than cores (StarPU starts a CPU worker per core by default, and the host thread
 * comes on top; under `mpirun --oversubscribe` a rank's threads share one core), the host thread
 * shares a core with threads that never sleep while they wait: StarPU 1.3's last awake worker spins
 * for tasks (a single worker always spins), and StarPU-MPI's progress thread spins on MPI_Test
 * while any receive is posted. The host thread, which submits every task (and, on several ranks,
 * decides every transfer), then gets a fraction of its core, and with small tasks the submission is
 * the critical path. Lowering the polling threads' priority (nice, TSR_NICE levels below the host
 * thread) gives the core to the host thread whenever it has work, and to a polling thread as soon
 * as the host thread sleeps. Where every thread has a core of its own, nice changes nothing.
 *
 * It pays only where the cores are Tessera's alone, and costs a great deal where they are not, so
 * it is off by default (0) on one rank and on several; TSR_NICE=10 turns it on for a dedicated
 * machine:
 * - several ranks, quiet (2 ranks of the oracle, 150 programs, 2 runs each, 2 cores): 12.7 s at
 *   nice 0, 10.9 s at nice 10 (every rank's host thread decides every transfer).
 * - several ranks beside four CPU-bound processes (the same 2 cores): a niced thread yields to
 *   them too, and a rank's worker and StarPU-MPI thread then run in the slices a busy neighbour
 *   leaves. 2 ranks: 0.53 s per oracle program at nice 0, 2.05 s at nice 10; 4 ranks: 10 s at
 *   nice 0, over 60 s at nice 10, where `make check`'s several-ranks runs passed their limits.
 * - one process: the small stencil (64 x 64 x 4, 4 tiles, 2 workers on 2 cores, lws, 11
 *   interleaved --compare runs) runs at 0.108 ms/iter at nice 0 and 0.092 at nice 10 (raw StarPU
 *   in the same processes: 0.083 and 0.076); but the default stencil (128 x 128 x 32, tasks of
 *   about 0.1 ms, 5 runs) slows from 0.59 to 0.69 ms/iter, because while the host thread submits, a
 *   niced worker no longer shares the host thread's core: the first tasks start later.
 *
 * TSR_NICE=0 leaves the threads alone. TSR_MPI_NICE, the older name from when only ranks did
 * this, is read when TSR_NICE is not set. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#ifdef __linux__
#include <dirent.h>
#include <sys/resource.h>
#endif

/* off by default: see above */
enum { NICE_DEFAULT = 0 };

static int poller_nice;

int tsr__nice_read(void)
{
	poller_nice = NICE_DEFAULT;
	/* TSR_MPI_NICE comes through TSR_NICE: env.c reads an older name when the newer is unset */
	return tsr__env_int("TSR_NICE", 0, 19, &poller_nice); /* the rule of env.c's table: 0..19 */
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
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (!*end && end != e->d_name && is_poller(comm))
			lower_priority((id_t)tid, poller_nice);
	}

	closedir(dir);
#endif
}
