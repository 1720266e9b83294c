#!/usr/bin/env python3
"""ranks: does a second rank pay? Tessera's cg and stencil on one process with 2 CPU workers and
on mpirun -np 1, 2 and 4 (1 CPU worker per rank; np 4 oversubscribes a 2-core machine), beside the
plain MPI C versions of the same computations (apps/bench/mpi-cg, mpi-stencil: the limit, what
MPI_Isend/Irecv and MPI_Allreduce cost here) at np 1, 2 and 4.

The runs are interleaved: each round runs every case and configuration once, and the figures are
the medians over the rounds (default 3), so that a slow minute of the machine hits every
configuration alike. Per case it prints ms per iteration (the programs' own: cg's time/iter over
the iterations it submitted, the stencil's ms/iter of its time loop, the plain programs' time
over their iterations, slowest rank), Tessera's speed (iterations per second) relative to its
one-process run and to its np 1 run, the plain MPI version's ms/iter beside it and its own speed
relative to its np 1, as a Markdown table. Then issue 27's bar:
  - np 2 at least 0.7x the iterations per second of one process with 2 workers, for cg 512^2 and
    the stencil;
  - cg 64^2 on np 2 at most 3x the time per iteration of np 1;
  - mpirun -np 4 cg -n 64 -dim 2 -tol 1e-10 --verify (the whole job's wall time) under 60 s, and
    under 120 s beside four busy loops that this script starts and ends (--loaded; they are
    this script's own children, ended by their process ids).
Run it alone on the machine (on a shared machine: inside a lock that keeps other jobs out), from
the build tree. Standard library only; --help for the options.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

TIME_CG = re.compile(r"^time/iter: ([0-9.]+) ms")
TIME_STENCIL = re.compile(r"^tessera:\s+([0-9.]+) ms/iter")
ITERS = re.compile(r"^iterations: (\d+)")

# (name, Tessera program and arguments, plain MPI program and arguments, the Tessera time regex)
CASES = [
    ("cg -n 64 -dim 2 -tol 1e-10",
     ["apps/cg/cg", "-n", "64", "-dim", "2", "-tol", "1e-10"],
     ["apps/bench/mpi-cg", "-n", "64", "-dim", "2", "-tol", "1e-10"], TIME_CG),
    ("cg -n 512 -dim 2 -tol 1e-6",
     ["apps/cg/cg", "-n", "512", "-dim", "2", "-tol", "1e-6"],
     ["apps/bench/mpi-cg", "-n", "512", "-dim", "2", "-tol", "1e-6"], TIME_CG),
    ("stencil -nx 512 -ny 512 -nz 64 -iter 20",
     ["apps/stencil/stencil", "-nx", "512", "-ny", "512", "-nz", "64", "-iter", "20"],
     ["apps/bench/mpi-stencil", "-nx", "512", "-ny", "512", "-nz", "64", "-iter", "20"], TIME_STENCIL),
]
# Tessera's configurations: (label, ranks: 0 = no mpirun, CPU workers per process)
TESSERA = [("one process, 2 workers", 0, 2), ("np 1", 1, 1), ("np 2", 2, 1), ("np 4", 4, 1)]
PLAIN_NP = [1, 2, 4]
BAR_CMD = ["apps/cg/cg", "-n", "64", "-dim", "2", "-tol", "1e-10", "--verify"]


def environment():
    """Quiet StarPU, Open MPI as root; the options choose the workers, not the environment."""
    env = dict(os.environ, STARPU_SILENT="1", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for v in ("TSR_NCPU", "STARPU_NCPU", "TSR_SCHED", "STARPU_SCHED", "TSR_STATS", "TSR_TIMELINE"):
        env.pop(v, None)
    return env


def command(a, np, prog):
    """The program under mpirun -np np, or alone for np 0. StarPU's calibration directory and
    its silence travel to the ranks (-x)."""
    path = [os.path.join(a.builddir, prog[0])] + prog[1:]
    if np == 0:
        return path
    return [a.mpirun, "-np", str(np), "--oversubscribe", "-x", "STARPU_SILENT", "-x", "STARPU_HOME"] + path


def run(a, cmd, log):
    """Run cmd; its output (appended to log) and wall seconds. A failure or a timeout ends the
    benchmark: a time without a correct run measures nothing."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, env=a.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        sys.exit("ranks: %s did not end in %d s" % (" ".join(cmd), a.timeout))
    wall = time.monotonic() - t0
    with open(log, "a") as f:
        f.write("$ %s\n%s(%.2f s)\n" % (" ".join(cmd), p.stdout, wall))
    if p.returncode != 0:
        sys.exit("ranks: %s failed (exit %d), see %s" % (" ".join(cmd), p.returncode, log))
    return p.stdout, wall


def parse(out, regex, cmd, log):
    """(ms per iteration, iterations or None) from a run's output."""
    ms = iters = None
    for line in out.splitlines():
        m = regex.match(line)
        if m and ms is None:
            ms = float(m.group(1))
        m = ITERS.match(line)
        if m and iters is None:
            iters = int(m.group(1))
    if ms is None:
        sys.exit("ranks: no time per iteration in the output of %s (see %s)" % (" ".join(cmd), log))
    return ms, iters


def one_round(a, samples, iters, log):
    """Every case and configuration once."""
    for name, tprog, pprog, regex in CASES:
        for label, np, ncpu in TESSERA:
            cmd = command(a, np, tprog + ["--ncpu", str(ncpu)])
            out, _ = run(a, cmd, log)
            ms, it = parse(out, regex, cmd, log)
            samples.setdefault((name, "tessera", label), []).append(ms)
            iters.setdefault((name, "tessera"), set()).add(it)
        for np in PLAIN_NP:
            cmd = command(a, np, pprog)
            out, _ = run(a, cmd, log)
            ms, it = parse(out, TIME_CG, cmd, log)
            samples.setdefault((name, "plain", "np %d" % np), []).append(ms)
            iters.setdefault((name, "plain"), set()).add(it)


def ratio(num, den):
    return "%.2fx" % (num / den) if den > 0 else "-"


def table(a, med, iters):
    """The Markdown table: one block of rows per case."""
    print("| case | run | Tessera ms/iter | speed vs one process | speed vs np 1 | plain MPI ms/iter "
          "| plain speed vs its np 1 | Tessera time / plain |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, _, _, _ in CASES:
        one = med[(name, "tessera", TESSERA[0][0])]
        np1 = med[(name, "tessera", "np 1")]
        pnp1 = med[(name, "plain", "np 1")]
        its = iters.get((name, "tessera"), {None}) | iters.get((name, "plain"), {None})
        its.discard(None)
        label = name + (" (%s iterations)" % "/".join(str(i) for i in sorted(its)) if its else "")
        for run_label, np, _ in TESSERA:
            t = med[(name, "tessera", run_label)]
            plain = med.get((name, "plain", "np %d" % np))
            cells = [label if run_label == TESSERA[0][0] else "", run_label + (" (oversubscribed)" if np > 2 else ""),
                     "%.3f" % t, ratio(one, t), ratio(np1, t),
                     "%.3f" % plain if plain else "", ratio(pnp1, plain) if plain else "",
                     ratio(t, plain) if plain else ""]
            print("| " + " | ".join(cells) + " |")
    print()
    print("Medians of %d interleaved rounds; speed = iterations per second, so a ratio above 1 is "
          "faster. Several iteration counts in a case's name mean Tessera and the plain version "
          "disagree." % a.rounds)


def bar_speed(med, name, lo):
    t_one = med[(name, "tessera", TESSERA[0][0])]
    t_np2 = med[(name, "tessera", "np 2")]
    got = t_one / t_np2
    return got >= lo, "%s: np 2 runs at %.2fx the iterations/s of one process with 2 workers (bar >= %.1f)" % (
        name, got, lo)


def bar_wall(a, loaded, limit, log):
    """mpirun -np 4 cg 64^2 --verify, its whole wall time; beside four busy loops when loaded."""
    loops = []
    if loaded:
        loops = [subprocess.Popen(["bash", "-c", "while :; do :; done"]) for _ in range(4)]
    try:
        _, wall = run(a, command(a, 4, BAR_CMD), log)
    finally:
        for p in loops:
            p.kill()
            p.wait()
    what = "beside four busy loops" if loaded else "quiet"
    return wall < limit, "mpirun -np 4 %s, %s: %.1f s (bar < %d s)" % (" ".join(BAR_CMD[1:]), what, wall, limit)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--builddir", default=".")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds, medians over them (default 3)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds a run may take (default 300)")
    ap.add_argument("--no-loaded", dest="loaded", action="store_false",
                    help="skip the np 4 run beside four busy loops")
    ap.add_argument("--log", default="bench-ranks.log", help="every run's output (default bench-ranks.log)")
    a = ap.parse_args()
    a.env = environment()
    open(a.log, "w").close()
    samples, iters = {}, {}
    for r in range(a.rounds):
        print("ranks: round %d of %d" % (r + 1, a.rounds), file=sys.stderr)
        one_round(a, samples, iters, a.log)
    med = {k: statistics.median(v) for k, v in samples.items()}
    table(a, med, iters)
    checks = [bar_speed(med, CASES[1][0], 0.7), bar_speed(med, CASES[2][0], 0.7)]
    t1 = med[(CASES[0][0], "tessera", "np 1")]
    t2 = med[(CASES[0][0], "tessera", "np 2")]
    checks.append((t2 <= 3 * t1, "%s: np 2 takes %.2fx the time per iteration of np 1 (bar <= 3)" % (
        CASES[0][0], t2 / t1)))
    checks.append(bar_wall(a, False, 60, a.log))
    if a.loaded:
        checks.append(bar_wall(a, True, 120, a.log))
    print()
    print("Issue 27's bar:")
    for ok, text in checks:
        print("- %s: %s" % ("met" if ok else "NOT met", text))
    print("(every run's output: %s)" % a.log)


if __name__ == "__main__":
    main()
