// Host-side tests of the final project's report_data (no GPU needed): the strict command line and
// the work it may ask for, the size ladder, the sampled rows, the byte models, the check (NaN and
// infinity fail), and the verification ladder judged on host outputs, planted errors included.
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
              "^error: -maxn expects an integer in \\[128, 4096\\], got \"127\"");
  EXPECT_EXIT(parse({"-maxn", "4097"}), usage, "^error: -maxn expects an integer");
  EXPECT_EXIT(parse({"-maxn"}), usage, "^error: -maxn expects an integer .* got nothing");
  EXPECT_EXIT(parse({"-m", "5"}), usage, "^error: unknown option \"-m\"");
  EXPECT_EXIT(parse({"--help"}), ::testing::ExitedWithCode(0), "^$");
}

TEST(ReportDataCliDeathTest, WorkThatWouldRunForMinutesIsRefusedBeforeAnyCudaCall) {
  const auto usage = ::testing::ExitedWithCode(kExitBadCommandLine);
  EXPECT_EXIT(parse({"-maxn", "4096", "-iters", "10000"}), usage,
              "^error: -maxn 4096 with -iters 10000 asks for [0-9.]+ TFLOP of GEMM launches");
  EXPECT_EXIT(parse({"-iters", "300"}), usage, "^error: -maxn 2048 with -iters 300 asks for");
  EXPECT_LE(workFlop(kDefaultMaxN, kDefaultIters), kMaxWorkFlop / 5) << "the default run is small";
  EXPECT_LE(workFlop(kMaxN, kDefaultIters), kMaxWorkFlop) << "-maxn 4096 runs at the default iters";
  EXPECT_LE(workFlop(kLadder[0], kMaxIters), kMaxWorkFlop) << "-maxn 128 runs at any iters";
  const Options o = parse({"-maxn", "128", "-iters", "10000"});
  EXPECT_EQ(o.iters, 10000);
}

TEST(ReportDataLadder, DefaultHasNonMultiplesOfTheTileAndEndsAtMaxn) {
  EXPECT_EQ(ladderUpTo(2048), (std::vector<long long>{128, 200, 256, 511, 512, 1000, 1024, 2048}));
  EXPECT_EQ(ladderUpTo(300), (std::vector<long long>{128, 200, 256, 300}));
  EXPECT_EQ(ladderUpTo(128), (std::vector<long long>{128}));
  EXPECT_EQ(ladderUpTo(129), (std::vector<long long>{128, 129}));
  EXPECT_EQ(ladderUpTo(4096),
            (std::vector<long long>{128, 200, 256, 511, 512, 1000, 1024, 2048, 4096}));
  int notMultiples = 0;
  for (long long n : ladderUpTo(2048)) notMultiples += (n % kTile != 0);
  EXPECT_EQ(notMultiples, 3) << "200, 511 and 1000 run the boundary code";
  EXPECT_LE(ladderUpTo(2048)[0], kFullRefMax) << "the first n gets a full check";
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
  for (long long n : {1025LL, 2048LL, 3000LL, 4096LL})  // the planted errors' row is never sampled
    for (long long r : sampleRows(n)) EXPECT_NE(r, n / 2 + 1) << "n = " << n;
}

TEST(ReportDataBytes, ModelsAndIntensities) {
  const long long n = 2048;
  EXPECT_DOUBLE_EQ(modelLoadBytes(Kernel::kNaive, n, n, n), 8.0 * n * n * n);
  EXPECT_DOUBLE_EQ(modelLoadBytes(Kernel::kTiled, n, n, n), 0.5 * n * n * n)
      << "MNK/2 when 16 divides n";
  EXPECT_DOUBLE_EQ(modelLoadBytes(Kernel::kTiled, 200, 200, 200), 4.0 * 2 * 200 * 200 * 13)
      << "ceil(200/16) = 13 blocks: partial tiles load only what exists";
  EXPECT_DOUBLE_EQ(compulsoryBytes(n, n, n), 12.0 * n * n);
  const double flop = 2.0 * n * n * n;
  EXPECT_DOUBLE_EQ(flop / modelLoadBytes(Kernel::kNaive, n, n, n), 0.25);
  EXPECT_DOUBLE_EQ(flop / modelLoadBytes(Kernel::kTiled, n, n, n), 4.0) << "tiling: 0.25 -> 4";
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
  EXPECT_TRUE(std::isnan(s.max_abs_err));
  EXPECT_FALSE(CheckStats().pass()) << "nothing checked is no pass";
  EXPECT_STREQ(kVerdictNames[int(Verdict::kUnverified)], "UNVERIFIED");
}

// The ladder on host data: both "kernels" as the GPU computes them (fmaf, ascending k), and the
// reference of the sampled rows from the CPU loop of the reference block (the same bits).
struct HostLadder {
  long long n;
  std::vector<float> A, B, naive, tiled;
  RowsReference rr;
  explicit HostLadder(long long size, const std::vector<long long>& rows) : n(size) {
    A.resize(size_t(n * n));
    B.resize(size_t(n * n));
    fillInputs(A, B);
    naive.resize(size_t(n * n));
    for (long long i = 0; i < n; ++i)
      for (long long j = 0; j < n; ++j) {
        float acc = 0.0f;
        for (long long k = 0; k < n; ++k) acc = std::fmaf(A[size_t(i * n + k)], B[size_t(k * n + j)], acc);
        naive[size_t(i * n + j)] = acc;
      }
    tiled = naive;
    rr.slot.assign(size_t(n), -1);
    rr.ref.resize(rows.size() * size_t(n));
    for (size_t s = 0; s < rows.size(); ++s) {
      rr.slot[size_t(rows[s])] = int(s);
      referenceRowCpu(A.data(), B.data(), rr.ref.data() + s * size_t(n), int(rows[s]), int(n), int(n));
    }
    for (double v : rr.ref) rr.ref_max = std::max(rr.ref_max, std::fabs(v));
  }
};

TEST(ReportDataVerify, TheLadderPassesTrueOutputsAndFailsEveryPlantedError) {
  const long long n = 96;
  const HostLadder h(n, sampleRows(n));
  Ladder trusting;
  trusting.naiveVerdict = Verdict::kPass;
  EXPECT_EQ(verdictAbove(Kernel::kNaive, scan(h.naive, nullptr, h.rr, n), n, trusting).verdict,
            Verdict::kPass);
  const Scan tiled = scan(h.tiled, &h.naive, h.rr, n);
  EXPECT_EQ(tiled.xcheck.checked, n * n);
  EXPECT_EQ(verdictAbove(Kernel::kTiled, tiled, n, trusting).verdict, Verdict::kPass);
  EXPECT_TRUE(ladderFailsPlantedErrors(h.naive, h.tiled, h.rr, n));
  Ladder broken = trusting;  // naive failed its full check at n = 200
  broken.naiveFullRecord = false;
  broken.naiveFirstFailure = 200;
  const RowCheck rc = verdictAbove(Kernel::kNaive, scan(h.naive, nullptr, h.rr, n), n, broken);
  EXPECT_EQ(rc.verdict, Verdict::kUnverified);
  EXPECT_NE(rc.why.find("n = 200"), std::string::npos) << rc.why;
}

TEST(ReportDataVerify, TheFullCheckComparesEveryElementAndNamesTheFirstFailure) {
  const long long n = 40;
  std::vector<long long> every(static_cast<size_t>(n));
  for (long long i = 0; i < n; ++i) every[size_t(i)] = i;
  HostLadder h(n, every);
  EXPECT_TRUE(scan(h.naive, nullptr, h.rr, n).ref.pass());
  EXPECT_EQ(scan(h.naive, nullptr, h.rr, n).ref.checked, n * n);
  h.naive[size_t(7 * n + 9)] += 1e-3f;  // one element, well past rtol 1e-5
  const Scan s = scan(h.naive, nullptr, h.rr, n);
  EXPECT_EQ(s.ref.failures, 1);
  EXPECT_NE(s.ref.describe("failed", n).find("(7, 9)"), std::string::npos);
}

}  // namespace
