"""The pane record: which recorded runs fit Compiler Explorer (verify's measured budget of each run),
and what the pane verdict says of the runs a pane did not judge.
"""

import json
import shlex
from pathlib import Path

from . import DEFAULT_GPU, SuiteError, read_text
from .judge import lesson_runs


# Compiler Explorer's budget for one run (DESIGN: ~20 s wall, half a core, a few hundred MiB, 32 KiB
# of output), as verify measures it on one core of the recording host, with headroom for a T4's
# slower host; verify records every run's figures, and a run within all of them is CE-feasible.
BUDGET = {"wall_s_1core": 5.0, "peak_rss_mib": 200.0, "output_bytes": 32768}


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
    over = [f"{k} {figures.get(k)} > {limit}" for k, limit in BUDGET.items()
            if not isinstance(figures.get(k), (int, float)) or figures[k] > limit]
    if over:
        return False, "needs a real GPU: it does not fit Compiler Explorer's budget (recorded " + ", ".join(over) + ")"
    return True, "fits Compiler Explorer's budget (recorded on one core: " + ", ".join(
        f"{k} {figures[k]}" for k in BUDGET) + ")"


def unjudged(root, name, done):
    """Lines naming every recorded run other than `done` and how to produce its pane."""
    entries = load_budget_record(root)
    lines = []
    for run in lesson_runs(root, name):
        if run.id == done.id:
            continue
        fits, why = ce_feasible(entries, run)
        args = " ".join(shlex.quote(a) for a in run.args)
        lines.append(f"- {run.command()}: {why}")
        if fits is False:
            lines.append(f"    judge it on a machine with a GPU: scripts/suite.py exercise check {name}")
            continue
        lines.append(f"    open: scripts/suite.py ce-link exercises/{name}.cu --args {shlex.quote(args)}  (a link "
                     f"that opens your file with these arguments in the executor)")
        lines.append(f"    then: scripts/suite.py exercise check {name} --pane FILE --args {shlex.quote(args)}")
    return lines
