"""Reading a pane: output the user saved by hand (a program's stdout, or a Compiler Explorer pane
copied whole), for `compare` (read_pasted) and for the exercise verdict from a pane (read_pane).
"""

import codecs
import os
import re
import stat
from pathlib import Path

from . import SuiteError, UsageError, a_or_an, read_bytes
from .transcripts import DEVICE_LINE_RE, MASK_TOKEN_RE

PASTE_LIMIT = 4 * 1024 * 1024  # no lesson prints near this (a program's stdout saved by hand, for compare)
# Compiler Explorer runs a program with `max-executable-output-size` 32 KiB (lib/base-compiler.ts,
# runExecutable), so its executor pane shows at most that of each stream; ten times it leaves room for
# the build's messages above 'Program returned: N' and is still quick to judge against every recording.
CE_OUTPUT_BYTES = 32 * 1024
PANE_LIMIT = 10 * CE_OUTPUT_BYTES
CE_STDOUT, CE_STDERR = "Program stdout", "Program stderr"
CE_RETURNED = re.compile(r"^Program returned: (-?\d+)$")
# The executor pane says 'Could not execute the program', 'Build failed', 'Compiler returned: N'
# where the build failed; the compiler's Output pane ends with 'ASM generation compiler returned: N'
# and 'Execution build compiler returned: N' (static/panes/executor.ts, output.ts and
# lib/base-compiler.ts of compiler-explorer/compiler-explorer).
CE_COMPILER_RETURNED = re.compile(r"^(?:ASM generation |Execution build )?[Cc]ompiler returned: (-?\d+)$")
CE_NOT_EXECUTED = "Could not execute the program"
CE_BUILD_FAILED = "Build failed"
# Byte-order marks, UTF-32's before UTF-16's (FF FE 00 00 starts with FF FE). Windows PowerShell 5.1's
# `>` and Out-File write UTF-16 with its mark: such a file is read as what it says it is.
BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
        (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))
SAVE_AS_UTF8 = ("save it as UTF-8 (Windows PowerShell: `Get-Clipboard | Out-File -Encoding utf8 FILE`, or an "
                "editor's 'Save as' with encoding UTF-8)")


def _size(n):
    if n % 2**10:
        return f"{n:,} bytes"  # a byte over a limit is not rounded to the limit
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n // 2**10:,} KiB"


def decode_pasted(data, path):
    """The text of a saved output's bytes: UTF-16 or UTF-32 where the file starts with that byte-order
    mark, else UTF-8. One-line UsageError otherwise, saying how to save it as UTF-8; a file with NUL
    bytes and no mark is named as UTF-16 (ASCII in UTF-16 is valid UTF-8 with a NUL beside each letter,
    which would be compared as garbage)."""
    for bom, codec in BOMS:
        if data.startswith(bom):
            try:
                return data.decode(codec.lower())
            except UnicodeDecodeError as exc:
                raise UsageError(f"{path}: starts with the byte-order mark of {codec} but is not {codec} text "
                                 f"(byte {exc.start}); {SAVE_AS_UTF8}")
    nul = data.find(b"\0")
    if nul >= 0:
        raise UsageError(f"{path}: holds NUL bytes (byte {nul}): it looks like UTF-16 text without its "
                         f"byte-order mark, not UTF-8; {SAVE_AS_UTF8}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise UsageError(f"{path}:{line}: not UTF-8 text (byte {exc.start}); {SAVE_AS_UTF8}")


def read_pasted_file(path, what="output file", limit=PASTE_LIMIT, holds="any lesson prints"):
    """The text of a file the user saved, BOM and CRs removed (decode_pasted). Refused in one line
    (UsageError), before it is opened, when it is not a regular file (a FIFO would hang, a device never
    ends) or is larger than limit (more than `holds`: the wrong file)."""
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such {what}")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})")
    if stat.S_ISDIR(info.st_mode):
        raise UsageError(f"{path}: is a directory, not {a_or_an(what)}")
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{path}: is not a regular file (a pipe or a device?); save the output to a file first")
    if info.st_size > limit:
        raise UsageError(f"{path}: {_size(info.st_size)} is more than {holds} ({_size(limit)} at most here); "
                         f"is it the right file?")
    text = decode_pasted(read_bytes(path, what), path)
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def tidy_headings(lines):
    """The lines, with the trailing blanks of the pane's own heading lines cut ('Program stdout ', as a
    browser's copy may leave it, is the heading it is); the program's lines are kept as they are."""
    return [line.rstrip() if _is_heading(line.rstrip()) else line for line in lines]


def _is_heading(line):
    return (line in (CE_STDOUT, CE_STDERR, CE_NOT_EXECUTED, CE_BUILD_FAILED)
            or bool(CE_RETURNED.match(line) or CE_COMPILER_RETURNED.match(line)))


def refuse_unrun(lines, name):
    """A pane that holds no program output, refused in one line: a failed build is a finding (SuiteError,
    exit 1: the program does not compile, as `exercise check` on a GPU says of a build that fails); a
    build that was not run is no evidence at all (UsageError, exit 2: turn on execution)."""
    if any(CE_RETURNED.match(ln) or ln in (CE_STDOUT, CE_STDERR) for ln in lines):
        return
    codes = [int(m.group(1)) for m in map(CE_COMPILER_RETURNED.match, lines) if m]
    if any(codes) or CE_BUILD_FAILED in lines:
        error = next((ln.strip() for ln in lines if re.search(r"\berror\b", ln)), None)
        first = f"; its first error: {error[:200]}" if error else ""
        raise SuiteError(f"{name}: this pane is a compile error: fix it first (Compiler Explorer says "
                         f"'Compiler returned: {next((c for c in codes if c), '?')}'{first})")
    if CE_NOT_EXECUTED in lines or codes:
        raise UsageError(f"{name}: not judged: this pane holds no program output (Compiler Explorer did not run "
                         f"the program); turn on execution and copy the executor pane whole, from 'Program "
                         f"returned:' on")


def refuse_unprinted(lines, name, at=0):
    """Lines no program prints, refused in one line (UsageError) naming the line of the user's file (at:
    how many lines of it come before these): a placeholder of the masking ('[MS] ms', '[GFLOPS]': a copy
    of a recorded transcript or of a lesson page, which would pass its own comparison), and a device-fact
    line cut right after its tag (a bare '[device]' or 'GPU:': device lines are masked whole, so a copy
    cut there would pass)."""
    for number, line in enumerate(lines, at + 1):
        token = MASK_TOKEN_RE.search(line)
        if token:
            raise UsageError(f"{name}:{number}: '{token.group(0)}' is a placeholder of the recorded transcript, "
                             f"which no program prints: this is a copy of a recording (or of a lesson page), not "
                             f"your program's output; {WHAT_TO_COPY}")
        tag = DEVICE_LINE_RE.match(line)
        if tag and not line[tag.end():].strip():
            raise UsageError(f"{name}:{number}: a bare '{line.strip()}' line, which no program prints: the copy "
                             f"looks cut there; {WHAT_TO_COPY}")


# What to copy, said the same way by every refusal.
WHAT_TO_COPY = ("copy Compiler Explorer's executor pane whole, from its 'Program returned: N' line to its "
                "last line (the executor pane labels the streams 'Program stdout' and 'Program stderr')")


class Pane:
    """A saved output, classified. kind:
      - "executor": Compiler Explorer's executor pane from 'Program returned: N' on; a stream whose
        heading is absent is empty (the pane omits the heading of an empty stream);
      - "partial":  'Program stdout' / 'Program stderr' headings without the 'Program returned: N'
        line above them (a copy that starts at 'Program stdout'): no exit code;
      - "output":   the compiler's Output pane: 'Program returned: N' after the compiler's
        '... compiler returned: N' lines, then the program's stderr and stdout without labels;
      - "plain":    no heading at all (a program's stdout saved by hand).
    stdout/stderr: lists of lines; *_at: how many lines of the file come before that stream."""

    def __init__(self, kind, code=None, stdout=(), stderr=(), stdout_at=0, stderr_at=0):
        self.kind, self.code = kind, code
        self.stdout, self.stderr = list(stdout), list(stderr)
        self.stdout_at, self.stderr_at = stdout_at, stderr_at


def _sections(lines, start):
    """(stdout, stdout_at, stderr, stderr_at) of the labelled sections from line `start` on. Each stream
    is the lines under the first heading of its own after `start`, up to the other stream's heading or
    the end: the two headings in either order (Compiler Explorer prints stdout's first, a copy put
    together by hand may not), and no line after a heading is dropped."""
    at = {h: next((i for i in range(start, len(lines)) if lines[i] == h), None) for h in (CE_STDOUT, CE_STDERR)}

    def section(heading, other):
        if at[heading] is None:
            return [], 0
        end = at[other] if at[other] is not None and at[other] > at[heading] else len(lines)
        return lines[at[heading] + 1:end], at[heading] + 1
    stdout, out_at = section(CE_STDOUT, CE_STDERR)
    stderr, err_at = section(CE_STDERR, CE_STDOUT)
    return stdout, out_at, stderr, err_at


def classify(lines):
    """The Pane of a saved output's lines (see Pane)."""
    returned = next((i for i, ln in enumerate(lines) if CE_RETURNED.match(ln)), None)
    if returned is None:
        if CE_STDOUT in lines or CE_STDERR in lines:
            first = min(lines.index(h) for h in (CE_STDOUT, CE_STDERR) if h in lines)
            stdout, out_at, stderr, err_at = _sections(lines, first)
            return Pane("partial", None, stdout, stderr, out_at, err_at)
        return Pane("plain", None, lines, (), 0, 0)
    code = int(CE_RETURNED.match(lines[returned]).group(1))
    after = [ln for ln in lines[returned + 1:] if ln.strip()]
    compiler_above = any(CE_COMPILER_RETURNED.match(ln) for ln in lines[:returned])
    if (after and after[0] not in (CE_STDOUT, CE_STDERR)) or (not after and compiler_above):
        return Pane("output", code, lines[returned + 1:], (), returned + 1, 0)
    stdout, out_at, stderr, err_at = _sections(lines, returned + 1)
    return Pane("executor", code, stdout, stderr, out_at, err_at)


def output_pane_refusal(name):
    return (f"{name} is the compiler's Output pane: it prints the program's stderr and stdout without "
            f"labels, so neither can be judged; {WHAT_TO_COPY}")


def _read(path, limit=PASTE_LIMIT, holds="any lesson prints"):
    """(text, lines, Pane) of a saved output; the one-line refusals every reader shares."""
    text = read_pasted_file(path, limit=limit, holds=holds)
    if text.startswith("# suite transcript"):
        raise UsageError(f"{path} is a recorded transcript, not a program's output")
    lines = tidy_headings(text.splitlines())
    bad = next((n for n, ln in enumerate(lines, 1) if ln.startswith("Program returned:") and not CE_RETURNED.match(ln)), None)
    if bad is not None:  # not a partial pane: its exit-code line is there, misshapen
        raise UsageError(f"{path}:{bad}: '{lines[bad - 1]}' is not Compiler Explorer's exit-code line "
                         f"('Program returned: N', N an integer): copy the pane as Compiler Explorer shows it")
    pane = _classified(lines, str(path))
    refuse_unprinted(pane.stdout, path, pane.stdout_at)
    refuse_unprinted(pane.stderr, path, pane.stderr_at)
    return text, lines, pane


def _classified(lines, name):
    """The Pane of a saved output's lines, refused in one line where it is no program's output (a failed
    or unrun build) or is the compiler's Output pane."""
    refuse_unrun(lines, name)
    pane = classify(lines)
    if pane.kind == "output":
        raise UsageError(output_pane_refusal(name))
    return pane


def _join(lines):
    return "\n".join(lines) + "\n" if lines else ""


def read_pasted(stdout_path, stderr_path=None, exit_code=None, expected=None):
    """(result, notes): output the user saved, ready for compare(). Either Compiler Explorer's
    executor pane copied whole (its own exit code and both streams; --stderr or an --exit-code that
    differs from its 'Program returned: N' is refused, never silently preferred), or a program's
    stdout saved by hand (what --stderr / --exit-code do not give is taken from the recording
    `expected`, and a note says so). A partial pane (from 'Program stdout' on) needs --exit-code.
    The result's 'origin' makes compare's messages name lines of the user's files.
    One-line errors: a failed build's pane (exit 1); a transcript or a copy of one (its placeholders)
    instead of an output, the compiler's Output pane, a pane that did not run, a file that is too large,
    not a regular file or not text (exit 2)."""
    text, _, pane = _read(stdout_path)
    name, notes = str(stdout_path), []
    origin = {"stdout": (name, pane.stdout_at)}
    stderr, code = None, exit_code
    if pane.kind == "plain":
        stdout = text
    else:
        if stderr_path is not None:
            raise UsageError(f"--stderr {stderr_path}: {name} is a Compiler Explorer pane, which holds the "
                             f"program's stderr itself (empty where it has no 'Program stderr' heading); drop --stderr")
        if pane.kind == "executor" and exit_code is not None and exit_code != pane.code:
            raise UsageError(f"--exit-code {exit_code}: {name} says 'Program returned: {pane.code}', and the pane's "
                             f"own exit code is the one compared; drop --exit-code")
        if pane.kind == "partial" and exit_code is None:
            raise UsageError(f"{name}: a partial pane: it starts at '{CE_STDOUT}' without the 'Program returned: N' "
                             f"line above it, so its exit code is unknown: give it with --exit-code N, or {WHAT_TO_COPY}")
        stdout, stderr = _join(pane.stdout), _join(pane.stderr)
        origin["stderr"] = (name, pane.stderr_at)
        if pane.kind == "executor":
            code = pane.code
            notes.append("read as Compiler Explorer's executor pane ('Program returned', 'Program stdout', "
                         "'Program stderr'; a stream without its heading is empty)")
        else:
            notes.append(f"read as a pane from '{CE_STDOUT}' on, with the exit code you gave (--exit-code {code})")
    if stderr_path is not None:
        stderr, origin["stderr"] = read_pasted_file(stderr_path), (str(stderr_path), 0)
        refuse_unprinted(stderr.splitlines(), stderr_path)
    if stderr is None:
        notes.append("stderr not compared (give --stderr FILE)")
    if code is None:
        notes.append("exit code not compared (give --exit-code N)")
    expected = expected or {"stderr": "", "exit_code": 0}
    return {"stdout": stdout, "stderr": expected["stderr"] if stderr is None else stderr,
            "exit_code": expected["exit_code"] if code is None else code, "origin": origin}, notes


def read_pane(path):
    """The result of Compiler Explorer's executor pane saved whole, for the exercise verdict. No
    verdict without evidence: a file without the 'Program returned: N' line is not judged
    (UsageError saying what to copy), nor is the compiler's Output pane, nor a file far larger than
    the pane can be (PANE_LIMIT)."""
    _, _, pane = _read(path, PANE_LIMIT, f"a Compiler Explorer executor pane holds: it shows at most "
                                         f"{CE_OUTPUT_BYTES // 1024} KiB of each stream")
    if pane.kind == "partial":
        raise UsageError(f"{path}: not judged: a partial pane (it starts at '{CE_STDOUT}'; the 'Program "
                         f"returned: N' line above it, the exit code, is missing); {WHAT_TO_COPY}")
    if pane.kind == "plain":
        raise UsageError(f"{path}: not judged: it has no 'Program returned: N' line, so the exit code is "
                         f"unknown; {WHAT_TO_COPY}")
    origin = {"stdout": (str(path), pane.stdout_at), "stderr": (str(path), pane.stderr_at)}
    return {"stdout": _join(pane.stdout), "stderr": _join(pane.stderr), "exit_code": pane.code, "origin": origin}
