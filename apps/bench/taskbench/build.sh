#!/bin/sh
# build.sh: build Task Bench's core, its raw StarPU backend and our Tessera backend out of tree,
# against a Task Bench checkout the user gives (none of Task Bench's code lives in this project).
set -eu

usage() {
	cat <<'USAGE'
usage: build.sh [--out DIR] TASKBENCH_DIR [TESSERA_BUILD_DIR]
Build, in DIR (default ./taskbench-build; Task Bench's checkout and the Tessera tree stay
untouched):
  DIR/core/libcore_s.a      Task Bench's core (its own Makefile, DEBUG=0: -O3, asserts kept:
                            they are what validates every task's inputs)
  DIR/starpu/main           Task Bench's raw StarPU backend (StarPU 1.3 + StarPU-MPI, mpic++)
  DIR/mpi/nonblock          Task Bench's MPI backend (nonblocking point-to-point, mpic++)
  DIR/tessera/main          the Tessera backend, apps/bench/taskbench/tessera_main.cc
  DIR/floor/main            raw StarPU as a replay could submit it at the least (no data
                            handles, explicit dependences): apps/bench/taskbench/floor_main.cc
TASKBENCH_DIR      a checkout of https://github.com/StanfordLegion/task-bench
TESSERA_BUILD_DIR  a configured and built Tessera tree holding libtessera.la and
                   tessera-uninstalled.pc (default: the tree this script sits in)
Needs: pkg-config with starpu-1.3 and starpumpi-1.3, mpic++ (Debian: libstarpu-dev,
libopenmpi-dev), make, a C++ compiler.
USAGE
}

out=taskbench-build
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "build.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	usage >&2
	exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)
tb=$(cd "$1" && pwd)
tessera=$(cd "${2:-$here/../../..}" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ ! -f "$tb/core/core_c.h" ] || [ ! -f "$tb/starpu/main.cc" ]; then
	echo "build.sh: '$tb' is not a Task Bench checkout (no core/core_c.h or starpu/main.cc)" >&2
	exit 1
fi
if [ ! -f "$tessera/tessera-uninstalled.pc" ] || [ ! -f "$tessera/libtessera.la" ]; then
	echo "build.sh: '$tessera' is not a built Tessera tree (no tessera-uninstalled.pc or libtessera.la):" >&2
	echo "          run ./configure && make there first" >&2
	exit 1
fi
jobs=${JOBS:-2}

# Task Bench's core, with its own Makefile, objects in $out/core: make finds the sources through
# VPATH and the included make_blas.mk through -I.
echo "build.sh: Task Bench core -> $out/core"
mkdir -p "$out/core"
make -s -C "$out/core" -f "$tb/core/Makefile" -I "$tb/core" VPATH="$tb/core" -j"$jobs" DEBUG=0

# The raw StarPU backend, with its Makefile: its library paths assume STARPU_DIR/lib, which is not
# where Debian puts StarPU, so INC and LIB come from pkg-config instead (same libraries, same flags).
echo "build.sh: Task Bench StarPU backend -> $out/starpu"
if ! command -v mpic++ >/dev/null 2>&1; then
	echo "build.sh: mpic++ not found: Task Bench's StarPU backend needs StarPU-MPI (Debian: libopenmpi-dev)" >&2
	exit 1
fi
mkdir -p "$out/starpu"
starpu_inc="$(pkg-config --cflags starpu-1.3 starpumpi-1.3) -I$tb/core"
starpu_lib="$(pkg-config --libs starpu-1.3 starpumpi-1.3) -L$out/core -lcore_s"
make -s -C "$out/starpu" -f "$tb/starpu/Makefile" VPATH="$tb/starpu" -I "$tb/core" -j"$jobs" \
	STARPU_DIR=/usr DEBUG=0 INC="$starpu_inc" LIB="$starpu_lib" main

# Task Bench's MPI backend with nonblocking point-to-point messages (the floor on these cores: one
# rank per core, no runtime), with its own flags.
echo "build.sh: Task Bench MPI backend -> $out/mpi"
mkdir -p "$out/mpi"
mpic++ -std=c++11 -O3 -I"$tb/core" -o "$out/mpi/nonblock" "$tb/mpi/nonblock.cc" -L"$out/core" -lcore_s

# Ours: one C++ file against tessera.h and Task Bench's core.h, the flags Task Bench's Makefiles use.
echo "build.sh: Tessera backend -> $out/tessera"
mkdir -p "$out/tessera"
tsr_flags=$(PKG_CONFIG_PATH="$tessera${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" pkg-config --cflags --libs tessera)
${CXX:-c++} -std=c++11 -O3 -Wall -Wextra -I"$tb/core" -o "$out/tessera/main" "$here/tessera_main.cc" \
	-L"$out/core" -lcore_s $tsr_flags

# Ours: raw StarPU submitted as a replay of the steps could submit it at the least (the floor under
# the Tessera backend's traced METG), against StarPU and Task Bench's core only.
echo "build.sh: StarPU floor backend -> $out/floor"
mkdir -p "$out/floor"
${CXX:-c++} -std=c++11 -O3 -Wall -Wextra -I"$tb/core" $(pkg-config --cflags starpu-1.3) \
	-o "$out/floor/main" "$here/floor_main.cc" -L"$out/core" -lcore_s $(pkg-config --libs starpu-1.3)

echo "build.sh: done: $out/starpu/main, $out/mpi/nonblock, $out/tessera/main and $out/floor/main"
