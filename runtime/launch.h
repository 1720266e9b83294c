/* launch.h: what the launch files share, and no other file includes: validation (launch_check.c),
 * the ranks' part (launch_ranks.c) and submission (launch.c). A launch runs
 * validate -> coherence -> order -> submit: launch_check.c checks everything before anything is
 * submitted; launch.c then asks coherence (coherence_entry.c) what each point waits for, and
 * submits the point's task through order.c. */
#ifndef TSR_LAUNCH_H
#define TSR_LAUNCH_H

#include "internal.h"

/* A requirement as the launch found it: handles looked up, fields checked, the reduction
 * decided. */
struct resolved_req {
	int kind;
	struct tsr_region *region;  /* TSR_REQ_REGION */
	struct tsr_partition *part; /* TSR_REQ_PARTITION */
	struct tsr_future *fut;     /* TSR_REQ_FUTURE */
	struct tsr_region *root;
	int nfields;
	int fields[TSR_MAX_REQ_FIELDS];
	tsr_privilege_t priv;
	int redop; /* REDUCE op, 0 otherwise */
	/* REDUCE into a private buffer and a fold (an aliased partition, or folds in color order):
	 * the operator, 0 otherwise */
	int private_redop;
	tsr_projection_fn proj;
	void *proj_arg;
};

/* Where a launch's points may run: a registered operator (its identity and fold are CPU code)
 * keeps them on CPUs, and why says so for the mapper's messages. */
struct tsr_placement {
	int cpu_only;
	char why[320];
};

#define TSR_FEW_COLORS 32

/* An index launch: everything it allocates, released on one path whatever step failed. */
struct index_launch {
	struct tsr_task *t;
	tsr_box_t domain;
	int64_t npoints;
	int n;
	/* n requirements as resolved: the caller's array, which resolving fills (not zeroed with
	 * the rest: TSR_MAX_REQS of them are about 10 KiB, cleared for nothing at every launch) */
	struct resolved_req *q;
	/* colors[pi * n + i]: requirement i's color at point pi, -1 if none; few_colors when they
	 * fit there (a small launch, every step of a loop, allocates nothing for them) */
	int *colors;
	int few_colors[TSR_FEW_COLORS];
	/* q and colors are a replay's recording (replay.c): the launch did not resolve them, and
	 * colors is not its own to free */
	int recorded;
	tsr_mapping_t *maps;            /* one per point; NULL when nothing maps points */
	int *ranks;                     /* several ranks: the rank of each point */
	struct tsr_pending_fold *folds; /* private reduction buffers, folded after the points */
	int nfolds;
	struct tsr_future *res; /* the result future, or NULL */
	/* ordered reduction of the returns: one partial value per point */
	struct tsr_partials *parts;
	struct tsr_placement pl; /* where the points may run */
	/* the task graph's node of each point (TSR_DAG): the fold of the returns follows them */
	int *dag_ids;
	/* several ranks, a reduced result: where the points' values lie once gathered */
	struct tsr_fold_plan *plan;
};

/* The requirement whose color maps a point (owners, locality): the first partition requirement
 * that writes, else the first partition requirement; -1 if none. */
static inline int tsr__map_req(int n, const struct resolved_req *q)
{
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < n; i++)
			if (q[i].kind == TSR_REQ_PARTITION && (pass == 1 || q[i].priv != TSR_READ))
				return i;
	return -1;
}

/* Requirements that go through the region tree (coherence); futures and private reduction
 * buffers do not. */
static inline int tsr__uses_tree(const struct resolved_req *q)
{
	return q->kind != TSR_REQ_FUTURE && !q->private_redop;
}

/* ---- replay.c: traces. A launch tells replay.c what was called (tsr__replay_step), then what
 * it resolved to (tsr__replay_resolved); the step then says whether the launch is recorded, or
 * replayed with the dependences its recording holds; tsr__replay_done closes it. */
/* The call, as the user made it. */
struct launch_call {
	const struct tsr_task *t;
	int index; /* tsr_index_launch (domain given) or tsr_launch */
	tsr_box_t domain;
	int n;
	const tsr_req_t *reqs;
	size_t arglen;
	int redop;
	int has_result;
};

enum replay_mode {
	REPLAY_NONE,   /* analysed as usual */
	REPLAY_RECORD, /* analysed as usual, and what it derived is recorded */
	REPLAY_REPLAY  /* its dependences come from the recording */
};

struct rec_launch;
struct replay_step {
	enum replay_mode mode;
	struct rec_launch *rec;
};

void tsr__replay_step(struct replay_step *s, const struct launch_call *c);
/* After the checks: a replay goes on only if the launch resolved as recorded (the same objects,
 * fields, privileges and colors); a recording keeps what it resolved to. */
void tsr__replay_resolved(struct replay_step *s, const struct resolved_req *q, int n,
			  const int *colors, int64_t npoints);
/* Replaying an index launch: 1 when it resolves as recorded without looking again, with q and
 * *colors the recording's (colors: a view into the recording, valid until tsr__replay_done; the
 * launch's checks passed on them when they were recorded); 0: resolve and check as usual. */
int tsr__replay_reuse(const struct replay_step *s, const tsr_req_t *reqs, int n,
		      struct resolved_req *q, int **colors);
/* Replaying: point pi's recorded dependences (a view into the recording, valid until
 * tsr__replay_done). */
void tsr__replay_deps(const struct replay_step *s, int64_t pi, struct tsr_deps *out);
/* Recording: point pi's dependences, as coherence derived them. */
void tsr__replay_keep_deps(struct replay_step *s, int64_t pi, const struct tsr_deps *d);
/* The launch is submitted (rc 0) or failed. */
void tsr__replay_done(struct replay_step *s, int rc);

/* ---- launch_check.c: every check, before anything is submitted */
int tsr__check_counts(const char *fn, const struct tsr_task *t, int nreqs, const tsr_req_t *reqs,
		      const void *args, size_t arglen);
/* Look up every requirement's handles and fields (index: an index launch's). */
int tsr__resolve_all(const char *tn, int nreqs, const tsr_req_t *reqs, int index,
		     struct resolved_req *q);
/* requirements that interfere */
int tsr__check_pairs(const char *tn, int n, struct resolved_req *q, int index);
int tsr__check_points(const char *tn, int n, const struct resolved_req *q, int64_t npoints,
		      const int *colors);
int tsr__check_index_args(const struct tsr_task *t, tsr_box_t domain, int nreqs,
			  const tsr_req_t *reqs, const void *args, size_t arglen, tsr_redop_t redop,
			  const tsr_future_t *result);
int tsr__compute_colors(struct index_launch *L); /* every point's color per requirement */
int tsr__check_writes_distinct(const struct index_launch *L);
int tsr__check_result_redop(const struct tsr_task *t, const tsr_launch_t *how);

/* TSR_ENODEV, naming the task (and the operator), when no running worker can run the points: the
 * task's variants against the workers, narrowed to CPUs by a registered operator (of a REDUCE
 * requirement, or ret_op for the returns). StarPU, given such a task, looks for a worker forever.
 */
int tsr__check_placement(const struct tsr_task *t, int n, const struct resolved_req *q, int ret_op,
			 struct tsr_placement *pl);
/* "task 'x': no worker can run it (it has ...; the runtime runs ...)"; cpu_why: what keeps it on
 * CPUs, or NULL */
int tsr__no_worker_error(const struct tsr_task *t, const char *cpu_why);

/* ---- launch_ranks.c: several ranks */
void tsr__note_launch(const char *call, const struct tsr_task *t, int nreqs, const tsr_req_t *reqs,
		      tsr_box_t domain);
/* or TSR_ALL_RANKS */
int tsr__single_rank(const struct tsr_task *t, int n, const struct resolved_req *q);
int tsr__decide_ranks(struct index_launch *L);
/* Several ranks: whether the launch goes the structured way (coherence_sym.c): every requirement
 * a future or a partition by the identity projection, none reducing, and the boxes each one
 * writes filling one box (covers[i]); no mapper. */
int tsr__launch_structured(const struct index_launch *L, tsr_box_t covers[]);
/* This rank's points (linear indexes of the domain, ascending), from the mapping partition. */
int tsr__launch_mine(const struct index_launch *L, struct tsr_ivec *mine);

#endif
