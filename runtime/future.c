/* future.c: futures are small StarPU variable handles. Waiting is a starpu_data_acquire; a task
 * consuming a future reads the handle, so the host never blocks. Destroying is asynchronous:
 * the value's memory is freed at the next fence, once every task that used it is done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static void **graveyard;
static size_t ngrave, capgrave;

int tsr__future_lookup(tsr_future_t f, const char *what, struct tsr_future **out)
{
	TSR_REQUIRE_INIT(what);
	*out = tsr__handle_get(TSR_K_FUTURE, f.id);
	if (!*out)
		return tsr__err(TSR_ESTALE, "%s: future id %#llx was destroyed or never created", what, (unsigned long long)f.id);
	return TSR_OK;
}

struct tsr_future *tsr__future_new(tsr_type_t type, size_t size, const void *init)
{
	struct tsr_future *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->value = calloc(1, size < 16 ? 16 : size);
	if (!f->value) {
		free(f);
		return NULL;
	}
	if (init)
		memcpy(f->value, init, size);
	f->type = type;
	f->size = size;
	starpu_variable_data_register(&f->h, STARPU_MAIN_RAM, (uintptr_t)f->value, size);
	f->id = tsr__handle_new(TSR_K_FUTURE, f);
	return f;
}

void tsr__future_free(void *obj)
{
	struct tsr_future *f = obj;
	tsr__handle_free(f->id);
	starpu_data_unregister_submit(f->h);
	if (ngrave == capgrave) {
		size_t ncap = capgrave ? 2 * capgrave : 64;
		void **ng = realloc(graveyard, ncap * sizeof *ng);
		if (!ng) {
			/* cannot defer: wait for the handle's tasks instead */
			tsr__wait_all();
			free(f->value);
			free(f);
			return;
		}
		graveyard = ng;
		capgrave = ncap;
	}
	graveyard[ngrave++] = f->value;
	free(f);
}

/* Called after starpu_task_wait_for_all: every unregistration has happened. */
void tsr__future_graveyard_flush(int release)
{
	for (size_t i = 0; i < ngrave; i++)
		free(graveyard[i]);
	ngrave = 0;
	if (release) {
		free(graveyard);
		graveyard = NULL;
		capgrave = 0;
	}
}

int tsr_future_wait(tsr_future_t fid, void *value, size_t size)
{
	struct tsr_future *f;
	int rc = tsr__future_lookup(fid, "tsr_future_wait", &f);
	if (rc)
		return rc;
	TSR_REQUIRE_RUNNING("tsr_future_wait");
	if (!value || size != f->size)
		return tsr__err(TSR_EINVAL, "tsr_future_wait: future of %s holds %zu bytes (%s), asked for %zu%s",
		                f->producer[0] ? f->producer : "tsr_future_create", f->size, tsr_type_name(f->type), size,
		                value ? "" : " into a null pointer");
	if (starpu_data_acquire(f->h, STARPU_R))
		return tsr__err(TSR_ESTARPU, "tsr_future_wait: starpu_data_acquire failed");
	memcpy(value, f->value, size);
	starpu_data_release(f->h);
	return TSR_OK;
}

int tsr_future_create(tsr_type_t type, size_t bytes, const void *value, tsr_future_t *out)
{
	TSR_REQUIRE_INIT("tsr_future_create");
	size_t size = type == TSR_BYTES ? bytes : tsr_type_size(type);
	if (!out || !value || size == 0)
		return tsr__err(TSR_EINVAL, "tsr_future_create: need a type with a size, a value and an output");
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
	char msg[512];
	snprintf(msg, sizeof msg, "%s", tsr_last_error());
	int drc = tsr_future_destroy(f);
	if (rc)
		return tsr__err(rc, "%s", msg);
	return drc;
}
