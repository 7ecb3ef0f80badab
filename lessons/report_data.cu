// SPDX-License-Identifier: MIT
// Final project - report_data: roofline data you can defend, naive and tiled FP32 GEMM.
//
// C = A * B (FP32, row-major, M = N = K = n) by a naive kernel (one output per thread, straight from
// global memory) and a 16 x 16 tiled kernel (the exercise), for n = 128, 200, 256, 511, 512, 1000, 1024,
// 2048 below -maxn, and -maxn. Each CSV row says how its output was verified and where it sits on a
// roofline of DRAM bandwidth, FP32 rate and shared-memory loads, each measured here and bounded from
// the device's attributes, and the lowest roof from those bounds (limited_by).
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -lineinfo -o report_data report_data.cu
// Run:   ./report_data
// Run:   ./report_data -maxn 300 -iters 3
// Run:   ./report_data -iters 0
// Sanitize: ./report_data -maxn 300 -iters 1 -warmups 0
// Exercise check: python3 scripts/suite.py exercise check report_data (on a GPU, every recorded run);
// without one, add --pane FILE [--args '...'] for a saved Compiler Explorer pane of one run (ce-link).

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>
#include <cuda_runtime.h>

// =============================================================================
// The idea: one GEMM, two kernels, two ways to count its bytes
// =============================================================================
// A roofline bounds a kernel of arithmetic intensity AI (FLOP per byte) by min(FP32 peak, AI x
// bandwidth). Counted as the loads a kernel issues if no cache served any, naive's AI is 0.25 and
// a 16 x 16 tiled kernel's 4 (each value staged in shared memory used 16 times); counted as the
// compulsory traffic (A and B read once, C written once), either kernel's is n / 6. Tiling moves
// loads, it does not remove them: each multiply-add of a tiled kernel still loads two, from shared memory.
constexpr int kTile = 16;  // both kernels: 16 x 16 threads per block, one output each
constexpr long long kLadder[] = {128, 200, 256, 511, 512, 1000, 1024, 2048};
constexpr long long kDefaultMaxN = 2048, kMaxN = 4096;  // 3 device buffers of 64 MiB at most
constexpr long long kFullRefMax = 1024;  // every element against the reference up to here
constexpr int kDefaultIters = 20, kMaxIters = 10000, kWarmups = 3, kMaxWarmups = 100;
constexpr double kMaxWorkFlop = 1e13;    // GEMM work refused beyond this (see the usage)
constexpr uint32_t kSeed = 987654321u;   // reset at every n
static_assert(kFullRefMax >= kLadder[0], "the first n gets a full check: later trust rests on it");
static_assert(kMaxN / kTile <= 65535, "every GPU from sm_75 up takes the largest grid");
// Both kernels: thread (tx, ty) of block (bx, by) owns C(by*16 + ty, bx*16 + tx) and sums its K
// products in ascending k with fmaf. launch assumption: blockDim (16, 16), gridDim (ceil(N / 16),
// ceil(M / 16)). memory: naive loads K values of A and K of B per output, 8 MNK bytes in all.
__global__ void gemmNaiveKernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, long long M, long long N, long long K) {
  const long long row = static_cast<long long>(blockIdx.y) * kTile + threadIdx.y;
  const long long col = static_cast<long long>(blockIdx.x) * kTile + threadIdx.x;
  if (row >= M || col >= N) return;  // no barrier in this kernel: an early return is safe
  float acc = 0.0f;
  for (long long k = 0; k < K; ++k) acc = fmaf(A[row * K + k], B[k * N + col], acc);
  C[row * N + col] = acc;
}
// The design, one change from naive: each K step of 16 stages a 16 x 16 tile of A and one of B in
// shared memory, each value used 16 times. memory: per K step every thread loads one element of each
// tile, zero past the edges; two float tiles, 2 KiB, which main checks the compiled kernel holds.
// solution: tiled-kernel
__global__ void gemmTiledKernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, long long M, long long N, long long K) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long row = static_cast<long long>(blockIdx.y) * kTile + ty;  // 64-bit: no
  const long long col = static_cast<long long>(blockIdx.x) * kTile + tx;  // int overflow
  float acc = 0.0f;
  for (long long k0 = 0; k0 < K; k0 += kTile) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();  // both tiles complete; every thread of the block reaches it
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
    __syncthreads();  // nobody overwrites a tile another thread still reads
  }
  // The guard wraps the store only: threads outside C still loaded and synced.
  if (row < M && col < N) C[row * N + col] = acc;
}
// end solution
enum class Kernel { kNaive, kTiled };
const char* kernelName(Kernel k) { return k == Kernel::kNaive ? "naive" : "tiled"; }
// The model of k's compiled code: tiled's only while it holds its tiles (tiledKernelHoldsTiles), else
// naive's. Shared-memory loads per FMA by model (a broadcast counts once per thread): tiled's As, Bs.
Kernel modelOf(Kernel k, bool holdsTiles) { return holdsTiles ? k : Kernel::kNaive; }
constexpr double kSmemLoadsPerFma[] = {0.0, 2.0};
void launchGemm(Kernel k, const float* A, const float* B, float* C, long long n) {
  const unsigned g = unsigned((n + kTile - 1) / kTile);
  (k == Kernel::kNaive ? gemmNaiveKernel : gemmTiledKernel)<<<dim3(g, g), dim3(kTile, kTile)>>>(A, B, C, n, n, n);
}
// snippet: byte-models
// Loads the kernel issues if no cache served any (in-bounds loads only; C excluded).
double modelLoadBytes(Kernel k, long long M, long long N, long long K) {
  const double m = double(M), n = double(N), kk = double(K);
  if (k == Kernel::kNaive) return 8.0 * m * n * kk;  // K of A and K of B per output
  const double gridX = double((N + kTile - 1) / kTile), gridY = double((M + kTile - 1) / kTile);
  return 4.0 * (m * kk * gridX + kk * n * gridY);    // A once per block column, B per row
}
// What any GEMM must move between the SMs and L2: A and B read once, C written once.
double compulsoryBytes(long long M, long long N, long long K) {
  return 4.0 * (double(M) * K + double(K) * N + double(M) * N);
}
// end snippet

// =============================================================================
// Machinery: skip it on a first read. The course toolkit's declarations (definitions at the end).
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
// common: timer_decl
// Kernel timing (method and reasons: the timer block at the end of the file).
struct TimingStats {
  double median_ms;  // the headline: middle sample (mean of the two middle ones if even)
  double min_ms, max_ms;  // the spread: a difference smaller than it is noise
  double mean_ms;    // pulled up by slow outliers
  int samples;
};
// warmups untimed launches, then samples timed ones; launch() queues one launch.
template <typename Launch>
TimingStats timeKernel(Launch launch, int warmups, int samples);
// end common: timer_decl
// common: cli_decl
// Strict command line (rules and definitions: the cli block at the end).
constexpr int kExitBadCommandLine = 2;
class CommandLine {
 public:
  CommandLine(int argc, char** argv, std::string usage);  // usage: the help text
  bool next();                                     // to the next token; false at the end
  bool is(const char* name) const;                 // is the current token this option?
  long long intValue(long long lo, long long hi);  // its value: an integer in [lo, hi]
  double realValue(double lo, double hi);          // its value: a decimal number in [lo, hi]
  [[noreturn]] void unknownOption() const;
  // "error: " + the printf-style message, the usage, exit 2 (rules across options too).
  [[noreturn]] __attribute__((format(printf, 2, 3))) void fail(const char* fmt, ...) const;
 private:
  const char* takeValue();  // the next token, or nullptr at the end
  int argc_;
  char** argv_;
  std::string usage_;
  int i_ = 0;  // argv_[0] is the program
};
// end common: cli_decl
// common: reference_gemm_decl
// The reference every GEMM here is checked against (the reference_gemm block
// at the end of the file): C = A * B in double, row-major host arrays.
void referenceGemm(const float* A, const float* B, double* C, int M, int N, int K);
// Row i of the same, computed by a CPU loop; it needs no GPU.
void referenceRowCpu(const float* A, const float* B, double* row, int i, int N, int K);
// end common: reference_gemm_decl
// common: ceilings_decl
// Roofline ceilings (definitions and method: the ceilings block at the end).
constexpr int kCeilingSamples = 7;  // timed launches per ceiling; odd: the median is one launch
struct Ceilings {
  double copy_gbs, fp32_gflops;  // measured on this device by this program
  double copy_bytes, l2_bytes;   // size of each copy buffer; the device's L2
  double dram_bound_gbs, fp32_bound_gflops;  // from the device's attributes; 0 = unknown
  char bounds[256];              // the bounds from the device's attributes, as printed
};
Ceilings measureCeilings();  // exit 1 on a measurement above its bound; 2 buffers, each <= 1/4 of free memory
void printCeilings(const Ceilings& c, std::FILE* out);  // a measured line, a [device] line
double rooflineGflops(const Ceilings& c, double ai);    // min(FP32 peak, ai x bandwidth)
// end common: ceilings_decl
// common: smem_roof_decl
// The shared-memory roof (definitions and method: the smem_roof block at the end).
struct SmemRoof {
  double measured_gbs;  // bytes shared memory delivered to threads per second, measured here
  double bound_gbs;     // SMs x 32 banks x 4 bytes x clock, from the device's attributes
  char bound[128];      // that product, as printed
};
SmemRoof measureSmemRoof();  // exit 1 on a measurement above its bound
void printSmemRoof(const SmemRoof& s, std::FILE* out);  // a measured line, a [device] line
// The FP32 rate shared memory delivering gbs can feed when each FMA (2 FLOP) loads loadsPerFma
// 4-byte words from it: gbs x 2 / (4 x loadsPerFma); no roof (infinity) for 0 loads.
double smemRoofGflops(double gbs, double loadsPerFma);
// The lowest roof from the attribute bounds at compulsory intensity ai: FP32, ai x DRAM, and
// shared memory for loadsPerFma; {"unknown", 0} when no bound is known.
struct Roof {
  const char* name;  // "FP32", "DRAM" or "shared memory"
  double gflops;
};
Roof bindingRoof(const Ceilings& c, const SmemRoof& s, double ai, double loadsPerFma);
// end common: smem_roof_decl
// common: gemm_check_decl
// The course's correctness rule for a GEMM (definitions and reasons: the gemm_check block at
// the end): the K-scaled tolerance, every element checked with NaN and
// infinity failing, the output poisoned before the checked launch, and a timing only of a
// result that passed. Needs <algorithm>, <cmath>, <cstdint>, <cstdio>, <cstdlib>, <cstring>,
// <new>, <string>, <vector> and the cuda_check and timer blocks.
constexpr unsigned char kPoisonByte = 0xFF;  // every byte of a poisoned output: each float a NaN
struct Lcg {  // s = 1664525 s + 1013904223 (mod 2^32); a draw: its high 24 bits / 2^24
  uint32_t s;  // the seed, then the state
  float next();  // advances, then a float in [0, 1), exact
  void fill(std::vector<float>& x, float scale, float offset);  // x[i] = scale * next() + offset
};
struct Tolerance { double rtol, atol; };  // an element passes when |got - ref| <= atol + rtol*|ref|
double rtolForK(long long K);  // max(1e-5, 4 * 2^-23 * sqrt(K))
// {rtolForK(K), rtol * refMax}; a non-negative rtol or atol given replaces its default.
Tolerance gemmTolerance(long long K, double refMax, double rtol = -1.0, double atol = -1.0);
double maxAbs(const double* x, long long count);  // max |x[i]|, 0 for none
struct GemmCheck {  // the element check, fed one element at a time (add) or all at once
  long long checked = 0, failures = 0;
  long long first_bad = -1;  // linear index of the first failure (-1: none), and its values
  double first_got = 0.0, first_ref = 0.0, first_tol = 0.0;
  long long worst = -1;  // the element with the highest score, the first on ties
  double worst_score = 0.0;  // |got - ref| / tolerance; a NaN stays (and the first NaN is worst)
  double worst_got = 0.0, worst_ref = 0.0, worst_diff = 0.0, worst_tol = 0.0;
  double max_abs_err = 0.0;  // the largest |got - ref|; a NaN stays
  void add(long long index, double got, double ref, const Tolerance& tol);
  bool pass() const { return checked > 0 && failures == 0; }
  // "WHAT: F of N elements outside the tolerance, the first at (row, col): got G, ref R"
  std::string describe(const char* what, long long cols) const;
};
GemmCheck checkElements(const float* got, const double* ref, long long count, const Tolerance& tol);
// Poison dC (got.size() floats), launch once, copy C back into got, judge(got) says pass or
// fail (and prints what the lesson prints); only a pass is timed, and the timed launches must
// leave the checked bits in C.
struct CheckedTiming {
  bool passed = false;      // judge's verdict on the poisoned launch's output
  bool reproduced = false;  // passed, timed, and C still holds the checked bits
  TimingStats t{};          // the timing, when passed
};
template <typename Launch, typename Judge>
CheckedTiming checkThenTime(Launch launch, float* dC, std::vector<float>& got, Judge judge,
                            int warmups, int samples);
// A host buffer of count elements, or one stderr line naming what and how many bytes, exit 1.
template <typename T>
std::vector<T> hostVector(long long count, const char* what);
// end common: gemm_check_decl

// =============================================================================
// The experiment: inputs, checks, the verification ladder, the CSV
// =============================================================================
void fillInputs(std::vector<float>& A, std::vector<float>& B) {
  Lcg g{kSeed};
  for (std::vector<float>* x : {&A, &B}) g.fill(*x, 1.0f, -0.5f);
}
// The reference for the checks (the course's, gemm_check block) on some rows of C, every row up to
// kFullRefMax: slot[i] is row i's place in ref (ascending, n values each), or -1 if not compared.
struct RowsReference { std::vector<int> slot; std::vector<double> ref; double ref_max = 0.0; };
RowsReference referenceRows(const std::vector<float>& A, const std::vector<float>& B, long long n,
                            const std::vector<long long>& rows) {  // ascending, distinct
  const long long count = static_cast<long long>(rows.size()) * n;
  RowsReference rr{std::vector<int>(size_t(n), -1), hostVector<double>(count, "the reference rows"), 0.0};
  std::vector<float> aRows = hostVector<float>(count, "the rows of A");
  for (size_t s = 0; s < rows.size(); ++s) {
    rr.slot[size_t(rows[s])] = int(s);
    std::copy(A.begin() + rows[s] * n, A.begin() + (rows[s] + 1) * n, aRows.begin() + s * n);
  }
  referenceGemm(aRows.data(), B.data(), rr.ref.data(), int(rows.size()), int(n), int(n));
  rr.ref_max = maxAbs(rr.ref.data(), count);
  return rr;
}
// One pass over C (host): the reference's rows, Y's elements (xcheck), the first non-finite element.
struct Scan { GemmCheck ref, xcheck; long long non_finite = -1; double rtol = 0, atol = 0, xcheck_atol = 0; };
Scan scan(const std::vector<float>& C, const std::vector<float>* Y, const RowsReference& rr, long long n) {
  Scan s;
  const Tolerance refTol = gemmTolerance(n, rr.ref_max);
  double yMax = 0.0;  // the cross-check's atol: rtol x max|Y|
  if (Y) for (float y : *Y) yMax = std::max(yMax, double(std::fabs(y)));
  const Tolerance yTol = gemmTolerance(n, yMax);
  s.rtol = refTol.rtol, s.atol = refTol.atol, s.xcheck_atol = yTol.atol;
  for (long long i = 0; i < n * n; ++i) {
    const int r = rr.slot[size_t(i / n)];
    if (r >= 0) s.ref.add(i, C[i], rr.ref[size_t(r * n + i % n)], refTol);
    if (Y) s.xcheck.add(i, C[i], (*Y)[i], yTol);
    if (!std::isfinite(C[i]) && s.non_finite < 0) s.non_finite = i;
  }
  return s;
}
enum class Verdict { kPass, kFail, kUnverified };
const char* const kVerdictNames[] = {"PASS", "FAIL", "UNVERIFIED"};  // indexed by Verdict
struct RowCheck { std::string how; Verdict verdict; std::string why; };  // why: for the GATE line
struct Ladder {
  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  bool naiveFullRecord = true;      // naive passed every full check (n <= kFullRefMax),
  long long naiveFirstFailure = 0;  // else the first n where it did not
  Verdict naiveVerdict = Verdict::kUnverified;  // naive's row at the current n
  int rows = 0, passed = 0;
  bool planted = false, plantedFailed = true;  // the planted errors were tried / all failed
  bool holdsTiles = true;                      // tiled holds its tiles: its rows use its model
  long long n = 0;                             // the size of the rates below
  double naiveMs = 0.0, naiveGflops = 0.0, tiledGflops = 0.0;  // 0: not timed at n
};
// The verification ladder above kFullRefMax: only sampled rows get the double reference, and the rest
// rests on trust that is stated and conditional. naive: the sampled rows against the reference and
// every element finite; the others are trusted only if naive passed every full check, else
// UNVERIFIED. tiled: the same rows, and every element against naive's output at this n,
// trusted only if that naive row passed. A correct pair agrees exactly (same products, same order),
// so the cross-check cannot see an error the two share; the sampled rows, independent of both, can.
// solution: verify-ladder
std::vector<long long> sampleRows(long long n) {  // the first 8, the last 8, 16 spread between
  std::vector<long long> rows;
  for (long long i = 0; i < 8; ++i) rows.push_back(i), rows.push_back(n - 1 - i);
  for (long long i = 0; i < 16; ++i) rows.push_back((2 * i + 1) * n / 32);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}
RowCheck verdictAbove(Kernel k, const Scan& s, long long n, const Ladder& t) {
  const bool naive = k == Kernel::kNaive;
  RowCheck rc{naive ? "ref-rows+finite" : "ref-rows+xcheck(naive)", Verdict::kFail, ""};
  if (!s.ref.pass()) {
    rc.why = s.ref.describe("failed the reference check of its sampled rows", n);
  } else if (s.non_finite >= 0) {
    rc.why = "element (" + std::to_string(s.non_finite / n) + ", " +
             std::to_string(s.non_finite % n) + ") is not finite";
  } else if (naive ? !t.naiveFullRecord : t.naiveVerdict != Verdict::kPass) {
    rc.verdict = Verdict::kUnverified;
    rc.why = naive ? "its unsampled rows rest on naive's full checks; it failed the one at n = " +
                         std::to_string(t.naiveFirstFailure)
                   : "its unsampled rows rest on the cross-check against naive, which did not pass";
  } else if (!naive && !s.xcheck.pass()) {
    rc.why = s.xcheck.describe("failed the cross-check against naive", n);
  } else {
    rc.verdict = Verdict::kPass;
  }
  return rc;
}
// end solution
// A gate counts once a planted defect has been seen to trip it. At the first n above kFullRefMax, if
// every row passed, the ladder must fail naive scaled by 1.001, naive with a NaN and tiled off by 0.5
// in the first row from n/2 + 1 on that sampleRows skips (plantedElement), and both true outputs untrusted.
long long plantedElement(const RowsReference& rr, long long n) {  // row n/2 + 1 if every row is sampled
  for (long long i = n / 2 + 1; i < n / 2 + 1 + n; ++i) if (rr.slot[size_t(i % n)] < 0) return (i % n) * n + n / 3;
  return (n / 2 + 1) * n + n / 3;
}
bool ladderFailsPlantedErrors(const std::vector<float>& naive, const std::vector<float>& tiled,
                              const RowsReference& rr, long long n) {
  const Ladder trusting{nullptr, nullptr, nullptr, true, 0, Verdict::kPass};  // all rows passed
  const Ladder doubting{nullptr, nullptr, nullptr, false, kLadder[0], Verdict::kFail};  // none did
  const auto fails = [&](Kernel k, const std::vector<float>& x, const Ladder& t) {
    const Scan s = scan(x, k == Kernel::kTiled ? &naive : nullptr, rr, n);
    return verdictAbove(k, s, n, t).verdict != Verdict::kPass;
  };
  const long long e = plantedElement(rr, n);
  std::vector<float> x = naive;
  for (float& v : x) v *= 1.001f;
  const char* passed =
      !fails(Kernel::kNaive, x, trusting) ? "naive scaled by 1.001"
      : (x = naive, x[e] = NAN, !fails(Kernel::kNaive, x, trusting)) ? "naive with a NaN"
      : (x = tiled, x[e] += 0.5f, !fails(Kernel::kTiled, x, trusting)) ? "tiled off by 0.5"
      : !fails(Kernel::kNaive, naive, doubting) ? "naive, untrusted"
      : !fails(Kernel::kTiled, tiled, doubting) ? "tiled, untrusted" : nullptr;
  if (passed) std::fprintf(stderr, "GATE: ladder: at n = %lld it passed a planted error: %s\n", n, passed);
  return passed == nullptr;
}
// A compiled kernel holding less than two 16 x 16 float tiles is not tiled, however right its numbers.
bool tiledKernelHoldsTiles() {
  cudaFuncAttributes fa{};
  CUDA_CHECK(cudaFuncGetAttributes(&fa, gemmTiledKernel));
  if (fa.sharedSizeBytes >= 2 * sizeof(float) * kTile * kTile) return true;
  std::fprintf(stderr, "GATE: tiled kernel: gemmTiledKernel holds %zu bytes of static shared memory, less "
               "than two 16 x 16 float tiles (2048 bytes): it is not tiled yet\n", fa.sharedSizeBytes);
  return false;
}
struct Options { long long maxn = kDefaultMaxN; int iters = kDefaultIters, warmups = kWarmups; };  // the command line
std::vector<long long> ladderUpTo(long long maxn) {  // the sizes below maxn, then maxn
  std::vector<long long> sizes;
  for (long long n : kLadder) if (n < maxn) sizes.push_back(n);
  sizes.push_back(maxn);
  return sizes;
}
// FLOP of every GEMM launch of a run: two kernels per n, each checked once, warmed up, timed.
double workFlop(long long maxn, int warmups, int iters) {
  double flop = 0.0;
  for (long long n : ladderUpTo(maxn)) flop += 2.0 * (1 + warmups + iters) * 2.0 * n * n * n;
  return flop;
}
std::string usageText() {
  char buf[1024];
  std::snprintf(buf, sizeof buf, "usage: report_data [-maxn N] [-iters I] [-warmups W] [-h | --help]\n"
      "Roofline CSV on stdout: naive and 16 x 16 tiled (the exercise) FP32 GEMM, M = N = K = n\n"
      "for n in 128 200 256 511 512 1000 1024 2048 below N, and N.\n"
      "  -maxn N     the largest n, an integer in [%lld, %lld] (default %lld)\n"
      "  -iters I    timed launches per row, an integer in [1, %d] (default %d)\n"
      "  -warmups W  untimed launches before them, an integer in [0, %d] (default %d); the\n"
      "              Sanitize: line gives 0, sparing a sanitizer the rows' warm-ups\n"
      "  All GEMM launches together: at most %.0f TFLOP (more is refused)\n"
      "  -h, --help  print this help and exit\n",
      kLadder[0], kMaxN, kDefaultMaxN, kMaxIters, kDefaultIters, kMaxWarmups, kWarmups,
      kMaxWorkFlop / 1e12);
  return buf;
}
Options parseOptions(CommandLine& cl) {
  Options o;
  while (cl.next()) {
    if (cl.is("-maxn")) o.maxn = cl.intValue(kLadder[0], kMaxN);
    else if (cl.is("-iters")) o.iters = static_cast<int>(cl.intValue(1, kMaxIters));
    else if (cl.is("-warmups")) o.warmups = static_cast<int>(cl.intValue(0, kMaxWarmups));
    else cl.unknownOption();
  }
  if (workFlop(o.maxn, o.warmups, o.iters) > kMaxWorkFlop)
    cl.fail("-maxn %lld with -iters %d and -warmups %d asks for %.1f TFLOP of GEMM launches, more than the %.0f "
            "this program runs: lower -maxn, -iters or -warmups", o.maxn, o.iters, o.warmups,
            workFlop(o.maxn, o.warmups, o.iters) / 1e12, kMaxWorkFlop / 1e12);
  return o;
}
const char* const kCsvHeader =
    "kernel,m,n,k,check,ref_elements,verdict,max_abs_err,xcheck_diff,ms,min_ms,max_ms,gflops,"
    "pct_of_roof,model_load_gb,compulsory_gb,ai_model,ai_compulsory,rtol,atol,xcheck_atol,"
    "pct_of_peak,speedup,smem_loads_per_fma,limited_by";
// The CSV's # lines ([device]: the same on every GPU of one model; tiled's by modelOf), its header.
void printPreamble(const cudaDeviceProp& prop, const Ceilings& c, const SmemRoof& s, bool tiles, const int* blocks) {
  const double loads = kSmemLoadsPerFma[int(modelOf(Kernel::kTiled, tiles))];
  const double tiledAi = tiles ? 4.0 : 0.25, smem = smemRoofGflops(s.bound_gbs, loads);
  std::printf("# GPU: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
  std::printf("# ceilings, measured here: bandwidth %.1f GB/s (copy kernel), FP32 peak %.1f GFLOP/s "
              "(FMA kernel), shared-memory loads %.1f GB/s (shared-load kernel); roof(AI) = min(FP32 "
              "peak, AI x bandwidth) and, for a kernel that loads L words of 4 bytes from shared memory "
              "per FMA, shared-memory GB/s x 2 / (4 L)", c.copy_gbs, c.fp32_gflops, s.measured_gbs);
  if (loads > 0.0)
    std::printf(": %.1f GFLOP/s for tiled's L = %g\n", smemRoofGflops(s.measured_gbs, loads), loads);
  else std::printf("; tiled holds no tiles yet: L = 0, no such roof\n");
  const double ridge = c.dram_bound_gbs > 0.0 ? c.fp32_bound_gflops / c.dram_bound_gbs : 0.0;
  const auto roof = [=](double ai) { return ai < ridge ? "below it (bandwidth" : "above it (compute"; };
  std::printf("# [device] %g MiB L2: A, B and C (12 n^2 bytes) fit in it up to n = %.0f; ridge point = FP32 "
              "bound / DRAM bound = ", prop.l2CacheSize / 1048576.0, std::floor(std::sqrt(prop.l2CacheSize / 12.0)));
  if (ridge > 0.0)
    std::printf("%.2f FLOP/B; modelled AI: naive's 0.25 is %s roof), tiled's %g is %s roof); compulsory AI n / 6 "
                "is above it (compute roof) for n > %.0f\n", ridge, roof(0.25), tiledAi, roof(tiledAi), 6 * ridge);
  else std::printf("n/a (a bound is unknown)\n");
  std::printf("# [device] shared-memory bound %s; ", s.bound);
  char ratio[32] = "n/a (FP32 bound unknown)";
  if (c.fp32_bound_gflops > 0.0) std::snprintf(ratio, sizeof ratio, "%.2f", c.fp32_bound_gflops / smem);
  if (loads > 0.0)
    std::printf("tiled loads %g words of 4 bytes from it per FMA (%g bytes for 2 FLOP): a roof of %.1f "
                "GFLOP/s = FP32 bound / %s", loads, 4 * loads, smem, ratio);
  std::printf("%s none from it (%s 2 loads per FMA go to global memory, through L1 and L2, which no roof "
              "here bounds); limited_by = the lowest roof from the bounds at the row's compulsory AI\n",
              loads > 0.0 ? "; naive loads" : "naive and tiled (no tiles yet) load", loads > 0.0 ? "its" : "their");
  const int perSm = prop.maxThreadsPerMultiProcessor;
  std::printf("# [device] theoretical occupancy (occupancy API, %d threads a block): naive %d blocks/SM, "
              "tiled %d blocks/SM, %.0f%% and %.0f%% of %d threads/SM\n", kTile * kTile, blocks[0], blocks[1],
              100.0 * blocks[0] * kTile * kTile / perSm, 100.0 * blocks[1] * kTile * kTile / perSm, perSm);
  std::printf("%s\n", kCsvHeader);
}
// One CSV row, its model and roofs by modelOf; every tolerance the checks applied is printed.
// pct_of_roof: of the lowest measured roof at the compulsory AI; pct_of_peak: of the measured FP32
// peak; speedup (tiled rows): naive's median time over tiled's at this n.
void printRow(Kernel k, long long n, const RowCheck& rc, const Scan& s, const TimingStats* t,
              double naiveMs, const Ceilings& c, const SmemRoof& sm, bool holdsTiles) {
  const Kernel m = modelOf(k, holdsTiles);
  const double flop = 2.0 * n * n * n, model = modelLoadBytes(m, n, n, n);
  const double compulsory = compulsoryBytes(n, n, n), loads = kSmemLoadsPerFma[int(m)];
  const bool ref = s.ref.checked > 0, xcheck = s.xcheck.checked > 0;  // a check not made: blank cells
  const auto e3 = [](bool made, double v) { if (made) std::printf("%.3e", v); };
  std::printf("%s,%lld,%lld,%lld,%s,%lld,%s,", kernelName(k), n, n, n, rc.how.c_str(), s.ref.checked,
              kVerdictNames[int(rc.verdict)]);
  e3(ref, s.ref.max_abs_err), std::printf(","), e3(xcheck, s.xcheck.max_abs_err);
  const double gflops = t ? flop / (t->median_ms * 1e-3) / 1e9 : 0.0;
  const double roof = std::min(rooflineGflops(c, flop / compulsory), smemRoofGflops(sm.measured_gbs, loads));
  if (t) std::printf(",%.4f,%.4f,%.4f,%.1f,%.2f,", t->median_ms, t->min_ms, t->max_ms, gflops, 100.0 * gflops / roof);
  else std::printf(",,,,,,");
  std::printf("%.6g,%.6g,%.3f,%.3f,", model / 1e9, compulsory / 1e9, flop / model, flop / compulsory);
  e3(ref || xcheck, s.rtol), std::printf(","), e3(ref, s.atol), std::printf(","), e3(xcheck, s.xcheck_atol);
  std::printf(",");
  if (t) std::printf("%.2f", 100.0 * gflops / c.fp32_gflops);
  std::printf(",");
  if (t && k == Kernel::kTiled && naiveMs > 0.0) std::printf("%.2f", naiveMs / t->median_ms);
  std::printf(",%g,%s\n", loads, bindingRoof(c, sm, flop / compulsory, loads).name);
  std::fflush(stdout);
}
void runSize(Ladder& L, long long n, const Options& o, const Ceilings& c, const SmemRoof& sm) {
  const size_t bytes = size_t(n * n) * sizeof(float);
  std::vector<float> A = hostVector<float>(n * n, "A"), B = hostVector<float>(n * n, "B"), out[2];
  fillInputs(A, B);  // a fresh seed at every n
  CUDA_CHECK(cudaMemcpy(L.dA, A.data(), bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(L.dB, B.data(), bytes, cudaMemcpyHostToDevice));
  const bool full = n <= kFullRefMax;
  std::vector<long long> rows = full ? std::vector<long long>(size_t(n)) : sampleRows(n);
  if (full) for (long long i = 0; i < n; ++i) rows[size_t(i)] = i;
  const RowsReference rr = referenceRows(A, B, n, rows);
  A = B = std::vector<float>();  // both on the device now: host memory goes to the outputs
  L.n = n, L.naiveMs = L.naiveGflops = L.tiledGflops = 0.0;
  for (const Kernel k : {Kernel::kNaive, Kernel::kTiled}) {
    std::vector<float>& C = (out[int(k)] = hostVector<float>(n * n, "C"));
    Scan s;
    RowCheck rc{"ref", Verdict::kFail, ""};
    const CheckedTiming run = checkThenTime([&] { launchGemm(k, L.dA, L.dB, L.dC, n); }, L.dC, C,
                                            [&](const std::vector<float>& got) {
      s = scan(got, full || k == Kernel::kNaive ? nullptr : &out[0], rr, n);
      rc = !full ? verdictAbove(k, s, n, L)
           : s.ref.pass() ? RowCheck{"ref", Verdict::kPass, ""}
           : RowCheck{"ref", Verdict::kFail, s.ref.describe("failed the full check", n)};
      return rc.verdict == Verdict::kPass;
    }, o.warmups, o.iters);
    if (run.passed && !run.reproduced)
      rc = RowCheck{rc.how, Verdict::kFail, "the timed launches did not reproduce the checked output bit for bit"};
    const TimingStats& t = run.t;
    const bool pass = rc.verdict == Verdict::kPass;
    if (!pass) std::fprintf(stderr, "GATE: %s n=%lld %s: %s\n", kernelName(k), n, kVerdictNames[int(rc.verdict)],
                            rc.why.c_str());
    printRow(k, n, rc, s, pass ? &t : nullptr, L.naiveMs, c, sm, L.holdsTiles);
    if (pass) (k == Kernel::kNaive ? L.naiveGflops : L.tiledGflops) = 2.0 * n * n * n / (t.median_ms * 1e6);
    if (k == Kernel::kNaive) L.naiveVerdict = rc.verdict, L.naiveMs = pass ? t.median_ms : 0.0;
    if (k == Kernel::kNaive && full && !pass && L.naiveFullRecord) L.naiveFullRecord = false, L.naiveFirstFailure = n;
    ++L.rows, L.passed += pass;
  }
  if (!full && !L.planted && L.passed == L.rows) {
    L.planted = true;
    L.plantedFailed = ladderFailsPlantedErrors(out[0], out[1], rr, n);
    if (L.plantedFailed)
      std::printf("# the ladder failed five planted errors at n = %lld: naive scaled by 1.001, naive "
                  "with one NaN, tiled with one element off by 0.5, both untrusted\n", n);
  }
}
// The last n's gain, tiled over naive, beside tiled's shared-memory roof from the bounds over naive.
void printGainLine(const Ladder& L, const Ceilings& c, const SmemRoof& sm) {
  std::printf("# n = %lld: tiled ran %.2fx naive's rate, at %.1f%% of measured FP32 peak; ", L.n,
              L.tiledGflops / L.naiveGflops, 100.0 * L.tiledGflops / c.fp32_gflops);
  const double roof = smemRoofGflops(sm.bound_gbs, kSmemLoadsPerFma[int(Kernel::kTiled)]);
  if (!L.holdsTiles) std::printf("it holds no tiles yet, so no shared-memory roof applies\n");
  else std::printf("tiled's shared-memory roof from the bounds, %.1f GFLOP/s, is %.2fx naive's rate: the "
                   "most this tiled kernel, one output a thread, could gain here by this model\n", roof, roof / L.naiveGflops);
}
int main(int argc, char** argv) {
  CommandLine cl(argc, argv, usageText());
  const Options o = parseOptions(cl);  // exit 2 on a bad command line or too much work
  const cudaDeviceProp prop = requireCudaDevice();  // exit 77 without a device
  const Ceilings c = measureCeilings();  // exit 1 if a ceiling beats what the attributes allow
  const SmemRoof sm = measureSmemRoof();  // likewise
  printCeilings(c, stderr);
  printSmemRoof(sm, stderr);
  Ladder L;
  L.holdsTiles = tiledKernelHoldsTiles();  // the GATE line says what is left when it does not
  int blocks[2] = {0, 0};  // theoretical occupancy: what the occupancy API allows, at 256 threads
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks[0], gemmNaiveKernel, kTile * kTile, 0));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks[1], gemmTiledKernel, kTile * kTile, 0));
  printPreamble(prop, c, sm, L.holdsTiles, blocks);
  for (float** p : {&L.dA, &L.dB, &L.dC}) CUDA_CHECK(cudaMalloc(p, o.maxn * o.maxn * 4));
  for (const long long n : ladderUpTo(o.maxn)) runSize(L, n, o, c, sm);
  for (float* p : {L.dA, L.dB, L.dC}) CUDA_CHECK(cudaFree(p));
  if (L.naiveGflops > 0.0 && L.tiledGflops > 0.0) printGainLine(L, c, sm);
  std::fprintf(stderr, "report_data: %d rows, %d PASS, %d not.\n", L.rows, L.passed, L.rows - L.passed);
  return (L.holdsTiles && L.plantedFailed && L.passed == L.rows) ? EXIT_SUCCESS : EXIT_FAILURE;
}

// =============================================================================
// Course toolkit: the blocks every lesson carries. Machinery: skip it on a first read.
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
// common: timer
// Kernel timer. Warm-ups launch the kernel being timed (lazy loading charges
// each kernel on its first launch; clocks ramp up). Each sample is one launch
// between two events, queued back to back, so the events read the GPU's clock
// and launch latency hides behind the previous launch. The median ignores the
// odd sample hit by a clock change.
template <typename Launch>
TimingStats timeKernel(Launch launch, int warmups, int samples) {
  samples = std::max(samples, 1);  // callers validate; this keeps the median defined
  for (int i = 0; i < warmups; ++i) launch();
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> marks(static_cast<size_t>(samples) + 1);
  for (cudaEvent_t& e : marks) CUDA_CHECK(cudaEventCreate(&e));
  CUDA_CHECK(cudaEventRecord(marks[0]));
  for (size_t i = 1; i < marks.size(); ++i) {
    launch();
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(marks[i]));
  }
  CUDA_CHECK(cudaEventSynchronize(marks.back()));
  std::vector<double> ms(marks.size() - 1);
  double total = 0.0;
  for (size_t i = 0; i < ms.size(); ++i) {
    float t = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&t, marks[i], marks[i + 1]));
    total += (ms[i] = t);
  }
  for (cudaEvent_t& e : marks) CUDA_CHECK(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  const size_t h = ms.size() / 2;
  const double median = (ms.size() % 2 == 1) ? ms[h] : 0.5 * (ms[h - 1] + ms[h]);
  return TimingStats{median, ms.front(), ms.back(), total / samples, samples};
}
// end common: timer
// common: cli
// Strict command line (no CUDA call: a bad one exits 2 without a GPU too).
// Tokens are read left to right, the last occurrence of an option wins, and a
// valued option takes the next token. A number is the whole token ("12x" is
// refused); integers are base 10; reals are plain decimals ("0.5", "1e-3"),
// so hex floats, inf, nan and values that overflow or underflow ("1e999",
// "1e-400") are refused, as is anything out of range. An error is one stderr
// line (the option, what it accepts, what it got), the usage, exit 2; -h and
// --help print the usage on stdout, exit 0. stdout is checked at exit: a
// failed write (CSV into a full disk) gets one stderr line and exit 1.
bool parseIntToken(const char* text, long long lo, long long hi, long long* out) {
  char* end = nullptr;
  errno = 0;  // strtoll would skip leading blanks: the first character must be a sign or digit
  if (!text || !(std::isdigit(static_cast<unsigned char>(*text)) || *text == '-' || *text == '+'))
    return false;
  const long long v = std::strtoll(text, &end, 10);
  if (errno == ERANGE || end == text || *end != '\0' || v < lo || v > hi) return false;
  return *out = v, true;
}

bool parseRealToken(const char* text, double lo, double hi, double* out) {
  char* end = nullptr;
  errno = 0;  // decimal characters only: no blanks, hex, inf or nan
  if (!text || !*text || std::strspn(text, "0123456789.eE+-") != std::strlen(text)) return false;
  const double v = std::strtod(text, &end);  // ERANGE: overflow or underflow
  if (errno == ERANGE || end == text || *end != '\0' || !(v >= lo && v <= hi)) return false;
  return *out = v, true;
}

void checkStdoutAtExit() {  // registered by CommandLine's constructor
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return;
  std::fputs("error: writing to stdout failed (a full disk or a closed pipe?)\n", stderr);
  std::_Exit(EXIT_FAILURE);
}

CommandLine::CommandLine(int argc, char** argv, std::string usage)
    : argc_(argc), argv_(argv), usage_(std::move(usage)) {
  std::atexit(checkStdoutAtExit);
}
bool CommandLine::next() {
  if (++i_ >= argc_) return false;
  if (is("-h") || is("--help")) {
    std::fputs(usage_.c_str(), stdout);
    std::exit(EXIT_SUCCESS);
  }
  return true;
}
bool CommandLine::is(const char* name) const { return std::strcmp(argv_[i_], name) == 0; }
const char* CommandLine::takeValue() { return (i_ + 1 < argc_) ? argv_[++i_] : nullptr; }

long long CommandLine::intValue(long long lo, long long hi) {
  const char *opt = argv_[i_], *text = takeValue();
  long long v = 0;
  if (!parseIntToken(text, lo, hi, &v))
    fail("%s expects an integer in [%lld, %lld], got %s%s%s", opt, lo, hi,
         text ? "\"" : "nothing", text ? text : "", text ? "\"" : "");
  return v;
}
double CommandLine::realValue(double lo, double hi) {
  const char *opt = argv_[i_], *text = takeValue();
  double v = 0.0;
  if (!parseRealToken(text, lo, hi, &v))
    fail("%s expects a decimal number in [%g, %g] (no hex, inf, nan, overflow or underflow), "
         "got %s%s%s", opt, lo, hi, text ? "\"" : "nothing", text ? text : "", text ? "\"" : "");
  return v;
}

void CommandLine::unknownOption() const {
  fail("unknown option \"%s\" (the accepted options are listed below)", argv_[i_]);
}
void CommandLine::fail(const char* fmt, ...) const {
  std::fflush(stdout);  // whatever was printed so far comes first
  std::fputs("error: ", stderr);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::fputs(usage_.c_str(), stderr);
  std::exit(kExitBadCommandLine);
}
// end common: cli
// common: reference_gemm
// Reference GEMM: C[i*N+j] = the sum over ascending k, from 0.0 in one double, of
// double(A[i*K+k]) * double(B[k*N+j]), on the GPU. It is
// independent of the kernels it judges: another precision (a float x float product
// is exact in double, so each add rounds once), no tiling, no shared memory, no split
// of k; and rows 0, M/2 and M-1, recomputed by a CPU loop, must match bit for bit.
__global__ void referenceGemmKernel(const float* A, const float* B, double* C, int M, int N,
                                    int K) {
  const long long count = static_cast<long long>(M) * N, step = 1LL * gridDim.x * blockDim.x;
  for (long long e = 1LL * blockIdx.x * blockDim.x + threadIdx.x; e < count; e += step) {
    const long long i = e / N, j = e % N;
    double acc = 0.0;
    for (long long k = 0; k < K; ++k) acc = fma(double(A[i * K + k]), double(B[k * N + j]), acc);
    C[e] = acc;
  }
}

void referenceRowCpu(const float* A, const float* B, double* row, int i, int N, int K) {
  for (int j = 0; j < N; ++j) row[j] = 0.0;
  for (long long k = 0; k < K; ++k)  // k outer reads B along rows; each sum still ascends in k
    for (long long j = 0; j < N; ++j) row[j] += double(A[1LL * i * K + k]) * double(B[k * N + j]);
}

void referenceGemm(const float* A, const float* B, double* C, int M, int N, int K) {
  const long long count = 1LL * M * N, a = 1LL * M * K, b = 1LL * K * N;
  if (count == 0) return;
  float *dA = nullptr, *dB = nullptr;  // device copies; dC: the result in double
  double* dC = nullptr;
  CUDA_CHECK(cudaMalloc(&dA, std::max(a, 1LL) * sizeof(float)));  // K = 0: 1 unread element
  CUDA_CHECK(cudaMalloc(&dB, std::max(b, 1LL) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dC, count * sizeof(double)));
  if (K > 0) CUDA_CHECK(cudaMemcpy(dA, A, a * sizeof(float), cudaMemcpyHostToDevice));
  if (K > 0) CUDA_CHECK(cudaMemcpy(dB, B, b * sizeof(float), cudaMemcpyHostToDevice));
  referenceGemmKernel<<<static_cast<int>(std::min((count + 255) / 256, 1LL << 16)), 256>>>(
      dA, dB, dC, M, N, K);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpy(C, dC, count * sizeof(double), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  std::vector<double> row(static_cast<size_t>(N));
  for (int i : {0, M / 2, M - 1}) {
    referenceRowCpu(A, B, row.data(), i, N, K);
    if (std::memcmp(row.data(), C + 1LL * i * N, N * sizeof(double)) != 0) {
      std::fprintf(stderr, "GATE: the GPU reference GEMM and its CPU loop differ in row %d\n", i);
      std::exit(EXIT_FAILURE);
    }
  }
}
// end common: reference_gemm
// common: ceilings
// Roofline ceilings, measured by this program. Bandwidth: a kernel copies one
// buffer into another, each 4 x the L2 (32 MiB to a quarter of free memory) so
// the L2 cannot hold them; bytes read + written / median time. FP32 peak: each
// thread runs kCeilingChains independent FMA chains on every SM; 2 FLOP/FMA.
// Each is gated against its bound from the attributes: DRAM 2 transfers per
// clock x memory clock x bus width / 8; FP32 SMs x lanes x 2 x clock. Lanes
// (no attribute) are the FP32 multiply-adds per clock per SM of the CUDA C++
// Programming Guide's arithmetic-instruction table: 64 on 7.x and 8.0, 128 on
// 8.6 to 12.x, else 0 and no gate (no guess). Cards may boost past nominal
// clocks: only a figure above kCeilingSlack x its bound fails (GATE, exit 1).
constexpr int kCeilingThreads = 256, kCeilingUnroll = 4, kCeilingChains = 8;
constexpr int kCeilingFmaIters = 8192;  // FMAs per chain
constexpr double kCeilingSlack = 1.25;

// launch assumption: gridDim.x * blockDim.x * kCeilingUnroll float4 in each buffer.
__global__ void ceilingCopyKernel(const float4* __restrict__ in, float4* __restrict__ out) {
  const long long base = 1LL * blockIdx.x * blockDim.x * kCeilingUnroll + threadIdx.x;
  float4 v[kCeilingUnroll];  // every load in flight before the first store
#pragma unroll
  for (int u = 0; u < kCeilingUnroll; ++u) v[u] = in[base + 1LL * u * blockDim.x];
#pragma unroll
  for (int u = 0; u < kCeilingUnroll; ++u) out[base + 1LL * u * blockDim.x] = v[u];
}

// mul and add are arguments, so the compiler cannot fold the chains away.
__global__ void ceilingFmaKernel(float* out, int iters, float mul, float add) {
  float acc[kCeilingChains], sum = 0.0f;  // constant trip counts: unrolled into registers
  for (int c = 0; c < kCeilingChains; ++c) acc[c] = static_cast<float>(threadIdx.x + c);
#pragma unroll 16
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int c = 0; c < kCeilingChains; ++c) acc[c] = fmaf(acc[c], mul, add);
  for (int c = 0; c < kCeilingChains; ++c) sum += acc[c];
  out[1LL * blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

int ceilingAttribute(cudaDeviceAttr attr) {  // 0 where the driver cannot say (error cleared)
  int v = 0;
  return cudaDeviceGetAttribute(&v, attr, 0) == cudaSuccess ? v : ((void)cudaGetLastError(), 0);
}

void ceilingGate(const char* what, double measured, double bound, const char* unit) {
  if (bound <= 0.0 || measured <= kCeilingSlack * bound) return;
  std::fprintf(stderr, "GATE: measured %s %.1f %s is above %.2f x the %.1f %s that the device's "
               "attributes allow: a broken measurement\n", what, measured, unit, kCeilingSlack,
               bound, unit);
  std::exit(EXIT_FAILURE);
}

Ceilings measureCeilings() {
  Ceilings c{};
  const int sms = ceilingAttribute(cudaDevAttrMultiProcessorCount);
  const int l2 = ceilingAttribute(cudaDevAttrL2CacheSize);
  const size_t chunk = size_t(kCeilingThreads) * kCeilingUnroll * sizeof(float4);
  size_t freeBytes = 0, totalBytes = 0, big = std::max(size_t(4) * l2, size_t(32) << 20);
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  const size_t bytes = std::min(big, freeBytes / 4) / chunk * chunk;
  float4 *in = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, bytes));
  CUDA_CHECK(cudaMalloc(&out, bytes));
  CUDA_CHECK(cudaMemset(in, 0, bytes));  // the copy reads initialised memory
  const TimingStats copy = timeKernel(
      [&] { ceilingCopyKernel<<<unsigned(bytes / chunk), kCeilingThreads>>>(in, out); }, 2,
      kCeilingSamples);
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
  c.copy_bytes = double(bytes), c.l2_bytes = double(l2);
  c.copy_gbs = 2.0 * c.copy_bytes / (copy.median_ms * 1e-3) / 1e9;
  const int perSm = std::max(1, ceilingAttribute(cudaDevAttrMaxThreadsPerMultiProcessor) /
                                    kCeilingThreads);
  const int blocks = sms * perSm;
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&sink, size_t(blocks) * kCeilingThreads * sizeof(float)));
  const TimingStats fma = timeKernel([&] {
    ceilingFmaKernel<<<blocks, kCeilingThreads>>>(sink, kCeilingFmaIters, 0.999f, 0.001f);
  }, 2, kCeilingSamples);
  CUDA_CHECK(cudaFree(sink));
  const double flop = 2.0 * kCeilingChains * kCeilingFmaIters * blocks * kCeilingThreads;
  c.fp32_gflops = flop / (fma.median_ms * 1e-3) / 1e9;

  const int memMhz = ceilingAttribute(cudaDevAttrMemoryClockRate) / 1000;
  const int bus = ceilingAttribute(cudaDevAttrGlobalMemoryBusWidth);
  const int major = ceilingAttribute(cudaDevAttrComputeCapabilityMajor);
  const int minor = ceilingAttribute(cudaDevAttrComputeCapabilityMinor);
  const int lanes = (major == 7 || (major == 8 && minor == 0)) ? 64
                    : (major >= 8 && major <= 12)               ? 128 : 0;
  const int mhz = ceilingAttribute(cudaDevAttrClockRate) / 1000;
  c.dram_bound_gbs = 2.0 * memMhz * bus / 8 / 1e3;
  c.fp32_bound_gflops = 2.0 * sms * lanes * mhz / 1e3;
  std::snprintf(c.bounds, sizeof c.bounds, "DRAM 2 x %d MHz x %d-bit / 8 = %.1f GB/s, FP32 %d "
                "SMs x %d lanes (cc %d.%d) x 2 x %d MHz = %.1f GFLOP/s (0: unknown, not gated)",
                memMhz, bus, c.dram_bound_gbs, sms, lanes, major, minor, mhz, c.fp32_bound_gflops);
  ceilingGate("bandwidth", c.copy_gbs, c.dram_bound_gbs, "GB/s");
  ceilingGate("FP32 peak", c.fp32_gflops, c.fp32_bound_gflops, "GFLOP/s");
  return c;
}

void printCeilings(const Ceilings& c, std::FILE* out) {
  std::fprintf(out, "Ceilings measured by this program (median of %d launches each): bandwidth "
               "%.1f GB/s (copy kernel), FP32 peak %.1f GFLOP/s (FMA kernel)\n",
               kCeilingSamples, c.copy_gbs, c.fp32_gflops);
  std::fprintf(out, "[device] bounds from attributes (a measurement above %.2f x its bound "
               "fails): %s\n", kCeilingSlack, c.bounds);
}

double rooflineGflops(const Ceilings& c, double ai) {
  return std::min(c.fp32_gflops, ai * c.copy_gbs);
}
// end common: ceilings
// common: smem_roof
// Shared-memory roof. Shared memory has 32 banks, each delivering 32 bits per clock
// (CUDA C++ Programming Guide, shared memory of compute capability 5.x and up). Our
// model: one conflict-free warp request per clock per SM, at most 128 bytes per clock,
// counted as delivered to threads (a word a whole warp reads as one broadcast counts
// 32 x 4 bytes, as do the 32 FMAs it feeds).
// Bound: SMs x 32 x 4 bytes x SM clock. Measured: a full device of threads, each
// warp taking 32 consecutive float4 per load (each quarter warp one 128-byte row
// of the banks: no bank conflict) into 4 sums; bytes delivered / median time,
// gated against the bound like the other ceilings. The slot read depends on a
// run-time stride, so the compiler can neither fold a load nor reuse one.
constexpr int kSmemThreads = 256, kSmemUnroll = 8;
constexpr int kSmemSlots = 512;  // float4 slots, 8 KiB per block; a power of 2
// 16 KiB read per thread, about 0.14 ms a launch on an H200: long enough for the events, short
// because the sanitizer runs instrument every one of its shared-memory loads.
constexpr int kSmemSteps = 128;
static_assert((kSmemSlots & (kSmemSlots - 1)) == 0 && kSmemSlots % (32 * kSmemUnroll) == 0,
              "a step's 32-slot windows never wrap around the buffer");

// launch assumption: stride is a multiple of 32 (every window starts on a row of banks).
__global__ void ceilingSmemKernel(float* out, int steps, int stride) {
  __shared__ float4 slots[kSmemSlots];
  for (int i = threadIdx.x; i < kSmemSlots; i += blockDim.x)
    slots[i] = make_float4(float(i), float(i + 1), float(i + 2), float(i + 3));
  __syncthreads();  // every slot written before any is read; none is written after
  const unsigned lane = threadIdx.x % 32;
  float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int s = 0; s < steps; ++s)
#pragma unroll
    for (int u = 0; u < kSmemUnroll; ++u) {
      const float4 v = slots[(unsigned(s) * stride + u * 32 + lane) % kSmemSlots];
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
  out[1LL * blockIdx.x * blockDim.x + threadIdx.x] = sum.x + sum.y + sum.z + sum.w;
}

SmemRoof measureSmemRoof() {
  SmemRoof r{};
  const int sms = ceilingAttribute(cudaDevAttrMultiProcessorCount);
  const int mhz = ceilingAttribute(cudaDevAttrClockRate) / 1000;
  const int blocks = sms * std::max(1, ceilingAttribute(cudaDevAttrMaxThreadsPerMultiProcessor) /
                                           kSmemThreads);
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&sink, size_t(blocks) * kSmemThreads * sizeof(float)));
  const TimingStats t = timeKernel([&] {
    ceilingSmemKernel<<<blocks, kSmemThreads>>>(sink, kSmemSteps, 32 * kSmemUnroll);
  }, 2, kCeilingSamples);
  CUDA_CHECK(cudaFree(sink));
  const double bytes = double(blocks) * kSmemThreads * kSmemSteps * kSmemUnroll * sizeof(float4);
  r.measured_gbs = bytes / (t.median_ms * 1e-3) / 1e9;
  r.bound_gbs = double(sms) * 32 * 4 * mhz / 1e3;
  std::snprintf(r.bound, sizeof r.bound, "%d SMs x 32 banks x 4 bytes x %d MHz = %.1f GB/s", sms,
                mhz, r.bound_gbs);
  ceilingGate("shared-memory bandwidth", r.measured_gbs, r.bound_gbs, "GB/s");
  return r;
}

void printSmemRoof(const SmemRoof& s, std::FILE* out) {
  std::fprintf(out, "Shared-memory ceiling measured by this program (median of %d launches): "
               "%.1f GB/s delivered to threads (shared-load kernel)\n", kCeilingSamples,
               s.measured_gbs);
  std::fprintf(out, "[device] shared-memory bound from attributes (a measurement above %.2f x it "
               "fails): %s\n", kCeilingSlack, s.bound);
}

double smemRoofGflops(double gbs, double loadsPerFma) {
  return loadsPerFma > 0.0 ? gbs * 2.0 / (4.0 * loadsPerFma) : HUGE_VAL;
}

Roof bindingRoof(const Ceilings& c, const SmemRoof& s, double ai, double loadsPerFma) {
  Roof low{"unknown", 0.0};
  bool known = false;
  const auto consider = [&](const char* name, double bound, double gflops) {
    if (bound > 0.0 && (!known || gflops < low.gflops)) low = Roof{name, gflops}, known = true;
  };
  consider("FP32", c.fp32_bound_gflops, c.fp32_bound_gflops);
  consider("DRAM", c.dram_bound_gbs, ai * c.dram_bound_gbs);
  if (loadsPerFma > 0.0)
    consider("shared memory", s.bound_gbs, smemRoofGflops(s.bound_gbs, loadsPerFma));
  return low;
}
// end common: smem_roof
// common: gemm_check
// The course's correctness rule for a GEMM, one copy in every lesson that checks one.
// What lessons choose (parameters): the seed and the value mapping of the inputs (scale * u +
// offset: 2u - 1 in [-1, 1) or u - 0.5 in [-0.5, 0.5), both exact in float, so every lesson's
// inputs and reference are the same on every machine); which elements are checked (all, or
// sampled rows where a full reference costs too much memory); a tolerance given on the command
// line in place of the K-scaled default. What they do not choose: the rule itself. Lessons that
// compare precisions (FP16 storage, INT8 codes) draw their own inputs and judge with their own
// error metrics and bounds, and take from here what they use of the rest.
float Lcg::next() {
  s = 1664525u * s + 1013904223u;
  return static_cast<float>(s >> 8) / 16777216.0f;  // 24 bits: exact in float
}
void Lcg::fill(std::vector<float>& x, float scale, float offset) {
  for (float& v : x) v = scale * next() + offset;  // scale 1 or 2: the product is exact
}

// The K-scaled tolerance. The rounding errors of K float additions add like a random walk,
// so they grow like sqrt(K) units of 2^-23; 4 of them are headroom over that typical size
// (not a worst-case bound for every order), and 1e-5 is the floor. atol = rtol x max|ref|
// judges elements near zero (where a relative error says nothing) on the scale of the whole
// matrix.
double rtolForK(long long K) {
  return std::max(1e-5, std::ldexp(4.0, -23) * std::sqrt(static_cast<double>(K)));
}
Tolerance gemmTolerance(long long K, double refMax, double rtol, double atol) {
  const double r = rtol >= 0.0 ? rtol : rtolForK(K);
  return Tolerance{r, atol >= 0.0 ? atol : r * refMax};
}
double maxAbs(const double* x, long long count) {
  double m = 0.0;
  for (long long i = 0; i < count; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

// An element fails when !(d <= t), d = |got - ref|, t = atol + rtol*|ref|: a NaN or an
// infinity fails (a poisoned element never written is a NaN). The score d / t says how close
// to the tolerance an element came (1 = at the limit); unlike d / |ref| it stays meaningful
// where ref is near zero. t = 0 (both tolerances 0): exact (score 0) or not (infinity).
void GemmCheck::add(long long index, double got, double ref, const Tolerance& tol) {
  const double d = std::fabs(got - ref), t = tol.atol + tol.rtol * std::fabs(ref);
  const double score = t > 0.0 ? d / t : d == 0.0 ? 0.0 : HUGE_VAL;
  if (!(d <= t) && failures++ == 0)
    first_bad = index, first_got = got, first_ref = ref, first_tol = t;
  if (checked++ == 0 || (!std::isnan(worst_score) && (std::isnan(score) || score > worst_score)))
    worst = index, worst_score = score, worst_got = got, worst_ref = ref, worst_diff = d,
    worst_tol = t;
  if (!std::isnan(max_abs_err) && (std::isnan(d) || d > max_abs_err)) max_abs_err = d;
}
std::string GemmCheck::describe(const char* what, long long cols) const {
  char buf[300];
  std::snprintf(buf, sizeof buf, "%s: %lld of %lld elements outside the tolerance, the first "
                "at (%lld, %lld): got %.9g, ref %.9g", what, failures, checked, first_bad / cols,
                first_bad % cols, first_got, first_ref);
  return buf;
}
GemmCheck checkElements(const float* got, const double* ref, long long count,
                        const Tolerance& tol) {
  GemmCheck c;
  for (long long i = 0; i < count; ++i) c.add(i, got[i], ref[i], tol);
  return c;
}

// Poison, check, time. The poison makes an element the kernel never writes a NaN, so it fails
// whatever an earlier launch left. The copy back waits for the launch and reports its errors.
// A result that fails is never timed; one that passes is timed by the lessons' timer, and C
// is then compared with the checked bits, 1 MiB at a time (no second host copy of C).
template <typename Launch, typename Judge>
CheckedTiming checkThenTime(Launch launch, float* dC, std::vector<float>& got, Judge judge,
                            int warmups, int samples) {
  CheckedTiming r;
  const size_t bytes = got.size() * sizeof(float);
  CUDA_CHECK(cudaMemset(dC, kPoisonByte, bytes));
  launch();
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpy(got.data(), dC, bytes, cudaMemcpyDeviceToHost));
  if (!(r.passed = judge(static_cast<const std::vector<float>&>(got)))) return r;
  r.t = timeKernel(launch, warmups, samples);
  std::vector<float> part(std::min(got.size(), size_t(1) << 18));
  r.reproduced = true;
  for (size_t first = 0; first < got.size() && r.reproduced; first += part.size()) {
    const size_t n = std::min(part.size(), got.size() - first);
    CUDA_CHECK(cudaMemcpy(part.data(), dC + first, n * sizeof(float), cudaMemcpyDeviceToHost));
    r.reproduced = std::memcmp(part.data(), got.data() + first, n * sizeof(float)) == 0;
  }
  return r;
}

template <typename T>
std::vector<T> hostVector(long long count, const char* what) {
  try {
    return std::vector<T>(static_cast<size_t>(count));
  } catch (const std::exception&) {  // std::bad_alloc, or a size past max_size()
    std::fprintf(stderr, "host allocation failed: %s, %lld bytes\n", what,
                 count * static_cast<long long>(sizeof(T)));
    std::exit(EXIT_FAILURE);
  }
}
// end common: gemm_check
