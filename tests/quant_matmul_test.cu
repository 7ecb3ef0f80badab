// Host-side tests of the Day 98 lesson's functions (no GPU needed): the
// inputs (the hash generator's independence, the planted ties and all-zero
// column), the quantizers and their rounding rule, the asymmetric quantizer
// on a tensor bounded away from zero, the audits that judge the two exercises
// (and the wrong answers they must reject), 2:4 pruning, the host integer
// reference and its independent rescale, the toolkit's FP8 and FP4
// conversions, the MX and NVFP4 helpers, the censuses, and the census lines
// of the recorded transcript, recomputed here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#define main lesson_main
#include "../lessons/quant_matmul.cu"
#undef main

namespace {

// A small LCG for the tests' own random values (the lesson's inputs are a
// hash of the index; see makeInputs).
struct TestLcg {
  std::uint32_t state;
  float unit() {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / 16777216.0f;
  }
};

std::string sci3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

// ------------------------------------------------------------ inputs

TEST(QuantMatmulInputs, HashDrawsAreExactUnitFloatsAndStreamsDiffer) {
  int same = 0;
  for (std::uint32_t e = 0; e < 100000; ++e) {
    const float a = unitAt(0, e), b = unitAt(1, e);
    ASSERT_GE(a, 0.0f);
    ASSERT_LT(a, 1.0f);
    ASSERT_EQ(a * 16777216.0f, std::floor(a * 16777216.0f)) << "24 bits, exact in float";
    same += (a == b);
  }
  EXPECT_LT(same, 5);  // the two streams are not the same draws
}

TEST(QuantMatmulInputs, PlantedAllZeroColumnAndTies) {
  for (int n : {kCases[0], kCases[1]}) {
    std::vector<float> A(static_cast<size_t>(n) * n), B(A.size()), colMax(n), scales(n);
    std::vector<std::int8_t> codes(A.size());
    makeInputs(n, A.data(), B.data());
    columnMaxAbs(B.data(), n, n, colMax.data());
    EXPECT_EQ(colMax[kZeroColumn], 0.0f) << n;
    const float step = kTieStep;
    EXPECT_EQ(colMax[kTieColumn], 127.0f * step) << "row 0's planted value is the largest";
    EXPECT_EQ(symmetricScale(colMax[kTieColumn]), step) << "the scale is exactly 15 * 2^-10";
    for (int t = 0; t < kNumTies; ++t)  // exactly halfway, also after the float division
      EXPECT_EQ(B[static_cast<size_t>(kTieFirstRow + t) * n + kTieColumn] / step, kTieSteps[t]);
    quantizeColumns(B.data(), n, n, colMax.data(), scales.data(), codes.data());
    EXPECT_EQ(scales[kZeroColumn], 1.0f);
    const int even[kNumTies] = {0, 2, 2, 0, -2, -2};
    for (int t = 0; t < kNumTies; ++t)
      EXPECT_EQ(codes[static_cast<size_t>(kTieFirstRow + t) * n + kTieColumn], even[t]) << t;
    // Every column but the zero one has a nonzero, distinct-from-its-neighbour scale.
    for (int c = 0; c + 1 < n; ++c)
      if (c != kZeroColumn && c + 1 != kZeroColumn) EXPECT_NE(scales[c], scales[c + 1]) << c;
  }
}

// The claim the hash generator is there for: B's rounding errors, summed
// down each column in steps, add like independent ones: rms sqrt(K/12) (the
// rms over n columns varies by about 1/sqrt(2n) of itself; 10 % is over four
// of those at n = 1024), and no column's sum beyond 4.5 times that. An LCG
// stream read down the columns fails the second.
TEST(QuantMatmulInputs, ColumnErrorSumsAddLikeIndependentErrors) {
  const int n = kCases[1];
  CaseData cd;
  cd.n = n;
  HostBuffers h;
  h.a.resize(static_cast<size_t>(n) * n);
  h.b.resize(h.a.size());
  std::vector<std::int8_t> codes(h.a.size());
  makeInputs(n, h.a.data(), h.b.data());
  cd.colMax.resize(n);
  cd.bScales.resize(n);
  columnMaxAbs(h.b.data(), n, n, cd.colMax.data());
  quantizeColumns(h.b.data(), n, n, cd.colMax.data(), cd.bScales.data(), codes.data());
  const ColumnErrorSums sums =
      columnErrorSums(h.b.data(), codes.data(), cd.bScales.data(), cd.colMax.data(), n);
  const double independent = std::sqrt(n / 12.0);
  EXPECT_NEAR(sums.rms / independent, 1.0, 0.10) << sums.rms << " against " << independent;
  EXPECT_LT(sums.largest / independent, 4.5) << sums.largest;

  // The same statistic on an LCG stream (the lesson's former generator):
  // its columns, every n-th draw with n a power of two, pile up one way.
  TestLcg rng{kSeed};
  for (size_t e = 0; e < h.a.size(); ++e) rng.unit();  // A came first
  for (int p = 0; p < n; ++p)
    for (int c = 0; c < n; ++c) {
      const long long e = static_cast<long long>(p) * n + c;
      h.b[e] = (2.0f * rng.unit() - 1.0f) * std::ldexp(1.0f, -(c % kGainPeriod)) *
               (e % kOutlierPeriod == 0 ? kOutlierGain : 1.0f);
    }
  columnMaxAbs(h.b.data(), n, n, cd.colMax.data());
  quantizeColumns(h.b.data(), n, n, cd.colMax.data(), cd.bScales.data(), codes.data());
  EXPECT_GT(columnErrorSums(h.b.data(), codes.data(), cd.bScales.data(), cd.colMax.data(), n)
                    .largest / independent, 8.0);
}

TEST(QuantMatmulInputs, ColumnErrorSumRmsByHand) {
  // 2 x 2: column 0 (scale 1) holds 0.25 and 0.25: errors -0.25 each, sum
  // -0.5; column 1 is all zero and left out. rms over 1 column: 0.5.
  const float colMax[2] = {127.0f, 0.0f}, scales[2] = {1.0f, 1.0f};
  const float b[4] = {0.25f, 0.0f, 0.25f, 0.0f};
  const std::int8_t codes[4] = {0, 0, 0, 0};
  EXPECT_DOUBLE_EQ(columnErrorSums(b, codes, scales, colMax, 2).rms, 0.5);
  EXPECT_DOUBLE_EQ(columnErrorSums(b, codes, scales, colMax, 2).largest, 0.5);
}

// ------------------------------------------------------------ rounding rule

TEST(QuantMatmulRounding, NearestTiesToEven) {
  EXPECT_EQ(roundToInt8(2.5f), 2);
  EXPECT_EQ(roundToInt8(3.5f), 4);
  EXPECT_EQ(roundToInt8(-2.5f), -2);
  EXPECT_EQ(roundToInt8(0.49f), 0);
  EXPECT_EQ(roundToInt8(-0.51f), -1);
  EXPECT_EQ(roundToInt8(126.6f), 127);
}

TEST(QuantMatmulRounding, ClampsInsteadOfWrapping) {
  // 127.5 rounds (ties to even) to 128: it must clamp to 127, never wrap to -128.
  EXPECT_EQ(roundToInt8(127.5f), 127);
  EXPECT_EQ(roundToInt8(128.0f), 127);
  EXPECT_EQ(roundToInt8(1e9f), 127);
  EXPECT_EQ(roundToInt8(-128.5f), -128);  // ties to even: -128, in range
  EXPECT_EQ(roundToInt8(-129.0f), -128);
  EXPECT_EQ(roundToInt8(-1e9f), -128);
  // Through the quantizer: a value just past amax rounds to 128 and clamps.
  const float scale = symmetricScale(1.0f);
  const float x[3] = {1.0f, 1.004f, -1.004f};  // 1.004 * 127 = 127.508
  std::int8_t q[3];
  quantizeSymmetric(x, 3, scale, q);
  EXPECT_EQ(q[0], 127);
  EXPECT_EQ(q[1], 127);   // rounds to 128: clamped
  EXPECT_EQ(q[2], -128);  // rounds to -128: in range, kept
}

// ------------------------------------------------------------ quantizers

TEST(QuantMatmulQuantizers, SymmetricScaleAndCodes) {
  EXPECT_EQ(symmetricScale(0.0f), 1.0f);  // an all-zero tensor
  EXPECT_EQ(symmetricScale(127.0f), 1.0f);
  const float x[5] = {0.0f, 1.0f, -1.0f, 0.25f, -0.75f};
  std::int8_t q[5];
  const float s = symmetricScale(1.0f);
  quantizeSymmetric(x, 5, s, q);
  EXPECT_EQ(q[0], 0);
  EXPECT_EQ(q[1], 127);
  EXPECT_EQ(q[2], -127);
  EXPECT_EQ(q[3], 32);   // 31.75
  EXPECT_EQ(q[4], -95);  // -95.25
}

TEST(QuantMatmulQuantizers, PerColumnScalesCodesAndSums) {
  // B is 3 x 2: column 0 spans 4, column 1 spans 0.5 (8x quieter).
  const float B[6] = {4.0f, 0.5f, -2.2f, -0.3f, 1.0f, 0.0f};
  float colMax[2];
  columnMaxAbs(B, 3, 2, colMax);
  EXPECT_EQ(colMax[0], 4.0f);
  EXPECT_EQ(colMax[1], 0.5f);
  float scales[2];
  std::int8_t q[6];
  quantizeColumns(B, 3, 2, colMax, scales, q);
  EXPECT_EQ(scales[0], 4.0f / 127.0f);
  EXPECT_EQ(scales[1], 0.5f / 127.0f);
  // -69.85 -> -70, -76.2 -> -76, 31.75 -> 32
  const std::int8_t want[6] = {127, 127, -70, -76, 32, 0};
  for (int e = 0; e < 6; ++e) EXPECT_EQ(q[e], want[e]) << "element " << e;
  std::int32_t sums[2];
  columnCodeSums(q, 3, 2, sums);
  EXPECT_EQ(sums[0], 127 - 70 + 32);
  EXPECT_EQ(sums[1], 127 - 76 + 0);
  // An all-zero column gets scale 1 and codes 0, not a division by zero.
  const float Z[2] = {0.0f, 0.0f};
  float zMax, zScale;
  std::int8_t zq[2];
  columnMaxAbs(Z, 2, 1, &zMax);
  quantizeColumns(Z, 2, 1, &zMax, &zScale, zq);
  EXPECT_EQ(zScale, 1.0f);
  EXPECT_EQ(zq[0], 0);
  EXPECT_EQ(zq[1], 0);
}

// The asymmetric quantizer must stay in range for any tensor: its range is
// widened to include 0 and its zero point clamped, so z is a valid int8 pad
// code and no code clamps; the round trip is within half a step.
void expectAsymmetricSafe(const std::vector<float>& x, const char* what) {
  const AsymmetricParams p = asymmetricParams(x.data(), static_cast<long long>(x.size()));
  EXPECT_GE(p.zeroPoint, kInt8Min) << what;
  EXPECT_LE(p.zeroPoint, kInt8Max) << what;
  std::vector<std::int8_t> q(x.size());
  quantizeAsymmetric(x.data(), static_cast<long long>(x.size()), p, q.data());
  for (size_t e = 0; e < x.size(); ++e) {
    const float unclamped = x[e] / p.scale + static_cast<float>(p.zeroPoint);
    EXPECT_LE(std::fabs(unclamped - std::rint(unclamped)), 0.5f) << what;
    EXPECT_GE(unclamped, kInt8Min - 0.5f) << what << ": element " << e << " would clamp";
    EXPECT_LE(unclamped, kInt8Max + 0.5f) << what << ": element " << e << " would clamp";
    const double rebuilt = (static_cast<double>(q[e]) - p.zeroPoint) * p.scale;
    // Half a step, plus the float rounding of x/s + z (2^-24 of up to 255 steps).
    EXPECT_LE(std::fabs(rebuilt - x[e]), 0.5 * p.scale * (1.0 + 1e-4))
        << what << ": element " << e << " = " << x[e];
  }
}

TEST(QuantMatmulQuantizers, AsymmetricBoundedAwayFromZeroStaysInRange) {
  std::vector<float> x;
  for (int i = 0; i <= 400; ++i) x.push_back(5.0f + 4.0f * i / 400.0f);  // [5, 9]
  const AsymmetricParams p = asymmetricParams(x.data(), static_cast<long long>(x.size()));
  // Without widening: scale 4/255 and z = round(-128 - 5/(4/255)) = -447,
  // which no int8 holds. Widened to [0, 9]: scale 9/255, z = -128.
  EXPECT_EQ(p.scale, 9.0f / 255.0f);
  EXPECT_EQ(p.zeroPoint, -128);
  expectAsymmetricSafe(x, "[5, 9]");
}

TEST(QuantMatmulQuantizers, AsymmetricNegativeMixedAndLessonRanges) {
  std::vector<float> neg, mixed, relu;
  for (int i = 0; i <= 300; ++i) {
    neg.push_back(-9.0f + 4.0f * i / 300.0f);     // [-9, -5]: z = 127
    mixed.push_back(-1.0f + 4.0f * i / 300.0f);   // [-1, 3]
    relu.push_back(static_cast<float>(i) / 301.0f);  // [0, 1): like the lesson's A
  }
  EXPECT_EQ(asymmetricParams(neg.data(), 301).zeroPoint, 127);
  EXPECT_EQ(asymmetricParams(relu.data(), 301).zeroPoint, -128);
  expectAsymmetricSafe(neg, "[-9, -5]");
  expectAsymmetricSafe(mixed, "[-1, 3]");
  expectAsymmetricSafe(relu, "[0, 1)");
  // The real value 0 has an exact code: z, which dequantizes to exactly 0.
  const AsymmetricParams p = asymmetricParams(mixed.data(), 301);
  const float zero = 0.0f;
  std::int8_t q;
  quantizeAsymmetric(&zero, 1, p, &q);
  EXPECT_EQ(q, p.zeroPoint);
  // An empty range (all equal to 0) gets scale 1.
  const float zeros[3] = {0.0f, 0.0f, 0.0f};
  EXPECT_EQ(asymmetricParams(zeros, 3).scale, 1.0f);
}

// The zero-point identity the epilogue relies on:
// sum (qa - z) qb = sum qa qb - z sum qb, exactly, in int32.
TEST(QuantMatmulQuantizers, ZeroPointEpilogueIdentity) {
  const std::int32_t qa[4] = {-128, -1, 0, 127};
  const std::int32_t qb[4] = {127, -127, 5, -3};
  const int z = -128;
  std::int32_t dot = 0, shifted = 0, colSum = 0;
  for (int k = 0; k < 4; ++k) {
    dot += qa[k] * qb[k];
    shifted += (qa[k] - z) * qb[k];
    colSum += qb[k];
  }
  EXPECT_EQ(int8Epilogue(dot, z, colSum, 1.0f, 1.0f), static_cast<float>(shifted));
  EXPECT_EQ(int8Epilogue(dot, 0, 0, 0.5f, 0.25f), static_cast<float>(dot) * 0.5f * 0.25f);
}

// ------------------------------------------------------------ exercise audits

// Wrong epilogues a student might write; the audit must reject each.
float epilogueNoZeroPoint(std::int32_t acc, std::int32_t, std::int32_t, float a, float b) {
  return mulRn(mulRn(static_cast<float>(acc), a), b);
}
float epilogueSignFlipped(std::int32_t acc, std::int32_t z, std::int32_t cs, float a, float b) {
  return mulRn(mulRn(static_cast<float>(acc + z * cs), a), b);
}
float epilogueScalesFirst(std::int32_t acc, std::int32_t z, std::int32_t cs, float a, float b) {
  return mulRn(static_cast<float>(acc - z * cs), mulRn(a, b));
}
float epilogueRawSum(std::int32_t acc, std::int32_t, std::int32_t, float, float) {
  return static_cast<float>(acc);
}
// The zero point's share taken out in float, after both were rounded: past
// 2^24 the difference of two rounded floats is not the rounded difference.
float epilogueSubtractInFloat(std::int32_t acc, std::int32_t z, std::int32_t cs, float a,
                              float b) {
  return mulRn(mulRn(static_cast<float>(acc) - static_cast<float>(z * cs), a), b);
}
// A correct one written another way: 64-bit correction, products in double.
float epilogueViaDouble(std::int32_t acc, std::int32_t z, std::int32_t cs, float a, float b) {
  const float v = static_cast<float>(static_cast<long long>(acc) - 1LL * cs * z);
  return static_cast<float>(static_cast<double>(static_cast<float>(double(v) * a)) * b);
}

TEST(QuantMatmulAudits, EpilogueAuditAcceptsTheLessonsAndCorrectVariants) {
  int equal = 0, count = 0;
  EXPECT_EQ(auditEpilogue(int8Epilogue, equal, count), "");
  EXPECT_EQ(count, 1280);
  EXPECT_EQ(equal, 1280);
  EXPECT_EQ(auditEpilogue(epilogueViaDouble, equal, count), "");
}

TEST(QuantMatmulAudits, EpilogueAuditRejectsWrongEpilogues) {
  int equal = 0, count = 0;
  for (EpilogueFn wrong : {epilogueNoZeroPoint, epilogueSignFlipped, epilogueScalesFirst,
                           epilogueRawSum, epilogueSubtractInFloat}) {
    EXPECT_NE(auditEpilogue(wrong, equal, count), "");
    EXPECT_EQ(count, 1280);
    EXPECT_LT(equal, count);  // equal counts the matches only
  }
  EXPECT_NE(auditEpilogue(epilogueNoZeroPoint, equal, count).find("int8Epilogue("),
            std::string::npos);
}

// The rescale reference is the same arithmetic as int8Epilogue, written apart:
// bit for bit over random sums, zero points, column sums and scales.
TEST(QuantMatmulAudits, RescaleReferenceEqualsTheEpilogueBitForBit) {
  TestLcg rng{4242u};
  for (int t = 0; t < 200000; ++t) {
    const std::int32_t acc = static_cast<std::int32_t>(rng.unit() * 1.3e8f) - 65000000;
    const std::int32_t z = static_cast<std::int32_t>(rng.unit() * 256.0f) - 128;
    const std::int32_t cs = static_cast<std::int32_t>(rng.unit() * 65024.0f) - 32512;
    const float a = std::ldexp(rng.unit() + 0.5f, -7), b = std::ldexp(rng.unit() + 0.5f, -11);
    const float want = rescaleReference(acc, z, cs, a, b);
    ASSERT_TRUE(sameBits(int8Epilogue(acc, z, cs, a, b), want)) << acc << " " << z << " " << cs;
  }
}

// The lesson's 256 case: B, its column maxima, and the lesson's codes.
struct ColumnCase {
  int n = kCases[0];
  std::vector<float> a, b, colMax, scales;
  std::vector<std::int8_t> codes;
  ColumnCase() : a(n * n), b(n * n), colMax(n), scales(n), codes(n * n) {
    makeInputs(n, a.data(), b.data());
    columnMaxAbs(b.data(), n, n, colMax.data());
    quantizeColumns(b.data(), n, n, colMax.data(), scales.data(), codes.data());
  }
  Verdict audit() const {
    return auditColumnCodes(b.data(), n, n, colMax.data(), scales.data(), codes.data());
  }
};

TEST(QuantMatmulAudits, ColumnAuditAcceptsTheLessonsQuantizer) {
  ColumnCase c;
  EXPECT_EQ(c.audit(), "");
  // Another loop order and rounding call gives the same codes and scales.
  ColumnCase d;
  for (int col = 0; col < d.n; ++col) {
    d.scales[col] = d.colMax[col] > 0.0f ? d.colMax[col] / 127.0f : 1.0f;
    for (int p = 0; p < d.n; ++p) {
      const long q = std::lrint(d.b[p * d.n + col] / d.scales[col]);
      d.codes[p * d.n + col] = static_cast<std::int8_t>(std::max(-128L, std::min(127L, q)));
    }
  }
  EXPECT_EQ(d.audit(), "");
  EXPECT_EQ(d.codes, c.codes);
}

TEST(QuantMatmulAudits, ColumnAuditRejectsTruncation) {
  ColumnCase c;
  for (int e = 0; e < c.n * c.n; ++e)
    c.codes[e] = static_cast<std::int8_t>(c.b[e] / c.scales[e % c.n]);
  EXPECT_NE(c.audit().find("steps from the value"), std::string::npos) << c.audit();
}

TEST(QuantMatmulAudits, ColumnAuditRejectsAnotherCodeMaximum) {
  for (float top : {128.0f, 255.0f, 126.0f}) {
    ColumnCase c;
    for (int col = 0; col < c.n; ++col) c.scales[col] = c.colMax[col] / top;
    for (int e = 0; e < c.n * c.n; ++e) c.codes[e] = roundToInt8(c.b[e] / c.scales[e % c.n]);
    EXPECT_NE(c.audit().find("want colMax/127"), std::string::npos) << top;
  }
}

TEST(QuantMatmulAudits, ColumnAuditRejectsANeighboursScale) {
  ColumnCase codesOff, scalesOff;
  for (int e = 0; e < codesOff.n * codesOff.n; ++e)  // codes with the next column's scale
    codesOff.codes[e] = roundToInt8(codesOff.b[e] / codesOff.scales[(e + 1) % codesOff.n]);
  EXPECT_NE(codesOff.audit(), "");
  for (int col = 0; col < scalesOff.n; ++col)  // scales of the previous column
    scalesOff.scales[col] = symmetricScale(scalesOff.colMax[(col + scalesOff.n - 1) % scalesOff.n]);
  EXPECT_NE(scalesOff.audit(), "");
}

// Ties away from zero (std::round, std::lround) and half up (floor(x + 0.5))
// differ from ties to even only on exactly halfway values: the planted ties.
TEST(QuantMatmulAudits, ColumnAuditRejectsAnotherTieRule) {
  ColumnCase away, up;
  for (int e = 0; e < away.n * away.n; ++e) {
    const float x = away.b[e] / away.scales[e % away.n];
    away.codes[e] = static_cast<std::int8_t>(std::lround(x));
    up.codes[e] = static_cast<std::int8_t>(std::floor(x + 0.5f));
  }
  EXPECT_NE(away.audit().find("exactly halfway"), std::string::npos) << away.audit();
  EXPECT_NE(up.audit().find("exactly halfway"), std::string::npos) << up.audit();
  // The codes they give the planted ties, against the even ones.
  const int n = away.n;
  EXPECT_EQ(away.codes[kTieFirstRow * n + kTieColumn], 1);  // 0.5 steps: away gives 1, even 0
  EXPECT_EQ(up.codes[(kTieFirstRow + 4) * n + kTieColumn], -1);  // -1.5: up gives -1, even -2
}

// Multiplying by 1/scale where the rule divides: 1/(15 * 2^-10) is rounded in
// float, so column 3's +-2.5-step ties land on the odd codes +-3.
TEST(QuantMatmulAudits, ColumnAuditRejectsMultiplyingByTheReciprocal) {
  ColumnCase c;
  for (int e = 0; e < c.n * c.n; ++e)
    c.codes[e] = roundToInt8(c.b[e] * (1.0f / c.scales[e % c.n]));
  const int n = c.n;
  EXPECT_EQ(c.codes[(kTieFirstRow + 2) * n + kTieColumn], 3);
  EXPECT_EQ(c.codes[(kTieFirstRow + 5) * n + kTieColumn], -3);
  EXPECT_NE(c.audit().find("exactly halfway"), std::string::npos) << c.audit();
}

TEST(QuantMatmulAudits, ColumnAuditRejectsAZeroScaleForTheAllZeroColumn) {
  ColumnCase c;
  for (int col = 0; col < c.n; ++col) c.scales[col] = c.colMax[col] / 127.0f;  // no guard
  EXPECT_EQ(c.scales[kZeroColumn], 0.0f);
  const std::string verdict = c.audit();
  EXPECT_NE(verdict.find("column " + std::to_string(kZeroColumn) + ": scale 0"),
            std::string::npos) << verdict;
  EXPECT_NE(verdict.find("want 1 (all zero)"), std::string::npos) << verdict;
}

TEST(QuantMatmulAudits, ColumnAuditRejectsAMissedTopCodeAndTheStandIn) {
  ColumnCase top;  // the column maximum one code short of 127: within a step, not at the top
  int row = 0;
  for (int p = 0; p < top.n; ++p)
    if (std::fabs(top.b[p * top.n + 3]) > std::fabs(top.b[row * top.n + 3])) row = p;
  std::int8_t& q = top.codes[row * top.n + 3];
  q = static_cast<std::int8_t>(q > 0 ? 126 : -126);
  EXPECT_NE(top.audit(), "");
  ColumnCase standIn;
  std::fill(standIn.scales.begin(), standIn.scales.end(), 1.0f);
  std::fill(standIn.codes.begin(), standIn.codes.end(), std::int8_t{0});
  EXPECT_NE(standIn.audit(), "");
}

// ------------------------------------------------------------ 2:4 pruning

// Runs pruneTwoOfFour on a K x 1 column whose codes are all 1; returns which
// rows kept their code.
std::vector<int> keptRows(const std::vector<float>& column) {
  const int K = static_cast<int>(column.size());
  std::vector<std::int8_t> codes(K, 1);
  pruneTwoOfFour(column.data(), K, 1, codes.data());
  std::vector<int> kept;
  for (int p = 0; p < K; ++p)
    if (codes[p] != 0) kept.push_back(p);
  return kept;
}

TEST(QuantMatmulPruning, KeepsTheTwoLargestMagnitudes) {
  EXPECT_EQ(keptRows({1.0f, 4.0f, 3.0f, 2.0f}), (std::vector<int>{1, 2}));
  EXPECT_EQ(keptRows({-5.0f, 1.0f, 4.0f, -2.0f}), (std::vector<int>{0, 2}));
  EXPECT_EQ(keptRows({0.1f, 0.2f, -0.3f, 0.4f, 9.0f, 8.0f, 0.0f, 0.0f}),
            (std::vector<int>{2, 3, 4, 5}));
}

TEST(QuantMatmulPruning, TiesGoToTheEarlierIndex) {
  EXPECT_EQ(keptRows({2.0f, 2.0f, 2.0f, 2.0f}), (std::vector<int>{0, 1}));
  EXPECT_EQ(keptRows({1.0f, 3.0f, -3.0f, 3.0f}), (std::vector<int>{1, 2}));
  EXPECT_EQ(keptRows({5.0f, 1.0f, 1.0f, 1.0f}), (std::vector<int>{0, 1}));
  EXPECT_EQ(keptRows({0.0f, 0.0f, 0.0f, 0.0f}), (std::vector<int>{0, 1}));
}

TEST(QuantMatmulPruning, ShortTailGroupKeepsUpToTwo) {
  // K = 5: a tail of 1 keeps it; K = 6: a tail of 2 keeps both; K = 7: a tail
  // of 3 keeps its 2 largest.
  EXPECT_EQ(keptRows({1.0f, 2.0f, 3.0f, 4.0f, 0.5f}), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(keptRows({1.0f, 2.0f, 3.0f, 4.0f, 0.5f, 0.25f}), (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(keptRows({1.0f, 2.0f, 3.0f, 4.0f, 0.5f, 0.25f, 0.75f}),
            (std::vector<int>{2, 3, 4, 6}));
}

TEST(QuantMatmulPruning, ColumnsAreIndependentAndEqualQuantizingThePrunedB) {
  // 8 x 3 from the lesson's generator: prune the codes, and separately prune
  // the floats and quantize those per column; both must agree, and the pruned
  // B's column maxima must equal the dense ones (the largest always survives).
  const int K = 8, N = 3;
  std::vector<float> A(K * N), B(K * N);
  TestLcg rng{kSeed};
  for (float& v : B) v = 2.0f * rng.unit() - 1.0f;
  std::vector<float> colMax(N), scales(N);
  std::vector<std::int8_t> codes(K * N);
  columnMaxAbs(B.data(), K, N, colMax.data());
  quantizeColumns(B.data(), K, N, colMax.data(), scales.data(), codes.data());
  pruneTwoOfFour(B.data(), K, N, codes.data());

  std::vector<float> pruned = B;
  for (int c = 0; c < N; ++c) {
    for (int g = 0; g < K; g += 4) {
      std::vector<float> col;
      for (int t = 0; t < 4; ++t) col.push_back(B[(g + t) * N + c]);
      const std::vector<int> kept = keptRows(col);
      for (int t = 0; t < 4; ++t)
        if (std::find(kept.begin(), kept.end(), t) == kept.end()) pruned[(g + t) * N + c] = 0.0f;
    }
  }
  std::vector<float> prunedMax(N), prunedScales(N);
  std::vector<std::int8_t> prunedCodes(K * N);
  columnMaxAbs(pruned.data(), K, N, prunedMax.data());
  EXPECT_EQ(prunedMax, colMax);
  quantizeColumns(pruned.data(), K, N, prunedMax.data(), prunedScales.data(),
                  prunedCodes.data());
  EXPECT_EQ(prunedScales, scales);
  EXPECT_EQ(prunedCodes, codes);
  int zeros = 0;
  for (std::int8_t q : codes) zeros += (q == 0);
  EXPECT_GE(zeros, K * N / 2);
}

// ------------------------------------------------------------ exactness gate

struct SmallInt8Case {
  int M, N, K;
  std::vector<std::int8_t> qa, qb;
  std::vector<std::int16_t> qbT;
  std::vector<float> bScales;
  std::vector<std::int32_t> colSums;
};

SmallInt8Case makeSmallCase(int M, int N, int K) {
  SmallInt8Case c{M, N, K, {}, {}, {}, {}, {}};
  TestLcg rng{12345u};
  c.qa.resize(static_cast<size_t>(M) * K);
  c.qb.resize(static_cast<size_t>(K) * N);
  for (std::int8_t& q : c.qa) q = static_cast<std::int8_t>(static_cast<int>(rng.unit() * 256.0f) - 128);
  for (std::int8_t& q : c.qb) q = static_cast<std::int8_t>(static_cast<int>(rng.unit() * 255.0f) - 127);
  c.qbT.resize(static_cast<size_t>(paddedColumns(N)) * K, 99);  // 99: must be overwritten
  transposeCodes(c.qb.data(), K, N, c.qbT.data());
  c.bScales.resize(N);
  for (int j = 0; j < N; ++j) c.bScales[j] = 0.01f * static_cast<float>(j + 1);
  c.colSums.resize(N);
  columnCodeSums(c.qb.data(), K, N, c.colSums.data());
  return c;
}

// The naive i-j-k loop through the same epilogue: what the GPU must produce.
std::vector<float> naiveInt8(const SmallInt8Case& c, const Int8Scales& s) {
  std::vector<float> out(static_cast<size_t>(c.M) * c.N);
  for (int i = 0; i < c.M; ++i) {
    for (int j = 0; j < c.N; ++j) {
      std::int32_t acc = 0;
      for (int k = 0; k < c.K; ++k) acc += c.qa[i * c.K + k] * c.qb[k * c.N + j];
      out[i * c.N + j] = int8Epilogue(acc, s.colSums ? s.zeroPoint : 0,
                                      s.colSums ? s.colSums[j] : 0, s.aScale,
                                      s.bScales ? s.bScales[j] : s.bScale);
    }
  }
  return out;
}

ExactResult checkAll(const SmallInt8Case& c, const Int8Scales& s, const std::vector<float>& got,
                     int slabRows) {
  ExactResult r;
  for (int r0 = 0; r0 < c.M; r0 += slabRows) {
    const int rows = std::min(slabRows, c.M - r0);
    exactCheckRows(c.qa.data(), c.qbT.data(), r0, rows, c.N, c.K, s,
                   got.data() + static_cast<size_t>(r0) * c.N, r);
  }
  return r;
}

TEST(QuantMatmulExactness, TransposePadsToWholeTiles) {
  const SmallInt8Case c = makeSmallCase(3, 7, 5);
  EXPECT_EQ(paddedColumns(7), 8);
  for (int j = 0; j < 8; ++j)
    for (int p = 0; p < 5; ++p)
      EXPECT_EQ(c.qbT[j * 5 + p], j < 7 ? c.qb[p * 7 + j] : 0) << j << "," << p;
}

TEST(QuantMatmulExactness, HostIntegerReferenceMatchesTheNaiveLoopBitForBit) {
  // Odd sizes: an odd row tail, a partial column tile, K not a multiple of 16.
  const SmallInt8Case c = makeSmallCase(7, 9, 37);
  const Int8Scales variants[3] = {
      {0.0123f, 0, nullptr, 0.0456f, nullptr},                    // one scale
      {0.0123f, 0, nullptr, 0.0f, c.bScales.data()},              // per column
      {0.0078f, -128, c.colSums.data(), 0.0f, c.bScales.data()},  // zero point
  };
  for (const Int8Scales& s : variants) {
    const std::vector<float> want = naiveInt8(c, s);
    for (int slab : {2, 3, 7}) {
      const ExactResult r = checkAll(c, s, want, slab);
      EXPECT_EQ(r.checked, 7 * 9);
      EXPECT_EQ(r.mismatches, 0) << "slab " << slab << ", first " << r.firstIndex;
    }
  }
}

TEST(QuantMatmulExactness, OneUlpOrOneNaNIsCaught) {
  const SmallInt8Case c = makeSmallCase(6, 8, 33);
  const Int8Scales s{0.0078f, -128, c.colSums.data(), 0.0f, c.bScales.data()};
  std::vector<float> got = naiveInt8(c, s);
  got[13] = std::nextafter(got[13], std::numeric_limits<float>::infinity());
  got[40] = std::numeric_limits<float>::quiet_NaN();
  const ExactResult r = checkAll(c, s, got, 4);
  EXPECT_EQ(r.mismatches, 2);
  EXPECT_EQ(r.firstIndex, 13);
  // The same output, minus the zero-point correction: almost every element.
  const Int8Scales noZ{0.0078f, 0, nullptr, 0.0f, c.bScales.data()};
  EXPECT_GT(checkAll(c, noZ, naiveInt8(c, s), 6).mismatches, 40);
}

// ------------------------------------------------------------ gates

TEST(QuantMatmulGates, Fp32ToleranceOfTheSpecTable) {
  EXPECT_EQ(sci3(fp32Tolerance(256, 34.5857).rtol), "1.000e-05");
  EXPECT_EQ(sci3(fp32Tolerance(1024, 71.1420).rtol), "1.526e-05");
  EXPECT_EQ(sci3(fp32Tolerance(2048, 167.6871).rtol), "2.158e-05");
  EXPECT_EQ(sci3(fp32Tolerance(256, 34.5857).atol), "3.459e-04");
  EXPECT_EQ(sci3(fp32Tolerance(2048, 167.6871).atol), "3.619e-03");
}

TEST(QuantMatmulGates, ColumnBoundCoversOneProduct) {
  // The derivation: one product rebuilt from codes is off by at most
  // amax*colMax/127 (plus s_a*s_b/4); the gate's bound is 4K times that.
  TestLcg rng{777u};
  const float amax = 1.0f, colMax = 0.125f;
  const float sa = symmetricScale(amax), sb = symmetricScale(colMax);
  double worst = 0.0;
  for (int t = 0; t < 100000; ++t) {
    const float a = amax * rng.unit();
    const float b = colMax * (2.0f * rng.unit() - 1.0f);
    const double rebuilt = static_cast<double>(roundToInt8(a / sa)) * sa *
                           static_cast<double>(roundToInt8(b / sb)) * sb;
    worst = std::max(worst, std::fabs(rebuilt - static_cast<double>(a) * b));
  }
  EXPECT_LE(worst, amax * colMax / 127.0 + 0.25 * sa * sb);
  EXPECT_EQ(columnBound(1, amax, colMax), 4.0 * amax * colMax / 127.0);
  EXPECT_DOUBLE_EQ(columnBound(2048, 1.0, 2.0) / columnBoundSqrtK(2048, 1.0, 2.0),
                   std::sqrt(2048.0));
}

TEST(QuantMatmulGates, ErrorsAndNonFiniteValues) {
  // 2 x 2 output; column 1 has a tiny bound so one element fails it.
  CaseBounds b;
  b.col = {1.0, 1e-6};
  b.colSqrt = {0.5, 1e-7};
  b.f32 = Tolerance{1e-5, 1e-4};
  const double ref[4] = {1.0, 2.0, 3.0, 4.0};
  const float got[4] = {1.5f, 2.0f, std::numeric_limits<float>::infinity(), 4.001f};
  RowCheck rc;
  accumulateErrors(rc, got, ref, 0, 2, 2, b);
  EXPECT_EQ(rc.count, 4);
  EXPECT_EQ(rc.nonFinite, 1);
  EXPECT_EQ(rc.nonFiniteIndex, 2);
  EXPECT_NEAR(rc.maxErr, 0.5, 1e-9);
  EXPECT_EQ(rc.colFailIndex, 3);  // |err| 1e-3 > 1e-6 in column 1
  EXPECT_EQ(rc.relFailIndex, 0);
  EXPECT_FALSE(rowGateFailure(kRowPerColumn, rc, 2).empty());
  EXPECT_NE(rowGateFailure(kRowOneScale, rc, 2).find("NaN or an infinity"), std::string::npos);
}

// ------------------------------------------------------------ censuses

TEST(QuantMatmulCensus, Fp8E4m3RoundTrip) {
  EXPECT_EQ(fp8E4m3RoundTrip(448.0f), 448.0f);
  EXPECT_EQ(fp8E4m3RoundTrip(464.0f), 448.0f);  // saturates (satfinite), no NaN
  EXPECT_EQ(fp8E4m3RoundTrip(1e6f), 448.0f);
  EXPECT_EQ(fp8E4m3RoundTrip(-1e6f), -448.0f);
  EXPECT_EQ(fp8E4m3RoundTrip(432.0f), 448.0f);  // a tie: to the even mantissa (1.110b)
  EXPECT_EQ(fp8E4m3RoundTrip(1.0625f), 1.0f);   // a tie: to 1.000b
  EXPECT_EQ(fp8E4m3RoundTrip(1.1875f), 1.25f);  // a tie: to 1.010b
  EXPECT_EQ(fp8E4m3RoundTrip(0.3f), 0.3125f);
  EXPECT_TRUE(std::isnan(fp8E4m3RoundTrip(std::nanf(""))));
}

TEST(QuantMatmulCensus, SmallTensorsByHand) {
  // A = {0, 1/254, 1}: symmetric step 1/127, so 1/254 is a tie (to 0) and
  // errs by half a step; asymmetric step 1/255 rounds it to code -127.
  const float A[3] = {0.0f, 1.0f / 254.0f, 1.0f};
  const ActivationCensus ac = activationCensus(A, 3);
  EXPECT_EQ(ac.count, 3);
  EXPECT_EQ(ac.maxAbs, 1.0);
  EXPECT_EQ(ac.zeroPoint, -128);
  EXPECT_NEAR(ac.symmetric.maxErr, 1.0 / 254.0, 1e-7);
  EXPECT_LT(ac.asymmetric.maxErr, 1.0 / 510.0 + 1e-7);
  // B = 2 x 2; column 1 is 8 times quieter: per column is exact there.
  const float B[4] = {8.0f, 1.0f, -4.0f, -0.5f};
  float colMax[2], scales[2];
  std::int8_t codes[4];
  columnMaxAbs(B, 2, 2, colMax);
  quantizeColumns(B, 2, 2, colMax, scales, codes);
  const StorageCensus sc = storageCensus(B, 2, 2, colMax, scales, codes);
  EXPECT_EQ(sc.maxAbs, 8.0);
  EXPECT_EQ(sc.count, 4);
  // -4 in column 0 (step 8/127) sits at -63.5 steps: half a step, 1/254 of 8.
  EXPECT_NEAR(sc.int8Column.maxErr, 1.0 / 254.0, 1e-6);
  EXPECT_NEAR(sc.int8Tensor.maxErr, 1.0 / 254.0, 1e-6);
  // 8, 1, -4, -0.5 are e4m3 values (448, 56, -224, -28) times 8/448.
  EXPECT_NEAR(sc.fp8Tensor.maxErr, 0.0, 1e-6);
  EXPECT_NEAR(sc.fp8BlockF32.maxErr, 0.0, 1e-6);
  // Column maxima 8 and 1 are powers of two: E8M0 scales (either rule) are
  // exact, 256 and -128 are e4m3 values. NVFP4: 8 and 1 map to 6, -4 and -0.5
  // to -3, all e2m1 values (up to the float rounding of the scales).
  EXPECT_EQ(sc.mxfp8Ocp.maxErr, 0.0);
  EXPECT_EQ(sc.mxfp8Up.maxErr, 0.0);
  EXPECT_NEAR(sc.nvfp4.maxErr, 0.0, 1e-6);
}

// The lesson's 2048 inputs and their census lines, computed once.
const std::vector<CensusLine>& expectedCensusLines() {
  static const std::vector<CensusLine> lines = [] {
    const int n = kMaxN;
    const long long count = static_cast<long long>(n) * n;
    std::vector<float> A(count), B(count), colMax(n), scales(n);
    std::vector<std::int8_t> codes(count);
    makeInputs(n, A.data(), B.data());
    columnMaxAbs(B.data(), n, n, colMax.data());
    quantizeColumns(B.data(), n, n, colMax.data(), scales.data(), codes.data());
    std::vector<CensusLine> all = activationCensusLines(activationCensus(A.data(), count), n);
    const std::vector<CensusLine> storage =
        storageCensusLines(
            storageCensus(B.data(), n, n, colMax.data(), scales.data(), codes.data()), n, n);
    all.insert(all.end(), storage.begin(), storage.end());
    return all;
  }();
  return lines;
}

TEST(QuantMatmulCensus, TheCensusDigitsOfTheseInputs) {
  std::string joined;
  for (const CensusLine& l : expectedCensusLines()) joined += l.text + "\n";
  for (const char* digits :
       {"max|A| = 1.0000", "3.937e-03  2.273e-03", "1.961e-03  1.132e-03", "2.008 times",
        "max|B| = 7.9995", "3.937e-03  2.155e-03", "3.937e-03  9.732e-04",
        "3.570e-02  1.320e-03", "7.323e-03  8.051e-04", "4194304 values"})
    EXPECT_NE(joined.find(digits), std::string::npos) << digits << "\n" << joined;
}

TEST(QuantMatmulCensus, MxAndNvfp4Helpers) {
  // E8M0, the OCP rule: 2^(floor(log2 max) - 8), so max lands in [256, 512).
  EXPECT_EQ(e8m0ScaleOcp(4.0f), std::ldexp(1.0f, -6));     // 4 -> 256
  EXPECT_EQ(e8m0ScaleOcp(7.99f), std::ldexp(1.0f, -6));    // 7.99 -> 511.4: saturates
  EXPECT_EQ(fp8E4m3RoundTrip(7.99f / e8m0ScaleOcp(7.99f)), 448.0f);
  EXPECT_EQ(e8m0ScaleRoundedUp(7.99f), std::ldexp(1.0f, -5));  // 7.99 -> 255.7: fits
  EXPECT_EQ(e8m0ScaleRoundedUp(7.0f), std::ldexp(1.0f, -6));   // 7 -> exactly 448
  EXPECT_EQ(e8m0ScaleOcp(0.0f), 1.0f);
  // e2m1: nearest, ties to the even code, saturating at 6.
  EXPECT_EQ(fp4E2m1RoundTrip(0.25f), 0.0f);   // tie 0 | 0.5 -> code 0
  EXPECT_EQ(fp4E2m1RoundTrip(0.75f), 1.0f);   // tie 0.5 | 1 -> code 2
  EXPECT_EQ(fp4E2m1RoundTrip(2.5f), 2.0f);    // tie 2 | 3 -> code 4
  EXPECT_EQ(fp4E2m1RoundTrip(5.0f), 4.0f);    // tie 4 | 6 -> code 6
  EXPECT_EQ(fp4E2m1RoundTrip(-3.4f), -3.0f);
  EXPECT_EQ(fp4E2m1RoundTrip(100.0f), 6.0f);
  EXPECT_EQ(fp4E2m1RoundTrip(33555900.0f), 6.0f);  // where a float-distance rounding gave 4
}

// An e2m1 rounding written apart from cuda_fp4.h: the nearest of the eight
// magnitudes by distance in double (exact for |x| <= 6), a tie to the even
// code, every magnitude above 6 saturating to 6, the sign kept.
float fp4Reference(float x) {
  constexpr double kMagnitudes[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
  const double m = std::fabs(static_cast<double>(x));
  if (m >= 6.0) return std::copysign(6.0f, x);
  int best = 0;
  for (int code = 1; code < 8; ++code) {
    const double d = std::fabs(m - kMagnitudes[code]), bestD = std::fabs(m - kMagnitudes[best]);
    if (d < bestD || (d == bestD && code % 2 == 0)) best = code;
  }
  return std::copysign(static_cast<float>(kMagnitudes[best]), x);
}

// The toolkit's conversion against that reference over a sweep of floats:
// every 65,519th bit pattern (all exponents, both signs), every tie and its
// two float neighbours, a fine grid over [0, 8], and huge values; then the
// negatives of all of them.
TEST(QuantMatmulCensus, Fp4ConversionMatchesAnIndependentRoundingOverASweep) {
  std::vector<float> xs;
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 65519) {
    float x;
    const std::uint32_t b = static_cast<std::uint32_t>(bits);
    std::memcpy(&x, &b, sizeof x);
    if (!std::isnan(x)) xs.push_back(x);
  }
  for (float tie : {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f})
    for (float t : {tie, std::nextafter(tie, 0.0f), std::nextafter(tie, 10.0f)}) xs.push_back(t);
  for (int i = 0; i <= 8 * 4096; ++i) xs.push_back(static_cast<float>(i) / 4096.0f);
  for (float huge : {6.0f, std::nextafter(6.0f, 10.0f), 7.0f, 16777217.0f, 33554432.0f,
                     33555900.0f, 1e30f, std::numeric_limits<float>::max(),
                     std::numeric_limits<float>::infinity(),
                     std::numeric_limits<float>::denorm_min()})
    xs.push_back(huge);
  const size_t count = xs.size();
  for (size_t i = 0; i < count; ++i) xs.push_back(-xs[i]);
  int mismatches = 0;
  for (float x : xs) {
    const float got = fp4E2m1RoundTrip(x), want = fp4Reference(x);
    if (!sameBits(got, want) && ++mismatches <= 5)
      ADD_FAILURE() << "x = " << x << ": toolkit " << got << ", reference " << want;
  }
  EXPECT_EQ(mismatches, 0) << "of " << xs.size() << " values";
  // NaN: e2m1 has none; the toolkit documents positive MAXNORM.
  EXPECT_EQ(fp4E2m1RoundTrip(std::nanf("")), 6.0f);
}

TEST(QuantMatmulCensus, MxRowsOrderAsTheirScalesPredict) {
  // The power-of-two scale costs accuracy against the FP32 block scale; the
  // OCP rule's saturation costs the most at the top; rounding up never
  // saturates, so its worst error is half a top-binade step (16/512 of 2^k).
  const std::vector<CensusLine>& lines = expectedCensusLines();
  std::string joined;
  for (const CensusLine& l : lines) joined += l.text + "\n";
  for (const char* digits : {"1.249e-01  2.338e-03", "3.125e-02  1.225e-03",
                             "4.166e-02  4.845e-03"})
    EXPECT_NE(joined.find(digits), std::string::npos) << digits << "\n" << joined;
}

// The census lines recomputed here, against the lines of a transcript: one
// message per census line that is missing there or differs (empty: all match).
// The transcript holds the program's stdout verbatim after its header lines;
// census lines carry no timing, so they are compared exactly.
std::vector<std::string> compareCensusWithTranscript(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  std::vector<std::string> mismatches;
  for (const CensusLine& want : expectedCensusLines()) {
    if (std::find(lines.begin(), lines.end(), want.text) != lines.end()) continue;
    std::string near;
    for (const std::string& l : lines)
      if (l.compare(0, want.label.size(), want.label) == 0) near = l;
    mismatches.push_back(near.empty() ? "missing: '" + want.text + "'"
                                      : "differs: computed '" + want.text +
                                            "', transcript '" + near + "'");
  }
  return mismatches;
}

const std::string kTranscriptPath = SUITE_SOURCE_DIR "/expected/h200/quant_matmul.txt";

bool readFile(const std::string& path, std::string& text) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream s;
  s << f.rdbuf();
  text = s.str();
  return true;
}

// A transcript recorded before the census had its MX and NVFP4 rows, or
// before the inputs were hashed and planted (its exercise lines have no
// planted ties), cannot be compared with these lines; it is re-recorded on
// the GPU.
bool predatesThisCensus(const std::string& text) {
  return text.find(expectedCensusLines().back().label) == std::string::npos ||
         text.find("ties planted in column") == std::string::npos;
}

TEST(QuantMatmulCensus, RecordedTranscriptHasTheseCensusLines) {
  std::string text;
  ASSERT_TRUE(readFile(kTranscriptPath, text))
      << "no recorded transcript at " << kTranscriptPath
      << ": record it on the H200 with 'scripts/suite.py bless' (the census lines are "
         "compared against it)";
  if (predatesThisCensus(text))
    GTEST_SKIP() << "the transcript predates these census lines or inputs: re-record it";
  const std::vector<std::string> mismatches = compareCensusWithTranscript(text);
  for (const std::string& m : mismatches) ADD_FAILURE() << m;
  EXPECT_TRUE(mismatches.empty());
}

// The planted-defect twin: one census digit changed must be seen. It runs on
// the recorded transcript when there is one, else on a transcript synthesized
// from the computed lines, so the comparison itself is tested either way.
TEST(QuantMatmulCensus, ComparisonCatchesOneChangedDigit) {
  std::string text;
  if (!readFile(kTranscriptPath, text) || predatesThisCensus(text)) {
    text = "# synthesized for this test\n--- stdout: lines\nGPU: none\n";
    for (const CensusLine& l : expectedCensusLines()) text += l.text + "\n";
  }
  ASSERT_TRUE(compareCensusWithTranscript(text).empty());
  const std::string& target = expectedCensusLines()[2].text;  // the symmetric row
  const size_t at = text.find(target);
  ASSERT_NE(at, std::string::npos);
  const size_t digit = text.find_first_of("0123456789", at + expectedCensusLines()[2].label.size());
  ASSERT_LT(digit, at + target.size());
  text[digit] = text[digit] == '9' ? '8' : static_cast<char>(text[digit] + 1);
  const std::vector<std::string> mismatches = compareCensusWithTranscript(text);
  ASSERT_EQ(mismatches.size(), 1u);
  EXPECT_EQ(mismatches[0].rfind("differs:", 0), 0u) << mismatches[0];
}

}  // namespace
