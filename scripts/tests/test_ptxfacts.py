"""check ptx-facts: what a lesson says of nvcc's PTX for a kernel is held as instruction counts."""

import json
import unittest

from helpers import Scratch, needs_nvcc
from suitelib import ptxfacts

# Two kernels as nvcc prints them: plain statements, a predicated one, and inline asm in braces.
PTX = """
.visible .entry _Z4sumsPKaPi(
\t.param .u64 _Z4sumsPKaPi_param_0
)
{
\tld.shared.u8 \t%rs1, [%r1];
\tld.shared.u8 \t%rs2, [%r1+1];
\tprmt.b32 \t%r5, %r3, %r4, 0x3340U;
\t@%p1 bra \t$L__BB0_2;
\tdp4a.s32.s32 \t%r7, %r5, %r6, %r7;
\t{  cvt.f32.f16 %f1, %rs1;}
\tret;
}
.visible .entry _Z5otherPf(
)
{
\tfma.rn.f32 \t%f2, %f1, %f1, %f2;
}
"""


class TestPtxCounts(unittest.TestCase):
    def test_each_kernel_its_own_instructions(self):
        kernels = ptxfacts.entries(PTX)
        self.assertEqual(sorted(kernels), ["_Z4sumsPKaPi", "_Z5otherPf"])
        counts = ptxfacts.instruction_counts(kernels["_Z4sumsPKaPi"])
        self.assertEqual((counts["ld.shared.u8"], counts["prmt.b32"], counts["dp4a.s32.s32"], counts["cvt.f32.f16"],
                          counts["bra"], counts["fma.rn.f32"]), (2, 1, 1, 1, 1, 0))

    def test_a_count_the_ptx_does_not_hold_is_named(self):
        facts = [{"kernel": "sums", "counts": {"ld.shared.u8": 2, "dp4a.s32.s32": 4}, "said_in": ["lessons/x.md"]}]
        errors = ptxfacts.fact_problems("x", facts, PTX)
        self.assertEqual(len(errors), 1)
        self.assertIn("lessons/x.md: what these say of _Z4sumsPKaPi's PTX no longer holds: 4 dp4a.s32.s32 "
                      "(nvcc now makes 1)", errors[0])
        self.assertEqual(ptxfacts.fact_problems("x", [dict(facts[0], counts={"dp4a.s32.s32": 1})], PTX), [])

    def test_a_kernel_name_must_pick_one_kernel(self):
        for name, found in (("nothere", 0), ("Z", 2)):
            errors = ptxfacts.fact_problems("x", [{"kernel": name, "counts": {}}], PTX)
            self.assertIn(f"has {found} kernels named like '{name}' (want 1", errors[0])


class TestPtxFactsCheck(Scratch):
    def course(self, facts):
        (self.root / "scripts").mkdir(exist_ok=True)
        (self.root / "scripts/course.json").write_text(json.dumps({"lessons": [
            {"name": "demo", "day": "1", "teaches": "t", "ptx_facts": facts}]}))

    def test_the_check_compares_the_lessons_own_ptx(self):
        seen = []

        def compile_fn(prog):
            seen.append(prog.rel)
            return PTX
        self.course([{"kernel": "other", "counts": {"fma.rn.f32": 2}, "said_in": ["lessons/demo.md"]}])
        errors = ptxfacts.check_ptx_facts(self.root, compile_fn)
        self.assertEqual(seen, ["lessons/demo.cu"])
        self.assertEqual(len(errors), 1)
        self.assertIn("2 fma.rn.f32 (nvcc now makes 1)", errors[0])

    @needs_nvcc
    def test_nvcc_ptx_of_a_lesson(self):
        """The real compile: the demo lesson's Build: line with -ptx in place of its program."""
        ptx = ptxfacts.lesson_ptx(__import__("suitelib.model", fromlist=["lesson"]).lesson(self.root, "demo"))
        self.assertIn(".version", ptx)
