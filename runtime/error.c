/* error.c: the error-code table (name + message) and the per-thread detailed message.
 * Task variants report errors through tsr_ctx_error; the first one is kept for tsr_fence, and each
 * failing task keeps its own so that what it writes is poisoned with it (task.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include "internal.h"

static _Thread_local char last_msg[512];

static pthread_mutex_t task_err_lock = PTHREAD_MUTEX_INITIALIZER;
static char task_err_msg[512];
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
	return last_msg;
}

int tsr__err(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_msg, sizeof last_msg, fmt, ap);
	va_end(ap);
	return code;
}

/* Called from worker threads: keep the first message until the next fence reads it. */
void tsr__task_error(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	snprintf(last_msg, sizeof last_msg, "%s", buf);

	struct tsr_ctx *ctx = tsr__current_ctx();
	if (ctx && !ctx->failmsg)
		ctx->failmsg = strdup(buf);

	pthread_mutex_lock(&task_err_lock);
	if (!task_err_pending) {
		snprintf(task_err_msg, sizeof task_err_msg, "%s", buf);
		task_err_pending = 1;
	}
	pthread_mutex_unlock(&task_err_lock);
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
		rc = tsr__err(TSR_ETASK, "%s", task_err_msg);
		task_err_pending = 0;
	}
	pthread_mutex_unlock(&task_err_lock);
	return rc;
}
