/* rank_prog.h: what the several-ranks programs of tests/mpi (bits, diverge, taskfail) share. Each
 * defines RANK_PROG, its name, before including it; they use the public API only. */
#ifndef RANK_PROG_H
#define RANK_PROG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tessera.h>

/* A call that must succeed: else this rank says which and why, and the program ends (status 1). */
static inline void check(int rc, const char *what)
{
	if (rc == TSR_OK)
		return;
	fprintf(stderr, "%s rank %d: FAIL %s: %s: %s\n", RANK_PROG, tsr_rank(), what,
		tsr_err_name(rc), tsr_last_error());
	exit(1);
}

/* The program's start: with --help, print `usage` and return 1; else start the runtime
 * (tsr_init) and return 0. */
static inline int help_or_init(int argc, char **argv, const char *usage)
{
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return 1;
	}
	check(tsr_init(NULL), "tsr_init");
	return 0;
}

/* After tsr_init: 1 where the job has one rank only (the program is then skipped: runtime
 * finalized, the reason printed), else 0. */
static inline int one_rank_only(void)
{
	if (tsr_nranks() >= 2)
		return 0;
	printf("%s: needs 2 ranks or more (mpirun -np 2), skipped\n", RANK_PROG);
	check(tsr_finalize(), "tsr_finalize");
	return 1;
}

/* Region "line" [0..15] with one f64 field "x" of field space fs, cut in tiles. */
struct line_tiles {
	tsr_fspace_t fs;
	tsr_field_t x;
	tsr_region_t line;
	tsr_partition_t tiles;
};

/* The line, its tiles `ncolors` of them, named `name`. */
static inline struct line_tiles line_in_tiles(int64_t ncolors, const char *name)
{
	struct line_tiles lt;
	check(tsr_fspace_create(&lt.fs), "tsr_fspace_create");
	check(tsr_fspace_add(lt.fs, "x", TSR_F64, 0, &lt.x), "tsr_fspace_add");
	check(tsr_region_create("line", tsr_box1(0, 15), lt.fs, &lt.line), "tsr_region_create");
	check(tsr_partition_tiles(lt.line, tsr_box1(0, ncolors - 1), name, &lt.tiles),
	      "tsr_partition_tiles");
	return lt;
}

/* A task `name` whose CPU variant is fn. */
static inline tsr_task_t register_task(const char *name, tsr_variant_fn fn)
{
	tsr_task_t t;
	check(tsr_task_register(&(tsr_task_desc_t){.name = name, .cpu = fn}, &t),
	      "tsr_task_register");
	return t;
}

/* The body of a task writing its tile: x[i] = i (requirement 0, its first field). */
static inline void write_index(tsr_ctx_t *ctx)
{
	tsr_accessor_t x;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_WRITE_DISCARD, &x))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) = (double)i;
}

#endif
