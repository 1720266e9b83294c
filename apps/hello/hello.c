/* hello: a 1-D region in two tiles, a task per tile writes it, one task reads all and returns a future. */
#include <stdio.h>
#include <string.h>
#include <tessera.h>

static void square(tsr_ctx_t *ctx, const void *args, size_t arglen)   /* WRITE a tile: x[i] = i*i */
{
	tsr_accessor_t x;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_WRITE, &x) == TSR_OK)
		for (int64_t i = x.lo[0]; i <= x.hi[0]; i++) TSR_AT1(&x, double, i) = (double)(i * i);
}
static void sum(tsr_ctx_t *ctx, const void *args, size_t arglen)      /* READ all, return the sum */
{
	tsr_accessor_t x;
	double s = 0;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_READ, &x) == TSR_OK)
		for (int64_t i = x.lo[0]; i <= x.hi[0]; i++) s += TSR_AT1(&x, double, i);
	tsr_ctx_return(ctx, &s);
}
#define TRY(call) do { if ((rc = (call)) != TSR_OK) goto fail; } while (0)
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--help"))
		return puts("usage: hello\nPrints the sum of i*i over 0..9: two tasks write the two tiles, one reads."), 0;
	tsr_fspace_t fs; tsr_field_t x; tsr_region_t r; tsr_partition_t halves; tsr_task_t tsq, tsum; tsr_future_t f;
	double total; int rc;
	TRY(tsr_init(NULL)); TRY(tsr_fspace_create(&fs)); TRY(tsr_fspace_add(fs, "x", TSR_F64, 0, &x));
	TRY(tsr_region_create("line", tsr_box1(0, 9), fs, &r)); TRY(tsr_partition_tiles(r, tsr_box1(0, 1), "halves", &halves));
	TRY(tsr_task_register(&(tsr_task_desc_t){.name = "square", .cpu = square}, &tsq));
	TRY(tsr_task_register(&(tsr_task_desc_t){.name = "sum", .cpu = sum, .ret_type = TSR_F64}, &tsum));
	tsr_req_t w = tsr_req_part(halves, TSR_WRITE, TSR_FIELDS(x)), rd = tsr_req_region(r, TSR_READ, TSR_FIELDS(x));
	TRY(tsr_index_launch(tsq, tsr_box1(0, 1), 1, &w, NULL, 0, TSR_REDOP_NONE, NULL));
	TRY(tsr_launch(tsum, 1, &rd, NULL, 0, &f)); TRY(tsr_future_wait(f, &total, sizeof total));
	printf("sum of i*i for i in 0..9 = %g\n", total);
	TRY(tsr_future_destroy(f)); TRY(tsr_region_destroy(r)); TRY(tsr_fspace_destroy(fs)); TRY(tsr_finalize());
	return 0;
fail:
	return fprintf(stderr, "hello: %s: %s\n", tsr_err_name(rc), tsr_last_error()), 1;
}
