#!/bin/sh
# tests/mpi/mpi.sh: the same programs on several MPI ranks (issue 10), one TAP line each:
#  - apps/stencil --verify, apps/cg --verify (a 16x16 grid: the default 100x100 takes a minute
#    on 2 ranks here) and apps/circuit --verify on 2 and 4 ranks, unchanged: the job succeeds
#    (every rank passed) and the report comes once, from rank 0, its workers line naming the ranks;
#  - apps/stencil --out on 2 ranks: rank 0 alone writes the file, the same bytes as one process's;
#  - tests/mpi/bits (halo loop, REDUCE through an aliased partition, future SUM) prints one hash of
#    its final state per rank: every rank and 1, 2 and 4 ranks must print the same bits;
#  - tests/mpi/diverge (rank 1 launches one task more): tsr_fence fails with TSR_EDIVERGE naming
#    both ranks on every rank, and the job ends (tsr_finalize aborts it) before the timeout.
# Every run is killed after TSR_MPI_TIMEOUT seconds (default 300 times CK_TIMEOUT_MULTIPLIER,
# 1200 under make check): a hang is a failure, not a blocked CI. The limit is a hang guard, not a
# time to meet: cg on 4 oversubscribed ranks takes 6 s when quiet, 191 s beside four CPU-bound
# processes (the ranks' StarPU threads spin while they wait, and share 2 cores with the load), and
# passed 300 s at load 21. Messages take milliseconds on this 2-core machine: nothing here is timed.
. "${top_srcdir:-.}/tests/mpi/common.sh"
limit=${TSR_MPI_TIMEOUT:-$(scaled 300)}
echo "1..11"
i=0

# Every rank passes (an app exits nonzero when its check fails, and so does mpirun then), and the
# report is printed once: the pattern once by rank 0, nothing on the other ranks' standard output,
# and the workers line says "per rank, NP ranks".
app() {   # np, pattern, name, program and arguments
	np=$1
	want=$2
	name=$3
	shift 3
	log=$tmp/app.log
	mpi_run "$np" "$limit" "$log" "$@"
	rc=$?
	said=$(rank_lines "$log" 0 | grep -c "$want")
	ranks=$(rank_lines "$log" 0 | grep -c "per rank, $np ranks")
	others=$(grep -c '^\[1,[1-9][0-9]*\]<stdout>:' "$log")
	if [ $rc -eq 0 ] && [ "$said" -eq 1 ] && [ "$ranks" -eq 1 ] && [ "$others" -eq 0 ]; then
		report 0 "np $np: $name (passed; reported once, by rank 0)" "$log"
	else
		report 1 "np $np: $name: $(why $rc); rank 0 printed the result $said times, the ranks $ranks times, other ranks $others lines" "$log"
	fi
}

for np in 2 4; do
	app $np "PASS, bit-identical" "stencil --verify" "$b/apps/stencil/stencil" --verify
	app $np "^verify: .*PASSED" "cg -n 16 --verify" "$b/apps/cg/cg" -n 16 --verify
	app $np "^verify: Tessera: PASS" "circuit --verify" "$b/apps/circuit/circuit" --verify
done

# --out on 2 ranks: one "out:" line (rank 0's) and the file of one process, byte for byte.
set -- -nx 32 -ny 32 -nz 8 -iter 4
TSR_MPI=0 "$b/apps/stencil/stencil" "$@" --out "$tmp/out1.npy" >"$tmp/out1" 2>&1
mpi_run 2 "$limit" "$tmp/out2" "$b/apps/stencil/stencil" "$@" --out "$tmp/out2.npy"
rc=$?
said=$(grep -c "<stdout>:out: " "$tmp/out2")
if [ $rc -eq 0 ] && [ "$said" -eq 1 ] && [ -s "$tmp/out1.npy" ] && cmp -s "$tmp/out1.npy" "$tmp/out2.npy"; then
	report 0 "np 2: stencil --out written by rank 0 alone, the bytes of one process" "$tmp/out2"
else
	report 1 "np 2: stencil --out: $(why $rc), $said 'out:' lines, file $(cmp "$tmp/out1.npy" "$tmp/out2.npy" 2>&1 || :)" "$tmp/out2"
fi

# bits: one process (no mpirun), then 2 and 4 ranks; every hash equal to the first.
bits=$b/tests/mpi/bits
TSR_MPI=0 "$bits" >"$tmp/bits1" 2>&1
ref=$(sed -n 's/^bits rank 0 of 1: //p' "$tmp/bits1")
if [ -n "$ref" ]; then
	report 0 "bits: one process: $ref" "$tmp/bits1"
else
	report 1 "bits: one process printed no hash" "$tmp/bits1"
fi
for np in 2 4; do
	log=$tmp/bits$np
	mpi_run $np "$limit" "$log" "$bits"
	rc=$?
	same=0
	r=0
	while [ $r -lt $np ]; do
		got=$(rank_lines "$log" $r | sed -n "s/^bits rank $r of $np: //p")
		[ -n "$ref" ] && [ "$got" = "$ref" ] && same=$((same + 1))
		r=$((r + 1))
	done
	if [ $rc -eq 0 ] && [ $same -eq $np ]; then
		report 0 "bits: np $np: every rank prints the hash of one process ($ref)" "$log"
	else
		report 1 "bits: np $np: $(why $rc), $same of $np ranks print the hash of one process ($ref)" "$log"
	fi
done

# diverge: every rank reports TSR_EDIVERGE naming rank 0 and rank 1, none returns from
# tsr_finalize, and the job ends before the timeout with a nonzero status.
log=$tmp/diverge
mpi_run 2 "$limit" "$log" "$b/tests/mpi/diverge"
rc=$?
named=0
for r in 0 1; do
	rank_lines "$log" $r | grep "^diverge rank $r: tsr_fence: TSR_EDIVERGE: " | grep "rank 0 " | grep -q "rank 1 " &&
		named=$((named + 1))
done
returned=$(grep -c "tsr_finalize returned" "$log")
case $rc in
124 | 137) report 1 "diverge: np 2: $(why $rc): a diverged job must end" "$log" ;;
0) report 1 "diverge: np 2: the job ended with status 0: tsr_finalize must abort a diverged job" "$log" ;;
*)
	if [ $named -eq 2 ] && [ "$returned" -eq 0 ]; then
		report 0 "diverge: np 2: TSR_EDIVERGE naming ranks 0 and 1 on both ranks, job ended (status $rc)" "$log"
	else
		report 1 "diverge: np 2: $named of 2 ranks got TSR_EDIVERGE naming both ranks, $returned returned from tsr_finalize" "$log"
	fi
	;;
esac
