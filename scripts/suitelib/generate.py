"""What `sync` writes, computed in one place (sync_plan): the common blocks copied from
common/NAME.cuh into every lesson and starter, each starter regenerated from its lesson with the
starter's own exercise bodies kept, and the pages and the link file (docs.expected_pages). `sync`
writes the plan (write_plan); `check` is the same plan in dry run: checks.py diffs each file's text
against it and prints the difference."""

import re
from pathlib import Path

from . import DEFAULT_GPU, read_text
from .docs import expected_pages
from .model import CLOSE_RE, OPEN_RE, parse_regions, programs

SOLUTION_TO_EXERCISE = [(re.compile(r"^(\s*)// solution: "), r"\1// exercise: "),
                        (re.compile(r"^(\s*)// end solution\b"), r"\1// end exercise")]


class Planned:
    """One file sync writes. rel; check: the check that reports it ('common' for lessons, 'starters'
    for starters, 'docs' for pages); old: its text now (None: missing); new: the text sync gives it
    (None: cannot be computed); origins: for each line of new, (file, line) it was copied from;
    errors: 'file:line: message' problems, each tagged with the check that owns it, as (check, message)."""

    def __init__(self, rel, check, old, new, origins=None, errors=()):
        self.rel, self.check, self.old, self.new = rel, check, old, new
        self.origins, self.errors = origins, list(errors)

    @property
    def writable(self):
        return self.new is not None and not self.errors and self.new != self.old


def canonical_block(root, name):
    path = Path(root) / "common" / (name + ".cuh")
    return read_text(path, "common block") if path.is_file() else None


def _with_common(root, rel, text):
    """(text with every `// common: NAME` body replaced by common/NAME.cuh, origins, errors)."""
    lines = text.splitlines(keepends=True)
    origins = [(rel, no) for no in range(1, len(lines) + 1)]
    regions, errors = parse_regions(rel, text)
    if errors:
        return text, origins, [("markers", e) for e in errors]
    problems = []
    for region in sorted((r for r in regions if r.kind == "common"), key=lambda r: -r.open_line):
        canon = canonical_block(root, region.name)
        if canon is None:
            problems.append(("common", f"{rel}:{region.open_line}: unknown common block '{region.name}' "
                                       f"(no common/{region.name}.cuh)"))
            continue
        if canon and not canon.endswith("\n"):
            canon += "\n"
        copy = canon.splitlines(keepends=True)
        lines[region.open_line:region.close_line - 1] = copy
        origins[region.open_line:region.close_line - 1] = [(f"common/{region.name}.cuh", k) for k in range(1, len(copy) + 1)]
    return "".join(lines), origins, problems


def _starter(lesson_rel, lesson_text, lesson_origins, starter_rel, starter_text):
    """(the starter as the lesson with each solution region replaced by the starter's exercise body of
    the same name, origins, errors)."""
    l_regions, errors = parse_regions(lesson_rel, lesson_text)
    s_regions, s_errors = parse_regions(starter_rel, starter_text)
    if errors or s_errors:
        return None, None, [("markers", e) for e in errors + s_errors]
    bodies = {r.name: r.body for r in s_regions if r.kind == "exercise"}
    starts = {r.name: r.open_line + 1 for r in s_regions if r.kind == "exercise"}
    l_names = [r.name for r in l_regions if r.kind == "solution"]
    s_names = [r.name for r in s_regions if r.kind == "exercise"]
    if not l_names:
        return None, None, [("starters", f"{lesson_rel}:1: lesson has no '// solution: NAME' region")]
    if l_names != s_names:
        return None, None, [("starters", f"{starter_rel}:1: exercise regions {s_names} do not match the lesson's "
                                         f"solution regions {l_names} (same names, same order); fix the names by hand")]
    lines, origins = lesson_text.splitlines(keepends=True), list(lesson_origins)
    for region in sorted((r for r in l_regions if r.kind == "solution"), key=lambda r: -r.open_line):
        lines[region.open_line:region.close_line - 1] = bodies[region.name].splitlines(keepends=True)
        count = len(bodies[region.name].splitlines())
        origins[region.open_line:region.close_line - 1] = [(starter_rel, starts[region.name] + k) for k in range(count)]
    for i, line in enumerate(lines):
        if OPEN_RE.match(line.rstrip("\n")) or CLOSE_RE.match(line.rstrip("\n")):
            for pattern, repl in SOLUTION_TO_EXERCISE:
                line = pattern.sub(repl, line)
            lines[i] = line
    return "".join(lines), origins, []


def source_plan(root):
    """The Planned lessons (common copies) and starters (regenerated from the synced lesson)."""
    plan, synced = [], {}
    for prog in (p for p in programs(root) if not p.is_starter):
        text = prog.text
        new, origins, errors = _with_common(root, prog.rel, text)
        synced[prog.name] = (prog.rel, new, origins)
        plan.append(Planned(prog.rel, "common", text, new, origins, errors))
    # The anchors (anchors/*.cu: no lessons, they link a library) carry the common blocks too.
    for path in sorted((Path(root) / "anchors").glob("*.cu")):
        rel, text = path.relative_to(root).as_posix(), read_text(path, "source file")
        new, origins, errors = _with_common(root, rel, text)
        plan.append(Planned(rel, "common", text, new, origins, errors))
    for prog in (p for p in programs(root) if p.is_starter):
        text = prog.text
        common_text, common_origins, errors = _with_common(root, prog.rel, text)
        new, origins = common_text, common_origins
        if prog.name in synced and not errors:
            new, origins, errors = _starter(*synced[prog.name], prog.rel, text)
        plan.append(Planned(prog.rel, "starters", text, new, origins, errors))
    return plan


def page_plan(root, gpu=DEFAULT_GPU, sources=None):
    """The Planned pages and link file (docs.expected_pages), quoting the sources as the source plan
    leaves them (sources: that plan; computed here when not given)."""
    sources = source_plan(root) if sources is None else sources
    texts = {p.rel: p.new for p in sources if p.writable}
    plan = []
    for rel, (new, errors) in expected_pages(root, gpu, texts).items():
        path = Path(root) / rel
        old = read_text(path, "page") if path.exists() else None
        plan.append(Planned(rel, "docs", old, new, None, [("docs", e) for e in errors]))
    return plan


def sync_plan(root, gpu=DEFAULT_GPU):
    """Every file sync writes, with the text it writes: the sources, then the pages quoting the sources'
    new texts (so one pass of sync leaves check green, and check reports what that pass writes)."""
    sources = source_plan(root)
    return sources + page_plan(root, gpu, sources)


def write_plan(root, plan):
    """Write every planned file that has a new text and no problem; return (rels written, problems)."""
    written = []
    for item in plan:
        if item.writable:
            path = Path(root) / item.rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(item.new, encoding="utf-8")
            written.append(item.rel)
    return written, [e for item in plan for _, e in item.errors]


def sync(root, gpu=DEFAULT_GPU):
    """Write the whole plan; return (rels written, problems)."""
    return write_plan(root, sync_plan(root, gpu))
