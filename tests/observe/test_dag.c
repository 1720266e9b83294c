/* test_dag.c: TSR_DAG writes the dependency graph Tessera derived. On small programs whose graph
 * is worked out by hand, the .dot file must hold exactly the expected nodes and edges, each edge
 * labelled "<region>.<field> <earlier privilege>-><later privilege>". The rule (runtime/records.c):
 * an access depends on every earlier conflicting access to an overlapping box of the same field,
 * newest first, down to the first earlier write (WRITE or READ_WRITE) that covers its box; READ
 * after READ and REDUCE after REDUCE with the same operator do not conflict; a write hides the
 * older accesses it covers from later ones. The label names the later access's region. */
#include <math.h>
#include "observe.h"

/* ------------------------------------------------------------------ tasks */
/* set: WRITE x = args (double). */
static void set(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	if (tsr_ctx_accessor(ctx, 0, 0, TSR_F64, TSR_WRITE, &x))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) = *(const double *)args;
}

/* bump: READ_WRITE field args (a tsr_field_t) += 1. */
static void bump(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t x;
	if (tsr_ctx_accessor(ctx, 0, *(const tsr_field_t *)args, TSR_F64, TSR_READ_WRITE, &x))
		return;
	for (int64_t i = x.lo[0]; i <= x.hi[0]; i++)
		TSR_AT1(&x, double, i) += 1.0;
}

/* look: READ of fields a and b; returns the sum of both (checked by the host). */
static void look(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	double a, b;
	if (tsr_test_sum1(ctx, 0, 0, &a) != TSR_OK || tsr_test_sum1(ctx, 0, 1, &b) != TSR_OK)
		return;
	double s = a + b;
	tsr_ctx_return(ctx, &s);
}

/* fold: REDUCE b by the operator in args: every element gets 1 (SUM) or 100 (MAX) folded in. */
static void fold(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_redop_t op = *(const tsr_redop_t *)args;
	tsr_accessor_t b;
	if (tsr_ctx_accessor(ctx, 0, 1, TSR_F64, TSR_REDUCE(op), &b))
		return;
	for (int64_t i = b.lo[0]; i <= b.hi[0]; i++)
		TSR_AT1(&b, double, i) = op.id == TSR_SUM.id ? TSR_AT1(&b, double, i) + 1.0
							     : fmax(TSR_AT1(&b, double, i), 100.0);
}

/* -------------------------------------------------------------- the graph */
struct edge {
	int from, to;
	char label[128];
};

static int edge_cmp(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;
	if (a->to != b->to)
		return a->to - b->to;
	if (a->from != b->from)
		return a->from - b->from;
	return strcmp(a->label, b->label);
}

/* The reasons of one edge line: its label split at the dot escape "\\n" (none: one empty
 * reason). */
static int add_reasons(const char *line, int a, int b, struct edge *edges, int ne, int maxe)
{
	const char *l = strstr(line, "[label=\"");
	char lab[1024] = "";
	if (l)
		sscanf(l, "[label=\"%1023[^\"]\"", lab);
	char *rest = lab;
	do {
		char *nl = strstr(rest, "\\n");
		if (nl)
			*nl = 0;
		ck_assert_int_lt(ne, maxe);
		edges[ne].from = a;
		edges[ne].to = b;
		snprintf(edges[ne].label, sizeof edges[ne].label, "%s", rest);
		ne++;
		rest = nl ? nl + 2 : NULL;
	} while (rest);
	return ne;
}

/* Read nodes ("tN [label=\"...\", tooltip=\"N: name\"]") and edges ("tA -> tB;", or with a
 * label of reasons, one struct edge per reason) of a dot file; each pair of nodes must have one
 * edge line at most. */
static int read_dot(const char *path, char nodes[][128], int maxn, int *nnodes, struct edge *edges,
		    int maxe)
{
	char *text = obs_slurp(path), *s = text, *line;
	ck_assert_msg(strncmp(text, "digraph", 7) == 0, "%s does not start a digraph", path);
	int ne = 0, nlines = 0, pairs[256][2];
	*nnodes = 0;
	while ((line = strsep(&s, "\n"))) {
		int a, b, k, pos = 0;
		char lab[128];
		const char *tip = strstr(line, "tooltip=\"");
		if (sscanf(line, " t%d -> t%d%n", &a, &b, &pos) == 2 && pos > 0) {
			for (int i = 0; i < nlines; i++)
				ck_assert_msg(pairs[i][0] != a || pairs[i][1] != b,
					      "two edges t%d -> t%d", a, b);
			ck_assert_int_lt(nlines, 256);
			pairs[nlines][0] = a;
			pairs[nlines++][1] = b;
			ne = add_reasons(line, a, b, edges, ne, maxe);
		} else if (sscanf(line, " t%d [label=", &a) == 1 && tip &&
			   sscanf(tip, "tooltip=\"%d: %127[^\"]\"", &k, lab) == 2) {
			ck_assert_int_eq(a, k);
			ck_assert_int_eq(a, *nnodes); /* nodes are numbered in submission order */
			ck_assert_int_lt(a, maxn);
			snprintf(nodes[a], 128, "%s", lab);
			(*nnodes)++;
		}
	}
	free(text);
	return ne;
}

static void check_graph(const char *path, int nwant_nodes, const char *const *want_nodes, int nwant,
			const struct edge *want)
{
	char nodes[64][128];
	struct edge got[128];
	int nn;
	int ng = read_dot(path, nodes, 64, &nn, got, 128);
	ck_assert_int_eq(nn, nwant_nodes);
	for (int i = 0; i < nn; i++)
		ck_assert_str_eq(nodes[i], want_nodes[i]);
	struct edge *w = malloc(nwant * sizeof *w);
	ck_assert_ptr_nonnull(w);
	memcpy(w, want, nwant * sizeof *w);
	qsort(got, ng, sizeof *got, edge_cmp);
	qsort(w, nwant, sizeof *w, edge_cmp);
	/* report the first difference in either direction, not just the counts */
	int i = 0, j = 0;
	while (i < ng || j < nwant) {
		int c = i == ng ? 1 : j == nwant ? -1 : edge_cmp(&got[i], &w[j]);
		ck_assert_msg(c == 0,
			      c < 0 ? "unexpected edge t%d -> t%d \"%s\""
				    : "missing edge t%d -> t%d \"%s\"",
			      c < 0 ? got[i].from : w[j].from, c < 0 ? got[i].to : w[j].to,
			      c < 0 ? got[i].label : w[j].label);
		i++;
		j++;
	}
	free(w);
}

/* A region `name` over `bounds` with two f64 fields, "a" and "b" (ids in ab). */
static tsr_region_t ab_region(const char *name, tsr_box_t bounds, tsr_field_t ab[2])
{
	return tsr_test_region(name, bounds, 2, (const tsr_type_t[]){TSR_F64, TSR_F64},
			       (const char *const[]){"a", "b"}, ab);
}

/* Region g = [0,7] with f64 fields a and b; tiles = {[0,3], [4,7]}; halo = {[0,4], [3,7]}.
 * Node numbers are submission order (one node per point task, one per fold task). The comments
 * list, for each access, the earlier accesses it meets newest first and why each gives an edge
 * or stops. */
static void small_program(void)
{
	tsr_field_t ab[2];
	tsr_region_t g = ab_region("g", tsr_box1(0, 7), ab);
	tsr_field_t fa = ab[0], fb = ab[1];
	tsr_partition_t tiles, halo;
	CK_TSR(tsr_partition_tiles(g, tsr_box1(0, 1), "tiles", &tiles));
	CK_TSR(tsr_partition_tiles_halo(g, tsr_box1(0, 7), tsr_box1(0, 1),
					(const int64_t[3]){1, 0, 0}, "halo", &halo));
	tsr_task_t tset = tsr_test_task("set", set, TSR_NONE),
		   tbump = tsr_test_task("bump", bump, TSR_NONE);
	/* smooth: b (req 1, a tile) = sum of a over the tile's halo box (req 0) */
	tsr_task_t tsmooth = tsr_test_task("smooth", tsr_test_sum_into, TSR_NONE),
		   tlook = tsr_test_task("look", look, TSR_F64);
	tsr_task_t tfold = tsr_test_task("fold", fold, TSR_NONE);
	tsr_box_t two = tsr_box1(0, 1);
	tsr_future_t f1, f2;

	/* t0, t1: set a through tiles (a: t0 W [0,3], t1 W [4,7]) */
	tsr_req_t q = tsr_req_part(tiles, TSR_WRITE, TSR_FIELDS(fa));
	CK_TSR(tsr_index_launch(tset, two, 1, &q, &(double){1.0}, sizeof(double), TSR_REDOP_NONE,
				NULL));
	/* t2, t3: read a through halo, write b through tiles.
	 * t2 reads a[0,4]: t1 W [4,7] overlaps (edge, does not cover), t0 W [0,3] (edge, does not
	 * cover). t3 reads a[3,7]: t2 is a READ (no edge), t1 and t0 overlap (edges). b is new: no
	 * edge. */
	tsr_req_t qs[2] = {tsr_req_part(halo, TSR_READ, TSR_FIELDS(fa)),
			   tsr_req_part(tiles, TSR_WRITE, TSR_FIELDS(fb))};
	CK_TSR(tsr_index_launch(tsmooth, two, 2, qs, NULL, 0, TSR_REDOP_NONE, NULL));
	/* t4: read a and b whole. a: reads t3, t2 (no edge), t1, t0 (edges). b: t3, t2 W
	 * (edges). */
	tsr_req_t ql = tsr_req_region(g, TSR_READ, TSR_FIELDS(fa, fb));
	CK_TSR(tsr_launch(tlook, 1, &ql, NULL, 0, &f1));
	/* t5: write a whole: every earlier access to a conflicts (t4, t3, t2 READ; t1, t0 WRITE);
	 * it covers them all, so later accesses to a see only t5. */
	tsr_req_t qw = tsr_req_region(g, TSR_WRITE, TSR_FIELDS(fa));
	CK_TSR(tsr_launch(tset, 1, &qw, &(double){2.0}, sizeof(double), NULL));
	/* t6, t7: READ_WRITE a through tiles: t5 covers each tile (edge, stop). */
	tsr_req_t qb = tsr_req_part(tiles, TSR_READ_WRITE, TSR_FIELDS(fa));
	CK_TSR(tsr_index_launch(tbump, two, 1, &qb, &fa, sizeof fa, TSR_REDOP_NONE, NULL));
	/* t8, t10: REDUCE(SUM) b whole, each point into a private buffer (no access to g), folded
	 * into g.b by Tessera's fold task t9, t11 (TSR_REDUX=ordered, the default). t9: t8 (its
	 * private buffer), then b's writers t3, t2 and its reader t4 (edges); as a READ_WRITE of
	 * the whole of b, it covers them. t11: t10, then t9 covers (edge, stop). */
	tsr_req_t qr = tsr_req_region(g, TSR_REDUCE(TSR_SUM), TSR_FIELDS(fb));
	tsr_redop_t sum = TSR_SUM, max = TSR_MAX;
	CK_TSR(tsr_launch(tfold, 1, &qr, &sum, sizeof sum, NULL));
	CK_TSR(tsr_launch(tfold, 1, &qr, &sum, sizeof sum, NULL));
	/* t12: read a and b. a: t7, t6 RW (edges), t5 W covers (edge, stop). b: the fold t11
	 * covers (edge, stop). */
	CK_TSR(tsr_launch(tlook, 1, &ql, NULL, 0, &f2));
	/* t13: REDUCE(MAX) b, folded by t14: t13 (private buffer); t11 covers (edge, stop); the
	 * reader t12 since (edge). */
	tsr_req_t qm = tsr_req_region(g, TSR_REDUCE(TSR_MAX), TSR_FIELDS(fb));
	CK_TSR(tsr_launch(tfold, 1, &qm, &max, sizeof max, NULL));

	/* the values, so that the graph belongs to a program that computed the right thing:
	 * after t2, t3: b = 1+1+1+1+1 = 5 on both tiles (halo sums of five ones);
	 * f1 = sum(a) + sum(b) = 8 + 40; after t5..t9: a = 3, b = 7; f2 = 24 + 56; t11: b = 100. */
	double v1, v2;
	CK_TSR(tsr_fence()); /* a task that failed its accessor would show here */
	CK_TSR(tsr_future_wait(f1, &v1, sizeof v1));
	CK_TSR(tsr_future_wait(f2, &v2, sizeof v2));
	ck_assert_double_eq(v1, 48.0);
	ck_assert_double_eq(v2, 80.0);
	tsr_test_ck_all1(g, fb, 8, 100.0);
	CK_TSR(tsr_future_destroy(f1));
	CK_TSR(tsr_future_destroy(f2));
	CK_TSR(tsr_region_destroy(g));
}

/* Its nodes, and its edges with their reasons (TSR_DAG_LABELS=1: every edge drawn). */
static const char *const small_nodes[] = {"set(0)", "set(1)",   "smooth(0)", "smooth(1)",
					  "look",   "set",      "bump(0)",   "bump(1)",
					  "fold",   "tsr_fold", "fold",      "tsr_fold",
					  "look",   "fold",     "tsr_fold"};
enum { NSMALL = sizeof small_nodes / sizeof small_nodes[0] };

static const struct edge small_edges[] = {
	{1, 2, "g/halo(0).a WRITE->READ"},
	{0, 2, "g/halo(0).a WRITE->READ"},
	{1, 3, "g/halo(1).a WRITE->READ"},
	{0, 3, "g/halo(1).a WRITE->READ"},
	{1, 4, "g.a WRITE->READ"},
	{0, 4, "g.a WRITE->READ"},
	{3, 4, "g.b WRITE->READ"},
	{2, 4, "g.b WRITE->READ"},
	{4, 5, "g.a READ->WRITE"},
	{3, 5, "g.a READ->WRITE"},
	{2, 5, "g.a READ->WRITE"},
	{1, 5, "g.a WRITE->WRITE"},
	{0, 5, "g.a WRITE->WRITE"},
	{5, 6, "g/tiles(0).a WRITE->READ_WRITE"},
	{5, 7, "g/tiles(1).a WRITE->READ_WRITE"},
	{8, 9, "g.b private buffer"},
	{3, 9, "g.b WRITE->FOLD(sum)"},
	{2, 9, "g.b WRITE->FOLD(sum)"},
	{4, 9, "g.b READ->FOLD(sum)"},
	{10, 11, "g.b private buffer"},
	{9, 11, "g.b FOLD(sum)->FOLD(sum)"},
	{7, 12, "g.a READ_WRITE->READ"},
	{6, 12, "g.a READ_WRITE->READ"},
	{5, 12, "g.a WRITE->READ"},
	{11, 12, "g.b FOLD(sum)->READ"},
	{13, 14, "g.b private buffer"},
	{11, 14, "g.b FOLD(sum)->FOLD(max)"},
	{12, 14, "g.b READ->FOLD(max)"},
};

START_TEST(dag_of_a_small_program_has_exactly_the_derived_edges)
{
	obs_mkdir();
	obs_clean_env();
	setenv("TSR_DAG_LABELS", "1", 1);
	obs_start("eager", 2, NULL, obs_path("g.dot"), 0);
	small_program();
	CK_TSR(tsr_finalize()); /* the graph is written here */
	check_graph(obs_path("g.dot"), NSMALL, small_nodes,
		    (int)(sizeof small_edges / sizeof small_edges[0]), small_edges);
	obs_rmdir();
}
END_TEST

/* By default the graph is drawn for people: no labels, one edge per pair, and no edge that a
 * path of two edges through another task implies (t1 -> t4 goes t1 -> t2 -> t4, t5 -> t12 goes
 * t5 -> t6 -> t12, ...): of the labelled graph's 28 pairs, 18 remain. The launches are boxed. */
START_TEST(dag_drawn_for_people_by_default)
{
	obs_mkdir();
	obs_init("eager", 2, NULL, obs_path("d.dot"), 0);
	small_program();
	CK_TSR(tsr_finalize());
	static const struct edge want[] = {
		{1, 2, ""},  {0, 2, ""},  {1, 3, ""},  {0, 3, ""},   {3, 4, ""},   {2, 4, ""},
		{4, 5, ""},  {5, 6, ""},  {5, 7, ""},  {8, 9, ""},   {4, 9, ""},   {10, 11, ""},
		{9, 11, ""}, {7, 12, ""}, {6, 12, ""}, {11, 12, ""}, {13, 14, ""}, {12, 14, ""},
	};
	check_graph(obs_path("d.dot"), NSMALL, small_nodes, (int)(sizeof want / sizeof want[0]),
		    want);
	/* every index launch of two points is a box named after its task */
	char *dot = obs_slurp(obs_path("d.dot"));
	ck_assert_ptr_nonnull(strstr(dot, "subgraph cluster_l0 {\nlabel=\"launch 1: set\";"));
	ck_assert_ptr_nonnull(strstr(dot, "subgraph cluster_l1 {\nlabel=\"launch 2: smooth\";"));
	ck_assert_ptr_nonnull(strstr(dot, "subgraph cluster_l4 {\nlabel=\"launch 5: bump\";"));
	/* a single launch's point and its fold */
	ck_assert_ptr_nonnull(strstr(dot, "subgraph cluster_l5 {\nlabel=\"launch 6: fold\";"));
	/* an iteration ends where a task launched in it is launched again: set (launch 4), then
	 * fold (launch 9, after look); the run of two single launches of fold (6, 7) is one */
	ck_assert_ptr_nonnull(strstr(dot, "subgraph cluster_i1 {\nlabel=\"iteration 2\";"));
	ck_assert_ptr_nonnull(strstr(dot, "subgraph cluster_i2 {\nlabel=\"iteration 3\";"));
	ck_assert_ptr_null(strstr(dot, "iteration 4"));
	free(dot);
	obs_rmdir();
}
END_TEST

/* A chain through one field is a path; independent fields give independent chains; READs of the
 * same data by many tasks all hang off the last writer (no edges between the readers). */
START_TEST(dag_of_chains_and_fan_out)
{
	obs_mkdir();
	obs_clean_env();
	setenv("TSR_DAG_LABELS", "1", 1); /* the reasons are checked */
	obs_start("lws", 2, NULL, obs_path("c.dot"), 0);
	tsr_field_t ab[2];
	tsr_region_t r = ab_region("r", tsr_box1(0, 3), ab);
	tsr_field_t fa = ab[0], fb = ab[1];
	tsr_task_t tbump = tsr_test_task("bump", bump, TSR_NONE),
		   tlook = tsr_test_task("look", look, TSR_F64);
	tsr_req_t qa = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(fa));
	tsr_req_t qb = tsr_req_region(r, TSR_READ_WRITE, TSR_FIELDS(fb));
	/* t0..t5: bump a, bump b, alternating: chains 0-2-4 on a, 1-3-5 on b */
	for (int i = 0; i < 3; i++) {
		CK_TSR(tsr_launch(tbump, 1, &qa, &fa, sizeof fa, NULL));
		CK_TSR(tsr_launch(tbump, 1, &qb, &fb, sizeof fb, NULL));
	}
	/* t6..t8: three readers of a and b: each depends on t4 (a) and t5 (b) only */
	tsr_future_t f[3];
	tsr_req_t ql = tsr_req_region(r, TSR_READ, TSR_FIELDS(fa, fb));
	for (int i = 0; i < 3; i++)
		CK_TSR(tsr_launch(tlook, 1, &ql, NULL, 0, &f[i]));
	/* t9: a write after the readers depends on all three, and on t4, the earlier write it
	 * covers */
	CK_TSR(tsr_launch(tbump, 1, &qa, &fa, sizeof fa, NULL));
	for (int i = 0; i < 3; i++) {
		double v;
		CK_TSR(tsr_future_wait(f[i], &v, sizeof v));
		ck_assert_double_eq(v, 4 * 3.0 + 4 * 3.0);
		CK_TSR(tsr_future_destroy(f[i]));
	}
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_finalize());
	static const char *const nodes[] = {"bump", "bump", "bump", "bump", "bump",
					    "bump", "look", "look", "look", "bump"};
	static const struct edge want[] = {
		{0, 2, "r.a READ_WRITE->READ_WRITE"}, {2, 4, "r.a READ_WRITE->READ_WRITE"},
		{1, 3, "r.b READ_WRITE->READ_WRITE"}, {3, 5, "r.b READ_WRITE->READ_WRITE"},
		{4, 6, "r.a READ_WRITE->READ"},       {5, 6, "r.b READ_WRITE->READ"},
		{4, 7, "r.a READ_WRITE->READ"},       {5, 7, "r.b READ_WRITE->READ"},
		{4, 8, "r.a READ_WRITE->READ"},       {5, 8, "r.b READ_WRITE->READ"},
		{8, 9, "r.a READ->READ_WRITE"},       {7, 9, "r.a READ->READ_WRITE"},
		{6, 9, "r.a READ->READ_WRITE"},       {4, 9, "r.a READ_WRITE->READ_WRITE"},
	};
	check_graph(obs_path("c.dot"), 10, nodes, (int)(sizeof want / sizeof want[0]), want);
	obs_rmdir();
}
END_TEST

/* Tasks on disjoint tiles of one field are independent: an index launch after another on the same
 * tiles links each point to the same color only. With no TSR_DAG, no graph is kept or written. */
START_TEST(dag_links_tiles_color_to_color)
{
	obs_mkdir();
	obs_clean_env();
	setenv("TSR_DAG", obs_path("t.dot"), 1); /* the environment route */
	setenv("TSR_DAG_LABELS", "1", 1);
	setenv("TSR_NCPU", "2", 1);
	CK_TSR(tsr_init(NULL));
	tsr_region_t r = tsr_test_region_f64("line", tsr_box1(0, 15));
	tsr_partition_t p = tsr_test_tiles(r, tsr_box1(0, 3), "q");
	tsr_task_t tbump = tsr_test_task("bump", bump, TSR_NONE);
	tsr_req_t q = tsr_req_part(p, TSR_READ_WRITE, TSR_FIELDS(0));
	tsr_field_t fx = 0;
	for (int i = 0; i < 3; i++)
		CK_TSR(tsr_index_launch(tbump, tsr_box1(0, 3), 1, &q, &fx, sizeof fx,
					TSR_REDOP_NONE, NULL));
	tsr_test_ck_all1(r, 0, 16, 3.0);
	CK_TSR(tsr_region_destroy(r));
	CK_TSR(tsr_finalize());
	const char *nodes[12];
	static char names[12][64];
	struct edge want[8];
	for (int i = 0; i < 12; i++) {
		snprintf(names[i], sizeof names[i], "bump(%d)", i % 4);
		nodes[i] = names[i];
	}
	for (int l = 1, k = 0; l < 3; l++)
		for (int c = 0; c < 4; c++, k++) {
			want[k].from = (l - 1) * 4 + c;
			want[k].to = l * 4 + c;
			snprintf(want[k].label, sizeof want[k].label,
				 "line/q(%d).x READ_WRITE->READ_WRITE", c);
		}
	check_graph(obs_path("t.dot"), 12, nodes, 8, want);
	obs_rmdir();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dag");
	TCase *tc = tsr_test_tcase("dag", 0);
	tcase_add_test(tc, dag_of_a_small_program_has_exactly_the_derived_edges);
	tcase_add_test(tc, dag_drawn_for_people_by_default);
	tcase_add_test(tc, dag_of_chains_and_fan_out);
	tcase_add_test(tc, dag_links_tiles_color_to_color);
	suite_add_tcase(s, tc);
	return tsr_test_run(s);
}
