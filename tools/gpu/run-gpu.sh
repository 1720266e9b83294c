#!/bin/bash
# run-gpu.sh OUTDIR: everything Tessera has to prove on a GPU machine, in one command, with every
# log and a summary written under OUTDIR (which comes back from the machine):
#   1. the machine: nvidia-smi -L, cuBLAS (the machine's, or the bundle's stand-in), ldd of every
#      program, starpu_machine_display, tessera-info;
#   2. the GPU tests (tests/gpu/*.gpu: oracle, apps' --verify, residency);
#   3. the benchmarks, each against a baseline in the same run: the stencil at a size filling a
#      good part of GPU memory against the device's copy bandwidth and PyTorch / CuPy; cg 3-D
#      against CuPy's CG; circuit's GFLOPS; CPU+GPU under dmda against the GPU alone.
# Without a GPU it still starts, checks its libraries and skips the GPU parts with a message.
# Environment: TSR_GPU_QUICK=1 shrinks the benchmarks (a smoke test); TSR_FORCE_CUBLAS_STUB=1 uses
# the stand-in even if a real libcublas.so.13 exists; TSR_GPU_ORACLE_COUNT (tests/gpu/oracle.gpu).
set -u
B=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-}
if [ -z "$OUT" ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
mkdir -p "$OUT/gpu-tests" "$OUT/bench" || exit 2
OUT=$(cd "$OUT" && pwd)
SUM=$OUT/summary.txt
: >"$SUM"
say() {   # a line for the console and the summary
	echo "$*"
	echo "$*" >>"$SUM"
}
# step NAME TIMEOUT COMMAND...: run with a time limit, log to OUTDIR/NAME.log, say how it went
step() {
	name=$1
	limit=$2
	shift 2
	t0=$(date +%s)
	timeout "$limit" "$@" >"$OUT/$name.log" 2>&1
	rc=$?
	dt=$(( $(date +%s) - t0 ))
	case $rc in
		0) say "[ok]      $name (${dt} s)" ;;
		77) say "[skip]    $name (${dt} s): $(grep -m1 -i skip "$OUT/$name.log")" ;;
		124) say "[timeout] $name after ${limit} s (log: $name.log)" ;;
		*) say "[FAIL]    $name: exit $rc (${dt} s, log: $name.log)" ;;
	esac
	return $rc
}

. "$B/env.sh"
export STARPU_SILENT=1
# StarPU's calibration (dmda's performance models) and any 1.3 files stay apart from this run.
export STARPU_HOME=$OUT/starpu-home
mkdir -p "$STARPU_HOME"
say "Tessera GPU run: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(uname -n), bundle $B"
sed -n '2,6p' "$B/MANIFEST" | sed 's/^/  /' | tee -a "$SUM"

# ---- 1. the machine
if command -v nvidia-smi >/dev/null 2>&1; then
	nvidia-smi -L >"$OUT/nvidia-smi.log" 2>&1
	nvidia-smi >>"$OUT/nvidia-smi.log" 2>&1
	say "GPUs: $(nvidia-smi -L 2>/dev/null | tr '\n' ';')"
else
	say "GPUs: none (no nvidia-smi on this machine)"
fi

# cuBLAS: StarPU links libcublas.so.13 but Tessera never calls it. Use the machine's when it has
# one (CUDA 13's lib64, the loader's cache, PyTorch's nvidia-cublas wheel), else the stand-in.
find_cublas() {
	for d in /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 /usr/lib/x86_64-linux-gnu; do
		[ -e "$d/libcublas.so.13" ] && { echo "$d"; return; }
	done
	p=$(ldconfig -p 2>/dev/null | awk '/libcublas\.so\.13 / {print $NF; exit}')
	[ -n "$p" ] && { dirname "$p"; return; }
	for py in python3 python; do
		d=$($py -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null)
		[ -n "$d" ] && [ -e "$d/libcublas.so.13" ] && { echo "$d"; return; }
	done
}
cublas_dir=
[ "${TSR_FORCE_CUBLAS_STUB:-0}" = 1 ] || cublas_dir=$(find_cublas)
if [ -n "$cublas_dir" ]; then
	export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$cublas_dir
	say "cuBLAS: the machine's libcublas.so.13 in $cublas_dir"
else
	export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$B/lib/cublas-stub
	say "cuBLAS: no libcublas.so.13 found (or TSR_FORCE_CUBLAS_STUB=1): the bundle's stand-in (6 symbols, never called)"
fi

missing=0
for p in "$B"/bin/*; do
	echo "== $p" >>"$OUT/ldd.log"
	ldd "$p" >>"$OUT/ldd.log" 2>&1
	if ldd "$p" 2>/dev/null | grep -q 'not found'; then
		missing=1
		say "ldd: $(basename "$p") misses: $(ldd "$p" | awk '/not found/ {print $1}' | tr '\n' ' ')"
	fi
done
[ $missing = 0 ] && say "ldd: every program finds all its libraries"

[ -x "$B/bin/starpu_machine_display" ] && step starpu_machine_display 120 "$B/bin/starpu_machine_display"
step tessera-info 120 "$B/bin/tessera-info" --machine
ncuda=$(sed -n 's/^  CUDA devices: *\([0-9][0-9]*\).*/\1/p' "$OUT/tessera-info.log")
ncuda=${ncuda:-0}
say "$(grep -m1 '^  workers:' "$OUT/tessera-info.log" | sed 's/^ *//')"
ncores=$(nproc)

# ---- 2. the GPU tests (each exits 77 without a CUDA worker)
export TSR_BUNDLE=$B TSR_GPU_LOGDIR=$OUT/gpu-tests
for t in oracle apps residency; do
	step "gpu-test-$t" 590 bash "$B/tests/gpu/$t.gpu"
	grep -E '^(not ok|#   N=)' "$OUT/gpu-test-$t.log" | head -n 20 | sed 's/^/    /' | tee -a "$SUM"
done
unset TSR_GPU_LOGDIR

if [ "$ncuda" -lt 1 ]; then
	say "No CUDA worker: GPU tests skipped, no benchmark run. (Nothing is wrong with the bundle if ldd found everything.)"
	exit 0
fi

# ---- 3. benchmarks
quick=${TSR_GPU_QUICK:-0}
if [ "$quick" = 1 ]; then
	S_N=256; S_NZ=32; S_IT=10; M_N=256; M_NZ=16; CG_N=32; CG_IT=20; C_NPP=4096; C_I=10
else
	# f64 2048 x 2048 x 256: two fields of 8.6 GB (17 GB, a fifth of an H100's memory); PyTorch's
	# temporaries take about three times that.
	S_N=2048; S_NZ=256; S_IT=20; M_N=1024; M_NZ=64; CG_N=128; CG_IT=100; C_NPP=131072; C_I=100
fi
BO=$OUT/bench
# (words, not functions: timeout runs them)
g1="env TSR_NCUDA=1 TSR_NCPU=0"                    # GPU alone (fields homed on it)
gc="env TSR_NCUDA=1 TSR_NCPU=$((ncores - 2))"      # GPU + CPUs (one core drives the GPU)
bench() {   # bench NAME LIMIT COMMAND...: log under bench/, the lines that carry figures to the summary
	name=$1
	shift
	step "bench/$name" "$@"
	grep -E 'GB/s|ms/iter|time/iter|GFLOPS|ELAPSED|d2d_bw|iterations:|tessera stats: bytes|SKIP|rror' \
		"$OUT/bench/$name.log" | grep -v '^tessera stats: *[a-z_]* *c' | head -n 8 | sed 's/^/    /' | tee -a "$SUM"
}
say "-- benchmarks (TSR_GPU_QUICK=$quick, $ncores cores)"
bench d2d-bandwidth 120 "$B/bin/d2d_bw" -mb 4096 -reps 20
bench stencil-gpu-1tile 300 $g1 env TSR_STATS=1 "$B/bin/stencil" -nx $S_N -ny $S_N -nz $S_NZ -iter $S_IT -precision f64 -tiles 1 --sched eager --reps 3
bench stencil-gpu-4tiles 300 $g1 env TSR_STATS=1 "$B/bin/stencil" -nx $S_N -ny $S_N -nz $S_NZ -iter $S_IT -precision f64 -ty 2 -tz 2 --sched eager --reps 3
bench stencil-pytorch-cupy 300 python3 "$B/py/stencil_baseline.py" $S_N $S_N $S_NZ $S_IT f64
bench stencil-mid-gpu 200 $g1 env TSR_STATS=1 "$B/bin/stencil" -nx $M_N -ny $M_N -nz $M_NZ -iter 20 -ty 4 -tz 2 --sched dmda --reps 3
bench stencil-mid-gpu+cpu-dmda 200 $gc env TSR_STATS=1 "$B/bin/stencil" -nx $M_N -ny $M_N -nz $M_NZ -iter 20 -ty 4 -tz 2 --sched dmda --reps 3
bench stencil-mid-cpu 200 env TSR_NCUDA=0 TSR_NCPU=$((ncores - 1)) "$B/bin/stencil" -nx $M_N -ny $M_N -nz $M_NZ -iter 20 -ty 4 -tz 2 --sched dmda --reps 3
bench cg3d-csr-gpu 200 $g1 env TSR_STATS=1 "$B/bin/cg" -dim 3 -n $CG_N --csr -blocks 1 -maxiter $CG_IT -tol 0 -reps 3
bench cg3d-stencil-gpu 200 $g1 "$B/bin/cg" -dim 3 -n $CG_N --stencil -blocks 1 -maxiter $CG_IT -tol 0 -reps 3
bench cg3d-cupy 200 python3 "$B/py/cg_baseline.py" $CG_N $CG_IT
bench cg3d-csr-gpu+cpu-dmda 200 $gc "$B/bin/cg" -dim 3 -n $CG_N --csr -blocks 8 -maxiter $CG_IT -tol 0 --sched dmda -reps 3
bench circuit-gpu 200 $g1 "$B/bin/circuit" -p 8 -npp $C_NPP -wpp $C_NPP -l 5 -i $C_I --sched eager
bench circuit-gpu+cpu-dmda 200 $gc "$B/bin/circuit" -p 16 -npp $((C_NPP / 2)) -wpp $((C_NPP / 2)) -l 5 -i $C_I --sched dmda
bench circuit-cpu 200 env TSR_NCUDA=0 TSR_NCPU=$((ncores - 1)) "$B/bin/circuit" -p 16 -npp $((C_NPP / 2)) -wpp $((C_NPP / 2)) -l 5 -i $C_I --sched dmda
say "done: $(date -u '+%H:%M:%S UTC'); logs in $OUT"
