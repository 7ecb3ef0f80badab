"""Transcripts: their file format, the masking of the three kinds of output line, and the ONE
comparison of an output with a recording (used by run, compare, exercise check, attempts, verify).

Kinds of line (docs/lesson-contract.md):
- MEASUREMENT: inline units (`<num> ms`, ...) and the volatile CSV columns: masked always.
- DEVICE FACT: the `GPU:` line, `[device]` lines, inline `<n> regs`, `<n> B local`, `<n> blocks/SM`,
  `<num>% occupancy`, `limited by <words>`, the device CSV columns and `# GPU:` / `# [device]` CSV
  comments: compared exactly against a recording of the same GPU model, masked otherwise.
- RESULT: everything else, compared exactly everywhere.
"""

import difflib
import functools
import re
from dataclasses import dataclass, field

from . import SuiteError, read_text
from .model import clip_pair, first_difference
from .running import run_binary

NUM = r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
# Leading blanks are swallowed so right-aligned columns of different widths compare equal.
MEASUREMENT_RULES = [
    (re.compile(r"[ \t]*\b" + NUM + r" ms\b"), " [MS] ms"),
    (re.compile(r"[ \t]*\b" + NUM + r" us\b"), " [US] us"),
    (re.compile(r"[ \t]*\b" + NUM + r" s \(host clock\)"), " [S] s (host clock)"),
    (re.compile(r"[ \t]*\b" + NUM + r" GFLOP/s\b"), " [GFLOPS] GFLOP/s"),
    (re.compile(r"[ \t]*\b" + NUM + r" TFLOP/s\b"), " [TFLOPS] TFLOP/s"),
    (re.compile(r"[ \t]*\b" + NUM + r" GB/s\b"), " [GBS] GB/s"),
    (re.compile(r"[ \t]*\b" + NUM + r" TB/s\b"), " [TBS] TB/s"),
    (re.compile(r"[ \t]*\b\d+\.\d+x(?![\w.])"), " [SPEEDUP]x"),
    (re.compile(r"[ \t]*\b" + NUM + r"% of measured"), " [PCT]% of measured"),
]
MEASUREMENT_CSV_COLUMNS = {
    "ms", "median_ms", "min_ms", "max_ms", "mean_ms", "gflops", "tflops", "gbs",
    "bw_gbs", "speedup", "rank", "pct_of_peak", "pct_of_roof", "spread_pct", "tie",
}
DEVICE_INLINE_RULES = [
    (re.compile(r"[ \t]*\b\d+ regs\b"), " [REGS] regs"),
    (re.compile(r"[ \t]*\b\d+ B local\b"), " [LOCAL] B local"),
    (re.compile(r"[ \t]*\b\d+ blocks/SM\b"), " [BLOCKS] blocks/SM"),
    (re.compile(r"[ \t]*\b" + NUM + r"% occupancy\b"), " [OCC]% occupancy"),
    (re.compile(r"limited by [a-z][a-z -]*[a-z]"), "limited by [LIMIT]"),
]
DEVICE_LINE_RE = re.compile(r"^(\s*(?:#\s*)?)(GPU:|\[device\])")
# A whole line that is a measurement (a table ranked by timings: which row sits where is
# itself measured) starts with [measured] and is masked always.
MEASURED_LINE_RE = re.compile(r"^(\s*)\[measured\]")
DEVICE_CSV_COLUMNS = {"device", "regs", "blocks_per_sm", "occupancy", "limited_by"}
CSV_HEADER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(,[A-Za-z_][A-Za-z0-9_]*){2,}$")
PLACEHOLDER_RE = re.compile(r"\[(?:MS|US|S|GFLOPS|TFLOPS|GBS|TBS|SPEEDUP|PCT|MEASURED)\]")
# Every placeholder the masking writes (the rules' own, a CSV cell's [VAR], a device line's [DEVICE],
# a ranked line's [MEASURED]): a recording holds them, no program prints them (pane.py refuses a copy).
MASK_TOKENS = sorted({token for _, placeholder in MEASUREMENT_RULES + DEVICE_INLINE_RULES
                      for token in re.findall(r"\[[A-Z]+\]", placeholder)} | {"[VAR]", "[DEVICE]", "[MEASURED]"})
MASK_TOKEN_RE = re.compile("|".join(re.escape(token) for token in MASK_TOKENS))
GPU_LINE_RE = re.compile(r"^(?:#\s*)?GPU: (.+?) \(compute capability")


def _apply(rules, line):
    new = line
    for pattern, placeholder in rules:
        new = pattern.sub(placeholder, new)
    return new, new != line


def mask_line(line, device=False):
    """One non-CSV line with measurements (and, with device=True, device facts) masked."""
    return _mask_plain(line, device)[0]


def _mask_plain(line, device):
    """(masked line, is it a measurement line, is it a device-fact line)."""
    m = MEASURED_LINE_RE.match(line)
    if m:
        return m.group(1) + "[measured] [MEASURED]", True, False
    m = DEVICE_LINE_RE.match(line)
    if m:
        return (m.group(1) + m.group(2) + " [DEVICE]" if device else line), False, True
    line, measured = _apply(MEASUREMENT_RULES, line)
    measured = measured or bool(PLACEHOLDER_RE.search(line))  # a transcript's line is already masked
    masked, is_device = _apply(DEVICE_INLINE_RULES, line)
    return (masked if device else line), measured, is_device


def mask_lines(text, device=False):
    """[(masked line, kinds)] with kinds a subset of {'measurement', 'device', 'result'} ('result': a CSV
    row whose other cells are compared, beside its device or measurement cells)."""
    return list(_masked_lines(text, device))


@functools.lru_cache(maxsize=8)
def _masked_lines(text, device):
    """mask_lines, remembered for the last few texts: judge.which_run compares one pane with every
    recording, and masking the pane once, not once a recording, keeps a large pane fast."""
    volatile = MEASUREMENT_CSV_COLUMNS | (DEVICE_CSV_COLUMNS if device else set())
    out, header = [], None
    for line in text.splitlines():
        if CSV_HEADER.match(line):
            cols = line.split(",")
            header = cols if (MEASUREMENT_CSV_COLUMNS | DEVICE_CSV_COLUMNS).intersection(cols) else None
            out.append((line, frozenset()))
            continue
        if header is not None and line.count(",") == len(header) - 1 and not line.startswith("#"):
            cells = line.split(",")
            kinds = set()
            if MEASUREMENT_CSV_COLUMNS.intersection(header):
                kinds.add("measurement")
            if DEVICE_CSV_COLUMNS.intersection(header):
                kinds.add("device")
            if any(name not in MEASUREMENT_CSV_COLUMNS | DEVICE_CSV_COLUMNS for name in header):
                kinds.add("result")  # its other cells are compared: a result line that also holds device facts or measurements
            cells = ["[VAR]" if name in volatile else cell for name, cell in zip(header, cells)]
            out.append((",".join(cells), frozenset(kinds)))
            continue
        if not line.startswith("#"):
            header = None
        masked, measured, is_device = _mask_plain(line, device)
        out.append((masked, frozenset(k for k, v in (("measurement", measured), ("device", is_device)) if v)))
    return tuple(out)


def mask(text, device=False):
    """Program output with measurements masked; device=True masks the device facts too."""
    lines = [line for line, _ in mask_lines(text, device)]
    return "\n".join(lines) + ("\n" if lines else "")


def gpu_of(result):
    """The GPU model an output names: its `GPU:` line, else a CSV `device` column; None if neither."""
    for stream in ("stdout", "stderr"):
        for line in result.get(stream, "").splitlines():
            m = GPU_LINE_RE.match(line)
            if m:
                return m.group(1).strip()
    lines = result.get("stdout", "").splitlines()
    for i, line in enumerate(lines[:-1]):
        if CSV_HEADER.match(line) and "device" in line.split(","):
            row = lines[i + 1].split(",")
            k = line.split(",").index("device")
            return row[k] if k < len(row) else None
    return None


# --- the transcript file -----------------------------------------------------------------
def format_transcript(run, gpu_name, toolkit, result):
    out, err = mask(result["stdout"]), mask(result["stderr"])
    head = [
        "# suite transcript: written by 'scripts/suite.py bless'; never edit by hand",
        f"# command: {run.command()}",
        f"# source: {run.program.rel}",
        f"# source_key: {run.program.source_key()}",
        f"# gpu: {gpu_name}",
        f"# toolkit: {toolkit}",
        f"# exit_code: {int(result['exit_code'])}",
    ]
    # Every line is kept as it was printed, blank ones included (a trailing blank line too).
    body = ([f"--- stdout: {len(out.splitlines())} lines"] + out.splitlines()
            + [f"--- stderr: {len(err.splitlines())} lines"] + err.splitlines())
    return "\n".join(head + body) + "\n"


def parse_transcript(path):
    """Header fields, 'stdout', 'stderr' (exit_code an int); SuiteError (one line) if malformed."""
    lines = read_text(path, "transcript").splitlines()
    info, i = {}, 0
    while i < len(lines) and lines[i].startswith("# "):
        key, _, value = lines[i][2:].partition(": ")
        info[key] = value
        i += 1
    for stream in ("stdout", "stderr"):
        m = re.match(r"^--- " + stream + r": (\d+) lines$", lines[i] if i < len(lines) else "")
        if not m:
            raise SuiteError(f"{path}:{i + 1}: malformed transcript: expected '--- {stream}: N lines'")
        count = int(m.group(1))
        chunk = lines[i + 1:i + 1 + count]
        if len(chunk) != count:
            raise SuiteError(f"{path}: malformed transcript: {stream} is shorter than {count} lines")
        info[stream] = "\n".join(chunk) + ("\n" if chunk else "")
        i += 1 + count
    for key in ("source", "source_key", "exit_code", "command"):
        if key not in info:
            raise SuiteError(f"{path}:1: malformed transcript: header lacks '{key}'")
    try:
        info["exit_code"] = int(info["exit_code"])
    except ValueError:
        raise SuiteError(f"{path}:7: malformed transcript: exit_code {info['exit_code']!r} is not a number")
    return info


def staleness(run, info):
    """A sentence when a transcript was recorded from another source or command, else None."""
    if info["source_key"] != run.program.source_key():
        return (f"stale: recorded from another version of {run.program.rel} (its code, not only its comments, "
                f"changed: key {info['source_key'][:12]}..., now {run.program.source_key()[:12]}...); "
                f"re-record it with bless on the GPU")
    if info["source"] != run.program.rel or info["command"] != run.command():
        return (f"transcript is of '{info['command']}' from {info['source']}, "
                f"expected '{run.command()}' from {run.program.rel}")
    return None


# --- the one comparison ------------------------------------------------------------------
@dataclass
class Comparison:
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    result_lines: int = 0
    device_lines: int = 0
    measurement_lines: int = 0
    worded_lines: int = 0
    device_compared: bool = True

    @property
    def ok(self):
        return not self.problems

    def decided(self):
        how = "compared exactly" if self.device_compared else "not compared"
        return (f"{self.result_lines} result lines compared, {self.worded_lines} student-worded ignored, "
                f"{self.device_lines} device facts {how}, {self.measurement_lines} measurements masked")


def _stream_lines(text, device, drop, stats, pasted=False):
    """(kept masked lines, their 1-based line numbers in the stream). Pasted output (see pane.read_pasted)
    ignores trailing blanks on every line and blank lines at the end: a browser's copy adds or drops them."""
    if pasted:
        text = "\n".join(line.rstrip() for line in text.splitlines())
    kept, numbers = [], []
    for number, (line, kinds) in enumerate(mask_lines(text, device), 1):
        if any(re.search(rx, line) for rx in drop):
            stats["worded"] += 1
            continue
        if "device" in kinds:
            stats["device"] += 1
        if "result" in kinds or ("device" not in kinds and line.strip()):
            stats["result"] += 1
        stats["measurement"] += "measurement" in kinds
        kept.append(line.rstrip() if pasted else line)
        numbers.append(number)
    while pasted and kept and not kept[-1]:
        kept.pop()
        numbers.pop()
    return kept, numbers


MAX_SHOWN = 20  # differing lines printed at most; the rest are counted


def _where(stream, numbers, i, origin):
    """Where line i of this output's kept lines is: 'line N of stdout', or 'FILE:M (line N of stdout)'
    for output read from a file (M counts lines of the user's file)."""
    number = numbers[i] if i < len(numbers) else (numbers[-1] + 1 if numbers else 1)
    if origin and stream in origin:
        name, offset = origin[stream]
        return f"{name}:{offset + number} (line {number} of {stream})"
    return f"line {number} of {stream}"


def _shown(line, width=200):
    return line if len(line) <= width else line[:width] + f"...({len(line)} chars)"


def _bounded_diff(want, got, want_numbers, got_numbers, stream, origin):
    """A unified diff whose hunk headers name the recording's line and this output's line (the
    user's file where it came from one), at most MAX_SHOWN differing lines, then a count."""
    matcher = difflib.SequenceMatcher(None, want, got)
    total = sum((i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal")
    out, shown = [], 0
    for group in matcher.get_grouped_opcodes(1):
        if shown >= MAX_SHOWN:
            break
        i1, j1 = group[0][1], group[0][3]
        rec = want_numbers[i1] if i1 < len(want_numbers) else (want_numbers[-1] + 1 if want_numbers else 1)
        out.append(f"@@ recording line {rec}, this output {_where(stream, got_numbers, j1, origin)} @@")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out += [" " + _shown(line) for line in want[a1:a2]]
                continue
            for sign, lines in (("-", want[a1:a2]), ("+", got[b1:b2])):
                for line in lines:
                    if shown < MAX_SHOWN:
                        out.append(sign + _shown(line))
                    shown += 1
    printed = min(shown, MAX_SHOWN)
    if total > printed:
        out.append(f"... {total - printed} more differing lines not shown ({total} in all)")
    return out


def _stream_problem(stream, want, got, label, want_numbers=(), got_numbers=(), origin=None):
    want_numbers = list(want_numbers) or list(range(1, len(want) + 1))
    got_numbers = list(got_numbers) or list(range(1, len(got) + 1))
    i = first_difference(want, got)
    have, this = clip_pair(want[i] if i < len(want) else None, got[i] if i < len(got) else None)
    where = f"{_where(stream, got_numbers, i, origin)}: the recording has {have}, this output has {this}"
    diff = _bounded_diff(want, got, want_numbers, got_numbers, stream, origin)
    return f"{label}: {stream} differs from the recording at {where}\n" + "\n".join(diff)


def compare(expected, result, label, device=None, drop=()):
    """Compare a result (raw stdout, stderr, int exit_code) with a parsed transcript.

    device: True compares device facts exactly, False masks them, None decides by GPU model
    (exact when the output's GPU is the recording's). drop: regexes of lines ignored on both sides.
    A result read by pane.read_pasted carries 'origin' ({stream: (file name, lines before it)}): its
    messages then name lines of the user's file, and trailing blanks are not compared."""
    recorded, this = expected.get("gpu"), gpu_of(result)
    origin = result.get("origin")
    pasted = origin is not None
    if device is None:
        device = this is not None and this == recorded
    cmp = Comparison(device_compared=device)
    if int(result["exit_code"]) != int(expected["exit_code"]):
        said = [line.strip() for line in str(result.get("stderr") or "").splitlines() if line.strip()]
        cmp.problems.append(f"{label}: exit code {result['exit_code']}, the recording says {expected['exit_code']}"
                            + (f" (its stderr ends: {said[-1][:200]!r})" if said else ""))
    for stream in ("stdout", "stderr"):
        stats = {"result": 0, "device": 0, "measurement": 0, "worded": 0}
        want, want_numbers = _stream_lines(expected[stream], not device, drop, stats, pasted)
        got, got_numbers = _stream_lines(result[stream], not device, drop, {k: 0 for k in stats}, pasted)
        cmp.result_lines += stats["result"]
        cmp.device_lines += stats["device"]
        cmp.measurement_lines += stats["measurement"]
        cmp.worded_lines += stats["worded"]
        if want != got:
            cmp.problems.append(_stream_problem(stream, want, got, label, want_numbers, got_numbers, origin))
    if not device and cmp.device_lines:
        plural = "s" if cmp.device_lines != 1 else ""
        why = (f"recorded on {recorded or 'an unnamed GPU'}, this is {this or 'an output that names no GPU'}"
               if this != recorded or this is None else "this judgement compares results only")
        cmp.notes.append(f"{cmp.device_lines} device-fact line{plural} not compared: {why}")
    return cmp


def run_against_transcript(run, binary, gpu, run_fn=None):
    """Run one recorded run and compare it with its transcript: (result, Comparison).

    The one path used by `run` and by `verify` (a stale transcript is a problem too)."""
    result = (run_fn or run_binary)(binary, run.args)
    path = run.transcript_path(gpu)
    if not path.exists():
        cmp = Comparison(problems=[f"{run.id}: no transcript at expected/{gpu}/{run.id}.txt; record one with "
                                   f"'scripts/suite.py bless {run.id}' on a GPU machine"])
        return result, cmp
    expected = parse_transcript(path)
    cmp = compare(expected, result, run.id)
    stale = staleness(run, expected)
    if stale:
        cmp.problems.append(f"{run.id}: expected/{gpu}/{run.id}.txt: {stale}")
    return result, cmp
