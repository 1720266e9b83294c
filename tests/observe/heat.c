/* heat.c: the 2-D heat program of issue 29, whose task graph (TSR_DAG) and timeline (TSR_TIMELINE)
 * the observation tests read: a 32x32 grid in 4x4 tiles, each step a Jacobi sweep reading u
 * through a halo partition and writing v through the tiles, then u and v swap roles; the last
 * launch sums the grid into a future. Public API only; checked against plain C.
 * usage: heat STEPS [--exit] (the runtime is set by the environment: TSR_DAG, TSR_TIMELINE, ...);
 * --exit ends the program with exit(0) after the result, without tsr_finalize, as a program that
 * forgets it would: the trace and graph must be written all the same. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tessera.h>

enum { N = 32, T = 4 };

static void check(int rc, const char *what)
{
	if (rc == TSR_OK)
		return;
	fprintf(stderr, "heat: %s: %s: %s\n", what, tsr_err_name(rc), tsr_last_error());
	exit(1);
}

/* The initial value of point (i, j): a hot square in a cold plate. */
static double initial(int64_t i, int64_t j)
{
	return i >= N / 4 && i < N / 2 && j >= N / 4 && j < N / 2 ? 100.0 : 0.0;
}

static void init_task(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t u;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_WRITE_DISCARD, &u))
		return;
	for (int64_t i = u.lo[0]; i <= u.hi[0]; i++)
		for (int64_t j = u.lo[1]; j <= u.hi[1]; j++)
			TSR_AT2(&u, double, i, j) = initial(i, j);
}

/* One point of a sweep: the average of the four neighbours (the plate's edge stays as it was). */
static double sweep_at(double (*get)(const void *, int64_t, int64_t), const void *src, int64_t i,
		       int64_t j)
{
	if (i == 0 || j == 0 || i == N - 1 || j == N - 1)
		return get(src, i, j);
	return 0.25 *
	       (get(src, i - 1, j) + get(src, i + 1, j) + get(src, i, j - 1) + get(src, i, j + 1));
}

static double get_acc(const void *a, int64_t i, int64_t j)
{
	return TSR_AT2((const tsr_accessor_t *)a, double, i, j);
}

static void step_task(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t in, out;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &in) ||
	    tsr_ctx_field(ctx, 1, 0, TSR_F64, TSR_WRITE_DISCARD, &out))
		return;
	for (int64_t i = out.lo[0]; i <= out.hi[0]; i++)
		for (int64_t j = out.lo[1]; j <= out.hi[1]; j++)
			TSR_AT2(&out, double, i, j) = sweep_at(get_acc, &in, i, j);
}

static void sum_task(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t u;
	if (tsr_ctx_field(ctx, 0, 0, TSR_F64, TSR_READ, &u))
		return;
	double s = 0;
	for (int64_t i = u.lo[0]; i <= u.hi[0]; i++)
		for (int64_t j = u.lo[1]; j <= u.hi[1]; j++)
			s += TSR_AT2(&u, double, i, j);
	tsr_ctx_return(ctx, &s);
}

static double get_plain(const void *a, int64_t i, int64_t j)
{
	return ((const double *)a)[i * N + j];
}

/* The same steps in plain C: the sum of the final grid. */
static double reference(int steps)
{
	static double a[N * N], b[N * N];
	double *cur = a, *next = b;
	for (int64_t i = 0; i < N; i++)
		for (int64_t j = 0; j < N; j++)
			cur[i * N + j] = initial(i, j);
	for (int s = 0; s < steps; s++) {
		for (int64_t i = 0; i < N; i++)
			for (int64_t j = 0; j < N; j++)
				next[i * N + j] = sweep_at(get_plain, cur, i, j);
		double *t = cur;
		cur = next;
		next = t;
	}
	double sum = 0;
	for (int64_t i = 0; i < N; i++)
		for (int64_t j = 0; j < N; j++)
			sum += cur[i * N + j];
	return sum;
}

static tsr_task_t reg(const char *name, tsr_variant_fn fn, tsr_type_t ret)
{
	tsr_task_t t;
	check(tsr_task_register(&(tsr_task_desc_t){.name = name, .cpu = fn, .ret_type = ret}, &t),
	      name);
	return t;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : -1;
	int forget = argc == 3 && !strcmp(argv[2], "--exit");
	if (argc < 2 || argc > 2 + forget || steps < 0) {
		fprintf(stderr, "usage: heat STEPS [--exit]\n");
		return 2;
	}
	check(tsr_init(NULL), "tsr_init");

	tsr_fspace_t fs;
	tsr_field_t x;
	check(tsr_fspace_create(&fs), "tsr_fspace_create");
	check(tsr_fspace_add(fs, "x", TSR_F64, 0, &x), "tsr_fspace_add");
	tsr_box_t grid = tsr_box2(0, N - 1, 0, N - 1), colors = tsr_box2(0, T - 1, 0, T - 1);
	tsr_region_t r[2];
	tsr_partition_t tiles[2], halo[2];
	for (int k = 0; k < 2; k++) {
		check(tsr_region_create(k ? "v" : "u", grid, fs, &r[k]), "tsr_region_create");
		check(tsr_partition_tiles(r[k], colors, "tiles", &tiles[k]), "tsr_partition_tiles");
		check(tsr_partition_tiles_halo(r[k], grid, colors, (int64_t[3]){1, 1, 0}, "halo",
					       &halo[k]),
		      "tsr_partition_tiles_halo");
	}

	tsr_task_t init = reg("init", init_task, TSR_NONE), step = reg("step", step_task, TSR_NONE);
	tsr_task_t sum = reg("sum", sum_task, TSR_F64);
	check(tsr_run(init,
		      &(tsr_launch_t){.domain = colors,
				      .reqs = TSR_REQS(tsr_req_part(tiles[0], TSR_WRITE_DISCARD,
								    TSR_FIELDS(x)))}),
	      "init");
	for (int s = 0; s < steps; s++) {
		int in = s % 2, out = 1 - in;
		check(tsr_run(step,
			      &(tsr_launch_t){.domain = colors,
					      .reqs = TSR_REQS(tsr_req_part(halo[in], TSR_READ,
									    TSR_FIELDS(x)),
							       tsr_req_part(tiles[out],
									    TSR_WRITE_DISCARD,
									    TSR_FIELDS(x)))}),
		      "step");
	}

	tsr_future_t total;
	check(tsr_run(sum, &(tsr_launch_t){.domain = colors,
					   .reqs = TSR_REQS(tsr_req_part(tiles[steps % 2], TSR_READ,
									 TSR_FIELDS(x))),
					   .redop = TSR_SUM,
					   .result = &total}),
	      "sum");
	double got;
	check(tsr_future_take(total, &got, sizeof got), "tsr_future_take");
	double want = reference(steps);
	if (fabs(got - want) > 1e-9 * fabs(want)) {
		fprintf(stderr, "heat: sum %.17g, plain C gives %.17g\n", got, want);
		return 1;
	}
	if (forget) {
		printf("heat: OK, %d steps, sum %.6f, exiting without tsr_finalize\n", steps, got);
		exit(0);
	}

	check(tsr_region_destroy(r[0]), "tsr_region_destroy");
	check(tsr_region_destroy(r[1]), "tsr_region_destroy");
	check(tsr_fspace_destroy(fs), "tsr_fspace_destroy");
	check(tsr_finalize(), "tsr_finalize");
	printf("heat: OK, %d steps, sum %.6f\n", steps, got);
	return 0;
}
