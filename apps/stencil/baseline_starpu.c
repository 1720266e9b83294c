/* baseline_starpu.c: the same diffusion written directly on StarPU, the way its examples/stencil
 * does it: every tile owns its storage with the halo around it, and small tasks copy boundaries
 * between neighbours. --compare measures Tessera against it to show what the region layer costs. */
#include "config.h"

#include <starpu.h>
#include <stdlib.h>
#include <string.h>

#include "stencil_app.h"

/* Neighbours in the order the unpack task fills the halo from them. */
enum { NB_S, NB_N, NB_W, NB_E, NB_SW, NB_SE, NB_NW, NB_NE, NB_COUNT };

struct raw_tile {
	/* first interior point, global coordinates (halo included) */
	int gi, gj, gk;
	int ni, nj, nk; /* interior extents */
	void *buf[2];   /* the two fields, (nk, nj + 2h, ni + 2h) each */
	starpu_data_handle_t h[2];
	/* packed boundary strips S, N (h x ni), W, E (nj x h), per plane */
	void *edge;
	starpu_data_handle_t he;
	int nbr[NB_COUNT];
};

struct sp_raw {
	stencil_problem_t p;
	int ntiles;
	struct raw_tile *t;
	int result; /* field slot holding the final result */
};

/* What unpack needs to find its neighbours' strips: the slot of each neighbour's edge buffer among
 * the task's buffers (1..), and the neighbour's extents (strips are laid out by them). */
struct unpack_args {
	int slot[NB_COUNT];
	int ni[NB_COUNT], nj[NB_COUNT];
};

static size_t off_n(int ni, int nk)
{
	return (size_t)nk * SH * (size_t)ni;
}
static size_t off_w(int ni, int nk)
{
	return 2 * off_n(ni, nk);
}
static size_t off_e(int ni, int nj, int nk)
{
	return off_w(ni, nk) + (size_t)nk * (size_t)nj * SH;
}
static size_t edge_elems(int ni, int nj, int nk)
{
	return 2 * (size_t)nk * SH * ((size_t)ni + (size_t)nj);
}

struct blk {
	char *p;
	ptrdiff_t sj, sk;
	int ni, nj, nk;
	size_t es;
};
static struct blk blk_of(void *iface)
{
	struct blk b;
	b.p = (char *)STARPU_BLOCK_GET_PTR(iface);
	b.sj = STARPU_BLOCK_GET_LDY(iface);
	b.sk = STARPU_BLOCK_GET_LDZ(iface);
	b.ni = (int)STARPU_BLOCK_GET_NX(iface) - 2 * SH;
	b.nj = (int)STARPU_BLOCK_GET_NY(iface) - 2 * SH;
	b.nk = (int)STARPU_BLOCK_GET_NZ(iface);
	b.es = STARPU_BLOCK_GET_ELEMSIZE(iface);
	return b;
}
/* Address of local point (i, j) of plane 0, local coordinates including the halo. */
static char *blk_at(const struct blk *b, int i, int j)
{
	return b->p + ((ptrdiff_t)j * b->sj + i) * (ptrdiff_t)b->es;
}

static void pack_cpu(void *buffers[], void *cl_arg)
{
	struct blk b = blk_of(buffers[0]);
	char *e = (char *)STARPU_VECTOR_GET_PTR(buffers[1]);
	const ptrdiff_t es = (ptrdiff_t)b.es;
	(void)cl_arg;
	stencil_copy_box(blk_at(&b, SH, SH), b.sj, b.sk, e, b.ni, SH * b.ni, b.ni, SH, b.nk, b.es);
	stencil_copy_box(blk_at(&b, SH, b.nj), b.sj, b.sk, e + (ptrdiff_t)off_n(b.ni, b.nk) * es,
			 b.ni, SH * b.ni, b.ni, SH, b.nk, b.es);
	stencil_copy_box(blk_at(&b, SH, SH), b.sj, b.sk, e + (ptrdiff_t)off_w(b.ni, b.nk) * es, SH,
			 (ptrdiff_t)SH * b.nj, SH, b.nj, b.nk, b.es);
	stencil_copy_box(blk_at(&b, b.ni, SH), b.sj, b.sk,
			 e + (ptrdiff_t)off_e(b.ni, b.nj, b.nk) * es, SH, (ptrdiff_t)SH * b.nj, SH,
			 b.nj, b.nk, b.es);
}

static void unpack_cpu(void *buffers[], void *cl_arg)
{
	const struct unpack_args *a = cl_arg;
	struct blk b = blk_of(buffers[0]);
	const ptrdiff_t es = (ptrdiff_t)b.es;
	const char *e[NB_COUNT];
	for (int n = 0; n < NB_COUNT; n++)
		e[n] = (const char *)STARPU_VECTOR_GET_PTR(buffers[a->slot[n]]);
	/* rows below and above (i over the interior) from the N and S strips of the j-neighbours */
	stencil_copy_box(e[NB_S] + (ptrdiff_t)off_n(a->ni[NB_S], b.nk) * es, b.ni, SH * b.ni,
			 blk_at(&b, SH, 0), b.sj, b.sk, b.ni, SH, b.nk, b.es);
	stencil_copy_box(e[NB_N], b.ni, SH * b.ni, blk_at(&b, SH, b.nj + SH), b.sj, b.sk, b.ni, SH,
			 b.nk, b.es);
	/* columns left and right (j over the interior) from the E and W strips of the
	 * i-neighbours */
	stencil_copy_box(e[NB_W] + (ptrdiff_t)off_e(a->ni[NB_W], b.nj, b.nk) * es, SH,
			 (ptrdiff_t)SH * b.nj, blk_at(&b, 0, SH), b.sj, b.sk, SH, b.nj, b.nk, b.es);
	stencil_copy_box(e[NB_E] + (ptrdiff_t)off_w(a->ni[NB_E], b.nk) * es, SH,
			 (ptrdiff_t)SH * b.nj, blk_at(&b, b.ni + SH, SH), b.sj, b.sk, SH, b.nj,
			 b.nk, b.es);
	/* corners from the diagonal neighbours' S and N strips (the halo is the periodic image) */
	stencil_copy_box(e[NB_SW] + ((ptrdiff_t)off_n(a->ni[NB_SW], b.nk) + a->ni[NB_SW] - SH) * es,
			 a->ni[NB_SW], SH * a->ni[NB_SW], blk_at(&b, 0, 0), b.sj, b.sk, SH, SH,
			 b.nk, b.es);
	stencil_copy_box(e[NB_SE] + (ptrdiff_t)off_n(a->ni[NB_SE], b.nk) * es, a->ni[NB_SE],
			 SH * a->ni[NB_SE], blk_at(&b, b.ni + SH, 0), b.sj, b.sk, SH, SH, b.nk,
			 b.es);
	stencil_copy_box(e[NB_NW] + (ptrdiff_t)(a->ni[NB_NW] - SH) * es, a->ni[NB_NW],
			 SH * a->ni[NB_NW], blk_at(&b, 0, b.nj + SH), b.sj, b.sk, SH, SH, b.nk,
			 b.es);
	stencil_copy_box(e[NB_NE], a->ni[NB_NE], SH * a->ni[NB_NE],
			 blk_at(&b, b.ni + SH, b.nj + SH), b.sj, b.sk, SH, SH, b.nk, b.es);
}

static void compute_cpu(void *buffers[], void *cl_arg)
{
	struct blk in = blk_of(buffers[0]), out = blk_of(buffers[1]);
	void *ring = malloc(stencil_ring_elems(in.ni) * in.es);
	const int nt = *(const int *)cl_arg; /* the problem's choice of streaming stores */
	STARPU_ASSERT_MSG(ring, "stencil raw baseline: out of memory for a ring of %d points",
			  in.ni);
	if (in.es == sizeof(double))
		stencil_fused_f64((const double *)blk_at(&in, SH, SH), in.sj, in.sk,
				  (double *)blk_at(&out, SH, SH), out.sj, out.sk, in.ni, in.nj,
				  in.nk, STENCIL_ALPHA, ring, nt);
	else
		stencil_fused_f32((const float *)blk_at(&in, SH, SH), in.sj, in.sk,
				  (float *)blk_at(&out, SH, SH), out.sj, out.sk, in.ni, in.nj,
				  in.nk, (float)STENCIL_ALPHA, ring, nt);
	free(ring);
}

/* History-based models, as Tessera gives its tasks, so that dmda sees both alike. */
static struct starpu_perfmodel pack_model = {.type = STARPU_HISTORY_BASED,
					     .symbol = "stencil_raw_pack"};
static struct starpu_perfmodel unpack_model = {.type = STARPU_HISTORY_BASED,
					       .symbol = "stencil_raw_unpack"};
static struct starpu_perfmodel compute_model = {.type = STARPU_HISTORY_BASED,
						.symbol = "stencil_raw_compute"};

static struct starpu_codelet pack_cl = {
	.cpu_funcs = {pack_cpu},
	.nbuffers = 2,
	.modes = {STARPU_R, STARPU_W},
	.name = "stencil_raw_pack",
	.model = &pack_model,
};
static struct starpu_codelet unpack_cl = {
	.cpu_funcs = {unpack_cpu},
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.name = "stencil_raw_unpack",
	.model = &unpack_model,
};
static struct starpu_codelet compute_cl = {
	.cpu_funcs = {compute_cpu},
	.nbuffers = 2,
	.modes = {STARPU_R, STARPU_W},
	.name = "stencil_raw_compute",
	.model = &compute_model,
};

static int tile_index(const stencil_problem_t *p, int ti, int tj, int tk)
{
	ti = (ti + p->tx) % p->tx; /* periodic neighbours */
	tj = (tj + p->ty) % p->ty;
	return (tk * p->ty + tj) * p->tx + ti;
}

void sp_raw_destroy(sp_raw_t *r)
{
	if (!r)
		return;
	for (int t = 0; r->t && t < r->ntiles; t++) {
		struct raw_tile *x = &r->t[t];
		for (int f = 0; f < 2; f++) {
			if (x->h[f])
				starpu_data_unregister(x->h[f]);
			free(x->buf[f]);
		}
		if (x->he)
			starpu_data_unregister(x->he);
		free(x->edge);
	}
	free(r->t);
	free(r);
}

sp_raw_t *sp_raw_create(const stencil_problem_t *p)
{
	struct sp_raw *r = calloc(1, sizeof *r);
	const size_t es = sp_elem(p);
	if (!r)
		return NULL;
	r->p = *p;
	r->ntiles = p->tx * p->ty * p->tz;
	r->t = calloc((size_t)r->ntiles, sizeof *r->t);
	if (!r->t)
		goto fail;
	for (int tk = 0; tk < p->tz; tk++)
		for (int tj = 0; tj < p->ty; tj++)
			for (int ti = 0; ti < p->tx; ti++) {
				struct raw_tile *x = &r->t[tile_index(p, ti, tj, tk)];
				sp_tile_range(p->nx, p->tx, ti, &x->gi, &x->ni);
				sp_tile_range(p->ny, p->ty, tj, &x->gj, &x->nj);
				sp_tile_range(p->nz, p->tz, tk, &x->gk, &x->nk);
				x->gi += SH;
				x->gj += SH;
				const int di[NB_COUNT] = {0, 0, -1, 1, -1, 1, -1, 1};
				const int dj[NB_COUNT] = {-1, 1, 0, 0, -1, -1, 1, 1};
				for (int n = 0; n < NB_COUNT; n++)
					x->nbr[n] = tile_index(p, ti + di[n], tj + dj[n], tk);
				size_t sj = (size_t)x->ni + 2 * SH,
				       sk = sj * ((size_t)x->nj + 2 * SH);
				for (int f = 0; f < 2; f++) {
					if (!(x->buf[f] = calloc(sk * (size_t)x->nk, es)))
						goto fail;
					starpu_block_data_register(&x->h[f], STARPU_MAIN_RAM,
								   (uintptr_t)x->buf[f],
								   (uint32_t)sj, (uint32_t)sk,
								   (uint32_t)sj,
								   (uint32_t)(x->nj + 2 * SH),
								   (uint32_t)x->nk, es);
				}
				if (!(x->edge = calloc(edge_elems(x->ni, x->nj, x->nk), es)))
					goto fail;
				starpu_vector_data_register(&x->he, STARPU_MAIN_RAM,
							    (uintptr_t)x->edge,
							    (uint32_t)edge_elems(x->ni, x->nj,
										 x->nk),
							    es);
			}
	return r;
fail:
	sp_raw_destroy(r);
	return NULL;
}

/* Field slot f of every tile gets the initial condition (interior; the halo is zero and is
 * refreshed before it is read). */
static int raw_init(struct sp_raw *r, int f)
{
	const stencil_problem_t *p = &r->p;
	const size_t es = sp_elem(p);
	for (int t = 0; t < r->ntiles; t++) {
		struct raw_tile *x = &r->t[t];
		ptrdiff_t sj = x->ni + 2 * SH, sk = sj * (x->nj + 2 * SH);
		if (starpu_data_acquire(x->h[f], STARPU_W) != 0)
			return -1;
		memset(x->buf[f], 0, (size_t)sk * (size_t)x->nk * es);
		for (int k = 0; k < x->nk; k++)
			for (int j = 0; j < x->nj; j++)
				for (int i = 0; i < x->ni; i++)
					if (sp_initial_is_one(p, x->gk + k, x->gj + j, x->gi + i)) {
						char *e = (char *)x->buf[f] +
							  ((k * sk) + (j + SH) * sj + i + SH) *
								  (ptrdiff_t)es;
						if (p->f32)
							*(float *)e = 1.0f;
						else
							*(double *)e = 1.0;
					}
		starpu_data_release(x->h[f]);
	}
	return 0;
}

static int raw_halo(struct sp_raw *r, int f)
{
	for (int t = 0; t < r->ntiles; t++)
		if (starpu_task_insert(&pack_cl, STARPU_R, r->t[t].h[f], STARPU_W, r->t[t].he, 0) !=
		    0)
			return -1;
	for (int t = 0; t < r->ntiles; t++) {
		struct raw_tile *x = &r->t[t];
		struct starpu_data_descr d[1 + NB_COUNT];
		struct unpack_args *a = malloc(sizeof *a); /* StarPU frees it with the task */
		int nd = 1;
		if (!a)
			return -1;
		d[0].handle = x->h[f];
		d[0].mode = STARPU_RW;
		/* a handle appears once per task even when one tile is several neighbours (1 or 2
		 * tiles in a dimension) */
		for (int n = 0; n < NB_COUNT; n++) {
			struct raw_tile *y = &r->t[x->nbr[n]];
			int s = 1;
			while (s < nd && d[s].handle != y->he)
				s++;
			if (s == nd) {
				d[nd].handle = y->he;
				d[nd].mode = STARPU_R;
				nd++;
			}
			a->slot[n] = s;
			a->ni[n] = y->ni;
			a->nj[n] = y->nj;
		}
		if (starpu_task_insert(&unpack_cl, STARPU_DATA_MODE_ARRAY, d, nd, STARPU_CL_ARGS, a,
				       sizeof *a, 0) != 0)
			return -1;
	}
	return 0;
}

double sp_raw_run(sp_raw_t *r)
{
	const stencil_problem_t *p = &r->p;
	int cur = 0;
	double t0;

	if (raw_init(r, 0) != 0)
		return -1.0;
	t0 = app_now();
	for (int n = 0; n < p->iter; n++) {
		if (raw_halo(r, cur) != 0)
			return -1.0;
		for (int t = 0; t < r->ntiles; t++)
			if (starpu_task_insert(&compute_cl, STARPU_R, r->t[t].h[cur], STARPU_W,
					       r->t[t].h[1 - cur], STARPU_CL_ARGS_NFREE, &r->p.nt,
					       sizeof r->p.nt, 0) != 0)
				return -1.0;
		if (n < p->iter - 1)
			cur = 1 - cur;
		else if (raw_halo(r, 1 - cur) != 0)
			return -1.0;
	}
	starpu_task_wait_for_all();
	r->result = 1 - cur;
	return app_now() - t0;
}

const char *sp_raw_policy(int *nworkers)
{
	/* starpu_task_insert submits to the calling thread's context: the global one (0) unless the
	 * thread was given another */
	unsigned ctx = starpu_sched_ctx_get_context();
	struct starpu_sched_policy *policy;
	if (ctx >= STARPU_NMAX_SCHED_CTXS)
		ctx = 0;
	policy = starpu_sched_ctx_get_sched_policy(ctx);
	*nworkers = (int)starpu_sched_ctx_get_nworkers(ctx);
	return policy && policy->policy_name ? policy->policy_name : "default";
}

int sp_raw_result(sp_raw_t *r, void *field)
{
	const stencil_problem_t *p = &r->p;
	const ptrdiff_t es = (ptrdiff_t)sp_elem(p), gsj = sp_sj(p), gsk = sp_sk(p);
	for (int t = 0; t < r->ntiles; t++) {
		struct raw_tile *x = &r->t[t];
		ptrdiff_t sj = x->ni + 2 * SH, sk = sj * (x->nj + 2 * SH);
		if (starpu_data_acquire(x->h[r->result], STARPU_R) != 0)
			return -1;
		/* the tile's interior, and the part of its halo that is the global halo */
		for (int k = 0; k < x->nk; k++)
			for (int j = 0; j < x->nj + 2 * SH; j++)
				for (int i = 0; i < x->ni + 2 * SH; i++) {
					int gj = x->gj - SH + j, gi = x->gi - SH + i;
					int in_i = i >= SH && i < x->ni + SH,
					    in_j = j >= SH && j < x->nj + SH;
					int gh_i = gi < SH || gi >= p->nx + SH,
					    gh_j = gj < SH || gj >= p->ny + SH;
					if ((in_i || gh_i) && (in_j || gh_j))
						memcpy((char *)field +
							       ((x->gk + k) * gsk + gj * gsj + gi) *
								       es,
						       (const char *)x->buf[r->result] +
							       (k * sk + j * sj + i) * es,
						       (size_t)es);
				}
		starpu_data_release(x->h[r->result]);
	}
	return 0;
}
