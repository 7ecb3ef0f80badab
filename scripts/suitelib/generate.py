"""What `sync` writes into the sources (and what `check` compares against): the common blocks
copied from common/NAME.cuh, and each starter regenerated from its lesson with the starter's own
exercise bodies kept."""

import re
from pathlib import Path

from . import read_text
from .model import CLOSE_RE, OPEN_RE, lesson, parse_regions, programs

SOLUTION_TO_EXERCISE = [(re.compile(r"^(\s*)// solution: "), r"\1// exercise: "),
                        (re.compile(r"^(\s*)// end solution\b"), r"\1// end exercise")]


def canonical_block(root, name):
    path = Path(root) / "common" / (name + ".cuh")
    return read_text(path, "common block") if path.is_file() else None


def with_common_blocks(root, rel, text):
    """(text with every `// common: NAME` region's body replaced by common/NAME.cuh, errors)."""
    regions, errors = parse_regions(rel, text)
    if errors:
        return text, errors
    lines = text.splitlines(keepends=True)
    for region in sorted((r for r in regions if r.kind == "common"), key=lambda r: -r.open_line):
        canon = canonical_block(root, region.name)
        if canon is None:
            errors.append(f"{rel}:{region.open_line}: unknown common block '{region.name}' (no common/{region.name}.cuh)")
            continue
        if canon and not canon.endswith("\n"):
            canon += "\n"
        lines[region.open_line:region.close_line - 1] = canon.splitlines(keepends=True)
    return "".join(lines), errors


def starter_from_lesson(lesson_rel, lesson_text, starter_rel, starter_text):
    """(the starter as the lesson with each solution region replaced by the starter's exercise body
    of the same name, errors)."""
    l_regions, errors = parse_regions(lesson_rel, lesson_text)
    s_regions, s_errors = parse_regions(starter_rel, starter_text)
    if errors or s_errors:
        return starter_text, errors + s_errors
    bodies = {r.name: r.body for r in s_regions if r.kind == "exercise"}
    l_names = [r.name for r in l_regions if r.kind == "solution"]
    s_names = [r.name for r in s_regions if r.kind == "exercise"]
    if l_names != s_names:
        return starter_text, [f"{starter_rel}:1: exercise regions {s_names} do not match the lesson's "
                              f"solution regions {l_names} (same names, same order); fix the names by hand"]
    lines = lesson_text.splitlines(keepends=True)
    for region in sorted((r for r in l_regions if r.kind == "solution"), key=lambda r: -r.open_line):
        lines[region.open_line:region.close_line - 1] = bodies[region.name].splitlines(keepends=True)
    for i, line in enumerate(lines):
        if OPEN_RE.match(line.rstrip("\n")) or CLOSE_RE.match(line.rstrip("\n")):
            for pattern, repl in SOLUTION_TO_EXERCISE:
                line = pattern.sub(repl, line)
            lines[i] = line
    return "".join(lines), []


def synced_sources(root):
    """({path: new text} for every lesson and starter that sync would change, errors)."""
    changes, errors, lesson_texts = {}, [], {}
    for prog in programs(root):
        if prog.is_starter:
            continue
        text = prog.text
        new, errs = with_common_blocks(root, prog.rel, text)
        errors += errs
        lesson_texts[prog.name] = new
        if new != text:
            changes[prog.path] = new
    for prog in programs(root):
        if not prog.is_starter:
            continue
        text = prog.text
        if prog.name in lesson_texts:
            les = lesson(root, prog.name)
            new, errs = starter_from_lesson(les.rel, lesson_texts[prog.name], prog.rel, text)
        else:
            new, errs = with_common_blocks(root, prog.rel, text)
        errors += errs
        if new != text and not errs:
            changes[prog.path] = new
    return changes, errors
