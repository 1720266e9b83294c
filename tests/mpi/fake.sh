#!/bin/sh
# tests/mpi/fake.sh: a fake rank (TSR_FAKE_NRANKS=4 TSR_FAKE_RANK=r, one process) does what rank r
# of `mpirun -np 4` does: the same tasks submitted, per codelet, and the same transfers (sends,
# receives, bytes to each rank), as TSR_STATS counts them, rank by rank. The programs are
# apps/bench/fake-ranks's weak-scaled stencil and CG iteration at a small size, the ones
# `make bench-fake-ranks` measures at up to 1,024 fake ranks.
. "${top_srcdir:-.}/tests/mpi/common.sh"
limit=${TSR_MPI_TIMEOUT:-$(scaled 120)}
prog=$b/apps/bench/fake-ranks
stencil="--app stencil --tiles 2 --tile 8 --iters 3 --reps 2 --ncpu 1"
cg="--app cg --blocks 2 --lines 2 --tile 8 --iters 3 --reps 2 --ncpu 1"
echo "1..2"

# The counts rank R printed (TSR_STATS), sorted: what a fake rank and a real one must share.
counts() {
	grep "^tessera: rank $1\( sent\|: [0-9]* sends\|: [0-9]* tasks submitted\| submitted\)" | sort
}

i=0
compare() {   # name, options
	i=$((i + 1))
	log=$tmp/fake-$1.log
	TSR_STATS=1
	export TSR_STATS
	mpi_run 4 "$limit" "$log" -x TSR_STATS "$prog" $2
	rc=$?
	bad=""
	for r in 0 1 2 3; do
		TSR_FAKE_NRANKS=4 TSR_FAKE_RANK=$r timeout "$limit" "$prog" $2 >"$log.fake$r" 2>"$log.fake$r.err" ||
			bad="$bad fake rank $r failed (status $?);"
		rank_lines "$log.err" $r | counts $r >"$log.real$r.counts"
		counts $r <"$log.fake$r.err" >"$log.fake$r.counts"
		[ -s "$log.real$r.counts" ] || bad="$bad rank $r of mpirun printed no counts;"
		cmp -s "$log.real$r.counts" "$log.fake$r.counts" || bad="$bad rank $r differs;"
	done
	unset TSR_STATS
	if [ $rc -eq 0 ] && [ -z "$bad" ]; then
		n=$(cat "$log".real?.counts | wc -l)
		echo "ok $i - $1: 4 fake ranks count what mpirun -np 4's ranks count ($n lines of TSR_STATS)"
	else
		echo "not ok $i - $1: mpirun status $rc;$bad"
		for r in 0 1 2 3; do
			diff "$log.real$r.counts" "$log.fake$r.counts" | sed "s/^/#   rank $r real< fake>: /"
		done
		show_log "$log"
	fi
}
compare stencil "$stencil"
compare cg "$cg"
