// SPDX-License-Identifier: MIT
// Host tests of lessons/matmul_fp16.cu: the tolerance rule against the spec
// table, the conversion demos, the gate (NaN, infinity and poison must fail),
// the [device] lines for other cards, and the digits of the 100 and 256 cases
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

float poisonFloat() {
  float f;
  std::memcpy(&f, &kPoisonBits, sizeof f);
  return f;
}

// The reference of the lesson's inputs, row by row on the CPU (the same bits
// as referenceGemm, which needs a GPU).
std::vector<double> cpuReference(const std::vector<float>& A, const std::vector<float>& B,
                                 int n) {
  std::vector<double> ref(static_cast<size_t>(n) * n);
  for (int i = 0; i < n; ++i) referenceRowCpu(A.data(), B.data(), ref.data() + 1LL * i * n, i, n, n);
  return ref;
}

struct Inputs {
  std::vector<float> A, B, Ah, Bh;
};
Inputs makeInputs(int n) {
  const long long count = 1LL * n * n;
  Inputs in{std::vector<float>(count), std::vector<float>(count), std::vector<float>(count),
            std::vector<float>(count)};
  for (long long e = 0; e < count; ++e) {
    in.A[e] = inputA(e);
    in.B[e] = inputB(e);
    in.Ah[e] = halfRounded(in.A[e]);
    in.Bh[e] = halfRounded(in.B[e]);
  }
  return in;
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
  for (long long K : {1LL, 100LL, 412LL, 413LL, 1024LL, 2048LL, 1LL << 24})  // the course's rule
    EXPECT_EQ(scaledRtol(kRtolTableF32, kMantissaF32, K), rtolForK(K)) << K;
  EXPECT_EQ(scaledRtol(kRtolTableF16, kMantissaF16, 1), kRtolTableF16);
  // The tight check's "3906 times tighter at K = 100, 8192 times at 2048".
  EXPECT_EQ(static_cast<int>(scaledRtol(kRtolTableF16, kMantissaF16, 100) /
                             scaledRtol(kRtolTableF32, kMantissaF32, 100)), 3906);
  EXPECT_NEAR(scaledRtol(kRtolTableF16, kMantissaF16, 2048) /
                  scaledRtol(kRtolTableF32, kMantissaF32, 2048), 8192.0, 1e-6);
}

// Every gate line prints the rule it applies from the constants scaledRtol
// uses, so a changed floor, slack or mantissa width changes the output.
TEST(Tolerance, GateLinesPrintTheRuleFromTheConstants) {
  EXPECT_EQ(ruleText(kRtolTableF32, kMantissaF32),
            "rtol = max(1e-05, 4*2^-23*sqrt(K)), atol = rtol*max|ref|");
  EXPECT_EQ(ruleText(kRtolTableF16, kMantissaF16),
            "rtol = max(0.01, 4*2^-10*sqrt(K)), atol = rtol*max|ref|");
  testing::internal::CaptureStdout();
  printCaseHeader(100, 3.4047, makeTolerance(kRtolTableF32, kMantissaF32, 100, 3.4047),
                  makeTolerance(kRtolTableF16, kMantissaF16, 100, 3.4047));
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("  FP32 gate: atol 3.405e-05, rtol 1.000e-05  (rtol = max(1e-05, "
                     "4*2^-23*sqrt(K)), atol = rtol*max|ref|)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("  FP16 gate: atol 1.330e-01, rtol 3.906e-02  (rtol = max(0.01, "
                     "4*2^-10*sqrt(K)), atol = rtol*max|ref|)\n"),
            std::string::npos)
      << out;
}

// refMax, atol32 and atol16 of the cases a host test can afford (2048 takes a
// CPU minute), printed as the lesson prints them.
TEST(Tolerance, CaseHeadersMatchSpecTable) {
  struct Row {
    int n;
    const char* refMax;
    const char* atol32;
    const char* atol16;
  };
  const Row rows[] = {{256, "6.6744", "6.674e-05", "4.172e-01"},
                      {1024, "8.6738", "1.324e-04", "1.084e+00"}};
  for (const Row& r : rows) {
    const Inputs in = makeInputs(r.n);
    const std::vector<double> ref = cpuReference(in.A, in.B, r.n);
    const double refMax = maxAbs(ref.data(), 1LL * r.n * r.n);
    EXPECT_EQ(fixed4(refMax), r.refMax) << "n = " << r.n;
    EXPECT_EQ(sci3(makeTolerance(kRtolTableF32, kMantissaF32, r.n, refMax).atol), r.atol32);
    EXPECT_EQ(sci3(makeTolerance(kRtolTableF16, kMantissaF16, r.n, refMax).atol), r.atol16);
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
  EXPECT_FALSE(g.failed());
  EXPECT_EQ(g.check.max_abs_err, 0.0);
  EXPECT_EQ(g.check.worst_score, 0.0);
  EXPECT_EQ(g.check.checked, 3);
  EXPECT_EQ(g.poisoned, 0);
}

TEST(Gate, BoundIsInclusiveAndFractionIsErrOverBound) {
  const Tolerance tol{0.5, 0.5};  // bound = 0.5 + 0.5 * |ref|
  const double ref[2] = {1.0, 1.0};
  const float atBound[2] = {2.0f, 1.5f};  // err 1.0 = bound, err 0.5
  GateResult g;
  gateChunk(g, atBound, ref, 0, 2, tol);
  EXPECT_FALSE(g.failed());
  EXPECT_EQ(g.check.worst_score, 1.0);
  EXPECT_EQ(g.check.max_abs_err, 1.0);

  const float over[2] = {1.5f, 2.25f};  // err 1.25 > 1.0 at index 1
  GateResult h;
  gateChunk(h, over, ref, 0, 2, tol);
  ASSERT_TRUE(h.failed());
  EXPECT_EQ(h.check.first_bad, 1);
  EXPECT_EQ(h.check.first_got, 2.25);
  EXPECT_EQ(h.check.first_got - h.check.first_ref, 1.25);
  EXPECT_EQ(h.check.first_tol, 1.0);
  EXPECT_EQ(failFraction(h), 1.25);
}

TEST(Gate, NanInfinityAndPoisonFail) {
  const double ref[1] = {1.0};
  const Tolerance wide{1e9, 1e9};  // no finite value could fail this
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity(), poisonFloat()};
  for (float v : bad) {
    GateResult g;
    gateChunk(g, &v, ref, 0, 1, wide);
    EXPECT_TRUE(g.failed()) << v;
    EXPECT_FALSE(failFraction(g) <= 1.0) << "a failing fraction must not read as a pass";
  }
  EXPECT_TRUE(isPoison(poisonFloat()));
  EXPECT_FALSE(isPoison(std::numeric_limits<float>::quiet_NaN()));
  // Half poison (0xFFFF) is a NaN too: a read past an input's end poisons a sum.
  __half_raw raw;
  raw.x = 0xFFFFu;
  EXPECT_TRUE(std::isnan(__half2float(__half(raw))));
}

TEST(Gate, FirstFailureIsKeptAcrossChunksAndAllPoisonIsCounted) {
  const Tolerance tol{1e-6, 0.0};
  const double ref[4] = {1.0, 1.0, 1.0, 1.0};
  const float chunk1[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  const float chunk2[4] = {1.0f, 1.5f, 9.0f, 1.0f};
  GateResult g;
  gateChunk(g, chunk1, ref, 0, 4, tol);
  gateChunk(g, chunk2, ref, 4, 4, tol);
  ASSERT_TRUE(g.failed());
  EXPECT_EQ(g.check.first_bad, 5);  // the first, not the largest
  EXPECT_EQ(g.check.max_abs_err, 8.0);   // the largest error is still reported
  const float allPoison[3] = {poisonFloat(), poisonFloat(), poisonFloat()};
  GateResult p;
  gateChunk(p, allPoison, ref, 0, 3, tol);
  EXPECT_TRUE(p.failed());
  EXPECT_EQ(p.poisoned, p.check.checked);  // the failure line then says "wrote no element"
}

// ------------------------------------------------------------ inputs, device lines

// The comment on the inputs: with Day 66's half-integers, (e mod 97) * 0.5 in
// A and B, both float-accumulator kernels would be exact, and the half
// accumulator would round at K = 100 and overflow to infinity from K = 256 on.
// Checked on the rows the exact check uses, with the lesson's own emulation.
TEST(Inputs, Day66HalfIntegersWouldProveNothing) {
  for (int n : kCases) {
    const long long count = 1LL * n * n;
    std::vector<float> x(static_cast<size_t>(count));
    for (long long e = 0; e < count; ++e) x[e] = static_cast<float>(e % 97) * 0.5f;
    for (long long e = 0; e < count; ++e) ASSERT_EQ(halfRounded(x[e]), x[e]);  // exact in half
    std::vector<float> wide(n), narrow(n);
    std::vector<double> ref(n);
    bool halfRounds = false;
    for (int i : {0, n / 2, n - 1}) {
      referenceRowCpu(x.data(), x.data(), ref.data(), i, n, n);
      emulateHalfKernelsRow(x.data(), x.data(), n, i, wide.data(), narrow.data());
      for (int j = 0; j < n; ++j) {
        float f32 = 0.0f;  // the f32 kernel's arithmetic: fmaf, k ascending
        for (int k = 0; k < n; ++k) f32 = std::fmaf(x[1LL * i * n + k], x[1LL * k * n + j], f32);
        ASSERT_EQ(static_cast<double>(f32), ref[j]) << "f32 kernel, n=" << n;
        ASSERT_EQ(static_cast<double>(wide[j]), ref[j]) << "f16 storage, f32 acc, n=" << n;
        if (n >= 256) {
          ASSERT_TRUE(std::isinf(narrow[j])) << "n=" << n << " row " << i << " col " << j;
        } else {
          ASSERT_TRUE(std::isfinite(narrow[j]));
          halfRounds = halfRounds || static_cast<double>(narrow[j]) != ref[j];
        }
      }
    }
    if (n < 256) EXPECT_TRUE(halfRounds) << "the half accumulator rounds at n=" << n;
  }
}

// The page and the inputs comment: at K = 100 some of Day 66's sums already pass 65504 (the
// largest, 69,024.5), so a half accumulator turns them into infinity there.
TEST(Inputs, Day66HalfIntegersOverflowHalfAlreadyAtK100) {
  const int n = 100;
  std::vector<float> x(static_cast<size_t>(n) * n);
  for (int e = 0; e < n * n; ++e) x[size_t(e)] = static_cast<float>(e % 97) * 0.5f;
  std::vector<float> wide(n), narrow(n);
  std::vector<double> ref(n);
  double largest = 0.0;
  bool infinite = false;
  for (int i = 0; i < n; ++i) {
    referenceRowCpu(x.data(), x.data(), ref.data(), i, n, n);
    emulateHalfKernelsRow(x.data(), x.data(), n, i, wide.data(), narrow.data());
    for (int j = 0; j < n; ++j) {
      largest = std::max(largest, ref[size_t(j)]);
      infinite = infinite || std::isinf(narrow[size_t(j)]);
    }
  }
  EXPECT_EQ(largest, 69024.5);
  EXPECT_TRUE(infinite) << "some half-accumulated sum overflows at K = 100";
}

TEST(Inputs, PeriodicFormulas) {
  EXPECT_EQ(inputA(0), -48 * 0.013f);
  EXPECT_EQ(inputA(96), 48 * 0.013f);
  EXPECT_EQ(inputA(97), inputA(0));
  EXPECT_EQ(inputA(48), 0.0f);
  EXPECT_EQ(inputB(0), -44 * 0.017f);
  EXPECT_EQ(inputB(88), 44 * 0.017f);
  EXPECT_EQ(inputB(89 * 5 + 3), inputB(3));
}

TEST(DeviceLines, FormatsAndL2ForOtherCards) {
  EXPECT_EQ(fp4Support(7), "no");
  EXPECT_EQ(fp4Support(9), "no");
  EXPECT_EQ(fp4Support(10), "yes (not from an sm_75 build)");
  EXPECT_EQ(fp4Support(12), "yes (not from an sm_75 build)");
  EXPECT_EQ(fp4Support(13), "unknown to this program");
  cudaDeviceProp t4{};
  t4.multiProcessorCount = 40;
  t4.l2CacheSize = 4 << 20;
  t4.sharedMemPerBlock = 48 << 10;
  t4.major = 7;
  t4.minor = 5;
  testing::internal::CaptureStdout();
  printDeviceFacts(t4);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out,
            "[device] 40 SMs, 4.0 MiB L2 (the f32 footprint of 2 of the 4 cases fits in it), "
            "48 KiB shared memory per block\n"
            "[device] tensor-core formats at compute capability 7.5 (these kernels use none): "
            "FP16 yes, BF16 no, TF32 no, FP8 no, FP4 no\n");
}

// ------------------------------------------------------------ digits
// A host emulation of each kernel's arithmetic order, gated by the lesson's own
// functions: nvcc contracts the f32 kernel's acc += a*b into fmaf over
// ascending k; the half kernels are emulated by the lesson's own
// emulateHalfKernelsRow (the exact check). It reproduces the spec's K = 256
// row and gives the 100 case's digits.
struct CaseDigits {
  int n;
  const char* refMax;
  const char* err[kNumKernels];
  const char* frac[kNumKernels];
  const char* ratio;
  const char* tightErr;
  const char* tightFrac;
};

void checkCaseDigits(const CaseDigits& want) {
  const int n = want.n;
  const long long count = 1LL * n * n;
  const Inputs in = makeInputs(n);
  std::vector<float> out[kNumKernels];
  for (std::vector<float>& o : out) o.resize(count);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      float f32 = 0.0f;
      for (int k = 0; k < n; ++k) f32 = std::fmaf(in.A[1LL * i * n + k], in.B[1LL * k * n + j], f32);
      out[kF32][1LL * i * n + j] = f32;
    }
    emulateHalfKernelsRow(in.Ah.data(), in.Bh.data(), n, i, out[kF16F32].data() + 1LL * i * n,
                          out[kF16F16].data() + 1LL * i * n);
  }
  const std::vector<double> ref = cpuReference(in.A, in.B, n);
  const double refMax = maxAbs(ref.data(), count);
  EXPECT_EQ(fixed4(refMax), want.refMax);
  const Tolerance tol32 = makeTolerance(kRtolTableF32, kMantissaF32, n, refMax);
  const Tolerance tol16 = makeTolerance(kRtolTableF16, kMantissaF16, n, refMax);
  const Tolerance* tols[kNumKernels] = {&tol32, &tol16, &tol16};
  GateResult g[kNumKernels];
  for (int k = 0; k < kNumKernels; ++k) {
    gateChunk(g[k], out[k].data(), ref.data(), 0, count, *tols[k]);
    EXPECT_FALSE(g[k].failed()) << kKernelNames[k];
    EXPECT_EQ(sci3(g[k].check.max_abs_err), want.err[k]) << kKernelNames[k] << " n=" << n;
    EXPECT_EQ(fixed4(g[k].check.worst_score), want.frac[k]) << kKernelNames[k] << " n=" << n;
  }
  char ratio[16];
  std::snprintf(ratio, sizeof ratio, "%.3g", g[kF16F16].check.max_abs_err / g[kF16F32].check.max_abs_err);
  EXPECT_STREQ(ratio, want.ratio);
  const std::vector<double> refTight = cpuReference(in.Ah, in.Bh, n);
  const Tolerance tight = makeTolerance(kRtolTableF32, kMantissaF32, n, maxAbs(refTight.data(), count));
  GateResult t;
  gateChunk(t, out[kF16F32].data(), refTight.data(), 0, count, tight);
  EXPECT_FALSE(t.failed());
  EXPECT_EQ(sci3(t.check.max_abs_err), want.tightErr);
  EXPECT_EQ(fixed4(t.check.worst_score), want.tightFrac);
}

TEST(Digits, EmulatedKernelsAtK256MatchSpec) {
  checkCaseDigits({256, "6.6744", {"4.582e-06", "2.595e-03", "2.950e-02"},
                   {"0.0348", "0.0036", "0.0368"}, "11.4", "4.867e-06", "0.0419"});
}

TEST(Digits, EmulatedKernelsAtK100TheCaseThatReachesTheGuards) {
  checkCaseDigits({100, "3.4047", {"1.368e-06", "1.307e-03", "1.034e-02"},
                   {"0.0234", "0.0070", "0.0452"}, "7.91", "1.084e-06", "0.0194"});
}

// The exact check compares bits: one output moved by one unit in the last
// place is a difference, where every tolerance gate would pass it.
TEST(ExactCheck, EmulationIsDeterministicAndSensitiveToOneUlp) {
  const Inputs in = makeInputs(100);
  std::vector<float> a(100), b(100), c(100), d(100);
  emulateHalfKernelsRow(in.Ah.data(), in.Bh.data(), 100, 99, a.data(), b.data());
  emulateHalfKernelsRow(in.Ah.data(), in.Bh.data(), 100, 99, c.data(), d.data());
  EXPECT_EQ(std::memcmp(a.data(), c.data(), sizeof(float) * 100), 0);
  EXPECT_EQ(std::memcmp(b.data(), d.data(), sizeof(float) * 100), 0);
  c[7] = std::nextafter(c[7], 1e9f);
  EXPECT_NE(std::memcmp(a.data(), c.data(), sizeof(float) * 100), 0);
  // The half accumulator's result is a half value; the float one mostly is not.
  for (float v : b) EXPECT_EQ(halfRounded(v), v);
}

// "The same order of k" is a rule the output can show: a kernel that runs p
// descending inside each tile (the catalogue's wrong attempts p-descending)
// differs from the emulation in the rows the exact check compares, in the
// first case already, for both half kernels.
TEST(ExactCheck, AnotherOrderOfKDiffersInTheCheckedRowsOfTheFirstCase) {
  const int n = kCases[0];
  const Inputs in = makeInputs(n);
  bool wideDiffers = false, narrowDiffers = false;
  std::vector<float> wantWide(n), wantNarrow(n);
  for (int i : {0, n / 2, n - 1}) {
    emulateHalfKernelsRow(in.Ah.data(), in.Bh.data(), n, i, wantWide.data(), wantNarrow.data());
    for (int j = 0; j < n; ++j) {
      float wide = 0.0f;
      __half narrow = __float2half(0.0f);
      for (int t = 0; t < (n + kTile - 1) / kTile; ++t) {
        for (int q = kTile - 1; q >= 0; --q) {
          const int k = t * kTile + q;
          if (k >= n) continue;  // the kernels add zeros there, which changes nothing
          const float a = in.Ah[1LL * i * n + k], b = in.Bh[1LL * k * n + j];
          wide += a * b;
          narrow = __double2half(static_cast<double>(a) * b + __half2float(narrow));
        }
      }
      wideDiffers = wideDiffers || std::memcmp(&wide, &wantWide[j], sizeof wide) != 0;
      const float nf = __half2float(narrow);
      narrowDiffers = narrowDiffers || std::memcmp(&nf, &wantNarrow[j], sizeof nf) != 0;
    }
  }
  EXPECT_TRUE(wideDiffers);
  EXPECT_TRUE(narrowDiffers);
}
