#!/bin/sh
# tests/observe/timeline.sh: TSR_TIMELINE files that Perfetto reads. Every file must pass
# tests/observe/timeline_check.py (the Trace Event Format's rules: pid and tid >= 1, named
# processes and threads, numeric counters, nested slices, matched flows), and show what the run
# did: the heat program of heat.c on CPU workers (its tasks, Tessera's future fold, the counters,
# an arrow per dependence with TSR_TIMELINE_FLOWS=1), the same program exiting without tsr_finalize
# (both files are written at exit; one it cannot write is said on stderr), bad switch values
# refused at tsr_init, and apps/stencil's OpenCL variants on POCL's device with the fields in
# host RAM (each task fetches its data: the slices on the bus tracks, at most StarPU's own total
# per bus; skipped where StarPU starts no OpenCL worker). Several ranks: tests/mpi/timeline.sh.
b=${top_builddir:-.}
src=${top_srcdir:-.}
heat=$b/tests/observe/heat
st=$b/apps/stencil/stencil
py=/usr/bin/python3
unset TSR_SCHED TSR_NCPU TSR_NCUDA TSR_NOPENCL TSR_TIMELINE TSR_TIMELINE_FLOWS TSR_DAG TSR_DAG_LABELS \
	TSR_DAG_ITERS TSR_STATS TSR_HOME STARPU_SCHED STARPU_NCPU
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/tsr-timeline.XXXXXX") || exit 1
export STARPU_HOME STARPU_SILENT=1
trap 'rm -rf "$STARPU_HOME"' EXIT
tmp=$STARPU_HOME
echo "1..5"

# expect N NAME FILE EXPR: ok when FILE passes timeline_check.py and EXPR (Python, over its
# summary s) holds.
expect() {
	if "$py" "$src/tests/observe/timeline_check.py" "$3" >"$tmp/summary" 2>"$tmp/why" &&
		"$py" -c "import json, sys
s = json.load(open(sys.argv[1]))
sys.exit(0 if ($4) else 1)" "$tmp/summary"; then
		echo "ok $1 - $2"
	else
		sed 's/^/# /' "$tmp/why" "$tmp/summary" 2>/dev/null | cut -c1-400
		echo "# expected: $4"
		echo "not ok $1 - $2"
	fi
}

# 1: 4 steps on 2 CPU workers: 16 init, 64 step and 16 sum points, the future's fold, arrows.
if TSR_NCPU=2 TSR_TIMELINE="$tmp/heat.json" TSR_TIMELINE_FLOWS=1 "$heat" 4 >"$tmp/out" 2>&1; then
	expect 1 "heat, 2 CPU workers: Perfetto's rules, named tracks, counters, folds, arrows" \
		"$tmp/heat.json" \
		"s['pids'] == [1] and s['slices'].get('task') == 96 and s['flows'] > 0 and
		 'tsr_future_fold' in s['tasks'] and 'tasks' in s['counters'] and
		 'host thread (the one that called tsr_init)' in s['threads'] and
		 sum(t.startswith('worker ') and 'CPU' in t and 'node 0' in t for t in s['threads']) == 2
		 and s['otherData']['complete'] is True"
else
	sed 's/^/# /' "$tmp/out"
	echo "not ok 1 - heat, 2 CPU workers: the program failed"
fi

# 2: exit(0) without tsr_finalize: both files are written at exit, the timeline says so. One
# worker runs each task's callback (which records it) before its next task, so all 80 points are
# in (the future's fold, the last task, may not be).
if TSR_NCPU=1 TSR_TIMELINE="$tmp/exit.json" TSR_DAG="$tmp/exit.dot" "$heat" 3 --exit >"$tmp/out" 2>&1 &&
	grep -q "^}" "$tmp/exit.dot" && grep -q "tooltip=\"79: sum(3,3)\"" "$tmp/exit.dot"; then
	expect 2 "exit without tsr_finalize: timeline and graph written at exit" "$tmp/exit.json" \
		"s['otherData']['complete'] is False and s['slices'].get('task', 0) >= 80"
else
	sed 's/^/# /' "$tmp/out"
	echo "not ok 2 - exit without tsr_finalize: status or graph file wrong"
fi

# 3: at exit, a file that cannot be written is said on stderr.
if TSR_NCPU=1 TSR_TIMELINE=/dev/full "$heat" 1 --exit >"$tmp/out" 2>&1 &&
	grep -q "^tessera: at exit: .*TSR_TIMELINE.*'/dev/full' could not be written" "$tmp/out"; then
	echo "ok 3 - at exit, an unwritable timeline file is said on stderr"
else
	sed 's/^/# /' "$tmp/out"
	echo "not ok 3 - at exit, an unwritable timeline file: not said"
fi

# 4: a bad value of a new switch fails tsr_init, naming the switch and its words.
bad=0
for sw in TSR_TIMELINE_FLOWS=yes TSR_DAG_LABELS=2 TSR_DAG_ITERS=-1 TSR_DAG_ITERS=many; do
	if env "$sw" TSR_TIMELINE="$tmp/bad.json" "$heat" 1 >"$tmp/out" 2>&1 ||
		! grep -q "${sw%%=*}" "$tmp/out"; then
		sed 's/^/# /' "$tmp/out"
		bad=$((bad + 1))
	fi
done
if [ $bad -eq 0 ]; then
	echo "ok 4 - bad values of TSR_TIMELINE_FLOWS, TSR_DAG_LABELS, TSR_DAG_ITERS refused by name"
else
	echo "not ok 4 - $bad bad switch values not refused by name"
fi

# 5: POCL's OpenCL device alone, the fields in host RAM: every task fetches its data there.
ocl="STARPU_OPENCL_ON_CPUS=1 STARPU_HOSTNAME=opencl-on-cpus TSR_NCUDA=0 TSR_NCPU=0 TSR_NOPENCL=1"
if [ ! -x "$st" ]; then
	echo "ok 5 # SKIP $st not built"
elif ! env $ocl TSR_HOME=host TSR_TIMELINE="$tmp/ocl.json" "$st" -nx 16 -ny 16 -nz 2 -iter 2 \
	-tiles 2 --verify >"$tmp/out" 2>&1; then
	if grep -q "^workers: .* 0 OpenCL\|: tsr_init: " "$tmp/out"; then
		echo "ok 5 # SKIP no OpenCL device ($(grep -m 1 "^workers:\|: tsr_init: " "$tmp/out" | tr -d '#'))"
	else
		sed 's/^/# /' "$tmp/out"
		echo "not ok 5 - apps/stencil on POCL's device failed"
	fi
else
	expect 5 "POCL's device: transfer slices on named bus tracks, within StarPU's totals" \
		"$tmp/ocl.json" \
		"s['slices'].get('transfer', 0) > 0 and s['transfer_bytes'] > 0 and
		 'bus node 0 (host RAM) -> node 1 (OpenCL 0 memory)' in s['threads'] and
		 any(t.startswith('worker 0: OpenCL 0, node 1') for t in s['threads']) and
		 'StarPU bus 0->1 total' in s['counters'] and
		 all(v <= s['bus_totals'].get(k, 0) for k, v in s['fetched'].items())"
fi
