#!/bin/sh
# tests/oracle/device-seeds.sh: the programs that gave wrong answers on the first run on an H100
# with CUDA and CPU workers (seeds 50130, 50166, 61230, 62226, with every kind of program the
# generator makes: --avoid none), and the minimized one, replayed on an OpenCL device with 1 and
# 2 CPU workers beside it, several times each (the failure depended on where each task ran).
# Skipped (77) without an OpenCL device.
bin=${top_builddir:-.}/tests/oracle/oracle
repeat=${TSR_ORACLE_DEVICE_REPEAT:-4}
. "${top_srcdir:-.}/tests/common.sh"
out=$(mktemp "${TMPDIR:-/tmp}/tsr-seeds.XXXXXX") || exit 99
trap 'rm -f "$out"' EXIT
report_logs=$out
run() {
	"$bin" "$@" --nopencl 1 --shape classic --avoid none --repeat "$repeat" >"$out" 2>&1
	report "oracle $* (x$repeat)" $?
}
if "$bin" --seed 1 --nopencl 1 --ncpu 1 >"$out" 2>&1; [ $? -eq 77 ]; then
	echo "1..0 # SKIP no OpenCL device (StarPU starts no OpenCL worker here)"
	exit 0
fi
echo "1..9"
run --seed 50130 --keep 0,1,6,11,12,17,19,25 --sched eager --ncpu 1
for seed in 50130 50166 61230 62226; do
	run --seed $seed --sched eager --ncpu 1
	run --seed $seed --sched dmda --ncpu 2
done
[ $failed -eq 0 ]
