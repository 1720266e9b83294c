#!/bin/sh
# tests/hello-device/run.sh: apps/hello-device (a vector scaled and summed into a future by tasks
# with CPU, OpenCL and CUDA variants) must print the exact sum and exit 0: on CPU workers, on an
# OpenCL device alone (POCL's on the CPU: STARPU_OPENCL_ON_CPUS=1, TSR_NOPENCL=1, TSR_NCPU=0; the
# vector then lives on the device) and on the device beside 2 CPU workers. Alone, the device runs
# every task, so its variants are checked; beside CPUs StarPU places the tasks, and the sum must be
# exact wherever they ran and however the data moved. The device runs are skipped where Tessera
# starts no OpenCL worker (no OpenCL platform). One TAP line per run.
hd=${top_builddir:-.}/apps/hello-device/hello-device
if [ ! -x "$hd" ]; then
	echo "1..0 # SKIP $hd not built"
	exit 0
fi
# The environment chooses the workers here: start from none of the user's choices.
unset TSR_SCHED TSR_NCPU TSR_NCUDA TSR_NOPENCL TSR_HOME TSR_TIMELINE TSR_DAG TSR_STATS STARPU_SCHED \
	STARPU_NCPU STARPU_NOPENCL STARPU_OPENCL_ON_CPUS
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hello-device.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
log=$tmp/log
# Runs that count POCL's device keep a bus calibration of their own (tests/stencil/verify.sh says
# why); no CUDA worker, so that the OpenCL variants are the ones on a device.
ocl_env="STARPU_OPENCL_ON_CPUS=1 STARPU_HOSTNAME=opencl-on-cpus TSR_NCUDA=0"
i=0
failed=0

run() { # name, the workers line it must print, then VAR=value ... for env
	name=$1
	workers=$2
	shift 2
	i=$((i + 1))
	if env "$@" "$hd" >"$log" 2>&1 && grep -q "^workers: $workers\$" "$log" &&
		grep -q '^sum of 3\*i for i in 0..999 = 1498500 (expected 1498500): ok$' "$log"; then
		echo "ok $i - $name"
	else
		echo "not ok $i - $name"
		echo "#   $* $hd"
		sed 's/^/# /' "$log"
		failed=1
	fi
}

echo "1..5"
run "CPU workers" "[1-9][0-9]* CPU, 0 CUDA, 0 OpenCL" TSR_NCUDA=0
# Tessera's flags win over the environment; --version
i=$((i + 1))
if TSR_NCPU=2 "$hd" --ncpu 1 --ncuda 0 >"$log" 2>&1 && grep -q "^workers: 1 CPU, 0 CUDA, 0 OpenCL$" "$log"; then
	echo "ok $i - --ncpu 1 wins over TSR_NCPU=2"
else
	echo "not ok $i - --ncpu 1 wins over TSR_NCPU=2"
	sed 's/^/# /' "$log"
	failed=1
fi
i=$((i + 1))
if "$hd" --version >"$log" 2>&1 && grep -q "^hello-device (Tessera) [0-9]" "$log"; then
	echo "ok $i - --version"
else
	echo "not ok $i - --version"
	sed 's/^/# /' "$log"
	failed=1
fi

# The device alone first: it tells whether there is one (tsr_init fails, or starts no OpenCL
# worker, where no OpenCL platform is installed).
env $ocl_env TSR_NOPENCL=1 TSR_NCPU=0 "$hd" >"$log" 2>&1
if grep -q "^workers: 0 CPU, 0 CUDA, 0 OpenCL\|tsr_init: " "$log"; then
	why=$(grep -m 1 "^workers:\|tsr_init: " "$log" | tr -d '#')
	echo "ok 4 # SKIP OpenCL device alone: no OpenCL device ($why)"
	echo "ok 5 # SKIP OpenCL device beside 2 CPUs: no OpenCL device"
	exit $failed
fi
# shellcheck disable=SC2086 # ocl_env is a list of assignments
run "OpenCL device alone (POCL): scale, sum and future on the device" "0 CPU, 0 CUDA, 1 OpenCL" \
	$ocl_env TSR_NOPENCL=1 TSR_NCPU=0
# shellcheck disable=SC2086
run "OpenCL device beside 2 CPU workers" "2 CPU, 0 CUDA, 1 OpenCL" $ocl_env TSR_NOPENCL=1 TSR_NCPU=2
exit $failed
