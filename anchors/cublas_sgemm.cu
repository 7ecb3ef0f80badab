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
// - 3 warm-ups, then -iters launches (default 20) queued back to back, each
//   between two events; the median is reported. Before timing, rows 0 and n-1
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

#define CHECK_CUDA(call)                                                                   \
  do {                                                                                     \
    const cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "CUDA error at %s:%d: %s: %s\n", __FILE__, __LINE__, #call,     \
                   cudaGetErrorString(e_));                                                \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)
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
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "no usable CUDA device (exit 77 = skipped)\n");
    return 77;
  }
  CHECK_CUDA(cudaSetDevice(0));

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
  CHECK_CUDA(cudaMalloc(&dA, e * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dB, e * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dC, e * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(dA, A.data(), e * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, B.data(), e * sizeof(float), cudaMemcpyHostToDevice));
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
  CHECK_CUDA(cudaMemset(dC, 0xFF, e * sizeof(float)));
  launch();
  CHECK_CUDA(cudaMemcpy(C.data(), dC, e * sizeof(float), cudaMemcpyDeviceToHost));
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

  for (int w = 0; w < 3; ++w) launch();
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> ev(size_t(iters) + 1);
  for (cudaEvent_t& x : ev) CHECK_CUDA(cudaEventCreate(&x));
  CHECK_CUDA(cudaEventRecord(ev[0]));
  for (int i = 1; i <= iters; ++i) {
    launch();
    CHECK_CUDA(cudaEventRecord(ev[size_t(i)]));
  }
  CHECK_CUDA(cudaEventSynchronize(ev.back()));
  std::vector<double> ms;
  for (int i = 1; i <= iters; ++i) {
    float t = 0.0f;
    CHECK_CUDA(cudaEventElapsedTime(&t, ev[size_t(i) - 1], ev[size_t(i)]));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  const size_t m = ms.size();
  const double median = m % 2 ? ms[m / 2] : 0.5 * (ms[m / 2 - 1] + ms[m / 2]);
  const double gflops = 2.0 * double(n) * double(n) * double(n) / (median * 1e-3) / 1e9;
  std::printf("kernel,n,median_ms,gflops\ncublas_sgemm,%lld,%.4f,%.1f\n", n, median, gflops);
  for (cudaEvent_t& x : ev) CHECK_CUDA(cudaEventDestroy(x));
  CHECK_CUBLAS(cublasDestroy(h));
  CHECK_CUDA(cudaFree(dA));
  CHECK_CUDA(cudaFree(dB));
  CHECK_CUDA(cudaFree(dC));
  return 0;
}
