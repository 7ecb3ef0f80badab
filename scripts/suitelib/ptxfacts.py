"""What the lessons say about the code nvcc makes of a kernel ("32 byte loads, 24 byte permutes and
4 dp4a"), held as counts of PTX instructions in the kernel's body: scripts/course.json gives each
lesson's `ptx_facts` ({kernel: a substring of its mangled name, counts: {instruction: how many},
said_in: the files that say it}); `check --only ptx-facts` compiles the lesson with its Build: line,
with -ptx in place of the program, and compares. The counts are of the kernel's own body (calls to
functions nvcc did not inline are not followed). A toolkit that makes other code fails the check,
so the sentence is changed with the counts, never left behind them."""

import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from . import SuiteError
from .model import course, lesson

# A function's head: `.visible .entry k(`, `.weak .entry k(` (a template under -rdc), `.func f(`.
HEAD = re.compile(r"^\s*(?:\.(?:visible|weak|extern)\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?(\w+)\s*\(", re.M)
COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
LABEL = re.compile(r"^[\w$]+:\s*")
GUARD = re.compile(r"^@!?%?\w+\s+")
WORD = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*")


def entries(ptx):
    """{mangled kernel name: its PTX body} of a PTX module (device functions' bodies left out)."""
    heads = list(HEAD.finditer(ptx))
    return {m.group(2): ptx[m.end():heads[i + 1].start() if i + 1 < len(heads) else len(ptx)]
            for i, m in enumerate(heads) if m.group(1) == "entry"}


def instruction_counts(body):
    """How many times each instruction occurs in a body: every statement (split at ';', '{', '}'),
    past its label and guard, that starts with a lower-case word; directives (.reg ...) do not."""
    counts = Counter()
    for piece in re.split(r"[;{}]", COMMENTS.sub("", body)):
        statement = GUARD.sub("", LABEL.sub("", piece.strip()))
        word = WORD.match(statement)
        if word and not statement.startswith("."):
            counts[word.group(0)] += 1
    return counts


def lesson_ptx(prog):
    """The PTX nvcc makes of a lesson with its Build: line (-ptx in place of the program)."""
    header = prog.header().get("Build") or [(1, "")]
    no = header[0][0]
    argv = prog.build_argv()
    outs = [i for i, a in enumerate(argv) if a == "-o" and i + 1 < len(argv)]
    if len(outs) != 1:
        raise SuiteError(f"{prog.rel}:{no}: the Build: line needs exactly one '-o NAME' to place the PTX")
    at = outs[0]
    argv = argv[:at] + ["-ptx", "-o", prog.name + ".ptx"] + argv[at + 2:]
    with tempfile.TemporaryDirectory(prefix="suite-ptx-") as tmp:
        (Path(tmp) / prog.path.name).write_text(prog.text, encoding="utf-8")
        try:
            done = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SuiteError(f"{prog.rel}:{no}: cannot compile to PTX: {exc}")
        out = Path(tmp) / (prog.name + ".ptx")
        if done.returncode != 0 or not out.is_file():
            raise SuiteError(f"{prog.rel}:{no}: nvcc -ptx fails (exit {done.returncode}): "
                             + (done.stderr.strip().splitlines() or ["no PTX written"])[0])
        return out.read_text(encoding="utf-8")


def fact_problems(name, facts, ptx):
    """Each fact's kernel found once in the PTX, with exactly its counts."""
    kernels, errors = entries(ptx), []
    for fact in facts:
        where = ", ".join(fact.get("said_in", [])) or f"lessons/{name}.cu"
        if not isinstance(fact.get("kernel"), str) or not isinstance(fact.get("counts"), dict):
            errors.append(f"scripts/course.json: {name}: a ptx_facts entry needs a kernel name and counts: {fact}")
            continue
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
