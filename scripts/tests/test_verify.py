"""Tests of suitelib.verify and suitelib.anchors: the record check (programs, mutants, attempts,
file hashes, GPU CTest counts, anchors) and the pieces verify is composed of."""

import json
import os
import subprocess
import unittest
from pathlib import Path

from helpers import REPO, Scratch, patched, recording_compile
from suitelib import anchors, catalogue, commands, exercises, running, speed, verify, verifyrun
from suitelib import SuiteError
from suitelib.model import programs

CTEST_OUT = """
 1/4 Test #1: tool.test_model.TestMarkers ......   Passed    0.50 sec
 2/4 Test #2: gpu.run.testing ..................***Skipped   0.10 sec
 3/4 Test #3: gpu.run.sweep ....................***Failed    1.00 sec
 4/4 Test #4: tool.test_plots.TestPlot .........   Passed    0.20 sec
"""


# A slow attempt of the demo's speed exercise: right outputs, and (fake_speed_build) 2.6 times the solution.
SLOW_ATTEMPT = {"region": "twice", "name": "one-plus", "kind": "slow", "base": "starter", "description": "the slow design",
                "edits": [{"old": "int twice(int v) { return v; }", "new": "int twice(int v) { return 1 * v + v; }"}]}


class TestVerifyRecord(Scratch):
    def write_record(self, mutate=None):
        entries = []
        for prog in programs(self.root):
            e = {"program": prog.rel, "source_key": prog.source_key(), "exit_code": 0,
                 "transcript_match": True, "sanitizer": {t: 0 for t in verify.SANITIZERS},
                 "repeat_runs": 10, "repeat_identical": True}
            if not prog.is_starter:
                budget = {"wall_s_1core": 1.0, "cpu_s_1core": 0.9, "peak_rss_mib": 90.0, "output_bytes": 1000}
                e.update(budget, sm75_ptx_identical=True, runs_budget={r.id: dict(budget) for r in prog.runs()},
                         mutants=[{"name": f"m{i}", "killed": True} for i in range(1, 5)])
            entries.append(e)
        kinds = {a.name: a.kind for a in catalogue.load(self.root)["demo"].attempts}
        attempts = [{"lesson": "demo", "region": "twice", "name": n, "kind": k, "runs": ["demo", "demo@twice"],
                     "accepted": k != "wrong", "outcome": "x"} for n, k in kinds.items()]
        record = {"gpu": "NVIDIA H200", "toolkit": "13.0", "recorded_at": "x", "total_wall_s": 1, "programs": entries,
                  "phases_s": {"build": 1}, "partial": False,
                  "student_attempts": attempts, "ctest_gpu": {"passed": 9, "failed": 0, "skipped": 0},
                  "files": verify.file_hashes(self.root, "h200")}
        if mutate:
            mutate(record)
        (self.root / "expected/h200/verify.json").write_text(json.dumps(record))

    def test_clean_record_passes(self):
        self.write_record()
        self.assertCheckPasses("verify-record")

    def test_missing_record(self):
        self.assertCheckFails("verify-record", "verify.json:1: missing")

    def test_malformed_record_is_one_finding(self):
        (self.root / "expected/h200/verify.json").write_text("{\"programs\": [")
        err = self.assertCheckFails("verify-record", "verify.json:1: malformed JSON")
        self.assertNotIn("Traceback", err)

    def test_program_missing_from_record(self):
        self.write_record(lambda r: r["programs"].pop())
        self.assertCheckFails("verify-record", "starter/demo.cu: missing")

    def test_edited_lesson_is_stale(self):
        self.write_record()
        self.edit("lessons/demo.cu", "return 42;", "return 43;")
        self.assertCheckFails("verify-record", "lessons/demo.cu: stale")

    def test_hand_edited_transcript_anywhere_fails(self):
        self.write_record()
        path = self.root / "expected/h200/demo@twice.txt"
        path.write_text(path.read_text().replace("answer 84", "answer 85"))
        self.assertCheckFails("verify-record", "expected/h200/demo@twice.txt:1: changed since the GPU record")

    def test_hand_edited_data_file_fails(self):
        (self.root / "expected/h200/data").mkdir()
        (self.root / "expected/h200/data/sweep.csv").write_text("a,b,c\n1,2,3\n")
        self.write_record()
        (self.root / "expected/h200/data/sweep.csv").write_text("a,b,c\n1,2,4\n")
        self.assertCheckFails("verify-record", "expected/h200/data/sweep.csv:1: changed since the GPU record")

    def test_file_not_covered(self):
        self.write_record(lambda r: r["files"].pop("expected/h200/demo.txt"))
        self.assertCheckFails("verify-record", "expected/h200/demo.txt:1: not covered by the GPU record")

    def test_sanitizer_finding(self):
        self.write_record(lambda r: r["programs"][0]["sanitizer"].update(racecheck=3))
        self.assertCheckFails("verify-record", "racecheck findings: 3")

    def test_budget_overrun(self):
        self.write_record(lambda r: r["programs"][0].update(wall_s_1core=5.5))
        self.assertCheckFails("verify-record", "wall_s_1core = 5.5 exceeds")

    def test_transcript_mismatch_recorded(self):
        self.write_record(lambda r: r["programs"][1].update(transcript_match=False))
        self.assertCheckFails("verify-record", "starter/demo.cu: transcript_match is not true")

    def test_repeats_that_differ(self):
        self.write_record(lambda r: r["programs"][1].update(repeat_identical=False))
        self.assertCheckFails("verify-record", "starter/demo.cu: repeat_identical is not true")

    def test_ptx_difference_recorded(self):
        self.write_record(lambda r: r["programs"][0].update(sm75_ptx_identical=False))
        self.assertCheckFails("verify-record", "sm75_ptx_identical is not true")

    def test_mutants_missing_from_record(self):
        self.write_record(lambda r: r["programs"][0].pop("mutants"))
        self.assertCheckFails("verify-record", "lessons/demo.cu: the record's mutants [] are not the catalogue's")

    def test_surviving_mutant(self):
        self.write_record(lambda r: r["programs"][0]["mutants"][0].update(killed=False))
        self.assertCheckFails("verify-record", "mutant 'm1' survived")

    def test_blind_spot_survivor_is_accepted(self):
        self.write_record(lambda r: r["programs"][0]["mutants"][0].update(killed=False, blind_spot="said"))
        self.assertCheckPasses("verify-record")

    def test_attempt_missing_from_record(self):
        self.write_record(lambda r: r["student_attempts"].pop())
        self.assertCheckFails("verify-record", "student attempt demo/twice/add-self (correct) is not in the record")

    def test_wrong_attempt_accepted(self):
        self.write_record(lambda r: r["student_attempts"][0].update(accepted=True))
        self.assertCheckFails("verify-record", "wrong attempt demo/stand-in was accepted")

    def test_wrong_attempt_accepted_as_a_named_blind_spot(self):
        sentence = "A blind spot: stand-in code prints the right answer here."
        (self.root / "lessons/demo.md").write_text("# demo\n\nA blind spot: stand-in code prints the\nright answer here.\n")
        catalogue = self.root / "scripts/catalogue/demo.json"
        data = json.loads(catalogue.read_text())
        next(a for a in data["attempts"] if a["name"] == "stand-in")["blind_spot"] = sentence
        catalogue.write_text(json.dumps(data))
        self.write_record(lambda r: r["student_attempts"][0].update(accepted=True))
        self.assertCheckPasses("verify-record")
        self.assertCheckPasses("attempts")
        (self.root / "lessons/demo.md").write_text("# demo\n")  # the page no longer names it
        self.assertCheckFails("attempts", "blind spot 'stand-in' cites a sentence lessons/demo.md does not contain")

    def test_attempt_judged_on_the_default_run_only(self):
        self.write_record(lambda r: r["student_attempts"][1].update(runs=["demo"]))
        self.assertCheckFails("verify-record", "student attempt demo/plus-one was judged over ['demo'], not every "
                              "recorded run of lessons/demo.cu ['demo', 'demo@twice'], nor those up to the one that "
                              "rejected it")

    def test_check_accepts_an_attempt_stopped_at_its_rejecting_run_and_no_other_short_one(self):
        first = {"runs": ["demo"], "outcome": "rejected at demo: run ./demo: stdout differs"}
        self.write_record(lambda r: r["student_attempts"][0].update(first))
        self.assertCheckPasses("verify-record")
        self.write_record(lambda r: r["student_attempts"][0].update(runs=[], outcome="does not compile: x.cu(3): error"))
        self.assertCheckPasses("verify-record")
        self.write_record(lambda r: r["student_attempts"][0].update(runs=[], outcome="rejected at demo: x"))
        self.assertCheckFails("verify-record", "student attempt demo/stand-in was judged over []")
        self.write_record(lambda r: r["student_attempts"][2].update(first, accepted=True))
        self.assertCheckFails("verify-record", "student attempt demo/times-two was judged over ['demo']")

    def test_a_rejected_attempt_may_stop_at_the_run_that_rejected_it(self):
        """Its verdict is decided there; an accepted one, or one stopped elsewhere, must run them all."""
        from suitelib import verify
        runs = ["demo", "demo@twice", "demo@thrice"]
        rejected = {"accepted": False, "runs": ["demo"], "outcome": "rejected at demo: run ./demo: stdout differs"}
        self.assertTrue(verify.stopped_at_rejection(rejected, runs))
        self.assertFalse(verify.stopped_at_rejection(dict(rejected, accepted=True), runs))
        self.assertFalse(verify.stopped_at_rejection(dict(rejected, runs=["demo@twice"]), runs))
        self.assertFalse(verify.stopped_at_rejection(dict(rejected, runs=["demo", "demo@twice"]), runs))
        self.assertFalse(verify.stopped_at_rejection(dict(rejected, outcome="rejected by compute-sanitizer: x"), runs))
        self.assertFalse(verify.stopped_at_rejection(dict(rejected, runs=[]), runs))

    def test_run_without_a_recorded_budget(self):
        self.write_record(lambda r: r["programs"][0]["runs_budget"].pop("demo@twice"))
        self.assertCheckFails("verify-record", "lessons/demo.cu: no Compiler Explorer budget recorded for run(s) demo@twice")

    def test_a_run_over_the_budget_other_than_the_default_is_no_problem(self):
        """Only the default run must fit Compiler Explorer; others are marked 'needs a real GPU'."""
        self.write_record(lambda r: r["programs"][0]["runs_budget"]["demo@twice"].update(wall_s_1core=60.0))
        self.assertCheckPasses("verify-record")

    def add_speed(self):
        path = self.root / "scripts/catalogue/demo.json"
        data = json.loads(path.read_text())
        data["exercise"]["speed"] = {"region": "twice", "figure": r"^k (\S+) ms", "slow": "int twice(int v) { return v + v; }"}
        data["attempts"].append(SLOW_ATTEMPT)
        path.write_text(json.dumps(data))

    def speed_entry(self, **change):
        return dict({"lesson": "demo", "region": "twice", "run": "demo", "slow_ratio": 3.0, "threshold": 1.732,
                     "spread": 1.02, "separated": True, "attempts": [{"name": "times-two", "ratio": 1.0, "outcome": "passed"},
                                                                     {"name": "add-self", "ratio": 1.01, "outcome": "passed"},
                                                                     {"name": "one-plus", "kind": "slow", "ratio": 2.9,
                                                                      "outcome": "failed"}]},
                    **change)

    def test_speed_exercise_recorded(self):
        self.add_speed()
        self.write_record(lambda r: r.update(exercise_speed=[self.speed_entry()]))
        self.assertCheckPasses("verify-record")

    def test_speed_exercise_without_a_record(self):
        self.add_speed()
        self.write_record()
        self.assertCheckFails("verify-record", "speed exercise demo/twice has no exercise_speed record")

    def test_correct_attempt_that_failed_the_speed_check(self):
        self.add_speed()
        entry = self.speed_entry()
        entry["attempts"][1].update(ratio=2.5, outcome="failed")
        self.write_record(lambda r: r.update(exercise_speed=[entry]))
        self.assertCheckFails("verify-record", "correct attempt demo/add-self should have passed the speed check: "
                                               "failed at 2.5 times the solution")

    def test_slow_attempt_that_passed_the_speed_check(self):
        """A slow attempt (right outputs, the slow design) the speed check let through is a problem."""
        self.add_speed()
        entry = self.speed_entry()
        entry["attempts"][2].update(ratio=1.1, outcome="passed")
        self.write_record(lambda r: r.update(exercise_speed=[entry]))
        self.assertCheckFails("verify-record", "slow attempt demo/one-plus should have failed the speed check: "
                                               "passed at 1.1 times the solution")

    def test_an_attempt_the_speed_phase_could_not_time(self):
        self.add_speed()
        entry = self.speed_entry()
        entry["attempts"][2] = {"name": "one-plus", "kind": "slow", "outcome": "not timed", "error": "exited 1: GATE"}
        self.write_record(lambda r: r.update(exercise_speed=[entry]))
        self.assertCheckFails("verify-record", "slow attempt demo/one-plus was not timed: exited 1: GATE")

    def test_a_bar_that_cannot_fail_its_own_slow_reference(self):
        """At bar 0.9 the slow reference itself fails only once W > spread ** 5: a W just over the
        spread is told apart, yet the rule could not fail it."""
        self.add_speed()
        self.edit_catalogue(lambda d: d["exercise"]["speed"].update(bar=0.9))
        self.write_record(lambda r: r.update(exercise_speed=[self.speed_entry(slow_ratio=1.03, spread=1.01)]))
        self.assertCheckFails("verify-record", "at its bar of 0.9 the rule would not fail its own slow reference")

    def test_time_args_are_added_to_the_run_and_recorded(self):
        """gemm_ladder times step 4 alone (-from 4 -to 4) at its -n 2048 run: every timed run gets the
        rule's time_args after the run's own; the record names them, and check refuses a record timed
        with other ones."""
        self.add_speed()
        self.edit_catalogue(lambda d: d["exercise"]["speed"].update(time_args=["-from", "4"]))
        seen = []

        def run_fn(path, args):
            seen.append(list(args))
            return {"exit_code": 0, "stdout": "k 3.0 ms\n" if path == "slow" else "k 1.0 ms\n", "stderr": ""}
        built = {"demo": {"solution": "sol", "slow reference": "slow", "attempt times-two": "t2",
                          "attempt add-self": "as", "attempt one-plus": "slow"}}
        [entry] = speed.speed_phase(self.root, catalogue.load(self.root), ["demo"], lambda *a: None, run_fn, built)
        self.assertTrue(seen)
        self.assertEqual({tuple(a) for a in seen}, {("-from", "4")}, "the demo run has no args of its own")
        self.assertEqual(entry["time_args"], ["-from", "4"])
        self.write_record(lambda r: r.update(exercise_speed=[self.speed_entry(time_args=["-from", "4"])]))
        self.assertCheckPasses("verify-record")
        self.write_record(lambda r: r.update(exercise_speed=[self.speed_entry()]))
        self.assertCheckFails("verify-record", "was timed with the arguments [] added, the catalogue now adds "
                                               "['-from', '4'] (run verify)")
        self.edit_catalogue(lambda d: d["exercise"]["speed"].update(time_args="-from 4"))
        self.assertCheckFails("verify-record", "time_args '-from 4' is not a list of strings")

    def test_the_speed_phase_times_the_rest_when_an_attempt_always_fails(self):
        """An attempt failing every run (a gate, say) is recorded not timed; the references and the other
        attempts are timed and recorded."""
        self.add_speed()
        outputs = {"sol": "k 1.0 ms\n", "slow": "k 3.0 ms\n", "t2": "k 1.0 ms\n", "op": "k 2.6 ms\n"}

        def run_fn(path, args):
            out = outputs.get(path)
            return {"exit_code": 0 if out else 1, "stdout": out or "", "stderr": "" if out else "GATE: no tiles"}
        built = {"demo": {"solution": "sol", "slow reference": "slow", "attempt times-two": "t2",
                          "attempt add-self": "as", "attempt one-plus": "op"}}
        [entry] = speed.speed_phase(self.root, catalogue.load(self.root), ["demo"], lambda *a: None, run_fn, built)
        self.assertNotIn("error", entry)
        self.assertEqual(entry["slow_ratio"], 3.0)
        got = {a["name"]: a["outcome"] for a in entry["attempts"]}
        self.assertEqual(got, {"times-two": "passed", "add-self": "not timed", "one-plus": "failed"})
        self.assertIn("GATE: no tiles", next(a["error"] for a in entry["attempts"] if a["name"] == "add-self"))
        self.assertNotIn("attempt add-self", entry["medians"])
        # one that fails only after a good round: dropped too, its one figure in no median
        calls = []

        def flaky(path, args):
            calls.append(path)
            bad = path == "as" and calls.count("as") > 1
            return {"exit_code": 1 if bad else 0, "stdout": "" if bad else "k 1.0 ms\n", "stderr": ""}
        [entry] = speed.speed_phase(self.root, catalogue.load(self.root), ["demo"], lambda *a: None, flaky, built)
        self.assertEqual(next(a["outcome"] for a in entry["attempts"] if a["name"] == "add-self"), "not timed")
        self.assertNotIn("attempt add-self", entry["medians"])

    def test_verifys_speed_programs_carry_the_gpus_own_machine_code(self):
        self.add_speed()
        seen = []
        with patched(speed, "build_all", lambda prog, texts, tmp, sass=None: seen.append(sass) or {}):
            verifyrun.speed_build(self.root, catalogue.load(self.root), "demo", str(self.root), "sm_90")
        self.assertEqual(seen, ["sm_90"])
        jobs = verifyrun.compile_jobs(self.root, list(programs(self.root)), catalogue.load(self.root), ["demo"],
                                      str(self.root), "sm_90")
        self.assertEqual(jobs[0][0][0], "speed-build")
        self.assertEqual(jobs[0][2][-1], "sm_90")

    def test_the_catalogues_bar_decides(self):
        """An exercise's own bar (its catalogue's "bar") re-judges the record: at 0.9 of the way (3 ** 0.9
        = 2.69) a correct attempt at 2.5 times the solution passes, where the default bar (2.28) fails it."""
        self.add_speed()
        entry = self.speed_entry()
        entry["attempts"][1].update(ratio=2.5, outcome="failed")
        self.write_record(lambda r: r.update(exercise_speed=[entry]))
        self.assertCheckFails("verify-record", "correct attempt demo/add-self should have passed")
        self.edit_catalogue(lambda d: d["exercise"]["speed"].update(bar=0.9))
        self.assertCheckPasses("verify-record")
        entry["attempts"][2].update(ratio=2.70)  # a slow attempt now fails only beyond 2.69 and half the spread
        self.write_record(lambda r: r.update(exercise_speed=[entry]))
        self.assertCheckFails("verify-record", "slow attempt demo/one-plus should have failed the speed check: "
                                               "inconclusive at 2.7 times")

    def test_speed_references_not_told_apart(self):
        self.add_speed()
        self.write_record(lambda r: r.update(exercise_speed=[self.speed_entry(slow_ratio=1.01)]))
        self.assertCheckFails("verify-record", "the slow reference (1.01 times the solution) is not told apart")

    def test_whole_run_over_its_limit(self):
        self.write_record(lambda r: r.update(total_wall_s=300.0))
        self.assertCheckPasses("verify-record")
        self.write_record(lambda r: r.update(total_wall_s=301.5))
        self.assertCheckFails("verify-record", "the whole verify took 301.5 s, over its 300 s")

    def test_a_partial_run_is_held_to_the_last_whole_runs_time(self):
        """A partial run's own time says nothing of the whole verify's: the record keeps the last
        whole run's, and records pieced together from partial runs never stand in for one."""
        partial = {"only": ["lessons/demo.cu"]}
        self.write_record(lambda r: r.update(total_wall_s=20.0, partial=partial,
                                             whole_run={"total_wall_s": 250.0, "phases_s": {"build": 1}}))
        self.assertCheckPasses("verify-record")
        self.write_record(lambda r: r.update(total_wall_s=20.0, partial=partial,
                                             whole_run={"total_wall_s": 398.2, "phases_s": {"build": 1}}))
        self.assertCheckFails("verify-record", "the whole verify took 398.2 s, over its 300 s")
        self.write_record(lambda r: r.update(total_wall_s=20.0, partial=partial))
        self.assertCheckFails("verify-record", "a partial verify's record with no whole verify behind it")

    def test_a_partial_verify_carries_the_whole_runs_time(self):
        self.write_record(lambda r: r.update(total_wall_s=250.0, command="scripts/suite.py verify"))
        status, out, err = TestVerifyCommand.fake_verify(self, "--only", "lessons/demo.cu", "--no-ctest")
        record = json.loads((self.root / "expected/h200/verify.json").read_text())
        self.assertEqual(record["whole_run"]["total_wall_s"], 250.0)
        self.assertTrue(record["partial"])

    def test_run_without_phase_times(self):
        self.write_record(lambda r: r.pop("phases_s"))
        self.assertCheckFails("verify-record", "no per-phase wall times")

    def test_speed_record_of_an_exercise_without_a_speed_rule(self):
        self.write_record(lambda r: r.update(exercise_speed=[{"lesson": "demo", "region": "twice", "slow_ratio": 3.0,
                                                               "spread": 1.02, "attempts": []}]))
        self.assertCheckFails("verify-record", "a speed record for demo/twice, which has no speed rule")

    def test_written_record_carries_todays_speed_rule(self):
        entry = {"lesson": "demo", "region": "twice", "run": "demo", "slow_ratio": 3.0, "spread": 1.02, "threshold": 1.2807,
                 "attempts": [{"name": "a", "ratio": 2.0, "outcome": "failed"}]}
        verify.write_record(self.root, "h200", {"gpu": "g", "toolkit": "t", "recorded_at": "x", "programs": [],
                                                "exercise_speed": [entry]})
        stored = json.loads((self.root / "expected/h200/verify.json").read_text())["exercise_speed"][0]
        self.assertEqual(stored["threshold"], round(3.0 ** speed.SPEED_BAR, 4))
        self.assertEqual(stored["attempts"][0]["outcome"], speed.speed_outcome(2.0, 3.0, 1.02)[0])
        self.assertEqual(stored["bar"], speed.SPEED_BAR)

    def test_written_record_carries_the_catalogues_bar(self):
        self.add_speed()
        self.edit_catalogue(lambda d: d["exercise"]["speed"].update(bar=0.9))
        entry = {"lesson": "demo", "region": "twice", "run": "demo", "slow_ratio": 3.0, "spread": 1.02, "bar": 0.75,
                 "attempts": [{"name": "a", "ratio": 2.5, "outcome": "failed"},
                              {"name": "s", "kind": "slow", "ratio": 2.9, "outcome": "failed"}]}
        verify.write_record(self.root, "h200", {"gpu": "g", "toolkit": "t", "recorded_at": "x", "programs": [],
                                                "exercise_speed": [entry]})
        stored = json.loads((self.root / "expected/h200/verify.json").read_text())["exercise_speed"][0]
        self.assertEqual((stored["bar"], stored["threshold"]), (0.9, round(3.0 ** 0.9, 4)))
        self.assertEqual(stored["attempts"][0]["outcome"], "passed")
        # the margins: the bar over the nearest correct attempt, the nearest slow program over the bar
        self.assertEqual(stored["margins"], {"correct": round(round(3.0 ** 0.9, 4) / 2.5, 4),
                                             "slow": round(2.9 / round(3.0 ** 0.9, 4), 4), "spread": 1.02},
                         "the nearest slow program: the slow attempt at 2.9, not the reference at 3")

    def test_the_record_is_judged_by_todays_rule_not_its_stored_outcome(self):
        self.add_speed()
        entry = self.speed_entry()
        entry["attempts"][1].update(ratio=2.0, outcome="failed")  # under a midpoint bar; 3 ** 0.75 = 2.28
        self.write_record(lambda r: r.update(exercise_speed=[entry]))
        self.assertCheckPasses("verify-record")

    def test_speed_record_lacking_a_correct_attempt(self):
        self.add_speed()
        entry = self.speed_entry()
        entry["attempts"].pop(1)
        self.write_record(lambda r: r.update(exercise_speed=[entry]))
        self.assertCheckFails("verify-record", "correct attempt demo/add-self has no speed record")

    def test_gpu_ctest_failures(self):
        self.write_record(lambda r: r["ctest_gpu"].update(failed=1))
        self.assertCheckFails("verify-record", "the GPU CTest run had 1 failed tests")

    def test_gpu_ctest_counts_missing(self):
        self.write_record(lambda r: r.pop("ctest_gpu"))
        self.assertCheckFails("verify-record", "no ctest_gpu counts")


class TestSpeedRule(unittest.TestCase):
    """The speed rule's two promises, as the contract states them: with W > spread the solution's own
    speed passes; the slow reference's fails once W > spread squared (not before: spread 1.5, W 2)."""

    def test_the_solution_passes_and_the_slow_reference_fails_where_promised(self):
        for spread in (1.01, 1.1, 1.5, 2.0):
            for W in (spread * 1.01, spread * 1.5, spread ** 2 * 1.01, spread ** 2 * 3):
                self.assertEqual(speed.speed_outcome(1.0, W, spread)[0], "passed", (spread, W))
                if W > spread ** 2:
                    self.assertEqual(speed.speed_outcome(W, W, spread)[0], "failed", (spread, W))
        self.assertEqual(speed.speed_outcome(2.0, 2.0, 1.5)[0], "inconclusive")
        self.assertEqual(speed.speed_outcome(1.0, 1.4, 1.5)[0], "inconclusive", "W <= spread: not told apart")

    def test_a_malformed_speed_record_is_a_problem_not_a_crash(self):
        errors = verify._speed_record_problems({"exercise_speed": ["junk"]}, {}, "rel")
        self.assertEqual(len(errors), 1)
        self.assertIn("malformed speed record", errors[0])


class TestVerifyParts(Scratch):
    def test_ctest_counts(self):
        self.assertEqual(running.ctest_counts(CTEST_OUT), {"passed": 2, "failed": 1, "skipped": 1})

    def entry(self, repeats):
        prog = programs(self.root)[1]  # the starter: 2 repeats, one run
        results = {("sanitizer", prog.rel, t): (0, "") for t in verify.SANITIZERS}
        results[("run", prog.rel, "starter/demo")] = {"exit_code": 0, "notes": [], "ptx_same": None}
        results.update({("repeat", prog.rel, i): r for i, r in enumerate(repeats)})
        return verify.program_entry(prog, results, {})

    def test_repeat_identical_reads_the_repeats(self):
        self.assertTrue(self.entry([("a", "", 0), ("a", "", 0)])["repeat_identical"])
        self.assertFalse(self.entry([("a", "", 0), ("b", "", 0)])["repeat_identical"])
        self.assertFalse(self.entry([("a", "", 0)])["repeat_identical"], "an unfinished repeat is a failure")

    def test_job_run_uses_the_transcript_comparison(self):
        native = self.fake("demo", 'echo "answer 41"', "native")
        ptx = self.fake("demo", 'echo "answer 41"', "ptx")
        prog = programs(self.root)[0]
        out = verify.job_run(native, ptx, prog, prog.runs()[0], "h200")
        self.assertTrue(out["notes"] and "answer 41" in out["notes"][0])
        self.assertTrue(out["ptx_same"])

    def test_job_run_compares_the_budget_run_instead_of_running_again(self):
        # The native program here would print the transcript's answer; the budget run printed another:
        # the job must judge what the budget run printed (and so must not run the program again).
        native = self.fake("demo", 'echo "answer 42"', "native")
        ptx = self.fake("demo", 'echo "answer 41"', "ptx")
        prog = programs(self.root)[0]
        measured = {"exit_code": 0, "stdout": "answer 41\n", "stderr": "", "wall_s_1core": 0.1}
        out = verify.job_run(native, ptx, prog, prog.runs()[0], "h200", measured)
        self.assertTrue(out["notes"] and "answer 41" in out["notes"][0], out)
        self.assertTrue(out["ptx_same"], "the sm_75 build is compared with the budget run's output")
        out = verify.job_run(native, ptx, prog, prog.runs()[0], "h200", dict(measured, stdout="answer 42\n"))
        self.assertEqual(out["notes"], ["demo: the sm_75 PTX build prints differently from the native build"])
        self.assertFalse(out["ptx_same"])
        # A budget entry without the output (an older caller) is not taken for a run.
        out = verify.job_run(native, ptx, prog, prog.runs()[0], "h200", {"exit_code": 0, "wall_s_1core": 0.1})
        self.assertFalse(any("answer" in n for n in out["notes"]), out)

    def test_run_measured_keeps_each_stream(self):
        binary = self.fake("demo", 'echo out; echo err >&2; exit 3', "measured") / "demo"
        r = running.run_measured(binary, [], sorted(os.sched_getaffinity(0))[0])
        self.assertEqual((r["stdout"], r["stderr"], r["exit_code"], r["output_bytes"]), ("out\n", "err\n", 3, 8))

    def test_run_measured_reads_both_pipes_as_they_fill(self):
        # 200 KB on stderr before any stdout: a reader that drained stdout first would wait for ever.
        script = 'head -c 200000 /dev/zero | tr "\\0" e >&2; head -c 100000 /dev/zero | tr "\\0" o'
        binary = self.fake("demo", script, "big") / "demo"
        r = running.run_measured(binary, [], sorted(os.sched_getaffinity(0))[0], timeout=60)
        self.assertEqual((len(r["stderr"]), len(r["stdout"]), r["output_bytes"]), (200000, 100000, 300000))

    def test_run_measured_names_a_program_it_cannot_start_and_stops_a_hung_one(self):
        cpu = sorted(os.sched_getaffinity(0))[0]
        r = running.run_measured(self.root / "no-such-program", [], cpu)
        self.assertEqual(r["exit_code"], 127)
        self.assertIn("cannot run", r["stderr"])
        binary = self.fake("demo", "sleep 30", "hung") / "demo"
        with self.assertRaisesRegex(SuiteError, "timed out after 1 s"):
            running.run_measured(binary, [], cpu, timeout=1)

    def test_the_budget_runs_reach_their_run_jobs(self):
        from suitelib import catalogue
        progs, cats = programs(self.root), catalogue.load(self.root)
        lesson = progs[0]
        run = lesson.runs()[0]
        measured = {"exit_code": 0, "stdout": "answer 42\n", "stderr": ""}
        jobs = verify.make_jobs(self.root, progs, Path("n"), Path("p"), "h200", cats,
                                measured={lesson.rel: {run.id: measured}})
        args = {key: fargs for key, fn, fargs in jobs if key[0] == "run"}
        self.assertIs(args[("run", lesson.rel, run.id)][-1], measured)
        starter = progs[1]
        self.assertIsNone(args[("run", starter.rel, starter.runs()[0].id)][-1], "a starter's run runs in its job")


def cublas_csv(args, rate):
    """What cublas_sgemm prints for these arguments: a row at the given rate for each -n."""
    sizes = [args[i + 1] for i, a in enumerate(args) if a == "-n"]
    return "kernel,n,median_ms,gflops\n" + "".join(f"cublas_sgemm,{n},1.0,{rate}\n" for n in sizes)


class TestPresetFlags(unittest.TestCase):
    def test_verify_configures_the_dev_tree_with_the_dev_presets_flags(self):
        """Other flags than the preset's make verify recompile what bless built through it."""
        from suitelib import verify
        presets = json.loads((REPO / "CMakePresets.json").read_text())
        dev = next(p for p in presets["configurePresets"] if p["name"] == "dev")["cacheVariables"]
        for env in ({}, {"CUDAFLAGS": "-G"}):
            with patched(verify.os, "environ", env):
                self.assertEqual(verify.cuda_flags(), dev["CMAKE_CUDA_FLAGS"].replace("$env{CUDAFLAGS}", env.get("CUDAFLAGS", "")))


class TestAnchors(Scratch):
    LADDER = "kernel,n,median_ms,gflops\ntiled16,4096,10.0,{a}\nregister2d,4096,2.0,{b}\n"

    def setUp(self):
        super().setUp()
        # The anchor runs and the goal come from the course file, as for the real suite.
        (self.root / "scripts").mkdir(exist_ok=True)
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "gemm_ladder", "day": "final", "teaches": "t",
             "anchor_runs": [{"args": ["--csv", "-n", "4096"], "pick": "all"}],
             "anchor_goal": {"n": 4096, "min_ratio": 0.75}}]}))

    def test_interleaved_lesson_and_anchor_runs(self):
        calls = []

        def runner(binary, args):
            calls.append(Path(binary).name)
            if Path(binary).name == "cublas_sgemm":
                return {"exit_code": 0, "stdout": cublas_csv(args, 50000)}
            return {"exit_code": 0, "stdout": self.LADDER.format(a=10000, b=40000)}
        folder = self.fake("gemm_ladder", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        entries = anchors.measure_anchors(self.root, folder, "h200", lambda s: None, runner)
        self.assertEqual(calls[:4], ["gemm_ladder", "cublas_sgemm", "gemm_ladder", "cublas_sgemm"])
        self.assertEqual([(e["kernel"], e["n"], e["ratio"]) for e in entries], [("tiled16", 4096, 0.2), ("register2d", 4096, 0.8)])
        self.assertEqual([(e["rounds"], e["ratio_min"], e["ratio_max"]) for e in entries],
                         [(anchors.ROUNDS, 0.2, 0.2), (anchors.ROUNDS, 0.8, 0.8)])
        csv = (self.root / "expected/h200/data/anchors.csv").read_text()
        self.assertTrue(csv.startswith("lesson,kernel,n,gflops,cublas_gflops,ratio,rounds,ratio_min,ratio_max\n"))
        self.assertIn("gemm_ladder,register2d,4096,40000.0,50000.0,0.8,3,0.8,0.8\n", csv)

    def test_each_rounds_ratio_is_set_against_the_cublas_run_right_after_it(self):
        """Five rounds where the clocks drift: the spread comes from each round's own pair, and a run
        given more rounds than ROUNDS runs them all."""
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "gemm_ladder", "day": "final", "teaches": "t",
             "anchor_runs": [{"args": ["--csv", "-n", "4096"], "pick": "all", "rounds": 5}]}]}))
        lesson_rates = iter([10000, 11000, 12000, 9000, 10000])
        cublas_rates = iter([50000, 50000, 40000, 50000, 50000])

        def runner(binary, args):
            if Path(binary).name == "cublas_sgemm":
                return {"exit_code": 0, "stdout": cublas_csv(args, next(cublas_rates))}
            return {"exit_code": 0, "stdout": self.LADDER.format(a=next(lesson_rates), b=40000)}
        folder = self.fake("gemm_ladder", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        entries = anchors.measure_anchors(self.root, folder, "h200", lambda s: None, runner)
        tiled = next(e for e in entries if e["kernel"] == "tiled16")
        self.assertEqual((tiled["rounds"], tiled["ratio"], tiled["ratio_min"], tiled["ratio_max"]),
                         (5, 0.2, 0.18, 0.3), "medians 10000 / 50000; rounds 9000 / 50000 .. 12000 / 40000")
        table = anchors.anchor_table(entries)
        self.assertIn("| 5: 0.18 .. 0.3 |", table)

    def test_the_anchor_times_as_many_launches_as_the_lesson_run(self):
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "gemm_ladder", "day": "final", "teaches": "t",
             "anchor_runs": [{"args": ["--csv", "-n", "4096"], "pick": "all"},
                             {"args": ["--csv", "-n", "4096", "-iters", "5"], "pick": "all", "rounds": 1}]}]}))
        calls = []

        def runner(binary, args):
            calls.append((Path(binary).name, list(args)))
            short = "-iters" in args  # the 5-launch runs measure other rates on both sides
            if Path(binary).name == "cublas_sgemm":
                rate = 40000 if short else 50000
                return {"exit_code": 0, "stdout": cublas_csv(args, rate)}
            return {"exit_code": 0, "stdout": self.LADDER.format(a=20000 if short else 10000, b=40000)}
        folder = self.fake("gemm_ladder", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        entries = anchors.measure_anchors(self.root, folder, "h200", lambda s: None, runner)
        tiled = sorted((e["gflops"], e["cublas_gflops"], e["ratio"]) for e in entries if e["kernel"] == "tiled16")
        self.assertEqual(tiled, [(10000.0, 50000.0, 0.2), (20000.0, 40000.0, 0.5)],
                         "each lesson figure set against cuBLAS timed with as many launches")
        self.assertEqual(calls[:4], [("gemm_ladder", ["--csv", "-n", "4096"]), ("cublas_sgemm", ["-n", "4096"]),
                                     ("gemm_ladder", ["--csv", "-n", "4096", "-iters", "5"]),
                                     ("cublas_sgemm", ["-n", "4096", "-iters", "5"])])
        self.assertEqual(calls.count(("gemm_ladder", ["--csv", "-n", "4096", "-iters", "5"])), 1, "a one-round run")
        self.assertEqual(calls.count(("gemm_ladder", ["--csv", "-n", "4096"])), anchors.ROUNDS)

    def test_a_partial_verify_keeps_the_other_lessons_anchors(self):
        def runner(binary, args):
            if Path(binary).name == "cublas_sgemm":
                return {"exit_code": 0, "stdout": cublas_csv(args, 50000)}
            return {"exit_code": 0, "stdout": self.LADDER.format(a=10000, b=40000)}
        folder = self.fake("gemm_ladder", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        old = [{"lesson": "sweep", "kernel": "point 256/16/4", "n": 1024, "gflops": 15388.4,
                "cublas_gflops": 36852.8, "ratio": 0.418},
               {"lesson": "gemm_ladder", "kernel": "tiled16", "n": 4096, "gflops": 1.0,
                "cublas_gflops": 2.0, "ratio": 0.5}]
        entries = anchors.measure_anchors(self.root, folder, "h200", lambda s: None, runner, kept=old)
        self.assertIn(old[0], entries, "a lesson this verify did not measure keeps its entry")
        self.assertNotIn(old[1], entries, "a measured lesson's old entry is replaced, not kept")
        self.assertEqual(len(entries), 3)
        csv = (self.root / "expected/h200/data/anchors.csv").read_text()
        self.assertIn("sweep,point 256/16/4,1024,15388.4,36852.8,0.418", csv)

    def test_no_anchor_binary_records_nothing(self):
        self.assertEqual(anchors.measure_anchors(self.root, self.root, "h200", lambda s: None), [])

    def test_best_is_chosen_once_over_the_rounds(self):
        """Two sweep points within noise of each other: each round's own best differs, but the record
        holds one entry, the point with the best median rate, measured in every round."""
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "sweep", "day": "final", "teaches": "t", "anchor_runs": [{"args": ["-csv"], "pick": "best"}]}]}))
        rates = iter([(10, 9), (8, 11), (10, 9)])  # (point a, point b) a round: a wins twice, b's median 9

        def runner(binary, args):
            if Path(binary).name == "cublas_sgemm":
                return {"exit_code": 0, "stdout": "kernel,n,median_ms,gflops\ncublas_sgemm,1024,1.0,20\n"}
            a, b = next(rates)
            return {"exit_code": 0, "stdout": "device,m,n,k,threads,tk,co,status,gflops\n"
                                              f"X,1024,1024,1024,128,8,1,PASS,{a}\nX,1024,1024,1024,256,8,1,PASS,{b}\n"}
        folder = self.fake("sweep", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        entries = anchors.measure_anchors(self.root, folder, "h200", lambda s: None, runner)
        self.assertEqual([(e["kernel"], e["gflops"], e["rounds"], e["ratio_min"], e["ratio_max"]) for e in entries],
                         [("point 128/8/1", 10.0, 3, 0.4, 0.5)])

    def test_best_per_kernel_is_chosen_once_over_the_rounds(self):
        """report_data's pick: each kernel's best n, chosen over the rounds' medians (a round's own best n
        can flip between two sizes within noise, which gave one kernel two entries)."""
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "report_data", "day": "final", "teaches": "t", "anchor_runs": [{"args": [], "pick": "best-per-kernel"}]}]}))
        rates = iter([(10, 10.5), (10.6, 10), (10, 10.4)])  # naive at n = 1000 and 2048, a round each

        def runner(binary, args):
            if Path(binary).name == "cublas_sgemm":
                return {"exit_code": 0, "stdout": cublas_csv(args, 20)}
            a, b = next(rates)
            return {"exit_code": 0, "stdout": f"kernel,n,verdict,gflops\nnaive,1000,PASS,{a}\nnaive,2048,PASS,{b}\n"
                                              f"tiled,2048,PASS,30\n"}
        folder = self.fake("report_data", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        entries = anchors.measure_anchors(self.root, folder, "h200", lambda s: None, runner)
        self.assertEqual([(e["kernel"], e["n"], e["rounds"]) for e in entries], [("naive", 2048, 3), ("tiled", 2048, 3)])

    def test_a_step_of_one_round_is_set_against_that_rounds_cublas(self):
        """Steps 1-14 at 4096 run in the first round only: their ratio is that round's own, not the
        lesson figure over the five rounds' cuBLAS median (which put each outside its own spread)."""
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "gemm_ladder", "day": "final", "teaches": "t",
             "anchor_runs": [{"args": ["--csv", "-n", "4096"], "pick": "all", "rounds": 5,
                              "later_args": ["-from", "15"]}]}]}))
        cublas_rates = iter([10, 20, 20, 20, 20])

        def runner(binary, args):
            if Path(binary).name == "cublas_sgemm":
                return {"exit_code": 0, "stdout": cublas_csv(args, next(cublas_rates))}
            early = "" if "-from" in args else "step1,4096,PASS,5\n"
            return {"exit_code": 0, "stdout": "kernel,n,verdict,gflops\n" + early + "top,4096,PASS,10\n"}
        folder = self.fake("gemm_ladder", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        entries = anchors.measure_anchors(self.root, folder, "h200", lambda s: None, runner)
        self.assertEqual([(e["kernel"], e["cublas_gflops"], e["ratio"], e["ratio_min"], e["ratio_max"]) for e in entries],
                         [("step1", 10.0, 0.5, 0.5, 0.5), ("top", 20.0, 0.5, 0.5, 1.0)])

    def test_a_failed_first_round_is_run_whole_again_before_later_args(self):
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "gemm_ladder", "day": "final", "teaches": "t",
             "anchor_runs": [{"args": ["--csv", "-n", "4096"], "pick": "all", "rounds": 3,
                              "later_args": ["-from", "15"]}]}]}))
        calls, exits = [], iter([1, 0, 0])

        def runner(binary, args):
            if Path(binary).name == "cublas_sgemm":
                return {"exit_code": 0, "stdout": cublas_csv(args, 10)}
            calls.append(list(args))
            return {"exit_code": next(exits), "stdout": "kernel,n,verdict,gflops\nstep1,4096,PASS,5\n"}
        folder = self.fake("gemm_ladder", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        anchors.measure_anchors(self.root, folder, "h200", lambda s: None, runner)
        self.assertEqual(calls, [["--csv", "-n", "4096"]] * 2 + [["--csv", "-n", "4096", "-from", "15"]])

    def test_a_cublas_size_with_no_row_is_named_and_the_others_kept(self):
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "report_data", "day": "final", "teaches": "t", "anchor_runs": [{"args": [], "pick": "all"}]}]}))
        said = []

        def runner(binary, args):
            if Path(binary).name == "cublas_sgemm":  # n = 1000 failed its check: no row, exit 1
                return {"exit_code": 1, "stdout": "kernel,n,median_ms,gflops\ncublas_sgemm,2048,1.0,20\n"}
            return {"exit_code": 0, "stdout": "kernel,n,verdict,gflops\nnaive,1000,PASS,5\nnaive,2048,PASS,5\n"}
        folder = self.fake("report_data", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        entries = anchors.measure_anchors(self.root, folder, "h200", said.append, runner)
        self.assertEqual([(e["n"], e["ratio"]) for e in entries], [(2048, 0.25)])
        self.assertTrue(any("exited 1, no rate for n = 1000" in s for s in said), said)

    def test_every_size_of_a_run_is_timed_in_one_cublas_process(self):
        """report_data prints eight sizes: one cublas_sgemm process a round times them all, and each
        row is set against the rate of its own size."""
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "report_data", "day": "final", "teaches": "t", "anchor_runs": [{"args": [], "pick": "all"}]}]}))
        calls = []

        def runner(binary, args):
            calls.append((Path(binary).name, list(args)))
            if Path(binary).name == "cublas_sgemm":
                sizes = [args[i + 1] for i, a in enumerate(args) if a == "-n"]
                return {"exit_code": 0, "stdout": "kernel,n,median_ms,gflops\n"
                                                  + "".join(f"cublas_sgemm,{n},1.0,{int(n) * 10}\n" for n in sizes)}
            return {"exit_code": 0, "stdout": "kernel,n,verdict,gflops\nnaive,1000,PASS,5000\nnaive,2048,PASS,5120\n"}
        folder = self.fake("report_data", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        entries = anchors.measure_anchors(self.root, folder, "h200", lambda s: None, runner)
        self.assertEqual([c for c in calls if c[0] == "cublas_sgemm"],
                         [("cublas_sgemm", ["-n", "1000", "-n", "2048"])] * anchors.ROUNDS)
        self.assertEqual([(e["n"], e["cublas_gflops"], e["ratio"]) for e in entries],
                         [(1000, 10000.0, 0.5), (2048, 20480.0, 0.25)])

    def test_a_step_missing_from_a_round_keeps_its_place_before_the_top_step(self):
        """The goal judges a size's last entry as its top step: a step that failed in round 0 and
        passed later stays in its CSV place, not after the top step."""
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "gemm_ladder", "day": "final", "teaches": "t",
             "anchor_runs": [{"args": ["--csv", "-n", "4096"], "pick": "all", "rounds": 5}]}]}))
        verdicts = iter(["FAIL"] + ["PASS"] * 4)

        def runner(binary, args):
            if Path(binary).name == "cublas_sgemm":
                return {"exit_code": 0, "stdout": "kernel,n,median_ms,gflops\ncublas_sgemm,4096,1.0,10\n"}
            return {"exit_code": 0, "stdout": "kernel,n,verdict,gflops\nstep1,4096,PASS,1\n"
                                              f"step2,4096,{next(verdicts)},5\ntop,4096,PASS,9\n"}
        folder = self.fake("gemm_ladder", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        entries = anchors.measure_anchors(self.root, folder, "h200", lambda s: None, runner)
        self.assertEqual([(e["kernel"], e["rounds"]) for e in entries], [("step1", 5), ("step2", 4), ("top", 5)])

    def test_later_rounds_add_their_arguments_and_keep_the_step_order(self):
        """gemm_ladder's goal runs: the first round times every step, the later ones (-from 15) only the
        top steps; those get every round, the rest one, and the top step stays its size's last entry."""
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "gemm_ladder", "day": "final", "teaches": "t",
             "anchor_runs": [{"args": ["--csv", "-n", "4096"], "pick": "all", "rounds": 5,
                              "later_args": ["-from", "15"]}]}]}))
        calls = []

        def runner(binary, args):
            calls.append((Path(binary).name, list(args)))
            if Path(binary).name == "cublas_sgemm":
                return {"exit_code": 0, "stdout": "kernel,n,median_ms,gflops\ncublas_sgemm,4096,1.0,10\n"}
            top = "ring,4096,PASS,8\ntop,4096,PASS,9\n"
            return {"exit_code": 0, "stdout": "kernel,n,verdict,gflops\n"
                                              + ("" if "-from" in args else "step1,4096,PASS,1\nstep2,4096,PASS,5\n") + top}
        folder = self.fake("gemm_ladder", "true", "bin")
        self.fake("cublas_sgemm", "true", "bin")
        entries = anchors.measure_anchors(self.root, folder, "h200", lambda s: None, runner)
        ladder = [args for name, args in calls if name == "gemm_ladder"]
        self.assertEqual(ladder, [["--csv", "-n", "4096"]] + [["--csv", "-n", "4096", "-from", "15"]] * 4)
        self.assertEqual(calls.count(("cublas_sgemm", ["-n", "4096"])), 5, "every round set against cuBLAS")
        self.assertEqual([(e["kernel"], e["rounds"]) for e in entries],
                         [("step1", 1), ("step2", 1), ("ring", 5), ("top", 5)])
        (self.root / "anchors").mkdir()
        (self.root / "anchors/cublas_sgemm.cu").write_text("")
        (self.root / "lessons/gemm_ladder.cu").write_text("")
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "gemm_ladder", "day": "final", "teaches": "t", "anchor_goal": {"n": 4096, "min_ratio": 0.85},
             "anchor_runs": [{"args": ["--csv", "-n", "4096"], "pick": "all", "rounds": 5}]}]}))
        self.assertEqual(anchors.anchor_problems(self.root, {"anchors": entries}, "r"), [],
                         "the goal judges the top step, 0.9 of cuBLAS over 5 rounds")

    def test_a_malformed_anchor_run_is_one_error(self):
        for run, said in (({"args": [], "rounds": "5"}, "rounds must be a whole number of at least 1, got '5'"),
                          ({"args": [], "rounds": 0}, "got 0"), ({"args": [], "pick": "fastest"}, "pick must be"),
                          ({"args": [], "later_args": "-from 15"}, "later_args must be a list of strings"),
                          ({"args": [], "later_args": [15]}, "later_args must be a list of strings"),
                          ({"args": [], "pick": "best", "later_args": ["-from", "15"]}, "later_args needs pick all"),
                          ({"args": [], "later_args": ["-iters", "2"]}, "later_args may not give -iters"),
                          ({"args": ["--csv", "-n", 4096]}, "args must be a list of strings")):
            with self.subTest(run=run):
                (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
                    {"name": "gemm_ladder", "day": "final", "teaches": "t", "anchor_runs": [run]}]}))
                with self.assertRaises(SuiteError) as caught:
                    anchors.lesson_runs(self.root)
                self.assertIn(said, str(caught.exception))

    def test_best_rows(self):
        sweep = "device,m,n,k,threads,tk,co,status,gflops\nX,1024,1024,1024,128,8,1,PASS,5\nX,1024,1024,1024,256,8,1,PASS,9\n"
        self.assertEqual(anchors.gemm_rows("sweep", sweep, "best"), [("point 256/8/1", 1024, 9.0)])

    def test_check_refuses_a_malformed_anchor_run_without_a_gpu(self):
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "gemm_ladder", "day": "final", "teaches": "t",
             "anchor_runs": [{"args": ["--csv"], "later_args": "-from 15"}]}]}))
        self.assertEqual(len(anchors.anchor_problems(self.root, {"anchors": []}, "r")), 1)
        self.assertIn("later_args must be a list of strings", anchors.anchor_problems(self.root, {}, "r")[0])

    def test_top_step_ratio_is_checked(self):
        (self.root / "anchors").mkdir()
        (self.root / "anchors/cublas_sgemm.cu").write_text("")
        (self.root / "lessons/gemm_ladder.cu").write_text("")
        top = {"lesson": "gemm_ladder", "kernel": "top", "n": 4096, "ratio": 0.5, "rounds": 5,
               "ratio_min": 0.49, "ratio_max": 0.52}
        rec = {"anchors": [top]}
        self.assertIn("reaches 0.5 of cuBLAS, its best of 5 rounds 0.52 (need 0.75)",
                      anchors.anchor_problems(self.root, rec, "r")[0])
        top.update(ratio=0.8, ratio_max=0.81)
        self.assertEqual(anchors.anchor_problems(self.root, rec, "r"), [])
        top.update(ratio=0.74, ratio_max=0.76)
        self.assertEqual(anchors.anchor_problems(self.root, rec, "r"), [], "within its spread: met")
        self.assertEqual(anchors.goal_met(top, 0.75), "met within its spread")
        top.update(ratio=0.74, ratio_max=0.749)
        self.assertIn("reaches 0.74 of cuBLAS", anchors.anchor_problems(self.root, rec, "r")[0])

    def test_a_goal_needs_five_rounds_and_their_spread(self):
        (self.root / "anchors").mkdir()
        (self.root / "anchors/cublas_sgemm.cu").write_text("")
        (self.root / "lessons/gemm_ladder.cu").write_text("")
        top = {"lesson": "gemm_ladder", "kernel": "top", "n": 4096, "ratio": 0.9}
        rec = {"anchors": [top]}
        self.assertIn("recorded over unknown rounds; its goal needs at least 5",
                      anchors.anchor_problems(self.root, rec, "r")[0], "no spread: not met, however high")
        top.update(rounds=3, ratio_min=0.89, ratio_max=0.91)
        self.assertIn("recorded over 3 rounds", anchors.anchor_problems(self.root, rec, "r")[0])
        top.update(rounds=5)
        self.assertEqual(anchors.anchor_problems(self.root, rec, "r"), [])

    def test_every_goal_of_a_list_is_checked(self):
        (self.root / "anchors").mkdir()
        (self.root / "anchors/cublas_sgemm.cu").write_text("")
        (self.root / "lessons/gemm_ladder.cu").write_text("")
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "gemm_ladder", "day": "final", "teaches": "t",
             "anchor_goal": [{"n": 1024, "min_ratio": 0.95}, {"n": 2048, "min_ratio": 0.93}, {"n": 8192}]}]}))
        spread = {"rounds": 5, "ratio_min": 0.9}
        rec = {"anchors": [dict(spread, lesson="gemm_ladder", kernel="top", n=1024, ratio=0.96, ratio_max=0.97),
                           dict(spread, lesson="gemm_ladder", kernel="top", n=2048, ratio=0.92, ratio_max=0.925)]}
        problems = anchors.anchor_problems(self.root, rec, "r")
        self.assertEqual(len(problems), 2, problems)
        self.assertIn("at n = 2048 reaches 0.92 of cuBLAS", problems[0])
        self.assertIn("anchor_goal {'n': 8192} is not {n, min_ratio}", problems[1])


if __name__ == "__main__":
    unittest.main()


class TestVerifyCommand(Scratch):
    """verify end to end on the miniature suite, with the GPU parts faked (no GPU needed)."""

    def test_verify_writes_a_record_that_check_accepts(self):
        status, out, err = self.fake_verify()
        self.assertEqual(status, 0, out + err)
        record = json.loads((self.root / "expected/h200/verify.json").read_text())
        self.assertEqual(record["ctest_gpu"], {"passed": 3, "failed": 0, "skipped": 1})
        self.assertEqual(len(record["student_attempts"]), 4)
        self.assertIn("expected/h200/demo@twice.txt", record["files"])
        self.assertTrue(all(e["repeat_identical"] and e["transcript_match"] for e in record["programs"]))
        self.assertIn("## Student attempts", (self.root / "expected/h200/verify.md").read_text())
        self.assertTrue(all(a["runs"] == ["demo", "demo@twice"] for a in record["student_attempts"]))
        self.assertEqual(set(record["programs"][0]["runs_budget"]), {"demo", "demo@twice"})
        self.assertEqual(record["exercise_speed"], [])
        self.assertCheckPasses("verify-record")

    def test_verify_times_the_speed_exercise_in_its_own_phase(self):
        """With a speed rule: the solution, the slow reference and each correct and slow attempt are timed and recorded."""
        TestVerifyRecord.add_speed(self)
        from suitelib.model import find_run
        for rid, out in (("demo", "answer 42\nk 1.0 ms\n"), ("demo@twice", "answer 84\nk 1.0 ms\n"),
                         ("starter/demo", "answer 42\nk 1.0 ms\n")):
            self.record(find_run(self.root, rid), stdout=out)
        status, out, err = self.fake_verify(speed=True)
        self.assertEqual(status, 0, out + err)
        record = json.loads((self.root / "expected/h200/verify.json").read_text())
        [entry] = record["exercise_speed"]
        self.assertEqual((entry["lesson"], entry["region"], entry["run"], entry["slow_ratio"]), ("demo", "twice", "demo", 3.0))
        self.assertEqual({a["name"]: a["outcome"] for a in entry["attempts"]},
                         {"times-two": "passed", "add-self": "passed", "one-plus": "failed"})
        self.assertIn("## Speed exercises", (self.root / "expected/h200/verify.md").read_text())
        self.assertCheckPasses("verify-record")

    def test_partial_verify_keeps_the_hashes_it_did_not_redo(self):
        """verify --only one program merges into the record: the other files keep their hashes."""
        self.assertEqual(self.fake_verify()[0], 0)
        status, out, err = self.fake_verify("--only", "lessons/demo.cu", "--no-ctest")
        self.assertEqual(status, 0, out + err)
        record = json.loads((self.root / "expected/h200/verify.json").read_text())
        self.assertIn("expected/h200/starter/demo.txt", record["files"])
        self.assertEqual(record["ctest_gpu"], {"passed": 3, "failed": 0, "skipped": 1, "kept": True})
        self.assertIn("3 passed, 0 failed, 1 skipped, kept from an earlier verify (this one ran with --no-ctest).",
                      (self.root / "expected/h200/verify.md").read_text())
        self.assertCheckPasses("verify-record")

    def test_mutate_builds_each_mutant_with_the_gpus_code_as_verify_does(self):
        from helpers import patched
        from suitelib import catalogue
        facts = running.GpuFacts("NVIDIA H200", "h200", "13.0")
        seen = []

        def fake_parallel(fn, jobs):
            seen.extend(jobs)
            return [{"name": job[2].name, "description": "", "killed": True, "outcome": "exit 1"} for job in jobs]
        with patched(commands, "require_gpu", lambda what: facts), patched(catalogue, "native_arch", lambda: "sm_90"), \
                patched(catalogue, "run_parallel", fake_parallel):
            self.main("mutate", "demo", writes=True)
        self.assertTrue(seen)
        self.assertTrue(all(job[-1] == "sm_90" for job in seen), seen)

    def test_a_malformed_anchor_run_stops_verify_before_it_builds(self):
        """A bad later_args in course.json is one line at verify's start, not after the build and the
        budget phase (where the anchors phase would first read it)."""
        from helpers import patched
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "demo", "day": "final", "teaches": "t",
             "anchor_runs": [{"args": ["--csv"], "later_args": "-from 15"}]}]}))
        built = []
        with patched(verifyrun, "build_native", lambda *a: built.append(a)):
            status, out, err = self.fake_verify()
        self.assertNotEqual(status, 0)
        self.assertIn("later_args must be a list of strings", out + err)
        self.assertEqual(built, [], "nothing built before the course file was read")

    def test_the_anchors_phase_gets_its_runner_and_the_kept_entries(self):
        """measure_anchors' runner is a program runner, and a partial run's kept entries go by keyword
        (a positional call once passed the kept list as the runner)."""
        from helpers import patched
        seen = {}

        def fake(root, bin_dir, gpu, progress, runner=running.run_binary, kept=()):
            seen.update(runner=runner, kept=list(kept))
            return []
        with patched(verifyrun, "measure_anchors", fake):
            self.assertEqual(self.fake_verify()[0], 0)
        self.assertIs(seen["runner"], running.run_binary)
        self.assertEqual(seen["kept"], [])

    def fake_verify(self, *extra, speed=False):
        from helpers import patched
        from suitelib import catalogue, running
        from test_catalogue import fake_build
        k = '; echo "k 1.0 ms"' if speed else ""
        script = f'if [ "$1" = --twice ]; then echo "answer 84"{k}; else echo "answer 42"{k}; fi'
        bin_dir = self.fake("demo", script, "bin")
        self.fake("demo_starter", f'echo "answer 42"{k}', "bin")
        if speed:
            fake_build = speed_build
        facts = running.GpuFacts("NVIDIA H200", "h200", "13.0")
        budget = {"exit_code": 0, "wall_s_1core": 1.0, "cpu_s_1core": 1.0, "peak_rss_mib": 50.0, "output_bytes": 10}
        gpu_ctest = {"passed": 3, "failed": 0, "skipped": 1}
        with patched(commands, "require_gpu", lambda what: facts), \
                patched(verifyrun, "build_tree", lambda *a, **k: bin_dir), \
                patched(verify, "sanitizer_findings", lambda *a: (0, "")), \
                patched(verifyrun, "run_measured", lambda *a: dict(budget)), \
                patched(verifyrun, "ctest_gpu", lambda root, bdir=None: dict(gpu_ctest)), \
                patched(verify, "ctest_gpu", lambda root, bdir=None: dict(gpu_ctest)), \
                patched(catalogue, "run_mutant", lambda root, p, m, sass=None: {"name": m.name, "description": "", "killed": True,
                                                                     "outcome": "exit 1: GATE"}), \
                patched(catalogue, "build_in_scratch", fake_build):
            return self.main("verify", *extra, writes=True)


def speed_build(prog, text, tmp, arch=None, sass=None):
    """A 'compiler' for the demo that also prints a time: 3 ms for the slow reference (v + v), 2.6 ms for
    the slow attempt (1 * v + v), else 1 ms."""
    import re
    body = re.search(r"int twice\(int v\) \{ return (.*?); \}", text).group(1)
    ms = 3.0 if body == "v + v" and "solution" in text else (2.6 if body == "1 * v + v" else 1.0)
    value = eval(body, {}, {"v": 42})
    path = Path(tmp) / "demo"
    path.write_text(f"#!/bin/sh\nif [ \"$1\" = --twice ]; then echo 'answer {value}'; else echo 'answer 42'; fi\n"
                    f"echo 'k {ms} ms'\n")
    path.chmod(0o755)
    return path, None


class TestRecordUpdates(Scratch):
    """mutate and attempts update the record but never re-hash the transcripts (no laundering)."""

    write_record = TestVerifyRecord.write_record

    def test_attempts_command_keeps_the_hashes(self):
        from helpers import patched
        from suitelib import catalogue, running
        self.write_record()
        path = self.root / "expected/h200/demo.txt"
        path.write_text(path.read_text().replace("answer 42", "answer 43"))
        entry = {"lesson": "demo", "region": "twice", "name": "x", "kind": "wrong", "accepted": False, "outcome": "r"}
        with patched(running, "detect_gpu", lambda: running.GpuFacts("NVIDIA H200", "h200", "13.0")), \
                patched(exercises, "run_attempt", lambda root, a, gpu, w, sass=None: dict(entry, name=a.name, kind=a.kind,
                                                                              accepted=a.kind == "correct")):
            status, out, err = self.main("attempts", writes=True)
        self.assertEqual(status, 0, out + err)
        self.assertCheckFails("verify-record", "expected/h200/demo.txt:1: changed since the GPU record")


class TestVerifyPhases(Scratch):
    """The parallel phase's order and the sanitizer options: what keeps verify within its time limit and
    lets memcheck see a read past one buffer."""

    def jobs(self, last=()):
        from suitelib import catalogue
        progs, cats = programs(self.root), catalogue.load(self.root)
        return verifyrun.parallel_jobs(self.root, progs, Path("n"), Path("p"), "h200", cats, True, last)

    def test_the_last_records_slowest_jobs_start_first(self):
        last = [{"job": "repeat lessons/demo.cu 2", "s": 500.0}, {"job": "sanitizer starter/demo.cu synccheck", "s": 90.0}]
        names = [verifyrun.job_name(key) for key, _, _ in self.jobs(last)]
        self.assertEqual(names[:3], ["repeat lessons/demo.cu 2", "sanitizer starter/demo.cu synccheck", "ctest gpu"])

    def test_long_jobs_first_and_starters_with_lessons(self):
        kinds = [key[0] for key, _, _ in self.jobs()]
        self.assertEqual(kinds[0], "ctest")
        self.assertEqual(kinds, sorted(kinds, key=verifyrun.JOB_ORDER.index))
        sanitizers = [key for key, _, _ in self.jobs() if key[0] == "sanitizer"]
        self.assertEqual([k[2] for k in sanitizers[:2]], ["racecheck", "racecheck"])  # the lesson's and the starter's
        self.assertEqual({k[1] for k in sanitizers[:2]}, {"lessons/demo.cu", "starter/demo.cu"})

    def test_memcheck_pads_allocations(self):
        opts = {key[2]: fargs[3] for key, _, fargs in self.jobs() if key[0] == "sanitizer"}
        self.assertEqual(opts["memcheck"][:2], ["--padding", "65536"])
        self.assertNotIn("--padding", opts["racecheck"])

    def test_ctest_reuses_the_native_tree(self):
        seen = []

        def fake_run(cmd, **kw):
            seen.append(cmd)
            return subprocess.CompletedProcess(cmd, 0, "Test #1: a ....   Passed\nTest #2: b ....***Failed\n", "")
        from helpers import patched
        with patched(running.subprocess, "run", fake_run):
            counts = running.ctest_gpu(self.root, self.root / "build/verify-native")
        self.assertEqual([c[0] for c in seen], ["ctest"])
        self.assertIn("--test-dir", seen[0])
        self.assertEqual(seen[0][seen[0].index("-L") + 1], "^cli$")
        self.assertEqual((counts["passed"], counts["failed"], counts["failed_tests"]), (1, 1, ["b"]))


class TestStarterRacecheck(Scratch):
    """A starter's racecheck instruments only the kernels its exercise regions define or lie in; a lesson's, every kernel."""

    def test_the_kernels_of_exercise_regions(self):
        from suitelib import sanitize
        text = ("// exercise: k\ntemplate <int B>\n__global__ void __launch_bounds__(B * (2 + 1))\n"
                "    tiled(float* c) { c[0] = 1; }\n// end exercise\n"
                "__global__ void outer(float* c) {\n  if (c) {\n// exercise: body\n  c[1] = 2;\n// end exercise\n  }\n}\n")
        self.assertEqual(sanitize.region_kernels(text, kinds=("exercise",)), ["tiled", "outer"])
        self.assertEqual(sanitize.region_kernels(text, region="body"), ["outer"])
        host = text + "__device__ void f() {}\nvoid g() {\n// exercise: host\n  f();\n// end exercise\n}\n"
        self.assertEqual(sanitize.region_kernels(host, kinds=("exercise",)), [])  # host code: every kernel

    def test_filtered_racecheck_falls_back_to_every_kernel(self):
        from helpers import patched
        from suitelib import catalogue
        calls = []

        def fake(binary, args, tool, options=()):
            calls.append(list(options))
            return (None, "unknown option") if "--kernel-name" in options else (0, "")
        with patched(catalogue, "sanitizer_findings", fake), patched(verify, "sanitizer_findings", fake):
            self.assertEqual(verify.sanitized("b", [], "racecheck", [], ["tiled"]), (0, ""))
            self.assertEqual(calls, [["--kernel-name", "kns=tiled"], []])
            calls.clear()
            verify.sanitized("b", [], "memcheck", [], ["tiled"])
            self.assertEqual(calls, [[]])

    def test_findings_of_each_filtered_kernel_add_up(self):
        from helpers import patched
        from suitelib import catalogue, sanitize
        with patched(catalogue, "sanitizer_findings", lambda b, a, t, o=(): (1 if "kns=two" in o else 0, "x")):
            self.assertEqual(sanitize.filtered_findings("b", [], "racecheck", [], ["one", "two"])[0], 1)


class TestCommonKernelProbe(Scratch):
    """A common kernel too slow to racecheck at full size in every program is left out of their
    racecheck runs and racechecked once by its probe; the record must show that run clean."""

    def carry_smem_roof(self):
        path = self.root / "lessons/demo.cu"
        path.write_text(path.read_text() + "// common: smem_roof\n// end common: smem_roof\n")
        (self.root / "tests/probes").mkdir(parents=True)
        (self.root / "tests/probes/smem_roof_probe.cu").write_text("int main() {}\n")

    def test_racecheck_leaves_the_kernel_to_its_probe(self):
        from suitelib import catalogue
        self.carry_smem_roof()
        jobs = {key: fargs for key, _, fargs in verify.make_jobs(self.root, programs(self.root), Path("n"), Path("p"),
                                                                 "h200", catalogue.load(self.root))}
        race, mem = jobs[("sanitizer", "lessons/demo.cu", "racecheck")][3], jobs[("sanitizer", "lessons/demo.cu", "memcheck")][3]
        self.assertIn("kns=ceilingSmemKernel", race)
        self.assertEqual(race[race.index("kns=ceilingSmemKernel") - 1], "--kernel-name-exclude")
        self.assertNotIn("kns=ceilingSmemKernel", mem)
        self.assertNotIn("kns=ceilingSmemKernel", jobs[("sanitizer", "starter/demo.cu", "racecheck")][3])
        self.assertEqual(jobs[("sanitizer", "tests/probes/smem_roof_probe.cu", "racecheck")][0], Path("n/smem_roof_probe"))

    def test_the_probes_racecheck_must_be_on_record_and_clean(self):
        rec = {"programs": [{"program": "lessons/demo.cu", "racecheck_excludes": ["ceilingSmemKernel"]}]}
        self.assertIn("no record", verify._common_kernel_problems(rec, "r")[0])
        rec["common_kernels"] = [{"kernel": "ceilingSmemKernel", "program": "p", "racecheck": 2}]
        self.assertIn("found 2", verify._common_kernel_problems(rec, "r")[0])
        rec["common_kernels"][0]["racecheck"] = 0
        self.assertEqual(verify._common_kernel_problems(rec, "r"), [])
        self.assertEqual(verify._common_kernel_problems({"programs": [{"program": "x"}]}, "r"), [])


class TestBuildCache(unittest.TestCase):
    """verify builds a text once for every job that asks for it with the same command line."""

    def test_one_build_per_text_and_command_even_at_once(self):
        import concurrent.futures
        import tempfile
        import threading
        from suitelib import builds
        count, lock = [], threading.Lock()

        def compile_in(folder):
            with lock:
                count.append(folder)
            (folder / "prog").write_text("x")
            return folder / "prog", None
        with tempfile.TemporaryDirectory() as tmp:
            cache = builds.BuildCache(tmp)
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                got = list(pool.map(lambda i: cache.build("same text", ["nvcc", "-o", "prog"], compile_in), range(8)))
            self.assertEqual(len(count), 1)
            self.assertEqual(len({g for g in got}), 1)
            cache.build("other text", ["nvcc", "-o", "prog"], compile_in)
            cache.build("same text", ["nvcc", "-arch=sm_90", "-o", "prog"], compile_in)
            self.assertEqual(len(count), 3)
            failed = cache.build("bad", ["nvcc"], lambda folder: (None, "does not compile: x"))
            self.assertEqual(failed, (None, "does not compile: x"))
            self.assertEqual(cache.build("bad", ["nvcc"], compile_in), (None, "does not compile: x"))


class TestCommonKernelSkip(unittest.TestCase):
    """Who may leave the common kernel out of racecheck: a program carrying its block; a student's
    file only where it carries the block exactly as the lesson does."""

    LESSON = "x\n// common: smem_roof\n__global__ void ceilingSmemKernel() {}\n// end common: smem_roof\n"

    def test_carried_blocks_and_edited_copies(self):
        from suitelib import commonkernels
        self.assertEqual(commonkernels.racecheck_excludes(self.LESSON), ["ceilingSmemKernel"])
        self.assertEqual(commonkernels.racecheck_excludes("no block"), [])
        edited = self.LESSON.replace("{}", "{ int x = 0; }")
        self.assertEqual(commonkernels.racecheck_excludes(edited, canonical=self.LESSON), [])
        self.assertEqual(commonkernels.racecheck_excludes("y\n" + self.LESSON, canonical=self.LESSON),
                         ["ceilingSmemKernel"])

    def test_the_student_check_and_the_mutants_pass_the_skip(self):
        from helpers import patched
        from suitelib import catalogue, sanitize
        calls = []

        def fake(binary, args, tool, options=()):
            calls.append((tool, list(options)))
            return 0, ""
        prog = type("P", (), {"sanitize_spec": lambda self: ([], []), "name": "demo", "text": self.LESSON})()
        barrier = self.LESSON + "// solution: r\n__syncthreads();\n// end solution\n"
        with patched(sanitize, "available", lambda: True), patched(catalogue, "sanitizer_findings", fake):
            sanitize.judge("b", prog, prog.text, barrier)
            race = dict(calls)["racecheck"]
            self.assertEqual(race[race.index("kns=ceilingSmemKernel") - 1], "--kernel-name-exclude")
            self.assertNotIn("kns=ceilingSmemKernel", dict(calls)["memcheck"])
            calls.clear()
            sanitize.judge("b", prog, prog.text, barrier.replace("{}", "{ int x = 0; }"))
            self.assertNotIn("kns=ceilingSmemKernel", dict(calls)["racecheck"])
            calls.clear()
            mutant = type("M", (), {"args": None, "sanitizer": "racecheck", "blind_spot": None})()
            catalogue._sanitized_mutant({}, prog, mutant, "b")
            self.assertIn("kns=ceilingSmemKernel", calls[0][1])


class TestBackgroundBuilds(Scratch):
    """verify compiles every attempt, mutant and speed program while the GPU times, on cores the
    timed runs do not use; the parallel phase's jobs then find their binaries built."""

    def test_every_attempt_and_mutant_built_ahead_with_what_its_job_builds(self):
        import tempfile
        from suitelib import builds, catalogue
        progs, cats = programs(self.root), catalogue.load(self.root)
        compiled = []

        def fake_compile(prog, text, argv, folder):
            compiled.append(text)
            (Path(folder) / "demo").write_text("x")
            return Path(folder) / "demo", None
        with tempfile.TemporaryDirectory() as tmp, patched(catalogue, "_compile", fake_compile):
            builds.BUILD_CACHE = builds.BuildCache(Path(tmp) / "builds")
            try:
                jobs = verifyrun.compile_jobs(self.root, progs, cats, ["demo"], tmp)
                self.assertEqual([key[0] for key, _, _ in jobs[:2]], ["speed-build", "build"])  # what speed waits for first
                for key, fn, args in jobs:
                    if key[0] == "build" and key[1] != "verify-sm75":
                        self.assertIsNone(fn(*args))
                ahead = len(compiled)
                self.assertEqual(ahead, len(cats["demo"].attempts) + len(cats["demo"].mutants))
                lesson = next(p for p in progs if p.rel == "lessons/demo.cu")
                for a in cats["demo"].attempts:  # what exercises.run_attempt builds
                    catalogue.build_in_scratch(*catalogue.attempt_program(self.root, a), tmp)
                for m in cats["demo"].mutants:  # what catalogue.run_mutant builds
                    catalogue.build_in_scratch(lesson, m.apply(lesson.text), tmp, m.arch)
                self.assertEqual(len(compiled), ahead, "a job compiled again what the background had built")
            finally:
                builds.BUILD_CACHE = None

    def test_an_attempt_built_ahead_with_the_gpus_code_is_not_built_again(self):
        import tempfile
        from suitelib import builds, catalogue, sanitize
        progs, cats = programs(self.root), catalogue.load(self.root)
        compiled = []
        with tempfile.TemporaryDirectory() as tmp, patched(catalogue, "_compile", recording_compile(compiled, "echo 'answer 42'")), \
                patched(sanitize, "available", lambda: False):
            builds.BUILD_CACHE = builds.BuildCache(Path(tmp) / "builds")
            try:
                for key, fn, args in verifyrun.compile_jobs(self.root, progs, cats, [], tmp, "sm_90"):
                    if key[0] == "build" and key[2].startswith("attempt "):
                        fn(*args)
                ahead = len(compiled)
                self.assertTrue(ahead and all("arch=compute_90,code=sm_90" in argv for argv in compiled))
                for a in cats["demo"].attempts:
                    exercises.run_attempt(self.root, a, "h200", cats["demo"].student_worded, "sm_90")
                self.assertEqual(len(compiled), ahead, "an attempt compiled again what the background had built")
            finally:
                builds.BUILD_CACHE = None

    def test_timed_runs_keep_two_cores_of_a_large_machine(self):
        with patched(verifyrun.os, "sched_getaffinity", lambda pid: set(range(16))):
            self.assertEqual(verifyrun.split_cpus(), ({0, 1}, set(range(2, 16))))
        with patched(verifyrun.os, "sched_getaffinity", lambda pid: {0, 1}):
            self.assertEqual(verifyrun.split_cpus(), ({0, 1}, {0, 1}))

    def test_the_timed_phases_run_alone_on_their_cores_before_the_untimed_gpu_jobs(self):
        """A sanitizer or attempt sharing the GPU with a timed run would slow what it measures, and
        a compiler sharing its core would slow its host code."""
        order, mask = [], [{0, 1}]

        def watch(name, real):
            def fn(*a, **k):
                order.append((name, set(mask[0])))
                return real(*a, **k)
            return fn

        def set_mask(pid, cpus):
            self.assertEqual(pid, 0)
            mask[0] = set(cpus)
        with patched(verifyrun, "split_cpus", lambda: ({0}, {1})), patched(verifyrun.os, "sched_setaffinity", set_mask), \
                patched(verifyrun, "budget_phase", watch("budget", verifyrun.budget_phase)), \
                patched(verifyrun.speed, "speed_phase", watch("speed", verifyrun.speed.speed_phase)), \
                patched(verifyrun, "measure_anchors", watch("anchors", verifyrun.measure_anchors)), \
                patched(verifyrun, "run_jobs", watch("parallel", verifyrun.run_jobs)):
            self.assertEqual(TestVerifyCommand.fake_verify(self)[0], 0)
        self.assertEqual(order, [("budget", {0}), ("anchors", {0}), ("speed", {0}), ("parallel", {0, 1})])


class TestJobScheduler(unittest.TestCase):
    """verify.run_jobs: every job runs once, at most SANITIZER_WORKERS sanitizer jobs at once, a
    crashed job is a failure of its own, and the deadline stops the queue."""

    def run_all(self, jobs, deadline_s=30.0, workers=8):
        import time
        return verify.run_jobs(jobs, time.monotonic() + deadline_s, lambda text: None, workers=workers)

    def test_at_most_the_limit_of_sanitizers_at_once_and_the_rest_beside_them(self):
        import threading
        import time
        lock, now, peak = threading.Lock(), {"sanitizer": 0, "other": 0}, {"sanitizer": 0, "other": 0}

        def job(kind):
            with lock:
                now[kind] += 1
                peak[kind] = max(peak[kind], now[kind])
            time.sleep(0.05)
            with lock:
                now[kind] -= 1
            return kind
        jobs = [(("sanitizer", f"p{i}", "racecheck"), job, ("sanitizer",)) for i in range(12)]
        jobs += [(("run", f"p{i}", "r"), job, ("other",)) for i in range(6)]
        results, durations = self.run_all(jobs, workers=verify.SANITIZER_WORKERS + 4)
        self.assertEqual(len(results), len(jobs))
        self.assertEqual(peak["sanitizer"], verify.SANITIZER_WORKERS)
        self.assertGreaterEqual(peak["other"], 2, "the other jobs ran beside the sanitizers")

    def test_light_jobs_run_beside_the_heavy_ones_from_the_start(self):
        import threading
        import time
        lock, now, peak = threading.Lock(), {"heavy": 0, "light": 0}, {"heavy": 0, "light": 0}
        order = []

        def job(kind):
            with lock:
                now[kind] += 1
                peak[kind] = max(peak[kind], now[kind])
                order.append(kind)
            time.sleep(0.05)
            with lock:
                now[kind] -= 1
            return kind
        jobs = [(("attempt", f"p{i}", "r", "a"), job, ("heavy",)) for i in range(24)]
        jobs += [(("repeat", f"p{i}", i), job, ("light",)) for i in range(6)]
        workers = verify.SANITIZER_WORKERS + 2 + verify.LIGHT_WORKERS  # the heavy limit is then over the floor
        results, _ = self.run_all(jobs, workers=workers)
        self.assertEqual(len(results), len(jobs))
        self.assertEqual(peak["heavy"], workers - verify.LIGHT_WORKERS, "heavy jobs never take every worker")
        self.assertIn("light", order[:workers], "the light jobs, queued last, started in the first round")

    def test_a_crashed_job_is_left_out_and_the_others_finish(self):
        def boom():
            raise RuntimeError("planted")
        jobs = [(("run", "a", "1"), boom, ()), (("run", "b", "1"), lambda: "ok", ())]
        results, durations = self.run_all(jobs)
        self.assertEqual(results, {("run", "b", "1"): "ok"})
        self.assertIn(("run", "a", "1"), durations)

    def test_the_deadline_leaves_the_queue_unfinished(self):
        import time
        jobs = [(("run", str(i), "1"), time.sleep, (0.3,)) for i in range(6)]
        start = time.monotonic()
        results, _ = self.run_all(jobs, deadline_s=0.2, workers=1)
        self.assertLess(time.monotonic() - start, 1.5)
        self.assertLess(len(results), len(jobs))
