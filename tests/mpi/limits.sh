#!/bin/sh
# tests/mpi/limits.sh: what several ranks refuse at tsr_init, on 2 ranks. TSR_COHERENCE=tokens
# (the device path's protocol, as with devices: not supported across ranks yet) and
# TSR_REDUX=unordered (arrival order differs from rank to rank) each fail tsr_init with
# TSR_EINVAL and a message naming the switch, on every rank, and the job ends.
. "${top_srcdir:-.}/tests/mpi/common.sh"
limit=${TSR_MPI_TIMEOUT:-$(scaled 60)}
echo "1..2"
i=0
refused() {   # switch=value, words the message must hold
	i=$((i + 1))
	log=$tmp/limits$i.log
	export "$1"
	mpi_run 2 "$limit" "$log" "$b/tests/mpi/bits"
	rc=$?
	unset "${1%%=*}"
	said=$(grep -c "tsr_init: TSR_EINVAL: .*$2" "$log.err")
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && [ "$said" -eq 2 ]; then
		echo "ok $i - np 2: $1 refused by tsr_init on both ranks"
	else
		echo "not ok $i - np 2: $1: mpirun status $rc, $said of 2 ranks said '$2'"
		show_log "$log"
	fi
}
refused TSR_COHERENCE=tokens "TSR_COHERENCE=tokens) are not supported yet"
refused TSR_REDUX=unordered "TSR_REDUX=unordered folds in arrival order"
