#!/bin/sh
# tests/stencil/verify.sh: apps/stencil --verify (bit-identical to the sequential C reference in f64,
# max relative error below 1e-6 in f32) over nx = ny in {16, 64, 100, 256}, nz in {1, 64} (8 for
# 256), both precisions, four schedulers (eager, lws, dmda, tsr-locality) on 1 and 2 CPU workers,
# with 1..16 tiles cut in i, j and k and 1..13 iterations (and nz = 2, 3, since nz = 1 starts from
# zeros); then the .npy output against NumPy, --compare's cross-checks (raw StarPU under Tessera's
# policy and workers), the usage errors, and the OpenCL variants (apps/stencil/stencil.cl) on an OpenCL
# device alone and beside 1 and 2 CPU workers (skipped where no OpenCL device is found). One TAP
# line per run.
st=${top_builddir:-.}/apps/stencil/stencil
if [ ! -x "$st" ]; then
	echo "1..0 # SKIP $st not built"
	exit 0
fi
# Options, not the environment, choose the scheduler and the workers here.
unset TSR_SCHED TSR_NCPU TSR_NCUDA TSR_NOPENCL TSR_TIMELINE TSR_DAG TSR_STATS STARPU_SCHED STARPU_NCPU
# dmda writes performance models: keep them out of the user's ~/.starpu and away from other runs.
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/stencil-verify.XXXXXX") || exit 1
export STARPU_HOME STARPU_SILENT=1
trap 'rm -rf "$STARPU_HOME"' EXIT
log=$STARPU_HOME/out

sizes="16 64 100 256"
precs="f64 f32"
scheds="eager lws dmda tsr-locality"
# Tile layouts (i x j x k), taken in turn: 1..16 tiles, cut in i (down to one-point-wide tiles on
# the 16-point grid, whose halo then spans two neighbours), in j, in both, and in k.
layouts="1:1:1 2:1:1 1:3:1 2:2:1 5:1:1 3:2:1 1:7:1 4:2:1 3:3:1 2:5:1 11:1:1 3:4:1 1:13:1 7:2:1 5:3:1 4:4:1 16:1:1 2:2:2 1:3:4"
nlayouts=19
echo "1..$((4 * 2 * 2 * 4 + 16 + 9 + 10 + 8))"

i=0
runc() {   # name, pattern the log must contain, then the command
	name=$1
	want=$2
	shift 2
	i=$((i + 1))
	if "$@" >"$log" 2>&1 && grep -q "$want" "$log"; then
		echo "ok $i - $name"
	else
		echo "not ok $i - $name"
		echo "#   $*"
		sed 's/^/# /' "$log"
	fi
}
run() {   # name, pattern the log must contain, then the arguments of apps/stencil
	name=$1
	want=$2
	shift 2
	runc "$name" "$want" "$st" "$@"
}
nth() {   # nth K word...: the K-th word (1-based)
	k=$1
	shift
	eval "echo \${$k}"
}

l=0
it=0
ncpu=2
for n in $sizes; do
	for nz in 1 64; do
		[ "$n" = 256 ] && [ "$nz" = 64 ] && nz=8   # keeps the big grid's share of the time small
		# every scheduler on 1 and on 2 workers, in turn
		for p in $precs; do ncpu=$((3 - ncpu)); for s in $scheds; do
			lay=$(nth $((l % nlayouts + 1)) $layouts)
			tx=${lay%%:*}
			rest=${lay#*:}
			ty=${rest%%:*}
			tz=${rest#*:}
			[ "$tz" -gt "$nz" ] && tz=$nz
			iter=$((it % 13 + 1))
			l=$((l + 1))
			it=$((it + 5))   # 5 is prime to 13: every count 1..13 comes up
			run "n=$n nz=$nz $p sched=$s ncpu=$ncpu tiles=${tx}x${ty}x${tz} iter=$iter" "^verify: *PASS" \
				-nx "$n" -ny "$n" -nz "$nz" -iter "$iter" -precision "$p" -tx "$tx" -ty "$ty" -tz "$tz" \
				--sched "$s" --ncpu "$ncpu" --verify
		done; done
	done
done

# nz = 1 leaves the course's initial box empty (k in [nz/4, 3nz/4)): the smallest nz with data
run "n=64 nz=2 f64 sched=lws tiles=2x3x2 iter=13" "^verify: *PASS" -nx 64 -ny 64 -nz 2 -iter 13 -tx 2 -ty 3 -tz 2 --sched lws --ncpu 2 --verify
run "n=100 nz=3 f32 sched=dmda tiles=1x16x1 iter=12" "^verify: *PASS" -nx 100 -ny 100 -nz 3 -iter 12 -precision f32 -tiles 16 --sched dmda --ncpu 2 --verify
# the time steps run in traces by default (tsr_trace_begin/end): once without them, and without
# the automatic mode finding the loop either, every step analysed in full
export TSR_REPLAY=off
run "--no-trace, TSR_REPLAY=off: n=64 nz=4 tiles=2x2x2 iter=9" "^verify: *PASS" -nx 64 -ny 64 -nz 4 -iter 9 -tx 2 -ty 2 -tz 2 --ncpu 2 --no-trace --verify
unset TSR_REPLAY
# streaming stores (chosen automatically only for fields beyond the last-level cache) give the same
# bits, at every alignment of the rows (odd nx, i-tiles) and in both precisions
run "--nt on: n=37x23 nz=5 f64 tiles=3x2x1 iter=7" "^verify: *PASS" -nx 37 -ny 23 -nz 5 -iter 7 -tx 3 -ty 2 --nt on --ncpu 2 --verify
run "--nt on: n=45x30 nz=4 f32 tiles=2x1x2 iter=9" "^verify: *PASS" -nx 45 -ny 30 -nz 4 -iter 9 -tx 2 -ty 1 -tz 2 -precision f32 --nt on --ncpu 2 --verify
# nx != ny, and -tiles N (cut along j, or squarely when N > ny)
run "nx=40 ny=24 nz=3 -tiles 5" "^verify: *PASS" -nx 40 -ny 24 -nz 3 -iter 6 -tiles 5 --ncpu 2 --verify
run "nx=20 ny=6 -tiles 12 (more tiles than rows)" "^verify: *PASS" -nx 20 -ny 6 -nz 2 -iter 3 -tiles 12 --ncpu 2 --verify

# --out: the file loads with NumPy, has the right shape and type, and equals the course's NumPy
# implementation of the algorithm (an implementation independent of the C reference).
npy=$STARPU_HOME/field.npy
i=$((i + 1))
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	echo "ok $i # SKIP --out against NumPy: /usr/bin/python3 has no numpy"
elif "$st" -nx 24 -ny 20 -nz 8 -iter 7 -tx 2 -ty 3 --ncpu 2 --out "$npy" >"$log" 2>&1 &&
	/usr/bin/python3 - "$npy" >>"$log" 2>&1 <<'EOF'
import sys
import numpy as np
f = np.load(sys.argv[1])
h, nz, ny, nx, alpha = 2, 8, 20, 24, 1.0 / 32.0
assert f.dtype == np.float64 and f.shape == (nz, ny + 2 * h, nx + 2 * h), (f.dtype, f.shape)

def halo(a):
    a[:, :h, h:-h] = a[:, -2 * h:-h, h:-h]
    a[:, -h:, h:-h] = a[:, h:2 * h, h:-h]
    a[:, :, :h] = a[:, :, -2 * h:-h]
    a[:, :, -h:] = a[:, :, h:2 * h]

def lap(a, out, e):
    jb, je, ib, ie = h - e, a.shape[1] - h + e, h - e, a.shape[2] - h + e
    out[:, jb:je, ib:ie] = (-4.0 * a[:, jb:je, ib:ie] + a[:, jb:je, ib - 1:ie - 1] + a[:, jb:je, ib + 1:ie + 1]
                            + a[:, jb - 1:je - 1, ib:ie] + a[:, jb + 1:je + 1, ib:ie])

a = np.zeros_like(f)
a[nz // 4:3 * nz // 4, h + ny // 4:h + 3 * ny // 4, h + nx // 4:h + 3 * nx // 4] = 1.0
b = np.zeros_like(f)
t = np.zeros_like(f)
for n in range(7):
    halo(a)
    lap(a, t, 1)
    lap(t, b, 0)
    b[:, h:-h, h:-h] = a[:, h:-h, h:-h] - alpha * b[:, h:-h, h:-h]
    if n < 6:
        a, b = b, a
    else:
        halo(b)
d = np.abs(f - b).max()
print("numpy: max abs difference", d)
assert d == 0.0
EOF
then
	echo "ok $i - --out writes a .npy equal to the course's NumPy implementation"
else
	echo "not ok $i - --out writes a .npy equal to the course's NumPy implementation"
	sed 's/^/# /' "$log"
fi

# --out in f32: header and size (checked without NumPy: 64-byte aligned header, '<f4', shape)
i=$((i + 1))
if "$st" -nx 16 -ny 12 -nz 2 -iter 2 -precision f32 --ncpu 2 --out "$npy" >"$log" 2>&1 &&
	head -c 128 "$npy" | grep -a -q "'descr': '<f4', 'fortran_order': False, 'shape': (2, 16, 20)" &&
	[ "$(wc -c <"$npy")" -eq $((128 + 2 * 16 * 20 * 4)) ]; then
	echo "ok $i - --out f32 header and size"
else
	echo "not ok $i - --out f32 header and size"
	sed 's/^/# /' "$log"
fi

# --compare on a small grid: the OpenMP and raw StarPU versions must agree bit for bit with Tessera
run "--compare: omp and raw StarPU identical to Tessera (f64, 3x2 tiles)" "^agree: *omp identical, starpu identical" \
	-nx 48 -ny 40 -nz 4 -iter 5 -tx 3 -ty 2 --ncpu 2 --compare --reps 2 --stream-n 100000
run "--compare: omp and raw StarPU identical to Tessera (f32, 2 tiles, 2x2 tiles in k)" "^agree: *omp identical, starpu identical" \
	-nx 32 -ny 32 -nz 6 -iter 4 -tx 2 -ty 1 -tz 2 -precision f32 --ncpu 2 --nt on --compare --reps 1 --stream-n 100000

# --compare's ratio Tessera/raw StarPU compares like with like: the baseline runs under the policy
# and on the workers Tessera runs under, whether --sched or STARPU_SCHED chose them
run "--compare: raw StarPU under --sched dmda on 2 workers, as Tessera" \
	"^baseline: raw StarPU in the same StarPU instance: policy dmda, 2 workers" \
	-nx 32 -ny 24 -nz 4 -iter 3 -tx 2 -ty 2 --sched dmda --ncpu 2 --compare --reps 1 --stream-n 100000
i=$((i + 1))
if STARPU_SCHED=eager "$st" -nx 32 -ny 24 -nz 4 -iter 3 --ncpu 1 --compare --reps 1 --stream-n 100000 \
	>"$log" 2>&1 && grep -q "^policy: *eager" "$log" &&
	grep -q "^baseline: raw StarPU in the same StarPU instance: policy eager, 1 worker$" "$log" &&
	grep -q "^ratios: .*tessera/starpu = [0-9.]*x" "$log"; then
	echo "ok $i - --compare: STARPU_SCHED=eager reaches Tessera and raw StarPU alike"
else
	echo "not ok $i - --compare: STARPU_SCHED=eager reaches Tessera and raw StarPU alike"
	sed 's/^/# /' "$log"
fi
# and a flag wins over it, for both
runc "--compare: --sched lws wins over STARPU_SCHED=eager, for raw StarPU too" \
	"^baseline: raw StarPU in the same StarPU instance: policy lws, 1 worker$" \
	env STARPU_SCHED=eager "$st" -nx 32 -ny 24 -nz 4 -iter 3 --sched lws --ncpu 1 --compare --reps 1 --stream-n 100000

# Tessera's flags win over the environment (TSR_NCPU=2 --ncpu 1: 1 worker), whatever the order
runc "--ncpu 1 wins over TSR_NCPU=2" "^workers: *1 CPU," env TSR_NCPU=2 "$st" -nx 16 -ny 16 -nz 2 -iter 2 --ncpu 1
runc "--ncpu=1 before the app's options, over STARPU_NCPU=2" "^workers: *1 CPU," \
	env STARPU_NCPU=2 "$st" --ncpu=1 -nx 16 -ny 16 -nz 2 -iter 2
runc "TSR_NCPU=1 wins over STARPU_NCPU=2" "^workers: *1 CPU," env TSR_NCPU=1 STARPU_NCPU=2 "$st" -nx 16 -ny 16 -nz 2 -iter 2
run "--sched tsr-locality" "^policy: *tsr-locality" -nx 16 -ny 16 -nz 2 -iter 2 --sched tsr-locality --ncpu 2
runc "STARPU_SCHED=tsr-locality reaches Tessera's policy" "^policy: *tsr-locality" \
	env STARPU_SCHED=tsr-locality "$st" -nx 16 -ny 16 -nz 2 -iter 2 --ncpu 2
run "--sched help lists the policies" "^  tsr-critpath " --sched help
run "--version" "^stencil (Tessera) [0-9]*\.[0-9]*\.[0-9]*$" --version
# the progress line: forced on a pipe with --progress (its closing line at least), off with --quiet
run "--progress: the closing line on stderr" "^stencil: 5 iterations done in .* ms per iteration" \
	-nx 16 -ny 16 -nz 2 -iter 5 --ncpu 1 --progress
i=$((i + 1))
if "$st" -nx 16 -ny 16 -nz 2 -iter 5 --ncpu 1 --progress --quiet >"$log" 2>&1 && ! grep -q "iterations done" "$log"; then
	echo "ok $i - --quiet silences the progress line"
else
	echo "not ok $i - --quiet silences the progress line"
	sed 's/^/# /' "$log"
fi

# usage errors exit 2 with a message; --help exits 0
i=$((i + 1))
"$st" --help >"$log" 2>&1
if [ $? -eq 0 ] && grep -q "^usage: stencil" "$log"; then echo "ok $i - --help"; else echo "not ok $i - --help"; fi
i=$((i + 1))
"$st" -nx 2 >"$log" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "expected an integer >= 4" "$log"; then echo "ok $i - -nx 2 is refused"; else
	echo "not ok $i - -nx 2 is refused (exit $rc)"; sed 's/^/# /' "$log"; fi
i=$((i + 1))
"$st" -nx 16 -ny 16 -tx 17 >"$log" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "do not fit" "$log"; then echo "ok $i - more tiles than points is refused"; else
	echo "not ok $i - more tiles than points is refused (exit $rc)"; sed 's/^/# /' "$log"; fi
# refused NAME PATTERN ARGS...: exit 2, the message matches, and nothing ran (no "grid:" line)
refused() {
	name=$1
	want=$2
	shift 2
	i=$((i + 1))
	"$st" "$@" >"$log" 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -q "$want" "$log" && ! grep -q "^grid:" "$log"; then echo "ok $i - $name"; else
		echo "not ok $i - $name (exit $rc)"; sed 's/^/# /' "$log"; fi
}
# --out is checked before the run: a directory that does not exist, a directory, a read-only place
refused "--out in a missing directory, before the run" "^stencil: --out $STARPU_HOME/nodir/f.npy: cannot create it in $STARPU_HOME/nodir: No such file" \
	-nx 16 -ny 16 -nz 2 -iter 2 --out "$STARPU_HOME/nodir/f.npy"
refused "--out naming a directory, before the run" "is a directory" -nx 16 -ny 16 -nz 2 -iter 2 --out "$STARPU_HOME"
refused "--out under a file, before the run" "Not a directory" -nx 16 -ny 16 -nz 2 -iter 2 --out "$log/f.npy"
# Tessera's flags are checked as their variables are, and take two dashes
refused "--ncpu 1x refused" "^stencil: tsr_args: --ncpu '1x' is not a whole number from -1 to 4096" --ncpu 1x
refused "--stats=yes refused" "^stencil: tsr_args: --stats 'yes' is not one of 0|1" --stats=yes
refused "-ncpu (one dash) refused, pointing at --ncpu" "Tessera's flags take two dashes: --ncpu" -ncpu 1
refused "--sched nosuch refused" "'nosuch' is not a scheduling policy" --sched nosuch
i=$((i + 1))
TSR_STATS=abc "$st" -nx 16 -ny 16 -nz 2 -iter 2 >"$log" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "TSR_STATS='abc' is not one of 0|1" "$log"; then echo "ok $i - TSR_STATS=abc refused, naming the switch"; else
	echo "not ok $i - TSR_STATS=abc refused, naming the switch (exit $rc)"; sed 's/^/# /' "$log"; fi

# The OpenCL variants (apps/stencil/stencil.cl) against the same reference: bit-identical in f64 (the
# kernels keep FP_CONTRACT OFF and the CPU kernel's order of operations), on the OpenCL device alone
# (the fields then live on the device: TSR_HOME=auto) and beside 1 and 2 CPU workers (tasks and
# data move between the host and the device), in both precisions, with tiles cut in i, j and k (the
# halo copies are then strided boxes of every shape). POCL (pocl-opencl-icd) gives any machine such
# a device when StarPU may use CPU devices (STARPU_OPENCL_ON_CPUS=1). A first small run on the
# device alone tells whether there is one.
# StarPU keeps one bus calibration per host name, and counting POCL's device changes it: test
# processes with and without it rewrote each other's files as they read them (an assertion in
# load_bus_affinity_file_content, make check -j2). The OpenCL runs use a name of their own.
ocl_env="STARPU_OPENCL_ON_CPUS=1 STARPU_HOSTNAME=opencl-on-cpus TSR_NCUDA=0"
ocl_probe=$STARPU_HOME/opencl-probe
env $ocl_env TSR_NOPENCL=1 TSR_NCPU=0 "$st" -nx 16 -ny 16 -nz 2 -iter 1 --verify >"$ocl_probe" 2>&1
# Skipped only when Tessera started without an OpenCL worker: its tsr_init failed (no worker at
# all) or the workers line shows none; any other failure of the probe is left to the runs below.
ocl_skip=
if grep -q "^workers: .* 0 OpenCL\|: tsr_init: " "$ocl_probe"; then
	said=$(grep -m 1 "^workers:\|: tsr_init: " "$ocl_probe")
	ocl_skip="no OpenCL device (apps/stencil with TSR_NOPENCL=1 TSR_NCPU=0: $(echo "$said" | tr -d '#'))"
fi
ocl_run() {   # name, CPU workers it must show, environment (VAR=value ...), then the arguments of apps/stencil
	if [ -n "$ocl_skip" ]; then
		i=$((i + 1))
		echo "ok $i # SKIP OpenCL $1: $ocl_skip"
		return
	fi
	name=$1
	ocpu=$2
	oenv=$3
	shift 3
	i=$((i + 1))
	if env $ocl_env $oenv "$st" "$@" >"$log" 2>&1 && grep -q "^verify: *PASS" "$log" &&
		grep -q "^workers: *$ocpu CPU, 0 CUDA, [1-9][0-9]* OpenCL" "$log"; then
		echo "ok $i - OpenCL $name"
	else
		echo "not ok $i - OpenCL $name"
		echo "#   $ocl_env $oenv $st $*"
		sed 's/^/# /' "$log"
	fi
}
ocl_run "device alone: f64 n=40x24 nz=3 tiles=3x2x1 iter=5" 0 "TSR_NOPENCL=1 TSR_NCPU=0" \
	-nx 40 -ny 24 -nz 3 -iter 5 -tx 3 -ty 2 --verify
ocl_run "device alone: f32 n=33x20 nz=4 tiles=2x2x2 iter=6" 0 "TSR_NOPENCL=1 TSR_NCPU=0" \
	-nx 33 -ny 20 -nz 4 -iter 6 -tx 2 -ty 2 -tz 2 -precision f32 --verify
ocl_run "device + 1 CPU (--nopencl 1): f64 n=36x28 nz=4 tiles=2x3x2 iter=7 eager" 1 "" \
	-nx 36 -ny 28 -nz 4 -iter 7 -tx 2 -ty 3 -tz 2 --sched eager --ncpu 1 --nopencl 1 --verify
ocl_run "device + 1 CPU: f32 n=24x40 nz=3 tiles=1x5x1 iter=4" 1 "TSR_NOPENCL=1" \
	-nx 24 -ny 40 -nz 3 -iter 4 -tiles 5 -precision f32 --ncpu 1 --verify
ocl_run "device + 2 CPUs: f64 n=40x24 nz=3 tiles=3x2x1 iter=8 dmda" 2 "TSR_NOPENCL=1" \
	-nx 40 -ny 24 -nz 3 -iter 8 -tx 3 -ty 2 --sched dmda --ncpu 2 --verify
ocl_run "device + 2 CPUs: f32 n=45x30 nz=4 tiles=4x2x2 iter=5 eager" 2 "TSR_NOPENCL=1" \
	-nx 45 -ny 30 -nz 4 -iter 5 -tx 4 -ty 2 -tz 2 -precision f32 --sched eager --ncpu 2 --verify
# Tessera's flags alone ask for the device and no CPU worker: --ncpu 0 where a device is
ocl_run "device alone by the flags (--ncpu 0 --nopencl 1), over TSR_NCPU=2" 0 "TSR_NCPU=2" \
	-nx 24 -ny 24 -nz 2 -iter 3 --ncpu 0 --nopencl 1 --verify
# the fields homed on the device while CPU workers run beside it
ocl_run "TSR_HOME=device + 2 CPUs: f64 n=40x24 nz=3 tiles=3x2x1 iter=5" 2 "TSR_NOPENCL=1 TSR_HOME=device" \
	-nx 40 -ny 24 -nz 3 -iter 5 -tx 3 -ty 2 --ncpu 2 --verify
# one-point-wide tiles in i (16 on 16 points): a tile's halo spans two neighbours
ocl_run "device alone: f64 n=16 nz=2 tiles=16x1x1 iter=3" 0 "TSR_NOPENCL=1 TSR_NCPU=0" \
	-nx 16 -ny 16 -nz 2 -iter 3 -tx 16 -ty 1 --verify
