// Host-side tests of the final project's report_data (no GPU needed): the strict command line and
// the work it may ask for, the size ladder, the sampled rows, the byte models, the check (NaN and
// infinity fail), the verification ladder judged on host outputs, planted errors included, the
// shared-memory roof and the binding roof, and the CSV row's shape.
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

TEST(ReportDataCliDeathTest, TooMuchWorkIsRefusedBeforeAnyCudaCall) {
  const auto usage = ::testing::ExitedWithCode(kExitBadCommandLine);
  EXPECT_EXIT(parse({"-maxn", "4096", "-iters", "10000"}), usage,
              "^error: -maxn 4096 with -iters 10000 and -warmups 3 asks for [0-9.]+ TFLOP of GEMM "
              "launches");
  EXPECT_EXIT(parse({"-iters", "300"}), usage, "^error: -maxn 2048 with -iters 300 and -warmups 3 asks for");
  EXPECT_LE(workFlop(kDefaultMaxN, kWarmups, kDefaultIters), kMaxWorkFlop / 5) << "the default run is small";
  EXPECT_LE(workFlop(kMaxN, kWarmups, kDefaultIters), kMaxWorkFlop) << "-maxn 4096 runs at the default iters";
  EXPECT_LE(workFlop(kLadder[0], kMaxWarmups, kMaxIters), kMaxWorkFlop) << "-maxn 128 runs at any iters";
  const Options o = parse({"-maxn", "128", "-iters", "10000"});
  EXPECT_EQ(o.iters, 10000);
  EXPECT_EQ(o.warmups, kWarmups);
  EXPECT_EQ(parse({"-maxn", "300", "-iters", "1", "-warmups", "0"}).warmups, 0) << "the Sanitize: line's";
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
  GemmCheck s;
  s.add(0, 2.0, 2.0, Tolerance{1e-5, 1e-4});
  s.add(1, std::numeric_limits<double>::quiet_NaN(), 2.0, Tolerance{1e-5, 1e-4});
  EXPECT_FALSE(s.pass());
  EXPECT_EQ(s.first_bad, 1);
  EXPECT_TRUE(std::isnan(s.max_abs_err));
  EXPECT_FALSE(GemmCheck().pass()) << "nothing checked is no pass";
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

// A student's sample is their own: the NaN and the +0.5 go to a row it skips, wherever it samples,
// so a ladder without the finiteness scan or the cross-check cannot pass on its sampled rows alone.
TEST(ReportDataVerify, ThePlantedErrorsSitInARowTheSampleSkips) {
  const long long n = 96;
  std::vector<long long> rows = sampleRows(n);
  EXPECT_EQ(plantedElement(HostLadder(n, rows).rr, n), (n / 2 + 1) * n + n / 3) << "the lesson's";
  rows = {0, n / 2 + 1, n / 2 + 2, n - 1};  // a student's sample holding row n/2 + 1
  EXPECT_EQ(plantedElement(HostLadder(n, rows).rr, n) / n, n / 2 + 3);
  rows.clear();
  for (long long i = 0; i < n; ++i) if (i != 5) rows.push_back(i);  // every row but 5: wraps round
  EXPECT_EQ(plantedElement(HostLadder(n, rows).rr, n) / n, 5);
  rows.push_back(5);
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(plantedElement(HostLadder(n, rows).rr, n) / n, n / 2 + 1) << "all sampled: the reference sees it";
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

// Bounds as the attributes give them: an H200 (132 SMs, 1980 MHz, 128 lanes, 3201 MHz x 6016 bits)
// and a T4 (40 SMs, 1590 MHz, 64 lanes, 5001 MHz x 256 bits).
struct Bounds {
  Ceilings c{};
  SmemRoof s{};
  Bounds(int sms, int mhz, int lanes, int memMhz, int bus) {
    c.fp32_bound_gflops = 2.0 * sms * lanes * mhz / 1e3;
    c.dram_bound_gbs = 2.0 * memMhz * bus / 8 / 1e3;
    s.bound_gbs = double(sms) * 32 * 4 * mhz / 1e3;
  }
};
const Bounds kH200(132, 1980, 128, 3201, 6016), kT4(40, 1590, 64, 5001, 256);

TEST(ReportDataRoofs, SharedMemoryRoofIsAnEighthOfFp32OnAnH200AndAQuarterOnAT4) {
  const double tiled = kSmemLoadsPerFma[int(Kernel::kTiled)];
  EXPECT_EQ(tiled, 2.0);
  EXPECT_EQ(kSmemLoadsPerFma[int(Kernel::kNaive)], 0.0);
  EXPECT_DOUBLE_EQ(smemRoofGflops(kH200.s.bound_gbs, tiled), 8363.52);
  EXPECT_DOUBLE_EQ(kH200.c.fp32_bound_gflops / smemRoofGflops(kH200.s.bound_gbs, tiled), 8.0);
  EXPECT_DOUBLE_EQ(kT4.c.fp32_bound_gflops / smemRoofGflops(kT4.s.bound_gbs, tiled), 4.0);
  EXPECT_TRUE(std::isinf(smemRoofGflops(kH200.s.bound_gbs, 0.0))) << "no shared loads, no roof";
}

TEST(ReportDataRoofs, TheBindingRoofIsTheLowestBound) {
  const double ai128 = 128 / 6.0, ai2048 = 2048 / 6.0;
  for (double ai : {ai128, ai2048}) {
    EXPECT_STREQ(bindingRoof(kH200.c, kH200.s, ai, 0.0).name, "FP32") << ai;
    EXPECT_STREQ(bindingRoof(kH200.c, kH200.s, ai, 2.0).name, "shared memory") << ai;
    EXPECT_STREQ(bindingRoof(kT4.c, kT4.s, ai, 2.0).name, "shared memory") << ai;
  }
  EXPECT_STREQ(bindingRoof(kT4.c, kT4.s, ai128, 0.0).name, "DRAM") << "ridge 25.4 > 21.3";
  EXPECT_DOUBLE_EQ(bindingRoof(kT4.c, kT4.s, ai128, 0.0).gflops, ai128 * kT4.c.dram_bound_gbs);
  EXPECT_STREQ(bindingRoof(Ceilings{}, SmemRoof{}, ai128, 2.0).name, "unknown");
  Ceilings noLanes = kH200.c;  // a compute capability with no lane count: no FP32 bound
  noLanes.fp32_bound_gflops = 0.0;
  EXPECT_STREQ(bindingRoof(noLanes, kH200.s, ai128, 0.0).name, "DRAM");
}

// One CSV row, printed on the host: the same number of cells as the header, every tolerance there.
std::vector<std::string> row(Kernel k, long long n, const Scan& s, const TimingStats* t,
                             double naiveMs, bool holdsTiles = true) {
  Ceilings c = kH200.c;
  c.copy_gbs = 4000.0;
  c.fp32_gflops = 64000.0;
  SmemRoof sm = kH200.s;
  sm.measured_gbs = 32000.0;
  ::testing::internal::CaptureStdout();
  printRow(k, n, RowCheck{"ref", Verdict::kPass, ""}, s, t, naiveMs, c, sm, holdsTiles);
  const std::string line = ::testing::internal::GetCapturedStdout();
  std::vector<std::string> cells(1);
  for (char ch : line.substr(0, line.size() - 1)) {
    if (ch == ',') cells.emplace_back();
    else cells.back() += ch;
  }
  return cells;
}

TEST(ReportDataCsv, EveryRowHasTheHeadersCellsAndItsTolerances) {
  std::vector<std::string> header(1);
  for (const char* p = kCsvHeader; *p; ++p) {
    if (*p == ',') header.emplace_back();
    else header.back() += *p;
  }
  ASSERT_EQ(header.size(), 25u);
  EXPECT_EQ(header[9], "ms") << "the first 18 columns keep their places";
  EXPECT_EQ(header[17], "ai_compulsory");
  const auto at = [&](const std::vector<std::string>& r, const char* name) {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return r.at(i);
    ADD_FAILURE() << "no column " << name;
    return std::string();
  };
  Scan s;
  s.rtol = 1e-5, s.atol = 2.5e-6;
  s.ref.add(0, 1.0, 1.0, Tolerance{s.rtol, s.atol});
  const TimingStats naive{2.0, 1.9, 2.1, 2.0, 3}, tiled{1.0, 0.9, 1.1, 1.0, 3};
  std::vector<std::string> r = row(Kernel::kNaive, 2048, s, &naive, 0.0);
  ASSERT_EQ(r.size(), header.size());
  EXPECT_EQ(at(r, "rtol"), "1.000e-05");
  EXPECT_EQ(at(r, "atol"), "2.500e-06");
  EXPECT_EQ(at(r, "xcheck_atol"), "") << "no cross-check, no tolerance for it";
  EXPECT_EQ(at(r, "speedup"), "") << "tiled rows only";
  EXPECT_EQ(at(r, "smem_loads_per_fma"), "0");
  EXPECT_EQ(at(r, "limited_by"), "FP32");
  s.xcheck.add(0, 1.0, 1.0, Tolerance{s.rtol, 3e-6});
  s.xcheck_atol = 3e-6;
  r = row(Kernel::kTiled, 2048, s, &tiled, naive.median_ms);
  ASSERT_EQ(r.size(), header.size());
  EXPECT_EQ(at(r, "xcheck_atol"), "3.000e-06");
  EXPECT_EQ(at(r, "xcheck_diff"), "0.000e+00");
  EXPECT_EQ(at(r, "ms"), "1.0000");
  EXPECT_EQ(at(r, "speedup"), "2.00") << "naive's median over tiled's";
  EXPECT_EQ(at(r, "smem_loads_per_fma"), "2");
  EXPECT_EQ(at(r, "limited_by"), "shared memory");
  EXPECT_EQ(at(r, "ai_compulsory"), "341.333");
  const double gflops = 2.0 * 2048 * 2048 * 2048 / 1e-3 / 1e9;
  const auto pct = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", v);
    return std::string(b);
  };
  EXPECT_EQ(at(r, "pct_of_peak"), pct(100.0 * gflops / 64000.0)) << "of the measured FP32 peak";
  EXPECT_EQ(at(r, "pct_of_roof"), pct(100.0 * gflops / 8000.0))
      << "tiled's roof: the measured shared-memory roof, 32000 GB/s x 2 / 8";
  r = row(Kernel::kTiled, 2048, s, nullptr, naive.median_ms);  // not timed: empty time cells
  ASSERT_EQ(r.size(), header.size());
  for (const char* name : {"ms", "min_ms", "max_ms", "gflops", "pct_of_roof", "pct_of_peak",
                           "speedup"})
    EXPECT_EQ(at(r, name), "") << name;
  EXPECT_EQ(at(r, "rtol"), "1.000e-05") << "an untimed row still prints its tolerances";
  Scan none;  // no check made (the starter's rows above 1024, check unwritten): no error, no tolerance
  none.rtol = 1e-5;
  r = row(Kernel::kNaive, 2048, none, nullptr, 0.0);
  ASSERT_EQ(r.size(), header.size());
  for (const char* name : {"max_abs_err", "xcheck_diff", "rtol", "atol", "xcheck_atol"})
    EXPECT_EQ(at(r, name), "") << name << ": a check not made prints no figure of one";
  EXPECT_EQ(at(r, "ref_elements"), "0");
  none.xcheck.add(0, 1.0, 1.0, Tolerance{none.rtol, 3e-6});
  none.xcheck_atol = 3e-6;
  r = row(Kernel::kTiled, 2048, none, nullptr, 0.0);
  EXPECT_EQ(at(r, "max_abs_err"), "") << "the cross-check alone: no reference error";
  EXPECT_EQ(at(r, "atol"), "");
  EXPECT_EQ(at(r, "rtol"), "1.000e-05") << "the cross-check applied it";
  EXPECT_EQ(at(r, "xcheck_diff"), "0.000e+00");
  // The starter's stand-in holds no tiles (the GATE says so): its tiled rows take naive's model,
  // never the tiled kernel's shared-memory loads or roof.
  r = row(Kernel::kTiled, 2048, s, &tiled, naive.median_ms, false);
  ASSERT_EQ(r.size(), header.size());
  EXPECT_EQ(at(r, "smem_loads_per_fma"), "0");
  EXPECT_NE(at(r, "limited_by"), "shared memory");
  EXPECT_EQ(at(r, "model_load_gb"), "68.7195") << "8 n^3 bytes, naive's model";
  EXPECT_EQ(at(r, "ai_model"), "0.250");
  EXPECT_EQ(at(r, "pct_of_roof"), pct(100.0 * gflops / 64000.0)) << "no shared-memory roof";
}

// The # lines and the gain line, printed on the host from a device's attribute bounds.
cudaDeviceProp propOf(const char* name, int l2MiB, int threadsPerSm) {
  cudaDeviceProp p{};
  std::snprintf(p.name, sizeof p.name, "%s", name);
  p.l2CacheSize = l2MiB * 1048576, p.maxThreadsPerMultiProcessor = threadsPerSm;
  return p;
}
std::string preamble(const Bounds& b, const cudaDeviceProp& p, bool holdsTiles) {
  SmemRoof s = b.s;
  std::snprintf(s.bound, sizeof s.bound, "(bound)");
  const int blocks[2] = {8, 8};
  ::testing::internal::CaptureStdout();
  printPreamble(p, b.c, s, holdsTiles, blocks);
  return ::testing::internal::GetCapturedStdout();
}
std::string gainLine(const Bounds& b, bool holdsTiles) {
  Ladder L;
  L.n = 2048, L.naiveGflops = 1000.0, L.tiledGflops = 1500.0, L.holdsTiles = holdsTiles;
  Ceilings c = b.c;
  c.fp32_gflops = 0.9 * b.c.fp32_bound_gflops;
  ::testing::internal::CaptureStdout();
  printGainLine(L, c, b.s);
  return ::testing::internal::GetCapturedStdout();
}

TEST(ReportDataRoofs, EveryLineAboutTiledFollowsTheKernelItRuns) {
  const cudaDeviceProp h200 = propOf("H200", 60, 2048), t4 = propOf("T4", 4, 1024);
  const std::string tiled = preamble(kH200, h200, true);
  EXPECT_NE(tiled.find("tiled's 4 is below it (bandwidth roof)"), std::string::npos) << tiled;
  EXPECT_NE(tiled.find("a roof of 8363.5 GFLOP/s = FP32 bound / 8.00; naive loads none"),
            std::string::npos) << tiled;
  EXPECT_NE(preamble(kT4, t4, true).find("= FP32 bound / 4.00; naive loads none"), std::string::npos)
      << "a T4's 64 lanes: the shared-memory roof is a quarter of its FP32 bound";
  const std::string untiled = preamble(kH200, h200, false);  // the starter: 0 bytes of shared memory
  EXPECT_EQ(untiled.find("a roof of"), std::string::npos) << untiled;
  EXPECT_EQ(untiled.find("tiled's L = 2"), std::string::npos) << untiled;
  EXPECT_NE(untiled.find("tiled's 0.25 is below it"), std::string::npos) << untiled;
  EXPECT_NE(untiled.find("naive and tiled (no tiles yet) load none from it"), std::string::npos);
  EXPECT_NE(gainLine(kH200, true).find("8363.5 GFLOP/s, is 8.36x naive's rate: the most this tiled "
                                       "kernel, one output a thread, could gain here"),
            std::string::npos);
  EXPECT_NE(gainLine(kT4, true).find("2035.2 GFLOP/s, is 2.04x naive's rate"), std::string::npos)
      << "a T4: 40 SMs x 32 banks x 4 bytes x 1590 MHz x 2 / 8";
  const std::string gain = gainLine(kH200, false);
  EXPECT_NE(gain.find("it holds no tiles yet, so no shared-memory roof applies"), std::string::npos);
  EXPECT_EQ(gain.find("could gain"), std::string::npos) << gain;
}

TEST(ReportDataCheck, TheScanKeepsTheTolerancesItApplied) {
  const long long n = 40;
  std::vector<long long> every(static_cast<size_t>(n));
  for (long long i = 0; i < n; ++i) every[size_t(i)] = i;
  const HostLadder h(n, every);
  const Scan s = scan(h.tiled, &h.naive, h.rr, n);
  EXPECT_EQ(s.rtol, rtolForK(n));
  EXPECT_EQ(s.atol, s.rtol * h.rr.ref_max);
  double yMax = 0.0;
  for (float y : h.naive) yMax = std::max(yMax, double(std::fabs(y)));
  EXPECT_EQ(s.xcheck_atol, s.rtol * yMax);
}

}  // namespace
