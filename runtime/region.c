/* region.c: regions and subregions. A root region owns one zeroed array per field, registered
 * with StarPU as a block handle (1-D and 2-D are blocks with ny or nz = 1); subregions are the
 * colors of a partition, each field a view handle into the root's array (coherence.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "internal.h"

int tsr__field_check(const struct tsr_region *r, int f, const char *what)
{
	if (f < 0 || f >= r->nfields)
		return tsr__err(TSR_ENOFIELD,
				"%s: field id %d is not in region '%s' (it has %d field%s)", what,
				f, r->name, r->nfields, r->nfields == 1 ? "" : "s");
	return TSR_OK;
}

/* The first device's memory node (a CUDA GPU's, else an OpenCL device's), or -1 if none runs. */
static int first_device_node(void)
{
	int w = starpu_worker_get_by_type(STARPU_CUDA_WORKER, 0);
	if (w < 0)
		w = starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 0);
	return w < 0 ? -1 : (int)starpu_worker_get_memory_node((unsigned)w);
}

/* The home node of a new root region's fields, by one stated rule:
 *   TSR_HOME=host    host RAM (the default whenever a CPU worker runs);
 *   TSR_HOME=device  the first device's memory (a CUDA GPU's, else an OpenCL device's; an error if
 *                    there is none); "cuda" is another spelling of it;
 *   unset or auto    the first device's memory when only device workers run (TSR_NCPU=0), since
 *                    every task on every field then runs there; host RAM otherwise.
 * A field homed on a device stays there across iterations; only host maps (tsr_map) bring a copy
 * to RAM. */
static int home_node(const char *what, const char *name, int *node)
{
	enum { HOST, DEVICE, AUTO, CUDA }; /* as the switch's table lists them (env.c) */
	int choice;
	char what_region[TSR_NAME_MAX + 64];

	snprintf(what_region, sizeof what_region, "%s: region '%s'", what, name);
	int rc = tsr__env_choice("TSR_HOME", what_region, &choice);
	if (rc)
		return rc;

	const char *env = tsr__env("TSR_HOME");
	int want_device = choice == DEVICE || choice == CUDA;
	if (choice == AUTO)
		want_device = tsr__rt.ndevice > 0 && tsr__rt.ncpu == 0;

	*node = STARPU_MAIN_RAM;
	if (!want_device)
		return TSR_OK;

	int dev = first_device_node();
	if (dev < 0)
		return tsr__err(TSR_ENODEV,
				"%s: region '%s': TSR_HOME=%s but the runtime has no device worker "
				"(CUDA or OpenCL)",
				what, name, env);

	*node = dev;
	return TSR_OK;
}

/* Several ranks: every rank holds the whole array but touches only what it owns or receives, so
 * host arrays come zeroed from the kernel, page by page as they are first touched: a rank's
 * memory grows with what it uses, not with the region. */
static int lazy_zero(int home)
{
	return home == STARPU_MAIN_RAM && tsr__dist.on;
}

/* Where in its first page a lazily zeroed array starts: where glibc's malloc puts a large block
 * (after its 16-byte header), so that an array's rows meet the cache lines as they do in one
 * process. A kernel whose rows are not a multiple of 64 bytes long runs at another speed when the
 * array moves: the stencil's 516-double rows ran 1.5 times slower page-aligned
 * (apps/bench/README.md). */
enum { LAZY_OFFSET = 16 };

/* One field's array on the region's home node; NULL when out of memory. Host arrays are zeroed
 * here; device arrays by a fill task (tsr_region_create), which runs on the device. */
static void *storage_alloc(int home, size_t bytes)
{
	if (home != STARPU_MAIN_RAM)
		return (void *)starpu_malloc_on_node((unsigned)home, bytes);

	if (lazy_zero(home)) {
		void *m = mmap(NULL, bytes + LAZY_OFFSET, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		return m == MAP_FAILED ? NULL : (char *)m + LAZY_OFFSET;
	}

	void *p;
	if (starpu_malloc_flags(&p, bytes, tsr__rt.ncuda > 0 ? STARPU_MALLOC_PINNED : 0) != 0)
		return NULL;
	memset(p, 0, bytes);
	return p;
}

static void storage_free(int home, void *p, size_t bytes)
{
	if (lazy_zero(home))
		munmap((char *)p - LAZY_OFFSET, bytes + LAZY_OFFSET);
	else if (home != STARPU_MAIN_RAM)
		starpu_free_on_node((unsigned)home, (uintptr_t)p, bytes);
	else
		starpu_free_flags(p, bytes, tsr__rt.ncuda > 0 ? STARPU_MALLOC_PINNED : 0);
}

/* Zero every field of a region homed on a device, with the fill task (ordered before any use),
 * through the hook tsr_init installs (tsr_fill is a floor above). */
static int zero_on_device(struct tsr_region *r)
{
	for (int f = 0; f < r->nfields; f++) {
		void *zero = calloc(1, r->fields[f].size);
		if (!zero)
			return tsr__err(TSR_ENOMEM, "tsr_region_create: region '%s': out of memory",
					r->name);

		int rc = tsr__rt.fill((tsr_region_t){r->id}, f, zero, r->fields[f].size);
		free(zero);
		if (rc)
			return rc;
	}

	return TSR_OK;
}

/* Extent of a valid box (its volume fits in int64_t, so each extent does). */
static int64_t extent(const tsr_box_t *b, int d)
{
	int64_t e;
	tsr__box_extent(b, d, &e);
	return e;
}

/* Bounds StarPU's block interface can hold: 32-bit extents and leading dimensions. */
static int check_bounds(const char *what, const char *name, tsr_box_t bounds)
{
	char bs[96];
	const char *why = tsr__box_problem(bounds);
	if (why)
		return tsr__err(tsr__box_problem_code(bounds), "%s: region '%s': bounds %s %s",
				what, name, tsr__box_str(bounds, bs, sizeof bs), why);

	for (int d = 0; d < bounds.dim; d++)
		if (extent(&bounds, d) > UINT32_MAX / 2)
			return tsr__err(TSR_EBOUNDS,
					"%s: region '%s': extent %lld in dimension %d is too large",
					what, name, (long long)extent(&bounds, d), d);

	if (bounds.dim > 1 && extent(&bounds, 0) * extent(&bounds, 1) > UINT32_MAX)
		return tsr__err(TSR_EBOUNDS,
				"%s: region '%s': a %lld x %lld plane exceeds StarPU's 32-bit "
				"leading dimension",
				what, name, (long long)extent(&bounds, 0),
				(long long)extent(&bounds, 1));

	return TSR_OK;
}

/* Bytes of each field's array; refused when points x element size does not fit in size_t
 * (2^61 f64 points would otherwise wrap to a 0-byte allocation). */
static int check_field_bytes(const char *what, const char *name, tsr_box_t bounds, int nf,
			     const struct tsr_fieldinfo *fields)
{
	char bs[96];
	size_t points = (size_t)tsr_box_volume(bounds);

	for (int f = 0; f < nf; f++) {
		size_t bytes;
		if (tsr__size_mul(points, fields[f].size, &bytes))
			return tsr__err(TSR_EBOUNDS,
					"%s: region '%s': field '%s': %zu points of %zu bytes over "
					"%s do not fit in memory (the size overflows)",
					what, name, fields[f].name, points, fields[f].size,
					tsr__box_str(bounds, bs, sizeof bs));
	}

	return TSR_OK;
}

/* Each field of a new root region r (nx x ny x nz points, fields copied): its storage at home,
 * its StarPU handle, its coherence. TSR_ENOMEM stops at the field that lacks memory (region_undo
 * takes back what was done). */
static int register_fields(struct tsr_region *r, uint32_t nx, uint32_t ny, uint32_t nz)
{
	for (int f = 0; f < r->nfields; f++) {
		size_t bytes = (size_t)nx * ny * nz * r->fields[f].size;
		r->storage[f] = storage_alloc(r->home, bytes);
		if (!r->storage[f])
			return TSR_ENOMEM;

		struct tsr_node *n = &r->nodes[f];
		n->region = r;
		n->field = f;
		starpu_block_data_register(&n->h, r->home, (uintptr_t)r->storage[f], nx,
					   (uint32_t)nx * ny, nx, ny, nz, r->fields[f].size);
		tsr__assert(n->h != NULL);
		/* Tessera orders the root's tasks as its views' (order.c): a write that overlaps a
		 * piece the root wrote waits for the root's readers through its state (out of
		 * memory for it: StarPU's ordering, as correct) */
		(void)tsr__order_track(n->h);
		tsr__coh_register(n);
		if (tsr__coh_root_init(n))
			return TSR_ENOMEM;
	}

	return TSR_OK;
}

/* A root region that ran out of memory half made: what register_fields did, then r itself. */
static void region_undo(struct tsr_region *r, uint32_t nx, uint32_t ny, uint32_t nz)
{
	for (int f = 0; f < r->nfields && r->nodes; f++) {
		if (r->nodes[f].h) {
			tsr__order_untrack(r->nodes[f].h);
			starpu_data_unregister(r->nodes[f].h);
		}
		if (r->nodes[f].token)
			starpu_data_unregister(r->nodes[f].token);
		tsr__coh_root_free(&r->nodes[f]);
		if (r->storage && r->storage[f])
			storage_free(r->home, r->storage[f],
				     (size_t)nx * ny * nz * r->fields[f].size);
	}

	free(r->name);
	free(r->fields);
	free(r->nodes);
	free(r->storage);
	free(r->mapped);
	free(r);
}

int tsr_region_create(const char *name, tsr_box_t bounds, tsr_fspace_t fs, tsr_region_t *out)
{
	const char *what = "tsr_region_create";
	TSR_REQUIRE_INIT(what);

	if (!name)
		name = "region";
	if (!out)
		return tsr__err(TSR_EINVAL, "%s: region '%s': null output pointer", what, name);

	int rc = check_bounds(what, name, bounds);
	if (rc)
		return rc;

	int nf;
	const struct tsr_fieldinfo *fields;
	char named[320]; /* a destroyed field space's message names the region */
	snprintf(named, sizeof named, "%s: region '%s'", what, name);
	rc = tsr__fspace_fields(fs, named, &nf, &fields);
	if (rc)
		return rc;

	int home;
	if ((rc = home_node(what, name, &home)))
		return rc;

	if (nf == 0)
		return tsr__err(TSR_EINVAL, "%s: region '%s': field space has no fields", what,
				name);

	rc = check_field_bytes(what, name, bounds, nf, fields);
	if (rc)
		return rc;

	uint32_t nx = extent(&bounds, 0), ny = extent(&bounds, 1), nz = extent(&bounds, 2);
	struct tsr_region *r = calloc(1, sizeof *r);
	if (!r)
		return tsr__err(TSR_ENOMEM, "%s: out of memory", what);

	r->name = strdup(name);
	r->bounds = bounds;
	r->nfields = nf;
	r->fields = malloc(nf * sizeof *r->fields);
	r->nodes = calloc(nf, sizeof *r->nodes);
	r->storage = calloc(nf, sizeof *r->storage);
	r->mapped = calloc(nf, sizeof *r->mapped);
	r->root = r;
	r->home = home;
	if (!r->name || !r->fields || !r->nodes || !r->storage || !r->mapped)
		goto nomem;

	memcpy(r->fields, fields, nf * sizeof *r->fields);

	if (register_fields(r, nx, ny, nz))
		goto nomem;

	r->id = tsr__handle_new(TSR_K_REGION, r);
	if (home != STARPU_MAIN_RAM && (rc = zero_on_device(r))) {
		tsr__region_free_tree(r);
		return rc;
	}

	out->id = r->id;
	return TSR_OK;

nomem:
	region_undo(r, nx, ny, nz);
	return tsr__err(TSR_ENOMEM, "%s: region '%s': out of memory", what, name);
}

/* A subregion of partition p, color index c: its nodes' views are registered when first used. */
struct tsr_region *tsr__subregion_new(struct tsr_partition *p, int c)
{
	struct tsr_region *parent = p->parent;
	tsr__assert(c >= 0 && c < p->ncolors);
	/* the partition's makers checked each box */
	tsr__assert(tsr_box_contains(parent->bounds, p->boxes[c]));
	struct tsr_region *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;

	char cs[64];
	int64_t color[3];
	tsr__box_point(p->colors, c, color);
	tsr__color_str(p->colors.dim, color, cs, sizeof cs);

	size_t len = strlen(parent->name) + strlen(p->name) + strlen(cs) + 2;
	s->name = malloc(len);
	s->nodes = calloc(parent->nfields, sizeof *s->nodes);
	if (!s->name || !s->nodes) {
		free(s->name);
		free(s->nodes);
		free(s);
		return NULL;
	}

	snprintf(s->name, len, "%s/%s%s", parent->name, p->name, cs);
	s->bounds = p->boxes[c];
	s->nfields = parent->nfields;
	s->fields = parent->fields;
	s->root = parent->root;
	s->parent_part = p;
	s->color_index = c;

	for (int f = 0; f < s->nfields; f++) {
		struct tsr_node *n = &s->nodes[f];
		n->region = s;
		n->field = f;
		n->parent = &parent->nodes[f];
		n->part = p;
	}

	s->id = tsr__handle_new(TSR_K_REGION, s);
	return s;
}

/* Free a region's partitions (depth first; they unregister their subregions' views), then the
 * region itself. */
void tsr__region_free_tree(struct tsr_region *r)
{
	while (r->nparts > 0)
		tsr__partition_free(r->parts[r->nparts - 1], 1);

	free(r->parts);
	r->parts = NULL;
	tsr__handle_free(r->id);

	if (r->root == r) {
		for (int f = 0; f < r->nfields; f++) {
			/* every task on a view of the field waits for a writer's token, which the
			 * partitions' retire tasks (freed above) took read-write along with the
			 * root: this waits for all */
			tsr__order_untrack(r->nodes[f].h);
			starpu_data_unregister(r->nodes[f].h);
			if (r->nodes[f].token)
				starpu_data_unregister(r->nodes[f].token);
			tsr__coh_root_free(&r->nodes[f]);
			tsr__dag_node_free(&r->nodes[f]);

			size_t bytes = (size_t)tsr_box_volume(r->bounds) * r->fields[f].size;
			storage_free(r->home, r->storage[f], bytes);
		}

		free(r->fields);
		free(r->storage);
		free(r->mapped);
	}

	free(r->nodes);
	free(r->name);
	free(r);
}

int tsr_region_destroy(tsr_region_t rid)
{
	struct tsr_region *r;
	int rc = tsr__region_lookup(rid, "tsr_region_destroy", &r);
	if (rc)
		return rc;

	if (r->root != r)
		return tsr__err(TSR_EINVAL,
				"tsr_region_destroy: '%s' is a subregion; destroy its partition "
				"instead",
				r->name);
	TSR_REQUIRE_RUNNING("tsr_region_destroy");
	for (int f = 0; f < r->nfields; f++)
		if (r->mapped[f])
			return tsr__err(TSR_EBUSY,
					"tsr_region_destroy: field '%s' of region '%s' is mapped "
					"on the host; unmap it first",
					r->fields[f].name, r->name);

	uint64_t id = r->id;
	tsr__region_free_tree(r);

	/* its tasks are done (unregistered): its poison goes too */
	tsr__poison_forget_region(id);
	return TSR_OK;
}

int tsr_region_bounds(tsr_region_t rid, tsr_box_t *bounds)
{
	struct tsr_region *r;
	int rc = tsr__region_lookup(rid, "tsr_region_bounds", &r);
	if (rc)
		return rc;

	if (!bounds)
		return tsr__err(TSR_EINVAL, "tsr_region_bounds: null output pointer");
	*bounds = r->bounds;
	return TSR_OK;
}

const char *tsr_region_name(tsr_region_t rid)
{
	struct tsr_region *r = tsr__rt.initialized ? tsr__handle_get(TSR_K_REGION, rid.id) : NULL;
	return r ? r->name : NULL;
}

static void region_free_root(void *obj)
{
	struct tsr_region *r = obj;
	if (r->root == r)
		tsr__region_free_tree(r);
}

/* finalize: destroy every live root region (and with it all partitions); returns how many. */
int tsr__region_free_all(void)
{
	return tsr__handle_foreach(TSR_K_REGION, region_free_root);
}

/* 1 if r lies below an aliased partition: a REDUCE there goes through private buffers, since
 * points of one launch may reach overlapping data. */
int tsr__region_aliased(const struct tsr_region *r)
{
	for (; r->parent_part; r = r->parent_part->parent)
		if (!r->parent_part->disjoint)
			return 1;
	return 0;
}
