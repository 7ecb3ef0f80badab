"""Which kernels a mutant's edit changes, so its racecheck or synccheck run instruments those alone.

A sanitizer mutant is its lesson but for one edit. Where the edit lies inside a device-only function
(__global__, or __device__ without __host__), the host code is the lesson's, and the kernels the edit
changes are those whose PTX differs: both sources are compiled to PTX for the architecture the mutant
is built for (two compiles inside the mutant's job), and their .entry bodies compared. racecheck and
synccheck look at each kernel's own shared-memory accesses and barriers, so a kernel whose code is
unchanged is judged as in the lesson's own runs, as long as its shared-memory addresses do not
depend on data the edit changes. memcheck and initcheck can report in an unchanged kernel what a
changed one wrote (a buffer left unwritten, a bad index): those tools always instrument every
kernel. Anything else (an edit in host code, in a __host__ __device__ function or in a macro, PTX
outside the entries that differs, a compile that fails) gives None: every kernel, as before.
compute-sanitizer's --help (2025.3.1) says its --kernel-name filters are additive: a kernel that
matches any of them is checked.

On the H200 (2026-12-02, scripts/bench/racecheck_launches.py), racecheck of gemm_ladder's
async-b-not-awaited mutant took 48.3 s on the whole Sanitize: run and 7.7-7.8 s with the one kernel
the edit changes (`--kernel-name kne=` or `kns=` its mangled name), 20 hazards every way.
"""
import re
import subprocess
import tempfile
from pathlib import Path

from .model import skip_at

HEAD = re.compile(r"\b(?:__global__|__device__)\b")
NAMES = re.compile(r"%[a-z]+\d+|\$L__\w+")  # virtual registers and labels
REG_DECL = re.compile(r"^\s*\.reg\s.*$", re.M)
ENTRY = re.compile(r"^(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)\s*\(", re.M)


def blank_comments(text):
    """text with its comments and string and character literals as blanks (newlines kept), so every
    index still points where it did and no brace or keyword inside them counts."""
    out, i = list(text), 0
    while i < len(text):
        end = skip_at(text, i)
        if end is None:
            i += 1
            continue
        out[i:end] = [ch if ch == "\n" else " " for ch in text[i:end]]
        i = end
    return "".join(out)


def matching_brace(text, open_at):
    """Index of the } that closes the { at open_at, or None."""
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


DIRECTIVE = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)  # a preprocessor line and its continuations


def device_only_at(text, start, end):
    """Does text[start:end] lie inside the body of a function only device code has (__global__, or
    __device__ on a head without __host__)? Comments, literals and preprocessor lines are blanked
    first (a macro naming __device__ is no function head)."""
    code = DIRECTIVE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), blank_comments(text))
    for m in reversed(list(HEAD.finditer(code, 0, start))):
        brace = code.find("{", m.end())
        semi = code.find(";", m.end())
        if brace < 0 or brace > start or 0 <= semi < brace:
            continue  # a declaration or variable, or the edit lies in this head
        close = matching_brace(code, brace)
        if close is None or close < end:
            continue  # a function that ends before the edit
        head = max(code.rfind(c, 0, m.start()) for c in ";{}") + 1  # the whole head, however many lines
        return "__host__" not in code[head:brace]
    return False


def ptx_parts(ptx):
    """({entry name: its text}, the PTX outside every entry)."""
    entries, rest, pos = {}, [], 0
    for m in ENTRY.finditer(ptx):
        if m.start() < pos:
            continue
        brace = ptx.find("{", m.end())
        close = matching_brace(ptx, brace) if brace >= 0 else None
        if close is None:
            break
        rest.append(ptx[pos:m.start()])
        entries[m.group(1)] = ptx[m.start():close + 1]
        pos = close + 1
    rest.append(ptx[pos:])
    return entries, "".join(rest)


def canonical(entry):
    """An entry's PTX with its register declarations dropped and its virtual registers and labels
    renamed in order of first use: an edit in one kernel can change those numbers in another whose
    code is the same (gemm_ladder's gemmWarpTiled, compiled beside the async-b-not-awaited edit)."""
    seen, counts = {}, {}

    def rename(m):
        if m.group(0) not in seen:
            kind = re.match(r"%[a-z]+|\$L__", m.group(0)).group(0)
            counts[kind] = counts.get(kind, 0) + 1
            seen[m.group(0)] = f"{kind}#{counts[kind]}"
        return seen[m.group(0)]
    return NAMES.sub(rename, REG_DECL.sub("", entry))


def ptx_argv(build_argv, arch, out):
    """The Build: line's nvcc command made to write PTX for arch (sm_N or compute_N) to out: no line
    information (an edit that moves lines would change every later kernel's), no link options."""
    argv, skip = [], False
    for a in build_argv:
        if skip:
            skip = False
        elif a in ("-o", "-gencode"):
            skip = True
        elif a in ("-lineinfo", "-G", "-g") or a.startswith(("-l", "-arch", "--gpu-architecture", "-code",
                                                                "-gencode=", "--generate-code")):
            continue
        else:
            argv.append(a)
    return argv + [f"-arch={arch}", "-ptx", "-o", str(out)]


def compile_ptx(build_argv, name, text, arch, folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    out = folder / "out.ptx"
    try:
        done = subprocess.run(ptx_argv(build_argv, arch, out), cwd=folder, capture_output=True, text=True,
                              timeout=900)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.read_text(encoding="utf-8") if done.returncode == 0 and out.is_file() else None


def changed_kernels(prog, old_text, new_text, edit_at, arch, compile_fn=compile_ptx):
    """The mangled names of the kernels whose PTX the edit changes, sorted; None where the edit is
    not inside a device-only function, a compile fails, PTX outside the entries differs, or no
    entry does (then every kernel is instrumented). edit_at: (start, end) of the edit in new_text;
    arch: what the mutant is built for (sm_90, sm_75)."""
    if arch is None or not device_only_at(new_text, *edit_at):
        return None
    with tempfile.TemporaryDirectory(prefix="suite-ptx-") as tmp:
        ptx = [compile_fn(prog.build_argv(), prog.path.name, t, arch, Path(tmp) / side)
               for side, t in (("lesson", old_text), ("mutant", new_text))]
    if None in ptx:
        return None
    (old, old_rest), (new, new_rest) = ptx_parts(ptx[0]), ptx_parts(ptx[1])
    if old_rest != new_rest or set(old) != set(new):
        return None
    return sorted(k for k in new if canonical(new[k]) != canonical(old[k])) or None
