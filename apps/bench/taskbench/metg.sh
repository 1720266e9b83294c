#!/bin/sh
# metg.sh: Task Bench's METG(50%) of Tessera (natural mapping and projections) and of raw StarPU,
# same graphs, same policy, same worker count, runs interleaved; prints the table and the ratios.
set -eu

usage() {
	cat <<'EOF'
usage: metg.sh [options] [BUILD_DIR]
Run Task Bench's compute_bound sweep (kernel iterations halved from 2^MAX to 2^MIN) with the
systems built by build.sh in BUILD_DIR (default ./taskbench-build):
  tessera          BUILD_DIR/tessera/main                 (natural mapping: partition of boxes;
                                                          TSR_REPLAY=auto finds the loop by itself)
  tessera-untraced BUILD_DIR/tessera/main, TSR_REPLAY=off (every step analysed in full)
  tessera-trace    BUILD_DIR/tessera/main -tessera-trace  (the steps in tsr_trace_begin/end by hand)
  tessera-proj     BUILD_DIR/tessera/main -tessera-proj   (projections onto the tiles)
  starpu           BUILD_DIR/starpu/main                  (Task Bench's raw StarPU backend)
  starpu-floor     BUILD_DIR/floor/main                   (raw StarPU as a replay could submit it
                                                          at the least: no data handles, explicit
                                                          dependences; the floor under Tessera's)
  mpi              BUILD_DIR/mpi/nonblock under mpirun -np NCPU (Task Bench's MPI backend)
For each repetition, pattern and kernel size the systems run one after another (so that a change in
the machine's load spreads over all of them), then metg.py computes each system's METG(50%) from the
medians and prints a Markdown table with the ratios to StarPU. Every run must validate: Task Bench
checks each task's inputs, the Tessera and floor backends also check the last step's outputs; a
run that fails is reported and left out.
Options:
  --policies "P.."   StarPU policies, each a separate sweep (default: eager; e.g. "eager lws dmda")
  --patterns "T.."   dependence types (default: "stencil_1d nearest")
  --systems "S.."    among the systems above (default: tessera tessera-proj starpu)
  --reps N           repetitions (default 5)
  --steps N          timesteps (default 1000)
  --width N          points per step (default 2)
  --radix N          dependencies per point for nearest (Task Bench's default 3)
  --max N --min N    kernel iterations from 2^max down to 2^min (default 17 and 3)
  --ncpu N           CPU workers of both runtimes (default 2)
  --out DIR          output folder (default metg-results): raw.csv, metg.md, logs/, starpu-home/
  --quick            100 steps, 2^12..2^4, 1 repetition: checks the script, measures nothing
  --help             this text
Environment set for every run: STARPU_SCHED and TSR_SCHED (the policy), STARPU_NCPU and TSR_NCPU,
STARPU_MPI_NOBIND=1 (the raw backend is StarPU-MPI: with every core a worker, StarPU would pin its
MPI thread onto worker 0's core; it stays idle in a single-rank run), STARPU_HOME=OUT/starpu-home
(performance models of this sweep only), STARPU_SILENT=1.
EOF
}

policies=eager
patterns="stencil_1d nearest"
systems="tessera tessera-proj starpu"
reps=5
steps=1000
width=2
radix=3
max=17
min=3
ncpu=2
out=metg-results
builddir=taskbench-build
while [ $# -gt 0 ]; do
	case "$1" in
	--policies) policies=$2; shift 2 ;;
	--patterns) patterns=$2; shift 2 ;;
	--systems) systems=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--steps) steps=$2; shift 2 ;;
	--width) width=$2; shift 2 ;;
	--radix) radix=$2; shift 2 ;;
	--max) max=$2; shift 2 ;;
	--min) min=$2; shift 2 ;;
	--ncpu) ncpu=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--quick) steps=100; max=12; min=4; reps=1; shift ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "metg.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	*) builddir=$1; shift ;;
	esac
done

for s in $systems; do
	case $s in
	tessera|tessera-untraced|tessera-trace|tessera-proj) bin=$builddir/tessera/main ;;
	starpu) bin=$builddir/starpu/main ;;
	starpu-floor) bin=$builddir/floor/main ;;
	mpi) bin=$builddir/mpi/nonblock ;;
	*) echo "metg.sh: unknown system '$s' (tessera, tessera-untraced, tessera-trace, tessera-proj," \
		"starpu, starpu-floor, mpi)" >&2; exit 2 ;;
	esac
	if [ ! -x "$bin" ]; then
		echo "metg.sh: $bin not found: run build.sh first (or give its build directory)" >&2
		exit 1
	fi
done
if [ "$min" -gt "$max" ]; then
	echo "metg.sh: --min $min is above --max $max" >&2
	exit 2
fi

here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/logs" "$out/starpu-home"
out=$(cd "$out" && pwd)
raw=$out/raw.csv
echo "policy,pattern,system,iterations,rep,elapsed,flops,tasks,status,log" > "$raw"

# One run: its log, then one line of raw.csv. Status "ok" needs exit status 0, the timing lines,
# and for Tessera its own check of the outputs.
run_one() {
	policy=$1 pattern=$2 system=$3 iter=$4 rep=$5
	log=$out/logs/${policy}_${pattern}_${system}_${iter}_${rep}.log
	args="-steps $steps -width $width -type $pattern -kernel compute_bound -iter $iter -field 2"
	if [ "$pattern" = nearest ] || [ "$pattern" = spread ]; then
		args="$args -radix $radix"
	fi
	replay=auto
	case $system in
	tessera) set -- "$builddir/tessera/main" $args ;;
	tessera-untraced) set -- "$builddir/tessera/main" $args; replay=off ;;
	tessera-trace) set -- "$builddir/tessera/main" $args -tessera-trace ;;
	tessera-proj) set -- "$builddir/tessera/main" $args -tessera-proj ;;
	starpu) set -- "$builddir/starpu/main" $args -core "$ncpu" -p 1 ;;
	starpu-floor) set -- "$builddir/floor/main" $args ;;
	mpi) set -- mpirun --allow-run-as-root --oversubscribe -np "$ncpu" "$builddir/mpi/nonblock" $args ;;
	esac
	rc=0
	env STARPU_SCHED="$policy" TSR_SCHED="$policy" STARPU_NCPU="$ncpu" TSR_NCPU="$ncpu" \
		TSR_REPLAY="$replay" STARPU_MPI_NOBIND=1 STARPU_HOME="$out/starpu-home" STARPU_SILENT=1 \
		"$@" > "$log" 2>&1 || rc=$?
	elapsed=$(sed -n 's/^Elapsed Time \([0-9.e+-]*\) seconds$/\1/p' "$log")
	flops=$(sed -n 's/^Total FLOPs \([0-9]*\)$/\1/p' "$log")
	tasks=$(sed -n 's/^Total Tasks \([0-9]*\)$/\1/p' "$log")
	status=ok
	if [ $rc != 0 ]; then
		status="exit $rc"
	elif [ -z "$elapsed" ] || [ -z "$flops" ] || [ -z "$tasks" ]; then
		status="no timing"
	elif [ "${system#tessera}" != "$system" ] && ! grep -q '^Tessera: outputs of the last step verified$' "$log"; then
		status="not verified"
	elif [ "$system" = starpu-floor ] && ! grep -q '^StarPU floor: outputs of the last step verified$' "$log"; then
		status="not verified"
	fi
	echo "$policy,$pattern,$system,$iter,$rep,${elapsed:-0},${flops:-0},${tasks:-0},$status,logs/$(basename "$log")" >> "$raw"
	if [ "$status" != ok ]; then
		echo "metg.sh: FAILED: $system $pattern iter $iter ($status), see $log" >&2
	fi
}

# The machine's load frames the figures: the peak is the best FLOP/s seen, and other processes
# on the cores lower what a run gets.
load() { cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown; }
load_start=$(load)
nexp=$((max - min + 1))
echo "metg.sh: policies [$policies], patterns [$patterns], $reps reps, $steps steps, width $width," \
	"iterations 2^$max..2^$min, $ncpu workers -> $out"
for policy in $policies; do
	for rep in $(seq 1 "$reps"); do
		for pattern in $patterns; do
			e=$max
			while [ "$e" -ge "$min" ]; do
				iter=$((1 << e))
				for system in $systems; do
					run_one "$policy" "$pattern" "$system" "$iter" "$rep"
				done
				e=$((e - 1))
			done
			echo "metg.sh: $policy rep $rep/$reps $pattern: $nexp sizes done ($(date +%H:%M:%S))"
		done
	done
done

rc=0
/usr/bin/python3 "$here/metg.py" --cores "$ncpu" "$raw" > "$out/metg.md" || rc=$?
echo "load average (1, 5, 15 min) at the start: $load_start, at the end: $(load); $(nproc) cores" >> "$out/metg.md"
cat "$out/metg.md"
exit $rc
