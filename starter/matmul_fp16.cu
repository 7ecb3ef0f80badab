// SPDX-License-Identifier: MIT
// Day 71 - matmul_fp16: storage precision vs accumulator precision.
//
// Day 16's 16x16 tiled matmul runs three ways on the same inputs: all FP32;
// FP16 storage with an FP32 accumulator; FP16 storage with an FP16
// accumulator. Each result is judged against a double reference built from
// the unrounded FP32 inputs, with Day 66's K-scaled tolerance, so the half
// paths pay for the rounding of their stored inputs. Storage rounding costs a
// small error, of the same order (1e-3) at every K here; a half accumulator's
// error grows with K. No tensor cores: those arrive on Day 72 (one [device]
// line says which formats this card's tensor cores could take).
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o matmul_fp16 matmul_fp16.cu
// Run:   ./matmul_fp16
// Sanitize: ./matmul_fp16 --cases 1
//
// Check your exercise on a GPU: python3 scripts/suite.py exercise check matmul_fp16
// (builds exercises/matmul_fp16.cu and judges every recorded run). Without a GPU:
// python3 scripts/suite.py ce-link exercises/matmul_fp16.cu opens it in Compiler Explorer;
// save the whole executor pane to FILE, then python3 scripts/suite.py exercise check
// matmul_fp16 --pane FILE (the lesson records one run, with no arguments, so one pane
// judges it).
//
// The build line targets the T4 that Compiler Explorer runs; it also embeds
// compute_75 PTX, which the driver compiles for any newer card (on an H200 that
// prints the same digits as an sm_90 build). On your own card, -arch=native.
// Exit status: 0 every gate held; 1 a gate or a CUDA call failed; 2 a bad
// command line; 77 no usable CUDA device.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <cuda_runtime.h>

// =============================================================================
// The tile
// =============================================================================
constexpr int kTile = 16;
constexpr int kThreadsPerBlock = kTile * kTile;
static_assert(kThreadsPerBlock == 256,
              "one thread per element of a 16x16 tile: 256 threads, 8 warps");
static_assert(2 * kTile * kTile * sizeof(float) <= 48 * 1024,
              "two FP32 tiles (2 KiB) must fit the 48 KiB of static shared "
              "memory that every CUDA device gives one block");

// =============================================================================
// The three kernels
// =============================================================================
// All three (the lesson's) share Day 16's tiling. For each of the ceil(K/16) k-tiles, every
// thread stages A[row][t*16 + tx] and B[t*16 + ty][col] into 16x16 shared
// tiles (zero when outside the matrix), a barrier, 16 accumulation steps in
// ascending p, a barrier. Guards wrap only loads and stores, so every thread
// reaches every barrier. threadIdx.x indexes the column.
//
// launch assumption (all three): blockDim = (16, 16, 1) and
// grid = (ceil(N/16), ceil(M/16)); launchMatmul() is the only launch path, and
// requireTileBlock() traps on any other block shape (a trap survives -DNDEBUG,
// an assert would not), which CUDA_CHECK then reports.

__device__ void requireTileBlock() {
  if (blockDim.x != kTile || blockDim.y != kTile || blockDim.z != 1) __trap();
}

// FP32 tiles and an FP32 accumulator: Day 16's kernel, the baseline.
// memory: per k-tile a block reads one 16x16 tile of A and one of B (1 KiB
// each); a half-warp reads a 64-byte row segment of B; shared memory 2 KiB.
// nvcc contracts acc += a * b into one fmaf: each step rounds once.
__global__ void matmulTiledF32(const float* A, const float* B, float* C, int M,
                               int N, int K) {
  requireTileBlock();
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  float acc = 0.0f;
  for (int t = 0; t < (K + kTile - 1) / kTile; ++t) {
    const int ak = t * kTile + tx, bk = t * kTile + ty;
    As[ty][tx] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
    Bs[ty][tx] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
    __syncthreads();
    for (int p = 0; p < kTile; ++p) acc += As[ty][p] * Bs[p][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

// The lesson's kernel changes one thing from matmulTiledF32: the inputs are stored as half;
// each element is widened to float and summed in a float accumulator. A
// half x half product is exact in float (11 + 11 significand bits <= 24), so
// the only new error is the rounding of the stored inputs.
// memory (the lesson's kernel): the same tiles at half the bytes: a half-warp reads a
// 32-byte row segment of B instead of 64, and the two tiles take 1 KiB of shared memory.
// The widening costs instructions: in the lesson's PTX, 32 half-to-float
// conversions for 16 FMAs (check ptx-facts holds the counts).
__global__ void matmulF16StoreF32Acc(const __half* A, const __half* B, float* C,
                                     int M, int N, int K) {
  requireTileBlock();
  // snippet: half-kernel
  // exercise: f16-store-f32-acc
  // TODO: matmulTiledF32's job on the half inputs, in the same 16x16 tiles
  // and the same order of k, with a float running sum. Decide where each
  // half becomes a float, and make sure no step rounds more often than
  // matmulTiledF32's does.
  // Done when the run (./matmul_fp16, the only recorded run) prints no GATE
  // line naming this kernel: its FP16 gate, the tight check and the exact
  // check hold in all four cases, from 100x100x100 (it reaches every guard)
  // up to 2048x2048x2048.
  // end exercise
  // end snippet
}

// The lesson's kernel changes one thing from matmulF16StoreF32Acc: the accumulator is a half,
// updated by a fused half multiply-add that rounds the running sum to 11
// significant bits at every one of the K steps; it becomes a float only when
// written out. The lesson's is a measured counterexample, not a pattern to copy: no snippet
// quotes it.
// Why its error grows with K: half values between 8 and 16 lie 2^-7 = 0.0078
// apart. Once the running sum is that large, each new term (a product of at
// most 0.47, most of them far smaller) lands between two representable sums
// and is rounded to one of them; the longer the dot product, the larger the
// running sum, the coarser that grid, and the more such roundings pile up.
// memory: identical to matmulF16StoreF32Acc, so any difference in error
// between the two belongs to the accumulator.
__global__ void matmulF16StoreF16Acc(const __half* A, const __half* B, float* C,
                                     int M, int N, int K) {
  requireTileBlock();
  // exercise: f16-store-f16-acc
  // TODO: the same half tiles, but the running sum itself is a half, k
  // ascending, written out as a float at the end. Each step must round
  // exactly once: a*b + sum computed exactly, then rounded to half. Find the
  // cuda_fp16.h operation that does that for certain (a separate multiply and
  // add round twice unless the compiler fuses them, which nothing promises).
  // Done when the run (./matmul_fp16, the only recorded run) prints
  // no GATE line naming this kernel: the exact check holds it to that
  // arithmetic, bit for bit. Then compare its max abs err with the float
  // accumulator's as K grows.
  // end exercise
}

enum KernelId { kF32 = 0, kF16F32 = 1, kF16F16 = 2, kNumKernels = 3 };
constexpr const char* kKernelNames[kNumKernels] = {
    "matmulTiledF32", "matmulF16StoreF32Acc", "matmulF16StoreF16Acc"};

struct DeviceBuffers {
  float* a = nullptr;  // FP32 inputs
  float* b = nullptr;
  __half* ah = nullptr;  // the same inputs rounded to half on the host
  __half* bh = nullptr;
  float* out[kNumKernels] = {};  // one output per kernel, all kept to the end
};

// The only launch path (see "launch assumption" above). Square cases.
void launchMatmul(int kernel, const DeviceBuffers& d, int n) {
  const dim3 block(kTile, kTile);
  const dim3 grid((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
  if (kernel == kF32) {
    matmulTiledF32<<<grid, block>>>(d.a, d.b, d.out[kF32], n, n, n);
  } else if (kernel == kF16F32) {
    matmulF16StoreF32Acc<<<grid, block>>>(d.ah, d.bh, d.out[kF16F32], n, n, n);
  } else {
    matmulF16StoreF16Acc<<<grid, block>>>(d.ah, d.bh, d.out[kF16F16], n, n, n);
  }
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
// common: reference_gemm_decl
// The reference every GEMM here is checked against (the reference_gemm block
// at the end of the file): C = A * B in double, row-major host arrays.
void referenceGemm(const float* A, const float* B, double* C, int M, int N, int K);
// Row i of the same, computed by a CPU loop; it needs no GPU.
void referenceRowCpu(const float* A, const float* B, double* row, int i, int N, int K);
// end common: reference_gemm_decl
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
// Constants of the experiment: cases, inputs, tolerances, timing
// =============================================================================
// Square cases M = N = K, in one allocation per buffer sized for the largest.
constexpr int kNumCases = 4;
constexpr int kCases[kNumCases] = {100, 256, 1024, 2048};
constexpr int kMaxN = 2048;
static_assert(kCases[0] < kCases[1] && kCases[1] < kCases[2] && kCases[2] < kCases[3] &&
                  kCases[kNumCases - 1] == kMaxN,
              "cases ascend and the last is the largest: buffers are "
              "allocated once, for kMaxN");
static_assert(kCases[0] % kTile != 0,
              "the first case is not whole tiles, so every guard of the kernels "
              "is reached: a k guard that admits one element too many reads the "
              "NaN past an input's end, a store guard that does writes past the "
              "output's end, and either fails a gate");
static_assert(static_cast<long long>(kMaxN) * kMaxN <= 2147483647LL,
              "the kernels index with int: kMaxN^2 must fit in 31 bits");

// Inputs (see inputA, inputB): A[e] = ((e mod 97) - 48) * 0.013f,
//                          B[e] = ((e mod 89) - 44) * 0.017f.
constexpr int kPeriodA = 97, kOffsetA = 48;
constexpr int kPeriodB = 89, kOffsetB = 44;
constexpr float kStepA = 0.013f, kStepB = 0.017f;
constexpr bool dividesNoCase(int period) {
  for (int n : kCases)
    if (n % period == 0) return false;
  return true;
}
static_assert(dividesNoCase(kPeriodA) && dividesNoCase(kPeriodB),
              "neither input period divides a case size, so consecutive rows "
              "do not repeat the same values");
static_assert(static_cast<double>(kMaxN) * (kOffsetA * 0.013) *
                      (kOffsetB * 0.017) < 65504.0,
              "no partial sum can overflow a half accumulator: at most "
              "K * max|a| * max|b| = 956 at K = 2048, below half's 65504");

// Tolerance table: the floor of each rule, and the mantissa width p that sets
// eps = 2^-p (see scaledRtol). Every gate line prints its rule from these
// constants and the atol and rtol it applies, so a changed tolerance changes
// the output.
constexpr double kRtolTableF32 = 1e-5;
constexpr int kMantissaF32 = 23;
constexpr double kRtolTableF16 = 1e-2;
constexpr int kMantissaF16 = 10;

// Timing: kWarmups launches of the kernel being timed, then kTimedRuns timed
// launches; the median and the spread (min, max) are printed.
constexpr int kWarmups = 3;
constexpr int kTimedRuns = 20;
// What one run does: every case, timed as above; --cases N (see main): the first N cases,
// each kernel timed by one launch after no warm-up.
struct RunPlan {
  int cases = kNumCases, warmups = kWarmups, timedRuns = kTimedRuns;
};

// Every device buffer is filled with 0xFF bytes (kPoisonByte, gemm_check
// block) before a case: as a float or a
// half that is a NaN. In an output, an element a kernel never writes fails the
// gate (a zero could pass where the reference is near 0); past the end of an
// input, a kernel that reads one element too far gets a NaN and fails too.
constexpr std::uint32_t kPoisonBits = 0xFFFFFFFFu;

// Host staging for uploads and downloads, in chunks of this many elements
// (1 MiB of floats), so that host memory stays near what the reference needs
// (see HostBuffers): the suite holds every lesson's default run to 200 MiB of peak
// host memory, the CUDA runtime's own included (verify records each run's peak).
constexpr long long kChunkElems = 1 << 18;

// =============================================================================
// Inputs
// =============================================================================
// Flat row-major index e < n*n: an int, cast to float, times a float constant.
// Why not Day 66's half-integers (A and B both filled as Day 66 fills x,
// (e mod 97) * 0.5): they are exact in half, so storing them costs nothing,
// and every float sum of their products is exact here too, so both float-
// accumulator kernels would print an error of 0. The half accumulator would
// fail for another reason: with products of up to 2304, its sums pass 2048,
// where half's spacing is 2, and round, and already at K = 100 some pass
// 65504, half's largest finite value (the largest is 69,024.5): infinity.
// Neither shows the rounding this lesson measures. Steps of 0.013 and 0.017
// are not representable, so storing them as half really costs something;
// magnitudes below 1 keep every partial sum far from 65504.
//
// Why periodic inputs stay, although periods 97 and 89 make the rounding
// errors along a dot product periodic rather than independent: they define
// this lesson's recorded digits, and the gates do not depend on the
// random-walk model. The sqrt(K) rule is a tolerance, not a prediction; where
// correlated errors grow faster than sqrt(K), the gate fraction shows how much
// of the bound is used, and the error-growth claim rests on the printed ratio
// of the two half kernels, not on a sqrt(K) law.
float inputA(long long e) {
  return static_cast<float>(static_cast<int>(e % kPeriodA) - kOffsetA) * kStepA;
}
float inputB(long long e) {
  return static_cast<float>(static_cast<int>(e % kPeriodB) - kOffsetB) * kStepB;
}

// The value a float has once stored as half (round to nearest even).
float halfRounded(float x) { return __half2float(__float2half(x)); }

// Uploads x[0, count) twice, as float and as half (the host's float->half
// routine, round to nearest even); the rest of both buffers stays poison.
void uploadInput(const std::vector<float>& x, long long count, float* dF32, __half* dF16,
                 std::vector<__half>& staging) {
  CUDA_CHECK(cudaMemcpy(dF32, x.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  for (long long first = 0; first < count; first += kChunkElems) {
    const long long c = std::min(kChunkElems, count - first);
    for (long long i = 0; i < c; ++i) staging[i] = __float2half(x[first + i]);
    CUDA_CHECK(cudaMemcpy(dF16 + first, staging.data(), c * sizeof(__half),
                          cudaMemcpyHostToDevice));
  }
}

// =============================================================================
// Gates
// =============================================================================
// snippet: tolerance
// Day 66's K-scaled rule for any mantissa width p (eps = 2^-p): the rounding
// errors of K additions add like a random walk, hence sqrt(K); the factor 4
// (kSlack) is headroom over that typical size, not a worst-case bound; the table entry is
// the floor.
// With Day 66's exact inputs, rtol 0 would have given the same verdicts; here, with real
// rounding error (p = 10 for the half paths), it does.
constexpr double kSlack = 4.0;
double scaledRtol(double tableRtol, int mantissaBits, long long K) {
  const double eps = std::ldexp(1.0, -mantissaBits);
  return std::max(tableRtol, kSlack * eps * std::sqrt(static_cast<double>(K)));
}
// end snippet

// The rule as the gate lines print it, from the constants scaledRtol uses:
// "rtol = max(1e-05, 4*2^-23*sqrt(K)), atol = rtol*max|ref|".
std::string ruleText(double tableRtol, int mantissaBits) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "rtol = max(%g, %g*2^-%d*sqrt(K)), atol = rtol*max|ref|",
                tableRtol, kSlack, mantissaBits);
  return buf;
}

// A gate for one case: element e passes when |got - ref| <= atol + rtol*|ref|,
// with atol = rtol * max|ref| (an absolute floor for elements near zero). The
// FP32 rule is the course's (gemmTolerance, gemm_check block); FP16 swaps in
// its own floor and mantissa width.
Tolerance makeTolerance(double tableRtol, int mantissaBits, long long K, double refMax) {
  const double rtol = scaledRtol(tableRtol, mantissaBits, K);
  return Tolerance{rtol, rtol * refMax};
}

// What one output did against one gate: the course's element check
// (GemmCheck, gemm_check block). Its score, |err| / bound, is the gate
// fraction, so a value above 1 fails; NaN and infinity fail because the test
// is !(err <= bound), which is true for a NaN. Beside it, this lesson's own
// poison census: how many elements still hold the poison, and the first
// element written past the output's end.
struct GateResult {
  GemmCheck check;
  long long poisoned = 0;  // elements still holding the poison pattern
  long long beyond = -1;   // the first element written past the output (-1: none)
  float beyondGot = 0.0f;
  bool failed() const { return check.failures > 0 || beyond >= 0; }
};

// The gate fraction of the first failing element (NaN for a NaN output).
double failFraction(const GateResult& g) {
  const double err = std::fabs(g.check.first_got - g.check.first_ref);
  return g.check.first_tol > 0.0 ? err / g.check.first_tol : HUGE_VAL;
}

bool isPoison(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits == kPoisonBits;
}

// Checks got[0, count) against ref[0, count), elements first .. first+count-1
// of the output; call once per chunk, in order.
void gateChunk(GateResult& g, const float* got, const double* ref, long long first,
               long long count, const Tolerance& tol) {
  for (long long i = 0; i < count; ++i) {
    if (isPoison(got[i])) ++g.poisoned;
    g.check.add(first + i, got[i], ref[i], tol);
  }
}

// Downloads a device output and gates it. The output's first rows past the
// case, still poison if the kernel kept to its M x N, are part of the check:
// an element written there fails as an element out of bounds.
GateResult gateDeviceOutput(const float* dOut, const double* ref, int n, const Tolerance& tol,
                            std::vector<float>& staging) {
  const long long count = 1LL * n * n;
  GateResult g;
  for (long long first = 0; first < count; first += kChunkElems) {
    const long long c = std::min(kChunkElems, count - first);
    CUDA_CHECK(cudaMemcpy(staging.data(), dOut + first, c * sizeof(float),
                          cudaMemcpyDeviceToHost));
    gateChunk(g, staging.data(), ref + first, first, c, tol);
  }
  const long long beyond =
      std::min({1LL * kMaxN * kMaxN - count, 1LL * (kTile + 1) * n, kChunkElems});
  CUDA_CHECK(cudaMemcpy(staging.data(), dOut + count, beyond * sizeof(float),
                        cudaMemcpyDeviceToHost));
  for (long long i = 0; i < beyond && !g.failed(); ++i) {
    if (isPoison(staging[i])) continue;
    g.beyond = count + i;
    g.beyondGot = staging[i];
  }
  return g;
}

// One stderr line with everything needed to judge a failure.
void printGateFailure(const char* kernel, const char* gate, int n, const GateResult& g) {
  if (g.poisoned == g.check.checked) {
    std::fprintf(stderr, "GATE: %s wrote no element of its %dx%d output in case %dx%dx%d: "
                 "every one still holds the poison (is its body still to be written?)\n",
                 kernel, n, n, n, n, n);
    return;
  }
  if (g.beyond >= 0) {
    std::fprintf(stderr, "GATE: %s wrote past the end of its %dx%d output in case %dx%dx%d "
                 "(element %lld holds %.9g): a store guard admits too much\n",
                 kernel, n, n, n, n, n, g.beyond, static_cast<double>(g.beyondGot));
    return;
  }
  const GemmCheck& c = g.check;
  std::fprintf(stderr,
               "GATE: %s failed the %s gate in case %dx%dx%d at index %lld "
               "(row %lld, col %lld): got %.9g, ref %.9g, |err| %.3e > bound "
               "%.3e (fraction %.4f of the bound)\n",
               kernel, gate, n, n, n, c.first_bad, c.first_bad / n, c.first_bad % n,
               std::isnan(c.first_got) ? std::nan("") : c.first_got,  // "nan", not "-nan"
               c.first_ref, std::fabs(c.first_got - c.first_ref), c.first_tol,
               failFraction(g));
}

// The exact check. Both half kernels are fully determined by their arithmetic:
// the same half inputs, k ascending, and one rounding per step (a float add of
// an exact product; a fused half multiply-add). A host loop that does the same
// must give the same bits. Rows 0, n/2 and n-1 are recomputed; a kernel with
// another order, an extra rounding or an index error that touches them differs there.
struct ExactCheck {
  bool failed = false;
  int kernel = 0, row = 0, col = 0;
  float got = 0.0f, want = 0.0f;
};

// Row i of both half kernels on the host, from the half-rounded inputs.
void emulateHalfKernelsRow(const float* Ah, const float* Bh, int n, int i, float* f32Acc,
                           float* f16Acc) {
  for (int j = 0; j < n; ++j) {
    float wide = 0.0f;
    __half narrow = __float2half(0.0f);
    for (int k = 0; k < n; ++k) {
      const float a = Ah[1LL * i * n + k], b = Bh[1LL * k * n + j];
      wide += a * b;  // a * b is exact in float: one rounding, the add
      // a * b + acc is exact in double here (under 45 significant bits), so
      // __double2half rounds it once, as one fused half multiply-add does.
      narrow = __double2half(static_cast<double>(a) * b + __half2float(narrow));
    }
    f32Acc[j] = wide;
    f16Acc[j] = __half2float(narrow);
  }
}

ExactCheck exactCheck(const DeviceBuffers& d, const float* Ah, const float* Bh, int n) {
  std::vector<float> got(n), want[kNumKernels];
  for (std::vector<float>& w : want) w.resize(n);
  ExactCheck x;
  for (int i : {0, n / 2, n - 1}) {
    emulateHalfKernelsRow(Ah, Bh, n, i, want[kF16F32].data(), want[kF16F16].data());
    for (int k : {kF16F32, kF16F16}) {
      CUDA_CHECK(cudaMemcpy(got.data(), d.out[k] + 1LL * i * n, n * sizeof(float),
                            cudaMemcpyDeviceToHost));
      for (int j = 0; j < n && !x.failed; ++j) {
        if (std::memcmp(&got[j], &want[k][j], sizeof(float)) == 0) continue;
        x = ExactCheck{true, k, i, j, got[j], want[k][j]};
      }
      if (x.failed) return x;
    }
  }
  return x;
}

// =============================================================================
// Reports: the device, the formats, the conversions
// =============================================================================
// Bytes a case touches: A, B and C as float, or A and B as half and C as float.
double footprintBytes(int n, bool half) { return 1.0 * n * n * (half ? 2 + 2 + 4 : 4 + 4 + 4); }

// snippet: format-report
// What this card's tensor cores could take, keyed on 10*major + minor: for
// each format, the lowest compute capability from the course's 7.5 up whose
// mma instructions accept it (FP16 mma itself dates from 7.0, Volta). The
// kernels above use none of it (Day 72 starts on tensor cores).
struct FormatFloor {
  const char* label;
  int floor;
};
constexpr FormatFloor kFormatFloors[] = {
    {"FP16", 75},
    {"BF16", 80},
    {"TF32", 80},
    {"FP8", 89},
};

// FP4 is not a plain floor; this file's sm_75 build never uses FP4.
std::string fp4Support(int major) {
  if (major >= 10 && major <= 12) return "yes (not from an sm_75 build)";
  return major < 10 ? "no" : "unknown to this program";
}

// One [device] line: what the card could take, not what this program uses.
void printFormatSupport(int major, int minor) {
  std::printf("[device] tensor-core formats at compute capability %d.%d (these kernels use "
              "none):", major, minor);
  for (const FormatFloor& f : kFormatFloors)
    std::printf(" %s %s,", f.label, 10 * major + minor >= f.floor ? "yes" : "no");
  std::printf(" FP4 %s\n", fp4Support(major).c_str());
}
// end snippet

// The other [device] line. How many cases' f32 footprint fits in L2, a
// comparison of sizes, not a measurement: on the recording's H200 (60 MiB) all
// four. Data that fits can stay resident in L2 between the timed repeats, so
// those timings need not show DRAM bandwidth; nothing here measures what stays
// resident.
void printDeviceFacts(const cudaDeviceProp& prop) {
  int fit = 0;
  for (int n : kCases) fit += footprintBytes(n, false) <= prop.l2CacheSize ? 1 : 0;
  std::printf("[device] %d SMs, %.1f MiB L2 (the f32 footprint of %d of the %d cases fits "
              "in it), %zu KiB shared memory per block\n",
              prop.multiProcessorCount, prop.l2CacheSize / (1024.0 * 1024.0), fit, kNumCases,
              prop.sharedMemPerBlock / 1024);
  printFormatSupport(prop.major, prop.minor);
}

// Host conversions: half has the finer mantissa (10 bits), bf16 the far larger
// range (float's 8-bit exponent). All round to nearest even, as on the device.
struct DemoLine {
  std::string label;
  std::string value;
};
std::vector<DemoLine> conversionDemos() {
  char buf[64];
  std::vector<DemoLine> lines;
  __half_raw raw;
  raw.x = 0x7BFFu;  // exponent 11110, mantissa all ones
  std::snprintf(buf, sizeof buf, "%.1f", __half2float(__half(raw)));
  lines.push_back({"largest finite half", buf});
  // 65520 lies halfway between 65504 and 65536 (= 2^16, past the largest
  // exponent); ties-to-even picks the even mantissa, which overflows to inf.
  std::snprintf(buf, sizeof buf, "%d", std::isinf(halfRounded(65520.0f)) ? 1 : 0);
  lines.push_back({"65520 to half is inf", buf});
  const int isInf = std::isinf(halfRounded(300000.0f)) ? 1 : 0;
  std::snprintf(buf, sizeof buf, "%s (isinf %d)", isInf ? "inf" : "finite", isInf);
  lines.push_back({"300000 in half", buf});
  std::snprintf(buf, sizeof buf, "%.1f", __bfloat162float(__float2bfloat16(300000.0f)));
  lines.push_back({"300000 in bf16", buf});
  std::snprintf(buf, sizeof buf, "%.10f", halfRounded(1.0007f));
  lines.push_back({"1.0007 in half", buf});
  std::snprintf(buf, sizeof buf, "%.10f", __bfloat162float(__float2bfloat16(1.0007f)));
  lines.push_back({"1.0007 in bf16", buf});
  return lines;
}

void printConversionDemos() {
  const std::vector<DemoLine> lines = conversionDemos();
  std::printf("%zu host conversions (round to nearest even; half: 10-bit "
              "mantissa, bf16: float's range):\n", lines.size());
  for (const DemoLine& l : lines) std::printf("  %-24s%s\n", l.label.c_str(), l.value.c_str());
}

// =============================================================================
// The experiment: one case
// =============================================================================
// No cuBLAS row: the Build line links no library, so the file pastes into
// Compiler Explorer unchanged. The course's cuBLAS anchor, a program of its own
// that verify runs beside gemm_ladder, times cuBLAS SGEMM on the same GPU.

struct KernelRow {
  GateResult gate;
  TimingStats time{};  // filled only once every gate of the case held
};

// Host memory, about 66 MiB at 2048: A and B (float, 16 MiB each), the
// reference (double, 32 MiB), and 1 MiB chunks for transfers.
struct HostBuffers {
  std::vector<float> a, b;
  std::vector<double> ref;
  std::vector<__half> f16Staging;
  std::vector<float> out;
};

void printCaseHeader(int n, double refMax, const Tolerance& tol32, const Tolerance& tol16) {
  std::printf("case %dx%dx%d: max |reference| %.4f\n", n, n, n, refMax);
  std::printf("  footprint %.2f MiB (f32 kernel), %.2f MiB (f16 kernels)\n",
              footprintBytes(n, false) / (1024.0 * 1024.0),
              footprintBytes(n, true) / (1024.0 * 1024.0));
  std::printf("  FP32 gate: atol %.3e, rtol %.3e  (%s)\n", tol32.atol, tol32.rtol,
              ruleText(kRtolTableF32, kMantissaF32).c_str());
  std::printf("  FP16 gate: atol %.3e, rtol %.3e  (%s)\n", tol16.atol, tol16.rtol,
              ruleText(kRtolTableF16, kMantissaF16).c_str());
}

void printCaseTable(int n, const KernelRow rows[kNumKernels], const GateResult& tight,
                    const Tolerance& tolTight) {
  std::printf("  %-22s %11s %10s %7s  %s\n", "kernel", "max abs err", "gate frac", "vs f32",
              "time: median (min, max)");
  for (int k = 0; k < kNumKernels; ++k) {
    const TimingStats& t = rows[k].time;
    std::printf("  %-22s %11.3e %10.4f %6.2fx  %.4f ms (%.4f ms, %.4f ms)\n", kKernelNames[k],
                rows[k].gate.check.max_abs_err, rows[k].gate.check.worst_score,
                rows[kF32].time.median_ms / t.median_ms, t.median_ms, t.min_ms, t.max_ms);
  }
  // A prediction, not a gate: on a given input, cancellation could give the
  // f16 accumulator the smaller maximum error without either kernel being
  // wrong. Here storage rounding's max error stays of the order of 1e-3 in
  // every case, while the half accumulator's grows with K.
  std::printf("  max abs err, f16 accumulator / f32 accumulator: %.3g times\n",
              rows[kF16F16].gate.check.max_abs_err / rows[kF16F32].gate.check.max_abs_err);
  std::printf("  tight check, matmulF16StoreF32Acc vs a double reference of the half-rounded "
              "inputs\n  (FP32 rule: atol %.3e, rtol %.3e): max abs err %.3e, gate frac %.4f\n",
              tolTight.atol, tolTight.rtol, tight.check.max_abs_err, tight.check.worst_score);
  std::printf("  exact check: rows 0, %d and %d of both half kernels equal a host emulation "
              "of their arithmetic, bit for bit\n", n / 2, n - 1);
}

// Runs one case: correctness launches on poisoned buffers, every gate, and
// only then the timing. Returns false when a gate failed (each failure is
// already on stderr).
bool runCase(int n, const DeviceBuffers& d, HostBuffers& h, const RunPlan& plan) {
  const long long count = 1LL * n * n;
  for (long long e = 0; e < count; ++e) {
    h.a[e] = inputA(e);
    h.b[e] = inputB(e);
  }
  uploadInput(h.a, count, d.a, d.ah, h.f16Staging);
  uploadInput(h.b, count, d.b, d.bh, h.f16Staging);
  for (int k = 0; k < kNumKernels; ++k) {
    launchMatmul(k, d, n);
    CUDA_CHECK_LAUNCH();
  }
  referenceGemm(h.a.data(), h.b.data(), h.ref.data(), n, n, n);

  const double refMax = maxAbs(h.ref.data(), count);
  const Tolerance tol32 = makeTolerance(kRtolTableF32, kMantissaF32, n, refMax);
  const Tolerance tol16 = makeTolerance(kRtolTableF16, kMantissaF16, n, refMax);
  printCaseHeader(n, refMax, tol32, tol16);

  // Both half kernels get the FP16 rule: their stored inputs were rounded to
  // 11 significant bits, and this reference is of the unrounded inputs.
  const Tolerance* tols[kNumKernels] = {&tol32, &tol16, &tol16};
  const char* gateNames[kNumKernels] = {"FP32", "FP16", "FP16"};
  KernelRow rows[kNumKernels];
  bool held = true;
  for (int k = 0; k < kNumKernels; ++k) {
    rows[k].gate = gateDeviceOutput(d.out[k], h.ref.data(), n, *tols[k], h.out);
    if (rows[k].gate.failed()) printGateFailure(kKernelNames[k], gateNames[k], n, rows[k].gate);
    held = held && !rows[k].gate.failed();
  }
  if (!held) return false;

  // Tight companion check. The FP16 gate must absorb input rounding, so it is
  // wide (atol 3.0 at K = 2048 against a max |ref| of 17): an indexing bug
  // that moved outputs by a sixth of the largest one would pass it. Against a
  // double reference of the half-rounded inputs, matmulF16StoreF32Acc's only
  // error is its float accumulation, so the FP32 rule applies: 3906 times
  // tighter at K = 100, 8192 times at K = 2048. (The f16-acc kernel gets no
  // such check: its half accumulator is the error being measured; the exact
  // check below holds it to its own arithmetic instead.)
  for (long long e = 0; e < count; ++e) {
    h.a[e] = halfRounded(h.a[e]);
    h.b[e] = halfRounded(h.b[e]);
  }
  referenceGemm(h.a.data(), h.b.data(), h.ref.data(), n, n, n);
  const Tolerance tolTight =
      makeTolerance(kRtolTableF32, kMantissaF32, n, maxAbs(h.ref.data(), count));
  const GateResult tight = gateDeviceOutput(d.out[kF16F32], h.ref.data(), n, tolTight, h.out);
  if (tight.failed()) {
    printGateFailure("matmulF16StoreF32Acc (tight check)", "FP32", n, tight);
    return false;
  }
  const ExactCheck x = exactCheck(d, h.a.data(), h.b.data(), n);
  if (x.failed) {
    std::fprintf(stderr, "GATE: %s differs from a host emulation of its arithmetic (k "
                 "ascending, one rounding per step) in case %dx%dx%d at row %d, col %d: "
                 "got %.9g, emulation %.9g\n", kKernelNames[x.kernel], n, n, n, x.row, x.col,
                 static_cast<double>(x.got), static_cast<double>(x.want));
    return false;
  }

  // Timing, only of results that passed every gate.
  for (int k = 0; k < kNumKernels; ++k)
    rows[k].time = timeKernel([&] { launchMatmul(k, d, n); }, plan.warmups, plan.timedRuns);
  printCaseTable(n, rows, tight, tolTight);
  std::printf("\n");
  return true;
}

// =============================================================================
// main
// =============================================================================
// One option exists, for compute-sanitizer:
// --cases N runs only the first N cases (the Sanitize: line runs the 100 case,
// which reaches every guard), each kernel timed by one launch after no warm-up: a
// sanitizer checks what launches do, and every launch adds to its time.
// Anything else: exit 2.
RunPlan runPlan(int argc, char** argv) {
  if (argc == 1) return RunPlan{};
  if (argc == 3 && std::strcmp(argv[1], "--cases") == 0 && argv[2][0] >= '1' &&
      argv[2][0] < '1' + kNumCases && argv[2][1] == '\0')
    return RunPlan{argv[2][0] - '0', 0, 1};
  std::fprintf(stderr, "error: the only option is --cases N, N in [1, %d]; got \"%s\"\n"
                       "usage: %s [--cases N]\n", kNumCases, argv[argc - 1], argv[0]);
  std::exit(2);
}

int main(int argc, char** argv) {
  const RunPlan plan = runPlan(argc, argv);
  const cudaDeviceProp prop = requireCudaDevice();
  std::printf("GPU: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
  std::printf("Day 71: storage precision vs accumulator precision, on Day 16's 16x16 tiled "
              "matmul\n");
  printDeviceFacts(prop);
  std::printf("\n");
  printConversionDemos();
  std::printf("\n");
  if (plan.timedRuns == kTimedRuns)
    std::printf("time = median of %d launches after %d warm-ups; spread shown as (min, max); "
                "vs f32 = f32 median / this median\n\n", kTimedRuns, kWarmups);
  else
    std::printf("time = one launch, no warm-up (--cases: a run for compute-sanitizer; the "
                "times are not measurements)\n\n");

  const size_t maxElems = static_cast<size_t>(kMaxN) * kMaxN;
  HostBuffers h{hostVector<float>(maxElems, "A"), hostVector<float>(maxElems, "B"),
                hostVector<double>(maxElems, "the reference"),
                hostVector<__half>(kChunkElems, "the half staging buffer"),
                hostVector<float>(kChunkElems, "the output staging buffer")};

  DeviceBuffers d;
  CUDA_CHECK(cudaMalloc(&d.a, maxElems * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d.b, maxElems * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d.ah, maxElems * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&d.bh, maxElems * sizeof(__half)));
  for (float*& out : d.out) CUDA_CHECK(cudaMalloc(&out, maxElems * sizeof(float)));

  bool passed = true;
  for (int c = 0; c < plan.cases && passed; ++c) {
    // Poison everything (see kPoisonByte): outputs, and inputs past the case.
    for (void* p : {static_cast<void*>(d.a), static_cast<void*>(d.b)})
      CUDA_CHECK(cudaMemset(p, kPoisonByte, maxElems * sizeof(float)));
    for (void* p : {static_cast<void*>(d.ah), static_cast<void*>(d.bh)})
      CUDA_CHECK(cudaMemset(p, kPoisonByte, maxElems * sizeof(__half)));
    for (float* out : d.out) CUDA_CHECK(cudaMemset(out, kPoisonByte, maxElems * sizeof(float)));
    passed = runCase(kCases[c], d, h, plan);
  }

  CUDA_CHECK(cudaFree(d.a));
  CUDA_CHECK(cudaFree(d.b));
  CUDA_CHECK(cudaFree(d.ah));
  CUDA_CHECK(cudaFree(d.bh));
  for (float* out : d.out) CUDA_CHECK(cudaFree(out));
  if (!passed) return EXIT_FAILURE;
  std::printf("all %d cases passed their gates\n", plan.cases);
  return EXIT_SUCCESS;
}

// =============================================================================
// Course toolkit: the blocks every lesson carries (error checks, timer, reference
// GEMM, the correctness rule). Machinery: skip it on a first read.
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
