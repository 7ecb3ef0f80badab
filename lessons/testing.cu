// SPDX-License-Identifier: MIT
// Day 66 - testing: four green tests certify a wrong kernel.
//
// One shared-memory tree reduction (Day 24) is driven by two launch wrappers
// that differ in a single grid-size expression. A realistic "supplied" suite
// of four tests passes the buggy wrapper; a hardened suite (a double-precision
// oracle over a size ladder, a fixed permutation, a length-scaled tolerance)
// fails it and passes the fix. Every verdict the lesson claims is a gate: the
// exit status is 0 only if the contrast appears exactly as described.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -lineinfo -o testing testing.cu
// Run:   ./testing
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

// common: cuda_check
// Every CUDA runtime call goes through CUDA_CHECK; every launch is followed by
// CUDA_CHECK_LAUNCH(). A failure names the file, the line, the call and the
// runtime's message on stderr and ends the program with status 1 (EXIT_FAILURE).
// One statement (do/while(0)); the local has a trailing underscore so it can
// never shadow a name at the call site.
#define CUDA_CHECK(call)                                                      \
  do {                                                                        \
    cudaError_t err_ = (call);                                                \
    if (err_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "CUDA error at %s:%d: %s failed: %s\n", __FILE__,  \
                   __LINE__, #call, cudaGetErrorString(err_));                \
      std::exit(EXIT_FAILURE);                                                \
    }                                                                         \
  } while (0)
// A launch reports a bad configuration only through cudaGetLastError.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// Exit status 77 means "no usable CUDA device or driver"; CTest maps it to
// "skipped". Status 2 is a bad command line, 1 a failed gate or CUDA call.
constexpr int kExitNoDevice = 77;

// Selects device 0 and returns its properties, or exits 77 with one line when
// there is no driver or no device (a laptop, a CI runner).
inline cudaDeviceProp requireCudaDevice() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::fprintf(stderr, "no usable CUDA device: %s (exit 77 = skipped)\n",
                 err != cudaSuccess ? cudaGetErrorString(err)
                                    : "the driver reports no device");
    std::exit(kExitNoDevice);
  }
  CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  return prop;
}
// end common: cuda_check

// ---------------------------------------------------------------------------
// Constants and inputs
// ---------------------------------------------------------------------------
constexpr int kThreads = 256;    // threads per block
constexpr int kMaxN = 16483;     // 169*97 + 90; leaves a 99-element tail
constexpr int kOddN = 611;       // 13*47, the course's odd size; tail of 99
constexpr int kExactN = 1024;    // four whole blocks: no tail
constexpr int kMaxBlocks = (kMaxN + kThreads - 1) / kThreads;  // partials: 65
constexpr float kBaseRtol = 1e-5f;   // the float table entry
constexpr float kLooseRtol = 1e-2f;  // the supplied suite's "oracle" tolerance

static_assert(kThreads % 32 == 0 && (kThreads & (kThreads - 1)) == 0,
              "the tree reduction halves the stride down to 1: the block size "
              "must be a power of two and whole warps");
static_assert(kMaxN % kThreads != 0 && kOddN % kThreads != 0,
              "the large and the odd size must leave a tail past the last "
              "whole block, or there is no bug to find");
static_assert(kExactN % kThreads == 0,
              "the exact size must have no tail: it is the size that hides the bug");
static_assert(kOddN < kExactN && kExactN < kMaxN, "the ladder ascends");
static_assert(48.0 * 2.0 * kMaxN < 16777216.0,
              "inputs are half-integers below 48 (x2: below 96) and no partial "
              "sum reaches 2^24, so every float addition in the program is exact");
// solution: hardened-constants
constexpr int kSwapCount = 99;  // swap-ends exchanges this many from each end
constexpr int kTinyN = 100;     // less than one block
static_assert(kSwapCount == kMaxN % kThreads,
              "swap-ends moves exactly the tail a floor-divided grid ignores "
              "into the head, and the head into the tail");
static_assert(kTinyN < kThreads, "the tiny rung must be smaller than one block");
// end solution

// x[i] = (i mod 97) * 0.5: half-integers, exact in float.
std::vector<float> makeInput(int n) {
  std::vector<float> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i % 97) * 0.5f;
  return x;
}

// ---------------------------------------------------------------------------
// Kernel and launch wrappers
// ---------------------------------------------------------------------------
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

using Variant = Outcome (*)(const float* d_in, int n, float* d_partials);

// snippet: drop-tail
// solution: drop-tail-notes
// The bug: floor(n / 256) blocks ignore the last n % 256 elements. The result
// is exact at n = 1024 (no tail), 99 elements short at n = 611 and 16483, and
// below 256 elements there is no block to launch at all.
// end solution
Outcome gpuSum(const float* d_in, int n, float* d_partials) {
  const int blocks = n / kThreads;
  return foldOnGpu(d_in, n, blocks, d_partials);
}
// end snippet

// solution: fixed-wrapper
// The fix: ceil(n / 256) blocks; the kernel's guard zero-fills the tail block.
Outcome gpuSumFixed(const float* d_in, int n, float* d_partials) {
  const int blocks = (n + kThreads - 1) / kThreads;
  return foldOnGpu(d_in, n, blocks, d_partials);
}
// end solution

// ---------------------------------------------------------------------------
// Reference and comparison
// ---------------------------------------------------------------------------
// The oracle: a sequential, Kahan-compensated double sum. Its order and its
// precision are deliberately unlike the kernel's.
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

// Each phase says which outcome it expects. The verdict word says whether the
// outcome matched: PASS and XFAIL are as expected, FAIL and XPASS are not.
enum class Expect { Pass, Fail };

bool report(const char* label, const Outcome& got, double want, float rtol, Expect expect) {
  const bool ok = passes(got, want, rtol);
  const char* verdict = ok ? (expect == Expect::Pass ? "PASS" : "XPASS")
                           : (expect == Expect::Fail ? "XFAIL" : "FAIL");
  if (got.launched) {
    std::printf("  %-34s %-5s got %.6f  want %.6f  rel %.3e  rtol %.3e\n", label, verdict,
                static_cast<double>(got.sum), want, relativeError(got.sum, want),
                static_cast<double>(rtol));
  } else {
    std::printf("  %-34s %-5s %s  want %.6f\n", label, verdict, got.error, want);
  }
  return ok;
}

// Device copies of the inputs, and the partials buffer.
struct Data {
  const float* h_x;  // host copy of x, for the oracle
  float* x;
  float* x2;
  float* swapped;
  float* partials;
};

// ---------------------------------------------------------------------------
// The supplied suite: four tests, all green against the shipped wrapper
// ---------------------------------------------------------------------------
// snippet: golden
// Test 1: a golden value captured from the wrapper's own output at n = 611.
constexpr float kGolden611 = 11815.5f;
bool testGolden(Variant sum, const Data& d, Expect expect) {
  return report("golden snapshot, n=611", sum(d.x, kOddN, d.partials), kGolden611, 0.0f, expect);
}
// end snippet

// Test 2: two consecutive sums must agree exactly.
bool testDeterminism(Variant sum, const Data& d, Expect expect) {
  const Outcome first = sum(d.x, kMaxN, d.partials);
  const Outcome second = sum(d.x, kMaxN, d.partials);
  return report("determinism, n=16483", second, first.sum, 0.0f, expect);
}

// Test 3: the double oracle, with a tolerance picked to "allow for float".
bool testLooseOracle(Variant sum, const Data& d, Expect expect) {
  return report("loose oracle, n=16483", sum(d.x, kMaxN, d.partials), oracleSum(d.h_x, kMaxN),
                kLooseRtol, expect);
}

// Test 4: linearity, sum(2x) = 2 sum(x), at the size with no tail.
bool testLinearity(Variant sum, const Data& d, Expect expect) {
  const Outcome doubled = sum(d.x2, kExactN, d.partials);
  const Outcome single = sum(d.x, kExactN, d.partials);
  return report("linearity, n=1024", doubled, 2.0 * static_cast<double>(single.sum), kBaseRtol,
                expect);
}

// Runs tests 1-4; returns how many passed. The flaws: test 1's constant is the
// wrapper's own output, test 2 cannot see a consistent error, test 3's 1e-2 is
// 163x wider than the error it should catch, test 4 runs where nothing is lost
// and a lost tail scales linearly anyway.
int runSuppliedSuite(Variant sum, const Data& d, Expect expect) {
  int passed = 0;
  passed += testGolden(sum, d, expect);
  passed += testDeterminism(sum, d, expect);
  passed += testLooseOracle(sum, d, expect);
  passed += testLinearity(sum, d, expect);
  return passed;
}

// solution: hardened-suite
// ---------------------------------------------------------------------------
// The hardened suite: a size ladder against the oracle, a fixed permutation,
// a length-scaled tolerance
// ---------------------------------------------------------------------------
// snippet: scaled-tolerance
// rtol(n) = max(1e-5, 4 * 2^-23 * sqrt(n)), in float. Rounding errors of n
// additions add like a random walk (sqrt(n)); the 4 allows any legitimate
// reordering. No fixed rtol works for every n: 1e-5 rejects correct float
// sums once sqrt(n) * 2^-23 approaches it, and a value wide enough for every
// n rejects nothing (test 3). This lesson's inputs are exact, so every correct
// sum has rel 0 and this rule decides no verdict here; it decides from Day 71
// on, where half-precision storage makes correct results inexact.
float scaledRtol(int n) {
  return std::max(kBaseRtol, 4.0f * 1.1920929e-7f * std::sqrt(static_cast<float>(n)));
}
// end snippet

// The verdicts of one run of the hardened suite.
struct Hardened {
  bool oracle611, oracle1024, oracle16483, swapEnds, linearity, tiny;
  int failures() const {
    return !oracle611 + !oracle1024 + !oracle16483 + !swapEnds + !linearity + !tiny;
  }
};

// snippet: swap-ends
// The same values in another order must give the same sum. The permutation is
// fixed (the first 99 and the last 99 elements trade places), not random, so a
// failure shows the same numbers on every run. A wrapper that drops the tail
// now drops different values: it sees the bug only because the head (2328.5)
// and the tail (2416.5) differ; with equal sums it would be blind.
bool testSwapEnds(Variant sum, const Data& d, Expect expect) {
  const Outcome permuted = sum(d.swapped, kMaxN, d.partials);
  const Outcome original = sum(d.x, kMaxN, d.partials);
  return report("swap-ends permutation, n=16483", permuted, original.sum, scaledRtol(kMaxN),
                expect);
}
// end snippet

// Runs the hardened suite; `bug` says which verdicts this phase expects: with
// the drop-tail wrapper, the 611 and 16483 rungs, swap-ends and the tiny rung
// fail, while the 1024 rung and linearity pass (they cannot see a lost tail).
Hardened runHardenedSuite(Variant sum, const Data& d, bool bug) {
  const Expect catches = bug ? Expect::Fail : Expect::Pass;
  Hardened h{};
  h.oracle611 = report("oracle, n=611", sum(d.x, kOddN, d.partials), oracleSum(d.h_x, kOddN),
                       scaledRtol(kOddN), catches);
  h.oracle1024 = report("oracle, n=1024", sum(d.x, kExactN, d.partials),
                        oracleSum(d.h_x, kExactN), scaledRtol(kExactN), Expect::Pass);
  h.oracle16483 = report("oracle, n=16483", sum(d.x, kMaxN, d.partials), oracleSum(d.h_x, kMaxN),
                         scaledRtol(kMaxN), catches);
  h.swapEnds = testSwapEnds(sum, d, catches);
  h.linearity = testLinearity(sum, d, Expect::Pass);
  h.tiny = report("oracle, n=100 (less than a block)", sum(d.x, kTinyN, d.partials),
                  oracleSum(d.h_x, kTinyN), scaledRtol(kTinyN), catches);
  return h;
}
// end solution

// ---------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------
int main() {
  const cudaDeviceProp prop = requireCudaDevice();
  std::printf("GPU: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
  std::printf("Day 66: four green tests certify a wrong kernel\n");
  std::printf("max n = %d, %d-thread blocks; block partials are summed on the host in float\n",
              kMaxN, kThreads);
  std::printf("verdicts: PASS = passed as expected, XFAIL = failed as this phase expects;\n"
              "          FAIL or XPASS would mean the lesson's claim broke (a gate fails)\n\n");

  const std::vector<float> x = makeInput(kMaxN);
  std::vector<float> x2(x.size());
  for (size_t i = 0; i < x.size(); ++i) x2[i] = 2.0f * x[i];
  const size_t bytes = x.size() * sizeof(float);
  Data d{x.data(), nullptr, nullptr, nullptr, nullptr};
  CUDA_CHECK(cudaMalloc(&d.x, bytes));
  CUDA_CHECK(cudaMalloc(&d.x2, bytes));
  CUDA_CHECK(cudaMalloc(&d.partials, kMaxBlocks * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(d.x, x.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d.x2, x2.data(), bytes, cudaMemcpyHostToDevice));

  std::printf("Phase 1: the supplied suite vs gpuSum as shipped (expected: all pass)\n");
  const int supplied = runSuppliedSuite(gpuSum, d, Expect::Pass);
  std::printf("\n");

  int status = EXIT_FAILURE;
  // solution: phases-2-to-4
  std::vector<float> swapped = x;
  std::swap_ranges(swapped.begin(), swapped.begin() + kSwapCount, swapped.end() - kSwapCount);
  CUDA_CHECK(cudaMalloc(&d.swapped, bytes));
  CUDA_CHECK(cudaMemcpy(d.swapped, swapped.data(), bytes, cudaMemcpyHostToDevice));

  std::printf("Phase 2: the hardened suite vs gpuSum, the drop-tail wrapper "
              "(expected: the bug is exposed)\n");
  const Hardened onBug = runHardenedSuite(gpuSum, d, true);
  const double head = oracleSum(x.data(), kSwapCount);
  const double tail = oracleSum(x.data() + (kMaxN - kSwapCount), kSwapCount);
  std::printf("  note: the 1024 rung and linearity are blind to a lost tail; swap-ends sees it\n"
              "        only because head (%.1f) and tail (%.1f) sums differ\n\n", head, tail);

  std::printf("Phase 3: the hardened suite vs gpuSumFixed, ceil-divided grid "
              "(expected: all pass)\n");
  const Hardened onFix = runHardenedSuite(gpuSumFixed, d, false);
  std::printf("  note: the inputs are exact, so every correct sum has rel 0; the scaled rtol\n"
              "        starts to decide verdicts on Day 71\n\n");

  std::printf("Phase 4: the golden snapshot vs gpuSumFixed (expected: it fails)\n");
  const bool goldenOnFix = testGolden(gpuSumFixed, d, Expect::Fail);
  std::printf("\n");

  // The gates: every one is evaluated (no short-circuit) and each violation is
  // named on stderr.
  bool ok = true;
  auto gate = [&ok](bool held, const char* claim) {
    if (!held) std::fprintf(stderr, "GATE: %s\n", claim);
    ok = ok && held;
  };
  gate(supplied == 4, "the supplied suite did not pass 4 of 4 against the drop-tail wrapper");
  gate(!onBug.oracle611, "the n=611 oracle rung did not catch the drop-tail wrapper");
  gate(onBug.oracle1024 && !onBug.oracle16483 && !onBug.swapEnds && onBug.linearity && !onBug.tiny,
       "the other hardened verdicts on the drop-tail wrapper are not as the lesson claims "
       "(1024 and linearity pass; 16483, swap-ends and n=100 fail)");
  gate(onFix.failures() == 0, "the hardened suite failed the fixed wrapper");
  gate(!goldenOnFix, "the golden snapshot passed the fixed wrapper");
  if (ok) {
    std::printf("All 5 gates held: the supplied tests vouched for a broken kernel, and the\n"
                "hardened suite separated the broken wrapper from the fixed one.\n");
    status = EXIT_SUCCESS;
  }
  CUDA_CHECK(cudaFree(d.swapped));
  // end solution

  CUDA_CHECK(cudaFree(d.x));
  CUDA_CHECK(cudaFree(d.x2));
  CUDA_CHECK(cudaFree(d.partials));
  return status;
}
