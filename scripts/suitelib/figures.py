"""Figures a page quotes from a record, and the rule that a page quotes no other measured figure.

A page writes a measured figure as an inline generated figure, filled by `sync` and compared by `check`:

    <!-- fig: SPEC -->VALUE<!-- end fig -->

SPEC is one of
    FILE COLUMN KEY=VALUE [KEY=VALUE ...] [| FORMAT]   a CSV under expected/<gpu>/ ('#' lines are comments):
                                                       COLUMN of the single row whose columns equal the KEY=VALUEs
    FILE /REGEX/ [| FORMAT]                            a text file under expected/<gpu>/: the first capture
                                                       group of the first line the regex matches
    FILE.json LIST/FIELD KEY=VALUE [...] [| FORMAT]    a JSON record (verify.json): FIELD of the single
                                                       entry of its top-level list LIST whose fields equal
                                                       the KEY=VALUEs (so one lesson's entry, never the
                                                       first of several)
    SPEC over SPEC [| FORMAT]                          the ratio of two figures
FORMAT is a Python format spec applied to the number (`,.0f`, `.2f`, `.1%`); without one a figure is
inserted as read, and a ratio as `.3g`. A published constant (a datasheet limit, a spec value) is
`<!-- stated: SOURCE -->VALUE<!-- end stated -->`: not generated, and exempt from the unit rule.

The unit rule: a number with a measurement unit (ms, us, µs, GB/s, TB/s, GFLOP/s, TFLOP/s, %, a ratio
such as 1.57x, or "N times") in a page's prose is a finding, because nothing keeps it true when the
lesson is re-measured. This module works on single lines; docs.py walks the pages (fences, regions).
"""

import csv
import io
import json
import re
from pathlib import Path

from . import DEFAULT_GPU, SuiteError, read_text

FIG_RE = re.compile(r"<!-- fig: (.*?) -->(.*?)<!-- end fig -->")
STATED_RE = re.compile(r"<!-- stated: (\S.*?) -->(.*?)<!-- end stated -->")
FIG_PART_RE = re.compile(r"<!-- (?:end )?(fig|stated)\b")
CODE_SPAN_RE = re.compile(r"(`+)(.+?)\1")
LINK_TARGET_RE = re.compile(r"\]\([^)]*\)|<?https?://[^\s>)]+>?")
COMMENT_RE = re.compile(r"<!--.*?-->")
# A number with a unit. 'x' must touch its number and end the word (1.57x, 16x), so 16x16 and 0x1f
# are not ratios; the other units may be spaced ('3.2 ms', '45 %').
NUMBER = r"(?<![\w.])\d[\d,]*(?:\.\d+)?"
UNIT_RE = re.compile(NUMBER + r"(?:\s*(?:ms|us|µs|GB/s|TB/s|GFLOP/s|TFLOP/s)(?![\w/])|\s*%|[x×](?!\w)|\s+times\b)")


class FigureError(SuiteError):
    """A fig marker that cannot be filled: a bad spec, a missing record, no or several rows."""


class Records:
    """The recorded files under expected/<gpu>/, read once per page walk."""

    def __init__(self, root, gpu=DEFAULT_GPU):
        self.root, self.gpu = Path(root), gpu
        self.base = self.root / "expected" / gpu
        self._texts = {}

    def text(self, rel):
        if rel not in self._texts:
            path = (self.base / rel).resolve()
            try:
                path.relative_to(self.base.resolve())
            except ValueError:
                raise FigureError(f"{rel!r} is not a file under expected/{self.gpu}/")
            if not path.is_file():
                raise FigureError(f"no record expected/{self.gpu}/{rel}")
            try:
                self._texts[rel] = read_text(path, "record")
            except SuiteError as exc:
                raise FigureError(str(exc))
        return self._texts[rel]


def _split_format(spec):
    """(terms text, format or None): the format follows the last ' | ' outside a /regex/."""
    regex_spans = [(m.start(), m.end()) for m in re.finditer(r"(?:^|\s)/.*?/(?=\s|$)", spec)]
    for m in reversed(list(re.finditer(r"\s\|\s", spec))):
        if not any(a <= m.start() < b for a, b in regex_spans):
            return spec[:m.start()].strip(), spec[m.end():].strip()
    return spec.strip(), None


def _parse_term(text):
    """(term, rest) for one FILE ... term; rest starts at ' over ' or is empty."""
    text = text.strip()
    file_, _, rest = text.partition(" ")
    rest = rest.lstrip()
    if not file_ or not rest:
        raise FigureError("want 'FILE COLUMN KEY=VALUE ...' or 'FILE /REGEX/'")
    if rest.startswith("/"):
        # The regex ends at the first '/' followed by the end or by ' over ' (so it may hold '/': GB/s).
        for m in re.finditer(r"/(?=\s+over\s|\s*$)", rest[1:]):
            pattern, after = rest[1:m.start() + 1], rest[m.start() + 2:]
            try:
                regex = re.compile(pattern)
            except re.error as exc:
                raise FigureError(f"bad regex /{pattern}/: {exc}")
            if regex.groups < 1:
                raise FigureError(f"regex /{pattern}/ has no capture group")
            return ("regex", file_, regex), after
        raise FigureError("regex is not closed by '/'")
    words = rest.split()
    stop = words.index("over") if "over" in words else len(words)
    column, pairs = words[0], words[1:stop]
    if not pairs or any("=" not in p or p.startswith("=") for p in pairs):
        raise FigureError("want 'FILE COLUMN KEY=VALUE [KEY=VALUE ...]' (at least one KEY=VALUE)")
    keys = [tuple(p.split("=", 1)) for p in pairs]
    return ("csv", file_, column, keys), " ".join(words[stop:])


def parse_spec(spec):
    """(terms, format): one term, or two for 'A over B'."""
    body, fmt = _split_format(spec)
    first, rest = _parse_term(body)
    terms = [first]
    if rest.strip():
        m = re.match(r"\s*over\s+(.*)$", rest)
        if not m:
            raise FigureError(f"unexpected {rest.strip()!r} (want 'over SPEC' or '| FORMAT')")
        second, rest = _parse_term(m.group(1))
        if rest.strip():
            raise FigureError("a ratio takes two figures, not more")
        terms.append(second)
    return terms, fmt


def _csv_value(records, file_, column, keys):
    text = records.text(file_)
    rows = list(csv.reader(io.StringIO("".join(line for line in text.splitlines(keepends=True)
                                               if not line.startswith("#")))))
    if not rows:
        raise FigureError(f"expected/{records.gpu}/{file_} has no header row")
    header, body = rows[0], rows[1:]
    for name in [column] + [k for k, _ in keys]:
        if name not in header:
            raise FigureError(f"expected/{records.gpu}/{file_} has no column {name!r} (columns: {', '.join(header)})")
    index = {name: i for i, name in enumerate(header)}
    hits = [r for r in body if len(r) == len(header) and all(r[index[k]] == v for k, v in keys)]
    if len(hits) != 1:
        what = " ".join(f"{k}={v}" for k, v in keys)
        raise FigureError(f"expected/{records.gpu}/{file_} has {len(hits)} rows with {what} (want exactly one)")
    return hits[0][index[column]]


def _json_value(records, file_, column, keys):
    listing, slash, field = column.partition("/")
    if not slash or not listing or not field:
        raise FigureError(f"want 'FILE.json LIST/FIELD KEY=VALUE ...', got {column!r}")
    try:
        data = json.loads(records.text(file_))
    except ValueError as exc:
        raise FigureError(f"expected/{records.gpu}/{file_} is not JSON: {exc}")
    entries = data.get(listing) if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise FigureError(f"expected/{records.gpu}/{file_} has no list {listing!r}")
    hits = [e for e in entries if isinstance(e, dict) and all(str(e.get(k)) == v for k, v in keys)]
    what = " ".join(f"{k}={v}" for k, v in keys)
    if len(hits) != 1:
        raise FigureError(f"expected/{records.gpu}/{file_} has {len(hits)} entries of {listing} with {what} "
                          f"(want exactly one)")
    if field not in hits[0]:
        raise FigureError(f"the {listing} entry with {what} in expected/{records.gpu}/{file_} has no {field!r}")
    return str(hits[0][field])


def _regex_value(records, file_, regex):
    for line in records.text(file_).splitlines():
        m = regex.search(line)
        if m:
            if m.group(1) is None:
                raise FigureError(f"/{regex.pattern}/ matched without its capture group in expected/{records.gpu}/{file_}")
            return m.group(1)
    raise FigureError(f"no line of expected/{records.gpu}/{file_} matches /{regex.pattern}/")


def _term_value(records, term):
    if term[0] == "regex":
        return _regex_value(records, *term[1:])
    return (_json_value if term[1].endswith(".json") else _csv_value)(records, *term[1:])


def _number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        raise FigureError(f"{text!r} is not a number")


def _formatted(value, fmt):
    try:
        if fmt.rstrip().endswith(("d", "n")) and float(value).is_integer():
            return format(int(value), fmt)
        return format(value, fmt)
    except (ValueError, TypeError) as exc:
        raise FigureError(f"bad format {fmt!r}: {exc}")


def figure_value(records, spec):
    """The text a fig marker with this SPEC holds (FigureError naming what is wrong)."""
    terms, fmt = parse_spec(spec)
    values = [_term_value(records, t) for t in terms]
    if len(values) == 2:
        a, b = _number(values[0]), _number(values[1])
        if b == 0:
            raise FigureError("ratio over a zero figure")
        return _formatted(a / b, fmt or ".3g")
    if fmt is None:
        return values[0]
    return _formatted(_number(values[0]), fmt)


def code_spans(line):
    """The line cut into (is_code, text) parts at inline code spans."""
    parts, pos = [], 0
    for m in CODE_SPAN_RE.finditer(line):
        parts.append((False, line[pos:m.start()]))
        parts.append((True, m.group(0)))
        pos = m.end()
    parts.append((False, line[pos:]))
    return parts


def fill_line(records, line):
    """(the line with every fig marker outside code spans refilled, [(spec, old, new or None, error)])."""
    out, found = [], []
    for is_code, text in code_spans(line):
        if is_code:
            out.append(text)
            continue

        def refill(m):
            spec, old = m.group(1).strip(), m.group(2)
            try:
                new = figure_value(records, spec)
            except FigureError as exc:
                found.append((spec, old, None, str(exc)))
                return m.group(0)
            found.append((spec, old, new, None))
            return f"<!-- fig: {m.group(1)} -->{new}<!-- end fig -->"
        filled = FIG_RE.sub(refill, text)
        stray = FIG_PART_RE.search(STATED_RE.sub("", FIG_RE.sub("", filled)))
        if stray:
            found.append((None, None, None, f"malformed {stray.group(1)} marker: want "
                          f"'<!-- {stray.group(1)}: ... -->VALUE<!-- end {stray.group(1)} -->' on one line"))
        out.append(filled)
    return "".join(out), found


def bare_figures(line):
    """The measured-looking figures of one prose line that no fig or stated marker covers."""
    prose = "".join(text for is_code, text in code_spans(line) if not is_code)
    prose = COMMENT_RE.sub(" ", STATED_RE.sub(" ", FIG_RE.sub(" ", prose)))
    prose = LINK_TARGET_RE.sub(" ", prose)
    # A number after '=' is a parameter ('n = 4096 GFLOP/s' heads a column of rates at n = 4096).
    return [m.group(0) for m in UNIT_RE.finditer(prose) if not re.search(r"=\s*$", prose[:m.start()])]
