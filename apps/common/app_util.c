/* app_util.c: the helpers every program under apps/ shares (app_util.h) that need the runtime:
 * start-up, the rank that reports, checked host maps and the report of a failed Tessera call. The
 * clock, median and integer options are app_base.c's, the command line app_cli.c's, the progress
 * line app_progress.c's. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "app_util.h"

static int my_rank = 0, nranks = 1; /* app_start's, kept past tsr_finalize */

int app_start(void)
{
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	int rc = tsr_init(&cfg);
	if (rc != TSR_OK)
		return app_fail("tsr_init", rc);
	my_rank = tsr_rank();
	nranks = tsr_nranks();
	return TSR_OK;
}

int app_rank(void)
{
	return my_rank;
}

int app_nranks(void)
{
	return nranks;
}

int app_printf(const char *fmt, ...)
{
	if (my_rank != 0)
		return 0;
	va_list ap;
	va_start(ap, fmt);
	int n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}

const char *app_ranks_note(void)
{
	static char note[48];
	if (nranks <= 1)
		return "";
	snprintf(note, sizeof note, " per rank, %d ranks", nranks);
	return note;
}

int app_map(const char *what, tsr_region_t r, tsr_field_t f, tsr_privilege_t priv,
	    tsr_accessor_t *acc)
{
	int rc = tsr_map(r, f, priv, acc);
	if (rc != TSR_OK)
		return app_fail(what, rc);
	if (!acc->ptr) {
		const char *name = tsr_region_name(r);
		fprintf(stderr,
			"%s: %s: tsr_map of field %d of region '%s' returned no host address\n",
			app_name(), what, (int)f, name ? name : "?");
		tsr_unmap(r, f);
		return TSR_ESTATE;
	}
	return TSR_OK;
}

int app_fail(const char *what, int rc)
{
	fprintf(stderr, "%s: %s: %s: %s\n", app_name(), what, tsr_err_name(rc), tsr_last_error());
	return rc;
}
