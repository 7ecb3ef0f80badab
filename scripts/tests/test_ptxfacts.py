"""check ptx-facts: what a lesson says of nvcc's PTX for a kernel is held as instruction counts."""

import json
import unittest

from helpers import Scratch, needs_nvcc
from suitelib import ptxfacts

# Kernels as nvcc prints them: a device function between them, a template kernel under -rdc
# (.weak), comments, labels, a .reg directive, a predicated branch, a call's argument lines, and
# inline asm in braces with a guard and with several statements on one line.
PTX = """
.func  (.param .b32 func_retval0) _Z3sqrf(
	.param .b32 _Z3sqrf_param_0
)
{
	mul.rn.f32 	%f2, %f1, %f1;
	ret;
}
.visible .entry _Z4sumsPKaPi(
	.param .u64 _Z4sumsPKaPi_param_0
)
{
	.reg .pred 	%p<2>;
	// begin inline asm
	ld.shared.u8 	%rs1, [%r1];
	ld.shared.u8 	%rs2, [%r1+1];  /* dp4a.s32.s32 in a comment */
	prmt.b32 	%r5, %r3, %r4, 0x3340U;
	@%p1 bra 	$L__BB0_2;
$L__BB0_2:
	dp4a.s32.s32 	%r7, %r5, %r6, %r7;
	{  cvt.f32.f16 %f1, %rs1;}
	{ .reg .pred p; setp.ne.b32 p, %r1, 0; @p add.s32 %r2, %r2, 1; }
	call.uni (retval0),
	_Z3sqrf,
	(
	param0
	);
	ret;
}
.visible .entry _Z5otherPf(
)
{
	fma.rn.f32 	%f2, %f1, %f1, %f2;
}
.weak .entry _Z4tmplIiEvPf(
)
{
	fma.rn.f32 	%f2, %f1, %f1, %f2;
	fma.rn.f32 	%f3, %f1, %f1, %f2;
}
"""


class TestPtxCounts(unittest.TestCase):
    def test_each_kernel_its_own_instructions(self):
        kernels = ptxfacts.entries(PTX)
        self.assertEqual(sorted(kernels), ["_Z4sumsPKaPi", "_Z4tmplIiEvPf", "_Z5otherPf"], "no .func among them")
        counts = ptxfacts.instruction_counts(kernels["_Z4sumsPKaPi"])
        self.assertEqual(dict(counts), {"ld.shared.u8": 2, "prmt.b32": 1, "bra": 1, "dp4a.s32.s32": 1,
                                        "cvt.f32.f16": 1, "setp.ne.b32": 1, "add.s32": 1, "call.uni": 1,
                                        "ret": 1})
        self.assertEqual(ptxfacts.instruction_counts(kernels["_Z4tmplIiEvPf"])["fma.rn.f32"], 2)
        self.assertNotIn("mul.rn.f32", counts, "a device function's body is not its caller's")

    def test_a_count_the_ptx_does_not_hold_is_named(self):
        facts = [{"kernel": "sums", "counts": {"ld.shared.u8": 2, "dp4a.s32.s32": 4}, "said_in": ["lessons/x.md"]}]
        errors = ptxfacts.fact_problems("x", facts, PTX)
        self.assertEqual(len(errors), 1)
        self.assertIn("lessons/x.md: what these say of _Z4sumsPKaPi's PTX no longer holds: 4 dp4a.s32.s32 "
                      "(nvcc now makes 1)", errors[0])
        self.assertEqual(ptxfacts.fact_problems("x", [dict(facts[0], counts={"dp4a.s32.s32": 1})], PTX), [])

    def test_fewer_than_stated_fails_as_more_does(self):
        facts = [{"kernel": "tmpl", "counts": {"fma.rn.f32": 1}, "said_in": ["lessons/x.md"]}]
        self.assertIn("1 fma.rn.f32 (nvcc now makes 2)", ptxfacts.fact_problems("x", facts, PTX)[0])

    def test_a_malformed_fact_is_one_line(self):
        errors = ptxfacts.fact_problems("x", [{"counts": {"ret": 1}}], PTX)
        self.assertEqual(len(errors), 1)
        self.assertIn("a ptx_facts entry needs a kernel name and counts", errors[0])

    def test_a_kernel_name_must_pick_one_kernel(self):
        for name, found in (("nothere", 0), ("Z", 3)):
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

    def test_the_check_is_one_of_checks(self):
        from suitelib import checks
        self.assertIs(checks.registry()["ptx-facts"], ptxfacts.check_ptx_facts)

    def test_a_compile_that_fails_is_one_line(self):
        import subprocess
        from helpers import patched
        self.course([{"kernel": "k", "counts": {"ret": 1}}])
        failed = subprocess.CompletedProcess([], 1, "", "demo.cu(3): error: planted\n")
        with patched(ptxfacts.subprocess, "run", lambda *a, **k: failed):
            errors = ptxfacts.check_ptx_facts(self.root)
        self.assertEqual(len(errors), 1)
        self.assertRegex(errors[0], r"^lessons/demo.cu:\d+: nvcc -ptx fails \(exit 1\): demo.cu\(3\): error: planted")
        with patched(ptxfacts.subprocess, "run", lambda *a, **k: (_ for _ in ()).throw(OSError("no nvcc"))):
            self.assertIn("cannot compile to PTX: no nvcc", ptxfacts.check_ptx_facts(self.root)[0])

    def test_a_build_line_without_one_output_is_one_line(self):
        self.course([{"kernel": "k", "counts": {"ret": 1}}])
        line = next(ln for ln in (self.root / "lessons/demo.cu").read_text().splitlines() if ln.startswith("// Build:"))
        self.edit("lessons/demo.cu", line, line.replace(" -o demo", ""))
        self.assertIn("needs exactly one '-o NAME'", ptxfacts.check_ptx_facts(self.root)[0])

    @needs_nvcc
    def test_nvcc_ptx_of_a_real_kernel(self):
        """The real compile of a lesson's Build: line with -ptx in place of its program, and the
        parser on nvcc's own output: one fmaf is one fma.rn.f32 in its kernel."""
        line = next(ln for ln in (self.root / "lessons/demo.cu").read_text().splitlines() if ln.startswith("// Build:"))
        self.edit("lessons/demo.cu", line, line + "\n__global__ void twiceKernel(float* x) {\n"
                  "  x[threadIdx.x] = fmaf(x[threadIdx.x], 2.0f, 1.0f);\n}")
        self.course([{"kernel": "twiceKernel", "counts": {"fma.rn.f32": 1, "ret": 1}, "said_in": ["lessons/demo.md"]}])
        self.assertEqual(ptxfacts.check_ptx_facts(self.root), [])
        self.course([{"kernel": "twiceKernel", "counts": {"fma.rn.f32": 2}, "said_in": ["lessons/demo.md"]}])
        self.assertIn("2 fma.rn.f32 (nvcc now makes 1)", ptxfacts.check_ptx_facts(self.root)[0])
