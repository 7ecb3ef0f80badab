// Host-side tests of the Day 66 lesson's functions (no GPU needed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#define main lesson_main
#include "../lessons/testing.cu"
#undef main

namespace {

std::string sci3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

TEST(TestingLesson, ExactSumsOfTheSpecTable) {
  const std::vector<float> x = makeInput(kMaxN);
  EXPECT_EQ(oracleSum(x.data(), 512), 11815.5);
  EXPECT_EQ(oracleSum(x.data(), kOddN), 14171.0);
  EXPECT_EQ(oracleSum(x.data(), kExactN), 23995.5);
  EXPECT_EQ(oracleSum(x.data(), 16384), 393018.0);
  EXPECT_EQ(oracleSum(x.data(), kMaxN), 395434.5);
  EXPECT_EQ(oracleSum(x.data(), kSwapCount), 2328.5);
  EXPECT_EQ(oracleSum(x.data() + 16384, kSwapCount), 2416.5);
}

TEST(TestingLesson, GoldenConstantIsTheDropTailOutputNotTheTruth) {
  const std::vector<float> x = makeInput(kMaxN);
  EXPECT_EQ(static_cast<double>(kGolden611), oracleSum(x.data(), 512));
  EXPECT_NE(static_cast<double>(kGolden611), oracleSum(x.data(), kOddN));
}

TEST(TestingLesson, ScaledToleranceMatchesTheSpec) {
  EXPECT_EQ(sci3(scaledRtol(kOddN)), "1.179e-05");
  EXPECT_EQ(sci3(scaledRtol(kExactN)), "1.526e-05");
  EXPECT_EQ(sci3(scaledRtol(kMaxN)), "6.122e-05");
  EXPECT_EQ(scaledRtol(1), kBaseRtol);  // the table entry is the floor
  EXPECT_EQ(scaledRtol(kTinyN), kBaseRtol);
}

TEST(TestingLesson, RelativeErrorOfTheRecordedFailures) {
  EXPECT_EQ(sci3(relativeError(11815.5, 14171.0)), "1.662e-01");
  EXPECT_EQ(sci3(relativeError(393018.0, 395434.5)), "6.111e-03");
  EXPECT_EQ(sci3(relativeError(393106.0, 393018.0)), "2.239e-04");
  EXPECT_EQ(sci3(relativeError(14171.0, 11815.5)), "1.994e-01");
  EXPECT_EQ(relativeError(0.5, 0.0), 0.5);  // want 0: absolute difference
}

TEST(TestingLesson, PassRuleRejectsNaNInfinityAndRefusedLaunches) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(passes(Outcome{true, 10.0f, nullptr}, 10.0, 0.0f));
  EXPECT_FALSE(passes(Outcome{true, nan, nullptr}, 10.0, 1.0f));
  EXPECT_FALSE(passes(Outcome{true, inf, nullptr}, 10.0, 1.0f));
  EXPECT_FALSE(passes(Outcome{false, 10.0f, "refused"}, 10.0, 1.0f));
  EXPECT_FALSE(passes(Outcome{true, 10.5f, nullptr}, 10.0, 0.0f));  // rtol 0 is equality
}

TEST(TestingLesson, LooseOracleTolerancePassesTheLostTail) {
  // The supplied suite's flaw in numbers: the lost tail is 6.111e-3 of the sum.
  EXPECT_LE(relativeError(393018.0, 395434.5), kLooseRtol);
  EXPECT_GT(relativeError(393018.0, 395434.5), scaledRtol(kMaxN));
}

}  // namespace
