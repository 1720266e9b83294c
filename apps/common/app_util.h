/* app_util.h: the helpers every program under apps/ shares (a clock, a median, the command line,
 * start-up, a progress line, checked host maps, the report of a failed call), so that each app
 * keeps only its own algorithm. */
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

/* ---- the command line (app_cli.c): one table per app, one parser for all */
typedef enum {
	APP_OPT_SET,     /* no value: stores `min` into the int at dst (--verify, --csr) */
	APP_OPT_INT,     /* an int in [min, max] */
	APP_OPT_I64,     /* an int64_t in [min, max] */
	APP_OPT_DOUBLE,  /* a double >= min */
	APP_OPT_WORDS,   /* an int: the group of `words` ("f64,double|f32,float": 0 or 1) */
	APP_OPT_STRING,  /* a const char * */
	APP_OPT_OUTFILE, /* a const char *: a file the run writes, checked before it starts */
	APP_OPT_GONE,    /* an option that no longer exists: refused with `help` (what to use) */
} app_opt_kind_t;

typedef struct app_opt {
	const char *name; /* as --help shows it ("-nx", "--out"); one or two dashes match */
	app_opt_kind_t kind;
	void *dst;
	int64_t min, max;
	const char *words; /* APP_OPT_WORDS */
	const char *arg;   /* the value's placeholder in --help ("N"); NULL: no value */
	const char *help;  /* what it does; '\n' continues on the next line */
} app_opt_t;

typedef struct app_cli {
	const char *name;  /* the program, which starts every message */
	const char *about; /* what it does: --help's first lines */
	const app_opt_t *opts;
	int nopts;
	const char *epilog; /* --help's last lines (exit statuses), or NULL */
} app_cli_t;

/* The whole command line: Tessera's flags first (tsr_args: --ncpu, --sched... win over TSR_* and
 * STARPU_*), then the program's options, then --help (-h), --version, --progress and --quiet,
 * which every app has; `--sched help` (or TSR_SCHED=help) lists the policies. Output files
 * (APP_OPT_OUTFILE) are checked last. Returns 0 to run, 1 when it printed what was asked (help,
 * version, policies: exit 0), -1 on a mistake, said on stderr (exit 2). */
int app_parse(const app_cli_t *cli, int argc, char **argv);
void app_print_version(const char *name); /* "NAME (Tessera) 0.5.0" */
/* Whether path can be written (an existing file) or created (in an existing, writable
 * directory), touching nothing; -1 with "NAME: OPT PATH: why" on stderr otherwise. */
int app_check_outfile(const char *opt, const char *path);

/* tsr_init with what the command line and the environment say (app_parse first); a failure is
 * reported (app_fail) and its code returned. */
int app_start(void);

/* ---- the progress line (app_progress.c): on stderr, rank 0, when stderr is a terminal or with
 * --progress, never with --quiet (app_parse decides) */
void app_progress_set(int on);
int app_progress_on(void);
/* A loop of `total` units ("iteration": singular) starts; at_most: total is a bound. */
void app_progress_begin(const char *unit, int64_t total, int at_most);
/* A loop that only submits asks after each unit whether to wait for its tasks now (about once a
 * second when the line is on, never on several ranks); after the wait, app_progress_done. */
int app_progress_due(int64_t submitted);
/* `done` units are complete: a line if the last one is PROGRESS_EVERY seconds old. */
void app_progress_done(int64_t done);
void app_progress_end(int64_t done); /* the closing line: how many, how long */

/* Several ranks (mpirun): every rank runs the whole program and computes the same report, so an
 * app prints its report from rank 0 alone and writes its output files there. app_start records
 * this process's rank and the rank count, which stay readable after tsr_finalize (where
 * tsr_rank() and tsr_nranks() say 0 and 1 again); before app_start they are 0 and 1. */
int app_rank(void);
int app_nranks(void);
/* printf on rank 0 only (on every process before app_start). Errors go to stderr from every rank.
 */
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
