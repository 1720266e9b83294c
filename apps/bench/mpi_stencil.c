/* mpi_stencil.c: apps/stencil's diffusion as a plain MPI C program, its limit on several ranks
 * (make bench-ranks): one slab of rows per rank, the halo rows by MPI_Isend/Irecv. */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stencil_app.h"

/* apps/stencil's problem in f64: a periodic (nz, ny + 4, nx + 4) field; the same kernel
 * (stencil_kernel.c), the same streaming-store choice, the same initial condition. */
typedef struct opts {
	stencil_problem_t p;
	int reps, verify;
} opts_t;

/* This rank's slab: interior rows j0..j0+nj-1 of every plane, in a local field of
 * (nz, nj + 4, nx + 4) whose rows 0..1 and nj+2..nj+3 are the halo rows from the neighbours
 * (periodic in j: rank 0's lower neighbour is the last rank). */
typedef struct slab {
	int rank, nranks, down, up;
	int j0, nj;
	ptrdiff_t sj, sk;
	double *f[2];
	double *ring;
	double *buf[4]; /* halo rows packed: to down, to up, from down, from up */
	size_t halo_elems;
} slab_t;

/* Exit statuses: 2 usage, 3 --verify failed. */
enum { EXIT_USAGE = 2, EXIT_VERIFY = 3 };

/* ------------------------------------------------------------ options */

static void usage(void)
{
	printf("usage: mpirun -np N mpi-stencil [-nx N] [-ny N] [-nz N] [-iter N] [-reps R]\n"
	       "                [--verify]\n"
	       "apps/stencil's fourth-order diffusion (f64) as a plain MPI C program: ny split\n"
	       "into one slab of rows per rank, the 2 halo rows each side by Isend/Irecv, the\n"
	       "i-edges copied in place. Defaults as apps/stencil: 128 x 128 x 32, 16 steps.\n"
	       "-reps R: R timed runs (the median printed); --verify: the final field gathered\n"
	       "on rank 0 and compared bit for bit with apps/stencil's sequential reference.\n"
	       "Exit status: 0 success, 1 failure, 2 usage, 3 --verify failed.\n");
}

/* An integer option: its name, where it goes, its least value. */
typedef struct int_opt {
	const char *name;
	int *dst;
	int min;
} int_opt_t;

/* One option at argv[*a] (its value after it); 0, 1 for --help, -1 on a mistake (said). */
static int parse_one(int argc, char **argv, int *a, opts_t *o)
{
	const char *opt = argv[*a];
	const char *val = *a + 1 < argc ? argv[*a + 1] : NULL;
	const int_opt_t ints[] = {{"-nx", &o->p.nx, 4},
				  {"-ny", &o->p.ny, 4},
				  {"-nz", &o->p.nz, 1},
				  {"-iter", &o->p.iter, 1},
				  {"-reps", &o->reps, 1}};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
		if (!strcmp(opt, ints[i].name)) {
			*a += 1;
			return app_parse_int(opt, val, ints[i].min, 1 << 20, ints[i].dst);
		}
	if (!strcmp(opt, "--verify")) {
		o->verify = 1;
		return 0;
	}
	if (!strcmp(opt, "--help") || !strcmp(opt, "-h"))
		return 1;
	fprintf(stderr, "mpi-stencil: unknown option '%s' (see --help)\n", opt);
	return -1;
}

static int parse(int argc, char **argv, opts_t *o)
{
	memset(o, 0, sizeof *o);
	o->p = (stencil_problem_t){.nx = 128,
				   .ny = 128,
				   .nz = 32,
				   .iter = 16,
				   .tx = 1,
				   .ty = 1,
				   .tz = 1};
	o->reps = 1;
	app_set_name("mpi-stencil");
	for (int a = 1; a < argc; a++) {
		int rc = parse_one(argc, argv, &a, o);
		if (rc)
			return rc;
	}
	/* as apps/stencil: streaming stores when two whole fields do not fit in the cache */
	o->p.nt = stencil_nontemporal_pays(sp_bytes(&o->p));
	return 0;
}

/* ------------------------------------------------------------ the slab */

/* Equal slabs, the remainder to the first ranks (sp_tile_range, as apps/stencil's tiles); a slab
 * of 2 rows at least, so that each halo comes from one neighbour. */
static int slab_place(slab_t *s, const stencil_problem_t *p)
{
	MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &s->nranks);
	if (p->ny / s->nranks < SH) {
		if (s->rank == 0)
			fprintf(stderr,
				"mpi-stencil: %d ranks for -ny %d: a rank needs %d rows at least; "
				"use at most %d ranks\n",
				s->nranks, p->ny, SH, p->ny / SH);
		return -1;
	}
	sp_tile_range(p->ny, s->nranks, s->rank, &s->j0, &s->nj);
	s->down = (s->rank + s->nranks - 1) % s->nranks;
	s->up = (s->rank + 1) % s->nranks;
	s->sj = sp_sj(p);
	s->sk = s->sj * (s->nj + 2 * SH);
	s->halo_elems = (size_t)SH * (size_t)p->nx * (size_t)p->nz;
	return 0;
}

static int slab_alloc(slab_t *s, const stencil_problem_t *p)
{
	const size_t elems = (size_t)s->sk * (size_t)p->nz;
	for (int i = 0; i < 2; i++)
		s->f[i] = calloc(elems, sizeof(double));
	for (int i = 0; i < 4; i++)
		s->buf[i] = malloc(s->halo_elems * sizeof(double));
	s->ring = malloc(stencil_ring_elems(p->nx) * sizeof(double));
	return s->f[0] && s->f[1] && s->buf[0] && s->buf[1] && s->buf[2] && s->buf[3] && s->ring
		       ? 0
		       : -1;
}

static void slab_free(slab_t *s)
{
	free(s->f[0]);
	free(s->f[1]);
	for (int i = 0; i < 4; i++)
		free(s->buf[i]);
	free(s->ring);
}

/* apps/stencil's initial condition on the slab's interior rows (global row j0 + SH + j). */
static void slab_initial(slab_t *s, const stencil_problem_t *p)
{
	for (int k = 0; k < p->nz; k++)
		for (int j = 0; j < s->nj; j++) {
			double *row = s->f[0] + k * s->sk + (j + SH) * s->sj;
			for (int i = 0; i < p->nx + 2 * SH; i++)
				row[i] = STENCIL_INITIAL_IS_ONE(p->nx, p->ny, p->nz, k,
								s->j0 + SH + j, i);
		}
}

/* ------------------------------------------------------------ one step */

/* SH rows from local row `first` (interior columns, every plane) into buf, or back. */
static void pack_rows(const slab_t *s, const stencil_problem_t *p, const double *f, int first,
		      double *buf)
{
	stencil_copy_box(f + first * s->sj + SH, s->sj, s->sk, buf, p->nx, (ptrdiff_t)SH * p->nx,
			 p->nx, SH, p->nz, sizeof(double));
}

static void unpack_rows(const slab_t *s, const stencil_problem_t *p, const double *buf, double *f,
			int first)
{
	stencil_copy_box(buf, p->nx, (ptrdiff_t)SH * p->nx, f + first * s->sj + SH, s->sj, s->sk,
			 p->nx, SH, p->nz, sizeof(double));
}

/* The periodic halo of f: the j-edges from the neighbours' slabs (tag 0 travels down, tag 1 up;
 * with 1 or 2 ranks a neighbour is this rank or both neighbours are one), then the i-edges over
 * every row, corners included, in place (as sp_halo_host). */
static void halo(slab_t *s, const stencil_problem_t *p, double *f)
{
	MPI_Request req[4];
	const int n = (int)s->halo_elems;
	MPI_Irecv(s->buf[2], n, MPI_DOUBLE, s->down, 1, MPI_COMM_WORLD, &req[0]);
	MPI_Irecv(s->buf[3], n, MPI_DOUBLE, s->up, 0, MPI_COMM_WORLD, &req[1]);
	pack_rows(s, p, f, SH, s->buf[0]);
	pack_rows(s, p, f, s->nj, s->buf[1]);
	MPI_Isend(s->buf[0], n, MPI_DOUBLE, s->down, 0, MPI_COMM_WORLD, &req[2]);
	MPI_Isend(s->buf[1], n, MPI_DOUBLE, s->up, 1, MPI_COMM_WORLD, &req[3]);
	MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
	unpack_rows(s, p, s->buf[2], f, 0);
	unpack_rows(s, p, s->buf[3], f, s->nj + SH);
	for (int k = 0; k < p->nz; k++)
		for (int j = 0; j < s->nj + 2 * SH; j++) {
			double *row = f + k * s->sk + j * s->sj;
			stencil_copy_row(row, row + p->nx, SH * sizeof(double));
			stencil_copy_row(row + p->nx + SH, row + SH, SH * sizeof(double));
		}
}

static void diffuse(slab_t *s, const stencil_problem_t *p, const double *in, double *out)
{
	const ptrdiff_t first = SH * s->sj + SH;
	stencil_fused_f64(in + first, s->sj, s->sk, out + first, s->sj, s->sk, p->nx, s->nj, p->nz,
			  STENCIL_ALPHA, s->ring, p->nt);
}

/* iter steps from the initial condition, the final field's halo updated (as apps/stencil's time
 * loop): the slowest rank's seconds, from a barrier. The result is in f[result]. */
static double run_steps(slab_t *s, const stencil_problem_t *p, int *result)
{
	int cur = 0;
	memset(s->f[1], 0, (size_t)s->sk * (size_t)p->nz * sizeof(double));
	slab_initial(s, p);
	MPI_Barrier(MPI_COMM_WORLD);
	const double t0 = MPI_Wtime();
	for (int n = 0; n < p->iter; n++) {
		halo(s, p, s->f[cur]);
		diffuse(s, p, s->f[cur], s->f[1 - cur]);
		cur = 1 - cur;
	}
	halo(s, p, s->f[cur]);
	double mine = MPI_Wtime() - t0, slowest;
	MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	*result = cur;
	return slowest;
}

/* ------------------------------------------------------------ --verify */

/* The slabs' interior rows (whole width), rank by rank, into `all` on rank 0. */
static void gather_rows(slab_t *s, const stencil_problem_t *p, const double *f, double *all)
{
	const int row = (int)s->sj, mine = s->nj * row * p->nz;
	double *send = malloc((size_t)mine * sizeof *send);
	int *counts = malloc((size_t)s->nranks * sizeof *counts);
	int *displs = malloc((size_t)s->nranks * sizeof *displs);
	if (!send || !counts || !displs) {
		/* the other ranks wait in MPI_Gatherv: end the job rather than leave them there */
		fprintf(stderr, "mpi-stencil: rank %d: out of memory for --verify\n", s->rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	stencil_copy_box(f + SH * s->sj, s->sj, s->sk, send, row, (ptrdiff_t)s->nj * row, row,
			 s->nj, p->nz, sizeof(double));
	for (int r = 0; r < s->nranks; r++) {
		int j0, nj;
		sp_tile_range(p->ny, s->nranks, r, &j0, &nj);
		counts[r] = nj * row * p->nz;
		displs[r] = j0 * row * p->nz;
	}
	MPI_Gatherv(send, mine, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	free(send), free(counts), free(displs);
}

/* Rank 0: the gathered slabs (rank by rank, each plane by plane) into the whole field. */
static void place_rows(const slab_t *s, const stencil_problem_t *p, const double *all,
		       double *field)
{
	const ptrdiff_t row = sp_sj(p);
	for (int r = 0; r < s->nranks; r++) {
		int j0, nj;
		sp_tile_range(p->ny, s->nranks, r, &j0, &nj);
		const double *src = all + (ptrdiff_t)j0 * row * p->nz;
		stencil_copy_box(src, row, (ptrdiff_t)nj * row, field + (j0 + SH) * row, row,
				 sp_sk(p), (int)row, nj, p->nz, sizeof(double));
	}
	sp_halo_host(p, field, sp_sj(p), sp_sk(p), 0, p->nz);
}

/* The slabs gathered into a whole field on rank 0, its j-edges filled from them (sp_halo_host),
 * and compared bit for bit with apps/stencil's sequential reference. 1 when it passes (on every
 * rank: rank 0 says). */
static int verify(slab_t *s, const stencil_problem_t *p, const double *f)
{
	const size_t n = sp_points(p);
	double *all = s->rank == 0 ? malloc((size_t)p->ny * s->sj * p->nz * sizeof(double)) : NULL;
	double *field = s->rank == 0 ? calloc(n, sizeof(double)) : NULL;
	double *ref = s->rank == 0 ? malloc(n * sizeof(double)) : NULL;
	if (s->rank == 0 && (!all || !field || !ref)) {
		fprintf(stderr, "mpi-stencil: out of memory for --verify\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	gather_rows(s, p, f, all);
	int ok = 1;
	if (s->rank == 0) {
		double err = 0;
		size_t where = 0;
		place_rows(s, p, all, field);
		ok = sp_reference(p, ref) == 0 && sp_compare(p, field, ref, &err, &where);
		printf("verify: %s (largest difference %g at element %zu)\n",
		       ok ? "PASS, bit-identical to the sequential reference" : "FAIL", err, where);
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	free(all), free(field), free(ref);
	return ok;
}

/* ------------------------------------------------------------ main */

static int run(slab_t *s, const opts_t *o)
{
	const stencil_problem_t *p = &o->p;
	double *t = calloc((size_t)o->reps, sizeof *t);
	if (!t || slab_alloc(s, p)) {
		fprintf(stderr, "mpi-stencil: rank %d: out of memory for a slab of %d rows\n",
			s->rank, s->nj);
		free(t);
		return 1;
	}
	int result = 0;
	for (int r = 0; r < o->reps; r++)
		t[r] = run_steps(s, p, &result) / p->iter;
	const double med = app_median(t, o->reps);
	if (s->rank == 0) {
		printf("mpi-stencil: %d x %d x %d f64, %d steps, %d rank%s, %d%s rows each%s\n",
		       p->nx, p->ny, p->nz, p->iter, s->nranks, s->nranks > 1 ? "s" : "",
		       p->ny / s->nranks, p->ny % s->nranks ? " or 1 more" : "",
		       p->nt ? ", streaming stores" : "");
		printf("time/iter: %.4f ms (median of %d; best %.4f), %.2f GB/s\n", 1e3 * med,
		       o->reps, 1e3 * t[0], sp_step_bytes(p) / med * 1e-9);
	}
	free(t);
	if (o->verify && !verify(s, p, s->f[result]))
		return EXIT_VERIFY;
	return 0;
}

int main(int argc, char **argv)
{
	opts_t o;
	slab_t s;
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	memset(&s, 0, sizeof s);
	int prc = parse(argc, argv, &o);
	int status = prc < 0 ? EXIT_USAGE : 0;
	if (prc > 0 && rank == 0)
		usage();
	if (prc == 0 && slab_place(&s, &o.p))
		status = EXIT_USAGE;
	else if (prc == 0)
		status = run(&s, &o);
	slab_free(&s);
	MPI_Finalize();
	return status;
}
