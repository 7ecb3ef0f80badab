// SPDX-License-Identifier: MIT
// cublas_sgemm: the library's FP32 GEMM on the inputs of lessons/gemm_ladder.cu,
// timed the way the lessons time their kernels, so that `verify` can record how
// far each kernel is from it. It links cuBLAS, so it is no lesson (a lesson
// pastes into Compiler Explorer alone); CMake builds it when CUDA::cublas is found.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o cublas_sgemm cublas_sgemm.cu -lcublas
// Run:   ./cublas_sgemm -n 4096 [-n N ...] [-iters I]
// Output (stdout, CSV): kernel,n,median_ms,gflops then one row cublas_sgemm,N,... for each -n,
// in the order given (verify times all of a lesson run's sizes in one process, one start).
// - C = A * B, M = N = K = n, row-major; A and B from the LCG of gemm_ladder
//   (seed 20250612, values 2f - 1, A first, then B), so both time the same data.
// - FP32 all the way: cublasSgemm with CUBLAS_DEFAULT_MATH (no TF32: that needs
//   CUBLAS_TF32_TENSOR_OP_MATH or NVIDIA_TF32_OVERRIDE=1, which is refused here).
// - Row-major C = A * B is column-major C^T = B^T * A^T: B is passed first.
// - The lessons' correctness rule (common block gemm_check): C poisoned, one
//   launch, rows 0 and n-1 checked against the reference block's CPU loop
//   (double, ascending k) with the course's K-scaled tolerance (atol from each
//   row's max|ref|), so a misplaced operand cannot pass as a fast result; only
//   then the lessons' timer (common block timer): 3 warm-ups, then -iters
//   launches (default 20) queued back to back, each between two events; the
//   median is reported, and C must still hold the checked bits.
// Exit status: 0 ok, 1 CUDA/cuBLAS error or a failed check (a size that fails its check prints no
// row and the sizes after it are still timed; a CUDA or cuBLAS error exits at once), 2 bad command
// line, 77 no usable CUDA device.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

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

#define CHECK_CUBLAS(call)                                                                 \
  do {                                                                                     \
    const cublasStatus_t s_ = (call);                                                      \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                     \
      std::fprintf(stderr, "cuBLAS error at %s:%d: %s: status %d\n", __FILE__, __LINE__,   \
                   #call, static_cast<int>(s_));                                           \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

static void usage(std::FILE* f) {
  std::fputs("usage: cublas_sgemm -n N [-n N ...] [-iters I]\n"
             "  -n N      M = N = K, an integer in [1, 32768]; each -n is timed in turn\n"
             "  -iters I  timed launches, an integer in [1, 10000] (default 20)\n", f);
}

static long long parseInt(const char* opt, const char* text, long long lo, long long hi) {
  char* end = nullptr;
  const long long v = text ? std::strtoll(text, &end, 10) : 0;
  if (!text || *text == '\0' || *end != '\0' || v < lo || v > hi) {
    std::fprintf(stderr, "error: %s expects an integer in [%lld, %lld], got %s\n", opt, lo, hi,
                 text ? text : "nothing");
    usage(stderr);
    std::exit(2);
  }
  return v;
}

// One size: the inputs, the checked launch, the timing; prints its CSV row, returns the exit status.
int timeSize(cublasHandle_t h, long long n, int iters) {
  const size_t e = size_t(n) * size_t(n);
  std::vector<float> A = hostVector<float>(n * n, "A"), B = hostVector<float>(n * n, "B");
  std::vector<float> C = hostVector<float>(n * n, "C");
  Lcg g{20250612u};  // gemm_ladder's inputs: 2u - 1, A first, then B
  g.fill(A, 2.0f, -1.0f);
  g.fill(B, 2.0f, -1.0f);

  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  CUDA_CHECK(cudaMalloc(&dA, e * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dB, e * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dC, e * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dA, A.data(), e * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), e * sizeof(float), cudaMemcpyHostToDevice));
  const float one = 1.0f, zero = 0.0f;
  const int ni = int(n);
  auto launch = [&] {
    CHECK_CUBLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, dB, ni, dA, ni, &zero,
                             dC, ni));
  };

  // Poison, check rows 0 and n-1, and only then time (checkThenTime, common block gemm_check).
  std::vector<double> row = hostVector<double>(n, "a reference row");
  const CheckedTiming run = checkThenTime(launch, dC, C, [&](const std::vector<float>& got) {
    for (long long i : {0LL, n - 1}) {
      referenceRowCpu(A.data(), B.data(), row.data(), int(i), ni, ni);
      const GemmCheck c = checkElements(got.data() + i * n, row.data(), n,
                                        gemmTolerance(n, maxAbs(row.data(), n)));
      if (!c.pass()) {
        std::fprintf(stderr, "check failed: n %lld, row %lld, col %lld: got %.9g, ref %.9g\n", n,
                     i, c.first_bad, c.first_got, c.first_ref);
        return false;
      }
    }
    return true;
  }, 3, iters);
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  if (!run.passed) return 1;
  if (!run.reproduced) {
    std::fprintf(stderr, "check failed: n %lld: the timed launches did not reproduce the checked "
                 "output bit for bit\n", n);
    return 1;
  }
  const double median = run.t.median_ms;  // the lessons' timer
  const double gflops = 2.0 * double(n) * double(n) * double(n) / (median * 1e-3) / 1e9;
  std::printf("cublas_sgemm,%lld,%.4f,%.1f\n", n, median, gflops);
  std::fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  std::vector<long long> sizes;  // each -n, timed in the order given (one process: one start)
  int iters = 20;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) { usage(stdout); return 0; }
    if (!std::strcmp(a, "-n")) { sizes.push_back(parseInt("-n", v, 1, 32768)); ++i; }
    else if (!std::strcmp(a, "-iters")) { iters = int(parseInt("-iters", v, 1, 10000)); ++i; }
    else { std::fprintf(stderr, "error: unknown option \"%s\"\n", a); usage(stderr); return 2; }
  }
  if (sizes.empty()) { std::fprintf(stderr, "error: -n is required\n"); usage(stderr); return 2; }
  requireCudaDevice();
  cublasHandle_t h;
  CHECK_CUBLAS(cublasCreate(&h));
  CHECK_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));  // FP32, no TF32
  std::printf("kernel,n,median_ms,gflops\n");
  int status = 0;  // a size that fails its check prints no row; the others are still timed
  for (long long n : sizes) status = std::max(status, timeSize(h, n, iters));
  CHECK_CUBLAS(cublasDestroy(h));
  return status;
}

// ---- course toolkit: the common blocks every lesson carries (machinery) ----
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
