#!/bin/sh
# gpu-bundle.sh OUTDIR: a relocatable bundle of Tessera for a GPU machine that has CUDA's driver
# but no StarPU, no hwloc and no network (what runs there travels as files). `make gpu-bundle`
# calls it with the build's settings in the environment:
#   top_builddir, top_srcdir   the Tessera build and source trees
#   STARPU_LIBDIR              where libstarpu is (configure's --with-starpu prefix)
#   NVCC, NVCCFLAGS, CC        compilers for the bandwidth probe and the cuBLAS stand-in
# OUTDIR gets bin/ (stripped programs), lib/ (every library they need but glibc's, libstdc++,
# the CUDA driver and cuBLAS), lib/cublas-stub/, tests/gpu/, py/, env.sh, run-gpu.sh and MANIFEST;
# then OUTDIR.tar.gz. Programs find lib/ through env.sh (LD_LIBRARY_PATH relative to the bundle),
# which run-gpu.sh sources. The bundle must stay under 60 MB.
set -eu

die() {
	echo "gpu-bundle: $*" >&2
	exit 1
}

[ $# -eq 1 ] || die "usage: $0 OUTDIR"
out=$1
bld=${top_builddir:-.}
src=${top_srcdir:-.}
[ -n "${STARPU_LIBDIR:-}" ] || die "STARPU_LIBDIR is not set (run through make gpu-bundle)"
[ -n "${NVCC:-}" ] && [ -x "$NVCC" ] || die "no nvcc (NVCC='${NVCC:-}'): configure found no CUDA toolkit"
ls "$STARPU_LIBDIR"/libstarpu-1.*.so >/dev/null 2>&1 || die "no libstarpu under '$STARPU_LIBDIR'"
grep -q '^#define STARPU_USE_CUDA 1' "$STARPU_LIBDIR"/../include/starpu/1.*/starpu_config.h 2>/dev/null ||
	echo "gpu-bundle: WARNING: the StarPU in $STARPU_LIBDIR has no CUDA: the bundle will find no GPU worker" >&2

# The real programs behind libtool's wrapper scripts.
real() {
	d=$(dirname "$1")
	b=$(basename "$1")
	if [ -x "$d/.libs/$b" ]; then echo "$d/.libs/$b"; elif [ -x "$1" ]; then echo "$1"; else die "program $1 not built"; fi
}

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/cublas-stub" "$out/tests/gpu" "$out/py"
for p in tessera-info apps/stencil/stencil apps/cg/cg apps/circuit/circuit apps/hello-device/hello-device \
	tests/oracle/oracle tests/unit/test_home; do
	cp "$(real "$bld/$p")" "$out/bin/"
done
cp "$bld"/.libs/libtessera.so.[0-9] "$out/lib/"
sdm=$STARPU_LIBDIR/../bin/starpu_machine_display
[ -x "$sdm" ] && cp "$sdm" "$out/bin/"

# The device's copy bandwidth, the stencil's anchor; the cuBLAS stand-in (GPU.md).
cuda_lib=$(dirname "$(dirname "$NVCC")")/lib64
"$NVCC" ${NVCCFLAGS:-} -o "$out/bin/d2d_bw" "$src/tools/gpu/d2d_bw.cu"
# the real library versions its symbols with the node libcublas.so.13, and libstarpu asks for that
echo 'libcublas.so.13 { global: *; };' >"$out/lib/cublas-stub/cublas.map"
${CC:-cc} -O2 -shared -fPIC -Wl,-soname,libcublas.so.13 -Wl,--version-script,"$out/lib/cublas-stub/cublas.map" \
	-o "$out/lib/cublas-stub/libcublas.so.13" "$src/tools/gpu/cublas_stub.c"
rm -f "$out/lib/cublas-stub/cublas.map"

# Every library the programs load, found the way they will find it (bundle first), except the
# system's own (glibc, libgcc_s, libstdc++), the CUDA driver (it comes with the GPU) and cuBLAS
# (too big: run-gpu.sh finds the machine's or uses the stand-in).
libs=$(for b in "$out"/bin/*; do
	LD_LIBRARY_PATH="$out/lib:$STARPU_LIBDIR:$cuda_lib" ldd "$b" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u)
for l in $libs; do
	case $(basename "$l") in
		libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
		libcuda.so*|libcublas.so*|libcublasLt.so*|libnvidia-*) ;;
		*) [ -e "$out/lib/$(basename "$l")" ] || cp -L "$l" "$out/lib/$(basename "$l")" ;;
	esac
done

# Stripped: symbols are of no use there and the bundle must stay small.
strip --strip-unneeded "$out"/bin/* "$out"/lib/*.so* "$out"/lib/cublas-stub/*.so* 2>/dev/null || true

cp "$src"/tests/gpu/*.gpu "$src/tests/gpu/common.sh" "$out/tests/gpu/"
cp "$src/tools/gpu/stencil_baseline.py" "$src/tools/gpu/cg_baseline.py" "$out/py/"
cp "$src/tools/gpu/run-gpu.sh" "$out/run-gpu.sh"
chmod +x "$out/run-gpu.sh" "$out"/tests/gpu/*.gpu
cat >"$out/env.sh" <<'EOT'
# env.sh: source it to run the bundle's programs by hand (run-gpu.sh does it itself).
TSR_BUNDLE=$(cd "$(dirname "${BASH_SOURCE:-$0}")" && pwd)
LD_LIBRARY_PATH=$TSR_BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PATH=$TSR_BUNDLE/bin:$PATH
export TSR_BUNDLE LD_LIBRARY_PATH PATH
EOT
{
	echo "Tessera GPU bundle"
	echo "built: $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n)"
	echo "tessera: $(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "starpu: $(ls "$STARPU_LIBDIR"/libstarpu-1.*.so.* | head -n 1 | xargs basename)"
	echo "nvcc: $("$NVCC" --version | tail -n 1)"
	echo "NVCCFLAGS: ${NVCCFLAGS:-}"
	echo "files:"
	(cd "$out" && find . -type f | sort | sed 's/^/  /')
} >"$out/MANIFEST"

tar -C "$(dirname "$out")" -czf "$out.tar.gz" "$(basename "$out")"
size=$(du -sk "$out" | cut -f1)
tsize=$(du -k "$out.tar.gz" | cut -f1)
echo "gpu-bundle: $out ($((size / 1024)) MB), $out.tar.gz ($((tsize / 1024)) MB)"
[ "$size" -lt $((60 * 1024)) ] || die "the bundle is $((size / 1024)) MB, over the 60 MB limit"
