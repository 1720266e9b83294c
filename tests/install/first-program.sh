#!/bin/sh
# first-program.sh: README's "Your first program" as a test (TAP). Installs Tessera to a temporary
# prefix (make install prefix=DIR), checks that bin/ holds tessera-info and no demo, builds
# tests/install/first.c outside the tree with `cc first.c $(pkg-config --cflags --libs tessera)`
# and runs it (with an rpath, then with LD_LIBRARY_PATH), then builds it against the build tree
# through tessera-uninstalled.pc.
# make installcheck sets TSR_PREFIX (and TSR_LIBDIR, TSR_BINDIR, TSR_PKGCONFIGDIR) to test the
# installation it made instead of making one. tessera.pc requires StarPU's .pc: TSR_STARPU_PCDIR
# (its directory, from configure) goes on PKG_CONFIG_PATH too, as it must for a user when StarPU
# lies outside pkg-config's default path (e.g. a StarPU 1.4 built by tools/build-starpu.sh).
srcdir=${top_srcdir:-.}
builddir=$(cd "${top_builddir:-.}" && pwd)
cc=${CC:-cc}
pkg_config=${PKG_CONFIG:-pkg-config}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tessera-first.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
starpu_pc=${TSR_STARPU_PCDIR:+:$TSR_STARPU_PCDIR}

. "${top_srcdir:-.}/tests/common.sh"
report_logs="$tmp/log"

echo "1..9"
install_prefix
libdir=${TSR_LIBDIR:-$prefix/lib}
bindir=${TSR_BINDIR:-$prefix/bin}
pcdir=${TSR_PKGCONFIGDIR:-$libdir/pkgconfig}

# bin/: tessera-info, and none of the demos under a generic name.
: >"$tmp/log"
[ -x "$bindir/tessera-info" ] || echo "no $bindir/tessera-info" >>"$tmp/log"
for demo in cg stencil circuit hello overhead; do
	[ ! -e "$bindir/$demo" ] || echo "$bindir/$demo is installed" >>"$tmp/log"
done
[ ! -s "$tmp/log" ]
report "bin/ holds tessera-info and no demo" $?

# The installed tessera.pc points at the prefix the library went to.
flags=$(PKG_CONFIG_PATH=$pcdir$starpu_pc "$pkg_config" --cflags --libs tessera 2>"$tmp/log")
echo "pkg-config --cflags --libs tessera: $flags" >>"$tmp/log"
case " $flags " in
*" -I$prefix/include "*" -L$libdir "*) status=0 ;;
*) status=1 ;;
esac
report "installed tessera.pc: -I and -L name the prefix" $status

# The README's one-line compile, with an rpath so that the program finds libtessera.so.2.
PKG_CONFIG_PATH=$pcdir$starpu_pc $cc -o "$tmp/first" "$srcdir/tests/install/first.c" \
	$(PKG_CONFIG_PATH=$pcdir$starpu_pc "$pkg_config" --cflags --libs tessera) -Wl,-rpath,"$libdir" >"$tmp/log" 2>&1 &&
	"$tmp/first" >>"$tmp/log" 2>&1 && grep -q '^first: sum of 1000 x 2.5 = 2500$' "$tmp/log"
report "cc first.c \$(pkg-config --cflags --libs tessera) -Wl,-rpath: builds and runs" $?

# Tessera's flags, from a program built against the installed header alone: --ncpu 1 wins over
# TSR_NCPU=2, and the version the program reports is the header's.
TSR_NCPU=2 "$tmp/first" --ncpu 1 --sched eager >"$tmp/log" 2>&1 &&
	grep -q "^first: Tessera $(sed -n 's/^#define TSR_VERSION_STRING "\(.*\)"$/\1/p' "$prefix/include/tessera.h" | head -n 1), 1 CPU workers, policy eager$" "$tmp/log"
report "first --ncpu 1 --sched eager with TSR_NCPU=2: 1 worker, eager" $?
# The installed tessera-info: --version and --config (the flags it was given, and their source).
# Installed into a prefix other than the configured one, it finds the library through
# LD_LIBRARY_PATH.
info() {
	LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$bindir/tessera-info" "$@"
}
info --version >"$tmp/log" 2>&1 && grep -q "^tessera-info (Tessera) [0-9]" "$tmp/log" &&
	TSR_NCPU=2 info --ncpu 1 --config >>"$tmp/log" 2>&1 &&
	grep -q "^  TSR_NCPU  *--ncpu  *1  *from --ncpu$" "$tmp/log" && grep -q "^  workers: 1 (1 CPU" "$tmp/log"
report "installed tessera-info --version, and --config says --ncpu 1 came from the flag" $?

# Without an rpath, LD_LIBRARY_PATH finds the library.
$cc -o "$tmp/first-norpath" "$srcdir/tests/install/first.c" \
	$(PKG_CONFIG_PATH=$pcdir$starpu_pc "$pkg_config" --cflags --libs tessera) >"$tmp/log" 2>&1 &&
	LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$tmp/first-norpath" >>"$tmp/log" 2>&1 &&
	grep -q '^first: sum of 1000 x 2.5 = 2500$' "$tmp/log"
report "without an rpath, LD_LIBRARY_PATH=libdir runs it" $?

# Against the build tree: with the build directory in PKG_CONFIG_PATH, pkg-config reads
# tessera-uninstalled.pc, whose rpath points at the build tree's library.
flags=$(PKG_CONFIG_PATH=$builddir$starpu_pc "$pkg_config" --cflags --libs tessera 2>"$tmp/log")
echo "pkg-config --cflags --libs tessera (uninstalled): $flags" >>"$tmp/log"
case " $flags " in
*" -L$builddir/.libs "*) status=0 ;;
*) status=1 ;;
esac
report "PKG_CONFIG_PATH=builddir: pkg-config finds tessera-uninstalled.pc" $status

$cc -o "$tmp/first-uninstalled" "$srcdir/tests/install/first.c" \
	$(PKG_CONFIG_PATH=$builddir$starpu_pc "$pkg_config" --cflags --libs tessera) >"$tmp/log" 2>&1 &&
	"$tmp/first-uninstalled" >>"$tmp/log" 2>&1 && grep -q '^first: sum of 1000 x 2.5 = 2500$' "$tmp/log"
report "built against the build tree, runs without LD_LIBRARY_PATH" $?
exit $failed
