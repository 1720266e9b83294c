/* tessera-info: the scheduling policies Tessera can use, the machine it would run on (workers,
 * memory nodes, CUDA devices, hwloc topology), the switches, and the settings a run would take
 * (--config: each value and where it came from). Tessera's flags (--ncpu, --sched...) apply. */
#include <hwloc.h>
#include <stdio.h>
#include <string.h>
#include <starpu.h>
#include "tessera.h"

/* Tessera's flags, one line each: the flag, what it takes, its switch. */
static void print_flags(FILE *f)
{
	const tsr_env_switch_t *t;
	int n = tsr_env_switches(&t);
	tsr_setting_t rows[64];
	tsr_settings(NULL, rows, 64);

	fprintf(f, "Tessera's flags (any Tessera program; first found wins: flag, TSR_ variable, "
		   "STARPU_ variable,\nthe program's tsr_config_t, default):\n");
	for (int i = 0; i < n && i < 64; i++)
		if (rows[i].flag)
			fprintf(f, "  %-13s %-22s as %s\n", rows[i].flag,
				strcmp(t[i].values, "0|1") ? t[i].values : "(alone: 1; =0|1)",
				t[i].name);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tessera-info [FLAGS] [--policies | --machine | --config | --env |\n"
		   "                    --version | --help]\n"
		   "  Lists the scheduling policies (for --sched / TSR_SCHED) and describes the\n"
		   "  machine: StarPU workers and memory nodes, CUDA devices, hwloc topology.\n"
		   "  Default: both.\n"
		   "  --config: the settings a run takes, where each comes from, and the workers\n"
		   "  started.\n"
		   "  --env: Tessera's environment switches, as a Markdown table (the README's).\n"
		   "  --version: Tessera's version.\n");
	print_flags(f);
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

/* The switches' table (runtime/env.c) as the README's Markdown table: one row per switch, with
 * its flag. */
static void env_table(void)
{
	const tsr_env_switch_t *t;
	int n = tsr_env_switches(&t);
	tsr_setting_t rows[64];
	tsr_settings(NULL, rows, 64);

	printf("| variable | flag | values | default | effect |\n"
	       "| --- | --- | --- | --- | --- |\n");
	for (int i = 0; i < n && i < 64; i++) {
		printf("| %s | %s | ", t[i].name, rows[i].flag ? rows[i].flag : "");
		for (const char *p = t[i].values; *p; p++)
			printf(*p == '|' ? "\\|" : "%c", *p); /* a bar inside a cell is escaped */
		printf(" | %s | %s |\n", t[i].fallback, t[i].meaning);
	}
}

/* The policies, one per line with its description. */
static void policies(void)
{
	const char *names[64], *desc[64];
	int n = tsr_policy_list(names, desc, 64);

	printf("scheduling policies (--sched NAME, TSR_SCHED=NAME, STARPU_SCHED=NAME):\n");
	for (int i = 0; i < n && i < 64; i++)
		printf("  %-32s %s\n", names[i], desc[i]);
}

/* The workers StarPU started, under which policy and ordering. */
static void workers(void)
{
	printf("machine:\n"
	       "  policy in use: %s\n"
	       "  task ordering: %s\n"
	       "  task data: %s\n"
	       "  idle workers: %s\n"
	       "  workers: %d (%d CPU, %d CUDA, %d OpenCL)\n",
	       tsr_sched_name(), tsr_deps_name(), tsr_taskdata_name(), tsr_idle_name(),
	       tsr_worker_count(), tsr_ncpu_workers(), tsr_ncuda_workers(), tsr_nopencl_workers());

	for (int w = 0; w < tsr_worker_count(); w++) {
		char name[64];
		starpu_worker_get_name(w, name, sizeof name);
		int node = tsr_worker_node(w);
		printf("    worker %d: %s (memory node %d: %s)\n", w, name, node, node_kind(node));
	}
}

static int machine(void)
{
	int rc = tsr_init(NULL);
	if (rc) {
		fprintf(stderr, "tessera-info: %s\n", tsr_last_error());
		return 1;
	}

	workers();
	printf("  memory nodes: %u\n  CUDA devices: %d\n  OpenCL devices: %d\n",
	       starpu_memory_nodes_get_count(), tsr_ncuda_workers(), tsr_nopencl_workers());
	topology();
	return tsr_finalize() ? 1 : 0;
}

/* --config: every setting, its value and where it came from; then the runtime they start. */
static int config(void)
{
	tsr_setting_t rows[64];
	int n = tsr_settings(NULL, rows, 64);

	printf("settings (first found wins: flag, TSR_ variable, STARPU_ variable, tsr_config_t, "
	       "default):\n");
	for (int i = 0; i < n && i < 64; i++)
		printf("  %-14s %-13s %-24s from %s\n", rows[i].name,
		       rows[i].flag ? rows[i].flag : "-", rows[i].value, rows[i].source);

	int rc = tsr_init(NULL);
	if (rc) {
		fprintf(stderr, "tessera-info: %s\n", tsr_last_error());
		return 1;
	}

	workers();
	return tsr_finalize() ? 1 : 0;
}

/* Whether the policy asked for (--sched or TSR_SCHED) is `help`. */
static int sched_help(void)
{
	tsr_setting_t rows[64];
	int n = tsr_settings(NULL, rows, 64);
	for (int i = 0; i < n && i < 64; i++)
		if (!strcmp(rows[i].name, "TSR_SCHED"))
			return !strcmp(rows[i].value, "help");
	return 0;
}

int main(int argc, char **argv)
{
	if (tsr_args(&argc, argv)) {
		fprintf(stderr, "tessera-info: %s\n", tsr_last_error());
		return 2;
	}
	if (sched_help()) {
		policies();
		return 0;
	}

	const char *mode = argc > 1 ? argv[1] : "";
	if (argc > 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(mode, "--help") || !strcmp(mode, "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(mode, "--version")) {
		printf("tessera-info (Tessera) %s\n", tsr_version(NULL, NULL, NULL));
		return 0;
	}
	if (!strcmp(mode, "--env")) {
		env_table();
		return 0;
	}
	if (!strcmp(mode, "--config"))
		return config();
	if (*mode && strcmp(mode, "--policies") && strcmp(mode, "--machine")) {
		usage(stderr);
		return 2;
	}

	if (strcmp(mode, "--machine"))
		policies();
	if (strcmp(mode, "--policies"))
		return machine();
	return 0;
}
