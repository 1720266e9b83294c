#!/usr/bin/env python3
"""fake-ranks: one rank's analysis cost per iteration as the job grows, on one machine.

Runs apps/bench/fake-ranks as a fake rank (TSR_FAKE_NRANKS=N TSR_FAKE_RANK=r: one process plays
rank r of N, no task variant runs, transfers are counted and dropped or replaced) for N = 1, 4,
16, 64, 256, 1024, as rank 0 (a corner of the stencil's rank grid, the first block of CG's rows)
and as a middle rank (the centre of the grid, the middle block), for the weak-scaled stencil (the
same tiles per rank) and CG's iteration (the same rows per rank). Prints the host thread's CPU
time per iteration (the program's median of --reps timed runs) and its ratio to N = 1, and writes
OUT/results.md, OUT/results.csv, OUT/fake-ranks.png (gnuplot, when installed) and OUT/logs/.
Weak scaling: a rank's own work is the same at every N, so a ratio above 1 is what the rank pays
for the others. Where tsr_init refuses N (more ranks than Tessera runs on), the row says so.
Standard library only; `--help` for the options.
"""
import argparse
import csv
import math
import os
import re
import shutil
import subprocess
import sys

US_ITER = re.compile(r"host CPU per iteration ([0-9.]+) us \(median of (\d+) runs of (\d+) iterations")
REFUSED = re.compile(r"Tessera runs on at most (\d+)")


def rank_grid(n):
    """The program's near-square grid of ranks: px the largest divisor of n not above sqrt(n)."""
    px = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
    return px, n // px


def middle_rank(app, n):
    if app == "cg":
        return n // 2
    px, py = rank_grid(n)
    return px // 2 + px * (py // 2)


def run(a, app, n, rank):
    """One fake rank: (us per iteration, runs, iterations) or the refusal's limit."""
    cmd = [os.path.join(a.builddir, "apps/bench/fake-ranks"), "--app", app, "--reps", str(a.reps),
           "--min-time", str(a.min_time), "--ncpu", str(a.ncpu)]
    env = dict(os.environ, TSR_FAKE_NRANKS=str(n), TSR_FAKE_RANK=str(rank), STARPU_SILENT="1")
    for v in ("TSR_MPI", "TSR_STATS", "TSR_TIMELINE", "TSR_DAG"):
        env.pop(v, None)
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=a.timeout)
    log = os.path.join(a.out, "logs", "%s-n%d-r%d.log" % (app, n, rank))
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout)
    m = US_ITER.search(p.stdout)
    if p.returncode == 0 and m:
        return {"us": float(m.group(1)), "runs": int(m.group(2)), "iters": int(m.group(3))}
    r = REFUSED.search(p.stdout)
    if r:
        return {"refused": int(r.group(1))}
    sys.exit("fake-ranks: %s failed (exit %d), see %s" % (" ".join(cmd), p.returncode, log))


def measure(a):
    rows = []
    for app in a.apps:
        base = {}
        for n in a.ranks:
            roles = [("first", 0)]
            mid = middle_rank(app, n)
            if mid != 0:
                roles.append(("middle", mid))
            for role, rank in roles:
                r = run(a, app, n, rank)
                r.update(app=app, n=n, role=role, rank=rank)
                if n == 1 and "us" in r:
                    base[app] = r["us"]
                if "us" in r and app in base:
                    r["ratio"] = r["us"] / base[app]
                rows.append(r)
                print(line(r), flush=True)
    return rows


def line(r):
    who = "%s N=%d rank %d (%s)" % (r["app"], r["n"], r["rank"], r["role"])
    if "refused" in r:
        return "fake-ranks: %s: refused by tsr_init (Tessera runs on at most %d ranks)" % (who, r["refused"])
    ratio = " ratio to N=1 %.2f" % r["ratio"] if "ratio" in r else ""
    return "fake-ranks: %s: %.1f us/iter (median of %d runs of %d iterations)%s" % (
        who, r["us"], r["runs"], r["iters"], ratio)


def table(rows):
    out = ["| app | N | rank | host CPU per iteration (us) | ratio to N = 1 | runs x iterations |",
           "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        rank = "%d (%s)" % (r["rank"], r["role"])
        if "refused" in r:
            out.append("| %s | %d | %s | refused: at most %d ranks | | |" % (r["app"], r["n"], rank, r["refused"]))
        else:
            out.append("| %s | %d | %s | %.1f | %s | %d x %d |" % (
                r["app"], r["n"], rank, r["us"], "%.2f" % r["ratio"] if "ratio" in r else "",
                r["runs"], r["iters"]))
    return "\n".join(out) + "\n"


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["app", "n", "role", "rank", "us_per_iter", "ratio", "runs", "iters", "refused_above"])
        for r in rows:
            w.writerow([r["app"], r["n"], r["role"], r["rank"], r.get("us", ""), r.get("ratio", ""),
                        r.get("runs", ""), r.get("iters", ""), r.get("refused", "")])


def plot(a, rows):
    """The ratio to N = 1 against N (both logarithmic), one line per program and rank, and the
    bar: 1.5."""
    if not shutil.which("gnuplot"):
        print("fake-ranks: gnuplot not found (apt-get install gnuplot-nox): no plot", file=sys.stderr)
        return None
    series = []
    for app in a.apps:
        for role in ("first", "middle"):
            pts = [(r["n"], r["ratio"]) for r in rows if r["app"] == app and r["role"] == role and "ratio" in r]
            if role == "middle":
                pts = [(1, 1.0)] + pts  # N = 1 has no middle rank: its rank 0 is the base
            if len(pts) < 2:
                continue
            dat = os.path.join(a.out, "plot-%s-%s.dat" % (app, role))
            with open(dat, "w") as f:
                f.writelines("%d %g\n" % p for p in pts)
            series.append((dat, "%s, %s" % (app, "rank 0" if role == "first" else "middle rank")))
    png = os.path.join(a.out, "fake-ranks.png")
    gp = os.path.join(a.out, "fake-ranks.gp")
    top = max([r["ratio"] for r in rows if "ratio" in r] + [2.0])
    with open(gp, "w") as f:
        f.write("set terminal pngcairo size 800,560 font 'sans,10'\n")
        f.write("set output '%s'\n" % png)
        f.write("set title \"One rank's host CPU per iteration against the job's ranks (fake ranks, weak scaling)\"\n")
        f.write("set logscale x 2; set logscale y 10; set grid\n")
        f.write("set xlabel 'ranks N (TSR\\_FAKE\\_NRANKS)'; set ylabel 'time per iteration / time at N = 1'\n")
        f.write("set xrange [0.8:%d]; set yrange [0.5:%g]\n" % (max(a.ranks) * 1.25, top * 2))
        f.write("set key top left\n")
        plots = ["'%s' using 1:2 with linespoints lw 2 title '%s'" % s for s in series]
        plots.append("1.5 with lines lc rgb 'black' dt 2 title 'the bar: 1.5'")
        f.write("plot " + ", \\\n     ".join(plots) + "\n")
    subprocess.run(["gnuplot", gp], check=True)
    for dat, _ in series:
        os.remove(dat)
    return png


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--builddir", default=".")
    p.add_argument("--out", default="bench-fake-ranks", help="directory for the results")
    p.add_argument("--ranks", default="1,4,16,64,256,1024", help="N values, comma-separated")
    p.add_argument("--apps", default="stencil,cg")
    p.add_argument("--reps", type=int, default=5, help="timed runs per rank (median)")
    p.add_argument("--min-time", type=float, default=0.2, help="host CPU seconds per timed run")
    p.add_argument("--ncpu", type=int, default=1, help="CPU workers (they run no variant)")
    p.add_argument("--timeout", type=int, default=900, help="seconds per run")
    a = p.parse_args()
    a.ranks = [int(x) for x in a.ranks.split(",")]
    a.apps = a.apps.split(",")
    if a.ranks[0] != 1:
        sys.exit("fake-ranks: --ranks must start with 1 (the base of the ratios)")
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)

    rows = measure(a)
    md = table(rows)
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write(md)
    write_csv(rows, os.path.join(a.out, "results.csv"))
    png = plot(a, rows)
    print()
    print(md)
    print("fake-ranks: %s/results.md, results.csv%s" % (a.out, ", " + os.path.basename(png) if png else ""))


if __name__ == "__main__":
    main()
