/* ctxpool.c: the blocks that hold point tasks' contexts (launch.c), recycled; and the context of
 * the task each worker thread runs.
 *
 * The host thread allocates one context per point task, and the worker that runs the task is done
 * with it. Through malloc and free this was the costliest call of a launch on the submitting thread
 * (perf of the small stencil: 12% of that thread): glibc serves the host thread from the arena the
 * workers free into, under that arena's lock, and a request of 1 KiB or more (a copy into five
 * border pieces has six requirements) first consolidates every small chunk the workers freed since.
 *
 * Here a worker pushes the block it is done with onto one lock-free list per size class, and the
 * host thread, when its own list of that class is empty, takes the whole shared list in one atomic
 * exchange. Only the host thread ever takes blocks (Tessera is driven by one host thread), so the
 * push needs no protection against a block taken and pushed again under it (ABA).
 *
 * A loop without a fence may have thousands of tasks in flight at its peak; their contexts must not
 * stay held after. The shared list keeps at most POOL_BYTES of a class (a worker frees a block
 * when it is full), and the host thread's own list is one shared list it took: at most twice that
 * per class in all. Everything goes back to malloc at tsr_finalize, when every task is done. */
#include <stddef.h>
#include <stdlib.h>
#include "internal.h"

#define NCLASS 4
static const size_t class_size[NCLASS] = {512, 1024, 2048, 4096}; /* header included */
#define POOL_BYTES (128 * 1024)                                   /* kept per class */

struct block {
	struct block *next;
	int cls; /* size class, -1: from malloc, for malloc */
	/* the context after the header starts 16-byte aligned */
	int pad;
};

static struct block *shared[NCLASS]; /* pushed by any thread ... */
static size_t shared_n[NCLASS];      /* ... and about how many (a bound, not an exact count) */
static struct block *own[NCLASS];    /* the host thread's */

static size_t keep(int c)
{
	return POOL_BYTES / class_size[c];
}

static int class_of(size_t total)
{
	for (int c = 0; c < NCLASS; c++)
		if (total <= class_size[c])
			return c;
	return -1;
}

static void free_list(struct block *b)
{
	while (b) {
		struct block *next = b->next;
		free(b);
		b = next;
	}
}

/* Take the blocks the workers gave back as the host thread's list of class c (empty here),
 * without walking it: each block's link was written by the worker that pushed it, so counting or
 * trimming the list was a chain of cache misses, one per block, paid in a row on the host thread
 * (Task Bench stencil_1d, 1,024 iterations: 1-2 % of a step). The list holds what the workers
 * kept, at most keep(c) give or take a push racing with the check in tsr__ctx_release; shared_n
 * restarts from 0 with the shared list (a push racing with the exchange may go uncounted: the
 * next list then holds a block more than keep(c), and the exchange after takes it all again). */
static void absorb(int c)
{
	own[c] = __atomic_exchange_n(&shared[c], NULL, __ATOMIC_ACQUIRE);
	__atomic_store_n(&shared_n[c], 0, __ATOMIC_RELAXED);
}

/* A block of class c for the host thread: its own, else the workers' returns, else a new one. */
static struct block *take(int c)
{
	if (!own[c])
		absorb(c);

	struct block *b = own[c];
	if (b) {
		own[c] = b->next;
		return b;
	}

	return malloc(class_size[c]);
}

void *tsr__ctx_alloc(size_t size)
{
	int c = class_of(size + sizeof(struct block));
	struct block *b = c < 0 ? malloc(size + sizeof *b) : take(c);
	if (!b)
		return NULL;

	b->cls = c;
	/* the header keeps malloc's alignment, which any field of a context may need */
	tsr__assert((uintptr_t)(b + 1) % _Alignof(max_align_t) == 0);
	return b + 1;
}

void tsr__ctx_release(void *p)
{
	if (!p)
		return;

	struct block *b = (struct block *)p - 1;
	tsr__assert(b->cls >= -1 && b->cls < NCLASS);
	if (b->cls < 0 || __atomic_load_n(&shared_n[b->cls], __ATOMIC_RELAXED) >= keep(b->cls)) {
		free(b);
		return;
	}

	__atomic_add_fetch(&shared_n[b->cls], 1, __ATOMIC_RELAXED);
	struct block *head = __atomic_load_n(&shared[b->cls], __ATOMIC_RELAXED);
	do
		b->next = head;
	while (!__atomic_compare_exchange_n(&shared[b->cls], &head, b, 1, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED));
}

void tsr__ctx_pool_drain(void)
{
	for (int c = 0; c < NCLASS; c++) {
		free_list(own[c]);
		free_list(__atomic_exchange_n(&shared[c], NULL, __ATOMIC_ACQUIRE));
		own[c] = NULL;
		shared_n[c] = 0;
	}
}

/* The context of the task this worker thread runs: tsr__task_error charges errors to it, and API
 * calls that would wait or submit from inside a variant are refused by name
 * (tsr__refuse_thread). */
static _Thread_local struct tsr_ctx *current;

struct tsr_ctx *tsr__current_ctx(void)
{
	return current;
}

void tsr__set_current_ctx(struct tsr_ctx *ctx)
{
	tsr__assert(!ctx || !current); /* a variant never runs inside another on its thread */
	current = ctx;
}
