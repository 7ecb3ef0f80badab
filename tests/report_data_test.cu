// Host-side tests of the final project's report_data (no GPU needed): the strict command
// line, the size ladder, the sampled rows and their CPU reference (the same bits as a
// full one), the byte models, and the check (NaN and infinity fail).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#define main lesson_main
#include "../lessons/report_data.cu"
#undef main

namespace {

Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "report_data");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  CommandLine cl(static_cast<int>(argv.size()), argv.data(), usageText());
  return parseOptions(cl);
}

TEST(ReportDataCli, DefaultsAndLastOccurrenceWins) {
  const Options d = parse({});
  EXPECT_EQ(d.maxn, 2048);
  EXPECT_EQ(d.iters, 20);
  const Options o = parse({"-maxn", "200", "-maxn", "300", "-iters", "3"});
  EXPECT_EQ(o.maxn, 300);
  EXPECT_EQ(o.iters, 3);
}

TEST(ReportDataCliDeathTest, BadCommandLinesExit2WithOneNamedLineThenUsage) {
  const auto usage = ::testing::ExitedWithCode(kExitBadCommandLine);
  EXPECT_EXIT(parse({"-iters", "0"}), usage,
              "^error: -iters expects an integer in \\[1, 10000\\], got \"0\"\nusage: report_data");
  EXPECT_EXIT(parse({"-iters", "-1"}), usage, "^error: -iters expects an integer");
  EXPECT_EXIT(parse({"-maxn", "127"}), usage,
              "^error: -maxn expects an integer in \\[128, 8192\\], got \"127\"");
  EXPECT_EXIT(parse({"-maxn"}), usage, "^error: -maxn expects an integer .* got nothing");
  EXPECT_EXIT(parse({"-m", "5"}), usage, "^error: unknown option \"-m\"");
  EXPECT_EXIT(parse({"--help"}), ::testing::ExitedWithCode(0), "^$");
}

TEST(ReportDataLadder, DefaultHasNonMultiplesOfTheTileAndEndsAtMaxn) {
  EXPECT_EQ(ladderUpTo(2048),
            (std::vector<long long>{128, 200, 256, 511, 512, 1000, 1024, 2048}));
  EXPECT_EQ(ladderUpTo(300), (std::vector<long long>{128, 200, 256, 300}));
  EXPECT_EQ(ladderUpTo(128), (std::vector<long long>{128}));
  EXPECT_EQ(ladderUpTo(129), (std::vector<long long>{128, 129}));
  EXPECT_EQ(ladderUpTo(4096),
            (std::vector<long long>{128, 200, 256, 511, 512, 1000, 1024, 2048, 4096}));
  EXPECT_EQ(ladderUpTo(5000),
            (std::vector<long long>{128, 200, 256, 511, 512, 1000, 1024, 2048, 4096, 5000}));
  int notMultiples = 0;
  for (long long n : ladderUpTo(2048)) notMultiples += (n % kTile != 0);
  EXPECT_EQ(notMultiples, 3) << "200, 511 and 1000 run the boundary code";
  EXPECT_LE(ladderUpTo(2048)[0], kCpuFullMax) << "the first rung gets a full CPU check";
}

TEST(ReportDataLadder, SampledRowsCoverBothEdgesAndTheMiddle) {
  const std::vector<long long> rows = sampleRows(2048);
  ASSERT_EQ(rows.size(), 32u);
  for (long long i = 0; i < 8; ++i) {
    EXPECT_EQ(rows[static_cast<size_t>(i)], i);
    EXPECT_EQ(rows[static_cast<size_t>(24 + i)], 2040 + i);
  }
  EXPECT_EQ(rows[8], 64);
  EXPECT_EQ(rows[23], 1984);
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
  EXPECT_EQ(sampleRows(20).size(), 20u) << "small n: every row once";
}

TEST(ReportDataLadder, RowsReferenceHasTheBitsOfTheFullReference) {
  const long long n = 300;
  std::vector<float> A(static_cast<size_t>(n * n)), B(static_cast<size_t>(n * n));
  fillInputs(A, B);
  std::vector<double> full(static_cast<size_t>(n * n));
  cpuReferenceGemm(A.data(), B.data(), full.data(), n, n, n);
  const RowsReference rr = cpuRowsReference(A, B, n);
  ASSERT_EQ(rr.rows.size(), 32u);
  for (size_t s = 0; s < rr.rows.size(); ++s) {
    EXPECT_EQ(rr.slot[static_cast<size_t>(rr.rows[s])], static_cast<int>(s));
    for (long long j = 0; j < n; ++j)
      ASSERT_EQ(rr.ref[s * n + j], full[static_cast<size_t>(rr.rows[s] * n + j)])
          << "row " << rr.rows[s] << ", col " << j;
  }
  EXPECT_GT(rr.ref_max, 0.0);
}

TEST(ReportDataBytes, ModelsAndIntensities) {
  const long long n = 2048;
  EXPECT_DOUBLE_EQ(modelLoadBytes(Kernel::kNaive, n, n, n), 8.0 * n * n * n);
  EXPECT_DOUBLE_EQ(modelLoadBytes(Kernel::kTiled, n, n, n), 0.5 * n * n * n)
      << "the spec's MNK/2 when 16 divides n";
  EXPECT_DOUBLE_EQ(modelLoadBytes(Kernel::kTiled, 200, 200, 200), 4.0 * 2 * 200 * 200 * 13)
      << "ceil(200/16) = 13 blocks: partial tiles load only what exists";
  EXPECT_DOUBLE_EQ(compulsoryBytes(n, n, n), 12.0 * n * n);
  const double flop = 2.0 * n * n * n;
  EXPECT_DOUBLE_EQ(flop / modelLoadBytes(Kernel::kNaive, n, n, n), 0.25);
  EXPECT_DOUBLE_EQ(flop / modelLoadBytes(Kernel::kTiled, n, n, n), 4.0);
  EXPECT_NEAR(flop / compulsoryBytes(n, n, n), n / 6.0, 1e-9);
}

TEST(ReportDataCheck, KScaledToleranceAndNan) {
  EXPECT_DOUBLE_EQ(rtolForK(128), 1e-5);
  EXPECT_DOUBLE_EQ(rtolForK(2048), 4.0 * std::ldexp(1.0, -23) * std::sqrt(2048.0));
  CheckStats s;
  s.add(0, 2.0, 2.0, 1e-4, 1e-5);
  s.add(1, std::numeric_limits<double>::quiet_NaN(), 2.0, 1e-4, 1e-5);
  EXPECT_FALSE(s.pass());
  EXPECT_EQ(s.first_bad, 1);
  EXPECT_TRUE(std::isnan(maxOrNan(s.err_frac, 0.5)));
  EXPECT_STREQ(verdictName(Verdict::kUnverified), "UNVERIFIED");
}

}  // namespace
