# tests/gpu/common.sh: sourced by the device tests (*.gpu, and the *.ocl wrappers that run them on
# an OpenCL device). They run from `make check` (top_builddir set) or from the GPU bundle
# (TSR_BUNDLE set by run-gpu.sh: programs under $TSR_BUNDLE/bin). TSR_DEVICE says which device:
# cuda (the default) or opencl (POCL's device on the CPU counts: STARPU_OPENCL_ON_CPUS=1). Without
# such a worker every device test exits 77, which `make check` shows as SKIP.

if [ -n "${TSR_BUNDLE:-}" ]; then
	tsr_bin=$TSR_BUNDLE/bin
	tsr_info=$tsr_bin/tessera-info
	tsr_oracle=$tsr_bin/oracle
	tsr_stencil=$tsr_bin/stencil
	tsr_cg=$tsr_bin/cg
	tsr_circuit=$tsr_bin/circuit
	tsr_hello_device=$tsr_bin/hello-device
	tsr_test_home=$tsr_bin/test_home
else
	b=${top_builddir:-.}
	tsr_info=$b/tessera-info
	tsr_oracle=$b/tests/oracle/oracle
	tsr_stencil=$b/apps/stencil/stencil
	tsr_cg=$b/apps/cg/cg
	tsr_circuit=$b/apps/circuit/circuit
	tsr_hello_device=$b/apps/hello-device/hello-device
	tsr_test_home=$b/tests/unit/test_home
fi

# The environment must not change what a test asks for; StarPU's calibration goes to a private
# STARPU_HOME (1.3 and 1.4 files differ) unless the caller gave one.
unset TSR_SCHED TSR_NCPU TSR_NCUDA TSR_NOPENCL TSR_TIMELINE TSR_DAG TSR_STATS TSR_HOME STARPU_SCHED STARPU_NCPU \
	STARPU_NCUDA STARPU_NOPENCL
tsr_device=${TSR_DEVICE:-cuda}
case $tsr_device in
	cuda)
		tsr_device_name=CUDA
		tsr_device_flag=--ncuda
		tsr_device_var=TSR_NCUDA
		;;
	opencl)
		tsr_device_name=OpenCL
		tsr_device_flag=--nopencl
		tsr_device_var=TSR_NOPENCL
		STARPU_OPENCL_ON_CPUS=1
		# one bus calibration per host name, and POCL's device changes it: a name apart from
		# the CPU-only runs' (see tests/stencil/verify.sh)
		STARPU_HOSTNAME=${STARPU_HOSTNAME:-opencl-on-cpus}
		export STARPU_OPENCL_ON_CPUS STARPU_HOSTNAME
		;;
	*)
		echo "TSR_DEVICE='$tsr_device' is neither cuda nor opencl"
		exit 99
		;;
esac
if [ -z "${STARPU_HOME:-}" ]; then
	STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/tsr-gpu.XXXXXX") || exit 99
	tsr_gpu_tmp_home=$STARPU_HOME
	trap 'rm -rf "$tsr_gpu_tmp_home"' EXIT
fi
export STARPU_HOME STARPU_SILENT=1

# Workers of the device kind StarPU starts here when asked for one (0 without such a device, or
# with a StarPU built without it).
tsr_device_workers() {
	[ -x "$tsr_info" ] || { echo 0; return; }
	n=$(env "$tsr_device_var=1" "$tsr_info" --machine 2>/dev/null |
		sed -n "s/^  $tsr_device_name devices: *\([0-9][0-9]*\).*/\1/p")
	echo "${n:-0}"
}

# skip_without_device TEST: exit 77 with a message that says why.
skip_without_device() {
	ndev=$(tsr_device_workers)
	if [ "$ndev" -lt 1 ]; then
		echo "SKIP $1: no $tsr_device_name worker here ($tsr_info reports $ndev $tsr_device_name devices: no such" \
			"device, or a StarPU without it)"
		exit 77
	fi
}
skip_without_cuda() {
	skip_without_device "$@"
}

# use_device: the apps run on one device worker from here on (TSR_NCUDA=1 or TSR_NOPENCL=1).
use_device() {
	eval "$tsr_device_var=1"
	export "${tsr_device_var?}"
}

# scaled SECONDS: SECONDS times CK_TIMEOUT_MULTIPLIER, rounded up (the tests' one knob for time
# limits, 4 under make check, 1 where unset: Makefile.am, tests/mpi/common.sh).
scaled() {
	awk -v s="$1" -v m="${CK_TIMEOUT_MULTIPLIER:-1}" \
		'BEGIN { if (!(m + 0 > 0)) m = 1; v = s * m; printf "%d\n", v == int(v) ? v : int(v) + 1 }'
}

# check NAME COMMAND...: run one check, print ok/not ok and keep the log of a failure.
tsr_gpu_fail=0
tsr_gpu_n=0
check() {
	name=$1
	shift
	tsr_gpu_n=$((tsr_gpu_n + 1))
	log=${TSR_GPU_LOGDIR:-$STARPU_HOME}/$(basename "$0" .gpu).$tsr_gpu_n.log
	t0=$(date +%s)
	if "$@" >"$log" 2>&1; then
		echo "ok $tsr_gpu_n - $name ($(( $(date +%s) - t0 )) s)"
		tail -n 1 "$log" | sed 's/^/#   /'
	else
		rc=$?
		tsr_gpu_fail=$((tsr_gpu_fail + 1))
		echo "not ok $tsr_gpu_n - $name (exit $rc)"
		echo "#   $*"
		tail -n 40 "$log" | sed 's/^/# /'
	fi
}

finish() {
	echo "# $tsr_gpu_n checks, $tsr_gpu_fail failed"
	[ "$tsr_gpu_fail" -eq 0 ]
}
