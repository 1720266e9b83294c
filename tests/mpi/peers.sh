#!/bin/sh
# tests/mpi/peers.sh: the plain MPI C peers that make bench-ranks times Tessera against
# (apps/bench/mpi-stencil, mpi-cg) compute what the apps compute, one TAP line per run:
#  - mpi-stencil --verify on 1, 3 (uneven slabs) and 4 ranks: the final field, gathered on rank 0,
#    bit-identical to apps/stencil's sequential reference;
#  - mpi-cg on 1 and 3 ranks, CSR and matrix-free, 2-D and 3-D: as many iterations as apps/cg on the
#    same problem, and its own check (the true residual |b - A x| within 10 tol) passed;
#  - more ranks than rows to share: both refuse (exit 2, saying how many ranks at most);
#  - mpi-floor (make bench-mpi-floor, raw StarPU-MPI) on 2 ranks, tiny tiles, a few iterations:
#    every halo strip a rank received holds what the other rank sent (its own check), and on 3
#    ranks it refuses (exit 2).
# Each mpirun is killed after TSR_MPI_TIMEOUT seconds (default 60 times CK_TIMEOUT_MULTIPLIER):
# a hang guard; a run takes well under a second quiet.
. "${top_srcdir:-.}/tests/mpi/common.sh"
limit=${TSR_MPI_TIMEOUT:-$(scaled 60)}
echo "1..11"
i=0

for np in 1 3 4; do
	log=$tmp/stencil$np
	mpi_run $np "$limit" "$log" "$b/apps/bench/mpi-stencil" -nx 37 -ny 23 -nz 5 -iter 7 --verify
	rc=$?
	if [ $rc -eq 0 ] && rank_lines "$log" 0 | grep -q "^verify: PASS, bit-identical"; then
		report 0 "np $np: mpi-stencil --verify: bit-identical to the sequential reference" "$log"
	else
		report 1 "np $np: mpi-stencil --verify: exit status $rc" "$log"
	fi
done

# cg_iters ARGS...: apps/cg's iteration count on the problem (one process)
cg_iters() {
	TSR_MPI=0 timeout -k 10 "$limit" "$b/apps/cg/cg" "$@" 2>/dev/null | sed -n 's/^iterations: \([0-9]*\) .*/\1/p'
}
for args in "-n 24 -dim 2 -tol 1e-10 --csr" "-n 10 -dim 3 --stencil"; do
	want=$(cg_iters $args)
	for np in 1 3; do
		log=$tmp/cg$np
		mpi_run $np "$limit" "$log" "$b/apps/bench/mpi-cg" $args
		rc=$?
		got=$(rank_lines "$log" 0 | sed -n 's/^iterations: \([0-9]*\) .*/\1/p')
		if [ $rc -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] &&
			rank_lines "$log" 0 | grep -q "true |b - A x|/|b| = .*PASSED"; then
			report 0 "np $np: mpi-cg $args: $got iterations as apps/cg, true residual within 10 tol" "$log"
		else
			report 1 "np $np: mpi-cg $args: exit status $rc, $got iterations (apps/cg: '$want')" "$log"
		fi
	done
done

# refused NP AT_MOST PEER ARGS...: apps/bench/PEER ARGS on NP ranks exits 2 saying "use at most
# AT_MOST ranks" on stderr.
refused() {
	np=$1
	most=$2
	peer=$3
	shift 3
	log=$tmp/many$np
	mpi_run $np "$limit" "$log" "$b/apps/bench/$peer" "$@"
	rc=$?
	if [ $rc -eq 2 ] && grep -q "use at most $most ranks" "$log.err"; then
		report 0 "np $np: $peer $* refused (exit 2, at most $most ranks)" "$log"
	else
		report 1 "np $np: $peer $*: exit status $rc, expected 2 with 'use at most $most ranks' on stderr" "$log"
	fi
}
# Too many ranks: a usage error that says the limit, not a hang or a wrong answer. (mpirun's
# status is the failed ranks' own.)
refused 5 4 mpi-cg -n 4
refused 3 2 mpi-stencil -ny 5

# The floor benchmark's moves: its check on 2 ranks (a few iterations of 2 x 2 tiles of 4 x 4, every
# case run), and a refusal on 3.
log=$tmp/floor
mpi_run 2 "$limit" "$log" "$b/apps/bench/mpi-floor" --tiles 2 --tile 4 --iters 4 --reps 1 --calls 16
rc=$?
if [ $rc -eq 0 ] && rank_lines "$log" 0 | grep -q "^check: PASS" &&
	[ "$(rank_lines "$log" 0 | grep -c '^([a-d]) .*[0-9]$')" -eq 4 ]; then
	report 0 "np 2: mpi-floor: four cases timed, every received strip holds what was sent" "$log"
else
	report 1 "np 2: mpi-floor: exit status $rc" "$log"
fi
log=$tmp/floor3
mpi_run 3 "$limit" "$log" "$b/apps/bench/mpi-floor" --tile 4 --iters 2
rc=$?
if [ $rc -eq 2 ] && grep -q "run it on 2 ranks" "$log.err"; then
	report 0 "np 3: mpi-floor refused (exit 2, 2 ranks only)" "$log"
else
	report 1 "np 3: mpi-floor: exit status $rc, expected 2 with 'run it on 2 ranks' on stderr" "$log"
fi
