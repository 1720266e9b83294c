/* reduce.c: reduction operators (sum, prod, min, max per type, plus user-registered ones) and
 * the StarPU init/redux codelet pair for each (type, op), since StarPU passes no argument to
 * them. They work on block interfaces (region fields) and variable interfaces (futures). */
/* Reductions in Tessera, the one glossary of reduce.c, fold.c and launch.c (fold.c points here):
 *   operator (redop)   what combines two values: an identity and a fold, per element type; built
 *                      in (TSR_SUM, TSR_PROD, TSR_MIN, TSR_MAX) or registered (tsr_redop_register).
 *                      reduce.c holds them, with their CPU, CUDA and OpenCL bodies.
 *   REDUCE(op)         the privilege of a requirement whose points combine into a field with op.
 *   private buffer     a point's own buffer for a REDUCE requirement (private_redop, the same
 *                      name in a launch's requirement and in the context's): it starts at the
 *                      identity and is folded into the subregion after the point's task.
 *   fold (task)        a task that combines one private buffer, or one partial value, into its
 *                      target with op's fold, in launch (color) order: fold.c.
 *   partial value      a point's share of an index launch's reduced result: it starts at the
 *                      identity and is folded into the result future in launch order (fold.c).
 *   redux              StarPU's own reduction mode (STARPU_REDUX), which folds in arrival order:
 *                      used for TSR_REDUX=unordered only. Its init and redux codelets (reduce.c:
 *                      tsr__init_cl, tsr__redux_cl) are also the bodies of Tessera's own folds. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "internal.h"

#define TSR_MAX_USER_REDOPS 16

struct user_redop {
	char name[TSR_NAME_MAX];
	/* "REDUCE(name)", kept so messages need no shared buffer */
	char priv_name[TSR_NAME_MAX + 8];
	tsr_type_t type;
	size_t size;
	tsr_redop_identity_fn identity;
	tsr_redop_fold_fn fold;
};

static struct user_redop user_ops[TSR_MAX_USER_REDOPS];
static int nuser_ops;

/* Iterate over the elements of a block or variable interface. */
struct elems {
	char *ptr;
	uint32_t nx, ny, nz, ldy, ldz;
	size_t es;
};

static struct elems elems_of(void *iface)
{
	struct elems e;

	if (((struct starpu_block_interface *)iface)->id == STARPU_BLOCK_INTERFACE_ID) {
		struct starpu_block_interface *b = iface;
		e.ptr = (char *)b->ptr;
		e.nx = b->nx;
		e.ny = b->ny;
		e.nz = b->nz;
		e.ldy = b->ldy;
		e.ldz = b->ldz;
		e.es = b->elemsize;
	} else {
		struct starpu_variable_interface *v = iface;
		e.ptr = (char *)v->ptr;
		e.nx = e.ny = e.nz = 1;
		e.ldy = e.ldz = 1;
		e.es = v->elemsize;
	}

	return e;
}

/* The first element of row (y, z) of e. */
static inline char *row_of(const struct elems *e, uint32_t y, uint32_t z)
{
	return e->ptr + ((size_t)y * e->ldy + (size_t)z * e->ldz) * e->es;
}

/* A fold's source and destination: one (sub)region's or one future's buffers, of one shape. */
static inline int same_shape(const struct elems *d, const struct elems *s)
{
	return d->nx == s->nx && d->ny == s->ny && d->nz == s->nz && d->es == s->es;
}

/* The one init template: every element of the buffer becomes the operator's identity ID. */
#define DEF_INIT(T, TN, OP, ID)                                     \
	static void init_##TN##_##OP(void *b[], void *a)            \
	{                                                           \
		struct elems d = elems_of(b[0]);                    \
		for (uint32_t z = 0; z < d.nz; z++)                 \
			for (uint32_t y = 0; y < d.ny; y++) {       \
				T *p = (T *)row_of(&d, y, z);       \
				for (uint32_t x = 0; x < d.nx; x++) \
					p[x] = ID;                  \
			}                                           \
	}

/* The one redux template: every element of the destination folds the source's in, FOLD(p, q). */
#define DEF_REDUX(T, TN, OP, FOLD)                                        \
	static void redux_##TN##_##OP(void *b[], void *a)                 \
	{                                                                 \
		struct elems d = elems_of(b[0]), s = elems_of(b[1]);      \
		tsr__assert(same_shape(&d, &s));                          \
		for (uint32_t z = 0; z < d.nz; z++)                       \
			for (uint32_t y = 0; y < d.ny; y++) {             \
				T *p = (T *)row_of(&d, y, z);             \
				const T *q = (const T *)row_of(&s, y, z); \
				for (uint32_t x = 0; x < d.nx; x++)       \
					p[x] = FOLD(p[x], q[x]);          \
			}                                                 \
	}

#define FOLD_SUM(p, q) ((p) + (q))
#define FOLD_PROD(p, q) ((p) * (q))
#define FOLD_MIN(p, q) ((q) < (p) ? (q) : (p))
#define FOLD_MAX(p, q) ((q) > (p) ? (q) : (p))

/* The four built-in operators of one element type: their identities, and the folds above. */
#define DEF_OPS(T, TN, ID_SUM, ID_PROD, ID_MIN, ID_MAX) \
	DEF_INIT(T, TN, sum, ID_SUM)                    \
	DEF_INIT(T, TN, prod, ID_PROD)                  \
	DEF_INIT(T, TN, min, ID_MIN)                    \
	DEF_INIT(T, TN, max, ID_MAX)                    \
	DEF_REDUX(T, TN, sum, FOLD_SUM)                 \
	DEF_REDUX(T, TN, prod, FOLD_PROD)               \
	DEF_REDUX(T, TN, min, FOLD_MIN)                 \
	DEF_REDUX(T, TN, max, FOLD_MAX)

DEF_OPS(float, f32, 0.0f, 1.0f, INFINITY, -INFINITY)
DEF_OPS(double, f64, 0.0, 1.0, INFINITY, -INFINITY)
DEF_OPS(int32_t, i32, 0, 1, INT32_MAX, INT32_MIN)
DEF_OPS(int64_t, i64, 0, 1, INT64_MAX, INT64_MIN)

typedef void (*cl_fn)(void *[], void *);
/* [type F32..I64 -> 0..3][op SUM..MAX -> 0..3] */
static const cl_fn builtin_init[4][4] = {
	{init_f32_sum, init_f32_prod, init_f32_min, init_f32_max},
	{init_f64_sum, init_f64_prod, init_f64_min, init_f64_max},
	{init_i32_sum, init_i32_prod, init_i32_min, init_i32_max},
	{init_i64_sum, init_i64_prod, init_i64_min, init_i64_max},
};

static const cl_fn builtin_redux[4][4] = {
	{redux_f32_sum, redux_f32_prod, redux_f32_min, redux_f32_max},
	{redux_f64_sum, redux_f64_prod, redux_f64_min, redux_f64_max},
	{redux_i32_sum, redux_i32_prod, redux_i32_min, redux_i32_max},
	{redux_i64_sum, redux_i64_prod, redux_i64_min, redux_i64_max},
};

/* User operators: one trampoline per slot, since codelets get no argument. */
static void user_init(int k, void *iface)
{
	struct elems d = elems_of(iface);
	for (uint32_t z = 0; z < d.nz; z++)
		for (uint32_t y = 0; y < d.ny; y++) {
			char *p = row_of(&d, y, z);
			for (uint32_t x = 0; x < d.nx; x++)
				user_ops[k].identity(p + x * d.es);
		}
}

static void user_redux(int k, void *dst, void *src)
{
	struct elems d = elems_of(dst), s = elems_of(src);
	tsr__assert(same_shape(&d, &s));
	for (uint32_t z = 0; z < d.nz; z++)
		for (uint32_t y = 0; y < d.ny; y++) {
			char *p = row_of(&d, y, z);
			const char *q = row_of(&s, y, z);
			for (uint32_t x = 0; x < d.nx; x++)
				user_ops[k].fold(p + x * d.es, q + x * s.es);
		}
}

#define USER_TRAMP(k)                              \
	static void uinit_##k(void *b[], void *a)  \
	{                                          \
		user_init(k, b[0]);                \
	}                                          \
	static void uredux_##k(void *b[], void *a) \
	{                                          \
		user_redux(k, b[0], b[1]);         \
	}

/* One trampoline pair per slot, and the tables of them (laid out by hand). */
/* clang-format off */
USER_TRAMP(0)
USER_TRAMP(1)
USER_TRAMP(2)
USER_TRAMP(3)
USER_TRAMP(4)
USER_TRAMP(5)
USER_TRAMP(6)
USER_TRAMP(7)
USER_TRAMP(8)
USER_TRAMP(9)
USER_TRAMP(10)
USER_TRAMP(11)
USER_TRAMP(12)
USER_TRAMP(13)
USER_TRAMP(14)
USER_TRAMP(15)

static const cl_fn user_init_fn[TSR_MAX_USER_REDOPS] = {
	uinit_0, uinit_1, uinit_2, uinit_3, uinit_4, uinit_5, uinit_6, uinit_7,
	uinit_8, uinit_9, uinit_10, uinit_11, uinit_12, uinit_13, uinit_14, uinit_15,
};

static const cl_fn user_redux_fn[TSR_MAX_USER_REDOPS] = {
	uredux_0, uredux_1, uredux_2, uredux_3, uredux_4, uredux_5, uredux_6, uredux_7,
	uredux_8, uredux_9, uredux_10, uredux_11, uredux_12, uredux_13, uredux_14, uredux_15,
};
/* clang-format on */

#ifdef STARPU_USE_CUDA
/* CUDA versions (reduce_cuda.cu), one trampoline per (type, op) like the CPU ones. */
#define CUDA_TRAMP(t, o)                                      \
	static void cinit_##t##_##o(void *b[], void *a)       \
	{                                                     \
		tsr__cuda_redop(t + 1, o + 1, 1, b[0], NULL); \
	}                                                     \
	static void credux_##t##_##o(void *b[], void *a)      \
	{                                                     \
		tsr__cuda_redop(t + 1, o + 1, 0, b[0], b[1]); \
	}
#define CUDA_TRAMP4(t) CUDA_TRAMP(t, 0) CUDA_TRAMP(t, 1) CUDA_TRAMP(t, 2) CUDA_TRAMP(t, 3)

CUDA_TRAMP4(0)
CUDA_TRAMP4(1)
CUDA_TRAMP4(2)
CUDA_TRAMP4(3)

#define CROW(t, k)                                                 \
	{                                                          \
		k##_##t##_0, k##_##t##_1, k##_##t##_2, k##_##t##_3 \
	}
static const cl_fn cuda_init[4][4] = {CROW(0, cinit), CROW(1, cinit), CROW(2, cinit),
				      CROW(3, cinit)};
static const cl_fn cuda_redux[4][4] = {CROW(0, credux), CROW(1, credux), CROW(2, credux),
				       CROW(3, credux)};
#endif

#ifdef STARPU_USE_OPENCL
/* OpenCL versions (opencl.c): synchronous codelets, so each waits for its kernel. */
#define OPENCL_TRAMP(t, o)                                      \
	static void oinit_##t##_##o(void *b[], void *a)         \
	{                                                       \
		tsr__opencl_redop(t + 1, o + 1, 1, b[0], NULL); \
		tsr__opencl_finish();                           \
	}                                                       \
	static void oredux_##t##_##o(void *b[], void *a)        \
	{                                                       \
		tsr__opencl_redop(t + 1, o + 1, 0, b[0], b[1]); \
		tsr__opencl_finish();                           \
	}
#define OPENCL_TRAMP4(t) OPENCL_TRAMP(t, 0) OPENCL_TRAMP(t, 1) OPENCL_TRAMP(t, 2) OPENCL_TRAMP(t, 3)

OPENCL_TRAMP4(0)
OPENCL_TRAMP4(1)
OPENCL_TRAMP4(2)
OPENCL_TRAMP4(3)

#define OROW(t, k)                                                 \
	{                                                          \
		k##_##t##_0, k##_##t##_1, k##_##t##_2, k##_##t##_3 \
	}
static const cl_fn opencl_init[4][4] = {OROW(0, oinit), OROW(1, oinit), OROW(2, oinit),
					OROW(3, oinit)};
static const cl_fn opencl_redux[4][4] = {OROW(0, oredux), OROW(1, oredux), OROW(2, oredux),
					 OROW(3, oredux)};
#endif

/* StarPU 1.3.10 asserts that a reduction codelet's destination is exactly STARPU_RW; 1.4 that it
 * is STARPU_RW|STARPU_COMMUTE. */
#if STARPU_MAJOR_VERSION == 1 && STARPU_MINOR_VERSION <= 3
#define TSR_REDUX_DST_MODE STARPU_RW
#else
#define TSR_REDUX_DST_MODE (STARPU_RW | STARPU_COMMUTE)
#endif

static struct starpu_codelet builtin_init_cl[4][4], builtin_redux_cl[4][4];
static struct starpu_codelet user_init_cl[TSR_MAX_USER_REDOPS], user_redux_cl[TSR_MAX_USER_REDOPS];

static void make_cl(struct starpu_codelet *cl, cl_fn fn, int redux)
{
	memset(cl, 0, sizeof *cl);
	cl->cpu_funcs[0] = fn;
	cl->nbuffers = redux ? 2 : 1;
	cl->modes[0] = redux ? TSR_REDUX_DST_MODE : STARPU_W;
	cl->modes[1] = STARPU_R;
	cl->name = redux ? "tsr_redux" : "tsr_redux_init";
	cl->flags = STARPU_CODELET_NOPLANS;
}

void tsr__redops_reset(void)
{
	for (int t = 0; t < 4; t++)
		for (int o = 0; o < 4; o++) {
			make_cl(&builtin_init_cl[t][o], builtin_init[t][o], 0);
			make_cl(&builtin_redux_cl[t][o], builtin_redux[t][o], 1);
#ifdef STARPU_USE_CUDA
			builtin_init_cl[t][o].cuda_funcs[0] = cuda_init[t][o];
			builtin_init_cl[t][o].cuda_flags[0] = STARPU_CUDA_ASYNC;
			builtin_redux_cl[t][o].cuda_funcs[0] = cuda_redux[t][o];
			builtin_redux_cl[t][o].cuda_flags[0] = STARPU_CUDA_ASYNC;
#endif
#ifdef STARPU_USE_OPENCL
			builtin_init_cl[t][o].opencl_funcs[0] = opencl_init[t][o];
			builtin_redux_cl[t][o].opencl_funcs[0] = opencl_redux[t][o];
#endif
		}

	nuser_ops = 0;
}

const char *tsr__redop_name(int op)
{
	static const char *names[] = {"none", "sum", "prod", "min", "max"};

	if (op >= 0 && op <= TSR_MAX.id)
		return names[op];
	if (op >= TSR_REDOP_USER && op < TSR_REDOP_USER + nuser_ops)
		return user_ops[op - TSR_REDOP_USER].name;
	return "unknown";
}

/* "REDUCE(max)" or "REDUCE(<registered name>)": a string that lives as long as the operator, so
 * two privileges can be printed in one message. */
const char *tsr__redop_priv_name(int op)
{
	static const char *names[] = {"REDUCE(none)", "REDUCE(sum)", "REDUCE(prod)", "REDUCE(min)",
				      "REDUCE(max)"};

	if (op >= 0 && op <= TSR_MAX.id)
		return names[op];
	if (op >= TSR_REDOP_USER && op < TSR_REDOP_USER + nuser_ops)
		return user_ops[op - TSR_REDOP_USER].priv_name;
	return "REDUCE(unknown operator)";
}

/* 1 if op has code for every kind of device (the built-in operators); registered ones fold on
 * CPUs. */
int tsr__redop_on_devices(int op)
{
	return op >= TSR_SUM.id && op <= TSR_MAX.id;
}

/* 1 if op is a built-in operator or one registered since tsr_init. */
int tsr__redop_known(int op)
{
	return (op >= TSR_SUM.id && op <= TSR_MAX.id) ||
	       (op >= TSR_REDOP_USER && op < TSR_REDOP_USER + nuser_ops);
}

int tsr__redop_valid(tsr_type_t type, int op, const char *what)
{
	if (op >= TSR_SUM.id && op <= TSR_MAX.id) {
		if (type >= TSR_F32 && type <= TSR_I64)
			return TSR_OK;
		return tsr__err(TSR_ETYPE,
				"%s: reduction '%s' needs an f32/f64/i32/i64 element, not %s", what,
				tsr__redop_name(op), tsr_type_name(type));
	}

	if (op >= TSR_REDOP_USER && op < TSR_REDOP_USER + nuser_ops) {
		if (user_ops[op - TSR_REDOP_USER].type == type)
			return TSR_OK;
		return tsr__err(TSR_ETYPE, "%s: reduction '%s' is defined on %s, not %s", what,
				tsr__redop_name(op),
				tsr_type_name(user_ops[op - TSR_REDOP_USER].type),
				tsr_type_name(type));
	}

	if (op == TSR_REDOP_NONE.id)
		return tsr__err(TSR_EINVAL,
				"%s: no reduction operator given: pass TSR_SUM, TSR_PROD, TSR_MIN, "
				"TSR_MAX or an operator from tsr_redop_register",
				what);
	return tsr__redop_unknown(op, what);
}

int tsr__redop_unknown(int op, const char *what)
{
	/* `.redop = TSR_REDUCE(TSR_MAX)` in a designated initialiser compiles (C fills redop.id
	 * with the privilege, with only a -Wmissing-braces warning): name the mix-up */
	/* op > 0: no shift of a negative */
	if (op > 0 && TSR_PRIV_IS_REDUCE(op) && op == TSR_REDUCE(TSR_PRIV_REDOP(op)))
		return tsr__err(TSR_EINVAL,
				"%s: operator %d is the privilege REDUCE(%s), not an operator: "
				"pass the operator itself (write .redop = TSR_MAX, not .redop = "
				"TSR_REDUCE(TSR_MAX))",
				what, op, tsr__redop_name(TSR_PRIV_REDOP(op).id));

	return tsr__err(TSR_EINVAL,
			"%s: unknown reduction operator %d: pass TSR_SUM, TSR_PROD, TSR_MIN, "
			"TSR_MAX, an operator from tsr_redop_register, or TSR_REDOP_NONE",
			what, op);
}

struct starpu_codelet *tsr__init_cl(tsr_type_t type, int op)
{
	/* (type, op) passed tsr__redop_valid: a registered operator, or a built-in one on a number
	 */
	if (op >= TSR_REDOP_USER) {
		tsr__assert(op - TSR_REDOP_USER < nuser_ops);
		return &user_init_cl[op - TSR_REDOP_USER];
	}
	tsr__assert(type >= TSR_F32 && type <= TSR_I64 && op >= TSR_SUM.id && op <= TSR_MAX.id);
	return &builtin_init_cl[type - TSR_F32][op - TSR_SUM.id];
}

struct starpu_codelet *tsr__redux_cl(tsr_type_t type, int op)
{
	/* (type, op) passed tsr__redop_valid: a registered operator, or a built-in one on a number
	 */
	if (op >= TSR_REDOP_USER) {
		tsr__assert(op - TSR_REDOP_USER < nuser_ops);
		return &user_redux_cl[op - TSR_REDOP_USER];
	}
	tsr__assert(type >= TSR_F32 && type <= TSR_I64 && op >= TSR_SUM.id && op <= TSR_MAX.id);
	return &builtin_redux_cl[type - TSR_F32][op - TSR_SUM.id];
}

/* One element, on the host (futures folded by CPU variants through tsr_ctx_return). */
void tsr__redop_identity(tsr_type_t type, size_t size, int op, void *elem)
{
	struct starpu_variable_interface v = {.id = STARPU_VARIABLE_INTERFACE_ID,
					      .ptr = (uintptr_t)elem,
					      .elemsize = size};
	void *b[1] = {&v};

	tsr__init_cl(type, op)->cpu_funcs[0](b, NULL);
}

void tsr__redop_fold(tsr_type_t type, size_t size, int op, void *acc, const void *val)
{
	struct starpu_variable_interface d = {.id = STARPU_VARIABLE_INTERFACE_ID,
					      .ptr = (uintptr_t)acc,
					      .elemsize = size};
	struct starpu_variable_interface s = {.id = STARPU_VARIABLE_INTERFACE_ID,
					      .ptr = (uintptr_t)val,
					      .elemsize = size};
	void *b[2] = {&d, &s};

	tsr__redux_cl(type, op)->cpu_funcs[0](b, NULL);
}

/* Install the (type, op) methods on a handle. StarPU reads them when a reduction epoch ends,
 * i.e. when the next non-REDUX access *runs*, not when it is submitted: before replacing another
 * operator's methods, wait for the handle's earlier accesses (a host sync, only on an operator
 * change of one field). */
void tsr__node_set_redux(struct tsr_node *n, tsr_type_t type, int op)
{
	if (n->redop_set == op)
		return;

	if (n->redop_set)
		tsr__wait_handle(n->h);
	starpu_data_set_reduction_methods(n->h, tsr__redux_cl(type, op), tsr__init_cl(type, op));
	n->redop_set = op;
}

int tsr_redop_register(const char *name, tsr_type_t type, size_t bytes,
		       tsr_redop_identity_fn identity, tsr_redop_fold_fn fold, tsr_redop_t *op)
{
	const char *what = "tsr_redop_register";
	TSR_REQUIRE_INIT(what);

	if (!name || !*name)
		return tsr__err(TSR_EINVAL, "%s: operator name missing", what);
	if (strlen(name) >= TSR_NAME_MAX)
		return tsr__err(TSR_EINVAL,
				"%s: operator '%s' has a name longer than %d characters", what,
				name, TSR_NAME_MAX - 1);
	if (!identity || !fold || !op)
		return tsr__err(TSR_EINVAL, "%s: operator '%s': null %s", what, name,
				!identity ? "identity function"
				: !fold   ? "fold function"
					  : "output");

	size_t size = type == TSR_BYTES ? bytes : tsr_type_size(type);
	if (size == 0)
		return tsr__err(TSR_EINVAL, "%s: operator '%s': invalid type %d or zero byte size",
				what, name, (int)type);

	for (int i = 0; i < nuser_ops; i++)
		if (!strcmp(user_ops[i].name, name))
			return tsr__err(TSR_EINVAL, "%s: operator '%s' is already registered", what,
					name);

	if (nuser_ops == TSR_MAX_USER_REDOPS)
		return tsr__err(TSR_ENOMEM, "%s: operator '%s': at most %d user operators", what,
				name, TSR_MAX_USER_REDOPS);

	int k = nuser_ops++;
	strcpy(user_ops[k].name, name);
	snprintf(user_ops[k].priv_name, sizeof user_ops[k].priv_name, "REDUCE(%s)", name);
	user_ops[k].type = type;
	user_ops[k].size = size;
	user_ops[k].identity = identity;
	user_ops[k].fold = fold;

	make_cl(&user_init_cl[k], user_init_fn[k], 0);
	make_cl(&user_redux_cl[k], user_redux_fn[k], 1);
	op->id = TSR_REDOP_USER + k;
	return TSR_OK;
}

/* Returns strings that outlive the call (no shared buffer), so one message can hold two. */
const char *tsr__priv_name(tsr_privilege_t p)
{
	switch (p) {
	case TSR_READ:
		return "READ";
	case TSR_WRITE:
		return "WRITE";
	case TSR_READ_WRITE:
		return "READ_WRITE";
	}

	if (p > 0 && TSR_PRIV_IS_REDUCE(p))
		return tsr__redop_priv_name(TSR_PRIV_REDOP(p).id);
	return "invalid privilege";
}
