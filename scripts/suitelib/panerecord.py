"""The pane record: which recorded runs a pane can judge (verify's measured Compiler Explorer budget
of each run), the runs a student's panes have passed (exercises/NAME.panes.json, ignored by git,
keyed on the exercise file's source key so that a change to its code forgets them), and the words
of the pane verdict for the runs still to pass and for what only a GPU can judge.
"""

import datetime
import json
import os
import shlex
from pathlib import Path

from . import DEFAULT_GPU, SuiteError, UsageError, read_text, write_file
from . import sanitize
from .judge import lesson_runs, speed_of
from .model import lesson

# Compiler Explorer's budget for one run (DESIGN: ~20 s wall, half a core, a few hundred MiB, 32 KiB
# of output), as verify measures it on one core of the recording host, with headroom for a T4's
# slower host; verify records every run's figures, and a run within all of them is CE-feasible.
BUDGET = {"wall_s_1core": 5.0, "peak_rss_mib": 200.0, "output_bytes": 32768}
RECORD_SUFFIX = ".panes.json"


def load_budget_record(root, gpu=DEFAULT_GPU):
    """verify.json's program entries {program: entry}, {} when there is none or it cannot be read."""
    path = Path(root) / "expected" / gpu / "verify.json"
    try:
        record = json.loads(read_text(path, "record"))
        return {e["program"]: e for e in record.get("programs", []) if isinstance(e, dict) and "program" in e}
    except (SuiteError, json.JSONDecodeError, AttributeError, TypeError, KeyError):
        return {}


def run_budget(entries, run):
    """The budget figures verify recorded for a run (the default run's are the entry's own)."""
    entry = entries.get(run.program.rel, {})
    figures = entry.get("runs_budget", {}).get(run.id)
    if figures is None and run.index == 0 and all(k in entry for k in BUDGET):
        figures = {k: entry[k] for k in BUDGET}
    return figures


def ce_feasible(entries, run):
    """(True | False | None, why): a run fits Compiler Explorer when verify's record of it (measured on
    one core of the recording host) is within every limit of BUDGET; None where nothing is recorded."""
    figures = run_budget(entries, run)
    if not figures:
        return None, "its Compiler Explorer budget is not recorded yet (verify on the GPU records it)"
    over = over_budget(figures)
    if over:
        return False, "needs a real GPU: it does not fit Compiler Explorer's budget (recorded " + ", ".join(over) + ")"
    return True, "fits Compiler Explorer's budget (recorded on one core: " + ", ".join(
        f"{k} {figures[k]}" for k in BUDGET) + ")"


def over_budget(figures):
    """['wall_s_1core 12.0 > 5.0', ...]: the limits of BUDGET a run's recorded figures exceed."""
    return [f"{k} {figures.get(k)} > {limit}" for k, limit in BUDGET.items()
            if not isinstance(figures.get(k), (int, float)) or figures[k] > limit]


def args_option(run):
    """' --args ...' for a command line that picks this run ('' for the default run)."""
    return f" --args {shlex.quote(' '.join(run.args))}" if run.index else ""


# --- the record of passed runs ------------------------------------------------------------------
def record_path(root, name):
    return Path(root) / "exercises" / (name + RECORD_SUFFIX)


def load_passes(root, name, key):
    """({run id: entry}, note or None): the runs recorded as passed for the exercise file whose source
    key is `key`. A record of another key (the file's code changed since) is forgotten, and said."""
    path = record_path(root, name)
    if not path.is_file() or path.is_symlink():
        return {}, None
    try:
        data = json.loads(read_text(path, "pane record"))
        passed, recorded = data["passed"], data["source_key"]
        if not isinstance(passed, dict):
            raise TypeError("passed is not a table")
    except (SuiteError, json.JSONDecodeError, KeyError, TypeError) as exc:
        return {}, f"exercises/{path.name} could not be read ({str(exc)[:80]}): its passes are forgotten"
    if recorded != key and not passed:
        return {}, None  # a record of no passes: nothing is forgotten, nothing to say
    if recorded != key:
        return {}, (f"exercises/{name}.cu changed since the {len(passed)} pass(es) in exercises/{path.name} "
                    f"(source key {str(recorded)[:12]}..., now {key[:12]}...): they are forgotten; paste each run's "
                    f"pane again")
    return passed, None


def save_passes(root, name, key, passed):
    """Write exercises/NAME.panes.json, never through a symbolic link (nor into a linked exercises/)."""
    folder = Path(root) / "exercises"
    if os.path.islink(folder):
        raise UsageError(f"exercises/ is a symbolic link (to {os.readlink(folder)}): the tool writes only inside "
                         f"a real exercises/ folder of this checkout; nothing recorded")
    data = {"about": "passed runs of exercises/" + name + ".cu judged from Compiler Explorer panes; written by "
                     "'scripts/suite.py exercise check --pane', forgotten when the file's code changes",
            "exercise": f"exercises/{name}.cu", "source_key": key, "passed": passed}
    write_file(record_path(root, name), json.dumps(data, indent=1, sort_keys=True) + "\n", "the pane record")


def pass_entry(pane_path):
    return {"pane": str(pane_path),
            "at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


# --- what the pane verdict says of the other runs ----------------------------------------------
def gpu_only(root, name, entries, exercise_text, passed=()):
    """What only a GPU can judge, in words: the runs over Compiler Explorer's budget (unless a pane
    of one passed after all), speed, and the sanitizer checks (sanitize.py)."""
    runs = lesson_runs(root, name)
    found = [f"the run {run.command()} (over Compiler Explorer's budget: recorded "
             + ", ".join(over_budget(run_budget(entries, run))) + ")"
             for run in runs if ce_feasible(entries, run)[0] is False and run.id not in passed]
    speed = speed_of(root, name)
    if speed is not None:
        found.append(f"the speed of '{speed.region}' (timed against the lesson's own kernel)")
    les = lesson(root, name)
    found.append("compute-sanitizer " + sanitize.describe(les, les.text, exercise_text))
    return found


def how_to_pane(name, run):
    """The two lines that produce and judge a run's pane."""
    return [f"    open: scripts/suite.py ce-link exercises/{name}.cu{args_option(run)}  (opens your file on Compiler "
            f"Explorer" + (" with these arguments in the executor)" if run.args else ")"),
            f"    then: scripts/suite.py exercise check {name} --pane FILE{args_option(run)}"]


def status(root, name, passed, exercise_text):
    """The closing lines of a pane verdict: the runs still to pass from a pane (with how), or the one
    line saying every run a pane can judge has passed; and what only a GPU can judge."""
    entries = load_budget_record(root)
    runs = lesson_runs(root, name)
    pane_runs = [run for run in runs if ce_feasible(entries, run)[0] is not False or run.id in passed]
    todo = [run for run in pane_runs if run.id not in passed]
    gpu = gpu_only(root, name, entries, exercise_text, passed)
    gpu_line = "; ".join(gpu) + f" (scripts/suite.py exercise check {name} on a machine with a GPU)"
    if not todo:
        return [f"Every run a pane can judge has passed ({len(pane_runs)} of the {len(runs)} recorded runs); "
                f"only a GPU can judge: {gpu_line}."]
    lines = [f"Still to pass from a pane: {len(todo)} of the {len(pane_runs)} runs a pane can judge "
             f"({len(pane_runs) - len(todo)} passed; one pane per run):"]
    for run in todo:
        lines.append(f"- {run.command()}: {ce_feasible(entries, run)[1]}")
        lines += how_to_pane(name, run)
    return lines + [f"Only a GPU can judge: {gpu_line}."]
