#!/bin/sh
# tests/layout/floors.sh: runtime/ keeps its floor plan (runtime/FLOORS): no file calls a file on
# a floor above its own (the one call up goes through the hook tsr_init installs, tsr__rt.fill),
# and no circle of calls holds more than two files (region.c and partition.c: a region holds its
# partitions, a partition makes its subregions). Measured twice: from the library's objects with
# nm (what this configuration built, macros and inline functions included), and from the sources
# (every configuration: the CUDA, MPI and OpenCL branches and the .cu files, built or not).
src=${top_srcdir:-.}
build=${top_builddir:-.}
plan="$src/runtime/FLOORS"
echo "1..2"
if ! command -v nm >/dev/null 2>&1; then
	echo "ok 1 # SKIP nm not found"
elif out=$(sh "$src/build-aux/floors.sh" "$plan" "$build/runtime" 2 0 2>&1); then
	echo "$out" | sed 's/^/# objects: /'
	echo "ok 1 - runtime/'s objects keep its floors"
else
	echo "$out" | sed 's/^/# objects: /'
	echo "not ok 1 - runtime/'s objects break its floor plan (runtime/FLOORS)"
fi
if out=$(sh "$src/build-aux/floors.sh" "$plan" - 2 0 "$src/runtime" 2>&1); then
	echo "$out" | sed 's/^/# sources: /'
	echo "ok 2 - runtime/'s sources, CUDA and MPI included, keep its floors"
else
	echo "$out" | sed 's/^/# sources: /'
	echo "not ok 2 - runtime/'s sources break its floor plan (runtime/FLOORS)"
fi
