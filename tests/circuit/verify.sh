#!/bin/sh
# verify.sh: apps/circuit --verify (Tessera against the plain sequential C version) on Legion's
# defaults and on the shapes and schedulers that stress the private/shared/ghost partitions. TAP.
prog=${top_builddir:-.}/apps/circuit/circuit
if [ ! -x "$prog" ]; then
	echo "1..0 # SKIP $prog not built"
	exit 0
fi
log=$(mktemp "${TMPDIR:-/tmp}/circuit-verify.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT INT TERM
# --sched must win: Tessera lets TSR_SCHED override the program's choice.
unset TSR_SCHED

n=0
failed=0
report() { # name status
	n=$((n + 1))
	if [ "$2" = 0 ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		sed 's/^/# /' "$log" | tail -n 25
		failed=1
	fi
}

# verify NAME ARGS...: the run succeeds and every verification it prints passes.
verify() {
	name=$1
	shift
	"$prog" "$@" >"$log" 2>&1
	rc=$?
	if [ $rc = 0 ] && grep -q '^verify: Tessera: PASS' "$log" && ! grep -q ': FAIL' "$log"; then
		report "$name" 0
	else
		report "$name (exit $rc)" 1
	fi
}

# fails NAME ARGS...: the program refuses the command line with exit status 2 and a message.
fails() {
	name=$1
	shift
	"$prog" "$@" >"$log" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -q '^circuit: ' "$log"; then report "$name" 0; else report "$name (exit $rc)" 1; fi
}

echo "1..21"
# Legion's defaults: 4 pieces x 1024 nodes x 1024 wires, 95% in piece, 2 loops of 10000 steps.
verify "defaults" --verify
# Few RLC steps: the iteration has not converged, so a wrong update cannot hide (issue's warning).
verify "-i 1 (one RLC step per loop), eager" --sched eager -i 1 -l 4 --verify
verify "-i 3, lws" --sched lws -i 3 -l 3 --verify
verify "-i 0 (no RLC step)" -i 0 -l 2 --verify
# More pieces than workers, with every scheduler.
for s in eager lws dmda; do
	verify "16 pieces on 2 workers, pct 80, $s" --sched $s --ncpu 2 -p 16 -npp 200 -wpp 520 -pct 80 -i 3 -l 3 --verify
done
# pct 100: no shared node at all (one padding node per piece): every value bit-identical.
verify "pct 100, bit-identical" -pct 100 -p 6 -npp 300 -wpp 400 -i 3 -l 3 --exact
# pct 50 with every scheduler.
for s in eager lws dmda; do
	verify "pct 50, $s" --sched $s -pct 50 -p 8 -npp 256 -wpp 512 -i 3 -l 3 --verify
done
# One piece: no shared node, no ghost: bit-identical.
verify "1 piece, bit-identical" -p 1 -npp 500 -wpp 700 -i 3 -l 3 --exact
# Two pieces: each ghost box lies in the other piece's shared box, so the ghost partition is
# disjoint: distribute_charge reduces one field through two disjoint partitions (shared, ghost).
verify "2 pieces (disjoint ghost partition)" -p 2 -i 3 -l 3 --verify
# pct 0 with few nodes: every node is shared, the private subregions are padding.
verify "pct 0, no private node" -pct 0 -p 8 -npp 32 -wpp 256 -i 2 -l 3 --verify
# Wire counts that are not multiples of the vector width (partial blocks), 3 repetitions of the loop.
verify "odd sizes, --reps 3" -p 5 -npp 333 -wpp 1001 -i 2 -l 2 --reps 3 --verify
# The OpenMP baseline computes the same circuit (its result is verified too), one worker; it runs
# in the Tessera session with the workers paused, twice, Tessera restarting from the initial state.
verify "--compare --reps 2, 1 CPU worker" --ncpu 1 -p 4 -npp 512 -wpp 512 -i 5 -l 2 --reps 2 --compare --verify
# Wire 15350 of piece 0 (capacitance 2e-7 F) makes Legion's explicit RLC iteration overflow: NaN
# then spreads through its nodes. Tessera must produce the NaN exactly where the reference does.
"$prog" -p 2 -npp 256 -wpp 15351 -i 100 -l 2 --verify >"$log" 2>&1 && grep -q '^verify: Tessera: PASS' "$log" &&
	grep -q '^verify: wire currents .*NaN/inf on both sides' "$log"
report "diverging wire: NaN where the reference has NaN" $?
# Command line.
"$prog" --help >"$log" 2>&1 && grep -q 'usage: circuit' "$log"
report "--help" $?
fails "unknown option refused" -bogus
fails "-pct 101 refused" -pct 101
fails "missing value refused" -p
exit $failed
