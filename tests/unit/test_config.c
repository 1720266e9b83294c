/* test_config.c: one way to set a run. Flags (tsr_args), then TSR_*, then STARPU_*, then
 * tsr_config_t, then the defaults, for the worker counts and the policy, Tessera's policies by
 * every route; every switch of the table refused outside its rule, naming it; messages as long as
 * they need; tsr_settings' sources; the warnings said once; tsr_version. */
#include "config.h"        /* PACKAGE_VERSION */
#include <starpu_config.h> /* STARPU_USE_OPENCL */
#include <unistd.h>
#include "tsr_test.h"

/* Each test sets the environment and the flags it needs from clean ones: forked or not
 * (CK_FORK=no under valgrind), nothing of an earlier test, which may have failed with the runtime
 * up, stays. */
static void clean_env(void)
{
	tsr_finalize(); /* TSR_ESTATE when it is down, as it should be */
	tsr_args(NULL, NULL);
	const tsr_env_switch_t *t;
	int n = tsr_env_switches(&t);
	for (int i = 0; i < n; i++)
		unsetenv(t[i].name);
	const char *starpu[] = {"STARPU_SCHED", "STARPU_NCPU", "STARPU_NCPUS", "STARPU_NCUDA",
				"STARPU_NOPENCL"};
	for (size_t i = 0; i < sizeof starpu / sizeof starpu[0]; i++)
		unsetenv(starpu[i]);
	setenv("TSR_NCUDA", "0", 1); /* the worker counts below are CPU counts */
}

/* A command line for tsr_args: "prog" and the words given (a modifiable array). */
#define ARGV(...) ((char *[]){"prog", __VA_ARGS__, NULL})

static int init_quiet(tsr_config_t *cfg)
{
	tsr_config_init(cfg);
	cfg->quiet = 1;
	return tsr_init(cfg);
}

/* ------------------------------------------------------------------ precedence */

/* --ncpu beats TSR_NCPU beats STARPU_NCPU beats tsr_config_t.ncpu: each level removed in turn. */
START_TEST(worker_count_precedence_flag_tsr_starpu_config)
{
	clean_env();
	char **argv = ARGV("--ncpu", "1");
	int argc = 3;
	CK_TSR(tsr_args(&argc, argv));
	setenv("TSR_NCPU", "2", 1);
	setenv("STARPU_NCPU", "2", 1);
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.quiet = 1;
	cfg.ncpu = 2;

	CK_TSR(tsr_init(&cfg));
	ck_assert_int_eq(tsr_ncpu_workers(), 1); /* the flag */
	CK_TSR(tsr_finalize());

	tsr_args(NULL, NULL);
	setenv("TSR_NCPU", "1", 1);
	CK_TSR(tsr_init(&cfg));
	ck_assert_int_eq(tsr_ncpu_workers(), 1); /* TSR_NCPU over STARPU_NCPU and cfg */
	CK_TSR(tsr_finalize());

	unsetenv("TSR_NCPU");
	setenv("STARPU_NCPU", "1", 1);
	CK_TSR(tsr_init(&cfg));
	ck_assert_int_eq(tsr_ncpu_workers(), 1); /* STARPU_NCPU over cfg */
	CK_TSR(tsr_finalize());

	unsetenv("STARPU_NCPU");
	cfg.ncpu = 1;
	CK_TSR(tsr_init(&cfg));
	ck_assert_int_eq(tsr_ncpu_workers(), 1); /* cfg */
	CK_TSR(tsr_finalize());
}
END_TEST

/* The same order the other way round: each higher level asks for 1, the next one down for 2. */
START_TEST(higher_level_wins_whatever_the_lower_asks)
{
	clean_env();
	setenv("TSR_NCPU", "1", 1);
	setenv("STARPU_NCPU", "2", 1); /* used to win over TSR_NCPU */
	tsr_config_t cfg;
	CK_TSR(init_quiet(&cfg));
	ck_assert_int_eq(tsr_ncpu_workers(), 1);
	CK_TSR(tsr_finalize());

	setenv("TSR_NCPU", "2", 1);
	char **argv = ARGV("--ncpu=1");
	int argc = 2;
	CK_TSR(tsr_args(&argc, argv));
	CK_TSR(init_quiet(&cfg)); /* used to lose to the environment */
	ck_assert_int_eq(tsr_ncpu_workers(), 1);
	CK_TSR(tsr_finalize());
}
END_TEST

START_TEST(policy_precedence_flag_tsr_starpu_config)
{
	clean_env();
	setenv("STARPU_SCHED", "dmda", 1);
	setenv("TSR_SCHED", "lws", 1);
	char **argv = ARGV("--sched", "eager");
	int argc = 3;
	CK_TSR(tsr_args(&argc, argv));
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.quiet = 1;
	cfg.sched = "prio";
	cfg.ncpu = 1;

	const char *want[] = {"eager", "lws", "dmda", "prio"};
	for (int level = 0; level < 4; level++) {
		if (level == 1)
			tsr_args(NULL, NULL);
		if (level == 2)
			unsetenv("TSR_SCHED");
		if (level == 3)
			unsetenv("STARPU_SCHED");
		CK_TSR(tsr_init(&cfg));
		ck_assert_msg(!strcmp(tsr_sched_name(), want[level]), "level %d: %s, not %s", level,
			      tsr_sched_name(), want[level]);
		CK_TSR(tsr_finalize());
	}
}
END_TEST

/* Tessera's own policies by every route: the flag, TSR_SCHED, STARPU_SCHED (StarPU does not know
 * them: it used to fall back to lws), tsr_config_t. */
START_TEST(own_policies_by_every_route)
{
	const char *routes[] = {"flag", "TSR_SCHED", "STARPU_SCHED", "cfg"};
	const char *own[] = {"tsr-locality", "tsr-critpath"};
	for (int p = 0; p < 2; p++)
		for (int r = 0; r < 4; r++) {
			clean_env();
			tsr_args(NULL, NULL);
			tsr_config_t cfg;
			tsr_config_init(&cfg);
			cfg.quiet = 1;
			cfg.ncpu = 1;
			char *argv[] = {"prog", "--sched", (char *)own[p], NULL};
			int argc = 3;
			if (r == 0)
				CK_TSR(tsr_args(&argc, argv));
			if (r == 1 || r == 2)
				setenv(routes[r], own[p], 1);
			if (r == 3)
				cfg.sched = own[p];
			CK_TSR(tsr_init(&cfg));
			ck_assert_msg(!strcmp(tsr_sched_name(), own[p]), "%s=%s gave %s", routes[r],
				      own[p], tsr_sched_name());
			CK_TSR(tsr_finalize());
		}
}
END_TEST

/* tsr_settings names where each value comes from, level by level. */
START_TEST(settings_name_their_source)
{
	clean_env();
	unsetenv("TSR_NCUDA");
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.ncpu = 3;
	cfg.stats = 1;
	setenv("STARPU_NCUDA", "0", 1);
	setenv("TSR_HOME", "host", 1);
	char **argv = ARGV("--sched", "eager", "--timeline", "t.json");
	int argc = 5;
	CK_TSR(tsr_args(&argc, argv));

	const tsr_env_switch_t *t;
	int n = tsr_env_switches(&t);
	tsr_setting_t rows[64];
	ck_assert_int_eq(tsr_settings(&cfg, rows, 64), n);
	const char *want[][4] = {
		{"TSR_SCHED", "--sched", "eager", "--sched"},
		{"TSR_NCPU", "--ncpu", "3", "tsr_config_t"},
		{"TSR_NCUDA", "--ncuda", "0", "STARPU_NCUDA"},
		{"TSR_HOME", "--home", "host", "TSR_HOME"},
		{"TSR_TIMELINE", "--timeline", "t.json", "--timeline"},
		{"TSR_STATS", "--stats", "1", "tsr_config_t"},
		{"TSR_REDUX", "--redux", "ordered", "default"},
		{"TSR_MPI_NICE", NULL, "unset", "default"},
	};
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		int i = 0;
		while (i < n && strcmp(rows[i].name, want[k][0]))
			i++;
		ck_assert_int_lt(i, n);
		ck_assert_str_eq(rows[i].name, t[i].name);
		if (want[k][1])
			ck_assert_str_eq(rows[i].flag, want[k][1]);
		else
			ck_assert_ptr_null(rows[i].flag);
		ck_assert_str_eq(rows[i].value, want[k][2]);
		ck_assert_str_eq(rows[i].source, want[k][3]);
	}
	CK_TSR_ERR(tsr_settings(NULL, NULL, 3), TSR_EINVAL, "tsr_settings");
	ck_assert_int_eq(tsr_settings(NULL, NULL, 0), n);
}
END_TEST

/* ------------------------------------------------------------------ tsr_args */

START_TEST(args_take_the_flags_and_keep_the_rest_in_order)
{
	clean_env();
	char *argv[] = {"prog",     "-n",          "5",  "--ncpu", "1", "--stats", "x",
			"--verify", "--dag=g.dot", "--", "--ncpu", "7", NULL};
	int argc = 12;
	CK_TSR(tsr_args(&argc, argv));
	const char *left[] = {"prog", "-n", "5", "x", "--verify", "--", "--ncpu", "7"};
	ck_assert_int_eq(argc, 8);
	for (int i = 0; i < argc; i++)
		ck_assert_str_eq(argv[i], left[i]);
	ck_assert_ptr_null(argv[argc]);

	tsr_setting_t rows[64];
	int n = tsr_settings(NULL, rows, 64);
	for (int i = 0; i < n; i++) {
		if (!strcmp(rows[i].name, "TSR_NCPU"))
			ck_assert_str_eq(rows[i].value, "1");
		if (!strcmp(rows[i].name, "TSR_STATS")) /* alone: 1; "x" stays the program's */
			ck_assert_str_eq(rows[i].value, "1");
		if (!strcmp(rows[i].name, "TSR_DAG"))
			ck_assert_str_eq(rows[i].value, "g.dot");
	}
}
END_TEST

START_TEST(args_refuse_a_wrong_flag_and_leave_argv_alone)
{
	clean_env();
	char *argv[] = {"prog", "--sched", "eager", "--ncpu", "1x", NULL};
	int argc = 5;
	CK_TSR_ERR(tsr_args(&argc, argv), TSR_EINVAL, "--ncpu", "'1x'", "-1", "4096");
	ck_assert_int_eq(argc, 5);
	ck_assert_str_eq(argv[1], "--sched");
	ck_assert_str_eq(argv[4], "1x");

	char *missing[] = {"prog", "--timeline", NULL};
	argc = 2;
	CK_TSR_ERR(tsr_args(&argc, missing), TSR_EINVAL, "--timeline", "needs a value");
	char *stats[] = {"prog", "--stats=yes", NULL};
	argc = 2;
	CK_TSR_ERR(tsr_args(&argc, stats), TSR_EINVAL, "--stats", "'yes'", "0|1");
	char *policy[] = {"prog", "--sched=nosuch", NULL};
	argc = 2;
	CK_TSR_ERR(tsr_args(&argc, policy), TSR_EINVAL, "--sched", "nosuch", "tsr-locality");
	CK_TSR_ERR(tsr_args(NULL, argv), TSR_EINVAL, "argc");
	CK_TSR_ERR(tsr_args(&argc, NULL), TSR_EINVAL, "argv");

	/* a refused command line kept nothing: the earlier --sched eager of it included */
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.quiet = 1;
	cfg.sched = "lws";
	cfg.ncpu = 1;
	CK_TSR(tsr_init(&cfg));
	ck_assert_str_eq(tsr_sched_name(), "lws");
	char *late[] = {"prog", "--ncpu", "1", NULL};
	argc = 3;
	CK_TSR_ERR(tsr_args(&argc, late), TSR_ESTATE, "tsr_args", "tsr_init");
	CK_TSR(tsr_finalize());
}
END_TEST

/* --sched help passes tsr_args (a program prints the list), and tsr_init lists the policies
 * whole, from any route. */
START_TEST(help_lists_every_policy)
{
	clean_env();
	const char *names[64];
	int n = tsr_policy_list(names, NULL, 64);
	ck_assert_int_gt(n, 2);

	char *argv[] = {"prog", "--sched", "help", NULL};
	int argc = 3;
	CK_TSR(tsr_args(&argc, argv));
	ck_assert_int_eq(argc, 1);
	tsr_config_t cfg;
	CK_TSR_ERR(init_quiet(&cfg), TSR_EINVAL, "--sched help", "tsr-locality", "tsr-critpath",
		   names[n - 1]);
	tsr_args(NULL, NULL);
	setenv("TSR_SCHED", "help", 1);
	CK_TSR_ERR(init_quiet(&cfg), TSR_EINVAL, "TSR_SCHED=help", names[n - 1]);
}
END_TEST

/* ------------------------------------------------------------------ every switch's rule */

/* A value outside the switch's rule (its values column), and what the message must name. */
static const char *wrong_value(const char *values, char *buf, size_t n)
{
	long lo, hi;
	if (strchr(values, '|'))
		return "abc";
	if (!strcmp(values, "file"))
		return "/nonexistent-tessera-dir/f";
	if (!strcmp(values, "policy"))
		return "nosuch";
	if (!strcmp(values, "N"))
		return "-1";
	if (sscanf(values, "%ld..%ld", &lo, &hi) == 2) {
		snprintf(buf, n, "%ld", hi + 1);
		return buf;
	}
	return NULL;
}

START_TEST(every_switch_is_checked_by_its_rule)
{
	const tsr_env_switch_t *t;
	int n = tsr_env_switches(&t);
	for (int i = 0; i < n; i++) {
		char buf[32];
		const char *bad = wrong_value(t[i].values, buf, sizeof buf);
		ck_assert_msg(bad, "%s: values '%s' is no rule tsr_init knows", t[i].name,
			      t[i].values);
		clean_env();
		setenv(t[i].name, bad, 1);
		tsr_config_t cfg;
		CK_TSR_ERR(init_quiet(&cfg), TSR_EINVAL, t[i].name, bad);
		/* and what it takes: the words, or the range's ends */
		long lo, hi;
		char los[24], his[24];
		if (strchr(t[i].values, '|'))
			tsr_test_names(tsr_last_error(), t[i].name,
				       (const char *[]){t[i].values, NULL});
		if (sscanf(t[i].values, "%ld..%ld", &lo, &hi) == 2) {
			snprintf(los, sizeof los, "from %ld", lo);
			snprintf(his, sizeof his, "to %ld", hi);
			tsr_test_names(tsr_last_error(), t[i].name,
				       (const char *[]){los, his, NULL});
		}

		/* a number with trailing text is refused too: "1x" is not 1 */
		if (strstr(t[i].values, "..")) {
			setenv(t[i].name, "1x", 1);
			CK_TSR_ERR(init_quiet(&cfg), TSR_EINVAL, t[i].name, "'1x'");
			setenv(t[i].name, " 1", 1);
			CK_TSR_ERR(init_quiet(&cfg), TSR_EINVAL, t[i].name, "' 1'");
		}
		unsetenv(t[i].name);
	}
}
END_TEST

/* The case: TSR_STATS took "yes", "on", "abc" for off and "1x" for on. */
START_TEST(stats_takes_0_or_1_only)
{
	const char *bad[] = {"abc", "yes", "on", "1x", "2", "-1"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		clean_env();
		setenv("TSR_STATS", bad[i], 1);
		tsr_config_t cfg;
		CK_TSR_ERR(init_quiet(&cfg), TSR_EINVAL, "TSR_STATS", bad[i], "0|1");
	}
	/* a STARPU_ variable Tessera reads is checked as its TSR_ one, and named */
	clean_env();
	setenv("STARPU_NCPU", "two", 1);
	tsr_config_t cfg;
	CK_TSR_ERR(init_quiet(&cfg), TSR_EINVAL, "STARPU_NCPU", "'two'", "TSR_NCPU");
	/* and every switch's default is one of its own words */
	const tsr_env_switch_t *t;
	int n = tsr_env_switches(&t);
	for (int i = 0; i < n; i++)
		if (strchr(t[i].values, '|') && strcmp(t[i].name, "TSR_MPI"))
			ck_assert_msg(strstr(t[i].values, t[i].fallback), "%s: default %s",
				      t[i].name, t[i].fallback);
}
END_TEST

/* A message is never cut: the list of policies (over 500 characters with StarPU 1.3's) comes
 * whole, up to its last name. */
START_TEST(messages_are_never_cut)
{
	clean_env();
	const char *names[64];
	int n = tsr_policy_list(names, NULL, 64);
	setenv("TSR_SCHED", "nosuch", 1);
	tsr_config_t cfg;
	CK_TSR_ERR(init_quiet(&cfg), TSR_EINVAL, "TSR_SCHED", "'nosuch'", names[0], names[n - 1]);
	size_t want = 0;
	for (int i = 0; i < n; i++)
		want += strlen(names[i]) + 1;
	ck_assert_uint_gt(strlen(tsr_last_error()), want);

	/* a long trace path, named whole in the refusal */
	char path[2048] = "/nonexistent-tessera-dir/";
	while (strlen(path) < sizeof path - 20)
		strcat(path, "abcdefghij");
	strcat(path, "/end.json");
	unsetenv("TSR_SCHED");
	setenv("TSR_TIMELINE", path, 1);
	CK_TSR_ERR(init_quiet(&cfg), TSR_EINVAL, path);
}
END_TEST

/* ------------------------------------------------------------------ warnings and version */

/* stderr into a file for the length of a test; what was written, read back. */
static char *stderr_log(const char *path, int start)
{
	static int saved = -1;
	fflush(stderr);
	if (start) {
		saved = dup(2);
		ck_assert_ptr_nonnull(freopen(path, "w", stderr));
		return NULL;
	}
	dup2(saved, 2);
	FILE *f = fopen(path, "r");
	static char text[8192];
	size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
	text[got] = 0;
	if (f)
		fclose(f);
	unlink(path);
	return text;
}

static int count(const char *text, const char *what)
{
	int k = 0;
	for (const char *p = text; (p = strstr(p, what)); p++)
		k++;
	return k;
}

/* More CPU workers than the machine's CPUs, or an OpenCL worker StarPU does not start: said on
 * stderr, with the reason, once however many times the runtime starts. */
START_TEST(too_many_workers_said_once)
{
	clean_env();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	char n[24];
	snprintf(n, sizeof n, "%ld", cpus + 1);
	setenv("TSR_NCPU", n, 1);
	setenv("TSR_NOPENCL", "1", 1);
	unsetenv("STARPU_OPENCL_ON_CPUS"); /* POCL's device is then not counted */
	char path[] = "/tmp/tsr-warn-XXXXXX";
	close(mkstemp(path));
	stderr_log(path, 1);
	for (int k = 0; k < 2; k++) {
		tsr_config_t cfg;
		tsr_config_init(&cfg);
		int rc = tsr_init(&cfg);
		if (rc == TSR_OK)
			tsr_finalize();
	}
	const char *text = stderr_log(path, 0);
	ck_assert_msg(count(text, "CPU workers asked for (TSR_NCPU)") == 1, "stderr: %s", text);
	ck_assert_msg(count(text, "logical CPUs") == 1, "stderr: %s", text);
	ck_assert_msg(count(text, "OpenCL worker asked for (TSR_NOPENCL)") == 1, "stderr: %s",
		      text);
#ifdef STARPU_USE_OPENCL
	ck_assert_msg(strstr(text, "STARPU_OPENCL_ON_CPUS=1"), "stderr: %s", text);
#endif
}
END_TEST

START_TEST(quiet_config_says_nothing)
{
	clean_env();
	setenv("TSR_NOPENCL", "1", 1);
	unsetenv("STARPU_OPENCL_ON_CPUS");
	char path[] = "/tmp/tsr-warn-XXXXXX";
	close(mkstemp(path));
	stderr_log(path, 1);
	tsr_config_t cfg;
	if (init_quiet(&cfg) == TSR_OK)
		tsr_finalize();
	const char *text = stderr_log(path, 0);
	ck_assert_msg(!strstr(text, "tessera: warning"), "stderr: %s", text);
}
END_TEST

START_TEST(version_is_the_headers_and_configures)
{
	int major = -1, minor = -1, patch = -1;
	const char *v = tsr_version(&major, &minor, &patch);
	ck_assert_int_eq(major, TSR_VERSION_MAJOR);
	ck_assert_int_eq(minor, TSR_VERSION_MINOR);
	ck_assert_int_eq(patch, TSR_VERSION_PATCH);
	char want[32];
	snprintf(want, sizeof want, "%d.%d.%d", major, minor, patch);
	ck_assert_str_eq(v, want);
	ck_assert_str_eq(v, TSR_VERSION_STRING);
	ck_assert_str_eq(v, PACKAGE_VERSION); /* configure.ac's AC_INIT */
	ck_assert_str_eq(tsr_version(NULL, NULL, NULL), v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *prec = tsr_test_tcase("precedence", 0);
	tcase_add_test(prec, worker_count_precedence_flag_tsr_starpu_config);
	tcase_add_test(prec, higher_level_wins_whatever_the_lower_asks);
	tcase_add_test(prec, policy_precedence_flag_tsr_starpu_config);
	tcase_add_test(prec, own_policies_by_every_route);
	tcase_add_test(prec, settings_name_their_source);
	suite_add_tcase(s, prec);
	TCase *args = tsr_test_tcase("args", 0);
	tcase_add_test(args, args_take_the_flags_and_keep_the_rest_in_order);
	tcase_add_test(args, args_refuse_a_wrong_flag_and_leave_argv_alone);
	tcase_add_test(args, help_lists_every_policy);
	suite_add_tcase(s, args);
	TCase *rules = tsr_test_tcase("rules", 0);
	tcase_add_test(rules, every_switch_is_checked_by_its_rule);
	tcase_add_test(rules, stats_takes_0_or_1_only);
	tcase_add_test(rules, messages_are_never_cut);
	suite_add_tcase(s, rules);
	TCase *said = tsr_test_tcase("warnings", 0);
	tcase_add_test(said, too_many_workers_said_once);
	tcase_add_test(said, quiet_config_says_nothing);
	tcase_add_test(said, version_is_the_headers_and_configures);
	suite_add_tcase(s, said);
	return tsr_test_run(s);
}
