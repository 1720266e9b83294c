/* text.c: text for people and tools, shared by the timeline (records.c) and the task graph (dag.c):
 * a point's label, strings escaped for JSON and dot, and files that must be written whole. */
#include <stdio.h>
#include "internal.h"

/* A point as a label suffix: nothing for a single launch, "(i,j)" for an index launch's point. */
void tsr__point_label(int pdim, const int64_t p[3], char *buf, size_t n)
{
	tsr__assert(pdim >= 0 && pdim <= 3);
	if (pdim == 0)
		buf[0] = 0;
	else
		tsr__color_str(pdim, p, buf, n);
}

/* Write s with the characters that JSON strings and dot labels cannot hold bare escaped. */
void tsr__put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

/* fclose that reports a write error (a full disk) as one naming the file. */
int tsr__close_written(FILE *f, const char *file, const char *kind)
{
	int bad = ferror(f);
	if (fclose(f) || bad)
		return tsr__err(TSR_EINVAL, "tsr_finalize: %s '%s' could not be written completely",
				kind, file);
	return TSR_OK;
}
