// SPDX-License-Identifier: MIT
// Final project - project_template: a tiled FP32 GEMM scaffold you can trust.
//
// C = A * B (FP32, row-major) with a kernel meant to stage panels of A and B in
// shared memory, so each value loaded from global memory is used many times.
// Tile width and block size come from the command line. The result is checked
// against a double-precision reference (output poisoned first, NaN fails)
// before anything is timed, and the time is placed on a roofline of three
// ceilings, each measured on the device and bounded from its attributes: DRAM
// bandwidth, the FP32 rate, and the rate at which shared memory hands the
// tiled kernel its operands. The program names the one that binds. The
// command line is strict: a bad one gets one error line and exit 2 before any
// CUDA call, and sizes the device cannot hold or launch are refused before any
// allocation.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -lineinfo -o project_template project_template.cu
// Run:   ./project_template
// Run:   ./project_template -m 1 -n 1 -k 1
// Run:   ./project_template -m 1025 -n 1023 -k 1000
// Run:   ./project_template -m 64 -n 64 -k 0
// Run:   ./project_template -m abc
// Run:   ./project_template -m 100 -n 90 -k 70 -tile 32 -bs 256
// Sanitize: ./project_template -m 100 -n 90 -k 70 -tile 32 -bs 256 -iters 2
//
// Exercise check on a GPU, every recorded run: python3 scripts/suite.py exercise check project_template
// Without a GPU: python3 scripts/suite.py ce-link exercises/project_template.cu, run it, save the
// whole executor pane to FILE, then (one run per pane; the verdict lists the runs still unjudged):
//   python3 scripts/suite.py exercise check project_template --pane FILE [--args '...']
//
// sm_75 is the course's T4; a newer GPU runs the PTX it embeds. -h lists the options.

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

// =============================================================================
// Constants
// =============================================================================
constexpr long long kDefaultDim = 1024;   // M = N = K by default
constexpr long long kMaxDim = 1LL << 24;  // per size; see the first static_assert
constexpr int kDefaultTile = 16;
constexpr int kMaxTile = 64;              // a 64 x 64 B panel is 16 KiB
constexpr int kDefaultBlockThreads = 256;
constexpr int kMaxBlockThreads = 1024;    // CUDA's limit; the kernel's own is checked too
constexpr int kDefaultIters = 20;
constexpr int kMaxIters = 10000;          // one event per sample
constexpr int kWarmups = 3;               // lazy module loading, clocks ramping up
constexpr double kMaxTol = 1.0;           // a tolerance of 100% of the value checks little
constexpr long long kMaxHostBytes = 4LL << 30;  // host buffers; see hostBytes
constexpr uint32_t kSeed = 20250612u;     // the same inputs, so the same digits, every run

static_assert(24 * kMaxDim * kMaxDim < (1LL << 62),
              "every element count (M*K <= 2^48) and byte count (at most 24 bytes per "
              "element) fits in int64: no size product in this file can overflow");
static_assert((kMaxBlockThreads + kMaxTile * kMaxTile) * sizeof(float) <= 48 * 1024,
              "the largest panels (bs + T*T floats, 20 KiB) fit the 48 KiB of static "
              "shared memory every CUDA GPU gives a block");
static_assert(kDefaultBlockThreads % kDefaultTile == 0,
              "the default block must hold whole rows of the default tile");

// =============================================================================
// The tiled kernel
// =============================================================================
// C (M x N) = A (M x K) * B (K x N). Block (bx, by) owns rows by*R .. by*R+R-1
// and columns bx*T .. bx*T+T-1; each thread computes one element of C.
// Untiled, every multiply-add loads its own A and B element: 8 bytes for 2
// FLOP, an arithmetic intensity (AI) of 0.25 FLOP/B. Tiled, per K step of T
// the block loads an R x T panel of A and a T x T panel of B into shared
// memory once, and every thread reads its row and column from there: each A
// value serves T threads and each B value R threads, so the modelled AI rises
// to 2 / (4 (1/T + 1/R)) = 4 FLOP/B at T = R = 16.
// launch assumption: blockDim = (T, R) with T = -tile <= kMaxTile, R = -bs / T
//   and R*T <= kMaxBlockThreads; gridDim = (ceil(N / T), ceil(M / R)). T and R
//   are read from blockDim, so the kernel and the launch cannot disagree.
// memory (the design): panels in static arrays sized for the largest legal block
//   and tile (20 KiB); a launch uses the first R*T and T*T floats. main reads their
//   size back from the compiled kernel (the tiling gate). C is written once.
// T and R are run-time values so that one binary serves every -tile and -bs.
// The price: an inner loop the compiler cannot fully unroll, index arithmetic
// on run-time values, and (in the design) panels sized for the largest launch, which cost
// resident blocks where shared memory is small.
// Tiling changes where the operands come from, not the arithmetic: each
// thread adds its K products in ascending k, one fmaf each, as the untiled
// loop does (the same result to the bit), and each of a tiled kernel's multiply-
// adds still loads two operands, from shared memory (its roof: placeOnSmemRoof).
// exercise: tiled-kernel
// Yours to write: the body of gemmTiledKernel. Goal: per K step the block
// stages its R x T panel of A and the T x T panel of B in shared memory once,
// and every thread takes its operands from there, not from global memory.
// You decide how the block's threads share out the panel loads (there may be
// fewer rows of threads than rows of B's panel), what goes where a panel
// reaches past the edge of A or B, and where the block must wait. Static
// __shared__ arrays: the tiling gate reads their size back from the compiled
// kernel, so size them for the largest legal launch (the -tile 32 -bs 256 run
// checks one large one). Until then an untiled body stands in: the check
// passes, the gate reports no shared memory, exit 1.
// Done when: exercise check passes at every recorded run (the header's Run
// lines: the default, 1 x 1 x 1, 1025 x 1023 x 1000, K = 0, a bad -m, and
// -tile 32 -bs 256, where a block has 8 rows of threads for 32 rows of B's
// panel): the lesson's exit code (0; 2 for the bad -m) and its check lines
// digit for digit (each thread still adds its products in ascending k, one
// fmaf each), and, where compute-sanitizer is present, exercise check runs
// memcheck and racecheck: a pasted pane cannot show a race.
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
// Inputs
// =============================================================================
// The course's LCG (gemm_check block), values 2u - 1 in [-1, 1), exact in float;
// A is filled first in row-major order, then B continues from the same state.
void fillInputs(std::vector<float>& A, std::vector<float>& B) {
  Lcg g{kSeed};
  g.fill(A, 2.0f, -1.0f);
  g.fill(B, 2.0f, -1.0f);
}

// =============================================================================
// Command line and size gates (no CUDA call before requireCudaDevice)
// =============================================================================
struct Options {
  long long m = kDefaultDim, n = kDefaultDim, k = kDefaultDim;
  int tile = kDefaultTile, bs = kDefaultBlockThreads, iters = kDefaultIters;
  double rtol = -1.0, atol = -1.0;  // negative: the K-scaled default (gemmTolerance)
};

std::string usageText() {
  char buf[2048];
  std::snprintf(
      buf, sizeof buf,
      "usage: project_template [-m M] [-n N] [-k K] [-tile T] [-bs THREADS] [-iters I]\n"
      "                        [-rtol R] [-atol A] [-h | --help]\n"
      "Computes C (M x N) = A (M x K) * B (K x N) in FP32 (row-major) with a kernel meant\n"
      "to tile it, checks it against a double reference, times it and places it on a roofline.\n"
      "  -m M, -n N, -k K  sizes, integers in [0, %lld] (default %lld each)\n"
      "  -tile T           output columns per block and K step, an integer in [1, %d]\n"
      "                    (default %d)\n"
      "  -bs THREADS       threads per block, an integer in [1, %d] and a multiple\n"
      "                    of T (default %d); the block is (T, THREADS / T)\n"
      "  -iters I          timed launches, an integer in [1, %d] (default %d), after\n"
      "                    %d untimed warm-ups\n"
      "  -rtol R, -atol A  tolerances, decimal numbers in [0, %g]; an element passes\n"
      "                    when |got - ref| <= A + R * |ref| (default R = max(1e-5,\n"
      "                    4 * 2^-23 * sqrt(K)), A = R * max|ref|)\n"
      "  -h, --help        print this help and exit\n"
      "Exit status: 0 pass, 1 failed check or CUDA error, 2 bad command line,\n"
      "77 no usable CUDA device.\n",
      kMaxDim, kDefaultDim, kMaxTile, kDefaultTile, kMaxBlockThreads, kDefaultBlockThreads,
      kMaxIters, kDefaultIters, kWarmups, kMaxTol);
  return buf;
}

// Host memory for A, B, the double reference and the checked copy of C.
long long hostBytes(const Options& o) {
  return 4 * (o.m * o.k + o.k * o.n) + (8 + 4) * o.m * o.n;
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
  if (hostBytes(o) > kMaxHostBytes)
    cl.fail("-m, -n, -k: the host buffers would need %.2f GiB (A, B, C and the double "
            "reference); this program allows at most %.2f GiB",
            hostBytes(o) / 1073741824.0, kMaxHostBytes / 1073741824.0);
  return o;
}

long long ceilDiv(long long a, long long b) { return (a + b - 1) / b; }

// The launch: block (tile, rows), grid (grid_x, grid_y); panel_bytes = the A
// and B panels (R*T + T*T floats) the kernel stages per K step.
struct Geometry {
  int tile, rows;
  long long grid_x, grid_y, panel_bytes;
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
};

DeviceLimits readLimits(const cudaDeviceProp& prop, const cudaFuncAttributes& fa) {
  return DeviceLimits{fa.maxThreadsPerBlock, prop.maxThreadsDim[0], prop.maxThreadsDim[1],
                      prop.maxGridSize[0], prop.maxGridSize[1]};
}

// Why the launch cannot run on this device, or "" when it can (the grid.x
// rule cannot fire on a current GPU: grid.x <= 2^24 < 2^31 - 1).
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
                  "of %lld (raise -bs or lower -tile)",
                  o.m, g.rows, g.grid_y, lim.grid_y);
  else if (g.grid_x > lim.grid_x)
    std::snprintf(buf, sizeof buf,
                  "-n %lld: grid.x = ceil(N / %d) = %lld blocks exceeds this device's limit "
                  "of %lld (raise -tile)",
                  o.n, g.tile, g.grid_x, lim.grid_x);
  return buf;
}

// Device memory at the peak, during the reference (C in double); an empty A
// or B (K = 0) still gets one element, so every pointer is a real allocation.
long long deviceBytes(const Options& o) {
  return 4 * (std::max(o.m * o.k, 1LL) + std::max(o.k * o.n, 1LL)) + 8 * o.m * o.n;
}

// =============================================================================
// Gates on the result: the check, and the tiling gate
// =============================================================================
// The course's check (gemm_check block). The line says where each tolerance
// came from, so a loosened one changes the output. The score |got - ref| /
// (atol + rtol*|ref|) is 1 at the limit and, unlike d / |ref|, stays
// meaningful where ref is near 0.
void printCheck(const GemmCheck& r, const Options& o, const Tolerance& tol) {
  if (r.failures == 0)
    std::printf("Check: PASS, all %lld elements within", r.checked);
  else
    std::printf("Check: FAIL, %lld of %lld elements outside", r.failures, r.checked);
  std::printf(" |got - ref| <= atol + rtol*|ref| (rtol %.3e: %s, atol %.3e: %s)\n", tol.rtol,
              o.rtol >= 0.0 ? "-rtol" : "max(1e-5, 4 * 2^-23 * sqrt(K))", tol.atol,
              o.atol >= 0.0 ? "-atol" : "rtol * max|ref|");
  std::printf("  worst element: row %lld, col %lld, got %.9g, ref %.9g, ", r.worst / o.n,
              r.worst % o.n, r.worst_got, r.worst_ref);
  if (std::isfinite(r.worst_score))
    std::printf("|got - ref| / (atol + rtol*|ref|) = %.3g\n", r.worst_score);
  else
    std::printf("|got - ref| / (atol + rtol*|ref|) = n/a (not finite)\n");
  std::printf("  largest |got - ref| = %.3g\n", r.max_abs_err);
}

// snippet: tiling-gate
// A correct result does not show tiling: the untiled loop adds the same terms
// in the same order and prints the same digits. What tiling needs is room for
// its panels, and the compiled kernel says how much shared memory it declares
// (the compiler drops an array no code reads). Fewer bytes than the two panels
// of this launch: the kernel cannot be staging them. (Its blind spot: a
// kernel that uses shared memory without sharing it between threads can pass;
// nothing this program prints tells it from a tiled one, reading it does.)
std::string tilingProblem(long long declaredBytes, const Geometry& g) {
  if (declaredBytes >= g.panel_bytes) return "";
  char buf[300];
  std::snprintf(buf, sizeof buf,
                "gemmTiledKernel declares %lld bytes of shared memory, fewer than the %lld "
                "bytes of the A and B panels of tile %d and %d rows: it does not stage the "
                "panels in shared memory (tile it as the comment above gemmTiledKernel says)",
                declaredBytes, g.panel_bytes, g.tile, g.rows);
  return buf;
}
// end snippet

// =============================================================================
// Metrics and the roofline
// =============================================================================
// Compulsory traffic: what any GEMM must move, A and B read once, C written once.
double compulsoryBytes(const Options& o) {
  return 4.0 * (static_cast<double>(o.m) * o.k + static_cast<double>(o.k) * o.n +
                static_cast<double>(o.m) * o.n);
}

// Modelled traffic of the kernel: every in-bounds load it issues, as if no
// cache served any, plus the C write. Tiled (smemLoads > 0): A once per block
// column, B once per block row. Untiled: A once per column, B once per row,
// 8 bytes per multiply-add.
double modelledBytes(const Options& o, const Geometry& g, double smemLoads) {
  const double gx = smemLoads > 0.0 ? g.grid_x : o.n, gy = smemLoads > 0.0 ? g.grid_y : o.m;
  return 4.0 * (static_cast<double>(o.m) * o.k * gx + static_cast<double>(o.k) * o.n * gy +
                static_cast<double>(o.m) * o.n);
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
// the ceiling min(peak, AI x bandwidth), and the median rate as a share of it
// (above 100%: the real traffic was smaller than the model, e.g. caches served part of it).
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

// The ridge point, peak / bandwidth in FLOP/B: below it bandwidth holds a
// kernel back, above it arithmetic. It is the device's, so it comes from the
// attribute bounds (a [device] line), with the L2 that decides how much of
// the traffic reaches DRAM at all.
void printRidge(const Ceilings& c, double flop, double compulsory, double modelled) {
  std::printf("[device] ridge point = FP32 bound / DRAM bound = ");
  if (c.fp32_bound_gflops > 0.0 && c.dram_bound_gbs > 0.0) {
    const double ridge = c.fp32_bound_gflops / c.dram_bound_gbs;
    auto roof = [ridge](double ai) { return ai < ridge ? "below: bandwidth" : "above: compute"; };
    std::printf("%.2f FLOP/B; compulsory AI %.2f %s roof, modelled AI %.2f %s roof", ridge,
                flop / compulsory, roof(flop / compulsory), flop / modelled, roof(flop / modelled));
  } else {
    std::printf("n/a (a bound is unknown)");
  }
  std::printf("; A, B and C (%.2f MB) %s the %g MiB L2\n", compulsory / 1e6,
              compulsory <= c.l2_bytes ? "fit in" : "exceed", c.l2_bytes / 1048576.0);
}

// =============================================================================
// The experiment, phase by phase
// =============================================================================
void printDevice(const cudaDeviceProp& prop) {
  std::printf("GPU: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
  std::printf("[device] %d SMs, %d threads/SM, grid up to %d x %d blocks, %g KiB shared "
              "memory/block (%g KiB opt-in), %g MiB L2\n",
              prop.multiProcessorCount, prop.maxThreadsPerMultiProcessor, prop.maxGridSize[0],
              prop.maxGridSize[1], prop.sharedMemPerBlock / 1024.0,
              prop.sharedMemPerBlockOptin / 1024.0, prop.l2CacheSize / 1048576.0);
}

// Refuses (exit 2), before any allocation or reference, what the device cannot
// launch or hold; then prints the launch.
Geometry planLaunch(const Options& o, const cudaDeviceProp& prop, const cudaFuncAttributes& fa,
                    CommandLine& cl) {
  const Geometry g = geometryFor(o);
  const std::string problem = launchProblem(o, g, readLimits(prop, fa));
  if (!problem.empty()) cl.fail("%s", problem.c_str());
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  if (deviceBytes(o) > static_cast<long long>(freeBytes))
    cl.fail("-m, -n, -k: the reference and the GEMM need %.2f GiB of device memory, more than "
            "the %.2f GiB free", deviceBytes(o) / 1073741824.0, freeBytes / 1073741824.0);
  std::printf("Launch: tile %d, block (%d, %d) = %d threads, grid (%lld, %lld); its A and B "
              "panels need %lld bytes of shared memory\n",
              g.tile, g.tile, g.rows, o.bs, g.grid_x, g.grid_y, g.panel_bytes);
  return g;
}

std::vector<double> computeReference(const Options& o, const std::vector<float>& A,
                                     const std::vector<float>& B) {
  std::vector<double> ref = hostVector<double>(o.m * o.n, "the reference C");
  const auto t0 = std::chrono::steady_clock::now();
  referenceGemm(A.data(), B.data(), ref.data(), static_cast<int>(o.m), static_cast<int>(o.n),
                static_cast<int>(o.k));
  const std::chrono::duration<double, std::milli> t = std::chrono::steady_clock::now() - t0;
  std::printf("Reference: double sums in ascending k on the GPU, rows %lld, %lld and %lld "
              "recomputed on the CPU bit for bit, %.1f ms\n", 0LL, o.m / 2, o.m - 1, t.count());
  return ref;
}

struct DeviceGemm {
  float *A = nullptr, *B = nullptr, *C = nullptr;
  size_t c_bytes = 0;
};

DeviceGemm upload(const std::vector<float>& A, const std::vector<float>& B, long long cCount) {
  DeviceGemm d;
  d.c_bytes = static_cast<size_t>(cCount) * sizeof(float);
  CUDA_CHECK(cudaMalloc(&d.A, std::max(A.size(), size_t(1)) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d.B, std::max(B.size(), size_t(1)) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d.C, d.c_bytes));
  if (!A.empty() && !B.empty()) {  // K = 0: the one-element buffers are never read
    CUDA_CHECK(cudaMemcpy(d.A, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d.B, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  return d;
}

void release(DeviceGemm& d) {
  CUDA_CHECK(cudaFree(d.A));
  CUDA_CHECK(cudaFree(d.B));
  CUDA_CHECK(cudaFree(d.C));
}

void printTime(const TimingStats& t, double flop) {
  std::printf("Time: median %.4f ms, mean %.4f ms, min %.4f ms, max %.4f ms over %d launches "
              "queued back to back after %d warm-ups\n",
              t.median_ms, t.mean_ms, t.min_ms, t.max_ms, t.samples, kWarmups);
  std::printf("Rate: ");
  printGflops(gflopsAt(flop, t.median_ms));
  std::printf(" at the median, ");
  printGflops(gflopsAt(flop, t.min_ms));
  std::printf(" at the best time\n");
}

// Shared-memory loads per multiply-add of the compiled kernel: a kernel that
// holds this launch's panels (the tiling gate holds) is modelled as tiled,
// As[ty*T + kk] and Bs[kk*T + tx], 4 bytes each (a broadcast counts once per
// thread, as the multiply-add it feeds does); one that does not, as untiled:
// every operand from global memory, none from shared memory, no third roof.
double smemLoadsPerFma(long long declaredBytes, const Geometry& g) {
  return tilingProblem(declaredBytes, g).empty() ? 2.0 : 0.0;
}

// The third ceiling: whatever the DRAM traffic, a tiled kernel's operands
// come out of shared memory, which delivers so many bytes per second.
void placeOnSmemRoof(double flop, double gflops, const SmemRoof& s, double loads) {
  if (loads <= 0.0) {
    std::printf("  shared-memory loads: none (the kernel does not hold its panels: untiled "
                "model), no shared-memory roof\n");
    return;
  }
  const double ceiling = smemRoofGflops(s.measured_gbs, loads);
  std::printf("  shared-memory loads: %g per multiply-add, %g bytes for 2 FLOP\n    ceiling = "
              "measured shared-memory bandwidth x 2 FLOP / %g bytes = %.1f GFLOP/s, ",
              loads, 4 * loads, 4 * loads, ceiling);
  if (flop > 0.0 && gflops >= 0.0)
    std::printf("the median at %.1f%% of measured ceiling\n", 100.0 * gflops / ceiling);
  else
    std::printf("share n/a (%s)\n", flop > 0.0 ? "no time" : "no floating-point work");
}

// snippet: binding-roof
// Which roof binds: the lowest at this problem's compulsory AI (each input read
// once, C written once), each from the attribute bounds, so that every run
// on one GPU model prints the same line (a [device] fact). loads: the kernel's
// shared-memory loads per multiply-add (smemLoadsPerFma); 0, no third roof.
void printBindingRoof(const Ceilings& c, const SmemRoof& s, double flop, double compulsory,
                      double loads) {
  std::printf("[device] roofs from the attribute bounds at the compulsory AI: ");
  if (flop <= 0.0) {
    std::printf("n/a (no floating-point work)\n");
    return;
  }
  const double ai = flop / compulsory, smem = smemRoofGflops(s.bound_gbs, loads);
  std::printf("FP32 %.1f GFLOP/s, DRAM %.1f GB/s x %.2f FLOP/B = %.1f GFLOP/s, ",
              c.fp32_bound_gflops, c.dram_bound_gbs, ai, ai * c.dram_bound_gbs);
  if (loads > 0.0)
    std::printf("shared memory %.1f GB/s x 2 FLOP / %g bytes = %.1f GFLOP/s", s.bound_gbs,
                4 * loads, smem);
  else
    std::printf("no shared-memory roof (untiled model)");
  if (loads > 0.0 && c.fp32_bound_gflops > 0.0 && smem > 0.0)
    std::printf(" = FP32 bound / %.2f", c.fp32_bound_gflops / smem);
  std::printf(" (0: unknown); lowest roof: %s\n", bindingRoof(c, s, ai, loads).name);
}
// end snippet

// Measures the ceilings (the GEMM's buffers are freed by now) and places the
// median time on the roofline under two models of the traffic and under the
// shared-memory roof, then says which roof binds; loads: smemLoadsPerFma.
void printRoofline(const Options& o, const Geometry& g, double flop, double gflops,
                   double loads) {
  const Ceilings c = measureCeilings();  // exit 1 if a measurement is above its bound
  const SmemRoof s = measureSmemRoof();  // likewise
  printCeilings(c, stdout);
  printSmemRoof(s, stdout);
  std::printf("Roofline at the median time, ceiling = min(measured FP32 peak, AI x measured "
              "bandwidth):\n");
  std::printf("  untiled, every multiply-add loads its A and B element: 8 bytes for 2 FLOP, "
              "AI 0.25 FLOP/B\n");
  placeOnRoofline("compulsory traffic (A and B read once, C written once)", compulsoryBytes(o),
                  flop, gflops, c);
  placeOnRoofline(loads > 0.0 ? "modelled traffic (every load the kernel issues, no cache "
                                "reuse, C written once)"
                              : "modelled traffic (untiled: 8 bytes per multiply-add, no cache "
                                "reuse, C written once)", modelledBytes(o, g, loads), flop, gflops, c);
  placeOnSmemRoof(flop, gflops, s, loads);
  printRidge(c, flop, compulsoryBytes(o), modelledBytes(o, g, loads));
  printBindingRoof(c, s, flop, compulsoryBytes(o), loads);
}

// =============================================================================
// main
// =============================================================================
int main(int argc, char** argv) {
  CommandLine cl(argc, argv, usageText());
  const Options o = parseOptions(cl);  // exit 2 on a bad command line, no CUDA call
  const cudaDeviceProp prop = requireCudaDevice();  // exit 77 without a device
  printDevice(prop);
  const double flop = 2.0 * static_cast<double>(o.m) * o.n * o.k;
  std::printf("Problem: C (%lld x %lld) = A (%lld x %lld) * B (%lld x %lld), FP32, row-major, "
              "%.3f GFLOP\n", o.m, o.n, o.m, o.k, o.k, o.n, flop / 1e9);
  if (o.m == 0 || o.n == 0) {
    std::printf("Empty output: C has no elements; nothing to compute, launch or time.\n");
    return EXIT_SUCCESS;
  }
  cudaFuncAttributes fa{};
  CUDA_CHECK(cudaFuncGetAttributes(&fa, gemmTiledKernel));
  const Geometry g = planLaunch(o, prop, fa, cl);

  bool ok = true;  // every gate is evaluated and reported; any failure means exit 1
  auto gate = [&ok](const std::string& problem) {
    if (!problem.empty()) std::fprintf(stderr, "GATE: %s\n", problem.c_str());
    ok = ok && problem.empty();
  };
  gate(tilingProblem(static_cast<long long>(fa.sharedSizeBytes), g));

  std::vector<float> A = hostVector<float>(o.m * o.k, "A");
  std::vector<float> B = hostVector<float>(o.k * o.n, "B");
  fillInputs(A, B);
  const std::vector<double> ref = computeReference(o, A, B);
  const Tolerance tol = gemmTolerance(o.k, maxAbs(ref.data(), o.m * o.n), o.rtol, o.atol);
  DeviceGemm d = upload(A, B, o.m * o.n);
  const auto launch = [&] {
    gemmTiledKernel<<<dim3(static_cast<unsigned>(g.grid_x), static_cast<unsigned>(g.grid_y)),
                      dim3(g.tile, g.rows)>>>(d.A, d.B, d.C, o.m, o.n, o.k);
  };
  // C poisoned (NaN), one launch, every element checked; only a pass is timed, and the
  // timed launches must leave the checked bits (checkThenTime, gemm_check block).
  std::vector<float> got = hostVector<float>(o.m * o.n, "C");
  GemmCheck check;
  const CheckedTiming run = checkThenTime(launch, d.C, got, [&](const std::vector<float>& c) {
    check = checkElements(c.data(), ref.data(), o.m * o.n, tol);
    printCheck(check, o, tol);
    return check.pass();
  }, kWarmups, o.iters);
  release(d);
  if (!run.passed) {  // never time a wrong result
    char claim[200];
    std::snprintf(claim, sizeof claim, "%lld of %lld elements failed the check against the "
                  "reference (worst at row %lld, col %lld)", check.failures, o.m * o.n,
                  check.worst / o.n, check.worst % o.n);
    gate(claim);
    return EXIT_FAILURE;
  }
  gate(run.reproduced ? "" : "the timed launches did not reproduce the checked output bit for bit");
  if (!run.reproduced) return EXIT_FAILURE;
  std::printf("Timed launches reproduced the checked output bit for bit.\n");
  printTime(run.t, flop);
  printRoofline(o, g, flop, gflopsAt(flop, run.t.median_ms),
                smemLoadsPerFma(static_cast<long long>(fa.sharedSizeBytes), g));
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

// =============================================================================
// Course toolkit: the blocks every lesson carries (error checks, timer,
// command line, reference GEMM, roofline ceilings, the shared-memory roof,
// the correctness rule). Machinery: skip it on a first read.
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
