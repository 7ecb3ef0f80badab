"""What the lessons say about the code nvcc makes of a kernel ("32 byte loads, 24 byte permutes and
4 dp4a per k-tile"), held as counts of PTX instructions: scripts/course.json gives each lesson's
`ptx_facts` ({kernel: a substring of its mangled name, counts: {instruction: how many}, said_in:
the files that say it}); `check --only ptx-facts` compiles the lesson with its Build: line, with
-ptx in place of the program, and compares. A toolkit that makes other code fails the check, so
the sentence is changed with the counts, never left behind them."""

import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from . import SuiteError
from .model import course, lesson

ENTRY = re.compile(r"^\.(?:visible\s+)?\.entry\s+(\w+)\s*\(", re.M)
# An instruction: first word of a statement, after an optional '{' (inline asm) and predicate guard.
INSTRUCTION = re.compile(r"^\s*\{?\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)\b", re.M)


def entries(ptx):
    """{mangled kernel name: its PTX body} of a PTX module."""
    heads = list(ENTRY.finditer(ptx))
    return {m.group(1): ptx[m.end():heads[i + 1].start() if i + 1 < len(heads) else len(ptx)]
            for i, m in enumerate(heads)}


def instruction_counts(body):
    return Counter(m.group(1) for m in INSTRUCTION.finditer(body))


def lesson_ptx(prog):
    """The PTX nvcc makes of a lesson with its Build: line (-ptx in place of the program)."""
    argv = prog.build_argv()
    if "-o" not in argv or argv.index("-o") + 1 >= len(argv):
        raise SuiteError(f"{prog.rel}:1: Build: line has no -o: cannot place the PTX")
    at = argv.index("-o")
    argv = argv[:at] + ["-ptx", "-o", prog.name + ".ptx"] + argv[at + 2:]
    with tempfile.TemporaryDirectory(prefix="suite-ptx-") as tmp:
        (Path(tmp) / prog.path.name).write_text(prog.text, encoding="utf-8")
        try:
            done = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SuiteError(f"{prog.rel}:1: cannot compile to PTX: {exc}")
        if done.returncode != 0:
            raise SuiteError(f"{prog.rel}:1: nvcc -ptx fails: " + (done.stderr.strip().splitlines() or [""])[0])
        return (Path(tmp) / (prog.name + ".ptx")).read_text(encoding="utf-8")


def fact_problems(name, facts, ptx):
    """Each fact's kernel found once in the PTX, with exactly its counts."""
    kernels, errors = entries(ptx), []
    for fact in facts:
        where = ", ".join(fact.get("said_in", [])) or f"lessons/{name}.cu"
        found = [k for k in kernels if fact["kernel"] in k]
        if len(found) != 1:
            errors.append(f"{where}: the PTX of lessons/{name}.cu has {len(found)} kernels named like "
                          f"'{fact['kernel']}' (want 1; scripts/course.json ptx_facts)")
            continue
        got = instruction_counts(kernels[found[0]])
        wrong = {op: (n, got.get(op, 0)) for op, n in fact["counts"].items() if got.get(op, 0) != n}
        if wrong:
            said = ", ".join(f"{n} {op} (nvcc now makes {m})" for op, (n, m) in wrong.items())
            errors.append(f"{where}: what these say of {found[0]}'s PTX no longer holds: {said}; change the "
                          f"sentences and scripts/course.json ptx_facts together")
    return errors


def check_ptx_facts(root, compile_fn=lesson_ptx):
    """Every ptx_facts entry of scripts/course.json holds for nvcc's PTX of its lesson."""
    errors = []
    for c in course(root):
        facts = getattr(c, "ptx_facts", [])
        if not facts:
            continue
        try:
            ptx = compile_fn(lesson(root, c.name))
        except SuiteError as exc:
            errors.append(str(exc))
            continue
        errors += fact_problems(c.name, facts, ptx)
    return errors
