// Host-side tests of the final project's gemm_ladder (no GPU needed): the strict command line
// and its size gates, the generator, the K-scaled tolerance and the check (NaN and infinity
// fail; the worst element reported with the tolerance applied to it), the 16-byte path taken
// at given sizes, the ladder's table (every step lists all it changes), and the warp-tile
// map of steps 5-6: every output of the 128 x 128 tile owned by exactly one thread, and the
// fragment reads of a warp contiguous (the reason step 5 gives for removing bank conflicts).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#define main lesson_main
#include "../lessons/gemm_ladder.cu"
#undef main

namespace {

Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "gemm_ladder");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  CommandLine cl(static_cast<int>(argv.size()), argv.data(), usageText());
  return parseOptions(cl);
}

TEST(GemmLadderCli, DashNAloneIsSquareAndTheLastOccurrenceWins) {
  const Options d = parse({});
  EXPECT_EQ(d.m, 1024);
  EXPECT_EQ(d.n, 1024);
  EXPECT_EQ(d.k, 1024);
  EXPECT_EQ(d.iters, 20);
  EXPECT_FALSE(d.csv);
  const Options s = parse({"-n", "4096"});
  EXPECT_EQ(s.m, 4096);
  EXPECT_EQ(s.k, 4096);
  const Options o = parse({"-m", "1000", "-n", "5", "-n", "1030", "-k", "999", "--csv", "-iters", "3"});
  EXPECT_EQ(o.m, 1000);
  EXPECT_EQ(o.n, 1030);
  EXPECT_EQ(o.k, 999);
  EXPECT_EQ(o.iters, 3);
  EXPECT_TRUE(o.csv);
  const Options z = parse({"-k", "0"});
  EXPECT_EQ(z.k, 0);
  EXPECT_EQ(z.m, 1024);
}

TEST(GemmLadderCliDeathTest, BadCommandLinesExit2WithOneNamedLineThenUsage) {
  const auto usage = ::testing::ExitedWithCode(kExitBadCommandLine);
  EXPECT_EXIT(parse({"-n", "abc"}), usage,
              "^error: -n expects an integer in \\[0, 16777216\\], got \"abc\"\nusage: gemm_ladder");
  EXPECT_EXIT(parse({"-m", "-1"}), usage, "^error: -m expects an integer");
  EXPECT_EXIT(parse({"-k", "16777217"}), usage, "^error: -k expects an integer");
  EXPECT_EXIT(parse({"-iters", "0"}), usage, "^error: -iters expects an integer in \\[1, 10000\\]");
  EXPECT_EXIT(parse({"-iters"}), usage, "^error: -iters expects an integer .* got nothing");
  EXPECT_EXIT(parse({"-csv"}), usage, "^error: unknown option \"-csv\"");
  EXPECT_EXIT(parse({"-tile", "8"}), usage, "^error: unknown option \"-tile\"");
  EXPECT_EXIT(parse({"-n", "20000"}), usage, "^error: -m, -n, -k: the host buffers would need");
  EXPECT_EXIT(parse({"--help"}), ::testing::ExitedWithCode(0), "^$");
}

TEST(GemmLadderCli, TheDefaultsFitTheHostBudgetsAnd4096Runs) {
  Options o;
  o.m = o.n = o.k = kDefaultDim;
  EXPECT_LE(hostBytes(o), 32LL << 20) << "the default run stays far below 200 MiB of host memory";
  o.m = o.n = o.k = 4096;
  EXPECT_LE(hostBytes(o), kMaxHostBytes);
}

TEST(GemmLadderDevice, GridsAndMemoryAreCheckedAgainstTheDevicesLimits) {
  const int grid[3] = {2147483647, 65535, 65535};
  Options o;
  o.m = 65535LL * kT1, o.n = 64, o.k = 8;
  EXPECT_EQ(deviceProblem(o, grid, size_t(1) << 40), "") << "step 1's grid.y is 65535: legal";
  o.m += 1;
  EXPECT_NE(deviceProblem(o, grid, size_t(1) << 40).find("step tiled_16x16 needs a grid of (4, "
                                                          "65536)"), std::string::npos);
  o.m = o.n = o.k = 1024;
  EXPECT_NE(deviceProblem(o, grid, 1 << 20).find("the reference needs 0.02 GiB"), std::string::npos);
  EXPECT_EQ(deviceProblem(o, grid, 5u << 23), "") << "4 MiB + 4 MiB + 8 MiB fit in 40 MiB";
}

TEST(GemmLadderInputs, TheProjectsGeneratorAFirstThenB) {
  std::vector<float> A(6), B(4), AB(10), none;
  fillInputs(A, B);
  fillInputs(AB, none);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(A[size_t(i)], AB[size_t(i)]);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(B[size_t(i)], AB[size_t(6 + i)]) << "B continues A's state";
  for (float v : AB) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
    EXPECT_EQ(v, std::ldexp(std::round(std::ldexp(double(v), 23)), -23)) << "exact in float";
  }
}

TEST(GemmLadderCheck, KScaledToleranceAndNanAndInfinityFail) {
  const std::vector<double> ref = {2.0, -4.0, 0.5};
  const Tolerance small = toleranceFor(64, ref);
  EXPECT_DOUBLE_EQ(small.rtol, 1e-5) << "short sums use the 1e-5 floor";
  const Tolerance big = toleranceFor(4096, ref);
  EXPECT_DOUBLE_EQ(big.rtol, 4.0 * std::ldexp(1.0, -23) * 64.0);
  EXPECT_DOUBLE_EQ(big.atol, big.rtol * 4.0) << "atol = rtol * max|ref|";
  const float exact[3] = {2.0f, -4.0f, 0.5f};
  EXPECT_EQ(checkOutput(exact, ref.data(), 3, big).failures, 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float bad[3] = {2.0f, nan, inf};
  const CheckResult c = checkOutput(bad, ref.data(), 3, big);
  EXPECT_EQ(c.failures, 2);
  EXPECT_EQ(c.worst, 1) << "the first non-finite element is the worst";
  const float off[3] = {2.0f, -4.0f, float(0.5 + 1.5 * big.atol)};
  EXPECT_EQ(checkOutput(off, ref.data(), 3, big).failures, 1);
  const CheckResult w = checkOutput(off, ref.data(), 3, big);
  EXPECT_EQ(w.worst, 2);
  EXPECT_DOUBLE_EQ(w.worst_tol, big.atol + big.rtol * 0.5) << "the tolerance applied there";
  EXPECT_DOUBLE_EQ(w.worst_diff, std::fabs(double(off[2]) - 0.5));
  const Tolerance loose{1000 * big.rtol, 1000 * big.atol};
  EXPECT_DOUBLE_EQ(checkOutput(off, ref.data(), 3, loose).worst_tol, 1000 * w.worst_tol)
      << "a loosened tolerance changes what the check line prints";
  const CheckResult e = checkOutput(exact, ref.data(), 3, big);
  EXPECT_EQ(e.worst, 0) << "all exact: the first element, its tolerance reported";
  EXPECT_DOUBLE_EQ(e.worst_tol, big.atol + big.rtol * 2.0);
  EXPECT_EQ(e.worst_diff, 0.0);
  const Tolerance zeroK = toleranceFor(0, {0.0, 0.0});
  const float zeros[2] = {0.0f, 1e-30f};
  EXPECT_EQ(checkOutput(zeros, std::vector<double>{0.0, 0.0}.data(), 2, zeroK).failures, 1)
      << "K = 0: every output must be exactly zero";
}

TEST(GemmLadderVector, TheSixteenBytePathIsPrintedFromTheSizes) {
  EXPECT_EQ(vectorPaths(1024, 1024),
            "A loads 16-byte (K = 1024 is a multiple of 4), B loads and C stores 16-byte "
            "(N = 1024 is a multiple of 4); shared-memory fragment reads 16-byte");
  EXPECT_EQ(vectorPaths(1030, 999),
            "A loads 4-byte, four per float4 (K = 999 is not a multiple of 4), B loads and C "
            "stores 4-byte, four per float4 (N = 1030 is not a multiple of 4); shared-memory "
            "fragment reads 16-byte")
      << "the odd-size run of the header takes no 16-byte global access";
  EXPECT_NE(vectorPaths(1028, 999).find("B loads and C stores 16-byte"), std::string::npos);
  EXPECT_STREQ(kLadder[kVectorStep].csv_name, "vectorized");
}

TEST(GemmLadderTable, EveryStepSaysAllItChanges) {
  // The tile, panel depth and block changes that ride along with a step's main idea.
  EXPECT_NE(std::string(kLadder[1].changes).find("64 x 64 block tile"), std::string::npos);
  EXPECT_NE(std::string(kLadder[1].changes).find("512 threads"), std::string::npos);
  EXPECT_NE(std::string(kLadder[1].changes).find("panels 8 deep"), std::string::npos);
  EXPECT_NE(std::string(kLadder[2].changes).find("128 x 128 block tile"), std::string::npos);
  EXPECT_NE(std::string(kLadder[2].changes).find("256 threads"), std::string::npos);
  EXPECT_NE(std::string(kLadder[3].changes).find("transposed"), std::string::npos);
  EXPECT_NE(std::string(kLadder[3].changes).find("padded to 132 floats"), std::string::npos);
  EXPECT_EQ(kBMPad, 132);
  EXPECT_NE(std::string(kLadder[4].changes).find("only which outputs"), std::string::npos);
  EXPECT_NE(std::string(kLadder[5].changes).find("panels 16 deep (8)"), std::string::npos);
  EXPECT_EQ(kBK6, 2 * kBK);
  // The facts those sentences state, from the constants the kernels use.
  EXPECT_EQ(kBM2 * kBN2, 64 * 64);
  EXPECT_EQ(kThreads2, 512);
  EXPECT_EQ(kBK2, 8);
  EXPECT_EQ(kBM * kBN, 128 * 128);
  EXPECT_EQ(kThreads, 256);
  EXPECT_EQ(kBK, kBK2) << "step 3 keeps step 2's panel depth";
}

TEST(GemmLadderTable, SixStepsEachLaunchingWholeTiles) {
  ASSERT_EQ(kSteps, 6);
  const std::vector<std::string> names = {"tiled_16x16", "blocktile_1d", "regblock_2d",
                                          "vectorized",  "warptile",     "double_buffered"};
  const int outputsPerThread[kSteps] = {1, kTM2, kTM * kTN, kTM * kTN, kTM * kTN, kTM * kTN};
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_EQ(kLadder[s].csv_name, names[size_t(s)]);
    EXPECT_EQ(kLadder[s].threads * outputsPerThread[s], kLadder[s].tile_m * kLadder[s].tile_n)
        << "step " << s + 1 << ": its threads cover its output tile";
    EXPECT_NE(kLadder[s].why, nullptr);
    EXPECT_NE(kLadder[s].changes, nullptr);
  }
  EXPECT_STREQ(kLadder[kExerciseStep].csv_name, "regblock_2d") << "the exercise is step 3";
  EXPECT_LE(2 * (kBK6 * kBMPad + kBK6 * kBN) * 4, 48 * 1024) << "no opt-in needed anywhere";
}

TEST(GemmLadderWarpTile, EveryOutputOfTheBlockTileHasExactlyOneThread) {
  std::vector<int> owner(size_t(kBM * kBN), -1);
  for (int tid = 0; tid < kThreads; ++tid)
    for (int i = 0; i < kTM; ++i)
      for (int j = 0; j < kTN; ++j) {  // the same map as readFragments and storeWarpTile
        const int r = warpTileRow0(tid) + (i / 4) * (kWM / 2) + i % 4;
        const int c = warpTileCol0(tid) + (j / 4) * (kWN / 2) + j % 4;
        ASSERT_TRUE(r >= 0 && r < kBM && c >= 0 && c < kBN) << tid;
        EXPECT_EQ(owner[size_t(r * kBN + c)], -1) << "row " << r << ", col " << c;
        owner[size_t(r * kBN + c)] = tid;
      }
  for (int tid = 0; tid < kThreads; ++tid) {  // each warp's outputs are its 64 x 32 tile
    const int warp = tid / 32;
    const int r = warpTileRow0(tid), c = warpTileCol0(tid);
    EXPECT_EQ(r / kWM, warp / (kBN / kWN));
    EXPECT_EQ(c / kWN, warp % (kBN / kWN));
  }
}

// The distinct 16-byte chunks a warp reads at one k, as byte offsets in the panel row.
std::set<int> chunks(int first, int warp, int (*start)(int)) {
  std::set<int> s;
  for (int lane = 0; lane < 32; ++lane) s.insert(4 * (start(32 * warp + lane) + first));
  return s;
}

TEST(GemmLadderWarpTile, AWarpsFragmentReadsAreContiguousSoNoBankConflicts) {
  for (int warp = 0; warp < kThreads / 32; ++warp)
    for (int h = 0; h < 2; ++h) {
      const std::set<int> a = chunks(h * kWM / 2, warp, warpTileRow0);
      const std::set<int> b = chunks(h * kWN / 2, warp, warpTileCol0);
      ASSERT_EQ(a.size(), 8u);  // 8 float4 of A: 128 contiguous bytes, all 32 banks once
      EXPECT_EQ(*a.rbegin() - *a.begin(), 7 * 16);
      ASSERT_EQ(b.size(), 4u);  // 4 float4 of B: 64 contiguous bytes
      EXPECT_EQ(*b.rbegin() - *b.begin(), 3 * 16);
    }
  // Step 4's map (thread t owns columns (t % 16) * 8 ..): 16 float4 of B 32 bytes apart, so
  // chunks 4 apart share their banks.
  std::set<int> b4;
  for (int lane = 0; lane < 32; ++lane) b4.insert(32 * (lane % 16));
  EXPECT_EQ(b4.size(), 16u);
  EXPECT_EQ(*b4.rbegin() - *b4.begin(), 15 * 32);
}

}  // namespace
