#!/bin/sh
# tools/oracle-stalls.sh: the oracle's batches on several ranks, watched for stalls, and for each
# stall what every rank's threads were doing and which rank a SIGSTOP/SIGCONT "kick" set going.
#
# Why: batches of the oracle on 3 ranks of a busy 2-core machine stop printing for 10 to 30 s,
# sometimes longer, about once in 1,000 to 6,000 programs; none reproduces by seed. Seen so far:
# every rank has made the same Tessera collectives (same count, same call), the ranks wait on
# one another (a tsr_map's acquire, a fence, or Tessera's gather at the next blocking call),
# StarPU-MPI's threads poll or sleep, and SIGSTOP then SIGCONT of any one rank sets the job
# going within a second. Bounding every pthread_cond_wait (an LD_PRELOAD experiment) or replacing
# the shared-memory transport (--mca btl self,tcp) did not remove them; quiet batches (15 s for
# 3,000 programs) had none. This script counts them and keeps, for each, every rank's threads
# and which kick ended it.
#
# Usage: tools/oracle-stalls.sh [NP [FIRST [COUNT [BATCHES [STALL_S [ORACLE ARGS...]]]]]]
#   defaults: 3 ranks, seeds from 200000, 3000 programs a batch, 4 batches, 20 s of silence, and
#   --sched eager --ncpu 1. Run from the build tree (tests/oracle/oracle must be built: make
#   tests/oracle/oracle). Logs and thread states go to $TMPDIR/oracle-stalls.XXXXXX (kept).
# Prints one line per batch (programs run, stalls, how each resumed) and a total. A stall that no
# kick ends and that lasts HANG_S more seconds (default 60) is a hang: the batch is killed.
np=${1:-3}
first=${2:-200000}
count=${3:-3000}
batches=${4:-4}
stall=${5:-20}
if [ $# -gt 5 ]; then
	shift 5
else
	set --
fi
[ $# -eq 0 ] && set -- --sched eager --ncpu 1
oracle=${ORACLE:-tests/oracle/oracle}
dir=$(mktemp -d "${TMPDIR:-/tmp}/oracle-stalls.XXXXXX") || exit 1
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
STARPU_SILENT=1
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM STARPU_SILENT

# The ranks' process ids, as "RANK:PID" (the oracle's processes under mpirun MPIRUN_PID).
rank_pids() {
	for p in $(pgrep -P "$1"); do
		r=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
		[ -n "$r" ] && echo "$r:$p"
	done
}

# Every thread of PID: name, state, CPU ticks used, kernel wait channel, system call (no ptrace).
threads() {
	for t in /proc/"$1"/task/*; do
		stat=$(cat "$t/stat" 2>/dev/null) || continue
		# fields after the command name: state is the 1st, utime and stime the 12th and 13th
		echo "${stat#*) }" | awk -v n="$(cat "$t/comm")" -v w="$(cat "$t/wchan" 2>/dev/null)" \
			-v s="$(cut -d' ' -f1-3 "$t/syscall" 2>/dev/null)" -v tid="${t##*/}" \
			'{ printf "  %-7s %-6s %s cpu=%d wchan=%s syscall=%s\n", tid, n, $1, $12 + $13, w, s }'
	done
}

lines_of() {
	wc -l <"$1" 2>/dev/null || echo 0
}

# Wait up to $2 seconds for log $1 to grow past $3 lines; 0 if it did.
grows() {
	i=0
	while [ "$i" -lt "$2" ]; do
		sleep 1
		[ "$(lines_of "$1")" != "$3" ] && return 0
		i=$((i + 1))
	done
	return 1
}

# A stall of batch log $1 under mpirun $2: thread states, then kick the ranks one at a time in a
# random order until one sets the job going. Prints how it resumed.
on_stall() {
	log=$1
	now=$(lines_of "$log")
	pids=$(rank_pids "$2")
	for rp in $pids; do
		last=$(grep "^\[1,${rp%%:*}\]<stdout>:# seed" "$log" | tail -n 1 | sed 's/.*# //')
		echo "rank ${rp%%:*} (pid ${rp#*:}), last $last"
		threads "${rp#*:}"
	done >>"$log.stall"
	for rp in $(echo "$pids" | tr ' ' '\n' | shuf); do
		kill -STOP "${rp#*:}" && sleep 0.2 && kill -CONT "${rp#*:}"
		if grows "$log" 3 "$now"; then
			echo "resumed by kicking rank ${rp%%:*}" | tee -a "$log.stall"
			return
		fi
	done
	if grows "$log" "${HANG_S:-60}" "$now"; then
		echo "no kick resumed it; it went on by itself within ${HANG_S:-60} s" | tee -a "$log.stall"
		return
	fi
	echo "no kick resumed it, nor ${HANG_S:-60} s more: a hang" | tee -a "$log.stall"
}

total=0
nstalls=0
b=0
while [ "$b" -lt "$batches" ]; do
	seed=$((first + b * count))
	log=$dir/batch$seed.log
	mpirun --oversubscribe --tag-output -np "$np" "$oracle" --first "$seed" --count "$count" \
		--progress "$@" >"$log" 2>&1 &
	run=$!
	stalls=0
	how=
	while kill -0 "$run" 2>/dev/null; do
		lines=$(lines_of "$log")
		grows "$log" "$stall" "$lines" && continue
		kill -0 "$run" 2>/dev/null || break
		stalls=$((stalls + 1))
		how="$how; $(on_stall "$log" "$run")"
		case $how in
		*"a hang"*)
			kill "$run"
			break
			;;
		esac
	done
	wait "$run"
	rc=$?
	ran=$(grep -c '^\[1,0\]<stdout>:# seed' "$log")
	total=$((total + ran))
	nstalls=$((nstalls + stalls))
	echo "batch $seed: $ran of $count programs, mpirun status $rc, $stalls stalls of $stall s${how}"
	b=$((b + 1))
done
echo "total: $total programs on $np ranks, $nstalls stalls of $stall s or more (logs: $dir)"
