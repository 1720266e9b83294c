#!/bin/sh
# build-starpu-cuda.sh SRC_OR_TARBALL PREFIX: build StarPU with CUDA into PREFIX.
#
# SRC_OR_TARBALL is a StarPU source tree (a git checkout or `git archive` export, with or
# without ./configure) or a release tarball (.tar.gz/.tar.bz2/.tar.xz). StarPU 1.3.10 and
# 1.4.12 do not compile against CUDA 13; the starpu-1.4 branch after commits 847b947ee and
# 1e1bccaa6 does, and so does 1.4.12 with 1e1bccaa6 applied (see /work/shared/GPU.md).
#
# Environment:
#   CUDA_DIR   CUDA toolkit prefix (default /usr/local/cuda)
#   JOBS       parallel make jobs (default 2)
#   BUILD_DIR  where to configure and compile (default SRC/build-cuda)
#
# The configure switches keep libstarpu small and its dependencies few: only libcudart,
# libcublas, libhwloc and libgomp. cuBLASLt, cuSPARSE and cuSOLVER are switched off through
# their cache variables because StarPU's configure has no --disable switch for them.
set -eu

usage() {
	echo "usage: $0 SRC_OR_TARBALL PREFIX" >&2
	echo "  builds StarPU with CUDA (CUDA_DIR=${CUDA_DIR:-/usr/local/cuda}) into PREFIX" >&2
	exit 2
}

die() {
	echo "build-starpu-cuda: $*" >&2
	exit 1
}

say() {
	echo "build-starpu-cuda: $*"
}

[ $# -eq 2 ] || usage
input=$1
prefix=$2
cuda_dir=${CUDA_DIR:-/usr/local/cuda}
jobs=${JOBS:-2}

# ---- check the inputs before doing anything long
[ -e "$input" ] || die "source '$input' does not exist"
[ -x "$cuda_dir/bin/nvcc" ] || die "no nvcc in CUDA_DIR '$cuda_dir' (set CUDA_DIR to the CUDA toolkit prefix)"
[ -e "$cuda_dir/include/cublas_v2.h" ] || die "no cublas_v2.h under '$cuda_dir/include': StarPU's configure requires cuBLAS"
case $jobs in
	''|*[!0-9]*) die "JOBS '$jobs' is not a number" ;;
esac
case $prefix in
	/*) ;;
	*) prefix=$(pwd)/$prefix ;;
esac
mkdir -p "$prefix" || die "cannot create prefix '$prefix'"
[ -w "$prefix" ] || die "prefix '$prefix' is not writable"

# ---- a tarball is unpacked next to itself; a directory is used in place
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

# ---- a git export has no configure: generate it (autogen.sh needs libtool-bin; autoreconf does not)
if [ ! -x "$src/configure" ]; then
	say "no configure in $src: running autoreconf -ivf -I m4"
	(cd "$src" && autoreconf -ivf -I m4) >"$src/autoreconf.log" 2>&1 ||
		die "autoreconf failed, see $src/autoreconf.log"
fi

build=${BUILD_DIR:-$src/build-cuda}
mkdir -p "$build"
say "configuring $src in $build for prefix $prefix with CUDA from $cuda_dir"
(cd "$build" && "$src/configure" --prefix="$prefix" \
	--enable-cuda --with-cuda-dir="$cuda_dir" --enable-maxcpus=64 \
	--disable-opencl --disable-fortran --disable-build-doc --disable-build-examples \
	--disable-build-tests --disable-starpufft --disable-mpi --disable-starpupy \
	--disable-static --disable-fxt --disable-glpk --disable-papi \
	ac_cv_header_cublasLt_h=no ac_cv_lib_cusparse_cusparseCreate=no \
	ac_cv_lib_cusolver_cusolverDnCreate=no) >"$build/configure.log" 2>&1 ||
	die "configure failed, see $build/configure.log"
grep -q '^#define STARPU_USE_CUDA 1' "$build/src/common/config.h" "$build/include/starpu_config.h" 2>/dev/null ||
	die "configure did not enable CUDA, see $build/configure.log"

say "compiling with make -j$jobs (a few minutes)"
make -C "$build" -j"$jobs" >"$build/make.log" 2>&1 || die "make failed, see $build/make.log"
say "installing into $prefix"
make -C "$build" install >"$build/install.log" 2>&1 || die "make install failed, see $build/install.log"

pc=$(ls "$prefix"/lib/pkgconfig/starpu-1.*.pc 2>/dev/null | sort -V | tail -n 1)
[ -n "$pc" ] || die "no starpu-1.x.pc installed under $prefix/lib/pkgconfig"
say "done: $(basename "$pc" .pc) with CUDA in $prefix"
say "configure Tessera with: ./configure --with-starpu=$prefix"
