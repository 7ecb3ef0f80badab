"""Docs: the pages (lessons/*.md, README.md) and their generated regions (snippets, output
excerpts, commands, the lesson table, Compiler Explorer links, inline figures from records), and the
generated link file docs/compiler-explorer.md. What sync writes is computed here (expected_pages);
generate.sync_plan collects it with the sources, checks.py diffs it, sync writes it. The page rules
that sync cannot fix (a bare measured figure, a solution shown outside a spoiler fold) are
page_findings."""

import re
import textwrap
from pathlib import Path

from . import DEFAULT_GPU, SuiteError, UsageError, read_text
from .celink import ce_link
from .figures import COMMENT_RE, FIG_RE, Records, bare_figures, code_spans, fill_line
from .model import (CLOSE_RE, OPEN_RE, clip_pair, course, find_run, first_difference, parse_header, parse_regions,
                    resolve_source)
from .transcripts import parse_transcript
from .verify import changed_since_record

LINKS_PAGE = "docs/compiler-explorer.md"
DOC_OPEN_RE = re.compile(r"^<!-- (snippet|output|commands|lesson-table|ce-link): ?(.*?) -->\s*$")
DOC_CLOSE_RE = re.compile(r"^<!-- end (snippet|output|commands|lesson-table|ce-link) -->\s*$")


def doc_files(root):
    """The pages with generated regions: lessons/*.md and the top-level README."""
    return [p.relative_to(root).as_posix() for p in sorted((Path(root) / "lessons").glob("*.md"))] + ["README.md"]


def source_text(prog, sources=None):
    """A source's text as sync leaves it: the planned text where sync rewrites it (sources: {rel: text},
    see generate.sync_plan), else the file's. Pages are planned from it, so check and sync agree."""
    return sources[prog.rel] if sources and prog.rel in sources else prog.text


def snippet_text(prog, name, sources=None):
    """One snippet: marker lines (of every kind) stripped, dedented."""
    regions, errors = parse_regions(prog.rel, source_text(prog, sources))
    if errors:
        raise SuiteError(errors[0])
    found = [r for r in regions if r.kind == "snippet" and r.name == name]
    if not found:
        known = ", ".join(r.name for r in regions if r.kind == "snippet") or "none"
        raise UsageError(f"{prog.rel} has no snippet {name!r} (snippets: {known})")
    body = [line for line in found[0].body.splitlines(keepends=True)
            if not (OPEN_RE.match(line.rstrip("\n")) or CLOSE_RE.match(line.rstrip("\n")))]
    return textwrap.dedent("".join(body))


def transcript_excerpt(root, run_id, start, count):
    path = find_run(root, run_id).transcript_path(DEFAULT_GPU)
    if not path.exists():
        raise SuiteError(f"no transcript {path.relative_to(root)} to quote")
    info = parse_transcript(path)
    for stream in ("stdout", "stderr"):  # stdout first; an error line lives on stderr
        lines = info[stream].splitlines()
        for i, line in enumerate(lines):
            if start in line:
                return "\n".join(lines[i:i + count]) + "\n"
    raise SuiteError(f"{path.relative_to(root)} has no line containing {start!r}")


def lesson_table(root):
    """The README's lesson table: plain text, the links live in docs/compiler-explorer.md."""
    rows = ["| lesson | day | teaches | page | starter | Compiler Explorer (T4, nvcc 13.0) |",
            "|---|---|---|---|---|---|"]
    for c in course(root):
        name, day, teaches = c.name, c.day, c.teaches
        if not (Path(root) / "lessons" / (name + ".cu")).exists():
            rows.append(f"| `{name}` | {day} | {teaches} | - | - | not yet written |")
            continue
        page = f"[page](lessons/{name}.md)" if (Path(root) / "lessons" / (name + ".md")).exists() else "-"
        starter = (f"[`starter/{name}.cu`](starter/{name}.cu)"
                   if (Path(root) / "starter" / (name + ".cu")).exists() else "-")
        rows.append(f"| [`{name}`](lessons/{name}.cu) | {day} | {teaches} | {page} | {starter} | "
                    f"[open](docs/compiler-explorer.md#{name}) |")
    return "\n".join(rows) + "\n"


# The how-to that opens docs/compiler-explorer.md: no GPU needed, start to finish.
CE_HOW_TO = [
    "How to use them without a GPU:", "",
    "1. **Lesson or starter.** The lesson's link runs the finished lesson: its result lines should be the recording's "
    "(`expected/h200/NAME.txt`; no Compiler Explorer run is recorded); its device facts and timings are the T4's. The starter's link runs the file as handed out: it "
    "exits 1 and says what is left to write. For your own exercise, "
    "`python3 scripts/suite.py ce-link exercises/NAME.cu` prints a link that opens your file.",
    "2. **Which pane to copy.** A link opens three panes: the source, the compiler's assembly, and the "
    "**executor pane**, which builds the file and runs it on a T4. Copy the executor pane's output whole, "
    "from its `Program returned: N` line to its last line: it labels the streams `Program stdout` and "
    "`Program stderr` (and leaves out the heading of a stream the program did not write to). Not the "
    "compiler's Output pane (it prints stderr and stdout without labels: refused), and not from "
    "`Program stdout` on (the exit code is then missing: not judged).",
    "3. **A run's arguments.** A lesson may record several runs (its `Run:` lines). Type a run's arguments "
    "into the executor's execution-arguments field, or print a link that has them filled in: "
    "`python3 scripts/suite.py ce-link exercises/NAME.cu --args '-m 1 -n 1 -k 1'`; then give the tool "
    "the same `--args`.",
    "4. **Judge it.** Your exercise: `python3 scripts/suite.py exercise check NAME --pane FILE "
    "[--args '...']`, one pane per run (several `--pane FILE --args '...'` in one call are judged "
    "together); the verdict keeps the runs that passed (in `exercises/`) and lists those still to pass "
    "until every run a pane can judge has passed. A lesson's own output: "
    "`python3 scripts/suite.py compare NAME --stdout FILE [--args '...']`.",
    "5. **Compiler Explorer's limits.** About 20 s of wall time, half a CPU core, a few hundred MiB of host "
    "memory and 32 KiB of output a run. verify measures each recorded run against a budget at least as strict (5 s "
    "on one core of the H200's host, 200 MiB, 32 KiB), and the verdict names "
    "the runs that do not fit (they need a real GPU), as it names what only a GPU can judge (speed, "
    "compute-sanitizer). Times and rates from a shared T4 are never compared.", ""]


def links_page(root, sources=None):
    """docs/compiler-explorer.md: one link per lesson and per starter (whole file generated)."""
    out = ["# Compiler Explorer links", ""] + CE_HOW_TO + [
           "## The links", "",
           "Generated by `python3 scripts/suite.py sync` from the sources; `check` fails when a link is stale.",
           "Each link opens the file in Compiler Explorer with nvcc 13.0 (`-std=c++17 -O3 -arch=sm_75`) and an",
           "executor that runs it on a T4. The state is in the link's fragment (`#z:`), which your browser",
           "decodes, so the link's length does not matter.", ""]
    for name in (c.name for c in course(root)):
        if not (Path(root) / "lessons" / (name + ".cu")).exists():
            continue
        out += [f"## {name}", ""]
        for rel in (f"lessons/{name}.cu", f"starter/{name}.cu"):
            if (Path(root) / rel).exists():
                text = sources[rel] if sources and rel in sources else read_text(Path(root) / rel)
                out += [f"- [{rel}]({ce_link(text)})", ""]
    return "\n".join(out)


def render_doc_region(root, kind, arg, where, sources=None):
    """The generated text between one pair of doc markers."""
    if kind == "snippet":
        parts = arg.split()
        if len(parts) != 2:
            raise SuiteError(f"{where}: malformed: want '<!-- snippet: LESSON NAME -->'")
        try:
            return "```cuda\n" + snippet_text(resolve_source(root, parts[0]), parts[1], sources) + "```\n"
        except UsageError as exc:
            raise SuiteError(f"{where}: unknown snippet: {exc}")
    if kind == "output":
        m = re.match(r'^(\S+) "(.+)" (\d+)$', arg)
        if not m:
            raise SuiteError(f'{where}: malformed: want \'<!-- output: RUN "FIRST LINE TEXT" COUNT -->\'')
        return "```text\n" + transcript_excerpt(root, m.group(1), m.group(2), int(m.group(3))) + "```\n"
    if kind == "commands":
        header = parse_header(source_text(resolve_source(root, arg.strip()), sources))
        build = header["Build"][0][1] if header["Build"] else "(no Build line)"
        return "```sh\n" + build + "\n" + "\n".join(cmd for _, cmd in header["Run"]) + "\n```\n"
    if kind == "ce-link":
        prog = resolve_source(root, arg.strip())
        return f"[Open `{prog.rel}` in Compiler Explorer]({ce_link(source_text(prog, sources))})\n"
    return lesson_table(root)


def _region_end(lines, i, kind):
    j = i + 1
    while j < len(lines) and not DOC_CLOSE_RE.match(lines[j]) and not DOC_OPEN_RE.match(lines[j]):
        j += 1
    ok = j < len(lines) and DOC_CLOSE_RE.match(lines[j]) and DOC_CLOSE_RE.match(lines[j]).group(1) == kind
    return j if ok else None


FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def page_lines(lines):
    """Each line of a page with its place: 'prose', 'fence' (a hand-written code block, its fence
    lines included), 'marker' (a generated region's opening or closing line) or 'generated'."""
    places, fence, i = [], None, 0
    while i < len(lines):
        line = lines[i]
        m = FENCE_RE.match(line)
        if fence is not None:
            places.append("fence")
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip().strip(fence[0]):
                fence = None
        elif m:
            fence = m.group(1)
            places.append("fence")
        elif DOC_OPEN_RE.match(line) and _region_end(lines, i, DOC_OPEN_RE.match(line).group(1)) is not None:
            j = _region_end(lines, i, DOC_OPEN_RE.match(line).group(1))
            places += ["marker"] + ["generated"] * (j - i - 1) + ["marker"]
            i = j
        else:
            places.append("prose")
        i += 1
    return places


def _fill_figures(records, rel, no, line, errors):
    """A prose line with its fig markers refilled from the records; errors name the page line."""
    new, found = fill_line(records, line)
    for spec, _, _, problem in found:
        if problem:
            what = f"figure <!-- fig: {spec} -->" if spec is not None else "figure"
            errors.append(f"{rel}:{no}: {what}: {problem}")
    return new


def regenerate_doc(root, rel, gpu=DEFAULT_GPU, sources=None):
    """Return (regenerated text, errors) for one page: generated regions and fig markers refilled."""
    lines = read_text(Path(root) / rel, "page").splitlines(keepends=True)
    places, records = page_lines(lines), Records(root, gpu)
    out, errors, seen, i = [], [], {}, 0
    while i < len(lines):
        m = DOC_OPEN_RE.match(lines[i])
        if places[i] == "prose" and "<!-- " in lines[i]:
            out.append(_fill_figures(records, rel, i + 1, lines[i], errors))
        else:
            out.append(lines[i])
        if DOC_CLOSE_RE.match(lines[i]):
            errors.append(f"{rel}:{i + 1}: malformed: '{lines[i].strip()}' without an opening marker")
        if not m:
            i += 1
            continue
        kind, arg = m.group(1), m.group(2).strip()
        where = f"{rel}:{i + 1}"
        if (kind, arg) in seen:
            errors.append(f"{where}: duplicate marker '{kind}: {arg}' (first at line {seen[(kind, arg)]})")
        seen[(kind, arg)] = i + 1
        j = _region_end(lines, i, kind)
        if j is None:
            errors.append(f"{where}: malformed: '{kind}: {arg}' is never closed by '<!-- end {kind} -->'")
            i += 1
            continue
        try:
            out.append(render_doc_region(root, kind, arg, where, sources))
        except SuiteError as exc:
            errors.append(str(exc) if str(exc).startswith(rel) else f"{where}: {exc}")
            out.extend(lines[i + 1:j])
        out.append(lines[j])
        i = j + 1
    return "".join(out), errors


def _changed_transcripts(root):
    """Transcripts whose sha256 differs from the GPU record's (the record may be absent)."""
    try:
        return changed_since_record(root)
    except SuiteError:
        return []


def _stale_figure(rel, no, old_line, new_line):
    """The first fig marker whose value differs between two versions of a line, as a message."""
    old = list(FIG_RE.finditer(old_line))
    new = list(FIG_RE.finditer(new_line))
    for a, b in zip(old, new):
        if a.group(2) != b.group(2):
            return (f"{rel}:{no}: stale figure <!-- fig: {a.group(1).strip()} -->: the page has {a.group(2)!r}, "
                    f"the record gives {b.group(2)!r} (run scripts/suite.py sync)")
    return None


def stale_message(root, rel, old, new):
    """One line for a page that differs from what sync writes: its first differing line."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    k = first_difference(old_lines, new_lines)
    if k < len(old_lines) and k < len(new_lines) and "<!-- fig:" in old_lines[k]:
        figure = _stale_figure(rel, k + 1, old_lines[k], new_lines[k])
        if figure:
            return figure
    opener = next((x for x in range(min(k, len(old_lines) - 1), -1, -1) if DOC_OPEN_RE.match(old_lines[x])), None)
    what = old_lines[opener].strip() if opener is not None else "(a wholly generated file)"
    advice = "run scripts/suite.py sync"
    m = DOC_OPEN_RE.match(what)
    if m and m.group(1) == "output":
        run_id = m.group(2).split()[0]
        changed = [p for p in _changed_transcripts(root) if p.endswith("/" + run_id + ".txt")]
        if changed:
            advice = (f"the transcript {changed[0]} changed since the GPU record (verify.json): re-record it "
                      f"on the GPU (bless + verify); do not copy it into the page")
    have, want = clip_pair(old_lines[k] if k < len(old_lines) else None, new_lines[k] if k < len(new_lines) else None)
    return f"{rel}:{k + 1}: stale generated text under {what} ({advice}): the page has {have}, the source gives {want}"


def expected_pages(root, gpu=DEFAULT_GPU, sources=None):
    """{rel: (new text, errors)} for every generated page and the link file, quoting the sources as
    sync leaves them (sources: {rel: planned text})."""
    pages = {rel: regenerate_doc(root, rel, gpu, sources) for rel in doc_files(root) if (Path(root) / rel).exists()}
    try:
        pages[LINKS_PAGE] = (links_page(root, sources), [])
    except SuiteError as exc:
        pages[LINKS_PAGE] = (None, [f"{LINKS_PAGE}:1: {exc}"])
    return pages


DETAILS_OPEN_RE = re.compile(r"<details\b", re.IGNORECASE)
DETAILS_CLOSE_RE = re.compile(r"</details\s*>", re.IGNORECASE)


def _solution_overlaps(root, arg):
    """[(solution region, lesson rel)] that the quoted snippet 'LESSON NAME' contains or intersects."""
    parts = arg.split()
    if len(parts) != 2:
        return []  # reported as malformed by regenerate_doc
    try:
        prog = resolve_source(root, parts[0])
    except UsageError:
        return []  # reported as an unknown snippet by regenerate_doc
    regions, errors = parse_regions(prog.rel, prog.text)
    snippets = [r for r in regions if r.kind == "snippet" and r.name == parts[1]]
    if errors or not snippets:
        return []
    s = snippets[0]
    return [(r, prog.rel) for r in regions
            if r.kind == "solution" and r.open_line <= s.close_line and s.open_line <= r.close_line]


def folded(lines, places=None):
    """For each line of a page: does it sit inside a <details> fold (opened on an earlier prose line,
    or on its own line)? Tags in code, inline code spans and HTML comments do not count."""
    places = places or page_lines(lines)
    inside, depth = [], 0
    for line, place in zip(lines, places):
        if place == "prose":
            html = COMMENT_RE.sub("", "".join(text for is_code, text in code_spans(line) if not is_code))
            opened = len(DETAILS_OPEN_RE.findall(html))
            inside.append(depth + opened > 0)
            depth = max(0, depth + opened - len(DETAILS_CLOSE_RE.findall(html)))
        else:
            inside.append(depth > 0)
    return inside


def page_findings(root, rel):
    """What sync cannot fix on a page: a measured figure quoted from no record (prose outside code,
    generated regions and fig/stated markers), and a snippet that shows a solution region outside a
    <details> spoiler fold."""
    lines = read_text(Path(root) / rel, "page").splitlines()
    findings, places = [], page_lines(lines)
    for no, (line, place, in_fold) in enumerate(zip(lines, places, folded(lines, places)), 1):
        if place == "prose":
            for figure in bare_figures(line):
                findings.append(f"{rel}:{no}: figure '{figure}' is quoted from no record: write it as "
                                f"<!-- fig: ... --> or mark a published constant <!-- stated: ... -->")
        m = DOC_OPEN_RE.match(line)
        if place == "marker" and m and m.group(1) == "snippet" and not in_fold:
            for region, source in _solution_overlaps(root, m.group(2).strip()):
                findings.append(f"{rel}:{no}: snippet '{m.group(2).strip()}' shows solution region "
                                f"'{region.name}' ({source}:{region.open_line}-{region.close_line}) outside a "
                                f"spoiler fold: put it inside <details><summary>...</summary> ... </details>, "
                                f"after the exercise's instructions")
    return findings
