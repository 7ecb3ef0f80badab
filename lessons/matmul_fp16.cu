// SPDX-License-Identifier: MIT
// Day 71 - matmul_fp16: storage precision vs accumulator precision.
// Day 16's 16x16 tiled matmul runs three ways on the same inputs: all FP32;
// FP16 storage with an FP32 accumulator; FP16 storage with an FP16
// accumulator. Each result is judged against a double reference built from the
// unrounded FP32 inputs, with Day 66's K-scaled tolerance, so the half paths
// pay for the rounding of their stored inputs. Storage rounding costs a small,
// fixed error; a half accumulator's error grows with K. No tensor cores: those
// arrive on Day 72 (the format report only shows what this card could run).
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o matmul_fp16 matmul_fp16.cu
// Run:   ./matmul_fp16
// Sanitize: ./matmul_fp16 --cases 1
//
// The build line targets the T4 that Compiler Explorer runs; it also embeds
// compute_75 PTX, which the driver compiles for any newer card (on an H200 that
// prints the same digits as an sm_90 build). On your own card, -arch=native.
// Exit status: 0 every gate held; 1 a gate or a CUDA call failed, or a kernel
// is still to be written; 77 no usable CUDA device.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

// ---------------------------------------------------------------- constants

constexpr int kTile = 16;
constexpr int kThreadsPerBlock = kTile * kTile;
static_assert(kThreadsPerBlock == 256,
              "one thread per element of a 16x16 tile: 256 threads, 8 warps");
static_assert(kThreadsPerBlock % 32 == 0,
              "whole warps only: a partial warp would idle lanes every step");

// Square cases M = N = K, in one allocation per buffer sized for the largest.
constexpr int kNumCases = 3;
constexpr int kCases[kNumCases] = {256, 1024, 2048};
constexpr int kMaxN = 2048;
static_assert(kCases[0] < kCases[1] && kCases[1] < kCases[2] &&
                  kCases[kNumCases - 1] == kMaxN,
              "cases ascend and the last is the largest: buffers are "
              "allocated once, for kMaxN");
static_assert(kCases[0] % kTile == 0 && kCases[1] % kTile == 0 &&
                  kCases[2] % kTile == 0,
              "every case is whole tiles, so the three kernels are timed on "
              "the same full tiles (the guards still handle any size)");
// A known blind spot: no case here reaches the kernels' bounds guards, so an
// off-by-one in a guard passes every gate of this lesson; the final project's
// odd sizes (1025 x 1023 x 1000) are where the guards are tested.
static_assert(static_cast<long long>(kMaxN) * kMaxN <= 2147483647LL,
              "the kernels index with int: kMaxN^2 must fit in 31 bits");
static_assert(2 * kTile * kTile * sizeof(float) <= 48 * 1024,
              "two FP32 tiles (2 KiB) must fit the 48 KiB of static shared "
              "memory that every CUDA device gives one block");

// Inputs (see inputA, inputB): A[e] = ((e mod 97) - 48) * 0.013f,
//                          B[e] = ((e mod 89) - 44) * 0.017f.
constexpr int kPeriodA = 97, kOffsetA = 48;
constexpr int kPeriodB = 89, kOffsetB = 44;
constexpr float kStepA = 0.013f, kStepB = 0.017f;
constexpr bool dividesNoCase(int period) {
  return kCases[0] % period != 0 && kCases[1] % period != 0 &&
         kCases[2] % period != 0;
}
static_assert(dividesNoCase(kPeriodA) && dividesNoCase(kPeriodB),
              "neither input period divides a case size, so consecutive rows "
              "do not repeat the same values");
static_assert(static_cast<double>(kMaxN) * (kOffsetA * 0.013) *
                      (kOffsetB * 0.017) < 65504.0,
              "no partial sum can overflow a half accumulator: at most "
              "K * max|a| * max|b| = 956 at K = 2048, below half's 65504");

// Tolerance table: the floor of each rule, and the mantissa width p that sets
// eps = 2^-p (see scaledRtol).
constexpr double kRtolTableF32 = 1e-5;
constexpr int kMantissaF32 = 23;
constexpr double kRtolTableF16 = 1e-2;
constexpr int kMantissaF16 = 10;

// Timing: kWarmups launches of the kernel being timed, then kTimedRuns timed
// launches; the median and the spread (min, max) are printed.
constexpr int kWarmups = 3;
constexpr int kTimedRuns = 20;
static_assert(kTimedRuns >= 10,
              "a median of fewer than 10 samples is at the mercy of one clock "
              "change; the 256 case (about 10 us) sits near launch overhead");

// Outputs are poisoned with 0xFF bytes before every correctness launch: as a
// float that is a NaN, so an element a kernel never writes fails the gate
// (a zero could pass where the reference is near 0), and an output that is
// still entirely poison means the kernel body has not been written.
constexpr unsigned char kPoisonByte = 0xFF;
constexpr std::uint32_t kPoisonBits = 0xFFFFFFFFu;

// Host staging for uploads and downloads, in chunks of this many elements
// (1 MiB of floats), so that host memory stays near what the reference needs
// (see HostBuffers): Compiler Explorer allows a few hundred MiB, and the CUDA
// runtime itself takes a good part of that.
constexpr long long kChunkElems = 1 << 18;

// ---------------------------------------------------------------- kernels
// All three share Day 16's tiling. For each of the ceil(K/16) k-tiles, every
// thread stages A[row][t*16 + tx] and B[t*16 + ty][col] into 16x16 shared
// tiles (zero when outside the matrix), a barrier, 16 accumulation steps in
// ascending p, a barrier. Guards wrap only loads and stores, so every thread
// reaches every barrier. threadIdx.x indexes the column.
//
// launch assumption (all three): blockDim = (16, 16, 1) and
// grid = (ceil(N/16), ceil(M/16)); launchMatmul() is the only launch path, and
// requireTileBlock() traps on any other block shape (a trap survives -DNDEBUG,
// an assert would not), which CUDA_CHECK then reports.

__device__ inline void requireTileBlock() {
  if (blockDim.x != kTile || blockDim.y != kTile || blockDim.z != 1) __trap();
}

// FP32 tiles and an FP32 accumulator: Day 16's kernel, the baseline.
// launch assumption: 16x16 blocks over a ceil(N/16) x ceil(M/16) grid (above).
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

// Changes one thing from matmulTiledF32: the inputs are stored as half. Each
// element is widened to float at use and summed in a float accumulator. A
// half x half product is exact in float (11 + 11 significand bits <= 24), so
// the only new error is the rounding of the stored inputs.
// launch assumption: as matmulTiledF32.
// memory: the same tiles at half the bytes: a half-warp reads a 32-byte row
// segment of B instead of 64, and the two tiles take 1 KiB of shared memory.
// That halved traffic is the only speedup this kernel can have.
__global__ void matmulF16StoreF32Acc(const __half* A, const __half* B, float* C,
                                     int M, int N, int K) {
  requireTileBlock();
  // snippet: half-kernel
  // solution: f16-store-f32-acc
  __shared__ __half As[kTile][kTile];
  __shared__ __half Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  const __half zero = __float2half(0.0f);
  float acc = 0.0f;  // the wide accumulator: FP32 despite FP16 storage
  for (int t = 0; t < (K + kTile - 1) / kTile; ++t) {
    const int ak = t * kTile + tx, bk = t * kTile + ty;
    As[ty][tx] = (row < M && ak < K) ? A[row * K + ak] : zero;
    Bs[ty][tx] = (bk < K && col < N) ? B[bk * N + col] : zero;
    __syncthreads();
    for (int p = 0; p < kTile; ++p)
      acc += __half2float(As[ty][p]) * __half2float(Bs[p][tx]);  // exact
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
  // end solution
  // end snippet
}

// Changes one thing from matmulF16StoreF32Acc: the accumulator is a half,
// updated by a fused half multiply-add that rounds the running sum to 11
// significant bits at every one of the K steps; it becomes a float only when
// written out. A measured counterexample, not a pattern to copy: no snippet
// quotes it.
// launch assumption: as matmulTiledF32.
// memory: identical to matmulF16StoreF32Acc, so any difference in error
// between the two belongs to the accumulator.
__global__ void matmulF16StoreF16Acc(const __half* A, const __half* B, float* C,
                                     int M, int N, int K) {
  requireTileBlock();
  // solution: f16-store-f16-acc
  __shared__ __half As[kTile][kTile];
  __shared__ __half Bs[kTile][kTile];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  const __half zero = __float2half(0.0f);
  __half acc = zero;  // the narrow accumulator: rounds to half every step
  for (int t = 0; t < (K + kTile - 1) / kTile; ++t) {
    const int ak = t * kTile + tx, bk = t * kTile + ty;
    As[ty][tx] = (row < M && ak < K) ? A[row * K + ak] : zero;
    Bs[ty][tx] = (bk < K && col < N) ? B[bk * N + col] : zero;
    __syncthreads();
    for (int p = 0; p < kTile; ++p) acc = __hfma(As[ty][p], Bs[p][tx], acc);
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = __half2float(acc);
  // end solution
}

enum KernelId { kF32 = 0, kF16F32 = 1, kF16F16 = 2, kNumKernels = 3 };
constexpr const char* kKernelNames[kNumKernels] = {
    "matmulTiledF32", "matmulF16StoreF32Acc", "matmulF16StoreF16Acc"};
// The marked region that holds a kernel's body (the starter's exercise).
constexpr const char* kRegionNames[kNumKernels] = {
    "(given)", "f16-store-f32-acc", "f16-store-f16-acc"};

struct DeviceBuffers {
  float* a = nullptr;  // FP32 inputs
  float* b = nullptr;
  __half* ah = nullptr;  // the same inputs rounded to half on the host
  __half* bh = nullptr;
  float* out[kNumKernels] = {};  // one output per kernel, all kept to the end
};

// The only launch path (see "launch assumption" above). Square cases.
inline void launchMatmul(int kernel, const DeviceBuffers& d, int n) {
  const dim3 block(kTile, kTile);
  const dim3 grid((n + kTile - 1) / kTile, (n + kTile - 1) / kTile);
  switch (kernel) {
    case kF32:
      matmulTiledF32<<<grid, block>>>(d.a, d.b, d.out[kF32], n, n, n);
      break;
    case kF16F32:
      matmulF16StoreF32Acc<<<grid, block>>>(d.ah, d.bh, d.out[kF16F32], n, n,
                                            n);
      break;
    default:
      matmulF16StoreF16Acc<<<grid, block>>>(d.ah, d.bh, d.out[kF16F16], n, n,
                                            n);
      break;
  }
}

// ---------------------------------------------------------------- inputs
// Flat row-major index e < n*n: an int, cast to float, times a float constant.
// The constants are not exactly representable, so storing them as half really
// costs something; magnitudes below 1 keep every partial sum far from 65504.
//
// Why periodic inputs stay, although periods 97 and 89 correlate the rounding
// errors along a dot product (Day 98 uses an LCG for exactly that reason): they
// define this lesson's recorded digits, and the gates do not depend on the
// random-walk model. The sqrt(K) rule is a tolerance, not a prediction; where
// correlated errors grow faster than sqrt(K), the gate fraction shows how much
// of the bound is used (at most 0.1952, the FP32 kernel at K = 2048), and the
// error-growth claim rests on the measured ratio of the two half kernels, not
// on a sqrt(K) law.
inline float inputA(long long e) {
  return static_cast<float>(static_cast<int>(e % kPeriodA) - kOffsetA) * kStepA;
}
inline float inputB(long long e) {
  return static_cast<float>(static_cast<int>(e % kPeriodB) - kOffsetB) * kStepB;
}

// Uploads elements [0, count) of an input twice, as float and as half (the
// host's float->half routine, round to nearest even), generated chunk by chunk
// so that the whole of A never has to sit in host memory.
inline void uploadInput(float (*input)(long long), long long count, float* dF32,
                        __half* dF16, std::vector<float>& f32Staging,
                        std::vector<__half>& f16Staging) {
  for (long long first = 0; first < count; first += kChunkElems) {
    const long long c = std::min(kChunkElems, count - first);
    for (long long i = 0; i < c; ++i) {
      f32Staging[i] = input(first + i);
      f16Staging[i] = __float2half(f32Staging[i]);
    }
    CUDA_CHECK(cudaMemcpy(dF32 + first, f32Staging.data(), c * sizeof(float),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dF16 + first, f16Staging.data(), c * sizeof(__half),
                          cudaMemcpyHostToDevice));
  }
}

// Replaces each float by its half-rounded value: exactly the numbers the half
// kernels read (for the tight check's reference).
inline void roundToHalfInPlace(float* x, long long count) {
  for (long long i = 0; i < count; ++i) x[i] = __half2float(__float2half(x[i]));
}

// ---------------------------------------------------------------- reference
// A double reference of the FP32 inputs. The naive i-j-k loop took 48 s for
// the three cases (it reads B down columns); this one is the same sum in the
// same order, bit for bit, about 100 times faster on one core.

// common: cpu_reference
// CPU reference GEMM in double, for checking GPU matmuls:
//   C[i*N + j] = sum over k = 0, 1, ..., K-1 (in that order) of
//                double(A[i*K + k]) * double(B[k*N + j])
// with A (M x K), B (K x N) and C (M x N) row-major, summed in double from 0.
// Needs <algorithm>, <cstring> and <vector>.
//
// Why it is bit-identical to the naive i-j-k loop: a float x float product has
// at most 48 significant bits, so it is exact in double; fma(a, b, s) and
// s + a*b then round the same exact value once, and every element still sums
// its K products in ascending k from 0.0 in one double accumulator (blocking
// over k only parks that accumulator in C between blocks, which is exact).
// Vector lanes hold different elements, never parts of one sum.
//
// Why it is fast (2048^3 in about 0.45 s on one core, against about 48 s for
// the naive loop, which reads B down a column: one cache miss per multiply-add,
// and at power-of-two N those addresses collide in the same cache sets):
// - loop interchange plus packing: per block of 256 k-steps, a 256 x 1024 slab
//   of B is converted once into contiguous 8-column double panels (2 MiB, held
//   in L2/L3), and 6 rows of A into one 6-row double panel (12 KiB, in L1);
// - register blocking: a 6 x 8 tile of C lives in twelve 4-wide vector
//   registers for the whole k block; each k-step loads 2 vectors of B and 6
//   scalars of A for 48 multiply-adds, all unit stride;
// - that tile is compiled for AVX2+FMA and picked at run time when the CPU has
//   it; otherwise a 2-wide build of the same source runs (about 2.5x slower),
//   or, on a compiler without GCC vector extensions, a scalar loop.
namespace cpu_reference_detail {

constexpr long long kMR = 6;    // rows of C per register tile
constexpr long long kNR = 8;    // columns of C per register tile
constexpr long long kKC = 256;  // k-steps per packed block (B panel 16 KiB: L1)
constexpr long long kNC = 1024; // columns per packed B block (2 MiB: L2/L3)
static_assert(kNR == 8 && kMR == 6, "the tile below is written out for 6 x 8");
static_assert(kNC % kNR == 0, "a B block holds whole 8-column panels");

// C tile (6 x 8, row stride ldc) += packed A panel (kc x 6) * packed B panel
// (kc x 8), in ascending k; with first set the tile starts from 0.0 instead of
// being loaded (the first k block).
#if defined(__GNUC__)  // GCC and Clang, the host compilers nvcc uses on Linux
// Vector extensions: operators act lane by lane, no intrinsics header needed.
typedef double Vec2 __attribute__((vector_size(16)));  // any 64-bit host
typedef double Vec4 __attribute__((vector_size(32)));  // AVX2 only

// V holds kL doubles; a pass covers 2*kL columns of the tile with twelve named
// accumulators (6 rows x 2 vectors), few enough to stay in registers: one pass
// with Vec4 (16 ymm registers), two with Vec2 (16 xmm on baseline x86-64).
// memcpy is the portable unaligned load and store.
template <typename V>
__attribute__((always_inline)) inline void tileBody(long long kc,
                                                    const double* a,
                                                    const double* b, double* c,
                                                    long long ldc, bool first) {
  constexpr long long kL = sizeof(V) / sizeof(double);
  constexpr size_t kV = sizeof(V);
  for (long long h = 0; h < kNR; h += 2 * kL, c += 2 * kL, b += 2 * kL) {
    double* const r[kMR] = {c, c + ldc, c + 2 * ldc, c + 3 * ldc, c + 4 * ldc,
                            c + 5 * ldc};  // this pass's part of each C row
    V c0a = {}, c0b = {}, c1a = {}, c1b = {}, c2a = {}, c2b = {};
    V c3a = {}, c3b = {}, c4a = {}, c4b = {}, c5a = {}, c5b = {};
    if (!first) {
      std::memcpy(&c0a, r[0], kV); std::memcpy(&c0b, r[0] + kL, kV);
      std::memcpy(&c1a, r[1], kV); std::memcpy(&c1b, r[1] + kL, kV);
      std::memcpy(&c2a, r[2], kV); std::memcpy(&c2b, r[2] + kL, kV);
      std::memcpy(&c3a, r[3], kV); std::memcpy(&c3b, r[3] + kL, kV);
      std::memcpy(&c4a, r[4], kV); std::memcpy(&c4b, r[4] + kL, kV);
      std::memcpy(&c5a, r[5], kV); std::memcpy(&c5b, r[5] + kL, kV);
    }
    for (long long k = 0; k < kc; ++k) {
      V b0, b1;  // B row k: this pass's columns
      std::memcpy(&b0, b + kNR * k, kV);
      std::memcpy(&b1, b + kNR * k + kL, kV);
      const double* ak = a + kMR * k;  // A column k, rows 0-5 of the panel
      // scalar * vector broadcasts; contracted to one FMA where the ISA has it
      c0a += ak[0] * b0; c0b += ak[0] * b1;
      c1a += ak[1] * b0; c1b += ak[1] * b1;
      c2a += ak[2] * b0; c2b += ak[2] * b1;
      c3a += ak[3] * b0; c3b += ak[3] * b1;
      c4a += ak[4] * b0; c4b += ak[4] * b1;
      c5a += ak[5] * b0; c5b += ak[5] * b1;
    }
    std::memcpy(r[0], &c0a, kV); std::memcpy(r[0] + kL, &c0b, kV);
    std::memcpy(r[1], &c1a, kV); std::memcpy(r[1] + kL, &c1b, kV);
    std::memcpy(r[2], &c2a, kV); std::memcpy(r[2] + kL, &c2b, kV);
    std::memcpy(r[3], &c3a, kV); std::memcpy(r[3] + kL, &c3b, kV);
    std::memcpy(r[4], &c4a, kV); std::memcpy(r[4] + kL, &c4b, kV);
    std::memcpy(r[5], &c5a, kV); std::memcpy(r[5] + kL, &c5b, kV);
  }
}

inline void tileBaseline(long long kc, const double* a, const double* b,
                         double* c, long long ldc, bool first) {
  tileBody<Vec2>(kc, a, b, c, ldc, first);
}
#else  // other host compilers: the same tile, one double per accumulator
inline void tileBaseline(long long kc, const double* a, const double* b,
                         double* c, long long ldc, bool first) {
  double acc[kMR][kNR];
  for (long long r = 0; r < kMR; ++r)
    for (long long j = 0; j < kNR; ++j)
      acc[r][j] = first ? 0.0 : c[r * ldc + j];
  for (long long k = 0; k < kc; ++k)
    for (long long r = 0; r < kMR; ++r)
      for (long long j = 0; j < kNR; ++j)
        acc[r][j] += a[kMR * k + r] * b[kNR * k + j];
  for (long long r = 0; r < kMR; ++r)
    for (long long j = 0; j < kNR; ++j) c[r * ldc + j] = acc[r][j];
}
#endif

// The AVX2+FMA build of the same tile, for x86-64 hosts that have it (nvcc's
// device pass compiles no host code and is kept out).
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__CUDA_ARCH__)
#define CPU_REFERENCE_HAVE_AVX2 1
__attribute__((target("avx2,fma"))) inline void tileAvx2(
    long long kc, const double* a, const double* b, double* c, long long ldc,
    bool first) {
  tileBody<Vec4>(kc, a, b, c, ldc, first);
}
#endif

typedef void (*TileFn)(long long, const double*, const double*, double*,
                       long long, bool);

inline TileFn pickTile() {
#ifdef CPU_REFERENCE_HAVE_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return tileAvx2;
#endif
  return tileBaseline;
}

}  // namespace cpu_reference_detail

inline void cpuReferenceGemm(const float* A, const float* B, double* C,
                             long long M, long long N, long long K) {
  using namespace cpu_reference_detail;
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {  // empty sums
    std::fill(C, C + M * N, 0.0);
    return;
  }
  const TileFn tile = pickTile();
  std::vector<double> bPack(static_cast<size_t>(kKC * kNC));  // 2 MiB
  std::vector<double> aPack(static_cast<size_t>(kKC * kMR));  // 12 KiB
  double edge[kMR * kNR] = {};  // a C tile that overhangs M or N
  for (long long pc = 0; pc < K; pc += kKC) {
    const long long kc = std::min(kKC, K - pc);
    const bool first = (pc == 0);
    for (long long jc = 0; jc < N; jc += kNC) {
      const long long nc = std::min(kNC, N - jc);
      const long long nPanels = (nc + kNR - 1) / kNR;
      // B rows [pc, pc+kc), cols [jc, jc+nc) -> 8-column panels, k-major,
      // zero past column N.
      for (long long p = 0; p < nPanels; ++p) {
        double* dst = bPack.data() + p * kKC * kNR;
        const long long j0 = jc + p * kNR, w = std::min(kNR, N - j0);
        for (long long k = 0; k < kc; ++k) {
          const float* src = B + (pc + k) * N + j0;
          for (long long j = 0; j < w; ++j) dst[k * kNR + j] = src[j];
          for (long long j = w; j < kNR; ++j) dst[k * kNR + j] = 0.0;
        }
      }
      for (long long i0 = 0; i0 < M; i0 += kMR) {
        const long long h = std::min(kMR, M - i0);
        // A rows [i0, i0+6), cols [pc, pc+kc) -> one 6-row panel, k-major,
        // zero past row M.
        double* ap = aPack.data();
        for (long long r = 0; r < kMR; ++r) {
          if (r < h) {
            const float* src = A + (i0 + r) * K + pc;
            for (long long k = 0; k < kc; ++k) ap[k * kMR + r] = src[k];
          } else {
            for (long long k = 0; k < kc; ++k) ap[k * kMR + r] = 0.0;
          }
        }
        for (long long p = 0; p < nPanels; ++p) {
          const double* bp = bPack.data() + p * kKC * kNR;
          const long long j0 = jc + p * kNR, w = std::min(kNR, N - j0);
          double* c = C + i0 * N + j0;
          if (h == kMR && w == kNR) {
            tile(kc, ap, bp, c, N, first);
          } else {  // overhang: run the full tile on a copy, keep the inside
            for (long long r = 0; r < h; ++r)
              for (long long j = 0; j < w; ++j)
                edge[r * kNR + j] = c[r * N + j];
            tile(kc, ap, bp, edge, kNR, first);
            for (long long r = 0; r < h; ++r)
              for (long long j = 0; j < w; ++j)
                c[r * N + j] = edge[r * kNR + j];
          }
        }
      }
    }
  }
}
// end common: cpu_reference

// The reference of one case, kRefRows rows at a time: A's rows are generated
// (and, for the tight check, half-rounded) per block, so that only B and the
// reference are held whole. Same sums, same order: the blocks only split rows.
constexpr long long kRefRows = 256;
inline void referenceGemm(int n, const float* B, double* ref, bool halfRoundedA,
                          std::vector<float>& aRows) {
  for (long long i0 = 0; i0 < n; i0 += kRefRows) {
    const long long rows = std::min(kRefRows, n - i0);
    for (long long e = 0; e < rows * n; ++e) aRows[e] = inputA(i0 * n + e);
    if (halfRoundedA) roundToHalfInPlace(aRows.data(), rows * n);
    cpuReferenceGemm(aRows.data(), B, ref + i0 * n, rows, n, n);
  }
}

// ---------------------------------------------------------------- gates

// snippet: tolerance
// Day 66's K-scaled rule for any mantissa width p (eps = 2^-p): the rounding
// errors of K additions add like a random walk, hence sqrt(K); the factor 4
// allows any legitimate order of the additions; the table entry is the floor.
// Day 66's exact inputs never let this rule decide anything; here, with real
// rounding error (p = 10 for the half paths), it does.
inline double scaledRtol(double tableRtol, int mantissaBits, long long K) {
  const double eps = std::ldexp(1.0, -mantissaBits);
  return std::max(tableRtol, 4.0 * eps * std::sqrt(static_cast<double>(K)));
}
// end snippet

// A gate for one case: element e passes when |got - ref| <= atol + rtol*|ref|,
// with atol = rtol * max|ref| (an absolute floor for elements near zero).
struct Tolerance {
  double rtol;
  double atol;
};
inline Tolerance makeTolerance(double tableRtol, int mantissaBits, long long K,
                               double refMax) {
  const double rtol = scaledRtol(tableRtol, mantissaBits, K);
  return Tolerance{rtol, rtol * refMax};
}

inline double maxAbs(const double* x, long long count) {
  double m = 0.0;
  for (long long i = 0; i < count; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

// What one output did against one gate. The fraction is |err| / bound, so a
// value above 1 fails; NaN and infinity fail because the test is
// !(err <= bound), which is true for a NaN.
struct GateResult {
  long long checked = 0;
  long long poisoned = 0;  // elements still holding the poison pattern
  double maxErr = 0.0;     // largest |got - ref| (NaN never raises it)
  double maxFrac = 0.0;    // largest |got - ref| / bound
  bool failed = false;     // the first failing element follows
  long long failIndex = -1;
  float failGot = 0.0f;
  double failRef = 0.0, failErr = 0.0, failBound = 0.0, failFrac = 0.0;
};

inline double gateFraction(double err, double bound) {
  return err == 0.0 ? 0.0 : err / bound;  // 0/0 when ref and refMax are 0
}

// Checks got[0, count) against ref[0, count), elements first .. first+count-1
// of the output; call once per chunk, in order.
inline void gateChunk(GateResult& g, const float* got, const double* ref,
                      long long first, long long count, const Tolerance& tol) {
  for (long long i = 0; i < count; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &got[i], sizeof bits);
    if (bits == kPoisonBits) ++g.poisoned;
    const double err = std::fabs(static_cast<double>(got[i]) - ref[i]);
    const double bound = tol.atol + tol.rtol * std::fabs(ref[i]);
    const double frac = gateFraction(err, bound);
    if (err > g.maxErr) g.maxErr = err;
    if (frac > g.maxFrac) g.maxFrac = frac;
    if (!(err <= bound) && !g.failed) {
      g.failed = true;
      g.failIndex = first + i;
      g.failGot = got[i];
      g.failRef = ref[i];
      g.failErr = err;
      g.failBound = bound;
      g.failFrac = frac;
    }
  }
  g.checked += count;
}

// A kernel whose output is poison everywhere never wrote anything: its body
// is still to be written (the starter), which is reported, not diagnosed.
inline bool neverWritten(const GateResult& g) {
  return g.checked > 0 && g.poisoned == g.checked;
}

// Downloads a device output chunk by chunk and gates it.
inline GateResult gateDeviceOutput(const float* dOut, const double* ref,
                                   long long count, const Tolerance& tol,
                                   std::vector<float>& staging) {
  GateResult g;
  for (long long first = 0; first < count; first += kChunkElems) {
    const long long c = std::min(kChunkElems, count - first);
    CUDA_CHECK(cudaMemcpy(staging.data(), dOut + first, c * sizeof(float),
                          cudaMemcpyDeviceToHost));
    gateChunk(g, staging.data(), ref + first, first, c, tol);
  }
  return g;
}

// One stderr line with everything needed to judge a failure.
inline void printGateFailure(const char* kernel, const char* gate, int n,
                             const GateResult& g) {
  std::fprintf(stderr,
               "GATE: %s failed the %s gate in case %dx%dx%d at index %lld "
               "(row %lld, col %lld): got %.9g, ref %.9g, |err| %.3e > bound "
               "%.3e (fraction %.4f of the bound)\n",
               kernel, gate, n, n, n, g.failIndex, g.failIndex / n,
               g.failIndex % n, static_cast<double>(g.failGot), g.failRef,
               g.failErr, g.failBound, g.failFrac);
}

// ---------------------------------------------------------------- reports

// snippet: format-report
// What this card's tensor cores could take, keyed on 10*major + minor: the
// lowest compute capability whose mma instructions accept each format. The
// kernels above use none of it (Day 72 starts on tensor cores).
struct FormatFloor {
  const char* label;
  int floor;
};
constexpr FormatFloor kFormatFloors[] = {
    {"FP16 mma m16n8k8", 75},
    {"BF16", 80},
    {"TF32", 80},
    {"FP8 E4M3/E5M2", 89},
};
constexpr const char* kFp4Label = "FP4 E2M1";

// FP4 is not a plain floor: datacenter Blackwell (CC 10.x, and 11.x) reaches it
// through tcgen05, GeForce/workstation Blackwell (CC 12.x) through block-scaled
// mma.sync, and both only from an arch-specific build (sm_100a, sm_120a, ...),
// not from this file's sm_75 PTX.
inline std::string fp4Support(int major, int minor) {
  char buf[96];
  if (major == 10 || major == 11) {
    std::snprintf(buf, sizeof buf,
                  "yes, through tcgen05 (needs an sm_%d%da build)", major,
                  minor);
  } else if (major == 12) {
    std::snprintf(buf, sizeof buf,
                  "yes, through block-scaled mma (needs an sm_%d%da build)",
                  major, minor);
  } else if (major < 10) {
    std::snprintf(buf, sizeof buf, "no on this card");
  } else {
    std::snprintf(buf, sizeof buf, "unknown to this program (CC %d.%d)", major,
                  minor);
  }
  return buf;
}

inline std::string formatSupport(int floor, int major, int minor) {
  return 10 * major + minor >= floor ? "yes" : "no on this card";
}

inline void printFormatReport(int major, int minor) {
  std::printf("format support, compute capability %d.%d (these kernels use "
              "none of it):\n", major, minor);
  for (const FormatFloor& f : kFormatFloors)
    std::printf("  %-28s%s\n", f.label,
                formatSupport(f.floor, major, minor).c_str());
  std::printf("  %-28s%s\n", kFp4Label, fp4Support(major, minor).c_str());
}
// end snippet

// Host conversions: half has the finer mantissa (10 bits), bf16 the far larger
// range (float's 8-bit exponent). All round to nearest even, as on the device.
struct DemoLine {
  std::string label;
  std::string value;
};
inline std::vector<DemoLine> conversionDemos() {
  char buf[64];
  std::vector<DemoLine> lines;
  __half_raw raw;
  raw.x = 0x7BFFu;  // exponent 11110, mantissa all ones
  std::snprintf(buf, sizeof buf, "%.1f", __half2float(__half(raw)));
  lines.push_back({"largest finite half", buf});
  // 65520 lies halfway between 65504 and 65536 (= 2^16, past the largest
  // exponent); ties-to-even picks the even mantissa, which overflows to inf.
  std::snprintf(buf, sizeof buf, "%d",
                std::isinf(__half2float(__float2half(65520.0f))) ? 1 : 0);
  lines.push_back({"65520 to half is inf", buf});
  const float h300k = __half2float(__float2half(300000.0f));
  const int isInf = std::isinf(h300k) ? 1 : 0;
  std::snprintf(buf, sizeof buf, "%s (isinf %d)", isInf ? "inf" : "finite",
                isInf);
  lines.push_back({"300000 in half", buf});
  std::snprintf(buf, sizeof buf, "%.1f",
                __bfloat162float(__float2bfloat16(300000.0f)));
  lines.push_back({"300000 in bf16", buf});
  std::snprintf(buf, sizeof buf, "%.10f", __half2float(__float2half(1.0007f)));
  lines.push_back({"1.0007 in half", buf});
  std::snprintf(buf, sizeof buf, "%.10f",
                __bfloat162float(__float2bfloat16(1.0007f)));
  lines.push_back({"1.0007 in bf16", buf});
  return lines;
}

inline void printConversionDemos() {
  const std::vector<DemoLine> lines = conversionDemos();
  std::printf("%zu host conversions (round to nearest even; half: 10-bit "
              "mantissa, bf16: float's range):\n", lines.size());
  for (const DemoLine& l : lines)
    std::printf("  %-24s%s\n", l.label.c_str(), l.value.c_str());
}

// Whether a case's working set stays in this card's L2. On a T4 (4 MiB) the
// ladder straddles it; on an H200 every case fits, so every timing here is a
// warm-L2 timing and says nothing about DRAM traffic.
inline const char* l2Verdict(double f32Bytes, double f16Bytes, double l2Bytes) {
  if (f32Bytes <= l2Bytes) return "both fit in";
  if (f16Bytes <= l2Bytes) return "only the f16 footprint fits in";
  return "neither fits in";
}

inline void printFootprint(int n, double l2Bytes) {
  const double e = static_cast<double>(n) * n;
  const double f32Bytes = e * (4 + 4 + 4);  // A, B, C as float
  const double f16Bytes = e * (2 + 2 + 4);  // A, B as half, C as float
  const double mib = 1024.0 * 1024.0;
  std::printf("  footprint %.2f MiB (f32 kernel), %.2f MiB (f16 kernels): %s "
              "this card's %.1f MiB L2\n", f32Bytes / mib, f16Bytes / mib,
              l2Verdict(f32Bytes, f16Bytes, l2Bytes), l2Bytes / mib);
}

// ---------------------------------------------------------------- timing

// common: timer
// Kernel timer. Method, and why:
// - Warm-ups launch the kernel being timed (not some other kernel): lazy module
//   loading charges each kernel on its own first launch, and the clocks ramp up.
// - Each sample is one launch bracketed by two CUDA events on the default
//   stream. The launches are queued back to back with no host wait between
//   them, so the events read the GPU's own clock and host launch latency is
//   hidden behind the previous launch (except for the first sample).
// - The median of the samples is reported because it ignores the odd sample
//   hit by a clock change or a preemption; min and max give the spread, and a
//   difference between two kernels smaller than that spread is noise.
// - The inputs stay in L2 when they fit: the figures are warm-cache figures.
struct TimingStats {
  double median_ms;  // middle sample (mean of the two middle ones if even)
  double min_ms;
  double max_ms;
  double mean_ms;    // pulled up by slow outliers; the median is the headline
  int samples;
};

inline double medianOfSorted(const std::vector<double>& v) {
  const size_t n = v.size();
  return (n % 2 == 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <typename Launch>
TimingStats timeKernel(Launch launch, int warmups, int samples) {
  if (samples < 1) {  // callers validate; this only keeps the median defined
    std::fprintf(stderr, "timeKernel: samples must be at least 1\n");
    std::exit(EXIT_FAILURE);
  }
  for (int i = 0; i < warmups; ++i) {
    launch();
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> marks(static_cast<size_t>(samples) + 1);
  for (cudaEvent_t& e : marks) CUDA_CHECK(cudaEventCreate(&e));
  CUDA_CHECK(cudaEventRecord(marks[0]));
  for (int i = 0; i < samples; ++i) {
    launch();
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(marks[static_cast<size_t>(i) + 1]));
  }
  CUDA_CHECK(cudaEventSynchronize(marks[static_cast<size_t>(samples)]));
  std::vector<double> ms(static_cast<size_t>(samples));
  for (int i = 0; i < samples; ++i) {
    float t = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&t, marks[static_cast<size_t>(i)],
                                    marks[static_cast<size_t>(i) + 1]));
    ms[static_cast<size_t>(i)] = t;
  }
  for (cudaEvent_t& e : marks) CUDA_CHECK(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  double total = 0.0;
  for (double t : ms) total += t;
  return TimingStats{medianOfSorted(ms), ms.front(), ms.back(), total / samples, samples};
}
// end common: timer

// No cuBLAS row: Compiler Explorer links no libraries, and a lesson must paste
// there unchanged. For scale, recorded once on an H200 (not measured by this
// program): cuBLAS SGEMM took 0.372 ms at n = 2048, against this tiled FP32
// kernel's 2.11 ms. Day 72's tensor cores are the way to close that gap.

// ---------------------------------------------------------------- main

struct KernelRow {
  GateResult gate;
  bool written = false;
  TimingStats time{};  // filled only for a kernel that passed its gate
};

inline void printCaseHeader(int n, double refMax, const Tolerance& tol32,
                            const Tolerance& tol16, double l2Bytes) {
  std::printf("case %dx%dx%d: max |reference| %.4f\n", n, n, n, refMax);
  printFootprint(n, l2Bytes);
  std::printf("  FP32 gate: atol %.3e, rtol %.3e  (rtol = max(1e-5, "
              "4*2^-23*sqrt(K)), atol = rtol*max|ref|)\n",
              tol32.atol, tol32.rtol);
  std::printf("  FP16 gate: atol %.3e, rtol %.3e  (rtol = max(1e-2, "
              "4*2^-10*sqrt(K)), atol = rtol*max|ref|)\n",
              tol16.atol, tol16.rtol);
}

// The case's table, one row per kernel, then the accumulator ratio and the
// tight check (each printed only when its kernels are written).
inline void printCaseTable(const KernelRow rows[kNumKernels],
                           const GateResult& tight, const Tolerance& tolTight) {
  std::printf("  %-22s %11s %10s %7s  %s\n", "kernel", "max abs err",
              "gate frac", "vs f32", "time: median (min, max)");
  for (int k = 0; k < kNumKernels; ++k) {
    if (!rows[k].written) {
      std::printf("  %-22s not written yet (its output is still all poison)\n",
                  kKernelNames[k]);
      continue;
    }
    const TimingStats& t = rows[k].time;
    std::printf("  %-22s %11.3e %10.4f %6.2fx  %.4f ms (%.4f ms, %.4f ms)\n",
                kKernelNames[k], rows[k].gate.maxErr, rows[k].gate.maxFrac,
                rows[kF32].time.median_ms / t.median_ms, t.median_ms, t.min_ms,
                t.max_ms);
  }
  // A prediction, not a gate: on a given input, cancellation could give the
  // f16 accumulator the smaller maximum error without either kernel being
  // wrong. Storage rounding is fixed; the half accumulator's error grows
  // with K.
  if (rows[kF16F32].written && rows[kF16F16].written) {
    const double ratio = rows[kF16F16].gate.maxErr / rows[kF16F32].gate.maxErr;
    std::printf("  max abs err, f16 accumulator / f32 accumulator: %.3g "
                "times\n", ratio);
  }
  if (rows[kF16F32].written) {
    std::printf("  tight check, matmulF16StoreF32Acc vs a double reference of "
                "the half-rounded inputs\n  (FP32 rule: atol %.3e, rtol %.3e): "
                "max abs err %.3e, gate frac %.4f\n", tolTight.atol,
                tolTight.rtol, tight.maxErr, tight.maxFrac);
  }
}

// Host memory, about 54 MiB at 2048: B and the reference whole, A a block of
// rows at a time, and 1 MiB chunks for transfers.
struct HostBuffers {
  std::vector<float> b;
  std::vector<double> ref;
  std::vector<float> aRows;
  std::vector<float> f32Chunk;
  std::vector<__half> f16Chunk;
};

// Runs one case. Returns false when a gate failed (the diagnostic is already
// on stderr); rows[k].written is false for a kernel still to be written.
inline bool runCase(int n, const DeviceBuffers& d, HostBuffers& h,
                    double l2Bytes, KernelRow rows[kNumKernels]) {
  const long long count = static_cast<long long>(n) * n;
  uploadInput(inputA, count, d.a, d.ah, h.f32Chunk, h.f16Chunk);
  uploadInput(inputB, count, d.b, d.bh, h.f32Chunk, h.f16Chunk);
  for (long long e = 0; e < count; ++e) h.b[e] = inputB(e);

  // Correctness launches, on poisoned outputs; the GPU runs them while the
  // CPU computes the reference.
  for (int k = 0; k < kNumKernels; ++k) {
    CUDA_CHECK(cudaMemset(d.out[k], kPoisonByte, count * sizeof(float)));
    launchMatmul(k, d, n);
    CUDA_CHECK_LAUNCH();
  }
  referenceGemm(n, h.b.data(), h.ref.data(), false, h.aRows);
  CUDA_CHECK(cudaDeviceSynchronize());

  const double refMax = maxAbs(h.ref.data(), count);
  const Tolerance tol32 = makeTolerance(kRtolTableF32, kMantissaF32, n, refMax);
  const Tolerance tol16 = makeTolerance(kRtolTableF16, kMantissaF16, n, refMax);
  printCaseHeader(n, refMax, tol32, tol16, l2Bytes);

  // Both half kernels get the FP16 rule: their stored inputs were rounded to
  // 11 significant bits, and this reference is of the unrounded inputs.
  const Tolerance* tols[kNumKernels] = {&tol32, &tol16, &tol16};
  const char* gateNames[kNumKernels] = {"FP32", "FP16", "FP16"};
  for (int k = 0; k < kNumKernels; ++k) {
    rows[k].gate = gateDeviceOutput(d.out[k], h.ref.data(), count, *tols[k],
                                    h.f32Chunk);
    rows[k].written = !neverWritten(rows[k].gate);
    if (rows[k].written && rows[k].gate.failed) {
      printGateFailure(kKernelNames[k], gateNames[k], n, rows[k].gate);
      return false;
    }
  }

  // Tight companion check. The FP16 gate must absorb input rounding, so it is
  // wide (atol 3.0 at K = 2048 against a max |ref| of 17): an indexing bug
  // that moved outputs by a sixth of the largest one would pass it. Against a
  // double reference of the half-rounded inputs, matmulF16StoreF32Acc's only
  // error is its float accumulation, so the FP32 rule applies, over 6000 times
  // tighter. (The f16-acc kernel gets no such check: its half accumulator is
  // the error being measured.) It costs a second CPU reference, about 0.5 s.
  GateResult tight;
  Tolerance tolTight{0.0, 0.0};
  if (rows[kF16F32].written) {
    roundToHalfInPlace(h.b.data(), count);
    referenceGemm(n, h.b.data(), h.ref.data(), true, h.aRows);
    tolTight = makeTolerance(kRtolTableF32, kMantissaF32, n,
                             maxAbs(h.ref.data(), count));
    tight = gateDeviceOutput(d.out[kF16F32], h.ref.data(), count, tolTight,
                             h.f32Chunk);
    if (tight.failed) {
      printGateFailure("matmulF16StoreF32Acc (tight check)", "FP32", n, tight);
      return false;
    }
  }

  // Timing, only of results that passed their gates.
  for (int k = 0; k < kNumKernels; ++k) {
    if (!rows[k].written) continue;
    rows[k].time =
        timeKernel([&] { launchMatmul(k, d, n); }, kWarmups, kTimedRuns);
  }

  printCaseTable(rows, tight, tolTight);
  std::printf("\n");
  return true;
}

// The first lines: the device, the day, and the facts read from the device.
inline void printBanner(const cudaDeviceProp& prop) {
  std::printf("GPU: %s (compute capability %d.%d)\n", prop.name, prop.major,
              prop.minor);
  std::printf("Day 71: storage precision vs accumulator precision, on Day 16's "
              "16x16 tiled matmul\n");
  std::printf("device (as it reports itself): %d SMs, %.1f MiB L2, %zu KiB "
              "shared memory per block\n", prop.multiProcessorCount,
              prop.l2CacheSize / (1024.0 * 1024.0),
              prop.sharedMemPerBlock / 1024);
  std::printf("each kernel is checked against a double reference of the "
              "unrounded f32 inputs; gate frac = max |got - ref| / (atol + "
              "rtol*|ref|), above 1 fails\n\n");
}

// The lesson takes no argument. One option exists for compute-sanitizer, whose
// instrumented kernels run hundreds of times slower: --cases N runs only the
// first N cases (the suite's Sanitize: line uses it). Anything else: exit 2.
int casesToRun(int argc, char** argv) {
  if (argc == 1) return kNumCases;
  if (argc == 3 && std::strcmp(argv[1], "--cases") == 0 && argv[2][0] >= '1' &&
      argv[2][0] < '1' + kNumCases && argv[2][1] == '\0')
    return argv[2][0] - '0';
  std::fprintf(stderr, "error: the only option is --cases N, N in [1, %d]; got \"%s\"\n"
                       "usage: %s [--cases N]\n", kNumCases, argv[argc - 1], argv[0]);
  std::exit(2);
}

int main(int argc, char** argv) {
  const int cases = casesToRun(argc, argv);
  const cudaDeviceProp prop = requireCudaDevice();
  printBanner(prop);
  const double l2Bytes = static_cast<double>(prop.l2CacheSize);
  printFormatReport(prop.major, prop.minor);
  std::printf("\n");
  printConversionDemos();
  std::printf("\n");
  std::printf("time = median of %d launches after %d warm-ups; spread shown as "
              "(min, max); vs f32 = f32 median / this median\n\n", kTimedRuns,
              kWarmups);

  const size_t maxElems = static_cast<size_t>(kMaxN) * kMaxN;
  HostBuffers h;
  h.b.resize(maxElems);
  h.ref.resize(maxElems);
  h.aRows.resize(static_cast<size_t>(kRefRows) * kMaxN);
  h.f32Chunk.resize(kChunkElems);
  h.f16Chunk.resize(kChunkElems);

  DeviceBuffers d;
  CUDA_CHECK(cudaMalloc(&d.a, maxElems * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d.b, maxElems * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d.ah, maxElems * sizeof(__half)));
  CUDA_CHECK(cudaMalloc(&d.bh, maxElems * sizeof(__half)));
  for (float*& out : d.out)
    CUDA_CHECK(cudaMalloc(&out, maxElems * sizeof(float)));

  bool passed = true;
  bool missing[kNumKernels] = {};
  for (int c = 0; c < cases && passed; ++c) {
    KernelRow rows[kNumKernels];
    passed = runCase(kCases[c], d, h, l2Bytes, rows);
    for (int k = 0; k < kNumKernels; ++k)
      missing[k] = missing[k] || (passed && !rows[k].written);
  }

  CUDA_CHECK(cudaFree(d.a));
  CUDA_CHECK(cudaFree(d.b));
  CUDA_CHECK(cudaFree(d.ah));
  CUDA_CHECK(cudaFree(d.bh));
  for (float* out : d.out) CUDA_CHECK(cudaFree(out));

  if (!passed) return EXIT_FAILURE;
  bool anyMissing = false;
  for (int k = 0; k < kNumKernels; ++k) {
    if (!missing[k]) continue;
    if (!anyMissing) std::printf("left to write:\n");
    anyMissing = true;
    std::printf("  %s: its body, region %s\n", kKernelNames[k],
                kRegionNames[k]);
  }
  if (anyMissing) return EXIT_FAILURE;
  std::printf("all %d cases passed their gates\n", cases);
  return EXIT_SUCCESS;
}
