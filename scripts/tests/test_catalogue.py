"""Tests of suitelib.catalogue: the mutants and student attempts of scripts/catalogue/*.json,
their CPU checks, and the attempt runner's verdicts (builds faked, so no GPU is needed)."""

import re
import unittest
from pathlib import Path

from helpers import Scratch, needs_nvcc, patched, recording_compile
from suitelib import SuiteError, catalogue, exercises, sanitize
from suitelib.model import resolve_source


class CatalogueScratch(Scratch):
    """The miniature suite, for the catalogue's tests (edit_catalogue: see helpers.Scratch)."""


class TestMutants(CatalogueScratch):
    def test_catalogue_applies(self):
        self.assertCheckPasses("mutants")

    def test_anchor_gone(self):
        self.edit("lessons/demo.cu", "return 2 * v;", "return v + v;")
        self.assertCheckFails("mutants", "lessons/demo.cu:1: mutant 'm2' no longer applies", "occurs 0 times")

    def test_anchor_ambiguous(self):
        self.edit("lessons/demo.cu", "int main(", "int other() { return 42; }\nint main(")
        self.assertCheckFails("mutants", "mutant 'm1' no longer applies", "occurs 2 times")

    def test_too_few_killable_mutants(self):
        self.edit_catalogue(lambda d: d["mutants"][0].update(blind_spot="the lesson says so"))
        self.assertCheckFails("mutants", "only 3 mutants expected to be killed (need 4)",
                              "blind spot 'm1' cites a sentence the lesson no longer contains")

    def test_lesson_without_catalogue(self):
        (self.root / "scripts/catalogue/demo.json").unlink()
        self.assertCheckFails("mutants", "lessons/demo.cu:1: lesson has no mutants")

    def test_malformed_catalogue_is_one_finding(self):
        (self.root / "scripts/catalogue/demo.json").write_text("{not json")
        err = self.assertCheckFails("mutants", "scripts/catalogue/demo.json: malformed catalogue")
        self.assertNotIn("Traceback", err)

    def test_apply_refuses_an_ambiguous_anchor(self):
        with self.assertRaises(SuiteError):
            catalogue.Mutant("x", "x", "return", "return").apply("return 1; return 2;")

    @needs_nvcc
    def test_mutant_that_does_not_compile_is_not_killed(self):
        broken = catalogue.Mutant("m5", "syntax error", "return 42;", "return 42", "GATE:")
        entry = catalogue.run_mutant(self.root, resolve_source(self.root, "demo"), broken)
        self.assertFalse(entry["killed"])
        self.assertIn("does not compile", entry["outcome"])


class TestAttemptsCheck(CatalogueScratch):
    def test_catalogue_passes(self):
        self.assertCheckPasses("attempts")

    def test_the_mutants_check_covers_attempts(self):
        self.edit_catalogue(lambda d: d["attempts"].pop())
        self.assertCheckFails("mutants", "region 'twice' of lessons/demo.cu has 1 correct attempts (need 2)")

    def test_too_few_wrong_attempts(self):
        self.edit_catalogue(lambda d: d["attempts"].pop(0))
        self.assertCheckFails("attempts", "has 1 wrong attempts (need 2)")

    def test_edit_must_apply_exactly_once(self):
        self.edit("starter/demo.cu", "int twice(int v) { return v; }", "int twice(int v) { return v; } // v; }")
        self.assertCheckPasses("attempts")
        self.edit_catalogue(lambda d: d["attempts"][1]["edits"][0].update(old="v; }"))
        self.assertCheckFails("attempts", "attempt 'plus-one' edit 1: its anchor occurs 2 times")

    def test_unknown_region(self):
        self.edit_catalogue(lambda d: d["attempts"][0].update(region="thrice"))
        self.assertCheckFails("attempts", "names region 'thrice', not a solution region")

    def test_an_attempt_with_its_own_args_is_refused(self):
        """Attempts are judged over every Run: line, as the student's exercise is: no private args."""
        self.edit_catalogue(lambda d: d["attempts"][1].update(args=["--twice"]))
        self.assertCheckFails("attempts", "attempt 'plus-one' has its own \"args\"")


SPEED = {"region": "twice", "figure": r"^k (\S+) ms", "slow": "int twice(int v) { return v + v; }"}
SLOW = {"region": "twice", "name": "one-plus", "kind": "slow", "base": "starter", "description": "the slow design",
        "edits": [{"old": "int twice(int v) { return v; }", "new": "int twice(int v) { return 1 * v + v; }"}]}


class TestSpeedRules(CatalogueScratch):
    def plant(self, with_slow=True, **change):
        self.edit_catalogue(lambda d: (d["exercise"].update(speed=dict(SPEED, **change)),
                                       d["attempts"].append(SLOW) if with_slow else None))

    def test_a_sound_rule_passes(self):
        self.plant()
        self.assertCheckPasses("attempts")
        self.assertEqual(catalogue.load(self.root)["demo"].speed.rounds, 5)

    def test_a_speed_region_needs_a_slow_attempt(self):
        """Every speed rule is proven to fail something: at least one correct kernel of the slow design."""
        self.plant(with_slow=False)
        self.assertCheckFails("attempts", "speed region 'twice' has no slow attempt")

    def test_a_slow_attempt_needs_a_speed_rule(self):
        self.edit_catalogue(lambda d: d["attempts"].append(SLOW))
        self.assertCheckFails("attempts", "attempt 'one-plus' is slow, but its region 'twice' has no speed rule")

    def test_a_bar_outside_its_range_is_refused(self):
        for bar in (0.2, 1.0):
            with self.subTest(bar=bar):
                self.plant(bar=bar)
                self.assertCheckFails("attempts", f"bar = {bar!r}: give the fraction of the way")
        self.plant(bar=0.9)
        self.assertCheckPasses("attempts")

    def test_a_bar_that_is_no_number_is_a_malformed_catalogue_for_every_check(self):
        """Not a traceback from the first check that computes with it (verify-record runs first)."""
        for bar in ("0.9", "far", True):
            with self.subTest(bar=bar):
                self.plant(bar=bar)
                for check in ("verify-record", "attempts"):
                    err = self.assertCheckFails(check, "malformed catalogue", "is not a number")
                    self.assertNotIn("Traceback", err)

    def test_planted_defects_fail(self):
        for change, needle in ((dict(region="thrice"), "region 'thrice' is not a solution region"),
                               (dict(figure="^k ("), "is not a regex"),
                               (dict(figure="^k \\S+ ms"), "has no (group)"),
                               (dict(args=["--thrice"]), "are not one of the Run: lines"),
                               (dict(better="faster"), "better must be"),
                               (dict(rounds=2), "at least 3 rounds"),
                               (dict(slow=" "), "slow is empty")):
            with self.subTest(change=change):
                self.plant(**change)
                self.assertCheckFails("attempts", "scripts/catalogue/demo.json:1: speed: ", needle)

    def test_an_unknown_key_is_a_malformed_catalogue(self):
        self.plant(speedup=2)
        self.assertCheckFails("attempts", "malformed catalogue", "unknown key 'speedup'")

    def test_the_slow_reference_replaces_the_region(self):
        text = (self.root / "lessons/demo.cu").read_text()
        slow = catalogue.replace_region(text, "twice", SPEED["slow"])
        self.assertIn("// solution: twice\nint twice(int v) { return v + v; }\n// end solution\n", slow)
        self.assertEqual(slow.replace("v + v", "2 * v"), text)
        with self.assertRaises(SuiteError):
            catalogue.replace_region(text, "thrice", "x")


def fake_build(prog, text, tmp, arch=None, sass=None, same_code=False):
    """A 'compiler' for the demo: the program prints twice(42) as the attempt's source computes it."""
    body = re.search(r"int twice\(int v\) \{ return (.*?); \}", text).group(1)
    value = eval(body, {}, {"v": 42})
    path = Path(tmp) / "demo"
    path.write_text(f"#!/bin/sh\nif [ \"$1\" = --twice ]; then echo 'answer {value}'; else echo 'answer 42'; fi\n")
    path.chmod(0o755)
    return path, None


class TestAttemptRunner(CatalogueScratch):
    """Attempts are judged by the student's own function (judge.judge_runs) over every recorded run."""

    def judge_all(self):
        cat = catalogue.load(self.root)["demo"]
        with patched(catalogue, "build_in_scratch", fake_build), patched(sanitize, "available", lambda: False):
            return {a.name: exercises.run_attempt(self.root, a, "h200", cat.student_worded) for a in cat.attempts}

    def test_wrong_rejected_correct_accepted(self):
        entries = self.judge_all()
        self.assertEqual({k: e["accepted"] for k, e in entries.items()},
                         {"stand-in": False, "plus-one": False, "times-two": True, "add-self": True})
        self.assertTrue(all(exercises.attempt_entry_ok(e) for e in entries.values()))
        self.assertEqual(set(entries["stand-in"]), {"lesson", "region", "name", "kind", "runs", "accepted", "outcome",
                                                    "seconds"})
        self.assertEqual(set(entries["times-two"]["seconds"]), {"build", "runs", "sanitize"})
        self.assertEqual(entries["times-two"]["runs"], ["demo", "demo@twice"])

    def test_a_slow_attempt_is_accepted_by_its_outputs_and_left_to_the_speed_phase(self):
        """Right outputs from the slow design: every run passes; the sanitizers are not run (the speed
        phase's verdict is what it is there for), and the record says so."""
        calls = []
        self.edit_catalogue(lambda d: d["attempts"].append(SLOW))
        with patched(sanitize, "judge", lambda *a, **k: calls.append(a) or (True, ["ran"])):
            entries = self.judge_all()
        self.assertTrue(entries["one-plus"]["accepted"])
        self.assertTrue(exercises.attempt_entry_ok(entries["one-plus"]))
        self.assertIn("not run: a slow attempt", entries["one-plus"]["sanitizer"][0])
        self.assertEqual(len(calls), 2, "the sanitizers ran for the two correct attempts only")

    def test_wrong_only_off_the_default_run_is_rejected_naming_the_run(self):
        """plus-one prints the default run's 'answer 42' right; only ./demo --twice shows it is wrong."""
        entry = self.judge_all()["plus-one"]
        self.assertFalse(entry["accepted"])
        self.assertIn("rejected at demo@twice: run ./demo --twice: stdout differs", entry["outcome"])
        self.assertEqual(entry["runs"], ["demo", "demo@twice"])

    def test_an_attempt_stops_at_the_run_that_rejects_it(self):
        self.record(self.run_of("demo"), stdout="answer 41\n")  # every attempt now fails the first run
        entry = self.judge_all()["times-two"]
        self.assertTrue(entry["outcome"].startswith("rejected at demo:"), entry["outcome"])
        self.assertEqual(entry["runs"], ["demo"])

    def test_judged_against_the_lessons_recording(self):
        self.record(self.run_of("demo@twice"), stdout="answer 85\n")
        self.assertFalse(self.judge_all()["times-two"]["accepted"])


class TestMutantArch(CatalogueScratch):
    """A mutant of code behind `#if __CUDA_ARCH__ >= 800` is a no-op in the Build: line's sm_75 build,
    even on a newer GPU (which runs that build's PTX): check demands an arch, and the build uses it."""

    GUARDED = ("#if __CUDA_ARCH__ >= 800\n__device__ int fast() { return 7; }\n#else\n"
               "__device__ int fast() { return 6; }\n#endif\n")

    def plant(self, old="return 7;", **extra):
        self.edit("lessons/demo.cu", "int main(", self.GUARDED + "int main(")
        mutant = dict({"name": "guarded", "description": "x", "old": old, "new": "return 8;",
                       "expect": "GATE:"}, **extra)
        self.edit_catalogue(lambda d: d["mutants"].append(mutant))

    def test_a_mutant_of_code_the_build_line_never_compiles_must_name_an_arch(self):
        self.plant()
        self.assertCheckFails("mutants", "mutant 'guarded' edits code compiled only for __CUDA_ARCH__ >= 800",
                              "the Build: line's build (sm_75) never runs")

    def test_naming_an_arch_passes(self):
        self.plant(arch="native")
        self.assertCheckPasses("mutants")

    def test_the_else_branch_needs_none(self):
        self.plant(old="return 6;")
        self.assertCheckPasses("mutants")

    def test_the_guard_that_encloses_an_offset(self):
        text = ("a\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n#ifdef X\nb\n#endif\nc\n#else\n"
                "d\n#endif\ne\n#if __CUDA_ARCH__ < 700\nf\n#elif __CUDA_ARCH__ >= 800\ng\n#endif\n")
        self.assertEqual([catalogue.arch_guard_at(text, text.index(w)) for w in "abcdefg"],
                         [0, 900, 900, 0, 0, 0, 800])

    def builds(self, *arches, native="sm_90"):
        """The argv of each build_in_scratch(demo, arch) call, nvidia-smi answering native."""
        import tempfile
        from unittest import mock
        prog = resolve_source(self.root, "demo")
        argvs, outcomes = [], []

        def fake_run(argv, **_):
            argvs.append(argv)
            return mock.Mock(returncode=0, stderr="")
        with patched(catalogue.subprocess, "run", fake_run), patched(catalogue, "native_arch", lambda: native), \
                tempfile.TemporaryDirectory() as tmp:
            outcomes = [catalogue.build_in_scratch(prog, prog.text, tmp, a) for a in arches]
        return argvs, outcomes

    def test_the_build_uses_the_arch_in_place_of_the_build_lines(self):
        argvs, _ = self.builds(None, "native", "sm_100a")
        self.assertIn("-arch=sm_75", argvs[0])
        self.assertIn("-arch=sm_90", argvs[1], "native: the GPU nvidia-smi reports")
        self.assertNotIn("-arch=sm_75", argvs[1])
        self.assertIn("-arch=sm_100a", argvs[2])

    def test_native_without_a_gpu_is_no_build(self):
        """nvcc's -arch=native would warn and build sm_75 without a GPU: the harness refuses instead."""
        argvs, outcomes = self.builds("native", native=None)
        self.assertEqual(argvs, [])
        self.assertIsNone(outcomes[0][0])
        self.assertIn("nvidia-smi reports no compute capability", outcomes[0][1])

    def test_a_build_line_without_an_arch(self):
        self.edit("lessons/demo.cu", "-O0 -arch=sm_75 -o demo", "-O0 -o demo")
        self.assertEqual(catalogue.build_arch(resolve_source(self.root, "demo")), catalogue.NVCC_DEFAULT_ARCH)
        argvs, _ = self.builds("native")
        self.assertIn("-arch=sm_90", argvs[0])
        self.plant()
        self.assertCheckFails("mutants", "the Build: line's build (sm_75) never runs")

    def test_native_reads_the_compute_capability(self):
        from unittest import mock
        for said, code, want in (("9.0\n", 0, "sm_90"), ("7.5\n", 0, "sm_75"), ("12.0\n", 0, "sm_120"),
                                 ("", 9, None), ("[N/A]\n", 0, None)):
            with patched(catalogue.subprocess, "run", lambda *a, **k: mock.Mock(returncode=code, stdout=said)):
                self.assertEqual(catalogue.native_arch(), want, said)

    def test_an_unreadable_build_line_leaves_the_arch_check_to_build_lines(self):
        """The mutants check goes on (here: an anchor gone) where it cannot read the Build: line."""
        self.plant()
        self.edit("lessons/demo.cu", "return 2 * v;", "return v + v;")
        for bad in ("// Build: nvcc 'unclosed", "// Built: nvcc"):
            with self.subTest(bad):
                self.edit("lessons/demo.cu", "// Build: nvcc", bad)
                err = self.main("check")[2]
                mutants = [line for line in err.splitlines() if "[mutants]" in line]
                self.assertTrue(any("mutant 'm2' no longer applies" in line for line in mutants), mutants)
                self.assertFalse(any("Build:" in line or "edits code compiled only for" in line
                                     for line in mutants), mutants)
                self.assertIn("[build-lines] lessons/demo.cu:3: the Build: line cannot be split into words"
                              if "'" in bad else "header needs exactly one '// Build:' line (found 0)", err)
                self.edit("lessons/demo.cu", bad, "// Build: nvcc")

    def test_a_malformed_arch_is_refused(self):
        self.plant(arch="sm75")
        self.assertCheckFails("mutants", "mutant 'guarded' has arch 'sm75'")

    def test_the_record_names_the_arch_a_mutant_was_built_for(self):
        seen = []

        def fake_build(prog, text, tmp, arch=None, sass=None, same_code=False):
            seen.append(arch)
            return None, "does not compile: planted"
        mutant = catalogue.Mutant("guarded", "x", "return 42;", "return 43;", "GATE:", arch="native")
        with patched(catalogue, "build_in_scratch", fake_build):
            entry = catalogue.run_mutant(self.root, resolve_source(self.root, "demo"), mutant)
        self.assertEqual(seen, ["native"])
        self.assertEqual(entry["arch"], "native")
        self.assertFalse(entry["killed"])


class TestAttemptMachineCode(CatalogueScratch):
    """verify builds each attempt with its Build: line plus the GPU's own machine code (as the
    exercise's CMake build does), so the GPU runs it without first compiling its PTX."""

    def argv_for(self, **kw):
        seen = []

        def fake_compile(prog, text, argv, folder):
            seen.append(argv)
            return None, "does not compile: planted"
        with patched(catalogue, "_compile", fake_compile):
            catalogue.build_in_scratch(resolve_source(self.root, "demo"), "text", self.root, **kw)
        return seen[0]

    def test_the_gpus_own_code_beside_the_build_lines(self):
        plain = self.argv_for()
        added = self.argv_for(sass="sm_90")
        self.assertEqual([a for a in added if a not in plain], ["-gencode", "arch=compute_90,code=sm_90"])
        self.assertEqual(added[0], plain[0])

    def test_nothing_added_beside_a_line_that_names_no_sm(self):
        for line in ("nvcc -std=c++17 -O3 -o demo demo.cu", "nvcc -std=c++17 -O3 -arch=native -o demo demo.cu"):
            self.edit("lessons/demo.cu", next(ln for ln in (self.root / "lessons/demo.cu").read_text().splitlines()
                                               if ln.startswith("// Build:")), "// Build: " + line)
            self.assertNotIn("-gencode", self.argv_for(sass="sm_90"), line)

    def test_nothing_added_where_the_line_builds_it_or_a_mutant_names_its_arch(self):
        line = resolve_source(self.root, "demo").build_argv()
        own = next(a.split("=", 1)[1] for a in line if a.startswith("-arch="))
        self.assertEqual(self.argv_for(sass=own), self.argv_for())
        self.assertNotIn("-gencode", self.argv_for(arch="sm_80", sass="sm_90"))

    def test_a_mutant_gets_the_gpus_code_compiled_from_the_lines_own_ptx(self):
        """A mutant of a path below sm_80 must run that path: its sm_90 code is compiled from the
        line's compute_75 PTX (as the driver would at run time), not from compute_90."""
        plain = self.argv_for()
        own = next(a.split("=", 1)[1] for a in plain if a.startswith("-arch="))
        added = self.argv_for(sass="sm_90", same_code=True)
        self.assertEqual([a for a in added if a not in plain], ["-gencode", f"arch=compute_{own[3:]},code=sm_90"])
        self.assertNotIn("-gencode", self.argv_for(arch="sm_80", sass="sm_90", same_code=True),
                         "a mutant that names its arch is built for it alone")

    def test_verify_passes_the_gpus_code_to_every_mutant_and_builds_each_once(self):
        import tempfile
        from suitelib import builds, verify, verifyrun
        from suitelib.model import programs
        progs, cats = programs(self.root), catalogue.load(self.root)
        jobs = verify.make_jobs(self.root, progs, Path("n"), Path("p"), "h200", cats, sass="sm_90")
        mutants = [args for key, _, args in jobs if key[0] == "mutant"]
        self.assertTrue(mutants)
        self.assertTrue(all(args[-1] == "sm_90" for args in mutants))
        compiled = []
        with tempfile.TemporaryDirectory() as tmp, patched(catalogue, "_compile", recording_compile(compiled, "exit 1")):
            builds.BUILD_CACHE = builds.BuildCache(Path(tmp) / "builds")
            try:
                for key, fn, args in verifyrun.compile_jobs(self.root, progs, cats, [], tmp, "sm_90"):
                    if key[0] == "build" and key[2].startswith("mutant "):
                        fn(*args)
                ahead = len(compiled)
                self.assertTrue(ahead and all(any(a.endswith(",code=sm_90") and "compute_90" not in a for a in argv)
                                              for argv in compiled))
                for _, fn, args in (j for j in jobs if j[0][0] == "mutant"):
                    fn(*args)
                self.assertEqual(len(compiled), ahead, "a mutant compiled again what the background had built")
            finally:
                builds.BUILD_CACHE = None

    def test_verify_passes_the_gpus_code_to_every_attempt(self):
        from suitelib import verify
        from suitelib.model import programs
        jobs = verify.make_jobs(self.root, programs(self.root), Path("n"), Path("p"), "h200",
                                catalogue.load(self.root), sass="sm_90")
        attempts = [args for key, _, args in jobs if key[0] == "attempt"]
        self.assertTrue(attempts)
        self.assertTrue(all(args[-1] == "sm_90" for args in attempts))


if __name__ == "__main__":
    unittest.main()


class TestSanitizedMutant(unittest.TestCase):
    """A mutant judged by a compute-sanitizer tool is killed only when that tool reports findings."""

    def judge(self, findings):
        from unittest import mock
        from suitelib import catalogue
        prog = mock.Mock()
        prog.sanitize_spec.return_value = (["--launch-count", "4"], ["-m", "9"])
        prog.text = "no common block"
        mutant = catalogue.Mutant("missing-barrier", "race", "a", "b", sanitizer="racecheck")
        with mock.patch.object(catalogue, "sanitizer_findings", return_value=(findings, "log")) as fake:
            entry = catalogue._sanitized_mutant({"name": mutant.name}, prog, mutant, "/bin/x")
        fake.assert_called_once_with("/bin/x", ["-m", "9"], "racecheck", ["--launch-count", "4"])
        return entry

    def test_findings_kill(self):
        self.assertTrue(self.judge(3)["killed"])

    def test_no_findings_survive(self):
        entry = self.judge(0)
        self.assertFalse(entry["killed"])
        self.assertIn("racecheck: 0 finding", entry["outcome"])

    def test_no_summary_is_no_kill(self):
        self.assertFalse(self.judge(None)["killed"])

    def test_memcheck_mutants_run_with_padding(self):
        # Unpadded, a read past A's last row lands in B's allocation and memcheck reports nothing.
        from unittest import mock
        from suitelib import catalogue, sanitize
        prog = mock.Mock()
        prog.sanitize_spec.return_value = ([], ["-m", "9"])
        prog.text = "no common block"
        mutant = catalogue.Mutant("loose", "reads past A", "a", "b", sanitizer="memcheck")
        with mock.patch.object(catalogue, "sanitizer_findings", return_value=(1, "log")) as fake:
            catalogue._sanitized_mutant({"name": mutant.name}, prog, mutant, "/bin/x")
        fake.assert_called_once_with("/bin/x", ["-m", "9"], "memcheck", ["--padding", str(sanitize.PADDING_BYTES)])


class TestRealSpeedRules(unittest.TestCase):
    """Each real speed rule's figure regex finds its kernel's line in the lesson's recorded output
    (the transcript with its masked measurements filled back in), and its slow body replaces the region."""

    def test_figures_are_found_in_the_recordings(self):
        from helpers import REPO
        from suitelib import speed as speedlib
        from suitelib.model import find_lesson_run
        from suitelib.transcripts import parse_transcript
        cats = catalogue.load(REPO)
        speeds = {n: c.speed for n, c in cats.items() if c.speed}
        self.assertTrue({"report_data", "gemm_ladder"} <= set(speeds), sorted(speeds))
        for name, speed in speeds.items():
            with self.subTest(lesson=name):
                run = find_lesson_run(REPO, name, speed.args)
                out = parse_transcript(run.transcript_path("h200"))["stdout"]
                filled = re.sub(r"\[(MS|GFLOPS|VAR)\]", "1.25", out)
                self.assertEqual(speedlib.figure_of(filled, speed), 1.25)
                lesson_text = resolve_source(REPO, name).text
                slow = catalogue.replace_region(lesson_text, speed.region, speed.slow)
                self.assertIn(speed.slow.strip(), slow)
