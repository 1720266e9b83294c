/* observe.h: what the observation, mapper and policy tests share: a runtime started with an
 * explicit configuration (each test picks its policy, worker count and output files), a scratch
 * directory for trace / graph files, and small file helpers. */
#ifndef TSR_OBSERVE_H
#define TSR_OBSERVE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tsr_test.h"

/* The TSR_* and STARPU_* variables a caller may have set (make check under TSR_SCHED=...) would
 * override the configuration these tests depend on; each test runs forked, so clearing is local. */
static inline void obs_clean_env(void)
{
	static const char *const vars[] = {"TSR_SCHED",
					   "TSR_NCPU",
					   "TSR_NCUDA",
					   "TSR_TIMELINE",
					   "TSR_TIMELINE_FLOWS",
					   "TSR_TRACE",
					   "TSR_TRACE_FLOWS",
					   "TSR_DAG",
					   "TSR_DAG_LABELS",
					   "TSR_DAG_ITERS",
					   "TSR_STATS",
					   "STARPU_SCHED",
					   NULL};
	for (int i = 0; vars[i]; i++)
		unsetenv(vars[i]);
}

/* Start the runtime with `sched` (NULL: StarPU's default) on `ncpu` CPU workers (-1: default)
 * and no GPU, writing the given trace / graph files (NULL: none), with the environment as it
 * is (obs_init clears it first). */
static inline void obs_start(const char *sched, int ncpu, const char *trace, const char *dag,
			     int stats)
{
	tsr_config_t cfg;
	tsr_config_init(&cfg);
	cfg.sched = sched;
	cfg.ncpu = ncpu;
	cfg.ncuda = 0;
	cfg.timeline_file = trace;
	cfg.dag_file = dag;
	cfg.stats = stats;
	cfg.quiet = 1;
	CK_TSR(tsr_init(&cfg));
	if (ncpu > 0)
		ck_assert_int_eq(tsr_ncpu_workers(), ncpu);
}

static inline void obs_init(const char *sched, int ncpu, const char *trace, const char *dag,
			    int stats)
{
	obs_clean_env();
	obs_start(sched, ncpu, trace, dag, stats);
}

/* A fresh scratch directory; obs_path() names a file inside it. */
static char obs_dir[256];
static inline void obs_mkdir(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(obs_dir, sizeof obs_dir, "%s/tsr-observe-XXXXXX", t && *t ? t : "/tmp");
	ck_assert_msg(mkdtemp(obs_dir) != NULL, "mkdtemp %s failed", obs_dir);
}
static inline const char *obs_path(const char *name)
{
	static char buf[4][512];
	static int k;
	char *p = buf[k++ % 4];
	snprintf(p, 512, "%s/%s", obs_dir, name);
	return p;
}
/* Remove the scratch directory and what the test wrote there (only on success: a failing test
 * leaves its files for inspection). */
static inline void obs_rmdir(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", obs_dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Whole file as a NUL-terminated string (caller frees). */
static inline char *obs_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	size_t cap = 4096, n = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
	size_t got;
	while ((got = fread(s + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap) {
			cap *= 2;
			s = realloc(s, cap);
			ck_assert_ptr_nonnull(s);
		}
	}
	s[n] = 0;
	fclose(f);
	return s;
}

static inline void obs_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* Debian's interpreter (python3 on PATH may be another one). */
#define OBS_PYTHON "/usr/bin/python3"

#endif
