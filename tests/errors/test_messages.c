/* test_messages.c: every error names the object the user named. The task of a NULL output or a
 * NULL context, the field of an interference, the operator of a failed registration, the real
 * operator of a REDUCE privilege; names holding printf directives are printed verbatim; the
 * unknown-policy message lists every policy; an unwritable trace or graph path fails tsr_init;
 * a bogus reduction operator is refused even with no result asked. Each refused call leaves the
 * data intact and creates nothing. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "config.h" /* TSR_STARPU_NOTIFY_FIXED */
#include "tsr_test.h"

START_TEST(task_register_null_output_names_the_task)
{
	CK_TSR_ERR(tsr_task_register(&(tsr_task_desc_t){.name = "orphan",
							.cpu = tsr_test_overwrite},
				     NULL),
		   TSR_EINVAL, "orphan", "output");
	char longname[100];
	memset(longname, 'z', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	tsr_task_t t = {0};
	CK_TSR_ERR(tsr_task_register(&(tsr_task_desc_t){.name = longname,
							.cpu = tsr_test_overwrite},
				     &t),
		   TSR_EINVAL, longname);
	ck_assert_int_eq(t.id, 0);
}
END_TEST

START_TEST(interference_names_the_field)
{
	tsr_region_t r = tsr_test_witness("strip", 8);
	tsr_task_t t = tsr_test_task("twice", tsr_test_overwrite, TSR_NONE);
	/* one launch writing one field of one region twice */
	tsr_req_t q2[2] = {tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0)),
			   tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(0))};
	CK_TSR_ERR(tsr_launch(t, 2, q2, NULL, 0, NULL), TSR_EINTERFERE, "twice", "strip",
		   "field 'x'");
	/* a write through an aliased partition */
	tsr_partition_t g, tiles;
	CK_TSR(tsr_partition_tiles_halo(r, tsr_box1(0, 7), tsr_box1(0, 1),
					(const int64_t[3]){1, 0, 0}, "ghost", &g));
	CK_TSR(tsr_partition_tiles(r, tsr_box1(0, 1), "tiles", &tiles));
	tsr_req_t q = tsr_req_part(g, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EINTERFERE, "twice", "ghost", "field 'x'");
	/* every point writing the whole region */
	q = tsr_req_region(r, TSR_WRITE, TSR_FIELDS(0));
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EINTERFERE, "twice", "strip", "field 'x'");
	tsr_req_t qs[2] = {tsr_req_part(tiles, TSR_WRITE, TSR_FIELDS(0)),
			   tsr_req_part(g, TSR_READ, TSR_FIELDS(0))};
	/* a point writes tile c, which the other point reads through its ghost: the points
	 * interfere */
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 1), 2, qs, NULL, 0, TSR_REDOP_NONE, NULL),
		   TSR_EINTERFERE, "twice", "tiles", "ghost", "field 'x'");
	CK_TSR(tsr_partition_destroy(g));
	CK_TSR(tsr_partition_destroy(tiles));
	tsr_test_fence_ck_witness(r, 8);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static void id_max(void *e)
{
	*(int64_t *)e = INT64_MIN;
}

static void fold_max(void *acc, const void *val)
{
	int64_t v = *(const int64_t *)val;
	if (v > *(int64_t *)acc)
		*(int64_t *)acc = v;
}

START_TEST(redop_register_failures_name_the_operator)
{
	tsr_redop_t op = TSR_REDOP_NONE;
	CK_TSR_ERR(tsr_redop_register("biggest", TSR_I64, 0, id_max, NULL, &op), TSR_EINVAL,
		   "biggest", "fold");
	CK_TSR_ERR(tsr_redop_register("biggest", TSR_I64, 0, NULL, fold_max, &op), TSR_EINVAL,
		   "biggest", "identity");
	CK_TSR_ERR(tsr_redop_register("biggest", TSR_I64, 0, id_max, fold_max, NULL), TSR_EINVAL,
		   "biggest", "output");
	CK_TSR_ERR(tsr_redop_register("blobby", TSR_BYTES, 0, id_max, fold_max, &op), TSR_EINVAL,
		   "blobby");
	CK_TSR_ERR(tsr_redop_register("nothing", TSR_NONE, 0, id_max, fold_max, &op), TSR_EINVAL,
		   "nothing");
	char longname[100];
	memset(longname, 'q', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	CK_TSR_ERR(tsr_redop_register(longname, TSR_I64, 0, id_max, fold_max, &op), TSR_EINVAL,
		   longname);
	ck_assert_int_eq(op.id, TSR_REDOP_NONE.id);
	/* one name, one operator: a second registration would make messages ambiguous */
	CK_TSR(tsr_redop_register("biggest", TSR_I64, 0, id_max, fold_max, &op));
	tsr_redop_t again = TSR_REDOP_NONE;
	CK_TSR_ERR(tsr_redop_register("biggest", TSR_I64, 0, id_max, fold_max, &again), TSR_EINVAL,
		   "biggest", "already");
	ck_assert_int_eq(again.id, TSR_REDOP_NONE.id);
}
END_TEST

/* read_only: asks READ of a field its launch requested with a REDUCE privilege. */
static void read_only(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	tsr_ctx_accessor(ctx, 0, 0, TSR_NONE, TSR_READ, &a);
}

START_TEST(reduce_privileges_print_their_operator)
{
	tsr_field_t f;
	tsr_region_t r = tsr_test_region("counts", tsr_box1(0, 3), 1, (const tsr_type_t[]){TSR_I64},
					 (const char *const[]){"hits"}, &f);
	tsr_redop_t big;
	CK_TSR(tsr_redop_register("biggest", TSR_I64, 0, id_max, fold_max, &big));
	tsr_task_t t = tsr_test_task("peek", read_only, TSR_NONE);
	/* inside the task: the requested privilege is printed with its operator */
	tsr_req_t q = tsr_req_region(r, TSR_REDUCE(TSR_MAX), TSR_FIELDS(f));
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "peek", "hits", "counts", "REDUCE(max)");
	q = tsr_req_region(r, TSR_REDUCE(big), TSR_FIELDS(f));
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "peek", "hits", "counts", "REDUCE(biggest)");
	/* two operators in one message: each keeps its own name */
	tsr_req_t two[2] = {tsr_req_region(r, TSR_REDUCE(TSR_MIN), TSR_FIELDS(f)),
			    tsr_req_region(r, TSR_REDUCE(big), TSR_FIELDS(f))};
	CK_TSR_ERR(tsr_launch(t, 2, two, NULL, 0, NULL), TSR_EINTERFERE, "peek", "REDUCE(min)",
		   "REDUCE(biggest)", "hits");
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* null_ctx: passes NULL where its context belongs. */
static void null_ctx(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	tsr_ctx_accessor(NULL, 0, 0, TSR_F64, TSR_WRITE, &a);
}

START_TEST(null_context_inside_a_task_names_the_task)
{
	tsr_region_t r = tsr_test_witness("strip", 8);
	tsr_task_t t = tsr_test_task("careless", null_ctx, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_READ, TSR_FIELDS(0));
	CK_TSR(tsr_launch(t, 1, &q, NULL, 0, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "careless", "tsr_ctx_accessor", "null context");
	/* an index launch names the point too */
	tsr_partition_t tiles = tsr_test_tiles(r, tsr_box1(0, 1), "tiles");
	q = tsr_req_part(tiles, TSR_READ, TSR_FIELDS(0));
	CK_TSR(tsr_index_launch(t, tsr_box1(1, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, "careless", "point (1)", "null context");
	/* on the host it is a plain error that does not fail the next fence */
	tsr_accessor_t a;
	CK_TSR_ERR(tsr_ctx_accessor(NULL, 0, 0, TSR_F64, TSR_READ, &a), TSR_EINVAL,
		   "tsr_ctx_accessor", "null context");
	CK_TSR(tsr_partition_destroy(tiles));
	tsr_test_fence_ck_witness(r, 8);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

/* Names full of printf directives come back verbatim (a name reaching a format string would
 * print garbage or, with %n, write through a stray pointer). */
#define EVIL_TASK "t%n%s%d%p"
#define EVIL_REGION "r%n%s%x"
#define EVIL_FIELD "f%n%s%%"
#define EVIL_PART "p%n%s%ld"

/* bad_type: accesses field 0 as i32 (it is f64), so its message names task, region and field. */
static void bad_type(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	tsr_ctx_accessor(ctx, 0, 0, TSR_I32, TSR_READ, &a);
}

START_TEST(names_with_format_directives_printed_verbatim)
{
	tsr_field_t f;
	tsr_fspace_t fs = tsr_test_fspace(1, (const tsr_type_t[]){TSR_F64},
					  (const char *const[]){EVIL_FIELD}, &f);
	tsr_region_t r;
	CK_TSR(tsr_region_create(EVIL_REGION, tsr_box1(0, 7), fs, &r));
	tsr_region_t none = {0};
	CK_TSR_ERR(tsr_region_create(EVIL_REGION, tsr_box1(1, 0), fs, &none), TSR_EBOUNDS,
		   EVIL_REGION);
	CK_TSR(tsr_fspace_destroy(fs));
	double three = 3.0;
	CK_TSR(tsr_fill(r, f, &three, sizeof three));
	/* field and region: a fill of the wrong size */
	float small = 1.0f;
	CK_TSR_ERR(tsr_fill(r, f, &small, sizeof small), TSR_ETYPE, EVIL_FIELD, EVIL_REGION);
	/* partition and region: a color outside */
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 1), EVIL_PART);
	tsr_region_t s;
	CK_TSR_ERR(tsr_partition_subregion(p, (const int64_t[3]){5, 0, 0}, &s), TSR_EBOUNDS,
		   EVIL_PART, EVIL_REGION);
	/* task: a NULL output, a bad requirement, then an error from inside the variant */
	CK_TSR_ERR(tsr_task_register(&(tsr_task_desc_t){.name = EVIL_TASK, .cpu = bad_type}, NULL),
		   TSR_EINVAL, EVIL_TASK);
	tsr_task_t t = tsr_test_task(EVIL_TASK, bad_type, TSR_NONE);
	tsr_req_t q = tsr_req_region(r, TSR_READ, TSR_FIELDS(7));
	CK_TSR_ERR(tsr_launch(t, 1, &q, NULL, 0, NULL), TSR_ENOFIELD, EVIL_TASK, EVIL_REGION);
	q = tsr_req_part(p, TSR_READ, TSR_FIELDS(f));
	CK_TSR(tsr_index_launch(t, tsr_box1(0, 1), 1, &q, NULL, 0, TSR_REDOP_NONE, NULL));
	CK_TSR_ERR(tsr_fence(), TSR_ETASK, EVIL_TASK, EVIL_FIELD, EVIL_REGION "/" EVIL_PART);
	CK_TSR(tsr_partition_destroy(p));
	double v[8];
	tsr_test_read1(r, f, v, 8);
	for (int i = 0; i < 8; i++)
		ck_assert(v[i] == 3.0);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(bogus_reduction_operator_refused_without_result)
{
	tsr_region_t r = tsr_test_witness("strip", 8);
	tsr_partition_t tiles = tsr_test_tiles(r, tsr_box1(0, 1), "tiles");
	tsr_task_t t = tsr_test_task("sloppy", tsr_test_overwrite, TSR_NONE);
	tsr_req_t q = tsr_req_part(tiles, TSR_READ, TSR_FIELDS(0));
	/* TSR_REDUCE(TSR_MAX) where an operator belongs no longer compiles
	 * (tests/errors/operator_mix.sh); an id forced through TSR_REDOP_ID is still checked at run
	 * time */
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 1), 1, &q, NULL, 0,
				    TSR_REDOP_ID(TSR_REDUCE(TSR_MAX)), NULL),
		   TSR_EINVAL, "sloppy", "operator 1032", "privilege REDUCE(max)",
		   ".redop = TSR_MAX");
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 1), 1, &q, NULL, 0, TSR_REDOP_ID(-3), NULL),
		   TSR_EINVAL, "sloppy", "operator -3");
	CK_TSR_ERR(tsr_index_launch(t, tsr_box1(0, 1), 1, &q, NULL, 0,
				    TSR_REDOP_ID(TSR_REDOP_USER + 3), NULL),
		   TSR_EINVAL, "sloppy", "operator 19");
	CK_TSR(tsr_partition_destroy(tiles));
	tsr_test_fence_ck_witness(r, 8);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

START_TEST(unknown_policy_lists_every_policy)
{
	tsr_config_t cfg = tsr_test_config();
	cfg.sched = "fastest";
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "fastest", "tsr-locality", "tsr-critpath", "eager",
		   "dmda");
	CK_TSR_ERR(tsr_fence(), TSR_ESTATE, "tsr_fence"); /* nothing started */
}
END_TEST

START_TEST(unwritable_trace_or_graph_path_fails_init)
{
	tsr_config_t cfg = tsr_test_config();
	cfg.timeline_file = "/nonexistent-tessera-dir/trace.json";
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "/nonexistent-tessera-dir/trace.json",
		   "TSR_TIMELINE");
	CK_TSR_ERR(tsr_fence(), TSR_ESTATE, "tsr_fence");
	cfg.timeline_file = NULL;
	cfg.dag_file = "/nonexistent-tessera-dir/graph.dot";
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "/nonexistent-tessera-dir/graph.dot", "TSR_DAG");
	/* a directory is not a file */
	cfg.dag_file = "/tmp";
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "'/tmp'", "directory");
	/* the environment variable is checked the same way */
	cfg.dag_file = NULL;
	setenv("TSR_TIMELINE", "/nonexistent-tessera-dir/env.json", 1);
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "/nonexistent-tessera-dir/env.json");
	unsetenv("TSR_TIMELINE");
	/* so is the reduction order switch: a typo must not silently keep a mode */
	setenv("TSR_REDUX", "unorderd", 1);
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "TSR_REDUX", "'unorderd'");
	unsetenv("TSR_REDUX");
	/* and the coherence protocol switch */
	setenv("TSR_COHERENCE", "token", 1);
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "TSR_COHERENCE", "'token'");
	unsetenv("TSR_COHERENCE");
	/* and how far StarPU's polling threads yield to the host thread (nice levels 0..19), under
	 * the name and the older name (TSR_NICE wins) */
	setenv("TSR_NICE", "20", 1);
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "TSR_NICE", "'20'");
	setenv("TSR_NICE", "-1", 1);
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "TSR_NICE", "'-1'");
	unsetenv("TSR_NICE");
	setenv("TSR_MPI_NICE", "20", 1);
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "TSR_MPI_NICE", "'20'");
	setenv("TSR_MPI_NICE", "ten", 1);
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "TSR_MPI_NICE", "'ten'");
	setenv("TSR_NICE", "0", 1);
	CK_TSR(tsr_init(&cfg));
	CK_TSR(tsr_finalize());
	unsetenv("TSR_NICE");
	unsetenv("TSR_MPI_NICE");
	/* and who orders the views' tasks */
	setenv("TSR_DEPS", "explict", 1);
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "TSR_DEPS", "'explict'");
#ifndef TSR_STARPU_NOTIFY_FIXED
	/* explicit dependences race on a StarPU 1.4 without the notify fix: asked for, they are
	 * refused */
	setenv("TSR_DEPS", "explicit", 1);
	CK_TSR_ERR(tsr_init(&cfg), TSR_EINVAL, "TSR_DEPS=explicit", "notify fix");
#endif
	unsetenv("TSR_DEPS");
	/* and a writable path still works */
	char path[] = "/tmp/tsr-msg-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	cfg.timeline_file = path;
	CK_TSR(tsr_init(&cfg));
	CK_TSR(tsr_finalize());
	unlink(path);
}
END_TEST

/* Null pointers and wrong shapes are named: the region, its field, the partition. */
START_TEST(null_and_misplaced_arguments_name_the_object)
{
	tsr_region_t r = tsr_test_witness("pressure", 8);
	CK_TSR_ERR(tsr_fill(r, 0, NULL, sizeof(double)), TSR_EINVAL, "pressure", "x", "null value");
	CK_TSR_ERR(tsr_map(r, 0, TSR_READ, NULL), TSR_EINVAL, "pressure", "x", "null accessor");
	tsr_field_t f;
	tsr_fspace_t fs =
		tsr_test_fspace(1, (const tsr_type_t[]){TSR_F64}, (const char *const[]){"x"}, &f);
	CK_TSR_ERR(tsr_region_create("velocity", tsr_box1(0, 3), fs, NULL), TSR_EINVAL, "velocity",
		   "null output");
	CK_TSR(tsr_fspace_destroy(fs));
	tsr_partition_t p = {0};
	CK_TSR_ERR(tsr_partition_tiles_halo(r, tsr_box1(0, 7), tsr_box1(0, 1),
					    (int64_t[3]){-1, 0, 0}, "rim", &p),
		   TSR_EINVAL, "rim", "pressure", "negative halo");
	tsr_partition_t halves = tsr_test_tiles(r, tsr_box1(0, 1), "halves");
	tsr_req_t q = tsr_req_part(halves, TSR_READ, 1, &f);
	CK_TSR_ERR(tsr_launch(tsr_test_task("reader", tsr_test_overwrite, TSR_NONE), 1, &q, NULL, 0,
			      NULL),
		   TSR_EINVAL, "reader", "halves", "single launch");
	CK_TSR(tsr_partition_destroy(halves));
	tsr_test_fence_ck_witness(r, 8);
	CK_TSR(tsr_region_destroy(r));
}
END_TEST

static void fail_now(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_ctx_error(ctx, "the sensor is unplugged");
}

/* tsr_finalize with a failed task pending and a region still alive: the task's failure first
 * (TSR_ETASK, its message), then what was alive. */
START_TEST(finalize_reports_a_failed_task_before_what_was_alive)
{
	tsr_test_setup();
	tsr_region_t r = tsr_test_witness("leftover", 8);
	tsr_field_t f = 0;
	tsr_req_t q = tsr_req_region(r, TSR_READ_WRITE, 1, &f);
	CK_TSR(tsr_launch(tsr_test_task("probe", fail_now, TSR_NONE), 1, &q, NULL, 0, NULL));
	int rc = tsr_finalize();
	ck_assert_msg(rc == TSR_ETASK, "tsr_finalize returned %s (%s), expected TSR_ETASK",
		      tsr_err_name(rc), tsr_last_error());
	tsr_test_names(tsr_last_error(), "tsr_finalize",
		       (const char *[]){"probe", "the sensor is unplugged", "leftover",
					"still alive", NULL});
	ck_assert_msg(strstr(tsr_last_error(), "probe") < strstr(tsr_last_error(), "leftover"),
		      "the task's failure must come first: %s", tsr_last_error());
}
END_TEST

/* Tessera's codes and negative errno values (StarPU's returns, which Tessera's internal calls
 * pass along) never meet: TSR_ENODEV once equalled -ENOMEM, so the two could be confused
 * silently. */
START_TEST(error_codes_are_apart_from_errno)
{
	static const int codes[] = {TSR_EINVAL,     TSR_EBOUNDS, TSR_ETYPE,    TSR_EPRIV,
				    TSR_EINTERFERE, TSR_ESTALE,  TSR_ENOFIELD, TSR_ENOMEM,
				    TSR_ESTARPU,    TSR_ESTATE,  TSR_ELIVE,    TSR_ENODEV,
				    TSR_EBUSY,      TSR_ETASK,   TSR_EDIVERGE};
	for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
		/* below Linux's MAX_ERRNO, the largest errno */
		ck_assert_int_lt(codes[i], -4095);
		ck_assert_str_ne(tsr_err_name(codes[i]), "TSR_EUNKNOWN");
		ck_assert_str_ne(tsr_strerror(codes[i]), "unknown error code");
	}
	for (int e = 1; e <= 4095; e++)
		ck_assert_msg(!strcmp(tsr_err_name(-e), "TSR_EUNKNOWN"),
			      "-%d (an errno) is Tessera's %s", e, tsr_err_name(-e));
	ck_assert_str_eq(tsr_err_name(-ENOMEM), "TSR_EUNKNOWN");
	ck_assert_str_eq(tsr_err_name(-ENODEV), "TSR_EUNKNOWN");
	ck_assert_str_eq(tsr_err_name(TSR_OK), "TSR_OK");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors_messages");
	TCase *tc = tsr_test_tcase("messages", 1);
	tcase_add_test(tc, task_register_null_output_names_the_task);
	tcase_add_test(tc, interference_names_the_field);
	tcase_add_test(tc, redop_register_failures_name_the_operator);
	tcase_add_test(tc, reduce_privileges_print_their_operator);
	tcase_add_test(tc, null_context_inside_a_task_names_the_task);
	tcase_add_test(tc, names_with_format_directives_printed_verbatim);
	tcase_add_test(tc, bogus_reduction_operator_refused_without_result);
	tcase_add_test(tc, null_and_misplaced_arguments_name_the_object);
	suite_add_tcase(s, tc);
	TCase *init = tsr_test_tcase("init", 0);
	tcase_add_test(init, error_codes_are_apart_from_errno);
	tcase_add_test(init, unknown_policy_lists_every_policy);
	tcase_add_test(init, unwritable_trace_or_graph_path_fails_init);
	tcase_add_test(init, finalize_reports_a_failed_task_before_what_was_alive);
	suite_add_tcase(s, init);
	return tsr_test_run(s);
}
