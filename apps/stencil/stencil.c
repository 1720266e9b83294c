/* stencil.c: fourth-order horizontal diffusion (the weather-and-climate course stencil) on Tessera,
 * with --verify against a plain sequential implementation and --compare against plain C/OpenMP,
 * raw StarPU and the STREAM triad, all measured in the same run. */
#include "config.h"

#include <errno.h>
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stencil_app.h"

typedef struct options {
	stencil_problem_t p;
	int tiles; /* -tiles N, split into tx x ty; 0: -tx/-ty/-tz or the default */
	const char *out;
	int verify, compare, reps;
	int stream_n; /* elements per STREAM array */
	int nt;       /* streaming stores: -1 auto, 0 off, 1 on */
} options_t;

/* The time steps in traces (tsr_trace_begin/end, one per parity of the step: the two fields swap
 * roles, so a step's launches recur every other step); --no-trace leaves them out. */
static int use_traces = 1;

static const char about[] =
	"Fourth-order horizontal diffusion on a periodic (nz, ny + 4, nx + 4) field, on Tessera.";
static const char epilog[] = "Exit status: 0 success, 1 failure, 2 usage error.";

/* n tiles along j when the rows allow it: whole rows keep the kernel's inner loop long and each
 * tile's memory one contiguous stream per plane, which the hardware prefetchers follow best
 * (tiles cut in i were measurably slower here). Otherwise the squarest tx x ty split. */
static void split_tiles(int n, int ny, int *tx, int *ty)
{
	int best = 1;
	if (n <= ny) {
		*tx = 1;
		*ty = n;
		return;
	}
	for (int d = 1; d * d <= n; d++)
		if (n % d == 0)
			best = d;
	*ty = best;
	*tx = n / best;
}

/* What the options say together: the tiles, whether they fit, the repetitions, the stores. */
static int settle(options_t *o)
{
	if (o->tiles && (o->p.tx || o->p.ty)) {
		fprintf(stderr, "stencil: give -tiles or -tx/-ty, not both\n");
		return -1;
	}
	if (!o->p.tx && !o->p.ty)
		split_tiles(o->tiles ? o->tiles : 4, o->p.ny, &o->p.tx, &o->p.ty);
	if (!o->p.tx)
		o->p.tx = 1;
	if (!o->p.ty)
		o->p.ty = 1;
	if (o->p.tx > o->p.nx || o->p.ty > o->p.ny || o->p.tz > o->p.nz) {
		fprintf(stderr,
			"stencil: %d x %d x %d tiles do not fit %d x %d x %d points (a tile needs "
			"one point)\n",
			o->p.tx, o->p.ty, o->p.tz, o->p.nx, o->p.ny, o->p.nz);
		return -1;
	}
	/* the raw StarPU version takes each halo strip from one neighbour */
	if (o->compare && (o->p.nx / o->p.tx < SH || o->p.ny / o->p.ty < SH)) {
		fprintf(stderr, "stencil: --compare needs tiles of at least %d points in i and j\n",
			SH);
		return -1;
	}
	if (!o->reps)
		o->reps = o->compare ? 5 : 1;
	o->p.nt = o->nt >= 0 ? o->nt : stencil_nontemporal_pays(sp_bytes(&o->p));
	return 0;
}

/* 0: run, 1: help or version printed, -1: usage error (said). */
static int parse(int argc, char **argv, options_t *o)
{
	enum { NT_AUTO, NT_ON, NT_OFF };
	int nt = NT_AUTO;

	memset(o, 0, sizeof *o);
	o->p = (stencil_problem_t){.nx = 128, .ny = 128, .nz = 32, .iter = 16, .tz = 1};
	o->stream_n = 20 * 1000 * 1000;
	const app_opt_t opts[] = {
		{"-nx", APP_OPT_INT, &o->p.nx, 4, 1 << 30, NULL, "N",
		 "interior points in i (default 128)"},
		{"-ny", APP_OPT_INT, &o->p.ny, 4, 1 << 30, NULL, "N",
		 "interior points in j (default 128)"},
		{"-nz", APP_OPT_INT, &o->p.nz, 1, 1 << 30, NULL, "N", "planes (default 32)"},
		{"-iter", APP_OPT_INT, &o->p.iter, 1, 1 << 30, NULL, "N",
		 "diffusion steps (default 16)"},
		{"-tiles", APP_OPT_INT, &o->tiles, 1, 1 << 30, NULL, "N",
		 "N tiles along j (whole rows; default 4), or split over (j, i)\n"
		 "as squarely as possible when N > ny"},
		{"-tx", APP_OPT_INT, &o->p.tx, 1, 1 << 30, NULL, "N",
		 "instead: tx x ty tiles in (i, j)"},
		{"-ty", APP_OPT_INT, &o->p.ty, 1, 1 << 30, NULL, "N", "(see -tx)"},
		{"-tz", APP_OPT_INT, &o->p.tz, 1, 1 << 30, NULL, "N",
		 "slabs of planes (default 1)"},
		{"-precision", APP_OPT_WORDS, &o->p.f32, 0, 0,
		 "f64,float64,double|f32,float32,float", "f64|f32", "element type (default f64)"},
		{"-f32", APP_OPT_SET, &o->p.f32, 1, 0, NULL, NULL, "short for -precision f32"},
		{"-f64", APP_OPT_SET, &o->p.f32, 0, 0, NULL, NULL, "short for -precision f64"},
		{"--reps", APP_OPT_INT, &o->reps, 1, 1 << 30, NULL, "N",
		 "timed runs, the median is printed (default 1, 5 with --compare)"},
		{"--verify", APP_OPT_SET, &o->verify, 1, 0, NULL, NULL,
		 "compare with a plain sequential C implementation: bit-identical\n"
		 "in f64, max relative error below 1e-6 in f32"},
		{"--out", APP_OPT_OUTFILE, &o->out, 0, 0, NULL, "FILE.npy",
		 "write the final field, halo included, as a NumPy .npy file\n"
		 "(checked before the run: it must be writable)"},
		{"--compare", APP_OPT_SET, &o->compare, 1, 0, NULL, NULL,
		 "also run a plain C/OpenMP loop nest, a raw StarPU version and the\n"
		 "STREAM triad in this process, and print the ratios"},
		{"--nt", APP_OPT_WORDS, &nt, 0, 0, "auto|on|off", "auto|on|off",
		 "non-temporal stores of out in every version (default auto: on\n"
		 "when two fields do not fit in the last-level cache)"},
		{"--no-trace", APP_OPT_SET, &use_traces, 0, 0, NULL, NULL,
		 "no tsr_trace_begin/end around the time steps (TSR_REPLAY=off\n"
		 "also stops Tessera from finding the loop by itself)"},
		{"--stream-n", APP_OPT_INT, &o->stream_n, 1000, 1 << 30, NULL, "N",
		 "elements per STREAM triad array (default 20000000: 480 MB in all)"},
	};
	const app_cli_t cli = {"stencil", about, opts, sizeof opts / sizeof opts[0], epilog};
	int rc = app_parse(&cli, argc, argv);
	if (rc)
		return rc;
	o->nt = nt == NT_AUTO ? -1 : nt == NT_ON;
	return settle(o);
}

/* ------------------------------------------------------------------ the Tessera version */

/* Each slab of planes is seen through three partitions, each the natural view of one step:
 *   tiles       the slab's interior cut into tx x ty tiles (disjoint): the diffusion writes them,
 *               the border copies read them;
 *   tiles+halo  the same tiles grown by the stencil's 2 points in i and j (aliased): the diffusion
 *               reads them;
 *   border      the periodic border (the halo frame around the interior), cut where the images of
 *               the tiles cut it (disjoint): every piece is the periodic image of part of one tile,
 *               and that tile's copy task writes it.
 * Tessera keeps the three views of each field coherent; the program never combines them by hand. */

/* The border pieces a tile is the image of. */
struct tile_pieces {
	int n;
	int color[STENCIL_MAX_DST];        /* colors in the slab's `border` partition */
	int64_t shift[STENCIL_MAX_DST][3]; /* piece point x is tile point x + shift */
};

/* One slab of planes: planes never exchange data in this horizontal diffusion, so each slab is
 * partitioned, and advances, on its own. */
typedef struct slab {
	tsr_region_t region; /* subregion of `slabs` */
	/* tile grid (tx, ty, 1): the launch domain of the steps */
	tsr_box_t colors;
	int ntiles, npieces;
	tsr_partition_t tiles; /* tile (ti, tj) has color (ti, tj, 0) */
	tsr_partition_t tiles_halo;
	tsr_partition_t border;     /* colors 0..npieces-1 */
	tsr_region_t *tile;         /* subregions of tiles: tile (ti, tj) at ti + tx tj */
	tsr_region_t *piece;        /* subregions of border, by color */
	struct tile_pieces *pieces; /* ntiles */
} slab_t;

typedef struct tstencil {
	stencil_problem_t p;
	int have_grid, have_fs;
	tsr_fspace_t fs;
	tsr_region_t grid;
	tsr_field_t f[2];      /* "a" and "b": in and out swap by swapping ids */
	tsr_partition_t slabs; /* tz slabs of planes, disjoint */
	slab_t *slab;          /* tz */
	stencil_tasks_t tasks;
	int result; /* index into f of the final field */
	/* iterations of the earlier repetitions, for the progress line */
	int64_t done_before;
} tstencil_t;

/* The border as pieces, one per (tile, direction) where the tile holds part of the border's source:
 * the border in direction (dx, dy) (columns [0, h), [h, nx + h) or [nx + h, nx + 2h) by dx, rows
 * likewise by dy) is the image of the interior shifted by (dx nx, dy ny). That fills the corners
 * from the interior directly, which gives exactly what the course's two passes give (the j-edges,
 * then the i-edges through the rows the j-edges wrote) since nx, ny >= h. tile_box holds the
 * tiles' boxes; writes the pieces' boxes into piece_box (room for ntiles * STENCIL_MAX_DST) and
 * returns their number. */
static int build_pieces(const stencil_problem_t *p, slab_t *sl, const tsr_box_t *tile_box,
			tsr_box_t *piece_box)
{
	const int64_t nx = p->nx, ny = p->ny, nz = p->nz, h = SH;
	const int64_t lo[3] = {0, h, nx + h}, hi[3] = {h - 1, nx + h - 1, nx + 2 * h - 1};
	const int64_t loj[3] = {0, h, ny + h}, hij[3] = {h - 1, ny + h - 1, ny + 2 * h - 1};
	int np = 0;
	for (int t = 0; t < sl->ntiles; t++) {
		struct tile_pieces *q = &sl->pieces[t];
		for (int dy = -1; dy <= 1; dy++)
			for (int dx = -1; dx <= 1; dx++) {
				tsr_box_t src;
				if (!dx && !dy)
					continue;
				/* the source of the border in this direction, in the interior */
				src = tsr_box3(lo[dx + 1] - dx * nx, hi[dx + 1] - dx * nx,
					       loj[dy + 1] - dy * ny, hij[dy + 1] - dy * ny, 0,
					       nz - 1);
				if (!tsr_box_intersect(src, tile_box[t], &src))
					continue;
				q->color[q->n] = np;
				q->shift[q->n][0] = -dx * nx;
				q->shift[q->n][1] = -dy * ny;
				q->shift[q->n][2] = 0;
				q->n++;
				piece_box[np] = tsr_box3(src.lo[0] + dx * nx, src.hi[0] + dx * nx,
							 src.lo[1] + dy * ny, src.hi[1] + dy * ny,
							 src.lo[2], src.hi[2]);
				np++;
			}
	}
	return np;
}

/* The tiles of the slab's interior, written by the diffusion, and the same tiles grown by the
 * stencil's reach, read by it: both cut by Tessera over the same tile grid. */
static int slab_tiles(const stencil_problem_t *p, slab_t *sl)
{
	const int64_t halo[3] = {SH, SH, 0};
	tsr_box_t bounds, interior;

	APP_TRY("slab bounds", tsr_region_bounds(sl->region, &bounds));
	interior = tsr_box3(SH, p->nx + SH - 1, SH, p->ny + SH - 1, bounds.lo[2], bounds.hi[2]);
	sl->colors = tsr_box3(0, p->tx - 1, 0, p->ty - 1, 0, 0);
	sl->ntiles = p->tx * p->ty;
	APP_TRY("tiles", tsr_partition_tiles_halo(sl->region, interior, sl->colors, NULL, "tiles",
						  &sl->tiles));
	APP_TRY("halo tiles", tsr_partition_tiles_halo(sl->region, interior, sl->colors, halo,
						       "tiles+halo", &sl->tiles_halo));
	if (!(sl->tile = calloc((size_t)sl->ntiles, sizeof *sl->tile))) {
		fprintf(stderr, "stencil: out of memory for %d tiles\n", sl->ntiles);
		return TSR_ENOMEM;
	}
	for (int t = 0; t < sl->ntiles; t++) {
		const int64_t c[3] = {t % p->tx, t / p->tx, 0};
		APP_TRY("tile", tsr_partition_subregion(sl->tiles, c, &sl->tile[t]));
	}
	return TSR_OK;
}

/* The border partition: its pieces from the tiles' boxes, then the partition and its subregions. */
static int slab_border(const stencil_problem_t *p, slab_t *sl)
{
	tsr_box_t *tile_box = malloc((size_t)sl->ntiles * sizeof *tile_box);
	tsr_box_t *piece_box = malloc((size_t)sl->ntiles * STENCIL_MAX_DST * sizeof *piece_box);
	int rc = TSR_OK;

	sl->pieces = calloc((size_t)sl->ntiles, sizeof *sl->pieces);
	if (!tile_box || !piece_box || !sl->pieces) {
		free(tile_box);
		free(piece_box);
		fprintf(stderr, "stencil: out of memory for the border of %d tiles\n", sl->ntiles);
		return TSR_ENOMEM;
	}
	for (int t = 0; t < sl->ntiles && rc == TSR_OK; t++)
		rc = tsr_region_bounds(sl->tile[t], &tile_box[t]);
	if (rc == TSR_OK) {
		sl->npieces = build_pieces(p, sl, tile_box, piece_box);
		rc = tsr_partition_boxes(sl->region, sl->npieces, piece_box, "border", &sl->border);
	}
	free(tile_box);
	free(piece_box);
	if (rc != TSR_OK)
		return app_fail("border partition", rc);
	/* a border point written by two copies would make the result depend on their order */
	if (tsr_partition_is_disjoint(sl->border) != 1) {
		fprintf(stderr, "stencil: internal error: two border pieces overlap\n");
		return TSR_EINVAL;
	}
	if (!(sl->piece = calloc((size_t)sl->npieces, sizeof *sl->piece))) {
		fprintf(stderr, "stencil: out of memory for %d border pieces\n", sl->npieces);
		return TSR_ENOMEM;
	}
	for (int c = 0; c < sl->npieces; c++) {
		const int64_t color[3] = {c, 0, 0};
		APP_TRY("border piece", tsr_partition_subregion(sl->border, color, &sl->piece[c]));
	}
	return TSR_OK;
}

static int tstencil_create(tstencil_t *s, const stencil_problem_t *p)
{
	const tsr_type_t type = p->f32 ? TSR_F32 : TSR_F64;

	memset(s, 0, sizeof *s);
	s->p = *p;
	APP_TRY("field space", tsr_fspace_create(&s->fs));
	s->have_fs = 1;
	APP_TRY("field a", tsr_fspace_add(s->fs, "a", type, 0, &s->f[0]));
	APP_TRY("field b", tsr_fspace_add(s->fs, "b", type, 0, &s->f[1]));
	APP_TRY("region", tsr_region_create("grid",
					    tsr_box3(0, p->nx + 2 * SH - 1, 0, p->ny + 2 * SH - 1,
						     0, p->nz - 1),
					    s->fs, &s->grid));
	s->have_grid = 1;
	APP_TRY("field space", tsr_fspace_destroy(s->fs));
	s->have_fs = 0;
	APP_TRY("slabs", tsr_partition_tiles(s->grid, tsr_box3(0, 0, 0, 0, 0, p->tz - 1), "slabs",
					     &s->slabs));
	if (!(s->slab = calloc((size_t)p->tz, sizeof *s->slab))) {
		fprintf(stderr, "stencil: out of memory for %d slabs\n", p->tz);
		return TSR_ENOMEM;
	}
	for (int k = 0; k < p->tz; k++) {
		const int64_t c[3] = {0, 0, k};
		APP_TRY("slab", tsr_partition_subregion(s->slabs, c, &s->slab[k].region));
		PASS(slab_tiles(p, &s->slab[k]));
		PASS(slab_border(p, &s->slab[k]));
	}
	APP_TRY("task registration", stencil_tasks_register(&s->tasks));
	return TSR_OK;
}

static void tstencil_destroy(tstencil_t *s)
{
	if (s->have_grid)
		tsr_region_destroy(s->grid); /* its partitions go with it */
	if (s->have_fs)
		tsr_fspace_destroy(s->fs);
	for (int k = 0; s->slab && k < s->p.tz; k++) {
		free(s->slab[k].tile);
		free(s->slab[k].piece);
		free(s->slab[k].pieces);
	}
	free(s->slab);
	s->slab = NULL;
	s->have_grid = s->have_fs = 0;
}

/* Periodic border update of field f in one slab: each tile's task reads the tile and writes the
 * border pieces that are its image. */
static int border_update(tstencil_t *s, const slab_t *sl, tsr_field_t f)
{
	/* outlives the loop below, unlike a TSR_FIELDS literal in it */
	const tsr_field_t fl[1] = {f};
	for (int t = 0; t < sl->ntiles; t++) {
		const struct tile_pieces *q = &sl->pieces[t];
		stencil_copy_args_t a;
		tsr_req_t r[1 + STENCIL_MAX_DST];
		if (!q->n)
			continue; /* an inner tile: no border is its image */
		memset(&a, 0, sizeof a);
		a.ndst = q->n;
		memcpy(a.shift, q->shift, sizeof a.shift);
		r[0] = tsr_req_region(sl->tile[t], TSR_READ, 1, fl);
		for (int m = 0; m < q->n; m++)
			r[1 + m] = tsr_req_region(sl->piece[q->color[m]], TSR_WRITE, 1, fl);
		APP_TRY("border update",
			tsr_run(s->tasks.halo_copy,
				&(tsr_launch_t){.reqs = {1 + q->n, r}, TSR_ARGS(a)}));
	}
	return TSR_OK;
}

/* The initial condition in field f, by tasks on the tiles: the border is not written, it is
 * refreshed before it is read. */
static int tstencil_init_field(tstencil_t *s, tsr_field_t f)
{
	const stencil_init_args_t a = {s->p.nx, s->p.ny, s->p.nz};
	for (int k = 0; k < s->p.tz; k++) {
		const slab_t *sl = &s->slab[k];
		APP_TRY("initial condition",
			tsr_run(s->tasks.init,
				&(tsr_launch_t){
					.domain = sl->colors,
					.reqs = TSR_REQS(
						tsr_req_part(sl->tiles, TSR_WRITE, TSR_FIELDS(f))),
					TSR_ARGS(a),
				}));
	}
	return TSR_OK;
}

/* The initial condition in the first field. The second one, which the first step overwrites, gets
 * it too: on several ranks a field's pages are zeroed as a rank first touches them (a rank holds
 * what it owns), and touching them here, by the tiles' own tasks, keeps those page faults out of
 * the timed steps, as one process's zeroed allocation does (1.5 ms of 11.7 per step on 2 ranks). */
static int tstencil_init(tstencil_t *s)
{
	PASS(tstencil_init_field(s, s->f[0]));
	return tstencil_init_field(s, s->f[1]);
}

/* One diffusion step of one slab: in through the grown tiles, out through the tiles. */
static int diffusion_step(tstencil_t *s, const slab_t *sl, tsr_field_t in, tsr_field_t out)
{
	const stencil_args_t a = {STENCIL_ALPHA, s->p.nt};
	APP_TRY("diffusion step",
		tsr_run(s->tasks.diffusion,
			&(tsr_launch_t){
				.domain = sl->colors,
				.reqs = TSR_REQS(tsr_req_part(sl->tiles_halo, TSR_READ,
							      TSR_FIELDS(in)),
						 tsr_req_part(sl->tiles, TSR_WRITE,
							      TSR_FIELDS(out))),
				TSR_ARGS(a),
			}));
	return TSR_OK;
}

/* One timed run from the initial condition; *seconds covers the time loop until its last task ends.
 * Slab by slab: the slabs share no data, so each runs its steps as fast as its own tasks allow. */
static int tstencil_run(tstencil_t *s, double *seconds)
{
	int cur = 0;
	double t0;

	PASS(tstencil_init(s));
	APP_TRY("fence", tsr_fence());
	t0 = app_now();
	for (int n = 0; n < s->p.iter; n++) {
		tsr_field_t in = s->f[cur], out = s->f[1 - cur];
		if (use_traces)
			APP_TRY("tsr_trace_begin", tsr_trace_begin((uint32_t)cur));
		for (int k = 0; k < s->p.tz; k++) {
			PASS(border_update(s, &s->slab[k], in));
			PASS(diffusion_step(s, &s->slab[k], in, out));
		}
		if (use_traces)
			APP_TRY("tsr_trace_end", tsr_trace_end((uint32_t)cur));
		/* the course ends with the border of the final field up to date */
		for (int k = 0; k < s->p.tz && n == s->p.iter - 1; k++)
			PASS(border_update(s, &s->slab[k], out));
		if (n < s->p.iter - 1)
			cur = 1 - cur;
		/* the progress line (when on) waits for the steps now and then to count them */
		if (app_progress_due(s->done_before + n + 1)) {
			APP_TRY("fence for the progress line", tsr_fence());
			app_progress_done(s->done_before + n + 1);
		}
	}
	APP_TRY("fence after the time loop", tsr_fence());
	*seconds = app_now() - t0;
	s->result = 1 - cur;
	return TSR_OK;
}

/* Copy the final field (halo included) into a contiguous array. */
static int tstencil_result(tstencil_t *s, void *field)
{
	const stencil_problem_t *p = &s->p;
	const size_t es = sp_elem(p), row = (size_t)(p->nx + 2 * SH) * es;
	tsr_accessor_t acc;
	PASS(app_map("map the result", s->grid, s->f[s->result], TSR_READ, &acc));
	for (int k = 0; k < p->nz; k++)
		for (int j = 0; j < p->ny + 2 * SH; j++)
			memcpy((char *)field + ((size_t)k * (size_t)sp_sk(p) +
						(size_t)j * (size_t)sp_sj(p)) *
						       es,
			       (const char *)acc.ptr +
				       ((size_t)k * acc.stride[2] + (size_t)j * acc.stride[1]) * es,
			       row);
	APP_TRY("unmap the result", tsr_unmap(s->grid, s->f[s->result]));
	return TSR_OK;
}

/* ------------------------------------------------------------------ driver */

/* Median time per iteration and bandwidth; with several runs, the range of the runs too (on a
 * shared machine it shows how far one run can be off). v is sorted by app_median(). */
static void print_time(const char *who, const stencil_problem_t *p, double sec, const double *v,
		       int reps)
{
	app_printf("%-9s %9.3f ms/iter  %7.2f GB/s  (median of %d run%s of %d iterations", who,
		   1e3 * sec / p->iter, sp_step_bytes(p) * p->iter / sec * 1e-9, reps,
		   reps > 1 ? "s" : "", p->iter);
	if (reps > 1)
		app_printf("; %.3f to %.3f ms/iter", 1e3 * v[0] / p->iter,
			   1e3 * v[reps - 1] / p->iter);
	app_printf(")\n");
}

/* Idle StarPU workers poll for tasks in a tight loop: pause them while OpenMP owns the cores, or
 * the baselines would run on what the polling leaves them. */
static void host_phase_begin(void)
{
	tsr_pause();
}
static void host_phase_end(void)
{
	tsr_resume();
}

/* The raw StarPU baseline submits to Tessera's own StarPU instance, so --sched, TSR_SCHED,
 * STARPU_SCHED and --ncpu reach both alike: say under what it runs, and refuse a comparison where
 * it would run under another policy or on other workers than Tessera. */
static int raw_same_setup(void)
{
	int nworkers;
	const char *policy = sp_raw_policy(&nworkers);
	app_printf("baseline: raw StarPU in the same StarPU instance: policy %s, %d worker%s\n",
		   policy, nworkers, nworkers == 1 ? "" : "s");
	if (strcmp(policy, tsr_sched_name()) != 0 || nworkers != tsr_worker_count()) {
		fprintf(stderr,
			"stencil: raw StarPU would run under policy %s on %d workers, Tessera "
			"under %s on %d\n",
			policy, nworkers, tsr_sched_name(), tsr_worker_count());
		return -1;
	}
	return 0;
}

typedef struct results {
	double tsr, omp, raw, triad; /* medians */
	/* the runs, sorted: tessera, omp, raw, triad, reps each */
	double *t;
	int omp_same, raw_same;
} results_t;

static int run_all(tstencil_t *s, const options_t *o, void *field, results_t *res)
{
	const stencil_problem_t *p = &s->p;
	double *t = calloc((size_t)o->reps * 4, sizeof *t);
	sp_omp_t *omp = NULL;
	sp_raw_t *raw = NULL;
	sp_stream_t *st = NULL;
	void *other = NULL;
	int rc = 1;

	if (!t)
		goto out;
	if (o->compare) {
		/* by default triad arrays of 3 x 20M doubles: 480 MB, far beyond any cache here */
		host_phase_begin();
		omp = sp_omp_create(p);
		st = sp_stream_create((size_t)o->stream_n, p->nthreads);
		host_phase_end();
		raw = sp_raw_create(p);
		other = malloc(sp_bytes(p));
		if (!omp || !st || !raw || !other) {
			fprintf(stderr, "stencil: out of memory for the baselines\n");
			goto out;
		}
	}
	/* Interleaved repetitions: a burst of load from the machine's other users then hits every
	 * version alike, and the ratios of the medians stay meaningful. */
	app_progress_begin("iteration", (int64_t)o->reps * p->iter, 0);
	for (int r = 0; r < o->reps; r++) {
		s->done_before = (int64_t)r * p->iter;
		if (o->compare) {
			host_phase_begin();
			t[3 * o->reps + r] = sp_stream_triad(st);
			t[1 * o->reps + r] = sp_omp_run(omp);
			host_phase_end();
		}
		if (tstencil_run(s, &t[r]) != TSR_OK)
			goto out;
		if (o->compare && (t[2 * o->reps + r] = sp_raw_run(raw)) < 0) {
			fprintf(stderr,
				"stencil: the raw StarPU version failed to submit a task\n");
			goto out;
		}
	}
	app_progress_end((int64_t)o->reps * p->iter);
	res->tsr = app_median(t, o->reps);
	if (tstencil_result(s, field) != TSR_OK)
		goto out;
	if (o->compare) {
		res->omp = app_median(t + o->reps, o->reps);
		res->raw = app_median(t + 2 * o->reps, o->reps);
		res->triad = app_median(t + 3 * o->reps, o->reps);
		res->omp_same = memcmp(sp_omp_result(omp), field, sp_bytes(p)) == 0;
		if (sp_raw_result(raw, other) != 0) {
			fprintf(stderr, "stencil: could not read the raw StarPU result back\n");
			goto out;
		}
		res->raw_same = memcmp(other, field, sp_bytes(p)) == 0;
	}
	res->t = t;
	t = NULL; /* the caller prints the ranges, then frees them */
	rc = 0;
out:
	sp_raw_destroy(raw);
	sp_omp_destroy(omp);
	sp_stream_destroy(st);
	free(other);
	free(t);
	return rc;
}

/* The setup, once the runtime says what it runs on. */
static void print_setup(const stencil_problem_t *p)
{
	app_printf("grid:     %d x %d x %d points (i x j x k) + %d halo in i and j, %s, %d "
		   "iterations\n",
		   p->nx, p->ny, p->nz, SH, p->f32 ? "f32" : "f64", p->iter);
	app_printf("tiles:    %d x %d x %d = %d (i x j x k), %s stores\n", p->tx, p->ty, p->tz,
		   p->tx * p->ty * p->tz, p->nt ? "non-temporal" : "normal");
	app_printf("policy:   %s (task ordering: %s)\n", tsr_sched_name(), tsr_deps_name());
	app_printf("workers:  %d CPU, %d CUDA, %d OpenCL%s\n", tsr_ncpu_workers(),
		   tsr_ncuda_workers(), tsr_nopencl_workers(), app_ranks_note());
	fflush(stdout);
}

/* --compare's lines; 0 when the baselines computed Tessera's bits. */
static int print_compare(const stencil_problem_t *p, const results_t *res, int reps)
{
	double gbs = sp_step_bytes(p) * p->iter / res->tsr * 1e-9;
	print_time("omp:", p, res->omp, res->t + reps, reps);
	print_time("starpu:", p, res->raw, res->t + 2 * reps, reps);
	app_printf("triad:    %7.2f GB/s  (STREAM a = b + s*c, %d threads, 24 bytes per element)\n",
		   res->triad, p->nthreads);
	app_printf("ratios:   tessera/omp = %.3fx  tessera/starpu = %.3fx  (speed; > 1: "
		   "Tessera faster)\n",
		   res->omp / res->tsr, res->raw / res->tsr);
	app_printf("fraction: tessera at %.0f%% of triad, omp at %.0f%% of triad\n",
		   100.0 * gbs / res->triad,
		   100.0 * (sp_step_bytes(p) * p->iter / res->omp * 1e-9) / res->triad);
	app_printf("agree:    omp %s, starpu %s with tessera (bit for bit)\n",
		   res->omp_same ? "identical" : "DIFFERENT",
		   res->raw_same ? "identical" : "DIFFERENT");
	return res->omp_same && res->raw_same ? 0 : -1;
}

/* --verify: the field against the sequential reference; 0 when it passes. */
static int verify(const stencil_problem_t *p, const void *field)
{
	void *ref = malloc(sp_bytes(p));
	double err;
	size_t at;
	if (!ref || sp_reference(p, ref) != 0) {
		free(ref);
		fprintf(stderr, "stencil: out of memory for the reference\n");
		return -1;
	}
	int ok = sp_compare(p, field, ref, &err, &at);
	free(ref);
	if (ok && err == 0.0)
		app_printf("verify:   PASS, bit-identical to the sequential reference\n");
	else if (ok)
		app_printf("verify:   PASS, max relative error %.3g < 1e-6\n", err);
	else {
		long k = (long)(at / (size_t)sp_sk(p)),
		     j = (long)(at % (size_t)sp_sk(p) / (size_t)sp_sj(p)),
		     i = (long)(at % (size_t)sp_sj(p));
		app_printf("verify:   FAIL, %s %.3g at (k, j, i) = (%ld, %ld, %ld)\n",
			   p->f32 ? "max relative error" : "not bit-identical: max abs difference",
			   err, k, j, i);
	}
	return ok ? 0 : -1;
}

/* --out: every rank holds the whole field (run_all maps it); rank 0 alone writes the file. */
static int write_out(const stencil_problem_t *p, const char *out, const void *field)
{
	if (!out || app_rank() != 0)
		return 0;
	if (sp_write_npy(p, out, field, sp_sj(p), sp_sk(p)) != 0) {
		fprintf(stderr, "stencil: cannot write %s: %s\n", out, strerror(errno));
		return -1;
	}
	app_printf("out:      %s, shape (%d, %d, %d) %s\n", out, p->nz, p->ny + 2 * SH,
		   p->nx + 2 * SH, p->f32 ? "<f4" : "<f8");
	return 0;
}

/* Everything between tsr_init and tsr_finalize; 0 on success. */
static int run(const options_t *o, tstencil_t *s)
{
	const stencil_problem_t *p = &o->p;
	results_t res = {0};
	void *field = NULL;
	int rc;

	/* the OpenCL variants' kernels, built for each OpenCL device before any task needs them */
	if ((rc = stencil_opencl_load()) != TSR_OK)
		return app_fail("building the OpenCL kernels (apps/stencil/stencil.cl)", rc);
	if (tstencil_create(s, p) != TSR_OK)
		return -1;
	if (o->compare && raw_same_setup() != 0)
		return -1;
	if (!(field = malloc(sp_bytes(p)))) {
		fprintf(stderr, "stencil: out of memory for the result (%zu bytes)\n", sp_bytes(p));
		return -1;
	}
	rc = run_all(s, o, field, &res);
	if (!rc)
		print_time("tessera:", p, res.tsr, res.t, o->reps);
	if (!rc && o->compare)
		rc = print_compare(p, &res, o->reps);
	if (!rc && o->verify)
		rc = verify(p, field);
	if (!rc)
		rc = write_out(p, o->out, field);
	if (!rc)
		app_printf("stencil: OK %dx%dx%d %s, %d iterations, %d tiles, %s: %.3f ms/iter, "
			   "%.2f GB/s%s\n",
			   p->nx, p->ny, p->nz, p->f32 ? "f32" : "f64", p->iter,
			   p->tx * p->ty * p->tz, tsr_sched_name(), 1e3 * res.tsr / p->iter,
			   sp_step_bytes(p) * p->iter / res.tsr * 1e-9,
			   o->verify ? ", verified" : "");
	free(res.t);
	free(field);
	return rc;
}

int main(int argc, char **argv)
{
	options_t o;
	tstencil_t s;

	int prc = parse(argc, argv, &o);
	if (prc)
		return prc > 0 ? 0 : 2;
	if (app_start() != TSR_OK)
		return 1;
	o.p.nthreads = tsr_ncpu_workers() > 0 ? tsr_ncpu_workers() : 1;
	print_setup(&o.p);

	memset(&s, 0, sizeof s); /* what tstencil_destroy frees, until tstencil_create fills it */
	int status = run(&o, &s) ? 1 : 0;
	tstencil_destroy(&s);
	int rc = tsr_finalize();
	if (rc != TSR_OK) {
		app_fail("tsr_finalize", rc);
		status = 1;
	}
	return status;
}
