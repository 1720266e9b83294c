#!/bin/sh
# stencil-small.sh: the small stencil (64 x 64 x 4, 4 tiles, 200 iterations) against raw StarPU
# with hand-written halos, under several policies: ROUNDS runs of `stencil --compare` per policy,
# interleaved, and per policy the median Tessera/raw ratio and its range. Each run already times
# both sides in one process (median of 5 repetitions each); the rounds spread a shared machine's
# changing load over all policies. The bar (issue 9): median >= 0.9 under every policy.
set -eu

usage() {
	cat <<'EOF'
usage: stencil-small.sh [--builddir DIR] [--rounds N] [--policies "P.."] [--ncpu N]
  --builddir DIR   build tree holding apps/stencil/stencil (default: the tree this script is in, else .)
  --rounds N       --compare runs per policy (default 9)
  --policies "P.." policies (default: "eager lws dmda dmdas")
  --ncpu N         CPU workers (default 2)
Prints one line per run (policy, Tessera and raw ms/iter, ratio), then per policy:
  POLICY: median ratio R (min .. max over N runs); Tessera M ms/iter, raw M ms/iter (medians)
Exit status 1 if a run fails or its results differ from raw StarPU's.
EOF
}

builddir=$(dirname "$0")/../..
[ -x "$builddir/apps/stencil/stencil" ] || builddir=.
rounds=9
policies="eager lws dmda dmdas"
ncpu=2
while [ $# -gt 0 ]; do
	case "$1" in
	--builddir) builddir=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--policies) policies=$2; shift 2 ;;
	--ncpu) ncpu=$2; shift 2 ;;
	--help|-h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done

stencil=$builddir/apps/stencil/stencil
[ -x "$stencil" ] || { echo "stencil-small.sh: no $stencil (build first)" >&2; exit 1; }
runs=$(mktemp)
trap 'rm -f "$runs"' EXIT
export STARPU_SILENT=1

# One --compare run: "POLICY TESSERA_MS RAW_MS RATIO" on stdout, or failure.
one_run() {
	out=$("$stencil" -nx 64 -ny 64 -nz 4 -tiles 4 -iter 200 --compare --reps 5 --ncpu "$ncpu" \
		--sched "$1" --stream-n 1000000 2>&1) || { echo "$out" >&2; return 1; }
	echo "$out" | grep -q "starpu identical with tessera" || { echo "$out" >&2; echo "results differ" >&2; return 1; }
	t=$(echo "$out" | sed -n 's/^tessera: *\([0-9.]*\) ms\/iter.*/\1/p')
	r=$(echo "$out" | sed -n 's/^starpu: *\([0-9.]*\) ms\/iter.*/\1/p')
	x=$(echo "$out" | sed -n 's/.*tessera\/starpu = \([0-9.]*\)x.*/\1/p')
	echo "$1 $t $r $x"
}

i=0
while [ $i -lt "$rounds" ]; do
	for p in $policies; do
		line=$(one_run "$p")
		echo "$line" | tee -a "$runs"
	done
	i=$((i + 1))
done

# The median of the numbers on stdin.
median() {
	sort -n | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

for p in $policies; do
	ratio=$(awk -v p="$p" '$1 == p {print $4}' "$runs" | median)
	lo=$(awk -v p="$p" '$1 == p {print $4}' "$runs" | sort -n | head -1)
	hi=$(awk -v p="$p" '$1 == p {print $4}' "$runs" | sort -n | tail -1)
	tm=$(awk -v p="$p" '$1 == p {print $2}' "$runs" | median)
	rm=$(awk -v p="$p" '$1 == p {print $3}' "$runs" | median)
	echo "$p: median ratio $ratio ($lo .. $hi over $rounds runs); Tessera $tm ms/iter, raw $rm ms/iter (medians)"
done
