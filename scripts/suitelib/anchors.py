"""cuBLAS anchors: verify runs the lessons' GEMM CSVs and anchors/cublas_sgemm on the same sizes,
interleaved (lesson, anchor, lesson, anchor, ...) so both see the same clocks, and records each
measured kernel's ratio to cuBLAS (expected/<gpu>/data/anchors.csv, verify.json's `anchors`): the
ratio of the medians (the kernel's, and cuBLAS's over the rounds the kernel ran in), the rounds, and
the spread of the rounds' own ratios (each lesson figure over the cuBLAS rate measured right after
it)."""

import csv
import io
import statistics
import time
from pathlib import Path

from . import SuiteError
from .model import course
from .running import run_binary

ROUNDS = 3  # a run's rounds unless course.json gives it others
GOAL_ROUNDS = 5  # the least rounds of a goal's entry: its spread says how far one round can stray


def lesson_runs(root):
    """(lesson, arguments, how to pick its rows, in how many of the ROUNDS it runs, the arguments its
    rounds after the first add) of every anchor run in scripts/course.json (a run whose own setup
    takes many seconds may run in fewer rounds; later_args lets the later rounds time only the
    steps a goal judges, e.g. gemm_ladder's -from 15, while the first round times every step)."""
    runs = [(c.name, a["args"], a.get("pick", "all"), a.get("rounds", ROUNDS), a.get("later_args", []))
            for c in course(root) for a in c.anchor_runs]
    for lesson, args, pick, rounds, later in runs:
        where = f"scripts/course.json: {lesson}'s anchor run {' '.join(map(str, args)) or '(no arguments)'}"
        if not isinstance(args, list) or not all(isinstance(x, str) for x in args):
            raise SuiteError(f"{where}: args must be a list of strings, got {args!r}")
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise SuiteError(f"{where}: rounds must be a whole number of at least 1, got {rounds!r}")
        if pick not in ("all", "best", "best-per-kernel"):
            raise SuiteError(f"{where}: pick must be all, best or best-per-kernel, got {pick!r}")
        if not isinstance(later, list) or not all(isinstance(x, str) for x in later):
            raise SuiteError(f"{where}: later_args must be a list of strings, got {later!r}")
        if later and pick != "all":
            raise SuiteError(f"{where}: later_args needs pick all (a best row is chosen over rounds that "
                             f"all time every row)")
        if "-iters" in later:
            raise SuiteError(f"{where}: later_args may not give -iters (every round's figure is set against "
                             f"cuBLAS timed with the run's own -iters)")
    return runs


def csv_rows(text):
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(io.StringIO("\n".join(lines))))


def gemm_rows(lesson, text, pick):
    """[(kernel, n, gflops)] of a lesson's CSV output, chosen by pick."""
    rows = []
    for r in csv_rows(text):
        status = r.get("verdict", r.get("status", "PASS"))
        try:
            n, gflops = int(r["n"]), float(r["gflops"])
        except (KeyError, TypeError, ValueError):
            continue
        if status != "PASS" or any(r.get(d) not in (None, str(n)) for d in ("m", "k")):
            continue
        kernel = r.get("kernel") or "point " + "/".join(r.get(c, "?") for c in ("threads", "tk", "co"))
        rows.append((kernel, n, gflops))
    if pick == "best" and rows:
        return [max(rows, key=lambda x: x[2])]
    if pick == "best-per-kernel":
        return [max((x for x in rows if x[0] == k), key=lambda x: x[2]) for k in dict.fromkeys(x[0] for x in rows)]
    return rows


def cublas_gflops(text):
    """{n: GFLOP/s} of cublas_sgemm's CSV rows (one per -n it was given)."""
    rates = {}
    for r in csv_rows(text):
        try:
            rates[int(r["n"])] = float(r["gflops"])
        except (KeyError, TypeError, ValueError):
            continue
    return rates


def same_iters(args):
    """The lesson run's -iters, for the anchor: both sides time as many launches (a large size
    takes fewer, so the anchors phase stays short)."""
    args = list(args)
    return args[args.index("-iters"):args.index("-iters") + 2] if "-iters" in args[:-1] else []


def interleave(root, bin_dir, anchor, progress, runner=run_binary):
    """{(lesson, kernel, n, iters): [gflops...]}, and for the same keys [the round's gflops / the
    cuBLAS rate measured right after it...] and [that cuBLAS rate...], over the interleaved rounds
    (iters: the run's -iters words, so a lesson figure is only ever set against cuBLAS timed with
    as many launches)."""
    lesson_g, round_ratios, best_runs, rank, widest, row_cublas = {}, {}, {}, {}, {}, {}
    full_done = set()  # runs whose first round without later_args has succeeded
    runs = lesson_runs(root)
    for round_no in range(max([ROUNDS] + [r for _, _, _, r, _ in runs])):
        for lesson, run_args, pick, rounds, later in runs:
            binary = Path(bin_dir) / lesson
            if round_no >= rounds or not binary.is_file():
                continue
            run_key = (lesson, tuple(run_args))
            # later_args only once a round of the whole run has succeeded: a failed first round is
            # retried whole, so no step loses its one round to it.
            args = list(run_args) + (list(later) if run_key in full_done else [])
            start = time.monotonic()
            result = runner(binary, args)
            progress(f"anchors: {lesson} {' '.join(args)}: {time.monotonic() - start:.1f} s")
            if result["exit_code"] != 0:
                progress(f"anchors: {lesson} {' '.join(args)} exited {result['exit_code']}; skipped")
                continue
            full_done.add(run_key)
            # "best" and "best-per-kernel" are chosen once, over the rounds' medians (best_of_rounds):
            # a round's own best can be another row where two run within noise of each other.
            rows = gemm_rows(lesson, result["stdout"], "all" if pick.startswith("best") else pick)
            iters = tuple(same_iters(args))
            if pick.startswith("best"):
                best_runs[(lesson, iters)] = pick
            # The row's place in the CSV (the step order), from the round that printed the most rows:
            # a later round that runs only the top steps (later_args) does not move them to the front.
            ranked = len(rows) >= widest.get(run_key, 0)
            widest[run_key] = max(len(rows), widest.get(run_key, 0))
            for place, (kernel, n, g) in enumerate(rows):
                lesson_g.setdefault((lesson, kernel, n, iters), []).append(g)
                if ranked or (lesson, kernel, n, iters) not in rank:
                    rank[(lesson, kernel, n, iters)] = place
            # Every size of the run in one cublas_sgemm process, right after it (a process start costs
            # about 0.6 s on the H200: report_data's eight sizes took eight of them a round).
            sizes = list(dict.fromkeys(n for _, n, _ in rows))
            if not sizes:
                continue
            words = [w for n in sizes for w in ("-n", str(n))] + list(iters)
            start = time.monotonic()
            done = runner(anchor, words)
            rates = cublas_gflops(done["stdout"])
            missing = [str(n) for n in sizes if not rates.get(n)]
            progress(f"anchors: cublas_sgemm {' '.join(words)}: {time.monotonic() - start:.1f} s"
                     + (f"; exited {done['exit_code']}, no rate for n = {', '.join(missing)}" if missing else ""))
            for n in sizes:
                got = rates.get(n)
                if got:
                    for kernel, _, g in (r for r in rows if r[1] == n):
                        round_ratios.setdefault((lesson, kernel, n, iters), []).append(g / got)
                        row_cublas.setdefault((lesson, kernel, n, iters), []).append(got)
    return in_row_order(best_of_rounds(lesson_g, best_runs), rank), round_ratios, row_cublas


def best_of_rounds(lesson_g, best_runs):
    """lesson_g with, for a run that picks "best", only its row of the highest median rate kept, and
    for one that picks "best-per-kernel", each kernel's row (its n) of the highest median rate."""
    best = {}
    for key, values in lesson_g.items():
        lesson, kernel, n, iters = key
        pick = best_runs.get((lesson, iters))
        if pick:
            group = (lesson, iters) if pick == "best" else (lesson, kernel, iters)
            if group not in best or statistics.median(values) > statistics.median(lesson_g[best[group]]):
                best[group] = key
    keep = set(best.values())
    return {k: v for k, v in lesson_g.items() if (k[0], k[3]) not in best_runs or k in keep}


def in_row_order(lesson_g, rank):
    """lesson_g with each (lesson, n, iters) group's kernels in their CSV row order (the step order,
    from the round of their run that printed the most rows), groups as first met: a step missing from
    an early round, or a later round's top steps alone, do not land after the top step, which the
    goal check takes as the group's last entry."""
    groups = {}
    for key in lesson_g:
        groups.setdefault((key[0], key[2], key[3]), []).append(key)
    return {key: lesson_g[key] for keys in groups.values() for key in sorted(keys, key=lambda k: rank.get(k, 0))}


def anchor_entries(lesson_g, round_ratios, row_cublas):
    """One entry a (lesson, kernel, n, iters) that has a cuBLAS rate: the medians' ratio, the rounds
    and their least and greatest ratio (the spread). The cuBLAS median is of the rates measured
    right after the row's own rounds (row_cublas): a step timed in one round only is set against
    that round's cuBLAS, so its ratio is its round's ratio."""
    entries = []
    for key, values in lesson_g.items():
        lesson, kernel, n, iters = key
        own = row_cublas.get(key)
        if not own:
            continue
        g, c, ratios = statistics.median(values), statistics.median(own), round_ratios[key]
        entries.append({"lesson": lesson, "kernel": kernel, "n": n, "gflops": round(g, 1),
                        "cublas_gflops": round(c, 1), "ratio": round(g / c, 3), "rounds": len(ratios),
                        "ratio_min": round(min(ratios), 3), "ratio_max": round(max(ratios), 3)})
    return entries


CSV_COLUMNS = ["lesson", "kernel", "n", "gflops", "cublas_gflops", "ratio", "rounds", "ratio_min", "ratio_max"]


def write_csv(path, entries):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([",".join(CSV_COLUMNS)] + [",".join(str(e.get(c, "")) for c in CSV_COLUMNS)
                                                         for e in entries]) + "\n", encoding="utf-8")


def measure_anchors(root, bin_dir, gpu, progress, runner=run_binary, kept=()):
    """Interleaved lesson and cuBLAS runs -> the record's `anchors` list (empty without the anchor).
    kept: entries of lessons a partial verify did not select, carried over as they were recorded
    (each with the cuBLAS rate of its own session), in course order with the new ones."""
    anchor = Path(bin_dir) / "cublas_sgemm"
    if not anchor.is_file():
        progress("anchors: no cublas_sgemm binary (CUDA::cublas not found or anchors/ absent); none recorded")
        return []
    measured = anchor_entries(*interleave(root, bin_dir, anchor, progress, runner))
    new = {e["lesson"] for e in measured}
    pool = [e for e in kept if e.get("lesson") not in new] + measured
    order = [c.name for c in course(root)]
    entries = sorted(pool, key=lambda e: order.index(e["lesson"]) if e["lesson"] in order else len(order))
    write_csv(Path(root) / "expected" / gpu / "data" / "anchors.csv", entries)
    return entries


def anchor_table(entries):
    rows = ["| lesson | kernel | n | GFLOP/s | cuBLAS GFLOP/s | ratio | rounds: least .. greatest ratio |",
            "|---|---|---|---|---|---|---|"]
    rows += [f"| {e['lesson']} | {e['kernel']} | {e['n']} | {e['gflops']} | {e['cublas_gflops']} | {e['ratio']} | "
             + (f"{e['rounds']}: {e.get('ratio_min')} .. {e.get('ratio_max')}" if e.get("rounds") else "") + " |"
             for e in entries]
    return "\n".join(rows) + "\n"


def anchor_goals(lesson):
    """A lesson's goals from course.json: anchor_goal, one {n, min_ratio} or a list of them."""
    goal = lesson.anchor_goal
    return [] if not goal else list(goal) if isinstance(goal, list) else [goal]


def goal_met(entry, need):
    """'met', 'met within its spread' (the median ratio short of need, the best round's not), or
    None. An entry with no spread of GOAL_ROUNDS rounds or more meets no goal."""
    ratio, best = entry.get("ratio"), entry.get("ratio_max")
    if not isinstance(ratio, (int, float)) or not isinstance(best, (int, float)):
        return None
    if not isinstance(entry.get("rounds"), int) or entry["rounds"] < GOAL_ROUNDS:
        return None
    return "met" if ratio >= need else "met within its spread" if best >= need else None


def anchor_problems(root, record, rel):
    """For each goal of a lesson's anchor_goal (scripts/course.json), where the anchor exists: its top
    step at the goal's size is recorded over at least GOAL_ROUNDS rounds with their spread, and its
    ratio to cuBLAS reaches the goal's least ratio, or the best round's does (met within its spread)."""
    try:
        lesson_runs(root)  # a malformed anchor run fails here, not in the middle of a GPU verify
    except SuiteError as exc:
        return [str(exc)]
    if not (Path(root) / "anchors" / "cublas_sgemm.cu").exists():
        return []
    errors = []
    for c in course(root):
        if not (Path(root) / "lessons" / (c.name + ".cu")).exists():
            continue
        for goal in anchor_goals(c):
            try:
                n, need = int(goal["n"]), float(goal["min_ratio"])
            except (KeyError, TypeError, ValueError):
                errors.append(f"scripts/course.json: {c.name}'s anchor_goal {goal!r} is not {{n, min_ratio}}")
                continue
            top = [e for e in record.get("anchors", []) if e.get("lesson") == c.name and e.get("n") == n]
            if not top:
                errors.append(f"{rel}: no anchors entry for {c.name} at n = {n} (run verify on the GPU)")
                continue
            last = top[-1]
            rounds = last.get("rounds")
            if not isinstance(rounds, int) or rounds < GOAL_ROUNDS or not isinstance(last.get("ratio_max"), (int, float)):
                errors.append(f"{rel}: {c.name}'s top step {last.get('kernel')} at n = {n} was recorded over "
                              f"{rounds or 'unknown'} rounds; its goal needs at least {GOAL_ROUNDS} with their spread "
                              f"(give the run \"rounds\" in scripts/course.json and run verify on the GPU)")
            elif not goal_met(last, need):
                errors.append(f"{rel}: {c.name}'s top step {last.get('kernel')} at n = {n} reaches "
                              f"{last.get('ratio')} of cuBLAS, its best of {rounds} rounds {last['ratio_max']} "
                              f"(need {need})")
    return errors
