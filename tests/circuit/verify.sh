#!/bin/sh
# verify.sh: apps/circuit --verify (Tessera against the plain sequential C version) on Legion's
# defaults and on the shapes and schedulers that stress the private/shared/ghost partitions, then
# the OpenCL variants (apps/circuit/circuit.cl) on an OpenCL device alone and beside 1 and 2 CPU workers
# (skipped where no OpenCL device is found). TAP.
prog=${top_builddir:-.}/apps/circuit/circuit
if [ ! -x "$prog" ]; then
	echo "1..0 # SKIP $prog not built"
	exit 0
fi
log=$(mktemp "${TMPDIR:-/tmp}/circuit-verify.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT INT TERM
# A clean environment: the runs choose the scheduler and the workers with Tessera's flags (which
# would win over TSR_SCHED anyway); the OpenCL runs set the worker counts themselves.
unset TSR_SCHED TSR_NCPU TSR_NOPENCL

. "${top_srcdir:-.}/tests/common.sh"
report_logs="$log"
report_tail=25

# verify NAME ARGS...: the run succeeds and every verification it prints passes.
verify() {
	name=$1
	shift
	"$prog" "$@" >"$log" 2>&1
	rc=$?
	if [ $rc = 0 ] && grep -q '^verify: Tessera: PASS' "$log" && ! grep -q ': FAIL' "$log"; then
		report "$name" 0
	else
		report "$name (exit $rc)" 1
	fi
}

# fails NAME ARGS...: the program refuses the command line with exit status 2 and a message.
fails() {
	name=$1
	shift
	"$prog" "$@" >"$log" 2>&1
	rc=$?
	if [ $rc = 2 ] && grep -q '^circuit: ' "$log"; then report "$name" 0; else report "$name (exit $rc)" 1; fi
}

echo "1..37"
# Legion's defaults: 4 pieces x 1024 nodes x 1024 wires, 95% in piece, 2 loops of 10000 steps.
verify "defaults" --verify
# Few RLC steps: the iteration has not converged, so a wrong update cannot hide (issue's warning).
verify "-i 1 (one RLC step per loop), eager" --sched eager -i 1 -l 4 --verify
verify "-i 3, lws" --sched lws -i 3 -l 3 --verify
verify "-i 0 (no RLC step)" -i 0 -l 2 --verify
# More pieces than workers, with every scheduler.
for s in eager lws dmda; do
	verify "16 pieces on 2 workers, pct 80, $s" --sched $s --ncpu 2 -p 16 -npp 200 -wpp 520 -pct 80 -i 3 -l 3 --verify
done
# pct 100: no shared node at all (one padding node per piece): every value bit-identical.
verify "pct 100, bit-identical" -pct 100 -p 6 -npp 300 -wpp 400 -i 3 -l 3 --exact
# pct 50 with every scheduler.
for s in eager lws dmda; do
	verify "pct 50, $s" --sched $s -pct 50 -p 8 -npp 256 -wpp 512 -i 3 -l 3 --verify
done
# One piece: no shared node, no ghost: bit-identical.
verify "1 piece, bit-identical" -p 1 -npp 500 -wpp 700 -i 3 -l 3 --exact
# Two pieces: each ghost box lies in the other piece's shared box, so the ghost partition is
# disjoint: distribute_charge reduces one field through two disjoint partitions (shared, ghost).
verify "2 pieces (disjoint ghost partition)" -p 2 -i 3 -l 3 --verify
# pct 0 with few nodes: every node is shared, the private subregions are padding.
verify "pct 0, no private node" -pct 0 -p 8 -npp 32 -wpp 256 -i 2 -l 3 --verify
# Wire counts that are not multiples of the vector width (partial blocks), 3 repetitions of the loop.
verify "odd sizes, --reps 3" -p 5 -npp 333 -wpp 1001 -i 2 -l 2 --reps 3 --verify
# Loops run in traces by default (tsr_trace_begin/end): once without them, and without the
# automatic mode finding the loop either, every launch analysed in full.
export TSR_REPLAY=off
verify "--no-trace, TSR_REPLAY=off" -p 4 -npp 200 -wpp 400 -i 3 -l 4 --no-trace --verify
unset TSR_REPLAY
# The OpenMP baseline computes the same circuit (its result is verified too), one worker; it runs
# in the Tessera session with the workers paused, twice, Tessera restarting from the initial state.
verify "--compare --reps 2, 1 CPU worker" --ncpu 1 -p 4 -npp 512 -wpp 512 -i 5 -l 2 --reps 2 --compare --verify
# Wire 15350 of piece 0 (capacitance 2e-7 F) makes Legion's explicit RLC iteration overflow: NaN
# then spreads through its nodes. Tessera must produce the NaN exactly where the reference does.
"$prog" -p 2 -npp 256 -wpp 15351 -i 100 -l 2 --verify >"$log" 2>&1 && grep -q '^verify: Tessera: PASS' "$log" &&
	grep -q '^verify: wire currents .*NaN/inf on both sides' "$log"
report "diverging wire: NaN where the reference has NaN" $?
# Command line.
"$prog" --help >"$log" 2>&1 && grep -q 'usage: circuit' "$log"
report "--help" $?
fails "unknown option refused" -bogus
fails "-pct 101 refused" -pct 101
fails "missing value refused" -p
fails "--charge-on with an unknown kind refused" --charge-on gpu
# Tessera's flags win over the environment; --version; the switches are checked
env TSR_NCPU=2 "$prog" --ncpu 1 -p 2 -npp 64 -wpp 64 -i 1 -l 1 >"$log" 2>&1 &&
	grep -q "^circuit: Tessera with 1 CPU workers" "$log"
report "--ncpu 1 wins over TSR_NCPU=2" $?
"$prog" --version >"$log" 2>&1 && grep -q "^circuit (Tessera) [0-9]" "$log"
report "--version" $?
env TSR_STATS=abc "$prog" -p 2 -npp 64 -wpp 64 -i 1 -l 1 >"$log" 2>&1
[ $? = 1 ] && grep -q "TSR_STATS='abc' is not one of 0|1" "$log"
report "TSR_STATS=abc refused, naming the switch" $?
"$prog" -p 2 -npp 64 -wpp 64 -i 1 -l 3 --ncpu 1 --progress >"$log" 2>&1 && grep -q "^circuit: 3 loops done in " "$log"
report "--progress: the closing line" $?

# The OpenCL variants against the same reference: every wire and node computes the CPU's bits
# (FP_CONTRACT OFF, correctly rounded divisions, distribute_charge in wire order), so the bounds
# are those of the CPU runs and --exact holds where it holds on CPUs. On the device alone the
# regions live on the device (TSR_HOME=auto), distribute_charge's REDUCE buffers are folded there;
# beside CPU workers tasks and data move between the host and the device. POCL (pocl-opencl-icd)
# gives any machine such a device when StarPU may use CPU devices (STARPU_OPENCL_ON_CPUS=1). A first
# run on the device alone tells whether there is one.
# StarPU keeps one bus calibration per host name, and counting POCL's device changes it: test
# processes with and without it rewrote each other's files as they read them (an assertion in
# load_bus_affinity_file_content, make check -j2). The OpenCL runs use a name of their own.
ocl_env="STARPU_OPENCL_ON_CPUS=1 STARPU_HOSTNAME=opencl-on-cpus TSR_NCUDA=0"
ocl_probe=$(mktemp "${TMPDIR:-/tmp}/circuit-opencl.XXXXXX") || exit 1
trap 'rm -f "$log" "$ocl_probe"' EXIT INT TERM
env $ocl_env TSR_NOPENCL=1 TSR_NCPU=0 "$prog" -p 2 -npp 64 -wpp 64 -i 1 -l 1 --verify >"$ocl_probe" 2>&1
# Skipped only when Tessera started without an OpenCL worker: its tsr_init failed (no worker at
# all) or the workers line shows none; any other failure of the probe is left to the runs below.
ocl_skip=
if grep -q "^circuit: Tessera with .* 0 OpenCL workers\|: tsr_init: " "$ocl_probe"; then
	said=$(grep -m 1 "^circuit: Tessera with\|: tsr_init: " "$ocl_probe")
	ocl_skip="no OpenCL device (apps/circuit with TSR_NOPENCL=1 TSR_NCPU=0: $(echo "$said" | tr -d '#'))"
fi
# ocl NAME CPU-WORKERS ENVIRONMENT ARGS...: as verify, on CPU-WORKERS CPU workers and an OpenCL one.
ocl() {
	if [ -n "$ocl_skip" ]; then
		n=$((n + 1))
		echo "ok $n # SKIP OpenCL $1: $ocl_skip"
		return
	fi
	name=$1
	ocpu=$2
	oenv=$3
	shift 3
	env $ocl_env $oenv "$prog" "$@" >"$log" 2>&1
	rc=$?
	if [ $rc = 0 ] && grep -q '^verify: Tessera: PASS' "$log" && ! grep -q ': FAIL' "$log" &&
		grep -q "^circuit: Tessera with $ocpu CPU workers, 0 CUDA workers, [1-9][0-9]* OpenCL workers" "$log"; then
		report "OpenCL $name" 0
	else
		report "OpenCL $name (exit $rc)" 1
		echo "#   $ocl_env $oenv $prog $*"
	fi
}
ocl "device alone, 4 pieces, pct 80" 0 "TSR_NOPENCL=1 TSR_NCPU=0" -p 4 -npp 200 -wpp 400 -pct 80 -i 3 -l 3 --verify
ocl "device alone, pct 100, bit-identical" 0 "TSR_NOPENCL=1 TSR_NCPU=0" -pct 100 -p 3 -npp 200 -wpp 333 -i 3 -l 3 --exact
ocl "device + 1 CPU (--nopencl 1), 8 pieces, pct 50, eager" 1 "" \
	--sched eager --ncpu 1 --nopencl 1 -pct 50 -p 8 -npp 128 -wpp 256 -i 3 -l 3 --verify
ocl "device + 2 CPUs, 8 pieces, pct 80, lws, odd sizes" 2 "TSR_NOPENCL=1" \
	--sched lws --ncpu 2 -p 8 -npp 111 -wpp 333 -pct 80 -i 2 -l 3 --verify
ocl "device + 2 CPUs, 1 piece, bit-identical, dmda" 2 "TSR_NOPENCL=1" \
	--sched dmda --ncpu 2 -p 1 -npp 300 -wpp 500 -i 3 -l 3 --exact
# the regions homed on the device while CPU workers run beside it
ocl "TSR_HOME=device + 2 CPUs, 6 pieces, pct 80" 2 "TSR_NOPENCL=1 TSR_HOME=device" \
	--ncpu 2 -p 6 -npp 150 -wpp 300 -pct 80 -i 3 -l 3 --verify

# distribute_charge's device variant adds each node's contributions in the CPU's order
# (circuit.cl), and the reductions fold in color order: the whole final state, shared charges
# included, is the CPU run's bit for bit, on the device alone and beside 1 and 2 CPU workers. The
# state digest --verify prints compares it; --charge-on opencl makes sure the device ran
# distribute_charge beside the CPUs (a scheduler may otherwise leave it idle), and TSR_STATS shows it.
# charge_digest NAME CPU-WORKERS OPENCL-WORKERS ARGS...: the run passes --verify, started those
# workers and (with an OpenCL worker) ran distribute_charge there; its digest in $digest.
shape="-p 8 -npp 160 -wpp 333 -pct 70 -i 3 -l 3"
charge_digest() {
	name=$1
	ocpu=$2
	nocl=$3
	shift 3
	env $ocl_env TSR_STATS=1 TSR_NCPU=$ocpu TSR_NOPENCL=$nocl "$prog" $shape --verify "$@" >"$log" 2>&1
	rc=$?
	digest=$(sed -n "s/^verify: Tessera's state digest \([0-9a-f]*\) .*/\1/p" "$log")
	if [ $rc != 0 ] || ! grep -q '^verify: Tessera: PASS' "$log" || [ -z "$digest" ] ||
		! grep -q "^circuit: Tessera with $ocpu CPU workers, 0 CUDA workers, $nocl OpenCL workers" "$log"; then
		echo "#   $name: exit $rc, digest '$digest'"
		return 1
	fi
	if [ "$nocl" -gt 0 ] && ! grep -q "^tessera stats: distribute_charge *opencl *[1-9]" "$log"; then
		echo "#   $name: distribute_charge never ran on the OpenCL device"
		return 1
	fi
}
if [ -n "$ocl_skip" ]; then
	for what in "device alone" "device + 1 CPU" "device + 2 CPUs"; do
		n=$((n + 1))
		echo "ok $n # SKIP OpenCL distribute_charge, $what: $ocl_skip"
	done
else
	charge_digest "2 CPUs, no device" 2 0
	cpu_digest=$digest
	for ncpu in 0 1 2; do
		case $ncpu in
			0) what="device alone" ;;
			1) what="device + 1 CPU" ;;
			*) what="device + $ncpu CPUs" ;;
		esac
		ok=1
		if [ -z "$cpu_digest" ]; then
			ok=0
		elif [ $ncpu = 0 ]; then
			charge_digest "$what" 0 1 || ok=0
		else
			charge_digest "$what" $ncpu 1 --charge-on opencl || ok=0
		fi
		[ $ok = 1 ] && [ "$digest" = "$cpu_digest" ]
		report "OpenCL distribute_charge, $what: state bit-identical to the CPU run ($digest vs $cpu_digest)" $?
	done
fi
# --charge-on names a kind of worker that did not start: the run fails and says so.
"$prog" -p 2 -npp 64 -wpp 64 -i 1 -l 1 --ncpu 1 --charge-on cuda >"$log" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "^circuit: --charge-on: Tessera started no CUDA worker" "$log"
report "--charge-on cuda without a CUDA worker fails, naming it (exit $rc)" $?
exit $failed
