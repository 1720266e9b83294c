/* selftest.c: checks of the oracle itself, without the runtime: the generator is deterministic
 * and only makes programs its validator accepts, the validator refuses invalid programs, the
 * interpreter gets hand-computed cases right, and the results do not depend on the order in
 * which point tasks run and reductions combine (what makes a bit-for-bit comparison fair). */
#include <stdlib.h>
#include <string.h>
#include "oracle.h"

#define NSEEDS 1500

static int nfail;

static void check(FILE *out, int ok, const char *fmt, const char *detail)
{
	if (!ok) {
		nfail++;
		fprintf(out, "# self-test FAILED: %s%s%s\n", fmt, detail ? ": " : "",
			detail ? detail : "");
	}
}

/* ------------------------------------------------- a program built by hand */
static or_prog_t *hand_prog(void)
{
	or_prog_t *p = calloc(1, sizeof *p);
	if (!p)
		abort();
	p->nroot = 1;
	p->root[0].bounds = tsr_box2(0, 3, 0, 2);
	p->root[0].nf = 2;
	p->root[0].type[0] = TSR_I32;
	p->root[0].type[1] = TSR_F64;
	p->node[0].part = -1;
	p->node[0].box = p->root[0].bounds;
	p->nnode = 1;
	/* p0: two tiles along dimension 0; p1: the same tiles grown by one point (aliased) */
	for (int pi = 0; pi < 2; pi++) {
		or_part_t *pt = &p->part[pi];
		pt->parent = 0;
		pt->kind = pi ? PK_HALO : PK_TILES;
		pt->colors = tsr_box2(0, 1, 0, 0);
		pt->domain = p->root[0].bounds;
		pt->halo[0] = pi;
		pt->first = p->nnode;
		pt->nsub = 2;
		pt->disjoint = !pi;
		for (int c = 0; c < 2; c++) {
			or_node_t *nd = &p->node[p->nnode++];
			nd->root = 0;
			nd->part = pi;
			nd->color[0] = c;
			nd->depth = 1;
			nd->box = tsr_box2(c ? 2 - pi : 0, c ? 3 : 1 + pi, 0, 2);
		}
	}
	p->npart = 2;
	return p;
}

static or_op_t *add(or_prog_t *p, int kind)
{
	or_op_t *op = &p->op[p->nop];
	memset(op, 0, sizeof *op);
	op->kind = kind;
	op->fut = -1;
	p->op_id[p->nop] = p->nop;
	p->nop++;
	return op;
}

static or_req_t *req(or_op_t *op, int kind, int obj, tsr_privilege_t priv, int field)
{
	or_req_t *q = &op->req[op->nreq++];
	memset(q, 0, sizeof *q);
	q->kind = kind;
	q->obj = obj;
	q->priv = priv;
	if (kind != RQ_FUTURE) {
		q->nf = 1;
		q->fields[0] = field;
	}
	return q;
}

static int64_t m1000(int64_t v)
{
	return ((v % 1000) + 1000) % 1000 - 500;
}

static int32_t get_i32(const or_interp_t *s, int64_t x, int64_t y)
{
	int32_t v;
	memcpy(&v, (const char *)s->data[0][0] + 4 * (size_t)(x + 4 * y), 4);
	return v;
}

/* Fills, a copy and a host READ_WRITE, values computed here by hand; then a WRITE index launch
 * over part of the colors must write every point of its tiles and nothing else. */
static void hand_cases(FILE *out)
{
	or_prog_t *p = hand_prog();
	add(p, OP_PART_CREATE)->obj = 0;
	add(p, OP_PART_CREATE)->obj = 1;
	or_op_t *op = add(p, OP_FILL);
	op->obj = 0, op->field = 0, op->ival = 7;
	op = add(p, OP_FILL);
	op->obj = 2, op->field = 0, op->ival = -3; /* p0[1] = [2..3]x[0..2] */
	op = add(p, OP_COPY);
	op->obj = 2, op->field = 0, op->obj2 = 1, op->field2 = 0; /* p0[1] -> p0[0] */
	op = add(p, OP_MAP_WRITE);
	op->obj = 1, op->field = 0, op->priv = TSR_READ_WRITE, op->ival = 5;
	char why[256];
	int valid = !or_validate(p, why, sizeof why);
	check(out, valid, "hand program 1 is valid", valid ? NULL : why);
	or_interp_t s;
	if (or_interp_init(&s, p))
		abort();
	for (int i = 0; i < p->nop; i++)
		or_interp_op(&s, i);
	int ok = 1;
	for (int y = 0; y <= 2; y++)
		for (int x = 0; x <= 3; x++) {
			int32_t want = x <= 1 ? (int32_t)m1000(2 * -3 + x + 13 * y + 5) : -3;
			ok &= get_i32(&s, x, y) == want;
		}
	check(out, ok, "fill, copy and host READ_WRITE give the hand-computed values", NULL);
	or_interp_free(&s);

	/* WRITE through p0 over color 1 only: a sentinel stays exactly on p0[0] */
	p->nop = 2;
	op = add(p, OP_FILL);
	op->obj = 0, op->field = 0, op->ival = 12345;
	op = add(p, OP_INDEX);
	op->domain = tsr_box2(1, 1, 0, 0);
	req(op, RQ_PART, 0, TSR_WRITE, 0);
	valid = !or_validate(p, why, sizeof why);
	check(out, valid, "hand program 2 is valid", valid ? NULL : why);
	if (or_interp_init(&s, p))
		abort();
	for (int i = 0; i < p->nop; i++)
		or_interp_op(&s, i);
	ok = 1;
	for (int y = 0; y <= 2; y++)
		for (int x = 0; x <= 3; x++) {
			int32_t v = get_i32(&s, x, y);
			ok &= x <= 1 ? v == 12345 : (v >= -500 && v < 500);
		}
	check(out, ok, "a WRITE index launch writes all of its subregions and nothing else", NULL);
	or_interp_free(&s);
	free(p);
}

/* Programs the validator must refuse: interference, dead objects, overflow, overlapping copies. */
static void invalid_cases(FILE *out)
{
	static const char *what[] = {
		"WRITE through an aliased partition",
		"one field in two requirements",
		"subregion of a destroyed partition",
		"REDUCE(prod) that overflows an i32",
		"copy between overlapping boxes of one field",
		"WRITE on a region from every point",
		"future used after destroy",
		"partition used before creation",
	};
	for (int c = 0; c < 8; c++) {
		or_prog_t *p = hand_prog();
		or_op_t *op;
		if (c != 7)
			add(p, OP_PART_CREATE)->obj = 0;
		add(p, OP_PART_CREATE)->obj = 1;
		switch (c) {
		case 0:
			op = add(p, OP_INDEX);
			op->domain = tsr_box2(0, 1, 0, 0);
			req(op, RQ_PART, 1, TSR_WRITE, 0);
			break;
		case 1:
			op = add(p, OP_INDEX);
			op->domain = tsr_box2(0, 1, 0, 0);
			req(op, RQ_PART, 0, TSR_READ, 1);
			req(op, RQ_PART, 1, TSR_READ, 1);
			break;
		case 2:
			add(p, OP_PART_DESTROY)->obj = 0;
			op = add(p, OP_LAUNCH);
			req(op, RQ_REGION, 1, TSR_READ, 0);
			break;
		case 3:
			op = add(p, OP_FILL);
			op->obj = 0, op->field = 0, op->ival = 50;
			for (int k = 0; k < 30; k++)
				req(add(p, OP_LAUNCH), RQ_REGION, 0, TSR_REDUCE(TSR_PROD), 0);
			break;
		case 4:
			op = add(p, OP_COPY);
			/* p1[0] and p1[1] overlap */
			op->obj = 3, op->field = 1, op->obj2 = 4, op->field2 = 1;
			break;
		case 5:
			op = add(p, OP_INDEX);
			op->domain = tsr_box1(0, 1);
			req(op, RQ_REGION, 0, TSR_READ_WRITE, 0);
			break;
		case 6:
			op = add(p, OP_FUT_CREATE);
			op->fut = 0;
			p->fut_type[0] = TSR_I64;
			p->nfut = 1;
			add(p, OP_FUT_DESTROY)->obj = 0;
			req(add(p, OP_LAUNCH), RQ_FUTURE, 0, TSR_READ, 0);
			break;
		case 7:
			op = add(p, OP_INDEX);
			op->domain = tsr_box2(0, 1, 0, 0);
			req(op, RQ_PART, 0, TSR_READ, 0);
			break;
		}
		char why[256];
		check(out, or_validate(p, why, sizeof why) != 0, "validator refuses", what[c]);
		free(p);
	}
}

/* ------------------------------------- a second, deliberately different, executor
 * Points in a random order, every REDUCE into a private buffer (identity, dense layout) combined
 * into the data afterwards in color order, returns combined in color order: the way a parallel
 * runtime that keeps Tessera's promise runs it. Its results must be bit-identical to the
 * interpreter's. With shuffled folds (fold_rs), fp_order launches must make some results differ:
 * the comparison sees the fold order. */
static uint64_t rs_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void shuffle(int *a, int n, uint64_t *rs)
{
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(rs_next(rs) % (uint64_t)(i + 1)), t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

/* Fold order of a launch's private buffers: color order, or shuffled when fold_rs is given. */
static void fold_order(const or_partial_t *bufs, int nb, int npts, int *border, uint64_t *fold_rs)
{
	int k = 0;
	for (int pt = 0; pt < npts; pt++)
		for (int j = 0; j < nb; j++)
			if (bufs[j].point == pt)
				border[k++] = j;
	if (fold_rs)
		shuffle(border, nb, fold_rs);
}

static void parallel_launch(or_interp_t *s, int i, uint64_t *rs, uint64_t *fold_rs)
{
	const or_prog_t *p = s->p;
	const or_op_t *op = &p->op[i];
	or_kargs_t ka;
	or_kargs(p, op, &ka);
	tsr_box_t dom = op->kind == OP_INDEX ? op->domain : tsr_box1(0, 0);
	int64_t pts[OR_MAXCOLORS][3], x[3];
	int npts = 0, order[OR_MAXCOLORS];
	or_box_first(dom, x);
	do {
		memcpy(pts[npts], x, sizeof x);
		order[npts] = npts;
		npts++;
	} while (npts < OR_MAXCOLORS && or_box_next(dom, x));
	shuffle(order, npts, rs);
	or_partial_t bufs[OR_MAXCOLORS * OR_MAXREQ * OR_MAXF];
	int nb = 0;
	uint64_t rets[OR_MAXCOLORS];
	for (int k = 0; k < npts; k++) {
		const int64_t *pt = pts[order[k]];
		tsr_accessor_t acc[OR_MAXREQ][OR_MAXF];
		const void *fut[OR_MAXREQ] = {0};
		for (int r = 0; r < op->nreq; r++) {
			const or_req_t *q = &op->req[r];
			if (q->kind == RQ_FUTURE) {
				fut[r] = &s->fut[q->obj];
				continue;
			}
			int n = q->obj;
			if (q->kind == RQ_PART) {
				int64_t color[3];
				or_project(p, q, pt, color);
				n = or_part_color_node(p, q->obj, color);
			}
			for (int f = 0; f < q->nf; f++) {
				acc[r][f] = or_interp_acc(s, n, q->fields[f], q->priv);
				if (!TSR_PRIV_IS_REDUCE(q->priv))
					continue;
				or_partial_t *b = &bufs[nb++];
				or_partial_open(b, p->node[n].box, acc[r][f],
						TSR_PRIV_REDOP(q->priv), order[k]);
				acc[r][f] = b->acc;
			}
		}
		rets[order[k]] = 0;
		or_kernel(&ka, op->kind == OP_INDEX ? dom.dim : 0,
			  op->kind == OP_INDEX ? pt : (int64_t[3]){0, 0, 0}, acc, fut,
			  &rets[order[k]]);
	}
	int border[OR_MAXCOLORS * OR_MAXREQ * OR_MAXF];
	fold_order(bufs, nb, npts, border, fold_rs);
	for (int k = 0; k < nb; k++)
		or_partial_fold(&bufs[border[k]]);
	if (op->fut < 0)
		return;
	if (op->kind == OP_LAUNCH) {
		s->fut[op->fut] = rets[0];
		return;
	}
	uint64_t total = 0;
	or_identity(op->ret_type, op->redop, &total);
	for (int k = 0; k < npts; k++)
		order[k] = k;
	if (fold_rs)
		shuffle(order, npts, fold_rs);
	for (int k = 0; k < npts; k++)
		or_fold(op->ret_type, op->redop, &total, &rets[order[k]]);
	s->fut[op->fut] = total;
}

static int same_results(const or_prog_t *p, const or_interp_t *a, const or_interp_t *b)
{
	for (int r = 0; r < p->nroot; r++)
		for (int f = 0; f < p->root[r].nf; f++)
			if (memcmp(a->data[r][f], b->data[r][f],
				   (size_t)tsr_box_volume(p->root[r].bounds) *
					   tsr_type_size(p->root[r].type[f])))
				return 0;
	for (int f = 0; f < p->nfut; f++)
		if (memcmp(&a->fut[f], &b->fut[f], tsr_type_size(p->fut_type[f])))
			return 0;
	return 1;
}

static void run_interp(const or_prog_t *p, or_interp_t *s, uint64_t *shuffle_rs, uint64_t *fold_rs)
{
	if (or_interp_init(s, p))
		abort();
	for (int i = 0; i < p->nop; i++) {
		int k = p->op[i].kind;
		if (shuffle_rs && (k == OP_LAUNCH || k == OP_INDEX))
			parallel_launch(s, i, shuffle_rs, fold_rs);
		else
			or_interp_op(s, i);
	}
}

/* Programs compared through their listing (which shows every field of every op): a memcmp
 * would also compare struct padding. */
static int same_listing(const or_prog_t *a, const or_prog_t *b)
{
	char *sa = NULL, *sb = NULL;
	size_t la = 0, lb = 0;
	FILE *fa = open_memstream(&sa, &la), *fb = open_memstream(&sb, &lb);
	if (!fa || !fb)
		abort();
	or_print_prog(fa, a);
	or_print_prog(fb, b);
	fclose(fa);
	fclose(fb);
	int same = la == lb && !memcmp(sa, sb, la);
	free(sa);
	free(sb);
	return same;
}

/* A launch whose argument matters: it writes, reduces or returns a future. */
/* Runs p again as a parallel runtime may (run_interp's shuffle_rs, fold_rs): 1 if the results
 * differ from s1's, else 0. */
static int differs_from(const or_prog_t *p, const or_interp_t *s1, uint64_t *shuffle_rs,
			uint64_t *fold_rs)
{
	or_interp_t s2;
	run_interp(p, &s2, shuffle_rs, fold_rs);
	int differs = !same_results(p, s1, &s2);
	or_interp_free(&s2);
	return differs;
}

static int launch_with_effect(const or_op_t *op)
{
	int effect = op->fut >= 0;
	for (int r = 0; r < op->nreq; r++)
		effect |= op->req[r].kind != RQ_FUTURE && op->req[r].priv != TSR_READ;
	return (op->kind == OP_LAUNCH || op->kind == OP_INDEX) && effect;
}

/* Changes the argument of one launch of b (a's copy) that writes, picked by seed, and runs b:
 * 1 if its results differ from a's (s1), 0 if not, -1 where b has no such launch. The results
 * should change, or the comparison would be blind to wrong inputs. */
static int perturbed_differs(const or_prog_t *a, or_prog_t *b, const or_interp_t *s1, uint64_t seed)
{
	int launches[OR_MAXOP], nl = 0;
	for (int i = 0; i < b->nop; i++)
		/* a launch that only reads changes nothing */
		if (launch_with_effect(&b->op[i]))
			launches[nl++] = i;
	if (!nl)
		return -1;
	b->op[launches[seed % (uint64_t)nl]].ival += 1;
	/* b's results against a's */
	or_interp_t s2;
	run_interp(b, &s2, NULL, NULL);
	int differs = !same_results(a, s1, &s2);
	or_interp_free(&s2);
	return differs;
}

/* Loops (shape repeat): deterministic and valid, results independent of the order points run
 * in, and each program a loop: a block repeated 6 times or more, traced in about half of the
 * programs, perturbed in about a quarter of the repetitions from the third on, and its
 * repetitions the same ops (the listing's launch stream repeats). */
static void repeat_cases(FILE *out)
{
	int saved = or_shape;
	or_shape = OR_SHAPE_REPEAT;
	or_prog_t *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	if (!a || !b)
		abort();
	or_stats_t st;
	memset(&st, 0, sizeof st);
	long order_bad = 0, nops = 0, traced_progs = 0;
	char why[512], d[700];
	const uint64_t n = NSEEDS / 10;
	int ok = 1;
	for (uint64_t seed = 1; seed <= n && ok; seed++) {
		or_generate(seed, a);
		or_generate(seed, b);
		if (!same_listing(a, b) || or_validate(a, why, sizeof why)) {
			snprintf(d, sizeof d, "seed %llu: %s", (unsigned long long)seed,
				 same_listing(a, b) ? why : "two listings differ");
			check(out, 0, "loop programs are deterministic and valid", d);
			ok = 0;
		}
		or_stats_add(&st, a);
		nops += a->nop;
		traced_progs += a->traced > 0;
		int fails = 0;
		for (int i = 0; i < a->nop; i++)
			fails |= a->op[i].fail;
		if (fails)
			continue; /* the point-shuffling executor does not model poison */
		or_interp_t s1;
		uint64_t rs = seed;
		run_interp(a, &s1, NULL, NULL);
		order_bad += differs_from(a, &s1, &rs, NULL);
		or_interp_free(&s1);
	}
	fprintf(out,
		"# self-test: shape repeat: %llu programs, %ld ops, %ld repetitions (%ld inside "
		"traces, %ld perturbed, %ld failing launches), %ld programs with traces, trace "
		"begins %ld\n",
		(unsigned long long)n, nops, st.repetitions, st.traced_reps, st.perturbed_reps,
		st.failing_ops, traced_progs, st.ops[OP_TRACE_BEGIN]);
	check(out, order_bad == 0, "loop results do not depend on the order points run in", NULL);
	check(out, st.repetitions >= (long)n * 6, "loops repeat their block 6 times or more", NULL);
	check(out, st.failing_ops * 20 >= (long)n, "loops fail a task now and then (poison)", NULL);
	check(out, traced_progs * 3 >= (long)n && traced_progs * 3 <= 2 * (long)n,
	      "a third to two thirds of the loop programs open traces", NULL);
	check(out,
	      st.perturbed_reps * 8 >= st.repetitions &&
		      st.ops[OP_TRACE_END] == st.ops[OP_TRACE_BEGIN],
	      "an eighth of the repetitions or more are perturbed; every trace ends", NULL);
	or_shape = saved;
	free(a);
	free(b);
}

/* The four coherence-by-pieces families: deterministic, valid, never a dropped op, results
 * independent of the order points run in, sensitive to launch arguments, and each one makes
 * what it exists for (README, "Shapes"). */
static void shape_cases(FILE *out)
{
	static const struct {
		int shape;
		const char *feature;
	} fam[] = {
		{OR_SHAPE_ALTERNATE,
		 "index launches on a field through another partition than the one before"},
		{OR_SHAPE_OVERLAP, "aliased boxes that straddle 2 or more disjoint pieces"},
		{OR_SHAPE_NESTED, "partitions three levels down or below an aliased partition"},
		{OR_SHAPE_WAR,
		 "launches reading one field through halos and writing another through tiles"},
	};
	int saved = or_shape;
	or_prog_t *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	if (!a || !b)
		abort();
	for (size_t k = 0; k < sizeof fam / sizeof fam[0]; k++) {
		or_shape = fam[k].shape;
		or_stats_t st;
		memset(&st, 0, sizeof st);
		long dropped0 = or_gen_dropped, nops = 0, order_bad = 0, sensitive = 0,
		     perturbed = 0;
		char why[512], d[700];
		const uint64_t n = NSEEDS / 5;
		for (uint64_t seed = 1; seed <= n; seed++) {
			or_generate(seed, a);
			or_generate(seed, b);
			if (!same_listing(a, b) || or_validate(a, why, sizeof why)) {
				snprintf(d, sizeof d, "shape %s seed %llu: %s",
					 or_shape_str(or_shape), (unsigned long long)seed,
					 same_listing(a, b) ? why : "two listings differ");
				check(out, 0, "family programs are deterministic and valid", d);
				break;
			}
			or_stats_add(&st, a);
			nops += a->nop;
			or_interp_t s1;
			uint64_t rs = seed;
			run_interp(a, &s1, NULL, NULL);
			order_bad += differs_from(a, &s1, &rs, NULL);
			int differs = perturbed_differs(a, b, &s1, seed);
			perturbed += differs >= 0;
			sensitive += differs > 0;
			or_interp_free(&s1);
		}
		long feature = fam[k].shape == OR_SHAPE_ALTERNATE ? st.switches
			       : fam[k].shape == OR_SHAPE_OVERLAP ? st.straddle_boxes
			       : fam[k].shape == OR_SHAPE_NESTED  ? st.deep_parts
								  : st.war_in_launch;
		fprintf(out,
			"# self-test: shape %s: %llu programs, %ld ops (part+ %ld, index %ld, "
			"launch %ld, map %ld, fill %ld); %s: %ld; overlapping box lists %ld, "
			"halo-aliased %ld, nested %ld, reduce through aliased %ld; a changed "
			"launch argument changed the results in %ld of %ld programs\n",
			or_shape_str(or_shape), (unsigned long long)n, nops, st.ops[OP_PART_CREATE],
			st.ops[OP_INDEX], st.ops[OP_LAUNCH],
			st.ops[OP_MAP_READ] + st.ops[OP_MAP_WRITE], st.ops[OP_FILL], fam[k].feature,
			feature, st.overlap_box_parts, st.halo_parts, st.nested_parts,
			st.reduce_aliased, sensitive, perturbed);
		snprintf(d, sizeof d, "shape %s", or_shape_str(or_shape));
		check(out, or_gen_dropped == dropped0,
		      "a family never builds an op its validator refuses", d);
		check(out, order_bad == 0,
		      "family results do not depend on the order points run in", d);
		check(out, nops >= (long)n * 25,
		      "family programs are long (25 ops or more on average)", d);
		check(out, feature >= (long)n,
		      "each family makes what it exists for (once per program on average)", d);
		check(out, sensitive * 10 >= perturbed * 7,
		      "family results depend on the launch arguments (>= 70%)", d);
	}
	/* the default and "pieces" choose every family from the seed */
	or_stats_t mix;
	memset(&mix, 0, sizeof mix);
	for (int m = 0; m < 2; m++) {
		or_shape = m ? OR_SHAPE_PIECES : OR_SHAPE_MIX;
		for (uint64_t seed = 1; seed <= 400; seed++)
			mix.shape[or_shape_of(seed, or_shape)]++;
	}
	int all = mix.shape[OR_SHAPE_CLASSIC] > 100;
	for (int sh = OR_SHAPE_ALTERNATE; sh <= OR_SHAPE_WAR; sh++)
		all &= mix.shape[sh] > 100;
	check(out, all, "shapes mix and pieces choose classic and every family", NULL);
	or_shape = saved;
	free(a);
	free(b);
}

int or_selftest(FILE *out)
{
	nfail = 0;
	unsigned avoid = or_avoid;
	int shape = or_shape;
	or_avoid = 0; /* the full generator first; the restricted one at the end */
	or_shape = OR_SHAPE_CLASSIC;
	hand_cases(out);
	invalid_cases(out);
	or_prog_t *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	if (!a || !b)
		abort();
	or_stats_t st;
	memset(&st, 0, sizeof st);
	long dropped0 = or_gen_dropped, nops = 0, order_bad = 0, sensitive = 0, perturbed = 0,
	     order_seen = 0;
	char why[512];
	for (uint64_t seed = 1; seed <= NSEEDS; seed++) {
		or_generate(seed, a);
		or_generate(seed, b);
		if (!same_listing(a, b)) {
			check(out, 0, "the generator is deterministic", NULL);
			break;
		}
		if (or_validate(a, why, sizeof why)) {
			char d[600];
			snprintf(d, sizeof d, "seed %llu: %s", (unsigned long long)seed, why);
			check(out, 0, "generated programs are valid", d);
			break;
		}
		or_stats_add(&st, a);
		nops += a->nop;
		/* the same program, run as a parallel runtime may run it */
		or_interp_t s1;
		run_interp(a, &s1, NULL, NULL);
		uint64_t rs = seed; /* shuffles the points, then the folds */
		if (differs_from(a, &s1, &rs, NULL) && order_bad++ < 3)
			fprintf(out,
				"# seed %llu: results depend on the order in which points run\n",
				(unsigned long long)seed);
		/* folds in another order than color order must show in some programs' bits */
		uint64_t frs = seed * 7919;
		order_seen += differs_from(a, &s1, &rs, &frs);
		int differs = perturbed_differs(a, b, &s1, seed);
		perturbed += differs >= 0;
		sensitive += differs > 0;
		or_interp_free(&s1);
	}
	check(out, order_bad == 0,
	      "results do not depend on the order points run in (folds in color order)", NULL);
	fprintf(out,
		"# self-test: fractional float reductions: %ld REDUCE requirements, %ld index "
		"launch futures; folding out of color order changed the results of %ld of %d "
		"programs\n",
		st.fp_reduce, st.fp_future, order_seen, NSEEDS);
	check(out, order_seen * 33 >= NSEEDS,
	      "folding out of color order changes the bits (>= 3% of programs)", NULL);
	check(out, or_gen_dropped == dropped0,
	      "the generator never builds an op its validator refuses", NULL);
	fprintf(out,
		"# self-test: %d programs, %ld ops; ops by kind: part+ %ld part- %ld fill %ld copy "
		"%ld launch %ld index %ld map-read %ld map-write %ld fut+ %ld wait %ld fut- %ld "
		"fence %ld\n",
		NSEEDS, nops, st.ops[0], st.ops[1], st.ops[2], st.ops[3], st.ops[4], st.ops[5],
		st.ops[6], st.ops[7], st.ops[8], st.ops[9], st.ops[10], st.ops[11]);
	fprintf(out,
		"# self-test: halo-aliased %ld, box lists %ld (overlapping %ld), nested partitions "
		"%ld, reduce through aliased %ld, index reduce on a region %ld, shifted "
		"projections %ld, futures consumed %ld, writes below a partition %ld; a changed "
		"launch argument changed the results in %ld of %ld programs\n",
		st.halo_parts, st.box_parts, st.overlap_box_parts, st.nested_parts,
		st.reduce_aliased, st.reduce_region_index, st.proj_shift, st.fut_consumed,
		st.write_nested, sensitive, perturbed);
	/* every feature must actually be exercised, or the oracle tests less than it claims */
	int covered = st.halo_parts && st.box_parts && st.overlap_box_parts && st.nested_parts &&
		      st.reduce_aliased && st.reduce_region_index && st.proj_shift &&
		      st.fut_consumed && st.write_nested;
	for (int k = 0; k < OP_TRACE_BEGIN; k++) /* traces: the repeat shape's (repeat_cases) */
		covered &= st.ops[k] > 0;
	check(out, covered, "every op kind and feature appears in the generated programs", NULL);
	check(out, sensitive * 10 >= perturbed * 7,
	      "results depend on the launch arguments (>= 70% of programs)", NULL);
	/* with every avoidable kind of program avoided, programs must still be valid and varied */
	or_avoid = OR_AVOID_ALIASED_WRITE | OR_AVOID_SAME_FIELD_COPY | OR_AVOID_REDOP_SWITCH;
	long dropped1 = or_gen_dropped, nops1 = 0;
	for (uint64_t seed = 1; seed <= NSEEDS / 5; seed++) {
		or_generate(seed, a);
		nops1 += a->nop;
		if (or_validate(a, why, sizeof why)) {
			check(out, 0, "programs generated with --avoid are valid", why);
			break;
		}
	}
	check(out, or_gen_dropped == dropped1 && nops1 > NSEEDS / 5 * 10,
	      "the generator with --avoid drops no op", NULL);
	/* the families with every avoidable kind of program avoided */
	long dropped2 = or_gen_dropped;
	for (int sh = OR_SHAPE_ALTERNATE; sh <= OR_SHAPE_WAR; sh++) {
		or_shape = sh;
		for (uint64_t seed = 1; seed <= NSEEDS / 10; seed++) {
			or_generate(seed, a);
			if (or_validate(a, why, sizeof why)) {
				check(out, 0, "family programs generated with --avoid are valid",
				      why);
				break;
			}
		}
	}
	check(out, or_gen_dropped == dropped2, "the families with --avoid drop no op", NULL);
	or_shape = OR_SHAPE_CLASSIC;
	or_avoid = avoid;
	shape_cases(out);
	repeat_cases(out);
	or_shape = shape;
	free(a);
	free(b);
	return nfail;
}
