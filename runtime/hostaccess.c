/* hostaccess.c: fill and copy (internal tasks that go through the normal launch path, so they
 * get the same checks and dependencies as user tasks) and host mapping (the coherence tokens,
 * then starpu_data_acquire: the host waits only for the tasks touching that data). */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static tsr_task_t fill_task, copy_task;

struct mapping {
	struct tsr_region *region;
	int field;
	struct tsr_node *node;
	/* tokens of overlapping writers the host holds (coherence.c) */
	struct tsr_deps held;
	struct mapping *next;
};

/* Give back what a mapping holds (the node's handle if acquired, then the tokens) and free it. */
static void mapping_drop(struct mapping *m, int data_held)
{
	tsr__assert(m->node && m->node->h); /* a mapped node is registered */
	if (data_held)
		starpu_data_release_on_node(m->node->h, STARPU_MAIN_RAM);
	tsr__coh_release(&m->held);
	tsr__deps_free(&m->held);
	free(m);
}

static struct mapping *mappings;

/* Walk the rows of an accessor: calls fn(row pointer, row elements) for each (y, z). */
#define FOR_ROWS(a, rowptr, body)                                                                  \
	for (int64_t z = 0; z <= (a)->hi[2] - (a)->lo[2]; z++)                                     \
		for (int64_t y = 0; y <= (a)->hi[1] - (a)->lo[1]; y++) {                           \
			char *rowptr = (char *)(a)->ptr +                                          \
				       (y * (a)->stride[1] + z * (a)->stride[2]) * (a)->elem_size; \
			body                                                                       \
		}

static void fill_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	int f = *(const int *)args;
	const char *val = (const char *)args + sizeof(int);

	if (tsr_ctx_accessor(ctx, 0, f, TSR_NONE, TSR_WRITE, &a))
		return;

	tsr__assert(arglen == sizeof(int) + a.elem_size); /* tsr_fill checked the value's size */
	int64_t nx = a.hi[0] - a.lo[0] + 1;
	FOR_ROWS(&a, row, {
		if (a.elem_size == 8) {
			uint64_t v;
			memcpy(&v, val, 8);
			for (int64_t x = 0; x < nx; x++)
				((uint64_t *)row)[x] = v;
		} else if (a.elem_size == 4) {
			uint32_t v;
			memcpy(&v, val, 4);
			for (int64_t x = 0; x < nx; x++)
				((uint32_t *)row)[x] = v;
		} else {
			for (int64_t x = 0; x < nx; x++)
				memcpy(row + x * a.elem_size, val, a.elem_size);
		}
	})
}

static void copy_cpu(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const int *f = args;
	tsr_accessor_t s, d;

	if (tsr_ctx_accessor(ctx, 0, f[0], TSR_NONE, TSR_READ, &s) ||
	    tsr_ctx_accessor(ctx, 1, f[1], TSR_NONE, TSR_WRITE, &d))
		return;

	/* tsr_copy checked that both are boxes of one shape and one type */
	tsr__assert(s.elem_size == d.elem_size && s.hi[0] - s.lo[0] == d.hi[0] - d.lo[0]);
	size_t row = (size_t)(s.hi[0] - s.lo[0] + 1) * s.elem_size;
	for (int64_t z = 0; z <= s.hi[2] - s.lo[2]; z++)
		for (int64_t y = 0; y <= s.hi[1] - s.lo[1]; y++)
			memcpy((char *)d.ptr + (y * d.stride[1] + z * d.stride[2]) * d.elem_size,
			       (const char *)s.ptr +
				       (y * s.stride[1] + z * s.stride[2]) * s.elem_size,
			       row);
}

#ifdef STARPU_USE_CUDA
/* CUDA bodies (hostaccess_cuda.cu): a field that lives on a GPU is filled and copied there. */
int tsr__cuda_fill(const tsr_accessor_t *a, const void *value, void *stream);
int tsr__cuda_copy(const tsr_accessor_t *d, const tsr_accessor_t *s, void *stream);

static void fill_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	int f = *(const int *)args;
	const char *val = (const char *)args + sizeof(int);

	if (tsr_ctx_accessor(ctx, 0, f, TSR_NONE, TSR_WRITE, &a))
		return;

	int e = tsr__cuda_fill(&a, val, tsr_ctx_cuda_stream(ctx));
	if (e)
		tsr_ctx_error(ctx, "field %d: CUDA fill failed (cudaError %d)", f, e);
}

static void copy_cuda(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const int *f = args;
	tsr_accessor_t s, d;

	if (tsr_ctx_accessor(ctx, 0, f[0], TSR_NONE, TSR_READ, &s) ||
	    tsr_ctx_accessor(ctx, 1, f[1], TSR_NONE, TSR_WRITE, &d))
		return;

	int e = tsr__cuda_copy(&d, &s, tsr_ctx_cuda_stream(ctx));
	if (e)
		tsr_ctx_error(ctx, "fields %d -> %d: CUDA copy failed (cudaError %d)", f[0], f[1],
			      e);
}
#endif

#ifdef STARPU_USE_OPENCL
/* OpenCL bodies (opencl.c): a field homed on an OpenCL device is filled and copied there. */
static void fill_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	tsr_accessor_t a;
	int f = *(const int *)args;
	const char *val = (const char *)args + sizeof(int);

	if (tsr_ctx_accessor(ctx, 0, f, TSR_NONE, TSR_WRITE, &a))
		return;
	tsr__opencl_fill(&a, val);
}

static void copy_opencl(tsr_ctx_t *ctx, const void *args, size_t arglen)
{
	const int *f = args;
	tsr_accessor_t s, d;

	if (tsr_ctx_accessor(ctx, 0, f[0], TSR_NONE, TSR_READ, &s) ||
	    tsr_ctx_accessor(ctx, 1, f[1], TSR_NONE, TSR_WRITE, &d))
		return;
	tsr__opencl_copy(&d, &s);
}
#endif

int tsr__internal_tasks_init(void)
{
	tsr_task_desc_t fd = {.name = "tsr_fill", .cpu = fill_cpu};
	tsr_task_desc_t cd = {.name = "tsr_copy", .cpu = copy_cpu};
#ifdef STARPU_USE_CUDA
	fd.cuda = fill_cuda;
	cd.cuda = copy_cuda;
#endif
#ifdef STARPU_USE_OPENCL
	fd.opencl = fill_opencl;
	cd.opencl = copy_opencl;
#endif

	int rc = tsr_task_register(&fd, &fill_task);
	if (!rc)
		rc = tsr_task_register(&cd, &copy_task);
	if (!rc) {
		/* several ranks: a fill is cheaper done everywhere than sent anywhere */
		struct tsr_task *t = tsr__handle_get(TSR_K_TASK, fill_task.id);
		t->on_every_rank = 1;
		t->internal = 1; /* Tessera's own: it runs on a fake rank too (TSR_FAKE_NRANKS) */

		/* the timeline shows a copy's bytes as a transfer within its worker's node */
		t = tsr__handle_get(TSR_K_TASK, copy_task.id);
		t->internal = 1;
		t->copies = 1;
	}

	return rc;
}

int tsr_fill(tsr_region_t rid, tsr_field_t f, const void *value, size_t size)
{
	struct tsr_region *r;
	int rc = tsr__region_lookup(rid, "tsr_fill", &r);
	if (rc)
		return rc;

	if ((rc = tsr__field_check(r, f, "tsr_fill")))
		return rc;
	if (!value)
		return tsr__err(TSR_EINVAL, "tsr_fill: field '%s' of region '%s': null value",
				r->fields[f].name, r->name);
	if (size != r->fields[f].size)
		return tsr__err(TSR_ETYPE,
				"tsr_fill: field '%s' of region '%s' has %zu-byte elements, value "
				"has %zu",
				r->fields[f].name, r->name, r->fields[f].size, size);

	char arg[sizeof(int) + 256];
	char *buf = size <= 256 ? arg : malloc(sizeof(int) + size);
	if (!buf)
		return tsr__err(TSR_ENOMEM, "tsr_fill: out of memory");

	memcpy(buf, &f, sizeof(int));
	memcpy(buf + sizeof(int), value, size);
	tsr_req_t req = tsr_req_region(rid, TSR_WRITE, 1, &f);
	rc = tsr_launch(fill_task, 1, &req, buf, sizeof(int) + size, NULL);

	if (buf != arg)
		free(buf);
	return rc;
}

int tsr_copy(tsr_region_t src, tsr_field_t fsrc, tsr_region_t dst, tsr_field_t fdst)
{
	struct tsr_region *s, *d;
	int rc = tsr__region_lookup(src, "tsr_copy", &s);
	if (!rc)
		rc = tsr__region_lookup(dst, "tsr_copy", &d);
	if (!rc)
		rc = tsr__field_check(s, fsrc, "tsr_copy (source)");
	if (!rc)
		rc = tsr__field_check(d, fdst, "tsr_copy (destination)");
	if (rc)
		return rc;

	if (s->bounds.dim != d->bounds.dim)
		return tsr__err(TSR_EBOUNDS, "tsr_copy: '%s' is %d-D but '%s' is %d-D", s->name,
				s->bounds.dim, d->name, d->bounds.dim);
	for (int k = 0; k < s->bounds.dim; k++)
		if (s->bounds.hi[k] - s->bounds.lo[k] != d->bounds.hi[k] - d->bounds.lo[k])
			return tsr__err(TSR_EBOUNDS,
					"tsr_copy: '%s' and '%s' differ in extent in dimension %d "
					"(%lld vs %lld)",
					s->name, d->name, k,
					(long long)(s->bounds.hi[k] - s->bounds.lo[k] + 1),
					(long long)(d->bounds.hi[k] - d->bounds.lo[k] + 1));
	if (s->fields[fsrc].type != d->fields[fdst].type ||
	    s->fields[fsrc].size != d->fields[fdst].size)
		return tsr__err(TSR_ETYPE,
				"tsr_copy: field '%s' of '%s' is %s but field '%s' of '%s' is %s",
				s->fields[fsrc].name, s->name, tsr_type_name(s->fields[fsrc].type),
				d->fields[fdst].name, d->name, tsr_type_name(d->fields[fdst].type));

	int fs[2] = {fsrc, fdst};
	tsr_req_t reqs[2] = {tsr_req_region(src, TSR_READ, 1, &fs[0]),
			     tsr_req_region(dst, TSR_WRITE, 1, &fs[1])};
	return tsr_launch(copy_task, 2, reqs, fs, sizeof fs, NULL);
}

/* After the acquire (every writer of the data is done): data a failed task should have written is
 * refused for READ and READ_WRITE; a WRITE mapping discards it (commit_write clears its poison,
 * once every rank has agreed to the mapping). */
static int check_poison(struct tsr_region *r, tsr_field_t f, tsr_privilege_t priv)
{
	if (priv == TSR_WRITE || !__atomic_load_n(&tsr__npoison, __ATOMIC_RELAXED))
		return TSR_OK;

	char *msg = tsr__field_poison_find(r->root->id, f, r->bounds, UINT64_MAX);
	if (!msg)
		return TSR_OK;

	int rc = tsr__err(TSR_ETASK,
			  "tsr_map: field '%s' of region '%s' holds no valid values (map it "
			  "TSR_WRITE, fill it or write it with a task to replace them): %s",
			  r->fields[f].name, r->name, msg);
	free(msg);
	return rc;
}

static int map_locally(struct tsr_region *r, tsr_field_t f, tsr_privilege_t priv, int reads,
		       int write, tsr_accessor_t *acc);
static int unmap_locally(struct tsr_region *r, tsr_field_t f);
static int commit_write(struct tsr_region *r, tsr_field_t f, tsr_privilege_t priv);

int tsr_map(tsr_region_t rid, tsr_field_t f, tsr_privilege_t priv, tsr_accessor_t *acc)
{
	struct tsr_region *r;
	int rc = tsr__region_lookup(rid, "tsr_map", &r);
	if (rc)
		return rc;

	if ((rc = tsr__field_check(r, f, "tsr_map")))
		return rc;
	if (!acc)
		return tsr__err(TSR_EINVAL, "tsr_map: field '%s' of region '%s': null accessor",
				r->fields[f].name, r->name);
	TSR_REQUIRE_RUNNING("tsr_map");
	if (priv != TSR_READ && priv != TSR_WRITE && priv != TSR_READ_WRITE)
		return tsr__err(TSR_EINVAL,
				"tsr_map: field '%s' of region '%s': privilege must be READ, WRITE "
				"or READ_WRITE",
				r->fields[f].name, r->name);
	if (r->root->mapped[f])
		return tsr__err(TSR_EBUSY,
				"tsr_map: field '%s' of region '%s' is already mapped (unmap it "
				"first)",
				r->fields[f].name, r->root->name);

	int write = priv != TSR_READ;
	int reads = priv != TSR_WRITE; /* TSR_WRITE (TSR_WRITE_DISCARD) replaces every value */
	uint64_t what[3] = {r->id, (uint64_t)f, (uint64_t)priv};
	tsr__dist_note("tsr_map", what, sizeof what);
	if ((rc = tsr__dist_check("tsr_map")))
		return rc;

	rc = tsr__dist_agree(map_locally(r, f, priv, reads, write, acc));
	if (!rc && write)
		rc = commit_write(r, f, priv);
	if (rc && r->root->mapped[f])
		/* another rank failed: this one gives its mapping back too (not a call of the
		 * user's: tsr_unmap would count one on this rank only, and the ranks would
		 * diverge) */
		unmap_locally(r, f);

	return rc;
}

/* A writing map that every rank agreed to: the host's values replace the field's. Recorded only
 * now: a map that another rank refuses (a task failed there since the last tsr_fence) writes
 * nothing, so it must neither mark the box valid on every rank (each rank would keep what it held,
 * and a rank that lacked the latest values would read its stale ones as current: oracle seed 97049
 * on 2 and 3 ranks) nor clear the poison of what it did not replace. */
static int commit_write(struct tsr_region *r, tsr_field_t f, tsr_privilege_t priv)
{
	if (priv == TSR_WRITE && __atomic_load_n(&tsr__npoison, __ATOMIC_RELAXED))
		tsr__field_poison_clear(r->root->id, f, r->bounds, UINT64_MAX);

	/* every rank maps and writes the same values: valid everywhere */
	int rc = tsr__coh_wrote_by(&r->nodes[f], NULL, TSR_ALL_RANKS);
	return tsr__err_of(rc, "tsr_map: field '%s' of region '%s'", r->fields[f].name, r->name);
}

static int map_locally(struct tsr_region *r, tsr_field_t f, tsr_privilege_t priv, int reads,
		       int write, tsr_accessor_t *acc)
{
	int rc;
	struct mapping *m = calloc(1, sizeof *m);
	if (!m)
		return tsr__err(TSR_ENOMEM, "tsr_map: out of memory");

	struct tsr_node *n = &r->nodes[f];
	m->node = n;

	/* the tokens first (the host then waits for exactly the tasks it must), then the data */
	if ((rc = tsr__coh_acquire(n, reads, write, &m->held))) {
		mapping_drop(m, 0);
		if (rc == TSR_ESTARPU)
			return tsr__err(rc, "tsr_map: field '%s' of region '%s': acquire failed",
					r->fields[f].name, r->name);
		return tsr__err_of(rc, "tsr_map: field '%s' of region '%s'", r->fields[f].name,
				   r->name);
	}

	enum starpu_data_access_mode mode = priv == TSR_READ    ? STARPU_R
					    : priv == TSR_WRITE ? STARPU_W
								: STARPU_RW;

	/* on the host node by name: starpu_data_acquire takes a field homed on a device there,
	 * where the host has no pointer to it */
	if (starpu_data_acquire_on_node(n->h, STARPU_MAIN_RAM, mode)) {
		mapping_drop(m, 0);
		return tsr__err(TSR_ESTARPU,
				"tsr_map: starpu_data_acquire failed on field '%s' of '%s'",
				r->fields[f].name, r->name);
	}

	if ((rc = check_poison(r, f, priv))) {
		mapping_drop(m, 1);
		return rc;
	}

	struct starpu_block_interface *b = starpu_data_get_interface_on_node(n->h, STARPU_MAIN_RAM);
	memset(acc, 0, sizeof *acc);
	acc->dim = r->bounds.dim;
	acc->stride[0] = 1;
	acc->stride[1] = b->ldy;
	acc->stride[2] = b->ldz;
	acc->ptr = (void *)b->ptr;

	for (int d = 0; d < 3; d++) {
		acc->lo[d] = d < r->bounds.dim ? r->bounds.lo[d] : 0;
		acc->hi[d] = d < r->bounds.dim ? r->bounds.hi[d] : 0;
	}

	acc->type = r->fields[f].type;
	acc->elem_size = r->fields[f].size;
	acc->priv = priv;
	acc->ctx = NULL;
	acc->req = -1;
	acc->field = f;
	acc->region = r->id;

	m->region = r;
	m->field = f;
	m->next = mappings;
	mappings = m;
	r->root->mapped[f] = 1;
	return TSR_OK;
}

int tsr_unmap(tsr_region_t rid, tsr_field_t f)
{
	struct tsr_region *r;
	int rc = tsr__region_lookup(rid, "tsr_unmap", &r);
	if (rc)
		return rc;

	if ((rc = tsr__field_check(r, f, "tsr_unmap")))
		return rc;

	uint64_t what[2] = {r->id, (uint64_t)f};
	tsr__dist_note("tsr_unmap", what, sizeof what);
	if (unmap_locally(r, f))
		return TSR_OK;
	return tsr__err(TSR_ESTATE, "tsr_unmap: field '%s' of region '%s' is not mapped",
			r->fields[f].name, r->name);
}

/* Give back this rank's mapping of field f of r, uncounted (tsr_map's error path); 0 if none. */
static int unmap_locally(struct tsr_region *r, tsr_field_t f)
{
	for (struct mapping **pm = &mappings; *pm; pm = &(*pm)->next)
		if ((*pm)->region == r && (*pm)->field == f) {
			struct mapping *m = *pm;
			*pm = m->next;
			mapping_drop(m, 1);
			r->root->mapped[f] = 0;
			return 1;
		}

	return 0;
}

/* The bytes a whole-field copy of r moves; fails with a message naming region and field if
 * the caller's buffer is not exactly that size. */
static int whole_field_size(tsr_region_t rid, tsr_field_t f, size_t size, const char *what)
{
	struct tsr_region *r;
	int rc = tsr__region_lookup(rid, what, &r);
	if (rc)
		return rc;

	if ((rc = tsr__field_check(r, f, what)))
		return rc;

	size_t want = (size_t)tsr_box_volume(r->bounds) * r->fields[f].size;
	if (size != want)
		return tsr__err(TSR_EINVAL,
				"%s: field '%s' of region '%s' holds %zu bytes (%lld elements of "
				"%zu), the buffer has %zu",
				what, r->fields[f].name, r->name, want,
				(long long)tsr_box_volume(r->bounds), r->fields[f].size, size);

	return TSR_OK;
}

int tsr_region_write(tsr_region_t r, tsr_field_t f, const void *buf, size_t size)
{
	int rc = whole_field_size(r, f, size, "tsr_region_write");
	if (rc)
		return rc;
	if (!buf)
		return tsr__err(TSR_EINVAL, "tsr_region_write: null buffer");

	tsr_accessor_t acc;
	/* every element is overwritten: discard the old contents rather than wait to read them */
	if ((rc = tsr_map(r, f, TSR_WRITE_DISCARD, &acc)))
		return rc;

	const char *src = buf;
	size_t row_bytes = (size_t)(acc.hi[0] - acc.lo[0] + 1) * acc.elem_size;
	FOR_ROWS(&acc, row, {
		memcpy(row, src, row_bytes);
		src += row_bytes;
	})

	return tsr_unmap(r, f);
}

int tsr_region_read(tsr_region_t r, tsr_field_t f, void *buf, size_t size)
{
	int rc = whole_field_size(r, f, size, "tsr_region_read");
	if (rc)
		return rc;
	if (!buf)
		return tsr__err(TSR_EINVAL, "tsr_region_read: null buffer");

	tsr_accessor_t acc;
	if ((rc = tsr_map(r, f, TSR_READ, &acc)))
		return rc;

	char *dst = buf;
	size_t row_bytes = (size_t)(acc.hi[0] - acc.lo[0] + 1) * acc.elem_size;
	FOR_ROWS(&acc, row, {
		memcpy(dst, row, row_bytes);
		dst += row_bytes;
	})

	return tsr_unmap(r, f);
}

/* finalize: release what the user left mapped, so unregistration cannot wait forever; names
 * them in `names` (n bytes). */
int tsr__unmap_all(char **names)
{
	int n = 0;

	while (mappings) {
		struct mapping *m = mappings;
		mappings = m->next;

		tsr__append(names, "%sfield '%s' of '%s'", *names ? ", " : "",
			    m->region->fields[m->field].name, m->region->name);

		m->region->root->mapped[m->field] = 0;
		mapping_drop(m, 1);
		n++;
	}

	return n;
}
