"""The catalogue of scripts/catalogue/<lesson>.json: the exercise's own rules (student-worded lines,
the speed check where speed is the point), mutants (planted bugs the lesson's gates must catch) and
student attempts (wrong ones the exercise check must reject, correct variants it must accept). This
module holds the data, its CPU checks, the scratch build and the mutant runner; the attempts are
judged by the student's own verdict (judge.py, through exercises.run_attempt)."""

import concurrent.futures
import json
import os
import re
import subprocess
import tempfile
from pathlib import Path

from . import EXIT_FAIL, SuiteError, UsageError, read_text
from .model import lesson, parse_regions, programs
from .running import run_binary
from . import builds, commonkernels, kernelscope

SANITIZER_SUMMARY = re.compile(r"(?:ERROR|RACECHECK) SUMMARY: (\d+) (?:errors?|hazards?)")
SANITIZER_TIMEOUT_S = 420
MIN_KILLED = 4
MIN_ATTEMPTS = 2  # wrong and correct, per solution region


class Edit:
    """An exact source edit whose `old` must occur exactly once."""

    def __init__(self, label, old, new):
        self.label, self.old, self.new = label, old, new

    def apply(self, text):
        count = text.count(self.old)
        if count != 1:
            raise SuiteError(f"{self.label}: its anchor occurs {count} times (want once): {self.old[:80]!r}")
        return text.replace(self.old, self.new)


class Mutant(Edit):
    def __init__(self, name, description, old, new, expect=None, blind_spot=None, args=None, sanitizer=None,
                 arch=None):
        super().__init__(f"mutant '{name}'", old, new)
        self.name, self.description = name, description
        self.expect, self.blind_spot, self.args = expect, blind_spot, args
        # A race may print right numbers on one GPU and wrong ones on another: such a mutant is
        # judged by a compute-sanitizer tool (e.g. racecheck) on the program's Sanitize: run.
        self.sanitizer = sanitizer
        # Code behind `#if __CUDA_ARCH__ >= 800` never runs in the Build: line's sm_75 build, not
        # even on a newer GPU (that runs the sm_75 PTX): a mutant of it is built with -arch=ARCH
        # ("native": the GPU at hand) in place of the Build: line's -arch.
        self.arch = arch


class Attempt:
    def __init__(self, lesson_name, data):
        self.lesson = lesson_name
        self.region, self.name = data["region"], data["name"]
        # kind: "wrong" (some recorded run or sanitizer must reject it), "correct" (every run passes,
        # and in a speed region the speed check too), or "slow" (a speed region's correct outputs
        # from the slow design: every run passes, and the speed check must fail it).
        self.kind, self.base = data["kind"], data.get("base", "starter")
        # An attempt is judged over every Run: line of its lesson, as a student's exercise is; an
        # own "args" is refused by check_attempts (kept here only to name it).
        self.description, self.args = data.get("description", ""), data.get("args")
        # A wrong attempt that no recorded output can show (it reads past an edge into values that
        # multiply by zero, say) names the sentence of the lesson's page that says so and what judges
        # it instead; verify records it accepted, and check requires that sentence on the page.
        self.blind_spot = data.get("blind_spot")
        self.edits = [Edit(f"attempt '{self.name}' edit {i + 1}", e["old"], e["new"])
                      for i, e in enumerate(data.get("edits", []))]

    def apply(self, text):
        for edit in self.edits:
            text = edit.apply(text)
        return text


class Speed:
    """Where speed is the point of an exercise ("exercise": {"speed": {...}}): the student's program,
    the lesson's own and the lesson with the region's body replaced by `slow` (correct but of the
    slow design) are timed in alternating rounds on one run; `figure` is a regex whose first group is
    the measured figure of the region's kernel (the first matching line after the first line that
    matches `after`, when given); `better` says whether a lower (ms) or higher (GFLOP/s) figure wins."""

    KEYS = {"region", "args", "time_args", "figure", "after", "better", "slow", "slow_description", "look_at", "rounds",
            "bar"}

    def __init__(self, data):
        unknown = set(data) - self.KEYS
        if unknown:
            raise KeyError(f"speed: unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(self.KEYS))})")
        self.region, self.figure, self.slow = data["region"], data["figure"], data["slow"]
        self.args = data.get("args")  # None: the lesson's first Run: line
        # Added to the run's arguments when timing, so a run times only what the figure needs (gemm_ladder:
        # -from 4 -to 4, step 4 alone); the run itself is still judged against its transcript in full.
        self.time_args = data.get("time_args", [])
        if not isinstance(self.time_args, list) or not all(isinstance(a, str) for a in self.time_args):
            raise ValueError(f"speed: time_args {self.time_args!r} is not a list of strings")
        self.after, self.better = data.get("after"), data.get("better", "lower")
        self.slow_description = data.get("slow_description", "the slow reference")
        self.look_at = data.get("look_at", "")
        self.rounds = int(data.get("rounds", 5))
        # Where the bar sits between the solution and the slow reference, in log terms (speed.SPEED_BAR
        # unless the exercise's measurements call for another: see speed.py).
        self.bar = data.get("bar")
        if self.bar is not None and (isinstance(self.bar, bool) or not isinstance(self.bar, (int, float))):
            raise ValueError(f"speed: bar {self.bar!r} is not a number (the fraction of the way, 0.5 up to, not including, 1)")


class Catalogue:
    def __init__(self, lesson_name, student_worded=(), mutants=(), attempts=(), path=None, speed=None):
        self.lesson, self.path = lesson_name, path
        self.student_worded = list(student_worded)
        self.mutants, self.attempts = list(mutants), list(attempts)
        self.speed = speed


def load_one(path):
    data = json.loads(read_text(path, "catalogue"))
    name = data["lesson"]
    mutants = [Mutant(m["name"], m["description"], m["old"], m["new"], m.get("expect"), m.get("blind_spot"),
                      m.get("args"), m.get("sanitizer"), m.get("arch")) for m in data.get("mutants", [])]
    attempts = [Attempt(name, a) for a in data.get("attempts", [])]
    exercise = data.get("exercise", {})
    worded = exercise.get("student_worded", [])
    speed = Speed(exercise["speed"]) if exercise.get("speed") else None
    return Catalogue(name, worded, mutants, attempts, path, speed)


def load(root):
    """{lesson: Catalogue} from ROOT/scripts/catalogue/*.json; SuiteError naming a malformed file."""
    cats = {}
    for path in sorted((Path(root) / "scripts" / "catalogue").glob("*.json")):
        try:
            cat = load_one(path)
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as exc:
            raise SuiteError(f"{path.relative_to(root)}: malformed catalogue: {exc}")
        cats[cat.lesson] = cat
    return cats


def prose(text):
    """Source text with comment line breaks joined, so a sentence can span comment lines."""
    return re.sub(r"\s*\n\s*//\s*", " ", text)


ARCH_GUARD = re.compile(r"^\s*#\s*if\b.*__CUDA_ARCH__\s*>=\s*(\d+)")


def arch_guard_at(text, pos):
    """The least __CUDA_ARCH__ the code at offset pos is compiled for: the largest N of the
    `#if ... __CUDA_ARCH__ >= N` branches (not their #else) that enclose it; 0 if none."""
    stack = []  # one entry per open #if: N while in its first branch, else 0
    for line in text[:pos].splitlines():
        directive = line.strip()
        if directive.startswith("#if"):
            m = ARCH_GUARD.match(line)
            stack.append(int(m.group(1)) if m else 0)
        elif directive.startswith("#elif") and stack:
            m = re.search(r"__CUDA_ARCH__\s*>=\s*(\d+)", line)
            stack[-1] = int(m.group(1)) if m else 0
        elif directive.startswith("#else") and stack:
            stack[-1] = 0
        elif directive.startswith("#endif") and stack:
            stack.pop()
    return max(stack, default=0)


NVCC_DEFAULT_ARCH = 750  # what nvcc 13.0 builds for when a command names no architecture
ARCH_VALUE = re.compile(r"native|sm_\d+[af]?")


def _arch_slots(argv):
    """Indices of argv that hold the target architecture: -arch=X, --gpu-architecture=X, or the
    word after -arch / --gpu-architecture."""
    slots = []
    for i, arg in enumerate(argv):
        if arg.startswith(("-arch=", "--gpu-architecture=")):
            slots.append(i)
        elif arg in ("-arch", "--gpu-architecture") and i + 1 < len(argv):
            slots.append(i + 1)
    return slots


def line_sm(argv):
    """The sm_N a Build: line names with -arch (sm_75), or None where it names none or another form
    (native, all, compute_N): beside those, verify adds no machine code of its own."""
    slots = _arch_slots(argv)
    value = argv[slots[0]].split("=", 1)[-1] if slots else ""
    return value if re.fullmatch(r"sm_\d+", value) else None


def build_arch(prog):
    """The Build: line's architecture as a __CUDA_ARCH__ value (sm_75: 750); nvcc's default where the
    line names none, 0 where it names one that is not sm_N (compute_N, native, all)."""
    argv = prog.build_argv()
    slots = _arch_slots(argv)
    if not slots:
        return NVCC_DEFAULT_ARCH
    m = re.fullmatch(r"sm_(\d+)[af]?", argv[slots[0]].split("=", 1)[-1])
    return int(m.group(1)) * 10 if m else 0


def native_arch():
    """sm_N of GPU 0 from nvidia-smi, or None. nvcc's own -arch=native warns and builds its default
    architecture when it sees no GPU, which would build a mutant of sm_80 code for sm_75 unseen."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader", "-i", "0"],
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.fullmatch(r"(\d+)\.(\d+)", done.stdout.strip())
    return f"sm_{m.group(1)}{m.group(2)}" if done.returncode == 0 and m else None


def check_mutants(root):
    """Every mutant still applies exactly once; every lesson has enough; a mutant of code that the
    Build: line's architecture never compiles names the one to build it for; plus the attempts check."""
    errors, cats = [], load(root)
    for name, cat in sorted(cats.items()):
        path = Path(root) / "lessons" / (name + ".cu")
        if not path.exists():
            errors.append(f"lessons/{name}.cu:1: the catalogue names a lesson that does not exist")
            continue
        text = read_text(path)
        try:
            built = build_arch(lesson(root, name))
        except SuiteError:  # none, two, or unbalanced quotes
            built = None  # the build-lines check names a Build: line it cannot read
        killable = [m for m in cat.mutants if not m.blind_spot]
        if len(killable) < MIN_KILLED:
            errors.append(f"lessons/{name}.cu:1: only {len(killable)} mutants expected to be killed (need {MIN_KILLED})")
        for m in cat.mutants:
            count = text.count(m.old)
            if count != 1:
                errors.append(f"lessons/{name}.cu:1: mutant '{m.name}' no longer applies: its anchor occurs "
                              f"{count} times (want once): {m.old[:80]!r}")
            if m.blind_spot and m.blind_spot not in prose(text):
                errors.append(f"lessons/{name}.cu:1: blind spot '{m.name}' cites a sentence the lesson "
                              f"no longer contains: {m.blind_spot!r}")
            if m.arch is not None and not ARCH_VALUE.fullmatch(str(m.arch)):
                errors.append(f"lessons/{name}.cu:1: mutant '{m.name}' has arch {m.arch!r}: want \"native\" "
                              f"or sm_N")
            at = text.find(m.old)
            guard = arch_guard_at(text, at) if count == 1 else 0
            if built is not None and guard > built and not m.arch:
                line = text[:at].count("\n") + 1
                what = f"sm_{built // 10}" if built else "an architecture this check cannot read"
                errors.append(f"lessons/{name}.cu:{line}: mutant '{m.name}' edits code compiled only for "
                              f"__CUDA_ARCH__ >= {guard}, which the Build: line's build ({what}) never "
                              f"runs: give it \"arch\": \"native\" (or an sm_ at least that new)")
    for prog in programs(root):
        if not prog.is_starter and (prog.name not in cats or not cats[prog.name].mutants):
            errors.append(f"{prog.rel}:1: lesson has no mutants in the catalogue (scripts/catalogue/{prog.name}.json)")
    return errors + check_attempts(root)


def prose_of_page(text):
    """A page's text with its line breaks and runs of blanks folded, so a sentence may span lines."""
    return " ".join(text.split())


def base_program(root, attempt):
    return lesson(root, attempt.lesson, starter=attempt.base == "starter")


def attempt_program(root, attempt):
    """(the lesson an attempt is built and judged as, the attempt's full text)."""
    return lesson(root, attempt.lesson), attempt.apply(base_program(root, attempt).text)


def prebuild(prog, text, arch=None, sass=None, same_code=False):
    """Build into builds.BUILD_CACHE ahead of the job that runs it (verify compiles while the GPU
    times); a failure is only reported by that job, which finds it in the cache."""
    with tempfile.TemporaryDirectory(prefix="suite-prebuild-") as tmp:
        return build_in_scratch(prog, text, tmp, arch, sass, same_code)[1]


def check_attempts(root):
    """Every attempt's edits apply exactly once; >= 2 wrong and >= 2 correct per solution region; no
    attempt carries its own args (all are judged over every Run: line); the speed rules are sound."""
    errors, cats = [], load(root)
    for prog in (p for p in programs(root) if not p.is_starter):
        cat = cats.get(prog.name)
        where = f"scripts/catalogue/{prog.name}.json"
        regions = [r.name for r in parse_regions(prog.rel, prog.text)[0] if r.kind == "solution"]
        attempts = cat.attempts if cat else []
        if cat and cat.speed:
            errors += [f"{where}:1: speed: {e}" for e in speed_problems(prog, cat.speed, regions)]
            if not any(a.kind == "slow" and a.region == cat.speed.region for a in attempts):
                errors.append(f"{where}:1: speed region '{cat.speed.region}' has no slow attempt (a correct "
                              f"kernel of the slow design that the speed check must fail)")
        for region in regions:
            for kind in ("wrong", "correct"):
                n = sum(1 for a in attempts if a.region == region and a.kind == kind)
                if n < MIN_ATTEMPTS:
                    errors.append(f"{where}:1: region '{region}' of {prog.rel} has {n} {kind} attempts (need {MIN_ATTEMPTS})")
        for a in attempts:
            if a.region not in regions:
                errors.append(f"{where}:1: attempt '{a.name}' names region '{a.region}', not a solution region of {prog.rel}")
            if a.args is not None:
                errors.append(f"{where}:1: attempt '{a.name}' has its own \"args\": remove them; every attempt "
                              f"is judged over all the Run: lines of {prog.rel}, as a student's exercise is")
            if a.blind_spot is not None:
                page = Path(root) / "lessons" / (prog.name + ".md")
                text = prose_of_page(read_text(page, "page")) if page.is_file() else ""
                if a.kind != "wrong":
                    errors.append(f"{where}:1: attempt '{a.name}': only a wrong attempt can be a blind spot")
                elif " ".join(a.blind_spot.split()) not in text:
                    errors.append(f"{where}:1: blind spot '{a.name}' cites a sentence lessons/{prog.name}.md "
                                  f"does not contain: {a.blind_spot!r}")
            if a.kind not in ("wrong", "correct", "slow") or a.base not in ("lesson", "starter"):
                errors.append(f"{where}:1: attempt '{a.name}': kind must be wrong|correct|slow, base lesson|starter")
                continue
            if a.kind == "slow" and not (cat.speed and a.region == cat.speed.region):
                errors.append(f"{where}:1: attempt '{a.name}' is slow, but its region '{a.region}' has no speed rule")
            try:
                a.apply(base_program(root, a).text)
            except SuiteError as exc:
                errors.append(f"{where}:1: {exc}")
    return errors


def speed_problems(prog, speed, regions):
    """What is wrong with a speed rule on the CPU side (its region, run, regexes, slow body)."""
    errors = []
    if speed.region not in regions:
        errors.append(f"region {speed.region!r} is not a solution region of {prog.rel}")
    if speed.better not in ("lower", "higher"):
        errors.append(f"better must be 'lower' (a time) or 'higher' (a rate), not {speed.better!r}")
    if speed.rounds < 3:
        errors.append(f"rounds = {speed.rounds}: a median and a spread need at least 3 rounds")
    for key in ("figure", "after"):
        rx = getattr(speed, key)
        if rx is None:
            continue
        try:
            groups = re.compile(rx).groups
        except re.error as exc:
            errors.append(f"{key} {rx!r} is not a regex: {exc}")
            continue
        if key == "figure" and groups < 1:
            errors.append(f"figure {rx!r} has no (group) to read the number from")
    if speed.args is not None and list(speed.args) not in [r.args for r in prog.runs()]:
        errors.append(f"args {' '.join(speed.args)!r} are not one of the Run: lines of {prog.rel}")
    if not prog.runs():
        errors.append(f"{prog.rel} has no Run: line to time")
    if not speed.slow.strip():
        errors.append("slow is empty: give the body of a correct but slow version of the region")
    if speed.bar is not None and not (isinstance(speed.bar, (int, float)) and 0.5 <= speed.bar < 1.0):
        errors.append(f"bar = {speed.bar!r}: give the fraction of the way from the solution to the slow "
                      f"reference, in log terms, from 0.5 up to (not including) 1")
    return errors


def replace_region(text, region, body):
    """text with the body of its solution region `region` replaced (marker lines kept)."""
    lines = text.splitlines(keepends=True)
    found = [r for r in parse_regions("", text)[0] if r.kind == "solution" and r.name == region]
    if len(found) != 1:
        raise SuiteError(f"no solution region {region!r} to replace")
    r = found[0]
    return "".join(lines[:r.open_line]) + body.rstrip("\n") + "\n" + "".join(lines[r.close_line - 1:])


def build_in_scratch(prog, text, tmp, arch=None, sass=None, same_code=False):
    """Write text under the program's file name in tmp and compile it with its Build: line (with
    -arch=ARCH in place of the line's -arch where arch is given; with the machine code of sass,
    such as sm_90, added beside the line's -arch=sm_N where given and different: then that GPU runs
    it without compiling its PTX first); through
    builds.BUILD_CACHE where set. same_code: that machine code compiled from the line's own PTX
    (compute_75 for sm_75), so the GPU runs the code the line builds (__CUDA_ARCH__ 750: a mutant
    of a path below sm_80 stays on it) as its driver would compile it, but ahead of the run.

    Returns (binary path, None) or (None, the compiler's first error line)."""
    argv = prog.build_argv()
    if sass and not arch and line_sm(argv) not in (None, sass):
        virtual = line_sm(argv)[3:] if same_code else sass[3:]
        argv[1:1] = ["-gencode", f"arch=compute_{virtual},code={sass}"]
    if arch:
        target = native_arch() if arch == "native" else arch
        if target is None:
            return None, "cannot build for the GPU at hand: nvidia-smi reports no compute capability"
        slots = _arch_slots(argv)
        for i in slots:
            argv[i] = argv[i].split("=", 1)[0] + "=" + target if "=" in argv[i] else target
        if not slots:
            argv.insert(1, f"-arch={target}")
    if builds.BUILD_CACHE is not None:
        return builds.BUILD_CACHE.build(text, argv, lambda folder: _compile(prog, text, argv, folder))
    return _compile(prog, text, argv, tmp)


def _compile(prog, text, argv, tmp):
    (Path(tmp) / prog.path.name).write_text(text, encoding="utf-8")
    try:
        built = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"cannot compile: {exc}"
    if built.returncode != 0:
        return None, "does not compile: " + (built.stderr.strip().splitlines() or [""])[0]
    return Path(tmp) / argv[argv.index("-o") + 1], None




def one_line(result, limit=300):
    return (f"exit {result['exit_code']}: " + " | ".join(
        line for line in result["stderr"].splitlines() if line.strip()))[:limit]


def run_mutant(root, prog, mutant, sass=None):
    """Build and run one mutant in a scratch folder; return its record entry. sass: the GPU's own
    machine code, compiled from the Build: line's PTX beside it (build_in_scratch's same_code), so
    the run compiles no PTX (verify: on the H200 each gemm_ladder mutant's driver compile took about
    as long as its run)."""
    entry = {"name": mutant.name, "description": mutant.description}
    if mutant.arch:
        entry["arch"] = mutant.arch
    clock = builds.Stopwatch()
    with tempfile.TemporaryDirectory(prefix="suite-mutant-") as tmp:
        binary, failure = clock.lap("build", build_in_scratch, prog, mutant.apply(prog.text), tmp, mutant.arch,
                                    sass, True)
        entry["seconds"] = clock.laps
        if binary is None:
            entry.update(killed=False, outcome=failure)
            return entry
        if mutant.sanitizer:
            return clock.lap("sanitize", _sanitized_mutant, entry, prog, mutant, binary)
        args = mutant.args if mutant.args is not None else prog.runs()[0].args
        result = clock.lap("run", run_binary, binary, args)
    gate_named = mutant.expect is None or mutant.expect in result["stderr"]
    entry["killed"] = result["exit_code"] == EXIT_FAIL and gate_named
    entry["outcome"] = one_line(result)
    if mutant.blind_spot and not entry["killed"]:
        entry["blind_spot"] = mutant.blind_spot
    return entry


def sanitizer_findings(binary, args, tool, options=()):
    """(findings, log text) of one compute-sanitizer tool; (None, why) when it gave no summary."""
    cmd = ["compute-sanitizer", "--tool", tool, "--print-limit", "20"] + list(options)
    try:
        result = run_binary(binary, args, timeout=SANITIZER_TIMEOUT_S, prefix=cmd)
    except SuiteError as exc:
        return None, str(exc)
    text = result["stdout"] + result["stderr"]
    counts = [int(n) for n in SANITIZER_SUMMARY.findall(text)]
    if not counts:
        return None, f"no sanitizer summary (exit {result['exit_code']}): {text[-400:]}"
    return sum(counts), text if sum(counts) else ""


PADDING_BYTES = 65536  # compute-sanitizer --padding: bytes of padding after every CUDA allocation
SCOPED_TOOLS = ("racecheck", "synccheck")  # they judge each kernel's own accesses (kernelscope)


def mutant_kernels(prog, mutant, changed=kernelscope.changed_kernels):
    """The kernels a racecheck or synccheck mutant's run instruments: those its edit changes
    (kernelscope), or None (every kernel, and always for memcheck and initcheck)."""
    old, text = getattr(mutant, "old", None), getattr(prog, "text", None)
    if getattr(mutant, "sanitizer", None) not in SCOPED_TOOLS:
        return None
    if not isinstance(old, str) or not isinstance(text, str) or text.count(old) != 1:
        return None
    target = getattr(mutant, "arch", None) or line_sm(prog.build_argv())
    if target == "native":
        target = native_arch()
    start = text.find(old)
    return changed(prog, text, mutant.apply(text), (start, start + len(mutant.new)), target)


def _sanitized_mutant(entry, prog, mutant, binary):
    """Killed when the named compute-sanitizer tool reports findings on the Sanitize: run, on the
    kernels the edit changes (the lesson's own sanitizer runs cover the rest) or on every kernel;
    memcheck with padding after every allocation (a read past one buffer otherwise lands unseen in
    the next where the allocator placed it right after)."""
    options, args = prog.sanitize_spec()
    if mutant.sanitizer == "memcheck":  # padded, as the programs', attempts' and student's memcheck runs
        options = ["--padding", str(PADDING_BYTES)] + list(options)
    if mutant.sanitizer == "racecheck":  # the common kernels are the lesson's: their probes cover them
        options = list(options) + commonkernels.skip_options(commonkernels.racecheck_excludes(prog.text))
    kernels = mutant_kernels(prog, mutant)
    if kernels:
        entry["kernels"] = kernels
        options = list(options) + [o for k in kernels for o in ("--kernel-name", f"kne={k}")]
    findings, log = sanitizer_findings(binary, mutant.args if mutant.args is not None else args,
                                       mutant.sanitizer, options)
    entry["killed"] = bool(findings)
    where = f" on {len(kernels)} changed kernel(s)" if kernels else ""
    entry["outcome"] = (f"{mutant.sanitizer}: {findings} finding(s){where}" if findings is not None
                        else f"{mutant.sanitizer}: no verdict: {log[:200]}")
    if mutant.blind_spot and not entry["killed"]:
        entry["blind_spot"] = mutant.blind_spot
    return entry


def mutant_table(results):
    rows = ["| lesson | mutant | what it plants | killed | outcome |", "|---|---|---|---|---|"]
    for rel, entries in sorted(results.items()):
        for e in entries:
            verdict = "yes" if e["killed"] else ("blind spot" if e.get("blind_spot") else "SURVIVED")
            rows.append(f"| {rel} | {e['name']} | {e['description']} | {verdict} | {e['outcome'][:120]} |")
    return "\n".join(rows) + "\n"


def run_parallel(fn, jobs):
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(8, (os.cpu_count() or 2) - 1))) as pool:
        return list(pool.map(lambda job: fn(*job), jobs))


def selected(root, names, what):
    cats = load(root)
    names = names or sorted(cats)
    unknown = [n for n in names if n not in cats]
    if unknown:
        raise UsageError(f"{what}: no catalogue for {unknown[0]!r} (have: {', '.join(sorted(cats))})")
    return cats, names
