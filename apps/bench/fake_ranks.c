/* fake_ranks.c: what one rank's host thread spends per iteration, as a fake rank of N
 * (TSR_FAKE_NRANKS, TSR_FAKE_RANK) or on real ranks, for two weak-scaled programs.
 *
 * stencil: every rank owns the same T x T tiles of S x S points (default 2 x 2 of 64 x 64); the
 * ranks' blocks of tiles form a near-square px x py grid, so the region grows with the ranks.
 * Each iteration is one index launch that reads field A through the halo tiles (one point on
 * each side) and writes field B through the tiles (a 5-point Jacobi step), then the fields swap.
 * cg: the launches of apps/cg's iteration with its tasks (matrix-free 2-D Poisson on a grid S
 * points wide, rows in blocks of L grid lines, B blocks per rank), a fixed number of iterations,
 * and no host wait on a future (a fake rank's futures hold no computed value).
 *
 * It prints the host thread's CPU time per iteration (CLOCK_THREAD_CPUTIME_ID around the timed
 * loop of K iterations, median of R runs): the rank's analysis and submission. The workers' time
 * is not in it, and on a fake rank they run no task variant. apps/bench/fake-ranks.py runs it at
 * N = 1 ... 1024 and prints the ratio to N = 1; tests/mpi/fake.sh compares a fake rank's counts
 * (TSR_STATS) with a real rank's. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tessera.h>
#include "app_util.h"
#include "cg_kernels.h"

/* ------------------------------------------------------------ options */

struct opts {
	int cg;          /* 0: the stencil */
	int tiles;       /* stencil: tiles per rank along each dimension */
	int tile;        /* stencil: tile side; cg: grid width */
	int blocks;      /* cg: row blocks per rank */
	int lines;       /* cg: grid lines per block */
	int iters;       /* per timed run; 0: enough for min_time */
	double min_time; /* seconds of host CPU per timed run when iters is 0 */
	int reps;
};

/* 0: run, 1: help or version printed, -1: usage error (said). Tessera's flags (--ncpu...) come
 * through app_parse. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.tiles = 2,
			   .tile = 64,
			   .blocks = 4,
			   .lines = 16,
			   .min_time = 0.2,
			   .reps = 5};
	const app_opt_t opts[] = {
		{"--app", APP_OPT_WORDS, &o->cg, 0, 0, "stencil|cg", "stencil|cg",
		 "which program (default stencil)"},
		{"--tiles", APP_OPT_INT, &o->tiles, 1, 64, NULL, "T",
		 "stencil: T x T tiles per rank (default 2)"},
		{"--tile", APP_OPT_INT, &o->tile, 3, 4096, NULL, "S",
		 "stencil: tile side; cg: grid width (default 64)"},
		{"--blocks", APP_OPT_INT, &o->blocks, 1, 64, NULL, "B",
		 "cg: row blocks per rank (default 4)"},
		{"--lines", APP_OPT_INT, &o->lines, 1, 4096, NULL, "L",
		 "cg: grid lines per block (default 16)"},
		{"--iters", APP_OPT_INT, &o->iters, 1, 1000000, NULL, "K",
		 "iterations per timed run (default: enough for --min-time)"},
		{"--min-time", APP_OPT_DOUBLE, &o->min_time, 0, 0, NULL, "SEC",
		 "host CPU seconds per timed run without --iters (default 0.2)"},
		{"--reps", APP_OPT_INT, &o->reps, 1, 1000, NULL, "R",
		 "timed runs, the median is printed (default 5)"},
	};
	const app_cli_t cli = {"fake-ranks",
			       "One rank's host CPU time per iteration of a weak-scaled stencil\n"
			       "or CG iteration.\n"
			       "Run it as a fake rank: TSR_FAKE_NRANKS=N TSR_FAKE_RANK=r\n"
			       "fake-ranks ...,\n"
			       "or under mpirun (then give --iters).",
			       opts, sizeof opts / sizeof opts[0], NULL};
	int rc = app_parse(&cli, argc, argv);
	if (!rc && !(o->min_time > 0)) {
		fprintf(stderr, "fake-ranks: --min-time %g: expected seconds > 0\n", o->min_time);
		return -1;
	}
	return rc;
}

/* ------------------------------------------------------------ the stencil */

/* The global grid, for the step's boundary test. */
struct grid {
	int64_t nx, ny;
};

/* Field u and v of the rank's tiles (req 0, both fields, WRITE_DISCARD): a smooth start. */
static void stencil_init(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t u, v;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_WRITE_DISCARD, &u) ||
	    tsr_ctx_field(ctx, 0, 1, TSR_F64, TSR_WRITE_DISCARD, &v))
		return;

	for (int64_t y = u.lo[1]; y <= u.hi[1]; y++)
		for (int64_t x = u.lo[0]; x <= u.hi[0]; x++) {
			TSR_AT2(&u, double, x, y) = (double)((x * 7 + y * 3) % 11);
			TSR_AT2(&v, double, x, y) = 0.0;
		}
}

/* One Jacobi step: out = the mean of in's four neighbours inside the grid; the grid's border
 * keeps its value. req 0: in through the halo tile (READ); req 1: out through the tile. */
static void stencil_step(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const struct grid *g = args;
	tsr_accessor_t in, out;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &in) ||
	    tsr_ctx_field(ctx, 1, 0, TSR_F64, TSR_WRITE_DISCARD, &out))
		return;

	for (int64_t y = out.lo[1]; y <= out.hi[1]; y++)
		for (int64_t x = out.lo[0]; x <= out.hi[0]; x++) {
			int border = x == 0 || y == 0 || x == g->nx - 1 || y == g->ny - 1;
			TSR_AT2(&out, double, x, y) =
				border ? TSR_AT2(&in, double, x, y)
				       : 0.25 * (TSR_AT2(&in, double, x - 1, y) +
						 TSR_AT2(&in, double, x + 1, y) +
						 TSR_AT2(&in, double, x, y - 1) +
						 TSR_AT2(&in, double, x, y + 1));
		}
}

struct stencil {
	tsr_task_t init, step;
	tsr_region_t grid;
	tsr_field_t f[2]; /* f[0] is read this iteration, f[1] written */
	tsr_partition_t tiles, halo;
	tsr_box_t colors;
	struct grid size;
	int px, py; /* the ranks' grid */
};

/* px x py = n ranks, px the largest divisor of n not above its square root. */
static void rank_grid(int n, int *px, int *py)
{
	*px = 1;
	for (int d = 1; (int64_t)d * d <= n; d++)
		if (n % d == 0)
			*px = d;
	*py = n / *px;
}

/* Tile (i, j) belongs to the rank whose block of T x T tiles holds it. */
static int set_tile_ranks(struct stencil *s, int t)
{
	for (int64_t j = 0; j <= s->colors.hi[1]; j++)
		for (int64_t i = 0; i <= s->colors.hi[0]; i++) {
			const int64_t color[3] = {i, j, 0};
			int rank = (int)(i / t) + s->px * (int)(j / t);
			TRY(tsr_partition_set_rank(s->tiles, color, rank));
		}
	return TSR_OK;
}

static int stencil_regions(struct stencil *s, const struct opts *o)
{
	tsr_fspace_t fs;
	TRY(tsr_fspace_create(&fs));
	TRY(tsr_fspace_add(fs, "u", TSR_F64, 0, &s->f[0]));
	TRY(tsr_fspace_add(fs, "v", TSR_F64, 0, &s->f[1]));
	TRY(tsr_region_create("grid", tsr_box2(0, s->size.nx - 1, 0, s->size.ny - 1), fs,
			      &s->grid));
	TRY(tsr_fspace_destroy(fs));

	const int64_t halo[3] = {1, 1, 0};
	tsr_box_t bounds = tsr_box2(0, s->size.nx - 1, 0, s->size.ny - 1);
	TRY(tsr_partition_tiles(s->grid, s->colors, "tiles", &s->tiles));
	TRY(tsr_partition_tiles_halo(s->grid, bounds, s->colors, halo, "halo", &s->halo));
	return set_tile_ranks(s, o->tiles);
}

static int stencil_setup(struct stencil *s, const struct opts *o)
{
	rank_grid(tsr_nranks(), &s->px, &s->py);
	s->size.nx = (int64_t)s->px * o->tiles * o->tile;
	s->size.ny = (int64_t)s->py * o->tiles * o->tile;
	s->colors = tsr_box2(0, (int64_t)s->px * o->tiles - 1, 0, (int64_t)s->py * o->tiles - 1);

	TRY(tsr_task_register(&(tsr_task_desc_t){.name = "stencil_init", .cpu = stencil_init},
			      &s->init));
	TRY(tsr_task_register(&(tsr_task_desc_t){.name = "stencil_step", .cpu = stencil_step},
			      &s->step));
	PASS(stencil_regions(s, o));

	TRY(tsr_run(s->init, &(tsr_launch_t){
				     .domain = s->colors,
				     .reqs = TSR_REQS(tsr_req_part(s->tiles, TSR_WRITE_DISCARD,
								   TSR_FIELDS(s->f[0], s->f[1]))),
			     }));
	return TSR_OK;
}

static int stencil_iteration(struct stencil *s)
{
	TRY(tsr_run(s->step,
		    &(tsr_launch_t){
			    .domain = s->colors,
			    .reqs = TSR_REQS(tsr_req_part(s->halo, TSR_READ, TSR_FIELDS(s->f[0])),
					     tsr_req_part(s->tiles, TSR_WRITE_DISCARD,
							  TSR_FIELDS(s->f[1]))),
			    TSR_ARGS(s->size),
		    }));

	tsr_field_t read = s->f[0];
	s->f[0] = s->f[1];
	s->f[1] = read;
	return TSR_OK;
}

static void stencil_describe(const struct stencil *s, const struct opts *o)
{
	int me = tsr_rank();
	printf("fake-ranks: stencil, %dx%d tiles of %dx%d per rank, %lldx%lld points, ranks in a "
	       "%dx%d grid, rank %d at (%d,%d)\n",
	       o->tiles, o->tiles, o->tile, o->tile, (long long)s->size.nx, (long long)s->size.ny,
	       s->px, s->py, me, me % s->px, me / s->px);
}

static int stencil_teardown(struct stencil *s)
{
	TRY(tsr_region_destroy(s->grid));
	return TSR_OK;
}

/* ------------------------------------------------------------ cg */

struct cg {
	cg_tasks_t tk;
	tsr_region_t vec;
	tsr_field_t fx, fr, fp, fq, fb;
	tsr_partition_t rows, ghost;
	tsr_box_t colors;
	cg_stencil_args_t grid;
	tsr_future_t state; /* after the last iteration submitted */
};

static int cg_regions(struct cg *c)
{
	tsr_fspace_t fs;
	TRY(tsr_fspace_create(&fs));
	TRY(tsr_fspace_add(fs, "x", TSR_F64, 0, &c->fx));
	TRY(tsr_fspace_add(fs, "r", TSR_F64, 0, &c->fr));
	TRY(tsr_fspace_add(fs, "p", TSR_F64, 0, &c->fp));
	TRY(tsr_fspace_add(fs, "Ap", TSR_F64, 0, &c->fq));
	TRY(tsr_fspace_add(fs, "b", TSR_F64, 0, &c->fb));

	const int64_t n = c->grid.nx * c->grid.ny;
	TRY(tsr_region_create("cg_vectors", tsr_box1(0, n - 1), fs, &c->vec));
	TRY(tsr_fspace_destroy(fs));

	/* a block of rows reads p one grid line away on each side */
	const int64_t halo[3] = {c->grid.nx, 0, 0};
	TRY(tsr_partition_tiles(c->vec, c->colors, "rows", &c->rows));
	TRY(tsr_partition_tiles_halo(c->vec, tsr_box1(0, n - 1), c->colors, halo, "ghost",
				     &c->ghost));
	return TSR_OK;
}

/* r.r into *rr (an index launch folded by SUM). */
static int cg_dot(struct cg *c, tsr_field_t a, tsr_field_t b, tsr_future_t *out)
{
	tsr_reqs_t reqs = a == b ? TSR_REQS(tsr_req_part(c->rows, TSR_READ, TSR_FIELDS(a)))
				 : TSR_REQS(tsr_req_part(c->rows, TSR_READ, TSR_FIELDS(a, b)));
	TRY(tsr_run(c->tk.dot, &(tsr_launch_t){.domain = c->colors,
					       .reqs = reqs,
					       .redop = TSR_SUM,
					       .result = out}));
	return TSR_OK;
}

/* As apps/cg: b = 1, x = 0, r = p = b, and the first state from r.r. r and p are filled with b's
 * value rather than copied from b (tsr_copy): a copy of the whole region is a single launch, which
 * runs on one rank and beyond 64 ranks is refused; a fill runs on every rank. */
static int cg_setup(struct cg *c, const struct opts *o)
{
	TRY(cg_tasks_register(&c->tk));
	TRY(cg_opencl_load());
	const int64_t nblocks = (int64_t)o->blocks * tsr_nranks();
	c->grid = (cg_stencil_args_t){o->tile, nblocks * o->lines, 1};
	c->colors = tsr_box1(0, nblocks - 1);
	PASS(cg_regions(c));

	const double one = 1.0;
	const double zero = 0.0;
	TRY(tsr_fill(c->vec, c->fb, &one, sizeof one));
	TRY(tsr_fill(c->vec, c->fx, &zero, sizeof zero));
	TRY(tsr_fill(c->vec, c->fr, &one, sizeof one));
	TRY(tsr_fill(c->vec, c->fp, &one, sizeof one));

	tsr_future_t rr;
	PASS(cg_dot(c, c->fr, c->fr, &rr));
	const cg_state_args_t first = {0.0, 1};
	TRY(tsr_run(c->tk.state, &(tsr_launch_t){.reqs = TSR_REQS(tsr_req_future(rr)),
						 TSR_ARGS(first),
						 .result = &c->state}));
	TRY(tsr_future_destroy(rr));
	return TSR_OK;
}

/* y (+)= coefficient * x through the row blocks: axpy (scale given) or xpay. */
static int cg_update(struct cg *c, tsr_task_t t, tsr_field_t x, tsr_field_t y, tsr_future_t coef,
		     const cg_axpy_args_t *scale)
{
	tsr_launch_t l = {.domain = c->colors,
			  .reqs = TSR_REQS(tsr_req_part(c->rows, TSR_READ, TSR_FIELDS(x)),
					   tsr_req_part(c->rows, TSR_READ_WRITE, TSR_FIELDS(y)),
					   tsr_req_future(coef))};
	if (scale) {
		l.args = scale;
		l.arglen = sizeof *scale;
	}
	TRY(tsr_run(t, &l));
	return TSR_OK;
}

/* apps/cg's iteration (tcg_iteration, matrix-free 2-D): Ap, p.Ap, alpha, r, r.r, the state, x,
 * p. Every scalar travels in a future. */
static int cg_iteration(struct cg *c)
{
	const cg_tasks_t *k = &c->tk;
	TRY(tsr_run(k->stencil2d,
		    &(tsr_launch_t){
			    .domain = c->colors,
			    .reqs = TSR_REQS(tsr_req_part(c->ghost, TSR_READ, TSR_FIELDS(c->fp)),
					     tsr_req_part(c->rows, TSR_WRITE, TSR_FIELDS(c->fq))),
			    TSR_ARGS(c->grid),
		    }));

	tsr_future_t pap, alpha, rr, next;
	PASS(cg_dot(c, c->fp, c->fq, &pap));
	TRY(tsr_run(k->alpha,
		    &(tsr_launch_t){.reqs = TSR_REQS(tsr_req_future(c->state), tsr_req_future(pap)),
				    .result = &alpha}));
	TRY(tsr_future_destroy(pap));

	const cg_axpy_args_t minus = {-1.0};
	const cg_axpy_args_t plus = {1.0};
	PASS(cg_update(c, k->axpy, c->fq, c->fr, alpha, &minus));
	PASS(cg_dot(c, c->fr, c->fr, &rr));
	const cg_state_args_t later = {0.0, 0};
	TRY(tsr_run(k->state,
		    &(tsr_launch_t){.reqs = TSR_REQS(tsr_req_future(c->state), tsr_req_future(rr)),
				    TSR_ARGS(later),
				    .result = &next}));
	TRY(tsr_future_destroy(rr));
	PASS(cg_update(c, k->axpy, c->fp, c->fx, alpha, &plus));
	TRY(tsr_future_destroy(alpha));
	PASS(cg_update(c, k->xpay, c->fr, c->fp, next, NULL));

	TRY(tsr_future_destroy(c->state));
	c->state = next;
	return TSR_OK;
}

static void cg_describe(const struct cg *c, const struct opts *o)
{
	printf("fake-ranks: cg, %d blocks of %d grid lines of %lld points per rank, %lldx%lld "
	       "grid, rank %d of %d\n",
	       o->blocks, o->lines, (long long)c->grid.nx, (long long)c->grid.nx,
	       (long long)c->grid.ny, tsr_rank(), tsr_nranks());
}

static int cg_teardown(struct cg *c)
{
	TRY(tsr_future_destroy(c->state));
	TRY(tsr_region_destroy(c->vec));
	return TSR_OK;
}

/* ------------------------------------------------------------ timing */

struct bench {
	const struct opts *o;
	struct stencil s;
	struct cg c;
};

static double thread_cpu_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

/* K iterations, then a fence outside the time: the host thread's CPU seconds per iteration. */
static int timed_run(struct bench *b, int k, double *per_iter)
{
	double t0 = thread_cpu_seconds();
	for (int i = 0; i < k; i++)
		PASS(b->o->cg ? cg_iteration(&b->c) : stencil_iteration(&b->s));
	double t = thread_cpu_seconds() - t0;

	TRY(tsr_fence());
	*per_iter = t / k;
	return TSR_OK;
}

/* Without --iters, a first run of 2 iterations says how many make a run of min_time (at most
 * this many, so that a run stays short whatever the first one measured). */
enum { MAX_AUTO_ITERS = 100000 };

static int choose_iters(struct bench *b, int *k)
{
	double first;
	PASS(timed_run(b, 2, &first));
	if (b->o->iters) {
		*k = b->o->iters;
		return TSR_OK;
	}

	double n = first > 0 ? b->o->min_time / first : MAX_AUTO_ITERS;
	*k = n < 2 ? 2 : n > MAX_AUTO_ITERS ? MAX_AUTO_ITERS : (int)n + 1;
	return TSR_OK;
}

static int measure(struct bench *b)
{
	const struct opts *o = b->o;
	int k;
	PASS(choose_iters(b, &k)); /* also the warm-up: first pieces, transfer views, pools */

	double *t = calloc((size_t)o->reps, sizeof *t);
	if (!t) {
		fprintf(stderr, "fake-ranks: out of memory\n");
		return TSR_ENOMEM;
	}

	int rc = TSR_OK;
	for (int r = 0; r < o->reps && !rc; r++)
		rc = timed_run(b, k, &t[r]);
	if (!rc) {
		double med = app_median(t, o->reps);
		printf("fake-ranks: rank %d of %d: host CPU per iteration %.1f us "
		       "(median of %d runs of %d iterations; min %.1f, max %.1f)\n",
		       tsr_rank(), tsr_nranks(), med * 1e6, o->reps, k, t[0] * 1e6,
		       t[o->reps - 1] * 1e6);
	}

	free(t);
	return rc;
}

/* A count of iterations chosen by each rank's clock would differ from rank to rank. */
static int iters_agreed(const struct opts *o)
{
	if (o->iters || tsr_nranks() == 1 || getenv("TSR_FAKE_NRANKS"))
		return TSR_OK;
	fprintf(stderr,
		"fake-ranks: on %d MPI ranks give --iters: each rank would choose its own "
		"count from its own clock\n",
		tsr_nranks());
	return TSR_EINVAL;
}

static int run(struct bench *b)
{
	const struct opts *o = b->o;
	PASS(iters_agreed(o));
	if (o->cg) {
		PASS(cg_setup(&b->c, o));
		cg_describe(&b->c, o);
	} else {
		PASS(stencil_setup(&b->s, o));
		stencil_describe(&b->s, o);
	}

	int rc = measure(b);
	int down = o->cg ? cg_teardown(&b->c) : stencil_teardown(&b->s);
	return rc ? rc : down;
}

int main(int argc, char **argv)
{
	struct opts o;
	int prc = parse_opts(argc, argv, &o);
	if (prc)
		return prc > 0 ? 0 : 2;
	if (app_start())
		return 1;

	struct bench b = {.o = &o};
	int status = run(&b) ? 1 : 0;
	fflush(stdout);

	int rc = tsr_finalize();
	if (rc) {
		app_fail("tsr_finalize", rc);
		status = 1;
	}
	return status;
}
