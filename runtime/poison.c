/* poison.c: a task that fails poisons what it writes, so that nothing computed from it passes for
 * a result. Futures carry a reference-counted state; fields carry a list of poisoned boxes. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* ------------------------------------------------------------------ futures */
/* Shared by the future (until tsr_future_destroy) and by each task that reads or writes it (until
 * its wrapper ends), so a worker never writes into a destroyed future. */
struct tsr_fstate {
	int refs;
	char *poison;   /* message of the failed task that should have produced the value */
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
	__atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void tsr__fstate_unref(struct tsr_fstate *s)
{
	if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
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
	if (!__atomic_compare_exchange_n(&s->poison, &none, copy, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		free(copy);
}

/* ------------------------------------------------------------------- fields */
/* Failures are rare, so one list and one lock serve every field; tsr__npoison lets every healthy
 * task skip the lock with one load. Regions are named by id, which is never reused. */
struct poisoned {
	uint64_t root;
	int field;
	tsr_box_t box;
	char *msg;
	uint64_t seq;                 /* submission order of the failed task */
	struct poisoned *next;
};
static struct poisoned *poisoned;
static pthread_mutex_t poison_lock = PTHREAD_MUTEX_INITIALIZER;
int tsr__npoison;

char *tsr__field_poison_find(uint64_t root, int field, tsr_box_t box)
{
	char *msg = NULL;
	pthread_mutex_lock(&poison_lock);
	for (struct poisoned *p = poisoned; p && !msg; p = p->next)
		if (p->root == root && p->field == field && tsr__box_overlap(p->box, box))
			msg = strdup(p->msg);
	pthread_mutex_unlock(&poison_lock);
	return msg;
}

void tsr__field_poison_add(uint64_t root, int field, tsr_box_t box, const char *msg, uint64_t seq)
{
	pthread_mutex_lock(&poison_lock);
	for (struct poisoned *p = poisoned; p; p = p->next)
		if (p->root == root && p->field == field && tsr__box_equal(&p->box, &box)) {
			pthread_mutex_unlock(&poison_lock);
			return;   /* the first failure that wrote this box is the one to report */
		}
	struct poisoned *p = malloc(sizeof *p);
	char *copy = strdup(msg);
	if (p && copy) {
		p->root = root;
		p->field = field;
		p->box = box;
		p->msg = copy;
		p->seq = seq;
		p->next = poisoned;
		poisoned = p;
		__atomic_add_fetch(&tsr__npoison, 1, __ATOMIC_RELEASE);
	} else {
		free(p);
		free(copy);
	}
	pthread_mutex_unlock(&poison_lock);
}

/* Remove the poisoned boxes for which drop() says so. */
static void remove_where(int (*drop)(const struct poisoned *p, uint64_t root, int field, tsr_box_t box, uint64_t before),
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
		free(p->msg);
		free(p);
		__atomic_sub_fetch(&tsr__npoison, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&poison_lock);
}

static int covered_by(const struct poisoned *p, uint64_t root, int field, tsr_box_t box, uint64_t before)
{
	return p->root == root && p->field == field && tsr__box_inside(&p->box, &box) && p->seq < before;
}

static int of_region(const struct poisoned *p, uint64_t root, int field, tsr_box_t box, uint64_t before)
{
	return p->root == root;
}

static int any(const struct poisoned *p, uint64_t root, int field, tsr_box_t box, uint64_t before)
{
	return 1;
}

/* A successful WRITE (or fill, or host WRITE mapping) of box replaces every value inside it. */
void tsr__field_poison_clear(uint64_t root, int field, tsr_box_t box, uint64_t before)
{
	remove_where(covered_by, root, field, box, before);
}

void tsr__poison_forget_region(uint64_t root)
{
	remove_where(of_region, root, 0, tsr_box1(0, 0), 0);
}

void tsr__poison_reset(void)
{
	remove_where(any, 0, 0, tsr_box1(0, 0), 0);
}
