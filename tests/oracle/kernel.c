/* kernel.c: the one task body and the host writes of the oracle. Both executors run exactly
 * this code, so any difference in results comes from the data the runtime hands to it. */
#include <math.h>
#include <string.h>
#include "oracle.h"

/* kernel_cuda.cu compiles this file a second time, for the GPU: the functions the task body uses
 * are then __host__ __device__, so both variants run this very code. */
#ifndef OR_HD
#define OR_HD
#endif

/* Every value the oracle stores is an integer of bounded magnitude (see or_type_limit), so
 * conversions between a field's type and int64_t are exact and reductions are associative and
 * commutative bit for bit whatever order the runtime folds them in. */
OR_HD int64_t or_to_i64(tsr_type_t t, const void *v)
{
	double d;
	switch (t) {
	case TSR_I32: {
		int32_t x;
		memcpy(&x, v, 4);
		return x;
	}
	case TSR_I64: {
		int64_t x;
		memcpy(&x, v, 8);
		return x;
	}
	case TSR_F32: {
		float x;
		memcpy(&x, v, 4);
		d = x;
		break;
	}
	case TSR_F64: {
		memcpy(&d, v, 8);
		break;
	}
	default:
		return 0;
	}
	/* A wrong value from the runtime may be anything: keep the conversion defined. */
	if (!(d > -9.0e18 && d < 9.0e18))
		return 0x7777;
	return (int64_t)d;
}

OR_HD void or_from_i64(tsr_type_t t, int64_t v, void *out)
{
	switch (t) {
	case TSR_I32: {
		int32_t x = (int32_t)(uint32_t)(uint64_t)v;
		memcpy(out, &x, 4);
		break;
	}
	case TSR_I64:
		memcpy(out, &v, 8);
		break;
	case TSR_F32: {
		float x = (float)v;
		memcpy(out, &x, 4);
		break;
	}
	case TSR_F64: {
		double x = (double)v;
		memcpy(out, &x, 8);
		break;
	}
	default:
		break;
	}
}

double or_type_limit(tsr_type_t t)
{
	switch (t) {
	case TSR_I32:
		return 1073741824.0; /* 2^30: sums of two stay in int32 */
	case TSR_F32:
		return 8388608.0; /* 2^23: every integer below is exact in a float */
	default:
		return 4503599627370496.0; /* 2^52: exact in a double, 3x fits in int64 */
	}
}

OR_HD static int is_float(tsr_type_t t)
{
	return t == TSR_F32 || t == TSR_F64;
}

OR_HD static void from_double(tsr_type_t t, double v, void *out)
{
	if (t == TSR_F32) {
		float x = (float)v;
		memcpy(out, &x, 4);
	} else {
		memcpy(out, &v, 8);
	}
}

OR_HD static double to_double(tsr_type_t t, const void *v)
{
	if (t == TSR_F32) {
		float x;
		memcpy(&x, v, 4);
		return x;
	}
	double x;
	memcpy(&x, v, 8);
	return x;
}

/* The identities: 0, 1, the type's largest value (min) and its smallest (max). */
static int64_t int_identity(tsr_type_t t, tsr_redop_t op)
{
	int64_t top = t == TSR_I32 ? INT32_MAX : INT64_MAX;
	if (op.id == TSR_SUM.id)
		return 0;
	if (op.id == TSR_PROD.id)
		return 1;
	return op.id == TSR_MIN.id ? top : -top - 1;
}

static double float_identity(tsr_redop_t op)
{
	if (op.id == TSR_SUM.id)
		return 0.0;
	if (op.id == TSR_PROD.id)
		return 1.0;
	return op.id == TSR_MIN.id ? INFINITY : -INFINITY;
}

void or_identity(tsr_type_t t, tsr_redop_t op, void *out)
{
	if (is_float(t))
		from_double(t, float_identity(op), out);
	else
		or_from_i64(t, int_identity(t, op), out);
}

/* a op b on integers: sums and products wrap (unsigned arithmetic) so that even a wrong input
 * never makes the oracle itself undefined. An int32's wrapped sum or product is the low half of
 * the int64 one, so one function serves both (or_from_i64 keeps that half). */
OR_HD static int64_t fold_int(tsr_redop_t op, int64_t a, int64_t b)
{
	if (op.id == TSR_SUM.id)
		return (int64_t)((uint64_t)a + (uint64_t)b);
	if (op.id == TSR_PROD.id)
		return (int64_t)((uint64_t)a * (uint64_t)b);
	if (op.id == TSR_MIN.id)
		return b < a ? b : a;
	return b > a ? b : a;
}

/* a op b on floats, in double. For two floats this is the float result bit for bit: their
 * product is exact in a double and rounds once, and their sum rounded to a double and then to a
 * float rounds as the float sum does (53 >= 2 * 24 + 2 bits); min and max pick one of them. */
OR_HD static double fold_float(tsr_redop_t op, double a, double b)
{
	return op.id == TSR_SUM.id    ? a + b
	       : op.id == TSR_PROD.id ? a * b
	       : op.id == TSR_MIN.id  ? (b < a ? b : a)
				      : (b > a ? b : a);
}

/* *acc = *acc op *val in the element type (every integer type read exactly by or_to_i64). */
OR_HD void or_fold(tsr_type_t t, tsr_redop_t op, void *acc, const void *val)
{
	if (is_float(t))
		from_double(t, fold_float(op, to_double(t, acc), to_double(t, val)), acc);
	else if (t == TSR_I32 || t == TSR_I64)
		or_from_i64(t, fold_int(op, or_to_i64(t, acc), or_to_i64(t, val)), acc);
}

void or_value_str(tsr_type_t t, const void *v, char *buf, size_t len)
{
	switch (t) {
	case TSR_I32:
	case TSR_I64:
		snprintf(buf, len, "%lld", (long long)or_to_i64(t, v));
		break;
	case TSR_F32: {
		uint32_t b;
		memcpy(&b, v, 4);
		snprintf(buf, len, "%.9g (0x%08x)", to_double(t, v), b);
		break;
	}
	case TSR_F64: {
		uint64_t b;
		memcpy(&b, v, 8);
		snprintf(buf, len, "%.17g (0x%016llx)", to_double(t, v), (unsigned long long)b);
		break;
	}
	default:
		snprintf(buf, len, "?");
		break;
	}
}

OR_HD void or_box_first(tsr_box_t b, int64_t x[3])
{
	for (int d = 0; d < 3; d++)
		x[d] = d < b.dim ? b.lo[d] : 0;
}

OR_HD int or_box_next(tsr_box_t b, int64_t x[3])
{
	for (int d = 0; d < b.dim; d++) {
		if (x[d] < b.hi[d]) {
			x[d]++;
			return 1;
		}
		x[d] = b.lo[d];
	}
	return 0;
}

OR_HD size_t or_elem_offset(const tsr_accessor_t *a, const int64_t x[3])
{
	int64_t off = 0;
	for (int d = 0; d < a->dim; d++)
		off += (x[d] - a->lo[d]) * (int64_t)(d == 0 ? 1 : a->stride[d]);
	return (size_t)off;
}

OR_HD static tsr_box_t acc_box(const tsr_accessor_t *a)
{
	tsr_box_t b = {a->dim, {0, 0, 0}, {0, 0, 0}};
	for (int d = 0; d < a->dim; d++) {
		b.lo[d] = a->lo[d];
		b.hi[d] = a->hi[d];
	}
	return b;
}

OR_HD static void *elem(const tsr_accessor_t *a, const int64_t x[3])
{
	return (char *)a->ptr + or_elem_offset(a, x) * a->elem_size;
}

/* Fold a value into [-500, 499]: keeps every stored value small and every sign present. */
OR_HD static int64_t m1000(int64_t v)
{
	return ((v % 1000) + 1000) % 1000 - 500;
}

/* Valid programs never overflow; a wrong value from the runtime may, and must not make the
 * oracle itself undefined: such sums are done in unsigned arithmetic. */
OR_HD static int64_t wrap(uint64_t v)
{
	return (int64_t)v;
}

OR_HD static int64_t lin(const int64_t x[3])
{
	return x[0] + 13 * x[1] + 17 * x[2];
}

OR_HD static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Contribution of one element to a REDUCE: small enough that the generator's bounds hold
 * (sum: |c| <= 3; product: 1, -1 or 2, never -1 on floats so that no -0.0 appears). */
OR_HD static int64_t contribution(tsr_redop_t op, tsr_type_t t, uint64_t h)
{
	if (op.id == TSR_SUM.id)
		return (int64_t)(h % 7) - 3;
	if (op.id == TSR_PROD.id) {
		int r = (int)(h % 8);
		if (r == 0)
			return 2;
		if ((t == TSR_I32 || t == TSR_I64) && r <= 2)
			return -1;
		return 1;
	}
	return (int64_t)(h % 1000) - 500;
}

/* Float contribution of an fp_order launch: fractions of very different scales, so that folds
 * round and their order shows in the bits. Bounded like the integer ones (sum: |c| <= 3;
 * product: positive and at most 2), so the validator's bounds still hold. */
OR_HD static double fp_contribution(tsr_redop_t op, uint64_t h)
{
	const double scale[4] = {1.0, 0.1, 0x1p-30, 1e-9};
	const double factor[4] = {1.1, 0.9, 1.3, 0.7};
	if (op.id == TSR_SUM.id)
		return (double)((int64_t)(h % 7) - 3) * scale[(h >> 8) % 4];
	if (op.id == TSR_PROD.id)
		return factor[(h >> 8) % 4];
	return (double)((int64_t)(h % 1000) - 500) * scale[(h >> 12) % 4];
}

OR_HD void or_kernel(const or_kargs_t *a, int pdim, const int64_t point[3],
		     tsr_accessor_t acc[][OR_MAXF], const void *const fut[], void *ret)
{
	/* 1. what the task reads: every READ / READ_WRITE element and every future, before any
	 * write */
	uint64_t h = 1469598103934665603ull;
	int64_t fsum = 0;
	for (int r = 0; r < a->nreq; r++) {
		const or_kreq_t *q = &a->req[r];
		if (q->kind == RQ_FUTURE) {
			fsum = wrap((uint64_t)fsum +
				    (uint64_t)or_to_i64((tsr_type_t)q->type[0], fut[r]) *
					    (uint64_t)(r + 1));
			continue;
		}
		if (q->priv != TSR_READ && q->priv != TSR_READ_WRITE)
			continue;
		for (int k = 0; k < q->nf; k++) {
			const tsr_accessor_t *ac = &acc[r][k];
			int64_t x[3];
			tsr_box_t b = acc_box(ac);
			or_box_first(b, x);
			do
				h = (h ^ (uint64_t)(or_to_i64(ac->type, elem(ac, x)) + 0x9e37)) *
				    1099511628211ull;
			while (or_box_next(b, x));
		}
	}
	int64_t c = (int64_t)(h % 997);
	int64_t pl = pdim ? point[0] + 5 * point[1] + 19 * point[2] : 7;

	/* 2. writes (every element) and reductions */
	for (int r = 0; r < a->nreq; r++) {
		const or_kreq_t *q = &a->req[r];
		if (q->kind == RQ_FUTURE || q->priv == TSR_READ)
			continue;
		for (int k = 0; k < q->nf; k++) {
			tsr_accessor_t *ac = &acc[r][k];
			tsr_type_t t = ac->type;
			int64_t x[3];
			tsr_box_t b = acc_box(ac);
			or_box_first(b, x);
			do {
				void *e = elem(ac, x);
				if (TSR_PRIV_IS_REDUCE(q->priv)) {
					tsr_redop_t op = TSR_PRIV_REDOP(q->priv);
					uint64_t hh = mix((uint64_t)(c * 31 + lin(x) * 17 + pl * 7 +
								     a->arg * 3 + q->field[k] * 5) +
							  (uint64_t)fsum);
					unsigned char v[8];
					if (a->fp_order && is_float(t))
						from_double(t, fp_contribution(op, hh), v);
					else
						or_from_i64(t, contribution(op, t, hh), v);
					or_fold(t, op, e, v);
				} else {
					int64_t old =
						q->priv == TSR_READ_WRITE ? or_to_i64(t, e) : 0;
					int64_t v =
						m1000(wrap(3 * (uint64_t)old +
							   (uint64_t)(c + 7 * lin(x) + 11 * pl +
								      a->arg + 101 * q->field[k]) +
							   (uint64_t)fsum));
					or_from_i64(t, v, e);
				}
			} while (or_box_next(b, x));
		}
	}

	/* 3. the return value */
	if (a->ret_type != TSR_NONE) {
		int64_t v;
		if (a->ret_mode) { /* product of the returns: stays tiny (at most 2^4) */
			v = (pl >= 0 && pl < 4 && c % 2 == 0) ? 2 : ((c + pl) % 3 == 0 ? -1 : 1);
		} else {
			v = m1000(wrap((uint64_t)(3 * c + 13 * pl + a->arg) + (uint64_t)fsum));
		}
		if (a->fp_order && is_float((tsr_type_t)a->ret_type)) {
			/* products stay small and positive; sums mix magnitudes 2^-20 to 2^20
			 * apart, plus a fraction, so that a sum of three returns rounds differently
			 * in another order */
			const double mag[3] = {1.0, 0x1p20, 0x1p-20};
			uint64_t hr = mix((uint64_t)(c * 29 + pl * 11 + a->arg) + (uint64_t)fsum);
			double d = a->ret_mode ? fp_contribution(TSR_PROD, hr)
					       : (double)v * mag[(hr >> 20) % 3] +
							 fp_contribution(TSR_SUM, hr);
			from_double((tsr_type_t)a->ret_type, d, ret);
			return;
		}
		or_from_i64((tsr_type_t)a->ret_type, v, ret);
	}
}

void or_host_write(tsr_accessor_t *acc, tsr_privilege_t priv, int64_t salt)
{
	int64_t x[3];
	tsr_box_t b = acc_box(acc);
	or_box_first(b, x);
	do {
		void *e = elem(acc, x);
		int64_t v = priv == TSR_READ_WRITE
				    ? m1000(wrap(2 * (uint64_t)or_to_i64(acc->type, e) +
						 (uint64_t)(lin(x) + salt)))
				    : m1000(3 * lin(x) + salt);
		or_from_i64(acc->type, v, e);
	} while (or_box_next(b, x));
}

int or_point_fails(const or_kargs_t *a, const int64_t point[3])
{
	return a->fail && (point[0] + point[1] + point[2]) % 2 == 0;
}

void or_kargs(const or_prog_t *p, const or_op_t *op, or_kargs_t *a)
{
	memset(a, 0, sizeof *a);
	a->fail = op->fail;
	a->nreq = op->nreq;
	a->ret_type = op->ret_type;
	a->ret_mode = op->ret_mode;
	a->ret_op = op->kind == OP_INDEX ? op->redop.id : 0;
	a->delay_us = op->delay_us;
	a->fp_order = op->fp_order;
	a->arg = op->ival;
	for (int r = 0; r < op->nreq; r++) {
		const or_req_t *q = &op->req[r];
		or_kreq_t *k = &a->req[r];
		k->kind = q->kind;
		k->priv = q->priv;
		if (q->kind == RQ_FUTURE) {
			k->type[0] = p->fut_type[q->obj];
			continue;
		}
		int root = q->kind == RQ_REGION ? p->node[q->obj].root
						: p->node[p->part[q->obj].parent].root;
		k->nf = q->nf;
		for (int i = 0; i < q->nf; i++) {
			k->field[i] = q->fields[i];
			k->type[i] = p->root[root].type[q->fields[i]];
		}
	}
}
