/* app_progress.c: the apps' progress line on stderr (app_util.h): iterations done, time per
 * iteration and the time left, at most every PROGRESS_EVERY seconds, from rank 0; and how often
 * a loop that only submits must wait for its tasks to know how far they are (about once a
 * second). */
#include "config.h"

#include <stdio.h>

#include "app_util.h"

enum { PROGRESS_EVERY = 2 }; /* seconds between two lines, at least */

static struct {
	int on;           /* app_progress_set */
	const char *unit; /* "iteration" (a line says "iterations" where there are several) */
	int64_t total;
	int at_most;     /* total is a bound (cg's maxiter), not the count */
	int64_t waited;  /* units done at the last wait */
	int64_t chunk;   /* units to submit between two waits */
	double t0, said; /* app_now() at begin, at the last line */
} pg;

void app_progress_set(int on)
{
	pg.on = on;
}

int app_progress_on(void)
{
	return pg.on;
}

void app_progress_begin(const char *unit, int64_t total, int at_most)
{
	pg.unit = unit;
	pg.total = total;
	pg.at_most = at_most;
	pg.waited = 0;
	pg.chunk = 1;
	pg.t0 = pg.said = app_now();
}

/* Several ranks make the same calls in the same order: a wait decided by one rank's clock would
 * be a call the others do not make, so a loop that only submits waits only in one process. */
int app_progress_due(int64_t submitted)
{
	if (!pg.on || app_nranks() > 1)
		return 0;
	return submitted - pg.waited >= pg.chunk;
}

/* The line: "NAME: 40/100 iterations, 2.5 ms per iteration, ETA 0.2 s". */
static void say(int64_t done, double elapsed)
{
	double per = done > 0 ? elapsed / (double)done : 0.0;
	double left = (double)(pg.total - done) * per;
	fprintf(stderr, "%s: %lld/%lld %ss, %.3g ms per %s, ETA %s%.1f s\n", app_name(),
		(long long)done, (long long)pg.total, pg.unit, 1e3 * per, pg.unit,
		pg.at_most ? "at most " : "", left > 0 ? left : 0.0);
}

void app_progress_done(int64_t done)
{
	double now = app_now();
	double elapsed = now - pg.t0;

	/* the next wait after about a second's worth of units */
	if (done > pg.waited && elapsed > 0) {
		double per = elapsed / (double)done;
		pg.chunk = per > 0 ? (int64_t)(1.0 / per) : 1;
		if (pg.chunk < 1)
			pg.chunk = 1;
	}
	pg.waited = done;

	if (!pg.on || app_rank() != 0 || now - pg.said < PROGRESS_EVERY)
		return;
	pg.said = now;
	say(done, elapsed);
}

void app_progress_end(int64_t done)
{
	if (!pg.on || app_rank() != 0)
		return;
	double elapsed = app_now() - pg.t0;
	fprintf(stderr, "%s: %lld %ss done in %.2f s, %.3g ms per %s\n", app_name(),
		(long long)done, pg.unit, elapsed, done > 0 ? 1e3 * elapsed / (double)done : 0.0,
		pg.unit);
}
