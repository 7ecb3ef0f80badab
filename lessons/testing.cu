// SPDX-License-Identifier: MIT
// Day 66 - testing: four green tests certify a wrong GPU sum.
//
// A shared-memory tree reduction (Day 24) is launched through a wrapper,
// gpuSum. A realistic "supplied" suite of four tests (a golden value, a
// determinism check, an oracle with a loose tolerance, a linearity property)
// passes it. A green suite proves nothing by itself: the lesson then runs a
// hardened suite against gpuSum as shipped and against a revised wrapper,
// gpuSumRevised. A suite has earned its keep when it fails the shipped code
// and passes the revision, and the program gates that, together with
// a check of the revision that does not depend on the suite at all.
//
// The unit under test is the kernel together with its launch: callers never
// launch blockSum themselves, they call a wrapper, so the wrapper is what
// every test calls.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -lineinfo -o testing testing.cu
// Run:   ./testing
//
// Check your exercise on a GPU: python3 scripts/suite.py exercise check testing
// (builds exercises/testing.cu and judges every recorded run). Without a GPU:
// python3 scripts/suite.py ce-link exercises/testing.cu opens it in Compiler Explorer;
// save the whole executor pane to FILE, then python3 scripts/suite.py exercise check testing
// --pane FILE (the lesson records one run, with no arguments, so one pane judges it).
//
// sm_75 is the course's T4 (and Compiler Explorer's card). On a newer GPU the
// driver compiles the PTX that -arch=sm_75 embeds; the suite checks that such
// a run prints the same digits as a native build. Use -arch=native to build
// for your own card.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

// =============================================================================
// Constants and inputs
// =============================================================================
constexpr int kThreads = 256;   // threads per block
constexpr int kMaxN = 16483;    // 169*97 + 90: the largest input any test uses
constexpr int kOddN = 611;      // 13*47, the course's odd size
constexpr int kExactN = 1024;   // 2^10
constexpr int kMaxBlocks = 65;  // the partials buffer's size, in floats
constexpr float kBaseRtol = 1e-5f;   // the float table entry
constexpr float kLooseRtol = 1e-2f;  // the supplied suite's "oracle" tolerance

static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0,
              "the tree reduction halves the stride down to 1: the block size "
              "must be a power of two and whole warps");
static_assert(kOddN < kMaxN && kExactN < kMaxN,
              "kMaxN is the largest size: the input buffers hold kMaxN floats");
static_assert(2.0 * 48.0 * kMaxN < 8388608.0,
              "inputs are half-integers of at most 48 (x2: at most 96), so every "
              "partial sum is a half-integer below 96 * 16483 < 2^23, where "
              "float holds every half-integer exactly: every float addition in "
              "the program is exact");

// x[i] = (i mod 97) * 0.5: half-integers from 0 to 48. Float holds every
// half-integer below 2^23 exactly, and no sum here reaches that (static_assert
// above), so every float addition in this program is exact, in any order.
// With such inputs a correct sum has rel 0 exactly: the only correct answer
// is the exact one, and any nonzero rel is a bug, not rounding.
std::vector<float> makeInput(int n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i % 97) * 0.5f;
  return x;
}

// =============================================================================
// The kernel
// =============================================================================
// partials[b] = sum of in[b*256 .. b*256+255], counting 0 for i >= n.
// launch assumption: blockDim.x == kThreads (the shared array and the first
//   stride are sized for it). Any other block size writes NaN, so every oracle
//   test fails instead of the kernel reading past its shared array.
// memory: each element is read once, coalesced; one float is written per block.
__global__ void blockSum(const float* in, int n, float* partials) {
  if (blockDim.x != kThreads) {  // uniform across the block: no barrier skipped
    if (threadIdx.x == 0) partials[blockIdx.x] = nanf("");
    return;
  }
  __shared__ float buf[kThreads];
  const int i = blockIdx.x * kThreads + threadIdx.x;
  buf[threadIdx.x] = (i < n) ? in[i] : 0.0f;  // the guard wraps the load only
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
    __syncthreads();  // every thread reaches every barrier
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = buf[0];
}

// =============================================================================
// Machinery: skip it on a first read. The course toolkit's declarations; their
// definitions are in the machinery band at the end of the file.
// =============================================================================
// common: cuda_check_decl
// Every CUDA call goes through CUDA_CHECK, every launch is followed by
// CUDA_CHECK_LAUNCH(): a failure names file, line, call and error, exits 1.
// Exit codes: 0 all gates held, 1 a gate ("GATE: ...") or a CUDA call failed,
// 2 bad command line, 77 no NVIDIA driver or GPU here (CTest: skipped).
#define CUDA_CHECK(call)                                                      \
  do {                                                                        \
    cudaError_t err_ = (call);                                                \
    if (err_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "CUDA error at %s:%d: %s failed: %s\n", __FILE__,  \
                   __LINE__, #call, cudaGetErrorString(err_));                \
      std::exit(EXIT_FAILURE);                                                \
    }                                                                         \
  } while (0)
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
constexpr int kExitNoDevice = 77;
cudaDeviceProp requireCudaDevice();  // device 0's properties, or exit 77 with one line
// end common: cuda_check_decl

// =============================================================================
// The launch: the wrappers every test calls
// =============================================================================
// What a wrapper returns: a sum, or the reason no launch was possible. An
// invalid launch is a test outcome here, not the end of the process.
struct Outcome {
  bool launched;
  float sum;
  const char* error;
};

// Launches `blocks` blocks over in[0, n) and adds the partials on the host in
// float, in block order. The partials are poisoned (NaN) first, so a block
// that writes nothing cannot inherit an earlier result.
Outcome foldOnGpu(const float* d_in, int n, int blocks, float* d_partials) {
  if (blocks < 1) return Outcome{false, 0.0f, "empty grid (0 blocks), not launched"};
  if (blocks > kMaxBlocks) return Outcome{false, 0.0f, "grid larger than the partials buffer"};
  CUDA_CHECK(cudaMemset(d_partials, 0xFF, kMaxBlocks * sizeof(float)));
  blockSum<<<blocks, kThreads>>>(d_in, n, d_partials);
  CUDA_CHECK_LAUNCH();
  std::vector<float> partials(static_cast<size_t>(blocks));
  CUDA_CHECK(cudaMemcpy(partials.data(), d_partials, partials.size() * sizeof(float),
                        cudaMemcpyDeviceToHost));
  float sum = 0.0f;
  for (float p : partials) sum += p;
  return Outcome{true, sum, nullptr};
}

// Every wrapper has this shape: the sum of d_in[0, n), using d_partials.
using Variant = Outcome (*)(const float* d_in, int n, float* d_partials);

// snippet: shipped-wrapper
// The wrapper as shipped: every caller and every test goes through it.
Outcome gpuSum(const float* d_in, int n, float* d_partials) {
  const int blocks = n / kThreads;
  return foldOnGpu(d_in, n, blocks, d_partials);
}
// end snippet

// solution: revised-wrapper
// snippet: revised-wrapper
// What the hardened suite found: gpuSum launches floor(n / 256) blocks, so the
// last n % 256 elements are never read. Its sum is exact at n = 1024 (no
// tail), 99 elements short at n = 611 and at n = 16483, and below 256
// elements there is no block to launch at all. The revision launches
// ceil(n / 256) blocks; the kernel's guard counts 0 past the end of the input.
Outcome gpuSumRevised(const float* d_in, int n, float* d_partials) {
  const int blocks = (n + kThreads - 1) / kThreads;
  return foldOnGpu(d_in, n, blocks, d_partials);
}
// end snippet
// end solution

// =============================================================================
// Oracle, comparison, verdicts
// =============================================================================
// The oracle: a sequential, Kahan-compensated double sum. Its order and its
// precision are deliberately unlike the kernel's: an oracle that adds in the
// kernel's order and precision shares its rounding, and one that reuses the
// kernel's indexing or launch shares its bugs, so agreeing with it proves
// little.
double oracleSum(const float* x, int n) {
  double sum = 0.0, carry = 0.0;
  for (int i = 0; i < n; ++i) {
    const double y = static_cast<double>(x[i]) - carry;
    const double t = sum + y;
    carry = (t - sum) - y;
    sum = t;
  }
  return sum;
}

// rel = |got - want| / s with s = |want|, or 1 when want is 0. A test passes
// iff rel <= rtol, so rtol 0 demands equality and a NaN never passes.
double relativeError(double got, double want) {
  const double scale = (want == 0.0) ? 1.0 : std::fabs(want);
  return std::fabs(got - want) / scale;
}

bool passes(const Outcome& got, double want, float rtol) {
  return got.launched && relativeError(got.sum, want) <= static_cast<double>(rtol);
}

// Every test states the outcome it expects. The verdict word says whether the
// outcome matched: PASS and XFAIL are as expected, FAIL and XPASS are not.
enum class Expect { Pass, Fail };

// What the tests of one phase did: how many ran, how many got a sum to judge,
// how many did not pass, and how many ended otherwise than they expected
// (FAIL or XPASS).
struct Verdicts {
  int tests = 0;
  int launched = 0;
  int failed = 0;
  int surprises = 0;
};

// Runs the comparison of one test, prints its line (two spaces, the label,
// the verdict, the numbers) and records it in `v`. Returns whether it passed.
bool report(Verdicts& v, const char* label, const Outcome& got, double want, float rtol,
            Expect expect) {
  const bool ok = passes(got, want, rtol);
  const char* verdict = ok ? (expect == Expect::Pass ? "PASS" : "XPASS")
                           : (expect == Expect::Fail ? "XFAIL" : "FAIL");
  v.tests += 1;
  v.launched += got.launched ? 1 : 0;
  v.failed += ok ? 0 : 1;
  v.surprises += (ok == (expect == Expect::Pass)) ? 0 : 1;
  if (got.launched) {
    std::printf("  %-34s %-5s got %.6f  want %.6f  rel %.3e  rtol %.3e\n", label, verdict,
                static_cast<double>(got.sum), want, relativeError(got.sum, want),
                static_cast<double>(rtol));
  } else {
    std::printf("  %-34s %-5s %s  want %.6f\n", label, verdict, got.error, want);
  }
  return ok;
}

// The inputs on the device, and the partials buffer. Each input array holds
// kMaxN floats; a test that needs another input makes its own.
struct Data {
  const float* h_x;  // host copy of x, for the oracle
  float* x;
  float* x2;  // 2 * x
  float* partials;
};

// =============================================================================
// The supplied suite: four tests, all green against gpuSum as shipped
// =============================================================================
// Each test is a filter for its own class of bug: it can only catch a bug that
// changes the number it looks at, at the inputs it runs.

// snippet: golden
// Test 1: a golden value captured from the wrapper's own output at n = 611.
constexpr float kGolden611 = 11815.5f;
bool testGolden(Variant sum, const Data& d, Verdicts& v, Expect expect) {
  return report(v, "golden snapshot, n=611", sum(d.x, kOddN, d.partials), kGolden611, 0.0f,
                expect);
}
// end snippet

// Test 2: two consecutive sums must agree exactly. That is determinism, not
// correctness: a kernel that is wrong the same way every time passes.
bool testDeterminism(Variant sum, const Data& d, Verdicts& v) {
  const Outcome first = sum(d.x, kMaxN, d.partials);
  const Outcome second = sum(d.x, kMaxN, d.partials);
  return report(v, "determinism, n=16483", second, first.sum, 0.0f, Expect::Pass);
}

// Test 3: the double oracle, with a tolerance picked to "allow for float".
bool testLooseOracle(Variant sum, const Data& d, Verdicts& v) {
  return report(v, "loose oracle, n=16483", sum(d.x, kMaxN, d.partials),
                oracleSum(d.h_x, kMaxN), kLooseRtol, Expect::Pass);
}

// Test 4: a property, sum(2x) = 2 sum(x), at n = 1024.
bool testLinearity(Variant sum, const Data& d, Verdicts& v, Expect expect) {
  const Outcome doubled = sum(d.x2, kExactN, d.partials);
  const Outcome single = sum(d.x, kExactN, d.partials);
  return report(v, "linearity, n=1024", doubled, 2.0 * static_cast<double>(single.sum),
                kBaseRtol, expect);
}

Verdicts runSuppliedSuite(Variant sum, const Data& d) {
  Verdicts v;
  testGolden(sum, d, v, Expect::Pass);
  testDeterminism(sum, d, v);
  testLooseOracle(sum, d, v);
  testLinearity(sum, d, v, Expect::Pass);
  return v;
}

// =============================================================================
// The hardened suite
// =============================================================================
// runHardenedSuite is to run every hardened test against one wrapper and record
// each through report(v, ...). `catches` is the outcome this phase expects of
// a test that can see a fault in gpuSum: Expect::Fail against gpuSum as
// shipped, Expect::Pass against gpuSumRevised. A test that cannot see the
// fault expects Expect::Pass in both phases.
void runHardenedSuite(Variant sum, const Data& d, Expect catches, Verdicts& v);

// solution: hardened-suite
// Why the supplied suite is green against gpuSum: test 1's 11815.5 is the sum
// of the first 512 elements only (the true sum of 611 is 14171), captured
// from the buggy output, so it certifies the bug. Test 2 cannot see an error
// that repeats. Test 3's 1e-2 is 1.64 times the 6.111e-3 it should catch.
// Test 4 runs at a size with no tail, and a lost tail scales with the input
// like everything else, so linearity cannot see it at any size.
constexpr int kSwapCount = 99;  // swap-ends exchanges this many from each end
constexpr int kTinyN = 100;     // less than one block
static_assert(kSwapCount == kMaxN % kThreads,
              "swap-ends moves exactly the tail a floor-divided grid ignores "
              "into the head, and the head into the tail");
static_assert(kTinyN < kThreads, "the tiny rung must be smaller than one block");

// snippet: scaled-tolerance
// rtol(n) = max(1e-5, 4 * 2^-23 * sqrt(n)), in float. Rounding errors of n
// additions add like a random walk (sqrt(n)); the 4 is headroom over that
// typical size, not a worst-case bound for every order. No fixed rtol fits
// every n: the error a correct float sum may carry grows with n, so 1e-5
// would reject correct sums of long enough inputs
// (this rule leaves it behind from n = 440 on), and a value wide enough for
// every n rejects nothing: test 3's 1e-2 is 163 times this rule's 6.122e-5
// at n = 16483. This lesson's inputs are exact, so every correct sum has
// rel 0 and rtol 0 would give the same verdicts here; the rule decides from Day 71 on,
// where half-precision storage makes correct results inexact.
float scaledRtol(int n) {
  return std::max(kBaseRtol, 4.0f * 1.1920929e-7f * std::sqrt(static_cast<float>(n)));
}
// end snippet

bool testOracle(Variant sum, const Data& d, Verdicts& v, int n, const char* label,
                Expect expect) {
  return report(v, label, sum(d.x, n, d.partials), oracleSum(d.h_x, n), scaledRtol(n), expect);
}

// snippet: swap-ends
// The same values in another order must give the same sum. The permutation is
// fixed (the first 99 and the last 99 elements trade places), not random, so a
// failure shows the same numbers on every run. A wrapper that drops the tail
// now drops different values: it sees the bug only because the head (2328.5)
// and the tail (2416.5) differ; with equal sums it would be blind.
bool testSwapEnds(Variant sum, const Data& d, Verdicts& v, Expect expect) {
  std::vector<float> swapped(d.h_x, d.h_x + kMaxN);
  std::swap_ranges(swapped.begin(), swapped.begin() + kSwapCount, swapped.end() - kSwapCount);
  float* d_swapped = nullptr;
  CUDA_CHECK(cudaMalloc(&d_swapped, swapped.size() * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d_swapped, swapped.data(), swapped.size() * sizeof(float),
                        cudaMemcpyHostToDevice));
  const Outcome permuted = sum(d_swapped, kMaxN, d.partials);
  CUDA_CHECK(cudaFree(d_swapped));
  const Outcome original = sum(d.x, kMaxN, d.partials);
  return report(v, "swap-ends permutation, n=16483", permuted, original.sum, scaledRtol(kMaxN),
                expect);
}
// end snippet

// A ladder of sizes against the oracle (an odd size, a round one, the largest,
// less than a block), the permutation, and linearity. The 1024 rung and
// linearity cannot see a lost tail, so they expect to pass in every phase.
void runHardenedSuite(Variant sum, const Data& d, Expect catches, Verdicts& v) {
  testOracle(sum, d, v, kOddN, "oracle, n=611", catches);
  testOracle(sum, d, v, kExactN, "oracle, n=1024", Expect::Pass);
  testOracle(sum, d, v, kMaxN, "oracle, n=16483", catches);
  testSwapEnds(sum, d, v, catches);
  testLinearity(sum, d, v, Expect::Pass);
  testOracle(sum, d, v, kTinyN, "oracle, n=100 (less than a block)", catches);
  if (catches == Expect::Fail) {
    std::printf("  note: the 1024 rung and linearity are blind to a lost tail; swap-ends\n"
                "  sees it only because head (%.1f) and tail (%.1f) sums differ\n",
                oracleSum(d.h_x, kSwapCount), oracleSum(d.h_x + (kMaxN - kSwapCount), kSwapCount));
  }
}
// end solution

// =============================================================================
// The experiment: five phases, each with the outcome it expects
// =============================================================================
// Phase 5 checks gpuSumRevised against the oracle at every n from 1 to 1024
// and at kMaxN, independently of the hardened suite: a revision is only as
// good as the suite that passed it, so the lesson checks it on its own too.
// Its tolerance is printed in the phase heading, so loosening it changes the
// output.
constexpr int kCheckAllUpTo = 1024;
constexpr float kPhase5Rtol = 0.0f;  // the inputs are exact: equality

// Returns the first n at which `sum` differs from the oracle, or 0.
int firstDifference(Variant sum, const Data& d, Outcome& got, double& want) {
  for (int n = 1; n <= kCheckAllUpTo + 1; ++n) {
    const int size = (n <= kCheckAllUpTo) ? n : kMaxN;
    got = sum(d.x, size, d.partials);
    want = oracleSum(d.h_x, size);
    if (!passes(got, want, kPhase5Rtol)) return size;
  }
  return 0;
}

// Phase 4's verdict on its one test: nullptr when the snapshot rejected a sum
// of gpuSumRevised's, else why not. A wrapper that launches nothing fails the
// snapshot too, but gives it no sum to reject.
const char* snapshotFault(const Verdicts& golden) {
  if (golden.launched == 0) return "gpuSumRevised returned no sum to judge";
  return golden.failed == 1 ? nullptr : "the golden snapshot passed gpuSumRevised";
}

// One line of outcome per phase, at the left margin, in the same words
// whatever tests the hardened suite holds.
void printOutcome(int phase, bool asExpected, const char* ifSo, const char* ifNot) {
  std::printf("Phase %d outcome: %s%s\n\n", phase, asExpected ? ifSo : ifNot,
              asExpected ? "" : " (a gate fails)");
}

// The gates: each is evaluated (no short-circuit) and each violation is named
// on stderr; the program exits 0 only if all of them held.
bool gate(bool held, const char* claim) {
  if (!held) std::fprintf(stderr, "GATE: %s\n", claim);
  return held;
}

bool runPhases(const Data& d) {
  std::printf("Phase 1: the supplied suite vs gpuSum as shipped (expected: all pass)\n");
  const Verdicts supplied = runSuppliedSuite(gpuSum, d);
  printOutcome(1, supplied.failed == 0, "every supplied test passed gpuSum as shipped",
               "a supplied test failed gpuSum as shipped");

  std::printf("Phase 2: the hardened suite vs gpuSum as shipped "
              "(expected: at least one test fails)\n");
  Verdicts onShipped;
  runHardenedSuite(gpuSum, d, Expect::Fail, onShipped);
  printOutcome(2, onShipped.failed > 0, "at least one hardened test failed gpuSum as shipped",
               "no hardened test failed gpuSum as shipped");

  std::printf("Phase 3: the hardened suite vs gpuSumRevised (expected: all pass)\n");
  Verdicts onRevised;
  runHardenedSuite(gpuSumRevised, d, Expect::Pass, onRevised);
  printOutcome(3, onRevised.tests > 0 && onRevised.failed == 0,
               "every hardened test passed gpuSumRevised",
               "no hardened test ran, or one failed gpuSumRevised");

  std::printf("Phase 4: the golden snapshot vs gpuSumRevised (expected: it fails)\n");
  Verdicts golden;
  testGolden(gpuSumRevised, d, golden, Expect::Fail);
  const char* goldenFault = snapshotFault(golden);
  printOutcome(4, goldenFault == nullptr, "the golden snapshot rejected gpuSumRevised",
               goldenFault);

  std::printf("Phase 5: gpuSumRevised vs the oracle at every n from 1 to %d and at n=%d, "
              "rtol %g (expected: all equal)\n", kCheckAllUpTo, kMaxN,
              static_cast<double>(kPhase5Rtol));
  Outcome got{};
  double want = 0.0;
  const int bad = firstDifference(gpuSumRevised, d, got, want);
  if (bad != 0 && got.launched) {
    std::printf("  n=%d: got %.6f, want %.6f\n", bad, static_cast<double>(got.sum), want);
  } else if (bad != 0) {
    std::printf("  n=%d: %s, want %.6f\n", bad, got.error, want);
  }
  printOutcome(5, bad == 0, "gpuSumRevised equals the oracle at every size checked",
               "gpuSumRevised did not equal the oracle at every size checked");

  bool ok = gate(supplied.tests == 4 && supplied.failed == 0,
                 "the supplied suite did not pass 4 of 4 against gpuSum as shipped");
  ok &= gate(onShipped.failed > 0,
             "no hardened test failed against gpuSum as shipped: the hardened suite has "
             "caught nothing yet");
  ok &= gate(onRevised.tests > 0, "the hardened suite ran no test against gpuSumRevised");
  ok &= gate(onRevised.failed == 0, "a hardened test failed against gpuSumRevised");
  ok &= gate(goldenFault == nullptr, goldenFault);
  ok &= gate(bad == 0, "gpuSumRevised did not equal the oracle at every size (phase 5)");
  ok &= gate(supplied.surprises + onShipped.surprises + onRevised.surprises +
                     golden.surprises == 0,
             "a test ended otherwise than it expected (a FAIL or XPASS line above)");
  return ok;
}

// =============================================================================
// main
// =============================================================================
int main(int argc, char** argv) {
  if (argc > 1) {  // the lesson takes no options: anything given is refused before any CUDA call
    std::fprintf(stderr, "error: testing takes no options; got \"%s\"\nusage: %s\n", argv[1], argv[0]);
    return 2;
  }
  const cudaDeviceProp prop = requireCudaDevice();
  std::printf("GPU: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
  std::printf("Day 66: four green tests certify a wrong GPU sum\n");
  std::printf("max n = %d, %d-thread blocks; block partials are summed on the host in float\n",
              kMaxN, kThreads);
  std::printf("verdicts: PASS = passed as expected, XFAIL = failed as its test expects;\n"
              "          FAIL or XPASS = not as its test expects (a gate fails)\n\n");

  const std::vector<float> x = makeInput(kMaxN);
  std::vector<float> x2(x.size());
  for (size_t i = 0; i < x.size(); ++i) x2[i] = 2.0f * x[i];
  const size_t bytes = x.size() * sizeof(float);
  Data d{x.data(), nullptr, nullptr, nullptr};
  CUDA_CHECK(cudaMalloc(&d.x, bytes));
  CUDA_CHECK(cudaMalloc(&d.x2, bytes));
  CUDA_CHECK(cudaMalloc(&d.partials, kMaxBlocks * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d.x, x.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d.x2, x2.data(), bytes, cudaMemcpyHostToDevice));

  const bool ok = runPhases(d);

  CUDA_CHECK(cudaFree(d.x));
  CUDA_CHECK(cudaFree(d.x2));
  CUDA_CHECK(cudaFree(d.partials));
  if (!ok) return EXIT_FAILURE;
  std::printf("All 7 gates held: the supplied tests vouched for a wrong GPU sum, and the\n"
              "hardened suite separated gpuSum as shipped from gpuSumRevised.\n");
  return EXIT_SUCCESS;
}

// =============================================================================
// Course toolkit: the blocks every lesson carries (here, the error checks).
// Machinery: skip it on a first read.
// =============================================================================
// common: cuda_check
// Device 0's properties. No NVIDIA driver loaded, or no GPU listed: exit 77 (skipped);
// a loaded driver that CUDA cannot use (too old, broken): exit 1, the GPU needs fixing.
cudaDeviceProp requireCudaDevice() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::FILE* driver = std::fopen("/proc/driver/nvidia/version", "r");  // Linux's driver
    if (driver) std::fclose(driver);
    const bool broken = driver && err != cudaSuccess && err != cudaErrorNoDevice;
    std::fprintf(stderr, broken ? "CUDA cannot use this machine's NVIDIA driver: %s\n"
                                : "no usable CUDA device: %s (exit 77 = skipped)\n",
                 !driver ? "no NVIDIA driver is loaded"
                         : err != cudaSuccess ? cudaGetErrorString(err) : "the driver lists none");
    std::exit(broken ? EXIT_FAILURE : kExitNoDevice);
  }
  CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  return prop;
}
// end common: cuda_check
