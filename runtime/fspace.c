/* fspace.c: field spaces, named typed fields. Regions copy the fields they are created with. */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

size_t tsr_type_size(tsr_type_t type)
{
	switch (type) {
	case TSR_F32:
	case TSR_I32:
		return 4;
	case TSR_F64:
	case TSR_I64:
		return 8;
	default:
		return 0;
	}
}

const char *tsr_type_name(tsr_type_t type)
{
	switch (type) {
	case TSR_NONE:
		return "none";
	case TSR_F32:
		return "f32";
	case TSR_F64:
		return "f64";
	case TSR_I32:
		return "i32";
	case TSR_I64:
		return "i64";
	case TSR_BYTES:
		return "bytes";
	}
	return "?";
}

int tsr_fspace_create(tsr_fspace_t *fs)
{
	TSR_REQUIRE_INIT("tsr_fspace_create");
	if (!fs)
		return tsr__err(TSR_EINVAL, "tsr_fspace_create: null output pointer");

	struct tsr_fspace *f = calloc(1, sizeof *f);
	if (!f)
		return tsr__err(TSR_ENOMEM, "tsr_fspace_create: out of memory");

	f->id = tsr__handle_new(TSR_K_FSPACE, f);
	fs->id = f->id;
	return TSR_OK;
}

int tsr_fspace_add(tsr_fspace_t fs, const char *name, tsr_type_t type, size_t bytes,
		   tsr_field_t *fid)
{
	struct tsr_fspace *f;
	int rc = tsr__fspace_lookup(fs, "tsr_fspace_add", &f);
	if (rc)
		return rc;

	if (!name || !*name || strlen(name) >= TSR_NAME_MAX)
		return tsr__err(TSR_EINVAL,
				"tsr_fspace_add: field name missing or longer than %d characters",
				TSR_NAME_MAX - 1);

	size_t size = tsr_type_size(type);
	if (type == TSR_BYTES)
		size = bytes;
	if (type < TSR_F32 || type > TSR_BYTES || size == 0)
		return tsr__err(TSR_EINVAL,
				"tsr_fspace_add: field '%s': invalid type %d or zero byte size",
				name, (int)type);

	for (int i = 0; i < f->nfields; i++)
		if (!strcmp(f->fields[i].name, name))
			return tsr__err(TSR_EINVAL,
					"tsr_fspace_add: field '%s' already exists in this field "
					"space",
					name);

	if (f->nfields == f->cap) {
		int ncap = f->cap ? 2 * f->cap : 4;
		struct tsr_fieldinfo *nf = realloc(f->fields, ncap * sizeof *nf);
		if (!nf)
			return tsr__err(TSR_ENOMEM, "tsr_fspace_add: out of memory");
		f->fields = nf;
		f->cap = ncap;
	}

	struct tsr_fieldinfo *fi = &f->fields[f->nfields];
	memset(fi, 0, sizeof *fi);
	strcpy(fi->name, name);
	fi->type = type;
	fi->size = size;
	if (fid)
		*fid = f->nfields;
	f->nfields++;
	return TSR_OK;
}

static void fspace_free(void *obj)
{
	struct tsr_fspace *f = obj;
	tsr__handle_free(f->id);
	free(f->fields);
	free(f);
}

int tsr_fspace_destroy(tsr_fspace_t fs)
{
	struct tsr_fspace *f;
	int rc = tsr__fspace_lookup(fs, "tsr_fspace_destroy", &f);
	if (rc)
		return rc;

	fspace_free(f);
	return TSR_OK;
}

/* Used by region.c: the field table a region copies. */
int tsr__fspace_fields(tsr_fspace_t fs, const char *what, int *n,
		       const struct tsr_fieldinfo **fields)
{
	struct tsr_fspace *f;
	int rc = tsr__fspace_lookup(fs, what, &f);
	if (rc)
		return rc;

	*n = f->nfields;
	*fields = f->fields;
	return TSR_OK;
}

void tsr__fspace_free_all(void)
{
	tsr__handle_foreach(TSR_K_FSPACE, fspace_free);
}
