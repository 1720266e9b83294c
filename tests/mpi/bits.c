/* bits: the final state of a small program as one hash, to show that 1, 2 and 4 ranks give the
 * same bits (tests/mpi/mpi.sh compares the lines of every rank and every rank count).
 * Public API only. Three patterns, each with the float rounding that makes an order visible:
 *  - stencil-like: a 2-D field updated through halo tiles (READ) into tiles (WRITE), 2 fields
 *    swapped each step, so every step moves ghost cells between the owners of the tiles;
 *  - circuit-like: every point REDUCEs (SUM, f64) fractional charges through an aliased partition
 *    (halo boxes that overlap), so shared elements get contributions from points on other ranks;
 *  - cg-like: an index launch returns a fractional partial dot product per point, folded by SUM
 *    into a future that the next step's tasks read (and the host waits for).
 * One partition's colors are given to the ranks in reverse (tsr_partition_set_rank), so that the
 * reading points and the writing points live on different ranks. Halfway, the tiles' colors move
 * one rank on: the dot's gathering must then place its values by the new ranks (fold_ranks.c keeps
 * where they lie per partition, and must not use what the old ranks said). Prints
 *   bits rank R of N: HASH
 * where HASH (FNV-1a, 64 bits) covers every element of every field and every future's value. */
#include <inttypes.h>
#define RANK_PROG "bits"
#include "rank_prog.h"

/* what --help prints */
static const char usage[] = "usage: bits    (under mpirun -np N, or alone)\n"
			    "Runs a halo loop, an aliased REDUCE and a future SUM; prints\n"
			    "'bits rank R of N: HASH' of the final state.\n";

#define NX 24
#define NY 18
#define STEPS 6

/* u -> v over a tile: a 5-point average plus a little of the point's color, so that rounding
 * differs from element to element. Reads u through the halo tile (req 0), writes v (req 1). */
static void stencil(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t u, v;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &u) ||
	    tsr_ctx_field(ctx, 1, 0, TSR_F64, TSR_WRITE_DISCARD, &v))
		return;
	int64_t pt[3];
	tsr_ctx_point(ctx, pt);
	for (int64_t y = v.lo[1]; y <= v.hi[1]; y++)
		for (int64_t x = v.lo[0]; x <= v.hi[0]; x++) {
			double s = TSR_AT2(&u, double, x, y);
			int n = 1;
			const int64_t dx[4] = {-1, 1, 0, 0}, dy[4] = {0, 0, -1, 1};
			for (int k = 0; k < 4; k++) {
				int64_t xx = x + dx[k], yy = y + dy[k];
				if (xx >= u.lo[0] && xx <= u.hi[0] && yy >= u.lo[1] &&
				    yy <= u.hi[1]) {
					s += TSR_AT2(&u, double, xx, yy);
					n++;
				}
			}
			TSR_AT2(&v, double, x, y) =
				s / n + 1e-3 * (double)(pt[0] + 3 * pt[1]) / 7.0;
		}
}

/* Every element of the point's halo box gets a fractional charge of mixed scale: folds round,
 * so only a fold in color order gives the same bits everywhere. Reads v (req 0, tiles). */
static void charge(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t v, q;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &v) ||
	    tsr_ctx_field(ctx, 1, 0, TSR_F64, TSR_REDUCE(TSR_SUM), &q))
		return;
	double mean = 0.0;
	for (int64_t y = v.lo[1]; y <= v.hi[1]; y++)
		for (int64_t x = v.lo[0]; x <= v.hi[0]; x++)
			mean += TSR_AT2(&v, double, x, y);
	mean /= (double)((v.hi[0] - v.lo[0] + 1) * (v.hi[1] - v.lo[1] + 1));
	int64_t pt[3];
	tsr_ctx_point(ctx, pt);
	const double scale[3] = {0.1, 0x1p-30, 1e-9};
	for (int64_t y = q.lo[1]; y <= q.hi[1]; y++)
		for (int64_t x = q.lo[0]; x <= q.hi[0]; x++)
			TSR_AT2(&q, double, x, y) +=
				mean * scale[(x + y + pt[0]) % 3] + 0x1p20 * (double)(pt[1] & 1);
}

/* A partial dot product of v with q over the tile, scaled by the previous step's dot (a future,
 * req 2), returned for a SUM over the points. */
static void dot(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t v, q;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &v) ||
	    tsr_ctx_field(ctx, 1, 0, TSR_F64, TSR_READ, &q))
		return;
	const double *prev = tsr_ctx_future(ctx, 2);
	if (!prev)
		return;
	double s = 0.0;
	for (int64_t y = v.lo[1]; y <= v.hi[1]; y++)
		for (int64_t x = v.lo[0]; x <= v.hi[0]; x++)
			s += TSR_AT2(&v, double, x, y) * TSR_AT2(&q, double, x, y) * 1e-7;
	s += *prev * 0.3;
	tsr_ctx_return(ctx, &s);
}

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *b = data;
	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Every tile's color to the rank after its own. */
static void move_tiles(tsr_partition_t tiles, int ncolors)
{
	for (int c = 0; c < ncolors; c++) {
		int64_t color[3] = {c % 4, c / 4, 0};
		int rank = (c * tsr_nranks() / ncolors + 1) % tsr_nranks();
		check(tsr_partition_set_rank(tiles, color, rank), "tsr_partition_set_rank tiles");
	}
}

/* The hash of a field's every element, read on this rank (tsr_region_read gathers it here). */
static uint64_t hash_field(uint64_t h, tsr_region_t r, tsr_field_t f, const char *what)
{
	static double buf[NX * NY];
	check(tsr_region_read(r, f, buf, sizeof buf), what);
	return fnv(h, buf, sizeof buf);
}

int main(int argc, char **argv)
{
	if (help_or_init(argc, argv, usage))
		return 0;
	tsr_fspace_t fs;
	tsr_field_t u, v, q;
	check(tsr_fspace_create(&fs), "tsr_fspace_create");
	check(tsr_fspace_add(fs, "u", TSR_F64, 0, &u), "tsr_fspace_add u");
	check(tsr_fspace_add(fs, "v", TSR_F64, 0, &v), "tsr_fspace_add v");
	check(tsr_fspace_add(fs, "q", TSR_F64, 0, &q), "tsr_fspace_add q");
	tsr_region_t grid;
	check(tsr_region_create("grid", tsr_box2(0, NX - 1, 0, NY - 1), fs, &grid),
	      "tsr_region_create");
	check(tsr_fspace_destroy(fs), "tsr_fspace_destroy");

	tsr_box_t colors = tsr_box2(0, 3, 0, 2);
	const int64_t halo[3] = {1, 1, 0};
	tsr_partition_t tiles, halos;
	check(tsr_partition_tiles(grid, colors, "tiles", &tiles), "tsr_partition_tiles");
	check(tsr_partition_tiles_halo(grid, tsr_box2(0, NX - 1, 0, NY - 1), colors, halo, "halos",
				       &halos),
	      "tsr_partition_tiles_halo");
	/* the halo tiles' points run on the ranks in reverse order of the default blocks */
	int ncolors = 12;
	for (int c = 0; c < ncolors; c++) {
		int64_t color[3] = {c % 4, c / 4, 0};
		int rank = (ncolors - 1 - c) * tsr_nranks() / ncolors;
		check(tsr_partition_set_rank(halos, color, rank), "tsr_partition_set_rank");
	}

	tsr_task_t t_stencil, t_charge, t_dot;
	check(tsr_task_register(&(tsr_task_desc_t){.name = "stencil", .cpu = stencil}, &t_stencil),
	      "register stencil");
	check(tsr_task_register(&(tsr_task_desc_t){.name = "charge", .cpu = charge}, &t_charge),
	      "register charge");
	check(tsr_task_register(&(tsr_task_desc_t){.name = "dot", .cpu = dot, .ret_type = TSR_F64},
				&t_dot),
	      "register dot");

	/* initial state: u from the host (every rank writes the same values), q from a fill */
	static double init[NX * NY];
	for (int i = 0; i < NX * NY; i++)
		init[i] = (double)((i * 7919) % 101) / 13.0;
	check(tsr_region_write(grid, u, init, sizeof init), "tsr_region_write");
	double zero = 0.0;
	check(tsr_fill(grid, q, &zero, sizeof zero), "tsr_fill");
	double one = 1.0;
	tsr_future_t prev;
	check(tsr_future_create(TSR_F64, 0, &one, &prev), "tsr_future_create");

	uint64_t h = 0xcbf29ce484222325ull;
	tsr_field_t from = u, to = v;
	for (int step = 0; step < STEPS; step++) {
		if (step == STEPS / 2)
			move_tiles(tiles, ncolors);
		check(tsr_run(t_stencil,
			      &(tsr_launch_t){.domain = colors,
					      .reqs = TSR_REQS(tsr_req_part(halos, TSR_READ,
									    TSR_FIELDS(from)),
							       tsr_req_part(tiles,
									    TSR_WRITE_DISCARD,
									    TSR_FIELDS(to)))}),
		      "launch stencil");
		check(tsr_run(t_charge,
			      &(tsr_launch_t){.domain = colors,
					      .reqs = TSR_REQS(tsr_req_part(tiles, TSR_READ,
									    TSR_FIELDS(to)),
							       tsr_req_part(halos,
									    TSR_REDUCE(TSR_SUM),
									    TSR_FIELDS(q)))}),
		      "launch charge");
		tsr_future_t d;
		check(tsr_run(t_dot, &(tsr_launch_t){.domain = colors,
						     .reqs = TSR_REQS(tsr_req_part(tiles, TSR_READ,
										   TSR_FIELDS(to)),
								      tsr_req_part(tiles, TSR_READ,
										   TSR_FIELDS(q)),
								      tsr_req_future(prev)),
						     .redop = TSR_SUM,
						     .result = &d}),
		      "launch dot");
		check(tsr_future_destroy(prev), "tsr_future_destroy");
		prev = d;
		double value;
		check(tsr_future_wait(d, &value, sizeof value), "tsr_future_wait");
		h = fnv(h, &value, sizeof value);
		tsr_field_t t = from;
		from = to;
		to = t;
	}
	check(tsr_future_destroy(prev), "tsr_future_destroy");
	h = hash_field(h, grid, u, "tsr_region_read u");
	h = hash_field(h, grid, v, "tsr_region_read v");
	h = hash_field(h, grid, q, "tsr_region_read q");
	printf("bits rank %d of %d: %016" PRIx64 "\n", tsr_rank(), tsr_nranks(), h);
	check(tsr_partition_destroy(halos), "tsr_partition_destroy halos");
	check(tsr_partition_destroy(tiles), "tsr_partition_destroy tiles");
	check(tsr_region_destroy(grid), "tsr_region_destroy");
	check(tsr_finalize(), "tsr_finalize");
	return 0;
}
