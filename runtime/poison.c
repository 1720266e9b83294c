/* poison.c: a task that fails poisons what it writes, so that nothing computed from it passes for
 * a result. Futures carry a reference-counted state; fields carry a list of poisoned boxes. The
 * policy is here too, for task.c's wrapper to apply: a task that would read poison is skipped and
 * poisons its outputs with the same message, a failed task poisons its outputs with its own, and a
 * successful task heals what it wrote (WRITE: it replaced every value there): a mark loses the part
 * of its box the write covers, and keeps the rest, cut into boxes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* ------------------------------------------------------------------ futures */
/* Shared by the future (until tsr_future_destroy) and by each task that reads or writes it (until
 * its wrapper ends), so a worker never writes into a destroyed future. */
struct tsr_fstate {
	int refs;
	char *poison; /* message of the failed task that should have produced the value */
};

struct tsr_fstate *tsr__fstate_new(void)
{
	struct tsr_fstate *s = calloc(1, sizeof *s);
	if (s)
		s->refs = 1;
	return s;
}

void tsr__fstate_ref(struct tsr_fstate *s)
{
	/* only a holder of a reference takes another one */
	tsr__assert(__atomic_load_n(&s->refs, __ATOMIC_RELAXED) > 0);
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void tsr__fstate_unref(struct tsr_fstate *s)
{
	int left = __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL);
	tsr__assert(left >= 0);
	if (left)
		return;
	free(s->poison);
	free(s);
}

const char *tsr__fstate_poison(struct tsr_fstate *s)
{
	return __atomic_load_n(&s->poison, __ATOMIC_ACQUIRE);
}

/* Points of one index launch fold into one future concurrently: the first message wins. */
void tsr__fstate_set_poison(struct tsr_fstate *s, const char *msg)
{
	char *copy = strdup(msg);
	char *none = NULL;

	if (!copy)
		copy = strdup("a task failed (out of memory for its message)");

	if (!__atomic_compare_exchange_n(&s->poison, &none, copy, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		free(copy);
}

/* ------------------------------------------------------------------- fields */
/* Failures are rare, so one list and one lock serve every field; tsr__npoison lets every healthy
 * task skip the lock with one load. Regions are named by id, which is never reused. */
struct poisoned {
	uint64_t root;
	int field;
	tsr_box_t box;
	/* the failed tasks that wrote this box, first and last in submission order, and their
	 * messages (the same string when one task did) */
	char *msg, *last_msg;
	uint64_t seq, last_seq;
	struct poisoned *next;
};

/* Submission order, as marks count it: launch.c numbers the point tasks, fold.c names the point a
 * fold's transfers serve (xfer.c reads both). */
uint64_t tsr__submit_seq;
uint64_t tsr__xfer_seq;

static struct poisoned *poisoned;
static pthread_mutex_t poison_lock = PTHREAD_MUTEX_INITIALIZER;
int tsr__npoison;

/* Only marks of tasks submitted before `before`: a REDUCE point reaches its field through a fold
 * task only, so it may run (and fail) before a task submitted earlier reads the field, whose
 * inputs cannot come from it (the oracle's loops found this). */
char *tsr__field_poison_find(uint64_t root, int field, tsr_box_t box, uint64_t before)
{
	char *msg = NULL;

	pthread_mutex_lock(&poison_lock);
	for (struct poisoned *p = poisoned; p && !msg; p = p->next)
		if (p->root == root && p->field == field && p->seq < before &&
		    tsr__box_overlap(p->box, box))
			msg = strdup(p->msg);
	pthread_mutex_unlock(&poison_lock);
	return msg;
}

/* Failures of one box from several tasks: the first in submission order is what readers see (a
 * reader submitted before it never does), the last is what a heal submitted before it leaves. A
 * REDUCE point runs ahead of the WRITE that heals the box before it (the oracle's loops found a
 * heal that dropped such a later failure); more than two in flight at once count as the last. */
static void add_failure(struct poisoned *p, const char *msg, uint64_t seq)
{
	char *copy = seq < p->seq || seq > p->last_seq ? strdup(msg) : NULL;
	if (!copy)
		return;

	if (seq < p->seq) {
		if (p->msg != p->last_msg)
			free(p->msg);
		p->msg = copy;
		p->seq = seq;
		return;
	}
	if (p->last_msg != p->msg)
		free(p->last_msg);
	p->last_msg = copy;
	p->last_seq = seq;
}

static void free_msgs(struct poisoned *p)
{
	if (p->last_msg != p->msg)
		free(p->last_msg);
	free(p->msg);
}

static void mark_free(struct poisoned *p)
{
	free_msgs(p);
	free(p);
}

void tsr__field_poison_add(uint64_t root, int field, tsr_box_t box, const char *msg, uint64_t seq)
{
	pthread_mutex_lock(&poison_lock);
	for (struct poisoned *p = poisoned; p; p = p->next)
		if (p->root == root && p->field == field && tsr__box_equal(&p->box, &box)) {
			add_failure(p, msg, seq);
			pthread_mutex_unlock(&poison_lock);
			return;
		}

	struct poisoned *p = malloc(sizeof *p);
	char *copy = strdup(msg);
	if (p && copy) {
		p->root = root;
		p->field = field;
		p->box = box;
		p->msg = copy;
		p->last_msg = copy;
		p->seq = seq;
		p->last_seq = seq;
		p->next = poisoned;
		poisoned = p;
		__atomic_add_fetch(&tsr__npoison, 1, __ATOMIC_RELEASE);
	} else {
		free(p);
		free(copy);
	}

	pthread_mutex_unlock(&poison_lock);
}

/* Remove the poisoned boxes for which drop() says so (drop may cut p down first, and link the parts
 * it cut off right after p). */
static void remove_where(int (*drop)(struct poisoned *p, uint64_t root, int field, tsr_box_t box,
				     uint64_t before),
			 uint64_t root, int field, tsr_box_t box, uint64_t before)
{
	pthread_mutex_lock(&poison_lock);
	struct poisoned **pp = &poisoned;
	while (*pp) {
		struct poisoned *p = *pp;
		if (!drop(p, root, field, box, before)) {
			pp = &p->next;
			continue;
		}

		*pp = p->next;
		mark_free(p);
		__atomic_sub_fetch(&tsr__npoison, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&poison_lock);
}

/* p's failures of tasks submitted before `before` are replaced by a write submitted as `before`:
 * 1 when that is all of them (the mark goes), else it keeps only its last failure. */
static int replaced_before(struct poisoned *p, uint64_t before)
{
	if (p->seq >= before)
		return 0;
	if (p->last_seq < before)
		return 1;

	if (p->msg != p->last_msg)
		free(p->msg);
	p->msg = p->last_msg;
	p->seq = p->last_seq;
	return 0;
}

/* A copy of mark p over box b (its failures and messages), or NULL when out of memory. */
static struct poisoned *mark_copy(const struct poisoned *p, tsr_box_t b)
{
	struct poisoned *c = malloc(sizeof *c);
	char *msg = strdup(p->msg);
	char *last = p->last_msg == p->msg ? msg : strdup(p->last_msg);
	if (!c || !msg || !last) {
		if (last != msg)
			free(last);
		free(msg);
		free(c);
		return NULL;
	}

	*c = *p;
	c->box = b;
	c->msg = msg;
	c->last_msg = last;
	return c;
}

/* The parts of p's box outside box keep all of p's failures: marks of their own, linked right
 * after p (outside box: the walk in remove_where passes them by). TSR_ENOMEM: none added. */
static int keep_outside(struct poisoned *p, const tsr_box_t *box)
{
	tsr_box_t outside[TSR_BOX_MINUS_MAX];
	struct poisoned *made[TSR_BOX_MINUS_MAX];
	int n = tsr__box_minus(&p->box, box, outside);

	for (int i = 0; i < n; i++) {
		made[i] = mark_copy(p, outside[i]);
		if (made[i])
			continue;
		while (i-- > 0)
			mark_free(made[i]);
		return TSR_ENOMEM;
	}

	for (int i = n - 1; i >= 0; i--) {
		made[i]->next = p->next;
		p->next = made[i];
	}
	__atomic_add_fetch(&tsr__npoison, n, __ATOMIC_RELEASE);
	return TSR_OK;
}

/* A write of box submitted as `before` (a task's WRITE, a fill, a host WRITE mapping, a received
 * transfer) replaced every value inside it: the failures before it go from the part of p inside
 * box, and the parts outside keep them (linked after p: remove_where's walk passes them by). 1
 * when nothing of p is left. Out of memory for the parts outside, p stays whole: more poison,
 * never less. */
static int replaced_in(struct poisoned *p, uint64_t root, int field, tsr_box_t box, uint64_t before)
{
	if (p->root != root || p->field != field || p->seq >= before ||
	    !tsr__box_overlap(p->box, box))
		return 0;
	if (!tsr__box_inside(&p->box, &box) && keep_outside(p, &box))
		return 0;

	tsr_box_intersect(p->box, box, &p->box);
	return replaced_before(p, before);
}

static int of_region(struct poisoned *p, uint64_t root, int field, tsr_box_t box, uint64_t before)
{
	return p->root == root;
}

static int any(struct poisoned *p, uint64_t root, int field, tsr_box_t box, uint64_t before)
{
	return 1;
}

/* A successful WRITE (or fill, or host WRITE mapping) of box replaces every value inside it. */
void tsr__field_poison_clear(uint64_t root, int field, tsr_box_t box, uint64_t before)
{
	remove_where(replaced_in, root, field, box, before);
}

void tsr__poison_forget_region(uint64_t root)
{
	remove_where(of_region, root, 0, tsr_box1(0, 0), 0);
}

void tsr__poison_reset(void)
{
	remove_where(any, 0, 0, tsr_box1(0, 0), 0);
}

/* ------------------------------------------------------------------ marks between ranks */

/* The smallest box around a and b (of one dimension count). */
static tsr_box_t around(tsr_box_t a, tsr_box_t b)
{
	for (int d = 0; d < a.dim; d++) {
		a.lo[d] = a.lo[d] < b.lo[d] ? a.lo[d] : b.lo[d];
		a.hi[d] = a.hi[d] > b.hi[d] ? a.hi[d] : b.hi[d];
	}
	return a;
}

/* What a rank sends with a transfer of box (xfer.c): its marks of tasks submitted before `before`,
 * cut to box (the receiver's marks outside box are its own business), at most max of them: the
 * last slot then holds the smallest box around the rest, which poisons more, never less. The first
 * mark's message goes to msg (cut to msgsize). Returns how many boxes out holds. */
int tsr__field_poison_marks(uint64_t root, int field, tsr_box_t box, uint64_t before,
			    tsr_box_t *out, int max, char *msg, size_t msgsize)
{
	int n = 0;

	if (!__atomic_load_n(&tsr__npoison, __ATOMIC_RELAXED))
		return 0;

	pthread_mutex_lock(&poison_lock);
	for (struct poisoned *p = poisoned; p; p = p->next) {
		tsr_box_t part;
		if (p->root != root || p->field != field || p->seq >= before ||
		    !tsr_box_intersect(p->box, box, &part))
			continue;
		if (n == 0)
			snprintf(msg, msgsize, "%s", p->msg);
		if (n < max)
			out[n++] = part;
		else
			out[max - 1] = around(out[max - 1], part);
	}
	pthread_mutex_unlock(&poison_lock);
	return n;
}

/* A transfer of box arrived (xfer.c), received in submission order just before `before`: it
 * replaced the values inside box as a write would, and its sender held the box's latest values
 * and their marks. So this rank's marks lose their parts inside box (the oracle's seed 200219: a
 * rank kept a whole tile's mark after receiving one row of it from the tile's owner, which had
 * rewritten it all; seed 260048: a rank dropped a whole region's mark on receiving a tile of it,
 * though the rest of the region was still the failed task's), and the sender's marks of it (n
 * boxes inside box, message msg) are this rank's now, ahead of every task submitted after the
 * receive. */
void tsr__field_poison_received(uint64_t root, int field, tsr_box_t box, uint64_t before,
				const tsr_box_t *marks, int n, const char *msg)
{
	if (__atomic_load_n(&tsr__npoison, __ATOMIC_RELAXED))
		remove_where(replaced_in, root, field, box, before);

	for (int i = 0; i < n; i++)
		tsr__field_poison_add(root, field, marks[i], msg, before - 1);
}

/* ------------------------------------------------------------------ the policy, per task */

void tsr__ctx_hold_states(struct tsr_ctx *ctx)
{
	for (int r = 0; r < ctx->nreqs; r++)
		if (ctx->reqs[r].fstate)
			tsr__fstate_ref(ctx->reqs[r].fstate);

	if (ctx->ret_state)
		tsr__fstate_ref(ctx->ret_state);
}

void tsr__ctx_drop_states(struct tsr_ctx *ctx)
{
	for (int r = 0; r < ctx->nreqs; r++)
		if (ctx->reqs[r].fstate)
			tsr__fstate_unref(ctx->reqs[r].fstate);

	if (ctx->ret_state)
		tsr__fstate_unref(ctx->ret_state);
}

static int reads(tsr_privilege_t p)
{
	return p == TSR_READ || p == TSR_READ_WRITE;
}

static tsr_box_t req_box(const struct tsr_reqrec *q)
{
	tsr_box_t b;

	b.dim = q->dim;
	memcpy(b.lo, q->lo, sizeof b.lo);
	memcpy(b.hi, q->hi, sizeof b.hi);
	return b;
}

/* The message of the first poisoned input (a future, or data the task reads), malloc'd; NULL if
 * every input is healthy. Field poison is looked at only when some exists. */
char *tsr__poison_inherited(const struct tsr_ctx *ctx)
{
	for (int r = 0; r < ctx->nreqs; r++) {
		const struct tsr_reqrec *q = &ctx->reqs[r];
		if (q->fstate) {
			const char *msg = tsr__fstate_poison(q->fstate);
			if (msg)
				return strdup(msg);
		}
	}

	if (!__atomic_load_n(&tsr__npoison, __ATOMIC_RELAXED))
		return NULL;

	for (int r = 0; r < ctx->nreqs; r++) {
		const struct tsr_reqrec *q = &ctx->reqs[r];
		if (q->kind == TSR_REQ_FUTURE || !reads(q->priv))
			continue;

		for (int k = 0; k < q->nfields; k++) {
			char *msg = tsr__field_poison_find(q->root_id, q->fields[k], req_box(q),
							   ctx->seq);
			if (msg)
				return msg;
		}
	}

	return NULL;
}

/* A failed (or skipped) task: everything it should have written carries `msg`. */
void tsr__poison_outputs(const struct tsr_ctx *ctx, const char *msg)
{
	for (int r = 0; r < ctx->nreqs; r++) {
		const struct tsr_reqrec *q = &ctx->reqs[r];
		if (q->kind == TSR_REQ_FUTURE || q->priv == TSR_READ)
			continue;

		for (int k = 0; k < q->nfields; k++)
			tsr__field_poison_add(q->root_id, q->fields[k], req_box(q), msg, ctx->seq);
	}

	if (ctx->ret_state)
		tsr__fstate_set_poison(ctx->ret_state, msg);
}

/* A successful task: what it wrote (WRITE replaced every value there) is healthy again. */
void tsr__heal_outputs(const struct tsr_ctx *ctx)
{
	if (!__atomic_load_n(&tsr__npoison, __ATOMIC_RELAXED))
		return;

	for (int r = 0; r < ctx->nreqs; r++) {
		const struct tsr_reqrec *q = &ctx->reqs[r];
		if (q->kind == TSR_REQ_FUTURE || q->priv != TSR_WRITE)
			continue;

		for (int k = 0; k < q->nfields; k++)
			tsr__field_poison_clear(q->root_id, q->fields[k], req_box(q), ctx->seq);
	}
}
