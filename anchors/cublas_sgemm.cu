// SPDX-License-Identifier: MIT
// cublas_sgemm: the library's FP32 GEMM on the inputs of lessons/gemm_ladder.cu,
// timed the way the lessons time their kernels, so that `verify` can record how
// far each kernel is from it. It links cuBLAS, so it is no lesson (a lesson
// pastes into Compiler Explorer alone); CMake builds it when CUDA::cublas is found.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -o cublas_sgemm cublas_sgemm.cu -lcublas
// Run:   ./cublas_sgemm -n 4096 [-iters I]
// Output (stdout, CSV): kernel,n,median_ms,gflops then one row cublas_sgemm,N,...
// - C = A * B, M = N = K = n, row-major; A and B from the LCG of gemm_ladder
//   (seed 20250612, values 2f - 1, A first, then B), so both time the same data.
// - FP32 all the way: cublasSgemm with CUBLAS_DEFAULT_MATH (no TF32: that needs
//   CUBLAS_TF32_TENSOR_OP_MATH or NVIDIA_TF32_OVERRIDE=1, which is refused here).
// - Row-major C = A * B is column-major C^T = B^T * A^T: B is passed first.
// - The lessons' timer (common block timer): 3 warm-ups, then -iters launches
//   (default 20) queued back to back, each between two events; the median is reported. Before timing, rows 0 and n-1
//   are checked against a double CPU loop with the ladder's tolerance, so a
//   misplaced operand cannot pass as a fast result.
// Exit status: 0 ok, 1 CUDA/cuBLAS error or failed check, 2 bad command line,
// 77 no usable CUDA device.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
  std::fputs("usage: cublas_sgemm -n N [-iters I]\n"
             "  -n N      M = N = K, an integer in [1, 32768]\n"
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

int main(int argc, char** argv) {
  long long n = -1;
  int iters = 20;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!std::strcmp(a, "-h") || !std::strcmp(a, "--help")) { usage(stdout); return 0; }
    if (!std::strcmp(a, "-n")) { n = parseInt("-n", v, 1, 32768); ++i; }
    else if (!std::strcmp(a, "-iters")) { iters = int(parseInt("-iters", v, 1, 10000)); ++i; }
    else { std::fprintf(stderr, "error: unknown option \"%s\"\n", a); usage(stderr); return 2; }
  }
  if (n < 0) { std::fprintf(stderr, "error: -n is required\n"); usage(stderr); return 2; }
  requireCudaDevice();

  const size_t e = size_t(n) * size_t(n);
  std::vector<float> A(e), B(e), C(e);
  uint32_t s = 20250612u;  // gemm_ladder's generator: A first, then B
  auto next = [&s] {
    s = 1664525u * s + 1013904223u;
    return 2.0f * (static_cast<float>(s >> 8) / 16777216.0f) - 1.0f;
  };
  for (float& a : A) a = next();
  for (float& b : B) b = next();

  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  CUDA_CHECK(cudaMalloc(&dA, e * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dB, e * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dC, e * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dA, A.data(), e * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dB, B.data(), e * sizeof(float), cudaMemcpyHostToDevice));
  cublasHandle_t h;
  CHECK_CUBLAS(cublasCreate(&h));
  CHECK_CUBLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));  // FP32, no TF32
  const float one = 1.0f, zero = 0.0f;
  const int ni = int(n);
  auto launch = [&] {
    CHECK_CUBLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &one, dB, ni, dA, ni, &zero,
                             dC, ni));
  };

  // Check rows 0 and n-1 against a double loop (ascending k), tolerance as the ladder's.
  CUDA_CHECK(cudaMemset(dC, 0xFF, e * sizeof(float)));
  launch();
  CUDA_CHECK(cudaMemcpy(C.data(), dC, e * sizeof(float), cudaMemcpyDeviceToHost));
  const double rtol = std::max(1e-5, 4.0 * std::ldexp(1.0, -23) * std::sqrt(double(n)));
  for (long long i : {0LL, n - 1}) {
    std::vector<double> row(size_t(n), 0.0);
    for (long long k = 0; k < n; ++k)
      for (long long j = 0; j < n; ++j) row[size_t(j)] += double(A[size_t(i * n + k)]) * B[size_t(k * n + j)];
    double maxRef = 0.0;
    for (double r : row) maxRef = std::max(maxRef, std::fabs(r));
    for (long long j = 0; j < n; ++j) {
      const double d = std::fabs(double(C[size_t(i * n + j)]) - row[size_t(j)]);
      if (!(d <= rtol * maxRef + rtol * std::fabs(row[size_t(j)]))) {
        std::fprintf(stderr, "check failed: row %lld, col %lld: got %.9g, ref %.9g\n", i, j,
                     double(C[size_t(i * n + j)]), row[size_t(j)]);
        return 1;
      }
    }
  }

  const double median = timeKernel(launch, 3, iters).median_ms;  // the lessons' timer
  const double gflops = 2.0 * double(n) * double(n) * double(n) / (median * 1e-3) / 1e9;
  std::printf("kernel,n,median_ms,gflops\ncublas_sgemm,%lld,%.4f,%.1f\n", n, median, gflops);
  CHECK_CUBLAS(cublasDestroy(h));
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  return 0;
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
// odd sample hit by a clock change. Inputs stay in L2 when they fit.
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
