/* mpi_floor.c: the engine's floor under issue 27's fake-rank bar: raw StarPU-MPI (no Tessera), two
 * ranks each playing a middle rank of the weak-scaled stencil, timing what its host thread spends.
 *
 * Each rank owns T x T tiles of S x S doubles (default 2 x 2 of 64 x 64, as fake_ranks.c) of two
 * fields, one StarPU handle per tile, and per iteration submits one task per tile (a 5-point
 * Jacobi step: it reads its tile, its neighbour tiles and the received strips of field a, writes
 * its tile of field b and its part of the strips the rank sends), then K starpu_mpi_isend_detached
 * of the strips it wrote and K starpu_mpi_irecv_detached of the strips its next step reads: sends
 * before receives, as Tessera posts them (runtime/dist.c). Strips are their own handles (a side:
 * T*S elements, one message per neighbour as Tessera joins them; a corner: 1) and StarPU's
 * implicit dependences order everything. The other rank stands for all K neighbours (a distinct
 * tag per neighbour slot and iteration). K = 0 is the N = 1 case, K = 4 a cross-shaped halo, K = 8
 * the middle rank of fake_ranks.c; a fourth case submits K = 8's tasks without their transfers, to
 * split a transfer's cost into its call and the buffers it adds to the tasks. Printed: the
 * submitting thread's CPU time per iteration (CLOCK_THREAD_CPUTIME_ID around the submission loop;
 * then everything is waited for), the median of R repetitions with the four cases interleaved,
 * their ratios to K = 0, and the CPU of one task submission, one isend and one irecv alone. At the
 * end every received strip must hold, bit for bit, what the other rank last sent from it. Run as
 * mpirun -np 2 mpi-floor. */
#include "config.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <starpu.h>
#include <starpu_mpi.h>

#include "app_util.h"

/* ------------------------------------------------------------ the rank's layout */

/* Neighbour slots: the four sides, then the four corners. */
enum { N, S, E, W, NE, NW, SE, SW, NSLOTS };
static const int opposite[NSLOTS] = {S, N, W, E, SW, SE, NW, NE};

/* The cases: the halo the tiles' tasks read and write (0: none, 4: the sides, 8: sides and
 * corners), the transfers each way per iteration, and the strips they use (1: a spare set that
 * nothing moves, so that (d) leaves the moved strips as (c) left them). */
struct case_desc {
	int halo;
	int moves;
	int spare;
	const char *label;
};
enum { NCASES = 4 };
static const struct case_desc cases[NCASES] = {
	{0, 0, 0, "(a) the tiles' tasks, no transfer (N = 1)"},
	{4, 4, 0, "(b) + 4 sends + 4 receives (a cross)"},
	{8, 8, 0, "(c) + 8 sends + 8 receives (a middle rank)"},
	{8, 0, 1, "(d) (c)'s tasks alone, no send or receive"},
};

/* A tile's side (its edge's points), read from a neighbour tile, a received strip, or nothing
 * (the rank's outer boundary when K = 0: zero). */
enum { FROM_NONE, FROM_TILE, FROM_STRIP };

enum { MAX_TILE = 1024, MAX_TILES = 8 };
/* out, in, 4 sides in, 4 corners in, 4 sides out, 4 corners out (one tile per rank) */
enum { MAX_BUFS = 18 };

struct edge {
	int from;   /* FROM_* (in) or whether it is written (out) */
	int buf;    /* the task's buffer */
	int offset; /* the first element of this tile's part of a strip */
};

/* What a tile's task finds where: its codelet argument, the same for both fields. */
struct tile_args {
	int side;
	struct edge in[4];
	struct edge out[4];
	int corner_out[4]; /* buffer of the corner strip the tile writes (NE..SW), or -1 */
};

/* One tile's task in one case: its buffers when it reads field a (h[a]) and writes 1 - a. */
struct tile_plan {
	int nbuf;
	starpu_data_handle_t h[2][MAX_BUFS];
	enum starpu_data_access_mode mode[MAX_BUFS];
	struct tile_args args;
};

struct opts {
	int tiles, side, iters, reps, calls, ncpu;
	int pause; /* the workers paused while the host thread submits */
};

/* The strips of the halo, per field and neighbour slot. */
struct strips {
	double *send_mem[2][NSLOTS];
	double *recv_mem[2][NSLOTS];
	starpu_data_handle_t send[2][NSLOTS];
	starpu_data_handle_t recv[2][NSLOTS];
};

/* The rank's data: two fields of tiles, and per field the strips it sends and receives. */
struct floor_state {
	struct opts o;
	int rank, peer;
	MPI_Comm comm;
	double *tile_mem[2];
	starpu_data_handle_t tile[2][MAX_TILES * MAX_TILES];
	struct strips strips[2]; /* the moved ones, the spare ones */
	starpu_data_handle_t probe;
	double probe_val;
	struct tile_plan *plan[NCASES];
	long step;            /* iterations so far: the parity of the field read */
	starpu_mpi_tag_t tag; /* the next free tag; both ranks advance it alike */
	long posted;          /* transfers posted so far */
};

/* Transfers completed so far (StarPU-MPI's thread counts them). */
static atomic_long transfers_done;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int strip_len(const struct opts *o, int slot)
{
	return slot < NE ? o->tiles * o->side : 1;
}

/* ------------------------------------------------------------ the kernel */

/* Element k of tile side `side` (N: the top row, y = S-1; E: the right column, x = S-1). */
static int edge_index(int side, int k, int s)
{
	switch (side) {
	case N:
		return (s - 1) * s + k;
	case S:
		return k;
	case E:
		return k * s + s - 1;
	default:
		return k * s;
	}
}

/* Element k of the neighbour's values beyond side `side` of the tile. */
static double beyond(void *buffers[], const struct edge *e, int side, int k, int s)
{
	if (e->from == FROM_NONE)
		return 0.0;
	const double *v = (const double *)STARPU_VECTOR_GET_PTR(buffers[e->buf]);
	if (e->from == FROM_STRIP)
		return v[e->offset + k];
	return v[edge_index(opposite[side], k, s)];
}

/* The tile's halo lines: halo[side][k], k along the side. */
static void gather_halo(void *buffers[], const struct tile_args *a, double halo[4][MAX_TILE])
{
	for (int side = 0; side < 4; side++)
		for (int k = 0; k < a->side; k++)
			halo[side][k] = beyond(buffers, &a->in[side], side, k, a->side);
}

static void jacobi(const double *in, double *out, double halo[4][MAX_TILE], int s)
{
	for (int y = 0; y < s; y++) {
		for (int x = 0; x < s; x++) {
			double up = y + 1 < s ? in[(y + 1) * s + x] : halo[N][x];
			double down = y > 0 ? in[(y - 1) * s + x] : halo[S][x];
			double right = x + 1 < s ? in[y * s + x + 1] : halo[E][y];
			double left = x > 0 ? in[y * s + x - 1] : halo[W][y];
			out[y * s + x] = 0.25 * (up + down + right + left);
		}
	}
}

/* The tile's new edges into its parts of the strips the rank sends. */
static void scatter_edges(void *buffers[], const struct tile_args *a, const double *out)
{
	static const int corner_side[4][2] = {{N, E}, {N, W}, {S, E}, {S, W}};
	int s = a->side;
	for (int side = 0; side < 4; side++) {
		if (!a->out[side].from)
			continue;
		double *strip = (double *)STARPU_VECTOR_GET_PTR(buffers[a->out[side].buf]);
		for (int k = 0; k < s; k++)
			strip[a->out[side].offset + k] = out[edge_index(side, k, s)];
	}
	for (int c = 0; c < 4; c++) {
		if (a->corner_out[c] < 0)
			continue;
		double *strip = (double *)STARPU_VECTOR_GET_PTR(buffers[a->corner_out[c]]);
		int k = corner_side[c][1] == E ? s - 1 : 0;
		strip[0] = out[edge_index(corner_side[c][0], k, s)];
	}
}

/* Buffer 0: the tile written, 1: the tile read; the rest as the plan says. The corners a tile
 * reads are in its halo (the stencil's halo partition has them) but a 5-point step leaves them. */
static void tile_cpu(void *buffers[], void *cl_arg)
{
	const struct tile_args *a = cl_arg;
	double *out = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
	const double *in = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
	double halo[4][MAX_TILE];
	gather_halo(buffers, a, halo);
	jacobi(in, out, halo, a->side);
	scatter_edges(buffers, a, out);
}

static struct starpu_codelet tile_cl = {
	.cpu_funcs = {tile_cpu},
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.name = "mpi_floor_tile",
};

static void empty_cpu(void *buffers[], void *cl_arg)
{
	(void)buffers;
	(void)cl_arg;
}

/* The per-call probe: the cheapest task, one buffer read. */
static struct starpu_codelet empty_cl = {
	.cpu_funcs = {empty_cpu},
	.nbuffers = 1,
	.modes = {STARPU_R},
	.name = "mpi_floor_empty",
};

/* ------------------------------------------------------------ plans */

static void plan_add(struct tile_plan *p, starpu_data_handle_t h0, starpu_data_handle_t h1,
		     enum starpu_data_access_mode mode)
{
	p->h[0][p->nbuf] = h0;
	p->h[1][p->nbuf] = h1;
	p->mode[p->nbuf] = mode;
	p->nbuf++;
}

/* The tile's side `side` when the rank has k transfers: a neighbour tile, a strip, or nothing. */
static void plan_side_in(const struct floor_state *st, const struct strips *x, struct tile_plan *p,
			 int i, int j, int side, int k)
{
	static const int dx[4] = {0, 0, 1, -1};
	static const int dy[4] = {1, -1, 0, 0};
	int t = st->o.tiles;
	int ni = i + dx[side];
	int nj = j + dy[side];
	struct edge *e = &p->args.in[side];
	if (ni >= 0 && ni < t && nj >= 0 && nj < t) {
		*e = (struct edge){FROM_TILE, p->nbuf, 0};
		plan_add(p, st->tile[0][nj * t + ni], st->tile[1][nj * t + ni], STARPU_R);
	} else if (k >= 4) {
		int along = side == N || side == S ? i : j;
		*e = (struct edge){FROM_STRIP, p->nbuf, along * st->o.side};
		plan_add(p, x->recv[0][side], x->recv[1][side], STARPU_R);
	} else {
		*e = (struct edge){FROM_NONE, -1, 0};
	}
}

/* A tile on the rank's outer side writes its part of that side's strip (of the field it writes:
 * h[a] lists field 1 - a's strip). Several tiles share a strip: read-write, each its part. */
static void plan_side_out(const struct floor_state *st, const struct strips *x, struct tile_plan *p,
			  int i, int j, int side)
{
	int t = st->o.tiles;
	int outer = (side == N && j == t - 1) || (side == S && j == 0) ||
		    (side == E && i == t - 1) || (side == W && i == 0);
	if (!outer) {
		p->args.out[side] = (struct edge){0, -1, 0};
		return;
	}
	int along = side == N || side == S ? i : j;
	p->args.out[side] = (struct edge){1, p->nbuf, along * st->o.side};
	plan_add(p, x->send[1][side], x->send[0][side], STARPU_RW);
}

static int at_corner(int c, int i, int j, int t)
{
	/* NE, NW, SE, SW */
	static const int north[4] = {1, 1, 0, 0};
	static const int east[4] = {1, 0, 1, 0};
	int row_ok = north[c] ? j == t - 1 : j == 0;
	int col_ok = east[c] ? i == t - 1 : i == 0;
	return row_ok && col_ok;
}

/* K = 8: the tile in a rank corner reads that corner's received point and writes its own. */
static void plan_corners(const struct floor_state *st, const struct strips *x, struct tile_plan *p,
			 int i, int j)
{
	for (int c = 0; c < 4; c++) {
		p->args.corner_out[c] = -1;
		if (!at_corner(c, i, j, st->o.tiles))
			continue;
		plan_add(p, x->recv[0][NE + c], x->recv[1][NE + c], STARPU_R);
		p->args.corner_out[c] = p->nbuf;
		plan_add(p, x->send[1][NE + c], x->send[0][NE + c], STARPU_W);
	}
}

/* Tile (i, j)'s task in case c: k is the halo it reads and writes. */
static void plan_tile(const struct floor_state *st, struct tile_plan *p, int i, int j, int c)
{
	int t = st->o.tiles;
	int k = cases[c].halo;
	const struct strips *x = &st->strips[cases[c].spare];
	memset(p, 0, sizeof *p);
	p->args.side = st->o.side;
	plan_add(p, st->tile[1][j * t + i], st->tile[0][j * t + i], STARPU_W);
	plan_add(p, st->tile[0][j * t + i], st->tile[1][j * t + i], STARPU_R);
	for (int side = 0; side < 4; side++)
		plan_side_in(st, x, p, i, j, side, k);
	for (int side = 0; side < 4; side++) {
		if (k >= 4)
			plan_side_out(st, x, p, i, j, side);
		else
			p->args.out[side] = (struct edge){0, -1, 0};
	}
	for (int c = 0; c < 4; c++)
		p->args.corner_out[c] = -1;
	if (k >= 8)
		plan_corners(st, x, p, i, j);
}

static int make_plans(struct floor_state *st)
{
	int t = st->o.tiles;
	for (int c = 0; c < NCASES; c++) {
		st->plan[c] = calloc((size_t)t * t, sizeof *st->plan[c]);
		if (!st->plan[c])
			return -1;
		for (int j = 0; j < t; j++)
			for (int i = 0; i < t; i++)
				plan_tile(st, &st->plan[c][j * t + i], i, j, c);
	}
	return 0;
}

/* ------------------------------------------------------------ data */

static double *register_vector(starpu_data_handle_t *h, int n, double fill)
{
	double *v = malloc((size_t)n * sizeof *v);
	if (!v)
		return NULL;
	for (int k = 0; k < n; k++)
		v[k] = fill;
	starpu_vector_data_register(h, STARPU_MAIN_RAM, (uintptr_t)v, (uint32_t)n, sizeof *v);
	return v;
}

static int register_strips(const struct opts *o, struct strips *x)
{
	for (int f = 0; f < 2; f++) {
		for (int d = 0; d < NSLOTS; d++) {
			x->send_mem[f][d] = register_vector(&x->send[f][d], strip_len(o, d), -1.0);
			x->recv_mem[f][d] = register_vector(&x->recv[f][d], strip_len(o, d), 0.0);
			if (!x->send_mem[f][d] || !x->recv_mem[f][d])
				return -1;
		}
	}
	return 0;
}

static void unregister_strips(struct strips *x)
{
	for (int f = 0; f < 2; f++) {
		for (int d = 0; d < NSLOTS; d++) {
			starpu_data_unregister(x->send[f][d]);
			starpu_data_unregister(x->recv[f][d]);
			free(x->send_mem[f][d]);
			free(x->recv_mem[f][d]);
		}
	}
}

/* Tiles: positive values that differ from rank to rank and point to point; sent strips start at
 * -1 (never a Jacobi value of these: the check sees that the tasks wrote them), received at 0. */
static int register_data(struct floor_state *st)
{
	int t = st->o.tiles, s = st->o.side;
	size_t area = (size_t)s * s;
	for (int f = 0; f < 2; f++) {
		st->tile_mem[f] = malloc((size_t)t * t * area * sizeof(double));
		if (!st->tile_mem[f])
			return -1;
		for (size_t k = 0; k < (size_t)t * t * area; k++)
			st->tile_mem[f][k] = 1.0 + st->rank + (double)(k % 97) / 97.0;
		for (int n = 0; n < t * t; n++)
			starpu_vector_data_register(&st->tile[f][n], STARPU_MAIN_RAM,
						    (uintptr_t)&st->tile_mem[f][n * area],
						    (uint32_t)area, sizeof(double));
	}
	for (int set = 0; set < 2; set++)
		if (register_strips(&st->o, &st->strips[set]))
			return -1;
	starpu_vector_data_register(&st->probe, STARPU_MAIN_RAM, (uintptr_t)&st->probe_val, 1,
				    sizeof(double));
	return 0;
}

static void unregister_data(struct floor_state *st)
{
	int t = st->o.tiles;
	for (int f = 0; f < 2; f++) {
		for (int n = 0; n < t * t; n++)
			starpu_data_unregister(st->tile[f][n]);
		free(st->tile_mem[f]);
	}
	for (int set = 0; set < 2; set++)
		unregister_strips(&st->strips[set]);
	starpu_data_unregister(st->probe);
	for (int c = 0; c < NCASES; c++)
		free(st->plan[c]);
}

/* ------------------------------------------------------------ submission */

/* One failed StarPU call ends the run on both ranks: its figures would mean nothing. */
static void check_rc(const char *what, int rc)
{
	if (!rc)
		return;
	fprintf(stderr, "mpi-floor: %s failed (%d)\n", what, rc);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static void submit_tile(const struct tile_plan *p, int a)
{
	struct starpu_task *task = starpu_task_create();
	task->cl = &tile_cl;
	task->cl_arg = (void *)&p->args;
	task->nbuffers = p->nbuf;
	if (p->nbuf > STARPU_NMAXBUFS) {
		/* StarPU frees these with the task */
		task->dyn_handles = malloc((size_t)p->nbuf * sizeof(starpu_data_handle_t));
		task->dyn_modes = malloc((size_t)p->nbuf * sizeof(enum starpu_data_access_mode));
		if (!task->dyn_handles || !task->dyn_modes)
			check_rc("malloc", -1);
	}
	for (int b = 0; b < p->nbuf; b++) {
		STARPU_TASK_SET_HANDLE(task, p->h[a][b], b);
		STARPU_TASK_SET_MODE(task, p->mode[b], b);
	}
	check_rc("starpu_task_submit", starpu_task_submit(task));
}

/* A transfer's completion, on StarPU-MPI's thread: counted, so that wait_all knows when this
 * rank's transfers are done. */
static void transfer_done(void *arg)
{
	(void)arg;
	atomic_fetch_add(&transfers_done, 1);
}

static void post_send(struct floor_state *st, starpu_data_handle_t h, starpu_mpi_tag_t tag)
{
	st->posted++;
	check_rc("starpu_mpi_isend_detached",
		 starpu_mpi_isend_detached(h, st->peer, tag, st->comm, transfer_done, NULL));
}

static void post_recv(struct floor_state *st, starpu_data_handle_t h, starpu_mpi_tag_t tag)
{
	st->posted++;
	check_rc("starpu_mpi_irecv_detached",
		 starpu_mpi_irecv_detached(h, st->peer, tag, st->comm, transfer_done, NULL));
}

/* One iteration with k transfers each way: the tiles' tasks, then k sends of the strips they
 * wrote, then k receives of the strips the next iteration reads. Slot d's strip goes to the
 * neighbour's slot opposite[d], under the tag of d. */
static void iterate(struct floor_state *st, int c)
{
	int k = cases[c].moves;
	const struct strips *x = &st->strips[0];
	int a = (int)(st->step & 1);
	int b = 1 - a;
	int ntiles = st->o.tiles * st->o.tiles;
	for (int n = 0; n < ntiles; n++)
		submit_tile(&st->plan[c][n], a);
	for (int d = 0; d < k; d++)
		post_send(st, x->send[b][d], st->tag + d);
	for (int e = 0; e < k; e++)
		post_recv(st, x->recv[b][e], st->tag + opposite[e]);
	st->tag += NSLOTS;
	st->step++;
}

/* wait_all's hang guard, seconds */
enum { HANG_S = 300 };

/* Everything submitted is done: the tasks, then this rank's transfers (their callbacks, on
 * StarPU-MPI's thread), then the other rank's (a barrier on the host thread). Not
 * starpu_mpi_wait_for_all, whose barrier runs on StarPU-MPI's thread: with it a run of 8 x 8 tiles
 * hung once, one rank's MPI thread in MPI_Barrier, the other's still polling for its transfers. A
 * transfer that never completes ends the run after five minutes, said. */
static void wait_all(struct floor_state *st)
{
	static const struct timespec nap = {0, 20000};
	check_rc("starpu_task_wait_for_all", starpu_task_wait_for_all());
	double t0 = app_now();
	while (atomic_load(&transfers_done) < st->posted) {
		if (app_now() - t0 > HANG_S) {
			fprintf(stderr,
				"mpi-floor: rank %d: %ld of %ld transfers done after %d s\n",
				st->rank, (long)atomic_load(&transfers_done), st->posted, HANG_S);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		nanosleep(&nap, NULL);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* --pause: no task runs and no dependence is released while the host thread submits, so it
 * meets no other thread in StarPU's locks and runs no callback of a released acquire. */
static void pause_workers(const struct floor_state *st)
{
	if (st->o.pause)
		starpu_pause();
}

static void resume_workers(const struct floor_state *st)
{
	if (st->o.pause)
		starpu_resume();
}

/* Mean of the two ranks' values: both submit the same. */
static double rank_mean(double mine)
{
	double all = 0;
	MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return all / 2;
}

/* Case c for the given iterations: the submitting thread's CPU, us per iteration; *wall: the
 * wall time until everything is done, us per iteration (the tasks' and messages' latency). */
static double run_case(struct floor_state *st, int c, int iters, double *wall)
{
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = app_now();
	pause_workers(st);
	double c0 = thread_cpu();
	for (int it = 0; it < iters; it++)
		iterate(st, c);
	double cpu = thread_cpu() - c0;
	resume_workers(st);
	wait_all(st);
	*wall = rank_mean((app_now() - t0) * 1e6 / iters);
	return rank_mean(cpu * 1e6 / iters);
}

/* ------------------------------------------------------------ one call alone */

enum { CALL_TASK, CALL_ISEND, CALL_IRECV, NCALLS };

static void submit_empty(starpu_data_handle_t h)
{
	struct starpu_task *task = starpu_task_create();
	task->cl = &empty_cl;
	task->handles[0] = h;
	check_rc("starpu_task_submit", starpu_task_submit(task));
}

/* n empty tasks reading one handle, then n sends of the field-0 strips (slots in turn), then n
 * receives into the opposite strips: us per call, each loop timed alone. */
static void run_calls(struct floor_state *st, int n, double us[NCALLS])
{
	MPI_Barrier(MPI_COMM_WORLD);
	pause_workers(st);
	const struct strips *x = &st->strips[0];
	double c0 = thread_cpu();
	for (int m = 0; m < n; m++)
		submit_empty(st->probe);
	double c1 = thread_cpu();
	for (int m = 0; m < n; m++)
		post_send(st, x->send[0][m % NSLOTS], st->tag + m);
	double c2 = thread_cpu();
	for (int m = 0; m < n; m++)
		post_recv(st, x->recv[0][opposite[m % NSLOTS]], st->tag + m);
	double c3 = thread_cpu();
	resume_workers(st);
	st->tag += n;
	wait_all(st);
	us[CALL_TASK] = rank_mean((c1 - c0) * 1e6 / n);
	us[CALL_ISEND] = rank_mean((c2 - c1) * 1e6 / n);
	us[CALL_IRECV] = rank_mean((c3 - c2) * 1e6 / n);
}

/* ------------------------------------------------------------ the check */

/* Strip h's values, read through StarPU (the tasks and transfers are done). */
static void read_strip(starpu_data_handle_t h, const double *mem, double *out, int n)
{
	check_rc("starpu_data_acquire", starpu_data_acquire(h, STARPU_R));
	memcpy(out, mem, (size_t)n * sizeof *out);
	starpu_data_release(h);
}

/* Mismatches of slot d of field f: the peer's sent strip against this rank's received one. */
static int check_slot(struct floor_state *st, int f, int d, double *mine, double *theirs)
{
	int n = strip_len(&st->o, d);
	int bad = 0;
	const struct strips *x = &st->strips[0];
	read_strip(x->send[f][d], x->send_mem[f][d], mine, n);
	MPI_Sendrecv_replace(mine, n, MPI_DOUBLE, st->peer, d, st->peer, d, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
	read_strip(x->recv[f][opposite[d]], x->recv_mem[f][opposite[d]], theirs, n);
	for (int k = 0; k < n; k++)
		if (memcmp(&mine[k], &theirs[k], sizeof(double)) || !(theirs[k] >= 0.0))
			bad++;
	return bad;
}

/* Every strip received holds, bit for bit, what the other rank last sent from the opposite slot,
 * and that was written by a task (not the -1 it started as). 0 when both ranks pass. */
static int check_moved(struct floor_state *st)
{
	int n = strip_len(&st->o, N);
	double *mine = malloc((size_t)n * sizeof *mine);
	double *theirs = malloc((size_t)n * sizeof *theirs);
	if (!mine || !theirs)
		check_rc("malloc", -1);
	int bad = 0;
	for (int f = 0; f < 2; f++)
		for (int d = 0; d < NSLOTS; d++)
			bad += check_slot(st, f, d, mine, theirs);
	free(mine);
	free(theirs);
	int all = 0;
	MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (st->rank == 0 && all)
		printf("check: FAIL: %d received values differ from what the other rank sent\n",
		       all);
	if (st->rank == 0 && !all)
		printf("check: PASS: the 2 x %d strips each rank received hold the other rank's "
		       "last sent values, bit for bit\n",
		       NSLOTS);
	return all != 0;
}

/* ------------------------------------------------------------ driver */

static void usage(void)
{
	printf("usage: mpirun -np 2 mpi-floor [--tiles T] [--tile S] [--iters I] [--reps R]\n"
	       "                 [--calls M] [--ncpu W] [--pause 0|1]\n"
	       "Raw StarPU-MPI (no Tessera): each rank plays a middle rank of the weak-scaled\n"
	       "stencil (T x T tiles of S x S, default 2 x 2 of 64 x 64) and per iteration\n"
	       "submits one Jacobi task per tile and K isend_detached + K irecv_detached of the\n"
	       "halo strips to the other rank: (a) K = 0, (b) 4, (c) 8, and (d) the tasks of (c)\n"
	       "without their transfers, interleaved. Prints the submitting thread's CPU time per\n"
	       "iteration (median of R repetitions of I iterations, default 5 of 300; mean of the\n"
	       "2 ranks), its ratio to (a), and the CPU of one task, one isend and one irecv alone\n"
	       "(M calls each, default 2000). W CPU workers per rank (default 1); --pause 1: the\n"
	       "workers paused while the host thread submits. Exit status 1 when a received strip\n"
	       "does not hold what the other rank sent.\n");
}

static int parse_one(const char *opt, const char *val, struct opts *o)
{
	if (!strcmp(opt, "--tiles"))
		return app_parse_int(opt, val, 1, MAX_TILES, &o->tiles);
	if (!strcmp(opt, "--tile"))
		return app_parse_int(opt, val, 3, MAX_TILE, &o->side);
	if (!strcmp(opt, "--iters"))
		return app_parse_int(opt, val, 2, 1000000, &o->iters);
	if (!strcmp(opt, "--reps"))
		return app_parse_int(opt, val, 1, 1000, &o->reps);
	if (!strcmp(opt, "--calls"))
		return app_parse_int(opt, val, 1, 1000000, &o->calls);
	if (!strcmp(opt, "--pause"))
		return app_parse_int(opt, val, 0, 1, &o->pause);
	if (!strcmp(opt, "--ncpu"))
		return app_parse_int(opt, val, 1, 64, &o->ncpu);
	fprintf(stderr, "mpi-floor: unknown option '%s' (--help lists them)\n", opt);
	return -1;
}

/* 0: run, 1: help printed, -1: a mistake (said). */
static int parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.tiles = 2,
			   .side = 64,
			   .iters = 300,
			   .reps = 5,
			   .calls = 2000,
			   .ncpu = 1};
	for (int a = 1; a < argc; a += 2) {
		if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
			usage();
			return 1;
		}
		if (parse_one(argv[a], a + 1 < argc ? argv[a + 1] : NULL, o))
			return -1;
	}
	return 0;
}

/* StarPU binds every rank's first worker to core 0 and its MPI thread to the next core, so two
 * ranks on one node take turns on the same cores and a message waits for a time slice (8 ms a hop
 * here; runtime/place.c). Unless the user placed them: rank r's workers on cores r*W..., its MPI
 * thread on its first worker's core. */
static void place_rank(const struct floor_state *st)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int first = (int)((long)st->rank * st->o.ncpu % (cores > 0 ? cores : 1));
	char list[512] = "";
	size_t used = 0;
	for (int w = 0; w < st->o.ncpu && used < sizeof list - 16; w++) {
		long core = (first + w) % (cores > 0 ? cores : 1);
		used += (size_t)snprintf(list + used, sizeof list - used, "%s%ld", w ? " " : "",
					 core);
	}
	char mpi_core[16];
	snprintf(mpi_core, sizeof mpi_core, "%d", first);
	setenv("STARPU_WORKERS_CPUID", list, 0);
	setenv("STARPU_MPI_THREAD_CPUID", mpi_core, 0);
}

static int start(struct floor_state *st, int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided < MPI_THREAD_MULTIPLE) {
		fprintf(stderr,
			"mpi-floor: MPI gives thread level %d; StarPU-MPI's thread and this "
			"one both call MPI (MPI_THREAD_MULTIPLE needed)\n",
			provided);
		return 1;
	}
	int nranks;
	MPI_Comm_rank(MPI_COMM_WORLD, &st->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (nranks != 2) {
		if (st->rank == 0)
			fprintf(stderr, "mpi-floor: run it on 2 ranks (mpirun -np 2), not %d\n",
				nranks);
		return 2;
	}
	st->peer = 1 - st->rank;
	place_rank(st);
	MPI_Comm_dup(MPI_COMM_WORLD, &st->comm);
	struct starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncpus = st->o.ncpu;
	conf.ncuda = 0;
	conf.nopencl = 0;
	int rc = starpu_mpi_init_conf(NULL, NULL, 0, st->comm, &conf);
	if (rc) {
		fprintf(stderr, "mpi-floor: starpu_mpi_init_conf failed (%d)\n", rc);
		return 1;
	}
	return 0;
}

/* R repetitions; in each the three cases, in an order that turns with the repetition. */
static void measure(struct floor_state *st, double *iter_us[NCASES], double *wall_us[NCASES],
		    double *call_us[NCALLS])
{
	for (int r = 0; r < st->o.reps; r++) {
		for (int n = 0; n < NCASES; n++) {
			int c = (n + r) % NCASES;
			iter_us[c][r] = run_case(st, c, st->o.iters, &wall_us[c][r]);
		}
		double us[NCALLS];
		run_calls(st, st->o.calls, us);
		for (int k = 0; k < NCALLS; k++)
			call_us[k][r] = us[k];
	}
}

static void print_results(const struct floor_state *st, double *iter_us[NCASES],
			  double *wall_us[NCASES], double *call_us[NCALLS])
{
	int reps = st->o.reps;
	double med[NCASES], wall[NCASES], call[NCALLS];
	for (int c = 0; c < NCASES; c++)
		med[c] = app_median(iter_us[c], reps);
	for (int c = 0; c < NCASES; c++)
		wall[c] = app_median(wall_us[c], reps);
	for (int k = 0; k < NCALLS; k++)
		call[k] = app_median(call_us[k], reps);
	printf("# mpi-floor: raw StarPU-MPI, 2 ranks, %d CPU worker(s) each; %d x %d tiles of %d x "
	       "%d per rank; submitting thread's CPU per iteration, median of %d x %d iterations, "
	       "mean of the 2 ranks\n",
	       st->o.ncpu, st->o.tiles, st->o.tiles, st->o.side, st->o.side, reps, st->o.iters);
	printf("%-44s %4s %5s %9s %7s %12s\n", "case", "halo", "moves", "us/iter", "ratio",
	       "wall us/iter");
	for (int c = 0; c < NCASES; c++)
		printf("%-44s %4d %5d %9.2f %7.2f %12.1f\n", cases[c].label, cases[c].halo,
		       cases[c].moves, med[c], med[c] / med[0], wall[c]);
	printf("per call alone (us, submission only, median of %d x %d): task (1 buffer) %.3f, "
	       "isend %.3f, irecv %.3f\n",
	       reps, st->o.calls, call[CALL_TASK], call[CALL_ISEND], call[CALL_IRECV]);
	printf("per transfer in the stencil (us): ((b) - (a)) / 8 = %.3f, ((c) - (a)) / 16 = %.3f, "
	       "of which its call ((c) - (d)) / 16 = %.3f and the buffers it adds to the tasks "
	       "((d) - (a)) / 16 = %.3f\n",
	       (med[1] - med[0]) / 8, (med[2] - med[0]) / 16, (med[2] - med[3]) / 16,
	       (med[3] - med[0]) / 16);
	printf("bar: (c) at 1.5 x (a) leaves %.3f us per transfer\n", 0.5 * med[0] / 16);
	fflush(stdout);
}

static int run(struct floor_state *st)
{
	if (register_data(st) || make_plans(st))
		check_rc("out of memory", -1);
	/* warm-up: StarPU's and MPI's allocators, the early-data paths, the task pool */
	int warm = st->o.iters / 10 > 0 ? st->o.iters / 10 : 1;
	double ignored;
	for (int c = 0; c < NCASES; c++)
		run_case(st, c, warm, &ignored);
	double *iter_us[NCASES], *wall_us[NCASES], *call_us[NCALLS];
	for (int c = 0; c < NCASES; c++)
		iter_us[c] = calloc((size_t)st->o.reps, sizeof(double));
	for (int c = 0; c < NCASES; c++)
		wall_us[c] = calloc((size_t)st->o.reps, sizeof(double));
	for (int k = 0; k < NCALLS; k++)
		call_us[k] = calloc((size_t)st->o.reps, sizeof(double));
	for (int c = 0; c < NCASES; c++)
		if (!iter_us[c] || !wall_us[c])
			check_rc("out of memory", -1);
	for (int k = 0; k < NCALLS; k++)
		if (!call_us[k])
			check_rc("out of memory", -1);
	measure(st, iter_us, wall_us, call_us);
	if (st->rank == 0)
		print_results(st, iter_us, wall_us, call_us);
	int bad = check_moved(st);
	for (int c = 0; c < NCASES; c++)
		free(iter_us[c]);
	for (int c = 0; c < NCASES; c++)
		free(wall_us[c]);
	for (int k = 0; k < NCALLS; k++)
		free(call_us[k]);
	unregister_data(st);
	return bad;
}

int main(int argc, char **argv)
{
	static struct floor_state st;
	int prc = parse(argc, argv, &st.o);
	if (prc)
		return prc > 0 ? 0 : 2;
	int rc = start(&st, argc, argv);
	if (rc) {
		MPI_Finalize();
		return rc;
	}
	int bad = run(&st);
	starpu_mpi_shutdown();
	MPI_Comm_free(&st.comm);
	MPI_Finalize();
	return bad ? 1 : 0;
}
