#!/bin/sh
# tests/layout/floors.sh: runtime/ keeps its floor plan (runtime/FLOORS): no file calls a file on
# a floor above its own (the one call up goes through the hook tsr_init installs, tsr__rt.fill),
# and no circle of calls holds more than two files (region.c and partition.c: a region holds its
# partitions, a partition makes its subregions). Measured from the library's objects with nm.
src=${top_srcdir:-.}
build=${top_builddir:-.}
if ! command -v nm >/dev/null 2>&1; then
	echo "1..0 # SKIP nm not found"
	exit 0
fi
echo "1..1"
if out=$(sh "$src/build-aux/floors.sh" "$src/runtime/FLOORS" "$build/runtime" 2 0 2>&1); then
	echo "$out" | sed 's/^/# /'
	echo "ok 1 - runtime/ keeps its floors"
else
	echo "$out" | sed 's/^/# /'
	echo "not ok 1 - runtime/ breaks its floor plan (runtime/FLOORS)"
fi
