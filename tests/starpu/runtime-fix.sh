#!/bin/sh
# runtime-fix.sh: tsr_init checks that the libstarpu it runs with has the notify fix, not only the
# StarPU configure saw (runtime/order.c). A libstarpu of the same soname without the fix, loaded
# through LD_LIBRARY_PATH, must be noticed: Tessera says so once and orders tasks implicitly, and
# TSR_DEPS=explicit fails tsr_init naming the missing fix. TAP.
#
# The unpatched library comes from TSR_UNPATCHED_STARPU_LIBDIR (the CI's StarPU 1.4 leg sets it to
# the copy tools/build-starpu.sh leaves with UNPATCHED_LIBDIR); without it, or on a build whose
# StarPU carries no patch marker (1.3, an unpatched 1.4), those cases skip and only the build's own
# libstarpu is checked. The programs run are the real ones under .libs: libtool's wrappers put
# configure's StarPU first on LD_LIBRARY_PATH.
b=${top_builddir:-.}
info=$b/.libs/tessera-info
circuit=$b/apps/circuit/.libs/circuit
if [ ! -x "$info" ]; then
	echo "1..0 # SKIP $info not built"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/runtime-fix.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
unset TSR_DEPS TSR_SCHED TSR_NCPU TSR_NOPENCL TSR_NCUDA
libs=$(cd "$b/.libs" && pwd)
defined() { grep -q "^#define $1 1" "$b/config.h"; }

. "${top_srcdir:-.}/tests/common.sh"
report_logs="$tmp/out $tmp/err"
skip() { # name reason
	n=$((n + 1))
	echo "ok $n # SKIP $1: $2"
}
# run LIBDIR PROGRAM ARGS...: PROGRAM with LIBDIR first on LD_LIBRARY_PATH (then libtessera's
# directory); output in $tmp/out and $tmp/err, status in $rc.
run() {
	dir=$1
	shift
	LD_LIBRARY_PATH="$dir:$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
lacks="lacks the notify fix (tools/starpu-1.4-notify-cg.patch"

echo "1..5"

# The build's own StarPU (found through libtessera's run path or the system's): nothing said, and
# the ordering configure promised.
run "$libs" "$info" --machine
want=implicit
defined TSR_STARPU_NOTIFY_FIXED && want=explicit
[ $rc = 0 ] && ! grep -q "$lacks" "$tmp/err" && grep -q "^  task ordering: $want$" "$tmp/out"
report "the build's own libstarpu: task ordering $want, no warning" $?

unpatched=${TSR_UNPATCHED_STARPU_LIBDIR:-}
why=
if [ -z "$unpatched" ]; then
	why="no TSR_UNPATCHED_STARPU_LIBDIR (a libstarpu without the notify fix, e.g. tools/build-starpu.sh's UNPATCHED_LIBDIR)"
elif ! defined TSR_STARPU_NOTIFY_MARKER; then
	why="this build's StarPU carries no notify patch marker: nothing to check at run time"
elif ! ls "$unpatched"/libstarpu-1.*.so.* >/dev/null 2>&1; then
	why="no libstarpu under TSR_UNPATCHED_STARPU_LIBDIR '$unpatched'"
fi
if [ -n "$why" ]; then
	for t in "fallback said once" "TSR_DEPS=explicit refused" "circuit --verify on it" "its library is the one loaded"; do
		skip "unpatched libstarpu: $t" "$why"
	done
	exit $failed
fi

# Default ordering: one line on stderr naming the library loaded, then implicit dependences.
run "$unpatched" "$info" --machine
[ $rc = 0 ] && [ "$(grep -c "$lacks" "$tmp/err")" = 1 ] && grep -q "^  task ordering: implicit$" "$tmp/out" &&
	grep -q "tsr_init: the libstarpu loaded ($unpatched/libstarpu-1\.[0-9]*\.so\.[0-9]*) $lacks" "$tmp/err"
report "unpatched libstarpu: said once, naming it; tasks ordered implicitly" $?

# Explicit dependences asked for: tsr_init fails and names the missing fix.
TSR_DEPS=explicit run "$unpatched" "$info" --machine
[ $rc = 1 ] && grep -q "^tessera-info: tsr_init: TSR_DEPS=explicit: the libstarpu loaded ($unpatched/.*) $lacks" "$tmp/err"
report "unpatched libstarpu: TSR_DEPS=explicit fails tsr_init, naming the missing fix (exit $rc)" $?

# A real program on it, with implicit dependences: the right answer.
if [ -x "$circuit" ]; then
	run "$unpatched" "$circuit" --ncpu 2 -p 4 -npp 64 -wpp 128 -i 2 -l 2 --verify
	[ $rc = 0 ] && grep -q '^verify: Tessera: PASS' "$tmp/out" && [ "$(grep -c "$lacks" "$tmp/err")" = 1 ]
	report "unpatched libstarpu: apps/circuit --verify passes on implicit dependences (exit $rc)" $?
else
	skip "unpatched libstarpu: circuit --verify on it" "$circuit not built"
fi

# The loader did take the unpatched library (the test is void otherwise): ldd agrees.
LD_LIBRARY_PATH="$unpatched:$libs" ldd "$info" >"$tmp/out" 2>"$tmp/err"
grep -q "libstarpu-1\.[0-9]*\.so\.[0-9]* => $unpatched/" "$tmp/out"
report "the loader resolves libstarpu to TSR_UNPATCHED_STARPU_LIBDIR" $?
exit $failed
