"""The sweep's tie rule, checked on its recorded CSV (expected/h200/data/sweep.csv).

The rule the sweep prints (its `Tie rule:` line): two points overlap when their [min, max] ranges
of timed launches, as the CSV prints them, share a value; sorted by fastest launch, a point joins
the group before it when its min is at most that group's largest max; rank = 1 + the points in
faster groups, tie = the other points of its group. Points that were not timed (status other than
PASS) have empty rank and tie cells.

`tie_problems` checks a CSV's rank and tie columns against that rule, both by recomputing the
groups and by the promises the rule makes (overlapping points share a rank; points of different
ranks do not overlap, the lower rank entirely faster; rank = 1 + the points of lower rank). The
recorded CSV is re-recorded on the GPU whenever the sweep changes, so the real-file test holds
only for a recording made by a sweep that prints this rule."""

import csv
import io
import os
import unittest
from pathlib import Path

REPO = Path(os.environ.get("SUITE_REPO", Path(__file__).resolve().parents[2]))
RECORDED = REPO / "expected" / "h200" / "data" / "sweep.csv"
COLUMNS = ("point", "status", "min_ms", "max_ms", "rank", "tie")


def _rows(text):
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    reader = csv.DictReader(io.StringIO("\n".join(lines)))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ValueError(f"the CSV lacks the columns {', '.join(missing)}")
    return list(reader)


def expected_ranks(ranges):
    """{point: rank} by the printed rule, for {point: (min, max)} of the timed points."""
    order = sorted(ranges, key=lambda p: ranges[p][0])  # stable: ties in min keep CSV order
    rank, group_rank, group_max = {}, 0, None
    for n, point in enumerate(order):
        lo, hi = ranges[point]
        if group_max is None or lo > group_max:
            group_rank, group_max = n + 1, hi  # a new group: every point before is faster
        else:
            group_max = max(group_max, hi)
        rank[point] = group_rank
    return rank


def tie_problems(text):
    """Every way the CSV's rank and tie columns break the rule, as sentences ([] when none)."""
    problems, ranges, given_rank, given_tie = [], {}, {}, {}
    for row in _rows(text):
        point, status = row["point"], row["status"]
        if status != "PASS":
            if (row["rank"] or "").strip() or (row["tie"] or "").strip():
                problems.append(f"point {point} ({status}) was not timed but has a rank or tie")
            continue
        try:
            lo, hi = float(row["min_ms"]), float(row["max_ms"])
            given_rank[point], given_tie[point] = int(row["rank"]), int(row["tie"])
        except (TypeError, ValueError):
            problems.append(f"point {point}: min_ms, max_ms, rank or tie is not a number")
            continue
        if not lo <= hi:
            problems.append(f"point {point}: min_ms {lo} is above max_ms {hi}")
        ranges[point] = (lo, hi)
    points = [p for p in given_rank if p in ranges]
    want = expected_ranks({p: ranges[p] for p in points})
    for p in points:
        if given_rank[p] != want[p]:
            problems.append(f"point {p}: rank {given_rank[p]}, the rule gives {want[p]}")
        same = sum(1 for q in points if q != p and want[q] == want[p])
        if given_tie[p] != same:
            problems.append(f"point {p}: tie {given_tie[p]}, the rule gives {same}")
    for i, p in enumerate(points):  # the rule's promises, stated without its algorithm
        (plo, phi), lower = ranges[p], 0
        for j, q in enumerate(points):
            qlo, qhi = ranges[q]
            if j > i and plo <= qhi and qlo <= phi and given_rank[p] != given_rank[q]:
                problems.append(f"points {p} and {q} overlap ([{plo}, {phi}] and [{qlo}, {qhi}]) "
                                f"but have ranks {given_rank[p]} and {given_rank[q]}")
            if given_rank[q] < given_rank[p]:
                lower += 1
                if not qhi < plo:
                    problems.append(f"point {q} (rank {given_rank[q]}) is not entirely faster than "
                                    f"point {p} (rank {given_rank[p]})")
        if given_rank[p] != 1 + lower:
            problems.append(f"point {p}: rank {given_rank[p]}, but {lower} points rank above it")
    return problems


HEADER = ("device,m,n,k,point,threads,block_y,tk,co,tile_rows,smem_bytes,status,err_frac,regs,"
          "blocks_per_sm,limited_by,occupancy,ms,min_ms,max_ms,gflops,pct_of_peak,rank,tie")


def synthetic(*points):
    """A sweep CSV of (point, min, max, rank, tie) rows; rank None: a failed, untimed point."""
    lines = [HEADER]
    for point, lo, hi, rank, tie in points:
        if rank is None:
            lines.append(f"GPU X,64,64,64,{point},128,4,8,1,4,1152,FAIL,9.000,40,12,registers,"
                         "0.7500,,,,,,,")
        else:
            lines.append(f"GPU X,64,64,64,{point},128,4,8,1,4,1152,PASS,0.053,40,12,registers,"
                         f"0.7500,{lo:.4f},{lo:.4f},{hi:.4f},100.0,1.00,{rank},{tie}")
    return "\n".join(lines) + "\n"


class TestSweepTieRule(unittest.TestCase):
    def test_the_recorded_csv_follows_the_printed_rule(self):
        self.assertEqual(tie_problems(RECORDED.read_text(encoding="utf-8")), [])

    def test_planted_two_overlapping_points_with_different_ranks_fail(self):
        problems = tie_problems(synthetic((1, 0.1400, 0.1500, 1, 0), (2, 0.1468, 0.1540, 2, 0)))
        self.assertTrue(any("points 1 and 2 overlap" in p for p in problems), problems)
        self.assertTrue(any("point 2: rank 2, the rule gives 1" in p for p in problems), problems)

    def test_planted_the_old_rule_fails_on_a_chain(self):
        # The rule the sweep used before: rank = 1 + the points whose max beats this one's
        # min. On a chain a-b-c it ranks c below a although c overlaps b, a tie of a.
        old = synthetic((1, 1.00, 1.10, 1, 1), (2, 1.05, 1.20, 1, 1), (3, 1.15, 1.30, 2, 0))
        self.assertNotEqual(tie_problems(old), [])
        new = synthetic((1, 1.00, 1.10, 1, 2), (2, 1.05, 1.20, 1, 2), (3, 1.15, 1.30, 1, 2))
        self.assertEqual(tie_problems(new), [])

    def test_separate_groups_rank_after_every_faster_point(self):
        text = synthetic((1, 2.0, 2.1, 3, 0), (2, 1.0, 1.2, 1, 1), (3, 1.1, 1.3, 1, 1),
                         (4, 3.0, 3.5, 4, 1), (5, 3.4, 3.6, 4, 1), (6, None, None, None, None))
        self.assertEqual(tie_problems(text), [])

    def test_ranges_that_share_an_end_overlap(self):
        self.assertEqual(tie_problems(synthetic((1, 1.0, 2.0, 1, 1), (2, 2.0, 3.0, 1, 1))), [])
        self.assertNotEqual(tie_problems(synthetic((1, 1.0, 2.0, 1, 0), (2, 2.0, 3.0, 2, 0))), [])

    def test_planted_a_wrong_tie_count_fails(self):
        problems = tie_problems(synthetic((1, 1.0, 1.1, 1, 0), (2, 1.05, 1.2, 1, 0)))
        self.assertTrue(any("tie 0, the rule gives 1" in p for p in problems), problems)

    def test_planted_an_untimed_point_with_a_rank_fails(self):
        text = synthetic((1, 1.0, 1.1, 1, 0))
        text += "GPU X,64,64,64,2,128,4,8,1,4,1152,FAIL,9.000,40,12,registers,0.7500,,,,,,1,0\n"
        self.assertTrue(any("was not timed" in p for p in tie_problems(text)))

    def test_a_csv_without_the_columns_is_refused(self):
        with self.assertRaises(ValueError):
            tie_problems("a,b,c\n1,2,3\n")


if __name__ == "__main__":
    unittest.main()
