// SPDX-License-Identifier: MIT
// Final project - sweep: which shape of one GEMM kernel is fastest here, and how sure can we be?
// One shared-memory kernel, C = A * B (FP32, row-major), is compiled for 27 points: block threads
// {128, 256, 512} x K step TK {8, 16, 32} x outputs per thread CO {1, 2, 4}. Coarsening (CO > 1)
// lets a thread reuse each B value it reads from shared memory CO times, and can cost registers,
// and so occupancy. Whether that wins is a measurement: each point is checked (output poisoned,
// every element against a double reference), then timed, then ranked: points whose [min, max]
// timing ranges overlap, directly or through a chain of overlaps, share a rank (a tie), so two
// ranks differ only where the timer tells the points apart. Compare occupancy with rank.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -lineinfo -o sweep sweep.cu
// Run:   ./sweep
// Run:   ./sweep -m 200 -n 130 -k 70 -iters 3
// Run:   ./sweep -m 300000 -n 8 -k 16 -iters 3
// Run:   ./sweep -csv -m 200 -n 130 -k 70 -iters 3
// Run:   ./sweep -iters 0
// Run:   ./sweep -m 1 -n 1 -k 16777216
// Sanitize: ./sweep -m 70 -n 40 -k 33 -iters 1 -warmups 0
//
// sm_75 is the T4 of Compiler Explorer; newer GPUs run its PTX. In the third run 4-row tiles
// would need 75000 blocks in grid.y; the last two runs are refused. lessons/sweep.md: the columns.
// Exercise (multiplyPanels): python3 scripts/suite.py exercise check sweep (on a GPU, every Run:
// line); without one, add --pane FILE [--args '...'] for a saved Compiler Explorer pane (ce-link).

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
// The idea: one kernel, coarsened CO times
// =============================================================================
constexpr int kTileCols = 32;  // a block tile is always 32 columns: one per lane

// Shared memory of one point: an A panel of (BY * CO) x TK floats, then a B panel of
// TK x 32 floats. The host sizes each launch with the same function.
constexpr long long panelBytes(int by, int tk, int co) {
  return (1LL * by * co * tk + 1LL * tk * kTileCols) * static_cast<long long>(sizeof(float));
}

// The lesson's inner loop: for each kk of the panel, one B
// value (this thread's column) is read from shared memory once and used for CO
// multiply-adds, one per output row; the A values are the same for the whole warp (one ty
// per warp), so shared memory broadcasts them. aRows points at this thread's first A row
// of the panel (row ty; rows are TK floats), and its other outputs' rows lie BY rows apart
// each; bCol points at this thread's column of the B panel (rows of 32 floats).
// Summing each output in ascending k with fmaf makes every point compute the same bits.
// solution: coarsened-inner-loop
template <int BY, int TK, int CO>
__device__ __forceinline__ void multiplyPanels(const float* aRows, const float* bCol,
                                               float (&acc)[CO]) {
#pragma unroll
  for (int kk = 0; kk < TK; ++kk) {
    const float b = bCol[kk * kTileCols];
#pragma unroll
    for (int r = 0; r < CO; ++r) acc[r] = fmaf(aRows[r * BY * TK + kk], b, acc[r]);
  }
}
// end solution

// C (M x N) = A (M x K) * B (K x N). Block (bx, by) owns the tile of rows by*ROWS ..
// by*ROWS+ROWS-1 (ROWS = BY*CO) and columns bx*32 .. bx*32+31; thread (tx, ty) owns
// the CO outputs in column bx*32+tx at rows ty, ty+BY, ..., ty+(CO-1)*BY of the tile.
// launch assumption: blockDim = (32, BY); gridDim = (ceil(N / 32), ceil(M / ROWS));
//   panelBytes(BY, TK, CO) bytes of dynamic shared memory (main launches exactly that).
// memory (with the lesson's inner loop): per K step a block loads a ROWS x TK panel of A and
//   a TK x 32 panel of B (zero past the edges, so no thread reads outside A or B) and reuses
//   them from shared memory: each A value 32 times, each B value ROWS times. C is written once.
template <int BY, int TK, int CO>
__global__ void __launch_bounds__(kTileCols * BY)
    sweepGemmKernel(const float* __restrict__ A, const float* __restrict__ B,
                    float* __restrict__ C, long long M, long long N, long long K) {
  static_assert(BY >= 1 && kTileCols * BY <= 1024,
                "a block is (32, BY): at most 1024 threads, the limit of every CUDA GPU");
  static_assert(TK >= 1 && TK <= kTileCols && (TK & (TK - 1)) == 0,
                "TK must be a power of two no larger than 32, so that it divides the block's "
                "thread count: each thread then loads the same A column at every step");
  static_assert(CO >= 1 && CO <= 8, "CO must be 1 to 8");
  constexpr int kThreads = kTileCols * BY, kRows = BY * CO;
  constexpr int kAPanel = kRows * TK, kBPanel = TK * kTileCols;     // floats
  constexpr int kALoads = (kAPanel + kThreads - 1) / kThreads;      // per thread, per K step
  constexpr int kBLoads = (kBPanel + kThreads - 1) / kThreads;
  constexpr int kARowStep = kThreads / TK;  // panel rows between one thread's A loads
  extern __shared__ float smem[];
  float *As = smem, *Bs = smem + kAPanel;  // kRows x TK, then TK x 32, both row-major
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTileCols + tx;
  const long long row0 = 1LL * blockIdx.y * kRows, col0 = 1LL * blockIdx.x * kTileCols;
  // What this thread loads never changes with k0: A panel rows aRow, aRow + kARowStep,
  // ... at column aCol (consecutive threads, consecutive k of one row of A), and B panel
  // rows ty, ty + BY, ... at column tx (consecutive threads, consecutive columns of B).
  const int aRow = tid / TK, aCol = tid % TK;
  const long long aIndex = (row0 + aRow) * K + aCol;  // A(row0 + aRow, aCol)
  const long long bIndex = ty * N + col0 + tx;        // B(ty, col0 + tx)
  const bool colInside = col0 + tx < N;
  const float *aRows = As + ty * TK, *bCol = Bs + tx;  // where this thread's outputs read
  float acc[CO];
#pragma unroll
  for (int r = 0; r < CO; ++r) acc[r] = 0.0f;
  for (long long k0 = 0; k0 < K; k0 += TK) {
#pragma unroll
    for (int s = 0; s < kALoads; ++s) {
      const int r = aRow + s * kARowStep;
      if (kAPanel % kThreads == 0 || r < kRows)
        As[r * TK + aCol] =
            (row0 + r < M && k0 + aCol < K) ? A[aIndex + s * kARowStep * K + k0] : 0.0f;
    }
#pragma unroll
    for (int s = 0; s < kBLoads; ++s) {
      const int kk = ty + s * BY;
      if (kBPanel % kThreads == 0 || kk < TK)
        Bs[kk * kTileCols + tx] = (colInside && k0 + kk < K) ? B[bIndex + (k0 + s * BY) * N]
                                                              : 0.0f;
    }
    __syncthreads();  // both panels complete; every thread of the block reaches it
    multiplyPanels<BY, TK, CO>(aRows, bCol, acc);
    __syncthreads();  // nobody overwrites a panel another thread still reads
  }
  // The guard wraps the stores only: threads outside C still loaded and synced.
#pragma unroll
  for (int r = 0; r < CO; ++r) {
    const long long row = row0 + ty + r * BY, col = col0 + tx;
    if (row < M && col < N) C[row * N + col] = acc[r];
  }
}

// The design space: one instantiation of the kernel per point.
typedef void (*GemmKernel)(const float*, const float*, float*, long long, long long, long long);
struct PointSpec {
  int threads, by, tk, co;  // block = (32, by) = threads; K step tk; outputs per thread co
  long long smem_bytes;
  GemmKernel kernel;
};

// Every point fits every CUDA GPU from sm_75 up (at most 512 threads, 12 KiB of shared memory):
// only the grid can keep a point from launching.
template <int BY, int TK, int CO>
PointSpec spec() {
  static_assert(panelBytes(BY, TK, CO) <= 48 * 1024,
                "every CUDA GPU gives a block 48 KiB of shared memory without an opt-in");
  return PointSpec{kTileCols * BY, BY, TK, CO, panelBytes(BY, TK, CO),
                   &sweepGemmKernel<BY, TK, CO>};
}

// Design-space order: block threads outer, TK middle, CO inner. The point table and
// the CSV follow this order; only the ranked table follows the timings.
const PointSpec kPoints[] = {
    spec<4, 8, 1>(),   spec<4, 8, 2>(),   spec<4, 8, 4>(),    // 128 threads
    spec<4, 16, 1>(),  spec<4, 16, 2>(),  spec<4, 16, 4>(),
    spec<4, 32, 1>(),  spec<4, 32, 2>(),  spec<4, 32, 4>(),
    spec<8, 8, 1>(),   spec<8, 8, 2>(),   spec<8, 8, 4>(),    // 256 threads
    spec<8, 16, 1>(),  spec<8, 16, 2>(),  spec<8, 16, 4>(),
    spec<8, 32, 1>(),  spec<8, 32, 2>(),  spec<8, 32, 4>(),
    spec<16, 8, 1>(),  spec<16, 8, 2>(),  spec<16, 8, 4>(),   // 512 threads
    spec<16, 16, 1>(), spec<16, 16, 2>(), spec<16, 16, 4>(),
    spec<16, 32, 1>(), spec<16, 32, 2>(), spec<16, 32, 4>(),
};
constexpr int kPointCount = int(sizeof(kPoints) / sizeof(PointSpec));  // 3 x 3 x 3 = 27
std::string pointLabel(const PointSpec& p) {
  return std::to_string(p.threads) + "/" + std::to_string(p.tk) + "/" + std::to_string(p.co);
}

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
// The experiment: the command line, and what one run may cost
// =============================================================================
constexpr long long kDefaultDim = 1024, kMaxDim = 1LL << 24;
constexpr int kDefaultIters = 20, kMaxIters = 10000, kWarmups = 3, kMaxWarmups = 100;
// A launch does 2*M*N*K FLOP, and each of its blocks walks K in ceil(K / TK) steps one after
// another (a global load and two barriers each); then the CPU checks
// M*N elements per point. Past 2^45 FLOP, 2^24 steps, 2^30 checks or 4 GiB of host memory the
// command line is refused.
static_assert(kMaxDim * kMaxDim < (1LL << 62) / 16 && kMaxDim / kTileCols < 2147483647LL,
              "every count fits in int64, and grid.x = ceil(N / 32) in every GPU's 2^31 - 1");
struct Options {
  long long m = kDefaultDim, n = kDefaultDim, k = kDefaultDim;
  int iters = kDefaultIters, warmups = kWarmups;
  bool csv = false;
};
std::string usageText() {
  char buf[1280];
  std::snprintf(buf, sizeof buf,
      "usage: sweep [-m M] [-n N] [-k K] [-iters I] [-warmups W] [-csv] [-h | --help]\n"
      "Checks, times and ranks one FP32 GEMM kernel, C (M x N) = A (M x K) * B (K x N),\n"
      "at 27 points: block threads {128, 256, 512} x TK {8, 16, 32} x CO {1, 2, 4}.\n"
      "  -m M, -n N, -k K  sizes, integers in [1, %lld] (default %lld each)\n"
      "  -iters I          timed launches per point, in [1, %d] (default %d), after one\n"
      "                    checked launch and W warm-ups\n"
      "  -warmups W        untimed launches before the timed ones, in [0, %d] (default %d);\n"
      "                    the Sanitize: line gives 0, sparing a sanitizer the points' warm-ups\n"
      "  -csv              CSV on stdout (one row per point); everything else on stderr\n"
      "Work caps: 2^45 FLOP (27 x (I + W + 1) launches x 2*M*N*K), 2^24 dependent K steps\n"
      "(the same launches x ceil(K / TK)), 2^30 elements checked on the CPU (27 x M x N),\n"
      "and 4 GiB of host memory.\n"
      "Exit status: 0 all launched points passed, 1 a check or CUDA call failed, 2 bad\n"
      "usage, 77 no usable GPU.\n",
      kMaxDim, kDefaultDim, kMaxIters, kDefaultIters, kMaxWarmups, kWarmups);
  return buf;
}

// Parses and validates argv; any error exits 2 (CommandLine::fail), before any CUDA call.
Options parseOptions(CommandLine& cl) {
  Options o;
  while (cl.next()) {
    if (cl.is("-m")) o.m = cl.intValue(1, kMaxDim);
    else if (cl.is("-n")) o.n = cl.intValue(1, kMaxDim);
    else if (cl.is("-k")) o.k = cl.intValue(1, kMaxDim);
    else if (cl.is("-iters")) o.iters = static_cast<int>(cl.intValue(1, kMaxIters));
    else if (cl.is("-warmups")) o.warmups = static_cast<int>(cl.intValue(0, kMaxWarmups));
    else if (cl.is("-csv")) o.csv = true;
    else cl.unknownOption();
  }
  const int launches = o.iters + o.warmups + 1;  // per point: timed, warm-ups, the checked one
  const double flop = 27.0 * launches * 2.0 * o.m * o.n * o.k, checks = 27.0 * o.m * o.n;
  long long steps = 0;
  for (const PointSpec& p : kPoints) steps += launches * ((o.k + p.tk - 1) / p.tk);
  const long long hostBytes = 4 * (o.m * o.k + o.k * o.n) + 12 * o.m * o.n;  // A, B, ref, C
  if (flop > 0x1p45)
    cl.fail("-m, -n, -k, -iters: the sweep would do %.3g FLOP (27 points x %d launches x "
            "2*M*N*K), over the cap of 2^45 (see -h)", flop, launches);
  if (steps > (1LL << 24))
    cl.fail("-k, -iters: the sweep would walk %lld dependent K steps (27 points x %d launches "
            "x ceil(K / TK)), over the cap of 2^24 (see -h)", steps, launches);
  if (checks > 0x1p30)
    cl.fail("-m, -n: the sweep would check %.3g elements on the CPU (27 points x M x N), over "
            "the cap of 2^30 (see -h)", checks);
  if (hostBytes > (4LL << 30))
    cl.fail("-m, -n, -k: the host buffers would need %.2f GiB (A, B, the double reference "
            "and C), over the cap of 4 GiB", hostBytes / 1073741824.0);
  return o;
}

// Legality, occupancy, the check and the ranking.
long long ceilDiv(long long a, long long b) { return (a + b - 1) / b; }

// Why a point cannot launch for this M, or "" when it can. Its only limit is grid.y: ceil(M /
// (BY * CO)) tiles against the device's limit (read, but 65535 on every CUDA GPU so far).
std::string skipReason(const PointSpec& p, long long m, long long gridYLimit) {
  const long long rows = 1LL * p.by * p.co, gridY = ceilDiv(m, rows);
  if (gridY <= gridYLimit) return "";
  return "grid.y = ceil(" + std::to_string(m) + " / " + std::to_string(rows) + ") = " +
         std::to_string(gridY) + " blocks, above the limit of " + std::to_string(gridYLimit);
}

// The occupancy API gives the resident blocks per SM; what binds is found by elimination,
// the API as judge: shared memory if the kernel fits more blocks without it, else threads
// or block slots if the count equals their bound, else the kernel's registers.
const char* occupancyLimiter(int blocks, int blocksWithoutSmem, int threadBound, int slotBound) {
  if (blocks < blocksWithoutSmem) return "shared memory";
  if (blocks == threadBound && threadBound <= slotBound) return "threads";
  if (blocks == slotBound) return "block slots";
  return "registers";
}

// The tie rule (kTieRule below states it). Two points overlap when the timer cannot say which is
// faster. Overlap is not transitive (a may overlap b, and b overlap c, while a beats c), so a tie
// is a whole chain: groups never overlap, every point of a group is slower than every point of the
// groups before it, and two ranks differ only where the timer tells the points apart. Only timed
// (hence passing) points are ranked, the others get rank 0; the ranges are taken as the CSV
// prints them, so the CSV alone can be checked against the rule.
// snippet: tie-rule
struct TimeRange { double min_ms, max_ms; bool timed; };

std::vector<int> ranksOf(const std::vector<TimeRange>& r) {
  std::vector<size_t> order;  // the timed points, fastest launch first
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i].timed) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&r](size_t a, size_t b) { return r[a].min_ms < r[b].min_ms; });
  std::vector<int> rank(r.size(), 0);
  int groupRank = 0;
  double groupMax = 0.0;  // the largest max in the current group
  for (size_t n = 0; n < order.size(); ++n) {
    const TimeRange& p = r[order[n]];
    if (n == 0 || p.min_ms > groupMax) groupRank = int(n) + 1, groupMax = p.max_ms;  // a new group
    else groupMax = std::max(groupMax, p.max_ms);  // joins the group: it overlaps a point of it
    rank[order[n]] = groupRank;
  }
  return rank;
}

// For each ranked point, how many other points share its rank (its group).
std::vector<int> tiesOf(const std::vector<int>& rank) {
  std::vector<int> tie(rank.size(), 0);
  for (size_t i = 0; i < rank.size(); ++i)
    for (size_t j = 0; j < rank.size(); ++j)
      if (i != j && rank[i] > 0 && rank[j] == rank[i]) ++tie[i];
  return tie;
}
// end snippet

// A time as the CSV prints it (%.4f), read back: the ranking uses exactly these values.
double asPrintedMs(double ms) {
  char text[64];
  std::snprintf(text, sizeof text, "%.4f", ms);
  return std::strtod(text, nullptr);
}

// The rule in one line, printed with every ranking.
constexpr const char* kTieRule =
    "Tie rule: two points overlap when their [min, max] ranges of timed launches (to 4 "
    "decimals of a millisecond, as the CSV prints them) share a value; sorted by fastest "
    "launch, a point joins the group before it when its min is at most that group's largest "
    "max; rank = 1 + the points in faster groups, tie = the other points of its group";

// One point at a time: its occupancy, its check, then its timing.
struct PointResult {
  std::string skip;  // why it cannot launch here; "" when it launched
  int regs = 0, blocks_per_sm = 0;
  double occupancy = 0.0;  // resident threads per SM / the SM's thread limit
  const char* limiter = "";
  GemmCheck check;  // worst_score is the table's err/tol: 1 = at the limit, a NaN stays
  bool timed = false;  // checked, passed, timed, and the timed launches reproduced it
  TimingStats t{};
  int rank = 0, tie = 0;
  double gflops(double flop) const { return flop / (t.median_ms * 1e-3) / 1e9; }
};
struct Problem {
  Options o;
  std::vector<double> ref;  // the reference C, M x N
  Tolerance tol;
  double ref_max;
  const float *dA, *dB; float* dC;
};

// Inputs: the course's LCG (gemm_check block) from seed 12345, u - 0.5, exact in float, A then B,
// row-major; the reference (reference_gemm) in double; the course's K-scaled tolerance.
Problem makeProblem(const Options& o, std::vector<float>& A, std::vector<float>& B) {
  Lcg g{12345u};
  g.fill(A, 1.0f, -0.5f);
  g.fill(B, 1.0f, -0.5f);
  Problem pr{o, hostVector<double>(o.m * o.n, "the reference C"), {}, 0.0, {}, {}, {}};
  referenceGemm(A.data(), B.data(), pr.ref.data(), int(o.m), int(o.n), int(o.k));
  pr.ref_max = maxAbs(pr.ref.data(), o.m * o.n);
  pr.tol = gemmTolerance(o.k, pr.ref_max);
  return pr;
}
void measureOccupancy(const PointSpec& p, const cudaDeviceProp& prop, PointResult* r) {
  cudaFuncAttributes fa{};
  CUDA_CHECK(cudaFuncGetAttributes(&fa, p.kernel));
  int blocks = 0, blocksWithoutSmem = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, p.kernel, p.threads,
                                                           size_t(p.smem_bytes)));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocksWithoutSmem, p.kernel,
                                                           p.threads, 0));
  r->regs = fa.numRegs, r->blocks_per_sm = blocks;
  r->limiter = occupancyLimiter(blocks, blocksWithoutSmem, prop.maxThreadsPerMultiProcessor /
                                p.threads, prop.maxBlocksPerMultiProcessor);
  r->occupancy = double(blocks) * p.threads / prop.maxThreadsPerMultiProcessor;
}

// One launch into C poisoned with NaN, so an element this point does not write fails whatever the
// last point left; then the timed launches, which must reproduce it (checkThenTime); GATE on failure.
void runPoint(int index, const PointSpec& p, const Problem& pr, std::vector<float>& got,
              PointResult* r) {
  const Options& o = pr.o;
  const dim3 grid(unsigned(ceilDiv(o.n, kTileCols)), unsigned(ceilDiv(o.m, 1LL * p.by * p.co)));
  const auto launch = [&] {
    p.kernel<<<grid, dim3(kTileCols, p.by), size_t(p.smem_bytes)>>>(pr.dA, pr.dB, pr.dC, o.m,
                                                                     o.n, o.k);
  };
  const CheckedTiming run = checkThenTime(launch, pr.dC, got, [&](const std::vector<float>& c) {
    return (r->check = checkElements(c.data(), pr.ref.data(), o.m * o.n, pr.tol)).pass();
  }, o.warmups, o.iters);
  const GemmCheck& s = r->check;
  if (!run.passed) {
    std::fprintf(stderr, "GATE: point %d (%s) failed its check: %lld of %lld elements outside "
                 "the tolerance; first at row %lld, col %lld: got %.9g, ref %.9g, |got - ref| "
                 "= %.3e > %.3e\n", index + 1, pointLabel(p).c_str(), s.failures, s.checked,
                 s.first_bad / o.n, s.first_bad % o.n, s.first_got, s.first_ref,
                 std::fabs(s.first_got - s.first_ref), s.first_tol);
    return;  // never timed, never ranked
  }
  r->t = run.t;
  r->timed = run.reproduced;
  if (!r->timed)
    std::fprintf(stderr, "GATE: point %d (%s): the timed launches did not reproduce the "
                 "checked output bit for bit\n", index + 1, pointLabel(p).c_str());
}

// What it prints. Design-space order, a line per point: what it is, its check, its time,
// then what it costs an SM (facts of this GPU and build, in their own units, last).
void printPointTable(const std::vector<PointResult>& res, double flop) {
  std::printf("Per point, design-space order (threads/TK/CO; err/tol = the largest |got - ref| "
              "/ (atol + rtol*|ref|)):\n pt  point     tile     smem B  check  err/tol   median"
              "       rate             per SM\n");
  for (int i = 0; i < kPointCount; ++i) {
    const PointSpec& p = kPoints[i];
    const PointResult& r = res[size_t(i)];
    std::printf("%3d  %-8s  %2d x 32  %6lld  ", i + 1, pointLabel(p).c_str(), p.by * p.co,
                p.smem_bytes);
    if (!r.skip.empty()) {
      std::printf("SKIP   %s\n", r.skip.c_str());
      continue;
    }
    std::printf("%s  %8.3f  ", r.check.pass() ? "PASS" : "FAIL", r.check.worst_score);
    if (r.timed) std::printf("%9.4f ms  %8.1f GFLOP/s  ", r.t.median_ms, r.gflops(flop));
    else std::printf("not ranked (see stderr)        ");
    std::printf("%d regs, %d blocks/SM, %.1f%% occupancy, limited by %s\n", r.regs,
                r.blocks_per_sm, 100.0 * r.occupancy, r.limiter);
  }
}

// The tie rule, the ranking, fastest median first (groups never overlap, so their medians come in
// rank order), then the fastest point and the best rank at the highest occupancy. Where a point
// sits is a measurement: [measured] lines. With -csv only the rule and the summary, on stderr.
void printRanking(const std::vector<PointResult>& res, const std::vector<int>& order,
                  const cudaDeviceProp& prop, double flop, double peak, bool csv) {
  std::FILE* out = csv ? stderr : stdout;
  std::fprintf(out, "%s\n", kTieRule);
  if (!csv)
    std::printf("Ranked, fastest median first (= marks a tie):\n           rank  point     "
                "block    TK  CO  smem B  per SM; share of the measured FP32 peak\n");
  double top = 0.0;  // the highest occupancy of a ranked point
  for (int i : order) {
    const PointSpec& q = kPoints[i];
    const PointResult& s = res[size_t(i)];
    top = std::max(top, s.occupancy);
    if (!csv)
      std::printf("[measured] %3d%s  %-8s  32 x %-2d  %2d  %2d  %6lld  %d regs, %d blocks/SM, "
                  "%.1f%% occupancy; %.1f%% of measured peak\n", s.rank, s.tie > 0 ? "=" : " ",
                  pointLabel(q).c_str(), q.by, q.tk, q.co, q.smem_bytes, s.regs,
                  s.blocks_per_sm, 100.0 * s.occupancy, 100.0 * s.gflops(flop) / peak);
  }
  const PointSpec& p = kPoints[order.front()];
  const PointResult &r = res[size_t(order.front())], &last = res[size_t(order.back())];
  std::fprintf(out, "[measured] Fastest: %s = block 32 x %d, TK %d, CO %d, rank %d, tied with %d;"
               " %lld B of shared memory (of %zu KiB per block, %zu KiB per SM), %d blocks/SM, "
               "%.1f%% occupancy; %.4f ms = %.1f GFLOP/s = %.1f%% of measured FP32 peak, %.2fx "
               "the slowest point's speed; PASS, err/tol %.3f\n", pointLabel(p).c_str(), p.by,
               p.tk, p.co, r.rank, r.tie, p.smem_bytes, prop.sharedMemPerBlock / 1024,
               prop.sharedMemPerMultiprocessor / 1024, r.blocks_per_sm, 100.0 * r.occupancy,
               r.t.median_ms, r.gflops(flop), 100.0 * r.gflops(flop) / peak,
               last.t.median_ms / r.t.median_ms, r.check.worst_score);
  int topRank = kPointCount;  // the best rank a point of that occupancy reaches
  for (int i : order)
    if (res[size_t(i)].occupancy == top) topRank = std::min(topRank, res[size_t(i)].rank);
  std::fprintf(out, "[measured] Occupancy against rank: the fastest point runs at %.1f%% "
               "occupancy; the best of the points at the highest, %.1f%%, ranks %d\n",
               100.0 * r.occupancy, 100.0 * top, topRank);
}

void printCsv(const Options& o, const cudaDeviceProp& prop, const std::vector<PointResult>& res,
              double flop, double peak) {
  std::printf("device,m,n,k,point,threads,block_y,tk,co,tile_rows,smem_bytes,status,err_frac,"
              "regs,blocks_per_sm,limited_by,occupancy,ms,min_ms,max_ms,gflops,pct_of_peak,rank,"
              "tie\n");
  for (int i = 0; i < kPointCount; ++i) {
    const PointSpec& p = kPoints[i];
    const PointResult& r = res[size_t(i)];
    std::printf("%s,%lld,%lld,%lld,%d,%d,%d,%d,%d,%d,%lld,%s,", prop.name, o.m, o.n, o.k,
                i + 1, p.threads, p.by, p.tk, p.co, p.by * p.co, p.smem_bytes,
                !r.skip.empty() ? "SKIP" : r.timed ? "PASS" : "FAIL");
    if (r.skip.empty())
      std::printf("%.3f,%d,%d,%s,%.4f,", r.check.worst_score, r.regs, r.blocks_per_sm, r.limiter,
                  r.occupancy);
    if (!r.timed) std::printf("%s,,,,,,\n", r.skip.empty() ? "" : ",,,,,");
    else std::printf("%.4f,%.4f,%.4f,%.1f,%.2f,%d,%d\n", r.t.median_ms, r.t.min_ms, r.t.max_ms,
                     r.gflops(flop), 100.0 * r.gflops(flop) / peak, r.rank, r.tie);
  }
}

// What the failures say. An inner loop that gets part of each thread's outputs wrong (left
// uncomputed, or read with the wrong stride) fails every point with CO > 1 and none with CO = 1.
void printFailures(const std::vector<PointResult>& res, std::FILE* out) {
  int ran[2] = {0, 0}, failed[2] = {0, 0};  // [0]: CO = 1, [1]: CO > 1
  for (int i = 0; i < kPointCount; ++i) {
    const bool launched = res[size_t(i)].skip.empty();
    ran[kPoints[i].co > 1] += launched;
    failed[kPoints[i].co > 1] += launched && !res[size_t(i)].timed;
  }
  if (failed[0] == 0 && failed[1] > 0 && failed[1] == ran[1])
    std::fprintf(out, "Left to write: the coarsened inner loop (multiplyPanels) gets part of each "
                 "thread's outputs wrong. Every point with CO = 1 passes and every point with "
                 "CO > 1 fails: each thread must produce all CO of its outputs.\n");
}

// =============================================================================
// main: parse, size, check and time every point, rank, report
// =============================================================================
int main(int argc, char** argv) {
  CommandLine cl(argc, argv, usageText());  // also: a failed write to stdout exits 1
  const Options o = parseOptions(cl);       // exit 2 on a bad command line, no CUDA call
  const cudaDeviceProp prop = requireCudaDevice();  // exit 77 without a device
  std::FILE* info = o.csv ? stderr : stdout;  // with -csv, stdout carries the CSV alone
  const double flop = 2.0 * o.m * o.n * o.k;
  std::fprintf(info, "GPU: %s (compute capability %d.%d)\n", prop.name, prop.major, prop.minor);
  std::fprintf(info, "[device] %d SMs, %d threads/SM, %d blocks/SM, %d registers/SM, %zu KiB "
               "shared memory/SM\n", prop.multiProcessorCount, prop.maxThreadsPerMultiProcessor,
               prop.maxBlocksPerMultiProcessor, prop.regsPerMultiprocessor,
               prop.sharedMemPerMultiprocessor / 1024);
  std::fprintf(info, "Problem: C (%lld x %lld) = A (%lld x %lld) * B (%lld x %lld), FP32, "
               "row-major, %.3f GFLOP per launch\n", o.m, o.n, o.m, o.k, o.k, o.n, flop / 1e9);

  std::vector<PointResult> res(kPointCount);
  int launchable = 0;
  for (int i = 0; i < kPointCount; ++i)
    launchable += (res[size_t(i)].skip = skipReason(kPoints[i], o.m, prop.maxGridSize[1])).empty();
  if (launchable == 0) cl.fail("-m: no point of the design space can launch M = %lld", o.m);
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  const long long deviceBytes = 4 * (o.m * o.k + o.k * o.n) + 8 * o.m * o.n;
  if (deviceBytes > static_cast<long long>(freeBytes))
    cl.fail("-m, -n, -k: A, B and a double C need %.2f GiB of device memory, more than the "
            "%.2f GiB free", deviceBytes / 1073741824.0, freeBytes / 1073741824.0);
  std::fprintf(info, "Design space: 27 points = block threads {128, 256, 512} x K step TK {8, "
               "16, 32} x outputs per thread CO {1, 2, 4}; %d can launch, %d cannot\n",
               launchable, kPointCount - launchable);
  std::vector<float> A = hostVector<float>(o.m * o.k, "A"), B = hostVector<float>(o.k * o.n, "B");
  Problem pr = makeProblem(o, A, B);
  std::fprintf(info, "Check, every element of every point: |got - ref| <= atol + rtol*|ref|, "
               "rtol = max(1e-5, 4 * 2^-23 * sqrt(K)) = %.3e, atol = rtol * max|ref| = %.3e "
               "(max|ref| = %.6g); NaN and infinity fail\n", pr.tol.rtol, pr.tol.atol, pr.ref_max);
  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  CUDA_CHECK(cudaMalloc(&dA, A.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dB, B.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dC, size_t(o.m * o.n) * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
  pr.dA = dA, pr.dB = dB, pr.dC = dC;
  std::vector<float> got = hostVector<float>(o.m * o.n, "C");
  std::vector<TimeRange> ranges;
  for (int i = 0; i < kPointCount; ++i) {
    PointResult& r = res[size_t(i)];
    if (r.skip.empty()) measureOccupancy(kPoints[i], prop, &r);
    if (r.skip.empty()) runPoint(i, kPoints[i], pr, got, &r);
    ranges.push_back(TimeRange{asPrintedMs(r.t.min_ms), asPrintedMs(r.t.max_ms), r.timed});
  }
  for (float* d : {dA, dB, dC}) CUDA_CHECK(cudaFree(d));
  const std::vector<int> rank = ranksOf(ranges), tie = tiesOf(rank);
  std::vector<int> order;  // the timed points, fastest median first
  for (int i = 0; i < kPointCount; ++i) {
    res[size_t(i)].rank = rank[size_t(i)], res[size_t(i)].tie = tie[size_t(i)];
    if (res[size_t(i)].timed) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return res[size_t(a)].t.median_ms < res[size_t(b)].t.median_ms;
  });
  const Ceilings c = measureCeilings();  // the GEMM buffers are freed: memory is free
  printCeilings(c, info);
  if (o.csv) printCsv(o, prop, res, flop, c.fp32_gflops);
  if (!o.csv) printPointTable(res, flop);
  if (!order.empty()) printRanking(res, order, prop, flop, c.fp32_gflops, o.csv);
  std::fprintf(info, "%d points: %d launched, %d could not; %d passed and were timed, %d "
               "failed%s\n", kPointCount, launchable, kPointCount - launchable, int(order.size()),
               launchable - int(order.size()), int(order.size()) < launchable ? " (GATE lines on "
               "stderr)." : ".");
  printFailures(res, info);
  return int(order.size()) == launchable ? EXIT_SUCCESS : EXIT_FAILURE;
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
