// Host-side tests of the final project's sweep (no GPU needed): the strict command line and
// its work caps, the design space, the legality rule, the occupancy limiter, the check (NaN
// and infinity fail), the tie rule of the ranking (ties are chains of overlapping ranges),
// and the starter's diagnosis by behaviour.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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
  EXPECT_EQ(d.warmups, 3);
  EXPECT_EQ(parse({"-iters", "1", "-warmups", "0"}).warmups, 0) << "the Sanitize: line's";
}

TEST(SweepCliDeathTest, BadCommandLinesExit2WithOneNamedLineThenUsage) {
  const auto usage = ::testing::ExitedWithCode(kExitBadCommandLine);
  EXPECT_EXIT(parse({"-k", "0"}), usage,
              "^error: -k expects an integer in \\[1, 16777216\\], got \"0\"\nusage: sweep");
  EXPECT_EXIT(parse({"-m", "abc"}), usage, "^error: -m expects an integer");
  EXPECT_EXIT(parse({"-n"}), usage, "^error: -n expects an integer .* got nothing\n");
  EXPECT_EXIT(parse({"-iters", "0"}), usage, "^error: -iters expects an integer in \\[1, 10000\\]");
  EXPECT_EXIT(parse({"-warmups", "-1"}), usage, "^error: -warmups expects an integer in \\[0, 100\\]");
  EXPECT_EXIT(parse({"-csv", "1"}), usage, "^error: unknown option \"1\"");
  EXPECT_EXIT(parse({"-tile", "16"}), usage, "^error: unknown option \"-tile\"");
  EXPECT_EXIT(parse({"-h"}), ::testing::ExitedWithCode(0), "^$");
}

// Work that would run for minutes is refused on the command line, before any CUDA call.
TEST(SweepCliDeathTest, WorkCapsRefuseMinutesOfWork) {
  const auto usage = ::testing::ExitedWithCode(kExitBadCommandLine);
  // 24 launches per point x (2^21 + 2^20 + 2^19 steps) x 9 points of each TK.
  EXPECT_EXIT(parse({"-m", "1", "-n", "1", "-k", "16777216"}), usage,
              "^error: -k, -iters: the sweep would walk 792723456 dependent K steps \\(27 points "
              "x 24 launches x ceil\\(K / TK\\)\\), over the cap of 2\\^24");
  EXPECT_EXIT(parse({"-iters", "10000"}), usage,
              "^error: -m, -n, -k, -iters: the sweep would do 5.8e\\+14 FLOP \\(27 points x 10004 "
              "launches");
  EXPECT_EXIT(parse({"-m", "4096", "-n", "4096", "-k", "4096"}), usage, "over the cap of 2\\^45");
  EXPECT_EXIT(parse({"-m", "30000", "-n", "30000", "-k", "1", "-iters", "1"}), usage,
              "^error: -m, -n: the sweep would check 2.43e\\+10 elements on the CPU");
  EXPECT_EXIT(parse({"-m", "16777216", "-n", "1", "-k", "64", "-iters", "1"}), usage,
              "^error: -m, -n, -k: the host buffers would need 4.19 GiB \\(A, B, the double "
              "reference and C\\)");
}

TEST(SweepCli, EveryRecordedRunInsideTheCapsParses) {
  // The Run: lines of the header, except the two that are refused on purpose.
  const Options small = parse({"-m", "200", "-n", "130", "-k", "70", "-iters", "3"});
  EXPECT_EQ(small.m, 200);
  const Options tall = parse({"-m", "300000", "-n", "8", "-k", "16", "-iters", "3"});
  EXPECT_EQ(tall.m, 300000);
  const Options sanitize = parse({"-m", "70", "-n", "40", "-k", "33", "-iters", "1"});
  EXPECT_EQ(sanitize.k, 33);
  // Near the largest K the step cap lets through at the default iters:
  // 24 x 9 x (44380 + 22190 + 11095) = 16775640 <= 2^24 steps.
  EXPECT_EQ(parse({"-m", "1", "-n", "1", "-k", "355040"}).k, 355040);
}

TEST(SweepDesignSpace, TwentySevenPointsInDesignOrder) {
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
  EXPECT_EQ(i, kPointCount);
  EXPECT_EQ(kPoints[26].smem_bytes, 12288) << "the largest need, far below 48 KiB";
  EXPECT_EQ(pointLabel(kPoints[17]), "256/32/4");
}

TEST(SweepLegality, OnlyTheGridCanRefuseAPoint) {
  for (const PointSpec& p : kPoints) EXPECT_EQ(skipReason(p, 1024, 65535), "");
  int skipped = 0;
  for (const PointSpec& p : kPoints) {
    const std::string why = skipReason(p, 300000, 65535);  // the third Run: line
    if (why.empty()) continue;
    ++skipped;
    EXPECT_EQ(p.by * p.co, 4) << "only the 4-row tiles (128 threads, CO 1) need > 65535 blocks";
    EXPECT_EQ(why, "grid.y = ceil(300000 / 4) = 75000 blocks, above the limit of 65535");
  }
  EXPECT_EQ(skipped, 3);
  for (const PointSpec& p : kPoints) EXPECT_NE(skipReason(p, 65535LL * 64 + 1, 65535), "");
  EXPECT_EQ(skipReason(kPoints[0], 65535LL * 4, 65535), "") << "exactly at the limit launches";
}

TEST(SweepOccupancy, LimiterByElimination) {
  // 256 threads on a 2048-thread SM with 32 block slots: the thread bound is 8.
  EXPECT_STREQ(occupancyLimiter(8, 8, 8, 32), "threads");
  EXPECT_STREQ(occupancyLimiter(6, 6, 8, 32), "registers");
  EXPECT_STREQ(occupancyLimiter(4, 6, 8, 32), "shared memory");
  EXPECT_STREQ(occupancyLimiter(16, 16, 64, 16), "block slots");
  EXPECT_STREQ(occupancyLimiter(0, 0, 8, 32), "registers");
}

TEST(SweepCheck, NanInfinityAndStaleZerosFail) {
  const double rtol = rtolForK(1024), atol = rtol * 10.0;
  EXPECT_DOUBLE_EQ(rtol, 4.0 * std::ldexp(1.0, -23) * 32.0);
  EXPECT_DOUBLE_EQ(rtolForK(70), 1e-5) << "small K: the table's base rtol";
  const Tolerance tol{rtol, atol};
  EXPECT_EQ(gemmTolerance(1024, 10.0).atol, atol) << "the sweep's tolerance: atol = rtol * max|ref|";
  GemmCheck ok;
  ok.add(0, 1.0, 1.0 + 1e-5, tol);
  EXPECT_TRUE(ok.pass());
  EXPECT_LT(ok.worst_score, 1.0);
  GemmCheck nan;
  nan.add(0, 1.0, 1.0, tol);
  nan.add(1, std::numeric_limits<double>::quiet_NaN(), 1.0, tol);
  nan.add(2, 1.0, 1.0, tol);
  EXPECT_FALSE(nan.pass());
  EXPECT_EQ(nan.first_bad, 1);
  EXPECT_TRUE(std::isnan(nan.worst_score)) << "a NaN error stays visible";
  GemmCheck inf;
  inf.add(0, HUGE_VAL, 1.0, tol);
  EXPECT_FALSE(inf.pass());
  GemmCheck zero;  // a row the starter's stand-in never computed
  zero.add(5, 0.0, 2.5, tol);
  EXPECT_FALSE(zero.pass());
  EXPECT_EQ(zero.first_bad, 5);
  GemmCheck none;
  EXPECT_FALSE(none.pass()) << "nothing checked is not a pass";
}

TEST(SweepRanking, OverlappingRangesTieAndATieIsAChainOfOverlaps) {
  // a [1.0, 1.1] and b [1.05, 1.2] overlap; e [1.15, 1.5] overlaps b; c [1.3, 1.4] overlaps
  // e. So all four are one chain, one tie, rank 1, although a and c do not overlap (a beats
  // c). d was not timed (failed): rank 0, no tie.
  const std::vector<TimeRange> r = {{1.0, 1.1, true},
                                    {1.05, 1.2, true},
                                    {1.3, 1.4, true},
                                    {0.1, 0.2, false},
                                    {1.15, 1.5, true}};
  const std::vector<int> rank = ranksOf(r), tie = tiesOf(rank);
  EXPECT_EQ(rank, (std::vector<int>{1, 1, 1, 0, 1}));
  EXPECT_EQ(tie, (std::vector<int>{3, 3, 3, 0, 3}));
}

TEST(SweepRanking, SeparatedRangesRankInOrderAndOnePointIsFirst) {
  const std::vector<TimeRange> r = {{3.0, 3.1, true}, {1.0, 1.1, true}, {2.0, 2.1, true}};
  EXPECT_EQ(ranksOf(r), (std::vector<int>{3, 1, 2}));
  EXPECT_EQ(tiesOf(ranksOf(r)), (std::vector<int>{0, 0, 0}));
  const std::vector<TimeRange> same = {{1.0, 1.0, true}, {1.0, 1.0, true}};
  EXPECT_EQ(ranksOf(same), (std::vector<int>{1, 1})) << "equal samples tie";
  const std::vector<TimeRange> touch = {{2.0, 3.0, true}, {1.0, 2.0, true}};
  EXPECT_EQ(ranksOf(touch), (std::vector<int>{1, 1})) << "ranges sharing an end overlap";
}

TEST(SweepRanking, ARankSkipsTheTiedPointsAbove) {
  // Group {b, c} is first, then a alone, then {d, e}: ranks 1, 1, 3, 4, 4.
  const std::vector<TimeRange> r = {{2.0, 2.1, true},
                                    {1.0, 1.2, true},
                                    {1.1, 1.3, true},
                                    {3.0, 3.5, true},
                                    {3.4, 3.6, true}};
  EXPECT_EQ(ranksOf(r), (std::vector<int>{3, 1, 1, 4, 4}));
  EXPECT_EQ(tiesOf(ranksOf(r)), (std::vector<int>{0, 1, 1, 1, 1}));
}

// The rule's promises, on many generated rankings: overlapping points share a rank; points
// of different ranks do not overlap, the lower rank entirely faster; rank = 1 + the points
// of lower rank; and a group is connected (it cannot be split into two parts that do not
// overlap).
TEST(SweepRanking, TheRulesPromisesHoldOnGeneratedRanges) {
  unsigned s = 7u;
  auto next = [&s](int mod) { return int((s = 1664525u * s + 1013904223u) >> 8) % mod; };
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<TimeRange> r(size_t(1 + next(27)));
    for (TimeRange& t : r) {
      t.min_ms = 1.0 + 0.01 * next(100);
      t.max_ms = t.min_ms + 0.01 * next(20);
      t.timed = next(10) != 0;
    }
    const std::vector<int> rank = ranksOf(r);
    for (size_t i = 0; i < r.size(); ++i) {
      ASSERT_EQ(rank[i] > 0, r[i].timed);
      if (!r[i].timed) continue;
      int lower = 0;
      for (size_t j = 0; j < r.size(); ++j) {
        if (!r[j].timed) continue;
        const bool overlap = r[i].min_ms <= r[j].max_ms && r[j].min_ms <= r[i].max_ms;
        if (overlap) ASSERT_EQ(rank[i], rank[j]) << "trial " << trial;
        if (rank[j] < rank[i]) ASSERT_LT(r[j].max_ms, r[i].min_ms) << "trial " << trial;
        lower += rank[j] < rank[i];
      }
      ASSERT_EQ(rank[i], 1 + lower);
      // Connected: sorted by min, each point of the group but the first starts at or
      // before the largest max of the group's points before it.
      std::vector<TimeRange> group;
      for (size_t j = 0; j < r.size(); ++j)
        if (r[j].timed && rank[j] == rank[i]) group.push_back(r[j]);
      std::sort(group.begin(), group.end(),
                [](const TimeRange& a, const TimeRange& b) { return a.min_ms < b.min_ms; });
      double reach = group[0].max_ms;
      for (size_t g = 1; g < group.size(); ++g) {
        ASSERT_LE(group[g].min_ms, reach) << "trial " << trial;
        reach = std::max(reach, group[g].max_ms);
      }
    }
  }
}

TEST(SweepRanking, RangesAreRankedAsTheCsvPrintsThem) {
  EXPECT_EQ(asPrintedMs(0.14004999), 0.14);
  EXPECT_EQ(asPrintedMs(0.13996), std::strtod("0.1400", nullptr)) << "what %.4f prints";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", asPrintedMs(0.15399));
  EXPECT_STREQ(text, "0.1540");
  // Raw ranges 1e-5 ms apart that print alike overlap as printed: a tie.
  const std::vector<TimeRange> r = {{asPrintedMs(0.10001), asPrintedMs(0.15001), true},
                                    {asPrintedMs(0.15004), asPrintedMs(0.16), true}};
  EXPECT_EQ(ranksOf(r), (std::vector<int>{1, 1}));
  EXPECT_EQ(std::string(kTieRule).rfind("Tie rule: ", 0), 0u);
}

// What printFailures writes for a set of results (timed = passed and timed).
std::string failuresText(const std::vector<bool>& timed, long long m = 1024) {
  std::vector<PointResult> res(kPointCount);
  for (int i = 0; i < kPointCount; ++i) {
    res[size_t(i)].skip = skipReason(kPoints[i], m, 65535);
    res[size_t(i)].timed = res[size_t(i)].skip.empty() && timed[size_t(i)];
  }
  std::FILE* f = std::tmpfile();
  printFailures(res, f);
  std::rewind(f);
  std::string text;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) text += static_cast<char>(c);
  std::fclose(f);
  return text;
}

TEST(SweepStarter, TheStandInIsRecognisedByWhatItDoes) {
  std::vector<bool> all(kPointCount, true), standIn(kPointCount), co4Only(kPointCount, true);
  for (int i = 0; i < kPointCount; ++i) standIn[size_t(i)] = kPoints[i].co == 1;
  for (int i = 0; i < kPointCount; ++i) co4Only[size_t(i)] = kPoints[i].co != 4;
  EXPECT_EQ(failuresText(all), "") << "a passing sweep says nothing";
  EXPECT_EQ(failuresText(standIn).rfind("Left to write: the coarsened inner loop", 0), 0u);
  EXPECT_EQ(failuresText(standIn, 300000).rfind("Left to write:", 0), 0u)
      << "points that cannot launch do not count";
  EXPECT_EQ(failuresText(co4Only), "") << "another bug: the GATE lines speak, no guess";
  std::vector<bool> co1Fails = standIn;
  co1Fails[0] = false;
  EXPECT_EQ(failuresText(co1Fails), "");
}

}  // namespace
