// Host-side tests of the final project's gemm_ladder (no GPU needed): the strict command line
// and its size gates, the generator, the K-scaled tolerance and the check (NaN and infinity
// fail; the worst element reported with the tolerance applied to it), the 16-byte path taken
// at given sizes, the ladder's table (each step names its one change), the warp-tile maps
// of steps 9-14: every output of the 128 x 128 tile owned by exactly one thread, and the
// fragment reads of a warp contiguous (the reason step 9 gives for removing bank conflicts),
// the split of K in steps 13-14: fixed by the sizes, covering K once, in whole panels, and
// the float4s steps 12 and 14 move: the ones step 11 moves, to the same places, and the lines
// steps 4-5 print for a kernel that is not register-blocked yet (the starter's stand-in).
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
  EXPECT_EQ(d.warmups, 3);
  EXPECT_EQ(parse({"-iters", "1", "-warmups", "0"}).warmups, 0) << "the Sanitize: line's";
  EXPECT_EQ(d.from, 1) << "every step by default";
  EXPECT_EQ(parse({"-from", "15"}).from, 15) << "verify's later anchor rounds";
  EXPECT_EQ(parse({"-from", "16"}).from, kSteps);
  EXPECT_EQ(d.to, kSteps);
  const Options one = parse({"-from", "4", "-to", "4"});
  EXPECT_EQ(one.from, 4) << "the speed check's step";
  EXPECT_EQ(one.to, 4);
}

TEST(GemmLadderCliDeathTest, BadCommandLinesExit2WithOneNamedLineThenUsage) {
  const auto usage = ::testing::ExitedWithCode(kExitBadCommandLine);
  EXPECT_EXIT(parse({"-n", "abc"}), usage,
              "^error: -n expects an integer in \\[0, 16777216\\], got \"abc\"\nusage: gemm_ladder");
  EXPECT_EXIT(parse({"-m", "-1"}), usage, "^error: -m expects an integer");
  EXPECT_EXIT(parse({"-k", "16777217"}), usage, "^error: -k expects an integer");
  EXPECT_EXIT(parse({"-iters", "0"}), usage, "^error: -iters expects an integer in \\[1, 10000\\]");
  EXPECT_EXIT(parse({"-iters"}), usage, "^error: -iters expects an integer .* got nothing");
  EXPECT_EXIT(parse({"-from", "0"}), usage, "^error: -from expects an integer in \\[1, 16\\]");
  EXPECT_EXIT(parse({"-from", "17"}), usage, "^error: -from expects an integer in \\[1, 16\\]");
  EXPECT_EXIT(parse({"-to", "0"}), usage, "^error: -to expects an integer in \\[1, 16\\]");
  EXPECT_EXIT(parse({"-from", "5", "-to", "4"}), usage, "^error: -from 5, -to 4: no step to run");
  EXPECT_EXIT(parse({"-csv"}), usage, "^error: unknown option \"-csv\"");
  EXPECT_EXIT(parse({"-tile", "8"}), usage, "^error: unknown option \"-tile\"");
  EXPECT_EXIT(parse({"-n", "20000"}), usage, "^error: -m, -n, -k: the host buffers would need");
  EXPECT_EXIT(parse({"--help"}), ::testing::ExitedWithCode(0), "^$");
}

TEST(GemmLadderCli, TheDefaultsFitTheHostBudgetsAnd4096Runs) {
  Options o;
  o.m = o.n = o.k = kDefaultDim;
  EXPECT_LE(hostBytes(o), 32LL << 20) << "the default run stays far below 200 MiB of host memory";
  EXPECT_EQ(hostBytes(o), 20LL << 20) << "A and B (4 MiB each), the double reference (8 MiB) and "
                                         "the steps' float copy of C (4 MiB)";
  EXPECT_NE(usageText().find("on stdout two lines starting \"# \""), std::string::npos)
      << "--csv's stdout starts with the GPU and [device] lines, then the CSV";
  o.m = o.n = o.k = 4096;
  EXPECT_LE(hostBytes(o), kMaxHostBytes);
  EXPECT_EQ(hostBytes(o), 320LL << 20) << "the page: 320 MiB of host buffers at -n 4096";
  EXPECT_LT(usageText().size() + 1, 1700u) << "the usage text fits its buffer, untruncated";
  EXPECT_NE(usageText().find("Exit status: 0 every step passed; 1 a gate failed"), std::string::npos)
      << "the usage text ends with the exit codes, untruncated";
  EXPECT_NE(usageText().find("77 no usable CUDA device.\n"), std::string::npos);
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
  EXPECT_NE(deviceProblem(o, grid, 1 << 20).find("the reference or the ladder needs 0.03 GiB"),
            std::string::npos)
      << "A, B, C and 4 parts of steps 13-14 (28 MiB) outweigh the reference's 16 MiB";
  EXPECT_EQ(deviceProblem(o, grid, 5u << 23), "") << "28 MiB fit in 40 MiB";
  o.n = o.m = o.k = 4096;  // no split: the reference's double C decides
  EXPECT_NE(deviceProblem(o, grid, 1 << 20).find("needs 0.25 GiB"), std::string::npos);
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
  const Tolerance small = gemmTolerance(64, maxAbs(ref.data(), 3));
  EXPECT_DOUBLE_EQ(small.rtol, 1e-5) << "short sums use the 1e-5 floor";
  const Tolerance big = gemmTolerance(4096, maxAbs(ref.data(), 3));
  EXPECT_DOUBLE_EQ(big.rtol, 4.0 * std::ldexp(1.0, -23) * 64.0);
  EXPECT_DOUBLE_EQ(big.atol, big.rtol * 4.0) << "atol = rtol * max|ref|";
  const float exact[3] = {2.0f, -4.0f, 0.5f};
  EXPECT_EQ(checkElements(exact, ref.data(), 3, big).failures, 0);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float bad[3] = {2.0f, nan, inf};
  const GemmCheck c = checkElements(bad, ref.data(), 3, big);
  EXPECT_EQ(c.failures, 2);
  EXPECT_EQ(c.worst, 1) << "the first non-finite element is the worst";
  const float off[3] = {2.0f, -4.0f, float(0.5 + 1.5 * big.atol)};
  EXPECT_EQ(checkElements(off, ref.data(), 3, big).failures, 1);
  const GemmCheck w = checkElements(off, ref.data(), 3, big);
  EXPECT_EQ(w.worst, 2);
  EXPECT_DOUBLE_EQ(w.worst_tol, big.atol + big.rtol * 0.5) << "the tolerance applied there";
  EXPECT_DOUBLE_EQ(w.worst_diff, std::fabs(double(off[2]) - 0.5));
  const Tolerance loose{1000 * big.rtol, 1000 * big.atol};
  EXPECT_DOUBLE_EQ(checkElements(off, ref.data(), 3, loose).worst_tol, 1000 * w.worst_tol)
      << "a loosened tolerance changes what the check line prints";
  const GemmCheck e = checkElements(exact, ref.data(), 3, big);
  EXPECT_EQ(e.worst, 0) << "all exact: the first element, its tolerance reported";
  EXPECT_DOUBLE_EQ(e.worst_tol, big.atol + big.rtol * 2.0);
  EXPECT_EQ(e.worst_diff, 0.0);
  const Tolerance zeroK = gemmTolerance(0, 0.0);
  const float zeros[2] = {0.0f, 1e-30f};
  EXPECT_EQ(checkElements(zeros, std::vector<double>{0.0, 0.0}.data(), 2, zeroK).failures, 1)
      << "K = 0: every output must be exactly zero";
}

TEST(GemmLadderVector, TheSixteenBytePathIsPrintedFromTheSizes) {
  EXPECT_EQ(vectorPaths(1024, 1024),
            "A loads 16-byte (K = 1024 is a multiple of 4), B loads and C stores 16-byte "
            "(N = 1024 is a multiple of 4); shared-memory fragment reads float4 in the source (B "
            "from step 7, A from step 8)");
  EXPECT_EQ(vectorPaths(1030, 999),
            "A loads 4-byte, four per float4 (K = 999 is not a multiple of 4), B loads and C "
            "stores 4-byte, four per float4 (N = 1030 is not a multiple of 4); shared-memory "
            "fragment reads float4 in the source (B from step 7, A from step 8)")
      << "the odd-size run of the header takes no 16-byte global access";
  EXPECT_NE(vectorPaths(1028, 999).find("B loads and C stores 16-byte"), std::string::npos);
  EXPECT_STREQ(kLadder[kVectorStep].csv_name, "global_16b");
}

TEST(GemmLadderTable, EachStepNamesItsOneChange) {
  // Where the thread count or tile follows from the step's change, changes says so.
  EXPECT_NE(std::string(kLadder[1].changes).find("8 outputs per thread down a column (step 1: 1) "
                                                 "on the same 16 x 16 tile, which 32 such threads"),
            std::string::npos);
  EXPECT_NE(std::string(kLadder[1].changes).find("panels still 16 deep"), std::string::npos);
  EXPECT_NE(std::string(kLadder[2].changes).find("the block tile: 64 x 64 (step 2: 16 x 16) of the "
                                                 "same kernel, so 512 threads"), std::string::npos);
  EXPECT_NE(std::string(kLadder[3].changes).find("same 64 x 64 block tile"), std::string::npos);
  EXPECT_NE(std::string(kLadder[4].changes).find("the block tile: 128 x 128"), std::string::npos);
  EXPECT_NE(std::string(kLadder[4].changes).find("at most 128 registers a thread (255)"),
            std::string::npos);
  EXPECT_EQ(65536 / (kMinBlocks * kThreads), 128) << "two blocks of 256 threads in 64 Ki registers";
  EXPECT_GE(65536 / (kMinBlocks * kBM2 * kBN2 / (kTM * kTN)), 255)
      << "step 4's two blocks of 64 threads leave the 255 registers a thread may hold";
  EXPECT_NE(std::string(kLadder[5].changes).find("16-byte global loads and stores"),
            std::string::npos);
  EXPECT_NE(std::string(kLadder[5].changes).find("shared layout and fragment reads as step 5"),
            std::string::npos);
  EXPECT_NE(std::string(kLadder[6].changes).find("the B fragment read from shared memory as two "
                                                 "float4s"), std::string::npos);
  EXPECT_EQ(std::string(kLadder[6].changes).find("global"), std::string::npos)
      << "step 7 changes the B fragment's shared-memory reads only";
  EXPECT_NE(std::string(kLadder[7].changes).find("padded to 132 floats"), std::string::npos);
  EXPECT_NE(std::string(kLadder[8].changes).find("only which outputs"), std::string::npos);
  EXPECT_EQ(std::string(kLadder[9].changes).find("deep"), std::string::npos)
      << "step 10 double-buffers and changes no panel depth";
  EXPECT_EQ(std::string(kLadder[9].changes).find("fragment"), std::string::npos)
      << "step 10 double-buffers the panels, not the fragments";
  EXPECT_NE(std::string(kLadder[10].changes).find("two fragment sets in registers (step 10: one)"),
            std::string::npos);
  EXPECT_EQ(std::string(kLadder[10].changes).find("panel"), std::string::npos)
      << "step 11 changes no panel";
  EXPECT_NE(std::string(kLadder[11].changes).find("other blocks as step 11"), std::string::npos);
  EXPECT_NE(std::string(kLadder[12].changes).find("fewer than 256 blocks"), std::string::npos);
  EXPECT_NE(std::string(kLadder[13].changes).find("copy the B panel from global to shared memory "
                                                  "with cp.async"), std::string::npos);
  EXPECT_NE(std::string(kLadder[13].changes).find("loaded into 8 registers a thread"),
            std::string::npos);
  EXPECT_EQ(kBK * kBN / kThreads, 8) << "step 13 holds 8 floats of each B panel a thread";
  EXPECT_NE(std::string(kLadder[12].changes).find("rounded up to whole 16-k panels, the last "
                                                  "taking the rest"), std::string::npos);
  // The facts those sentences state, from the constants the kernels use.
  EXPECT_EQ(kBMPad, 132);
  EXPECT_EQ(kBK, kT1) << "every step's panels are as deep as step 1's tiles";
  EXPECT_EQ(kT1 * kT1 / kTM2, 32) << "step 2: 32 threads of 8 outputs cover step 1's tile";
  EXPECT_EQ(kBM2 * kBN2, 64 * 64);
  EXPECT_EQ(kBM2 * kBN2 / kTM2, 512);
  EXPECT_EQ(kBM * kBN, 128 * 128);
  EXPECT_EQ(kThreads, 256);
  EXPECT_EQ(kSplitBlocks, 256);
  EXPECT_EQ(kSplitMinK, 256);
}

TEST(GemmLadderTable, SixteenStepsEachLaunchingWholeTiles) {
  ASSERT_EQ(kSteps, 16);
  const std::vector<std::string> names = {
      "tiled_16x16", "column_8",     "blocktile_1d", "regblock_2d",     "tile_128",
      "global_16b",  "vectorized",   "transposed_a", "warptile",        "panel_pairs",
      "double_buffered", "interior_loads", "split_k", "async_b", "ring", "wide_tile"};
  const int kMT = kTM * kTN;
  const int outputsPerThread[kSteps] = {1,   kTM2, kTM2, kMT, kMT, kMT, kMT, kMT,
                                        kMT, kMT,  kMT,  kMT, kMT, kMT, kMT, 2 * kMT};
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_EQ(kLadder[s].csv_name, names[size_t(s)]);
    EXPECT_EQ(kLadder[s].threads * outputsPerThread[s], kLadder[s].tile_m * kLadder[s].tile_n)
        << "step " << s + 1 << ": its threads cover its output tile";
    EXPECT_NE(kLadder[s].why, nullptr);
    EXPECT_NE(kLadder[s].changes, nullptr);
  }
  EXPECT_STREQ(kLadder[kExerciseStep].csv_name, "regblock_2d") << "the exercise is step 4";
  for (int s : {1, kExerciseStep, 5, 9, kSplitStep, kRingStep})  // one template each
    EXPECT_NE(kLadder[s].kernel, kLadder[s + 1].kernel)
        << "steps " << s + 1 << " and " << s + 2 << ": two kernels (two instances of one template)";
  EXPECT_EQ(kLadder[1].tile_m, kLadder[0].tile_m) << "step 2 keeps step 1's tile";
  EXPECT_EQ(kLadder[3].tile_n, kLadder[2].tile_n) << "step 4 keeps step 3's tile";
  EXPECT_STREQ(kLadder[kSplitStep].csv_name, "split_k");
  EXPECT_STREQ(kLadder[kAsyncStep].csv_name, "async_b");
  EXPECT_NE(kLadder[kAsyncStep].kernel, kLadder[kSplitStep].kernel);
  EXPECT_STREQ(kLadder[kRingStep].csv_name, "ring");
  EXPECT_STREQ(kLadder[kWideStep].csv_name, "wide_tile");
  EXPECT_EQ(kLadder[kWideStep].tile_n, 2 * kLadder[kRingStep].tile_n) << "step 16: 128 x 256";
  EXPECT_EQ(kLadder[kWideStep].tile_m, kLadder[kRingStep].tile_m);
  EXPECT_STREQ(kLadder[kInteriorStep].csv_name, "interior_loads");
  EXPECT_LE(2 * (kBK * kBMPad + kBK * kBN) * 4, 48 * 1024) << "no opt-in needed anywhere";
}

// The starter's run must tell no story its kernel contradicts: fed the attributes of an untiled
// kernel (the starter's stand-in: 0 B of shared memory), steps 4 and 5 claim no shared-memory
// reads and no reuse, and say what the kernel lacks; a register-blocked one gets the lesson's lines.
TEST(GemmLadderStory, AnUntiledKernelIsToldWhatItLacksNotTheLessonsReason) {
  cudaFuncAttributes untiled{}, blocked{}, fewRegs{};
  untiled.numRegs = 106;  // any register count: a stand-in holds no panels whatever it uses
  blocked.sharedSizeBytes = 16384, blocked.numRegs = 128;
  fewRegs.sharedSizeBytes = 16384, fewRegs.numRegs = 40;
  for (int s : {kExerciseStep, kExerciseStep + 1}) {
    const std::string why = whyText(s, untiled, blocked);
    EXPECT_EQ(why.find("FMA"), std::string::npos) << "step " << s + 1 << ": " << why;
    EXPECT_EQ(why.find("read from shared memory"), std::string::npos) << why;
    EXPECT_EQ(why.rfind("not yet register-blocked: step " + std::to_string(s + 1) + " keeps 0 B of "
                        "panels in shared memory", 0), 0u) << why;
    EXPECT_EQ(whyText(s, blocked, blocked), kLadder[s].why);
    EXPECT_NE(whyText(s, fewRegs, blocked).find("holds 40 registers per thread"), std::string::npos);
  }
  EXPECT_EQ(changesText(kExerciseStep, untiled, blocked),
            "the lesson's step 4: " + std::string(kLadder[kExerciseStep].changes));
  EXPECT_EQ(changesText(kExerciseStep, blocked, blocked), kLadder[kExerciseStep].changes);
  EXPECT_EQ(changesText(kExerciseStep + 1, untiled, blocked), kLadder[kExerciseStep + 1].changes)
      << "step 5's change, the tile, is the starter's too";
  EXPECT_NE(whyText(kExerciseStep + 1, untiled, blocked).find("its 128 x 16 A and 16 x 128 B panels need "
                                                     "16384 B"), std::string::npos);
  for (int s = 0; s < kSteps; ++s)
    if (s != kExerciseStep && s != kExerciseStep + 1)
      EXPECT_EQ(whyText(s, untiled, blocked), kLadder[s].why) << "step " << s + 1 << " is the lesson's own";
  // Step 6 after a stand-in step 5: its layout is the lesson's step 5's, and its ratio over the
  // stand-in is not the 16-byte accesses' alone.
  const std::string changes = changesText(kVectorStep, blocked, untiled);
  EXPECT_NE(changes.find("fragment reads as the lesson's step 5"), std::string::npos) << changes;
  EXPECT_EQ(changes.find("as step 5"), std::string::npos) << changes;
  const std::string why = whyText(kVectorStep, blocked, untiled);
  EXPECT_EQ(why.rfind("over the lesson's step 5, ", 0), 0u) << why;
  EXPECT_NE(why.find("also holds what the lesson's step 5 gains"), std::string::npos) << why;
  EXPECT_EQ(changesText(kVectorStep, blocked, blocked), kLadder[kVectorStep].changes);
  EXPECT_EQ(whyText(kVectorStep, blocked, blocked), kLadder[kVectorStep].why);
  EXPECT_EQ(whyText(kVectorStep, blocked, fewRegs).rfind("over the lesson's step 5", 0), 0u)
      << "too few registers for the micro-tile: not the lesson's step 5 either";
}

TEST(GemmLadderSplit, TheSplitFollowsFromTheSizesAlone) {
  EXPECT_EQ(splitCount(1024, 1024, 1024), 4) << "64 tiles: 256 blocks in 4 parts of 256";
  EXPECT_EQ(splitCount(2048, 2048, 2048), 1) << "256 tiles fill the grid already";
  EXPECT_EQ(splitCount(4096, 4096, 4096), 1);
  EXPECT_EQ(splitCount(8192, 8192, 8192), 1);
  EXPECT_EQ(splitCount(1000, 1030, 999), 2) << "72 tiles; 4 parts would be under 256 k";
  EXPECT_EQ(splitCount(200, 150, 600), 2);
  EXPECT_EQ(splitCount(130, 132, 512), 2) << "the Sanitize: run splits, so it is checked";
  EXPECT_EQ(splitCount(200, 150, 37), 1);
  EXPECT_EQ(splitCount(1, 1, 1 << 20), kMaxSplits);
  EXPECT_EQ(splitCount(0, 0, 1 << 20), kMaxSplits) << "no tiles: no division by them";
  EXPECT_EQ(splitText(1024, 1024, 1024),
            "K = 1024 in 4 parts of 256 k (the last 256), 64 tiles x 4 = 256 blocks; the parts "
            "added in ascending order");
  EXPECT_EQ(splitText(4096, 4096, 4096),
            "none, K = 4096 in one part (1024 tiles of 128 x 128, at least 256 blocks)");
  EXPECT_EQ(splitText(200, 150, 37),
            "none, K = 37 in one part (4 tiles of 128 x 128, and halving K would leave under "
            "256 k a part)");
  // Every split covers K once, in whole panels but the last, and no part is empty.
  for (long long m : {1LL, 200LL, 1000LL, 1024LL})
    for (long long k : {0LL, 1LL, 37LL, 511LL, 512LL, 600LL, 999LL, 1024LL, 4097LL, 100000LL}) {
      const int s = splitCount(m, m, k), d = splitDepth(k, s);
      EXPECT_EQ(d % kBK, 0);
      EXPECT_GE(1LL * s * d, k) << "m " << m << " k " << k;
      if (s > 1) {
        EXPECT_LT(1LL * (s - 1) * d, k) << "the last part is not empty: m " << m << " k " << k;
        EXPECT_GE(k - 1LL * (s - 1) * d, 1);
        EXPECT_GE(d, kSplitMinK);
      }
    }
}

// Steps 9-13 (256 threads, warps of 64 x 32): the map of readFragments and storeWarpTile
// covers the tile once.
TEST(GemmLadderWarpTile, EveryOutputOfTheBlockTileHasExactlyOneThread) {
  std::vector<int> owner(size_t(kBM * kBN), -1);
  for (int tid = 0; tid < kThreads; ++tid)
    for (int i = 0; i < kTM; ++i)
      for (int j = 0; j < kTN; ++j) {  // the same map as readFragments and storeWarpTile
        const int r = warpTileRow0(tid) + (i / 4) * (kWM / 2) + i % 4;
        const int c = warpTileCol0(tid) + (j / 4) * kLaneSpan + j % 4;
        ASSERT_TRUE(r >= 0 && r < kBM && c >= 0 && c < kBN) << tid;
        EXPECT_EQ(owner[size_t(r * kBN + c)], -1) << "row " << r << ", col " << c;
        owner[size_t(r * kBN + c)] = tid;
      }
  for (int tid = 0; tid < kThreads; ++tid) {  // each warp's outputs are its 64 x 32 tile
    const int warp = tid / 32;
    EXPECT_EQ(warpTileRow0(tid) / kWM, warp / (kBN / kWN));
    EXPECT_EQ(warpTileCol0(tid) / kWN, warp % (kBN / kWN));
  }
  EXPECT_EQ(kWN, 32);
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
  // Step 8's map (thread t owns columns (t % 16) * 8 ..): 16 float4 of B 32 bytes apart, so
  // chunks 4 apart share their banks.
  std::set<int> b4;
  for (int lane = 0; lane < 32; ++lane) b4.insert(32 * (lane % 16));
  EXPECT_EQ(b4.size(), 16u);
  EXPECT_EQ(*b4.rbegin() - *b4.begin(), 15 * 32);
}

// Step 12: which tiles take the unguarded loads, from the sizes alone, as printed. The
// Sanitize: run has both kinds, so memcheck sees each path.
TEST(GemmLadderInterior, OnlyTilesInsideCWithWholePanelsAndAlignedRows) {
  EXPECT_EQ(interiorTiles(1024, 1024, 1024), 64);
  // The page: at the anchor sizes every tile takes the unguarded loads.
  EXPECT_EQ(interiorTiles(2048, 2048, 2048), 256);
  EXPECT_EQ(interiorTiles(4096, 4096, 4096), 1024);
  EXPECT_EQ(interiorTiles(8192, 8192, 8192), 4096);
  EXPECT_EQ(interiorTiles(200, 260, 608), 2) << "rows 0-127 x columns 0-255";
  EXPECT_EQ(interiorTiles(130, 132, 512), 1) << "the Sanitize: run: one tile of each kind at least";
  EXPECT_EQ(interiorTiles(1000, 1030, 999), 0) << "K = 999 is not a multiple of 16";
  EXPECT_EQ(interiorTiles(1024, 1030, 1024), 0) << "N = 1030 is not a multiple of 4";
  EXPECT_EQ(interiorTiles(127, 1024, 1024), 0) << "no tile lies inside 127 rows";
  EXPECT_TRUE(interiorTile(0, 0, 128, 128, 16));
  EXPECT_FALSE(interiorTile(0, 0, 127, 128, 16));
  EXPECT_FALSE(interiorTile(0, 0, 128, 127, 16));
  EXPECT_FALSE(interiorTile(0, 0, 128, 128, 24));
  EXPECT_FALSE(interiorTile(0, 0, 128, 130, 16)) << "N = 130: rows of B are not 16-byte aligned";
  EXPECT_EQ(interiorText(1024, 1024, 1024),
            "64 of 64 tiles load without bounds tests (inside C: 64)");
  EXPECT_EQ(interiorText(130, 132, 512), "1 of 4 tiles load without bounds tests (inside C: 1)");
  EXPECT_EQ(interiorText(1000, 1030, 999),
            "0 of 72 tiles load without bounds tests (inside C: 56; K = 999 is not a multiple of "
            "16 and N = 1030 is not a multiple of 4)");
}

// Step 12's loads are fetchPanels' float4s: thread tid's i-th A float4 is row e / 4, k
// e % 4 * 4 of the panel and its i-th B float4 row e / 32, column e % 32 * 4 (e = tid + i x
// 256), and the 256 threads load each float4 of both panels once. Run here on host arrays
// whose every element holds its own index.
TEST(GemmLadderInterior, EachThreadLoadsTheFloat4sFetchPanelsLoads) {
  const int M = 256, N = 384, K = 64, rowBase = 128, colBase = 256;
  std::vector<float> A(size_t(M) * K), B(size_t(K) * N);
  for (size_t e = 0; e < A.size(); ++e) A[e] = float(e);
  for (size_t e = 0; e < B.size(); ++e) B[e] = float(e);
  for (int k0 : {0, 16, 48}) {
    std::set<long long> seenA, seenB;
    for (int tid = 0; tid < kThreads; ++tid) {
      PanelRegs p{};
      InteriorPanels(A.data(), B.data(), N, K, rowBase, colBase, tid)(k0, p);
      for (int i = 0; i < kBM * kBK / 4 / kThreads; ++i) {
        const int e = tid + i * kThreads;
        const long long at = (1LL * rowBase + e / 4) * K + k0 + e % 4 * 4;
        EXPECT_EQ(p.a[i].x, float(at)) << "tid " << tid << ", A float4 " << i;
        EXPECT_EQ(p.a[i].w, float(at + 3));
        seenA.insert(at);
      }
      for (int i = 0; i < kBK * kBN / 4 / kThreads; ++i) {
        const int e = tid + i * kThreads;
        const long long at = (1LL * k0 + e / 32) * N + colBase + e % 32 * 4;
        EXPECT_EQ(p.b[i].x, float(at)) << "tid " << tid << ", B float4 " << i;
        EXPECT_EQ(p.b[i].w, float(at + 3));
        seenB.insert(at);
      }
    }
    EXPECT_EQ(seenA.size(), size_t(kBM * kBK / 4)) << "every float4 of the A panel, once";
    EXPECT_EQ(seenB.size(), size_t(kBK * kBN / 4)) << "every float4 of the B panel, once";
  }
}

// Step 14's B copies land where stashPanels stores step 11's B float4s (bSlot), with the
// float4s step 12 loads: run here on host arrays (copyB's host branch copies each float4 with a
// plain load and store; the device's cp.async puts the same bytes in the same slot), every slot
// of the B panel written once, by the right value.
TEST(GemmLadderAsyncB, EachThreadCopiesItsBFloat4sToStashPanelsSlots) {
  const int M = 256, N = 384, K = 64, rowBase = 128, colBase = 256;
  std::vector<float> A(size_t(M) * K), B(size_t(K) * N);
  for (size_t e = 0; e < A.size(); ++e) A[e] = float(e);
  for (size_t e = 0; e < B.size(); ++e) B[e] = float(e);
  for (int k0 : {0, 32}) {
    std::vector<float> Bs(kBK * kBN, -1.0f);
    for (int tid = 0; tid < kThreads; ++tid)
      AsyncBPanels(A.data(), B.data(), N, K, rowBase, colBase, tid).copyB(k0, Bs.data());
    for (int r = 0; r < kBK; ++r)
      for (int c = 0; c < kBN; ++c)
        ASSERT_EQ(Bs[size_t(r) * kBN + c], B[size_t(k0 + r) * N + colBase + c])
            << "B panel at k0 " << k0 << ", row " << r << ", column " << c;
  }
}

// Step 14's [device] line: which copies this build makes at these sizes. Below compute_80 and
// where no tile is interior, none by cp.async, and it says that step 13's code runs.
TEST(GemmLadderAsyncB, TheDeviceLineNamesTheCopiesThisBuildMakes) {
  EXPECT_EQ(asyncCopyText(90, 1024, 1024, 1024),
            "B copies: cp.async for the interior tiles, 64 of 64 (the device code this GPU runs "
            "is compute_90)");
  EXPECT_EQ(asyncCopyText(75, 1024, 1024, 1024),
            "B copies: none, the device code this GPU runs is compute_75 (cp.async needs compute_80), so "
            "step 14 runs step 13's code");
  EXPECT_EQ(asyncCopyText(80, 1000, 1030, 999),
            "B copies: none, no tile is interior at these sizes, so step 14 runs step 13's code "
            "(the device code this GPU runs is compute_80)");
  EXPECT_EQ(asyncCopyText(90, 130, 132, 512),
            "B copies: cp.async for the interior tiles, 1 of 4 (the device code this GPU runs is "
            "compute_90)");
}

// Steps 15-16 (256 threads; warps of 64 x 4 TN): ringCol0 with storeWarpTile's map covers the
// 128 x 16 TN tile once, is warpTileCol0 at TN = 8, and a warp's B fragment reads at one k are
// contiguous float4s (TN / 4 runs of 4, each 64 bytes).
TEST(GemmLadderRing, TheWideMapCoversItsTileOnceAndMatchesStep9sAtEightColumns) {
  for (int tn : {kTN, 2 * kTN}) {
    const int bn = 16 * tn;
    std::vector<int> owner(size_t(kBM * bn), -1);
    for (int tid = 0; tid < kThreads; ++tid) {
      if (tn == kTN) EXPECT_EQ(ringCol0(tid, tn), warpTileCol0(tid)) << tid;
      for (int i = 0; i < kTM; ++i)
        for (int j = 0; j < tn; ++j) {
          const int r = warpTileRow0(tid) + (i / 4) * (kWM / 2) + i % 4;
          const int c = ringCol0(tid, tn) + (j / 4) * kLaneSpan + j % 4;
          ASSERT_TRUE(r >= 0 && r < kBM && c >= 0 && c < bn) << tid;
          EXPECT_EQ(owner[size_t(r * bn + c)], -1) << "TN " << tn << ", row " << r << ", col " << c;
          owner[size_t(r * bn + c)] = tid;
        }
    }
    for (int warp = 0; warp < kThreads / 32; ++warp)
      for (int h = 0; h < tn / 4; ++h) {
        std::set<int> b;
        for (int lane = 0; lane < 32; ++lane) b.insert(ringCol0(32 * warp + lane, tn) + h * kLaneSpan);
        ASSERT_EQ(b.size(), 4u);
        EXPECT_EQ(*b.rbegin() - *b.begin(), 12);
      }
  }
}

// Steps 15-16's A copies (ringACopy, the kernel's own map of where each copy lands): the 32 lanes
// of a warp write 32 different banks in each copy instruction, and the block's copies fill the
// 8 x 128 panel once. That each copy reads the A element of its place is the recorded runs' check
// (the kernel computes the source from tid itself).
TEST(GemmLadderRing, AWarpsACopiesFallOnThirtyTwoBanksAndFillThePanelOnce) {
  std::set<int> filled;
  for (int warp = 0; warp < kThreads / 32; ++warp)
    for (int i = 0; i < kBM * kRingBK / kThreads; ++i) {
      std::set<int> banks;
      for (int lane = 0; lane < 32; ++lane) {
        const int at = ringACopy(32 * warp + lane, i);
        banks.insert(at % 32);
        ASSERT_LT(at % kBMPad, kBM) << "a copy lands in the padding";
        EXPECT_TRUE(filled.insert(at).second) << "two copies land on " << at;
      }
      EXPECT_EQ(banks.size(), 32u) << "warp " << warp << ", copy " << i;
    }
  EXPECT_EQ(filled.size(), size_t(kBM * kRingBK)) << "every (k, row) of the panel copied";
}

// Step 16's rule depends on M and N alone and never splits K; its line says which kernel runs.
TEST(GemmLadderRing, TheWideTileTakesOnlyGridsOfAtLeast256TilesAndNeverSplits) {
  EXPECT_FALSE(wideTiles(1024, 1024));  // 8 x 4 = 32 tiles
  EXPECT_FALSE(wideTiles(2048, 2048));  // 128
  EXPECT_TRUE(wideTiles(4096, 4096));   // 512
  EXPECT_TRUE(wideTiles(2000, 4000));   // 16 x 16 = 256
  EXPECT_FALSE(wideTiles(1920, 4000));  // 15 x 16 = 240
  for (long long m : {2000LL, 4096LL, 8192LL})
    for (long long k : {16LL, 64LL, 100000LL})
      if (wideTiles(m, 4000)) EXPECT_EQ(splitCount(m, 4000, k), 1) << m << " " << k;
  EXPECT_EQ(wideText(2000, 4000), "8 x 16 outputs a thread, C in 256 tiles of 128 x 256 (at least 256)");
  EXPECT_EQ(wideText(1024, 1024), "none, C has 32 tiles of 128 x 256 (under 256), so step 16 runs step 15");
  EXPECT_EQ(ringCopyText(90), "cp.async: both panels (the device code this GPU runs is compute_90)");
  EXPECT_EQ(ringCopyText(75), "cp.async: none, the device code this GPU runs is compute_75 (cp.async "
                              "needs compute_80), so steps 15-16 move each value by a load into a "
                              "register and a store");
  EXPECT_EQ(kRingSlots * kRingBK * (kBMPad + 2 * kBN) * 4, 37248) << "step 16's 36.4 KiB";
  // The instance each size launches: no edge instance only where every tile lies inside C.
  EXPECT_EQ(ringKernel<8>(1024, 1024, 1024), (gemmRing<8, true, true>));
  EXPECT_EQ(ringKernel<8>(1024, 1024, 1000), (gemmRing<8, true, false>)) << "K % 16 != 0";
  EXPECT_EQ(ringKernel<8>(1000, 1024, 1024), (gemmRing<8, true, false>)) << "M % 128 != 0";
  EXPECT_EQ(ringKernel<8>(1024, 1000, 1024), (gemmRing<8, true, false>)) << "N % 128 != 0";
  EXPECT_EQ(ringKernel<8>(1000, 1030, 999), (gemmRing<8, false, false>)) << "N % 4 != 0";
  EXPECT_EQ(ringKernel<16>(4096, 4096, 4096), (gemmRing<16, true, true>));
  EXPECT_EQ(ringKernel<16>(4096, 3968, 4096), (gemmRing<16, true, false>)) << "N % 256 != 0";
  EXPECT_EQ(ringKernel<16>(2000, 4000, 64), (gemmRing<16, true, false>));
  EXPECT_EQ(ringTilesText(1024, 1024, 1024, 8), "all 64 inside C (M a multiple of 128, N of 128, K "
                                                "of 16): the kernel without an edge instance");
  EXPECT_EQ(ringTilesText(2000, 4000, 64, 16), "225 of 256 copy without bounds tests, the rest "
                                               "through zero-filling copies");
  EXPECT_EQ(ringTilesText(130, 132, 512, 8), "1 of 4 copy without bounds tests, the rest through "
                                             "zero-filling copies");
  EXPECT_EQ(ringTilesText(1000, 1030, 999, 8), "all 72 through zero-filling copies, B's 4 bytes at "
                                               "a time (N = 1030 is not a multiple of 4)");
  EXPECT_EQ(kRingSlots * kRingBK * (kBMPad + kBN) * 4, 24960) << "step 15's 24.4 KiB";
}

}  // namespace
