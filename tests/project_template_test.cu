// Host-side tests of the final project's template (no GPU needed): the strict
// command line (common block cli), the size and launch gates, the check, and
// the metrics. Every gate is shown to fire on a planted defect.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#define main lesson_main
#include "../lessons/project_template.cu"
#undef main

namespace {

// parseOptions on a command line given as words (the program name is added).
Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "project_template");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  CommandLine cl(static_cast<int>(argv.size()), argv.data(), usageText());
  return parseOptions(cl);
}

TEST(ProjectTemplateCli, IntegerTokensAreWholeBase10AndInRange) {
  long long v = -1;
  EXPECT_TRUE(parseIntToken("0", 0, 10, &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(parseIntToken("16777216", 0, kMaxDim, &v));
  EXPECT_EQ(v, kMaxDim);
  EXPECT_TRUE(parseIntToken("-3", -5, 5, &v));
  EXPECT_EQ(v, -3);
  v = 42;
  for (const char* bad : {"", " 5", "5 ", "12x", "0x10", "1e3", "1.5", "abc", "+-5", "-"})
    EXPECT_FALSE(parseIntToken(bad, 0, kMaxDim, &v)) << '"' << bad << '"';
  EXPECT_FALSE(parseIntToken(nullptr, 0, 10, &v));
  EXPECT_FALSE(parseIntToken("16777217", 0, kMaxDim, &v));                 // above the range
  EXPECT_FALSE(parseIntToken("-1", 0, kMaxDim, &v));                       // below it
  EXPECT_FALSE(parseIntToken("9223372036854775808", 0, LLONG_MAX, &v));    // overflows int64
  EXPECT_FALSE(parseIntToken("-9223372036854775809", LLONG_MIN, 0, &v));   // and below
  EXPECT_EQ(v, 42) << "a refused token leaves the output alone";
}

TEST(ProjectTemplateCli, RealTokensAreWholeDecimalFiniteAndInRange) {
  double v = -1.0;
  EXPECT_TRUE(parseRealToken("0.001", 0.0, 1.0, &v));
  EXPECT_EQ(v, 0.001);
  EXPECT_TRUE(parseRealToken("1", 0.0, 1.0, &v));
  EXPECT_TRUE(parseRealToken(".5", 0.0, 1.0, &v));
  EXPECT_TRUE(parseRealToken("+5e-1", 0.0, 1.0, &v));
  EXPECT_EQ(v, 0.5);
  EXPECT_TRUE(parseRealToken("0e-400", 0.0, 1.0, &v)) << "an exact zero does not underflow";
  EXPECT_EQ(v, 0.0);
  v = 42.0;
  for (const char* bad : {"", " 1", "1 ", "nan", "NaN", "inf", "-inf", "infinity", "1e999",
                          "-1", "2", "1e-3x", "abc", "0.5.5", ".", "1e", "e5",
                          "0x1p-7", "0x1p3", "0X.8p0",  // hex floats: strtod reads them
                          "1e-400",                     // underflows to 0
                          "1e-310"})                    // underflows to a subnormal
    EXPECT_FALSE(parseRealToken(bad, 0.0, 1.0, &v)) << '"' << bad << '"';
  EXPECT_FALSE(parseRealToken(nullptr, 0.0, 1.0, &v));
  EXPECT_EQ(v, 42.0) << "a refused token leaves the output alone";
}

TEST(ProjectTemplateCli, DefaultsLastOccurrenceWinsAndRanges) {
  const Options d = parse({});
  EXPECT_EQ(d.m, 1024);
  EXPECT_EQ(d.n, 1024);
  EXPECT_EQ(d.k, 1024);
  EXPECT_EQ(d.tile, 16);
  EXPECT_EQ(d.bs, 256);
  EXPECT_EQ(d.iters, 20);
  EXPECT_LT(d.rtol, 0.0) << "no -rtol: the K-scaled default";
  EXPECT_LT(d.atol, 0.0) << "no -atol: rtol * max|ref|";
  const Options o = parse({"-m", "5", "-m", "7", "-k", "0", "-tile", "64", "-bs", "1024",
                           "-iters", "1", "-rtol", "0", "-atol", "1"});
  EXPECT_EQ(o.m, 7);
  EXPECT_EQ(o.k, 0);
  EXPECT_EQ(o.tile, 64);
  EXPECT_EQ(o.bs, 1024);
  EXPECT_EQ(o.iters, 1);
  EXPECT_EQ(o.rtol, 0.0);
  EXPECT_EQ(o.atol, 1.0);
}

TEST(ProjectTemplateCliDeathTest, BadCommandLinesExit2WithOneNamedLineThenUsage) {
  const auto usage = ::testing::ExitedWithCode(kExitBadCommandLine);
  EXPECT_EXIT(parse({"-m", "abc"}), usage,
              "^error: -m expects an integer in \\[0, 16777216\\], got \"abc\"\nusage: ");
  EXPECT_EXIT(parse({"-m"}), usage, "^error: -m expects an integer .* got nothing\nusage: ");
  EXPECT_EXIT(parse({"-k", "12x"}), usage, "^error: -k expects an integer");
  EXPECT_EXIT(parse({"-rtol", "nan"}), usage,
              "^error: -rtol expects a decimal number in \\[0, 1\\] \\(no hex, inf, nan, "
              "overflow or underflow\\), got \"nan\"\nusage: ");
  EXPECT_EXIT(parse({"-rtol", "1e-400"}), usage, "^error: -rtol expects a decimal number");
  EXPECT_EXIT(parse({"-rtol", "0x1p3"}), usage, "^error: -rtol expects a decimal number");
  EXPECT_EXIT(parse({"-atol", "-1"}), usage, "^error: -atol expects a decimal number");
  EXPECT_EXIT(parse({"-tile", "0"}), usage, "^error: -tile expects an integer");
  EXPECT_EXIT(parse({"-iters", "0"}), usage, "^error: -iters expects an integer");
  EXPECT_EXIT(parse({"-bs", "100"}), usage,
              "^error: -bs must be a multiple of -tile \\(16\\), got 100\n");
  EXPECT_EXIT(parse({"-x"}), usage, "^error: unknown option \"-x\"");
  EXPECT_EXIT(parse({"-m", "20000", "-n", "20000", "-k", "20000"}), usage,
              "^error: -m, -n, -k: the host buffers would need 7.45 GiB \\(A, B, C and the double "
              "reference\\)");
}

TEST(ProjectTemplateCliDeathTest, AFailedWriteToStdoutExits1WithOneLine) {
  // CSV into a full disk: the exit check registered by CommandLine turns
  // any exit, even exit 0, into exit 1 with one line on stderr.
  EXPECT_EXIT(
      {
        if (std::freopen("/dev/full", "w", stdout) == nullptr) std::exit(3);
        parse({"-m", "5"});
        std::printf("a line nobody can store\n");
        std::exit(0);
      },
      ::testing::ExitedWithCode(1), "^error: writing to stdout failed .*\n$");
  EXPECT_EXIT(
      {
        if (std::freopen("/dev/full", "w", stdout) == nullptr) std::exit(3);
        parse({"--help"});
      },
      ::testing::ExitedWithCode(1), "^error: writing to stdout failed");
}

TEST(ProjectTemplateCliDeathTest, HelpPrintsUsageToStdoutAndExits0) {
  EXPECT_EXIT(parse({"-m", "5", "--help"}), ::testing::ExitedWithCode(0), "^$");
  EXPECT_EXIT(parse({"-h"}), ::testing::ExitedWithCode(0), "^$");
}

TEST(ProjectTemplateCli, UsageStatesTheRangesTheParserUses) {
  const std::string u = usageText();
  EXPECT_NE(u.find("integers in [0, 16777216] (default 1024 each)"), std::string::npos) << u;
  EXPECT_NE(u.find("an integer in [1, 64]"), std::string::npos) << u;
  EXPECT_NE(u.find("an integer in [1, 1024] and a multiple"), std::string::npos) << u;
  EXPECT_NE(u.find("an integer in [1, 10000] (default 20)"), std::string::npos) << u;
  EXPECT_NE(u.find("decimal numbers in [0, 1]; an element passes"), std::string::npos) << u;
  EXPECT_NE(u.find("(default R = max(1e-5,\n"), std::string::npos) << u;
}

TEST(ProjectTemplateGates, HostMemoryBoundCountsEveryHostBuffer) {
  Options o;
  EXPECT_EQ(hostBytes(o), 4LL * (2 << 20) + 12LL * (1 << 20));  // 20 MiB at 1024^3
  o.m = o.n = o.k = 20000;
  EXPECT_GT(hostBytes(o), kMaxHostBytes);
  o.m = o.n = o.k = 8192;
  EXPECT_LE(hostBytes(o), kMaxHostBytes);
}

TEST(ProjectTemplateGates, GeometryOfTheRecordedRuns) {
  Options o;
  Geometry g = geometryFor(o);
  EXPECT_EQ(g.tile, 16);
  EXPECT_EQ(g.rows, 16);
  EXPECT_EQ(g.grid_x, 64);
  EXPECT_EQ(g.grid_y, 64);
  EXPECT_EQ(g.panel_bytes, 2048);
  o.m = 1025;
  o.n = 1023;
  g = geometryFor(o);
  EXPECT_EQ(g.grid_x, 64);
  EXPECT_EQ(g.grid_y, 65);
  o.tile = 64;
  o.bs = 1024;
  EXPECT_EQ(geometryFor(o).panel_bytes, (1024 + 64 * 64) * 4) << "the largest legal need";
}

// Limits as an H200 reports them (the kernel's own thread limit assumed 1024).
DeviceLimits h200() { return DeviceLimits{1024, 1024, 1024, 2147483647, 65535}; }

TEST(ProjectTemplateGates, LegalExtremesFitARealDevice) {
  Options o;
  for (int tile : {1, 16, 64})
    for (int bs : {tile, 1024 / tile * tile}) {
      o.tile = tile;
      o.bs = bs;
      o.m = std::min<long long>(65535LL * (bs / tile), kMaxDim);
      o.n = kMaxDim;
      EXPECT_EQ(launchProblem(o, geometryFor(o), h200()), "") << tile << " " << bs;
    }
}

TEST(ProjectTemplateGates, EachLaunchLimitFiresOnAPlantedSmallerDevice) {
  Options o;
  const Geometry g = geometryFor(o);
  DeviceLimits lim = h200();
  lim.kernel_threads = 128;  // a kernel with many registers
  EXPECT_EQ(launchProblem(o, g, lim).rfind("-bs 256: this kernel runs at most 128", 0), 0u);
  lim = h200();
  lim.block_y = 8;
  EXPECT_EQ(launchProblem(o, g, lim).rfind("-bs 256 / -tile 16: block (16, 16)", 0), 0u);
  lim = h200();
  lim.grid_y = 63;
  EXPECT_EQ(launchProblem(o, g, lim).rfind("-m 1024: grid.y = ceil(M / 16) = 64", 0), 0u);
  lim = h200();
  lim.grid_x = 63;
  EXPECT_EQ(launchProblem(o, g, lim).rfind("-n 1024: grid.x = ceil(N / 16) = 64", 0), 0u);
  // grid.y fires on a real device too: 2^20 rows of 16-row blocks.
  o.m = 1 << 20;
  EXPECT_NE(launchProblem(o, geometryFor(o), h200()).find("grid.y = ceil(M / 16) = 65536"),
            std::string::npos);
}

TEST(ProjectTemplateCheck, NaNInfinityAndThePoisonFail) {
  const double ref[3] = {1.0, -2.0, 0.0};
  float poison;
  const unsigned int allOnes = 0xFFFFFFFFu;
  std::memcpy(&poison, &allOnes, sizeof poison);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (float bad : {poison, nan, inf, -inf}) {
    const float got[3] = {1.0f, bad, 0.0f};
    const GemmCheck r = checkElements(got, ref, 3, Tolerance{1e-3, 1e-3});
    EXPECT_EQ(r.failures, 1);
    EXPECT_EQ(r.first_bad, 1);
    EXPECT_EQ(r.worst, 1);
    EXPECT_FALSE(std::isfinite(r.worst_score));
    EXPECT_FALSE(std::isfinite(r.max_abs_err)) << "a NaN or an infinity stays visible";
    EXPECT_FALSE(r.pass());
  }
  const float good[3] = {1.0f, -2.0f, 0.0f};
  EXPECT_TRUE(checkElements(good, ref, 3, Tolerance{0.0, 0.0}).pass());
  EXPECT_FALSE(GemmCheck().pass()) << "nothing checked is no pass";
}

TEST(ProjectTemplateCheck, AFirstNanStaysWorstAndTheFirstFailureIsNamed) {
  const double ref[4] = {1.0, 2.0, 3.0, 4.0};
  const float got[4] = {1.5f, std::numeric_limits<float>::quiet_NaN(), 30.0f, 4.0f};
  const GemmCheck r = checkElements(got, ref, 4, Tolerance{0.0, 0.25});
  EXPECT_EQ(r.failures, 3);
  EXPECT_EQ(r.first_bad, 0);
  EXPECT_EQ(r.first_got, 1.5);
  EXPECT_EQ(r.first_tol, 0.25);
  EXPECT_EQ(r.worst, 1) << "a larger finite error after a NaN does not hide it";
  EXPECT_TRUE(std::isnan(r.max_abs_err));
  EXPECT_EQ(r.describe("tiled", 2), "tiled: 3 of 4 elements outside the tolerance, the first at "
                                    "(0, 0): got 1.5, ref 1");
}

TEST(ProjectTemplateCheck, TheToleranceIsKScaledUnlessTheCommandLineGivesOne) {
  EXPECT_EQ(rtolForK(0), 1e-5);
  EXPECT_EQ(rtolForK(100), 1e-5) << "below K = 412 the floor holds";
  EXPECT_EQ(rtolForK(1024), 4.0 * 32.0 * std::ldexp(1.0, -23));
  const Tolerance k = gemmTolerance(1024, 10.0);
  EXPECT_EQ(k.rtol, rtolForK(1024));
  EXPECT_EQ(k.atol, 10.0 * rtolForK(1024));
  const Tolerance r = gemmTolerance(1024, 10.0, 1e-3);
  EXPECT_EQ(r.rtol, 1e-3);
  EXPECT_EQ(r.atol, 1e-2) << "atol defaults to rtol * max|ref| with the rtol given";
  const Tolerance both = gemmTolerance(1024, 10.0, 0.0, 0.5);
  EXPECT_EQ(both.rtol, 0.0);
  EXPECT_EQ(both.atol, 0.5);
  const double ref[3] = {-3.0, 2.0, 0.5};
  EXPECT_EQ(maxAbs(ref, 3), 3.0);
  EXPECT_EQ(maxAbs(ref, 0), 0.0);
}

TEST(ProjectTemplateCheck, TheCheckLineSaysWhereEachToleranceCameFrom) {
  const double ref[2] = {1.0, -2.0};
  const float got[2] = {1.0f, -2.0f};
  Options o;
  o.m = 1, o.n = 2;
  const auto line = [&](const Options& opt) {
    const Tolerance tol = gemmTolerance(1024, maxAbs(ref, 2), opt.rtol, opt.atol);
    ::testing::internal::CaptureStdout();
    printCheck(checkElements(got, ref, 2, tol), opt, tol);
    const std::string out = ::testing::internal::GetCapturedStdout();
    return out.substr(0, out.find('\n'));
  };
  EXPECT_EQ(line(o), "Check: PASS, all 2 elements within |got - ref| <= atol + rtol*|ref| (rtol "
                     "1.526e-05: max(1e-5, 4 * 2^-23 * sqrt(K)), atol 3.052e-05: rtol * max|ref|)");
  o.rtol = 1e-3;
  EXPECT_EQ(line(o), "Check: PASS, all 2 elements within |got - ref| <= atol + rtol*|ref| (rtol "
                     "1.000e-03: -rtol, atol 2.000e-03: rtol * max|ref|)");
  o.atol = 0.0;
  EXPECT_EQ(line(o), "Check: PASS, all 2 elements within |got - ref| <= atol + rtol*|ref| (rtol "
                     "1.000e-03: -rtol, atol 0.000e+00: -atol)");
}

TEST(ProjectTemplateCheckDeathTest, AFailedHostAllocationIsOneLineAndExit1) {
  EXPECT_EXIT(hostVector<float>(1LL << 60, "C"), ::testing::ExitedWithCode(1),
              "^host allocation failed: C, 4611686018427387904 bytes\n$");
}

TEST(ProjectTemplateCheck, WorstScoreIsErrorOverToleranceNotOverRef) {
  // Element 0: error 2^-14 where ref is 2^-20 (d / |ref| = 64, yet harmless);
  // element 1: error 2^-11 at ref 0.125 (d / t = 0.434, the real worst).
  // All values are exact in float, so the expected scores are exact too.
  const double tiny = std::ldexp(1.0, -20), e0 = std::ldexp(1.0, -14), e1 = std::ldexp(1.0, -11);
  const double ref[2] = {tiny, 0.125};
  const float got[2] = {static_cast<float>(tiny + e0), static_cast<float>(0.125 + e1)};
  const GemmCheck r = checkElements(got, ref, 2, Tolerance{1e-3, 1e-3});
  EXPECT_EQ(r.failures, 0);
  EXPECT_EQ(r.worst, 1);
  EXPECT_EQ(r.worst_diff, e1);
  EXPECT_EQ(r.worst_tol, 1e-3 + 1e-3 * 0.125);
  EXPECT_EQ(r.worst_score, e1 / (1e-3 + 1e-3 * 0.125));
  EXPECT_EQ(r.max_abs_err, e1);
}

TEST(ProjectTemplateCheck, BoundaryAndZeroTolerance) {
  const double ref[1] = {0.0};
  const float atLimit[1] = {0.5f};
  EXPECT_EQ(checkElements(atLimit, ref, 1, Tolerance{0.0, 0.5}).failures, 0) << "d == t passes";
  EXPECT_EQ(checkElements(atLimit, ref, 1, Tolerance{0.0, 0.25}).failures, 1);
  const float exact[1] = {0.0f};
  const GemmCheck r = checkElements(exact, ref, 1, Tolerance{0.0, 0.0});
  EXPECT_EQ(r.failures, 0);
  EXPECT_EQ(r.worst_score, 0.0) << "0 / 0 is a perfect score, not NaN";
  const GemmCheck off = checkElements(atLimit, ref, 1, Tolerance{0.0, 0.0});
  EXPECT_EQ(off.failures, 1);
  EXPECT_FALSE(std::isfinite(off.worst_score));
}

TEST(ProjectTemplateMetrics, TrafficModels) {
  Options o;
  o.m = o.n = o.k = 1;
  EXPECT_EQ(compulsoryBytes(o), 12.0);
  EXPECT_EQ(modelledBytes(o, geometryFor(o), 2.0), 12.0) << "one load of A, one of B, one store";
  o.m = o.n = o.k = 1024;
  // Divisible sizes: the origin's 4MNK(1/T + 1/R), plus the C write it left out.
  EXPECT_EQ(modelledBytes(o, geometryFor(o), 2.0), 4.0 * 1024 * 1024 * 1024 * (2.0 / 16) +
                                                       4.0 * 1024 * 1024);
  // Untiled (no shared-memory loads): 8 bytes per multiply-add, plus the C write.
  EXPECT_EQ(modelledBytes(o, geometryFor(o), 0.0), 8.0 * 1024 * 1024 * 1024 + 4.0 * 1024 * 1024);
  EXPECT_EQ(compulsoryBytes(o), 12.0 * 1024 * 1024);
  o.k = 0;  // K = 0: only the C write, so AI = 0 and no 0/0
  EXPECT_EQ(compulsoryBytes(o), 4.0 * 1024 * 1024);
  EXPECT_EQ(modelledBytes(o, geometryFor(o), 2.0), 4.0 * 1024 * 1024);
}

TEST(ProjectTemplateMetrics, RooflineIsTheMinimumAndRatesAreNeverNaN) {
  Ceilings c{};
  c.copy_gbs = 4000.0;
  c.fp32_gflops = 60000.0;
  EXPECT_EQ(rooflineGflops(c, 4.0), 16000.0);     // bandwidth side
  EXPECT_EQ(rooflineGflops(c, 171.0), 60000.0);   // compute side
  EXPECT_EQ(rooflineGflops(c, 0.0), 0.0);         // K = 0: printed as n/a
  EXPECT_EQ(gflopsAt(2e9, 1.0), 2000.0);
  EXPECT_EQ(gflopsAt(0.0, 0.5), 0.0);
  EXPECT_LT(gflopsAt(2e9, 0.0), 0.0) << "a zero time is n/a, never inf";
}

TEST(ProjectTemplateInputs, GeneratorMatchesTheSpec) {
  std::vector<float> A(3), B(2);
  fillInputs(A, B);
  uint32_t s = kSeed;  // s <- 1664525 s + 1013904223 mod 2^32, then 24 bits
  for (float v : {A[0], A[1], A[2], B[0], B[1]}) {
    s = 1664525u * s + 1013904223u;
    EXPECT_EQ(v, 2.0f * static_cast<float>(s >> 8) / 16777216.0f - 1.0f);
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
  Lcg g{12345u};  // the other mapping the course uses, u - 0.5 (sweep, report_data)
  std::vector<float> x(2);
  g.fill(x, 1.0f, -0.5f);
  s = 12345u;
  for (float v : x) {
    s = 1664525u * s + 1013904223u;
    EXPECT_EQ(v, static_cast<float>(s >> 8) / 16777216.0f - 0.5f);
  }
  EXPECT_EQ(g.s, s) << "a fill continues the state: B follows A";
}

TEST(ProjectTemplateTilingGate, FiresOnAKernelWithoutRoomForItsPanels) {
  Options o;
  const Geometry g = geometryFor(o);
  EXPECT_EQ(tilingProblem(0, g).rfind("gemmTiledKernel declares 0 bytes of shared memory, fewer "
                                      "than the 2048 bytes of the A and B panels of tile 16 and "
                                      "16 rows", 0), 0u)
      << "the untiled stand-in declares none";
  EXPECT_NE(tilingProblem(2047, g), "");
  EXPECT_EQ(tilingProblem(2048, g), "");
  // The lesson's kernel declares room for the largest legal launch (20 KiB),
  // so the gate holds for every -tile and -bs the command line accepts.
  const long long declared = (kMaxBlockThreads + kMaxTile * kMaxTile) * sizeof(float);
  for (int tile = 1; tile <= kMaxTile; ++tile)
    for (int bs = tile; bs <= kMaxBlockThreads; bs += tile) {
      o.tile = tile;
      o.bs = bs;
      ASSERT_EQ(tilingProblem(declared, geometryFor(o)), "") << tile << " " << bs;
    }
}

std::string ridgeLine(double fp32Bound, double dramBound, double l2Bytes, const Options& o) {
  Ceilings c{};
  c.fp32_bound_gflops = fp32Bound;
  c.dram_bound_gbs = dramBound;
  c.l2_bytes = l2Bytes;
  const double flop = 2.0 * o.m * o.n * o.k;
  ::testing::internal::CaptureStdout();
  printRidge(c, flop, compulsoryBytes(o), modelledBytes(o, geometryFor(o), 2.0));
  return ::testing::internal::GetCapturedStdout();
}

TEST(ProjectTemplateMetrics, RidgePointSaysWhichRoofEachModelSitsUnder) {
  Options o;  // 1024^3, tile 16 x 16: compulsory AI 170.67, modelled AI 3.97
  // H200 bounds (66908.2 GFLOP/s, 4814.4 GB/s): ridge 13.90 FLOP/B, 60 MiB L2.
  EXPECT_EQ(ridgeLine(66908.16, 4814.4, 60.0 * 1048576, o),
            "[device] ridge point = FP32 bound / DRAM bound = 13.90 FLOP/B; compulsory AI "
            "170.67 above: compute roof, modelled AI 3.97 below: bandwidth roof; A, B and C "
            "(12.58 MB) fit in the 60 MiB L2\n");
  // A T4 (8.1 TFLOP/s, 320 GB/s): ridge 25.4; the 4 MiB L2 is exceeded.
  EXPECT_NE(ridgeLine(8141, 320, 4.0 * 1048576, o).find("25.44 FLOP/B; compulsory AI 170.67 "
                                                        "above: compute roof, modelled AI "
                                                        "3.97 below: bandwidth roof; A, B and "
                                                        "C (12.58 MB) exceed the 4 MiB L2"),
            std::string::npos);
  EXPECT_NE(ridgeLine(0, 320, 4.0 * 1048576, o).find("= n/a (a bound is unknown); A, B"),
            std::string::npos);
}

// The binding-roof line from bounds as the attributes give them (see ridgeLine above), for a
// kernel that declares `declared` bytes of shared memory (the lesson's: room for every launch).
constexpr long long kLessonDeclares = (kMaxBlockThreads + kMaxTile * kMaxTile) * sizeof(float);
std::string bindingLine(int sms, int mhz, int lanes, int memMhz, int bus, const Options& o,
                        long long declared = kLessonDeclares) {
  Ceilings c{};
  c.fp32_bound_gflops = 2.0 * sms * lanes * mhz / 1e3;
  c.dram_bound_gbs = 2.0 * memMhz * bus / 8 / 1e3;
  SmemRoof s{};
  s.bound_gbs = double(sms) * 32 * 4 * mhz / 1e3;
  ::testing::internal::CaptureStdout();
  printBindingRoof(c, s, 2.0 * o.m * o.n * o.k, compulsoryBytes(o),
                   smemLoadsPerFma(declared, geometryFor(o)));
  return ::testing::internal::GetCapturedStdout();
}

TEST(ProjectTemplateMetrics, SharedMemoryBindsTheTiledKernelAtTheDefaultSize) {
  Options o;  // 1024^3: compulsory AI 170.67
  EXPECT_EQ(bindingLine(132, 1980, 128, 3201, 6016, o),
            "[device] roofs from the attribute bounds at the compulsory AI: FP32 66908.2 GFLOP/s, "
            "DRAM 4814.3 GB/s x 170.67 FLOP/B = 821641.2 GFLOP/s, shared memory 33454.1 GB/s x 2 "
            "FLOP / 8 bytes = 8363.5 GFLOP/s = FP32 bound / 8.00 (0: unknown); lowest roof: shared "
            "memory\n")
      << "an H200: 2 loads of 4 bytes per FMA allow 1/8 of its 128 lanes";
  EXPECT_NE(bindingLine(40, 1590, 64, 5001, 256, o).find("= FP32 bound / 4.00 (0: unknown); "
                                                        "lowest roof: shared memory"),
            std::string::npos)
      << "a T4: 1/4 of its 64 lanes";
  o.m = o.n = o.k = 1;  // AI 1/6: DRAM binds
  EXPECT_NE(bindingLine(132, 1980, 128, 3201, 6016, o).find("lowest roof: DRAM"), std::string::npos);
  o.k = 0;
  EXPECT_EQ(bindingLine(132, 1980, 128, 3201, 6016, o),
            "[device] roofs from the attribute bounds at the compulsory AI: n/a (no "
            "floating-point work)\n");
  o.k = 1024;
  EXPECT_NE(bindingLine(132, 1980, 0, 3201, 6016, o).find("FP32 0.0 GFLOP/s"), std::string::npos)
      << "no lane count: the FP32 bound is unknown and named 0";
  EXPECT_EQ(smemLoadsPerFma(kLessonDeclares, geometryFor(o)), 2.0) << "As and Bs, once per FMA";
}

// A starter run tells no story its kernel contradicts: the untiled stand-in declares 0 bytes
// of shared memory (the tiling gate fires), so every line about the kernel uses the untiled
// model: 8 bytes per multiply-add from global memory, no shared-memory roof.
TEST(ProjectTemplateMetrics, AnUntiledKernelGetsTheUntiledModelNotTheTiledOne) {
  Options o;  // the starter's default run, 1024^3
  const Geometry g = geometryFor(o);
  ASSERT_NE(tilingProblem(0, g), "") << "the gate says the stand-in is not tiled";
  EXPECT_EQ(smemLoadsPerFma(0, g), 0.0);
  EXPECT_EQ(smemLoadsPerFma(g.panel_bytes - 1, g), 0.0) << "too small for its panels: untiled";
  EXPECT_EQ(modelledBytes(o, g, smemLoadsPerFma(0, g)), 8.0 * 1024 * 1024 * 1024 + 4.0 * 1024 * 1024)
      << "the stand-in's traffic, not the tiled kernel's 541.07 MB";
  for (const auto& gpu : {std::vector<int>{132, 1980, 128, 3201, 6016},    // an H200
                          std::vector<int>{40, 1590, 64, 5001, 256}}) {   // a T4
    const std::string line = bindingLine(gpu[0], gpu[1], gpu[2], gpu[3], gpu[4], o, 0);
    EXPECT_EQ(line.find("shared memory"), std::string::npos) << line;
    EXPECT_NE(line.find("no shared-memory roof (untiled model) (0: unknown); lowest roof: FP32\n"),
              std::string::npos) << line;
  }
  SmemRoof s{};
  s.measured_gbs = 32000.0;
  ::testing::internal::CaptureStdout();
  placeOnSmemRoof(2.0, 4000.0, s, smemLoadsPerFma(0, g));
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            "  shared-memory loads: none (the kernel does not hold its panels: untiled model), no "
            "shared-memory roof\n");
  // The ridge line places the untiled model's AI (2 / 8.004 = 0.25 FLOP/B), not the tiled 3.97.
  Ceilings c{};
  c.fp32_bound_gflops = 66908.16, c.dram_bound_gbs = 4814.4, c.l2_bytes = 60.0 * 1048576;
  ::testing::internal::CaptureStdout();
  printRidge(c, 2.0 * 1024 * 1024 * 1024, compulsoryBytes(o), modelledBytes(o, g, 0.0));
  EXPECT_NE(::testing::internal::GetCapturedStdout().find("modelled AI 0.25 below"),
            std::string::npos);
}

TEST(ProjectTemplateMetrics, TheSmemCeilingIsTheMeasuredBandwidthOverFourBytesPerFlop) {
  SmemRoof s{};
  s.measured_gbs = 32000.0;
  ::testing::internal::CaptureStdout();
  placeOnSmemRoof(2.0, 4000.0, s, 2.0);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            "  shared-memory loads: 2 per multiply-add, 8 bytes for 2 FLOP\n    ceiling = measured "
            "shared-memory bandwidth x 2 FLOP / 8 bytes = 8000.0 GFLOP/s, the median at 50.0% of "
            "measured ceiling\n");
  ::testing::internal::CaptureStdout();
  placeOnSmemRoof(0.0, 0.0, s, 2.0);  // K = 0: no multiply-add, no share of any roof
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            "  shared-memory loads: 2 per multiply-add, 8 bytes for 2 FLOP\n    ceiling = measured "
            "shared-memory bandwidth x 2 FLOP / 8 bytes = 8000.0 GFLOP/s, share n/a (no floating-point "
            "work)\n");
}

}  // namespace
