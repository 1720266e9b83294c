/* timeline.h: what records.c records of a run and timeline.c writes as trace events (TSR_TIMELINE):
 * the tasks that ran, the data they moved, the launches on the host thread. Times are ns on
 * StarPU's clock (its profiling's). */
#ifndef TSR_TIMELINE_H
#define TSR_TIMELINE_H

#include "internal.h"

/* One task that ran: a point task, or one of Tessera's own (a fill, copy, fold or sync). */
struct tl_task {
	const char *name;
	int internal;
	int pdim;
	int64_t point[3];
	int worker;
	int dag_id; /* node in the task graph, or -1 */
	int launch;
	int64_t submit, start, end;
};

/* Data a task moved: its inputs fetched over a bus (src -> dst memory nodes) during its fetch
 * phase, or what a tsr_copy copied within its worker's node (src == dst). */
enum tl_xfer_kind { TL_FETCH, TL_COPY };

struct tl_xfer {
	int kind;
	int src, dst;
	long long bytes;
	int64_t start, end;
	size_t task; /* index of the task that moved it */
};

/* One launch (tsr_launch, tsr_index_launch, tsr_fill, tsr_copy) on the host thread. */
struct tl_host {
	const char *name;
	int launch;
	int64_t start, end;
};

struct tl_run {
	const struct tl_task *tasks;
	size_t ntasks;
	const struct tl_xfer *xfers;
	size_t nxfers;
	const struct tl_host *host;
	size_t nhost;
	const struct tsr_mpi_xfer *mpi;
	size_t nmpi;
	const struct bus_row *bus;
	int nbus;
	int64_t t0;   /* tsr_init: the timeline's 0 */
	int flows;    /* dependence arrows from the task graph (TSR_TIMELINE_FLOWS) */
	int complete; /* 0: written at exit, tsr_finalize never came */
};

int tsr__timeline_write(const char *file, const struct tl_run *run);

#endif
