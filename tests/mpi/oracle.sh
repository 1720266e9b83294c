#!/bin/sh
# tests/mpi/oracle.sh: the oracle's random programs (tests/oracle/README.md; shape mix: classic
# programs and the four coherence-by-pieces families, with random owners) on 2 and 4 MPI ranks,
# in batch mode (--first/--count: one process per rank, no fork). Every rank runs every program
# and compares every field and future with the sequential interpreter; each rank prints its
# "N of COUNT programs failed" line, and mpirun's status is nonzero if any rank failed.
# Programs per setting: 1000 on 2 ranks and 300 on 4 ranks by default (TSR_MPI_ORACLE_COUNT2,
# TSR_MPI_ORACLE_COUNT4; TSR_MPI_ORACLE_COUNT sets both). On a 2-core machine 4 ranks oversubscribe
# every core three times over (each rank's host thread, worker and StarPU-MPI thread): a program
# costs about 0.5 s there against 0.08 s on 2 ranks, and 1000 of them would take 8 of make check's
# 10 minutes. `TSR_MPI_ORACLE_COUNT4=1000 make check` runs the full thousand. A batch whose output stops for
# TSR_MPI_ORACLE_STALL seconds (default 60 times CK_TIMEOUT_MULTIPLIER, 240 under make check: at load
# 13-17 one program took 35 s against 0.08 s when quiet; every rank prints "# seed N" before each
# program) is killed and reported as a hang, with the seed each rank was running. That watchdog, on
# progress, is the hang guard: a batch that keeps going is not cut short (at load 17 a program took
# 3 s, 40 times its quiet time: 1000 would take most of an hour). TSR_MPI_ORACLE_TIMEOUT, if set,
# also bounds a whole batch in seconds; by default only the stall limit per program does (STALL
# times the programs). The watchdog looks at the log every 2 s: the batch's end ends the wait.
# TSR_ORACLE_OWNERS=0 runs the same programs without their random owners.
. "${top_srcdir:-.}/tests/mpi/common.sh"
stall=${TSR_MPI_ORACLE_STALL:-$(scaled 60)}
oracle=$b/tests/oracle/oracle
echo "1..2"
i=0
for cfg in "2 eager 40001" "4 lws 50001"; do
	set -- $cfg
	np=$1
	sched=$2
	first=$3
	i=$((i + 1))
	if [ "$np" -eq 2 ]; then
		count=${TSR_MPI_ORACLE_COUNT:-${TSR_MPI_ORACLE_COUNT2:-1000}}
	else
		count=${TSR_MPI_ORACLE_COUNT:-${TSR_MPI_ORACLE_COUNT4:-300}}
	fi
	limit=${TSR_MPI_ORACLE_TIMEOUT:-$((stall * (count + 1)))}
	log=$tmp/oracle$np
	mpi_start "$np" "$limit" "$log" "$oracle" --first "$first" --count "$count" --sched "$sched" --ncpu 1 --progress
	run=$!
	stalled=0
	# a program that makes no progress for $stall s is a hang: end the run now, not at $limit
	lines=-1
	still=0
	while kill -0 $run 2>/dev/null; do
		sleep 2
		now=$(wc -l <"$log" 2>/dev/null || echo 0)
		if [ "$now" = "$lines" ]; then
			still=$((still + 2))
		else
			still=0
			lines=$now
		fi
		if [ $still -ge "$stall" ]; then
			stalled=1
			kill -TERM $run 2>/dev/null
			break
		fi
	done
	wait $run
	rc=$?
	name="oracle np $np sched=$sched ncpu=1: $count programs (seeds $first..$((first + count - 1)))"
	ranks=$(ranks_matching "$log" "$np" "^0 of $count programs failed")
	if [ $rc -eq 0 ] && [ $ranks -eq "$np" ]; then
		echo "ok $i - $name on every rank ($(rank_lines "$log" 0 | sed -n 's/.* in \(.*\)$/\1/p'))"
		continue
	fi
	[ $stalled -eq 1 ] && rc=124
	case $rc in
	124 | 137 | 143) what="hangs: no progress for $stall s, or not done in $limit s (killed)" ;;
	*) what="mpirun exit status $rc, $ranks of $np ranks matched every program" ;;
	esac
	echo "not ok $i - $name: $what"
	grep "FAIL seed\|failed (seeds\|replay" "$log" | head -n 20 | sed 's/^/#   /'
	r=0
	while [ $r -lt "$np" ]; do
		echo "#   rank $r was running$(rank_lines "$log" $r | sed -n 's/^# seed / seed /p' | tail -n 1) (replay: mpirun -np $np $oracle --seed N --sched $sched --ncpu 1 -v)"
		r=$((r + 1))
	done
	show_log "$log" 10
done
