#!/usr/bin/python3
"""metg.py: METG(50%) of each system from metg.sh's raw.csv, and the ratios Tessera / StarPU.

Task Bench's definition (scripts/chart_metg.py there, method reimplemented here): for each kernel
size, time per task = elapsed time / tasks x cores, efficiency = achieved FLOP/s / peak FLOP/s; the
METG is the smallest time per task whose efficiency is at least the threshold, interpolated
linearly (in efficiency) towards the next smaller kernel size when that one falls below it.
Task Bench averages the repetitions; we take medians by default (a shared 2-core machine has
outliers), or with --stat best the shortest run of each size, as issue 28's bar reads ("best of 3":
a run that lost no core to another process measures the runtime, not the machine's load).
The peak is --peak FLOP/s, or else the highest median FLOP/s any system reached in the same
run and policy (the largest kernels, where the runtime's overhead is hidden).
"""
import argparse
import collections
import csv
import statistics
import sys


def read_runs(path):
    """Successful runs grouped by (policy, pattern, system, iterations); failures listed apart."""
    runs = collections.defaultdict(list)
    failures = []
    with open(path) as f:
        for row in csv.DictReader(f):
            key = (row['policy'], row['pattern'], row['system'], int(row['iterations']))
            if row['status'] != 'ok':
                failures.append(row)
                continue
            runs[key].append((float(row['elapsed']), int(row['flops']), int(row['tasks'])))
    return runs, failures


def summarise(runs, stat):
    """Per key: the median (or shortest) elapsed seconds, FLOPs and tasks of the run (the same in
    every repetition)."""
    pick = min if stat == 'best' else statistics.median
    out = {}
    for key, values in runs.items():
        flops = {v[1] for v in values}
        tasks = {v[2] for v in values}
        if len(flops) != 1 or len(tasks) != 1:
            sys.exit('metg.py: %s: repetitions disagree on FLOPs or tasks' % (key,))
        out[key] = (pick(v[0] for v in values), flops.pop(), tasks.pop(), len(values))
    return out


def curve(points, cores, peak):
    """Rows (iterations, time per task in us, efficiency, FLOP/s, reps), largest kernel first."""
    rows = []
    for iterations, (elapsed, flops, tasks, reps) in sorted(points.items(), reverse=True):
        time_per_task = elapsed / tasks * cores * 1e6
        rate = flops / elapsed
        rows.append((iterations, time_per_task, rate / peak, rate, reps))
    return rows


def metg(rows, threshold):
    """(METG in us, note): note says why there is no value, or that it is a bound."""
    above = [i for i, r in enumerate(rows) if r[2] >= threshold]
    if not above:
        return None, 'never reaches %d%% of peak' % (threshold * 100)
    best = min(above, key=lambda i: rows[i][1])
    if best + 1 >= len(rows):
        return rows[best][1], 'upper bound: still efficient at the smallest kernel'
    value = rows[best][1]
    nxt = rows[best + 1]
    if nxt[1] < value and nxt[2] < threshold:
        # linear in efficiency between the last efficient point and the next one, as Task Bench does
        e0, t0 = rows[best][2], rows[best][1]
        e1, t1 = nxt[2], nxt[1]
        value = t1 + (threshold - e1) * (t0 - t1) / (e0 - e1)
    return value, ''


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('raw', help="metg.sh's raw.csv")
    ap.add_argument('--cores', type=int, default=2, help='workers per run (default 2)')
    ap.add_argument('--threshold', type=float, default=0.5, help='efficiency threshold (default 0.5)')
    ap.add_argument('--peak', type=float, default=None, help='peak FLOP/s of the machine (default: best seen)')
    ap.add_argument('--baseline', default='starpu', help='system the ratios divide by (default starpu)')
    ap.add_argument('--curves', action='store_true', help='also print every efficiency curve')
    ap.add_argument('--stat', choices=('median', 'best'), default='median',
                    help="each size's repetitions: their median (default) or the shortest run")
    args = ap.parse_args()

    runs, failures = read_runs(args.raw)
    table = summarise(runs, args.stat)
    groups = collections.defaultdict(dict)   # (policy, pattern) -> system -> iterations -> summary
    for (policy, pattern, system, iterations), value in table.items():
        groups[(policy, pattern)].setdefault(system, {})[iterations] = value

    peaks = {}
    for policy in sorted({k[0] for k in groups}):
        best = max(v[1] / v[0] for k, v in table.items() if k[0] == policy)
        peaks[policy] = args.peak or best

    print('METG(%d%%): smallest time per task (us, x %d workers) at >= %d%% of peak FLOP/s; %s'
          % (args.threshold * 100, args.cores, args.threshold * 100,
             'medians' if args.stat == 'median' else 'best run of each size'))
    print()
    print('| policy | pattern | system | METG (us) | / %s | note |' % args.baseline)
    print('| --- | --- | --- | ---: | ---: | --- |')
    for (policy, pattern), systems in sorted(groups.items()):
        values = {s: metg(curve(p, args.cores, peaks[policy]), args.threshold) for s, p in systems.items()}
        base = values.get(args.baseline, (None, ''))[0]
        for system in sorted(systems, key=lambda s: (s == args.baseline, s)):
            value, note = values[system]
            shown = '%.1f' % value if value is not None else '-'
            ratio = '%.2f' % (value / base) if value is not None and base else '-'
            print('| %s | %s | %s | %s | %s | %s |' % (policy, pattern, system, shown, ratio, note))
    print()
    for policy, peak in sorted(peaks.items()):
        print('peak (%s): %.3e FLOP/s%s' % (policy, peak, '' if args.peak else ', the best %s seen' % args.stat))

    if args.curves:
        for (policy, pattern), systems in sorted(groups.items()):
            for system, points in sorted(systems.items()):
                print()
                print('%s %s %s: iterations, us per task, efficiency, FLOP/s, reps' % (policy, pattern, system))
                for r in curve(points, args.cores, peaks[policy]):
                    print('  %8d %10.2f %6.3f %.3e %d' % r)
    if failures:
        print()
        print('%d FAILED runs (left out of the medians):' % len(failures))
        for row in failures:
            print('  %s %s %s iter %s rep %s: %s (%s)' % (row['policy'], row['pattern'], row['system'],
                                                      row['iterations'], row['rep'], row['status'], row['log']))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
