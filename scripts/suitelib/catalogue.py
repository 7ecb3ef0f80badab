"""The catalogue of scripts/catalogue/<lesson>.json: mutants (planted bugs the lesson's gates must
catch) and student attempts (wrong ones the exercise check must reject, correct variants it must
accept). Both are built with the lesson's Build: line in a scratch folder and run on the GPU."""

import json
import re
import subprocess
import tempfile
from pathlib import Path

from . import EXIT_FAIL, SuiteError, read_text
from .model import lesson, parse_regions, programs
from .running import run_binary

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
    def __init__(self, name, description, old, new, expect=None, blind_spot=None, args=None, sanitizer=None):
        super().__init__(f"mutant '{name}'", old, new)
        self.name, self.description = name, description
        self.expect, self.blind_spot, self.args = expect, blind_spot, args
        # A race may print right numbers on one GPU and wrong ones on another: such a mutant is
        # judged by a compute-sanitizer tool (e.g. racecheck) on the program's Sanitize: run.
        self.sanitizer = sanitizer


class Attempt:
    def __init__(self, lesson_name, data):
        self.lesson = lesson_name
        self.region, self.name = data["region"], data["name"]
        self.kind, self.base = data["kind"], data.get("base", "starter")
        self.description, self.args = data.get("description", ""), data.get("args")
        self.edits = [Edit(f"attempt '{self.name}' edit {i + 1}", e["old"], e["new"])
                      for i, e in enumerate(data.get("edits", []))]

    def apply(self, text):
        for edit in self.edits:
            text = edit.apply(text)
        return text


class Catalogue:
    def __init__(self, lesson_name, student_worded=(), mutants=(), attempts=(), path=None):
        self.lesson, self.path = lesson_name, path
        self.student_worded = list(student_worded)
        self.mutants, self.attempts = list(mutants), list(attempts)


def load_one(path):
    data = json.loads(read_text(path, "catalogue"))
    name = data["lesson"]
    mutants = [Mutant(m["name"], m["description"], m["old"], m["new"], m.get("expect"), m.get("blind_spot"),
                      m.get("args"), m.get("sanitizer")) for m in data.get("mutants", [])]
    attempts = [Attempt(name, a) for a in data.get("attempts", [])]
    worded = data.get("exercise", {}).get("student_worded", [])
    return Catalogue(name, worded, mutants, attempts, path)


def load(root):
    """{lesson: Catalogue} from ROOT/scripts/catalogue/*.json; SuiteError naming a malformed file."""
    cats = {}
    for path in sorted((Path(root) / "scripts" / "catalogue").glob("*.json")):
        try:
            cat = load_one(path)
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise SuiteError(f"{path.relative_to(root)}: malformed catalogue: {exc}")
        cats[cat.lesson] = cat
    return cats


def prose(text):
    """Source text with comment line breaks joined, so a sentence can span comment lines."""
    return re.sub(r"\s*\n\s*//\s*", " ", text)


def check_mutants(root):
    """Every mutant still applies exactly once; every lesson has enough; plus the attempts check."""
    errors, cats = [], load(root)
    for name, cat in sorted(cats.items()):
        path = Path(root) / "lessons" / (name + ".cu")
        if not path.exists():
            errors.append(f"lessons/{name}.cu:1: the catalogue names a lesson that does not exist")
            continue
        text = read_text(path)
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
    for prog in programs(root):
        if not prog.is_starter and (prog.name not in cats or not cats[prog.name].mutants):
            errors.append(f"{prog.rel}:1: lesson has no mutants in the catalogue (scripts/catalogue/{prog.name}.json)")
    return errors + check_attempts(root)


def base_program(root, attempt):
    return lesson(root, attempt.lesson, starter=attempt.base == "starter")


def check_attempts(root):
    """Every attempt's edits apply exactly once; >= 2 wrong and >= 2 correct per solution region."""
    errors, cats = [], load(root)
    for prog in (p for p in programs(root) if not p.is_starter):
        cat = cats.get(prog.name)
        where = f"scripts/catalogue/{prog.name}.json"
        regions = [r.name for r in parse_regions(prog.rel, prog.text)[0] if r.kind == "solution"]
        attempts = cat.attempts if cat else []
        for region in regions:
            for kind in ("wrong", "correct"):
                n = sum(1 for a in attempts if a.region == region and a.kind == kind)
                if n < MIN_ATTEMPTS:
                    errors.append(f"{where}:1: region '{region}' of {prog.rel} has {n} {kind} attempts (need {MIN_ATTEMPTS})")
        for a in attempts:
            if a.region not in regions:
                errors.append(f"{where}:1: attempt '{a.name}' names region '{a.region}', not a solution region of {prog.rel}")
            if a.kind not in ("wrong", "correct") or a.base not in ("lesson", "starter"):
                errors.append(f"{where}:1: attempt '{a.name}': kind must be wrong|correct, base lesson|starter")
                continue
            try:
                a.apply(base_program(root, a).text)
            except SuiteError as exc:
                errors.append(f"{where}:1: {exc}")
    return errors


def build_in_scratch(prog, text, tmp):
    """Write text under the program's file name in tmp and compile it with its Build: line.

    Returns (binary path, None) or (None, the compiler's first error line)."""
    argv = prog.build_argv()
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


def run_mutant(root, prog, mutant):
    """Build and run one mutant in a scratch folder; return its record entry."""
    entry = {"name": mutant.name, "description": mutant.description}
    with tempfile.TemporaryDirectory(prefix="suite-mutant-") as tmp:
        binary, failure = build_in_scratch(prog, mutant.apply(prog.text), tmp)
        if binary is None:
            entry.update(killed=False, outcome=failure)
            return entry
        if mutant.sanitizer:
            return _sanitized_mutant(entry, prog, mutant, binary)
        args = mutant.args if mutant.args is not None else prog.runs()[0].args
        result = run_binary(binary, args)
    gate_named = mutant.expect is None or mutant.expect in result["stderr"]
    entry["killed"] = result["exit_code"] == EXIT_FAIL and gate_named
    entry["outcome"] = one_line(result)
    if mutant.blind_spot and not entry["killed"]:
        entry["blind_spot"] = mutant.blind_spot
    return entry


def _sanitized_mutant(entry, prog, mutant, binary):
    """Killed when the named compute-sanitizer tool reports findings on the Sanitize: run."""
    from .verify import sanitizer_findings
    options, args = prog.sanitize_spec()
    findings, log = sanitizer_findings(binary, mutant.args if mutant.args is not None else args,
                                       mutant.sanitizer, options)
    entry["killed"] = bool(findings)
    entry["outcome"] = (f"{mutant.sanitizer}: {findings} finding(s)" if findings is not None
                        else f"{mutant.sanitizer}: no verdict: {log[:200]}")
    if mutant.blind_spot and not entry["killed"]:
        entry["blind_spot"] = mutant.blind_spot
    return entry


def run_attempt(root, attempt, gpu, worded):
    """Build one attempt with the lesson's Build line, judge it by the exercise verdict; record entry."""
    from .exercises import verdict
    from .model import find_lesson_run
    from .transcripts import parse_transcript
    entry = {"lesson": attempt.lesson, "region": attempt.region, "name": attempt.name, "kind": attempt.kind}
    les = lesson(root, attempt.lesson)
    run = find_lesson_run(root, attempt.lesson, attempt.args)  # the LESSON's recording of that run
    with tempfile.TemporaryDirectory(prefix="suite-attempt-") as tmp:
        binary, failure = build_in_scratch(les, attempt.apply(base_program(root, attempt).text), tmp)
        if binary is None:
            entry.update(accepted=False, outcome=failure)
            return entry
        result = run_binary(binary, run.args)
    cmp = verdict(parse_transcript(run.transcript_path(gpu)), result, worded)
    entry["accepted"] = cmp.ok
    entry["outcome"] = ("accepted: " + cmp.decided()) if cmp.ok else \
        ("rejected: " + cmp.problems[0].splitlines()[0])[:300]
    return entry


def attempt_entry_ok(entry):
    return entry.get("accepted") is (entry.get("kind") == "correct")


def mutant_table(results):
    rows = ["| lesson | mutant | what it plants | killed | outcome |", "|---|---|---|---|---|"]
    for rel, entries in sorted(results.items()):
        for e in entries:
            verdict = "yes" if e["killed"] else ("blind spot" if e.get("blind_spot") else "SURVIVED")
            rows.append(f"| {rel} | {e['name']} | {e['description']} | {verdict} | {e['outcome'][:120]} |")
    return "\n".join(rows) + "\n"


def attempt_table(entries):
    rows = ["| lesson | region | attempt | kind | accepted | as it should | outcome |", "|---|---|---|---|---|---|---|"]
    for e in entries:
        rows.append(f"| {e['lesson']} | {e['region']} | {e['name']} | {e['kind']} | {e['accepted']} | "
                    f"{'yes' if attempt_entry_ok(e) else 'NO'} | {e['outcome'][:120]} |")
    return "\n".join(rows) + "\n"




def run_parallel(fn, jobs):
    import concurrent.futures
    import os
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(8, (os.cpu_count() or 2) - 1))) as pool:
        return list(pool.map(lambda job: fn(*job), jobs))


def selected(root, names, what):
    cats = load(root)
    names = names or sorted(cats)
    unknown = [n for n in names if n not in cats]
    if unknown:
        from . import UsageError
        raise UsageError(f"{what}: no catalogue for {unknown[0]!r} (have: {', '.join(sorted(cats))})")
    return cats, names


def cmd_mutate(args):
    """(GPU) Build and run every mutant; record killed/survived in expected/<gpu>/verify.json."""
    from .running import require_gpu
    from .verify import load_record, write_record
    cats, names = selected(args.root, args.names, "mutate")  # names first, then the GPU
    facts = require_gpu("mutate")
    root, gpu = args.root, args.gpu or facts.slug
    jobs = [(root, lesson(root, n), m) for n in names for m in cats[n].mutants]
    results = {}
    for (_, prog, _), entry in zip(jobs, run_parallel(run_mutant, jobs)):
        results.setdefault(prog.rel, []).append(entry)
    record = load_record(root, gpu)
    if record is None:
        raise SuiteError(f"mutate: expected/{gpu}/verify.json does not exist; run verify first")
    for entry in record["programs"]:
        if entry["program"] in results:
            entry["mutants"] = results[entry["program"]]
    write_record(root, gpu, record)
    print(mutant_table(results))
    survivors = [e for es in results.values() for e in es if not e["killed"] and not e.get("blind_spot")]
    return EXIT_FAIL if survivors else 0


def cmd_attempts(args):
    """(GPU) Build and judge every student attempt; record them under student_attempts."""
    from .running import require_gpu
    from .verify import load_record, write_record
    cats, names = selected(args.root, args.names, "attempts")  # names first, then the GPU
    facts = require_gpu("attempts")
    root, gpu = args.root, args.gpu or facts.slug
    jobs = [(root, a, gpu, cats[n].student_worded) for n in names for a in cats[n].attempts]
    entries = run_parallel(run_attempt, jobs)
    record = load_record(root, gpu)
    if record is None:
        raise SuiteError(f"attempts: expected/{gpu}/verify.json does not exist; run verify first")
    record["student_attempts"] = [e for e in record.get("student_attempts", []) if e["lesson"] not in names] + entries
    write_record(root, gpu, record)
    print(attempt_table(entries))
    return EXIT_FAIL if not all(attempt_entry_ok(e) for e in entries) else 0
