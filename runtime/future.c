/* future.c: futures are small StarPU variable handles. Waiting is a starpu_data_acquire; a task
 * consuming a future reads the handle, so the host never blocks. StarPU owns each value's memory
 * (registered with no home node), so destroying a future frees it as soon as StarPU unregisters the
 * handle, after the last task that uses it: a loop of launches needs no fence to run in constant
 * memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/* Copy `init` into the value on the host; the handle has no task yet, so nothing waits. */
static void future_set(struct tsr_future *f, const void *init)
{
	starpu_data_acquire_on_node(f->h, STARPU_MAIN_RAM, STARPU_W);
	void *value = (void *)STARPU_VARIABLE_GET_PTR(
		starpu_data_get_interface_on_node(f->h, STARPU_MAIN_RAM));
	memcpy(value, init, f->size);
	starpu_data_release_on_node(f->h, STARPU_MAIN_RAM);
}

/* A future whose value StarPU allocates where the first task (or `init`) writes it. */
struct tsr_future *tsr__future_new(tsr_type_t type, size_t size, const void *init)
{
	struct tsr_future *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;

	f->state = tsr__fstate_new();
	if (!f->state) {
		free(f);
		return NULL;
	}

	f->type = type;
	f->size = size;
	tsr__xvalue_register(&f->h, size);
	tsr__assert(f->h != NULL);
	if (init)
		future_set(f, init);

	f->id = tsr__handle_new(TSR_K_FUTURE, f);
	return f;
}

/* StarPU unregisters the handle (and frees the value) once the tasks using it are done; the
 * poison state goes with the last of them. */
void tsr__future_free(void *obj)
{
	struct tsr_future *f = obj;
	tsr__handle_free(f->id);
	tsr__xvalue_forget(f->h);
	starpu_data_unregister_submit(f->h);
	tsr__fstate_unref(f->state);
	free(f);
}

/* The binomial tree rooted at `from`, in ranks relative to it: v's parent is v without its lowest
 * set bit, and v's children are v + 2^k for every 2^k below that bit. Each rank receives once, so
 * one tag serves the whole broadcast; a rank's sends read the value its receive wrote (StarPU's
 * sequential consistency orders them). */
int tsr__future_bcast(struct tsr_future *f, int from)
{
	if (!tsr__dist.on || from == TSR_ALL_RANKS || tsr__dist.size == 1)
		return TSR_OK;

	int n = tsr__dist.size;
	int v = (tsr__dist.rank - from + n) % n;
	int low = v ? v & -v : 1 << 30;
	int64_t tag = tsr__dist_tag();
	int rc = TSR_OK;
	int peer = from;

	if (v) {
		peer = (v - low + from) % n;
		rc = tsr__xvalue_recv(f->h, f->state, peer, tag);
	}

	int top = 1;
	while (top < n)
		top <<= 1;

	/* the largest subtree first: it has the most rounds to go */
	for (int k = top >> 1; k > 0 && !rc; k >>= 1)
		if (k < low && v + k < n) {
			peer = (v + k + from) % n;
			rc = tsr__xvalue_send(f->h, f->state, peer, tag, f->size);
		}

	if (rc)
		return tsr__err(rc, "future of %s: broadcasting it from rank %d failed (rank %d)",
				f->producer[0] ? f->producer : "tsr_future_create", from, peer);
	return TSR_OK;
}

static int future_wait(struct tsr_future *f, void *value, size_t size);

int tsr_future_wait(tsr_future_t fid, void *value, size_t size)
{
	struct tsr_future *f;
	int rc = tsr__future_lookup(fid, "tsr_future_wait", &f);
	if (rc)
		return rc;

	TSR_REQUIRE_RUNNING("tsr_future_wait");
	if (!value || size != f->size)
		return tsr__err(TSR_EINVAL,
				"tsr_future_wait: future of %s holds %zu bytes (%s), asked for "
				"%zu%s",
				f->producer[0] ? f->producer : "tsr_future_create", f->size,
				tsr_type_name(f->type), size, value ? "" : " into a null pointer");

	tsr__dist_note("tsr_future_wait", &fid.id, sizeof fid.id);
	if ((rc = tsr__dist_check("tsr_future_wait")))
		return rc;

	/* several ranks: every rank returns what the first rank in trouble says, or the value */
	return tsr__dist_agree(future_wait(f, value, size));
}

static int future_wait(struct tsr_future *f, void *value, size_t size)
{
	tsr__assert(value && size == f->size); /* tsr_future_wait checked them */
	if (starpu_data_acquire_on_node(f->h, STARPU_MAIN_RAM, STARPU_R))
		return tsr__err(TSR_ESTARPU, "tsr_future_wait: starpu_data_acquire failed");

	/* the tasks that wrote the value are done: their poison, if any, is visible */
	const char *poison = tsr__fstate_poison(f->state);
	if (poison) {
		starpu_data_release_on_node(f->h, STARPU_MAIN_RAM);
		return tsr__err(TSR_ETASK, "tsr_future_wait: future of %s has no value: %s",
				f->producer[0] ? f->producer : "tsr_future_create", poison);
	}

	const void *v = (const void *)STARPU_VARIABLE_GET_PTR(
		starpu_data_get_interface_on_node(f->h, STARPU_MAIN_RAM));
	memcpy(value, v, size);

	/* what finished while the host waited goes now, not at the next launch */
	tsr__order_reap();
	starpu_data_release_on_node(f->h, STARPU_MAIN_RAM);
	return TSR_OK;
}

int tsr_future_create(tsr_type_t type, size_t bytes, const void *value, tsr_future_t *out)
{
	TSR_REQUIRE_INIT("tsr_future_create");
	size_t size = type == TSR_BYTES ? bytes : tsr_type_size(type);
	if (!out || !value || size == 0)
		return tsr__err(TSR_EINVAL, "tsr_future_create: need a type with a size, a value "
					    "and an output");

	struct tsr_future *f = tsr__future_new(type, size, value);
	if (!f)
		return tsr__err(TSR_ENOMEM, "tsr_future_create: out of memory");

	out->id = f->id;
	return TSR_OK;
}

int tsr_future_destroy(tsr_future_t fid)
{
	struct tsr_future *f;
	int rc = tsr__future_lookup(fid, "tsr_future_destroy", &f);
	if (rc)
		return rc;

	tsr__future_free(f);
	return TSR_OK;
}

int tsr_future_take(tsr_future_t f, void *value, size_t size)
{
	int rc = tsr_future_wait(f, value, size);
	if (rc == TSR_ESTALE)
		return rc;

	/* keep the wait's message: destroying is the cleanup, its status is not the answer */
	char *msg = rc ? strdup(tsr_last_error()) : NULL;

	int drc = tsr_future_destroy(f);
	if (rc)
		tsr__err(rc, "%s", msg ? msg : "(out of memory for the message)");
	free(msg);
	return rc ? rc : drc;
}
