#!/bin/sh
# tests/mpi/timeline.sh: TSR_TIMELINE on 2 ranks. Each rank writes its own file (heat.rank0.json,
# heat.rank1.json), a process of its own (pid rank + 1, named with its rank), whose StarPU-MPI
# sends and receives are async slices with a byte counter; both pass the Trace Event Format's
# rules (tests/observe/timeline_check.py). Then the same program exiting without tsr_finalize:
# each rank still writes its file, once.
. "${top_srcdir:-.}/tests/mpi/common.sh"
src=${top_srcdir:-.}
limit=${TSR_MPI_TIMEOUT:-$(scaled 150)}
echo "1..2"

# rank_passes R STEM EXPR: rank R's file passes and EXPR (Python, over its summary s, with r = R)
# holds; else what went wrong, as comments.
rank_passes() {
	/usr/bin/python3 "$src/tests/observe/timeline_check.py" "$2.rank$1.json" >"$tmp/summary" \
		2>"$tmp/why" &&
		/usr/bin/python3 -c "import json, sys
s = json.load(open(sys.argv[1])); r = int(sys.argv[2])
sys.exit(0 if ($3) else 1)" "$tmp/summary" "$1" && return 0
	sed 's/^/# /' "$tmp/why" "$tmp/summary" | cut -c1-400
	return 1
}

# check N NAME STEM EXPR: ok when both ranks' files pass and EXPR holds for each (both checked).
check() {
	rank_passes 0 "$3" "$4"
	bad0=$?
	rank_passes 1 "$3" "$4"
	if [ $? -eq 0 ] && [ $bad0 -eq 0 ]; then
		echo "ok $1 - $2"
	else
		echo "# expected of each rank r: $4"
		echo "not ok $1 - $2"
	fi
}

mpi_run 2 "$limit" "$tmp/run" -x TSR_NCPU=1 -x TSR_TIMELINE="$tmp/heat.json" \
	-x TSR_TIMELINE_FLOWS=1 "$b/tests/observe/heat" 3
rc=$?
if [ $rc -ne 0 ]; then
	show_log "$tmp/run"
	echo "not ok 1 - np 2: mpirun status $rc"
else
	check 1 "np 2: one file per rank, pid rank + 1, MPI transfers as async slices" "$tmp/heat" \
		"s['pids'] == [r + 1] and s['async'] > 0 and 'MPI bytes' in s['counters'] and
		 s['otherData']['rank'] == r and s['otherData']['ranks'] == 2 and s['flows'] > 0"
fi

rm -f "$tmp"/exit.rank*.json
mpi_run 2 "$limit" "$tmp/exit" -x TSR_NCPU=1 -x TSR_TIMELINE="$tmp/exit.json" \
	"$b/tests/observe/heat" 3 --exit
ok_lines=$(grep -c "exiting without tsr_finalize" "$tmp/exit")
if [ "$ok_lines" -ne 2 ]; then
	show_log "$tmp/exit"
	echo "not ok 2 - np 2, exit without tsr_finalize: $ok_lines of 2 ranks ended"
else
	check 2 "np 2, exit without tsr_finalize: each rank writes its file at exit" "$tmp/exit" \
		"s['pids'] == [r + 1] and s['otherData']['complete'] is False"
fi
