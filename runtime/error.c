/* error.c: the error-code table (name + message) and the per-thread detailed message, as long as
 * it needs to be (a message is never cut). Task variants report errors through tsr_ctx_error; the
 * first one is kept for tsr_fence, and each failing task keeps its own so that what it writes is
 * poisoned with it (task.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include "internal.h"

/* This thread's last message: grown to fit, freed when the thread ends (msg_key's destructor). */
static _Thread_local char *last_msg;
static _Thread_local size_t last_cap;
static pthread_key_t msg_key;
static pthread_once_t msg_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t task_err_lock = PTHREAD_MUTEX_INITIALIZER;
static char *task_err_msg; /* the first failed task's message, until a fence takes it */
static int task_err_pending;

static const struct {
	int code;
	const char *name, *msg;
} table[] = {
	{TSR_OK, "TSR_OK", "success"},
	{TSR_EINVAL, "TSR_EINVAL", "invalid argument"},
	{TSR_EBOUNDS, "TSR_EBOUNDS", "box or color out of bounds"},
	{TSR_ETYPE, "TSR_ETYPE", "element type mismatch"},
	{TSR_EPRIV, "TSR_EPRIV", "access not covered by the requested privilege"},
	{TSR_EINTERFERE, "TSR_EINTERFERE", "requirements interfere"},
	{TSR_ESTALE, "TSR_ESTALE", "handle destroyed or never created"},
	{TSR_ENOFIELD, "TSR_ENOFIELD", "field not in the region or not requested"},
	{TSR_ENOMEM, "TSR_ENOMEM", "out of memory"},
	{TSR_ESTARPU, "TSR_ESTARPU", "StarPU refused the call"},
	{TSR_ESTATE, "TSR_ESTATE", "runtime or object in the wrong state"},
	{TSR_ELIVE, "TSR_ELIVE", "live objects destroyed at finalize"},
	{TSR_ENODEV, "TSR_ENODEV", "no worker can run the task"},
	{TSR_EBUSY, "TSR_EBUSY", "object mapped on the host or in use"},
	{TSR_ETASK, "TSR_ETASK", "a task variant reported an error"},
	{TSR_EDIVERGE, "TSR_EDIVERGE", "the MPI ranks made different calls"},
};

const char *tsr_err_name(int code)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].code == code)
			return table[i].name;
	return "TSR_EUNKNOWN";
}

const char *tsr_strerror(int code)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (table[i].code == code)
			return table[i].msg;
	return "unknown error code";
}

const char *tsr_last_error(void)
{
	return last_msg ? last_msg : "";
}

static void make_msg_key(void)
{
	pthread_key_create(&msg_key, free);
}

/* Room for n bytes in this thread's message; 0 if there is none (the old message stays). */
static int msg_room(size_t n)
{
	if (n <= last_cap)
		return 1;

	pthread_once(&msg_once, make_msg_key);
	char *p = realloc(last_msg, n);
	if (!p)
		return 0;

	last_msg = p;
	last_cap = n;
	pthread_setspecific(msg_key, p);
	return 1;
}

char *tsr__vformat(const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s)
		vsnprintf(s, (size_t)n + 1, fmt, again);
	va_end(again);
	return s;
}

char *tsr__format(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = tsr__vformat(fmt, ap);
	va_end(ap);
	return s;
}

int tsr__append(char **s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *more = tsr__vformat(fmt, ap);
	va_end(ap);

	size_t have = *s ? strlen(*s) : 0;
	char *p = more ? realloc(*s, have + strlen(more) + 1) : NULL;
	if (!p) {
		free(more);
		return TSR_ENOMEM;
	}

	strcpy(p + have, more);
	free(more);
	*s = p;
	return TSR_OK;
}

/* This thread's message becomes s (copied: s may be the message itself, or part of it). */
static void set_msg(const char *s)
{
	size_t n = strlen(s) + 1;
	char *copy = malloc(n);
	if (!copy)
		return;
	memcpy(copy, s, n);
	if (msg_room(n))
		memcpy(last_msg, copy, n);
	free(copy);
}

/* A broken invariant (tsr__assert) is Tessera's bug: say where, then abort (a core, a trace). */
void tsr__assert_fail(const char *cond, const char *file, int line, const char *func)
{
	const char *fmt = "Tessera: %s:%d: %s: assertion failed: %s (Tessera's bug, not yours)\n";
	fprintf(stderr, fmt, file, line, func, cond);
	abort();
}

int tsr__err(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = tsr__vformat(fmt, ap);
	va_end(ap);

	set_msg(s ? s : "out of memory for an error message");
	free(s);
	return code;
}

int tsr__err_of(int rc, const char *fmt, ...)
{
	if (rc != TSR_ENOMEM)
		return rc;

	va_list ap;
	va_start(ap, fmt);
	char *object = tsr__vformat(fmt, ap);
	va_end(ap);

	tsr__err(rc, "%s: out of memory", object ? object : "Tessera");
	free(object);
	return rc;
}

int tsr__starpu_code(int starpu_rc)
{
	if (starpu_rc == 0)
		return TSR_OK;
	if (starpu_rc == -ENODEV)
		return TSR_ENODEV;
	if (starpu_rc == -ENOMEM)
		return TSR_ENOMEM;
	return TSR_ESTARPU;
}

/* Called from worker threads: keep the first message until the next fence reads it. */
void tsr__task_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *buf = tsr__vformat(fmt, ap);
	va_end(ap);
	if (!buf)
		buf = strdup("a task failed (out of memory for its message)");
	if (!buf)
		return;

	set_msg(buf);
	struct tsr_ctx *ctx = tsr__current_ctx();
	if (ctx && !ctx->failmsg)
		ctx->failmsg = strdup(buf);

	pthread_mutex_lock(&task_err_lock);
	if (!task_err_pending) {
		free(task_err_msg);
		task_err_msg = buf;
		buf = NULL;
		task_err_pending = 1;
	}
	pthread_mutex_unlock(&task_err_lock);
	free(buf);
}

int tsr__peek_task_error(char *buf, size_t n)
{
	pthread_mutex_lock(&task_err_lock);
	int pending = task_err_pending;
	if (pending)
		snprintf(buf, n, "%s", task_err_msg);
	pthread_mutex_unlock(&task_err_lock);
	return pending;
}

int tsr__take_task_error(void)
{
	int rc = TSR_OK;
	pthread_mutex_lock(&task_err_lock);
	if (task_err_pending) {
		tsr__assert(task_err_msg != NULL);
		rc = tsr__err(TSR_ETASK, "%s", task_err_msg);
		free(task_err_msg);
		task_err_msg = NULL;
		task_err_pending = 0;
	}
	pthread_mutex_unlock(&task_err_lock);
	return rc;
}
