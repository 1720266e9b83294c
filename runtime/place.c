/* place.c: several ranks on one node share its cores: each rank takes a share of its own, its CPU
 * workers bound one per core of the share, StarPU-MPI's thread kept inside it.
 *
 * StarPU places its threads as if its process had the machine to itself: every rank binds its
 * first worker to core 0, its second to core 1, ..., and StarPU-MPI's thread to the next core
 * (whatever core mpirun bound the rank to, and with one CPU worker per rank that is every rank's
 * worker on core 0 and every MPI thread on core 1). The ranks' threads then take turns on the same
 * cores while the others stay idle, and every message waits for a time slice: on 2 cores,
 * `mpirun -np 2` of a StarPU-MPI ring of tasks and messages took 8-9 ms per hop so placed, 25 us
 * with each rank on a core of its own (and idle workers parked, idle.c). TSR_BIND=auto does this
 * placement where ranks share a node; TSR_BIND=starpu leaves StarPU's.
 *
 * The share: the ranks of a node that were given the same cpuset (mpirun binds each rank to a core
 * when it has a core for each, to the whole package otherwise) split the cores of that set in
 * blocks, in rank order; more ranks than cores share cores in blocks as well. Anything the user
 * said about placement (STARPU_WORKERS_CPUID, STARPU_WORKERS_NOBIND, STARPU_NCPU, workers_bindid
 * in the program's configuration, STARPU_MPI_THREAD_CPUID, STARPU_MPI_NOBIND) is left alone. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#ifdef TSR_HAVE_MPI
#include <hwloc.h>
#include <mpi.h>

struct tsr_place tsr__place = {.node_ranks = 1};

/* Kept from tsr__place_rank to tsr__place_free: the share as a set of processing units, and the
 * host thread's own binding while StarPU-MPI's thread is created inside the share. */
static hwloc_topology_t topo;
static hwloc_cpuset_t share_set, host_set;
static int placed_workers; /* the workers' binding is ours (conf->workers_bindid) */

/* The cores (each core's first processing unit, hwloc logical indexes as StarPU numbers them) of
 * set; pus has room for every core of the machine. */
static int cores_in(hwloc_const_cpuset_t set, unsigned *pus, int max)
{
	int n = 0;
	int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);

	for (int i = 0; i < ncores && n < max; i++) {
		hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, i);
		hwloc_obj_t pu = hwloc_get_next_obj_inside_cpuset_by_type(topo, core->cpuset,
									  HWLOC_OBJ_PU, NULL);

		if (pu && hwloc_bitmap_isset(set, pu->os_index))
			pus[n++] = pu->logical_index;
	}

	return n;
}

/* FNV-1a of the cpuset's text: ranks given the same set get the same color to split by. */
static int set_color(hwloc_const_cpuset_t set)
{
	char *text = NULL;
	uint32_t h = 2166136261u;

	if (hwloc_bitmap_asprintf(&text, set) < 0 || !text)
		return 0;

	for (const char *p = text; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;

	free(text);
	return (int)(h & 0x7fffffff);
}

/* This rank's index among the ranks of its node given the same set, and their count. */
static void rank_in_set(hwloc_const_cpuset_t set, int *index, int *count)
{
	MPI_Comm node;
	MPI_Comm same;
	int me;

	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &tsr__place.node_ranks);

	MPI_Comm_split(node, set_color(set), me, &same);
	MPI_Comm_rank(same, index);
	MPI_Comm_size(same, count);

	MPI_Comm_free(&same);
	MPI_Comm_free(&node);
}

/* Cores [lo, hi) of n for member i of k: blocks, at least one core each. */
static void share_of(int n, int i, int k, int *lo, int *hi)
{
	*lo = (int)((int64_t)i * n / k);
	*hi = k <= n ? (int)((int64_t)(i + 1) * n / k) : *lo + 1;
}

/* The share's cores into tsr__place.pus and share_set (every processing unit of them). */
static int take_share(const unsigned *cores, int lo, int hi)
{
	tsr__place.npus = hi - lo;
	tsr__place.pus = malloc((size_t)tsr__place.npus * sizeof *tsr__place.pus);
	share_set = hwloc_bitmap_alloc();
	if (!tsr__place.pus || !share_set)
		return TSR_ENOMEM;

	for (int i = lo; i < hi; i++) {
		hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, cores[i]);
		hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);

		tsr__place.pus[i - lo] = cores[i];
		hwloc_bitmap_or(share_set, share_set, core ? core->cpuset : pu->cpuset);
	}

	return TSR_OK;
}

static int user_placed_workers(const struct starpu_conf *conf)
{
	return conf->use_explicit_workers_bindid || getenv("STARPU_WORKERS_CPUID") ||
	       getenv("STARPU_WORKERS_NOBIND");
}

/* Bind the CPU workers one per core of the share, and start as many as it has cores unless the
 * program or STARPU_NCPU said how many. */
static void place_workers(struct starpu_conf *conf)
{
	if (user_placed_workers(conf))
		return;

	placed_workers = 1;
	conf->use_explicit_workers_bindid = 1;
	for (int w = 0; w < STARPU_NMAXWORKERS; w++)
		conf->workers_bindid[w] = tsr__place.pus[w % tsr__place.npus];

	if (conf->ncpus < 0 && !getenv("STARPU_NCPU"))
		conf->ncpus = tsr__place.npus;
}

/* The share of cores for the set this rank was given; nothing when it shares no node. */
static int find_share(hwloc_const_cpuset_t set)
{
	int index;
	int count;
	rank_in_set(set, &index, &count);
	if (tsr__place.node_ranks == 1)
		return TSR_OK;

	int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	unsigned *cores = calloc((size_t)(ncores > 0 ? ncores : 1), sizeof *cores);
	if (!cores)
		return TSR_ENOMEM;

	int n = cores_in(set, cores, ncores);
	int rc = TSR_OK;
	if (n > 0) {
		int lo;
		int hi;
		share_of(n, index, count, &lo, &hi);
		rc = take_share(cores, lo, hi);
	}

	free(cores);
	return rc;
}

int tsr__place_rank(int bind, struct starpu_conf *conf)
{
	tsr__place_free();
	if (hwloc_topology_init(&topo) || hwloc_topology_load(topo))
		return tsr__err(TSR_ESTARPU, "tsr_init: hwloc could not read this machine's cores");

	hwloc_cpuset_t set = hwloc_bitmap_alloc();
	if (!set)
		return tsr__err(TSR_ENOMEM, "tsr_init: out of memory");
	if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS))
		hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo));

	int rc = find_share(set);
	hwloc_bitmap_free(set);
	if (rc)
		return tsr__err(rc, "tsr_init: out of memory");

	if (bind && tsr__place.npus > 0)
		place_workers(conf);
	return TSR_OK;
}

/* StarPU 1.4 keeps to the cores of the process's binding (STARPU_WORKERS_GETBIND, on by default)
 * and numbers them within it, and says so on stderr when mpirun bound the rank to one core. Where
 * the workers' binding is Tessera's (whole-machine numbers, inside the rank's share already), it
 * must see the whole machine. Set for the time StarPU starts, as the caller's variables are
 * hidden (runtime.c). */
static int whole_machine(void)
{
	if (!placed_workers || getenv("STARPU_WORKERS_GETBIND"))
		return 0;

	setenv("STARPU_WORKERS_GETBIND", "0", 1);
	return 1;
}

/* StarPU-MPI's thread takes the binding of the thread that creates it when told not to bind: the
 * host thread enters the share while StarPU-MPI starts, then goes back to its own binding.
 * Returns what tsr__place_leave undoes. */
int tsr__place_enter(void)
{
	int entered = whole_machine() ? 2 : 0;
	if (!share_set || getenv("STARPU_MPI_THREAD_CPUID") || getenv("STARPU_MPI_NOBIND"))
		return entered;

	host_set = hwloc_bitmap_alloc();
	if (!host_set || hwloc_get_cpubind(topo, host_set, HWLOC_CPUBIND_THREAD))
		return 0;
	if (hwloc_set_cpubind(topo, share_set, HWLOC_CPUBIND_THREAD))
		return 0;

	setenv("STARPU_MPI_NOBIND", "1", 1);
	return entered | 1;
}

void tsr__place_leave(int entered)
{
	if (entered & 2)
		unsetenv("STARPU_WORKERS_GETBIND");
	if (!(entered & 1))
		return;

	unsetenv("STARPU_MPI_NOBIND");
	hwloc_set_cpubind(topo, host_set, HWLOC_CPUBIND_THREAD);
}

void tsr__place_free(void)
{
	placed_workers = 0;
	free(tsr__place.pus);
	tsr__place.pus = NULL;
	tsr__place.npus = 0;
	tsr__place.node_ranks = 1;

	if (host_set)
		hwloc_bitmap_free(host_set);
	if (share_set)
		hwloc_bitmap_free(share_set);
	if (topo)
		hwloc_topology_destroy(topo);
	host_set = share_set = NULL;
	topo = NULL;
}

#else /* one process only: nothing to share */

struct tsr_place tsr__place = {.node_ranks = 1};

int tsr__place_enter(void)
{
	return 0;
}

void tsr__place_leave(int entered)
{
	(void)entered;
}

void tsr__place_free(void)
{
}

#endif
