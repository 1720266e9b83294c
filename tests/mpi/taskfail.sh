#!/bin/sh
# tests/mpi/taskfail.sh: a task that fails on one rank's piece (issue 21), on 2 and 4 ranks:
# tsr_map of the poisoned field returns TSR_ETASK with the task's message on every rank, and the
# program goes on (tsr_fence, destroy, tsr_finalize) without TSR_EDIVERGE or MPI_Abort; futures
# computed from the poisoned tile (an index launch's sum, a single launch's value) are poisoned on
# every rank, so a task on rank 0 that reads one is skipped and poisons its tile. One TAP
# line per run: every rank prints "taskfail rank R: PASS" and mpirun's status is 0
# (tests/mpi/taskfail.c; 1 s when quiet). A run is killed after TSR_MPI_TIMEOUT seconds (default 60
# times CK_TIMEOUT_MULTIPLIER, as in mpi.sh): a hang is a failure.
. "${top_srcdir:-.}/tests/mpi/common.sh"
limit=${TSR_MPI_TIMEOUT:-$(scaled 60)}
echo "1..2"
i=0
for np in 2 4; do
	i=$((i + 1))
	log=$tmp/taskfail$np
	mpi_run $np "$limit" "$log" "$b/tests/mpi/taskfail"
	rc=$?
	passed=$(ranks_matching "$log" $np "^taskfail rank [0-9]*: PASS")
	name="taskfail: np $np: a task fails on rank 1's tile: TSR_ETASK from tsr_map on every rank, futures computed from it poisoned on every rank, then fence and finalize"
	if [ $rc -eq 0 ] && [ "$passed" -eq $np ]; then
		echo "ok $i - $name"
	else
		case $rc in
		124 | 137) what="did not end in $limit s (killed)" ;;
		*) what="mpirun exit status $rc" ;;
		esac
		echo "not ok $i - $name: $what, $passed of $np ranks passed"
		show_log "$log" 30
	fi
done
