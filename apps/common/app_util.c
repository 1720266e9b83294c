/* app_util.c: the helpers every program under apps/ shares (app_util.h): clock, median, integer
 * options, start-up, the rank that reports, checked host maps and the report of a failed Tessera
 * call. The command line is app_cli.c's, the progress line app_progress.c's. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "app_util.h"

static const char *program_name = "app";
static int my_rank = 0, nranks = 1; /* app_start's, kept past tsr_finalize */

void app_set_name(const char *name)
{
	program_name = name;
}

const char *app_name(void)
{
	return program_name;
}

double app_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a;
	double y = *(const double *)b;
	return (x > y) - (x < y);
}

double app_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, compare_doubles);
	if (n % 2)
		return v[n / 2];
	return 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int app_parse_i64(const char *opt, const char *text, int64_t min, int64_t max, int64_t *out)
{
	if (!text) {
		fprintf(stderr, "%s: %s needs a value\n", program_name, opt);
		return -1;
	}
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	/* strtoll accepts an empty string and trailing text; an option value must be the number
	 * only */
	if (errno || end == text || *end || v < min || v > max) {
		fprintf(stderr,
			"%s: %s '%s': expected an integer >= %" PRId64 " and <= %" PRId64 "\n",
			program_name, opt, text, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int app_parse_int(const char *opt, const char *text, int min, int max, int *out)
{
	int64_t v;
	if (app_parse_i64(opt, text, min, max, &v))
		return -1;
	*out = (int)v;
	return 0;
}

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
			program_name, what, (int)f, name ? name : "?");
		tsr_unmap(r, f);
		return TSR_ESTATE;
	}
	return TSR_OK;
}

int app_fail(const char *what, int rc)
{
	fprintf(stderr, "%s: %s: %s: %s\n", program_name, what, tsr_err_name(rc), tsr_last_error());
	return rc;
}
