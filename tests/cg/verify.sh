#!/bin/sh
# tests/cg/verify.sh: apps/cg --verify (same iterations, solution and residual history as a
# sequential C CG) over 2-D and 3-D, CSR and matrix-free, 1..16 row blocks, three schedulers and
# several convergence-check windows; one TAP line per run.
cg=${top_builddir:-.}/apps/cg/cg
if [ ! -x "$cg" ]; then
	echo "1..0 # SKIP $cg not built"
	exit 0
fi
# dmda writes performance models: keep them out of the user's ~/.starpu and away from other runs.
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/cg-verify.XXXXXX") || exit 1
export STARPU_HOME
trap 'rm -rf "$STARPU_HOME"' EXIT
log=$STARPU_HOME/out

cases="2:32 3:12"            # dimension:grid side (1024 and 1728 unknowns)
forms="csr stencil"
scheds="eager lws dmda"
per_combo=4                  # block counts per (case, form, scheduler), taken in turn from 1..16
windows="1 3 10"             # convergence-check windows, taken in turn (3 does not divide 16)
echo "1..$((2 * 2 * 3 * per_combo + 5))"

i=0
fail=0
run() {   # name, then the arguments of apps/cg
	name=$1
	shift
	i=$((i + 1))
	if "$cg" "$@" >"$log" 2>&1 && grep -q "^verify: .*PASSED" "$log"; then
		echo "ok $i - $name"
	else
		echo "not ok $i - $name"
		sed 's/^/# /' "$log"
		fail=1
	fi
}
nth() {   # nth K word...: the K-th word (1-based)
	k=$1
	shift
	eval "echo \${$k}"
}
b=0
w=0
for c in $cases; do
	dim=${c%%:*}
	side=${c#*:}
	for f in $forms; do for s in $scheds; do
		j=0
		while [ $j -lt $per_combo ]; do
			blocks=$((b % 16 + 1))
			win=$(nth $((w % 3 + 1)) $windows)
			b=$((b + 1))
			w=$((w + 1))
			j=$((j + 1))
			run "$dim-D n=$side $f sched=$s blocks=$blocks check=$win" -dim "$dim" -n "$side" "--$f" \
				--sched "$s" -blocks "$blocks" -check "$win" -workers 2 -tol 1e-10 --verify
		done
	done; done
done
# Stopping at maxiter (no convergence) must match iteration by iteration; more blocks than grid
# lines puts ghost rows several blocks away; one worker runs everything in submission order.
run "3-D stencil, maxiter reached, 7 blocks" -dim 3 -n 12 --stencil -blocks 7 -maxiter 13 -check 4 -workers 2 --verify
run "2-D CSR, 16 blocks on 5 grid lines" -dim 2 -n 5 --csr -blocks 16 -check 2 -workers 2 -tol 1e-12 --verify
run "2-D stencil, one worker, 5 blocks" -dim 2 -n 40 --stencil -blocks 5 -workers 1 --verify
run "2-D CSR, check window longer than the solve" -dim 2 -n 16 --csr -blocks 3 -check 1000 -workers 2 --verify
run "3-D CSR, maxiter 0" -dim 3 -n 6 --csr -blocks 2 -maxiter 0 -workers 2 --verify
exit $fail
