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

# reference APP ARGS PATTERN: one process's apps/APP ARGS --verify, reported; the hex of its
# digest line (PATTERN) in $ref.
reference() {
	one "$tmp/${1}1" "$b/apps/$1/$1" $2 --verify
	rc=$?
	ref=$(digest_of "$tmp/${1}1" 0 "$3")
	if [ $rc -eq 0 ] && [ -n "$ref" ]; then
		report 0 "one process: $1 $2: passed, digest $ref" "$tmp/${1}1"
	else
		report 1 "one process: $1 $2: $(why $rc), digest '$ref'" "$tmp/${1}1"
	fi
}
reference cg "$cg_args" "$cg_digest"
cg_ref=$ref
reference circuit "$circuit_args" "$circuit_digest"
circuit_ref=$ref

# same_digest NP APP ARGS PATTERN REF: apps/APP ARGS --verify on NP ranks prints the digest REF of
# one process, reported.
same_digest() {
	log=$tmp/$2$1
	mpi_run $1 "$limit" "$log" "$b/apps/$2/$2" $3 --verify
	rc=$?
	got=$(digest_of "$log" $1 "$4")
	if [ $rc -eq 0 ] && [ -n "$5" ] && [ "$got" = "$5" ]; then
		report 0 "np $1: $2: the digest of one process ($5)" "$log"
	else
		report 1 "np $1: $2: $(why $rc), digest '$got' against one process's '$5'" "$log"
	fi
}

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

	same_digest $np cg "$cg_args" "$cg_digest" "$cg_ref"
	same_digest $np circuit "$circuit_args" "$circuit_digest" "$circuit_ref"
done
