#!/usr/bin/python3
# perf-groups.py: where a task's microseconds go, from `perf record -g --call-graph dwarf` of
# apps/bench/overhead: cpu-clock time per thread, grouped by the Tessera or StarPU step that owns it.
"""usage: perf-groups.py PERF.DATA NTASKS

Reads `perf script` of PERF.DATA (recorded with -e cpu-clock, the default without hardware
counters, so a sample's period is nanoseconds of CPU time) and prints microseconds per task:
the submitting (main) thread's time by owner and kind, then each worker's time by step.

A sample's owner is the outermost starpu_task_create or starpu_task_submit on its stack (so a
malloc called by starpu_task_create belongs to "StarPU: task create", unless starpu_task_submit
made that task; starpu_task_insert owns only its own argument parsing),
else the innermost Tessera step named in OWNERS (a box intersection called by tsr__coh_deps
belongs to "Tessera: dependence analysis"). Its kind is malloc/free when a libc allocator frame lies between
the leaf and the owner, kernel when the leaf is in the kernel (futex wake-ups, page faults),
code otherwise. NTASKS is the number of tasks the recorded run submitted in all (warm-up and
repetitions)."""
import collections
import subprocess
import sys

TESSERA_GROUPS = {
    "Tessera: lookup, resolve, checks": [
        "tsr_run", "tsr_launch", "tsr_index_launch", "tsr__task_lookup", "tsr__handle_get", "check_counts",
        "check_index_args", "check_result_redop", "resolve", "resolve_all", "check_pairs", "check_points",
        "compute_colors", "color_of", "project", "tsr__color_index", "check_writes_distinct", "check_distinct",
        "alloc_folds", "take_partials", "index_launch_free", "make_result", "tsr__folds_submit", "fold_returns",
        "tsr__box_point", "tsr_box_volume", "tsr__region_aliased", "tsr__redux_ordered"],
    "Tessera: dependence analysis (collect_deps, coherence)": [
        "collect_deps", "tsr__coh_deps", "tsr__coh_register", "register_view", "deps_add", "exact_piece",
        "sync_node", "record_writes", "tsr__coh_wrote", "piece_push", "piece_subtract", "collapse",
        "tsr__deps_reset", "pieces_of"],
    "Tessera: task and cl_arg allocation (ctx_new, point_task_new)": ["ctx_new", "point_task_new", "ctx_init",
                                                                      "ctx_size", "task_buffers"],
    "Tessera: task build (buffers, placement)": [
        "tsr__task_new", "count_buffers", "add_buffers", "add_buffer", "share_or_add_buffer", "add_region_buffers",
        "field_buffer", "add_future_buffer", "add_ret_buffer", "place_task", "map_req"],
    "Tessera: dag/obs hooks": ["dag_record", "tsr__obs_task", "tsr__ctx_hold_states", "tsr__ctx_drop_states"],
    "Tessera: mapper": ["decide_maps", "tsr__map_needed", "tsr__map_decide", "tsr__map_apply"],
    "Tessera: submit_point glue": ["submit_points", "submit_point", "submit_task"],
    "Tessera: explicit dependences (order.c)": [
        "tsr__order_submit", "reserve_readers", "prune_readers", "state_deps", "dep_add", "record", "oref_new",
        "oref_free", "unref", "state_of", "state_forget"],
}
STARPU_GROUPS = {
    "StarPU: task create": ["starpu_task_create", "starpu_task_init"],
    "StarPU: task_insert argument parsing": ["starpu_task_insert", "_starpu_task_insert_create",
                                             "starpu_task_build", "_starpu_codelet_pack_args"],
    "StarPU: starpu_task_submit": ["starpu_task_submit"],
    "StarPU: declare dependences": ["starpu_task_declare_deps_array"],
    "StarPU: destroy finished tasks (order.c's reap)": ["reap", "starpu_task_destroy", "starpu_task_finished"],
}
WAIT = {"wait for completion (fence)": ["tsr_fence", "starpu_task_wait_for_all"]}
LOOP = {"benchmark loop": ["run_raw", "run_raw_halo", "run_tessera", "run_tessera_halo", "run_side"]}

OWNERS = {}
for groups in (TESSERA_GROUPS, STARPU_GROUPS, WAIT, LOOP):
    for group, names in groups.items():
        for name in names:
            OWNERS[name] = group
# the loop functions own only what no call below them owns: checked last
LOOP_NAMES = set(LOOP["benchmark loop"])

ALLOC = {"malloc", "free", "calloc", "realloc", "_int_malloc", "_int_free", "_int_realloc", "unlink_chunk.constprop.0",
         "sysmalloc", "malloc_consolidate", "__libc_calloc", "__GI___libc_malloc", "__GI___libc_free",
         "__libc_malloc", "__libc_free", "tcache_get", "tcache_put", "__brk", "__GI___libc_realloc"}

# inside starpu_task_submit (StarPU 1.3's steps; the first that a sample's stack names)
SUBMIT_STEPS = [
    ("job creation", ["_starpu_job_create", "_starpu_get_job_associated_to_task_slow"]),
    ("implicit data dependencies", ["_starpu_detect_implicit_data_deps"]),
    ("dependence enforcement, scheduler push", ["_starpu_submit_job", "_starpu_enforce_deps_and_schedule"]),
]

WORKER_STEPS = [
    ("task body", ["raw_body", "tsr_body", "run_variant"]),
    ("termination: notify successors, destroy", ["_starpu_handle_job_termination"]),
    ("data fetch/release", ["_starpu_fetch_task_input", "_starpu_fetch_task_input_tail", "__starpu_push_task_output"]),
    ("pop a task (scheduler, idle polling)", ["_starpu_get_worker_task"]),
    ("progress, idle hooks", ["__starpu_datawizard_progress", "_starpu_execute_registered_idle_hooks"]),
]


def samples(path):
    """(tid, comm, period_ns, frames leaf first) per sample."""
    out = subprocess.run(["perf", "script", "-i", path, "-F", "comm,tid,period,ip,sym,dso", "--inline"],
                         capture_output=True, text=True, check=True).stdout
    for block in out.split("\n\n"):
        lines = block.strip("\n").split("\n")
        if not lines or not lines[0].strip():
            continue
        head = lines[0].split()
        period = int(head[-1])
        tid = int(head[-2])
        comm = " ".join(head[:-2])
        frames = []
        for line in lines[1:]:
            parts = line.strip().split(None, 1)
            sym = parts[1] if len(parts) > 1 else "[unknown]"
            frames.append((sym.split(" (")[0].split("+0x")[0], "[kernel.kallsyms]" in sym))
        yield tid, comm, period, frames


def starpu_owner(frames):
    """The StarPU step a sample lies in and the index of its outermost frame, or (None, None).
    starpu_task_submit first (it owns the tasks it creates itself), then task create; the
    starpu_task_insert wrapper owns only what neither does (its argument parsing)."""
    for group in ("StarPU: starpu_task_submit", "StarPU: task create", "StarPU: task_insert argument parsing"):
        at = [j for j, (name, _) in enumerate(frames) if name in STARPU_GROUPS[group]]
        if at:
            return group, max(at)
    return None, None


def tessera_owner(frames):
    """The innermost Tessera step a sample lies in and its frame index, or (None, None)."""
    for j, (name, _) in enumerate(frames):
        if name in OWNERS and name not in LOOP_NAMES:
            return OWNERS[name], j
    return None, None


def classify_main(frames):
    """(owner group, kind) of a sample of the submitting thread."""
    owner, i = starpu_owner(frames)
    if owner is None:
        owner, i = tessera_owner(frames)
    if i is None:
        i = len(frames)
    if owner is None and any(name in LOOP_NAMES for name, _ in frames):
        owner = "benchmark loop"
    if owner is None:
        owner = "outside the measured loops (start, setup, teardown)"
    below = frames[:i]
    if any(name in ALLOC for name, _ in below):
        return owner, "malloc/free"
    if frames and frames[0][1]:
        return owner, "kernel"
    return owner, "code"


def classify_steps(steps, frames):
    for step, names in steps:
        if any(name in names for name, _ in frames):
            return step
    return "other"


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    ntasks = int(sys.argv[2])
    main_tid = None
    by_owner = collections.defaultdict(lambda: collections.Counter())
    workers = collections.defaultdict(collections.Counter)
    submit_steps = collections.Counter()
    for tid, comm, period, frames in samples(sys.argv[1]):
        names = {name for name, _ in frames}
        if "main" in names or "_start" in names:
            main_tid = tid
        if comm.startswith("CPU "):
            workers[comm][classify_steps(WORKER_STEPS, frames)] += period
        else:
            owner, kind = classify_main(frames)
            by_owner[owner][kind] += period
            if owner == "StarPU: starpu_task_submit":
                submit_steps[classify_steps(SUBMIT_STEPS, frames)] += period
    us = lambda ns: ns / 1e3 / ntasks
    kinds = ["code", "malloc/free", "kernel"]
    print(f"# submitting thread (tid {main_tid}), us per task over {ntasks} tasks")
    print(f"| {'owner':58} | {'code':>6} | {'malloc/free':>11} | {'kernel':>6} | {'total':>6} |")
    print(f"|{'-' * 60}|{'-' * 8}|{'-' * 13}|{'-' * 8}|{'-' * 8}|")
    order = list(TESSERA_GROUPS) + list(STARPU_GROUPS) + list(WAIT) + list(LOOP)
    rest = sorted(set(by_owner) - set(order))
    total = collections.Counter()
    for owner in order + rest:
        if owner not in by_owner:
            continue
        c = by_owner[owner]
        total.update(c)
        print(f"| {owner:58} | {us(c['code']):6.2f} | {us(c['malloc/free']):11.2f} | {us(c['kernel']):6.2f} | "
              f"{us(sum(c.values())):6.2f} |")
    print(f"| {'all':58} | {us(total['code']):6.2f} | {us(total['malloc/free']):11.2f} | {us(total['kernel']):6.2f} | "
          f"{us(sum(total.values())):6.2f} |")
    tessera = sum(sum(by_owner[o].values()) for o in TESSERA_GROUPS if o in by_owner)
    starpu = sum(sum(by_owner[o].values()) for o in STARPU_GROUPS if o in by_owner)
    print(f"# Tessera's own steps {us(tessera):.2f} us/task, StarPU's submission {us(starpu):.2f} us/task")
    parts = ", ".join(f"{step} {us(ns):.2f}" for step, ns in submit_steps.most_common())
    print(f"# inside starpu_task_submit: {parts}")
    for w in sorted(workers):
        c = workers[w]
        parts = ", ".join(f"{step} {us(ns):.2f}" for step, ns in c.most_common())
        print(f"# worker '{w}': {us(sum(c.values())):.2f} us/task: {parts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
