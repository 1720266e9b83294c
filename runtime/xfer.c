/* xfer.c: transfer views (coherence_ranks.c) are block views with an interface id of their own, so
 * that StarPU-MPI sends each with Tessera's MPI datatype: the box's values and the sender's poison
 * marks of the box, in the one message of the transfer. The receiver takes the marks over before
 * StarPU-MPI releases the view to the tasks that read it. Futures' values (a result broadcast, the
 * partial values an index launch gathers: future.c, fold_ranks.c) travel the same way, as
 * variables with an id of their own, with the future's poison: a value computed from a failed
 * task's output is poisoned on every rank that receives it.
 *
 * StarPU-MPI builds a request's datatype (xview_type) once the view is acquired (a send after
 * the box's writers, a receive after its readers), in its own thread, and frees it
 * (xview_type_free) when the message is in, before it releases the view; for a message that came
 * before its receive was posted, it unpacks the message with the same datatype and frees it, the
 * same way (StarPU-MPI 1.3's and 1.4's request code). Neither function is told which
 * transfer it serves: each view queues its transfers as they are submitted, and a datatype is
 * built for the oldest one. A receive writes the view and sends read it, so StarPU acquires them in
 * submission order; sends between two writes may swap among themselves, but they send the same
 * values, whose marks are the same. */
#include "config.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "coherence.h"

/* One submitted transfer of a view or a value: a receive or a send; for a view, where it stands in
 * this rank's submission order (the marks of tasks submitted before it are what it sends or
 * replaces); for a value, the future whose poison it sends or takes (a reference). */
struct xop {
	int recv;
	uint64_t before;
	struct tsr_fstate *fstate;
};

/* A handle's transfers not yet built, oldest first. Shared by the handle's owner (a view's node, a
 * future, a pooled partial value) and by its queued transfers: a view that coherence_ranks.c drops
 * (tsr__coh_xviews_flush) may still have some in StarPU-MPI's hands. */
struct tsr_xstate {
	pthread_mutex_t lock;
	int refs;      /* the owner's, and one per queued transfer */
	uint64_t root; /* a view's box of its root's field */
	int field;
	tsr_box_t box;
	struct xop *ops;
	int head, n, cap; /* ops[head..n) are queued */
};

static char xview_name[] = "TSR_TRANSFER_VIEW";
static char xvalue_name[] = "TSR_FUTURE_VALUE";
static struct starpu_data_interface_ops xview_ops, xvalue_ops;
static pthread_once_t xview_once = PTHREAD_ONCE_INIT;

/* StarPU's block and variable interfaces under ids of their own (StarPU hands out ids once per
 * process). */
static void make_ops(void)
{
	xview_ops = starpu_interface_block_ops;
	xview_ops.interfaceid = starpu_data_interface_get_next_id();
	xview_ops.name = xview_name;
	xvalue_ops = starpu_interface_variable_ops;
	xvalue_ops.interfaceid = starpu_data_interface_get_next_id();
	xvalue_ops.name = xvalue_name;
}

struct starpu_data_interface_ops *tsr__xview_ops(void)
{
	pthread_once(&xview_once, make_ops);
	return &xview_ops;
}

static struct starpu_data_interface_ops *value_ops(void)
{
	pthread_once(&xview_once, make_ops);
	return &xvalue_ops;
}

/* Whether h's user data is a transfer queue: a transfer view or a future's value (order.c: it is
 * not an ordering state). */
int tsr__is_xfer(starpu_data_handle_t h)
{
	enum starpu_data_interface_id id = starpu_data_get_interface_id(h);
	return id == tsr__xview_ops()->interfaceid || id == value_ops()->interfaceid;
}

static void xstate_unref(struct tsr_xstate *s)
{
	pthread_mutex_lock(&s->lock);
	int left = --s->refs;
	pthread_mutex_unlock(&s->lock);
	if (left)
		return;

	pthread_mutex_destroy(&s->lock);
	free(s->ops);
	free(s);
}

/* A handle's queue, held by its owner; the handle finds it as its user data. NULL when out of
 * memory: the handle then moves data without poison (the datatype finds no queue). */
static struct tsr_xstate *xstate_new(starpu_data_handle_t h)
{
	struct tsr_xstate *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;

	pthread_mutex_init(&s->lock, NULL);
	s->refs = 1;
	starpu_data_set_user_data(h, s);
	return s;
}

/* x's view was just registered: its transfer queue. */
void tsr__xview_attach(struct tsr_node *x)
{
	struct tsr_xstate *s = xstate_new(x->h);
	if (!s)
		return;

	s->root = x->region->root->id;
	s->field = x->field;
	s->box = x->transfer_box;
	x->xstate = s;
}

/* x's node goes (its handle unregistered or being unregistered). */
void tsr__xview_detach(struct tsr_node *x)
{
	if (x->xstate)
		xstate_unref(x->xstate);
	x->xstate = NULL;
}

/* Queue op, before its transfer is submitted to StarPU-MPI (whose thread may build it at once). */
static int push_op(struct tsr_xstate *s, struct xop op)
{
	pthread_mutex_lock(&s->lock);
	if (s->head == s->n)
		s->head = s->n = 0;
	if (s->n == s->cap && s->head > 0) {
		memmove(s->ops, s->ops + s->head, (size_t)(s->n - s->head) * sizeof *s->ops);
		s->n -= s->head;
		s->head = 0;
	}
	if (s->n == s->cap) {
		int ncap = s->cap ? 2 * s->cap : 4;
		struct xop *nv = realloc(s->ops, (size_t)ncap * sizeof *nv);
		if (!nv) {
			pthread_mutex_unlock(&s->lock);
			return TSR_ENOMEM;
		}
		s->ops = nv;
		s->cap = ncap;
	}
	s->ops[s->n++] = op;
	s->refs++;
	pthread_mutex_unlock(&s->lock);
	return TSR_OK;
}

/* The transfer just queued was refused by StarPU-MPI: it will never be built. */
static void pop_last(struct tsr_xstate *s)
{
	pthread_mutex_lock(&s->lock);
	tsr__assert(s->n > s->head);
	struct tsr_fstate *fs = s->ops[--s->n].fstate;
	s->refs--; /* the owner still holds its own */
	pthread_mutex_unlock(&s->lock);
	if (fs)
		tsr__fstate_unref(fs);
}

/* Queue a transfer of x. Fake ranks send nothing and receive through a task: no datatype is ever
 * built. */
int tsr__xview_expect(struct tsr_node *x, int recv)
{
	struct tsr_xstate *s = x->xstate;
	if (!s || tsr__dist_fake())
		return TSR_OK;

	struct xop op = {
		.recv = recv,
		.before = tsr__xfer_seq ? tsr__xfer_seq : tsr__submit_seq + 1,
		.fstate = NULL,
	};
	return push_op(s, op);
}

void tsr__xview_unexpect(struct tsr_node *x)
{
	struct tsr_xstate *s = x->xstate;
	if (!s || tsr__dist_fake())
		return;

	pop_last(s);
}

/* ------------------------------------------------------------------ futures' values */

/* Real ranks only: on one process, or on a fake rank, no value ever travels. */
static int values_travel(void)
{
	return tsr__dist.on && !tsr__dist_fake();
}

/* A future's value, or a partial value of one: a variable that StarPU allocates where it is first
 * written; with several ranks, under the id whose datatype sends the future's poison. */
void tsr__xvalue_register(starpu_data_handle_t *h, size_t size)
{
	if (!values_travel()) {
		starpu_variable_data_register(h, -1, 0, size);
		return;
	}

	struct starpu_variable_interface v = {
		.id = STARPU_VARIABLE_INTERFACE_ID,
		.ptr = 0,
		.dev_handle = 0,
		.offset = 0,
		.elemsize = size,
	};
	starpu_data_register(h, -1, &v, value_ops());
}

/* Before h is unregistered: its queue goes with its last queued transfer. */
void tsr__xvalue_forget(starpu_data_handle_t h)
{
	struct tsr_xstate *s = values_travel() ? starpu_data_get_user_data(h) : NULL;
	if (s)
		xstate_unref(s);
}

/* Queue a transfer of h, of future fs's value: the queue made the first time. */
static int expect_value(starpu_data_handle_t h, struct tsr_fstate *fs, int recv)
{
	struct tsr_xstate *s = starpu_data_get_user_data(h);
	if (!s && !(s = xstate_new(h)))
		return TSR_ENOMEM;

	tsr__fstate_ref(fs);
	struct xop op = {.recv = recv, .before = 0, .fstate = fs};
	int rc = push_op(s, op);
	if (rc)
		tsr__fstate_unref(fs);
	return rc;
}

/* Send h, a value of future fs, with the future's poison (tsr__dist_send's status). */
int tsr__xvalue_send(starpu_data_handle_t h, struct tsr_fstate *fs, int dest, int64_t tag,
		     size_t bytes)
{
	if (!values_travel())
		return tsr__dist_send(h, dest, tag, bytes);

	if (expect_value(h, fs, 0))
		return TSR_ENOMEM;
	int rc = tsr__dist_send(h, dest, tag, bytes);
	if (rc)
		pop_last(starpu_data_get_user_data(h));
	return rc;
}

/* Receive h, a value of future fs: the sender's poison is fs's too before h is released. */
int tsr__xvalue_recv(starpu_data_handle_t h, struct tsr_fstate *fs, int src, int64_t tag)
{
	if (!values_travel())
		return tsr__dist_recv(h, src, tag);

	if (expect_value(h, fs, 1))
		return TSR_ENOMEM;
	int rc = tsr__dist_recv(h, src, tag);
	if (rc)
		pop_last(starpu_data_get_user_data(h));
	return rc;
}

/* The oldest queued transfer of s, taken off the queue (its reference dropped): 0 if none. */
static int next_op(struct tsr_xstate *s, struct xop *op)
{
	pthread_mutex_lock(&s->lock);
	int got = s->head < s->n;
	if (got)
		*op = s->ops[s->head++];
	pthread_mutex_unlock(&s->lock);
	if (got)
		xstate_unref(s);
	return got;
}

#ifdef TSR_HAVE_MPI
#include <starpu_mpi.h>

/* The marks that travel with a box: the sender's marks cut to the box (poison.c's
 * tsr__field_poison_marks) and the first one's message, cut. Six boxes: what is left of one mark
 * after one write inside it. A fixed size: a message that comes before its receive is posted is
 * kept as raw bytes of the size the sender's datatype has, and unpacked with the receiver's. */
enum { XREC_BOXES = TSR_BOX_MINUS_MAX, XREC_MSG = 256 };
struct xrecord {
	int32_t n;
	int32_t unused;
	tsr_box_t boxes[XREC_BOXES];
	char msg[XREC_MSG];
};

/* One request's datatype: the record MPI sends from or receives into, and what the receiver
 * needs to apply it. Hung on the datatype as an attribute until xview_type_free. */
struct ticket {
	struct xrecord rec;
	int known; /* the view had a queued transfer (else: no marks either way) */
	struct xop op;
	uint64_t root;
	int field;
	tsr_box_t box;
};

static int keyval = MPI_KEYVAL_INVALID;

/* A request's ticket. StarPU-MPI asks for a datatype where it cannot fail: out of memory ends
 * the process, as StarPU's own allocations there do. */
static void *record_alloc(size_t size, const char *what)
{
	void *t = calloc(1, size);
	if (!t) {
		fprintf(stderr, "tessera: out of memory for %s\n", what);
		abort();
	}
	return t;
}

/* A request's datatype: count elements of data at the handle's host address, then rec_size bytes
 * of the record at rec; the ticket rides on it as an attribute until the request is done. */
static void type_with_record(starpu_data_handle_t h, int count, MPI_Datatype data, void *rec,
			     size_t rec_size, void *ticket, MPI_Datatype *type)
{
	MPI_Aint base, at;
	MPI_Get_address(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), &base);
	MPI_Get_address(rec, &at);
	int lens[2] = {count, (int)rec_size};
	MPI_Aint disps[2] = {0, MPI_Aint_diff(at, base)};
	MPI_Datatype types[2] = {data, MPI_BYTE};
	MPI_Type_create_struct(2, lens, disps, types, type);
	MPI_Type_commit(type);
	MPI_Type_set_attr(*type, keyval, ticket);
}

/* A done request's datatype freed, and the ticket it carried; NULL if it carried none (StarPU-MPI
 * also frees the datatype a request never built: a message that came before its receive). */
static void *ticket_of_done_type(MPI_Datatype *type)
{
	if (*type == (MPI_Datatype)0 || *type == MPI_DATATYPE_NULL)
		return NULL;

	void *t = NULL;
	int found = 0;
	MPI_Type_get_attr(*type, keyval, &t, &found);
	MPI_Type_free(type);
	return found ? t : NULL;
}

/* A view request's ticket: a send's record holds this rank's marks of the box before the transfer;
 * a receive's is filled by MPI. */
static struct ticket *ticket_new(starpu_data_handle_t h)
{
	struct ticket *t = record_alloc(sizeof *t, "a transfer's poison record");

	struct tsr_xstate *s = starpu_data_get_user_data(h);
	if (!s || !next_op(s, &t->op))
		return t;

	t->known = 1;
	t->root = s->root;
	t->field = s->field;
	t->box = s->box;
	if (!t->op.recv)
		t->rec.n = tsr__field_poison_marks(t->root, t->field, t->box, t->op.before,
						   t->rec.boxes, XREC_BOXES, t->rec.msg,
						   sizeof t->rec.msg);
	return t;
}

/* The block's values (rows of nx elements, ny rows a layer, nz layers), then the record. */
static int xview_type(starpu_data_handle_t h, MPI_Datatype *type)
{
	struct starpu_block_interface *b = starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM);
	size_t elem = b->elemsize;
	MPI_Datatype row_block, layers;
	MPI_Type_vector((int)b->ny, (int)(b->nx * elem), (int)(b->ldy * elem), MPI_BYTE,
			&row_block);
	MPI_Type_create_hvector((int)b->nz, 1, (MPI_Aint)(b->ldz * elem), row_block, &layers);

	struct ticket *t = ticket_new(h);
	type_with_record(h, 1, layers, &t->rec, sizeof t->rec, t, type);
	MPI_Type_free(&row_block);
	MPI_Type_free(&layers);
	return 0;
}

/* The request is done: a receive's marks are this rank's now (StarPU-MPI has not released the
 * view yet). StarPU-MPI also frees the datatype a request never built (a message that came before
 * its receive): there is nothing to do then. */
static void xview_type_free(MPI_Datatype *type)
{
	struct ticket *t = ticket_of_done_type(type);
	if (!t)
		return;

	if (t->known && t->op.recv) {
		int n = t->rec.n < 0 ? 0 : t->rec.n > XREC_BOXES ? XREC_BOXES : t->rec.n;
		t->rec.msg[XREC_MSG - 1] = 0;
		tsr__field_poison_received(t->root, t->field, t->box, t->op.before, t->rec.boxes, n,
					   t->rec.msg);
	}
	free(t);
}

/* A future's poison, with its value: whether the sender's future is poisoned, and the message,
 * cut. A fixed size, as a view's record. */
struct vrecord {
	int32_t poisoned;
	char msg[XREC_MSG];
};

/* One value request's datatype, as a view's ticket: the record, and the future a receive poisons
 * (op.fstate, a reference dropped with the ticket). */
struct vticket {
	struct vrecord rec;
	int known;
	struct xop op;
};

/* A send's record is the future's poison as it stands once its value is written: the tasks that
 * poison it (its points, a received partial value's record) end before StarPU-MPI acquires the
 * value to send it. */
static struct vticket *vticket_new(starpu_data_handle_t h)
{
	struct vticket *t = record_alloc(sizeof *t, "a future value's poison record");

	struct tsr_xstate *s = starpu_data_get_user_data(h);
	if (!s || !next_op(s, &t->op))
		return t;

	t->known = 1;
	if (t->op.recv)
		return t;

	const char *poison = tsr__fstate_poison(t->op.fstate);
	if (poison) {
		t->rec.poisoned = 1;
		snprintf(t->rec.msg, sizeof t->rec.msg, "%s", poison);
	}
	tsr__fstate_unref(t->op.fstate);
	t->op.fstate = NULL;
	return t;
}

/* The variable's bytes, then the record. */
static int xvalue_type(starpu_data_handle_t h, MPI_Datatype *type)
{
	size_t size = starpu_variable_get_elemsize(h);
	struct vticket *t = vticket_new(h);
	type_with_record(h, (int)size, MPI_BYTE, &t->rec, sizeof t->rec, t, type);
	return 0;
}

/* The request is done: a received poison is the future's now, before StarPU-MPI releases the
 * value to the tasks (or the wait) that read it. */
static void xvalue_type_free(MPI_Datatype *type)
{
	struct vticket *t = ticket_of_done_type(type);
	if (!t)
		return;

	if (t->known && t->op.recv) {
		t->rec.msg[XREC_MSG - 1] = 0;
		if (t->rec.poisoned)
			tsr__fstate_set_poison(t->op.fstate, t->rec.msg);
		tsr__fstate_unref(t->op.fstate);
	}
	free(t);
}

/* StarPU-MPI started: transfer views travel with their marks, futures' values with their
 * poison. Fake ranks send nothing. */
int tsr__xview_mpi_start(void)
{
	if (tsr__dist_fake())
		return TSR_OK;

	if (MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &keyval, NULL) !=
	    MPI_SUCCESS)
		return tsr__err(TSR_ESTARPU, "tsr_init: MPI_Type_create_keyval failed");

	starpu_mpi_interface_datatype_register(tsr__xview_ops()->interfaceid, xview_type,
					       xview_type_free);
	starpu_mpi_interface_datatype_register(value_ops()->interfaceid, xvalue_type,
					       xvalue_type_free);
	return TSR_OK;
}

/* After StarPU-MPI's shutdown, before MPI's. */
void tsr__xview_mpi_stop(void)
{
	if (keyval == MPI_KEYVAL_INVALID)
		return;

	starpu_mpi_interface_datatype_unregister(tsr__xview_ops()->interfaceid);
	starpu_mpi_interface_datatype_unregister(value_ops()->interfaceid);
	MPI_Type_free_keyval(&keyval);
	keyval = MPI_KEYVAL_INVALID;
}
#else
/* Without MPI no message is ever sent (fake ranks at most). */
int tsr__xview_mpi_start(void)
{
	return TSR_OK;
}

void tsr__xview_mpi_stop(void)
{
}
#endif
