// Host tests of the common block reference_gemm (no GPU needed). The block's
// claim: its double GPU kernel (one fma per k, ascending) and its CPU row loop
// (multiply, then add, k ascending) give the same bits, because a float x float
// product is exact in double, so fma and multiply-then-add round the same sum.
// The GPU cannot run here: the kernel's arithmetic is replayed on the CPU with
// std::fma, element by element in the kernel's own index order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <cuda_runtime.h>

#include "../common/cuda_check_decl.cuh"
#include "../common/reference_gemm_decl.cuh"
#include "../common/reference_gemm.cuh"

namespace {

// Floats across the whole range: random sign, exponent and mantissa bits
// (subnormals included), with NaN and infinity left out.
std::vector<float> wideFloats(size_t n, uint32_t seed, int maxExp = 254) {
  std::mt19937 g(seed);
  std::vector<float> v(n);
  for (float& x : v) {
    uint32_t bits;
    do {
      bits = g();
    } while (((bits >> 23) & 0xFF) > static_cast<uint32_t>(maxExp));
    std::memcpy(&x, &bits, sizeof x);
  }
  return v;
}

std::vector<float> unitFloats(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The kernel's arithmetic for element e (i = e / N, j = e % N), on the CPU.
double kernelElement(const float* A, const float* B, long long e, int N, int K) {
  const long long i = e / N, j = e % N;
  double acc = 0.0;
  for (long long k = 0; k < K; ++k)
    acc = std::fma(double(A[i * K + k]), double(B[k * N + j]), acc);
  return acc;
}

// The same sum with the product rounded on its own first (volatile keeps the
// compiler from fusing it back into an fma).
double separateElement(const float* A, const float* B, long long i, long long j, int N, int K) {
  double acc = 0.0;
  for (long long k = 0; k < K; ++k) {
    volatile double p = double(A[i * K + k]) * double(B[k * N + j]);
    acc = acc + p;
  }
  return acc;
}

TEST(ReferenceGemm, FloatTimesFloatIsExactInDouble) {
  // The error of the rounded product, fma(a, b, -a*b), is 0 for every pair:
  // 24 + 24 significant bits fit in 53, and the exponents stay in range.
  const std::vector<float> a = wideFloats(1 << 20, 1), b = wideFloats(1 << 20, 2);
  for (size_t t = 0; t < a.size(); ++t) {
    const double p = double(a[t]) * double(b[t]);
    ASSERT_EQ(std::fma(double(a[t]), double(b[t]), -p), 0.0) << a[t] << " * " << b[t];
  }
}

TEST(ReferenceGemm, FmaAndMultiplyThenAddGiveTheSameBits) {
  // Whole GEMMs on inputs with every exponent that keeps the sums finite.
  for (uint32_t seed = 0; seed < 4; ++seed) {
    const int M = 7, N = 13, K = 301;
    const std::vector<float> A = wideFloats(M * K, 10 + seed, 160);  // |x| < 2^34
    const std::vector<float> B = wideFloats(K * N, 20 + seed, 160);
    for (long long e = 0; e < 1LL * M * N; ++e)
      ASSERT_TRUE(sameBits(kernelElement(A.data(), B.data(), e, N, K),
                           separateElement(A.data(), B.data(), e / N, e % N, N, K)))
          << "seed " << seed << " element " << e;
  }
}

TEST(ReferenceGemm, CpuRowLoopMatchesTheKernelsArithmeticBitForBit) {
  // Sizes that are multiples of nothing, as the lessons' edge runs use.
  struct Size {
    int M, N, K;
  };
  for (const Size s : {Size{1, 1, 1}, Size{3, 5, 1000}, Size{17, 33, 65}, Size{64, 64, 64},
                       Size{2, 1025, 7}}) {
    const int M = s.M, N = s.N, K = s.K;
    const std::vector<float> A = unitFloats(size_t(M) * K, M), B = unitFloats(size_t(K) * N, N);
    std::vector<double> row(static_cast<size_t>(N));
    for (int i = 0; i < M; ++i) {
      referenceRowCpu(A.data(), B.data(), row.data(), i, N, K);
      for (int j = 0; j < N; ++j)
        ASSERT_TRUE(sameBits(row[j], kernelElement(A.data(), B.data(), 1LL * i * N + j, N, K)))
            << M << "x" << N << "x" << K << " at (" << i << ", " << j << ")";
    }
  }
}

TEST(ReferenceGemm, TheCheckWouldSeeAWrongOrderOrAFloatAccumulator) {
  // The CPU rows are a real check: a descending k order or a float accumulator
  // (what a kernel under test does) changes bits on these inputs.
  const int N = 8, K = 4096;
  const std::vector<float> A = unitFloats(K, 5), B = unitFloats(size_t(K) * N, 6);
  std::vector<double> row(N);
  referenceRowCpu(A.data(), B.data(), row.data(), 0, N, K);
  int reordered = 0, inFloat = 0;
  for (int j = 0; j < N; ++j) {
    double down = 0.0;
    float f = 0.0f;
    for (int k = K - 1; k >= 0; --k) down += double(A[k]) * double(B[size_t(k) * N + j]);
    for (int k = 0; k < K; ++k) f = std::fma(A[k], B[size_t(k) * N + j], f);
    reordered += !sameBits(down, row[j]);
    inFloat += !sameBits(double(f), row[j]);
  }
  EXPECT_GT(reordered, 0);
  EXPECT_EQ(inFloat, N);
}

TEST(ReferenceGemm, EmptySumsAreZero) {
  std::vector<double> row(3, 99.0);
  const float unused = 1.0f;
  referenceRowCpu(&unused, &unused, row.data(), 0, 3, 0);
  for (double v : row) EXPECT_TRUE(sameBits(v, 0.0)) << "+0.0, not -0.0 or stale";
}

}  // namespace
