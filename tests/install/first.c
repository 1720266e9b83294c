/* first.c: a program of one's own, built outside Tessera's tree with nothing but
 * `cc first.c $(pkg-config --cflags --libs tessera)` (tests/install/first-program.sh): it takes
 * Tessera's flags from its command line (--ncpu 2, --sched eager, ...), creates a region, fills a
 * field, maps it on the host and checks what it reads. */
#include <stdio.h>

#include <tessera.h>

/* Print what failed with the runtime's message, which names the object. */
static int report(const char *what, int rc)
{
	fprintf(stderr, "first: %s: %s: %s\n", what, tsr_err_name(rc), tsr_last_error());
	return rc;
}

/* Fill field x of a 1-D region of n points with `value`, then read it back on the host. */
static int fill_and_sum(int64_t n, double value, double *sum)
{
	tsr_fspace_t fs;
	tsr_field_t x;
	tsr_region_t line;
	tsr_accessor_t acc;
	int rc = tsr_fspace_create(&fs);
	if (rc)
		return report("tsr_fspace_create", rc);
	rc = tsr_fspace_add(fs, "x", TSR_F64, 0, &x);
	if (rc)
		return report("tsr_fspace_add", rc);
	rc = tsr_region_create("line", tsr_box1(0, n - 1), fs, &line);
	if (rc)
		return report("tsr_region_create", rc);
	rc = tsr_fill(line, x, &value, sizeof value);
	if (rc)
		return report("tsr_fill", rc);
	rc = tsr_map(line, x, TSR_READ, &acc);
	if (rc)
		return report("tsr_map", rc);
	*sum = 0.0;
	for (int64_t i = 0; i < n; i++)
		*sum += TSR_AT1(&acc, double, i);
	rc = tsr_unmap(line, x);
	if (rc)
		return report("tsr_unmap", rc);
	rc = tsr_region_destroy(line);
	if (rc)
		return report("tsr_region_destroy", rc);
	rc = tsr_fspace_destroy(fs);
	if (rc)
		return report("tsr_fspace_destroy", rc);
	return TSR_OK;
}

int main(int argc, char **argv)
{
	double sum = 0.0;
	/* Tessera's flags leave argv (they win over TSR_NCPU and the other variables); the rest is
	 * this program's, and it takes nothing more */
	int rc = tsr_args(&argc, argv);
	if (rc || argc > 1) {
		fprintf(stderr, "usage: first [Tessera's flags: --ncpu N, --sched NAME, ...]\n");
		if (rc)
			report("tsr_args", rc);
		return 2;
	}
	rc = tsr_init(NULL);
	if (rc) {
		report("tsr_init", rc);
		return 1;
	}
	printf("first: Tessera %s, %d CPU workers, policy %s\n", tsr_version(NULL, NULL, NULL),
	       tsr_ncpu_workers(), tsr_sched_name());
	rc = fill_and_sum(1000, 2.5, &sum);
	int frc = tsr_finalize();
	if (frc)
		report("tsr_finalize", frc);
	if (rc || frc)
		return 1;
	printf("first: sum of 1000 x 2.5 = %g\n", sum);
	return sum == 2500.0 ? 0 : 1;
}
