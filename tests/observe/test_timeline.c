/* test_timeline.c: TSR_TIMELINE (the timeline: Chrome trace events, one "X" event per task with its
 * name, color, worker, start and end) and TSR_STATS / tsr_stats_get (exact counts per task name,
 * times, the table and the idle fraction printed at finalize), on small programs whose tasks are
 * known in advance. */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include "observe.h"

/* ------------------------------------------------------------------ tasks */

/* Spin (not sleep) so that a task's measured duration has a known lower bound even on a loaded
 * machine. */
static void spin_us(double us)
{
	double t0 = tsr_test_now();
	while ((tsr_test_now() - t0) * 1e6 < us)
		;
}

/* work: each point writes its own number into x and the worker it runs on into w (its tile). */
static void work(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int64_t p[3];
	tsr_accessor_t x, w;
	tsr_ctx_point(ctx, p);
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_WRITE, &x) ||
	    tsr_ctx_accessor(ctx, 0, 1, TSR_I32, TSR_WRITE, &w))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++) {
		TSR_AT1(&x, double, i) = (double)p[0];
		TSR_AT1(&w, int32_t, i) = tsr_ctx_worker(ctx);
	}
	spin_us(200);
}

/* solo: a single launch that adds 1 to the whole of x and logs its worker at log[k], k = args. */
static void solo(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	int k = *(const int *)args;
	tsr_accessor_t x, log;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &x) ||
	    tsr_ctx_accessor(ctx, 1, 0, TSR_I32, TSR_READ_WRITE, &log))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) += 1.0;
	TSR_AT1(&log, int32_t, k) = tsr_ctx_worker(ctx);
	spin_us(200);
}

/* ------------------------------------------------- the program being traced */
enum { NPOINTS = 6, TILE = 10, NSOLO = 3 };

/* What the program observed of its own tasks, to compare with what the trace says. */
struct observed {
	int point_worker[NPOINTS];
	int solo_worker[NSOLO];
};

/* NPOINTS "work" point tasks on tiles of v, then NSOLO "solo" tasks in a chain on the whole of v:
 * NPOINTS + NSOLO tasks in all, nothing else (no fill, no copy). */
static void traced_program(struct observed *obs)
{
	tsr_fspace_t fs;
	tsr_field_t fx, fw, fl;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "x", TSR_F64, 0, &fx));
	CK_TSR(tsr_fspace_add(fs, "w", TSR_I32, 0, &fw));
	tsr_region_t v, log;
	CK_TSR(tsr_region_create("v", tsr_box1(0, NPOINTS * TILE - 1), fs, &v));
	CK_TSR(tsr_fspace_destroy(fs));
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "worker", TSR_I32, 0, &fl));
	CK_TSR(tsr_region_create("log", tsr_box1(0, NSOLO - 1), fs, &log));
	CK_TSR(tsr_fspace_destroy(fs));
	tsr_partition_t tiles = tsr_test_tiles(v, tsr_box1(0, NPOINTS - 1), "tiles");

	tsr_task_t tw = tsr_test_task("work", work, TSR_NONE),
		   ts = tsr_test_task("solo", solo, TSR_NONE);
	tsr_req_t q = tsr_req_part(tiles, TSR_WRITE, TSR_FIELDS(fx, fw));
	CK_TSR(tsr_index_launch(tw, tsr_box1(0, NPOINTS - 1), 1, &q, NULL, 0, TSR_REDOP_NONE,
				NULL));
	tsr_req_t qs[2] = {tsr_req_region(v, TSR_READ_WRITE, TSR_FIELDS(fx)),
			   tsr_req_region(log, TSR_READ_WRITE, TSR_FIELDS(fl))};
	for (int k = 0; k < NSOLO; k++)
		CK_TSR(tsr_launch(ts, 2, qs, &k, sizeof k, NULL));

	/* the program's own result, so a trace of wrong work cannot pass */
	tsr_accessor_t a;
	CK_TSR(tsr_map(v, fx, TSR_READ, &a));
	for (int64_t i = 0; i < NPOINTS * TILE; i++)
		ck_assert_double_eq(TSR_AT1(&a, double, i), (double)(i / TILE) + NSOLO);
	CK_TSR(tsr_unmap(v, fx));
	CK_TSR(tsr_map(v, fw, TSR_READ, &a));
	for (int p = 0; p < NPOINTS; p++)
		obs->point_worker[p] = TSR_AT1(&a, int32_t, (int64_t)p * TILE);
	CK_TSR(tsr_unmap(v, fw));
	CK_TSR(tsr_map(log, fl, TSR_READ, &a));
	for (int k = 0; k < NSOLO; k++)
		obs->solo_worker[k] = TSR_AT1(&a, int32_t, k);
	CK_TSR(tsr_unmap(log, fl));
	CK_TSR(tsr_region_destroy(v));
	CK_TSR(tsr_region_destroy(log));
}

/* ------------------------------------------------------- reading the trace */
/* The file must pass timeline_check.py (the Trace Event Format's rules that Perfetto relies on:
 * pid and tid >= 1, named processes and threads, numeric counters, nested slices, matched
 * flows); a second small script then flattens the events this test compares with the program
 * into tab-separated lines that C reads without a JSON parser:
 * X name task color worker tid ts dur (the user's tasks) / T tid worker-thread-name /
 * C counter-name / I name (Tessera's own tasks) / P pid. */
static const char *const flatten_py =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1]))\n"
	"for e in d['traceEvents']:\n"
	"    ph = e.get('ph')\n"
	"    if ph == 'X' and e.get('cat') == 'task':\n"
	"        a = e['args']\n"
	"        row = (e['name'], a['task'], a['color'], a['worker'])\n"
	"        at = (e['tid'], e['ts'], e['dur'])\n"
	"        print('X\\t%s\\t%s\\t%s\\t%d' % row + '\\t%d\\t%.3f\\t%.3f' % at)\n"
	"    elif ph == 'X' and e.get('cat') == 'tessera':\n"
	"        print('I\\t%s' % e['args']['task'])\n"
	"    elif ph == 'M' and e['name'] == 'thread_name':\n"
	"        if e['args']['name'].startswith('worker'):\n"
	"            print('T\\t%d\\t%s' % (e['tid'], e['args']['name']))\n"
	"    elif ph == 'M' and e['name'] == 'process_name':\n"
	"        print('P\\t%d' % e['pid'])\n"
	"    elif ph == 'C':\n"
	"        print('C\\t%s' % e['name'])\n";

/* Worker w's track in the timeline: tid 1 is the host thread's. */
enum { TID_WORKER0 = 2 };

struct xev {
	char name[64], task[64], color[32];
	int worker, tid;
	double ts, dur;
};

/* Next tab-separated field of *s (empty fields allowed). */
static char *field(char **s)
{
	char *f = strsep(s, "\t\n");
	ck_assert_msg(f != NULL, "trace line has too few fields");
	return f;
}

/* What the trace says besides the user's tasks. */
struct trace_info {
	int nthreads;  /* worker tracks named */
	int ncounters; /* counter samples */
	int ninternal; /* Tessera's own tasks */
	int pid;
};

/* Check the file with timeline_check.py, and return its user-task X events. */
static int read_trace(const char *path, struct xev *ev, int max, struct trace_info *ti)
{
	char cmd[1600], trace[512];
	snprintf(trace, sizeof trace, "%s", path); /* obs_path's buffers are reused below */
	snprintf(cmd, sizeof cmd,
		 OBS_PYTHON " '" OBS_SRCDIR "/tests/observe/timeline_check.py' '%s' > '%s'", trace,
		 obs_path("summary.json"));
	ck_assert_msg(system(cmd) == 0, "%s breaks the Trace Event Format (timeline_check.py)",
		      trace);
	obs_write_file(obs_path("flatten.py"), flatten_py);
	snprintf(cmd, sizeof cmd, OBS_PYTHON " '%s' '%s' > '%s'", obs_path("flatten.py"), trace,
		 obs_path("events.tsv"));
	ck_assert_msg(system(cmd) == 0, "%s lacks a field this test reads", trace);
	char *text = obs_slurp(obs_path("events.tsv")), *s = text, *line;
	int n = 0;
	memset(ti, 0, sizeof *ti);
	while ((line = strsep(&s, "\n")) && *line) {
		char *rest = line, *kind = field(&rest);
		if (!strcmp(kind, "T")) {
			ti->nthreads++;
		} else if (!strcmp(kind, "C")) {
			ti->ncounters++;
		} else if (!strcmp(kind, "I")) {
			ti->ninternal++;
		} else if (!strcmp(kind, "P")) {
			ti->pid = atoi(field(&rest));
		} else {
			ck_assert_str_eq(kind, "X");
			ck_assert_int_lt(n, max);
			struct xev *e = &ev[n++];
			snprintf(e->name, sizeof e->name, "%s", field(&rest));
			snprintf(e->task, sizeof e->task, "%s", field(&rest));
			snprintf(e->color, sizeof e->color, "%s", field(&rest));
			e->worker = atoi(field(&rest));
			e->tid = atoi(field(&rest));
			e->ts = atof(field(&rest));
			e->dur = atof(field(&rest));
		}
	}
	free(text);
	return n;
}

/* Exactly one event per task, each with the name, color and worker the program itself saw. */
static void check_trace(const char *trace, const struct observed *obs, int nworkers)
{
	struct xev ev[64];
	struct trace_info ti;
	int n = read_trace(trace, ev, 64, &ti);
	ck_assert_int_eq(n, NPOINTS + NSOLO);
	ck_assert_int_eq(ti.nthreads, nworkers); /* one named timeline per worker */
	ck_assert_int_eq(ti.pid, 1);             /* one process: pid 1 */
	ck_assert_int_gt(ti.ncounters, 0);       /* tasks waiting and running */
	int seen_point[NPOINTS] = {0}, seen_solo = 0;
	const struct xev *solo_ev[NSOLO] = {NULL};
	double last_work_end = 0;
	for (int i = 0; i < n; i++) {
		const struct xev *e = &ev[i];
		ck_assert_int_ge(e->worker, 0);
		ck_assert_int_lt(e->worker, nworkers);
		ck_assert_int_eq(e->tid, e->worker + TID_WORKER0); /* the timeline is the worker's
								    */
		ck_assert(e->ts >= 0);
		ck_assert_msg(e->dur >= 200 - 1e-3,
			      "event %s lasted %.3f us, the task spins 200 us", e->name, e->dur);
		if (!strcmp(e->task, "work")) {
			int p = -1;
			ck_assert_int_eq(sscanf(e->color, "(%d)", &p), 1);
			ck_assert_int_ge(p, 0);
			ck_assert_int_lt(p, NPOINTS);
			seen_point[p]++;
			char want[64];
			snprintf(want, sizeof want, "work(%d)", p);
			ck_assert_str_eq(e->name, want);
			ck_assert_int_eq(e->worker, obs->point_worker[p]);
			if (e->ts + e->dur > last_work_end)
				last_work_end = e->ts + e->dur;
		} else {
			ck_assert_str_eq(e->task, "solo");
			ck_assert_str_eq(e->name, "solo");
			ck_assert_str_eq(e->color, ""); /* a single launch has no color */
			ck_assert_int_lt(seen_solo, NSOLO);
			solo_ev[seen_solo++] = e;
		}
	}
	for (int p = 0; p < NPOINTS; p++)
		ck_assert_int_eq(seen_point[p], 1);
	ck_assert_int_eq(seen_solo, NSOLO);
	/* The solo tasks form a chain after every work task: their intervals must say so
	 * (1 ns of slack for the 3-decimal rounding of ts and dur). Sort them by start first. */
	for (int i = 0; i < NSOLO; i++)
		for (int j = i + 1; j < NSOLO; j++)
			if (solo_ev[j]->ts < solo_ev[i]->ts) {
				const struct xev *t = solo_ev[i];
				solo_ev[i] = solo_ev[j];
				solo_ev[j] = t;
			}
	ck_assert_msg(solo_ev[0]->ts >= last_work_end - 1e-3,
		      "first solo starts at %.3f before the last work ends at %.3f", solo_ev[0]->ts,
		      last_work_end);
	for (int i = 1; i < NSOLO; i++)
		ck_assert_msg(solo_ev[i]->ts >= solo_ev[i - 1]->ts + solo_ev[i - 1]->dur - 1e-3,
			      "solo tasks overlap in the trace: [%.3f +%.3f] and [%.3f +%.3f]",
			      solo_ev[i - 1]->ts, solo_ev[i - 1]->dur, solo_ev[i]->ts,
			      solo_ev[i]->dur);
	/* the k-th solo in time is the k-th launched: its worker is the one logged at log[k] */
	for (int k = 0; k < NSOLO; k++)
		ck_assert_int_eq(solo_ev[k]->worker, obs->solo_worker[k]);
}

START_TEST(timeline_file_from_config_has_one_event_per_task)
{
	obs_mkdir();
	obs_init("eager", 2, obs_path("trace.json"), NULL, 0);
	int nw = tsr_worker_count();
	struct observed obs;
	traced_program(&obs);
	CK_TSR(tsr_finalize()); /* the trace is written here */
	check_trace(obs_path("trace.json"), &obs, nw);
	obs_rmdir();
}
END_TEST

START_TEST(timeline_file_from_env_has_one_event_per_task)
{
	obs_mkdir();
	obs_clean_env();
	setenv("TSR_TIMELINE", obs_path("env-trace.json"), 1);
	setenv("TSR_NCPU", "1", 1);
	CK_TSR(tsr_init(NULL));
	int nw = tsr_worker_count();
	struct observed obs;
	traced_program(&obs);
	CK_TSR(tsr_finalize());
	check_trace(obs_path("env-trace.json"), &obs, nw);
	obs_rmdir();
}
END_TEST

/* tsr_init with the environment as it is, its stderr into file `err`. */
static void init_capturing_stderr(const char *err)
{
	fflush(stderr);
	int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	int saved = dup(2);
	ck_assert_int_ge(dup2(fd, 2), 0);
	close(fd);
	int rc = tsr_init(NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ck_assert_msg(rc == TSR_OK, "tsr_init: %s", tsr_last_error());
}

/* The traced program on one CPU worker with the timeline switches the caller set: its timeline
 * must be `want`, and tsr_init's stderr is returned (the caller frees it). The switches are unset
 * afterwards. */
static char *run_with_timeline_switches(const char *want)
{
	setenv("TSR_NCPU", "1", 1);
	init_capturing_stderr(obs_path("stderr.txt"));
	int nw = tsr_worker_count();
	struct observed obs;
	traced_program(&obs);
	CK_TSR(tsr_finalize());
	unsetenv("TSR_TRACE");
	unsetenv("TSR_TIMELINE");
	check_trace(want, &obs, nw);
	return obs_slurp(obs_path("stderr.txt"));
}

/* TSR_TRACE, the timeline's older name (a trace now is a replayed loop body), still writes the
 * timeline, with one warning that names TSR_TIMELINE; TSR_TIMELINE wins when both are set. */
START_TEST(older_name_trace_writes_the_timeline_with_a_warning)
{
	obs_mkdir();
	obs_clean_env();
	setenv("TSR_TRACE", obs_path("older.json"), 1);
	char *text = run_with_timeline_switches(obs_path("older.json"));
	ck_assert_msg(strstr(text, "TSR_TRACE is the older name of TSR_TIMELINE"),
		      "no warning about TSR_TRACE in: %s", text);
	free(text);
	obs_rmdir();
}
END_TEST

START_TEST(timeline_wins_over_its_older_name)
{
	obs_mkdir();
	obs_clean_env();
	setenv("TSR_TRACE", obs_path("older.json"), 1);
	setenv("TSR_TIMELINE", obs_path("newer.json"), 1);
	char *text = run_with_timeline_switches(obs_path("newer.json"));
	ck_assert_int_ne(access(obs_path("older.json"), F_OK), 0);
	ck_assert_msg(!strstr(text, "older name"), "a warning although TSR_TIMELINE is set: %s",
		      text);
	free(text);
	obs_rmdir();
}
END_TEST

/* With no trace asked for, no file appears and tasks run as usual. */
START_TEST(no_timeline_file_unless_asked)
{
	obs_mkdir();
	ck_assert_int_eq(chdir(obs_dir), 0);
	obs_init(NULL, 1, NULL, NULL, 0);
	struct observed obs;
	traced_program(&obs);
	CK_TSR(tsr_finalize());
	FILE *p = popen("ls -A . | wc -l", "r");
	ck_assert_ptr_nonnull(p);
	int nfiles = -1;
	ck_assert_int_eq(fscanf(p, "%d", &nfiles), 1);
	pclose(p);
	ck_assert_int_eq(nfiles, 0);
	obs_rmdir();
}
END_TEST

/* Names are the user's strings: a quote or a backslash in a task or region name must not break
 * the JSON trace nor the dot graph (both escape them, and the trace gives the name back intact). */
static void touch(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ_WRITE, &x);
}

START_TEST(timeline_and_graph_escape_names)
{
	obs_mkdir();
	obs_clean_env();
	setenv("TSR_DAG_LABELS", "1", 1); /* the region's name is on the edge's label */
	obs_start("eager", 1, obs_path("q.json"), obs_path("q.dot"), 0);
	tsr_region_t r = tsr_test_region_f64("the \"grid\" \\", tsr_box1(0, 3));
	tsr_task_t t = tsr_test_task("say \"hi\" \\", touch, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_finalize());
	struct xev ev[4];
	struct trace_info ti;
	ck_assert_int_eq(read_trace(obs_path("q.json"), ev, 4, &ti), 2);
	for (int i = 0; i < 2; i++) {
		ck_assert_str_eq(ev[i].task, "say \"hi\" \\");
		ck_assert_str_eq(ev[i].name, "say \"hi\" \\");
	}
	/* dot: every quote inside a label is escaped, so each line has an even number of bare
	 * quotes */
	char *dot = obs_slurp(obs_path("q.dot")), *s = dot, *line;
	int edges = 0;
	while ((line = strsep(&s, "\n"))) {
		int bare = 0;
		for (char *c = line; *c; c++) {
			if (*c == '\\' && c[1]) {
				c++; /* an escaped character */
				continue;
			}
			bare += *c == '"';
		}
		ck_assert_msg(bare % 2 == 0, "unbalanced quotes in dot line: %s", line);
		edges += strstr(line, "->") && strstr(line, "the \\\"grid\\\" \\\\.x") != NULL;
	}
	free(dot);
	ck_assert_int_eq(edges, 1);
	obs_rmdir();
}
END_TEST

/* ------------------------------------------------------------------ stats */
enum { NALPHA = 5, NBETA_POINTS = 7, NBETA_LAUNCHES = 2, SPIN_US = 300 };

static void spin_task(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_test_add_one(ctx, args, arglen);
	spin_us(SPIN_US);
}

/* NALPHA "alpha" single launches and NBETA_LAUNCHES index launches of NBETA_POINTS "beta"
 * points. */
static void stats_program(void)
{
	tsr_region_t r = tsr_test_region_f64("s", tsr_box1(0, NBETA_POINTS * 4 - 1));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, NBETA_POINTS - 1), "tiles");
	tsr_task_t ta = tsr_test_task("alpha", spin_task, TSR_NONE),
		   tb = tsr_test_task("beta", spin_task, TSR_NONE);
	tsr_req_t qr = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0)),
		  qp = tsr_req_part(p, TSR_READ_WRITE, TSR_FIELDS(0));
	for (int i = 0; i < NALPHA; i++)
		CK_TSR(tsr_launch(ta, 1, &qr, NULL, 0, NULL));
	for (int i = 0; i < NBETA_LAUNCHES; i++)
		CK_TSR(tsr_index_launch(tb, tsr_box1(0, NBETA_POINTS - 1), 1, &qp, NULL, 0,
					TSR_REDOP_NONE, NULL));
	CK_TSR(tsr_fence());
	double v[NBETA_POINTS * 4];
	tsr_test_read1(r, 0, v, NBETA_POINTS * 4);
	for (int i = 0; i < NBETA_POINTS * 4; i++)
		ck_assert_double_eq(v[i], NALPHA + NBETA_LAUNCHES);
	CK_TSR(tsr_region_destroy(r));
}

static const tsr_task_stats_t *find_row(const tsr_task_stats_t *rows, int n, const char *name)
{
	const tsr_task_stats_t *found = NULL;
	for (int i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name)) {
			ck_assert_msg(found == NULL, "two rows for task '%s' on CPU-only workers",
				      name);
			found = &rows[i];
		}
	ck_assert_msg(found != NULL, "no statistics row for task '%s'", name);
	return found;
}

static void check_rows(void)
{
	tsr_task_stats_t rows[16];
	int n = tsr_stats_get(rows, 16);
	ck_assert_msg(n >= 2, "expected rows for alpha and beta, got %d (%s)", n,
		      n < 0 ? tsr_last_error() : "");
	/* the others are Tessera's own tasks (the syncs that order a view's end, say) */
	for (int i = 0; i < n; i++)
		ck_assert_msg(!strcmp(rows[i].name, "alpha") || !strcmp(rows[i].name, "beta") ||
				      !strncmp(rows[i].name, "tsr_", 4),
			      "unexpected statistics row '%s'", rows[i].name);
	const tsr_task_stats_t *a = find_row(rows, n, "alpha"), *b = find_row(rows, n, "beta");
	ck_assert_int_eq(a->count, NALPHA);
	ck_assert_int_eq(b->count, NBETA_POINTS * NBETA_LAUNCHES);
	ck_assert_int_eq(a->kind, TSR_WORKER_CPU);
	ck_assert_int_eq(b->kind, TSR_WORKER_CPU);
	/* every task spins SPIN_US of wall time, so the totals have a lower bound whatever the
	 * load */
	ck_assert_msg(a->total_us >= NALPHA * SPIN_US * 0.999, "alpha total %.1f us", a->total_us);
	ck_assert_msg(b->total_us >= NBETA_POINTS * NBETA_LAUNCHES * SPIN_US * 0.999,
		      "beta total %.1f us", b->total_us);
	/* max bounds the copy */
	ck_assert_int_eq(tsr_stats_get(rows, 1), 1);
	ck_assert_int_eq(tsr_stats_get(rows, 0), 0);
}

START_TEST(stats_count_every_task_by_name)
{
	obs_init("lws", 2, NULL, NULL, 1);
	stats_program();
	check_rows();
	/* statistics keep accumulating: one more alpha */
	tsr_region_t r = tsr_test_region_f64("t", tsr_box1(0, 3));
	tsr_task_t ta = tsr_test_task("alpha", spin_task, TSR_NONE);
	tsr_req_t qr = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(ta, 1, &qr, NULL, 0, NULL));
	CK_TSR(tsr_fence());
	tsr_task_stats_t rows[16];
	int n = tsr_stats_get(rows, 16);
	ck_assert_int_eq(find_row(rows, n, "alpha")->count, NALPHA + 1);
	CK_TSR(tsr_region_destroy(r));
	freopen("/dev/null", "w", stderr); /* the table printed at finalize is checked below */
	CK_TSR(tsr_finalize());
}
END_TEST

/* The trace needs the same measurements: tsr_stats_get works with only a trace asked for. */
START_TEST(stats_gathered_when_only_the_timeline_is_asked)
{
	obs_mkdir();
	obs_init("eager", 1, obs_path("t.json"), NULL, 0);
	stats_program();
	check_rows();
	CK_TSR(tsr_finalize());
	obs_rmdir();
}
END_TEST

START_TEST(stats_empty_when_not_asked)
{
	obs_init("eager", 1, NULL, NULL, 0);
	stats_program();
	tsr_task_stats_t rows[4];
	ck_assert_int_eq(tsr_stats_get(rows, 4), 0);
	CK_TSR_ERR(tsr_stats_get(NULL, 4), TSR_EINVAL, "tsr_stats_get");
	CK_TSR_ERR(tsr_stats_get(rows, -1), TSR_EINVAL, "tsr_stats_get");
	CK_TSR(tsr_finalize());
	CK_TSR_ERR(tsr_stats_get(rows, 4), TSR_ESTATE, "tsr_stats_get");
}
END_TEST

/* tsr_finalize, its stderr returned (the caller frees it) */
static char *finalize_capturing_stderr(void)
{
	fflush(stderr);
	int fd = open(obs_path("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	int saved = dup(2);
	ck_assert_int_ge(dup2(fd, 2), 0);
	close(fd);
	int rc = tsr_finalize();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	ck_assert_msg(rc == TSR_OK, "tsr_finalize: %s", tsr_last_error());
	return obs_slurp(obs_path("stderr.txt"));
}

/* TSR_STATS's handoff line (eager's tasks, runtime/idle.c), if `line` is it */
struct handoff_line {
	long to_idle, kept, queued, stolen;
};

static int read_handoff_line(const char *line, struct handoff_line *h)
{
	return sscanf(line,
		      "tessera stats: handoff (eager): %ld tasks to an idle worker, %ld kept by the "
		      "worker that made them ready, %ld through the queue; %ld taken from another "
		      "worker's slot",
		      &h->to_idle, &h->kept, &h->queued, &h->stolen) == 4;
}

/* The handoff line of a finalize's stderr; fails the test unless there is exactly one */
static struct handoff_line handoff_of(char *text)
{
	struct handoff_line h = {0}, one;
	int found = 0;
	char *s = text, *line;
	while ((line = strsep(&s, "\n")))
		if (read_handoff_line(line, &one)) {
			h = one;
			found++;
		}
	ck_assert_int_eq(found, 1);
	return h;
}

/* TSR_STATS=1: at finalize, one line per task name on stderr (count, total, mean), the idle
 * fraction over the workers (apps/bench/policies.sh parses it) and, under eager, where the
 * handoff put the tasks pushed. */
START_TEST(stats_table_printed_at_finalize)
{
	obs_mkdir();
	obs_clean_env();
	setenv("TSR_STATS", "1", 1);
	setenv("TSR_NCPU", "2", 1);
	setenv("TSR_SCHED", "eager", 1);
	CK_TSR(tsr_init(NULL));
	int nw = tsr_worker_count();
	stats_program();
	char *text = finalize_capturing_stderr(), *s = text, *line;
	int got_alpha = 0, got_beta = 0, got_idle = 0, got_handoff = 0;
	while ((line = strsep(&s, "\n"))) {
		char name[64], kind[8];
		long count;
		double total_ms, mean_us, idle;
		int nwork;
		struct handoff_line h;
		if (read_handoff_line(line, &h)) {
			got_handoff++;
			/* every point task went through eager: to a slot or the queue */
			ck_assert_int_ge(h.to_idle + h.kept + h.queued,
					 NALPHA + NBETA_POINTS * NBETA_LAUNCHES);
			ck_assert_int_le(h.stolen, h.to_idle + h.kept);
		} else if (sscanf(line, "tessera stats: idle fraction %lf over %d workers", &idle,
				  &nwork) == 2) {
			got_idle++;
			ck_assert(idle >= 0.0 && idle <= 1.0);
			ck_assert_int_eq(nwork, nw);
		} else if (sscanf(line, "tessera stats: %63s %7s %ld %lf %lf", name, kind, &count,
				  &total_ms, &mean_us) == 5 &&
			   !strncmp(name, "tsr_", 4)) {
			/* Tessera's own tasks (syncs) have rows of their own, and do not spin */
			ck_assert_int_gt(count, 0);
		} else if (sscanf(line, "tessera stats: %63s %7s %ld %lf %lf", name, kind, &count,
				  &total_ms, &mean_us) == 5) {
			ck_assert_str_eq(kind, "cpu");
			ck_assert_msg(mean_us >= SPIN_US * 0.999, "%s: mean %.2f us", name,
				      mean_us);
			ck_assert(total_ms * 1e3 >= count * SPIN_US * 0.999);
			if (!strcmp(name, "alpha")) {
				got_alpha++;
				ck_assert_int_eq(count, NALPHA);
			} else {
				ck_assert_str_eq(name, "beta");
				got_beta++;
				ck_assert_int_eq(count, NBETA_POINTS * NBETA_LAUNCHES);
			}
		}
	}
	free(text);
	ck_assert_int_eq(got_alpha, 1);
	ck_assert_int_eq(got_beta, 1);
	ck_assert_int_eq(got_idle, 1);
	ck_assert_int_eq(got_handoff, 1);
	obs_rmdir();
}
END_TEST

/* ------------------------------------------------------------------ the handoff (idle.c) */
enum { CHAIN = 20, TRIES = 40, HANDOFF_N = 8 };

/* The runtime under eager with ncpu CPU workers and TSR_STATS; a region "add_one" tasks write
 * whole (*add, *q) */
static tsr_region_t handoff_start(const char *ncpu, tsr_task_t *add, tsr_req_t *q)
{
	obs_mkdir();
	obs_clean_env();
	setenv("TSR_STATS", "1", 1);
	setenv("TSR_NCPU", ncpu, 1);
	setenv("TSR_SCHED", "eager", 1);
	CK_TSR(tsr_init(NULL));
	tsr_region_t r = tsr_test_region_f64("handoff", tsr_box1(0, HANDOFF_N - 1));
	*add = tsr_test_task("add_one", tsr_test_add_one, TSR_NONE);
	*q = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0));
	return r;
}

/* Every element of r is `launches` (each launch added one), r goes, and the runtime stops: its
 * TSR_STATS handoff line */
static struct handoff_line handoff_finish(tsr_region_t r, int launches)
{
	double v[HANDOFF_N];
	tsr_test_read1(r, 0, v, HANDOFF_N);
	for (int i = 0; i < HANDOFF_N; i++)
		ck_assert_double_eq(v[i], launches);
	CK_TSR(tsr_region_destroy(r));
	char *text = finalize_capturing_stderr();
	struct handoff_line h = handoff_of(text);
	free(text);
	obs_rmdir();
	return h;
}

/* One worker, eager: a chain of tasks submitted while the workers are paused. Each task made
 * ready by its predecessor's end is pushed by the worker that ran the predecessor, and with no
 * other worker idle it keeps it in its own slot. */
START_TEST(handoff_keeps_a_chain_on_the_worker_that_made_it_ready)
{
	tsr_task_t add;
	tsr_req_t q;
	tsr_region_t r = handoff_start("1", &add, &q);
	ck_assert_str_eq(tsr_idle_name(), "yield+handoff");
	CK_TSR(tsr_pause());
	for (int i = 0; i < CHAIN; i++)
		CK_TSR(tsr_launch(add, 1, &q, NULL, 0, NULL));
	CK_TSR(tsr_resume());
	CK_TSR(tsr_fence());
	struct handoff_line h = handoff_finish(r, CHAIN);
	ck_assert_msg(h.kept >= CHAIN - 1, "kept %ld of a chain of %d", h.kept, CHAIN);
	ck_assert_int_eq(h.stolen, 0); /* nobody to steal it */
}
END_TEST

/* Two workers, eager: a task the host thread pushes while both workers are idle goes to one's
 * slot, not through the queue. Each try lets the workers go idle first (a few ms); on a loaded
 * machine a worker may not have polled yet, so half the tries must, not all. */
START_TEST(handoff_gives_a_ready_task_to_an_idle_worker)
{
	tsr_task_t add;
	tsr_req_t q;
	tsr_region_t r = handoff_start("2", &add, &q);
	for (int i = 0; i < TRIES; i++) {
		nanosleep(&(struct timespec){.tv_nsec = 5 * 1000 * 1000}, NULL);
		CK_TSR(tsr_launch(add, 1, &q, NULL, 0, NULL));
		CK_TSR(tsr_fence());
	}
	struct handoff_line h = handoff_finish(r, TRIES);
	ck_assert_msg(h.to_idle >= TRIES / 2, "%ld of %d tasks to an idle worker", h.to_idle,
		      TRIES);
}
END_TEST

/* ------------------------------------------------- Tessera's own tasks, arrows */

/* The file passes timeline_check.py, and `expr` holds: a Python expression over its events
 * (ev), the validator's summary (s) and a counter of Tessera's own tasks by name (own). */
static void timeline_expect(const char *path, const char *expr)
{
	char trace[512], cmd[4096];
	snprintf(trace, sizeof trace, "%s", path);
	snprintf(cmd, sizeof cmd,
		 OBS_PYTHON " '" OBS_SRCDIR "/tests/observe/timeline_check.py' '%s' > '%s'", trace,
		 obs_path("summary.json"));
	ck_assert_msg(system(cmd) == 0, "%s breaks the Trace Event Format (timeline_check.py)",
		      trace);
	snprintf(cmd, sizeof cmd,
		 OBS_PYTHON
		 " -c \"import json, sys, collections\n"
		 "ev = json.load(open(sys.argv[1]))['traceEvents']\n"
		 "s = json.load(open(sys.argv[2]))\n"
		 "own = collections.Counter(e['args']['task'] for e in ev\n"
		 "                          if e['ph'] == 'X' and e.get('cat') == 'tessera')\n"
		 "sys.exit(0 if (%s) else 1)\" '%s' '%s'",
		 expr, trace, obs_path("summary.json"));
	ck_assert_msg(system(cmd) == 0, "%s: not so: %s", trace, expr);
}

static void add_one(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x, y;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ, &x) ||
	    tsr_ctx_accessor(ctx, 1, 1, TSR_F64, TSR_REDUCE(TSR_SUM), &y))
		return;
	double sum = 0;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		sum += TSR_AT1(&x, double, i);
	for (int64_t i = y.lo[0]; i <= y.hi[0]; i++)
		TSR_AT1(&y, double, i) += 1.0;
	tsr_ctx_return(ctx, &sum);
}

/* Fills, a reduction through private buffers (one fold per point), a reduced future (one fold
 * of the points' values) and a copy: each of Tessera's own tasks is a slice of its own, a row
 * of the statistics, and, with TSR_TIMELINE_FLOWS=1, every dependence of the task graph is one
 * arrow (as many as the graph's edges with labels, which draws them all). The copy's bytes are
 * a transfer slice on its node's copy track. */
START_TEST(timeline_shows_tessera_tasks_and_arrows)
{
	enum { N = 16, P = 4 };
	obs_mkdir();
	obs_clean_env();
	setenv("TSR_TIMELINE_FLOWS", "1", 1);
	setenv("TSR_DAG_LABELS", "1", 1);
	obs_start("eager", 2, obs_path("own.json"), obs_path("own.dot"), 1);
	tsr_fspace_t fs;
	tsr_field_t fx, fy;
	CK_TSR(tsr_fspace_create(&fs));
	CK_TSR(tsr_fspace_add(fs, "x", TSR_F64, 0, &fx));
	CK_TSR(tsr_fspace_add(fs, "y", TSR_F64, 0, &fy));
	tsr_region_t r, c;
	CK_TSR(tsr_region_create("r", tsr_box1(0, N - 1), fs, &r));
	CK_TSR(tsr_region_create("c", tsr_box1(0, N - 1), fs, &c));
	CK_TSR(tsr_fspace_destroy(fs));
	tsr_partition_t tiles = tsr_test_tiles(r, tsr_box1(0, P - 1), "tiles");
	CK_TSR(tsr_fill(r, fx, &(double){1.0}, sizeof(double)));
	CK_TSR(tsr_fill(r, fy, &(double){0.0}, sizeof(double)));
	tsr_task_t t = tsr_test_task("add_one", add_one, TSR_F64);
	tsr_req_t q[2] = {tsr_req_part(tiles, TSR_READ, TSR_FIELDS(fx)),
			  tsr_req_region(r, TSR_REDUCE(TSR_SUM), TSR_FIELDS(fy))};
	tsr_future_t total;
	CK_TSR(tsr_index_launch(t, tsr_box1(0, P - 1), 2, q, NULL, 0, TSR_SUM, &total));
	CK_TSR(tsr_copy(r, fy, c, fy));
	double v;
	CK_TSR(tsr_future_take(total, &v, sizeof v));
	ck_assert_double_eq(v, (double)N);
	double y[N];
	tsr_test_read1(c, fy, y, N);
	for (int i = 0; i < N; i++)
		ck_assert_double_eq(y[i], (double)P); /* every point added 1 everywhere */
	CK_TSR(tsr_fence()); /* every callback (which records a task) has run */
	tsr_task_stats_t rows[16];
	int n = tsr_stats_get(rows, 16);
	ck_assert_int_eq(find_row(rows, n, "tsr_fold")->count, P);
	ck_assert_int_eq(find_row(rows, n, "tsr_future_fold")->count, 1);
	ck_assert_int_eq(find_row(rows, n, "tsr_fill")->count, 2);
	ck_assert_int_eq(find_row(rows, n, "tsr_copy")->count, 1);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_region_destroy(c));
	freopen("/dev/null", "w", stderr); /* the statistics table */
	CK_TSR(tsr_finalize());

	timeline_expect(obs_path("own.json"),
			"own['tsr_fold'] == 4 and own['tsr_future_fold'] == 1 "
			"and own['tsr_fill'] == 2 "
			"and own['tsr_copy'] == 1 and s['slices']['task'] == 4");
	timeline_expect(obs_path("own.json"),
			"[e['args']['bytes'] for e in ev if e.get('cat') == 'transfer' and "
			"e['name'] == 'copy by tsr_copy'] == [128] and "
			"'copies in node 0 (host RAM)' in s['threads']");
	/* one arrow per edge of the graph (with labels, every pair is drawn) */
	char *dot = obs_slurp(obs_path("own.dot"));
	int edges = 0;
	for (char *p = dot; (p = strstr(p, " -> ")); p++)
		edges++;
	free(dot);
	ck_assert_int_gt(edges, 0);
	char expr[64];
	snprintf(expr, sizeof expr, "s['flows'] == %d", edges);
	timeline_expect(obs_path("own.json"), expr);
	obs_rmdir();
}
END_TEST

/* Files that cannot be written at tsr_finalize fail it, naming the file and the switch, and the
 * runtime is stopped all the same: a full device (/dev/full takes the open, not the bytes), then
 * a directory removed since tsr_init. */
START_TEST(unwritable_files_fail_finalize_by_name)
{
	obs_mkdir();
	obs_init("eager", 1, "/dev/full", "/dev/full", 0);
	tsr_region_t r = tsr_test_region_f64("r", tsr_box1(0, 3));
	tsr_task_t t = tsr_test_task("touch", touch, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	CK_TSR(tsr_region_destroy(r));
	/* both files fail: the message names both */
	CK_TSR_ERR(tsr_finalize(), TSR_EINVAL, "/dev/full", "TSR_TIMELINE", "graph file",
		   "could not be written");
	CK_TSR_ERR(tsr_fence(), TSR_ESTATE, "tsr_fence"); /* stopped */

	char dir[600], cmd[700];
	snprintf(dir, sizeof dir, "%s/gone", obs_dir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(cmd, sizeof cmd, "%s/t.json", dir);
	obs_init("eager", 1, cmd, NULL, 0);
	ck_assert_int_eq(rmdir(dir), 0);
	CK_TSR_ERR(tsr_finalize(), TSR_EINVAL, "gone/t.json", "TSR_TIMELINE", "cannot write");
	obs_rmdir();
}
END_TEST

/* A bad value of the timeline's and the graph's switches fails tsr_init, naming it. */
START_TEST(observation_switches_refused_by_name)
{
	static const char *const bad[][2] = {{"TSR_TIMELINE_FLOWS", "2"},
					     {"TSR_DAG_LABELS", "yes"},
					     {"TSR_DAG_ITERS", "-1"},
					     {"TSR_DAG_ITERS", "ten"}};
	for (int i = 0; i < 4; i++) {
		obs_clean_env();
		setenv(bad[i][0], bad[i][1], 1);
		CK_TSR_ERR(tsr_init(NULL), TSR_EINVAL, bad[i][0]);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("timeline");
	TCase *tc = tsr_test_tcase("timeline", 0);
	tcase_add_test(tc, timeline_file_from_config_has_one_event_per_task);
	tcase_add_test(tc, timeline_file_from_env_has_one_event_per_task);
	tcase_add_test(tc, no_timeline_file_unless_asked);
	tcase_add_test(tc, older_name_trace_writes_the_timeline_with_a_warning);
	tcase_add_test(tc, timeline_wins_over_its_older_name);
	tcase_add_test(tc, timeline_and_graph_escape_names);
	tcase_add_test(tc, timeline_shows_tessera_tasks_and_arrows);
	tcase_add_test(tc, observation_switches_refused_by_name);
	tcase_add_test(tc, unwritable_files_fail_finalize_by_name);
	suite_add_tcase(s, tc);
	tc = tsr_test_tcase("stats", 0);
	tcase_add_test(tc, stats_count_every_task_by_name);
	tcase_add_test(tc, stats_gathered_when_only_the_timeline_is_asked);
	tcase_add_test(tc, stats_empty_when_not_asked);
	tcase_add_test(tc, stats_table_printed_at_finalize);
	tcase_add_test(tc, handoff_keeps_a_chain_on_the_worker_that_made_it_ready);
	tcase_add_test(tc, handoff_gives_a_ready_task_to_an_idle_worker);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
