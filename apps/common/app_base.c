/* app_base.c: the helpers of app_util.h that need no runtime (program name, clock, median, integer
 * options), so that the plain MPI peers of apps/bench link them without Tessera. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "app_util.h"

static const char *program_name = "app";

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
