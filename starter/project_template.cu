// SPDX-License-Identifier: MIT
// Final project - project_template: a tiled FP32 GEMM scaffold you can trust.
//
// C = A * B (FP32, row-major) with a shared-memory tiled kernel whose tile
// width and block size come from the command line. The result is checked
// against a double-precision CPU reference (output poisoned first, NaN fails)
// before anything is timed, and the timing is placed on a roofline whose two
// ceilings this program measures on the device. The command line is strict:
// a bad one gets one error line and exit 2 before any CUDA call, and sizes
// the device cannot hold or launch are refused before any allocation.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -lineinfo -o project_template project_template.cu
// Run:   ./project_template
// Run:   ./project_template -m 1 -n 1 -k 1
// Run:   ./project_template -m 1025 -n 1023 -k 1000
// Run:   ./project_template -m 64 -n 64 -k 0
// Run:   ./project_template -m abc
// Sanitize: ./project_template -m 100 -n 90 -k 70 -iters 2
//
// sm_75 is the course's T4 (and Compiler Explorer's card); a newer GPU runs
// the PTX it embeds. ./project_template -h lists the options.

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
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
constexpr long long kDefaultDim = 1024;  // M = N = K by default
constexpr long long kMaxDim = 1LL << 24;  // per size; see the first static_assert
constexpr int kDefaultTile = 16;
constexpr int kMaxTile = 64;              // the origin's range; 64 x 64 B panel = 16 KiB
constexpr int kDefaultBlockThreads = 256;
constexpr int kMaxBlockThreads = 1024;    // CUDA's limit; the device's own is checked too
constexpr int kDefaultIters = 20;
constexpr int kMaxIters = 10000;          // one event per sample; ~5 s at the default size
constexpr int kWarmups = 3;               // lazy module loading, clocks ramping up
constexpr double kDefaultTol = 1e-3;      // rtol and atol
constexpr double kMaxTol = 1.0;           // a tolerance of 100% of the value checks nothing
constexpr long long kMaxHostBytes = 4LL << 30;  // past it the reference runs for minutes
constexpr uint32_t kSeed = 20250612u;     // the origin's seed: same inputs, same digits

static_assert(24 * kMaxDim * kMaxDim < (1LL << 62),
              "sizes are capped so that every element count (M*K <= 2^48) and every "
              "byte count below (at most 24 bytes per M*N, M*K or K*N element) fits in "
              "int64 with room to spare: no size product in this file can overflow");
static_assert((kMaxBlockThreads + kMaxTile * kMaxTile) * sizeof(float) <= 48 * 1024,
              "the largest legal A and B panels (bs + T*T floats, 20 KiB) must fit the "
              "48 KiB every CUDA GPU gives a block without opt-in, so no opt-in is needed; "
              "the run-time shared-memory check fires only on a device reporting less");
static_assert(kDefaultBlockThreads % kDefaultTile == 0,
              "the default block must hold whole rows of the default tile");

// ---------------------------------------------------------------------------
// Kernel
// ---------------------------------------------------------------------------
// C (M x N) = A (M x K) * B (K x N). Block (bx, by) owns rows by*R .. by*R+R-1
// and columns bx*T .. bx*T+T-1; each thread computes one element of C.
// launch assumption: blockDim = (T, R) with T = -tile and R = -bs / T;
//   gridDim = (ceil(N / T), ceil(M / R)); (R*T + T*T) floats of dynamic shared
//   memory. T and R are read from blockDim, so the kernel and the launch cannot
//   disagree about them; main checks every limit on the device before launching.
// memory: per K step a block loads an R x T panel of A and a T x T panel of B
//   (zero past the edges of the matrices) and reuses them from shared memory,
//   each A value T times and each B value R times; C is written once. In all,
//   A is read ceil(N / T) times and B ceil(M / R) times unless caches help.
// T and R are run-time values so that one binary serves every -tile and -bs.
// The price is an inner loop the compiler cannot fully unroll: the origin's
// version ran at about half the speed of the same 16 x 16 tiling fixed at
// compile time. (This one at least loads the B panel without dividing by T.)
// exercise: tiled-kernel
// Yours to write: the body of gemmTiledKernel, as the comments above describe
// (load the two panels, barrier, multiply, barrier, per K step; store last).
// Until then a naive body stands in, reading A and B straight from global
// memory, so the starter still runs and is checked; main then says the tiled
// kernel is left to write and exits 1. Set the flag to true once it is tiled.
constexpr bool kTiledKernelWritten = false;
__global__ void gemmTiledKernel(const float* __restrict__ A, const float* __restrict__ B,
                                float* __restrict__ C, long long M, long long N, long long K) {
  const long long row = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  const long long col = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;  // no barrier below: an early return is safe
  float acc = 0.0f;
  for (long long k = 0; k < K; ++k) acc = fmaf(A[row * K + k], B[k * N + col], acc);
  C[row * N + col] = acc;
}
// end exercise

// ---------------------------------------------------------------------------
// Inputs and CPU reference
// ---------------------------------------------------------------------------
// A 32-bit LCG, 24 bits per draw, values 2f - 1 in [-1, 1) (exact in float).
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
  for (float& a : A) a = 2.0f * g.next() - 1.0f;
  for (float& b : B) b = 2.0f * g.next() - 1.0f;
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
// Command line and size gates (no CUDA call before requireCudaDevice)
// ---------------------------------------------------------------------------
struct Options {
  long long m = kDefaultDim, n = kDefaultDim, k = kDefaultDim;
  int tile = kDefaultTile, bs = kDefaultBlockThreads, iters = kDefaultIters;
  double rtol = kDefaultTol, atol = kDefaultTol;
};

std::string usageText() {
  char buf[2048];
  std::snprintf(
      buf, sizeof buf,
      "usage: project_template [-m M] [-n N] [-k K] [-tile T] [-bs THREADS] [-iters I]\n"
      "                        [-rtol R] [-atol A] [-h | --help]\n"
      "Computes C (M x N) = A (M x K) * B (K x N) in FP32 (row-major) with a tiled\n"
      "kernel, checks it against a CPU reference, times it and places it on a roofline.\n"
      "  -m M, -n N, -k K  sizes, integers in [0, %lld] (default %lld each)\n"
      "  -tile T           output columns per block and K step, an integer in [1, %d]\n"
      "                    (default %d)\n"
      "  -bs THREADS       threads per block, an integer in [1, %d] and a multiple\n"
      "                    of T (default %d); the block is (T, THREADS / T)\n"
      "  -iters I          timed launches, an integer in [1, %d] (default %d), after\n"
      "                    %d untimed warm-ups\n"
      "  -rtol R, -atol A  tolerances, finite numbers in [0, %g] (default %g each):\n"
      "                    an element passes when |got - ref| <= A + R * |ref|\n"
      "  -h, --help        print this help and exit\n"
      "Exit status: 0 pass, 1 failed check or CUDA error, 2 bad command line,\n"
      "77 no usable CUDA device.\n",
      kMaxDim, kDefaultDim, kMaxTile, kDefaultTile, kMaxBlockThreads, kDefaultBlockThreads,
      kMaxIters, kDefaultIters, kWarmups, kMaxTol, kDefaultTol);
  return buf;
}

// Host memory for A, B, the double reference and two float copies of C (the
// checked output and the one after timing).
long long hostBytes(const Options& o) {
  return 4 * (o.m * o.k + o.k * o.n) + (8 + 4 + 4) * o.m * o.n;
}

// Parses and validates argv; any error exits 2 (CommandLine::fail).
Options parseOptions(CommandLine& cl) {
  Options o;
  while (cl.next()) {
    if (cl.is("-m")) o.m = cl.intValue(0, kMaxDim);
    else if (cl.is("-n")) o.n = cl.intValue(0, kMaxDim);
    else if (cl.is("-k")) o.k = cl.intValue(0, kMaxDim);
    else if (cl.is("-tile")) o.tile = static_cast<int>(cl.intValue(1, kMaxTile));
    else if (cl.is("-bs")) o.bs = static_cast<int>(cl.intValue(1, kMaxBlockThreads));
    else if (cl.is("-iters")) o.iters = static_cast<int>(cl.intValue(1, kMaxIters));
    else if (cl.is("-rtol")) o.rtol = cl.realValue(0.0, kMaxTol);
    else if (cl.is("-atol")) o.atol = cl.realValue(0.0, kMaxTol);
    else cl.unknownOption();
  }
  if (o.bs % o.tile != 0)
    cl.fail("-bs must be a multiple of -tile (%d), got %d", o.tile, o.bs);
  // The CPU reference needs the whole problem in host memory; past this bound
  // it would also take many minutes on one core.
  if (hostBytes(o) > kMaxHostBytes)
    cl.fail("-m, -n, -k: the host buffers would need %.2f GiB (A, B, two copies of C and "
            "the double reference); this program allows at most %.2f GiB",
            hostBytes(o) / 1073741824.0, kMaxHostBytes / 1073741824.0);
  return o;
}

long long ceilDiv(long long a, long long b) { return (a + b - 1) / b; }

// The launch: block (tile, rows), grid (grid_x, grid_y), smem_bytes per block.
struct Geometry {
  int tile, rows;
  long long grid_x, grid_y, smem_bytes;
};

Geometry geometryFor(const Options& o) {
  const int rows = o.bs / o.tile;
  return Geometry{o.tile, rows, ceilDiv(o.n, o.tile), ceilDiv(o.m, rows),
                  static_cast<long long>((rows * o.tile + o.tile * o.tile) * sizeof(float))};
}

// What the device allows this kernel, read from the device.
struct DeviceLimits {
  long long kernel_threads;  // cudaFuncGetAttributes: registers can lower it
  long long block_x, block_y, grid_x, grid_y;
  long long kernel_smem;  // dynamic shared memory per block without opt-in
};

DeviceLimits readLimits(const cudaDeviceProp& prop) {
  cudaFuncAttributes fa{};
  CUDA_CHECK(cudaFuncGetAttributes(&fa, gemmTiledKernel));
  return DeviceLimits{fa.maxThreadsPerBlock,     prop.maxThreadsDim[0], prop.maxThreadsDim[1],
                      prop.maxGridSize[0],       prop.maxGridSize[1],
                      fa.maxDynamicSharedSizeBytes};
}

// Why the launch cannot run on this device, or "" when it can. The shared-
// memory and grid.x rules cannot fire on any current GPU (static_assert above;
// grid.x <= 2^24 < 2^31 - 1): they are kept because they are read from the
// device, and the host test plants small limits to see each one fire.
std::string launchProblem(const Options& o, const Geometry& g, const DeviceLimits& lim) {
  char buf[320] = "";
  if (o.bs > lim.kernel_threads)
    std::snprintf(buf, sizeof buf,
                  "-bs %d: this kernel runs at most %lld threads per block on this device",
                  o.bs, lim.kernel_threads);
  else if (g.tile > lim.block_x || g.rows > lim.block_y)
    std::snprintf(buf, sizeof buf,
                  "-bs %d / -tile %d: block (%d, %d) exceeds this device's limit (%lld, %lld)",
                  o.bs, o.tile, g.tile, g.rows, lim.block_x, lim.block_y);
  else if (g.grid_y > lim.grid_y)
    std::snprintf(buf, sizeof buf,
                  "-m %lld: grid.y = ceil(M / %d) = %lld blocks exceeds this device's limit "
                  "of %lld (raise -bs / -tile)",
                  o.m, g.rows, g.grid_y, lim.grid_y);
  else if (g.grid_x > lim.grid_x)
    std::snprintf(buf, sizeof buf,
                  "-n %lld: grid.x = ceil(N / %d) = %lld blocks exceeds this device's limit "
                  "of %lld (raise -tile)",
                  o.n, g.tile, g.grid_x, lim.grid_x);
  else if (g.smem_bytes > lim.kernel_smem)
    std::snprintf(buf, sizeof buf,
                  "-tile %d with -bs %d: %lld bytes of shared memory per block exceed this "
                  "device's %lld",
                  o.tile, o.bs, g.smem_bytes, lim.kernel_smem);
  return buf;
}

// A, B and C on the device; an empty A or B (K = 0) still gets one element so
// every pointer is a real allocation.
long long deviceBytes(const Options& o) {
  return 4 * (std::max(o.m * o.k, 1LL) + std::max(o.k * o.n, 1LL) + o.m * o.n);
}

// ---------------------------------------------------------------------------
// Check
// ---------------------------------------------------------------------------
// An element passes when |got - ref| <= atol + rtol*|ref|, tested as
// !(d <= t) for a failure so that NaN and infinity fail. The score d / t says
// how close to the tolerance an element came (1 = at the limit); unlike
// d / |ref| it stays meaningful where ref is near zero.
struct CheckResult {
  long long failures = 0;
  long long worst = 0;        // index of the highest score (the first one on ties)
  double worst_score = 0.0;   // +inf where got is not finite, or t = 0 < d
  double max_abs_err = 0.0;   // over the finite outputs
};

CheckResult checkGemm(const float* got, const double* ref, long long count, double rtol,
                      double atol) {
  CheckResult r;
  for (long long i = 0; i < count; ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - ref[i]);
    const double t = atol + rtol * std::fabs(ref[i]);
    if (!(d <= t)) ++r.failures;
    const double score = !std::isfinite(d) ? HUGE_VAL
                         : t > 0.0          ? d / t
                         : d > 0.0          ? HUGE_VAL
                                            : 0.0;  // t = 0 (rtol = atol = 0): exact or not
    if (score > r.worst_score) {
      r.worst_score = score;
      r.worst = i;
    }
    if (std::isfinite(d)) r.max_abs_err = std::max(r.max_abs_err, d);
  }
  return r;
}

void printCheck(const CheckResult& r, const Options& o, const float* got, const double* ref) {
  const long long count = o.m * o.n;
  if (r.failures == 0)
    std::printf("Check: PASS, all %lld elements within |got - ref| <= atol + rtol*|ref| "
                "(rtol %g, atol %g)\n", count, o.rtol, o.atol);
  else
    std::printf("Check: FAIL, %lld of %lld elements outside |got - ref| <= atol + rtol*|ref| "
                "(rtol %g, atol %g)\n", r.failures, count, o.rtol, o.atol);
  std::printf("  worst element: row %lld, col %lld, got %.9g, ref %.9g, ", r.worst / o.n,
              r.worst % o.n, static_cast<double>(got[r.worst]), ref[r.worst]);
  if (std::isfinite(r.worst_score))
    std::printf("|got - ref| / (atol + rtol*|ref|) = %.3g\n", r.worst_score);
  else
    std::printf("|got - ref| / (atol + rtol*|ref|) = n/a (not finite)\n");
  std::printf("  largest finite |got - ref| = %.3g\n", r.max_abs_err);
}

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
// Metrics
// ---------------------------------------------------------------------------
// Compulsory traffic: what any GEMM must move, A and B read once, C written once.
double compulsoryBytes(const Options& o) {
  return 4.0 * (static_cast<double>(o.m) * o.k + static_cast<double>(o.k) * o.n +
                static_cast<double>(o.m) * o.n);
}

// Modelled traffic of this kernel: every in-bounds load it issues, as if no
// cache served any of them (A once per block column, B once per block row),
// plus the C write. The origin's 4MNK(1/T + 1/R) is this without C.
double modelledBytes(const Options& o, const Geometry& g) {
  return 4.0 * (static_cast<double>(o.m) * o.k * g.grid_x +
                static_cast<double>(o.k) * o.n * g.grid_y + static_cast<double>(o.m) * o.n);
}

// GFLOP/s at a time in ms; -1 (printed as n/a) if the events read 0 ms.
double gflopsAt(double flop, double ms) { return ms > 0.0 ? flop / (ms * 1e-3) / 1e9 : -1.0; }

void printGflops(double gflops) {
  if (gflops >= 0.0) std::printf("%.1f GFLOP/s", gflops);
  else std::printf("n/a (below the timer's resolution)");
}

void printBytes(double bytes) {
  if (bytes < 1e6) std::printf("%.0f B", bytes);
  else std::printf("%.2f MB", bytes / 1e6);
}

// snippet: roofline
// One point on the roofline for one model of the traffic: AI = FLOP / bytes,
// the ceiling min(peak, AI x bandwidth), and the median rate as a share of it.
// A share above 100% means the real traffic was smaller than the model says
// (caches served part of it).
void placeOnRoofline(const char* model, double bytes, double flop, double gflops,
                     const Ceilings& c) {
  const double ai = flop / bytes;  // bytes > 0: C is written, and M, N > 0 here
  const double ceiling = rooflineGflops(c, ai);
  std::printf("  %s: ", model);
  printBytes(bytes);
  std::printf(", AI %.2f FLOP/B\n    ceiling min(%.1f GFLOP/s, %.1f GFLOP/s) = %.1f GFLOP/s, ",
              ai, c.fp32_gflops, ai * c.copy_gbs, ceiling);
  if (ceiling > 0.0 && gflops >= 0.0)
    std::printf("the median at %.1f%% of measured ceiling\n", 100.0 * gflops / ceiling);
  else
    std::printf("share n/a (%s)\n", ceiling > 0.0 ? "no time" : "no floating-point work");
}
// end snippet

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

  const cudaDeviceProp prop = requireCudaDevice();  // exit 77 without a device
  std::printf("GPU: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
  std::printf("Device: %d SMs, %d threads/SM, %d threads/block, grid up to %d x %d blocks, "
              "%g KiB shared memory/block (%g KiB with opt-in), %g MiB L2\n",
              prop.multiProcessorCount, prop.maxThreadsPerMultiProcessor,
              prop.maxThreadsPerBlock, prop.maxGridSize[0], prop.maxGridSize[1],
              prop.sharedMemPerBlock / 1024.0, prop.sharedMemPerBlockOptin / 1024.0,
              prop.l2CacheSize / 1048576.0);
  const double flop = 2.0 * static_cast<double>(o.m) * o.n * o.k;
  std::printf("Problem: C (%lld x %lld) = A (%lld x %lld) * B (%lld x %lld), FP32, row-major, "
              "%.3f GFLOP\n", o.m, o.n, o.m, o.k, o.k, o.n, flop / 1e9);
  if (o.m == 0 || o.n == 0) {
    std::printf("Empty output: C has no elements; nothing to compute, launch or time.\n");
    return EXIT_SUCCESS;
  }

  // Refuse, before any allocation or CPU reference, what the device cannot do.
  const Geometry g = geometryFor(o);
  const std::string problem = launchProblem(o, g, readLimits(prop));
  if (!problem.empty()) cl.fail("%s", problem.c_str());
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  if (deviceBytes(o) > static_cast<long long>(freeBytes))
    cl.fail("-m, -n, -k: A, B and C need %.2f GiB of device memory, more than the %.2f GiB "
            "free", deviceBytes(o) / 1073741824.0, freeBytes / 1073741824.0);
  std::printf("Launch: tile %d, block (%d, %d) = %d threads, grid (%lld, %lld), %lld bytes of "
              "shared memory per block\n",
              g.tile, g.tile, g.rows, o.bs, g.grid_x, g.grid_y, g.smem_bytes);

  // Inputs and the reference, timed on the host clock (host work).
  std::vector<float> A = hostBuffer<float>(o.m * o.k), B = hostBuffer<float>(o.k * o.n);
  std::vector<double> ref = hostBuffer<double>(o.m * o.n);
  std::vector<float> got = hostBuffer<float>(o.m * o.n);
  fillInputs(A, B);
  const auto t0 = std::chrono::steady_clock::now();
  cpuReferenceGemm(A.data(), B.data(), ref.data(), o.m, o.n, o.k);
  const std::chrono::duration<double, std::milli> refTime = std::chrono::steady_clock::now() - t0;
  std::printf("CPU reference: %.1f ms on the host clock (double sums in ascending k)\n",
              refTime.count());

  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  const size_t aBytes = std::max(A.size(), size_t(1)) * sizeof(float);
  const size_t bBytes = std::max(B.size(), size_t(1)) * sizeof(float);
  const size_t cBytes = got.size() * sizeof(float);
  CUDA_CHECK(cudaMalloc(&dA, aBytes));
  CUDA_CHECK(cudaMalloc(&dB, bBytes));
  CUDA_CHECK(cudaMalloc(&dC, cBytes));
  if (o.k > 0) {  // K = 0: A and B are empty, their one-element buffers never read
    CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  const auto launch = [&] {
    gemmTiledKernel<<<dim3(static_cast<unsigned>(g.grid_x), static_cast<unsigned>(g.grid_y)),
                      dim3(g.tile, g.rows), static_cast<size_t>(g.smem_bytes)>>>(
        dA, dB, dC, o.m, o.n, o.k);
  };

  // The checked launch, on its own: C is poisoned with NaN (all bits set)
  // first, so an element the kernel does not write fails the check.
  CUDA_CHECK(cudaMemset(dC, 0xFF, cBytes));
  launch();
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(got.data(), dC, cBytes, cudaMemcpyDeviceToHost));
  const CheckResult check = checkGemm(got.data(), ref.data(), o.m * o.n, o.rtol, o.atol);
  printCheck(check, o, got.data(), ref.data());

  bool ok = true;
  auto gate = [&ok](bool held, const char* claim) {
    if (!held) std::fprintf(stderr, "GATE: %s\n", claim);
    ok = ok && held;
  };
  char claim[200];
  std::snprintf(claim, sizeof claim,
                "%lld of %lld elements failed the check against the CPU reference (worst at "
                "row %lld, col %lld)", check.failures, o.m * o.n, check.worst / o.n,
                check.worst % o.n);
  gate(check.failures == 0, claim);
  TimingStats t{};
  if (ok) {  // never time a wrong result
    t = timeKernel(launch, kWarmups, o.iters);
    std::vector<float> after = hostBuffer<float>(o.m * o.n);
    CUDA_CHECK(cudaMemcpy(after.data(), dC, cBytes, cudaMemcpyDeviceToHost));
    gate(std::memcmp(after.data(), got.data(), cBytes) == 0,
         "the timed launches did not reproduce the checked output bit for bit");
  }
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  if (!ok) return EXIT_FAILURE;

  std::printf("Timed launches reproduced the checked output bit for bit.\n");
  std::printf("Time: median %.4f ms, mean %.4f ms, min %.4f ms, max %.4f ms over %d launches "
              "queued back to back after %d warm-ups\n",
              t.median_ms, t.mean_ms, t.min_ms, t.max_ms, t.samples, kWarmups);
  const double gflops = gflopsAt(flop, t.median_ms);
  std::printf("Rate: ");
  printGflops(gflops);
  std::printf(" at the median, ");
  printGflops(gflopsAt(flop, t.min_ms));
  std::printf(" at the best time\n");

  const Ceilings c = measureCeilings();  // the GEMM buffers are freed: memory is free
  printCeilings(c, stdout);
  std::printf("Roofline at the median time, ceiling = min(measured FP32 peak, AI x measured "
              "bandwidth):\n");
  placeOnRoofline("compulsory traffic (A and B read once, C written once)", compulsoryBytes(o),
                  flop, gflops, c);
  placeOnRoofline("modelled traffic (every load the kernel issues, no cache reuse, C written "
                  "once)", modelledBytes(o, g), flop, gflops, c);
  if (compulsoryBytes(o) <= c.l2_bytes)  // sizes and the device decide: deterministic
    std::printf("  A, B and C fit in the L2, so the timed launches find them there: the DRAM "
                "traffic per launch can be below even the compulsory figure.\n");
  else
    std::printf("  The DRAM traffic lies between the two: L1 and L2 serve most of the "
                "repeated panel loads the model counts.\n");

  if (!kTiledKernelWritten) {
    std::printf("Left to write: gemmTiledKernel's body (the exercise region) is still the "
                "naive stand-in; tile it through shared memory, then set kTiledKernelWritten "
                "to true.\n");
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
