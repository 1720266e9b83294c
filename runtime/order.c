/* order.c: Tessera orders the tasks on its views itself (explicit dependences).
 *
 * StarPU's sequential consistency derives a task's dependences from the handles it lists: per
 * handle the last writer and the readers since. It does so under a lock per handle, with a list
 * node and a dependence structure allocated per access and freed by the worker that ends the
 * task; on the small stencil that was half of the host thread's time (apps/bench/README.md).
 * Tessera already knows, per piece, which handles an access must list; in one process with one
 * memory node it also keeps the per-handle state itself, on its one host thread, with no lock:
 * the views' handles are registered without sequential consistency, and every task that lists
 * one gets its dependences through starpu_task_declare_deps_array. The rule is StarPU's own: a
 * read waits for the handle's last writer, a write for the readers since (or, if none, the last
 * writer). Handles Tessera does not track (futures, private reduction buffers) keep StarPU's.
 *
 * A task that another may still name must stay alive: tracked tasks are not detached, each holds
 * a count of the handles that name it, and once none does and StarPU has finished it, the host
 * thread destroys it (the oldest, one at each submission; all that finished after a wait). A
 * reader is dropped from a handle's state once its variant has run (a flag its wrapper sets).
 *
 * What else touches a view goes through here too: a host mapping waits for the tasks the access
 * would wait for (then StarPU's acquire keeps later tasks off the data until the unmap), and
 * before a view is unregistered its handle goes back to sequential consistency behind a no-op
 * task that waits for its last accesses, so that StarPU's unregistration waits for that task.
 *
 * Several ranks (one memory node each): the views are tracked here too, but not the transfer
 * views (coherence_ranks.c): StarPU-MPI's sends and receives go through their handles and order
 * themselves by StarPU's sequential consistency, so those handles keep it, and a task that lists
 * one keeps it as a buffer. A read through a halo of pieces that other local tasks wrote then waits
 * for them without listing their views (the middle fake rank of a stencil: 12 -> 8 buffers a
 * point).
 *
 * Off (TSR_DEPS=implicit, or forced): several memory nodes (GPUs: syncs and tokens are StarPU's
 * business), or StarPU's unordered reductions (TSR_REDUX=unordered: REDUX needs sequential
 * consistency to fold). */
#define _GNU_SOURCE /* dladdr, RTLD_DEFAULT, RTLD_NOLOAD */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "config.h" /* TSR_STARPU_NOTIFY_FIXED, TSR_STARPU_NOTIFY_MARKER */
#include "internal.h"

/* A tracked task: how many handle states name it, and the FIFO of tasks no state names. A point
 * task's wrapper sets `ran` once its CPU variant has run (its context points here: flagged). */
struct tsr_oref {
	struct starpu_task *task;
	int refs;
	int flagged;
	_Atomic int ran;
	struct tsr_oref *next;
};

/* One tracked handle: its last writer and the readers since; linked into the list of all states
 * (a full wait forgets them all). */
struct tsr_order {
	struct tsr_oref *writer;
	struct tsr_oref **readers;
	int nreaders, cap;
	struct tsr_order *prev, *next;
};

/* Free task records kept for reuse, at most this many. */
#define TSR_OREF_KEEP 4096

/* A submission destroys one finished task, the oldest: it then frees one task, its job and its
 * dependence lists as it allocates the same for its own, which glibc serves from its per-thread
 * cache. A whole batch at once (the tasks that finished while the host thread waited for the
 * window) overflowed that cache into malloc's slow paths for the frees and the allocations after
 * them: a fifth of the host thread's time on Task Bench stencil_1d (apps/bench/README.md, "One
 * reap a submission"). Past REAP_BACKLOG tasks no state names, more go at once, so that a burst
 * of them (a write after many readers) is not held until the next wait. */
#define REAP_BACKLOG 1024
#define REAP_DRAIN 8

static int wanted = 1;                               /* TSR_DEPS: explicit (default) or implicit */
static int direct_wanted = 1;                        /* TSR_TASKDATA: direct (default) or buffers */
static int active;                                   /* wanted, and this run can (see the header) */
static struct tsr_order *states;                     /* every tracked handle's state */
static struct tsr_oref *unnamed_head, *unnamed_tail; /* tasks no state names, to destroy once
							finished */
static long nunnamed;                                /* their number (REAP_BACKLOG) */
static struct tsr_oref *spare;                       /* free records */
static int nspare;
static struct starpu_task **deps; /* the dependences of the task being submitted */
static int ndeps, capdeps;

/* ------------------------------------------------------------------ is explicit safe here? */

#ifdef TSR_STARPU_NOTIFY_MARKER
/* Does the libstarpu this process runs with export the notify patch's marker? Its path in `path`
 * for the messages. Looked up in that library itself (dladdr of one of its functions), so that a
 * libtessera loaded with RTLD_LOCAL finds it too; else in the global scope. */
static int loaded_starpu_has_marker(char *path, size_t len)
{
	int (*probe)(struct starpu_conf *) = starpu_init;
	void *fn;
	Dl_info info;
	void *lib = NULL;

	memcpy(&fn, &probe, sizeof fn); /* a function's address as dladdr takes it (POSIX) */
	snprintf(path, len, "libstarpu");
	if (dladdr(fn, &info) && info.dli_fname && info.dli_fname[0]) {
		snprintf(path, len, "%s", info.dli_fname);
		lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	}

	const int *marker = dlsym(lib ? lib : RTLD_DEFAULT, "starpu_tsr_notify_cg_fix");
	int fixed = marker && *marker >= 1;
	if (lib)
		dlclose(lib);
	return fixed;
}
#endif

/* StarPU 1.4 without the notify fix (configure, m4/tsr_starpu_notify.m4) may notify a successor
 * declared on a terminating task twice: there the default is implicit, and explicit is refused.
 * configure knows the StarPU Tessera is built against; where the fix came from
 * tools/starpu-1.4-notify-cg.patch (TSR_STARPU_NOTIFY_MARKER), the libstarpu actually loaded must
 * have it too: one of the same soname without it, loaded in its place (LD_LIBRARY_PATH), would
 * otherwise race unnoticed. 1 when explicit is safe; else 0 and what lacks the fix in `why`. */
static int explicit_safe(char *why, size_t len)
{
#if !defined(TSR_STARPU_NOTIFY_FIXED)
	snprintf(why, len,
		 "StarPU %d.%d lacks the notify fix (tools/starpu-1.4-notify-cg.patch), "
		 "without which a task may start before its predecessors end",
		 STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION);
	return 0;
#elif defined(TSR_STARPU_NOTIFY_MARKER)
	char path[1024];
	if (loaded_starpu_has_marker(path, sizeof path))
		return 1;
	snprintf(why, len,
		 "the libstarpu loaded (%s) lacks the notify fix "
		 "(tools/starpu-1.4-notify-cg.patch: it exports no starpu_tsr_notify_cg_fix), "
		 "which the StarPU this Tessera was built against has; without it a task may "
		 "start before its predecessors end",
		 path);
	return 0;
#else
	(void)why;
	(void)len;
	return 1;
#endif
}

#ifdef TSR_STARPU_NOTIFY_FIXED
/* Said once per process: this Tessera was built for explicit dependences, the libstarpu it runs
 * with cannot take them. A build against an unpatched StarPU says so at configure time instead. */
static void say_fallback(const char *why, int quiet)
{
	static int said;

	if (said || quiet)
		return;
	said = 1;
	fprintf(stderr,
		"tessera: tsr_init: %s; tasks are ordered through StarPU's implicit "
		"dependences (as with TSR_DEPS=implicit)\n",
		why);
}
#endif

int tsr__order_init(int quiet)
{
	enum { EXPLICIT, IMPLICIT };
	int mode;
	char why[1400];

	active = 0;
	int rc = tsr__env_choice("TSR_DEPS", "tsr_init", &mode);
	if (rc)
		return rc;

	enum { DIRECT, BUFFERS };
	int data;
	rc = tsr__env_choice("TSR_TASKDATA", "tsr_init", &data);
	if (rc)
		return rc;
	direct_wanted = data == DIRECT;

	wanted = 0;
	if (mode != EXPLICIT)
		return TSR_OK;
	if (explicit_safe(why, sizeof why)) {
		wanted = 1;
		return TSR_OK;
	}
	if (tsr__env("TSR_DEPS"))
		return tsr__err(TSR_EINVAL,
				"tsr_init: TSR_DEPS=explicit: %s; use TSR_DEPS=implicit or a "
				"StarPU built by tools/build-starpu.sh",
				why);
#ifdef TSR_STARPU_NOTIFY_FIXED
	say_fallback(why, quiet);
#endif
	return TSR_OK;
}

void tsr__order_start(int can)
{
	active = wanted && can;
}

int tsr__order_active(void)
{
	return active;
}

/* ------------------------------------------------------------------ task records */

static struct tsr_oref *oref_new(struct starpu_task *task)
{
	struct tsr_oref *o = spare;
	if (o) {
		tsr__assert(nspare > 0);
		spare = o->next;
		nspare--;
	} else if (!(o = malloc(sizeof *o))) {
		return NULL;
	}

	o->task = task;
	o->refs = 0;
	o->flagged = 0;
	atomic_store_explicit(&o->ran, 0, memory_order_relaxed);
	o->next = NULL;
	return o;
}

static void oref_free(struct tsr_oref *o)
{
	if (nspare >= TSR_OREF_KEEP) {
		free(o);
		return;
	}

	o->next = spare;
	spare = o;
	nspare++;
}

/* No state names o's task any more: it goes once StarPU has finished it. */
static void unref(struct tsr_oref *o)
{
	tsr__assert(o->refs > 0);
	if (--o->refs > 0)
		return;

	o->next = NULL;
	if (unnamed_tail)
		unnamed_tail->next = o;
	else
		unnamed_head = o;
	unnamed_tail = o;
	nunnamed++;
}

/* Whether o's task is done with its data: its variant ran (a flagged point task: an atomic read),
 * else what StarPU says (a lock of the task's job). */
static int reader_done(struct tsr_oref *o)
{
	if (o->flagged)
		return atomic_load_explicit(&o->ran, memory_order_acquire);
	return starpu_task_finished(o->task);
}

/* A task StarPU will not run, or has finished (the flag only says who else would destroy it). */
static void destroy(struct starpu_task *task)
{
	task->destroy = 0;
	starpu_task_destroy(task);
}

/* At a submission: destroy the oldest task of the FIFO if StarPU has finished it (more past the
 * backlog: see REAP_BACKLOG). A flagged task whose variant has not run is not asked about. */
static void reap_head(void)
{
	int budget = nunnamed > REAP_BACKLOG ? REAP_DRAIN : 1;

	while (budget-- > 0 && unnamed_head) {
		struct tsr_oref *o = unnamed_head;
		if (o->flagged && !atomic_load_explicit(&o->ran, memory_order_acquire))
			return;
		if (!starpu_task_finished(o->task))
			return;

		unnamed_head = o->next;
		if (!unnamed_head)
			unnamed_tail = NULL;
		nunnamed--;
		destroy(o->task);
		oref_free(o);
	}
}

/* After the host waited: destroy every finished task in the FIFO, not only those at its head (a
 * task still running there would otherwise keep everything behind it until the next submission,
 * and the host may wait a long time before it submits again). After a full wait that is all. */
static void reap_finished(void)
{
	struct tsr_oref *prev = NULL;
	struct tsr_oref *o = unnamed_head;

	while (o) {
		struct tsr_oref *next = o->next;
		if (!starpu_task_finished(o->task)) {
			prev = o;
			o = next;
			continue;
		}

		if (prev)
			prev->next = next;
		else
			unnamed_head = next;
		if (unnamed_tail == o)
			unnamed_tail = prev;
		nunnamed--;

		destroy(o->task);
		oref_free(o);
		o = next;
	}
}

static void prune_readers(struct tsr_order *s);

/* ------------------------------------------------------------------ handle states */

int tsr__order_track(starpu_data_handle_t h)
{
	if (!active)
		return TSR_OK;

	tsr__assert(h != NULL); /* registered just before */
	struct tsr_order *s = calloc(1, sizeof *s);
	if (!s)
		return TSR_ENOMEM;

	s->next = states;
	if (states)
		states->prev = s;
	states = s;

	starpu_data_set_user_data(h, s);
	starpu_data_set_sequential_consistency_flag(h, 0);
	return TSR_OK;
}

/* Transfer views and futures' values (several ranks) are never tracked, and their user data is
 * xfer.c's queue. */
static struct tsr_order *state_of(starpu_data_handle_t h)
{
	if (!active)
		return NULL;
	if (tsr__dist.on && tsr__is_xfer(h))
		return NULL;
	return starpu_data_get_user_data(h);
}

int tsr__order_tracks(starpu_data_handle_t h)
{
	return state_of(h) != NULL;
}

static void state_forget(struct tsr_order *s)
{
	for (int i = 0; i < s->nreaders; i++)
		unref(s->readers[i]);
	s->nreaders = 0;

	if (s->writer)
		unref(s->writer);
	s->writer = NULL;
}

static void state_unlink(struct tsr_order *s)
{
	tsr__assert(s->prev || states == s);
	if (s->prev)
		s->prev->next = s->next;
	else
		states = s->next;

	if (s->next)
		s->next->prev = s->prev;
}

/* ------------------------------------------------------------------ dependences */

static int dep_add(struct starpu_task *t)
{
	for (int i = 0; i < ndeps; i++)
		if (deps[i] == t)
			return TSR_OK;

	if (ndeps == capdeps) {
		int ncap = capdeps ? 2 * capdeps : 32;
		struct starpu_task **nv = realloc(deps, (size_t)ncap * sizeof *nv);
		if (!nv)
			return TSR_ENOMEM;
		deps = nv;
		capdeps = ncap;
	}

	deps[ndeps++] = t;
	return TSR_OK;
}

/* What an access in mode m to the handle of state s waits for: the last writer for a read; the
 * readers since, else the last writer, for a write. `self` (a task listing the handle twice) is
 * skipped. */
static int state_deps(const struct tsr_order *s, enum starpu_data_access_mode m,
		      const struct starpu_task *self)
{
	int write = (m & STARPU_W) || m == TSR_WAIT_AS_WRITE;

	if (write && s->nreaders) {
		for (int i = 0; i < s->nreaders; i++)
			if (s->readers[i]->task != self && dep_add(s->readers[i]->task))
				return TSR_ENOMEM;
		return TSR_OK;
	}

	if (s->writer && s->writer->task != self)
		return dep_add(s->writer->task);
	return TSR_OK;
}

/* Drop the readers done with their data: nothing needs to wait for them, and a view that is read
 * again and again but never written (a halo tile's) would otherwise keep every reader alive. A
 * write after a dropped reader may start before StarPU ends that reader: the reader's variant has
 * run, and a task that lists StarPU data still waits for the data's release in StarPU. */
static void prune_readers(struct tsr_order *s)
{
	int kept = 0;

	for (int i = 0; i < s->nreaders; i++) {
		if (reader_done(s->readers[i]))
			unref(s->readers[i]);
		else
			s->readers[kept++] = s->readers[i];
	}

	s->nreaders = kept;
}

/* After a wait of the host: the states forget the tasks StarPU has finished (a view read again and
 * again but never written keeps its readers until its list fills up otherwise), and the finished
 * tasks no state names any more are destroyed. */
void tsr__order_reap(void)
{
	for (struct tsr_order *s = states; s; s = s->next) {
		prune_readers(s);
		if (s->writer && starpu_task_finished(s->writer->task)) {
			unref(s->writer);
			s->writer = NULL;
		}
	}

	if (unnamed_head)
		reap_finished();
}

/* Room for `more` more readers in state s (so that the update cannot fail); a full list first
 * loses its finished readers, so it grows only with the readers in flight. */
static int reserve_in(struct tsr_order *s, int more)
{
	int need = s->nreaders + more;
	if (need <= s->cap)
		return TSR_OK;

	/* grow unless pruning freed half the array: a handle many live tasks read would otherwise
	 * be pruned (a lock per reader in starpu_task_finished) at every submission reading it */
	prune_readers(s);
	need = s->nreaders + more;
	if (2 * need <= s->cap)
		return TSR_OK;

	int ncap = s->cap ? 2 * s->cap : 4;
	while (ncap < need)
		ncap *= 2;
	struct tsr_oref **nv = realloc(s->readers, (size_t)ncap * sizeof *nv);
	if (!nv && need <= s->cap)
		return TSR_OK; /* growing was only ahead of time */
	if (!nv)
		return TSR_ENOMEM;
	s->readers = nv;
	s->cap = ncap;
	return TSR_OK;
}

/* Whether h is one of the task's buffers. */
static int is_buffer(const struct starpu_task *task, starpu_data_handle_t h)
{
	for (int b = 0; b < task->nbuffers; b++)
		if (STARPU_TASK_GET_HANDLE(task, b) == h)
			return 1;
	return 0;
}

/* The states one submission touches, looked up once: every step below used to look each up
 * again (a call into StarPU per handle and step: eleven a point of the small stencil). One host
 * thread: the arrays are reused by every submission. */
struct looked {
	struct tsr_order **buf;  /* per buffer: its handle's state, NULL if untracked */
	struct tsr_order **wait; /* per wait: its handle's state, NULL if untracked or not a wait */
	struct tsr_order **rwait; /* per wait as a read: the state it makes the task a reader of
				     (NULL where a buffer already does) */
	int nbuf, nwaits;
	int tracked; /* any of them */
};

static struct tsr_order **look_v;
static int look_cap;

static int look_up(const struct starpu_task *task, const struct tsr_deps *waits, struct looked *lk)
{
	lk->nbuf = task->nbuffers;
	lk->nwaits = waits ? waits->n : 0;
	int need = lk->nbuf + 2 * lk->nwaits;
	if (need > look_cap) {
		struct tsr_order **nv = realloc(look_v, (size_t)need * sizeof *nv);
		if (!nv)
			return TSR_ENOMEM;
		look_v = nv;
		look_cap = need;
	}

	lk->buf = look_v;
	lk->wait = look_v + lk->nbuf;
	lk->rwait = lk->wait + lk->nwaits;
	lk->tracked = 0;

	for (int b = 0; b < lk->nbuf; b++) {
		lk->buf[b] = state_of(STARPU_TASK_GET_HANDLE(task, b));
		lk->tracked |= lk->buf[b] != NULL;
	}

	for (int i = 0; i < lk->nwaits; i++) {
		const struct tsr_dep *w = &waits->v[i];
		struct tsr_order *st = tsr__dep_waits_only(w->mode) ? state_of(w->h) : NULL;
		lk->wait[i] = st;
		lk->rwait[i] =
			st && w->mode == TSR_WAIT_AS_READ && !is_buffer(task, w->h) ? st : NULL;
		lk->tracked |= st != NULL;
	}

	return TSR_OK;
}

/* Room for one more reader in every state the task reads, through its buffers or its waits as a
 * read (the task may list a handle more than once: room for all it lists). */
static int reserve_readers(const struct starpu_task *task, const struct looked *lk)
{
	int more = lk->nbuf + lk->nwaits;

	for (int b = 0; b < lk->nbuf; b++) {
		struct tsr_order *s = lk->buf[b];
		if (s && !(STARPU_TASK_GET_MODE(task, b) & STARPU_W) && reserve_in(s, more))
			return TSR_ENOMEM;
	}

	for (int i = 0; i < lk->nwaits; i++)
		if (lk->rwait[i] && reserve_in(lk->rwait[i], more))
			return TSR_ENOMEM;

	return TSR_OK;
}

/* o becomes one more reader of state s. */
static void add_reader(struct tsr_order *s, struct tsr_oref *o)
{
	tsr__assert(s->nreaders < s->cap); /* room reserved */
	o->refs++;
	s->readers[s->nreaders++] = o;
}

/* The submitted task o becomes its handles' last writer or one more reader, and one more reader
 * of the handles it waits for as a read. lk was looked up before submission: a direct task no
 * longer lists its buffers to StarPU, but keeps their handles and modes in its structure. */
static void record(struct tsr_oref *o, const struct looked *lk)
{
	struct starpu_task *task = o->task;
	o->refs = 1; /* ours until the end of this function */

	for (int b = 0; b < lk->nbuf; b++) {
		struct tsr_order *s = lk->buf[b];
		if (!s)
			continue;

		if (STARPU_TASK_GET_MODE(task, b) & STARPU_W) {
			o->refs++;
			state_forget(s);
			s->writer = o;
		} else {
			add_reader(s, o);
		}
	}

	for (int i = 0; i < lk->nwaits; i++)
		if (lk->rwait[i])
			add_reader(lk->rwait[i], o);

	unref(o);
}

/* StarPU refused the task after it was made to depend on others, which already name it as their
 * successor: it must still be submitted, and ends as an empty task (no codelet, data or
 * callback). */
static void submit_empty(struct starpu_task *task)
{
	task->cl = NULL;
	task->nbuffers = 0;
	task->callback_func = NULL;
	task->callback_arg = NULL;
	task->prologue_callback_func = NULL;
	task->prologue_callback_pop_func = NULL;
	if (!task->cl_arg_free)
		task->cl_arg = NULL; /* the caller's, released by it */
	task->execute_on_a_specific_worker = 0;

	struct tsr_oref *o = oref_new(task);
	if (!o || starpu_task_submit(task)) {
		/* cannot happen (an empty task runs nowhere); keep the task rather than free what
		 * StarPU may still reach */
		free(o);
		return;
	}

	o->refs = 1;
	unref(o);
}

/* The waits of a submission: the tracked handles it lists to wait for without accessing them,
 * as a write (TSR_WAIT_AS_WRITE: nothing records it) or as a read (TSR_WAIT_AS_READ: record()
 * makes the task one of the handle's readers). */
static int wait_deps(const struct tsr_deps *waits, const struct starpu_task *task,
		     const struct looked *lk)
{
	for (int i = 0; i < lk->nwaits; i++) {
		enum starpu_data_access_mode m = waits->v[i].mode;
		struct tsr_order *s = lk->wait[i];
		if (s && state_deps(s, m == TSR_WAIT_AS_WRITE ? STARPU_W : STARPU_R, task))
			return TSR_ENOMEM;
	}

	return TSR_OK;
}

/* ------------------------------------------------------------------ direct data */

/* TSR_TASKDATA=direct. Where Tessera orders every view a task lists (one process, one memory node:
 * the data never leaves the host, and lives where the view was registered), StarPU's work on the
 * task's buffers is bookkeeping with nothing to move: fetch, reference counts and the data's own
 * reader-writer lock at the start, release at the end, about a tenth of a short task's cost on
 * each side (apps/bench/README.md, "Traces: the floor"). Such a task lists no StarPU data: its
 * context holds the views' host interfaces, the same structures StarPU would hand the variant, and
 * its order comes from the explicit dependences alone, as it already did (the views of one field
 * alias one array, which StarPU's per-handle lock never covered). Not for a task with a handle
 * Tessera does not order (a future, a private reduction buffer, a transfer), a REDUX or SCRATCH
 * access, more than STARPU_NMAXBUFS buffers, a task without a point's context (syncs, folds), or on
 * ranks (StarPU-MPI's transfers go through the handles). A host access still waits for the
 * tasks through order.c (tsr__order_wait) and a launch on mapped data is refused, as before. */
int tsr__order_direct(void)
{
	return active && direct_wanted && !tsr__dist.on;
}

/* ctx: the context the task's variant reads its views through (a point's), or NULL. */
static int direct_ok(const struct starpu_task *task, const struct tsr_ctx *ctx,
		     const struct looked *lk)
{
	if (!ctx || !tsr__order_direct())
		return 0;
	if (task->nbuffers <= 0 || task->nbuffers > STARPU_NMAXBUFS || task->dyn_handles)
		return 0;

	for (int b = 0; b < task->nbuffers; b++) {
		starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, b);
		enum starpu_data_access_mode m = STARPU_TASK_GET_MODE(task, b);
		if (!lk->buf[b] || (m & ~STARPU_RW))
			return 0;
		/* a view always has its array on the host here; the check costs a field read */
		if (!starpu_data_test_if_allocated_on_node(h, STARPU_MAIN_RAM))
			return 0;
	}
	return 1;
}

/* The footprint StarPU files the task's perf-model history under, fixed in its job while the task
 * still lists its views: StarPU computes it on first need (a policy's expected length, or the
 * model's update when the task ends), by then from no data, and every size of a codelet would
 * share one history that a policy asking before the views left (tsr-critpath, dag.c), or a run
 * with StarPU data (GPUs, ranks), would never find. */
static void fix_footprint(struct starpu_task *task)
{
	struct starpu_perfmodel *model = task->cl ? task->cl->model : NULL;
	if (!model)
		return;

	/* no architecture: StarPU would look for a per-architecture size function, which Tessera's
	 * models do not have, in a model it may not have loaded yet */
	(void)starpu_task_footprint(model, task, NULL, 0);
}

/* The task reaches its views through ctx; StarPU sees no data (the handles stay in the task for
 * record()). */
static void make_direct(struct starpu_task *task, struct tsr_ctx *ctx)
{
	fix_footprint(task);
	for (int b = 0; b < task->nbuffers; b++)
		ctx->direct[b] = starpu_data_get_interface_on_node(STARPU_TASK_GET_HANDLE(task, b),
								   STARPU_MAIN_RAM);
	ctx->ndirect = task->nbuffers;
	task->nbuffers = 0;
}

int tsr__order_submit(struct starpu_task *task, const struct tsr_deps *waits)
{
	return tsr__order_submit_point(task, waits, NULL);
}

int tsr__order_submit_point(struct starpu_task *task, const struct tsr_deps *waits,
			    struct tsr_ctx *ctx)
{
	tsr__dist_count_task(task->cl); /* several ranks: TSR_STATS counts the tasks per rank */

	struct looked lk;
	if (look_up(task, waits, &lk)) {
		destroy(task);
		return TSR_ENOMEM;
	}

	if (!lk.tracked) {
		int rc = tsr__starpu_code(starpu_task_submit(task));
		if (rc)
			destroy(task);
		return rc;
	}

	reap_head();
	ndeps = 0;
	struct tsr_oref *o = oref_new(task);
	if (o && ctx) {
		/* here every worker is a CPU (one memory node: see the top), whose wrapper sets it;
		 * were one never set, the waits' reaps still ask StarPU (reap_finished) */
		o->flagged = 1;
		ctx->ran = &o->ran;
	}
	int rc = o ? reserve_readers(task, &lk) : TSR_ENOMEM;

	for (int b = 0; b < lk.nbuf && !rc; b++)
		if (lk.buf[b])
			rc = state_deps(lk.buf[b], STARPU_TASK_GET_MODE(task, b), task);
	if (!rc)
		rc = wait_deps(waits, task, &lk);

	if (rc) {
		if (o)
			oref_free(o);
		destroy(task);
		return TSR_ENOMEM;
	}

	task->detach = 0;
	task->destroy = 0;
	if (ndeps)
		starpu_task_declare_deps_array(task, (unsigned)ndeps, deps);

	if (direct_ok(task, ctx, &lk))
		make_direct(task, ctx);

	rc = tsr__starpu_code(starpu_task_submit(task));
	if (rc) {
		oref_free(o);
		if (ndeps)
			submit_empty(task);
		else
			destroy(task);
		return rc;
	}

	record(o, &lk);
	return TSR_OK;
}

/* --------------------------------------------------------- host accesses, unregistration, waits */

/* The tasks an access to dep's handle in its mode waits for, added to deps. */
static int access_deps(const struct tsr_dep *dep)
{
	struct tsr_order *s = state_of(dep->h);
	return s ? state_deps(s, dep->mode, NULL) : TSR_OK;
}

int tsr__order_wait(const struct tsr_deps *held, const struct tsr_dep *own)
{
	if (!active)
		return TSR_OK;

	ndeps = 0;
	for (int i = 0; i < held->n; i++)
		if (access_deps(&held->v[i]))
			return TSR_ENOMEM;
	if (access_deps(own))
		return TSR_ENOMEM;

	for (int i = 0; i < ndeps; i++)
		if (starpu_task_wait(deps[i]))
			return TSR_ESTARPU;

	tsr__order_reap();
	return TSR_OK;
}

void tsr__order_untrack(starpu_data_handle_t h)
{
	struct tsr_order *s = state_of(h);
	if (!s)
		return;

	ndeps = 0;
	int rc = state_deps(s, STARPU_RW, NULL);
	starpu_data_set_sequential_consistency_flag(h, 1);
	starpu_data_set_user_data(h, NULL);

	if (!rc && ndeps) {
		/* StarPU's own ordering from here: a no-op that writes h after the last accesses,
		 * which the unregistration then waits for */
		struct starpu_task *task = starpu_task_create();
		rc = task ? TSR_OK : TSR_ENOMEM;

		if (task) {
			task->cl = &tsr__noop_cl;
			task->nbuffers = 1;
			STARPU_TASK_SET_HANDLE(task, h, 0);
			STARPU_TASK_SET_MODE(task, STARPU_RW, 0);
			task->where = STARPU_CPU; /* one memory node: the data is home */
			starpu_task_declare_deps_array(task, (unsigned)ndeps, deps);
			struct tsr_obs_rec *obs = tsr__obs_internal(task, "tsr_sync", 0, NULL, -1);
			rc = tsr__starpu_code(starpu_task_submit(task));
			if (rc)
				tsr__obs_drop(obs);
		}
	}

	if (rc)
		tsr__wait_all(); /* no task to wait behind: wait for everything instead */

	state_forget(s);
	state_unlink(s);
	free(s->readers);
	free(s);
}

void tsr__order_waited(void)
{
	if (!active && !unnamed_head)
		return;

	for (struct tsr_order *s = states; s; s = s->next)
		state_forget(s);
	reap_finished();
}

void tsr__order_shutdown(void)
{
	tsr__order_waited();

	/* every view was unregistered (untracked) before; a state left would only be memory */
	while (states) {
		struct tsr_order *s = states;
		state_unlink(s);
		free(s->readers);
		free(s);
	}

	while (spare) {
		struct tsr_oref *o = spare;
		spare = o->next;
		free(o);
	}

	nspare = 0;
	free(deps);
	deps = NULL;
	ndeps = capdeps = 0;
	free(look_v);
	look_v = NULL;
	look_cap = 0;
	active = 0;
}

void tsr__wait_all(void)
{
	if (tsr__rt.paused)
		starpu_resume();
	starpu_task_wait_for_all();
	tsr__order_waited();
	if (tsr__rt.paused)
		starpu_pause();
}

void tsr__noop(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

/* The no-op tasks that only order or move data: coherence's syncs and retires, and untracks
 * here. */
struct starpu_codelet tsr__noop_cl = {
	.cpu_funcs = {tsr__noop},
	.cuda_funcs = {tsr__noop},
	.cuda_flags = {STARPU_CUDA_ASYNC},
	.opencl_funcs = {tsr__noop},
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.name = "tsr_sync",
};
