#!/bin/sh
# policies.sh: stencil, cg and circuit under every scheduling policy (StarPU's and Tessera's) with
# 1 and 2 CPU workers; medians, speedup over eager, idle fraction -> CSV, Markdown table, PNG plot.
# Also: stencil with 16 tiles on 2 workers, tsr-locality against eager (time, color moves, bus bytes).
set -eu

usage() {
	cat <<'EOF'
usage: policies.sh [options]
Run apps/stencil/stencil, apps/cg/cg and apps/circuit/circuit on a fixed problem under each
scheduling policy with 1 and 2 CPU workers, REPS times each (runs interleaved, so that a change
in the machine's load spreads over all policies), and write:
  OUT/raw.csv       one line per run: app, workers, policy, rep, time, unit, idle fraction, status
  OUT/results.csv   per app, workers and policy: median time, spread of the runs, speedup over
                    eager with the same worker count, median idle fraction, runs that
                    succeeded, --verify result
  OUT/results.md    the same as Markdown tables, plus the tsr-locality / eager stencil section
  OUT/policies.png  speedup over eager per policy, one panel per app (gnuplot)
  OUT/logs/         every run's output
Options:
  --builddir DIR    build tree holding apps/*/ (default: the tree this script sits in, when
                    it is BUILD/apps/bench/policies, else .)
  --out DIR         output folder (default: bench-policies)
  --reps N          runs per (app, workers, policy) (default 3)
  --policies "P.."  policies (default: eager prio lws ws dmda dmdas heteroprio tsr-locality tsr-critpath)
  --apps "A.."      among stencil cg circuit (default: all three)
  --quick           small problems, 1 rep: a check that the script works, not a measurement
  --help            this text
The time is the one each app prints (stencil, cg: ms per iteration; circuit: seconds of the
simulation loop); the idle fraction is what TSR_STATS=1 prints at finalize (whole run, setup
included). Perf models live in OUT/starpu-home (STARPU_HOME), calibrated by a first dmda run of
each app, so that dmda, dmdas and tsr-critpath start from the same estimates.
EOF
}

builddir=$(dirname "$0")/../..
[ -x "$builddir/apps/stencil/stencil" ] || builddir=.
out=bench-policies
reps=3
policies="eager prio lws ws dmda dmdas heteroprio tsr-locality tsr-critpath"
apps="stencil cg circuit"
quick=0
while [ $# -gt 0 ]; do
	case "$1" in
	--builddir) builddir=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--policies) policies=$2; shift 2 ;;
	--apps) apps=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "policies.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
ncpus="1 2"

# Fixed problems: about a second per run on 2 cores. cg runs a fixed number of iterations
# (-tol 0: no tolerance) on a fixed number of blocks, so that the task graph is the same for
# every policy and worker count.
if [ $quick = 1 ]; then
	stencil_args="-nx 64 -ny 64 -nz 8 -iter 4 -tiles 16"
	cg_args="-n 60 -dim 2 -maxiter 20 -tol 0 -blocks 8"
	circuit_args="-l 1 -p 4 -npp 256 -wpp 256 -i 1000"
	loc_sizes="64x64x8x4"
	loc_reps=2
	reps=1
else
	stencil_args="-nx 256 -ny 256 -nz 32 -iter 20 -tiles 16"
	cg_args="-n 300 -dim 2 -maxiter 150 -tol 0 -blocks 8"
	circuit_args="-l 5 -p 8"
	# tsr-locality vs eager (nx x ny x nz x iterations, about half a second each): the size above,
	# and one where a worker's tiles of both fields fit in its own L2 cache (1 MiB per core here),
	# where keeping a tile on its worker can pay
	loc_sizes="256x256x32x100 64x128x16x400"
	loc_reps=7
fi
# --verify runs (small problems: they check each policy's results, not its speed)
verify_args() {
	case $1 in
	stencil) echo "-nx 64 -ny 64 -nz 8 -iter 5 -tiles 16 --verify" ;;
	cg) echo "-n 40 -dim 2 -maxiter 60 -tol 0 -blocks 8 --verify" ;;
	circuit) echo "-l 2 -p 4 -npp 128 -wpp 128 -i 200 --verify" ;;
	esac
}

for a in $apps; do
	[ -x "$builddir/apps/$a/$a" ] || { echo "policies.sh: $builddir/apps/$a/$a not built (make apps/$a/$a)" >&2; exit 1; }
done
command -v gnuplot >/dev/null 2>&1 || echo "policies.sh: gnuplot not found (apt-get install gnuplot-nox): no plot" >&2

mkdir -p "$out/logs" "$out/starpu-home"
out=$(cd "$out" && pwd)
# The policy and worker count come from here only; no GPU, so that "1 and 2 workers" means that.
unset TSR_SCHED STARPU_SCHED TSR_TIMELINE TSR_DAG STARPU_NCPU STARPU_NCPUS 2>/dev/null || true
export STARPU_HOME="$out/starpu-home" STARPU_SILENT=1 TSR_NCUDA=0 STARPU_NCUDA=0
RUN_TIMEOUT=${RUN_TIMEOUT:-300}

app_args() {   # app -> its benchmark arguments
	case $1 in stencil) echo "$stencil_args" ;; cg) echo "$cg_args" ;; circuit) echo "$circuit_args" ;; esac
}

# The time an app printed, and its unit.
parse_time() {   # app logfile
	case $1 in
	stencil) sed -n 's/^stencil: OK .*: \([0-9.]*\) ms\/iter.*/\1 ms\/iter/p' "$2" | tail -n 1 ;;
	cg) sed -n 's/^time\/iter: \([0-9.]*\) ms.*/\1 ms\/iter/p' "$2" | tail -n 1 ;;
	circuit) sed -n 's/^ELAPSED TIME = *\([0-9.]*\) s.*/\1 s/p' "$2" | tail -n 1 ;;
	esac
}
parse_idle() {   # logfile
	sed -n 's/^tessera stats: idle fraction \([0-9.]*\) over .*/\1/p' "$1" | tail -n 1
}

# run app workers policy log [extra env...]: 0 if the app succeeded and printed its time
run() {
	run_app=$1 run_n=$2 run_p=$3 run_log=$4
	shift 4
	# shellcheck disable=SC2046
	if env TSR_NCPU="$run_n" "$@" timeout "$RUN_TIMEOUT" "$builddir/apps/$run_app/$run_app" $(app_args "$run_app") \
		--sched "$run_p" >"$run_log" 2>&1; then
		[ -n "$(parse_time "$run_app" "$run_log")" ]
	else
		return 1
	fi
}

start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
echo "policies.sh: apps '$apps', policies '$policies', workers 1 and 2, $reps reps; output in $out"

# 1. Calibrate the history-based perf models (dmda, dmdas and tsr-critpath read them).
for a in $apps; do
	for n in $ncpus; do
		run "$a" "$n" dmda "$out/logs/calibrate-$a-$n.log" STARPU_CALIBRATE=1 ||
			echo "policies.sh: calibration run of $a failed (see $out/logs/calibrate-$a-$n.log)" >&2
	done
done

# 2. Correctness: each app's --verify under each policy, 2 workers, small problem.
echo "app,policy,verified" >"$out/verify.csv"
for a in $apps; do
	for p in $policies; do
		log="$out/logs/verify-$a-$p.log"
		# shellcheck disable=SC2046
		if env TSR_NCPU=2 timeout "$RUN_TIMEOUT" "$builddir/apps/$a/$a" $(verify_args "$a") --sched "$p" >"$log" 2>&1; then
			v=yes
		else
			v=FAILED
		fi
		echo "$a,$p,$v" >>"$out/verify.csv"
		[ $v = yes ] || echo "policies.sh: $a --verify FAILED under $p (see $log)" >&2
	done
done

# 3. The timed runs, repetition by repetition. Within a repetition the policies of one app and
# worker count run back to back (a few seconds), and the speedup is taken against eager of the
# same block, so that the load of a shared machine, which drifts over minutes, cancels out of the
# ratio. The order rotates from one repetition to the next, so no policy always runs first.
echo "app,workers,policy,rep,time,unit,idle_fraction,status" >"$out/raw.csv"
order=$policies
r=1
while [ $r -le "$reps" ]; do
	for a in $apps; do
		for n in $ncpus; do
			for p in $order; do
				log="$out/logs/$a-$n-$p-$r.log"
				if run "$a" "$n" "$p" "$log" TSR_STATS=1; then
					tu=$(parse_time "$a" "$log")
					echo "$a,$n,$p,$r,${tu% *},${tu#* },$(parse_idle "$log"),ok" >>"$out/raw.csv"
				else
					echo "$a,$n,$p,$r,,,,failed" >>"$out/raw.csv"
					echo "policies.sh: $a, $n workers, $p, rep $r failed (see $log)" >&2
				fi
			done
		done
	done
	echo "policies.sh: repetition $r of $reps done ($(($(date +%s) - start)) s)"
	order="${order#* } ${order%% *}"
	r=$((r + 1))
done

# 4. Medians, speedups, tables.
awk -F, -v vfile="$out/verify.csv" -v csv="$out/results.csv" -v policies="$policies" -v apps="$apps" '
function median(key,   n, i, j, t, v) {
	n = split(times[key], v, " ")
	if (n == 0) return ""
	for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
# half the range of the runs, in percent of the median: how far apart the repetitions were
function spread(key, m,   n, i, v, lo, hi) {
	n = split(times[key], v, " ")
	if (n < 2 || m <= 0) return ""
	lo = hi = v[1] + 0
	for (i = 2; i <= n; i++) { if (v[i] + 0 < lo) lo = v[i] + 0; if (v[i] + 0 > hi) hi = v[i] + 0 }
	return sprintf("%.0f", 50 * (hi - lo) / m)
}
function imedian(key,   n, i, j, t, v) {
	n = split(idles[key], v, " ")
	if (n == 0) return ""
	for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
BEGIN {
	while ((getline line < vfile) > 0) { split(line, f, ","); verified[f[1] "," f[2]] = f[3] }
}
# the median of eager / policy over the repetitions where both ran (same block, same load)
function paired(a, n, p,   r, k, v, i, j, t) {
	k = 0
	for (r = 1; r <= maxrep; r++)
		if (((a "," n ",eager," r) in rt) && ((a "," n "," p "," r) in rt) && rt[a "," n "," p "," r] > 0)
			v[++k] = rt[a "," n ",eager," r] / rt[a "," n "," p "," r]
	if (k == 0) return ""
	for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
	return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
}
NR > 1 {
	key = $1 "," $2 "," $3
	runs[key]++
	if ($4 + 0 > maxrep) maxrep = $4 + 0
	if ($8 == "ok") {
		times[key] = times[key] " " $5; unit[$1] = $6; ok[key]++; rt[key "," $4] = $5 + 0
		if ($7 != "") idles[key] = idles[key] " " $7
	}
}
END {
	print "app,workers,policy,median_time,spread_percent,unit,speedup_vs_eager,median_idle_fraction,runs_ok,runs,verified" > csv
	np = split(policies, P, " "); na = split(apps, A, " ")
	for (i = 1; i <= na; i++) {
		a = A[i]
		printf "\n### %s (%s, lower is better)\n\n", a, unit[a]
		print "| policy | 1 CPU: median | speedup | idle | 2 CPUs: median | speedup | idle | 2 CPUs vs 1 | --verify |"
		print "|---|---:|---:|---:|---:|---:|---:|---:|:-:|"
		for (k = 1; k <= np; k++) {
			p = P[k]
			row = "| " p
			for (n = 1; n <= 2; n++) {
				key = a "," n "," p
				m = median(key); id = imedian(key); sp = spread(key, m); s = paired(a, n, p)
				s = s == "" ? "" : sprintf("%.2f", s)
				med[n] = m
				printf "%s,%d,%s,%s,%s,%s,%s,%s,%d,%d,%s\n", a, n, p, m, sp, unit[a], s, id, ok[key], runs[key], verified[a "," p] > csv
				row = row sprintf(" | %s%s | %s | %s", m == "" ? "failed" : m, sp == "" ? "" : " ±" sp "%", s == "" ? "-" : s "x", id == "" ? "-" : id)
			}
			sc = (med[1] != "" && med[2] != "" && med[2] > 0) ? sprintf("%.2fx", med[1] / med[2]) : "-"
			print row " | " sc " | " (verified[a "," p] == "" ? "-" : verified[a "," p]) " |"
		}
	}
}' "$out/raw.csv" >"$out/tables.md"

# 5. tsr-locality against eager on the stencil with 16 tiles and 2 workers: time, how often a
# tile's task ran on the same worker as that tile's previous task (from TSR_TIMELINE), and the bytes
# StarPU moved between memory nodes (the timeline's bus counters). The two policies run in pairs,
# back to back (which goes first alternates), and the ratio is taken within each pair.
median() {   # of the numbers on stdin
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
loc_md="$out/locality.md"
{
	echo "| grid (nx x ny x nz), iterations | eager ms/iter | tsr-locality ms/iter | eager / tsr-locality, per pair: median (min - max) | same worker: eager | same worker: tsr-locality | bytes between memory nodes |"
	echo "|---|---:|---:|---:|---:|---:|---|"
} >"$loc_md"
for size in $loc_sizes; do
	nx=${size%%x*} rest=${size#*x}
	ny=${rest%%x*} rest=${rest#*x}
	nz=${rest%%x*} iter=${rest#*x}
	: >"$out/loc.pairs"
	for p in eager tsr-locality; do : >"$out/loc-$p.times"; : >"$out/loc-$p.same"; : >"$out/loc-$p.bytes"; done
	r=1
	while [ $r -le $loc_reps ]; do
		if [ $((r % 2)) = 1 ]; then pair="eager tsr-locality"; else pair="tsr-locality eager"; fi
		te="" tl=""
		for p in $pair; do
			log="$out/logs/loc-$size-$p-$r.log" timeline="$out/logs/loc-$size-$p-$r.json"
			if env TSR_NCPU=2 TSR_TIMELINE="$timeline" timeout "$RUN_TIMEOUT" "$builddir/apps/stencil/stencil" \
				-nx "$nx" -ny "$ny" -nz "$nz" -iter "$iter" -tiles 16 --sched "$p" >"$log" 2>&1; then
				t=$(parse_time stencil "$log" | cut -d' ' -f1)
				echo "$t" >>"$out/loc-$p.times"
				if [ "$p" = eager ]; then te=$t; else tl=$t; fi
				# X events in completion order: per (task, color), did it run where the previous one did?
				awk '/"ph":"X"/ && /"color":"\(/ {
					match($0, /"args":\{"task":"[^"]*","color":"[^"]*"/); key = substr($0, RSTART, RLENGTH)
					match($0, /"tid":[0-9]+/); w = substr($0, RSTART + 6, RLENGTH - 6)
					if (key in last) { n++; if (last[key] == w) same++ }
					last[key] = w
				} END { if (n) printf "%.3f\n", same / n }' "$timeline" >>"$out/loc-$p.same"
				# StarPU's own total per bus: its counter's last (largest) sample
				awk '/"ph":"C"/ && /"name":"StarPU bus [0-9]+->[0-9]+ total"/ {
					match($0, /"name":"[^"]*"/); k = substr($0, RSTART, RLENGTH)
					match($0, /"bytes":[0-9]+/); v = substr($0, RSTART + 8, RLENGTH - 8) + 0
					if (v > tot[k]) tot[k] = v; n++
				} END { for (k in tot) b += tot[k]; print n ? b : "none" }' "$timeline" >>"$out/loc-$p.bytes"
				[ $r = 1 ] || rm -f "$timeline"   # keep the first pair's timelines only (a few MB each)
			else
				echo "policies.sh: stencil $size under $p failed (see $log)" >&2
			fi
		done
		if [ -n "$te" ] && [ -n "$tl" ]; then
			awk -v e="$te" -v l="$tl" 'BEGIN { if (l > 0) printf "%.3f\n", e / l }' >>"$out/loc.pairs"
		fi
		r=$((r + 1))
	done
	me=$(median <"$out/loc-eager.times") ml=$(median <"$out/loc-tsr-locality.times")
	ratio=$(median <"$out/loc.pairs" | awk '{ printf "%.2f", $1 }')
	range=$(sort -g "$out/loc.pairs" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR) printf "%.2f - %.2f", lo, hi }')
	se=$(median <"$out/loc-eager.same" | awk '{ printf "%.2f", $1 }')
	sl=$(median <"$out/loc-tsr-locality.same" | awk '{ printf "%.2f", $1 }')
	bytes=$(sort -u "$out/loc-eager.bytes" "$out/loc-tsr-locality.bytes" | tr '\n' ' ')
	case "$bytes" in
	"none ") bytes="none: no bus, one memory node" ;;
	*) bytes="eager $(median <"$out/loc-eager.bytes"), tsr-locality $(median <"$out/loc-tsr-locality.bytes") (medians)" ;;
	esac
	echo "| $nx x $ny x $nz, $iter | ${me:-failed} | ${ml:-failed} | ${ratio:--} (${range:--}) | ${se:--} | ${sl:--} | $bytes |" >>"$loc_md"
done
rm -f "$out"/loc-*.times "$out"/loc-*.same "$out"/loc-*.bytes "$out/loc.pairs"

# 6. The report.
info=$("$builddir/tessera-info" 2>/dev/null | sed -n 's/^  \(workers\|memory nodes\|CUDA devices\|hwloc\): /\1: /p' | tr '\n' ';' | sed 's/;$//; s/;/; /g')
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
{
	echo "## Scheduling policies: stencil, cg and circuit"
	echo
	echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores ($cpu); ${info:-tessera-info not built}."
	echo "Load average (1, 5, 15 min) at the start: $load_start; at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "Median of $reps runs, ± half their range in percent of the median (the machine's load moves it);"
	echo "speedup = median over the repetitions of eager's time / this policy's time, both measured in the"
	echo "same block of back-to-back runs (same load), same worker count; idle = median idle fraction"
	echo "printed by TSR_STATS=1 (whole run, setup included);"
	echo "--verify = the app's own check against its sequential version, 2 workers, small problem."
	echo
	echo "    stencil $stencil_args"
	echo "    cg $cg_args"
	echo "    circuit $circuit_args"
	cat "$out/tables.md"
	echo
	echo "### tsr-locality against eager: stencil, 16 tiles, 2 CPU workers"
	echo
	echo "$loc_reps pairs of runs, the two policies back to back (above 1: tsr-locality is faster)."
	echo "\"Same worker\": among the point tasks of a tile, the share that ran on the worker of that"
	echo "tile's previous task (from TSR_TIMELINE; median over the runs). Bytes: StarPU's bus counters in"
	echo "the timeline; with CPU workers only there is one memory node and nothing to move."
	echo
	cat "$loc_md"
} >"$out/results.md"
rm -f "$out/tables.md" "$loc_md"

# 7. The plot: speedup over eager per policy, 1 and 2 CPUs, one panel per app.
if command -v gnuplot >/dev/null 2>&1; then
	for a in $apps; do
		for n in 1 2; do
			awk -F, -v a="$a" -v n="$n" 'NR > 1 && $1 == a && $2 == n { print $3, ($7 == "" ? 0 : $7) }' "$out/results.csv" >"$out/plot-$a-$n.dat"
		done
	done
	na=$(echo "$apps" | wc -w)
	{
		echo "set terminal pngcairo size $((480 * na)),480 font 'sans,10'"
		echo "set output '$out/policies.png'"
		echo "set multiplot layout 1,$na title 'Speedup over eager (same worker count; higher is better)'"
		echo "set style data histograms; set style histogram clustered gap 1; set style fill solid 0.8 border -1"
		echo "set boxwidth 0.9; set grid ytics; set xtics rotate by -45 scale 0; set key inside top left horizontal"
		for a in $apps; do
			# head room above the tallest bar for the key
			top=$(cat "$out/plot-$a-1.dat" "$out/plot-$a-2.dat" | awk '$2 > m { m = $2 } END { print (m > 1 ? m : 1) * 1.3 }')
			echo "set title '$a'; set yrange [0:$top]"
			echo "plot '$out/plot-$a-1.dat' using 2:xtic(1) title '1 CPU', '$out/plot-$a-2.dat' using 2 title '2 CPUs', 1 with lines lc rgb 'black' dt 2 notitle"
		done
		echo "unset multiplot"
	} >"$out/policies.gp"
	gnuplot "$out/policies.gp" && rm -f "$out"/plot-*.dat
fi
echo "policies.sh: done in $(($(date +%s) - start)) s: $out/results.md, results.csv, raw.csv, policies.png"
