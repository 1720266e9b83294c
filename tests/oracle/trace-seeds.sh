#!/bin/sh
# tests/oracle/trace-seeds.sh: loops whose traces gave wrong answers, replayed by seed.
# - 461346 (--shape repeat, 1 CPU worker, every policy; found in session 44): the first
#   iteration of trace 0 ends with a host map that writes, which brings the data back to the
#   state the recording began from. The second iteration starts in that state and replays; the
#   third started where the second's launches left the data, which is not that state, but the
#   trace took it as "steady" without comparing, replayed the recorded dependences, and a write
#   ran before a reduction's fold it should have waited for (replay.c: a start state is steady
#   only once the recording's launches are known to end in it). The whole program and the
#   smallest one that still failed (--keep), each a few times.
bin=${top_builddir:-.}/tests/oracle/oracle
repeat=${TSR_ORACLE_TRACE_REPEAT:-3}
. "${top_srcdir:-.}/tests/common.sh"
out=$(mktemp "${TMPDIR:-/tmp}/tsr-seeds.XXXXXX") || exit 99
trap 'rm -f "$out"' EXIT
report_logs=$out
run() {
	"$bin" "$@" --shape repeat --repeat "$repeat" >"$out" 2>&1
	report "oracle $* (x$repeat)" $?
}
keep=0,1,2,5,15,48,71,79,80,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100,104
echo "1..5"
run --seed 461346 --sched eager --ncpu 1
run --seed 461346 --sched lws --ncpu 1
run --seed 461346 --sched dmda --ncpu 1
run --seed 461346 --keep "$keep" --sched eager --ncpu 1
run --seed 461346 --keep "$keep" --sched eager --ncpu 2
[ $failed -eq 0 ]
