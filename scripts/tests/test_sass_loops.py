"""scripts/bench/sass_loops.py: a loop is a backward branch; both disassemblers' formats are read."""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import sass_loops  # noqa: E402

# One kernel: a loop of 2 FFMAs and a forward branch out of it, as nvdisasm -c prints it
# (labels, `(.L_x_N) targets) and as cuobjdump -sass prints it (addresses as targets).
NVDISASM = """\t.text._Z1kv:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_1:
        /*0010*/                   FFMA R2, R3, R4, R2 ;
        /*0020*/              @P1 BRA `(.L_x_2) ;
        /*0030*/                   FFMA R2, R3, R4, R2 ;
        /*0040*/              @P0 BRA `(.L_x_1) ;
.L_x_2:
        /*0050*/                   EXIT ;
"""
CUOBJDUMP = """\t\tFunction : _Z1kv
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   FFMA R2, R3, R4, R2 ;
        /*0020*/              @P1 BRA 0x50 ;
        /*0030*/                   FFMA R2, R3, R4, R2 ;
        /*0040*/              @P0 BRA 0x10 ;
        /*0050*/                   EXIT ;
"""


class TestSassLoops(unittest.TestCase):
    def loops_of(self, text, min_ffma=1):
        funcs = sass_loops.functions(text.splitlines(keepends=True))
        self.assertEqual(list(funcs), ["_Z1kv"])
        insns, labels = funcs["_Z1kv"]
        return [(lo, hi, dict(mix)) for lo, hi, mix in sass_loops.loops(insns, labels, min_ffma)]

    def test_the_backward_branch_bounds_the_one_loop_in_both_formats(self):
        want = [(0x10, 0x40, {"FFMA": 2, "BRA": 2})]
        self.assertEqual(self.loops_of(NVDISASM), want)
        self.assertEqual(self.loops_of(CUOBJDUMP), want)

    def test_a_loop_with_too_few_ffmas_is_not_listed(self):
        self.assertEqual(self.loops_of(CUOBJDUMP, min_ffma=3), [])


if __name__ == "__main__":
    unittest.main()
