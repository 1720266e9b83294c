#!/bin/sh
# tests/bench/mpi-volume.sh: apps/bench/mpi-volume.py's minimum against cases counted by hand, then
# (with MPI) the stencil on 2 ranks moves exactly the halo points it reads, per pair of ranks, by
# Tessera's count (TSR_STATS) and StarPU-MPI's (STARPU_COMM_STATS, less the poison record each
# message also holds, the same bytes per message on both ranks: runtime/xfer.c) alike, and every rank prints its
# peak RSS. TAP. (4 ranks with 1 x 4 tiles moves more, a border copy running on a rank that does not
# own the tile it reads: apps/stencil/README.md "Many ranks"; `mpi-volume.py --ranks 4 --tilings 1x4
# --expect-min-halo` shows it.)
src=${top_srcdir:-.}
build=${top_builddir:-.}
script=$src/apps/bench/mpi-volume.py
echo "1..3"
if ! command -v python3 >/dev/null 2>&1; then
	for i in 1 2 3; do echo "ok $i # SKIP no python3"; done
	exit 0
fi
if python3 "$script" --self-test; then
	echo "ok 1 - mpi-volume: minimum against hand counts"
else
	echo "not ok 1 - mpi-volume: minimum against hand counts"
fi
if [ ! -x "$build/apps/bench/overhead-mpi" ] || ! command -v mpirun >/dev/null 2>&1; then
	for i in 2 3; do echo "ok $i # SKIP Tessera built without MPI, or no mpirun"; done
	exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 STARPU_SILENT=1
unset TSR_SCHED TSR_NCPU TSR_TIMELINE TSR_DAG TSR_MPI
out=$(mktemp -d "${TMPDIR:-/tmp}/mpi-volume.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT
small="--builddir $build --tilings 1x4 --nx 32 --ny 32 --nz 2 --iters 1,3 --expect-min-halo --pairs"
if python3 "$script" $small --ranks 2 --out "$out/np2" >"$out/np2.txt" 2>&1; then
	echo "ok 2 - stencil on 2 ranks moves exactly its halo"
else
	echo "not ok 2 - stencil on 2 ranks moves exactly its halo"
	sed 's/^/# /' "$out/np2.txt"
fi
n=$(cat "$out"/np2/*.log 2>/dev/null | grep -c '^tessera: rank [01] peak RSS (VmHWM) [0-9]* kB$')
if [ "$n" = 4 ]; then
	echo "ok 3 - TSR_STATS prints each rank's peak RSS"
else
	echo "not ok 3 - TSR_STATS prints each rank's peak RSS ($n lines in 2 runs of 2 ranks, want 4)"
fi
