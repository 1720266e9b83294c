#!/bin/sh
# build-starpu.sh [--cuda|--no-cuda] [--mpi|--no-mpi] SRC_OR_TARBALL PREFIX: build StarPU into
# PREFIX, with the notify fix (tools/starpu-1.4-notify-cg.patch) applied to a StarPU that needs it.
#
# SRC_OR_TARBALL is a StarPU source tree (a git checkout or `git archive` export, with or
# without ./configure) or a tarball (.tar.gz/.tar.bz2/.tar.xz), e.g. the starpu-1.4 branch at
# a67e552b3 in shared/starpu-1.4-a67e552b3.tar.gz. A tarball is unpacked into a new directory
# under ${TMPDIR:-/tmp}; a directory is patched and built in place.
#
# CUDA (--cuda / --no-cuda, or STARPU_CUDA=yes|no|auto; default auto: with CUDA when CUDA_DIR
# has nvcc and cuBLAS). StarPU 1.3.10 and 1.4.12 do not compile against CUDA 13; the
# starpu-1.4 branch after commits 847b947ee and 1e1bccaa6 does (CUDA 13 removed
# cudaDeviceProp.computeMode and two cuFFT codes; 1.4.12 builds with 1e1bccaa6 applied).
#   with CUDA:    OpenCL off, as the GPU bundle's StarPU always was (a GPU is then a CUDA device,
#                 not also an OpenCL one).
#   without CUDA: OpenCL on, required (ocl-icd-opencl-dev, opencl-c-headers; pocl-opencl-icd to
#                 run OpenCL workers on the CPU with STARPU_OPENCL_ON_CPUS=1).
#
# StarPU-MPI (--mpi / --no-mpi, or STARPU_MPI=yes|no|auto; default auto: with StarPU-MPI when mpicc
# is on PATH and CUDA is off). Tessera runs one program on several ranks through it (tests/mpi). A
# CUDA build leaves it out unless asked: its libstarpumpi would pull Open MPI's libraries into the
# GPU bundle, and the GPU machine has no MPI.
#
# The notify fix. Since StarPU commit b1d707073 (every 1.4 release and master), cg.c's
# _starpu_notify_cg_list sets `terminated` before its notify loop, which drops the lock per
# successor and re-reads nsuccs: a successor declared meanwhile
# (starpu_task_declare_deps_array on a terminating task) notifies itself and is notified again,
# an abort in _starpu_notify_cg or a task that starts before its other predecessors end. The
# patch loops only over the successors present when `terminated` is set; it also defines
# STARPU_TSR_NOTIFY_CG_FIX in the installed starpu_config.h, by which Tessera's configure knows
# it may use explicit dependences (without it, on StarPU >= 1.4, Tessera uses StarPU's implicit
# ones; TSR_DEPS=explicit then fails tsr_init), and exports starpu_tsr_notify_cg_fix from
# libstarpu, by which Tessera's tsr_init knows that the libstarpu it runs with has the fix too.
# The patch's header says what and why, for upstream; tests/starpu/test_notify_race.c is the raw
# repro (`make check` runs it).
# The patch is applied when it applies; a tree that already has it is left as it is; a StarPU
# whose cg.c sets `terminated` after the loop (1.3) needs none. Any other tree stops the build,
# unless NOTIFY_FIX=no (builds StarPU as it is, e.g. to watch the repro fail).
#
# Environment:
#   CUDA_DIR    CUDA toolkit prefix (default /usr/local/cuda)
#   STARPU_CUDA yes|no|auto (default auto; the options win)
#   NOTIFY_FIX  yes (default) or no (do not patch)
#   JOBS        parallel make jobs (default 2)
#   STARPU_MPI  yes|no|auto (default auto; the options win)
#   BUILD_DIR   where to configure and compile (default SRC/build-cuda, or SRC/build without CUDA)
#   UNPATCHED_LIBDIR  also leave in this directory a libstarpu without the notify fix: the same
#               build with only cg.c's part of the patch undone (the same ABI), for a test that loads
#               it through LD_LIBRARY_PATH in place of PREFIX's (tests/starpu/runtime-fix.sh);
#               the build directory is left patched
#
# The configure switches keep libstarpu small and its dependencies few (with CUDA: libcudart,
# libcublas, libhwloc, libgomp). cuBLASLt, cuSPARSE and cuSOLVER are switched off through their
# cache variables because StarPU's configure has no --disable switch for them.
set -eu

me=${ME:-build-starpu}
here=$(cd "$(dirname "$0")" && pwd)
patchfile=$here/starpu-1.4-notify-cg.patch

usage() {
	echo "usage: $0 [--cuda|--no-cuda] [--mpi|--no-mpi] SRC_OR_TARBALL PREFIX" >&2
	echo "  builds StarPU (with CUDA from CUDA_DIR=${CUDA_DIR:-/usr/local/cuda} when found, or as asked;" >&2
	echo "  with StarPU-MPI when mpicc is found and CUDA is off, or as asked)" >&2
	echo "  into PREFIX, with tools/starpu-1.4-notify-cg.patch applied where StarPU needs it" >&2
	exit 2
}

die() {
	echo "$me: $*" >&2
	exit 1
}

say() {
	echo "$me: $*"
}

cuda=${STARPU_CUDA:-auto}
mpi=${STARPU_MPI:-auto}
while [ $# -gt 0 ]; do
	case $1 in
		--cuda) cuda=yes; shift ;;
		--no-cuda) cuda=no; shift ;;
		--mpi) mpi=yes; shift ;;
		--no-mpi) mpi=no; shift ;;
		--help|-h) usage ;;
		--) shift; break ;;
		-*) echo "$me: unknown option '$1'" >&2; usage ;;
		*) break ;;
	esac
done
[ $# -eq 2 ] || usage
input=$1
prefix=$2
cuda_dir=${CUDA_DIR:-/usr/local/cuda}
jobs=${JOBS:-2}
notify_fix=${NOTIFY_FIX:-yes}
unpatched_libdir=${UNPATCHED_LIBDIR:-}

# ---- check the inputs before doing anything long
[ -e "$input" ] || die "source '$input' does not exist"
case $cuda in
	yes)
		[ -x "$cuda_dir/bin/nvcc" ] || die "no nvcc in CUDA_DIR '$cuda_dir' (set CUDA_DIR to the CUDA toolkit prefix, or build --no-cuda)"
		[ -e "$cuda_dir/include/cublas_v2.h" ] || die "no cublas_v2.h under '$cuda_dir/include': StarPU's configure requires cuBLAS" ;;
	no) ;;
	auto)
		if [ -x "$cuda_dir/bin/nvcc" ] && [ -e "$cuda_dir/include/cublas_v2.h" ]; then cuda=yes; else cuda=no; fi ;;
	*) die "STARPU_CUDA '$cuda' is not yes, no or auto" ;;
esac
case $mpi in
	yes) command -v mpicc >/dev/null 2>&1 || die "--mpi: no mpicc on PATH (apt-get install libopenmpi-dev)" ;;
	no) ;;
	auto)
		if [ "$cuda" = no ] && command -v mpicc >/dev/null 2>&1; then mpi=yes; else mpi=no; fi ;;
	*) die "STARPU_MPI '$mpi' is not yes, no or auto" ;;
esac
case $notify_fix in
	yes|no) ;;
	*) die "NOTIFY_FIX '$notify_fix' is not yes or no" ;;
esac
case $jobs in
	''|*[!0-9]*) die "JOBS '$jobs' is not a number" ;;
esac
[ -f "$patchfile" ] || die "the notify patch '$patchfile' is missing"
if [ -n "$unpatched_libdir" ]; then
	[ "$notify_fix" = yes ] || die "UNPATCHED_LIBDIR with NOTIFY_FIX=no: the build itself is already unpatched"
	case $unpatched_libdir in
		/*) ;;
		*) unpatched_libdir=$(pwd)/$unpatched_libdir ;;
	esac
	mkdir -p "$unpatched_libdir" || die "cannot create UNPATCHED_LIBDIR '$unpatched_libdir'"
fi
command -v patch >/dev/null 2>&1 || die "the patch program is missing (apt-get install patch)"
case $prefix in
	/*) ;;
	*) prefix=$(pwd)/$prefix ;;
esac
mkdir -p "$prefix" || die "cannot create prefix '$prefix'"
[ -w "$prefix" ] || die "prefix '$prefix' is not writable"

# ---- a tarball is unpacked into a new directory; a directory is used in place
if [ -f "$input" ]; then
	case $input in
		*.tar.gz|*.tgz|*.tar.bz2|*.tar.xz) ;;
		*) die "'$input' is a file but not a .tar.gz/.tar.bz2/.tar.xz tarball" ;;
	esac
	unpack=$(mktemp -d "${TMPDIR:-/tmp}/starpu-src.XXXXXX")
	say "unpacking $input into $unpack"
	tar -xf "$input" -C "$unpack"
	src=$(find "$unpack" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	[ -n "$src" ] || die "tarball '$input' holds no directory"
else
	src=$input
fi
src=$(cd "$src" && pwd)
[ -f "$src/configure.ac" ] || die "'$src' is not a StarPU source tree (no configure.ac)"
grep -q 'starpu' "$src/configure.ac" || die "'$src/configure.ac' is not StarPU's"
cg=$src/src/core/dependencies/cg.c
[ -f "$cg" ] || die "'$src' has no src/core/dependencies/cg.c: not a StarPU source tree this script knows"

# ---- the notify fix. Is `terminated` set before the notify loop (the bug) or after it (1.3)?
# Within _starpu_notify_cg_list: line of `terminated = 1` against line of the first `for (`.
terminated_first=$(awk '/^void _starpu_notify_cg_list\(/ { f = 1 }
	f && /terminated = 1/ && !t { t = NR }
	f && /for \(/ && !l { l = NR }
	f && /^}/ { exit }
	END { print (t && l && t < l) ? "yes" : "no" }' "$cg")
if [ "$notify_fix" = no ]; then
	say "NOTIFY_FIX=no: StarPU is built as it is, without tools/starpu-1.4-notify-cg.patch"
elif (cd "$src" && patch -p1 -R -f -s --dry-run <"$patchfile") >/dev/null 2>&1; then
	say "the notify fix is already in $src"
elif (cd "$src" && patch -p1 -f -s --dry-run <"$patchfile") >/dev/null 2>&1; then
	say "applying $(basename "$patchfile")"
	(cd "$src" && patch -p1 -f -s <"$patchfile") || die "applying $patchfile failed"
elif [ "$terminated_first" = yes ]; then
	die "$cg sets 'terminated' before notifying its successors (the race tools/starpu-1.4-notify-cg.patch fixes) but the patch does not apply: port it, or NOTIFY_FIX=no to build it anyway"
else
	say "this StarPU sets 'terminated' after notifying (as 1.3 does): it needs no notify fix"
fi

# ---- a git export has no configure: generate it (autogen.sh needs libtool-bin; autoreconf does not)
if [ ! -x "$src/configure" ]; then
	say "no configure in $src: running autoreconf -ivf -I m4"
	(cd "$src" && autoreconf -ivf -I m4) >"$src/autoreconf.log" 2>&1 ||
		die "autoreconf failed, see $src/autoreconf.log"
fi

if [ "$cuda" = yes ]; then
	build=${BUILD_DIR:-$src/build-cuda}
	devices="--enable-cuda --with-cuda-dir=$cuda_dir --disable-opencl"
	what="with CUDA from $cuda_dir"
else
	build=${BUILD_DIR:-$src/build}
	devices="--disable-cuda --enable-opencl"
	what="without CUDA, with OpenCL"
fi
if [ "$mpi" = yes ]; then
	devices="$devices --enable-mpi"
	what="$what and StarPU-MPI"
else
	devices="$devices --disable-mpi"
fi
mkdir -p "$build"
say "configuring $src in $build for prefix $prefix $what"
# shellcheck disable=SC2086
(cd "$build" && "$src/configure" --prefix="$prefix" $devices --enable-maxcpus=64 \
	--disable-fortran --disable-build-doc --disable-build-examples \
	--disable-build-tests --disable-starpufft --disable-starpupy \
	--disable-static --disable-fxt --disable-glpk --disable-papi \
	ac_cv_header_cublasLt_h=no ac_cv_lib_cusparse_cusparseCreate=no \
	ac_cv_lib_cusolver_cusolverDnCreate=no) >"$build/configure.log" 2>&1 ||
	die "configure failed, see $build/configure.log"
if [ "$cuda" = yes ]; then
	grep -q '^#define STARPU_USE_CUDA 1' "$build/include/starpu_config.h" ||
		die "configure did not enable CUDA, see $build/configure.log"
else
	grep -q '^#define STARPU_USE_OPENCL 1' "$build/include/starpu_config.h" ||
		die "configure did not enable OpenCL (install ocl-icd-opencl-dev and opencl-c-headers), see $build/configure.log"
fi
if [ "$mpi" = yes ]; then
	grep -q '^#define STARPU_USE_MPI 1' "$build/include/starpu_config.h" ||
		die "configure did not enable StarPU-MPI (install libopenmpi-dev), see $build/configure.log"
fi

say "compiling with make -j$jobs (a few minutes)"
make -C "$build" -j"$jobs" >"$build/make.log" 2>&1 || die "make failed, see $build/make.log"
say "installing into $prefix"
make -C "$build" install >"$build/install.log" 2>&1 || die "make install failed, see $build/install.log"

# ---- UNPATCHED_LIBDIR: cg.c without the fix (nor its exported marker), recompiled and relinked
# into a copy of libstarpu; then cg.c patched again, so that the build directory matches PREFIX.
# Only cg.c changes: starpu_config.h.in's marker stays, and touching it would rebuild everything.
cg_patch() { # patch's options: cg.c's part of the notify patch, applied or undone
	awk '/^--- a\// { on = ($2 == "a/src/core/dependencies/cg.c") } on' "$patchfile" |
		(cd "$src" && patch -p1 -f -s "$@")
}
if [ -n "$unpatched_libdir" ]; then
	nm -D --defined-only "$prefix"/lib/libstarpu-1.*.so | grep -q ' starpu_tsr_notify_cg_fix$' ||
		die "UNPATCHED_LIBDIR: the libstarpu in $prefix has no notify fix to undo"
	say "UNPATCHED_LIBDIR: relinking libstarpu without the notify fix into $unpatched_libdir"
	cg_patch -R || die "undoing cg.c's part of $patchfile failed"
	make -C "$build/src" -j"$jobs" >"$build/unpatched.log" 2>&1 || die "make failed, see $build/unpatched.log"
	rm -f "$unpatched_libdir"/libstarpu-1.*.so*
	cp -P "$build"/src/.libs/libstarpu-1.*.so* "$unpatched_libdir"/ || die "copying the unpatched libstarpu failed"
	cg_patch || die "applying cg.c's part of $patchfile again failed"
	make -C "$build/src" -j"$jobs" >>"$build/unpatched.log" 2>&1 || die "make failed, see $build/unpatched.log"
	if nm -D --defined-only "$unpatched_libdir"/libstarpu-1.*.so | grep -q ' starpu_tsr_notify_cg_fix$'; then
		die "UNPATCHED_LIBDIR: the library in $unpatched_libdir still exports starpu_tsr_notify_cg_fix"
	fi
fi

pc=$(ls "$prefix"/lib/pkgconfig/starpu-1.*.pc 2>/dev/null | sort -V | tail -n 1)
[ -n "$pc" ] || die "no starpu-1.x.pc installed under $prefix/lib/pkgconfig"
conf=$(ls "$prefix"/include/starpu/1.*/starpu_config.h 2>/dev/null | sort -V | tail -n 1)
if grep -q '^#define STARPU_TSR_NOTIFY_CG_FIX 1' "$conf" 2>/dev/null; then
	fix="with the notify fix"
elif [ "$terminated_first" = yes ]; then
	fix="WITHOUT the notify fix (Tessera will use implicit dependences on it)"
else
	fix="(no notify fix needed)"
fi
say "done: $(basename "$pc" .pc) $what, $fix, in $prefix"
[ -z "$unpatched_libdir" ] || say "and the same libstarpu without the notify fix in $unpatched_libdir"
say "configure Tessera with: ./configure --with-starpu=$prefix"
