#!/bin/sh
# tests/observe/graph.sh: TSR_DAG drawn for people, on the heat program of heat.c (a 32x32 grid in
# 4x4 tiles, each step reading a halo partition). With 2 steps the graph has 65 tasks: 16 init,
# 2 x 16 step and 16 sum points, and the fold of the sum's future. Its edges, one per pair: each
# step point reads the halo of its tile, written by the previous launch's points of the 3x3
# tiles around it (4 corners x 4 + 8 sides x 6 + 4 inner x 9 = 100 per step; the second step's
# writes wait for the same points' reads); each sum point reads its tile (16); the fold reads
# every point's value (16): 232. The second step's writes also follow the init points that wrote
# those tiles first (16 more pairs), but through the first step: only TSR_DAG_LABELS=1 draws them
# (248 edges, each with its reasons). Each launch is a box, inside its iteration's box.
# TSR_DAG_ITERS=3 writes 3 iterations of 100 steps. Where graphviz's dot is installed, the 2-step
# graph renders to a page-sized SVG (it was a 45,564-point-wide strip) and the 100-step one renders
# at all (it ran for minutes): a 120-second guard, and the time it took as a comment.
b=${top_builddir:-.}
heat=$b/tests/observe/heat
unset TSR_SCHED TSR_NCPU TSR_NCUDA TSR_NOPENCL TSR_TIMELINE TSR_TIMELINE_FLOWS TSR_DAG TSR_DAG_LABELS \
	TSR_DAG_ITERS TSR_STATS STARPU_SCHED STARPU_NCPU
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/tsr-graph.XXXXXX") || exit 1
export STARPU_HOME STARPU_SILENT=1
trap 'rm -rf "$STARPU_HOME"' EXIT
tmp=$STARPU_HOME
echo "1..5"

nodes() { grep -c 'tooltip="' "$1"; }
edges() { grep -c ' -> ' "$1"; }
# edge lines that repeat a pair
repeats() { grep ' -> ' "$1" | sed 's/ \[.*//' | sort | uniq -d | wc -l; }

# heat_dag DOT STEPS [VAR=VALUE...]: the heat program on 2 CPU workers, its graph written to DOT
# (its output as comments where it fails).
heat_dag() {
	dag=$1
	steps=$2
	shift 2
	env TSR_NCPU=2 "$@" TSR_DAG="$dag" "$heat" "$steps" >"$tmp/out" 2>&1 || sed 's/^/# /' "$tmp/out"
}
# tap N STATUS NAME FAILURE: test N's line, ok NAME where STATUS is 0, else not ok FAILURE.
tap() {
	if [ "$2" -eq 0 ]; then
		echo "ok $1 - $3"
	else
		echo "not ok $1 - $4"
	fi
}

heat_dag "$tmp/h2.dot" 2
n=$(nodes "$tmp/h2.dot")
e=$(edges "$tmp/h2.dot")
labelled=$(grep ' -> ' "$tmp/h2.dot" | grep -c 'label=')
boxes=$(grep -c '^subgraph cluster_' "$tmp/h2.dot")
[ "$n" -eq 65 ] && [ "$e" -eq 232 ] && [ "$labelled" -eq 0 ] && [ "$(repeats "$tmp/h2.dot")" -eq 0 ] &&
	[ "$boxes" -eq 6 ] && grep -q 'label="launch 2: step";' "$tmp/h2.dot" &&
	grep -q 'label="iteration 2";' "$tmp/h2.dot"
tap 1 $? "2 steps: 65 tasks, 232 unlabelled edges, one per pair, 4 launches in 2 iterations" \
	"2 steps: $n tasks, $e edges ($labelled labelled), $boxes boxes"

heat_dag "$tmp/l2.dot" 2 TSR_DAG_LABELS=1
e=$(edges "$tmp/l2.dot")
labelled=$(grep ' -> ' "$tmp/l2.dot" | grep -c 'label="[^"]')
# the second step's pairs each have two reasons: it reads what the first wrote, and overwrites
# what the first read (t16 is step 1's point (0,0), t32 step 2's; t0 init's (0,0))
two=$(grep ' -> ' "$tmp/l2.dot" | grep -c 'WRITE->READ\\nu/tiles')
[ "$e" -eq 248 ] && [ "$labelled" -eq 248 ] && [ "$two" -eq 100 ] &&
	[ "$(repeats "$tmp/l2.dot")" -eq 0 ] &&
	grep -qxF '  t16 -> t32 [label="v/halo(0,0).x WRITE->READ\nu/tiles(0,0).x READ->WRITE"];' \
		"$tmp/l2.dot" &&
	grep -qxF '  t0 -> t32 [label="u/tiles(0,0).x WRITE->WRITE"];' "$tmp/l2.dot"
tap 2 $? "TSR_DAG_LABELS=1: every dependence, each pair one edge with its reasons" \
	"TSR_DAG_LABELS=1: $e edges, $labelled labelled, $two with two reasons"

heat_dag "$tmp/i100.dot" 100 TSR_DAG_ITERS=3
n=$(nodes "$tmp/i100.dot")
[ "$n" -eq 64 ] && grep -q 'label="iteration 3";' "$tmp/i100.dot" &&
	grep -q 'iterations 4 to 100 not written (TSR_DAG_ITERS=3): 64 of 1633 tasks shown' "$tmp/i100.dot"
tap 3 $? "TSR_DAG_ITERS=3: 3 iterations of 100 written, and the graph says so" \
	"TSR_DAG_ITERS=3: $n tasks written"

if ! command -v dot >/dev/null 2>&1; then
	echo "ok 4 # SKIP graphviz's dot not installed"
	echo "ok 5 # SKIP graphviz's dot not installed"
	exit 0
fi

# The SVG's size in points, as dot writes it: width="W" height="H".
svg_size() { sed -n 's/.*<svg width="\([0-9]*\)pt" height="\([0-9]*\)pt".*/\1 \2/p' "$1" | head -1; }
if timeout 120 dot -Tsvg "$tmp/h2.dot" -o "$tmp/h2.svg" 2>"$tmp/why"; then
	set -- $(svg_size "$tmp/h2.svg")
	if [ "${1:-0}" -gt 0 ] && [ "$1" -le 3000 ] && [ "${2:-0}" -gt 0 ] && [ "$2" -le 3000 ]; then
		echo "ok 4 - dot: the 2-step graph is ${1}x${2} points"
	else
		echo "not ok 4 - dot: the 2-step graph is ${1}x${2} points (more than 3000 a side)"
	fi
else
	sed 's/^/# /' "$tmp/why"
	echo "not ok 4 - dot failed on the 2-step graph"
fi

heat_dag "$tmp/h100.dot" 100
t0=$(date +%s.%N)
if timeout 120 dot -Tsvg "$tmp/h100.dot" -o "$tmp/h100.svg" 2>"$tmp/why"; then
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	echo "# dot -Tsvg of the 100-step graph ($(nodes "$tmp/h100.dot") tasks, $(edges "$tmp/h100.dot") edges): $secs s, $(svg_size "$tmp/h100.svg" | tr ' ' x) points"
	echo "ok 5 - dot renders the 100-step graph"
else
	sed 's/^/# /' "$tmp/why"
	echo "not ok 5 - dot did not render the 100-step graph within 120 s"
fi
