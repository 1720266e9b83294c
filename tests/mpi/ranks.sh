#!/bin/sh
# tests/mpi/ranks.sh: the apps on 2, 4 and 8 ranks (8 oversubscribed) end in the bits of one
# process with the same decomposition (issue 27), one TAP line per run. Every run, one process
# (TSR_MPI=0) or mpirun, gets the same tiles, blocks and pieces, so that the same tasks fold the same
# partial values in the same order wherever they ran:
#  - stencil -tiles 8 --verify --out: bit-identical to its sequential reference (--verify), and the
#    written field the bytes of one process's;
#  - cg -blocks 8 --verify: the digest of x's bits (FNV-1a) that one process prints;
#  - circuit -p 8 --verify: the digest of the whole final state that one process prints.
# Small sizes: a run takes a second or two quiet. Each mpirun is killed after TSR_MPI_TIMEOUT
# seconds (default 120 times CK_TIMEOUT_MULTIPLIER, 480 under make check): a hang guard, not a
# time to meet.
. "${top_srcdir:-.}/tests/mpi/common.sh"
limit=${TSR_MPI_TIMEOUT:-$(scaled 120)}
stencil_args="-nx 32 -ny 32 -nz 4 -iter 5 -tiles 8"
cg_args="-n 16 -blocks 8"
circuit_args="-p 8 -npp 64 -wpp 128 -l 3 -i 100"
echo "1..12"
i=0

# The hex of a digest line: digest_of LOG NP SED-PATTERN (NP 0: one process's log; else rank 0's
# lines of a job's).
digest_of() {
	if [ "$2" -eq 0 ]; then
		sed -n "s/^$3/\1/p" "$1"
	else
		rank_lines "$1" 0 | sed -n "s/^$3/\1/p"
	fi
}
cg_digest='verify: solution digest \([0-9a-f]*\) .*'
circuit_digest="verify: Tessera's state digest \([0-9a-f]*\) .*"

# ---- one process, the references
one() {   # log, program and arguments
	log=$1
	shift
	echo "# one process: ${1##*/} $(shift && echo "$*")"
	TSR_MPI=0 timeout -k 10 "$limit" "$@" >"$log" 2>"$log.err"
}
one "$tmp/stencil1" "$b/apps/stencil/stencil" $stencil_args --verify --out "$tmp/stencil1.npy"
rc=$?
if [ $rc -eq 0 ] && grep -q "PASS, bit-identical" "$tmp/stencil1" && [ -s "$tmp/stencil1.npy" ]; then
	report 0 "one process: stencil $stencil_args: bit-identical to the sequential reference" "$tmp/stencil1"
else
	report 1 "one process: stencil $stencil_args: $(why $rc), or not bit-identical" "$tmp/stencil1"
fi

one "$tmp/cg1" "$b/apps/cg/cg" $cg_args --verify
rc=$?
cg_ref=$(digest_of "$tmp/cg1" 0 "$cg_digest")
if [ $rc -eq 0 ] && [ -n "$cg_ref" ]; then
	report 0 "one process: cg $cg_args: passed, digest $cg_ref" "$tmp/cg1"
else
	report 1 "one process: cg $cg_args: $(why $rc), digest '$cg_ref'" "$tmp/cg1"
fi

one "$tmp/circuit1" "$b/apps/circuit/circuit" $circuit_args --verify
rc=$?
circuit_ref=$(digest_of "$tmp/circuit1" 0 "$circuit_digest")
if [ $rc -eq 0 ] && [ -n "$circuit_ref" ]; then
	report 0 "one process: circuit $circuit_args: passed, digest $circuit_ref" "$tmp/circuit1"
else
	report 1 "one process: circuit $circuit_args: $(why $rc), digest '$circuit_ref'" "$tmp/circuit1"
fi

# ---- each rank count: the same bits
for np in 2 4 8; do
	log=$tmp/stencil$np
	mpi_run $np "$limit" "$log" "$b/apps/stencil/stencil" $stencil_args --verify --out "$tmp/stencil$np.npy"
	rc=$?
	if [ $rc -eq 0 ] && rank_lines "$log" 0 | grep -q "PASS, bit-identical" && [ -s "$tmp/stencil1.npy" ] &&
		cmp -s "$tmp/stencil1.npy" "$tmp/stencil$np.npy"; then
		report 0 "np $np: stencil: bit-identical to the sequential reference, the field of one process byte for byte" "$log"
	else
		report 1 "np $np: stencil: $(why $rc); field: $(cmp "$tmp/stencil1.npy" "$tmp/stencil$np.npy" 2>&1 || :)" "$log"
	fi

	log=$tmp/cg$np
	mpi_run $np "$limit" "$log" "$b/apps/cg/cg" $cg_args --verify
	rc=$?
	got=$(digest_of "$log" $np "$cg_digest")
	if [ $rc -eq 0 ] && [ -n "$cg_ref" ] && [ "$got" = "$cg_ref" ]; then
		report 0 "np $np: cg: the digest of one process ($cg_ref)" "$log"
	else
		report 1 "np $np: cg: $(why $rc), digest '$got' against one process's '$cg_ref'" "$log"
	fi

	log=$tmp/circuit$np
	mpi_run $np "$limit" "$log" "$b/apps/circuit/circuit" $circuit_args --verify
	rc=$?
	got=$(digest_of "$log" $np "$circuit_digest")
	if [ $rc -eq 0 ] && [ -n "$circuit_ref" ] && [ "$got" = "$circuit_ref" ]; then
		report 0 "np $np: circuit: the digest of one process ($circuit_ref)" "$log"
	else
		report 1 "np $np: circuit: $(why $rc), digest '$got' against one process's '$circuit_ref'" "$log"
	fi
done
