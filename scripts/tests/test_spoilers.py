"""Tests of suitelib.spoilers: a solution's body, renamed, planted in another lesson's starter or page
is found (file:line, the solution named); a copy folded in <details>, or named in the exercise's
instructions, passes; short solutions and unrelated kernels are left alone. No GPU, no compiler."""

import contextlib
import io
import tempfile
import unittest
from pathlib import Path

from helpers import REPO  # noqa: F401  (puts scripts/ on sys.path)
from suitelib import EXIT_FAIL, checks, cli, spoilers

SOLUTION = """\
__global__ void tiledKernel(const float* __restrict__ A, const float* __restrict__ B,
                            float* __restrict__ C, long long M, long long N, long long K) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long row = static_cast<long long>(blockIdx.y) * kTile + ty;  // 64-bit
  const long long col = static_cast<long long>(blockIdx.x) * kTile + tx;
  float acc = 0.0f;
  for (long long k0 = 0; k0 < K; k0 += kTile) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();  // both tiles complete
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
"""
# The same kernel as another lesson writes it: other names, int indices, a literal tile, no comments.
RENAMED = """\
__global__ void __launch_bounds__(256)
    gemmStepOne(const float* P, const float* Q, float* R, int m, int n, int k) {
  __shared__ float Ps[16][16];
  __shared__ float Qs[16][16];
  const int x = threadIdx.x, y = threadIdx.y;
  const int r = blockIdx.y * 16 + y;
  const int c = blockIdx.x * 16 + x;
  float sum = 0.0f;
  for (int t = 0; t < k; t += 16) {
    Ps[y][x] = (r < m && t + x < k) ? P[r * k + t + x] : 0.0f;
    Qs[y][x] = (t + y < k && c < n) ? Q[(t + y) * n + c] : 0.0f;
    __syncthreads();
    for (int i = 0; i < 16; ++i) sum = fmaf(Ps[y][i], Qs[i][x], sum);
    __syncthreads();
  }
  if (r < m && c < n) R[r * n + c] = sum;
}
"""
UNRELATED = """\
__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""
PAGE = """# alpha

## The exercise

Write the tiled kernel in `exercises/alpha.cu`.

## Later
"""


class TestSpoilers(unittest.TestCase):
    """lessons/alpha.cu holds the solution 'tiled'; beta is another lesson."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="suite-spoilers-")
        self.root = Path(self.tmp.name)
        for sub in ("lessons", "starter"):
            (self.root / sub).mkdir()
        self.write("lessons/alpha.cu", "// solution: tiled\n" + SOLUTION + "// end solution\n")
        self.write("starter/alpha.cu", "// exercise: tiled\n// TODO\n// end exercise\n")
        self.write("lessons/alpha.md", PAGE)
        self.write("lessons/beta.cu", UNRELATED)
        self.write("starter/beta.cu", UNRELATED)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, rel, text):
        (self.root / rel).write_text(text)

    def problems(self):
        return spoilers.check_spoilers(self.root)

    def test_clean_suite_passes(self):
        self.assertEqual(self.problems(), [])

    def test_a_renamed_copy_in_another_starter_fails(self):
        self.write("starter/beta.cu", UNRELATED + "\n" + RENAMED)
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertRegex(problems[0], r"^starter/beta\.cu:7-\d+: a copy of alpha's solution 'tiled' "
                                      r"\(lessons/alpha\.cu:1-\d+\), 0\.\d\d alike with names ignored: "
                                      r"name gemmStepOne or beta\.cu in the exercise's instructions")

    def test_named_in_the_instructions_passes(self):
        self.write("starter/beta.cu", UNRELATED + "\n" + RENAMED)
        for naming in ("`beta.cu`'s gemmStepOne holds this kernel: try yours first.",
                       "`gemmStepOne` (in beta) already holds this kernel: try yours first."):
            self.write("lessons/alpha.md", PAGE.replace("## Later", naming + "\n\n## Later"))
            self.assertEqual(self.problems(), [], naming)
        # Named outside the exercise's section: not in its instructions.
        self.write("lessons/alpha.md", PAGE + "\n`beta.cu` holds it.\n")
        self.assertEqual(len(self.problems()), 1)

    def test_a_copy_in_a_page_fails_unless_folded(self):
        fenced = "# beta\n\n```cuda\n" + RENAMED + "```\n"
        self.write("lessons/beta.md", fenced)
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertRegex(problems[0], r"^lessons/beta\.md:\d+-\d+: a copy of alpha's solution 'tiled'.*"
                                      r"fold it in <details> with a warning, or name gemmStepOne or beta\.md")
        self.write("lessons/beta.md", "# beta\n\n<details><summary>Spoiler: alpha's exercise answer</summary>\n\n"
                   + fenced[len("# beta\n\n"):] + "\n</details>\n")
        self.assertEqual(self.problems(), [])

    def test_the_exercises_own_starter_is_named_by_function_only(self):
        self.write("starter/alpha.cu", "// exercise: tiled\n// TODO\n// end exercise\n" + RENAMED)
        self.write("lessons/alpha.md", PAGE.replace("## Later", "See `alpha.cu`.\n\n## Later"))
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("starter/alpha.cu:5-", problems[0])
        self.assertIn("name gemmStepOne in", problems[0])
        self.write("lessons/alpha.md", PAGE.replace("## Later", "`gemmStepOne` is this kernel.\n\n## Later"))
        self.assertEqual(self.problems(), [])

    def test_the_copy_found_inside_a_function_is_named_by_it(self):
        body = SOLUTION.split("{", 1)[1].rsplit("}", 1)[0]
        self.write("lessons/alpha.cu", "void f() {\n// solution: tiled\n" + body + "// end solution\n}\n")
        self.write("starter/beta.cu", "void kernelOfBeta(int q) {\n" + body + "}\n")
        problems = self.problems()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("name kernelOfBeta or beta.cu in", problems[0])

    def test_the_lesson_itself_and_unrelated_code_pass(self):
        self.write("lessons/alpha.cu", "// solution: tiled\n" + SOLUTION + "// end solution\n" + RENAMED)
        self.write("starter/beta.cu", UNRELATED * 3)
        self.assertEqual(self.problems(), [])

    def test_a_short_solution_is_not_matched(self):
        short = "int twice(int v) { return 2 * v; }\n"
        self.write("lessons/alpha.cu", "// solution: tiled\n" + short + "// end solution\n")
        self.write("starter/beta.cu", short.replace("twice", "double_it"))
        self.assertLess(len(spoilers.tokens(short)), spoilers.MIN_TOKENS)
        self.assertEqual(self.problems(), [])

    def test_check_spoilers_is_a_check_of_its_own(self):
        self.assertIs(checks.registry()["spoilers"], spoilers.check_spoilers)
        self.write("starter/beta.cu", UNRELATED + "\n" + RENAMED)
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            status = cli.main(["--root", str(self.root), "check", "--only", "spoilers"])
        self.assertEqual(status, EXIT_FAIL)
        self.assertIn("error: [spoilers] starter/beta.cu:7-", err.getvalue())

    def test_names_are_ignored_keywords_are_not(self):
        norm = [t.norm for t in spoilers.tokens("long long kTile = 16; // c\nunsigned int kT1 = 1LL;")]
        self.assertEqual(norm, ["int", "x", "=", "x", ";", "int", "x", "=", "x", ";"])
        self.assertEqual([t.line for t in spoilers.tokens("a\n/* b\n c */ d")], [1, 3])


if __name__ == "__main__":
    unittest.main()
