// SPDX-License-Identifier: MIT
// Host tests of lessons/matmul_fp16.cu: the tolerance rule against the spec
// table, the conversion demos, the gate (NaN and infinity must fail), the CPU
// reference against a naive triple loop, bit for bit, and the K = 256 digits
// from a host emulation of the three kernels' arithmetic. No GPU needed.
#include <gtest/gtest.h>

#define main lesson_main
#include "../lessons/matmul_fp16.cu"
#undef main

#include <limits>

namespace {

std::string sci3(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", x);
  return buf;
}
std::string fixed4(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", x);
  return buf;
}

// The naive loop the fast reference must match bit for bit.
void naiveGemm(const float* A, const float* B, double* C, long long M,
               long long N, long long K) {
  for (long long i = 0; i < M; ++i)
    for (long long j = 0; j < N; ++j) {
      double s = 0.0;
      for (long long k = 0; k < K; ++k)
        s += static_cast<double>(A[i * K + k]) * static_cast<double>(B[k * N + j]);
      C[i * N + j] = s;
    }
}

// Finite values of mixed sign and magnitude (2^-20 .. 2^6), from an LCG.
std::vector<float> randomMatrix(long long count, unsigned seed) {
  std::vector<float> v(static_cast<size_t>(count));
  unsigned s = seed;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    const float mant = static_cast<float>(s >> 8) / 16777216.0f;  // [0, 1)
    x = std::ldexp(mant, static_cast<int>(s % 27) - 20) * ((s & 1u) ? -1.0f : 1.0f);
  }
  return v;
}

bool sameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

float poisonFloat() {
  float f;
  std::memcpy(&f, &kPoisonBits, sizeof f);
  return f;
}

}  // namespace

// ------------------------------------------------------------ tolerance rule

TEST(Tolerance, ScaledRtolMatchesSpecTable) {
  EXPECT_EQ(sci3(scaledRtol(kRtolTableF32, kMantissaF32, 256)), "1.000e-05");
  EXPECT_EQ(sci3(scaledRtol(kRtolTableF32, kMantissaF32, 1024)), "1.526e-05");
  EXPECT_EQ(sci3(scaledRtol(kRtolTableF32, kMantissaF32, 2048)), "2.158e-05");
  EXPECT_EQ(sci3(scaledRtol(kRtolTableF16, kMantissaF16, 256)), "6.250e-02");
  EXPECT_EQ(sci3(scaledRtol(kRtolTableF16, kMantissaF16, 1024)), "1.250e-01");
  EXPECT_EQ(sci3(scaledRtol(kRtolTableF16, kMantissaF16, 2048)), "1.768e-01");
  // Below the crossover the table entry is the floor.
  EXPECT_EQ(scaledRtol(kRtolTableF32, kMantissaF32, 1), kRtolTableF32);
  EXPECT_EQ(scaledRtol(kRtolTableF16, kMantissaF16, 1), kRtolTableF16);
}

// refMax, atol32 and atol16 of every case, computed the way main does (the
// fast reference over the generated inputs), printed as the lesson prints them.
TEST(Tolerance, CaseHeadersMatchSpecTable) {
  struct Row {
    int n;
    const char* refMax;
    const char* atol32;
    const char* atol16;
  };
  const Row rows[] = {{256, "6.6744", "6.674e-05", "4.172e-01"},
                      {1024, "8.6738", "1.324e-04", "1.084e+00"},
                      {2048, "16.9878", "3.666e-04", "3.003e+00"}};
  std::vector<float> b, aRows(static_cast<size_t>(kRefRows) * kMaxN);
  std::vector<double> ref;
  for (const Row& r : rows) {
    const long long count = static_cast<long long>(r.n) * r.n;
    b.resize(static_cast<size_t>(count));
    ref.resize(static_cast<size_t>(count));
    for (long long e = 0; e < count; ++e) b[e] = inputB(e);
    referenceGemm(r.n, b.data(), ref.data(), false, aRows);
    const double refMax = maxAbs(ref.data(), count);
    EXPECT_EQ(fixed4(refMax), r.refMax) << "n = " << r.n;
    EXPECT_EQ(sci3(makeTolerance(kRtolTableF32, kMantissaF32, r.n, refMax).atol),
              r.atol32) << "n = " << r.n;
    EXPECT_EQ(sci3(makeTolerance(kRtolTableF16, kMantissaF16, r.n, refMax).atol),
              r.atol16) << "n = " << r.n;
  }
}

// ------------------------------------------------------------ conversions

TEST(Conversions, SixDemosMatchSpec) {
  const std::vector<DemoLine> lines = conversionDemos();
  ASSERT_EQ(lines.size(), 6u);
  const char* expected[6][2] = {{"largest finite half", "65504.0"},
                                {"65520 to half is inf", "1"},
                                {"300000 in half", "inf (isinf 1)"},
                                {"300000 in bf16", "299008.0"},
                                {"1.0007 in half", "1.0009765625"},
                                {"1.0007 in bf16", "1.0000000000"}};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(lines[i].label, expected[i][0]);
    EXPECT_EQ(lines[i].value, expected[i][1]) << lines[i].label;
  }
}

// ------------------------------------------------------------ gate

TEST(Gate, ExactOutputPassesWithFractionZero) {
  const float got[3] = {1.0f, -2.0f, 0.0f};
  const double ref[3] = {1.0, -2.0, 0.0};
  GateResult g;
  gateChunk(g, got, ref, 0, 3, Tolerance{0.0, 0.0});  // even a zero bound
  EXPECT_FALSE(g.failed);
  EXPECT_EQ(g.maxErr, 0.0);
  EXPECT_EQ(g.maxFrac, 0.0);
  EXPECT_EQ(g.checked, 3);
  EXPECT_FALSE(neverWritten(g));
}

TEST(Gate, BoundIsInclusiveAndFractionIsErrOverBound) {
  const Tolerance tol{0.5, 0.5};  // bound = 0.5 + 0.5 * |ref|
  const double ref[2] = {1.0, 1.0};
  const float atBound[2] = {2.0f, 1.5f};  // err 1.0 = bound, err 0.5
  GateResult g;
  gateChunk(g, atBound, ref, 0, 2, tol);
  EXPECT_FALSE(g.failed);
  EXPECT_EQ(g.maxFrac, 1.0);
  EXPECT_EQ(g.maxErr, 1.0);

  const float over[2] = {1.5f, 2.25f};  // err 1.25 > 1.0 at index 1
  GateResult h;
  gateChunk(h, over, ref, 0, 2, tol);
  ASSERT_TRUE(h.failed);
  EXPECT_EQ(h.failIndex, 1);
  EXPECT_EQ(h.failGot, 2.25f);
  EXPECT_EQ(h.failRef, 1.0);
  EXPECT_EQ(h.failErr, 1.25);
  EXPECT_EQ(h.failBound, 1.0);
  EXPECT_EQ(h.failFrac, 1.25);
}

TEST(Gate, NanAndInfinityFail) {
  const double ref[1] = {1.0};
  const Tolerance wide{1e9, 1e9};  // no finite value could fail this
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity(), poisonFloat()};
  for (float v : bad) {
    GateResult g;
    gateChunk(g, &v, ref, 0, 1, wide);
    EXPECT_TRUE(g.failed) << v;
    EXPECT_EQ(g.failIndex, 0);
    EXPECT_FALSE(g.failFrac <= 1.0) << "a failing fraction must not read as a pass";
  }
}

TEST(Gate, FirstFailureIsKeptAcrossChunksWithItsFlatIndex) {
  const Tolerance tol{1e-6, 0.0};
  const double ref[4] = {1.0, 1.0, 1.0, 1.0};
  const float chunk1[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  const float chunk2[4] = {1.0f, 1.5f, 9.0f, 1.0f};
  GateResult g;
  gateChunk(g, chunk1, ref, 0, 4, tol);
  gateChunk(g, chunk2, ref, 4, 4, tol);
  ASSERT_TRUE(g.failed);
  EXPECT_EQ(g.failIndex, 5);  // the first, not the largest
  EXPECT_EQ(g.failGot, 1.5f);
  EXPECT_EQ(g.maxErr, 8.0);  // the largest error is still reported
  EXPECT_EQ(g.checked, 8);
}

TEST(Gate, AllPoisonMeansNeverWrittenButPartialPoisonFails) {
  const double ref[3] = {1.0, 2.0, 3.0};
  const Tolerance tol{0.1, 0.1};
  const float allPoison[3] = {poisonFloat(), poisonFloat(), poisonFloat()};
  GateResult g;
  gateChunk(g, allPoison, ref, 0, 3, tol);
  EXPECT_TRUE(neverWritten(g));
  EXPECT_TRUE(g.failed);

  const float partial[3] = {1.0f, poisonFloat(), 3.0f};  // one element skipped
  GateResult h;
  gateChunk(h, partial, ref, 0, 3, tol);
  EXPECT_FALSE(neverWritten(h));
  ASSERT_TRUE(h.failed);
  EXPECT_EQ(h.failIndex, 1);
}

// ------------------------------------------------------------ reference

TEST(CpuReference, MatchesNaiveLoopBitForBitOnOddSizes) {
  // Sizes off the 6 x 8 tile, the 256-step k block and the 1024-column B
  // block, including K = 0 and single rows/columns.
  const long long sizes[][3] = {{1, 1, 1},     {7, 5, 3},     {13, 17, 0},
                                {6, 8, 256},   {7, 9, 257},   {37, 41, 300},
                                {5, 1030, 70}, {100, 3, 513}, {1, 2049, 9}};
  unsigned seed = 1;
  for (const auto& s : sizes) {
    const long long M = s[0], N = s[1], K = s[2];
    const std::vector<float> A = randomMatrix(M * K, seed++);
    const std::vector<float> B = randomMatrix(K * N, seed++);
    std::vector<double> fast(static_cast<size_t>(M * N), 12345.0);  // garbage
    std::vector<double> naive(static_cast<size_t>(M * N));
    cpuReferenceGemm(A.data(), B.data(), fast.data(), M, N, K);
    naiveGemm(A.data(), B.data(), naive.data(), M, N, K);
    EXPECT_TRUE(sameBits(fast, naive)) << M << " x " << N << " x " << K;
  }
}

TEST(CpuReference, EmptyKGivesZerosAndEmptyMOrNTouchesNothing) {
  std::vector<double> c(12, 7.0);
  cpuReferenceGemm(nullptr, nullptr, c.data(), 3, 4, 0);
  for (double v : c) EXPECT_EQ(v, 0.0);
  std::vector<double> d(4, 7.0);
  const float x[4] = {1, 2, 3, 4};
  cpuReferenceGemm(x, x, d.data(), 0, 4, 1);
  cpuReferenceGemm(x, x, d.data(), 4, 0, 1);
  for (double v : d) EXPECT_EQ(v, 7.0);
}

TEST(CpuReference, RowBlockedReferenceMatchesWholeMatrix) {
  const int n = 300;  // two row blocks, the second partial
  const long long count = static_cast<long long>(n) * n;
  std::vector<float> A(count), B(count), aRows(static_cast<size_t>(kRefRows) * n);
  for (long long e = 0; e < count; ++e) {
    A[e] = inputA(e);
    B[e] = inputB(e);
  }
  std::vector<double> whole(count), blocked(count);
  cpuReferenceGemm(A.data(), B.data(), whole.data(), n, n, n);
  referenceGemm(n, B.data(), blocked.data(), false, aRows);
  EXPECT_TRUE(sameBits(whole, blocked));
  // The tight check's reference: A rounded to half, block by block.
  roundToHalfInPlace(A.data(), count);
  roundToHalfInPlace(B.data(), count);
  cpuReferenceGemm(A.data(), B.data(), whole.data(), n, n, n);
  referenceGemm(n, B.data(), blocked.data(), true, aRows);
  EXPECT_TRUE(sameBits(whole, blocked));
}

// ------------------------------------------------------------ inputs, reports

TEST(Inputs, PeriodicFormulas) {
  EXPECT_EQ(inputA(0), -48 * 0.013f);
  EXPECT_EQ(inputA(96), 48 * 0.013f);
  EXPECT_EQ(inputA(97), inputA(0));
  EXPECT_EQ(inputA(48), 0.0f);
  EXPECT_EQ(inputB(0), -44 * 0.017f);
  EXPECT_EQ(inputB(88), 44 * 0.017f);
  EXPECT_EQ(inputB(89 * 5 + 3), inputB(3));
}

TEST(FormatReport, FloorsAndFp4ByComputeCapability) {
  EXPECT_EQ(formatSupport(75, 7, 5), "yes");
  EXPECT_EQ(formatSupport(80, 7, 5), "no on this card");
  EXPECT_EQ(formatSupport(89, 8, 6), "no on this card");
  EXPECT_EQ(formatSupport(89, 8, 9), "yes");
  EXPECT_EQ(formatSupport(89, 9, 0), "yes");
  EXPECT_EQ(fp4Support(7, 5), "no on this card");
  EXPECT_EQ(fp4Support(9, 0), "no on this card");
  EXPECT_EQ(fp4Support(10, 0), "yes, through tcgen05 (needs an sm_100a build)");
  EXPECT_EQ(fp4Support(10, 3), "yes, through tcgen05 (needs an sm_103a build)");
  EXPECT_EQ(fp4Support(12, 0),
            "yes, through block-scaled mma (needs an sm_120a build)");
  EXPECT_EQ(fp4Support(12, 1),
            "yes, through block-scaled mma (needs an sm_121a build)");
}

TEST(Footprint, L2VerdictPerCard) {
  const double mib = 1024.0 * 1024.0;
  // T4: 4 MiB of L2. 256: 0.75 / 0.5 MiB; 1024: 12 / 8 MiB.
  EXPECT_STREQ(l2Verdict(0.75 * mib, 0.5 * mib, 4 * mib), "both fit in");
  EXPECT_STREQ(l2Verdict(12 * mib, 8 * mib, 4 * mib), "neither fits in");
  EXPECT_STREQ(l2Verdict(12 * mib, 8 * mib, 10 * mib),
               "only the f16 footprint fits in");
  // H200: 60 MiB; the 2048 case needs 48 / 32 MiB.
  EXPECT_STREQ(l2Verdict(48 * mib, 32 * mib, 60 * mib), "both fit in");
}

// ------------------------------------------------------------ K = 256 digits
// A host emulation of each kernel's arithmetic order, gated by the lesson's own
// functions, reproduces the spec's K = 256 row: nvcc contracts the float
// kernels' acc += a*b into fmaf over ascending k, and __hfma rounds the exact
// a*b + acc once to half (double holds that sum exactly here).
TEST(Digits, EmulatedKernelsAtK256MatchSpec) {
  const int n = 256;
  const long long count = static_cast<long long>(n) * n;
  std::vector<float> A(count), B(count), Ah(count), Bh(count);
  for (long long e = 0; e < count; ++e) {
    A[e] = inputA(e);
    B[e] = inputB(e);
    Ah[e] = __half2float(__float2half(A[e]));
    Bh[e] = __half2float(__float2half(B[e]));
  }
  std::vector<float> out[kNumKernels];
  for (std::vector<float>& o : out) o.resize(count);
  for (long long i = 0; i < n; ++i)
    for (long long j = 0; j < n; ++j) {
      float f32 = 0.0f, f16f32 = 0.0f;
      __half f16 = __float2half(0.0f);
      for (long long k = 0; k < n; ++k) {
        f32 = std::fmaf(A[i * n + k], B[k * n + j], f32);
        f16f32 = std::fmaf(Ah[i * n + k], Bh[k * n + j], f16f32);
        f16 = __double2half(static_cast<double>(Ah[i * n + k]) * Bh[k * n + j] +
                            static_cast<double>(__half2float(f16)));
      }
      out[kF32][i * n + j] = f32;
      out[kF16F32][i * n + j] = f16f32;
      out[kF16F16][i * n + j] = __half2float(f16);
    }
  std::vector<double> ref(count);
  cpuReferenceGemm(A.data(), B.data(), ref.data(), n, n, n);
  const double refMax = maxAbs(ref.data(), count);
  const Tolerance tol32 = makeTolerance(kRtolTableF32, kMantissaF32, n, refMax);
  const Tolerance tol16 = makeTolerance(kRtolTableF16, kMantissaF16, n, refMax);
  const Tolerance* tols[kNumKernels] = {&tol32, &tol16, &tol16};
  const char* expectErr[kNumKernels] = {"4.582e-06", "2.595e-03", "2.950e-02"};
  const char* expectFrac[kNumKernels] = {"0.0348", "0.0036", "0.0368"};
  GateResult g[kNumKernels];
  for (int k = 0; k < kNumKernels; ++k) {
    gateChunk(g[k], out[k].data(), ref.data(), 0, count, *tols[k]);
    EXPECT_FALSE(g[k].failed) << kKernelNames[k];
    EXPECT_EQ(sci3(g[k].maxErr), expectErr[k]) << kKernelNames[k];
    EXPECT_EQ(fixed4(g[k].maxFrac), expectFrac[k]) << kKernelNames[k];
  }
  char ratio[16];
  std::snprintf(ratio, sizeof ratio, "%.3g", g[kF16F16].maxErr / g[kF16F32].maxErr);
  EXPECT_STREQ(ratio, "11.4");

  // The tight check: the same kernel against a reference of the rounded inputs.
  cpuReferenceGemm(Ah.data(), Bh.data(), ref.data(), n, n, n);
  const Tolerance tight =
      makeTolerance(kRtolTableF32, kMantissaF32, n, maxAbs(ref.data(), count));
  GateResult t;
  gateChunk(t, out[kF16F32].data(), ref.data(), 0, count, tight);
  EXPECT_FALSE(t.failed);
  EXPECT_EQ(sci3(t.maxErr), "4.867e-06");
  EXPECT_EQ(fixed4(t.maxFrac), "0.0419");
  // ...and it catches what the FP16 gate lets through: one output moved by
  // 1e-3 (a tenth of a percent of max |ref|) passes FP16 and fails tight.
  std::vector<float> shifted = out[kF16F32];
  shifted[1234] += 1e-3f;
  GateResult wide, tightShifted;
  cpuReferenceGemm(A.data(), B.data(), ref.data(), n, n, n);
  gateChunk(wide, shifted.data(), ref.data(), 0, count, tol16);
  cpuReferenceGemm(Ah.data(), Bh.data(), ref.data(), n, n, n);
  gateChunk(tightShifted, shifted.data(), ref.data(), 0, count, tight);
  EXPECT_FALSE(wide.failed);
  ASSERT_TRUE(tightShifted.failed);
  EXPECT_EQ(tightShifted.failIndex, 1234);
}
