/* handles.c: the table behind every opaque id. An id packs kind, generation and slot, so a
 * destroyed or foreign id is detected instead of dereferenced (use after destroy never crashes). */
#include <stdlib.h>
#include "internal.h"

struct slot {
	void *obj;
	uint32_t gen;
	uint8_t kind;
};

static struct slot *slots;
static uint32_t nslots, cap;
static uint32_t *freelist;
static uint32_t nfree;

#define ID(kind, gen, slot) \
	(((uint64_t)(kind) << 56) | ((uint64_t)((gen)&0xffffff) << 32) | (uint64_t)(slot))

uint64_t tsr__handle_new(enum tsr_kind kind, void *obj)
{
	uint32_t s;
	tsr__assert(kind > 0 && kind < TSR_K_NKINDS);
	tsr__assert(obj != NULL); /* a NULL slot is a free one */

	if (nfree) {
		s = freelist[--nfree];
	} else {
		if (nslots == cap) {
			uint32_t ncap = cap ? 2 * cap : 256;
			struct slot *ns = realloc(slots, ncap * sizeof *ns);
			uint32_t *nf = realloc(freelist, ncap * sizeof *nf);
			if (!ns || !nf) {
				if (ns)
					slots = ns;
				if (nf)
					freelist = nf;
				return 0;
			}
			slots = ns;
			freelist = nf;
			cap = ncap;
		}

		s = nslots++;
		slots[s].gen = 1;
	}

	slots[s].obj = obj;
	slots[s].kind = (uint8_t)kind;
	uint64_t id = ID(kind, slots[s].gen, s);

	/* several ranks: every creation is part of the call stream the ranks must repeat */
	static const char *made[TSR_K_NKINDS] = {"",
						 "creation of a field space",
						 "creation of a region",
						 "creation of a partition",
						 "registration of a task",
						 "creation of a future"};
	tsr__dist_note(made[kind], &id, sizeof id);
	return id;
}

void *tsr__handle_get(enum tsr_kind kind, uint64_t id)
{
	uint32_t s = (uint32_t)id;
	if ((id >> 56) != (uint64_t)kind || s >= nslots)
		return NULL;

	struct slot *sl = &slots[s];
	if (!sl->obj || sl->kind != kind || ((id >> 32) & 0xffffff) != (sl->gen & 0xffffff))
		return NULL;
	return sl->obj;
}

void tsr__handle_free(uint64_t id)
{
	uint32_t s = (uint32_t)id;
	if (s >= nslots || !slots[s].obj)
		return;

	slots[s].obj = NULL;
	slots[s].gen++;
	tsr__assert(nfree < nslots); /* s was not free */
	freelist[nfree++] = s;
	tsr__dist_note("destruction of an object", &id, sizeof id);
}

int tsr__handle_foreach(enum tsr_kind kind, void (*fn)(void *obj))
{
	int n = 0;
	for (uint32_t s = 0; s < nslots; s++)
		if (slots[s].obj && slots[s].kind == kind) {
			n++;
			if (fn)
				fn(slots[s].obj);
		}

	return n;
}

/* Generations survive a reset so that ids from a previous tsr_init stay stale. */
void tsr__handles_reset(void)
{
	nfree = 0;
	for (uint32_t s = 0; s < nslots; s++) {
		if (slots[s].obj)
			slots[s].gen++;
		slots[s].obj = NULL;
		freelist[nfree++] = s;
	}
}

int tsr__lookup(enum tsr_kind kind, uint64_t id, const char *what, void **out)
{
	*out = NULL;
	TSR_REQUIRE_INIT(what);

	*out = tsr__handle_get(kind, id);
	if (!*out)
		return tsr__err(TSR_ESTALE,
				"%s: %s id %#llx was destroyed, never created, or made before the "
				"last tsr_init",
				what, tsr__kind_name(kind), (unsigned long long)id);

	return TSR_OK;
}

const char *tsr__kind_name(enum tsr_kind kind)
{
	static const char *names[] = {"?", "field space", "region", "partition", "task", "future"};
	return kind > 0 && kind < TSR_K_NKINDS ? names[kind] : "?";
}
