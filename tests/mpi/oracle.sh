#!/bin/sh
# tests/mpi/oracle.sh: the oracle's random programs (tests/oracle/README.md; shape mix: classic
# programs and the four coherence-by-pieces families, with random owners) on 2 and 4 MPI ranks,
# in batch mode (--first/--count: one process per rank, no fork). Every rank runs every program
# and compares every field and future with the sequential interpreter; each rank prints its
# "N of COUNT programs failed" line, and mpirun's status is nonzero if any rank failed.
# Programs per setting: 1000 on 2 ranks and 300 on 4 ranks by default (TSR_MPI_ORACLE_COUNT2,
# TSR_MPI_ORACLE_COUNT4; TSR_MPI_ORACLE_COUNT sets both), then loops (--shape repeat: traces and
# their replays, perturbed repetitions, failing tasks) on 2 ranks (100) and 4 ranks (30). On a 2-core machine 4 ranks oversubscribe
# every core three times over (each rank's host thread, worker and StarPU-MPI thread): a program
# costs about 0.3 s there against 0.08 s on 2 ranks, and 1000 of them would take 5 of make check's
# 10 minutes. `TSR_MPI_ORACLE_COUNT4=1000 make check` runs the full thousand.
#
# A busy machine: the ranks' StarPU threads spin while they wait (the CPU worker for tasks,
# StarPU-MPI's thread on MPI_Test), so beside four CPU-bound processes a program took 0.53 s on
# 2 ranks and 10 s on 4 ranks (20 times its quiet time): 300 programs would take 50 minutes. A
# batch therefore has a budget, TSR_MPI_ORACLE_BUDGET seconds (default 120 times
# CK_TIMEOUT_MULTIPLIER, 480 under make check, where the quiet batches take about 280 and 80 s):
# its first PROBE programs (20) measure the time per program (the oracle's own clock, without
# mpirun's start), and the rest of the batch runs as many of the remaining programs as the budget
# leaves room for, at that rate. Every program that runs is checked as before; when the budget
# cuts a batch short the TAP line says how many of its programs ran and at what rate, so a busy
# run is visibly a smaller one, never a silently weaker one.
#
# A batch whose output stops for TSR_MPI_ORACLE_STALL seconds (default 60 times
# CK_TIMEOUT_MULTIPLIER, 240 under make check; every rank prints "# seed N" before each program) is
# killed and reported as a hang, with the seed each rank was running. The watchdog looks at the
# log every 2 s: the batch's end ends the wait. TSR_ORACLE_OWNERS=0 runs the same programs without
# their random owners.
#
# Then single programs outside those ranges that once hung or failed on several ranks (regressions:
# "NP:SCHED:SEED[:SHAPE]", each run alone, watched the same way); a few seconds in all.
. "${top_srcdir:-.}/tests/mpi/common.sh"
stall=${TSR_MPI_ORACLE_STALL:-$(scaled 60)}
full_budget=${TSR_MPI_ORACLE_BUDGET:-$(scaled 120)}
probe=20
oracle=$b/tests/oracle/oracle

# batch NP SCHED FIRST COUNT LOG: one mpirun of COUNT programs from seed FIRST, watched for
# stalls. Sets rc (mpirun's status; 124 for a stall) and secs (the oracle's time for the batch,
# as rank 0 printed it; empty if it did not).
batch() {
	log=$5
	# shellcheck disable=SC2086 # shape_args: empty or "--shape repeat"
	mpi_start "$1" "$((stall * ($4 + 1)))" "$log" "$oracle" --first "$3" --count "$4" --sched "$2" --ncpu 1 --progress $shape_args
	run=$!
	stalled=0
	# a program that makes no progress for $stall s is a hang: end the run now
	lines=-1
	still=0
	waited=0
	while kill -0 $run 2>/dev/null; do
		sleep 2
		waited=$((waited + 2))
		# how far it is, every 30 s (a TAP comment: make check shows it)
		[ $((waited % 30)) -eq 0 ] &&
			echo "# np $1 $2: $(rank_lines "$log" 0 | grep -c '^# seed ') of $4 programs started, $waited s"
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
	[ $stalled -eq 1 ] && rc=124
	ranks=$(ranks_matching "$log" "$1" "^0 of $4 programs failed")
	[ $rc -eq 0 ] && [ "$ranks" -ne "$1" ] && rc=1
	secs=$(rank_lines "$log" 0 | sed -n 's/.* programs failed .* in \([0-9.]*\) s$/\1/p')
}

# The programs the budget leaves room for after the probe: SECS for PROBE programs so far, at most
# LEFT more.
room() {   # secs, probe, left
	awk -v s="$1" -v p="$2" -v l="$3" -v b="$budget" 'BEGIN {
		rate = s / p
		n = rate > 0 ? int((b - s) / rate) : l
		if (n > l) n = l
		if (n < 0) n = 0
		print n
	}'
}

# A failed batch's TAP lines
failed() {   # i, name, np, sched, log
	case $rc in
	124 | 137 | 143) what="hangs: no progress for $stall s (killed)" ;;
	*) what="mpirun exit status $rc, $ranks of $3 ranks matched every program" ;;
	esac
	echo "not ok $1 - $2: $what"
	grep "FAIL seed\|failed (seeds\|replay" "$5" | head -n 20 | sed 's/^/#   /'
	r=0
	while [ $r -lt "$3" ]; do
		echo "#   rank $r was running$(rank_lines "$5" $r | sed -n 's/^# seed / seed /p' | tail -n 1) (replay: mpirun -np $3 $oracle --seed N --sched $4 --ncpu 1 -v)"
		r=$((r + 1))
	done
	show_log "$5" 10
}

# NP:SCHED:SEED[:SHAPE] of each regression program (the shape, when given, is passed as --shape;
# none: the seed's own, as in the mix): why it is here
#   2 eager 13428: a structured read (an index launch through an aliased partition) posted each
#                  rank's receives before its sends, and a send waited behind a receive's no-op on
#                  a writer's view: a cycle across the ranks (coherence_sym.c, tsr__coh_sym_read).
#   3 eager 97049 repeat: a host WRITE map that the ranks refused (a task had failed since the
#                  last fence) had already marked its box valid on every rank and cleared its
#                  poison, so a rank read its stale copy as current: "expected 252 got 253"
#                  (hostaccess.c, commit_write).
#   2-4 eager/lws 121001, 95053, 97045 repeat: poison did not travel with the data between ranks:
#                  a box received from a failed task's outputs read as healthy, and a rank kept a
#                  mark for a box another rank had rewritten since, and skipped its readers
#                  (runtime/xfer.c carries the sender's marks in the transfer's message).
#   2-4 eager/lws 200219, 300174, 400058, 410149 repeat: a rank kept a failed task's mark of a
#                  whole box after receiving part of it from the rank that had rewritten it all,
#                  and skipped its readers (poison.c: a received box replaces what the marks
#                  that meet it hold inside it).
#   2 lws 210094 repeat: a REDUCE point's own mark dropped by the receive its fold needed
#                  (fold.c: a fold's transfers carry the marks of tasks before its point).
#   3 lws 300134 repeat: a future computed from a failed task's output on one rank read as
#                  healthy on the others, and a launch that read it ran there (runtime/xfer.c:
#                  futures' values carry the future's poison; tests/mpi/taskfail.sh on 2 and 4).
#   2 lws 260048, 270020, 3 eager 310300, 4 eager 400085, 3 lws 95053 repeat: marks were whole
#                  boxes that only a write of all of them healed, so a mark's fate hung on writes
#                  other ranks made: a rank dropped a region's mark on receiving a tile of it, or
#                  sent a mark on with a box it had rewritten in part (poison.c: a write or a
#                  receive cuts the marks it meets down to what lies outside it; xfer.c: a
#                  transfer's marks are cut to its box).
regressions="2:eager:13428 3:eager:97049:repeat"
# (one line per family; the TAP lines print the list, so it stays one line of words)
regressions="$regressions 2:lws:121001:repeat 3:eager:121001:repeat 4:lws:121001:repeat"
regressions="$regressions 2:eager:95053:repeat 3:lws:95053:repeat 4:eager:95053:repeat"
regressions="$regressions 2:lws:97045:repeat 3:eager:97045:repeat 4:lws:97045:repeat"
regressions="$regressions 2:eager:200219:repeat 3:lws:300174:repeat 4:eager:400058:repeat"
regressions="$regressions 4:lws:410149:repeat 2:lws:210094:repeat 3:lws:300134:repeat"
regressions="$regressions 2:lws:260048:repeat 2:lws:270020:repeat 3:eager:310300:repeat"
regressions="$regressions 4:eager:400085:repeat"

echo "1..5"
i=0
for cfg in "2 eager 40001 mix" "4 lws 50001 mix" "2 eager 60001 repeat" "4 lws 70001 repeat"; do
	set -- $cfg
	np=$1
	sched=$2
	first=$3
	i=$((i + 1))
	shape_args=
	budget=$full_budget
	if [ "$4" = repeat ]; then
		# loops (traces, their replays, failing tasks): 3 to 4 times a program of the mix; a
		# quarter of the budget
		shape_args="--shape repeat"
		budget=$((full_budget / 4))
		count=${TSR_MPI_ORACLE_COUNT:-$([ "$np" -eq 2 ] && echo 100 || echo 30)}
	elif [ "$np" -eq 2 ]; then
		count=${TSR_MPI_ORACLE_COUNT:-${TSR_MPI_ORACLE_COUNT2:-1000}}
	else
		count=${TSR_MPI_ORACLE_COUNT:-${TSR_MPI_ORACLE_COUNT4:-300}}
	fi
	name="oracle np $np sched=$sched ncpu=1 shape $4"
	n1=$((count < probe ? count : probe))
	batch "$np" "$sched" "$first" "$n1" "$tmp/oracle$np.probe"
	if [ $rc -ne 0 ]; then
		failed $i "$name: programs $first..$((first + n1 - 1))" "$np" "$sched" "$tmp/oracle$np.probe"
		continue
	fi
	t1=${secs:-0}
	n2=$(room "$t1" "$n1" $((count - n1)))
	t2=0
	if [ "$n2" -gt 0 ]; then
		batch "$np" "$sched" $((first + n1)) "$n2" "$tmp/oracle$np"
		if [ $rc -ne 0 ]; then
			failed $i "$name: programs $((first + n1))..$((first + n1 + n2 - 1))" "$np" "$sched" "$tmp/oracle$np"
			continue
		fi
		t2=${secs:-0}
	fi
	ran=$((n1 + n2))
	took=$(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f s", a + b }')
	if [ "$ran" -eq "$count" ]; then
		echo "ok $i - $name: $count programs (seeds $first..$((first + count - 1))) on every rank ($took)"
	else
		rate=$(awk -v s="$t1" -v p="$n1" 'BEGIN { printf "%.2f", s / p }')
		echo "ok $i - $name: $ran of $count programs (seeds $first..$((first + ran - 1))) on every rank ($took); the machine is busy ($rate s per program): the budget of $budget s left no room for the other $((count - ran))"
	fi
done

# the regressions: one batch of one program each
i=$((i + 1))
bad=0
for one in $regressions; do
	np=${one%%:*}
	rest=${one#*:}
	sched=${rest%%:*}
	rest=${rest#*:}
	seed=${rest%%:*}
	shape_args=
	[ "$seed" != "$rest" ] && shape_args="--shape ${rest#*:}"
	batch "$np" "$sched" "$seed" 1 "$tmp/oracle-seed$seed"
	if [ $rc -ne 0 ]; then
		bad=$((bad + 1))
		failed $i "oracle np $np sched=$sched ncpu=1: regression seed $seed" "$np" "$sched" "$tmp/oracle-seed$seed" | sed 's/^not ok.*/# &/'
	fi
done
# shellcheck disable=SC2086 # one word per program
set -- $regressions
n=$#
if [ $bad -eq 0 ]; then
	echo "ok $i - oracle: $n regression programs on several ranks (seeds that once hung or failed: $regressions)"
else
	echo "not ok $i - oracle: $bad of $n regression programs failed (NP:SCHED:SEED $regressions)"
fi
