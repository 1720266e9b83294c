/* tessera-info: the scheduling policies Tessera can use and the machine it would run on
 * (workers, memory nodes, CUDA devices, hwloc topology). */
#include <hwloc.h>
#include <stdio.h>
#include <string.h>
#include <starpu.h>
#include "tessera.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tessera-info [--policies | --machine | --env | --help]\n"
		"  Lists the scheduling policies (for TSR_SCHED / --sched) and describes the "
		"machine:\n"
		"  StarPU workers and memory nodes, CUDA devices, hwloc topology. Default: both.\n"
		"  --env: Tessera's environment switches, as a Markdown table (the README's).\n");
}

static void topology(void)
{
	hwloc_topology_t t;

	if (hwloc_topology_init(&t) || hwloc_topology_load(t)) {
		printf("  hwloc: topology unavailable\n");
		return;
	}

	int pk = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE),
	    nu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
	int co = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE),
	    pu = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
	printf("  hwloc: %d package(s), %d NUMA node(s), %d core(s), %d PU(s)\n", pk, nu, co, pu);

	hwloc_obj_t root = hwloc_get_root_obj(t);
	if (root->total_memory)
		printf("  memory: %.1f GiB\n", root->total_memory / 1073741824.0);

	for (hwloc_obj_type_t ty = HWLOC_OBJ_L1CACHE; ty <= HWLOC_OBJ_L3CACHE; ty++) {
		hwloc_obj_t c = hwloc_get_obj_by_type(t, ty, 0);
		if (c && c->attr)
			printf("  L%u cache: %llu KiB x %d\n", c->attr->cache.depth,
			       (unsigned long long)c->attr->cache.size / 1024,
			       hwloc_get_nbobjs_by_type(t, ty));
	}

	hwloc_topology_destroy(t);
}

/* What a memory node is: the host's RAM or a device's own memory. */
static const char *node_kind(int node)
{
	switch (starpu_node_get_kind((unsigned)node)) {
	case STARPU_CPU_RAM:
		return "host RAM";
	case STARPU_CUDA_RAM:
		return "CUDA device memory";
	case STARPU_OPENCL_RAM:
		return "OpenCL device memory";
	default:
		return "other";
	}
}

/* The switches' table (runtime/env.c) as the README's Markdown table: one row per switch. */
static void env_table(void)
{
	const tsr_env_switch_t *t;
	int n = tsr_env_switches(&t);

	printf("| variable | values | default | effect |\n| --- | --- | --- | --- |\n");
	for (int i = 0; i < n; i++) {
		printf("| %s | ", t[i].name);
		for (const char *p = t[i].values; *p; p++)
			printf(*p == '|' ? "\\|" : "%c", *p); /* a bar inside a cell is escaped */
		printf(" | %s | %s |\n", t[i].fallback, t[i].meaning);
	}
}

int main(int argc, char **argv)
{
	int pol = 1, mach = 1;

	if (argc > 1) {
		if (!strcmp(argv[1], "--policies"))
			mach = 0;
		else if (!strcmp(argv[1], "--machine"))
			pol = 0;
		else if (!strcmp(argv[1], "--env")) {
			env_table();
			return 0;
		} else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}

	if (pol) {
		const char *names[64], *desc[64];
		int n = tsr_policy_list(names, desc, 64);
		printf("scheduling policies (TSR_SCHED=name):\n");
		for (int i = 0; i < n && i < 64; i++)
			printf("  %-32s %s\n", names[i], desc[i]);
	}

	if (mach) {
		int rc = tsr_init(NULL);
		if (rc) {
			fprintf(stderr, "tessera-info: %s\n", tsr_last_error());
			return 1;
		}

		printf("machine:\n"
		       "  policy in use: %s\n"
		       "  task ordering: %s\n"
		       "  workers: %d (%d CPU, %d CUDA, %d OpenCL)\n",
		       tsr_sched_name(), tsr_deps_name(), tsr_worker_count(), tsr_ncpu_workers(),
		       tsr_ncuda_workers(), tsr_nopencl_workers());

		for (int w = 0; w < tsr_worker_count(); w++) {
			char name[64];
			starpu_worker_get_name(w, name, sizeof name);
			int node = tsr_worker_node(w);
			printf("    worker %d: %s (memory node %d: %s)\n", w, name, node,
			       node_kind(node));
		}

		printf("  memory nodes: %u\n  CUDA devices: %d\n  OpenCL devices: %d\n",
		       starpu_memory_nodes_get_count(), tsr_ncuda_workers(), tsr_nopencl_workers());
		topology();
		tsr_finalize();
	}
	return 0;
}
