"""Tests of suitelib.kernelscope: a sanitizer mutant instruments only the kernels its edit changes,
and every kernel wherever that cannot be shown (an edit in host code or in a __host__ __device__
function, PTX that differs outside the kernels, a compile that fails). One test compiles a small
source to PTX with nvcc where it is installed (no GPU needed)."""

import shutil
import unittest
from pathlib import Path

from helpers import patched
from suitelib import catalogue, kernelscope

SOURCE = """\
// A comment with a brace { and __device__ in it.
__device__ float twice(float v) { return 2.0f * v; }
__host__ __device__ inline int half(int v) { return v / 2; }
__device__ float sink;
__global__ void scale(float* x) { x[threadIdx.x] = twice(x[threadIdx.x]); }
template <int N>
__global__ void __launch_bounds__(N) fill(float* x) {
  x[threadIdx.x] = float(N);
}
int host(int v) { return half(v) + 1; }
template __global__ void fill<32>(float*);
template __global__ void fill<64>(float*);
"""


def at(text, needle):
    start = text.index(needle)
    return start, start + len(needle)


class TestDeviceOnly(unittest.TestCase):
    def test_inside_a_device_function_or_a_kernel(self):
        self.assertTrue(kernelscope.device_only_at(SOURCE, *at(SOURCE, "2.0f * v")))
        self.assertTrue(kernelscope.device_only_at(SOURCE, *at(SOURCE, "twice(x[threadIdx.x])")))
        self.assertTrue(kernelscope.device_only_at(SOURCE, *at(SOURCE, "float(N)")))

    def test_host_code_and_host_device_functions_are_not(self):
        self.assertFalse(kernelscope.device_only_at(SOURCE, *at(SOURCE, "half(v) + 1")))
        self.assertFalse(kernelscope.device_only_at(SOURCE, *at(SOURCE, "v / 2")))
        self.assertFalse(kernelscope.device_only_at(SOURCE, *at(SOURCE, "__device__ float sink;")))

    def test_an_edit_past_the_end_of_its_function_is_not(self):
        start, _ = at(SOURCE, "2.0f * v")
        self.assertFalse(kernelscope.device_only_at(SOURCE, start, SOURCE.index("__host__ __device__ inline")))

    def test_a_device_variable_is_no_function_head(self):
        text = "__device__ int counter;\nint host(int v) { return v + 1; }\n"
        self.assertFalse(kernelscope.device_only_at(text, *at(text, "v + 1")))

    def test_a_macro_naming_device_is_no_function_head(self):
        text = ("#define INLINE_DEVICE __device__ \\\n    __forceinline__\n"
                "struct Config { int tile = 32; int grid(int n) const { return n / tile; } };\n")
        self.assertFalse(kernelscope.device_only_at(text, *at(text, "n / tile")))
        self.assertFalse(kernelscope.device_only_at(text, *at(text, "tile = 32")))

    def test_host_anywhere_in_the_head(self):
        text = "__host__  // both sides\n__forceinline__\n__device__ int f(int v) { return v; }\n"
        self.assertFalse(kernelscope.device_only_at(text, *at(text, "return v")))

    def test_a_brace_in_a_character_literal_is_blank(self):
        text = "__device__ int f(int v) { return v == '}' ? 1 : 2; }\nint host() { return 3; }\n"
        self.assertTrue(kernelscope.device_only_at(text, *at(text, "? 1 : 2")))
        self.assertFalse(kernelscope.device_only_at(text, *at(text, "return 3")))

    def test_comments_and_literals_keep_their_places_as_blanks(self):
        text = 'int a; // { __device__\nconst char* s = "}";\n'
        blanked = kernelscope.blank_comments(text)
        self.assertEqual(len(blanked), len(text))
        self.assertEqual(blanked.count("\n"), text.count("\n"))
        self.assertNotIn("{", blanked)
        self.assertNotIn("}", blanked)
        self.assertNotIn("__device__", blanked)


PTX = """\
.version 8.0
.global .align 4 .f32 sink;
.visible .entry _Z5scalePf(
\t.param .u64 _Z5scalePf_param_0
)
{
\t.reg .f32 \t%f<3>;
\tld.global.f32 \t%f1, [%rd1];
\tadd.f32 \t%f2, %f1, %f1;
$L__BB0_1:
\tret;
}
.visible .entry _Z4fillILi32EEvPf(
)
{
\t.reg .f32 \t%f<2>;
\tmov.f32 \t%f1, 0f42000000;
\tret;
}
"""


class TestPtx(unittest.TestCase):
    def test_entries_and_the_rest(self):
        entries, rest = kernelscope.ptx_parts(PTX)
        self.assertEqual(sorted(entries), ["_Z4fillILi32EEvPf", "_Z5scalePf"])
        self.assertIn(".global .align 4 .f32 sink;", rest)
        self.assertNotIn("add.f32", rest)

    def test_renumbered_registers_and_labels_are_the_same_code(self):
        entries, _ = kernelscope.ptx_parts(PTX)
        renumbered = (entries["_Z5scalePf"].replace("%f<3>", "%f<9>").replace("%f1", "%f7")
                      .replace("%f2", "%f8").replace("$L__BB0_1", "$L__BB4_1"))
        self.assertEqual(kernelscope.canonical(renumbered), kernelscope.canonical(entries["_Z5scalePf"]))
        changed = entries["_Z5scalePf"].replace("add.f32", "mul.f32")
        self.assertNotEqual(kernelscope.canonical(changed), kernelscope.canonical(entries["_Z5scalePf"]))
        swapped = entries["_Z5scalePf"].replace("%f1, %f1", "%f2, %f1")
        self.assertNotEqual(kernelscope.canonical(swapped), kernelscope.canonical(entries["_Z5scalePf"]))

    def test_the_build_line_made_to_write_ptx(self):
        argv = ["nvcc", "-std=c++17", "-O3", "-arch=sm_75", "-lineinfo", "-o", "demo", "demo.cu", "-lcublas"]
        self.assertEqual(kernelscope.ptx_argv(argv, "sm_90", "out.ptx"),
                         ["nvcc", "-std=c++17", "-O3", "demo.cu", "-arch=sm_90", "-ptx", "-o", "out.ptx"])
        gencode = ["nvcc", "-gencode", "arch=compute_75,code=sm_75", "-o", "x", "x.cu"]
        self.assertEqual(kernelscope.ptx_argv(gencode, "sm_75", "o")[:2], ["nvcc", "x.cu"])


class Prog:
    path = Path("lessons/demo.cu")

    def __init__(self, text):
        self.text = text

    def build_argv(self):
        return ["nvcc", "-std=c++17", "-O3", "-arch=sm_75", "-o", "demo", "demo.cu"]


class TestChangedKernels(unittest.TestCase):
    def fake(self, lesson_ptx, mutant_ptx, calls):
        def compile_fn(argv, name, text, arch, folder):
            calls.append(arch)
            return lesson_ptx if "lesson" in str(folder) else mutant_ptx
        return compile_fn

    def changed(self, old, new, needle, lesson_ptx=PTX, mutant_ptx=PTX):
        calls = []
        text = SOURCE.replace(old, new)
        got = kernelscope.changed_kernels(Prog(SOURCE), SOURCE, text, at(text, needle), "sm_90",
                                          self.fake(lesson_ptx, mutant_ptx, calls))
        return got, calls

    def test_the_kernels_whose_ptx_differs(self):
        got, calls = self.changed("2.0f * v", "3.0f * v", "3.0f * v",
                                  mutant_ptx=PTX.replace("add.f32", "mul.f32"))
        self.assertEqual(got, ["_Z5scalePf"])
        self.assertEqual(calls, ["sm_90", "sm_90"])

    def test_every_kernel_where_it_cannot_be_shown(self):
        got, calls = self.changed("v / 2", "v / 3", "v / 3", mutant_ptx=PTX.replace("add.f32", "mul.f32"))
        self.assertIsNone(got)
        self.assertEqual(calls, [], "an edit outside device-only code compiles nothing")
        got, _ = self.changed("2.0f * v", "3.0f * v", "3.0f * v",
                              mutant_ptx=PTX.replace("sink;", "sunk;").replace("add.f32", "mul.f32"))
        self.assertIsNone(got, "PTX outside the entries differs (a .func, a __device__ variable)")
        got, _ = self.changed("2.0f * v", "3.0f * v", "3.0f * v", mutant_ptx=None)
        self.assertIsNone(got, "a compile failed")
        got, _ = self.changed("2.0f * v", "2.0f*v", "2.0f*v")
        self.assertIsNone(got, "no kernel's PTX changed")

    @unittest.skipUnless(shutil.which("nvcc"), "nvcc is not installed")
    def test_nvcc_ptx_names_only_the_changed_kernel(self):
        new = SOURCE.replace("2.0f * v", "3.0f * v")
        got = kernelscope.changed_kernels(Prog(SOURCE), SOURCE, new, at(new, "3.0f * v"), "sm_75")
        self.assertEqual(got, ["_Z5scalePf"])


class TestMutantKernels(unittest.TestCase):
    """catalogue.mutant_kernels: which build the PTX is compared for, the edit's place in the mutant,
    and every kernel for memcheck and initcheck."""

    def scope(self, sanitizer="racecheck", arch=None, old="2.0f * v", new="3.0f * v", text=SOURCE):
        seen = []

        def changed(prog, old_text, new_text, edit_at, target):
            seen.append((new_text[edit_at[0]:edit_at[1]], target))
            return ["_Z5scalePf"]
        mutant = catalogue.Mutant("m", "d", old, new, sanitizer=sanitizer, arch=arch)
        with patched(catalogue, "native_arch", lambda: "sm_90"):
            got = catalogue.mutant_kernels(Prog(text), mutant, changed)
        return got, seen

    def test_the_build_lines_arch_or_the_mutants_own(self):
        self.assertEqual(self.scope(), (["_Z5scalePf"], [("3.0f * v", "sm_75")]))
        self.assertEqual(self.scope(arch="native")[1], [("3.0f * v", "sm_90")])
        self.assertEqual(self.scope(arch="sm_80")[1], [("3.0f * v", "sm_80")])
        self.assertEqual(self.scope(sanitizer="synccheck")[0], ["_Z5scalePf"])

    def test_every_kernel_for_memcheck_initcheck_or_an_edit_that_is_not_once(self):
        for tool in ("memcheck", "initcheck", None):
            self.assertEqual(self.scope(sanitizer=tool), (None, []), tool)
        twice = SOURCE + "__device__ float thrice(float v) { return 2.0f * v; }\n"
        self.assertEqual(self.scope(text=twice), (None, []))


class TestSanitizedMutantScope(unittest.TestCase):
    def run_mutant(self, kernels):
        calls = []

        def findings(binary, args, tool, options=()):
            calls.append(list(options))
            return 3, "log"
        prog = type("P", (), {"sanitize_spec": lambda self: (["--opt"], ["-n", "1"]), "text": ""})()
        mutant = type("M", (), {"args": None, "sanitizer": "racecheck", "blind_spot": None})()
        with patched(catalogue, "sanitizer_findings", findings), \
                patched(catalogue, "mutant_kernels", lambda p, m: kernels):
            entry = catalogue._sanitized_mutant({}, prog, mutant, "b")
        return entry, calls[0]

    def test_only_the_changed_kernels_are_instrumented(self):
        entry, options = self.run_mutant(["_Z1aPf", "_Z1bPf"])
        self.assertEqual(options[options.index("kne=_Z1aPf") - 1], "--kernel-name")
        self.assertIn("kne=_Z1bPf", options)
        self.assertEqual(entry["kernels"], ["_Z1aPf", "_Z1bPf"])
        self.assertIn("on 2 changed kernel(s)", entry["outcome"])

    def test_every_kernel_where_none_is_named(self):
        entry, options = self.run_mutant(None)
        self.assertNotIn("--kernel-name", options)
        self.assertNotIn("kernels", entry)
        self.assertTrue(entry["killed"])


if __name__ == "__main__":
    unittest.main()
