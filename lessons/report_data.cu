// SPDX-License-Identifier: MIT
// Final project - report_data: roofline data you can defend, for a naive and a tiled
// FP32 GEMM over a ladder of sizes.
//
// C = A * B (FP32, row-major, M = N = K = n) by a naive kernel (one output per thread,
// straight from global memory) and a 16 x 16 shared-memory tiled kernel, for n = 128,
// 200, 256, 511, 512, 1000, 1024, 2048 (then doubling) up to -maxn, -maxn included:
// sizes that are not multiples of the tile run the boundary code. Every row of the CSV
// on stdout says how it was verified: against a full double CPU reference up to
// n = 1024; above it, 32 sampled rows against the CPU and, for the tiled kernel, every
// element against the naive kernel, trusted only because naive passed every full CPU
// check below. Bytes are reported as what they are: the loads the kernel issues if no
// cache helped (a model) and the compulsory traffic (A and B read once, C written once);
// no "DRAM bandwidth" is derived from the model. The roofline's two ceilings are
// measured on the device by this program and printed in the CSV's # comment lines.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -lineinfo -o report_data report_data.cu
// Run:   ./report_data
// Run:   ./report_data -maxn 300 -iters 3
// Run:   ./report_data -iters 0
// Sanitize: ./report_data -maxn 300 -iters 1
//
// sm_75 is the course's T4 (and Compiler Explorer's card); a newer GPU runs the PTX
// it embeds. ./report_data -h lists the options; ./report_data > report.csv keeps the
// CSV (and its # lines) apart from the diagnostics on stderr.

#include <algorithm>
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

// common: cli
// Strict command line, shared by the command-line lessons (no CUDA call in it,
// so a bad command line gets exit 2 on a machine without a GPU too).
// - Arguments are read left to right; the last occurrence of an option wins.
// - A valued option takes the next token, whatever it looks like.
// - A number is the whole token: no blanks, no trailing characters ("12x"),
//   base 10 for integers, finite for reals ("nan" and "inf" are refused), and
//   inside the range the program names. Overflow is an error, not a wrap.
// - Every error is one stderr line, "error: " + the option + what it accepts +
//   what it got, then the usage on stderr, and exit 2. -h/--help print the
//   usage on stdout and exit 0.
// Needs <cctype>, <cerrno>, <cmath>, <cstdarg>, <cstdio>, <cstdlib>, <cstring>,
// <string>, <utility>.
//
// Use:
//   CommandLine cl(argc, argv, usageText);
//   while (cl.next()) {
//     if (cl.is("-m")) m = cl.intValue(0, kMaxDim);
//     else if (cl.is("-rtol")) rtol = cl.realValue(0.0, 1.0);
//     else if (cl.is("-csv")) csv = true;  // a flag takes no value
//     else cl.unknownOption();
//   }
//   if (bs % tile != 0) cl.fail("-bs must be a multiple of -tile (%d), got %d", tile, bs);
constexpr int kExitBadCommandLine = 2;

// The whole token as a base-10 integer in [lo, hi]; false if it is not one.
inline bool parseIntToken(const char* text, long long lo, long long hi, long long* out) {
  if (text == nullptr || *text == '\0' || std::isspace(static_cast<unsigned char>(*text)))
    return false;  // strtoll would skip leading blanks
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno == ERANGE || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// The whole token as a finite real number in [lo, hi]; false if it is not one.
inline bool parseRealToken(const char* text, double lo, double hi, double* out) {
  if (text == nullptr || *text == '\0' || std::isspace(static_cast<unsigned char>(*text)))
    return false;
  char* end = nullptr;
  const double v = std::strtod(text, &end);  // an overflow comes back as inf
  if (*end != '\0' || !std::isfinite(v) || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

class CommandLine {
 public:
  // usage: the whole help text, ending in a newline.
  CommandLine(int argc, char** argv, std::string usage)
      : argc_(argc), argv_(argv), usage_(std::move(usage)) {}

  // Steps to the next token; false when none is left. Handles -h/--help.
  bool next() {
    if (++i_ >= argc_) return false;
    if (is("-h") || is("--help")) {
      std::fputs(usage_.c_str(), stdout);
      std::exit(EXIT_SUCCESS);
    }
    return true;
  }
  bool is(const char* name) const { return std::strcmp(argv_[i_], name) == 0; }
  const char* option() const { return argv_[i_]; }

  // The value of the current option, as an integer in [lo, hi].
  long long intValue(long long lo, long long hi) {
    const char* opt = option();
    const char* text = takeValue();
    long long v = 0;
    if (text == nullptr || !parseIntToken(text, lo, hi, &v))
      fail("%s expects an integer in [%lld, %lld], got %s%s%s", opt, lo, hi,
           text ? "\"" : "nothing", text ? text : "", text ? "\"" : "");
    return v;
  }
  // The value of the current option, as a finite real number in [lo, hi].
  double realValue(double lo, double hi) {
    const char* opt = option();
    const char* text = takeValue();
    double v = 0.0;
    if (text == nullptr || !parseRealToken(text, lo, hi, &v))
      fail("%s expects a finite number in [%g, %g], got %s%s%s", opt, lo, hi,
           text ? "\"" : "nothing", text ? text : "", text ? "\"" : "");
    return v;
  }

  [[noreturn]] void unknownOption() const {
    fail("unknown option \"%s\" (the accepted options are listed below)", option());
  }
  // One "error: ..." line (printf-style message), the usage, exit 2. Also for
  // rules that span options and for sizes refused after parsing.
  [[noreturn]] __attribute__((format(printf, 2, 3))) void fail(const char* fmt, ...) const {
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

 private:
  // The next token as the current option's value, or nullptr at the end.
  const char* takeValue() { return (i_ + 1 < argc_) ? argv_[++i_] : nullptr; }

  int argc_;
  char** argv_;
  std::string usage_;
  int i_ = 0;  // argv_[0] is the program
};
// end common: cli

// ---------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------
constexpr int kTile = 16;                  // both kernels: 16 x 16 threads per block
constexpr int kBlockThreads = kTile * kTile;
constexpr long long kLadder[] = {128, 200, 256, 511, 512, 1000, 1024, 2048};
constexpr long long kFirstRung = kLadder[0];
constexpr long long kDefaultMaxN = 2048;
constexpr long long kMaxN = 8192;          // 5 device buffers of 256 MiB, 512 MiB of host
constexpr long long kCpuFullMax = 1024;    // full CPU reference up to here
constexpr int kSampleEdgeRows = 8;         // above it: the first and last 8 rows,
constexpr int kSampleSpreadRows = 16;      // and 16 rows spread between them
constexpr int kDefaultIters = 20;
constexpr int kMaxIters = 10000;
constexpr int kWarmups = 3;
constexpr uint32_t kSeed = 987654321u;     // reset at every rung
constexpr double kBaseRtol = 1e-5;         // the FP32 row of the course's tolerance table
constexpr int kMantissaBits = 23;          // FP32
constexpr long long kStreamFloats = 1LL << 18;  // 1 MiB per copy back while checking
constexpr int kDeviceBuffers = 5;          // A, B, naive's C, tiled's C, a saved C

static_assert(kCpuFullMax >= kFirstRung,
              "the first rung must get a full CPU check: every later trust rests on it");
static_assert(kMaxN * kMaxN * 8 < (1LL << 62),
              "every element and byte count of an n x n problem fits in int64");

// ---------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------
// Both kernels: C (M x N) = A (M x K) * B (K x N); thread (tx, ty) of block (bx, by)
// owns C(by*16 + ty, bx*16 + tx) and sums its K products in ascending k with fmaf, so
// the two kernels add the same products in the same order.
// launch assumption (both): blockDim = (16, 16), gridDim = (ceil(N / 16), ceil(M / 16));
//   main checks the grid against the device before launching.

// The baseline: the dot product reads A and B from global memory.
// memory: each thread loads K values of A and K of B (8 MNK bytes in all, the model in
//   column model_load_gb); L1 and L2 serve most of them (a row of A is shared by the 16
//   threads of a block row, a column of B by the 16 of a block column, and at these
//   sizes B stays in L2), which is why naive outruns its modelled roof.
__global__ void gemmNaiveKernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, long long M, long long N, long long K) {
  const long long row = static_cast<long long>(blockIdx.y) * kTile + threadIdx.y;
  const long long col = static_cast<long long>(blockIdx.x) * kTile + threadIdx.x;
  if (row >= M || col >= N) return;  // no barrier in this kernel: an early return is safe
  float acc = 0.0f;
  for (long long k = 0; k < K; ++k) acc = fmaf(A[row * K + k], B[k * N + col], acc);
  C[row * N + col] = acc;
}

// One change from naive: the K loop runs in steps of 16, and each step stages a 16 x 16
// tile of A and one of B in shared memory, where each value is reused 16 times.
// memory: per K step every thread loads one element of A (its row, k0 + tx) and one of
//   B (k0 + ty, its column), zero past the edges; A is read ceil(N / 16) times and B
//   ceil(M / 16) times in all (4 (MK ceil(N/16) + KN ceil(M/16)) bytes, n^3 / 2 when 16
//   divides n). Static shared memory: two 16 x 16 float tiles, 2 KiB.
// solution: tiled-kernel
constexpr bool kTiledKernelWritten = true;  // the starter says false
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

void launchGemm(Kernel k, const float* A, const float* B, float* C, long long n) {
  const dim3 block(kTile, kTile);
  const dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile),
                  static_cast<unsigned>((n + kTile - 1) / kTile));
  if (k == Kernel::kNaive)
    gemmNaiveKernel<<<grid, block>>>(A, B, C, n, n, n);
  else
    gemmTiledKernel<<<grid, block>>>(A, B, C, n, n, n);
}

// ---------------------------------------------------------------------------
// Inputs and CPU reference
// ---------------------------------------------------------------------------
// A 32-bit LCG, 24 bits per draw, values f - 0.5 in [-0.5, 0.5) (exact in float).
// A is filled first in row-major order, then B continues from the same state.
struct Lcg {
  uint32_t s;
  float next() {
    s = 1664525u * s + 1013904223u;
    return static_cast<float>(s >> 8) / 16777216.0f;
  }
};

void fillInputs(std::vector<float>& A, std::vector<float>& B) {
  Lcg g{kSeed};
  for (float& a : A) a = g.next() - 0.5f;
  for (float& b : B) b = g.next() - 0.5f;
}

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

// ---------------------------------------------------------------------------
// Command line and the ladder (no CUDA call before requireCudaDevice)
// ---------------------------------------------------------------------------
struct Options {
  long long maxn = kDefaultMaxN;
  int iters = kDefaultIters;
};

std::string usageText() {
  char buf[2048];
  std::snprintf(
      buf, sizeof buf,
      "usage: report_data [-maxn N] [-iters I] [-h | --help]\n"
      "Prints CSV for a roofline: a naive and a 16 x 16 tiled FP32 GEMM (M = N = K = n)\n"
      "for n on the ladder 128 200 256 511 512 1000 1024 2048 4096 ... below N, and N.\n"
      "  -maxn N     the largest n, an integer in [%lld, %lld] (default %lld)\n"
      "  -iters I    timed launches per row, an integer in [1, %d] (default %d), after %d\n"
      "              untimed warm-ups\n"
      "  -h, --help  print this help and exit\n"
      "Exit status: 0 every row verified and passed, 1 a row failed or is unverified, or\n"
      "a CUDA error, 2 bad command line, 77 no usable CUDA device.\n",
      kFirstRung, kMaxN, kDefaultMaxN, kMaxIters, kDefaultIters, kWarmups);
  return buf;
}

// Parses and validates argv; any error exits 2 (CommandLine::fail).
Options parseOptions(CommandLine& cl) {
  Options o;
  while (cl.next()) {
    if (cl.is("-maxn")) o.maxn = cl.intValue(kFirstRung, kMaxN);
    else if (cl.is("-iters")) o.iters = static_cast<int>(cl.intValue(1, kMaxIters));
    else cl.unknownOption();
  }
  return o;
}

// The rungs: every ladder size below maxn, then maxn itself.
std::vector<long long> ladderUpTo(long long maxn) {
  std::vector<long long> sizes;
  for (long long n : kLadder)
    if (n < maxn) sizes.push_back(n);
  for (long long n = 2 * kLadder[sizeof(kLadder) / sizeof(kLadder[0]) - 1]; n < maxn; n *= 2)
    sizes.push_back(n);
  sizes.push_back(maxn);
  return sizes;
}

// ---------------------------------------------------------------------------
// Byte models
// ---------------------------------------------------------------------------
// snippet: byte-models
// Loads the kernel issues if no cache served any (in-bounds loads only; C excluded).
double modelLoadBytes(Kernel k, long long M, long long N, long long K) {
  const double m = double(M), n = double(N), kk = double(K);
  if (k == Kernel::kNaive) return 8.0 * m * n * kk;  // K of A and K of B per output
  const double gridX = double((N + kTile - 1) / kTile), gridY = double((M + kTile - 1) / kTile);
  return 4.0 * (m * kk * gridX + kk * n * gridY);    // A once per block column, B per row
}

// What any GEMM must move: A and B read once, C written once.
double compulsoryBytes(long long M, long long N, long long K) {
  return 4.0 * (double(M) * K + double(K) * N + double(M) * N);
}
// end snippet

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------
// The course's K-scaled rule: rtol = max(1e-5, 4 * 2^-23 * sqrt(K)) (independent
// rounding errors add like a random walk; 4 allows any legitimate reordering) and
// atol = rtol * max|ref| over the reference compared. An element fails when
// !(|got - ref| <= atol + rtol*|ref|), so NaN and infinity fail.
double rtolForK(long long k) {
  return std::max(kBaseRtol, 4.0 * std::ldexp(1.0, -kMantissaBits) * std::sqrt(double(k)));
}

struct CheckStats {
  long long checked = 0, failures = 0;
  double max_abs_err = 0.0;  // NaN once any element's error is NaN
  double err_frac = 0.0;     // max of |got - ref| / (atol + rtol*|ref|); 1 = at the limit
  long long first_bad = -1;  // linear index of the first failure
  double first_got = 0.0, first_ref = 0.0, first_d = 0.0, first_t = 0.0;

  void add(long long index, double got, double ref, double atol, double rtol) {
    const double d = std::fabs(got - ref), t = atol + rtol * std::fabs(ref);
    ++checked;
    if (!(d <= t) && failures++ == 0) {
      first_bad = index;
      first_got = got;
      first_ref = ref;
      first_d = d;
      first_t = t;
    }
    if (std::isnan(d) || d > max_abs_err) max_abs_err = d;
    const double frac = t > 0.0 ? d / t : (d == 0.0 ? 0.0 : HUGE_VAL);
    if (std::isnan(frac) || frac > err_frac) err_frac = frac;
  }
  bool pass() const { return checked > 0 && failures == 0; }
};

// NaN-aware maximum (a NaN on either side wins).
double maxOrNan(double a, double b) { return (std::isnan(a) || std::isnan(b)) ? NAN : std::max(a, b); }

// Copies rows of an M x N device matrix back, a block of whole rows at a time
// (about kStreamFloats floats), and hands each block to visit(first_row, rows, x, y),
// where y holds the same rows of dY (or is nullptr). No full copy of C on the host.
template <typename Visit>
void streamRows(const float* dX, const float* dY, long long M, long long N, Visit visit) {
  const long long per = std::max(1LL, kStreamFloats / N);
  std::vector<float> x(static_cast<size_t>(per * N)), y(dY ? static_cast<size_t>(per * N) : 0);
  for (long long r0 = 0; r0 < M; r0 += per) {
    const long long rows = std::min(per, M - r0);
    const size_t bytes = static_cast<size_t>(rows * N) * sizeof(float);
    CUDA_CHECK(cudaMemcpy(x.data(), dX + r0 * N, bytes, cudaMemcpyDeviceToHost));
    if (dY) CUDA_CHECK(cudaMemcpy(y.data(), dY + r0 * N, bytes, cudaMemcpyDeviceToHost));
    visit(r0, rows, x.data(), dY ? y.data() : nullptr);
  }
}

// True when two device matrices hold the same bits.
bool sameBits(const float* dX, const float* dY, long long M, long long N) {
  bool same = true;
  streamRows(dX, dY, M, N, [&](long long, long long rows, const float* x, const float* y) {
    same = same && std::memcmp(x, y, static_cast<size_t>(rows * N) * sizeof(float)) == 0;
  });
  return same;
}

enum class Verdict { kPass, kFail, kUnverified };
const char* verdictName(Verdict v) {
  return v == Verdict::kPass ? "PASS" : v == Verdict::kFail ? "FAIL" : "UNVERIFIED";
}

// How one row of the CSV was verified, and what it found.
struct RowCheck {
  std::string how;              // the check column
  Verdict verdict = Verdict::kUnverified;
  CheckStats cpu;               // against the double CPU reference (all or sampled)
  bool has_xcheck = false;
  CheckStats xcheck;            // tiled against naive, every element
  std::string why;              // for a row that does not pass: one stderr line
};

// One "GATE: ..." description of a check's first failure.
std::string describeFailure(const char* what, const CheckStats& s, long long n) {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s: %lld of %lld elements outside the tolerance; first at row %lld, col %lld: "
                "got %.9g, ref %.9g, |got - ref| = %.3e > %.3e",
                what, s.failures, s.checked, s.first_bad / n, s.first_bad % n, s.first_got,
                s.first_ref, s.first_d, s.first_t);
  return buf;
}

// Rungs up to kCpuFullMax: every element against the full CPU reference.
RowCheck verifyAgainstCpu(const float* dC, const std::vector<double>& ref, double refMax,
                          long long n) {
  RowCheck rc;
  rc.how = "cpu";
  const double rtol = rtolForK(n), atol = rtol * refMax;
  streamRows(dC, nullptr, n, n, [&](long long r0, long long rows, const float* x, const float*) {
    for (long long e = 0; e < rows * n; ++e)
      rc.cpu.add(r0 * n + e, x[e], ref[static_cast<size_t>(r0 * n + e)], atol, rtol);
  });
  rc.verdict = rc.cpu.pass() ? Verdict::kPass : Verdict::kFail;
  if (!rc.cpu.pass()) rc.why = describeFailure("failed the full CPU check", rc.cpu, n);
  return rc;
}

// The verification ladder above kCpuFullMax, where a full CPU reference would cost
// O(n^3) on one core: a sample of whole rows is computed on the CPU instead (the
// common reference on the gathered rows of A, so the same bits as a full one), and
// the rest rests on trust that is stated and conditional:
// - naive: the sampled rows against the CPU, and every element finite; the rows not
//   sampled are trusted only if naive passed the full CPU check at every smaller rung
//   (some of which are not multiples of the tile); otherwise the row is UNVERIFIED.
// - tiled: the same sampled rows against the CPU, and every element against naive's
//   output at this size (the K-scaled rule with max|naive|); trusted only if naive's
//   row at this size passed; otherwise UNVERIFIED.
// Naive and tiled sum the same products in the same order, so a correct pair agrees
// exactly and the cross-check cannot see an error the two share (a layout or indexing
// convention); the sampled rows, against an independent CPU computation, can.
// solution: verify-ladder
constexpr bool kLadderWritten = true;  // the starter says false

struct RowsReference {
  std::vector<long long> rows;    // sampled row indices, ascending
  std::vector<int> slot;          // slot[i] = position of row i in rows, or -1
  std::vector<double> ref;        // rows.size() x n, row-major
  double ref_max = 0.0;           // max |ref| over the sampled rows
};

std::vector<long long> sampleRows(long long n) {
  std::vector<long long> rows;
  for (long long i = 0; i < kSampleEdgeRows; ++i) rows.push_back(i);
  for (long long i = 0; i < kSampleSpreadRows; ++i)
    rows.push_back((2 * i + 1) * n / (2 * kSampleSpreadRows));
  for (long long i = n - kSampleEdgeRows; i < n; ++i) rows.push_back(i);
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [n](long long r) { return r < 0 || r >= n; }),
             rows.end());
  return rows;
}

RowsReference cpuRowsReference(const std::vector<float>& A, const std::vector<float>& B,
                               long long n) {
  RowsReference rr;
  rr.rows = sampleRows(n);
  rr.slot.assign(static_cast<size_t>(n), -1);
  const long long count = static_cast<long long>(rr.rows.size());
  std::vector<float> aRows(static_cast<size_t>(count * n));
  for (long long s = 0; s < count; ++s) {
    rr.slot[static_cast<size_t>(rr.rows[static_cast<size_t>(s)])] = static_cast<int>(s);
    std::memcpy(aRows.data() + s * n, A.data() + rr.rows[static_cast<size_t>(s)] * n,
                static_cast<size_t>(n) * sizeof(float));
  }
  rr.ref.resize(static_cast<size_t>(count * n));
  cpuReferenceGemm(aRows.data(), B.data(), rr.ref.data(), count, n, n);
  for (double v : rr.ref) rr.ref_max = std::max(rr.ref_max, std::fabs(v));
  return rr;
}

// naive above kCpuFullMax. cpuRecord: naive passed every full CPU check so far;
// firstCpuFailure: the first rung where it did not (when !cpuRecord). Also returns
// max|naive| over every element, for the tiled cross-check's atol.
RowCheck verifyNaiveAbove(const float* dC, const RowsReference& rr, long long n, bool cpuRecord,
                          long long firstCpuFailure, double* naiveMax) {
  RowCheck rc;
  rc.how = "cpu-rows+finite";
  const double rtol = rtolForK(n), atol = rtol * rr.ref_max;
  long long firstNonFinite = -1;
  double maxAbs = 0.0;
  streamRows(dC, nullptr, n, n, [&](long long r0, long long rows, const float* x, const float*) {
    for (long long r = 0; r < rows; ++r) {
      const int s = rr.slot[static_cast<size_t>(r0 + r)];
      for (long long j = 0; j < n; ++j) {
        const float v = x[r * n + j];
        if (!std::isfinite(v) && firstNonFinite < 0) firstNonFinite = (r0 + r) * n + j;
        if (std::isfinite(v)) maxAbs = std::max(maxAbs, double(std::fabs(v)));
        if (s >= 0)
          rc.cpu.add((r0 + r) * n + j, v, rr.ref[static_cast<size_t>(s * n + j)], atol, rtol);
      }
    }
  });
  *naiveMax = maxAbs;
  char buf[400];
  if (!rc.cpu.pass()) {
    rc.verdict = Verdict::kFail;
    rc.why = describeFailure("failed the CPU check of its sampled rows", rc.cpu, n);
  } else if (firstNonFinite >= 0) {
    rc.verdict = Verdict::kFail;
    std::snprintf(buf, sizeof buf, "element (%lld, %lld), outside the sampled rows, is not "
                  "finite", firstNonFinite / n, firstNonFinite % n);
    rc.why = buf;
  } else if (!cpuRecord) {
    rc.verdict = Verdict::kUnverified;
    std::snprintf(buf, sizeof buf, "its %lld unsampled rows rest on naive's full CPU checks, "
                  "and it failed the one at n = %lld",
                  n - static_cast<long long>(rr.rows.size()), firstCpuFailure);
    rc.why = buf;
  } else {
    rc.verdict = Verdict::kPass;
  }
  return rc;
}

// tiled above kCpuFullMax, against the sampled rows and against naive's output dNaive
// at this size; naiveVerdict is that naive row's verdict.
RowCheck verifyTiledAbove(const float* dC, const float* dNaive, double naiveMax,
                          Verdict naiveVerdict, const RowsReference& rr, long long n) {
  RowCheck rc;
  rc.how = "cpu-rows+xcheck(naive)";
  rc.has_xcheck = true;
  const double rtol = rtolForK(n), atol = rtol * rr.ref_max, xatol = rtol * naiveMax;
  streamRows(dC, dNaive, n, n, [&](long long r0, long long rows, const float* x, const float* y) {
    for (long long r = 0; r < rows; ++r) {
      const int s = rr.slot[static_cast<size_t>(r0 + r)];
      for (long long j = 0; j < n; ++j) {
        const long long e = r * n + j;
        rc.xcheck.add((r0 + r) * n + j, x[e], y[e], xatol, rtol);
        if (s >= 0)
          rc.cpu.add((r0 + r) * n + j, x[e], rr.ref[static_cast<size_t>(s * n + j)], atol, rtol);
      }
    }
  });
  if (!rc.cpu.pass()) {
    rc.verdict = Verdict::kFail;
    rc.why = describeFailure("failed the CPU check of its sampled rows", rc.cpu, n);
  } else if (naiveVerdict != Verdict::kPass) {
    rc.verdict = Verdict::kUnverified;
    rc.why = "its unsampled rows rest on the cross-check against naive at this size, and "
             "that naive row did not pass";
  } else if (!rc.xcheck.pass()) {
    rc.verdict = Verdict::kFail;
    rc.why = describeFailure("failed the cross-check against naive", rc.xcheck, n);
  } else {
    rc.verdict = Verdict::kPass;
  }
  return rc;
}
// end solution

// common: ceilings
// Roofline ceilings, measured on this device by this program, with the figures
// the device attributes imply printed beside them for comparison only.
// - Bandwidth: a copy kernel streams one buffer into another. Each buffer is 4
//   times the L2 size the device reports (at least 32 MiB, at most a quarter of
//   the free memory), so L2 cannot hold the data between launches. Bytes =
//   read + written; median of several launches through the common timer.
// - FP32 peak: an FMA-bound kernel. Every thread runs kCeilingFmaChains
//   independent FMA chains (the FMA pipe never waits for a result), and the
//   grid fills every SM to its thread limit. 2 FLOP per FMA.
// - From attributes: DRAM = 2 transfers per clock x memory clock x bus width.
//   An FP32 peak would be SMs x FP32 lanes per SM x 2 x clock, but the lane
//   count is not a device attribute (it needs a per-architecture table, which
//   this course does not keep), so the per-lane figure is printed and the
//   measured peak is expressed in it. CUDA 13 dropped the clock fields from
//   cudaDeviceProp; the attributes are queried instead, and a query that fails
//   or reports 0 prints n/a.
// - The roofline ceiling at arithmetic intensity AI (FLOP per byte) is
//   min(FP32 peak, AI x bandwidth).
// Run time: about 10 ms on an H200 (9 launches of each kernel). Needs the
// cuda_check and timer blocks above it, and <algorithm>, <cstdio>, <vector>.
constexpr int kCeilingThreads = 256;     // per block, both kernels
constexpr int kCeilingCopyUnroll = 4;    // float4 loads in flight per thread
constexpr int kCeilingFmaChains = 8;     // independent FMA chains per thread
constexpr int kCeilingFmaIters = 8192;   // FMAs per chain: ~0.6 ms per launch
constexpr int kCeilingWarmups = 2;
constexpr int kCeilingSamples = 7;       // odd: the median is one launch
constexpr size_t kCeilingMinCopyBytes = size_t(32) << 20;
static_assert(kCeilingFmaIters % 16 == 0,
              "the FMA loop is unrolled by 16: a whole number of unrolled steps "
              "keeps the loop counter out of the issue slots");

struct Ceilings {
  double copy_gbs;     // measured: bytes read + written / median time
  double fp32_gflops;  // measured: 2 x FMAs / median time
  double copy_bytes;   // size of each copy buffer
  double l2_bytes;     // the device's L2 size
  int sms;             // multiprocessors
  int fma_blocks;      // blocks of kCeilingThreads in the FMA launch
};

// launch assumption: any 1-D block; gridDim.x * blockDim.x * kCeilingCopyUnroll
//   >= n (the host launches exactly that many, rounded up).
// memory: reads n float4 and writes n float4, coalesced; each thread issues
//   its kCeilingCopyUnroll loads before its first store.
__global__ void ceilingCopyKernel(const float4* __restrict__ in, float4* __restrict__ out,
                                  long long n) {
  const long long base =
      static_cast<long long>(blockIdx.x) * blockDim.x * kCeilingCopyUnroll + threadIdx.x;
  float4 v[kCeilingCopyUnroll];
#pragma unroll
  for (int u = 0; u < kCeilingCopyUnroll; ++u) {
    const long long i = base + static_cast<long long>(u) * blockDim.x;
    if (i < n) v[u] = in[i];
  }
#pragma unroll
  for (int u = 0; u < kCeilingCopyUnroll; ++u) {
    const long long i = base + static_cast<long long>(u) * blockDim.x;
    if (i < n) out[i] = v[u];
  }
}

// launch assumption: out holds gridDim.x * blockDim.x floats.
// memory: one float written per thread at the end; the rest is registers.
// mul and add are arguments, so the compiler cannot fold the chains away.
__global__ void ceilingFmaKernel(float* out, int iters, float mul, float add) {
  float acc[kCeilingFmaChains];
#pragma unroll
  for (int c = 0; c < kCeilingFmaChains; ++c) acc[c] = static_cast<float>(threadIdx.x + c);
#pragma unroll 16
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kCeilingFmaChains; ++c) acc[c] = fmaf(acc[c], mul, add);
  }
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < kCeilingFmaChains; ++c) sum += acc[c];
  out[static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
}

// Measures both ceilings on the current device; allocates and frees its own
// buffers (call it when about a quarter of the memory is free).
inline Ceilings measureCeilings() {
  int dev = 0, threadsPerSm = 0, l2 = 0;
  Ceilings c{};
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&threadsPerSm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));

  // Bandwidth: whole blocks only, so no thread of the copy is idle.
  const size_t perBlock = size_t(kCeilingThreads) * kCeilingCopyUnroll * sizeof(float4);
  size_t bytes = std::max(size_t(4) * static_cast<size_t>(l2), kCeilingMinCopyBytes);
  bytes = std::min(bytes, freeBytes / 4) / perBlock * perBlock;
  if (bytes == 0) {
    std::fprintf(stderr, "ceilings: too little free device memory for the copy buffers\n");
    std::exit(EXIT_FAILURE);
  }
  float4* in = nullptr;
  float4* out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, bytes));
  CUDA_CHECK(cudaMalloc(&out, bytes));
  CUDA_CHECK(cudaMemset(in, 0, bytes));  // the copy reads initialised memory
  const long long n4 = static_cast<long long>(bytes / sizeof(float4));
  const unsigned copyBlocks = static_cast<unsigned>(bytes / perBlock);
  const TimingStats copy = timeKernel(
      [&] { ceilingCopyKernel<<<copyBlocks, kCeilingThreads>>>(in, out, n4); },
      kCeilingWarmups, kCeilingSamples);
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
  c.copy_bytes = static_cast<double>(bytes);
  c.l2_bytes = static_cast<double>(l2);
  c.copy_gbs = 2.0 * c.copy_bytes / (copy.median_ms * 1e-3) / 1e9;

  // FP32 peak: every SM holds as many blocks as its thread limit allows.
  c.fma_blocks = c.sms * std::max(1, threadsPerSm / kCeilingThreads);
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&sink, size_t(c.fma_blocks) * kCeilingThreads * sizeof(float)));
  const TimingStats fma = timeKernel(
      [&] {
        ceilingFmaKernel<<<c.fma_blocks, kCeilingThreads>>>(sink, kCeilingFmaIters, 0.999f,
                                                             0.001f);
      },
      kCeilingWarmups, kCeilingSamples);
  CUDA_CHECK(cudaFree(sink));
  const double flop =
      2.0 * kCeilingFmaChains * kCeilingFmaIters * double(c.fma_blocks) * kCeilingThreads;
  c.fp32_gflops = flop / (fma.median_ms * 1e-3) / 1e9;
  return c;
}

// A device attribute, or 0 when the driver cannot report it (the error is
// cleared, so a later launch check does not pick it up).
inline int ceilingAttributeOrZero(cudaDeviceAttr attr) {
  int dev = 0, v = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  if (cudaDeviceGetAttribute(&v, attr, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return v;
}

// Prints both measured ceilings and the attribute figures to `out` (stdout,
// or stderr where stdout carries CSV).
inline void printCeilings(const Ceilings& c, std::FILE* out) {
  std::fprintf(out, "Ceilings, measured on this device by this program (median of %d launches "
               "each):\n", kCeilingSamples);
  std::fprintf(out, "  bandwidth: %.1f GB/s measured, a kernel copying %.1f MB into a second "
               "buffer", c.copy_gbs, c.copy_bytes / 1e6);
  if (c.l2_bytes > 0.0)
    std::fprintf(out, " (each %.1f times the L2 size)", c.copy_bytes / c.l2_bytes);
  std::fprintf(out, "\n");
  std::fprintf(out, "  FP32 peak: %.1f GFLOP/s measured, %d blocks of %d threads (every SM "
               "full), %d independent FMA chains per thread\n",
               c.fp32_gflops, c.fma_blocks, kCeilingThreads, kCeilingFmaChains);
  const int memKhz = ceilingAttributeOrZero(cudaDevAttrMemoryClockRate);
  const int busBits = ceilingAttributeOrZero(cudaDevAttrGlobalMemoryBusWidth);
  const int clockKhz = ceilingAttributeOrZero(cudaDevAttrClockRate);
  if (memKhz > 0 && busBits > 0) {
    std::fprintf(out, "  from attributes, for comparison: DRAM 2 x %.0f MHz x %d-bit bus = "
                 "%.1f GB/s (assumes 2 transfers per clock)\n",
                 memKhz / 1e3, busBits, 2.0 * memKhz * 1e3 * busBits / 8.0 / 1e9);
  } else {
    std::fprintf(out, "  from attributes, for comparison: DRAM n/a (no memory clock or bus "
                 "width reported)\n");
  }
  if (clockKhz > 0) {
    const double perLane = c.sms * 2.0 * clockKhz * 1e3 / 1e9;
    std::fprintf(out, "  from attributes, for comparison: FP32 %d SMs x 2 FLOP x %.0f MHz = "
                 "%.1f GFLOP/s per FP32 lane of an SM; the lane count is not an attribute "
                 "(the measured peak is %.1fx this)\n",
                 c.sms, clockKhz / 1e3, perLane, c.fp32_gflops / perLane);
  } else {
    std::fprintf(out, "  from attributes, for comparison: FP32 n/a (no clock rate "
                 "reported)\n");
  }
}

// The roofline: at arithmetic intensity ai (FLOP per byte), no kernel beats
// the compute peak, nor ai x the bandwidth. Which of the two binds is decided
// by measured figures, so near the ridge (ai = peak / bandwidth) it can change
// from run to run: print both terms rather than a word that names one.
inline double rooflineGflops(const Ceilings& c, double ai) {
  return std::min(c.fp32_gflops, ai * c.copy_gbs);
}
// end common: ceilings

// ---------------------------------------------------------------------------
// Occupancy, and what limits it
// ---------------------------------------------------------------------------
// The occupancy API gives the active blocks per SM; what binds is found by
// elimination, with the API as the only judge: the thread limit (threads per SM /
// block threads) or the block-slot limit if the count equals it; else shared memory if
// the count equals the SM's shared memory over each block's (its static tiles plus the
// per-block reservation); else registers. Register counts are the compiler's (a build
// whose PTX the driver compiles can differ by a few), so they and what follows from
// them carry their own units: "regs", "blocks/SM", "% occupancy".
struct Occupancy {
  int regs, blocks;
  double fraction;
  const char* limiter;
};

template <typename KernelFn>
Occupancy occupancyOf(KernelFn kernel, const cudaDeviceProp& prop) {
  cudaFuncAttributes fa{};
  CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kBlockThreads, 0));
  const long long threadBound = prop.maxThreadsPerMultiProcessor / kBlockThreads;
  const long long slotBound = prop.maxBlocksPerMultiProcessor;
  const long long smemPerBlock =
      static_cast<long long>(fa.sharedSizeBytes) + static_cast<long long>(prop.reservedSharedMemPerBlock);
  const long long smemBound = smemPerBlock > 0
                                  ? static_cast<long long>(prop.sharedMemPerMultiprocessor) / smemPerBlock
                                  : slotBound;
  const char* limiter = (blocks == threadBound && threadBound <= slotBound) ? "threads"
                        : blocks == slotBound                                ? "block-slots"
                        : blocks == smemBound                                ? "shared memory"
                                                                             : "registers";
  return Occupancy{fa.numRegs, blocks,
                   double(blocks) * kBlockThreads / prop.maxThreadsPerMultiProcessor, limiter};
}

// ---------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------
void printPreamble(const cudaDeviceProp& prop, const Options& o,
                   const std::vector<long long>& sizes, const Ceilings& c, const Occupancy& naive,
                   const Occupancy& tiled) {
  std::printf("# GPU: %s (compute capability %d.%d), %d SMs, %d threads/SM\n", prop.name,
              prop.major, prop.minor, prop.multiProcessorCount, prop.maxThreadsPerMultiProcessor);
  std::printf("# report_data: C = A * B, FP32, row-major, M = N = K = n for n =");
  for (long long n : sizes) std::printf(" %lld", n);
  std::printf("; naive and 16 x 16 tiled kernels; median of %d timed launches after %d "
              "warm-ups; inputs f - 0.5 from an LCG seeded %u at every n\n",
              o.iters, kWarmups, kSeed);
  std::printf("# ceilings, measured on this device by this program (median of %d launches "
              "each): bandwidth %.1f GB/s (a copy kernel, two %.1f MB buffers); FP32 peak %.1f "
              "GFLOP/s (an FMA kernel filling every SM)\n",
              kCeilingSamples, c.copy_gbs, c.copy_bytes / 1e6, c.fp32_gflops);
  std::printf("# roofline: ceiling(AI) = min(FP32 peak, AI x bandwidth), both measured; "
              "pct_of_roof = gflops / ceiling(ai_compulsory)\n");
  std::printf("# occupancy (cudaOccupancyMaxActiveBlocksPerMultiprocessor, %d threads per "
              "block): naive %d regs, %d blocks/SM, %.1f%% occupancy, limited by %s; tiled %d "
              "regs, %d blocks/SM, %.1f%% occupancy, limited by %s\n",
              kBlockThreads, naive.regs, naive.blocks, 100.0 * naive.fraction, naive.limiter,
              tiled.regs, tiled.blocks, 100.0 * tiled.fraction, tiled.limiter);
  std::printf("# tolerance: rtol = max(1e-5, 4 x 2^-23 x sqrt(K)), atol = rtol x max|ref| over "
              "the reference compared; an element fails unless |got - ref| <= atol + rtol x "
              "|ref| (NaN and inf fail); every checked launch writes into a NaN-poisoned C\n");
  std::printf("# check = cpu: every element against the double CPU reference (n <= %lld)\n",
              kCpuFullMax);
  std::printf("# check = cpu-rows+finite: %d rows (the first %d, the last %d, %d spread; every "
              "column) against the double CPU reference, and every element finite; the other "
              "rows are trusted only because naive passed cpu at every n <= %lld\n",
              2 * kSampleEdgeRows + kSampleSpreadRows, kSampleEdgeRows, kSampleEdgeRows,
              kSampleSpreadRows, kCpuFullMax);
  std::printf("# check = cpu-rows+xcheck(naive): the same rows against the CPU, and every "
              "element against naive's output at this n (xcheck_diff = the largest "
              "difference); trusted only if that naive row passed\n");
  std::printf("# cpu_elements = elements compared with the CPU reference; err_frac = the "
              "largest |got - ref| / (atol + rtol x |ref|) over every comparison (1 = at the "
              "tolerance); verdict PASS, FAIL, or UNVERIFIED (a check it relies on failed); "
              "only PASS rows are timed\n");
  std::printf("# bytes: model_load_gb = the loads the kernel issues if no cache served any "
              "(naive 8 MNK; tiled 4 (MK ceil(N/16) + KN ceil(M/16))), C excluded; "
              "compulsory_gb = A and B read once, C written once, 4 (MK + KN + MN); ai_model "
              "and ai_compulsory = 2 MNK / those bytes\n");
  std::printf("# no DRAM bandwidth is reported: model bytes / time counts load instructions "
              "that L1 and L2 serve (it can exceed what the device can move); compulsory "
              "bytes / time is only a lower bound on the DRAM traffic\n");
  std::printf("kernel,m,n,k,check,cpu_elements,verdict,max_abs_err,xcheck_diff,err_frac,ms,"
              "min_ms,max_ms,gflops,pct_of_roof,model_load_gb,compulsory_gb,ai_model,"
              "ai_compulsory\n");
  std::fflush(stdout);
}

void printRow(Kernel k, long long n, const RowCheck& rc, bool timed, const TimingStats& t,
              const Ceilings& c) {
  const double flop = 2.0 * double(n) * n * n;
  const double model = modelLoadBytes(k, n, n, n), compulsory = compulsoryBytes(n, n, n);
  std::printf("%s,%lld,%lld,%lld,%s,%lld,%s,%.3e,", kernelName(k), n, n, n, rc.how.c_str(),
              rc.cpu.checked, verdictName(rc.verdict), rc.cpu.max_abs_err);
  if (rc.has_xcheck) std::printf("%.3e", rc.xcheck.max_abs_err);
  std::printf(",%.3f,", rc.has_xcheck ? maxOrNan(rc.cpu.err_frac, rc.xcheck.err_frac)
                                      : rc.cpu.err_frac);
  if (timed && t.median_ms > 0.0) {
    const double gflops = flop / (t.median_ms * 1e-3) / 1e9;
    std::printf("%.4f,%.4f,%.4f,%.1f,%.2f,", t.median_ms, t.min_ms, t.max_ms, gflops,
                100.0 * gflops / rooflineGflops(c, flop / compulsory));
  } else {
    std::printf(",,,,,");
  }
  std::printf("%.6g,%.6g,%.3f,%.3f\n", model / 1e9, compulsory / 1e9, flop / model,
              flop / compulsory);
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------
template <typename T>
std::vector<T> hostBuffer(long long count) {
  try {
    return std::vector<T>(static_cast<size_t>(count));
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "host allocation of %.2f GiB failed\n",
                 count * sizeof(T) / 1073741824.0);
    std::exit(EXIT_FAILURE);
  }
}

int main(int argc, char** argv) {
  CommandLine cl(argc, argv, usageText());
  const Options o = parseOptions(cl);  // exit 2 on a bad command line, no CUDA call
  const std::vector<long long> sizes = ladderUpTo(o.maxn);

  const cudaDeviceProp prop = requireCudaDevice();  // exit 77 without a device
  // Refuse, before any allocation, what the device cannot launch or hold.
  const long long grid = (o.maxn + kTile - 1) / kTile;
  if (grid > prop.maxGridSize[0] || grid > prop.maxGridSize[1] ||
      kBlockThreads > prop.maxThreadsPerBlock)
    cl.fail("-maxn %lld: a grid of %lld x %lld blocks of %d threads exceeds this device's "
            "limits (%d x %d blocks, %d threads)", o.maxn, grid, grid, kBlockThreads,
            prop.maxGridSize[0], prop.maxGridSize[1], prop.maxThreadsPerBlock);
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  const long long deviceBytes = kDeviceBuffers * o.maxn * o.maxn * 4;
  if (deviceBytes > static_cast<long long>(freeBytes))
    cl.fail("-maxn %lld: %d device buffers of n x n floats need %.2f GiB, more than the %.2f "
            "GiB free", o.maxn, kDeviceBuffers, deviceBytes / 1073741824.0,
            freeBytes / 1073741824.0);

  const Ceilings c = measureCeilings();  // before the GEMM buffers: memory is free
  printCeilings(c, stderr);              // the same figures, with the attribute comparisons
  const Occupancy naiveOcc = occupancyOf(gemmNaiveKernel, prop);
  const Occupancy tiledOcc = occupancyOf(gemmTiledKernel, prop);
  printPreamble(prop, o, sizes, c, naiveOcc, tiledOcc);

  const size_t maxElems = static_cast<size_t>(o.maxn * o.maxn);
  float *dA = nullptr, *dB = nullptr, *dNaive = nullptr, *dTiled = nullptr, *dSaved = nullptr;
  CUDA_CHECK(cudaMalloc(&dA, maxElems * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dB, maxElems * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dNaive, maxElems * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dTiled, maxElems * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dSaved, maxElems * sizeof(float)));

  int rows = 0, passed = 0;
  bool naiveCpuRecord = true;     // naive passed every full CPU check so far
  long long naiveFirstCpuFailure = 0;
  for (const long long n : sizes) {
    const size_t elems = static_cast<size_t>(n * n);
    const size_t cBytes = elems * sizeof(float);
    std::vector<float> A = hostBuffer<float>(n * n), B = hostBuffer<float>(n * n);
    fillInputs(A, B);  // a fresh seed at every rung
    CUDA_CHECK(cudaMemcpy(dA, A.data(), cBytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, B.data(), cBytes, cudaMemcpyHostToDevice));

    // The reference this rung is checked against: full up to kCpuFullMax, sampled rows above.
    const bool full = n <= kCpuFullMax;
    std::vector<double> ref;
    double refMax = 0.0;
    RowsReference rowsRef;
    if (full) {
      ref = hostBuffer<double>(n * n);
      cpuReferenceGemm(A.data(), B.data(), ref.data(), n, n, n);
      for (double v : ref) refMax = std::max(refMax, std::fabs(v));
    } else {
      rowsRef = cpuRowsReference(A, B, n);
    }

    Verdict naiveVerdict = Verdict::kUnverified;
    double naiveMax = 0.0;
    for (const Kernel k : {Kernel::kNaive, Kernel::kTiled}) {
      float* dC = k == Kernel::kNaive ? dNaive : dTiled;
      const auto launch = [&] { launchGemm(k, dA, dB, dC, n); };
      // The checked launch, on its own, into a C poisoned with NaN (all bits set): an
      // element the kernel does not write fails, whatever the other kernel left.
      CUDA_CHECK(cudaMemset(dC, 0xFF, cBytes));
      launch();
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaDeviceSynchronize());
      RowCheck rc;
      if (full)
        rc = verifyAgainstCpu(dC, ref, refMax, n);
      else if (k == Kernel::kNaive)
        rc = verifyNaiveAbove(dC, rowsRef, n, naiveCpuRecord, naiveFirstCpuFailure, &naiveMax);
      else
        rc = verifyTiledAbove(dC, dNaive, naiveMax, naiveVerdict, rowsRef, n);
      if (k == Kernel::kNaive) {
        naiveVerdict = rc.verdict;
        if (full && rc.verdict != Verdict::kPass && naiveCpuRecord) {
          naiveCpuRecord = false;
          naiveFirstCpuFailure = n;
        }
      }
      // Only a passing row is timed; the timed launches must reproduce the checked bits.
      TimingStats t{};
      bool timed = false;
      if (rc.verdict == Verdict::kPass) {
        CUDA_CHECK(cudaMemcpy(dSaved, dC, cBytes, cudaMemcpyDeviceToDevice));
        t = timeKernel(launch, kWarmups, o.iters);
        timed = sameBits(dC, dSaved, n, n);
        if (!timed) {
          rc.verdict = Verdict::kFail;
          rc.why = "the timed launches did not reproduce the checked output bit for bit";
          if (k == Kernel::kNaive) naiveVerdict = rc.verdict;
        }
      }
      if (rc.verdict != Verdict::kPass)
        std::fprintf(stderr, "GATE: %s n=%lld %s: %s\n", kernelName(k), n,
                     verdictName(rc.verdict), rc.why.c_str());
      printRow(k, n, rc, timed, t, c);
      ++rows;
      if (rc.verdict == Verdict::kPass) ++passed;
    }
  }
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dNaive));
  CUDA_CHECK(cudaFree(dTiled));
  CUDA_CHECK(cudaFree(dSaved));

  std::fprintf(stderr, "report_data: %d rows, %d PASS, %d not (FAIL or UNVERIFIED).\n", rows,
               passed, rows - passed);
  std::fprintf(stderr,
               "Speed-up of tiled over naive at one n = naive ms / tiled ms (the ms column of "
               "the two rows).\n");
  std::fprintf(stderr,
               "Plot (gnuplot 5): save stdout as report.csv, put the measured FP32 peak and "
               "bandwidth from its # lines in for PEAK and BW, and run\n"
               "  gnuplot -e \"PEAK=<GFLOP/s>; BW=<GB/s>\" -e \"set datafile separator ','; "
               "set logscale xy; set xlabel 'FLOP per compulsory byte'; set ylabel 'GFLOP/s'; "
               "set key left; set terminal pngcairo; set output 'roofline.png'; "
               "plot [1:1000] (x*BW < PEAK ? x*BW : PEAK) title 'measured roof', "
               "'report.csv' using (strcol(1) eq 'naive' ? column('ai_compulsory') : NaN):"
               "'gflops' title 'naive', '' using (strcol(1) eq 'tiled' ? "
               "column('ai_compulsory') : NaN):'gflops' title 'tiled'\"\n");

  if (!kTiledKernelWritten || !kLadderWritten) {
    std::printf("# Left to write:%s%s\n",
                kTiledKernelWritten ? "" : " gemmTiledKernel's body (a naive stand-in runs "
                                           "now: stage 16 x 16 tiles of A and B in shared "
                                           "memory, then set kTiledKernelWritten to true);",
                kLadderWritten ? "" : " the verification ladder above n = 1024 (its rows are "
                                      "UNVERIFIED now: sample rows against the CPU, cross-"
                                      "check tiled against naive, then set kLadderWritten "
                                      "to true).");
    return EXIT_FAILURE;
  }
  return passed == rows ? EXIT_SUCCESS : EXIT_FAILURE;
}
