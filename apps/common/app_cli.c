/* app_cli.c: the apps' command line, one table-driven parser for all of them (app_util.h):
 * Tessera's flags first (tsr_args: --ncpu, --sched, ... with their precedence over TSR_* and
 * STARPU_*), then the program's own options from its table, then the ones every app has (--help,
 * --version, --progress, --quiet); the output files checked before anything runs. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app_util.h"

/* The options every app has, after its own in --help. */
static int want_progress, want_quiet, want_help, want_version;
static const app_opt_t common_opts[] = {
	{"--progress", APP_OPT_SET, &want_progress, 1, 0, NULL, NULL,
	 "a progress line on stderr (iterations, time per iteration, ETA) at\n"
	 "most every 2 s; the default when stderr is a terminal (the program then\n"
	 "waits for its tasks about once a second to know how far they are)"},
	{"--quiet", APP_OPT_SET, &want_quiet, 1, 0, NULL, NULL, "no progress line"},
	{"--version", APP_OPT_SET, &want_version, 1, 0, NULL, NULL, "print the version and exit"},
	{"--help", APP_OPT_SET, &want_help, 1, 0, NULL, NULL, "this text (also -h)"},
};
enum { NCOMMON = sizeof common_opts / sizeof common_opts[0] };

/* ------------------------------------------------------------------ --help */

/* One option's lines: the name and placeholder, then its help, continued lines indented. */
static void print_opt(FILE *f, const app_opt_t *o)
{
	char head[64];
	snprintf(head, sizeof head, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
	fprintf(f, "  %-22s ", head);
	for (const char *p = o->help; *p; p++) {
		fputc(*p, f);
		if (*p == '\n')
			fprintf(f, "  %-22s ", "");
	}
	fputc('\n', f);
}

/* Tessera's flags, from its table: every Tessera program takes them. */
static void print_tessera_flags(FILE *f)
{
	const tsr_env_switch_t *t;
	int n = tsr_env_switches(&t);
	tsr_setting_t rows[64];
	tsr_settings(NULL, rows, 64);

	fprintf(f, "Tessera's flags (two dashes; every Tessera program takes them):\n");
	for (int i = 0; i < n && i < 64; i++) {
		if (!rows[i].flag)
			continue;
		const char *v = strcmp(t[i].values, "0|1") ? t[i].values : "(alone: 1)";
		fprintf(f, "  %-12s %-22s as %s\n", rows[i].flag, v, t[i].name);
	}
	fprintf(f,
		"A flag wins over its TSR_ variable (--ncpu over TSR_NCPU), which wins over\n"
		"StarPU's (STARPU_NCPU), which wins over the program's own choice;\n"
		"`tessera-info --config` shows what a run takes and where each value comes from,\n"
		"`tessera-info --env` what each switch does, --sched help the policies.\n");
}

static void print_help(const app_cli_t *cli)
{
	printf("usage: %s [options] [Tessera's flags]\n%s\n", cli->name, cli->about);
	printf("Options (one or two leading dashes):\n");
	for (int i = 0; i < cli->nopts; i++)
		if (cli->opts[i].kind != APP_OPT_GONE)
			print_opt(stdout, &cli->opts[i]);
	for (int i = 0; i < NCOMMON; i++)
		print_opt(stdout, &common_opts[i]);
	print_tessera_flags(stdout);
	if (cli->epilog)
		printf("%s\n", cli->epilog);
}

void app_print_version(const char *name)
{
	printf("%s (Tessera) %s\n", name, tsr_version(NULL, NULL, NULL));
}

/* ------------------------------------------------------------------ one option */

/* A double >= min, all of the text. */
static int parse_double(const char *opt, const char *text, double min, double *out)
{
	char *end;
	errno = 0;
	double v = text ? strtod(text, &end) : 0;
	if (!text || errno || end == text || *end || !(v >= min)) {
		fprintf(stderr, "%s: %s '%s': expected a number >= %g\n", app_name(), opt,
			text ? text : "", min);
		return -1;
	}
	*out = v;
	return 0;
}

/* The index of the group of words ("f64,double|f32,float") that holds text, or -1. */
static int word_group(const char *groups, const char *text)
{
	size_t len = strlen(text);
	int g = 0;
	for (const char *p = groups; *p; p++) {
		size_t n = strcspn(p, ",|");
		if (n == len && !strncmp(p, text, n))
			return g;
		p += n;
		if (*p == '|')
			g++;
		if (!*p)
			break;
	}
	return -1;
}

static int parse_words(const app_opt_t *o, const char *opt, const char *text)
{
	int g = text ? word_group(o->words, text) : -1;
	if (g < 0) {
		fprintf(stderr, "%s: %s '%s': expected one of %s\n", app_name(), opt,
			text ? text : "", o->words);
		return -1;
	}
	*(int *)o->dst = g;
	return 0;
}

/* Option o given as `opt` with `text` (NULL: none followed). 0, or -1 with the message printed. */
static int set_option(const app_opt_t *o, const char *opt, const char *text)
{
	int64_t v;
	switch (o->kind) {
	case APP_OPT_SET:
		*(int *)o->dst = (int)o->min;
		return 0;
	case APP_OPT_INT:
		return app_parse_int(opt, text, (int)o->min, (int)o->max, (int *)o->dst);
	case APP_OPT_I64:
		if (app_parse_i64(opt, text, o->min, o->max, &v))
			return -1;
		*(int64_t *)o->dst = v;
		return 0;
	case APP_OPT_DOUBLE:
		return parse_double(opt, text, (double)o->min, (double *)o->dst);
	case APP_OPT_WORDS:
		return parse_words(o, opt, text);
	case APP_OPT_STRING:
	case APP_OPT_OUTFILE:
		if (!text || !*text) {
			fprintf(stderr, "%s: %s needs %s\n", app_name(), opt,
				o->arg ? o->arg : "a value");
			return -1;
		}
		*(const char **)o->dst = text;
		return 0;
	default: /* APP_OPT_GONE */
		fprintf(stderr, "%s: %s is gone: %s\n", app_name(), opt, o->help);
		return -1;
	}
}

/* A name without its one or two leading dashes. */
static const char *bare(const char *name)
{
	const char *p = name;
	while (*p == '-' && p - name < 2)
		p++;
	return p;
}

static const app_opt_t *find_opt(const app_opt_t *opts, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(bare(opts[i].name), name))
			return &opts[i];
	return NULL;
}

/* An option that is not the program's: say what it may have meant. */
static void unknown(const char *opt, const char *name)
{
	char two[64];
	snprintf(two, sizeof two, "--%s", name);
	tsr_setting_t rows[64];
	int n = tsr_settings(NULL, rows, 64);
	for (int i = 0; i < n && i < 64; i++)
		if (rows[i].flag && !strcmp(rows[i].flag, two)) {
			fprintf(stderr,
				"%s: unknown option '%s' (Tessera's flags take two dashes: %s)\n",
				app_name(), opt, two);
			return;
		}
	fprintf(stderr, "%s: unknown option '%s' (see --help)\n", app_name(), opt);
}

/* ------------------------------------------------------------------ output files */

/* The directory a new file at path goes into (malloc'd; NULL out of memory). */
static char *parent_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* Why a new file cannot be made in dir (an errno), or 0. */
static int cannot_create_in(const char *dir)
{
	struct stat st;
	if (stat(dir, &st))
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	if (access(dir, W_OK | X_OK))
		return errno;
	return 0;
}

/* A file the run will write: it can be written where it is, or created in its directory. Checked
 * without touching anything, so that several ranks may check at once. */
int app_check_outfile(const char *opt, const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			fprintf(stderr, "%s: %s %s: is a directory\n", app_name(), opt, path);
			return -1;
		}
		if (access(path, W_OK)) {
			fprintf(stderr, "%s: %s %s: cannot be written: %s\n", app_name(), opt, path,
				strerror(errno));
			return -1;
		}
		return 0;
	}
	if (errno != ENOENT) {
		fprintf(stderr, "%s: %s %s: %s\n", app_name(), opt, path, strerror(errno));
		return -1;
	}

	char *dir = parent_dir(path);
	int bad = dir ? cannot_create_in(dir) : ENOMEM;
	if (bad)
		fprintf(stderr, "%s: %s %s: cannot create it in %s: %s\n", app_name(), opt, path,
			dir ? dir : "its directory", strerror(bad));
	free(dir);
	return bad ? -1 : 0;
}

/* ------------------------------------------------------------------ the command line */

/* --sched help (or TSR_SCHED=help): the policies, one per line. 1 when printed. */
static int sched_help(void)
{
	tsr_setting_t rows[64];
	int n = tsr_settings(NULL, rows, 64);
	for (int i = 0; i < n && i < 64; i++)
		if (!strcmp(rows[i].name, "TSR_SCHED") && !strcmp(rows[i].value, "help")) {
			const char *names[64], *desc[64];
			int np = tsr_policy_list(names, desc, 64);
			printf("scheduling policies (--sched NAME):\n");
			for (int k = 0; k < np && k < 64; k++)
				printf("  %-32s %s\n", names[k], desc[k]);
			return 1;
		}
	return 0;
}

/* The program's options in argv (Tessera's flags already out): 0, or -1 with the message. */
static int parse_own(const app_cli_t *cli, int argc, char **argv)
{
	for (int a = 1; a < argc; a++) {
		const char *opt = argv[a], *name = bare(opt);
		if (name == opt || !*name) {
			fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", cli->name,
				opt);
			return -1;
		}
		if (!strcmp(name, "h"))
			name = "help";
		const app_opt_t *o = find_opt(cli->opts, cli->nopts, name);
		if (!o)
			o = find_opt(common_opts, NCOMMON, name);
		if (!o) {
			unknown(opt, name);
			return -1;
		}
		int takes = o->kind != APP_OPT_SET && o->kind != APP_OPT_GONE;
		const char *text = takes && a + 1 < argc ? argv[++a] : NULL;
		if (set_option(o, opt, text))
			return -1;
	}
	return 0;
}

static int check_outfiles(const app_cli_t *cli)
{
	for (int i = 0; i < cli->nopts; i++) {
		const app_opt_t *o = &cli->opts[i];
		const char *path = o->kind == APP_OPT_OUTFILE ? *(const char **)o->dst : NULL;
		if (path && app_check_outfile(o->name, path))
			return -1;
	}
	return 0;
}

int app_parse(const app_cli_t *cli, int argc, char **argv)
{
	app_set_name(cli->name);
	if (tsr_args(&argc, argv) != TSR_OK) {
		fprintf(stderr, "%s: %s\n", cli->name, tsr_last_error());
		return -1;
	}
	if (parse_own(cli, argc, argv))
		return -1;
	if (want_help) {
		print_help(cli);
		return 1;
	}
	if (want_version) {
		app_print_version(cli->name);
		return 1;
	}
	if (sched_help())
		return 1;
	app_progress_set(want_quiet ? 0 : want_progress ? 1 : isatty(2));
	return check_outfiles(cli);
}
