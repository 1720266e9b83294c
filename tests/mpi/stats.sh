#!/bin/sh
# tests/mpi/stats.sh: TSR_STATS=1 on 2 ranks. Each rank prints the figures of its own workers; every
# line says whose ("tessera stats [rank R of 2]:"), so that two ranks' tables are never read as one.
. "${top_srcdir:-.}/tests/mpi/common.sh"
limit=${TSR_MPI_TIMEOUT:-$(scaled 150)}
echo "1..1"
log=$tmp/stats.log
TSR_STATS=1 mpi_run 2 "$limit" "$log" "$b/tests/mpi/bits"
rc=$?
labelled=0
for r in 0 1; do
	rank_lines "$log.err" $r | grep -q "^tessera stats \[rank $r of 2\]: idle fraction" && labelled=$((labelled + 1))
done
unlabelled=$(grep -c "tessera stats: " "$log.err")
if [ $rc -eq 0 ] && [ $labelled -eq 2 ] && [ "$unlabelled" -eq 0 ]; then
	echo "ok 1 - np 2: each rank's stats lines name the rank"
else
	echo "not ok 1 - np 2: mpirun status $rc, $labelled of 2 ranks labelled their stats, $unlabelled lines unlabelled"
	show_log "$log"
fi
