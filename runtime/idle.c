/* idle.c: what a worker with nothing to run does (TSR_IDLE): StarPU's own loop, park, asleep
 * until a task is pushed, or yield, StarPU's loop giving the core to a thread that waits for it,
 * so that the core goes to the threads that have work.
 *
 * Debian's StarPU (and StarPU built without --enable-blocking-drivers) never lets a worker sleep:
 * an idle worker asks the policy for a task again and again, pausing a few hundred cycles between
 * tries. Where every worker has a core of its own that costs nothing. Where threads share cores
 * it costs a great deal: several ranks on one node (each with its workers, the StarPU-MPI thread
 * and the host thread) put two or three threads that never sleep on every core, and the thread
 * that has work (the MPI thread with a message to receive, the worker a message made ready) waits
 * for the scheduler's time slice, milliseconds, at every step. Measured on 2 cores, 2 ranks, a
 * StarPU-MPI ring of tasks and messages (one task, one send per hop): 8-9 ms per hop with StarPU's
 * idle loop and binding, 25 us with parked workers and a core per rank (dist.c's placement).
 *
 * Parking wraps the policy StarPU runs (any of StarPU's, or Tessera's own): push_task calls the
 * policy's, then wakes the parked workers; pop_task calls the policy's and, when it has nothing,
 * sleeps on a condition variable until the next push (or a short timeout, the safety net for a
 * task StarPU pushes past the policy). A push counter read before the pop closes the window
 * between an empty pop and the sleep. While it sleeps, the worker is in StarPU's "relax" state:
 * StarPU counts a worker inside pop_task as scheduling, and a thread that pushes a task waits for
 * a scheduling worker to come out of it unless the worker relaxed (starpu_worker_relax_on). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <starpu_scheduler.h>
#include <starpu_task_list.h>
#include "internal.h"

/* A parked worker looks again after this long even if nobody woke it: tasks StarPU puts on a
 * worker's own list (starpu_task::execute_on_a_specific_worker) reach it through push_task_notify,
 * which is woken too, but a wake must never be the only way out of a sleep. */
enum { PARK_TIMEOUT_NS = 1000 * 1000 };

static const struct starpu_sched_policy *base;
static struct starpu_sched_policy parked;

static pthread_mutex_t park_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond;
static atomic_ulong pushes;
static atomic_int sleepers;

static void wake_parked(void)
{
	atomic_fetch_add(&pushes, 1);
	if (atomic_load(&sleepers) == 0)
		return;

	pthread_mutex_lock(&park_mutex);
	pthread_cond_broadcast(&park_cond);
	pthread_mutex_unlock(&park_mutex);
}

static int park_push(struct starpu_task *task)
{
	int rc = base->push_task(task);
	wake_parked();
	return rc;
}

static void park_push_notify(struct starpu_task *task, int worker, int perf_worker, unsigned ctx)
{
	if (base->push_task_notify)
		base->push_task_notify(task, worker, perf_worker, ctx);
	wake_parked();
}

static struct timespec deadline(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);

	ts.tv_nsec += PARK_TIMEOUT_NS;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}

	return ts;
}

/* Sleep until a push newer than `seen`, or the timeout. */
static void park(unsigned long seen)
{
	starpu_worker_relax_on();
	pthread_mutex_lock(&park_mutex);
	atomic_fetch_add(&sleepers, 1);

	if (atomic_load(&pushes) == seen) {
		struct timespec until = deadline();
		pthread_cond_timedwait(&park_cond, &park_mutex, &until);
	}

	atomic_fetch_sub(&sleepers, 1);
	pthread_mutex_unlock(&park_mutex);
	starpu_worker_relax_off();
}

static struct starpu_task *park_pop(unsigned ctx)
{
	unsigned long seen = atomic_load(&pushes);
	struct starpu_task *task = base->pop_task(ctx);
	if (task)
		return task;

	park(seen);
	/* StarPU's loop asks again at once; a task pushed meanwhile is taken then */
	return NULL;
}

/* Yielding (one process): StarPU 1.3 keeps its last awake worker asking the policy without
 * pause, and with the host thread on top of one worker per core that worker takes a core from
 * the thread that has work: the host thread, which submits, or the worker that runs the task the
 * others wait for. Between two empty pops the worker gives its core to whatever else is runnable
 * there (sched_yield, as Open MPI's mpi_yield_when_idle does for its progress loop, dist.c); with
 * nothing else runnable it asks again at once, as StarPU's loop does, so a new task is found as
 * soon as before. Parking would sleep instead, and wake through a futex per push: on one process
 * that wake costs more than it saves. Measured on 2 cores, Task Bench stencil_1d, width 2, 10,000
 * steps, traced, us per step, medians of 3 (apps/bench/README.md): kernel iterations 16, 1024,
 * 2048, 4096: spin 5.6, 8.6, 12.6, 17.0; yield 2.7, 7.6, 10.4, 14.2; park 4.9, 9.9, 14.0, 23.6. */
static struct starpu_sched_policy yielding;

/* The gate. On a policy whose queues one mutex guards for all workers (eager, prio, Tessera's own),
 * the yielding policy's push_task and pop_task pass one at a time through a gate of their own, and
 * a thread that finds another inside waits on its CPU (pause, sched_yield now and then) rather
 * than on the policy's mutex. A contended mutex puts its waiter to sleep in the kernel, and where
 * idle cores halt (a virtual machine's) waking it takes tens of microseconds: in a step that made
 * two tasks ready, the worker that went for the second slept through it, and the worker that
 * pushed both ran them one after the other. Measured on 2 cores (KVM, Linux 6.18), Task Bench
 * stencil_1d, width 2, 10,000 steps, us per step, 3 runs each (apps/bench/README.md, "The gate"):
 * 3,072 kernel iterations 16.3-16.5 without (one worker alone: 16.3-16.8), 10.4-10.8 with;
 * 1,024: 9.4-10.1 without (one worker: 7.3), 6.1-6.4 with.
 *
 * Polling stays off the gate while the policy holds nothing: queued counts the tasks pushed and
 * not yet popped through it (every task the policy holds came through push_task and leaves
 * through pop_task). An idle worker that reads 0 does not ask the policy, except every
 * GATE_RECHECK-th time, so that a count gone wrong could only delay a task, never lose it. */
enum { GATE_SPINS = 64, GATE_RECHECK = 256 };

static atomic_int gate;
static atomic_long queued;
static _Thread_local unsigned idle_rounds;

/* A spinning thread's hint to the core (x86's pause: the sibling hyperthread runs, the loop's
 * exit costs no pipeline flush) */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void gate_wait(void)
{
	/* relaxed, as the policy's own mutex wait: a thread inside may need this worker's lock */
	starpu_worker_relax_on();
	for (unsigned n = 1;; n++) {
		if (!atomic_load_explicit(&gate, memory_order_relaxed) &&
		    !atomic_exchange_explicit(&gate, 1, memory_order_acquire))
			break;
		if (n % GATE_SPINS == 0)
			sched_yield(); /* the thread inside may be waiting for this core */
		else
			cpu_relax();
	}
	starpu_worker_relax_off();
}

static void gate_enter(void)
{
	if (atomic_exchange_explicit(&gate, 1, memory_order_acquire))
		gate_wait();
}

static void gate_leave(void)
{
	atomic_store_explicit(&gate, 0, memory_order_release);
}

/* The handoff (eager, every worker a CPU worker, StarPU's non-blocking drivers). With 2 workers
 * and a step whose tasks all wait for the step before, a step is one task plus the chain from the
 * last task's end to the next tasks' start: the worker that ends last has StarPU notify and push
 * both successors, finishes the termination, then pops its own; the other worker pops the first.
 * Through eager's queue that chain took 3.25 us with empty tasks where a worker alone takes 1.78
 * (TSR_TIMELINE, apps/bench/README.md, "The chain a step waits for"): both workers go through
 * the gate and eager's queue for the same two tasks. Here each worker has a slot of one task: a
 * push goes to an idle worker's slot first (it starts at its next poll, without the gate), else
 * to the pushing worker's own (it pops it next, warm, without the gate), else to the queue, and
 * to the queue whenever the queue holds tasks (they go first: none waits forever); a pop
 * takes its own slot first, then another worker's (a worker that holds a task in its slot but
 * is busy or lost its core to another thread does not keep it), then the queue. Eager's queue is
 * then kept here, under the gate, in eager's order (first pushed, first taken by a worker that can
 * run it), because eager's own pop skips its queue while the worker's "waiting" bit is set, which
 * only eager's push clears: a worker that took its task from a slot would keep a stale bit and
 * ignore the queue until the next push. Prio and Tessera's policies order their queues, so they
 * keep them. Measured on 2 cores, Task Bench stencil_1d, width 2, us a step, 5 interleaved rounds:
 * 2,048 kernel iterations 8.75-9.17 against 9.41-9.94 through eager's queue. */
struct slot {
	_Alignas(64) _Atomic(struct starpu_task *) task; /* ready, for this worker (or a thief) */
	atomic_int idle;                                 /* its last pop found nothing */
	/* TSR_STATS: what this worker's pushes and pops did (only this worker writes them) */
	struct tsr_handoff_counts counts;
};

/* The pushes of threads that are not workers: the host thread's, StarPU-MPI's (a task a message
 * made ready) */
struct shared_counts {
	atomic_long to_idle;
	atomic_long queued;
};

static struct slot slots[STARPU_NMAXWORKERS];
/* workers with a slot; 0: no handoff, eager's own queue. Set by the host thread once StarPU has
 * started, while the workers already poll (before any task is pushed) */
static atomic_int nslots;

static int slot_count(void)
{
	return atomic_load_explicit(&nslots, memory_order_relaxed);
}
static struct shared_counts others;
static struct starpu_task_list fifo; /* the queue in handoff mode, under the gate */

/* The worker can run the task: StarPU's test, as eager's pop makes it */
static int can_run(int worker, struct starpu_task *task)
{
	return starpu_worker_can_execute_task_first_impl(worker, task, NULL);
}

/* The task is the calling worker's: the implementation it runs, chosen as eager's pop does */
static int claim(int worker, struct starpu_task *task)
{
	unsigned nimpl = 0;
	if (!starpu_worker_can_execute_task_first_impl(worker, task, &nimpl))
		return 0;
	starpu_task_set_implementation(task, nimpl);
	return 1;
}

static int slot_put(int worker, struct starpu_task *task)
{
	struct starpu_task *none = NULL;
	return atomic_compare_exchange_strong_explicit(&slots[worker].task, &none, task,
						       memory_order_release, memory_order_relaxed);
}

static struct starpu_task *slot_take(int worker)
{
	if (!atomic_load_explicit(&slots[worker].task, memory_order_relaxed))
		return NULL;
	return atomic_exchange_explicit(&slots[worker].task, NULL, memory_order_acquire);
}

/* An idle worker's slot, from the pusher's right neighbour on, else the pusher's own. 0 if none
 * took the task. The task may run, end and be freed as soon as a slot holds it. */
static int slot_push(struct starpu_task *task, int me)
{
	int n = slot_count();
	for (int i = 1; i <= n; i++) {
		int w = (me + i) % n;
		if (w == me || !atomic_load_explicit(&slots[w].idle, memory_order_relaxed))
			continue;
		if (can_run(w, task) && slot_put(w, task)) {
			/* a hint: a second push looks elsewhere until w's next empty pop */
			atomic_store_explicit(&slots[w].idle, 0, memory_order_relaxed);
			if (me >= 0)
				slots[me].counts.to_idle++;
			else
				atomic_fetch_add_explicit(&others.to_idle, 1, memory_order_relaxed);
			return 1;
		}
	}
	if (me >= 0 && can_run(me, task) && slot_put(me, task)) {
		slots[me].counts.kept++;
		return 1;
	}
	return 0;
}

/* Another worker's slot, for a worker with nothing else to run */
static struct starpu_task *slot_steal(int me)
{
	int n = slot_count();
	for (int i = 1; i < n; i++) {
		struct starpu_task *task = slot_take((me + i) % n);
		if (task)
			return task;
	}
	return NULL;
}

/* In handoff mode: to the back of the queue, through the gate */
static void fifo_push(struct starpu_task *task)
{
	gate_enter();
	starpu_task_list_push_back(&fifo, task);
	atomic_fetch_add_explicit(&queued, 1, memory_order_relaxed);
	gate_leave();
}

/* Under the gate, in handoff mode: the first task the worker can run */
static struct starpu_task *fifo_pop(int me)
{
	for (struct starpu_task *t = starpu_task_list_begin(&fifo);
	     t != starpu_task_list_end(&fifo); t = starpu_task_list_next(t)) {
		if (claim(me, t)) {
			starpu_task_list_erase(&fifo, t);
			atomic_fetch_sub_explicit(&queued, 1, memory_order_relaxed);
			return t;
		}
	}
	return NULL;
}

static int handoff_push(struct starpu_task *task)
{
	int me = starpu_worker_get_id(); /* -1 on the host thread and StarPU-MPI's */

	/* what eager does once the task is in its queue; before the task is in a slot, where its
	 * worker may end it at once */
	starpu_push_task_end(task);
	/* a slot only while the queue is empty: behind older tasks it waits its turn, so that no
	 * task waits in the queue while workers run what their own slots keep getting */
	if (atomic_load_explicit(&queued, memory_order_relaxed) == 0 && slot_push(task, me))
		return 0;

	fifo_push(task);
	if (me >= 0)
		slots[me].counts.queued++;
	else
		atomic_fetch_add_explicit(&others.queued, 1, memory_order_relaxed);
	return 0;
}

/* A task in another worker's slot that this worker can run; one it cannot goes to the queue */
static struct starpu_task *handoff_steal(int me)
{
	struct starpu_task *task = slot_steal(me);
	if (task && claim(me, task)) {
		slots[me].counts.stolen++;
		return task;
	}
	if (task)
		fifo_push(task);
	return NULL;
}

static struct starpu_task *handoff_take(int me, unsigned ctx)
{
	struct starpu_task *task = slot_take(me);
	if (task && claim(me, task))
		return task;
	if (task) {
		/* not this worker's to run (placed for it, so not expected): back to the queue */
		fifo_push(task);
	}

	/* Another worker's slot before the queue: a slot is filled only while the queue is empty,
	 * so its task is older than any queued one, and its worker may be busy (a pusher that read
	 * it idle just as it took a task) or off its core for a while. */
	task = handoff_steal(me);
	if (task)
		return task;

	int recheck = ++idle_rounds % GATE_RECHECK == 0;
	if (atomic_load_explicit(&queued, memory_order_relaxed) > 0 || recheck) {
		gate_enter();
		task = fifo_pop(me);
		/* now and then eager's own queue too: a task pushed there before the handoff began
		 * (none is expected: StarPU pushes none before tsr_init returns; it was counted in
		 * queued) is not lost */
		if (!task && recheck && (task = base->pop_task(ctx)))
			atomic_fetch_sub_explicit(&queued, 1, memory_order_relaxed);
		gate_leave();
	}
	return task;
}

static struct starpu_task *handoff_pop(unsigned ctx)
{
	int me = starpu_worker_get_id_check();
	struct starpu_task *task = handoff_take(me, ctx);

	/* written only when it changes: pushers read it */
	int idle = task == NULL;
	if (atomic_load_explicit(&slots[me].idle, memory_order_relaxed) != idle)
		atomic_store_explicit(&slots[me].idle, idle, memory_order_relaxed);
	return task;
}

static int gated_push(struct starpu_task *task)
{
	if (slot_count())
		return handoff_push(task);

	gate_enter();
	/* counted first: a policy that wakes workers in its push (blocking drivers) must not wake
	 * one that reads 0 and looks no further */
	atomic_fetch_add_explicit(&queued, 1, memory_order_relaxed);
	int rc = base->push_task(task);
	if (rc != 0)
		atomic_fetch_sub_explicit(&queued, 1, memory_order_relaxed);
	gate_leave();
	return rc;
}

static struct starpu_task *gated_pop(unsigned ctx)
{
	if (slot_count())
		return handoff_pop(ctx);

	if (atomic_load_explicit(&queued, memory_order_relaxed) <= 0 &&
	    ++idle_rounds % GATE_RECHECK != 0)
		return NULL;

	gate_enter();
	struct starpu_task *task = base->pop_task(ctx);
	if (task)
		atomic_fetch_sub_explicit(&queued, 1, memory_order_relaxed);
	gate_leave();
	return task;
}

/* The policy's pop, through the gate where the policy has one */
static struct starpu_task *(*yield_base_pop)(unsigned ctx);

static struct starpu_task *yield_pop(unsigned ctx)
{
	struct starpu_task *task = yield_base_pop(ctx);
	if (task)
		return task;

	/* relaxed: a thread that pushes meanwhile need not wait for this worker to come out of
	 * pop_task (as park) */
	starpu_worker_relax_on();
	sched_yield();
	starpu_worker_relax_off();
	return NULL;
}

/* Policies whose push and pop already take one mutex for all workers: the gate serializes
 * nothing they did not. StarPU's others (lws, ws, dm*, heteroprio, ...) keep a queue and a lock
 * per worker, which a gate would serialize. (With several scheduling contexts, which Tessera does
 * not create, eager's and prio's pop would take a context's lock inside the gate, and a task
 * handed to a child context would leave queued too high: slower polls, no lost task.) */
static int has_one_queue(const struct starpu_sched_policy *p)
{
	static const char *const central[] = {"eager", "prio", "tsr-locality", "tsr-critpath"};

	if (!p->policy_name || !p->push_task)
		return 0;
	for (size_t i = 0; i < sizeof central / sizeof central[0]; i++)
		if (!strcmp(p->policy_name, central[i]))
			return 1;
	return 0;
}

static void park_init_once(void)
{
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&park_cond, &attr);
	pthread_condattr_destroy(&attr);
}

/* The policy StarPU runs for conf (config.c resolved the program's, Tessera's and StarPU's ways
 * of naming it into conf): the structure given, else the name given, else lws, StarPU's default.
 * NULL if the name matches none of StarPU's policies. */
static struct starpu_sched_policy *policy_of(const struct starpu_conf *conf)
{
	if (conf->sched_policy)
		return conf->sched_policy;

	const char *name = conf->sched_policy_name ? conf->sched_policy_name : "lws";
	for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; p++)
		if ((*p)->policy_name && !strcmp((*p)->policy_name, name))
			return *p;
	return NULL;
}

const struct starpu_sched_policy *tsr__idle_base(const struct starpu_sched_policy *p)
{
	return p == &parked || p == &yielding ? base : p;
}

int tsr__idle_park(struct starpu_conf *conf, int *parking)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct starpu_sched_policy *p = policy_of(conf);

	*parking = 0;
	if (!p || !p->pop_task)
		return TSR_OK; /* a policy that feeds workers' own lists only: nothing to wrap */

	pthread_once(&once, park_init_once);
	base = p;
	parked = *p;
	parked.push_task = park_push;
	parked.pop_task = park_pop;
	parked.push_task_notify = park_push_notify;

	conf->sched_policy = &parked;
	conf->sched_policy_name = NULL;
	*parking = 1;
	return TSR_OK;
}

void tsr__idle_yield(struct starpu_conf *conf)
{
	struct starpu_sched_policy *p = policy_of(conf);
	if (!p || !p->pop_task)
		return; /* a policy that feeds workers' own lists only: nothing to wrap */

	base = p;
	yielding = *p;
	yielding.pop_task = yield_pop;
	yield_base_pop = p->pop_task;
	/* a runtime started again starts with an empty queue and an open gate; handoff or not is
	 * decided once the workers exist (tsr__idle_started) */
	atomic_store(&queued, 0);
	atomic_store(&gate, 0);
	atomic_store(&nslots, 0);
	starpu_task_list_init(&fifo);
	for (int w = 0; w < STARPU_NMAXWORKERS; w++) {
		atomic_store(&slots[w].task, NULL);
		atomic_store(&slots[w].idle, 0);
		memset(&slots[w].counts, 0, sizeof slots[w].counts);
	}
	atomic_store(&others.to_idle, 0);
	atomic_store(&others.queued, 0);
	if (has_one_queue(p)) {
		yielding.push_task = gated_push;
		yield_base_pop = gated_pop;
	}
	conf->sched_policy = &yielding;
	conf->sched_policy_name = NULL;
}

void tsr__idle_started(void)
{
	atomic_store(&nslots, 0); /* whatever an earlier run of the runtime had */
#ifdef STARPU_NON_BLOCKING_DRIVERS
	const struct starpu_sched_policy *p = starpu_sched_ctx_get_sched_policy(0);
	unsigned nworkers = starpu_worker_get_count();
	int all_cpu = starpu_cpu_worker_get_count() == nworkers;
	if (p && p->push_task == gated_push && !strcmp(base->policy_name, "eager") && all_cpu)
		atomic_store(&nslots, (int)nworkers);
#endif
	/* (blocking drivers: an idle worker sleeps in StarPU's loop; only eager's push wakes it) */
}

void tsr__idle_count(void)
{
	struct tsr_handoff_counts *sum = &tsr__handoff_counts;
	memset(sum, 0, sizeof *sum);
	int n = slot_count();
	if (!n)
		return;

	sum->on = 1;
	sum->to_idle = atomic_load(&others.to_idle);
	sum->queued = atomic_load(&others.queued);
	for (int w = 0; w < n; w++) {
		sum->to_idle += slots[w].counts.to_idle;
		sum->kept += slots[w].counts.kept;
		sum->queued += slots[w].counts.queued;
		sum->stolen += slots[w].counts.stolen;
	}
}

const char *tsr__idle_name(void)
{
	/* StarPU runs a copy of the policy given: known by its functions */
	const struct starpu_sched_policy *p = starpu_sched_ctx_get_sched_policy(0);
	if (p && p->pop_task == park_pop)
		return "park";
	if (p && p->pop_task == yield_pop && p->push_task == gated_push)
		return slot_count() ? "yield+handoff" : "yield+gate";
	if (p && p->pop_task == yield_pop)
		return "yield";
	return "spin";
}
