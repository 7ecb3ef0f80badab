"""The lesson model: source files, their header lines, their markers, their recorded runs."""

import hashlib
import json
import re
import shlex
from pathlib import Path

from . import SuiteError, UsageError, read_text

OPEN_RE = re.compile(r"^\s*// (common|solution|exercise|snippet): ([A-Za-z0-9_.-]+)\s*$")
CLOSE_RE = re.compile(r"^\s*// end (common|solution|exercise|snippet)(?:: ([A-Za-z0-9_.-]+))?\s*$")
NEAR_MARKER_RE = re.compile(r"^\s*//\s*(end\s*)?(common|solution|exercise|snippet)\s*:?\s*\S*\s*$")
HEADER_RE = re.compile(r"^// (Build|Run|Sanitize):\s*(.*?)\s*$")


class Region:
    """A fenced region: kind, name, 1-based marker lines, the body between them (newlines kept)."""

    def __init__(self, kind, name, open_line, close_line, body):
        self.kind, self.name = kind, name
        self.open_line, self.close_line = open_line, close_line
        self.body = body

    def __repr__(self):
        return f"Region({self.kind}:{self.name} {self.open_line}-{self.close_line})"


def _close_region(rel, no, kind, name, open_, lines, regions, errors):
    if kind not in open_:
        errors.append(f"{rel}:{no}: malformed: 'end {kind}' without an open {kind} marker")
        return
    open_name, open_no = open_.pop(kind)
    if kind == "common" and name != open_name:
        errors.append(f"{rel}:{no}: malformed: 'end common: {name}' closes 'common: {open_name}' (line {open_no})")
    elif kind != "common" and name is not None:
        errors.append(f"{rel}:{no}: malformed: 'end {kind}' takes no name")
    regions.append(Region(kind, open_name, open_no, no, "".join(lines[open_no:no - 1])))


def parse_regions(rel, text):
    """Return (regions, errors); errors are 'file:line: message' strings."""
    lines = text.splitlines(keepends=True)
    regions, errors, open_, seen = [], [], {}, {}
    for no, line in enumerate(lines, 1):
        stripped = line.rstrip("\n")
        m_open, m_close = OPEN_RE.match(stripped), CLOSE_RE.match(stripped)
        if m_open:
            kind, name = m_open.groups()
            if kind in open_:
                errors.append(f"{rel}:{no}: malformed: '{kind}: {name}' opened inside "
                              f"'{kind}: {open_[kind][0]}' (line {open_[kind][1]}); {kind} markers do not nest")
                continue
            if (kind, name) in seen:
                errors.append(f"{rel}:{no}: malformed: duplicate {kind} '{name}' (first at line {seen[(kind, name)]})")
            seen[(kind, name)] = no
            open_[kind] = (name, no)
        elif m_close:
            _close_region(rel, no, *m_close.groups(), open_, lines, regions, errors)
        elif NEAR_MARKER_RE.match(stripped):
            errors.append(f"{rel}:{no}: malformed marker (expected '// KIND: NAME' or '// end KIND'): {stripped.strip()}")
    for kind, (name, no) in open_.items():
        errors.append(f"{rel}:{no}: malformed: '{kind}: {name}' is never closed (unterminated)")
    regions.sort(key=lambda r: r.open_line)
    return regions, errors


def parse_header(text):
    """The Build:/Run:/Sanitize: lines of the leading comment block, as (line, text) pairs."""
    found = {"Build": [], "Run": [], "Sanitize": []}
    for no, line in enumerate(text.splitlines(), 1):
        if not line.startswith("//"):
            break
        m = HEADER_RE.match(line)
        if m:
            found[m.group(1)].append((no, m.group(2)))
    return found


def skip_at(text, i):
    """The end of the // or /* */ comment, or the string or character literal, that starts at i
    (the comment's closing */ included, a // comment's newline not), or None where none starts
    there. A ' after a letter or digit is a digit separator (1'000), not a quote."""
    n = len(text)
    if text.startswith("//", i):
        j = text.find("\n", i)
        return n if j < 0 else j
    if text.startswith("/*", i):
        j = text.find("*/", i + 2)
        return n if j < 0 else j + 2
    c = text[i]
    if c == '"' or (c == "'" and not (i and (text[i - 1].isalnum() or text[i - 1] == "_"))):
        j = i + 1
        while j < n and text[j] != c and text[j] != "\n":
            j += 2 if text[j] == "\\" else 1
        return j + 1
    return None


def strip_comments(text):
    """C++ source without its // and /* */ comments, each run of blanks one space; string and
    character literals are kept whole,
    so a // inside "..." stays. A ' after a letter or digit is a digit separator (1'000), not a quote."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        end = skip_at(text, i)
        if c in " \t" or (end is not None and text.startswith("/*", i)):
            # A run of blanks, or a block comment, is one separator: spacing is not behaviour.
            if out and out[-1] not in " \n":
                out.append(" ")
            i = i + 1 if end is None else end
        elif end is not None and text.startswith("//", i):
            i = end
        elif end is not None:
            out.append(text[i:end])
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def code_lines(text):
    """The lines of code in text: comments, blank lines and leading/trailing blanks removed (what the
    source key hashes, and what tells a written exercise region from the starter's stand-in)."""
    return [line for line in (raw.strip() for raw in strip_comments(text).splitlines()) if line]


def behaviour_text(text):
    """What a recording depends on: the Build:/Run:/Sanitize: header lines, then the source with its
    comments, blank lines and leading/trailing blanks removed. A comment edit leaves it unchanged."""
    header = [f"// {kind}: {line}" for kind, lines in parse_header(text).items() for _, line in lines]
    return "\n".join(header + code_lines(text)) + "\n"


class Program:
    """A lesson or a starter source file."""

    def __init__(self, root, path):
        self.root, self.path = Path(root), Path(path)
        self.rel = self.path.relative_to(self.root).as_posix()
        self.name = self.path.stem
        self.is_starter = self.path.parent.name == "starter"
        self.target = self.name + ("_starter" if self.is_starter else "")

    @property
    def text(self):
        return read_text(self.path, "source file")

    def sha256(self):
        """The whole file's sha256 (changes with every comment)."""
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    def source_key(self):
        """The freshness key of recordings: the sha256 of what can change behaviour (see behaviour_text)."""
        return hashlib.sha256(behaviour_text(self.text).encode("utf-8")).hexdigest()

    def header(self):
        return parse_header(self.text)

    def build_argv(self):
        """The Build: line as an argv list (SuiteError without exactly one)."""
        lines = self.header()["Build"]
        if len(lines) != 1:
            raise SuiteError(f"{self.rel}:1: header needs exactly one '// Build:' line (found {len(lines)})")
        try:
            return shlex.split(lines[0][1])
        except ValueError as exc:  # an unbalanced quote
            raise SuiteError(f"{self.rel}:{lines[0][0]}: the Build: line cannot be split into words: {exc}")

    def runs(self):
        """Recorded runs: every Run: line of a lesson, the first of a starter."""
        lines = self.header()["Run"]
        if self.is_starter:
            lines = lines[:1]
        runs = []
        for index, (no, cmd) in enumerate(lines):
            argv = shlex.split(cmd)
            if not argv or argv[0] != "./" + self.name:
                raise SuiteError(f"{self.rel}:{no}: Run: line must start with ./{self.name}: {cmd}")
            runs.append(Run(self, argv[1:], index))
        return runs

    def sanitize_spec(self):
        """(compute-sanitizer options, program args) from 'Sanitize: [OPTIONS] ./NAME [ARGS]'."""
        lines = self.header()["Sanitize"]
        if not lines:
            runs = self.runs()
            return [], (runs[0].args if runs else [])
        no, text = lines[0]
        argv = shlex.split(text)
        program = "./" + self.name
        if program not in argv:
            raise SuiteError(f"{self.rel}:{no}: Sanitize: line must name {program}: {text}")
        k = argv.index(program)
        return argv[:k], argv[k + 1:]


class Run:
    """One recorded run of a program: its arguments and its transcript's id."""

    def __init__(self, program, args, index):
        self.program, self.args, self.index = program, list(args), index
        slug = re.sub(r"[^A-Za-z0-9]+", "_", " ".join(args)).strip("_")
        base = ("starter/" if program.is_starter else "") + program.name
        self.id = base if index == 0 else f"{base}@{slug or index}"

    def command(self):
        return " ".join(["./" + self.program.name] + [shlex.quote(a) for a in self.args])

    def transcript_path(self, gpu):
        return self.program.root / "expected" / gpu / (self.id + ".txt")


class CourseLesson:
    """One lesson's facts from scripts/course.json: name, day, what it teaches, data recordings, anchor
    runs, and the counts of PTX instructions its text states (ptxfacts)."""

    def __init__(self, data):
        self.name, self.day, self.teaches = data["name"], str(data["day"]), data["teaches"]
        self.data = [dict(d, args=list(d.get("args", []))) for d in data.get("data", [])]
        self.anchor_runs = [dict(a, args=list(a["args"])) for a in data.get("anchor_runs", [])]
        self.anchor_goal = data.get("anchor_goal")
        self.ptx_facts = [dict(f) for f in data.get("ptx_facts", [])]  # checked by ptxfacts


def course(root):
    """The lessons of scripts/course.json in course order, then any lesson file it does not list."""
    path = Path(root) / "scripts" / "course.json"
    entries = []
    if path.exists():
        try:
            entries = [CourseLesson(d) for d in json.loads(read_text(path, "course file"))["lessons"]]
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise SuiteError(f"scripts/course.json: malformed course file: {exc!r}")
    known = {e.name for e in entries}
    extra = [CourseLesson({"name": p.stem, "day": "-", "teaches": "(not in scripts/course.json)"})
             for p in sorted((Path(root) / "lessons").glob("*.cu")) if p.stem not in known]
    return entries + extra


def data_recordings(root):
    """(lesson, args, file, chart kind or None, image or None) of every data recording of an existing lesson."""
    return [(c.name, d["args"], d["file"], d.get("chart"), d.get("image")) for c in course(root)
            for d in c.data if (Path(root) / "lessons" / (c.name + ".cu")).exists()]


def programs(root):
    """Every lesson, then every starter."""
    found = []
    for sub in ("lessons", "starter"):
        found += [Program(root, p) for p in sorted((Path(root) / sub).glob("*.cu"))]
    return found


def lessons(root):
    return [p for p in programs(root) if not p.is_starter]


def all_runs(root):
    return [run for prog in programs(root) for run in prog.runs()]


def find_run(root, run_id):
    runs = all_runs(root)
    for run in runs:
        if run.id == run_id:
            return run
    known = ", ".join(r.id for r in runs) or "none"
    raise UsageError(f"unknown run '{run_id}' (known: {known})")


def lesson(root, name, starter=False):
    """The one lesson lookup: lessons/NAME.cu (or starter/NAME.cu), UsageError naming the known ones."""
    sub = "starter" if starter else "lessons"
    path = Path(root) / sub / (name + ".cu")
    known = sorted(p.stem for p in (Path(root) / sub).glob("*.cu"))
    if name not in known or not path.is_file():  # a name, never a path ('../lessons/x', '/tmp/x')
        raise UsageError(f"no {'starter' if starter else 'lesson'} called {name!r} "
                         f"(have: {', '.join(known) or 'none'})")
    return Program(root, path)


def find_lesson_run(root, name, args=None):
    """The run of lesson NAME whose Run: line has these args (None: the first)."""
    prog = lesson(root, name)
    runs = prog.runs()
    if not runs:
        raise UsageError(f"{prog.rel} has no '// Run:' line in its header: it records no run to compare with")
    if args is None:
        return runs[0]
    for run in runs:
        if run.args == list(args):
            return run
    known = "; ".join(" ".join(r.args) or "(no arguments)" for r in runs)
    raise UsageError(f"{name} has no recorded run with arguments {' '.join(args)!r} (recorded: {known})")


def resolve_source(root, name):
    """A lesson name, 'starter/NAME', or a path inside the tree to a .cu file -> Program."""
    root = Path(root).resolve()
    for candidate in (root / name, root / "lessons" / (name + ".cu"), root / (name + ".cu")):
        try:
            resolved = candidate.resolve()
            resolved.relative_to(root)
        except (ValueError, OSError):
            continue
        if resolved.is_file() and resolved.suffix == ".cu":
            return Program(root, resolved)
    raise UsageError(f"no lesson or starter called {name!r} inside {root} "
                     f"(give a lesson name, starter/NAME, or a .cu path in the tree)")


def first_difference(a_lines, b_lines):
    """Index of the first differing line of two lists, or None when equal."""
    for i in range(max(len(a_lines), len(b_lines))):
        a = a_lines[i] if i < len(a_lines) else None
        b = b_lines[i] if i < len(b_lines) else None
        if a != b:
            return i
    return None


def clip(line, width=160):
    """A line for a message: repr'd, cut to width characters."""
    if line is None:
        return "(no line)"
    text = repr(line.rstrip("\n"))
    return text if len(text) <= width else text[:width] + "...(" + str(len(text)) + " chars)"


def clip_pair(a, b, width=160):
    """Two differing lines for a message, each cut to a window around their first differing character."""
    if a is None or b is None:
        return clip(a, width), clip(b, width)
    k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, k - width // 3) if max(len(a), len(b)) > width else 0

    def window(line):
        text = line[start:start + width]
        return ("..." if start else "") + repr(text) + ("..." if start + width < len(line) else "")
    return window(a), window(b)
