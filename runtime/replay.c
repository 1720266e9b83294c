/* replay.c: traces. A loop body's launches are analysed once, recorded, and replayed in later
 * iterations without their dependence analysis: by hand (tsr_trace_begin / tsr_trace_end around
 * the body) or found by Tessera itself (TSR_REPLAY=auto, the default: a repeated sequence of
 * launches in a bounded window). "Trace" here is the replay's word (Legion's); the timeline file
 * TSR_TIMELINE writes is another thing (records.c).
 *
 * What is recorded. The first time a body runs, each launch is analysed as usual, and kept: what
 * the call named (task, domain, requirements with their handles, privileges, fields and
 * projections, the size of its arguments, its reduction, whether it returns a future), what it
 * resolved to (the region, partition and subregion objects, the points' colors), and for every
 * point the handles coherence listed for it: the tokens of the last writers of the pieces it
 * touches (coherence.c), which is what the dependence analysis derives. And, per root field the
 * body touches, the field's pieces at the start (boxes, last writers, tokens): the state the
 * analysis read.
 *
 * What is checked at replay. At the start of an iteration, that every field the recording touched
 * is in the state the recording started from (the pieces' prints are equal; once a replay has
 * found them equal and nothing else has changed any piece since the last iteration ended, the
 * state is known to be the same without looking). Then, launch by launch: that the call names the
 * same things as the recorded one (futures excepted: a body makes new ones each time), that
 * nothing but the replay itself changed a piece since the previous launch (tsr__coh_changes: a
 * map, a fill or a launch outside the recording, a destroyed partition), and, once the launch has
 * passed its usual checks, that it resolved to the same objects and colors. (An index launch whose
 * handles still name the recorded objects, with no future, projection or REDUCE, does not resolve
 * again: what resolving and its checks would derive from the same live objects is what they
 * derived when it was recorded, and it takes that, colors included, from the recording:
 * tsr__replay_reuse.) Then each point is
 * submitted with the recorded dependences instead of asking coherence: the same handles coherence
 * would list, since the state it would read from is the recorded one. Everything else runs as
 * usual: the launch's checks (every error is reported as without a trace), the task and its
 * buffers, the writes it leaves in the pieces (so that the state stays exact), the reductions'
 * folds, futures, poison, the mapper, StarPU's or Tessera's ordering of the handles (order.c).
 *
 * Why each fallback exists (each is the full analysis for the rest of the iteration, never a
 * wrong graph): the stream differs (another launch, another partition, a fill or copy in the
 * middle): the recording says nothing about it; a piece changed behind the replay (a host map that
 * writes, a destroyed partition, a launch not in the recording): the recorded dependences were
 * derived from another state; the state at the start differs (the first iteration after the
 * fields were filled, say): ditto, so the iteration is recorded again; a launch failed, or its
 * recording was cut by a foreign change, or memory ran out while recording a launch: nothing
 * recorded after that point is replayed (a recording never aborts the program). Several
 * memory nodes (devices) and several ranks are analysed in full inside traces for now: there the
 * analysis also submits syncs and transfers (coherence.c, coherence_ranks.c), which a recording of
 * lists cannot stand for; TSR_STATS counts those launches. A later version may record them (a
 * rank would record what it submitted itself). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "launch.h"

/* ------------------------------------------------------------------ recordings */

/* One launch of a recording. */
struct rec_launch {
	struct launch_call call;
	tsr_req_t *reqs;        /* call.n, the call's own (call.reqs points here) */
	struct resolved_req *q; /* call.n, what they resolved to */
	int64_t npoints;        /* 1 for a single launch */
	int *colors;            /* npoints * n (index launches), else NULL */
	int *dep_first;         /* npoints + 1: point pi's in deps[dep_first[pi]..] */
	struct tsr_dep *deps;
	int ndeps, capdeps;
	int complete; /* analysed and submitted whole: it may be replayed */
	int lost;     /* out of memory while recording it: it is dropped at its end */
};

/* A root field the recording touched, and its pieces' prints at the start. */
struct touched {
	struct tsr_node *root;
	/* the root region and its id: is it still alive? (read before root is) */
	const struct tsr_region *region;
	uint64_t region_id;
	int first, n; /* its prints: prints[first .. first + n) */
};

struct trace {
	uint32_t id;
	int is_auto;
	struct rec_launch *v;
	int n, cap;
	/* launches 0 .. usable - 1 may be replayed (a foreign change or a failure cut the rest) */
	int usable;
	struct touched *touched;
	int ntouched, captouched;
	struct tsr_piece_print *prints;
	int nprints, capprints;
	/* the state at the start equals the recording's while no piece changes between two
	 * iterations (tsr__coh_changes was `steady_at` when the last iteration ended) */
	int steady;
	uint64_t steady_at;
	/* the last iteration ran the recording's launches whole, nothing changing the state between
	 * them: the state after its last launch is the one the recording's launches leave */
	int ran_whole;
	int record_again; /* the next iteration records */
	int warned;
	struct trace *next;
};

enum iter_mode {
	ITER_RECORD, /* the launches are recorded */
	ITER_REPLAY, /* the launches are replayed */
	ITER_FULL    /* analysed in full for the rest of the iteration */
};

/* The open iteration of a trace. */
static struct {
	struct trace *tr; /* NULL: no trace open */
	enum iter_mode mode;
	enum iter_mode began; /* the mode it began in */
	int pos;              /* launches seen in this iteration */
	uint64_t changes;     /* tsr__coh_changes after the last launch recorded or replayed */
	int foreign;          /* a foreign change stopped its replay or recording */
	int diverged;         /* a launch differed from the recording, or failed */
} cur;

static struct trace *traces;  /* the user's, by id */
static struct trace *auto_tr; /* the automatic mode's, while one is followed */
static int enabled;           /* one process, one memory node: lists stand for the analysis */
static int auto_on;           /* TSR_REPLAY=auto */
static struct tsr_piece_print *scratch;
static int capscratch;

/* Room for `need` elements in *v. 0, or TSR_ENOMEM with *v and *cap unchanged: a recording that
 * cannot grow is given up (the launch is analysed in full), never the program. */
static int grow(void **v, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return TSR_OK;

	int ncap = *cap ? *cap : 8;
	while (ncap < need)
		ncap *= 2;
	void *nv = realloc(*v, (size_t)ncap * elem);
	if (!nv)
		return TSR_ENOMEM;
	*v = nv;
	*cap = ncap;
	return TSR_OK;
}

#define GROW(arr, cap, need) grow((void **)&(arr), &(cap), (need), sizeof *(arr))

static void rec_clear(struct rec_launch *r)
{
	free(r->reqs);
	free(r->q);
	free(r->colors);
	free(r->dep_first);
	free(r->deps);
	memset(r, 0, sizeof *r);
}

/* Forget the recording (the trace records again). */
static void trace_clear(struct trace *tr)
{
	for (int i = 0; i < tr->n; i++)
		rec_clear(&tr->v[i]);
	tr->n = 0;
	tr->usable = 0;
	tr->ntouched = 0;
	tr->nprints = 0;
	tr->steady = 0;
	tr->ran_whole = 0;
	tr->record_again = 0;
}

static void trace_free(struct trace *tr)
{
	trace_clear(tr);
	free(tr->v);
	free(tr->touched);
	free(tr->prints);
	free(tr);
}

/* ------------------------------------------------------------------ the call stream */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint64_t box_hash(uint64_t h, const tsr_box_t *b)
{
	h = mix(h, (uint64_t)b->dim);
	for (int d = 0; d < b->dim && d < 3; d++)
		h = mix(mix(h, (uint64_t)b->lo[d]), (uint64_t)b->hi[d]);
	return h;
}

/* What the automatic mode compares: everything the call names but its arguments' bytes and its
 * futures' ids (a body makes new futures each time). */
static uint64_t call_hash(const struct launch_call *c)
{
	uint64_t h = mix((uintptr_t)c->t, (uint64_t)c->index);
	if (c->index)
		h = box_hash(h, &c->domain);
	h = mix(mix(h, (uint64_t)c->n), (uint64_t)c->arglen);
	h = mix(mix(h, (uint64_t)c->redop), (uint64_t)c->has_result);

	for (int i = 0; i < c->n; i++) {
		const tsr_req_t *q = &c->reqs[i];
		h = mix(mix(h, (uint64_t)q->kind), (uint64_t)q->priv);
		if (q->kind == TSR_REQ_FUTURE)
			continue;
		h = mix(mix(h, q->handle), (uint64_t)q->nfields);
		for (int k = 0; k < q->nfields && k < TSR_MAX_REQ_FIELDS; k++)
			h = mix(h, (uint64_t)q->fields[k]);
		h = mix(mix(h, (uintptr_t)q->proj), (uintptr_t)q->proj_arg);
	}

	return h;
}

/* A launch's call, and its hash once something needed it: only the automatic mode's window of
 * recent launches holds hashes; a replay compares the call itself with the recording, which spares
 * a replayed launch the hash (about 200 instructions). */
struct call_key {
	const struct launch_call *c;
	uint64_t h;
	int hashed;
};

static uint64_t key_hash(struct call_key *k)
{
	if (!k->hashed) {
		k->h = call_hash(k->c);
		k->hashed = 1;
	}
	return k->h;
}

static int same_req(const tsr_req_t *a, const tsr_req_t *b)
{
	if (a->kind != b->kind || a->priv != b->priv)
		return 0;
	if (a->kind == TSR_REQ_FUTURE)
		return 1;
	if (a->handle != b->handle || a->nfields != b->nfields || a->proj != b->proj ||
	    a->proj_arg != b->proj_arg)
		return 0;

	for (int k = 0; k < a->nfields && k < TSR_MAX_REQ_FIELDS; k++)
		if (a->fields[k] != b->fields[k])
			return 0;
	return 1;
}

/* The call is the recorded one (but for its arguments' bytes and its futures). */
static int same_call(const struct launch_call *a, const struct launch_call *b)
{
	if (a->t != b->t || a->index != b->index || a->n != b->n || a->arglen != b->arglen ||
	    a->redop != b->redop || a->has_result != b->has_result)
		return 0;
	if (a->index && !tsr__box_equal(&a->domain, &b->domain))
		return 0;

	for (int i = 0; i < a->n; i++)
		if (!same_req(&a->reqs[i], &b->reqs[i]))
			return 0;
	return 1;
}

/* ------------------------------------------------------------------ the state at the start */

static int same_print(const struct tsr_piece_print *a, const struct tsr_piece_print *b)
{
	return tsr__box_equal(&a->box, &b->box) && a->writer == b->writer && a->token == b->token &&
	       a->current == b->current;
}

/* Whether a root the recording touched is still the same live region. */
static int root_alive(const struct touched *t)
{
	return tsr__handle_get(TSR_K_REGION, t->region_id) == t->region;
}

/* Recording: the first time a launch touches a root field, its pieces as they are (no launch of
 * this iteration changed them yet, or it would have touched the field first). TSR_ENOMEM leaves
 * the fields touched so far as they were. */
static int touch(struct trace *tr, struct tsr_node *root)
{
	for (int i = 0; i < tr->ntouched; i++)
		if (tr->touched[i].root == root)
			return TSR_OK;

	int n = tsr__coh_print(root, NULL, 0);
	if (GROW(tr->prints, tr->capprints, tr->nprints + n) ||
	    GROW(tr->touched, tr->captouched, tr->ntouched + 1))
		return TSR_ENOMEM;

	tsr__coh_print(root, tr->prints + tr->nprints, n);
	tr->touched[tr->ntouched++] =
		(struct touched){root, root->region, root->region->id, tr->nprints, n};
	tr->nprints += n;
	return TSR_OK;
}

static int touch_launch(struct trace *tr, const struct resolved_req *q, int n)
{
	for (int i = 0; i < n; i++)
		if (tsr__uses_tree(&q[i]) || q[i].private_redop)
			for (int k = 0; k < q[i].nfields; k++)
				if (touch(tr, &q[i].root->nodes[q[i].fields[k]]))
					return TSR_ENOMEM;
	return TSR_OK;
}

/* Every field the recording touched is as it was when the recording started (0 when that cannot
 * be told for want of memory: the body is recorded again). */
static int state_matches(struct trace *tr)
{
	for (int i = 0; i < tr->ntouched; i++) {
		const struct touched *t = &tr->touched[i];
		if (!root_alive(t))
			return 0;

		int n = tsr__coh_print(t->root, NULL, 0);
		if (n != t->n)
			return 0;
		if (GROW(scratch, capscratch, n))
			return 0;
		tsr__coh_print(t->root, scratch, n);
		for (int k = 0; k < n; k++)
			if (!same_print(&scratch[k], &tr->prints[t->first + k]))
				return 0;
	}

	return 1;
}

/* ------------------------------------------------------------------ iterations */

/* Say once per trace why an iteration was not replayed (TSR_STATS counts them all). The
 * automatic mode says nothing: its sequences come and go with the program. */
static void warn(struct trace *tr, const char *why)
{
	if (tr->is_auto || tr->warned || tsr__rt.quiet)
		return;

	tr->warned = 1;
	fprintf(stderr,
		"tessera: trace %u: %s; the rest of this iteration is analysed in full and the "
		"body recorded again (said once per trace; TSR_STATS=1 counts them)\n",
		tr->id, why);
}

/* Open an iteration of tr: replay it if its recording can stand for it, else record it. */
static void iteration_begin(struct trace *tr)
{
	memset(&cur, 0, sizeof cur);
	cur.tr = tr;
	cur.changes = tsr__coh_changes;

	int can = tr->usable > 0 && !tr->record_again;
	/* nothing changed the state since the last iteration's last launch */
	int unchanged = tr->steady_at == tsr__coh_changes;
	if (can && !(tr->steady && unchanged))
		can = state_matches(tr);

	if (can) {
		cur.mode = cur.began = ITER_REPLAY;
		/* Steady: the start state is the recording's, and it is also the state the
		 * recording's launches leave (the last iteration ran them whole and nothing changed
		 * it since), so every iteration that replays them whole ends where it began. A
		 * start that matches only because something between two iterations (a host map that
		 * writes, say) brought the state back proves nothing of the sort: the next start is
		 * compared again. */
		tr->steady = unchanged && (tr->steady || tr->ran_whole);
		return;
	}

	if (tr->n)
		tsr__replay_counts.rerecorded++;
	trace_clear(tr);
	cur.mode = cur.began = ITER_RECORD;
}

/* Close the open iteration. */
static void iteration_end(void)
{
	struct trace *tr = cur.tr;

	if (cur.began == ITER_REPLAY) {
		int whole = cur.mode == ITER_REPLAY && cur.pos == tr->n;
		tsr__replay_counts.iterations += whole;
		tsr__replay_counts.fallbacks += cur.diverged || cur.foreign;
		/* shorter than recorded: the body is not what was recorded */
		if (cur.diverged || (cur.mode == ITER_REPLAY && cur.pos != tr->n))
			tr->record_again = 1;
	}

	/* the state after the iteration's last launch: a change after it (before the next
	 * iteration, or before the automatic mode sees the next launch) makes the next start
	 * look again */
	tr->ran_whole = cur.mode == cur.began && !cur.diverged && !cur.foreign &&
			tr->usable == tr->n && (cur.began == ITER_RECORD || cur.pos == tr->n);
	tr->steady = tr->steady && tr->ran_whole && !tr->record_again;
	tr->steady_at = cur.changes;
	cur.tr = NULL;
}

/* The rest of the iteration is analysed in full: the body differs from the recording (diverged),
 * or something changed the state behind it. */
static void go_full(const char *why, int diverged)
{
	if (cur.mode == ITER_REPLAY)
		warn(cur.tr, why);
	cur.mode = ITER_FULL;
	cur.diverged |= diverged;
	cur.foreign |= !diverged;
}

/* ------------------------------------------------------------------ the automatic mode */

/* Sequences of at most AUTO_MAX_PERIOD launches, repeated until at least AUTO_MIN_RUN launches
 * (and a whole period) follow their own copy one period earlier. */
#define AUTO_MAX_PERIOD 32
#define AUTO_MIN_RUN 8
#define AUTO_WINDOW (2 * AUTO_MAX_PERIOD)

static uint64_t window[AUTO_WINDOW]; /* the last launches' hashes */
static long nseen;
static int run[AUTO_MAX_PERIOD + 1]; /* run[p]: launches in a row equal to the one p before */
static int auto_period;

static void auto_forget(void)
{
	nseen = 0;
	memset(run, 0, sizeof run);
}

/* One more launch outside any trace: the period of the sequence it completes, or 0. */
static int auto_observe(uint64_t h)
{
	int found = 0;
	for (int p = 1; p <= AUTO_MAX_PERIOD; p++) {
		run[p] = nseen >= p && window[(nseen - p) % AUTO_WINDOW] == h ? run[p] + 1 : 0;
		int need = p > AUTO_MIN_RUN ? p : AUTO_MIN_RUN;
		if (!found && run[p] >= need)
			found = p;
	}

	window[nseen % AUTO_WINDOW] = h;
	nseen++;
	return found;
}

static void auto_drop(void)
{
	if (cur.tr && cur.tr == auto_tr)
		cur.tr = NULL;
	if (auto_tr)
		trace_free(auto_tr);
	auto_tr = NULL;
	auto_period = 0;
	auto_forget();
}

/* Whether the launch goes on the sequence: a recording iteration follows the window (the sequence
 * as it was found, by hash), others the recording (the call itself, which replay_one then need not
 * compare again). */
static int auto_expected(struct call_key *k)
{
	if (cur.began == ITER_RECORD)
		return window[(nseen - auto_period) % AUTO_WINDOW] == key_hash(k);
	return cur.pos < auto_tr->n && same_call(k->c, &auto_tr->v[cur.pos].call);
}

/* The automatic trace's iteration ends every period; a launch that leaves the sequence ends the
 * trace. Returns whether a trace is open for this launch. */
static int auto_follow(struct call_key *k)
{
	if (!auto_tr) {
		int p = auto_observe(key_hash(k));
		if (p && (auto_tr = calloc(1, sizeof *auto_tr))) {
			/* the next launch starts the sequence's first recorded iteration */
			auto_tr->is_auto = 1;
			auto_period = p;
			tsr__replay_counts.auto_found++;
		}
		return 0;
	}

	if (cur.tr && cur.pos == auto_period)
		iteration_end();
	if (!cur.tr)
		iteration_begin(auto_tr);

	if (!auto_expected(k)) {
		/* the program left the sequence: the open iteration is abandoned, this launch is
		 * analysed in full and the search starts again from it */
		tsr__replay_counts.fallbacks += cur.began == ITER_REPLAY;
		auto_drop();
		auto_observe(key_hash(k));
		return 0;
	}

	if (cur.began == ITER_RECORD) {
		window[nseen % AUTO_WINDOW] = key_hash(k);
		nseen++;
	}
	return 1;
}

/* ------------------------------------------------------------------ a launch */

/* The launch appended to the recording, or NULL when out of memory (nothing appended). */
static struct rec_launch *record_call(struct trace *tr, const struct launch_call *c)
{
	tsr_req_t *reqs = malloc((size_t)(c->n ? c->n : 1) * sizeof *reqs);
	if (!reqs || GROW(tr->v, tr->cap, tr->n + 1)) {
		free(reqs);
		return NULL;
	}

	struct rec_launch *r = &tr->v[tr->n++];
	memset(r, 0, sizeof *r);
	r->call = *c;
	r->reqs = reqs;
	if (c->n > 0) /* a launch without requirements may pass NULL */
		memcpy(r->reqs, c->reqs, (size_t)c->n * sizeof *r->reqs);
	r->call.reqs = r->reqs;
	return r;
}

/* Out of memory while recording task `name`'s launch: the recording stops before it, and this
 * launch and the rest of the iteration are analysed in full. The next iteration replays what was
 * recorded and records the body whole again after it (replay_one: past `usable`); nothing is
 * replayed from a recording that lacks a launch. */
static void record_lost(const char *name)
{
	char why[TSR_NAME_MAX + 64];

	snprintf(why, sizeof why, "out of memory while recording a launch of task '%s'", name);
	warn(cur.tr, why);
	tsr__replay_counts.fallbacks++;
	cur.mode = ITER_FULL;
}

/* The launch's fields mapped on the host: the launch itself refuses them (TSR_EBUSY). */
static int any_mapped(const struct rec_launch *r)
{
	for (int i = 0; i < r->call.n; i++) {
		const struct resolved_req *q = &r->q[i];
		if (q->kind == TSR_REQ_FUTURE)
			continue;
		for (int k = 0; k < q->nfields; k++)
			if (q->root->mapped[q->fields[k]])
				return 1;
	}
	return 0;
}

/* Replaying: the launch at cur.pos may be replayed. */
static void replay_one(struct replay_step *s, const struct launch_call *c)
{
	struct trace *tr = cur.tr;
	int changed = tsr__coh_changes != cur.changes;

	if (cur.pos >= tr->n) {
		go_full("the body has more launches than its recording", 1);
		return;
	}
	if (cur.pos >= tr->usable) {
		/* the recording stopped here (a foreign change): if none came this time, record the
		 * body whole next time */
		cur.mode = ITER_FULL;
		tr->record_again |= !changed;
		return;
	}
	if (changed) {
		go_full("a map, fill, launch or destroyed partition outside the recording changed "
			"the data's state between two of its launches",
			0);
		return;
	}

	struct rec_launch *r = &tr->v[cur.pos];
	/* the automatic mode compared the call already (auto_expected, in an iteration that began
	 * replaying: one still replaying did) */
	tsr__assert(!tr->is_auto || cur.began == ITER_REPLAY);
	if (!tr->is_auto && !same_call(c, &r->call)) {
		go_full("a launch differs from the recording (another task, partition, region, "
			"field, privilege or domain)",
			1);
		return;
	}
	if (any_mapped(r)) {
		go_full("a field the body uses is mapped on the host", 0);
		return;
	}

	s->mode = REPLAY_REPLAY;
	s->rec = r;
}

static void record_one(struct replay_step *s, const struct launch_call *c)
{
	if (tsr__coh_changes != cur.changes) {
		/* what follows is derived from a state a replay would not see again */
		cur.mode = ITER_FULL;
		cur.foreign = 1;
		return;
	}

	s->rec = record_call(cur.tr, c);
	if (!s->rec) {
		record_lost(c->t->name);
		return;
	}
	s->mode = REPLAY_RECORD;
}

void tsr__replay_step(struct replay_step *s, const struct launch_call *c)
{
	s->mode = REPLAY_NONE;
	s->rec = NULL;
	if (!cur.tr && !auto_on)
		return;
	if (!enabled) {
		/* devices or ranks: traces are analysed in full (see the top of this file) */
		tsr__replay_counts.launches += cur.tr != NULL;
		return;
	}

	struct call_key k = {.c = c};
	if ((!cur.tr || cur.tr->is_auto) && !auto_follow(&k))
		return;

	tsr__replay_counts.launches++;
	if (cur.mode == ITER_REPLAY)
		replay_one(s, c);
	else if (cur.mode == ITER_RECORD)
		record_one(s, c);
	cur.pos++;
}

/* Recording: what the launch resolved to, and the state of the fields it touches first. */
static int record_resolved(struct rec_launch *r, const struct resolved_req *q, int n,
			   const int *colors, int64_t npoints)
{
	size_t bytes = colors ? (size_t)npoints * (size_t)n * sizeof *colors : 0;
	r->q = malloc((size_t)(n ? n : 1) * sizeof *r->q);
	r->dep_first = calloc((size_t)npoints + 1, sizeof *r->dep_first);
	r->colors = colors ? malloc(bytes ? bytes : 1) : NULL;
	if (!r->q || !r->dep_first || (colors && !r->colors))
		return TSR_ENOMEM;

	memcpy(r->q, q, (size_t)n * sizeof *r->q);
	r->npoints = npoints;
	if (colors)
		memcpy(r->colors, colors, bytes);
	return touch_launch(cur.tr, q, n);
}

/* The launch being recorded is dropped (out of memory): the rest of the iteration is analysed in
 * full, this launch included. */
static void drop_last(struct replay_step *s)
{
	struct trace *tr = cur.tr;
	const char *name = s->rec->call.t->name;

	tsr__assert(tr->n > 0 && s->rec == &tr->v[tr->n - 1]);
	rec_clear(&tr->v[--tr->n]);
	s->mode = REPLAY_NONE;
	s->rec = NULL;
	record_lost(name);
}

void tsr__replay_resolved(struct replay_step *s, const struct resolved_req *q, int n,
			  const int *colors, int64_t npoints)
{
	struct rec_launch *r = s->rec;

	if (s->mode == REPLAY_RECORD) {
		if (record_resolved(r, q, n, colors, npoints))
			drop_last(s); /* out of memory: analysed in full, unrecorded */
		return;
	}

	if (s->mode != REPLAY_REPLAY)
		return;

	int same = r->npoints == npoints;
	for (int i = 0; i < n && same; i++)
		same = q[i].kind == TSR_REQ_FUTURE ||
		       (q[i].region == r->q[i].region && q[i].part == r->q[i].part &&
			q[i].private_redop == r->q[i].private_redop && q[i].redop == r->q[i].redop);
	if (same && colors)
		same = !memcmp(colors, r->colors, (size_t)npoints * (size_t)n * sizeof *colors);

	if (!same) {
		go_full("a launch resolved to other subregions than recorded (a projection gave "
			"other colors)",
			1);
		s->mode = REPLAY_NONE;
	}
}

/* Whether requirement i, as called, resolves to what the recording holds without resolving it:
 * its handle still names the recorded object (a destroyed one names nothing; an id is never
 * reused: handles.c), whose fields and partitions do not change while it lives. Not a future (a
 * new one each iteration), a projection (the user's function may answer otherwise this time) or
 * a REDUCE (whether it goes through private buffers depends on its region's partitions then). */
static int resolves_as_recorded(const tsr_req_t *u, const struct resolved_req *rq)
{
	if (u->proj || TSR_PRIV_IS_REDUCE(u->priv))
		return 0;
	if (u->kind == TSR_REQ_REGION)
		return rq->part == NULL && tsr__handle_get(TSR_K_REGION, u->handle) == rq->region;
	if (u->kind == TSR_REQ_PARTITION)
		return rq->part != NULL && tsr__handle_get(TSR_K_PARTITION, u->handle) == rq->part;
	return 0;
}

/* The recording's own checks (tsr__replay_resolved) compare what the launch resolved to; here
 * the launch does not resolve at all: replay_one found the call equal to the recorded one (task,
 * domain, handles, fields, privileges) and no field it uses mapped, and every handle still names
 * the recorded object. What resolving would derive from them is then what it derived then. */
int tsr__replay_reuse(const struct replay_step *s, const tsr_req_t *reqs, int n,
		      struct resolved_req *q, int **colors)
{
	if (s->mode != REPLAY_REPLAY)
		return 0;

	const struct rec_launch *r = s->rec;
	if (!r->call.index || !r->colors || r->call.n != n)
		return 0;
	for (int i = 0; i < n; i++)
		if (!resolves_as_recorded(&reqs[i], &r->q[i]))
			return 0;

	memcpy(q, r->q, (size_t)n * sizeof *q);
	*colors = r->colors;
	return 1;
}

void tsr__replay_deps(const struct replay_step *s, int64_t pi, struct tsr_deps *out)
{
	const struct rec_launch *r = s->rec;
	tsr__assert(s->mode == REPLAY_REPLAY && pi >= 0 && pi < r->npoints);
	out->v = r->deps + r->dep_first[pi];
	out->n = r->dep_first[pi + 1] - r->dep_first[pi];
	out->cap = out->n;
}

void tsr__replay_keep_deps(struct replay_step *s, int64_t pi, const struct tsr_deps *d)
{
	struct rec_launch *r = s->rec;
	tsr__assert(s->mode == REPLAY_RECORD && pi >= 0 && pi < r->npoints);
	if (r->lost)
		return;
	tsr__assert(r->dep_first[pi] == r->ndeps); /* points are kept in launch order */
	if (GROW(r->deps, r->capdeps, r->ndeps + d->n)) {
		r->lost = 1; /* tsr__replay_done drops the launch */
		return;
	}
	if (d->n > 0) /* a point with no dependences: r->deps may still be NULL */
		memcpy(r->deps + r->ndeps, d->v, (size_t)d->n * sizeof *d->v);
	r->ndeps += d->n;
	r->dep_first[pi + 1] = r->ndeps;
}

void tsr__replay_done(struct replay_step *s, int rc)
{
	if (s->mode == REPLAY_NONE) {
		tsr__replay_counts.full += cur.tr != NULL;
		return;
	}

	tsr__assert(cur.tr && cur.tr->n > 0); /* a recorded or replayed step is in the trace */
	if (!rc && s->mode == REPLAY_RECORD && s->rec->lost) {
		/* submitted, analysed in full, but not all of it recorded */
		drop_last(s);
		tsr__replay_counts.full++;
		return;
	}
	if (rc) {
		/* a launch that failed: nothing after it is replayed in this iteration (a recording
		 * keeps what came before it) */
		if (s->mode == REPLAY_RECORD)
			rec_clear(&cur.tr->v[--cur.tr->n]);
		go_full("a launch failed", 1);
		return;
	}

	if (s->mode == REPLAY_RECORD) {
		s->rec->complete = 1;
		if (cur.tr->usable == cur.tr->n - 1)
			cur.tr->usable = cur.tr->n;
		tsr__replay_counts.recorded++;
	} else {
		tsr__replay_counts.replayed++;
		tsr__replay_counts.replayed_tasks += s->rec->npoints;
	}
	cur.changes = tsr__coh_changes;
}

/* ------------------------------------------------------------------ the API */

static struct trace *trace_of(uint32_t id)
{
	for (struct trace *tr = traces; tr; tr = tr->next)
		if (tr->id == id)
			return tr;

	struct trace *tr = calloc(1, sizeof *tr);
	if (!tr)
		return NULL;
	tr->id = id;
	tr->next = traces;
	traces = tr;
	return tr;
}

int tsr_trace_begin(uint32_t id)
{
	TSR_REQUIRE_INIT("tsr_trace_begin");
	if (cur.tr && !cur.tr->is_auto)
		return tsr__err(TSR_ESTATE,
				"tsr_trace_begin(%u): trace %u is open; traces do not nest (call "
				"tsr_trace_end(%u) first)",
				id, cur.tr->id, cur.tr->id);

	uint32_t what = id;
	tsr__dist_note("tsr_trace_begin", &what, sizeof what);
	struct trace *tr = trace_of(id);
	if (!tr)
		return tsr__err(TSR_ENOMEM, "tsr_trace_begin(%u): out of memory", id);

	/* a sequence the automatic mode follows gives way to the user's traces */
	auto_drop();
	iteration_begin(tr);
	return TSR_OK;
}

int tsr_trace_end(uint32_t id)
{
	TSR_REQUIRE_INIT("tsr_trace_end");
	if (!cur.tr || cur.tr->is_auto)
		return tsr__err(TSR_ESTATE,
				"tsr_trace_end(%u): no trace is open (tsr_trace_begin first)", id);
	if (cur.tr->id != id)
		return tsr__err(TSR_EINVAL,
				"tsr_trace_end(%u): the open trace is %u (a trace ends with the "
				"id it began with)",
				id, cur.tr->id);

	uint32_t what = id;
	tsr__dist_note("tsr_trace_end", &what, sizeof what);
	iteration_end();
	return TSR_OK;
}

int tsr_trace_stats(tsr_trace_stats_t *out)
{
	TSR_REQUIRE_INIT("tsr_trace_stats");
	if (!out)
		return tsr__err(TSR_EINVAL, "tsr_trace_stats: null output");

	const struct tsr_replay_counts *c = &tsr__replay_counts;
	memset(out, 0, sizeof *out);
	out->launches = c->launches;
	out->recorded = c->recorded;
	out->replayed = c->replayed;
	out->replayed_tasks = c->replayed_tasks;
	out->full = c->full;
	out->iterations = c->iterations;
	out->fallbacks = c->fallbacks;
	out->rerecorded = c->rerecorded;
	out->auto_found = c->auto_found;
	return TSR_OK;
}

int tsr__replay_init(void)
{
	enum { AUTO, OFF };
	int mode;

	int rc = tsr__env_choice("TSR_REPLAY", "tsr_init", &mode);
	auto_on = rc == TSR_OK && mode == AUTO;
	memset(&tsr__replay_counts, 0, sizeof tsr__replay_counts);
	return rc;
}

void tsr__replay_start(void)
{
	enabled = !tsr__dist.on && !tsr__coh_tokens();
	if (tsr__dist.on)
		tsr__replay_counts.full_reason = "several ranks";
	else if (tsr__coh_tokens())
		tsr__replay_counts.full_reason = "several memory nodes";
}

void tsr__replay_fini(void)
{
	auto_drop();
	while (traces) {
		struct trace *tr = traces;
		traces = tr->next;
		trace_free(tr);
	}

	memset(&cur, 0, sizeof cur);
	free(scratch);
	scratch = NULL;
	capscratch = 0;
}
