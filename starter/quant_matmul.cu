// SPDX-License-Identifier: MIT
// Day 98 - quant_matmul: INT8 sums are exact, so rounding the inputs decides the error.
//
// On Day 71 the accumulator decided the error: a half accumulator lost more with every k. Here the
// accumulator is an int32 that adds int8 x int8 products exactly, so it contributes nothing, and
// storage decides: the error is made when the inputs are rounded to codes; after the exact sum only
// the epilogue rounds, at most three times, each within 2^-24 of the output. Day 16's 16x16 tile
// climbs a ladder of scales, one change per rung: one scale for B; one scale per column of B; per
// column plus an asymmetric A with a zero point. Then it runs on a 2:4-pruned B. That the integer
// loop is exact is a gate: a host integer reference over the same codes, through a rescale written
// apart from the kernel's, must match every GPU output bit for bit. Host censuses price the
// rounding of the inputs alone: INT8, FP8 e4m3, OCP MXFP8 (power-of-two scales per block of 32) and
// NVFP4. No tensor cores: the FP8, MX and NVFP4 figures are host arithmetic, the 2:4 row is the
// INT8 loop on codes pruned on the host, and none of them is timed.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o quant_matmul quant_matmul.cu
// Run:   ./quant_matmul
// Sanitize: ./quant_matmul --cases 1
//
// Check your exercise on a GPU: python3 scripts/suite.py exercise check quant_matmul (every recorded
// run). Without one: python3 scripts/suite.py ce-link exercises/quant_matmul.cu, run it, save the whole
// executor pane to FILE, then python3 scripts/suite.py exercise check quant_matmul --pane FILE (the
// verdict lists the runs still unjudged). Done when the one recorded run, ./quant_matmul, exits 0
// with the lesson's result lines.
//
// Lineage: Day 16's tile, Day 66's slack factor of 4, Day 71's FP32 kernel and gate, and Day 62's
// habit of reporting a row that is meant to look bad instead of gating it. The build targets the T4
// that Compiler Explorer runs; a newer card compiles the embedded compute_75 PTX (on the H200 that
// prints the same digits: integer sums and round-to-nearest float operations only).

// cuda_fp4.h (CUDA 13.0) leaves a parameter unused in two of its host
// functions; the warning is silenced for that header alone, so that builds
// with -Wextra -Werror stay clean.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <cuda_fp4.h>
#pragma GCC diagnostic pop
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

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
// Kernels: Day 71's FP32 tile, and the same tile on int8 codes
// =============================================================================
// Both kernels share Day 16's tiling. For each of the ceil(K/16) k-tiles,
// every thread stages A[row][t*16 + tx] and B[t*16 + ty][col] into 16x16
// shared tiles (padding when outside the matrix), a barrier, 16 accumulation
// steps in ascending p, a barrier. Guards wrap only loads and stores, so every
// thread reaches every barrier. threadIdx.x indexes the column.
//
// launch assumption (both): blockDim = (16, 16, 1) and
// grid = (ceil(N/16), ceil(M/16)); launchRow() is the only launch path, and
// requireTileBlock() traps on any other block shape (a trap survives -DNDEBUG,
// an assert would not), which CUDA_CHECK then reports.

__device__ inline void requireTileBlock() {
  if (blockDim.x != kTile || blockDim.y != kTile || blockDim.z != 1) __trap();
}

// Day 71's FP32 kernel, unchanged: the baseline every INT8 row is timed
// against. nvcc contracts acc += a * b into one fmaf: each step rounds once.
// memory: per k-tile a block reads one 16x16 tile of A and one of B (1 KiB
// each); a half-warp reads a 64-byte row segment of B; shared memory 2 KiB.
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

// A product of two floats rounded once to nearest, never fused with anything:
// __fmul_rn on the device (nvcc never contracts it into an FMA), a plain *
// on the host (x86-64 SSE and AArch64 round every product; the Build line has
// no fast-math flag that could reassociate).
__host__ __device__ inline float mulRn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

// The INT8 epilogue: the exact integer sum becomes a real number. The kernel
// summed qa * qb over k. A symmetric code is q = x/s, so that sum times both
// scales stands for the dot product; an asymmetric A's code is q = x/s + z (z,
// the zero point), so the sum also holds a share that no product made, and the
// lesson's epilogue takes it out, exactly. colSum, the sum over k of the
// column's codes of B, depends on the weights alone: the host sums it once.
// For a symmetric A, zeroPoint and colSum are 0. Then the contract, which the
// exactness gate checks bit for bit with its own rescale (rescaleReference):
// the corrected int32 converted to float, rounded to nearest; times aScale,
// rounded once; that times bScale, rounded once.
__host__ __device__ inline float int8Epilogue(std::int32_t acc, std::int32_t zeroPoint,
                                              std::int32_t colSum, float aScale,
                                              float bScale) {
  // exercise: int8-epilogue
  // TODO: return the real number that the exact integer sum stands for.
  // - For an asymmetric A, acc holds a share that no product of real values
  //   made: work out what it is from the definition of the codes (comment
  //   above), and which of your arguments give it; take it out exactly.
  // - Then rescale following the contract above: its order and its
  //   roundings are what the exactness gate compares, bit for bit.
  // How to know it worked: the "int8-epilogue" line says held (its GATE
  // line on stderr gives the first rescale you got wrong, and the value
  // wanted), and every int8 row of every case says yes under "exact".
  // Until then this stand-in returns the raw sum, unscaled. The machinery band
  // below (rescaleReference, the audit's own rescale) holds the answer: write
  // yours before reading it.
  (void)zeroPoint;
  (void)colSum;
  (void)aScale;
  (void)bScale;
  return static_cast<float>(acc);
  // end exercise
}

// What the INT8 epilogue needs, for the kernel (device pointers) or the host
// reference (host pointers). bScales null: one scale for B; colSums null: a
// symmetric A (zero point 0).
struct Int8Scales {
  float aScale;
  std::int32_t zeroPoint;
  const std::int32_t* colSums;
  float bScale;
  const float* bScales;
};

// Day 16's tile with int8 operands and an int32 accumulator. Two compile-time
// switches, one per rung of the ladder: kPerColumnB picks B's scale per column
// (rung 2), kAsymmetricA handles A's zero point (rung 3). Padding: A pads
// with the code of 0.0 (z when asymmetric, else 0); B pads with 0. No case
// reaches these guards. The int8 x int8 products are widened to int32 and
// summed exactly: no rounding happens before the epilogue. (nvcc turns the p
// loop of the lesson's kernel into dp4a, an exact four-way int8 dot product
// into int32, fed by byte loads and byte permutes: check ptx-facts holds the
// counts; the page says why that need not beat fp32 here.)
// memory: per k-tile a block reads a 16x16 tile of A and one of B at 256 bytes
// each, a quarter of FP32's; but a warp's B load is two 16-byte row segments,
// each half of a 32-byte sector, so by sector count the bytes requested from L2 only halve. Shared
// memory 512 B.
template <bool kPerColumnB, bool kAsymmetricA>
__global__ void matmulInt8Tiled(const std::int8_t* A, const std::int8_t* B, float* C,
                                int M, int N, int K, Int8Scales s) {
  requireTileBlock();
  __shared__ std::int8_t As[kTile][kTile];
  __shared__ std::int8_t Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  const std::int8_t padA = kAsymmetricA ? static_cast<std::int8_t>(s.zeroPoint) : 0;
  // snippet: int8-inner
  std::int32_t acc = 0;  // exact: |acc| <= K*128*127 < 2^31 (the overflow assert)
  for (int t = 0; t < (K + kTile - 1) / kTile; ++t) {
    const int ak = t * kTile + tx, bk = t * kTile + ty;
    As[ty][tx] = (row < M && ak < K) ? A[row * K + ak] : padA;
    Bs[ty][tx] = (bk < K && col < N) ? B[bk * N + col] : std::int8_t{0};
    __syncthreads();
    for (int p = 0; p < kTile; ++p)  // integer multiply-adds: never rounded
      acc += static_cast<std::int32_t>(As[ty][p]) * static_cast<std::int32_t>(Bs[p][tx]);
    __syncthreads();
  }
  if (row < M && col < N) {
    // The zero point costs one correction per output (O(N^2) in all), not
    // one per product (O(N^3)): colSums[col] was summed once, on the host.
    const std::int32_t z = kAsymmetricA ? s.zeroPoint : 0;
    const std::int32_t colSum = kAsymmetricA ? s.colSums[col] : 0;
    const float bScale = kPerColumnB ? s.bScales[col] : s.bScale;
    C[row * N + col] = int8Epilogue(acc, z, colSum, s.aScale, bScale);
  }
  // end snippet
}

// The rows of each case's table: the FP32 baseline, the three rungs, and the
// per-column rung again on a 2:4-pruned B.
enum Row { kRowF32, kRowOneScale, kRowPerColumn, kRowZeroPoint, kRowPruned, kNumRows };
constexpr const char* kRowNames[kNumRows] = {
    "fp32 tiled", "int8 one scale", "int8 per-column", "int8 per-col + zp",
    "int8 2:4 pruned"};

struct DeviceBuffers {
  float* a = nullptr;  // FP32 inputs
  float* b = nullptr;
  std::int8_t* qa = nullptr;  // the current rung's codes of A and of B
  std::int8_t* qb = nullptr;
  float* bScales = nullptr;  // B's per-column scales, and its column code sums
  std::int32_t* colSums = nullptr;
  float* out = nullptr;  // one output, checked before the next row reuses it
};

// The only launch path (see "launch assumption" above). Square cases; s holds
// the host's scalars, d the device arrays.
inline void launchRow(Row row, const DeviceBuffers& d, const Int8Scales& s, int n) {
  const dim3 block(kTile, kTile);
  const dim3 grid((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
  const Int8Scales k{s.aScale, s.zeroPoint, d.colSums, s.bScale, d.bScales};
  switch (row) {
    case kRowF32:
      matmulTiledF32<<<grid, block>>>(d.a, d.b, d.out, n, n, n);
      break;
    case kRowOneScale:
      matmulInt8Tiled<false, false><<<grid, block>>>(d.qa, d.qb, d.out, n, n, n, k);
      break;
    case kRowZeroPoint:
      matmulInt8Tiled<true, true><<<grid, block>>>(d.qa, d.qb, d.out, n, n, n, k);
      break;
    default:  // per-column, and per-column on the pruned codes
      matmulInt8Tiled<true, false><<<grid, block>>>(d.qa, d.qb, d.out, n, n, n, k);
      break;
  }
}

// =============================================================================
// Machinery: skip it on a first read. The course toolkit's declarations, then
// this lesson's judges'; all are defined in the machinery band at the end.
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

// This lesson's judges, declared here and defined in the machinery band at the
// end of the file; each is written apart from what it judges, and what it
// checks is told where it is used.
using Verdict = std::string;  // a failed check, in words; empty when it held
struct Int8Scales;
struct CaseBounds;
struct RowCheck;
// The two exercises' audits.
using EpilogueFn = float (*)(std::int32_t, std::int32_t, std::int32_t, float, float);
inline Verdict auditEpilogue(EpilogueFn epilogue, int& equal, int& total);
inline Verdict auditColumnCodes(const float* B, int K, int N, const float* colMax,
                                const float* scales, const std::int8_t* codes);
// The exactness gate: the host integer reference over B's codes transposed
// (qbT, paddedColumns(N) x K), and what it found over some rows of an output.
struct ExactResult {
  long long checked = 0;
  long long mismatches = 0;  // elements that differ in any bit
  long long firstIndex = -1;  // the first of them (lowest flat index)
  float gpu = 0.0f, host = 0.0f;
};
inline int paddedColumns(int N);
inline void transposeCodes(const std::int8_t* codes, int K, int N, std::int16_t* qbT);
inline void exactCheckRows(const std::int8_t* qa, const std::int16_t* qbT, int r0, int rows,
                           int N, int K, const Int8Scales& s, const float* got,
                           ExactResult& r);
// The error walk: rows [r0, r0 + rows) of an output against the double reference.
inline void accumulateErrors(RowCheck& rc, const float* got, const double* ref, int r0,
                             int rows, int N, const CaseBounds& b);

// =============================================================================
// Constants
// =============================================================================

// Square cases M = N = K, in one allocation per buffer sized for the largest.
constexpr int kNumCases = 3;
constexpr int kCases[kNumCases] = {256, 1024, 2048};
constexpr int kMaxN = 2048;
static_assert(kCases[0] < kCases[1] && kCases[1] < kCases[2] &&
                  kCases[kNumCases - 1] == kMaxN,
              "cases ascend and the last is the largest: buffers are "
              "allocated once, for kMaxN, and the censuses run on the last");
static_assert(kCases[0] % kTile == 0 && kCases[1] % kTile == 0 &&
                  kCases[2] % kTile == 0,
              "every case is whole tiles, so every row is timed on the same "
              "full tiles (the guards still handle any size)");
static_assert(static_cast<long long>(kMaxN) * kMaxN <= 2147483647LL,
              "the kernels index with int: kMaxN^2 must fit in 31 bits");

// INT8 codes. A symmetric code's scale amax / 127 puts every value in
// [-127, 127] (the quantizer's clamp to [-128, 127] only guards the cast); an
// asymmetric one uses all 256 values [-128, 127], so its range has 255 steps.
constexpr int kInt8Max = 127;
constexpr int kInt8Min = -128;
constexpr int kAsymmetricSteps = 255;
static_assert(2LL * kMaxN * kInt8Max * 128 < 2147483647LL,
              "the int32 accumulator cannot overflow: |sum| <= K*127*128 over "
              "K products of codes, and the zero-point term z*colSum adds at "
              "most as much again: 2*2048*127*128 = 66,584,576 < 2^31 - 1");

// Storage census formats. FP8 e4m3: largest finite 448 = 1.75 * 2^8, so the
// OCP MX rule's emax is 8. MX blocks: 32 consecutive k down a column of B.
// NVFP4: e2m1 elements (largest 6) in blocks of 16, each with an e4m3 scale.
constexpr int kMxBlock = 32;
constexpr float kFp8E4m3Max = 448.0f;
constexpr int kFp8E4m3Emax = 8;
constexpr int kNvfp4Block = 16;
constexpr float kFp4E2m1Max = 6.0f;
static_assert(kMaxN % kMxBlock == 0 && kMaxN % kNvfp4Block == 0,
              "the census runs on the 2048 case: it must walk whole blocks");

// Gates. FP32: Day 71's rule, the course's K-scaled tolerance (gemmTolerance,
// gemm_check block: table rtol 1e-5, 23 mantissa bits). INT8: the column
// bound, with Day 66's slack factor of 4 (see columnBound).
constexpr double kGateSlack = 4.0;
// The activation census must show the zero point's extra bit: symmetric RMS at
// least 1.5 times asymmetric (theory 2: a step of amax/127 against span/255).
constexpr double kZeroPointRmsGate = 1.5;
// The quantize-columns audit lets a code sit half a step from its value plus
// this much of a step: the one rounding of B/scale in float (2^-24 relative,
// times at most 127 steps: 7.6e-6) stays below it.
constexpr double kAuditStepSlack = 1e-5;

// Inputs (see makeInputs): each element a hash of its index; B's column c is
// scaled by 2^-(c mod 7), and every 37th element (flat index) by 8 more: an
// outlier.
constexpr std::uint32_t kSeed = 20260901u;
constexpr int kGainPeriod = 7;  // gains 2^0 .. 2^-6: a 64x spread of columns
constexpr int kOutlierPeriod = 37;
constexpr float kOutlierGain = 8.0f;
static_assert(kCases[0] % kOutlierPeriod != 0 && kCases[1] % kOutlierPeriod != 0 &&
                  kCases[2] % kOutlierPeriod != 0,
              "37 divides no case size, so the outliers walk across the "
              "columns and every column of B but the planted all-zero one holds some");
static_assert(static_cast<long long>(kMaxN) * kMaxN * 2 <= 4294967296LL,
              "the hash's counter, 2 * flat index + stream, fits in 32 bits");
// Planted in B (see makeInputs), so that every rule the quantize-columns
// exercise states changes a printed line when it is broken: column
// kZeroColumn is all zero; column kTieColumn's largest magnitude is exactly
// 127 * kTieStep (row 0), so its scale is exactly kTieStep, and rows
// kTieFirstRow.. hold values exactly kTieSteps of that step: halfway between
// two codes, where only the tie rule decides. kTieStep is no power of two, so
// 1/kTieStep in float is rounded: multiplying by it, where the rule divides,
// puts the +-2.5-step ties on the odd codes +-3.
constexpr int kZeroColumn = 5;
constexpr int kTieColumn = 3;  // gain 2^-3: its own values are below 8 * 2^-3 = 1
constexpr float kTieStep = 15.0f / 1024.0f;  // 127 * 15 * 2^-10 = 1.86 > 1: the largest
constexpr int kTieFirstRow = 1;
constexpr int kNumTies = 6;
constexpr float kTieSteps[kNumTies] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f};
static_assert(kTieColumn % kGainPeriod == 3 && kZeroColumn != kTieColumn &&
                  kTieFirstRow + kNumTies <= kCases[0] && kZeroColumn < kCases[0],
              "the planted column keeps gain 2^-3 (its values at most 1), the two "
              "planted columns differ, and every case holds them");

// Timing: kWarmups untimed launches, then the median of kTimedRuns timed ones.
constexpr int kWarmups = 3;
constexpr int kTimedRuns = 10;
// One run: every case, timed as above; --cases N (main): the first N, one launch each, no warm-up.
struct RunPlan {
  int cases = kNumCases, warmups = kWarmups, timedRuns = kTimedRuns;
};

// Host checks read a device output back kSlabRows rows at a time (2 MiB at
// 2048), so host memory stays near A, B, the reference and the codes.
constexpr int kSlabRows = 256;
static_assert(kSlabRows % 2 == 0, "the integer reference works on pairs of rows");

// =============================================================================
// Inputs
// =============================================================================

// Each element is a hash of its own index, not a draw from a stream: the sqrtK
// diagnostic (see columnBound) asks what independent rounding errors would add
// up to, and one LCG stream read down a column of B (every n-th draw, n a
// power of two) is itself a poor LCG whose errors pile up one way in some
// columns; the summary prints what B's column sums add up to. The hash is
// lowbias32 (Chris Wellons's hash prospector), twice, the seed in between.
inline std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// Draw number `index` of stream 0 (A) or 1 (B): the hash's top 24 bits as a
// float in [0, 1), exact in float.
inline float unitAt(std::uint32_t stream, std::uint32_t index) {
  const std::uint32_t h = mix32(mix32(2u * index + stream) ^ kSeed);
  return static_cast<float>(h >> 8) / 16777216.0f;
}

// A (n x n, row-major): A[e] = unitAt(0, e), never negative, like the
// activations after a ReLU. B (n x n): B[p][c] = (2 unitAt(1, e) - 1) *
// 2^-(c mod 7), times 8 when the flat index e = p*n + c is a multiple of 37.
// Every operation is exact in float. The outliers are what real weights have
// and what scaling fights: one scale must cover the loudest value it serves,
// so one outlier coarsens the step of everything that shares its scale: per
// column, its column; per block (32 for MX, 16 for NVFP4), only its block.
// Then the planted cases (see the constants).
inline void makeInputs(int n, float* A, float* B) {
  const long long count = static_cast<long long>(n) * n;
  for (long long e = 0; e < count; ++e) A[e] = unitAt(0, static_cast<std::uint32_t>(e));
  float gains[kGainPeriod];
  for (int g = 0; g < kGainPeriod; ++g) gains[g] = std::ldexp(1.0f, -g);
  for (int p = 0; p < n; ++p) {
    for (int c = 0; c < n; ++c) {
      const long long e = static_cast<long long>(p) * n + c;
      const float outlier = (e % kOutlierPeriod == 0) ? kOutlierGain : 1.0f;
      const float u = unitAt(1, static_cast<std::uint32_t>(e));
      B[e] = (2.0f * u - 1.0f) * gains[c % kGainPeriod] * outlier;
    }
  }
  for (int p = 0; p < n; ++p) B[static_cast<long long>(p) * n + kZeroColumn] = 0.0f;
  B[kTieColumn] = static_cast<float>(kInt8Max) * kTieStep;
  for (int t = 0; t < kNumTies; ++t)
    B[static_cast<long long>(kTieFirstRow + t) * n + kTieColumn] = kTieSteps[t] * kTieStep;
}

// =============================================================================
// Quantizers (host, float: scale first, then round the value divided by it)
// =============================================================================

// Round to nearest, ties to even (rint in the default rounding mode), then
// clamp to [-128, 127] before the cast. Without the clamp a value that rounds
// to 128 would wrap to -128: the largest positive input would become the most
// negative code.
inline std::int8_t roundToInt8(float v) {
  const float r = std::rint(v);
  return static_cast<std::int8_t>(std::min(static_cast<float>(kInt8Max),
                                           std::max(static_cast<float>(kInt8Min), r)));
}

// Symmetric, one scale: s = amax/127 (1 when everything is 0), q = round(x/s),
// dequantized as q*s.
inline float symmetricScale(float amax) {
  return amax > 0.0f ? amax / static_cast<float>(kInt8Max) : 1.0f;
}
inline void quantizeSymmetric(const float* x, long long count, float scale,
                              std::int8_t* codes) {
  for (long long e = 0; e < count; ++e) codes[e] = roundToInt8(x[e] / scale);
}

// Asymmetric: the range [lo, hi] always includes 0, so the real value 0 has an
// exact code, z (the zero point: padding, and ReLU's zeros, stay exact); then
// s = (hi - lo)/255, z = round(-128 - lo/s) clamped to [-128, 127],
// q = round(x/s + z), dequantized as (q - z)*s. Because lo <= 0 <= hi, z lands
// in range by construction and every x in [lo, hi] maps into [-128, 127].
// This lesson's A is never negative: its range is [0, max A], and z = -128.
struct AsymmetricParams {
  float scale;
  int zeroPoint;
};
inline AsymmetricParams asymmetricParams(const float* x, long long count) {
  float lo = 0.0f, hi = 0.0f;
  for (long long e = 0; e < count; ++e) {
    lo = std::min(lo, x[e]);
    hi = std::max(hi, x[e]);
  }
  const float scale = hi > lo ? (hi - lo) / static_cast<float>(kAsymmetricSteps) : 1.0f;
  const long z = std::lrint(static_cast<float>(kInt8Min) - lo / scale);
  const long clamped = std::min<long>(kInt8Max, std::max<long>(kInt8Min, z));
  return AsymmetricParams{scale, static_cast<int>(clamped)};
}
inline void quantizeAsymmetric(const float* x, long long count, AsymmetricParams p,
                               std::int8_t* codes) {
  const float z = static_cast<float>(p.zeroPoint);
  for (long long e = 0; e < count; ++e) codes[e] = roundToInt8(x[e] / p.scale + z);
}

// colMax[c] = max over p of |B[p][c]| (B is K x N, row-major).
inline void columnMaxAbs(const float* B, int K, int N, float* colMax) {
  for (int c = 0; c < N; ++c) colMax[c] = 0.0f;
  for (int p = 0; p < K; ++p)
    for (int c = 0; c < N; ++c)
      colMax[c] = std::max(colMax[c], std::fabs(B[static_cast<long long>(p) * N + c]));
}

// snippet: quantize-columns
// Rung 2: one scale per column of B. B's column gains span 64x by construction (2^0 .. 2^-6), and
// with the random draws and the outliers the column maxima span more: each case's header prints the
// extremes. One scale for all columns gives the quietest column a step that many times too coarse:
// a handful of codes where 255 were on offer. The goal: every column gets all the codes of its own
// range, so its largest magnitude lands on code +-127; every other value takes the nearest code of
// its own column's step, and a value exactly halfway between two codes takes the even one (so ties
// do not all lean one way); an all-zero column gets scale 1 (there is no range to map, and 0/127
// would leave nothing to divide by). scales[c] receives column c's scale, codes[p*N + c] the code
// of B[p][c].
inline void quantizeColumns(const float* B, int K, int N, const float* colMax,
                            float* scales, std::int8_t* codes) {
  // exercise: quantize-columns
  // TODO: quantize B with one symmetric scale per column, to the goal above.
  // You decide which scale puts a column's largest magnitude on code 127,
  // and which rounding call gives the nearest code with ties to the even
  // one; the helpers above may already do what you need.
  // How to know it worked: the "quantize-columns" line says held (its GATE
  // line on stderr names the first column or element that broke a rule,
  // with the numbers), the planted ties show their even neighbours, and the
  // per-column rows pass their gates.
  // Until then this stand-in gives every column scale 1 and every code 0.
  (void)B;
  (void)colMax;
  std::fill(scales, scales + N, 1.0f);
  std::fill(codes, codes + static_cast<long long>(K) * N, std::int8_t{0});
  // end exercise
}
// end snippet

// colSums[c] = the int32 sum over k of column c's codes, which the zero-point
// epilogue needs. It depends only on the weights.
inline void columnCodeSums(const std::int8_t* codes, int K, int N, std::int32_t* colSums) {
  for (int c = 0; c < N; ++c) colSums[c] = 0;
  for (int p = 0; p < K; ++p)
    for (int c = 0; c < N; ++c) colSums[c] += codes[static_cast<long long>(p) * N + c];
}

// 2:4 pruning along k, the pattern sparse tensor cores (sm_80 on) run for 8- and 16-bit types: of every
// 4 consecutive weights along k, at most 2 are nonzero. Here, in each column, every
// group of 4 keeps its 2 largest magnitudes of B and the codes of the other 2
// become 0. Ties go to the earlier index: an equal magnitude outranks only the
// elements after it, so exactly 2 survive. A tail group of n < 4 rows keeps
// min(n, 2); no case has one. Pruning the codes equals quantizing the pruned B: a
// zeroed value has code 0, and the pruned B has the dense per-column scales,
// because the largest value of every group always survives.
inline void pruneTwoOfFour(const float* B, int K, int N, std::int8_t* codes) {
  for (int g = 0; g < K; g += 4) {
    const int n = std::min(4, K - g);
    for (int c = 0; c < N; ++c) {
      float mag[4];
      for (int t = 0; t < n; ++t)
        mag[t] = std::fabs(B[static_cast<long long>(g + t) * N + c]);
      for (int t = 0; t < n; ++t) {
        int outranked = 0;  // group members that beat element t
        for (int u = 0; u < n; ++u)
          if (mag[u] > mag[t] || (mag[u] == mag[t] && u < t)) ++outranked;
        if (outranked >= 2) codes[static_cast<long long>(g + t) * N + c] = 0;
      }
    }
  }
}

// =============================================================================
// Gates: how each row is judged
// =============================================================================

// Day 71's FP32 rule, the course's (gemm_check block): rtol = max(1e-5, 4 *
// 2^-23 * sqrt(K)) and atol = rtol * max|ref|; element e passes when |err| <=
// atol + rtol*|ref|.
inline Tolerance fp32Tolerance(long long K, double refMax) { return gemmTolerance(K, refMax); }

// snippet: column-gate
// The INT8 column gate, derived rather than tuned. With codes of step s_a = amax/127 for A and s_b
// = colMax_c/127 for column c of B (smaller steps for an asymmetric A), one product a*b, rebuilt
// from its codes, is off by at most |a|*s_b/2 + |b|*s_a/2 <= amax*colMax_c/127, plus a second-order
// s_a*s_b/4. Nothing guarantees that the K errors of one dot product are independent (real weights
// and activations need not be), so they may add up linearly: K * amax * colMax_c / 127, times 4 for
// the dropped second-order term and for any order of the sum. The integer loop adds nothing (the
// exactness gate checks that), and the epilogue rounds at most three times (int to float, then each
// scale), each within 2^-24 of its result: together under 2^-22 of the output, far inside the
// slack. One bound per column: the column maxima differ by the factor each case's header prints
// ("times apart"), and one matrix-wide bound would be that much too lax on the quietest columns.
// (An all-zero column's bound is 0: its outputs must be 0.) The sqrtK diagnostic is the same bound
// with sqrt(K) for K: what the errors would add up to if they were independent (a random walk). It
// is reported, never gated: a correctness gate may not assume independence.
inline double columnBound(long long K, double amax, double colMax) {
  return kGateSlack * static_cast<double>(K) * amax * colMax / kInt8Max;
}
inline double columnBoundSqrtK(long long K, double amax, double colMax) {
  return kGateSlack * std::sqrt(static_cast<double>(K)) * amax * colMax / kInt8Max;
}
// end snippet

// What one row's output did, gathered slab by slab: its errors against the
// double reference, its fractions of the bounds, and the first element that
// broke each gate. A fraction is |err| / bound, so above 1 fails; NaN and
// infinity are counted apart and fail every row.
struct RowCheck {
  long long count = 0;
  double maxErr = 0.0, sumSq = 0.0;
  double colFrac = 0.0, sqrtFrac = 0.0, relFrac = 0.0;  // worst fractions
  long long colFracIndex = -1, sqrtFracIndex = -1;       // and where they are
  long long nonFinite = 0, nonFiniteIndex = -1;
  float nonFiniteValue = 0.0f;
  long long colFailIndex = -1, relFailIndex = -1;  // first element over each bound
  double colFailErr = 0.0, colFailBound = 0.0, relFailErr = 0.0, relFailBound = 0.0;
  ExactResult exact;
  double rms() const { return count > 0 ? std::sqrt(sumSq / static_cast<double>(count)) : 0.0; }
};

inline double gateFraction(double err, double bound) {
  return err == 0.0 ? 0.0 : err / bound;  // 0/0 for an all-zero column
}

// The bounds one case's rows are judged on: per column (linear and sqrtK) and
// the FP32 rule.
struct CaseBounds {
  std::vector<double> col, colSqrt;
  Tolerance f32;
};

// =============================================================================
// Censuses: the rounding of the inputs alone, before any matmul
// =============================================================================
// A census stores a tensor in a format and reads it back, on the host, in
// double: the error of every element, as a fraction of the tensor's largest
// magnitude. It prices storage alone. A matmul output sums K such errors, each
// times the other operand, so the tables' errors grow with K.

// One format's round trip over a tensor: the largest and the RMS error, as
// fractions of the tensor's largest magnitude.
struct RoundTrip {
  double maxErr = 0.0;
  double sumSq = 0.0;
  long long count = 0;
  void add(double rebuilt, float x, double scaleOfTensor) {
    const double err = std::fabs(rebuilt - static_cast<double>(x)) / scaleOfTensor;
    maxErr = std::max(maxErr, err);
    sumSq += err * err;
    ++count;
  }
  double rms() const { return count > 0 ? std::sqrt(sumSq / static_cast<double>(count)) : 0.0; }
};

struct ActivationCensus {
  long long count = 0;
  double maxAbs = 0.0;
  RoundTrip symmetric, asymmetric;
  int zeroPoint = 0;
};

// snippet: activation-census
// The one-bit claim, computed without a GPU: every value of A goes through
// each INT8 quantizer and back, in double. On data that is never negative a
// symmetric code wastes its negative half: its step is amax/127. An asymmetric
// code with a zero point spends all 256 codes on [0, amax]: a step of
// span/255, half as large, one more bit, for half the error.
inline ActivationCensus activationCensus(const float* A, long long count) {
  ActivationCensus c;
  c.count = count;
  float amax = 0.0f;
  for (long long e = 0; e < count; ++e) amax = std::max(amax, std::fabs(A[e]));
  c.maxAbs = amax;
  const double ref = amax > 0.0f ? amax : 1.0;
  const float sym = symmetricScale(amax);
  const AsymmetricParams asym = asymmetricParams(A, count);
  c.zeroPoint = asym.zeroPoint;
  const float z = static_cast<float>(asym.zeroPoint);
  for (long long e = 0; e < count; ++e) {
    const std::int8_t qs = roundToInt8(A[e] / sym);
    const std::int8_t qz = roundToInt8(A[e] / asym.scale + z);
    c.symmetric.add(static_cast<double>(qs) * sym, A[e], ref);
    c.asymmetric.add((static_cast<double>(qz) - asym.zeroPoint) * asym.scale, A[e], ref);
  }
  return c;
}
// end snippet

// FP8 e4m3 through cuda_fp8.h's own float -> e4m3 conversion: round to nearest
// even, saturating to +-448 (__NV_SATFINITE); then back to float, exactly.
inline float fp8E4m3RoundTrip(float x) {
  __nv_fp8_e4m3 q;
  q.__x = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  return static_cast<float>(q);
}

// FP4 e2m1, NVFP4's element (magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6), through
// cuda_fp4.h's own float -> e2m1 conversion, as FP8 goes through cuda_fp8.h's:
// round to nearest even, saturating to +-6 (an e2m1 conversion always
// saturates: the format has no infinity and no NaN); then back to float,
// exactly.
inline float fp4E2m1RoundTrip(float x) {
  __nv_fp4_e2m1 q;
  q.__x = __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest);
  return static_cast<float>(q);
}

// An E8M0 scale, as OCP MX v1.0 sets it for a block: 2^(floor(log2 blockMax)
// - emax), emax = 8 for e4m3. A power of two, so applying it is exact; but it
// puts blockMax at 256..511 of the element's range, and e4m3 ends at 448, so a
// block whose largest mantissa is above 1.75 saturates it. The variant rounded
// up, 2^ceil(log2(blockMax/448)), never saturates and pays up to one bit of
// resolution instead.
inline float e8m0ScaleOcp(float blockMax) {
  if (!(blockMax > 0.0f)) return 1.0f;
  int exponent = 0;
  std::frexp(blockMax, &exponent);  // blockMax = f * 2^exponent, f in [0.5, 1)
  return std::ldexp(1.0f, exponent - 1 - kFp8E4m3Emax);
}
inline float e8m0ScaleRoundedUp(float blockMax) {
  if (!(blockMax > 0.0f)) return 1.0f;
  float scale = e8m0ScaleOcp(blockMax);
  while (blockMax > kFp8E4m3Max * scale) scale *= 2.0f;  // at most once
  return scale;
}

struct StorageCensus {
  long long count = 0;
  double maxAbs = 0.0;
  RoundTrip int8Tensor, int8Column, fp8Tensor, fp8BlockF32, mxfp8Ocp, mxfp8Up, nvfp4;
};

// B (K x N) stored seven ways. INT8 with one scale (bmax/127), or one per
// column: colScales and colCodes, quantizeColumns's output, audited before the
// census runs. FP8 e4m3 with one scale (bmax/448); with an FP32 scale
// per block of 32 k in a column (blockMax/448: a contrast, not a real format);
// as MXFP8, the same blocks with an E8M0 scale (the OCP rule, then rounded
// up). NVFP4: e2m1 per 16 k, each block's scale blockMax/6 stored as e4m3
// after dividing by one FP32 scale for the tensor, bmax/(448*6).
inline StorageCensus storageCensus(const float* B, int K, int N, const float* colMax,
                                   const float* colScales, const std::int8_t* colCodes) {
  StorageCensus c;
  c.count = static_cast<long long>(K) * N;
  float bmax = 0.0f;
  for (int j = 0; j < N; ++j) bmax = std::max(bmax, colMax[j]);
  c.maxAbs = bmax;
  const double ref = bmax > 0.0f ? bmax : 1.0;
  const float int8Scale = symmetricScale(bmax);
  const float fp8Scale = bmax > 0.0f ? bmax / kFp8E4m3Max : 1.0f;
  const float tensorScale = bmax > 0.0f ? bmax / (kFp8E4m3Max * kFp4E2m1Max) : 1.0f;
  for (int p = 0; p < K; ++p) {
    for (int j = 0; j < N; ++j) {
      const long long e = static_cast<long long>(p) * N + j;
      const float x = B[e];
      c.int8Tensor.add(static_cast<double>(roundToInt8(x / int8Scale)) * int8Scale, x, ref);
      c.int8Column.add(static_cast<double>(colCodes[e]) * colScales[j], x, ref);
      c.fp8Tensor.add(static_cast<double>(fp8E4m3RoundTrip(x / fp8Scale)) * fp8Scale, x, ref);
    }
  }
  // Blocks run down the columns; elements are added column by column.
  auto blockMaxOf = [&](int j, int p0, int p1) {
    float m = 0.0f;
    for (int p = p0; p < p1; ++p) m = std::max(m, std::fabs(B[static_cast<long long>(p) * N + j]));
    return m;
  };
  for (int j = 0; j < N; ++j) {
    for (int p0 = 0; p0 < K; p0 += kMxBlock) {
      const int p1 = std::min(K, p0 + kMxBlock);
      const float blockMax = blockMaxOf(j, p0, p1);
      const float f32 = blockMax > 0.0f ? blockMax / kFp8E4m3Max : 1.0f;
      const float ocp = e8m0ScaleOcp(blockMax), up = e8m0ScaleRoundedUp(blockMax);
      for (int p = p0; p < p1; ++p) {
        const float x = B[static_cast<long long>(p) * N + j];
        c.fp8BlockF32.add(static_cast<double>(fp8E4m3RoundTrip(x / f32)) * f32, x, ref);
        c.mxfp8Ocp.add(static_cast<double>(fp8E4m3RoundTrip(x / ocp)) * ocp, x, ref);
        c.mxfp8Up.add(static_cast<double>(fp8E4m3RoundTrip(x / up)) * up, x, ref);
      }
    }
    for (int p0 = 0; p0 < K; p0 += kNvfp4Block) {
      const int p1 = std::min(K, p0 + kNvfp4Block);
      const float stored = fp8E4m3RoundTrip(blockMaxOf(j, p0, p1) / kFp4E2m1Max / tensorScale);
      const float scale = stored > 0.0f ? stored * tensorScale : 1.0f;
      for (int p = p0; p < p1; ++p) {
        const float x = B[static_cast<long long>(p) * N + j];
        c.nvfp4.add(static_cast<double>(fp4E2m1RoundTrip(x / scale)) * scale, x, ref);
      }
    }
  }
  return c;
}

// A printed census line with its label: a recorded transcript's line with the
// same label can be found and compared whole.
struct CensusLine {
  std::string label;
  std::string text;
};

inline CensusLine censusRow(const char* label, const RoundTrip& r) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-52s %10.3e %10.3e", label, r.maxErr, r.rms());
  return CensusLine{std::string("  ") + label, buf};
}

inline double zeroPointRmsRatio(const ActivationCensus& c) {
  return c.asymmetric.rms() > 0.0 ? c.symmetric.rms() / c.asymmetric.rms() : 0.0;
}
inline bool zeroPointGateHolds(const ActivationCensus& c) {
  return zeroPointRmsRatio(c) >= kZeroPointRmsGate;
}

inline std::vector<CensusLine> activationCensusLines(const ActivationCensus& c, int n) {
  char buf[200];
  std::vector<CensusLine> lines;
  std::snprintf(buf, sizeof buf,
                "activation census: the %dx%d A, %lld values; errors as fractions of "
                "max|A| = %.4f", n, n, c.count, c.maxAbs);
  lines.push_back({"activation census:", buf});
  std::snprintf(buf, sizeof buf, "  %-52s %10s %10s", "format", "max err", "rms err");
  lines.push_back({"  format", buf});
  lines.push_back(censusRow("INT8 symmetric (max|A|/127)", c.symmetric));
  std::snprintf(buf, sizeof buf, "INT8 asymmetric (span/255, zero point %d)", c.zeroPoint);
  lines.push_back(censusRow(buf, c.asymmetric));
  std::snprintf(buf, sizeof buf,
                "  zero-point gate: symmetric / asymmetric rms = %.3f times "
                "(theory 2; gate >= %.1f): %s", zeroPointRmsRatio(c),
                kZeroPointRmsGate, zeroPointGateHolds(c) ? "held" : "FAILED");
  lines.push_back({"  zero-point gate:", buf});
  return lines;
}

inline std::vector<CensusLine> storageCensusLines(const StorageCensus& c, int k, int n) {
  char buf[200];
  std::vector<CensusLine> lines;
  std::snprintf(buf, sizeof buf,
                "storage census: the %dx%d B, %lld values; errors as fractions of "
                "max|B| = %.4f", k, n, c.count, c.maxAbs);
  lines.push_back({"storage census:", buf});
  std::snprintf(buf, sizeof buf, "  %-52s %10s %10s", "format (scale)", "max err", "rms err");
  lines.push_back({"  format", buf});
  lines.push_back(censusRow("INT8, one scale (max|B|/127)", c.int8Tensor));
  lines.push_back(censusRow("INT8, per column (colMax/127)", c.int8Column));
  lines.push_back(censusRow("FP8 e4m3, one scale (max|B|/448)", c.fp8Tensor));
  lines.push_back(censusRow("FP8 e4m3, per 32 k, FP32 scale (blockMax/448)", c.fp8BlockF32));
  lines.push_back(censusRow("MXFP8 e4m3, per 32 k, E8M0 scale (OCP rule)", c.mxfp8Ocp));
  lines.push_back(censusRow("MXFP8 e4m3, per 32 k, E8M0 scale rounded up", c.mxfp8Up));
  lines.push_back(censusRow("NVFP4 e2m1, per 16 k, e4m3 scale x FP32 scale", c.nvfp4));
  return lines;
}

inline void printCensusLines(const std::vector<CensusLine>& lines) {
  for (const CensusLine& l : lines) std::printf("%s\n", l.text.c_str());
}

// =============================================================================
// The experiment
// =============================================================================

// snippet: capability-report
// What this card's tensor cores could do with this lesson's formats, keyed on
// 10*major + minor: the lowest compute capability from the course's 7.5 up
// that has each (INT8 tensor cores themselves date from 7.2). A device fact,
// so one [device] line. The program measures none of it.
struct CapabilityFloor {
  const char* label;
  int floor;
};
constexpr CapabilityFloor kCapabilityFloors[] = {
    {"INT8", 75},
    {"2:4 sparse", 80},
    {"FP8 e4m3/e5m2", 89},
    {"MXFP8/NVFP4 block-scaled", 100},
};

inline void printCapabilityReport(int major, int minor) {
  std::printf("[device] tensor cores of compute capability %d.%d:", major, minor);
  const char* separator = " ";
  for (const CapabilityFloor& f : kCapabilityFloors) {
    std::printf("%s%s %s", separator, f.label, 10 * major + minor >= f.floor ? "yes" : "no");
    separator = ", ";
  }
  std::printf("\nthis program uses none of them: its INT8 loop, 2:4-pruned B included, is integer\n"
              "multiply-adds (dp4a) on CUDA cores; its FP8, MX and NVFP4 figures are host arithmetic\n");
}
// end snippet

// Whether the L2 is larger than each case's fp32 working set (A, B and C): a
// footprint compared with the L2's size, nothing measured. On the recording's
// H200 (60 MiB) all three are.
inline void printL2Fit(double l2Bytes) {
  int fits = 0;
  for (int i = 0; i < kNumCases; ++i)
    if (12.0 * kCases[i] * kCases[i] <= l2Bytes) ++fits;
  std::printf("[device] the %.1f MiB L2 is larger than the fp32 A, B and C of %d of the %d "
              "cases\n", l2Bytes / (1024.0 * 1024.0), fits, kNumCases);
}

// The exercises, judged by what they compute before any GPU row runs:
// quantize-columns on the 256 case's B, int8-epilogue on a grid of sums and
// scales. A failure prints a GATE line, and the program ends with status 1.
inline bool exercisesHold() {
  const int n = kCases[0];
  std::vector<float> a(static_cast<size_t>(n) * n), b(a.size()), colMax(n), scales(n);
  std::vector<std::int8_t> codes(a.size());
  makeInputs(n, a.data(), b.data());
  columnMaxAbs(b.data(), n, n, colMax.data());
  quantizeColumns(b.data(), n, n, colMax.data(), scales.data(), codes.data());
  const Verdict columns = auditColumnCodes(b.data(), n, n, colMax.data(), scales.data(),
                                           codes.data());
  int equal = 0, rescales = 0;
  const Verdict epilogue = auditEpilogue(int8Epilogue, equal, rescales);
  std::printf("\nexercises, judged by what they compute:\n"
              "  quantize-columns on the %dx%d B: scales colMax/127 (1 for the all-zero\n"
              "  column %d), every code within half a step of its value (plus %.0e of a\n"
              "  step), halfway values on the even code, each column's largest at +-127: %s\n",
              n, n, kZeroColumn, kAuditStepSlack, columns.empty() ? "held" : "NOT YET");
  std::printf("  ties planted in column %d (scale %.10g) at", kTieColumn,
              static_cast<double>(kTieStep));
  for (float t : kTieSteps) std::printf(" %g", static_cast<double>(t));
  std::printf(" steps: codes");
  for (int t = 0; t < kNumTies; ++t)
    std::printf(" %d", codes[static_cast<size_t>(kTieFirstRow + t) * n + kTieColumn]);
  std::printf("\n  (their even neighbours:");
  for (float t : kTieSteps) std::printf(" %d", static_cast<int>(std::nearbyint(t)));
  std::printf(")\n");
  std::printf("  int8-epilogue: %d of %d rescales (zero points, column sums, scales)\n"
              "  equal an independent rescale bit for bit: %s\n",
              equal, rescales, epilogue.empty() ? "held" : "NOT YET");
  if (!columns.empty())
    std::fprintf(stderr, "GATE: exercise quantize-columns: %s\n", columns.c_str());
  if (!epilogue.empty())
    std::fprintf(stderr, "GATE: exercise int8-epilogue: %s\n", epilogue.c_str());
  if (columns.empty() && epilogue.empty()) return true;
  std::printf("what is left: each check marked NOT YET above; its GATE line on\n"
              "stderr names the first thing that part got wrong\n");
  return false;
}

// Whether B's rounding errors are independent, as the sqrtK diagnostic
// supposes: each column's errors under its per-column codes (B n x n), in
// steps, summed down the column; over the columns that hold values, the rms
// of those sums and the largest |sum|. Independent errors, even over +-half a
// step (variance 1/12), give an rms of sqrt(K/12) and a largest sum a few
// times that; errors that pile up one way in some column give many times that.
struct ColumnErrorSums {
  double rms = 0.0, largest = 0.0;
};
inline ColumnErrorSums columnErrorSums(const float* B, const std::int8_t* codes,
                                       const float* scales, const float* colMax, int n) {
  std::vector<double> sums(static_cast<size_t>(n), 0.0);
  for (long long e = 0; e < static_cast<long long>(n) * n; ++e) {
    const double step = scales[e % n];
    sums[e % n] += (codes[e] * step - B[e]) / step;
  }
  ColumnErrorSums r;
  double sq = 0.0;
  int columns = 0;
  for (int c = 0; c < n; ++c) {
    if (!(colMax[c] > 0.0f)) continue;
    sq += sums[c] * sums[c];
    r.largest = std::max(r.largest, std::fabs(sums[c]));
    ++columns;
  }
  r.rms = columns > 0 ? std::sqrt(sq / columns) : 0.0;
  return r;
}

// Everything a case's rows share: its size, its scales on the host and the
// bounds they are judged on.
struct CaseData {
  int n = 0;
  float amax = 0.0f, bmax = 0.0f;
  float aScale = 0.0f;  // symmetric A
  AsymmetricParams aAsym{1.0f, 0};
  float bScale = 0.0f;  // one scale for B
  std::vector<float> colMax, bScales;
  std::vector<std::int32_t> colSums;
  ColumnErrorSums colErrors;  // of the per-column codes
  double refMax = 0.0;
  CaseBounds bounds;
};

// Host memory, about 82 MiB at 2048: A, B and the reference whole, one rung's
// codes, B's codes transposed for the integer reference, and a slab of output.
struct HostBuffers {
  std::vector<float> a, b;
  std::vector<double> ref;
  std::vector<std::int8_t> qa, qb;
  std::vector<std::int16_t> qbT;
  std::vector<float> slab;
};

// One row's result, as printed.
struct RowResult {
  RowCheck check;
  TimingStats time{};
  bool timed = false;
};

inline std::string formatFailure(const char* kernel, const char* what, int n, long long index,
                                 const std::string& magnitude) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "GATE: %s %s in case %dx%dx%d at index %lld (row %lld, col %lld): %s",
                kernel, what, n, n, n, index, index / n, index % n, magnitude.c_str());
  return buf;
}

// Inputs, their scales and the bounds that depend only on them; the
// quantize-columns exercise audited again on this case's B (a gate); upload.
inline Verdict prepareCase(CaseData& cd, HostBuffers& h, const DeviceBuffers& d) {
  const int n = cd.n;
  const long long count = static_cast<long long>(n) * n;
  makeInputs(n, h.a.data(), h.b.data());
  cd.colMax.resize(n);
  cd.bScales.resize(n);
  cd.colSums.resize(n);
  columnMaxAbs(h.b.data(), n, n, cd.colMax.data());
  for (long long e = 0; e < count; ++e) cd.amax = std::max(cd.amax, std::fabs(h.a[e]));
  for (int c = 0; c < n; ++c) cd.bmax = std::max(cd.bmax, cd.colMax[c]);
  cd.aScale = symmetricScale(cd.amax);
  cd.aAsym = asymmetricParams(h.a.data(), count);
  cd.bScale = symmetricScale(cd.bmax);
  quantizeColumns(h.b.data(), n, n, cd.colMax.data(), cd.bScales.data(), h.qb.data());
  const Verdict audit = auditColumnCodes(h.b.data(), n, n, cd.colMax.data(),
                                         cd.bScales.data(), h.qb.data());
  if (!audit.empty()) return "GATE: exercise quantize-columns in case " + std::to_string(n) +
                             ": " + audit;
  columnCodeSums(h.qb.data(), n, n, cd.colSums.data());
  cd.colErrors = columnErrorSums(h.b.data(), h.qb.data(), cd.bScales.data(), cd.colMax.data(), n);
  cd.bounds.col.resize(n);
  cd.bounds.colSqrt.resize(n);
  for (int c = 0; c < n; ++c) {
    cd.bounds.col[c] = columnBound(n, cd.amax, cd.colMax[c]);
    cd.bounds.colSqrt[c] = columnBoundSqrtK(n, cd.amax, cd.colMax[c]);
  }
  const size_t floatBytes = static_cast<size_t>(count) * sizeof(float);
  CUDA_CHECK(cudaMemcpy(d.a, h.a.data(), floatBytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d.b, h.b.data(), floatBytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d.bScales, cd.bScales.data(), n * sizeof(float),
                        cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d.colSums, cd.colSums.data(), n * sizeof(std::int32_t),
                        cudaMemcpyHostToDevice));
  return Verdict();
}

// The censuses, once, on the largest case's inputs (between the last two
// tables), and the zero point's gate on the activation census.
inline Verdict runCensuses(const CaseData& cd, const HostBuffers& h) {
  const int n = cd.n;
  const ActivationCensus ac = activationCensus(h.a.data(), static_cast<long long>(n) * n);
  printCensusLines(activationCensusLines(ac, n));
  printCensusLines(storageCensusLines(
      storageCensus(h.b.data(), n, n, cd.colMax.data(), cd.bScales.data(), h.qb.data()), n, n));
  std::printf("\n");
  if (zeroPointGateHolds(ac)) return Verdict();
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "GATE: activation census (the %dx%d A): symmetric rms %.3e is only %.3f "
                "times the asymmetric rms %.3e; the zero point must show at least %.1f "
                "times", n, n, ac.symmetric.rms(), zeroPointRmsRatio(ac), ac.asymmetric.rms(),
                kZeroPointRmsGate);
  return buf;
}

// The judge of every row is the double product of the unrounded FP32 inputs,
// never of the dequantized ones (q*s): a reference built from those would
// contain the very rounding this lesson measures, and the comparison would
// see only the epilogue's few roundings; a scale a hundred times too coarse
// would look exact. The integer reference over the same codes answers the other
// question: did the GPU add those codes exactly?
inline void computeReference(CaseData& cd, HostBuffers& h) {
  const int n = cd.n;
  referenceGemm(h.a.data(), h.b.data(), h.ref.data(), n, n, n);
  for (long long e = 0; e < static_cast<long long>(n) * n; ++e)
    cd.refMax = std::max(cd.refMax, std::fabs(h.ref[e]));
  cd.bounds.f32 = fp32Tolerance(n, cd.refMax);
}

inline void printCaseHeader(const CaseData& cd) {
  const int n = cd.n;
  std::printf("case %dx%dx%d: max |reference| %.4f\n", n, n, n, cd.refMax);
  std::printf("  A codes: symmetric scale %.3e; asymmetric scale %.3e, zero point %d\n",
              static_cast<double>(cd.aScale), static_cast<double>(cd.aAsym.scale),
              cd.aAsym.zeroPoint);
  int lo = -1, hi = -1, zeroColumns = 0, firstZero = -1;  // the true extremes
  for (int c = 0; c < n; ++c) {
    if (!(cd.colMax[c] > 0.0f)) {  // all zero: scale 1, left out of the extremes
      if (zeroColumns++ == 0) firstZero = c;
      continue;
    }
    if (lo < 0 || cd.bScales[c] < cd.bScales[lo]) lo = c;
    if (hi < 0 || cd.bScales[c] > cd.bScales[hi]) hi = c;
  }
  if (lo < 0) lo = hi = 0;  // every column zero: no extremes to show
  std::printf("  B codes: one scale %.3e; per-column scales from %.3e (column %d)\n"
              "           to %.3e (column %d), %.2f times apart; all-zero columns: %d",
              static_cast<double>(cd.bScale), static_cast<double>(cd.bScales[lo]), lo,
              static_cast<double>(cd.bScales[hi]), hi,
              static_cast<double>(cd.bScales[hi]) / cd.bScales[lo], zeroColumns);
  if (firstZero >= 0)
    std::printf(" (column %d, scale %g)", firstZero, static_cast<double>(cd.bScales[firstZero]));
  std::printf("\n  FP32 gate: |err| <= atol + rtol*|ref|, rtol %.3e, atol %.3e\n"
              "  INT8 column gate (per-column rows): |err| <= %.1f * K * max|A| * colMax_c "
              "/ 127\n", cd.bounds.f32.rtol, cd.bounds.f32.atol, kGateSlack);
  std::printf("  %-18s %9s  %9s  %9s %10s %5s %10s %6s\n", "kernel", "max err", "rms err",
              "gate frac", "sqrtK frac", "exact", "time", "vs f32");
}

// This row's rung: quantize (or prune) on the host, upload, transpose for the
// integer reference. The rows run in table order: the zero-point rung keeps
// rung 2's B codes (still in h.qb and h.qbT), and the pruned row quantizes B
// per column again, then prunes those codes.
inline Int8Scales prepareRung(Row row, const CaseData& cd, HostBuffers& h,
                              const DeviceBuffers& d) {
  const int n = cd.n;
  const long long count = static_cast<long long>(n) * n;
  Int8Scales s{cd.aScale, 0, nullptr, cd.bScale, nullptr};
  if (row == kRowZeroPoint) {
    quantizeAsymmetric(h.a.data(), count, cd.aAsym, h.qa.data());
    s = Int8Scales{cd.aAsym.scale, cd.aAsym.zeroPoint, cd.colSums.data(), 0.0f,
                   cd.bScales.data()};
  } else {
    quantizeSymmetric(h.a.data(), count, cd.aScale, h.qa.data());
  }
  if (row == kRowOneScale) {
    quantizeSymmetric(h.b.data(), count, cd.bScale, h.qb.data());
  } else if (row == kRowPerColumn || row == kRowPruned) {
    std::vector<float> scales(n);
    quantizeColumns(h.b.data(), n, n, cd.colMax.data(), scales.data(), h.qb.data());
    if (row == kRowPruned) pruneTwoOfFour(h.b.data(), n, n, h.qb.data());
    s.bScales = cd.bScales.data();
  }
  CUDA_CHECK(cudaMemcpy(d.qa, h.qa.data(), count, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d.qb, h.qb.data(), count, cudaMemcpyHostToDevice));
  if (row != kRowZeroPoint) transposeCodes(h.qb.data(), n, n, h.qbT.data());
  return s;
}

// Downloads one row's output slab by slab; checks every element against the
// reference and, for an INT8 row (exactScales not null), against the integer
// reference bit for bit.
inline RowCheck checkOutput(const float* dOut, const CaseData& cd, HostBuffers& h,
                            const Int8Scales* exactScales) {
  RowCheck rc;
  const int n = cd.n;
  for (int r0 = 0; r0 < n; r0 += kSlabRows) {
    const int rows = std::min(kSlabRows, n - r0);
    CUDA_CHECK(cudaMemcpy(h.slab.data(), dOut + static_cast<long long>(r0) * n,
                          static_cast<size_t>(rows) * n * sizeof(float),
                          cudaMemcpyDeviceToHost));
    accumulateErrors(rc, h.slab.data(), h.ref.data(), r0, rows, n, cd.bounds);
    if (exactScales)
      exactCheckRows(h.qa.data(), h.qbT.data(), r0, rows, n, n, *exactScales, h.slab.data(),
                     rc.exact);
  }
  return rc;
}

// Which gates a row answers to, and the stderr line of the first it failed
// (empty when all held). Every row fails on NaN or infinity; every INT8 row on
// any bit that differs from the integer reference; fp32 on its own relative
// rule; per-column and per-col + zp on the column bound. The one-scale row is
// the bad example and the pruned row is an accuracy demo: neither has an
// accuracy gate.
inline Verdict rowGateFailure(Row row, const RowCheck& rc, int n) {
  char mag[256];
  const char* name = kRowNames[row];
  if (rc.nonFinite > 0) {
    std::snprintf(mag, sizeof mag, "value %g, %lld non-finite elements in all",
                  static_cast<double>(rc.nonFiniteValue), rc.nonFinite);
    return formatFailure(name, "wrote a NaN or an infinity", n, rc.nonFiniteIndex, mag);
  }
  if (row != kRowF32 && rc.exact.mismatches > 0) {
    std::snprintf(mag, sizeof mag,
                  "GPU %.9e, host %.9e, |difference| %.3e; %lld of %lld elements differ",
                  static_cast<double>(rc.exact.gpu), static_cast<double>(rc.exact.host),
                  std::fabs(static_cast<double>(rc.exact.gpu) - rc.exact.host),
                  rc.exact.mismatches, rc.exact.checked);
    return formatFailure(name, "is not bit-exact against the host integer reference", n,
                         rc.exact.firstIndex, mag);
  }
  if (row == kRowF32 && rc.relFailIndex >= 0) {
    std::snprintf(mag, sizeof mag, "|err| %.3e > bound %.3e (%.4f of it)", rc.relFailErr,
                  rc.relFailBound, rc.relFailErr / rc.relFailBound);
    return formatFailure(name, "failed the FP32 gate", n, rc.relFailIndex, mag);
  }
  if ((row == kRowPerColumn || row == kRowZeroPoint) && rc.colFailIndex >= 0) {
    std::snprintf(mag, sizeof mag, "|err| %.3e > column bound %.3e (%.4f of it)",
                  rc.colFailErr, rc.colFailBound, rc.colFailErr / rc.colFailBound);
    return formatFailure(name, "failed the INT8 column gate", n, rc.colFailIndex, mag);
  }
  return Verdict();
}

// A table row (the page explains the columns). fp32 tiled shows the fraction
// of its own FP32 gate (marked *), not of the INT8 bound that does not apply
// to it; the pruned row has no bound (pruning is not rounding) and no time.
inline void printRow(Row row, const RowResult& r, const RowResult& f32) {
  const RowCheck& c = r.check;
  const bool isF32 = row == kRowF32, pruned = row == kRowPruned;
  char maxErr[32], rms[32], gate[32] = "n/a", sqrtK[32] = "n/a", time[32] = "not timed",
      speed[32] = "n/a";
  std::snprintf(maxErr, sizeof maxErr, "%.3e", c.maxErr);
  std::snprintf(rms, sizeof rms, "%.3e", c.rms());
  if (!pruned) std::snprintf(gate, sizeof gate, "%.3f%s", isF32 ? c.relFrac : c.colFrac,
                             isF32 ? "*" : "");
  if (!pruned && !isF32) std::snprintf(sqrtK, sizeof sqrtK, "%.3f", c.sqrtFrac);
  if (r.timed) {
    std::snprintf(time, sizeof time, "%.4f ms", r.time.median_ms);
    std::snprintf(speed, sizeof speed, "%.2fx", f32.time.median_ms / r.time.median_ms);
  }
  std::printf("  %-18s %9s  %9s  %9s %10s %5s %10s %6s\n", kRowNames[row], maxErr, rms, gate,
              sqrtK, isF32 ? "n/a" : "yes", time, speed);
}

// One case's line in the summary (printSummary says what each number is).
struct CaseSummary {
  int n = 0;
  double oneColFrac = 0.0, oneSqrtFrac = 0.0, colSqrtFrac = 0.0;
  double gateRatio = 0.0, rmsRatio = 0.0;
  double colSumRms = 0.0, colSumLargest = 0.0;  // in steps
};

inline CaseSummary summarizeCase(const CaseData& cd, const RowResult rows[kNumRows]) {
  const RowCheck& one = rows[kRowOneScale].check;
  const RowCheck& col = rows[kRowPerColumn].check;
  const RowCheck& zp = rows[kRowZeroPoint].check;
  CaseSummary s;
  s.n = cd.n;
  s.oneColFrac = one.colFrac;
  s.oneSqrtFrac = one.sqrtFrac;
  s.colSqrtFrac = col.sqrtFrac;
  s.gateRatio = one.colFrac / col.colFrac;
  s.rmsRatio = zp.rms() > 0.0 ? col.rms() / zp.rms() : 0.0;
  s.colSumRms = cd.colErrors.rms;
  s.colSumLargest = cd.colErrors.largest;
  return s;
}

// The cases side by side: the bad row's standing against the gate it is not
// held to and against the sqrtK diagnostic, per-column's sqrtK standing, the
// ladder's two gains, and B's column error sums (see columnErrorSums).
inline void printSummary(const CaseSummary* s, int cases) {
  auto line = [&](const char* label, const char* format, double CaseSummary::*field) {
    std::printf("  %-56s", label);
    for (int i = 0; i < cases; ++i) std::printf(format, s[i].*field);
    std::printf("\n");
  };
  std::printf("summary by case %*s", 42, "K =");
  for (int i = 0; i < cases; ++i) std::printf("%9d", s[i].n);
  std::printf("\n");
  line("one scale, not gated: fraction of the K-linear bound", "%9.3f",
       &CaseSummary::oneColFrac);
  line("one scale: fraction of the sqrtK diagnostic", "%9.3f", &CaseSummary::oneSqrtFrac);
  line("per-column: fraction of the sqrtK diagnostic", "%9.3f", &CaseSummary::colSqrtFrac);
  line("worst gate frac, one scale over per-column (times)", "%9.2f",
       &CaseSummary::gateRatio);
  line("rms err, per-column over per-col + zp (times)", "%9.3f", &CaseSummary::rmsRatio);
  line("B's rounding errors summed down a column: rms (steps)", "%9.2f",
       &CaseSummary::colSumRms);
  std::printf("  %-56s", "independent errors would give sqrt(K/12) (steps)");
  for (int i = 0; i < cases; ++i) std::printf("%9.2f", std::sqrt(s[i].n / 12.0));
  std::printf("\n  %-56s", "the largest |column sum|, over sqrt(K/12)");
  for (int i = 0; i < cases; ++i)
    std::printf("%9.2f", s[i].colSumLargest / std::sqrt(s[i].n / 12.0));
  std::printf("\n\n");
}

// The comparative claim of the ladder, every case: per-column scales must
// beat one scale on the worst gate fraction, with no margin.
inline Verdict ladderGate(const RowResult rows[kNumRows], int n) {
  const RowCheck& one = rows[kRowOneScale].check;
  const RowCheck& col = rows[kRowPerColumn].check;
  if (col.colFrac < one.colFrac) return Verdict();
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "GATE: int8 per-column's worst gate fraction %.4f (index %lld, row %lld, "
                "col %lld) is not below int8 one scale's %.4f (index %lld) in case "
                "%dx%dx%d", col.colFrac, col.colFracIndex, col.colFracIndex / n,
                col.colFracIndex % n, one.colFrac, one.colFracIndex, n, n, n);
  return buf;
}

// One case: inputs, censuses (largest case only), reference, header, then each
// row launched on a poisoned output, checked against every gate, and only then
// timed (the pruned row is never timed: it measures accuracy only).
inline Verdict runCase(int n, HostBuffers& h, const DeviceBuffers& d, CaseSummary& summary,
                       const RunPlan& plan) {
  CaseData cd;
  cd.n = n;
  Verdict failure = prepareCase(cd, h, d);
  if (failure.empty() && n == kMaxN) failure = runCensuses(cd, h);
  if (!failure.empty()) return failure;
  computeReference(cd, h);
  printCaseHeader(cd);
  RowResult rows[kNumRows];
  for (int ri = 0; ri < kNumRows; ++ri) {
    const Row row = static_cast<Row>(ri);
    const Int8Scales s = row == kRowF32 ? Int8Scales{} : prepareRung(row, cd, h, d);
    CUDA_CHECK(cudaMemset(d.out, kPoisonByte, static_cast<size_t>(n) * n * sizeof(float)));
    launchRow(row, d, s, n);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    rows[ri].check = checkOutput(d.out, cd, h, row == kRowF32 ? nullptr : &s);
    failure = rowGateFailure(row, rows[ri].check, n);
    if (!failure.empty()) return failure;
    if (row != kRowPruned) {
      rows[ri].time = timeKernel([&] { launchRow(row, d, s, n); }, plan.warmups, plan.timedRuns);
      rows[ri].timed = true;
    }
    printRow(row, rows[ri], rows[kRowF32]);
  }
  std::printf("\n");
  failure = ladderGate(rows, n);
  if (failure.empty()) summary = summarizeCase(cd, rows);
  return failure;
}

// Host memory, about 82 MiB at 2048 (see HostBuffers), and the device's.
inline void allocateBuffers(HostBuffers& h, DeviceBuffers& d) {
  const size_t maxElems = static_cast<size_t>(kMaxN) * kMaxN;
  h.a = hostVector<float>(maxElems, "A");
  h.b = hostVector<float>(maxElems, "B");
  h.ref = hostVector<double>(maxElems, "the reference");
  h.qa = hostVector<std::int8_t>(maxElems, "A's codes");
  h.qb = hostVector<std::int8_t>(maxElems, "B's codes");
  h.qbT = hostVector<std::int16_t>(1LL * paddedColumns(kMaxN) * kMaxN, "B's codes transposed");
  h.slab = hostVector<float>(1LL * kSlabRows * kMaxN, "the output slab");
  CUDA_CHECK(cudaMalloc(&d.a, maxElems * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d.b, maxElems * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d.qa, maxElems));
  CUDA_CHECK(cudaMalloc(&d.qb, maxElems));
  CUDA_CHECK(cudaMalloc(&d.bScales, kMaxN * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d.colSums, kMaxN * sizeof(std::int32_t)));
  CUDA_CHECK(cudaMalloc(&d.out, maxElems * sizeof(float)));
}

inline void freeDeviceBuffers(DeviceBuffers& d) {
  CUDA_CHECK(cudaFree(d.a));
  CUDA_CHECK(cudaFree(d.b));
  CUDA_CHECK(cudaFree(d.qa));
  CUDA_CHECK(cudaFree(d.qb));
  CUDA_CHECK(cudaFree(d.bScales));
  CUDA_CHECK(cudaFree(d.colSums));
  CUDA_CHECK(cudaFree(d.out));
}

// The only option: --cases N runs the first N cases (the Sanitize: line's
// run), each kernel timed by one launch after no warm-up: a sanitizer checks what
// launches do, and every launch adds to its time. Anything else: exit 2.
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
  const int cases = plan.cases;
  const cudaDeviceProp prop = requireCudaDevice();
  std::printf("GPU: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
  std::printf("Day 98: INT8 sums are exact, so rounding the inputs decides the error (Day\n"
              "16's 16x16 tile: an INT8 scaling ladder, a 2:4-pruned B, FP8/MX/NVFP4 storage "
              "censuses)\n");
  printCapabilityReport(prop.major, prop.minor);
  printL2Fit(static_cast<double>(prop.l2CacheSize));
  if (!exercisesHold()) return EXIT_FAILURE;
  if (plan.timedRuns != kTimedRuns)
    std::printf("time: one launch, no warm-up (--cases: a run for compute-sanitizer; the "
                "times are not measurements)\n");
  std::printf("\n");

  HostBuffers h;
  DeviceBuffers d;
  allocateBuffers(h, d);
  CaseSummary summary[kNumCases];
  Verdict failure;
  for (int ci = 0; ci < cases && failure.empty(); ++ci)
    failure = runCase(kCases[ci], h, d, summary[ci], plan);
  freeDeviceBuffers(d);
  if (!failure.empty()) {
    std::fprintf(stderr, "%s\n", failure.c_str());
    return EXIT_FAILURE;
  }
  printSummary(summary, cases);
  std::printf("all %d cases passed their gates: fp32 within its rule; every int8 row "
              "bit-exact;\nper-column and per-col + zp within the column bound; per-column "
              "below one scale;\n", cases);
  if (cases == kNumCases)  // the census runs on the largest case only
    std::printf("the zero point's census gain at least %.1f times\n", kZeroPointRmsGate);
  else
    std::printf("the zero point's census (on the %d case) not run with --cases %d\n",
                kCases[kNumCases - 1], cases);
  return EXIT_SUCCESS;
}

// =============================================================================
// Machinery: skip it on a first read. This lesson's judges (the two audits,
// the host integer reference, the walk over a row's errors), then the toolkit.
// =============================================================================

// The rescale the exactness gate expects, written apart from int8Epilogue so
// that a slip in one cannot hide in the other. v in 64 bits (exact); double(v)
// is exact and float(double(v)) is the one rounding of an int -> float
// conversion; a float x float product is exact in double, so float(x * y in
// double) is that product rounded once, as __fmul_rn rounds it.
inline float rescaleReference(std::int32_t acc, std::int32_t zeroPoint, std::int32_t colSum,
                              float aScale, float bScale) {
  const long long v = static_cast<long long>(acc) - static_cast<long long>(zeroPoint) * colSum;
  const float vf = static_cast<float>(static_cast<double>(v));
  const float once = static_cast<float>(static_cast<double>(vf) * static_cast<double>(aScale));
  return static_cast<float>(static_cast<double>(once) * static_cast<double>(bScale));
}

inline bool sameBits(float x, float y) {
  std::uint32_t bx, by;
  std::memcpy(&bx, &x, sizeof bx);
  std::memcpy(&by, &y, sizeof by);
  return bx == by;
}

// The int8-epilogue exercise, judged by what it returns: over a grid of sums
// (some past 2^24, where int -> float rounds), zero points, column sums and
// scales, epilogue (int8Epilogue in the lesson) must equal rescaleReference
// bit for bit. equal counts the rescales that match, total those compared;
// the verdict names the first that differs.
inline Verdict auditEpilogue(EpilogueFn epilogue, int& equal, int& total) {
  const std::int32_t accs[] = {0, 1, -1, 4096, -777777, 16777217, -33554435, 66584575};
  const std::int32_t zeroPoints[] = {0, -128, 127, 3};
  const std::int32_t colSums[] = {0, 1, -7, 4321, -32512};
  const float aScales[] = {1.0f / 127.0f, 3.9215689e-3f};
  const float bScales[] = {6.2992126e-2f, 5.927e-4f, 1.0f / 3.0f, 1.0f};
  equal = total = 0;
  Verdict first;
  for (std::int32_t acc : accs)
    for (std::int32_t z : zeroPoints)
      for (std::int32_t cs : colSums)
        for (float as : aScales)
          for (float bs : bScales) {
            ++total;
            const float got = epilogue(acc, z, cs, as, bs);
            const float want = rescaleReference(acc, z, cs, as, bs);
            if (sameBits(got, want)) ++equal;
            if (sameBits(got, want) || !first.empty()) continue;
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "int8Epilogue(%d, %d, %d, %.7e, %.7e) = %.9e, want %.9e "
                          "(the contract's rescale)",
                          acc, z, cs, static_cast<double>(as), static_cast<double>(bs),
                          static_cast<double>(got), static_cast<double>(want));
            first = buf;
          }
  return first;
}

// The quantize-columns exercise, judged by its codes and scales alone, with
// none of the quantizer's code: for every column c of B (K x N),
// - scales[c] is colMax[c]/127 in float (1 for an all-zero column);
// - every code q rebuilds a value q*scales[c] within half a step of B (plus
//   kAuditStepSlack of a step, for the float rounding of B/scale), and is in
//   [-127, 127];
// - a value exactly halfway between two codes (q*scale - B = +-scale/2, which
//   double computes exactly) has the even one;
// - the column's largest magnitude sits at code +127 or -127.
// A quantizer that truncates, divides by another code maximum, takes a
// neighbour's scale, rounds ties away from zero, multiplies by 1/scale or
// divides an all-zero column by 0 breaks one of these on the lesson's B.
inline Verdict auditColumnCodes(const float* B, int K, int N, const float* colMax,
                                const float* scales, const std::int8_t* codes) {
  char buf[256];
  for (int c = 0; c < N; ++c) {
    const float want = colMax[c] > 0.0f ? colMax[c] / 127.0f : 1.0f;
    if (!sameBits(scales[c], want)) {
      std::snprintf(buf, sizeof buf, "column %d: scale %.7e, want %s = %.7e", c,
                    static_cast<double>(scales[c]),
                    colMax[c] > 0.0f ? "colMax/127" : "1 (all zero)", static_cast<double>(want));
      return buf;
    }
  }
  std::vector<int> top(static_cast<size_t>(N), 0);  // row of each column's max |B|
  for (int p = 0; p < K; ++p) {
    for (int c = 0; c < N; ++c) {
      const long long e = static_cast<long long>(p) * N + c;
      const double s = scales[c], steps = (codes[e] * s - B[e]) / s;
      if (std::fabs(steps) > 0.5 + kAuditStepSlack || codes[e] < -kInt8Max) {
        std::snprintf(buf, sizeof buf,
                      "row %d, column %d: code %d rebuilds %.6e, %.3f steps from the "
                      "value %.6e (at most 0.5)", p, c, codes[e], codes[e] * s, steps,
                      static_cast<double>(B[e]));
        return buf;
      }
      if (std::fabs(steps) == 0.5 && codes[e] % 2 != 0) {
        const int other = codes[e] - static_cast<int>(2.0 * steps);  // the even neighbour
        std::snprintf(buf, sizeof buf,
                      "row %d, column %d: the value %.6e lies exactly halfway between "
                      "codes %d and %d, and got the odd one (a tie goes to the even code)",
                      p, c, static_cast<double>(B[e]), codes[e], other);
        return buf;
      }
      if (std::fabs(B[e]) > std::fabs(B[static_cast<long long>(top[c]) * N + c])) top[c] = p;
    }
  }
  for (int c = 0; c < N; ++c) {
    const std::int8_t q = codes[static_cast<long long>(top[c]) * N + c];
    if (colMax[c] > 0.0f && q != kInt8Max && q != -kInt8Max) {
      std::snprintf(buf, sizeof buf,
                    "column %d: its largest magnitude (row %d) has code %d, want +-127", c,
                    top[c], q);
      return buf;
    }
  }
  return Verdict();
}

// The host integer reference, the exactness gate's judge: each INT8 output
// must equal, bit for bit, rescaleReference(the exact int32 sum over the same
// codes), for every element: 4 rows x (256^3 + 1024^3 + 2048^3) = 3.9e10
// multiply-adds, no sampling. B's codes are transposed once per rung into
// int16 (qbT, N x K), so both operands run along k; a 2 x 4 tile of C keeps
// eight int32 sums while k streams, a loop written for the compiler to
// vectorize (an AVX2 build is picked at run time).
namespace int8_reference_detail {

constexpr int kRows = 2;  // rows of A per tile
constexpr int kCols = 4;  // rows of qbT (columns of C) per tile

// out[r*4 + c] = sum over k of a_r[k] * bt[c*K + k], exactly.
__attribute__((always_inline)) inline void dotTileBody(int K, const std::int8_t* a0,
                                                       const std::int8_t* a1,
                                                       const std::int16_t* bt,
                                                       std::int32_t* out) {
  const std::int8_t* a[kRows] = {a0, a1};
  std::int32_t s[kRows][kCols] = {};
  for (int k = 0; k < K; ++k)
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c)
        s[r][c] += static_cast<std::int32_t>(a[r][k]) *
                   static_cast<std::int32_t>(bt[static_cast<long long>(c) * K + k]);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) out[r * kCols + c] = s[r][c];
}

inline void dotTileBaseline(int K, const std::int8_t* a0, const std::int8_t* a1,
                            const std::int16_t* bt, std::int32_t* out) {
  dotTileBody(K, a0, a1, bt, out);
}
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__CUDA_ARCH__)
#define INT8_REFERENCE_HAVE_AVX2 1
__attribute__((target("avx2"))) inline void dotTileAvx2(int K, const std::int8_t* a0,
                                                        const std::int8_t* a1,
                                                        const std::int16_t* bt,
                                                        std::int32_t* out) {
  dotTileBody(K, a0, a1, bt, out);
}
#endif

typedef void (*DotTileFn)(int, const std::int8_t*, const std::int8_t*,
                          const std::int16_t*, std::int32_t*);

inline DotTileFn pickDotTile() {
#ifdef INT8_REFERENCE_HAVE_AVX2
  if (__builtin_cpu_supports("avx2")) return dotTileAvx2;
#endif
  return dotTileBaseline;
}

}  // namespace int8_reference_detail

// Rows of qbT a transposed code matrix needs: N rounded up to whole tiles
// (the extra rows are zeros).
inline int paddedColumns(int N) {
  using namespace int8_reference_detail;
  return (N + kCols - 1) / kCols * kCols;
}

// qbT[c*K + p] = codes[p*N + c], widened to int16; rows N .. paddedColumns(N)-1
// are zero.
inline void transposeCodes(const std::int8_t* codes, int K, int N, std::int16_t* qbT) {
  const long long padded = paddedColumns(N);
  std::fill(qbT + static_cast<long long>(N) * K, qbT + padded * K, std::int16_t{0});
  constexpr int kBlock = 64;  // 64 x 64 blocks: both sides stay in cache
  for (int p0 = 0; p0 < K; p0 += kBlock)
    for (int c0 = 0; c0 < N; c0 += kBlock)
      for (int c = c0; c < std::min(N, c0 + kBlock); ++c)
        for (int p = p0; p < std::min(K, p0 + kBlock); ++p)
          qbT[static_cast<long long>(c) * K + p] = codes[static_cast<long long>(p) * N + c];
}

// Rows [r0, r0 + rows) of one INT8 output: got holds them (row stride N), qa
// is A's codes (M x K), qbT B's codes transposed (see transposeCodes), s the
// scales on the host. Every element's exact sum goes through rescaleReference
// and must match got's bits; a NaN or an infinity never does.
inline void exactCheckRows(const std::int8_t* qa, const std::int16_t* qbT, int r0, int rows,
                           int N, int K, const Int8Scales& s, const float* got,
                           ExactResult& r) {
  using namespace int8_reference_detail;
  const DotTileFn tile = pickDotTile();
  std::int32_t sums[kRows * kCols];
  for (int j0 = 0; j0 < N; j0 += kCols) {
    const std::int16_t* bt = qbT + static_cast<long long>(j0) * K;
    for (int i = 0; i < rows; i += kRows) {
      const std::int8_t* a0 = qa + static_cast<long long>(r0 + i) * K;
      const std::int8_t* a1 = (i + 1 < rows) ? a0 + K : a0;  // odd tail: row again
      tile(K, a0, a1, bt, sums);
      for (int rr = 0; rr < kRows && i + rr < rows; ++rr) {
        for (int cc = 0; cc < kCols && j0 + cc < N; ++cc) {
          const int j = j0 + cc;
          const std::int32_t z = s.colSums ? s.zeroPoint : 0;
          const std::int32_t colSum = s.colSums ? s.colSums[j] : 0;
          const float bScale = s.bScales ? s.bScales[j] : s.bScale;
          const float want = rescaleReference(sums[rr * kCols + cc], z, colSum, s.aScale, bScale);
          const float have = got[static_cast<long long>(i + rr) * N + j];
          ++r.checked;
          if (!sameBits(have, want) || !std::isfinite(have)) {
            const long long index = static_cast<long long>(r0 + i + rr) * N + j;
            if (r.firstIndex < 0 || index < r.firstIndex) {
              r.firstIndex = index;
              r.gpu = have;
              r.host = want;
            }
            ++r.mismatches;
          }
        }
      }
    }
  }
}

// Elements [r0*N, (r0 + rows)*N) of an output against the reference.
inline void accumulateErrors(RowCheck& rc, const float* got, const double* ref, int r0,
                             int rows, int N, const CaseBounds& b) {
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < N; ++j) {
      const long long index = static_cast<long long>(r0 + i) * N + j;
      const float g = got[static_cast<long long>(i) * N + j];
      ++rc.count;
      if (!std::isfinite(g)) {
        if (rc.nonFinite++ == 0) {
          rc.nonFiniteIndex = index;
          rc.nonFiniteValue = g;
        }
        continue;
      }
      const double err = std::fabs(static_cast<double>(g) - ref[index]);
      rc.maxErr = std::max(rc.maxErr, err);
      rc.sumSq += err * err;
      const double colFrac = gateFraction(err, b.col[j]);
      const double sqrtFrac = gateFraction(err, b.colSqrt[j]);
      const double relBound = b.f32.atol + b.f32.rtol * std::fabs(ref[index]);
      if (colFrac > rc.colFrac) {
        rc.colFrac = colFrac;
        rc.colFracIndex = index;
      }
      if (sqrtFrac > rc.sqrtFrac) {
        rc.sqrtFrac = sqrtFrac;
        rc.sqrtFracIndex = index;
      }
      rc.relFrac = std::max(rc.relFrac, gateFraction(err, relBound));
      if (!(err <= b.col[j]) && rc.colFailIndex < 0) {
        rc.colFailIndex = index;
        rc.colFailErr = err;
        rc.colFailBound = b.col[j];
      }
      if (!(err <= relBound) && rc.relFailIndex < 0) {
        rc.relFailIndex = index;
        rc.relFailErr = err;
        rc.relFailBound = relBound;
      }
    }
  }
}

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
