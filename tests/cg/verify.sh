#!/bin/sh
# tests/cg/verify.sh: apps/cg --verify (same iterations, solution and residual history as a
# sequential C CG) over 2-D and 3-D, CSR and matrix-free, 1..16 row blocks, three schedulers and
# several convergence-check windows, then on an OpenCL device (alone, and with CPUs beside it);
# one TAP line per run.
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
ncl=10                       # OpenCL runs (see the end)
echo "1..$((2 * 2 * 3 * per_combo + 6 + 9 + ncl))"

i=0
fail=0
run_env=                     # environment of the runs (VAR=value ...), set for the OpenCL ones
want_exit=0                  # the runs' exit status: 4 where they stop at maxiter unconverged
run() {   # name, then the arguments of apps/cg
	name=$1
	shift
	i=$((i + 1))
	# shellcheck disable=SC2086 # run_env is a list of assignments
	env $run_env "$cg" "$@" >"$log" 2>&1
	st=$?
	if [ $st -eq 134 ] && grep -q "_starpu_data_request_prio_list_deinit: Assertion" "$log"; then
		# StarPU 1.3's shutdown, after the run and its check, can abort on a data request
		# still queued for the OpenCL node (a few runs in a thousand, under load):
		# not Tessera's, so the run gets a second try, and the first is shown
		echo "# $name: StarPU 1.3's shutdown race (data_request.h assertion); run again"
		# shellcheck disable=SC2086
		env $run_env "$cg" "$@" >"$log" 2>&1
		st=$?
	fi
	if [ $st -eq "$want_exit" ] && grep -q "^verify: .*PASSED" "$log"; then
		echo "ok $i - $name"
	else
		echo "not ok $i - $name (exit status $st, expected $want_exit)"
		sed 's/^/# /' "$log"
		fail=1
	fi
}
# check NAME EXIT PATTERN ARGS...: apps/cg exits with EXIT and its output matches PATTERN.
check() {
	name=$1
	want=$2
	pattern=$3
	shift 3
	i=$((i + 1))
	"$@" >"$log" 2>&1
	st=$?
	if [ $st -eq "$want" ] && grep -q -- "$pattern" "$log"; then
		echo "ok $i - $name"
	else
		echo "not ok $i - $name (exit status $st, expected $want)"
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
				--sched "$s" -blocks "$blocks" -check "$win" --ncpu 2 -tol 1e-10 --verify
		done
	done; done
done
# Stopping at maxiter (no convergence) must match iteration by iteration, and exits 4; more blocks
# than grid lines puts ghost rows several blocks away; one worker runs everything in submission
# order.
want_exit=4
run "3-D stencil, maxiter reached (exit 4), 7 blocks" -dim 3 -n 12 --stencil -blocks 7 -maxiter 13 -check 4 --ncpu 2 --verify
want_exit=0
run "2-D CSR, 16 blocks on 5 grid lines" -dim 2 -n 5 --csr -blocks 16 -check 2 --ncpu 2 -tol 1e-12 --verify
run "2-D stencil, one worker, 5 blocks" -dim 2 -n 40 --stencil -blocks 5 --ncpu 1 --verify
run "2-D CSR, check window longer than the solve" -dim 2 -n 16 --csr -blocks 3 -check 1000 --ncpu 2 --verify
want_exit=4
run "3-D CSR, maxiter 0 (exit 4)" -dim 3 -n 6 --csr -blocks 2 -maxiter 0 --ncpu 2 --verify
want_exit=0
# Iterations run in traces by default (tsr_trace_begin/end): once without them, and without the
# automatic mode finding the loop either, every launch analysed in full.
run_env=TSR_REPLAY=off
run "2-D CSR, --no-trace, TSR_REPLAY=off" -dim 2 -n 32 --csr -blocks 4 -check 3 --ncpu 2 --no-trace --verify
run_env=

# The exit status says whether the solve converged: 4 at maxiter short of the tolerance (said on
# stderr), 0 with -tol 0 (a fixed number of iterations, as the benchmarks run), 3 when --verify
# fails (not reachable from here), 2 for a usage error.
check "maxiter reached without converging: exit 4" 4 "^cg: stopped at maxiter (5 iterations) without reaching -tol 1e-08" \
	"$cg" -n 30 -maxiter 5 --ncpu 1
check "-tol 0 runs maxiter iterations: exit 0" 0 "^iterations: 5 (maxiter reached" "$cg" -n 30 -maxiter 5 -tol 0 --ncpu 1
check "converged: exit 0" 0 "^iterations: .*(converged" "$cg" -n 10 --ncpu 1
check "-workers is gone, --ncpu named instead" 2 "^cg: -workers is gone: .*--ncpu" "$cg" -workers 2
# Tessera's flags win over the environment, and the runtime's switches are checked
check "--ncpu 1 wins over TSR_NCPU=2" 0 "^tessera: policy .*, 1 CPU + " env TSR_NCPU=2 "$cg" -n 10 --ncpu 1
check "--sched eager wins over TSR_SCHED=lws" 0 "^tessera: policy eager," env TSR_SCHED=lws "$cg" -n 10 --sched eager
check "TSR_STATS=abc refused naming the switch" 1 "TSR_STATS='abc' is not one of 0|1" env TSR_STATS=abc "$cg" -n 10
check "--version" 0 "^cg (Tessera) [0-9]" "$cg" --version
check "--progress: the closing line" 0 "^cg: [0-9]* iterations done in " "$cg" -n 10 --progress

# OpenCL: the OpenCL variants on one OpenCL device (POCL's CPU device counts with
# STARPU_OPENCL_ON_CPUS=1; CUDA is kept out), first alone (its regions are then homed on it), then
# with 1 and 2 CPU workers beside it (regions in host RAM unless TSR_HOME=device), both formats.
# A probe run with 1 CPU and 1 OpenCL worker requested says how many OpenCL workers StarPU started
# (it also pays StarPU's first bus calibration and POCL's first compilation): none, and the runs
# are skipped. Only that answer skips them: a probe that says nothing (a crash) lets them run and fail.
# StarPU keeps one bus calibration per host name, and counting POCL's device changes it: test
# processes with and without it rewrote each other's files as they read them (an assertion in
# load_bus_affinity_file_content, make check -j2). The OpenCL runs use a name of their own.
ocl_env="STARPU_OPENCL_ON_CPUS=1 STARPU_HOSTNAME=opencl-on-cpus TSR_NOPENCL=1 TSR_NCUDA=0"
# shellcheck disable=SC2086
env $ocl_env TSR_NCPU=1 "$cg" -dim 2 -n 4 -maxiter 0 -tol 0 >"$log" 2>&1
ocl_skip=
if grep -q "^tessera: .* + 0 OpenCL workers" "$log"; then
	ocl_skip="no OpenCL device (StarPU started 0 OpenCL workers; POCL: pocl-opencl-icd)"
fi
orun() {   # CPU workers beside the device, extra environment ("-": none), name, apps/cg arguments
	ncpu=$1
	extra=$2
	shift 2
	if [ -n "$ocl_skip" ]; then
		i=$((i + 1))
		echo "ok $i - $1 # SKIP $ocl_skip"
		return
	fi
	[ "$extra" = - ] && extra=
	run_env="$ocl_env TSR_NCPU=$ncpu $extra"
	run "$@"
	run_env=
}
orun 0 - "OpenCL alone: 2-D CSR, 3 blocks" -dim 2 -n 24 --csr -blocks 3 --verify
orun 0 - "OpenCL alone: 3-D stencil, 2 blocks" -dim 3 -n 10 --stencil -blocks 2 --verify
orun 0 - "OpenCL alone: 2-D stencil, 1 block, check 1" -dim 2 -n 24 --stencil -blocks 1 -check 1 --verify
want_exit=4
orun 0 - "OpenCL alone: 3-D CSR, maxiter reached (exit 4), 4 blocks" -dim 3 -n 10 --csr -blocks 4 -maxiter 13 -check 4 --verify
want_exit=0
orun 1 - "OpenCL + 1 CPU: 2-D CSR, eager, 4 blocks" -dim 2 -n 24 --csr --sched eager -blocks 4 --verify
orun 1 - "OpenCL + 1 CPU: 3-D stencil, lws, 3 blocks" -dim 3 -n 10 --stencil --sched lws -blocks 3 --verify
orun 1 TSR_HOME=device "OpenCL + 1 CPU, regions on the device: 2-D stencil, eager, 3 blocks" \
	-dim 2 -n 24 --stencil --sched eager -blocks 3 --verify
orun 2 - "OpenCL + 2 CPUs: 2-D stencil, lws, 5 blocks" -dim 2 -n 24 --stencil --sched lws -blocks 5 --verify
orun 2 - "OpenCL + 2 CPUs: 3-D CSR, dmda, 4 blocks" -dim 3 -n 10 --csr --sched dmda -blocks 4 --verify
orun 2 TSR_HOME=device "OpenCL + 2 CPUs, regions on the device: 3-D CSR, eager, 3 blocks" \
	-dim 3 -n 10 --csr --sched eager -blocks 3 --verify
exit $fail
