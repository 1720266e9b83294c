#!/usr/bin/env python3
"""mpi-scaling: the stencil on 1, 2, 4 ranks: weak scaling, and the memory each rank really uses.

weak:   the problem per rank is fixed (nx x ny_per_rank x nz, two tiles along j per rank); the
        grid grows along j with the ranks. Prints ms per iteration (the stencil's own median of
        --reps timed runs), the efficiency t(first rank count) / t(N ranks), and per iteration Tessera's
        bytes and sends (TSR_STATS) from two iteration counts, so setup cancels.
memory: one large grid (fixed) on 1, 2, 4 ranks; each rank's peak RSS (VmHWM, TSR_STATS) against
        what it owns and reads (the boxes of its tiles grown by the halo, both fields), plus what the
        stencil's end adds on every rank (the result field gathered whole by tsr_map, and the
        program's own copy of it), less the RSS of the same ranks running a tiny grid (libraries,
        StarPU, MPI). A ratio near 1 means the iterations touched only the rank's share.
Several ranks share this machine's cores: on 2 cores, 4 ranks compete, so the weak-scaling times
measure the machine as much as Tessera. Standard library only; `--help` for the options.
"""
import argparse
import os
import re
import subprocess
import sys

HALO = 2
REAL_BYTES = {"f64": 8, "f32": 4}
NFIELDS = 2
TSR_SENT = re.compile(r"^tessera: rank (\d+) sent (\d+) bytes to rank (\d+)$")
TSR_SENDS = re.compile(r"^tessera: rank (\d+): (\d+) sends, (\d+) receives$")
VMHWM = re.compile(r"^tessera: rank (\d+) peak RSS \(VmHWM\) (\d+) kB$")
MS_ITER = re.compile(r"^tessera:\s+([0-9.]+) ms/iter")


def tile_range(lo, hi, n, i):
    """Tessera's split of [lo, hi] into n tiles (runtime/ispace.c, tsr__tile_range)."""
    q, rem = divmod(hi - lo + 1, n)
    tlo = lo + i * q + min(i, rem)
    return tlo, tlo + q - 1 + (1 if i < rem else 0)


def owned_and_read_bytes(nx, ny, nz, ty, nranks, rank, real):
    """Bytes of both fields in the union of the rank's tiles grown by the halo (tiles along j,
    colors in blocks per rank): what the rank owns and reads, the least it must hold."""
    rows = set()
    for tj in range(ty):
        if tj * nranks // ty != rank:
            continue
        jlo, jhi = tile_range(HALO, HALO + ny - 1, ty, tj)
        rows.update(range(max(0, jlo - HALO), min(ny + 2 * HALO - 1, jhi + HALO) + 1))
    return len(rows) * (nx + 2 * HALO) * nz * real * NFIELDS


def run(a, nranks, nx, ny, nz, ty, iters, reps, log):
    cmd = [a.mpirun, "-np", str(nranks), "--oversubscribe", os.path.join(a.builddir, "apps/stencil/stencil"),
           "-nx", str(nx), "-ny", str(ny), "-nz", str(nz), "-tx", "1", "-ty", str(ty), "-iter", str(iters),
           "-precision", a.precision, "--ncpu", str(a.ncpu), "--reps", str(reps)]
    env = dict(os.environ, TSR_STATS="1", STARPU_SILENT="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                       timeout=a.timeout)
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout)
    if p.returncode != 0:
        sys.exit("mpi-scaling: %s failed (exit %d), see %s" % (" ".join(cmd), p.returncode, log))
    r = {"bytes": 0, "sends": 0, "rss": {}, "ms": None}
    for line in p.stdout.splitlines():
        m = TSR_SENT.match(line)
        if m:
            r["bytes"] += int(m.group(2))
        m = TSR_SENDS.match(line)
        if m:
            r["sends"] += int(m.group(2))
        m = VMHWM.match(line)
        if m:
            r["rss"][int(m.group(1))] = int(m.group(2)) * 1024
        m = MS_ITER.match(line)
        if m and r["ms"] is None:
            r["ms"] = float(m.group(1))
    if not r["rss"]:
        sys.exit("mpi-scaling: no 'peak RSS' line in %s (was Tessera built with MPI?)" % log)
    return r


def weak(a, ranks):
    i1, i2 = a.iters
    print("# weak scaling: %d x %d x %d %s points per rank (2 tiles along j per rank), %d CPU worker(s) per rank"
          % (a.nx, a.ny_per_rank, a.nz, a.precision, a.ncpu))
    print("# ms/iter: median of %d timed runs of %d iterations; efficiency = t(%d rank(s)) / t(N ranks); bytes and"
          " sends per iteration from %d and %d iterations" % (a.reps, i2, ranks[0], i1, i2))
    print("%5s %12s %10s %10s %14s %12s" % ("ranks", "grid ny", "ms/iter", "efficiency", "bytes/iter", "sends/iter"))
    t1 = None
    for n in ranks:
        ny = a.ny_per_rank * n
        short = run(a, n, a.nx, ny, a.nz, 2 * n, i1, 1, os.path.join(a.out, "weak-np%d-iter%d.log" % (n, i1)))
        long_ = run(a, n, a.nx, ny, a.nz, 2 * n, i2, 1, os.path.join(a.out, "weak-np%d-iter%d.log" % (n, i2)))
        timed = run(a, n, a.nx, ny, a.nz, 2 * n, i2, a.reps, os.path.join(a.out, "weak-np%d-timed.log" % n))
        t1 = t1 or timed["ms"]
        di = float(i2 - i1)
        print("%5d %12d %10.3f %10.2f %14.0f %12.1f" % (n, ny, timed["ms"], t1 / timed["ms"],
                                                       (long_["bytes"] - short["bytes"]) / di,
                                                       (long_["sends"] - short["sends"]) / di))
        sys.stdout.flush()


def memory(a, ranks):
    real = REAL_BYTES[a.precision]
    whole = (a.mem_nx + 2 * HALO) * (a.mem_ny + 2 * HALO) * a.mem_nz * real * NFIELDS
    print("# memory: %d x %d x %d %s (both fields, halo included: %.1f MB), 2 tiles along j per rank, %d iterations"
          % (a.mem_nx, a.mem_ny, a.mem_nz, a.precision, whole / 1e6, a.mem_iters))
    field = whole // NFIELDS
    print("# rss = peak RSS (VmHWM); base = the same rank's peak RSS with a 16 x 16 x 1 grid (libraries, StarPU,"
          " MPI); share = both fields of the rank's tiles grown by the halo (what the iterations touch);"
          " end = what the stencil's end adds on every rank: tsr_map of the result field gathers it whole"
          " (%.1f MB) and the program copies it into an array of its own (%.1f MB)" % (field / 1e6, field / 1e6))
    print("%5s %5s %10s %10s %12s %10s %10s %16s" % ("ranks", "rank", "rss MB", "base MB", "rss-base MB", "share MB",
                                                    "end MB", "(rss-base)/(s+e)"))
    for n in ranks:
        big = run(a, n, a.mem_nx, a.mem_ny, a.mem_nz, 2 * n, a.mem_iters, 1,
                  os.path.join(a.out, "mem-np%d.log" % n))
        tiny = run(a, n, 16, 16, 1, 2 * n, 1, 1, os.path.join(a.out, "mem-np%d-tiny.log" % n))
        for r in sorted(big["rss"]):
            share = owned_and_read_bytes(a.mem_nx, a.mem_ny, a.mem_nz, 2 * n, n, r, real)
            # the gathered result field overlaps the rank's share of that field: count it once
            end = field + field - share // NFIELDS
            extra = big["rss"][r] - tiny["rss"].get(r, 0)
            print("%5d %5d %10.1f %10.1f %12.1f %10.1f %10.1f %16.2f" % (
                n, r, big["rss"][r] / 1e6, tiny["rss"].get(r, 0) / 1e6, extra / 1e6, share / 1e6, end / 1e6,
                extra / (share + end)))
        sys.stdout.flush()


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    default_build = os.path.normpath(os.path.join(here, "../.."))
    ap.add_argument("--builddir", default=default_build if os.path.exists(
        os.path.join(default_build, "apps/stencil/stencil")) else ".", help="build tree holding apps/stencil")
    ap.add_argument("--ranks", default="1,2,4", help="rank counts (default 1,2,4)")
    ap.add_argument("--what", default="weak,memory", help="weak, memory or both (default)")
    ap.add_argument("--nx", type=int, default=256, help="weak: points in i (default 256)")
    ap.add_argument("--ny-per-rank", type=int, default=128, help="weak: points in j per rank (default 128)")
    ap.add_argument("--nz", type=int, default=16, help="weak: planes (default 16)")
    ap.add_argument("--iters", default="4,20", help="weak: two iteration counts (default 4,20)")
    ap.add_argument("--reps", type=int, default=3, help="weak: timed runs, median (default 3)")
    ap.add_argument("--mem-nx", type=int, default=512)
    ap.add_argument("--mem-ny", type=int, default=512)
    ap.add_argument("--mem-nz", type=int, default=32)
    ap.add_argument("--mem-iters", type=int, default=2)
    ap.add_argument("--precision", default="f64", choices=sorted(REAL_BYTES))
    ap.add_argument("--ncpu", type=int, default=1, help="CPU workers per rank (default 1)")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per run (default 600)")
    ap.add_argument("--out", default="bench-mpi-scaling", help="folder for the logs")
    a = ap.parse_args()
    a.iters = tuple(int(x) for x in a.iters.split(","))
    if len(a.iters) != 2 or a.iters[1] <= a.iters[0]:
        sys.exit("mpi-scaling: --iters needs two counts, the second larger")
    return a


def main():
    a = parse_args()
    os.makedirs(a.out, exist_ok=True)
    ranks = [int(x) for x in a.ranks.split(",")]
    what = a.what.split(",")
    if "weak" in what:
        weak(a, ranks)
    if "memory" in what:
        memory(a, ranks)


if __name__ == "__main__":
    main()
