// Host-side tests of the final project's sweep (no GPU needed): the strict command line,
// the design space, the legality rules (each seen to fire on a planted limit), the
// occupancy limiter, the check (NaN and infinity fail) and the tie rule of the ranking.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#define main lesson_main
#include "../lessons/sweep.cu"
#undef main

namespace {

// parseOptions on a command line given as words (the program name is added).
Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "sweep");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  CommandLine cl(static_cast<int>(argv.size()), argv.data(), usageText());
  return parseOptions(cl);
}

TEST(SweepCli, DefaultsFlagAndLastOccurrenceWins) {
  const Options d = parse({});
  EXPECT_EQ(d.m, 1024);
  EXPECT_EQ(d.n, 1024);
  EXPECT_EQ(d.k, 1024);
  EXPECT_EQ(d.iters, 20);
  EXPECT_FALSE(d.csv);
  const Options o = parse({"-m", "5", "-m", "200", "-n", "130", "-k", "70", "-iters", "3", "-csv"});
  EXPECT_EQ(o.m, 200);
  EXPECT_EQ(o.n, 130);
  EXPECT_EQ(o.k, 70);
  EXPECT_EQ(o.iters, 3);
  EXPECT_TRUE(o.csv);
}

TEST(SweepCliDeathTest, BadCommandLinesExit2WithOneNamedLineThenUsage) {
  const auto usage = ::testing::ExitedWithCode(kExitBadCommandLine);
  EXPECT_EXIT(parse({"-k", "0"}), usage,
              "^error: -k expects an integer in \\[1, 16777216\\], got \"0\"\nusage: sweep");
  EXPECT_EXIT(parse({"-m", "abc"}), usage, "^error: -m expects an integer");
  EXPECT_EXIT(parse({"-n"}), usage, "^error: -n expects an integer .* got nothing\n");
  EXPECT_EXIT(parse({"-iters", "0"}), usage, "^error: -iters expects an integer in \\[1, 10000\\]");
  EXPECT_EXIT(parse({"-csv", "1"}), usage, "^error: unknown option \"1\"");
  EXPECT_EXIT(parse({"-tile", "16"}), usage, "^error: unknown option \"-tile\"");
  EXPECT_EXIT(parse({"-m", "30000", "-n", "30000", "-k", "30000"}), usage,
              "^error: -m, -n, -k: the host buffers would need 13.41 GiB");
  EXPECT_EXIT(parse({"-h"}), ::testing::ExitedWithCode(0), "^$");
}

TEST(SweepDesignSpace, TwentySevenPointsInDesignOrder) {
  ASSERT_EQ(kPointCount, 27);
  int i = 0;
  for (int threads : {128, 256, 512})
    for (int tk : {8, 16, 32})
      for (int co : {1, 2, 4}) {
        const PointSpec& p = kPoints[i++];
        EXPECT_EQ(p.threads, threads);
        EXPECT_EQ(p.by * kTileCols, threads);
        EXPECT_EQ(p.tk, tk);
        EXPECT_EQ(p.co, co);
        EXPECT_EQ(p.smem_bytes, (long long)(p.by * co * tk + tk * 32) * 4);
      }
  EXPECT_EQ(kPoints[17].smem_bytes, 8192) << "256/32/4, the spec's recorded winner";
  EXPECT_EQ(kPoints[26].smem_bytes, 12288) << "the largest need, far below 48 KiB";
  EXPECT_EQ(pointLabel(kPoints[17]), "256/32/4");
}

// Limits as an H200 reports them; the kernel's own facts as a typical instantiation.
DeviceLimits h200() { return DeviceLimits{1024, 1024, 1024, 2147483647, 65535, 49152, 232448}; }
KernelFacts plain() { return KernelFacts{1024, 0, 40}; }

TEST(SweepLegality, EveryPointIsLegalAtTheDefaultSize) {
  const Options o;
  for (const PointSpec& p : kPoints) {
    std::string why = "unset";
    EXPECT_EQ(legalityOf(p, geometryFor(p, o), o, h200(), plain(), &why), Legality::kLegal);
    EXPECT_EQ(why, "");
  }
}

TEST(SweepLegality, GridRuleFiresForRealAtLargeM) {
  Options o;
  o.m = 300000;  // the third Run: line
  int skipped = 0;
  for (const PointSpec& p : kPoints) {
    std::string why;
    const Geometry g = geometryFor(p, o);
    if (legalityOf(p, g, o, h200(), plain(), &why) == Legality::kSkip) {
      ++skipped;
      EXPECT_EQ(g.rows, 4) << "only the 4-row tiles (128 threads, CO 1) need > 65535 blocks";
      EXPECT_NE(why.find("grid.y = ceil(M / 4) = ceil(300000 / 4) = 75000 blocks exceeds"),
                std::string::npos) << why;
    }
  }
  EXPECT_EQ(skipped, 3);
  o.m = 65535LL * 64 + 1;  // past every tile height: nothing can launch
  for (const PointSpec& p : kPoints)
    EXPECT_EQ(legalityOf(p, geometryFor(p, o), o, h200(), plain(), nullptr), Legality::kSkip);
}

TEST(SweepLegality, EachRuleFiresOnAPlantedLimit) {
  const Options o;
  const PointSpec& big = kPoints[26];  // 512/32/4: 512 threads, block (32, 16), 12288 B
  std::string why;
  KernelFacts regs = plain();
  regs.max_threads = 256;  // a register-hungry kernel: fewer threads per block
  EXPECT_EQ(legalityOf(big, geometryFor(big, o), o, h200(), regs, &why), Legality::kSkip);
  EXPECT_NE(why.find("this kernel runs at most 256 per block"), std::string::npos) << why;
  DeviceLimits lim = h200();
  lim.block_y = 8;
  EXPECT_EQ(legalityOf(big, geometryFor(big, o), o, lim, plain(), &why), Legality::kSkip);
  EXPECT_NE(why.find("block (32, 16) exceeds"), std::string::npos) << why;
  lim = h200();
  lim.smem_default = 8192;
  lim.smem_optin = 12287;
  EXPECT_EQ(legalityOf(big, geometryFor(big, o), o, lim, plain(), &why), Legality::kSkip);
  EXPECT_NE(why.find("exceed this device's opt-in limit of 12287"), std::string::npos) << why;
  lim.smem_optin = 12288;
  EXPECT_EQ(legalityOf(big, geometryFor(big, o), o, lim, plain(), &why),
            Legality::kLegalWithOptIn);
  KernelFacts staticSmem = plain();
  staticSmem.static_smem = 1;  // static shared memory counts against the same limit
  EXPECT_EQ(legalityOf(big, geometryFor(big, o), o, lim, staticSmem, &why), Legality::kSkip);
  lim = h200();
  lim.grid_x = 31;  // N = 1024 needs 32 columns of blocks
  EXPECT_EQ(legalityOf(big, geometryFor(big, o), o, lim, plain(), &why), Legality::kSkip);
  EXPECT_NE(why.find("grid.x = ceil(N / 32) = 32 blocks exceeds"), std::string::npos) << why;
}

TEST(SweepOccupancy, LimiterByElimination) {
  // 256 threads on a 2048-thread SM with 32 block slots: the thread bound is 8.
  EXPECT_STREQ(occupancyLimiter(8, 8, 8, 32), "threads");
  EXPECT_STREQ(occupancyLimiter(6, 6, 8, 32), "registers");
  EXPECT_STREQ(occupancyLimiter(4, 6, 8, 32), "shared");
  EXPECT_STREQ(occupancyLimiter(16, 16, 64, 16), "block-slots");
  EXPECT_STREQ(occupancyLimiter(0, 0, 8, 32), "registers");
}

TEST(SweepCheck, NanInfinityAndStaleZerosFail) {
  const double rtol = rtolForK(1024), atol = rtol * 10.0;
  EXPECT_DOUBLE_EQ(rtol, 4.0 * std::ldexp(1.0, -23) * 32.0);
  EXPECT_DOUBLE_EQ(rtolForK(70), 1e-5) << "small K: the table's base rtol";
  CheckStats ok;
  ok.add(0, 1.0, 1.0 + 1e-5, atol, rtol);
  EXPECT_TRUE(ok.pass());
  EXPECT_LT(ok.err_frac, 1.0);
  CheckStats nan;
  nan.add(0, 1.0, 1.0, atol, rtol);
  nan.add(1, std::numeric_limits<double>::quiet_NaN(), 1.0, atol, rtol);
  nan.add(2, 1.0, 1.0, atol, rtol);
  EXPECT_FALSE(nan.pass());
  EXPECT_EQ(nan.first_bad, 1);
  EXPECT_TRUE(std::isnan(nan.max_abs_err)) << "a NaN error stays visible";
  CheckStats inf;
  inf.add(0, HUGE_VAL, 1.0, atol, rtol);
  EXPECT_FALSE(inf.pass());
  CheckStats zero;  // a row the starter's stand-in never computed
  zero.add(5, 0.0, 2.5, atol, rtol);
  EXPECT_FALSE(zero.pass());
  EXPECT_EQ(zero.first_bad, 5);
  CheckStats none;
  EXPECT_FALSE(none.pass()) << "nothing checked is not a pass";
}

TEST(SweepRanking, OverlappingRangesTie) {
  // a [1.0, 1.1] and b [1.05, 1.2] overlap: tied for first. c [1.3, 1.4] lies above
  // both: rank 3. d was not timed (failed): rank 0. e [1.15, 1.5] overlaps b and c but
  // lies above a only: rank 2, alone.
  const std::vector<TimeRange> r = {{1.0, 1.1, true},
                                    {1.05, 1.2, true},
                                    {1.3, 1.4, true},
                                    {0.1, 0.2, false},
                                    {1.15, 1.5, true}};
  const std::vector<int> rank = ranksOf(r), tie = tiesOf(rank);
  EXPECT_EQ(rank, (std::vector<int>{1, 1, 3, 0, 2}));
  EXPECT_EQ(tie, (std::vector<int>{1, 1, 0, 0, 0}));
}

TEST(SweepRanking, SeparatedRangesRankInOrderAndOnePointIsFirst) {
  const std::vector<TimeRange> r = {{3.0, 3.1, true}, {1.0, 1.1, true}, {2.0, 2.1, true}};
  EXPECT_EQ(ranksOf(r), (std::vector<int>{3, 1, 2}));
  EXPECT_EQ(tiesOf(ranksOf(r)), (std::vector<int>{0, 0, 0}));
  const std::vector<TimeRange> same = {{1.0, 1.0, true}, {1.0, 1.0, true}};
  EXPECT_EQ(ranksOf(same), (std::vector<int>{1, 1})) << "equal samples tie";
}

TEST(SweepCsv, DeviceNameCannotBreakTheColumns) {
  EXPECT_EQ(csvSafe("NVIDIA H200"), "NVIDIA H200");
  EXPECT_EQ(csvSafe("Odd, Name\n"), "Odd  Name ");
}

}  // namespace
