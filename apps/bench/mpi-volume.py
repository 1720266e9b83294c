#!/usr/bin/env python3
"""mpi-volume: bytes the stencil sends per iteration on several ranks, against the minimum.

Runs apps/stencil/stencil under mpirun on each rank count and tiling twice (two iteration counts),
with TSR_STATS=1 (Tessera's count: "tessera: rank R sent B bytes to rank K") and
STARPU_COMM_STATS=1 (StarPU-MPI's own count, the cross-check). The difference between the two runs
divided by the difference of iterations is the volume per iteration: setup, the initial border and
the final halo update cancel. The minimum is what a rank cannot avoid receiving: the interior points
(the periodic images resolved to the point they copy) that the diffusion of its tiles reads and
that another rank owns, per sending rank. Ratio = measured / minimum (goal 1.0).
Standard library only; `--help` for the options.
"""
import argparse
import os
import re
import subprocess
import sys

HALO = 2          # the stencil's halo width (apps/stencil: SH)
REAL_BYTES = {"f64": 8, "f32": 4}


def tile_range(lo, hi, n, i):
    """Tessera's split of [lo, hi] into n tiles (runtime/ispace.c, tsr__tile_range)."""
    length = hi - lo + 1
    q, rem = divmod(length, n)
    tlo = lo + i * q + min(i, rem)
    thi = tlo + q - 1 + (1 if i < rem else 0)
    return tlo, thi


def color_rank(c, ncolors, nranks):
    """Default owner of color c: blocks of colors per rank (runtime/mapper.c, tsr__color_rank)."""
    return c * nranks // ncolors


def minimum_bytes(nx, ny, nz, tx, ty, nranks, real, distinct_sources=True):
    """Minimum bytes per iteration from each rank to each other: {(src, dst): bytes}.

    distinct_sources: count each interior point once (a halo point that is the image of a point the
    rank receives anyway costs nothing: the rank could copy it itself); otherwise count the points
    of the read boxes as the program names them (a corner of the border is a point of its own).

    Tiles are colors (ti, tj) with ti fastest; the diffusion of a tile reads the tile grown by HALO
    points in i and j (clipped to the padded grid); a halo point holds the periodic image of an
    interior point. A rank needs every interior point its tiles read and that it does not own."""
    owner = {}
    tiles = []
    for tj in range(ty):
        jlo, jhi = tile_range(HALO, HALO + ny - 1, ty, tj)
        for ti in range(tx):
            ilo, ihi = tile_range(HALO, HALO + nx - 1, tx, ti)
            rank = color_rank(ti + tx * tj, tx * ty, nranks)
            tiles.append((ilo, ihi, jlo, jhi, rank))
            for j in range(jlo, jhi + 1):
                for i in range(ilo, ihi + 1):
                    owner[(i, j)] = rank
    need = {}
    for ilo, ihi, jlo, jhi, rank in tiles:
        for j in range(max(0, jlo - HALO), min(ny + 2 * HALO - 1, jhi + HALO) + 1):
            for i in range(max(0, ilo - HALO), min(nx + 2 * HALO - 1, ihi + HALO) + 1):
                src = (HALO + (i - HALO) % nx, HALO + (j - HALO) % ny)
                if owner[src] != rank:
                    need.setdefault((owner[src], rank), set()).add(src if distinct_sources else (i, j))
    return {pair: len(points) * nz * real for pair, points in need.items()}


TSR_SENT = re.compile(r"^tessera: rank (\d+) sent (\d+) bytes to rank (\d+)$")
STARPU_SENT = re.compile(r"^\[starpu_comm_stats\]\[(\d+):(\d+)\]\s+([0-9.]+) B")
TSR_SENDS = re.compile(r"^tessera: rank (\d+): (\d+) sends, (\d+) receives$")
VMHWM = re.compile(r"^tessera: rank (\d+) peak RSS \(VmHWM\) (\d+) kB$")


def run_stencil(a, nranks, tx, ty, iters, log):
    """One run; returns ({(src, dst): tessera bytes}, {(src, dst): StarPU-MPI bytes}, {rank: kB})."""
    cmd = [a.mpirun, "-np", str(nranks), "--oversubscribe",
           os.path.join(a.builddir, "apps/stencil/stencil"),
           "-nx", str(a.nx), "-ny", str(a.ny), "-nz", str(a.nz), "-tx", str(tx), "-ty", str(ty),
           "-iter", str(iters), "-precision", a.precision, "--ncpu", str(a.ncpu)]
    env = dict(os.environ, TSR_STATS="1", STARPU_COMM_STATS="1", STARPU_SILENT="1",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=a.timeout)
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n" + p.stdout)
    if p.returncode != 0:
        sys.exit("mpi-volume: %s failed (exit %d), see %s" % (" ".join(cmd), p.returncode, log))
    tsr, spu, rss = {}, {}, {}
    for line in p.stdout.splitlines():
        m = TSR_SENT.match(line)
        if m:
            tsr[(int(m.group(1)), int(m.group(3)))] = int(m.group(2))
        m = STARPU_SENT.match(line)
        if m:
            spu[(int(m.group(1)), int(m.group(2)))] = int(float(m.group(3)))
        m = VMHWM.match(line)
        if m:
            rss[int(m.group(1))] = int(m.group(2))
        m = TSR_SENDS.match(line)
        if m:
            tsr[("sends", int(m.group(1)))] = int(m.group(2))
    if nranks > 1 and not tsr:
        sys.exit("mpi-volume: no 'tessera: rank R sent' line in %s (was Tessera built with MPI?)" % log)
    return tsr, spu, rss


def peers(tsr, rank):
    """How many ranks `rank` sent values to."""
    return len([p for p in tsr if p[0] == rank and tsr[p]])


def record_bytes(tsr, spu, sends):
    """The bytes StarPU-MPI counts per message beyond Tessera's count of the values: each message
    also holds the sender's poison record (runtime/xfer.c), the same size for every message of a
    run whose messages are all of one kind (a stencil sends transfer views only). None unless every
    rank that sends has the same whole number of bytes per message; 0 with no message."""
    per_rank = set()
    for rank, n in sends.items():
        if not n:
            continue
        extra = sum(spu.get(p, 0) - tsr.get(p, 0) for p in set(spu) | set(tsr) if p[0] == rank)
        per_rank.add(extra / n)
    if not per_rank:
        return 0
    if len(per_rank) > 1:
        return None
    r = per_rank.pop()
    return r if r >= 0 and r == int(r) else None


def per_iteration(first, second, di):
    pairs = set(first) | set(second)
    return {pair: (second.get(pair, 0) - first.get(pair, 0)) / di for pair in pairs}


def self_test():
    """minimum_bytes on cases counted by hand; returns the failures."""
    def per_pair(nx, ny, nz, tx, ty, nranks, distinct=True):
        return minimum_bytes(nx, ny, nz, tx, ty, nranks, 8, distinct)
    cases = [
        ("one rank needs nothing", per_pair(64, 64, 4, 1, 4, 1), {}),
        # 2 rows on each side, 64 points wide, 4 planes, from the one other rank
        ("2 ranks, 1 x 4", per_pair(64, 64, 4, 1, 4, 2), {(0, 1): 8192, (1, 0): 8192}),
        # the same rows with their 2 + 2 border columns
        ("2 ranks, 1 x 4, halo points", per_pair(64, 64, 4, 1, 4, 2, False), {(0, 1): 8704, (1, 0): 8704}),
        ("2 ranks, 2 x 2", per_pair(64, 64, 4, 2, 2, 2), {(0, 1): 8192, (1, 0): 8192}),
        # 2 x 2 tiles on 4 ranks: 2 columns (or rows) x 32 on both sides from the i (j) neighbour,
        # the 4 corners of 2 x 2 points from the diagonal one
        ("4 ranks, 2 x 2", per_pair(64, 64, 1, 2, 2, 4),
         {(a, b): (128 if a ^ b == 3 else 1024) for a in range(4) for b in range(4) if a != b}),
        # uneven tiles: 10 rows in 3 tiles are 4, 3, 3 rows; tiles 0, 1 on rank 0 (rows 0-6), tile 2
        # on rank 1 (rows 7-9). Rank 1 reads rows 5, 6 and (periodic) 0, 1; rank 0 reads rows 7, 8
        # and (periodic) 8, 9: 3 distinct rows of 8 points
        ("2 ranks, 1 x 3, uneven", per_pair(8, 10, 1, 1, 3, 2), {(0, 1): 4 * 8 * 8, (1, 0): 3 * 8 * 8}),
    ]
    failed = []
    for name, got, want in cases:
        if got != want:
            failed.append("%s: got %s, want %s" % (name, got, want))
    return failed


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    default_build = os.path.normpath(os.path.join(here, "../.."))
    ap.add_argument("--builddir", default=default_build if os.path.exists(
        os.path.join(default_build, "apps/stencil/stencil")) else ".", help="build tree holding apps/stencil")
    ap.add_argument("--ranks", default="2,4", help="rank counts (default 2,4)")
    ap.add_argument("--tilings", default="1x4,2x2,1x8",
                    help="tx x ty tilings, comma-separated (default 1x4,2x2,1x8); a tiling with fewer "
                         "tiles than ranks is skipped")
    ap.add_argument("--nx", type=int, default=128)
    ap.add_argument("--ny", type=int, default=128)
    ap.add_argument("--nz", type=int, default=8)
    ap.add_argument("--precision", default="f64", choices=sorted(REAL_BYTES))
    ap.add_argument("--iters", default="4,12", help="the two iteration counts (default 4,12)")
    ap.add_argument("--ncpu", type=int, default=1, help="CPU workers per rank (default 1)")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run (default 300)")
    ap.add_argument("--out", default="bench-mpi-volume", help="folder for the logs")
    ap.add_argument("--pairs", action="store_true", help="also print every (sender, receiver) pair")
    ap.add_argument("--expect-min-halo", action="store_true",
                    help="exit 1 unless every pair moved exactly its halo points and StarPU-MPI's count"
                         " agrees (the values, and the same poison record per message)")
    ap.add_argument("--self-test", action="store_true", help="check the minimum on cases counted by hand, run nothing")
    return ap.parse_args()


def main():
    a = parse_args()
    if a.self_test:
        failed = self_test()
        for f in failed:
            print("mpi-volume: self-test: " + f)
        sys.exit(1 if failed else 0)
    os.makedirs(a.out, exist_ok=True)
    mismatches = []
    i1, i2 = (int(x) for x in a.iters.split(","))
    if i2 <= i1:
        sys.exit("mpi-volume: --iters needs two counts, the second larger")
    real = REAL_BYTES[a.precision]
    print("# mpi-volume: stencil %d x %d x %d %s, halo %d, iterations %d and %d, %d CPU worker(s) per rank"
          % (a.nx, a.ny, a.nz, a.precision, HALO, i1, i2, a.ncpu))
    print("# bytes per iteration (all ranks): tessera = TSR_STATS, starpu = STARPU_COMM_STATS,"
          " min = distinct interior points a rank reads and another owns; min-halo = the same counted as"
          " the points of the read boxes (a border corner counts apart from the point it copies); ratio ="
          " tessera / min;"
          " msgs = Tessera's sends per iteration, pairs = (sender, receiver) pairs that exchange data;"
          " StarPU-MPI's count also holds each message's poison record (record = its bytes per message)")
    print("%5s %6s %12s %12s %12s %7s %12s %7s %6s %6s %6s" % ("ranks", "tiles", "tessera", "starpu", "min",
                                                                "ratio", "min-halo", "ratio", "msgs", "pairs",
                                                                "record"))
    worst = 0.0
    for nranks in (int(x) for x in a.ranks.split(",")):
        for tiling in a.tilings.split(","):
            tx, ty = (int(x) for x in tiling.split("x"))
            if tx * ty < nranks:
                continue
            runs = []
            for iters in (i1, i2):
                log = os.path.join(a.out, "np%d-%s-iter%d.log" % (nranks, tiling, iters))
                runs.append(run_stencil(a, nranks, tx, ty, iters, log))
            tsr = per_iteration(runs[0][0], runs[1][0], i2 - i1)
            spu = per_iteration(runs[0][1], runs[1][1], i2 - i1)
            low = minimum_bytes(a.nx, a.ny, a.nz, tx, ty, nranks, real)
            low_halo = minimum_bytes(a.nx, a.ny, a.nz, tx, ty, nranks, real, distinct_sources=False)
            sends = {k[1]: v for k, v in tsr.items() if k[0] == "sends"}
            msgs = sum(sends.values())
            tsr = {k: v for k, v in tsr.items() if k[0] != "sends"}
            record = record_bytes(tsr, spu, sends)
            total_t, total_s, total_m = sum(tsr.values()), sum(spu.values()), sum(low.values())
            total_h = sum(low_halo.values())
            ratio = total_t / total_m if total_m else float("nan")
            ratio_h = total_t / total_h if total_h else float("nan")
            worst = max(worst, ratio)
            if record is None:
                mismatches.append("%d ranks, %s tiles: StarPU-MPI's count is not Tessera's plus the same record"
                                  " per message on every rank: tessera %s, starpu %s, sends %s" % (
                                      nranks, tiling, tsr, spu, sends))
                record = 0
            for pair in set(tsr) | set(spu) | set(low_halo):
                spu_values = spu.get(pair, 0) - record * sends.get(pair[0], 0) / max(1, peers(tsr, pair[0]))
                if not (tsr.get(pair, 0) == spu_values == low_halo.get(pair, 0)):
                    mismatches.append("%d ranks, %s tiles, %d -> %d: tessera %.0f, starpu %.0f (%.0f of values),"
                                      " halo points %d" % (
                                          nranks, tiling, pair[0], pair[1], tsr.get(pair, 0), spu.get(pair, 0),
                                          spu_values, low_halo.get(pair, 0)))
            print("%5d %6s %12.0f %12.0f %12d %7.3f %12d %7.3f %6.1f %6d %6.0f" % (
                nranks, tiling, total_t, total_s, total_m, ratio, total_h, ratio_h, msgs,
                len([p for p in tsr if tsr[p]]), record))
            if a.pairs:
                for pair in sorted(set(tsr) | set(low)):
                    m = low.get(pair, 0)
                    h = low_halo.get(pair, 0)
                    print("      %d -> %d %12.0f %12.0f %12d %7s %12d %7s" % (
                        pair[0], pair[1], tsr.get(pair, 0), spu.get(pair, 0), m,
                        "%.3f" % (tsr.get(pair, 0) / m) if m else "-", h,
                        "%.3f" % (tsr.get(pair, 0) / h) if h else "-"))
            sys.stdout.flush()
    print("# worst ratio %.3f (goal 1.0); logs in %s" % (worst, a.out))
    if a.expect_min_halo and mismatches:
        for m in mismatches:
            print("mpi-volume: not the halo: " + m)
        sys.exit(1)


if __name__ == "__main__":
    main()
