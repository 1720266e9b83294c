/* app_util.h: the helpers every program under apps/ shares (a clock, a median, integer options,
 * start-up, checked host maps, the report of a failed call), so that each app keeps only its own
 * algorithm. */
#ifndef APP_UTIL_H
#define APP_UTIL_H

#include <stdint.h>

#include <tessera.h>

/* The program name that starts every message ("circuit: ..."); main sets it first. */
void app_set_name(const char *name);
const char *app_name(void);

/* Seconds on the monotonic clock (only differences mean anything). */
double app_now(void);

/* Median of v[0..n-1], n >= 1. Sorts v in place, so that v[0] and v[n-1] are then the minimum
 * and the maximum, which callers print beside the median. */
double app_median(double *v, int n);

/* Option `opt` given `text`: a whole decimal integer in [min, max]. Otherwise prints
 * "NAME: OPT 'TEXT': expected an integer >= MIN and <= MAX" (or that the value is missing when
 * text is NULL) and returns -1; *out is then untouched. */
int app_parse_i64(const char *opt, const char *text, int64_t min, int64_t max, int64_t *out);
int app_parse_int(const char *opt, const char *text, int min, int max, int *out);

/* tsr_init with the app's --sched and CPU worker count (NULL and -1: TSR_SCHED, TSR_NCPU or
 * StarPU's choice); a failure is reported (app_fail) and its code returned. */
int app_init(const char *sched, int ncpu);
/* The same with an OpenCL worker count too (--nopencl; -1: TSR_NOPENCL, or none). */
int app_init_workers(const char *sched, int ncpu, int nopencl);

/* Several ranks (mpirun): every rank runs the whole program and computes the same report, so an
 * app prints its report from rank 0 alone and writes its output files there. app_init records
 * this process's rank and the rank count, which stay readable after tsr_finalize (where
 * tsr_rank() and tsr_nranks() say 0 and 1 again); before app_init they are 0 and 1. */
int app_rank(void);
int app_nranks(void);
/* printf on rank 0 only (on every process before app_init). Errors go to stderr from every rank. */
int app_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The report's workers line's tail: "" in one process, " per rank, N ranks" on several. */
const char *app_ranks_note(void);

/* tsr_map, checked before the caller touches the data: a failure, or a mapping that came back
 * without a host address (then unmapped again), is reported under `what` and its code returned
 * (TSR_ESTATE for the missing address); TSR_OK when acc->ptr is the host address of the field. */
int app_map(const char *what, tsr_region_t r, tsr_field_t f, tsr_privilege_t priv,
	    tsr_accessor_t *acc);

/* Prints "NAME: WHAT: TSR_ECODE: message of tsr_last_error()" on stderr and returns rc, so that
 * a failed call is reported once, where it failed, and its code travels up unchanged. */
int app_fail(const char *what, int rc);

/* APP_TRY(what, call): a Tessera call; on failure report it under `what` and return its code
 * from the calling function. TRY(call) names the call by its source text. PASS(call): a call of
 * the app's own that reported its failure already; return its code. */
#define APP_TRY(what, call)                               \
	do {                                              \
		int app_rc_ = (call);                     \
		if (app_rc_ != TSR_OK)                    \
			return app_fail((what), app_rc_); \
	} while (0)
#define TRY(call) APP_TRY(#call, call)
#define PASS(call)                      \
	do {                            \
		int app_rc_ = (call);   \
		if (app_rc_ != TSR_OK)  \
			return app_rc_; \
	} while (0)

#endif /* APP_UTIL_H */
