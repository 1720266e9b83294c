#!/bin/sh
# check.sh: does the Tessera backend of Task Bench run every dependence pattern correctly, in both
# mappings, and refuse what it cannot run with a message? Small graphs: seconds, not a measurement.
set -u

usage() {
	cat <<'EOF'
usage: check.sh [BUILD_DIR]
Run BUILD_DIR/tessera/main (default ./taskbench-build, see build.sh) on every Task Bench
dependence pattern, natural mapping and -tessera-proj, 2 CPU workers, with eager and lws, then in
traces (-tessera-trace) and with TSR_REPLAY=off; each run must exit 0 and print its check of the
last step's outputs; then the floor backend (BUILD_DIR/floor/main) on every pattern (Task Bench's core checks every task's inputs and aborts on a wrong one). Then the refusals: -field 1 on a graph with dependencies, and
-tessera-proj on a graph whose points have more dependencies than a launch takes requirements.
Prints one line per case and "check.sh: N failed" at the end; exit status 1 if any failed.
EOF
}

case "${1:-}" in
-h|--help) usage; exit 0 ;;
esac
builddir=${1:-taskbench-build}
bin=$builddir/tessera/main
if [ ! -x "$bin" ]; then
	echo "check.sh: $bin not found: run build.sh first" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export STARPU_NCPU=2 TSR_NCPU=2 STARPU_SILENT=1 STARPU_HOME="$tmp"
failed=0

pass() { echo "ok: $*"; }
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }

# expect_verified NAME LINE COMMAND...: the run exits 0 and prints LINE, its own check of the last
# step's outputs (Task Bench's core checks every task's inputs and aborts on a wrong one).
expect_verified() {
	name=$1 line=$2
	shift 2
	rc=0
	"$@" > "$tmp/out" 2>&1 || rc=$?
	if [ $rc = 0 ] && grep -qxF "$line" "$tmp/out"; then
		pass "$name"
	else
		fail "$name (exit $rc): $(tail -n 2 "$tmp/out" | tr '\n' ' ')"
	fi
}
tessera_ok="Tessera: outputs of the last step verified"

# random_spread is left out: Task Bench's own App::check divides by its period, 0 (SIGFPE in
# every backend).
patterns="trivial no_comm stencil_1d stencil_1d_periodic dom tree fft all_to_all nearest spread random_nearest"
for sched in eager lws; do
	for pattern in $patterns; do
		for mapping in "" -tessera-proj; do
			expect_verified "$sched $pattern ${mapping:-natural}" "$tessera_ok" \
				env STARPU_SCHED=$sched "$bin" -steps 20 -width 8 -type "$pattern" \
				-kernel compute_bound -iter 64 -field 2 $mapping
		done
	done
done

# The steps in traces (-tessera-trace): patterns whose steps differ (tree, fft, dom...) fall back to
# the full analysis wherever the launches differ from the recording, and must still be right; so
# must the automatic mode alone (the default) and the full analysis (TSR_REPLAY=off).
for pattern in $patterns; do
	for mode in "-tessera-trace auto" "- off"; do
		flag=${mode% *}
		[ "$flag" = - ] && flag=
		expect_verified "eager $pattern ${flag:-no trace calls} TSR_REPLAY=${mode#* }" "$tessera_ok" \
			env STARPU_SCHED=eager TSR_REPLAY=${mode#* } "$bin" -steps 20 -width 8 -type "$pattern" \
			-kernel compute_bound -iter 64 -field 3 $flag
	done
done

# Several graphs in one run (-and), one of them with scratch memory (memory_bound kernel).
expect_verified "two graphs, scratch memory" "$tessera_ok" \
	env STARPU_SCHED=eager "$bin" -steps 10 -width 4 -type stencil_1d -field 2 -and -steps 12 -width 6 \
	-type nearest -kernel memory_bound -iter 4 -scratch 8192 -field 3

# Refusals: exit status 1 and a message naming the graph, the flag or step, and what to do.
# expect_refusal NAME PATTERN PROGRAM ARGS...
expect_refusal() {
	name=$1 pattern=$2
	shift 2
	rc=0
	STARPU_SCHED=eager "$@" > "$tmp/out" 2>&1 || rc=$?
	if [ $rc = 1 ] && grep -q "$pattern" "$tmp/out"; then
		pass "$name refused: $(grep "$pattern" "$tmp/out" | head -n 1)"
	else
		fail "$name: exit $rc, no message matching '$pattern': $(tail -n 2 "$tmp/out" | tr '\n' ' ')"
	fi
}
expect_refusal "-field 1" "graph 0: -field 1: step 1 reads step 0's outputs .*-field 2 or more" \
	"$bin" -steps 4 -width 4 -type stencil_1d -field 1
expect_refusal "-tessera-proj with 100 dependencies" "step 1 of graph 0 (101 requirements)" \
	"$bin" -steps 4 -width 100 -type all_to_all -field 2 -tessera-proj

# The floor backend (floor_main.cc: raw StarPU, no data handles, explicit dependences) must be as
# right as the others, with 2 and 3 fields (its dependences on the readers of the slot it
# overwrites differ) and with the StarPU data it can list for measurement (-floor-buffers 2).
floor=$builddir/floor/main
if [ -x "$floor" ]; then
	for pattern in $patterns; do
		for opts in "-field 2" "-field 3" "-field 2 -floor-buffers 2"; do
			expect_verified "floor $pattern $opts" "StarPU floor: outputs of the last step verified" \
				env STARPU_SCHED=eager "$floor" -steps 20 -width 8 -type "$pattern" \
				-kernel compute_bound -iter 64 $opts
		done
	done
	expect_refusal "floor -field 1" "graph 0: -field 1: give -field 2 or more" \
		"$floor" -steps 4 -width 4 -type stencil_1d -field 1
else
	echo "check.sh: $floor not built: the floor backend is not checked"
fi

echo "check.sh: $failed failed"
[ $failed = 0 ]
