// SPDX-License-Identifier: MIT
// Final project - gemm_ladder: from 16x16 tiles toward cuBLAS FP32, one idea a step.
//
// One FP32 GEMM, C = A * B (row-major, any sizes), runs through sixteen steps, each but steps 8
// and 15 changing one thing from the step before: each step's comment says what, and so does its
// printed "changes:" line. Every step is checked before it is timed (output poisoned with NaN, every
// element against a double reference, the tolerance scaled with K and printed with the worst
// error), then timed, and placed against the FP32 peak this program measures. A separate program
// (anchors/cublas_sgemm.cu) times cuBLAS on the same inputs.
//
// Build: nvcc -std=c++17 -O3 -arch=sm_75 -lineinfo -o gemm_ladder gemm_ladder.cu
// Run:   ./gemm_ladder
// Run:   ./gemm_ladder -n 2048
// Run:   ./gemm_ladder -n 4096
// Run:   ./gemm_ladder -m 1000 -n 1030 -k 999
// Run:   ./gemm_ladder -m 2000 -n 4000 -k 64
// Sanitize: ./gemm_ladder -m 130 -n 132 -k 512 -iters 1 -warmups 0
//
// sm_75 is the course's T4 (and Compiler Explorer's card); a newer GPU runs the PTX it embeds. -h
// lists the options.
// Exercise (step 4), with a GPU: python3 scripts/suite.py exercise check gemm_ladder judges
// exercises/gemm_ladder.cu at every Run: line. Without one: python3 scripts/suite.py ce-link
// exercises/gemm_ladder.cu opens it in Compiler Explorer; save the whole executor pane to FILE, then
// python3 scripts/suite.py exercise check gemm_ladder --pane FILE [--args '...'] (one run a pane).

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

// =============================================================================
// The ladder: sixteen steps, each but steps 8 and 15 changing one thing from the step before (2-3,
// 4-5, 6-7, 10-11, 13-14 and 15-16 are two instances of one kernel each; step 13 adds a summing
// kernel)
// =============================================================================
// Every kernel computes C (M x N) = A (M x K) * B (K x N), row-major, any sizes: panel loads
// outside A or B read zero, stores outside C are skipped. In steps 1-12 every output is one fmaf
// chain in ascending k, started at 0.0f: they change where the data lives and who computes what,
// not the arithmetic. Steps 13-16, where they split K, add a few such chains in a fixed order.
constexpr int kT1 = 16;              // step 1: 16 x 16 tiles, 256 threads
constexpr int kBK = 16;              // steps 2-14: k per panel, step 1's tile depth
constexpr int kTM2 = 8;              // steps 2-3: 8 outputs a thread down a column
constexpr int kBM2 = 64, kBN2 = 64;  // steps 3-4: 64 x 64 block tile
constexpr int kTM = 8, kTN = 8;      // steps 4-15: 8 x 8 micro-tile per thread (16: 8 x 16)
constexpr int kBM = 128, kBN = 128;  // steps 5-15: 128 x 128 block tile (16: 128 x 256)
constexpr int kThreads = kBM * kBN / (kTM * kTN);  // 256
constexpr int kBMPad = kBM + 4;     // A row, steps 8-16: 16-byte aligned, each k row 4 banks on
constexpr int kMinBlocks = 2;      // steps 4-15's launch bound: two blocks an SM (at 256 threads,
                                   // from step 5 on, at most 128 registers a thread)
constexpr int kWM = 64, kWN = 32;  // steps 9-15: the output tile of one warp (16: 64 x 64)
constexpr int kLaneSpan = 16;      // steps 9-16: a lane's blocks of 4 columns sit 16 apart
static_assert(kThreads == 256 && kBM * kBK % (4 * kThreads) == 0 && kBK * kBN % (4 * kThreads) == 0,
              "steps 6-14: 256 threads load whole float4s of each 128 x 16 panel");
static_assert((kBM / kWM) * (kBN / kWN) * 32 == kThreads && kWM == 8 * 2 * 4 && kWN == 4 * 2 * 4,
              "steps 9-14: 8 warps; a warp's 32 lanes (8 x 4) cover its tile with 2 x 2 "
              "blocks of 4 x 4 outputs each, which is the 8 x 8 micro-tile of one thread");
static_assert(kBK % 2 == 0 && 2 * (kBK * kBMPad + kBK * kBN) * 4 <= 48 * 1024,
              "steps 10-14: both panel pairs fit the 48 KiB every GPU gives a block without "
              "opt-in; step 11's fragments alternate between two register sets (even k a panel)");

// snippet: step1
// Step 1 - the project's kernel: 16 x 16 tiles of A and B in shared memory, one
// output per thread. Each value fetched from global memory serves 16 FMAs.
// launch assumption: block (16, 16); grid (ceil(N / 16), ceil(M / 16)).
// memory: per 16-wide k step a block loads a 16 x 16 tile of A and of B.
__global__ void __launch_bounds__(kT1 * kT1)
    gemmTiled16(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[kT1][kT1], Bs[kT1][kT1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * kT1 + ty, col = blockIdx.x * kT1 + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += kT1) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[1LL * row * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[1LL * (k0 + ty) * N + col] : 0.0f;
    __syncthreads();  // the tiles are complete
#pragma unroll
    for (int kk = 0; kk < kT1; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
    __syncthreads();  // nobody overwrites a tile another thread still reads
  }
  if (row < M && col < N) C[1LL * row * N + col] = acc;
}
// end snippet

// Steps 2-3 - 1-D block tiling: each thread computes 8 outputs down one column, so one B value
// read from shared memory serves 8 FMAs (step 1: 1). Step 2 keeps step 1's 16 x 16 tile, which 32
// such threads cover; step 3 runs the same kernel on a 64 x 64 block tile, 512 threads.
// launch assumption: BM * BN / 8 threads; grid (ceil(N / BN), ceil(M / BM)).
// memory: per 16-wide k step a block loads a BM x 16 panel of A and 16 x BN of B.
template <int BM, int BN>
__global__ void __launch_bounds__(BM * BN / kTM2)
    gemm1DBlocktile(const float* A, const float* B, float* C, int M, int N, int K) {
  constexpr int threads = BM * BN / kTM2;
  __shared__ float As[BM * kBK], Bs[kBK * BN];
  const int tid = threadIdx.x, rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;
  const int tRow = tid / BN, tCol = tid % BN;  // rows tRow*8 .. +7, column tCol
  float acc[kTM2] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
    for (int e = tid; e < BM * kBK; e += threads) {
      const int ar = rowBase + e / kBK, ak = k0 + e % kBK;
      As[e] = (ar < M && ak < K) ? A[1LL * ar * K + ak] : 0.0f;
    }
    for (int e = tid; e < kBK * BN; e += threads) {
      const int bk = k0 + e / BN, bc = colBase + e % BN;
      Bs[e] = (bk < K && bc < N) ? B[1LL * bk * N + bc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      const float b = Bs[kk * BN + tCol];
#pragma unroll
      for (int i = 0; i < kTM2; ++i) acc[i] = fmaf(As[(tRow * kTM2 + i) * kBK + kk], b, acc[i]);
    }
    __syncthreads();
  }
  for (int i = 0; i < kTM2; ++i) {
    const int r = rowBase + tRow * kTM2 + i, c = colBase + tCol;
    if (r < M && c < N) C[1LL * r * N + c] = acc[i];
  }
}

// Steps 4-5 (the lesson's kernel) - 2-D register blocking: each thread computes an 8 x 8 micro-tile.
// Per k it reads 8 A and 8 B values from shared memory into registers (its fragments) and does 64
// FMAs with them: 4 per shared-memory read (step 3: 8 per 9). Step 4 keeps step 3's 64 x 64 block
// tile, which 64 threads of 8 x 8 outputs cover; step 5 runs the same kernel on 128 x 128, 256 threads.
// launch assumption: BM * BN / 64 threads; grid (ceil(N / BN), ceil(M / BM)); thread t owns rows
//   (t / (BN / 8)) * 8 .. +7 and columns (t % (BN / 8)) * 8 .. +7 of the block tile.
// memory: per 16-wide k step a block loads a BM x 16 panel of A (as in A) and a 16 x BN panel of B.
// snippet: step4
// solution: register-blocking
template <int BM, int BN>
__global__ void __launch_bounds__(BM * BN / (kTM * kTN), kMinBlocks)
    gemm2DRegisterBlocked(const float* A, const float* B, float* C, int M, int N, int K) {
  constexpr int threads = BM * BN / (kTM * kTN);
  __shared__ float As[BM * kBK], Bs[kBK * BN];
  const int tid = threadIdx.x, rowBase = blockIdx.y * BM, colBase = blockIdx.x * BN;
  const int tRow = tid / (BN / kTN), tCol = tid % (BN / kTN);
  float acc[kTM][kTN] = {};
  float fragA[kTM], fragB[kTN];
  for (int k0 = 0; k0 < K; k0 += kBK) {
    for (int e = tid; e < BM * kBK; e += threads) {  // A panel, BM x 16
      const int r = rowBase + e / kBK, k = k0 + e % kBK;
      As[e] = (r < M && k < K) ? A[1LL * r * K + k] : 0.0f;
    }
    for (int e = tid; e < kBK * BN; e += threads) {  // B panel, 16 x BN
      const int k = k0 + e / BN, c = colBase + e % BN;
      Bs[e] = (k < K && c < N) ? B[1LL * k * N + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
#pragma unroll
      for (int i = 0; i < kTM; ++i) fragA[i] = As[(tRow * kTM + i) * kBK + kk];
#pragma unroll
      for (int j = 0; j < kTN; ++j) fragB[j] = Bs[kk * BN + tCol * kTN + j];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(fragA[i], fragB[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) {
      const int r = rowBase + tRow * kTM + i, c = colBase + tCol * kTN + j;
      if (r < M && c < N) C[1LL * r * N + c] = acc[i][j];
    }
}
// end solution
// end snippet

// Steps 6-14 share their panel loads. Four consecutive floats of row r of a rows x cols matrix from
// column c (a multiple of 4), zero outside it: one 16-byte load when all four are inside and
// 16-byte aligned (cols % 4 == 0), else four guarded scalar loads.
__device__ __forceinline__ float4 load4(const float* p, int r, int c, int rows, int cols) {
  const float* q = p + 1LL * r * cols + c;
  if (r < rows && c + 3 < cols && cols % 4 == 0) return *reinterpret_cast<const float4*>(q);
  const bool in = r < rows;
  return make_float4(in && c < cols ? q[0] : 0.0f, in && c + 1 < cols ? q[1] : 0.0f,
                     in && c + 2 < cols ? q[2] : 0.0f, in && c + 3 < cols ? q[3] : 0.0f);
}

// One thread's share of a 128 x 16 panel of A and a 16 x 128 panel of B, 256 threads loading them.
struct PanelRegs {
  float4 a[kBM * kBK / 4 / kThreads], b[kBK * kBN / 4 / kThreads];
};

// Global -> registers: whole float4s, consecutive threads on consecutive addresses within a panel
// row (A: 4 threads a row, B: 32).
__device__ __forceinline__ void fetchPanels(const float* A, const float* B, int M, int N, int K,
                                            int rowBase, int colBase, int k0, PanelRegs& p) {
#pragma unroll
  for (int i = 0; i < kBM * kBK / 4 / kThreads; ++i) {
    const int e = threadIdx.x + i * kThreads;
    p.a[i] = load4(A, rowBase + e / (kBK / 4), k0 + e % (kBK / 4) * 4, M, K);
  }
#pragma unroll
  for (int i = 0; i < kBK * kBN / 4 / kThreads; ++i) {
    const int e = threadIdx.x + i * kThreads;
    p.b[i] = load4(B, k0 + e / (kBN / 4), colBase + e % (kBN / 4) * 4, K, N);
  }
}

// Where the B float4 e (e = tid + i x 256) of a panel goes: row e / 32, column e % 32 x 4.
__host__ __device__ inline int bSlot(int e) { return e / (kBN / 4) * kBN + e % (kBN / 4) * 4; }
// Registers -> shared, steps 6-7: both panels as in A and B (As[m][k], Bs[k][n]), one 16-byte store a float4.
__device__ __forceinline__ void stashPanelsAsLoaded(const PanelRegs& p, float* As, float* Bs) {
#pragma unroll
  for (int i = 0, e = threadIdx.x; i < kBM * kBK / 4 / kThreads; ++i, e += kThreads)
    *reinterpret_cast<float4*>(&As[e / (kBK / 4) * kBK + e % (kBK / 4) * 4]) = p.a[i];
#pragma unroll
  for (int i = 0, e = threadIdx.x; i < kBK * kBN / 4 / kThreads; ++i, e += kThreads)
    *reinterpret_cast<float4*>(&Bs[bSlot(e)]) = p.b[i];
}

// Registers -> shared, steps 8-14: A transposed (As[k][m], rows kBMPad long), so the 8 A values a
// thread needs at one k are two 16-byte reads (contiguous in step 8, two runs of 4 from step 9).
__device__ __forceinline__ void stashA(const PanelRegs& p, float* As) {
#pragma unroll
  for (int i = 0; i < kBM * kBK / 4 / kThreads; ++i) {
    const int e = threadIdx.x + i * kThreads, m = e / (kBK / 4), k = e % (kBK / 4) * 4;
    As[(k + 0) * kBMPad + m] = p.a[i].x, As[(k + 1) * kBMPad + m] = p.a[i].y;
    As[(k + 2) * kBMPad + m] = p.a[i].z, As[(k + 3) * kBMPad + m] = p.a[i].w;
  }
}
__device__ __forceinline__ void stashPanels(const PanelRegs& p, float* As, float* Bs) {
  stashA(p, As);
#pragma unroll
  for (int i = 0; i < kBK * kBN / 4 / kThreads; ++i)
    *reinterpret_cast<float4*>(&Bs[bSlot(threadIdx.x + i * kThreads)]) = p.b[i];
}

// Four outputs of row r from column c: one 16-byte store where it can.
__device__ __forceinline__ void store4(float* C, int r, int c, int M, int N, const float* v) {
  float* q = C + 1LL * r * N + c;
  if (r < M && c + 3 < N && N % 4 == 0)
    *reinterpret_cast<float4*>(q) = make_float4(v[0], v[1], v[2], v[3]);
  else
    for (int j = 0; j < 4; ++j) if (r < M && c + j < N) q[j] = v[j];
}

// A fragment of 8 floats from shared memory: two 16-byte reads, at p and p + gap (16-byte aligned).
__device__ __forceinline__ void read8(const float* p, int gap, float* f) {
  const float4 x = *reinterpret_cast<const float4*>(p);
  const float4 y = *reinterpret_cast<const float4*>(p + gap);
  f[0] = x.x, f[1] = x.y, f[2] = x.z, f[3] = x.w, f[4] = y.x, f[5] = y.y, f[6] = y.z, f[7] = y.w;
}

// The 8 x TN FMAs of one k (TN = 8; 16 in step 16): acc[i][j] += fa[i] * fb[j], each one fmaf.
template <int TN>
__device__ __forceinline__ void microTileFma(const float* fa, const float* fb,
                                             float (&acc)[kTM][TN]) {
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(fa[i], fb[j], acc[i][j]);
}

// A thread's 8 x 8 outputs at rows row0 .. +7 and columns col0 .. +7 (steps 6-8).
__device__ __forceinline__ void storeMicroTile(float* C, int M, int N, int row0, int col0,
                                               float (&acc)[kTM][kTN]) {
#pragma unroll
  for (int i = 0; i < kTM; ++i) {
    store4(C, row0 + i, col0, M, N, &acc[i][0]);
    store4(C, row0 + i, col0 + 4, M, N, &acc[i][4]);
  }
}

// Steps 6-7 - float4 accesses. Step 6: the lesson's step 5's tiles, micro-tiles, shared layout and
// fragment reads, but every global load and store moves 16 bytes (float4) where the row length allows
// (load4, store4; the program prints where), so each float4 also goes into shared memory whole.
// Step 7 (Float4B) reads the B fragment as two float4s in the source. What the compiler makes of
// the shared-memory reads is not printed (cuobjdump -sass shows it).
// launch assumption: as step 5. memory: as the lesson's step 5.
template <bool Float4B>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    gemmVectorized(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ __align__(16) float As[kBM * kBK];
  __shared__ __align__(16) float Bs[kBK * kBN];
  const int tid = threadIdx.x, rowBase = blockIdx.y * kBM, colBase = blockIdx.x * kBN;
  const int tRow = tid / (kBN / kTN), tCol = tid % (kBN / kTN);
  float acc[kTM][kTN] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
    PanelRegs p;
    fetchPanels(A, B, M, N, K, rowBase, colBase, k0, p);
    stashPanelsAsLoaded(p, As, Bs);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float fa[kTM], fb[kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i) fa[i] = As[(tRow * kTM + i) * kBK + kk];  // 16 floats apart
      if (Float4B) read8(&Bs[kk * kBN + tCol * kTN], 4, fb);  // two 16-byte reads
#pragma unroll
      for (int j = 0; j < kTN && !Float4B; ++j) fb[j] = Bs[kk * kBN + tCol * kTN + j];
      microTileFma(fa, fb, acc);
    }
    __syncthreads();
  }
  storeMicroTile(C, M, N, rowBase + tRow * kTM, colBase + tCol * kTN, acc);
}

// Step 8 - the A panel stored transposed: step 7 with the A panel k-major (As[k][m], 128 + 4 floats
// a row), so a thread's 8 A values at one k sit side by side: two 16-byte reads, like its B values.
// launch assumption: as step 5. memory: as the lesson's step 5, A panel 16 x 132 floats.
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    gemmTransposedA(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ __align__(16) float As[kBK * kBMPad];
  __shared__ __align__(16) float Bs[kBK * kBN];
  const int tid = threadIdx.x, rowBase = blockIdx.y * kBM, colBase = blockIdx.x * kBN;
  const int tRow = tid / (kBN / kTN), tCol = tid % (kBN / kTN);
  float acc[kTM][kTN] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
    PanelRegs p;
    fetchPanels(A, B, M, N, K, rowBase, colBase, k0, p);
    stashPanels(p, As, Bs);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float fa[kTM], fb[kTN];
      read8(&As[kk * kBMPad + tRow * kTM], 4, fa);  // two 16-byte reads each
      read8(&Bs[kk * kBN + tCol * kTN], 4, fb);
      microTileFma(fa, fb, acc);
    }
    __syncthreads();
  }
  storeMicroTile(C, M, N, rowBase + tRow * kTM, colBase + tCol * kTN, acc);
}

// Steps 9-15 map threads to outputs by warp (step 16 as ringCol0 says): warp w owns a 64 x 32
// tile, and its lane l (8 x 4 lanes) owns 2 x 2 blocks of 4 x 4 outputs, rows (l / 4) * 4 +
// {0, 32} and columns (l % 4) * 4 + {0, 16} of it. The fragments a warp reads at one k are then 8
// contiguous float4 of A and 4 of B (128 and 64 bytes, no bank conflict), where step 8's 16 float4
// of B spaced 32 bytes apart conflict. Thread tid's first output row and column in the block tile:
// the 256 threads cover the 128 x 128 tile once, with the contiguity above.
__host__ __device__ inline int warpTileRow0(int tid) {
  return (tid / 32 / (kBN / kWN)) * kWM + (tid % 32 / 4) * 4;
}
__host__ __device__ inline int warpTileCol0(int tid) {
  return (tid / 32 % (kBN / kWN)) * kWN + (tid % 32 % 4) * 4;
}

// The fragments at k = kk, four 16-byte reads: 8 A (rows row0 + {0..3, 32..35}), 8 B (columns
// col0 + {0..3, 16..19}).
__device__ __forceinline__ void readFragments(const float* As, const float* Bs, int kk, int row0,
                                              int col0, float* fa, float* fb) {
  read8(&As[kk * kBMPad + row0], kWM / 2, fa);
  read8(&Bs[kk * kBN + col0], kLaneSpan, fb);
}

template <int TN>  // a lane's TN / 4 blocks of 4 columns, 16 apart (TN = 16: step 16)
__device__ __forceinline__ void storeWarpTile(float* C, int M, int N, int row0, int col0,
                                              float (&acc)[kTM][TN]) {
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int h = 0; h < TN / 4; ++h)
      store4(C, row0 + (i / 4) * (kWM / 2) + i % 4, col0 + h * kLaneSpan, M, N, &acc[i][4 * h]);
}

// Step 9 - warp tiling: step 8 with the warp-shaped thread-to-output map above.
// launch assumption: as step 5. memory: as step 8.
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    gemmWarpTiled(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ __align__(16) float As[kBK * kBMPad];
  __shared__ __align__(16) float Bs[kBK * kBN];
  const int rowBase = blockIdx.y * kBM, colBase = blockIdx.x * kBN;
  const int row0 = warpTileRow0(threadIdx.x), col0 = warpTileCol0(threadIdx.x);
  float acc[kTM][kTN] = {};
  for (int k0 = 0; k0 < K; k0 += kBK) {
    PanelRegs p;
    fetchPanels(A, B, M, N, K, rowBase, colBase, k0, p);
    stashPanels(p, As, Bs);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float fa[kTM], fb[kTN];
      readFragments(As, Bs, kk, row0, col0, fa, fb);
      microTileFma(fa, fb, acc);
    }
    __syncthreads();
  }
  storeWarpTile(C, M, N, rowBase + row0, colBase + col0, acc);
}

// snippet: step10
// Steps 10-11 - double buffering. Step 10: step 9 with two panel pairs in shared memory; the source
// issues the loads of panel s + 1 into registers before the FMAs of panel s and stores them into the
// other pair after them: one barrier per panel instead of two. Step 11 (FragPairs) also keeps two fragment
// sets in registers: the fragments of the next k are read before the FMAs of this one. This block's
// sums over k in [kBegin, kEnd) (kBegin a multiple of 16; steps 10-12 sum all of K, steps 13-14 one
// part of it), added into acc in ascending k. fetch(k0, p) loads the panels at k0 into p:
// GuardedPanels in steps 10-11, and in steps 12-14 for the blocks that take no interior path.
struct PanelPairs {
  float a[2][kBK * kBMPad], b[2][kBK * kBN];
};
// One set of buffers a block, whichever way its kernel fetches (steps 12-14 have two).
__device__ __forceinline__ PanelPairs& panelPairs() {
  __shared__ __align__(16) PanelPairs pairs;
  return pairs;
}

struct GuardedPanels {  // every float4 through load4's bounds tests
  const float *A, *B;
  int M, N, K;
  __device__ void operator()(int k0, PanelRegs& p) const {
    fetchPanels(A, B, M, N, K, blockIdx.y * kBM, blockIdx.x * kBN, k0, p);
  }
};

// Steps 10-13 move a panel through registers: startPanel issues its loads into
// p, and finishPanel, once the FMAs meant to hide them are issued, stores p into
// the other pair. (Step 14 overloads both, further down, for its B copies.)
template <typename Fetch>
__device__ __forceinline__ void startPanel(const Fetch& fetch, int k0, PanelRegs& p, float*,
                                           float*) {
  fetch(k0, p);
}
template <typename Fetch>
__device__ __forceinline__ void finishPanel(const Fetch&, const PanelRegs& p, float* As,
                                            float* Bs) {
  stashPanels(p, As, Bs);
}

template <bool FragPairs = true, typename Fetch>
__device__ __forceinline__ void doubleBufferedSums(const Fetch& fetch, int kBegin, int kEnd,
                                                   float (&acc)[kTM][kTN]) {
  auto& As = panelPairs().a;
  auto& Bs = panelPairs().b;
  const int row0 = warpTileRow0(threadIdx.x), col0 = warpTileCol0(threadIdx.x);
  float fa[2][kTM], fb[2][kTN];  // step 10 uses set 0 alone
  PanelRegs p;
  const int panels = (kEnd - kBegin + kBK - 1) / kBK;
  if (panels > 0) {
    startPanel(fetch, kBegin, p, As[0], Bs[0]);
    finishPanel(fetch, p, As[0], Bs[0]);
    __syncthreads();
    if (FragPairs) readFragments(As[0], Bs[0], 0, row0, col0, fa[0], fb[0]);
  }
  for (int s = 0; s < panels; ++s) {
    const int cur = s % 2;
    const bool more = s + 1 < panels;
    // The other pair was last read during panel s - 1, before the barrier that
    // ended it, so the next panel can go into it now, without a second barrier.
    if (more) startPanel(fetch, kBegin + (s + 1) * kBK, p, As[1 - cur], Bs[1 - cur]);
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      if (!FragPairs)  // step 10: this k's fragments
        readFragments(As[cur], Bs[cur], kk, row0, col0, fa[0], fb[0]);
      else if (kk + 1 < kBK)  // step 11: the next k's, into the other set
        readFragments(As[cur], Bs[cur], kk + 1, row0, col0, fa[(kk + 1) % 2], fb[(kk + 1) % 2]);
      microTileFma(fa[FragPairs ? kk % 2 : 0], fb[FragPairs ? kk % 2 : 0], acc);
    }
    if (more) {
      finishPanel(fetch, p, As[1 - cur], Bs[1 - cur]);
      __syncthreads();
      if (FragPairs) readFragments(As[1 - cur], Bs[1 - cur], 0, row0, col0, fa[0], fb[0]);
    }
  }
}

// launch assumption: as step 5. memory: as step 8, two pairs of 16 x 132 and
//   16 x 128 panels (32.5 KiB).
template <bool FragPairs>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    gemmDoubleBuffered(const float* A, const float* B, float* C, int M, int N, int K) {
  float acc[kTM][kTN] = {};
  doubleBufferedSums<FragPairs>(GuardedPanels{A, B, M, N, K}, 0, K, acc);
  storeWarpTile(C, M, N, blockIdx.y * kBM + warpTileRow0(threadIdx.x),
                blockIdx.x * kBN + warpTileCol0(threadIdx.x), acc);
}
// end snippet

// Step 12 - interior blocks load without bounds tests. Steps 6-11 send every float4 through load4:
// a 64-bit row offset, three tests and a branch per load, every panel. A block whose 128 x 128 tile
// lies inside C, when K is a multiple of 16 and N of 4, only ever loads whole float4s inside A and
// B, 16-byte aligned: its loads are a base pointer, set once, plus an offset. Other blocks (and
// every block at other sizes) fetch as step 11. The sums are step 11's, in the same order, so the
// same digits. A blind spot of every transcript: a tile test loosened to let an edge tile take the
// unguarded loads reads past the last row of A, which feeds only outputs that are never stored;
// verify records what memcheck on the Sanitize: run reports of it.
__host__ __device__ inline bool interiorTile(int rowBase, int colBase, int M, int N, int K) {
  return rowBase + kBM <= M && colBase + kBN <= N && K % kBK == 0 && N % 4 == 0;
}

struct InteriorPanels {  // the same float4s as fetchPanels, from two base pointers
  const float *a, *b;  // thread tid's first A and B float4 at k = 0
  int N, K;
  __host__ __device__ InteriorPanels(const float* A, const float* B, int N_, int K_, int rowBase,
                                     int colBase, int tid)
      : a(A + (1LL * rowBase + tid / 4) * K_ + tid % 4 * 4),
        b(B + 1LL * (tid / 32) * N_ + colBase + tid % 32 * 4), N(N_), K(K_) {}
  // This thread's i-th float4 of the panels at k0: A rows kThreads / 4 apart, B rows
  // kThreads / 32 apart.
  __host__ __device__ const float* aAt(int i, int k0) const {
    return a + 1LL * i * (kThreads / 4) * K + k0;
  }
  __host__ __device__ const float* bAt(int i, int k0) const {
    return b + (1LL * k0 + i * (kThreads / 32)) * N;
  }
  // Host code can run it too (the tests do); the pragma is the device compiler's.
  __host__ __device__ void operator()(int k0, PanelRegs& p) const {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int i = 0; i < kBM * kBK / 4 / kThreads; ++i)
      p.a[i] = *reinterpret_cast<const float4*>(aAt(i, k0));
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int i = 0; i < kBK * kBN / 4 / kThreads; ++i)
      p.b[i] = *reinterpret_cast<const float4*>(bAt(i, k0));
  }
};
static_assert(kThreads % 32 == 0 && kBK == 16 && kBN == 128,
              "step 12: a thread's float4s keep their column (the thread count a multiple of "
              "the 4 float4s of an A panel row and of the 32 of a B panel row)");

// Steps 12-14: this block's sums over [kBegin, kEnd), by step 11's code, the loads
// as the block's tile allows (Interior: step 14 passes its own, AsyncBPanels).
template <typename Interior = InteriorPanels>
__device__ __forceinline__ void interiorOrGuardedSums(const float* A, const float* B, int M,
                                                      int N, int K, int kBegin, int kEnd,
                                                      float (&acc)[kTM][kTN]) {
  if (interiorTile(blockIdx.y * kBM, blockIdx.x * kBN, M, N, K))
    doubleBufferedSums(Interior(A, B, N, K, blockIdx.y * kBM, blockIdx.x * kBN, threadIdx.x),
                       kBegin, kEnd, acc);
  else
    doubleBufferedSums(GuardedPanels{A, B, M, N, K}, kBegin, kEnd, acc);
}

// launch assumption: as step 5. memory: as step 10.
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    gemmInteriorLoads(const float* A, const float* B, float* C, int M, int N, int K) {
  float acc[kTM][kTN] = {};
  interiorOrGuardedSums(A, B, M, N, K, 0, K, acc);
  storeWarpTile(C, M, N, blockIdx.y * kBM + warpTileRow0(threadIdx.x),
                blockIdx.x * kBN + warpTileCol0(threadIdx.x), acc);
}

// How many of a grid's tiles take step 12's interior loads.
long long interiorTiles(long long M, long long N, long long K) {
  long long count = 0;
  for (long long r = 0; r + kBM <= M; r += kBM)
    for (long long c = 0; c + kBN <= N; c += kBN)
      count += interiorTile(int(r), int(c), int(M), int(N), int(K)) ? 1 : 0;
  return count;
}

// Step 13 - split K where the grid is small: fewer than kSplitBlocks (256) blocks of 128 x 128
// tiles (1024 x 1024: 64 blocks for the H200's 132 SMs). Step 13 then
// cuts K into 2, 4, 8 or 16 parts, sums each part with step 12's code in a grid layer of its own
// (blockIdx.z) into a scratch buffer, and a second kernel adds the parts in ascending order. The
// split follows from M, N and K alone, never from the device, so every GPU adds the same numbers in
// the same order and prints the same digits (no atomics). With one part (tiles enough, or K too
// short) it runs step 12's code in one launch that writes C directly.
constexpr int kSplitBlocks = 256;  // split while the grid has fewer blocks than this
constexpr int kSplitMinK = 256;    // ... and K / parts stays at least this (a part rounds up
                                   // to whole 16-k panels; the last takes the rest)
constexpr int kMaxSplits = 16;

__host__ __device__ inline int splitCount(long long M, long long N, long long K) {
  const long long tiles = ((M + kBM - 1) / kBM) * ((N + kBN - 1) / kBN);
  int splits = 1;
  while (splits < kMaxSplits && tiles * splits < kSplitBlocks && K / (2 * splits) >= kSplitMinK)
    splits *= 2;
  return splits;
}
// k per part: K / splits rounded up to whole panels; the last part takes the rest.
__host__ __device__ inline int splitDepth(long long K, int splits) {
  return int(((K + splits - 1) / splits + kBK - 1) / kBK * kBK);
}

// C[e] = ((W0[e] + W1[e]) + W2[e]) + ...: the parts in ascending order, one
// thread per element (grid-stride).
__global__ void reduceSplits(const float* W, float* C, long long count, int splits) {
  const long long step = 1LL * gridDim.x * blockDim.x;
  for (long long e = 1LL * blockIdx.x * blockDim.x + threadIdx.x; e < count; e += step) {
    float sum = W[e];
    for (int z = 1; z < splits; ++z) sum += W[z * count + e];
    C[e] = sum;
  }
}

// Step 14 - the B panel copied by cp.async (sm_80 and later): from global memory straight into
// shared memory, no registers holding the data on its way and no store instruction. Step 13's
// interior blocks load the next panel into registers as a panel starts and store it after its FMAs;
// step 14 issues B's copies as the panel before starts and waits for them (cp.async.wait_all) just
// before the barrier. B's panel lies as in B, so each float4 is one 16-byte copy; A is transposed
// on its way and still passes through registers. The values land where step 13 puts them, so the
// sums are step 13's. Built for an older GPU (the Build: line's sm_75) it runs step 13's code; the
// [device] line says which this build runs.
__host__ __device__ inline void copy16Async(float* dst, const float* src) {  // both 16-byte aligned
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                   static_cast<unsigned>(__cvta_generic_to_shared(dst))), "l"(src) : "memory");
#else
  *reinterpret_cast<float4*>(dst) = *reinterpret_cast<const float4*>(src);
#endif
}
__device__ __forceinline__ void waitCopies() {  // this thread's copies have landed
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// Step 12's float4s (InteriorPanels' addresses): A's loaded into registers, B's
// copied into the B panel, each where stashPanels would store it.
struct AsyncBPanels {
  InteriorPanels from;
  int tid;
  __host__ __device__ AsyncBPanels(const float* A, const float* B, int N, int K, int rowBase,
                                   int colBase, int tid_)
      : from(A, B, N, K, rowBase, colBase, tid_), tid(tid_) {}
  // The B copies of the panel at k0 (host code can run them too: the tests do).
  __host__ __device__ void copyB(int k0, float* Bs) const {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
    for (int i = 0; i < kBK * kBN / 4 / kThreads; ++i)
      copy16Async(&Bs[bSlot(tid + i * kThreads)], from.bAt(i, k0));
  }
};
// doubleBufferedSums with AsyncBPanels: built for sm_80 or later, a panel
// starts with A's loads and B's copies and finishes with A's transposing store
// and the wait for B; built for an older GPU, both are step 13's.
__device__ __forceinline__ void startPanel(const AsyncBPanels& c, int k0, PanelRegs& p, float*,
                                           float* Bs) {
#if __CUDA_ARCH__ >= 800
#pragma unroll
  for (int i = 0; i < kBM * kBK / 4 / kThreads; ++i)
    p.a[i] = *reinterpret_cast<const float4*>(c.from.aAt(i, k0));
  c.copyB(k0, Bs);
#else
  c.from(k0, p);
#endif
}
// Without the wait, step 14 races: a B copy that lands after the barrier is read stale. Racecheck
// on the Sanitize: run and the check see it only in runs where a copy is that late, which no run
// guarantees: a named blind spot (verify.json records whether its run saw it).
__device__ __forceinline__ void finishPanel(const AsyncBPanels&, const PanelRegs& p, float* As,
                                            float* Bs) {
#if __CUDA_ARCH__ >= 800
  stashA(p, As);
  waitCopies();
#else
  stashPanels(p, As, Bs);
#endif
}

// Steps 13-14: part blockIdx.z of K, interior blocks through Interior (step 13:
// InteriorPanels, step 14: AsyncBPanels), the others through GuardedPanels.
// launch assumption: as step 12, with gridDim.z = the parts; part z sums k in
// [z * depth, min(K, (z + 1) * depth)) into W + z * M * N. memory: as step 10.
template <typename Interior>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    gemmSplitKWith(const float* A, const float* B, float* W, int M, int N, int K, int depth) {
  const int kBegin = blockIdx.z * depth, kEnd = min(K, kBegin + depth);
  float acc[kTM][kTN] = {};
  interiorOrGuardedSums<Interior>(A, B, M, N, K, kBegin, kEnd, acc);
  storeWarpTile(W + 1LL * blockIdx.z * M * N, M, N, blockIdx.y * kBM + warpTileRow0(threadIdx.x),
                blockIdx.x * kBN + warpTileCol0(threadIdx.x), acc);
}

// Steps 15-16 - a ring of cp.async stages (sm_80 and later). Step 15 copies both panels straight
// into shared memory: A's 4 bytes at a time, transposed on the way (As[k][m] as in steps 8-14), B's
// 16 bytes at a time (4 where rows of B are not 16-byte aligned). Panels are 8 deep and sit in a
// ring of three slots. At a stage's last k every thread has read the stage's fragments (one k
// ahead); there each thread waits for its copies, one barrier makes them everyone's, and the copies
// of the stage after next go into the slot of the stage before, so they have 8 k of FMAs (this k's
// and the next stage's first 7) to land in. Step 15 is one design, not one change: the ring
// replaces steps 10-14's panel pairs whole (tuning notes 18-20 measure its parts). The loop runs
// whole rounds of three stages as straight-line code, every slot a constant. Edge tiles (and every
// tile where N % 4 != 0) take an instance of their own, one loop with the slot computed, whose
// copies outside A or B read nothing and write zeros; where every tile lies inside C, the kernel
// holds no edge instance at all (launched by size). Step 16 gives each thread 8 x 16 outputs (a 128
// x 256 block tile) where C has at least kWideTiles of those tiles; elsewhere it runs step 15. Each
// output is still one fmaf chain in ascending k, split as step 13 splits it, so the sums are step
// 14's. Built for an older GPU (the Build: line's sm_75), a copy is a load into a register and a
// store.
constexpr int kRingBK = 8;      // k per stage
constexpr int kRingSlots = 3;   // stages in shared memory at once
constexpr int kWideTiles = 256; // step 16's 8 x 16 micro-tile from this many 128 x 256 tiles of C
static_assert(kWideTiles >= kSplitBlocks && kBK % kRingBK == 0,
              "step 16's wide tiles never split K; a part's depth is whole stages");
static_assert(kRingSlots * kRingBK * (kBMPad + 2 * kBN) * 4 <= 48 * 1024,
              "step 16's ring fits the 48 KiB every GPU gives a block without opt-in");

template <int Bytes>  // 4 or 16, both addresses aligned to it; in == false: zeros, nothing read
__device__ __forceinline__ void copyOrZero(float* dst, const float* src, bool in) {
#if __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src),
                 "r"(in ? 16 : 0) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src),
                 "r"(in ? 4 : 0) : "memory");
#else
  if constexpr (Bytes == 16)
    *reinterpret_cast<float4*>(dst) = in ? *reinterpret_cast<const float4*>(src) : float4{};
  else
    *dst = in ? *src : 0.0f;
#endif
}
__device__ __forceinline__ void commitCopies() {  // the copies issued since form one group
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int Pending>  // all but this thread's Pending newest groups have landed
__device__ __forceinline__ void waitCopiesBut() {
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
#endif
}

template <int TN>  // one ring a block, shared by a kernel's interior and edge instances
__device__ __forceinline__ float* ringSlots() {
  __shared__ __align__(16) float ring[kRingSlots * kRingBK * (kBMPad + 16 * TN)];
  return ring;
}
// A lane's first column: as warpTileCol0, a warp's tile 4 x TN wide (TN = 8: the same).
__host__ __device__ inline int ringCol0(int tid, int tn) { return (tid / 32 % 4) * 4 * tn + tid % 4 * 4; }
// Where thread tid's i-th A copy lands in a slot's A panel (As[k][m], rows 132 apart): k = tid % 8
// of row tid / 8 + 32 i, so a warp's 32 copies fill 4 rows x 8 k, each a bank of its own.
__host__ __device__ inline int ringACopy(int tid, int i) {
  return (tid % kRingBK) * kBMPad + tid / kRingBK + i * (kThreads / kRingBK);
}

// This block's sums over [kBegin, kEnd) through the ring; Edge: every copy tested against M, N
// and kEnd (kEnd - kBegin a multiple of 8 where it is false). Aligned: N % 4 == 0, so rows of B
// start on 16-byte boundaries (a kernel of its own: compiled into the same kernel, the four 4-byte
// copies of the other case changed the interior loop's registers and slowed it: tuning notes
// 19-20).
template <int TN, bool Edge, bool Aligned>
__device__ __forceinline__ void ringSums(const float* A, const float* B, int M, int N, int kBegin,
                                         int kEnd, int K, float (&acc)[kTM][TN]) {
  constexpr int BN = 16 * TN, slotFloats = kRingBK * (kBMPad + BN);
  constexpr int aRows = kThreads / kRingBK, bCols = BN / 4, bRows = kThreads / bCols;
  float* ring = ringSlots<TN>();
  const int tid = threadIdx.x, rowBase = blockIdx.y * kBM, colBase = blockIdx.x * BN;
  // This thread copies A at k = ak of rows am + {0, 32, 64, 96} (ringACopy) and B's float4 at
  // column bc of rows bk + i x bRows.
  const int ak = tid % kRingBK, am = tid / kRingBK, bk = tid / bCols, bc = tid % bCols * 4;
  const float* a = A + (1LL * rowBase + am) * K + kBegin + ak;  // both advance a stage a copyStage
  const float* b = B + (1LL * kBegin + bk) * N + colBase + bc;
  int k0 = kBegin;  // the first k of the next stage to copy
  const auto copyStage = [&](int slot) {
    float* As = ring + slot * slotFloats;
    float* Bs = As + kRingBK * kBMPad;
#pragma unroll
    for (int i = 0; i < kBM * kRingBK / kThreads; ++i) {
      const bool in = !Edge || (rowBase + am + i * aRows < M && k0 + ak < kEnd);
      copyOrZero<4>(&As[ringACopy(tid, i)], in ? a + 1LL * i * aRows * K : A, in);
    }
#pragma unroll
    for (int i = 0; i < kRingBK * bCols / kThreads; ++i) {
      float* d = &Bs[(bk + i * bRows) * BN + bc];
      const float* g = b + 1LL * i * bRows * N;
      const bool rowIn = !Edge || k0 + bk + i * bRows < kEnd;
      if (Aligned) {
        const bool in = rowIn && (!Edge || colBase + bc < N);
        copyOrZero<16>(d, in ? g : B, in);
      } else {  // rows of B not 16-byte aligned: four 4-byte copies
        for (int j = 0; j < 4; ++j) copyOrZero<4>(d + j, g + j, rowIn && colBase + bc + j < N);
      }
    }
    a += kRingBK, b += 1LL * kRingBK * N, k0 += kRingBK;
  };
  const int row0 = warpTileRow0(tid), col0 = ringCol0(tid, TN);
  const auto readFragments = [&](int slot, int kk, float* fa, float* fb) {
    const float* As = ring + slot * slotFloats;
    read8(&As[kk * kBMPad + row0], kWM / 2, fa);
#pragma unroll
    for (int c = 0; c < TN / 4; ++c) {  // fb is only 4-byte aligned: unpacked, as read8 does
      const float4 v =
          *reinterpret_cast<const float4*>(&As[kRingBK * kBMPad + kk * BN + col0 + c * kLaneSpan]);
      fb[4 * c] = v.x, fb[4 * c + 1] = v.y, fb[4 * c + 2] = v.z, fb[4 * c + 3] = v.w;
    }
  };
  const int stages = (kEnd - kBegin + kRingBK - 1) / kRingBK;
#pragma unroll
  for (int s = 0; s < kRingSlots - 1; ++s) {  // stages 0 and 1, a group each
    if (s < stages) copyStage(s);
    commitCopies();
  }
  waitCopiesBut<1>();  // stage 0 has landed
  __syncthreads();
  float fa[2][kTM], fb[2][TN];
  if (stages > 0) readFragments(0, 0, fa[0], fb[0]);
  const auto stage = [&](int t, int slot) {  // stage t from its slot; the next k's fragments first
#pragma unroll
    for (int kk = 0; kk < kRingBK; ++kk) {
      if (kk == kRingBK - 1) {
        waitCopiesBut<0>();  // stage t + 1 has landed
        __syncthreads();     // every copy of t + 1 seen; stage t - 1's slot read by all
        if (t + 2 < stages) copyStage((slot + 2) % kRingSlots);
        commitCopies();  // a group a stage, empty past the last
      }
      if (kk + 1 < kRingBK)
        readFragments(slot, kk + 1, fa[(kk + 1) % 2], fb[(kk + 1) % 2]);
      else if (t + 1 < stages)
        readFragments((slot + 1) % kRingSlots, 0, fa[0], fb[0]);
      microTileFma(fa[kk % 2], fb[kk % 2], acc);
    }
  };
  // Edge tiles are few where speed matters: one loop, the slot computed, a lighter compile (tuning
  // notes 24).
  const int whole = Edge ? 0 : stages / kRingSlots * kRingSlots;
  for (int t0 = 0; t0 < whole; t0 += kRingSlots)
#pragma unroll
    for (int s = 0; s < kRingSlots; ++s) stage(t0 + s, s);
  for (int t = whole; t < stages; ++t) stage(t, Edge ? t % kRingSlots : t - whole);
}

// launch assumption: 256 threads; grid (ceil(N / (16 TN)), ceil(M / 128), parts), part z as in
// step 13; AllIn only where every tile lies inside C (ringKernel). memory: three slots of an
// 8 x 132 A panel and an 8 x 16 TN B panel (24.4 KiB at TN = 8, 36.4 KiB at 16).
template <int TN, bool Aligned, bool AllIn>
__global__ void __launch_bounds__(kThreads, TN == kTN ? kMinBlocks : 1)
    gemmRing(const float* A, const float* B, float* W, int M, int N, int K, int depth) {
  const int kBegin = blockIdx.z * depth, kEnd = min(K, kBegin + depth);
  const int rowBase = blockIdx.y * kBM, colBase = blockIdx.x * 16 * TN;
  float acc[kTM][TN] = {};
  if (AllIn || (Aligned && interiorTile(rowBase, colBase, M, N, K) &&
                 (TN == kTN || interiorTile(rowBase, colBase + kBN, M, N, K))))  // both halves
    ringSums<TN, false, Aligned>(A, B, M, N, kBegin, kEnd, K, acc);
  else
    ringSums<TN, true, Aligned>(A, B, M, N, kBegin, kEnd, K, acc);
  storeWarpTile(W + 1LL * blockIdx.z * M * N, M, N, rowBase + warpTileRow0(threadIdx.x),
                colBase + ringCol0(threadIdx.x, TN), acc);
}

// The instance these sizes launch: no edge instance where M, N and K are multiples of the tile
// (so N % 4 == 0), else the one for rows of B on 16-byte boundaries, or the one for the rest.
using PartsKernel = void (*)(const float*, const float*, float*, int, int, int, int);
template <int TN>
PartsKernel ringKernel(long long M, long long N, long long K) {
  if (M % kBM == 0 && N % (16 * TN) == 0 && K % kBK == 0) return gemmRing<TN, true, true>;
  return N % 4 == 0 ? gemmRing<TN, true, false> : gemmRing<TN, false, false>;
}
template <int TN>
const void* ringKernelAt(long long M, long long N, long long K) {
  return reinterpret_cast<const void*>(ringKernel<TN>(M, N, K));
}

// Step 16 takes the wide tile where C has at least kWideTiles of them.
__host__ __device__ inline bool wideTiles(long long M, long long N) {
  return ((M + kBM - 1) / kBM) * ((N + 2 * kBN - 1) / (2 * kBN)) >= kWideTiles;
}

// =============================================================================
// Machinery: skip it on a first read. The course toolkit's declarations; their
// definitions are in the machinery band at the end of the file.
// =============================================================================
// common: cuda_check_decl
// Every CUDA call goes through CUDA_CHECK, every launch is followed by
// CUDA_CHECK_LAUNCH(): a failure names file, line, call and error, exits 1.
// Exit codes: 0 all gates held, 1 a gate ("GATE: ...") or a CUDA call failed,
// 2 bad command line, 77 no NVIDIA driver or GPU here (CTest: skipped).
#define CUDA_CHECK(call)                                                      \
  do {                                                                        \
    cudaError_t err_ = (call);                                                \
    if (err_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "CUDA error at %s:%d: %s failed: %s\n", __FILE__,  \
                   __LINE__, #call, cudaGetErrorString(err_));                \
      std::exit(EXIT_FAILURE);                                                \
    }                                                                         \
  } while (0)
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
constexpr int kExitNoDevice = 77;
cudaDeviceProp requireCudaDevice();  // device 0's properties, or exit 77 with one line
// end common: cuda_check_decl
// common: timer_decl
// Kernel timing (method and reasons: the timer block at the end of the file).
struct TimingStats {
  double median_ms;  // the headline: middle sample (mean of the two middle ones if even)
  double min_ms, max_ms;  // the spread: a difference smaller than it is noise
  double mean_ms;    // pulled up by slow outliers
  int samples;
};
// warmups untimed launches, then samples timed ones; launch() queues one launch.
template <typename Launch>
TimingStats timeKernel(Launch launch, int warmups, int samples);
// end common: timer_decl
// common: cli_decl
// Strict command line (rules and definitions: the cli block at the end).
constexpr int kExitBadCommandLine = 2;
class CommandLine {
 public:
  CommandLine(int argc, char** argv, std::string usage);  // usage: the help text
  bool next();                                     // to the next token; false at the end
  bool is(const char* name) const;                 // is the current token this option?
  long long intValue(long long lo, long long hi);  // its value: an integer in [lo, hi]
  double realValue(double lo, double hi);          // its value: a decimal number in [lo, hi]
  [[noreturn]] void unknownOption() const;
  // "error: " + the printf-style message, the usage, exit 2 (rules across options too).
  [[noreturn]] __attribute__((format(printf, 2, 3))) void fail(const char* fmt, ...) const;
 private:
  const char* takeValue();  // the next token, or nullptr at the end
  int argc_;
  char** argv_;
  std::string usage_;
  int i_ = 0;  // argv_[0] is the program
};
// end common: cli_decl
// common: reference_gemm_decl
// The reference every GEMM here is checked against (the reference_gemm block
// at the end of the file): C = A * B in double, row-major host arrays.
void referenceGemm(const float* A, const float* B, double* C, int M, int N, int K);
// Row i of the same, computed by a CPU loop; it needs no GPU.
void referenceRowCpu(const float* A, const float* B, double* row, int i, int N, int K);
// end common: reference_gemm_decl
// common: ceilings_decl
// Roofline ceilings (definitions and method: the ceilings block at the end).
constexpr int kCeilingSamples = 7;  // timed launches per ceiling; odd: the median is one launch
struct Ceilings {
  double copy_gbs, fp32_gflops;  // measured on this device by this program
  double copy_bytes, l2_bytes;   // size of each copy buffer; the device's L2
  double dram_bound_gbs, fp32_bound_gflops;  // from the device's attributes; 0 = unknown
  char bounds[256];              // the bounds from the device's attributes, as printed
};
Ceilings measureCeilings();  // exit 1 on a measurement above its bound; 2 buffers, each <= 1/4 of free memory
void printCeilings(const Ceilings& c, std::FILE* out);  // a measured line, a [device] line
double rooflineGflops(const Ceilings& c, double ai);    // min(FP32 peak, ai x bandwidth)
// end common: ceilings_decl
// common: gemm_check_decl
// The course's correctness rule for a GEMM (definitions and reasons: the gemm_check block at
// the end): the K-scaled tolerance, every element checked with NaN and
// infinity failing, the output poisoned before the checked launch, and a timing only of a
// result that passed. Needs <algorithm>, <cmath>, <cstdint>, <cstdio>, <cstdlib>, <cstring>,
// <new>, <string>, <vector> and the cuda_check and timer blocks.
constexpr unsigned char kPoisonByte = 0xFF;  // every byte of a poisoned output: each float a NaN
struct Lcg {  // s = 1664525 s + 1013904223 (mod 2^32); a draw: its high 24 bits / 2^24
  uint32_t s;  // the seed, then the state
  float next();  // advances, then a float in [0, 1), exact
  void fill(std::vector<float>& x, float scale, float offset);  // x[i] = scale * next() + offset
};
struct Tolerance { double rtol, atol; };  // an element passes when |got - ref| <= atol + rtol*|ref|
double rtolForK(long long K);  // max(1e-5, 4 * 2^-23 * sqrt(K))
// {rtolForK(K), rtol * refMax}; a non-negative rtol or atol given replaces its default.
Tolerance gemmTolerance(long long K, double refMax, double rtol = -1.0, double atol = -1.0);
double maxAbs(const double* x, long long count);  // max |x[i]|, 0 for none
struct GemmCheck {  // the element check, fed one element at a time (add) or all at once
  long long checked = 0, failures = 0;
  long long first_bad = -1;  // linear index of the first failure (-1: none), and its values
  double first_got = 0.0, first_ref = 0.0, first_tol = 0.0;
  long long worst = -1;  // the element with the highest score, the first on ties
  double worst_score = 0.0;  // |got - ref| / tolerance; a NaN stays (and the first NaN is worst)
  double worst_got = 0.0, worst_ref = 0.0, worst_diff = 0.0, worst_tol = 0.0;
  double max_abs_err = 0.0;  // the largest |got - ref|; a NaN stays
  void add(long long index, double got, double ref, const Tolerance& tol);
  bool pass() const { return checked > 0 && failures == 0; }
  // "WHAT: F of N elements outside the tolerance, the first at (row, col): got G, ref R"
  std::string describe(const char* what, long long cols) const;
};
GemmCheck checkElements(const float* got, const double* ref, long long count, const Tolerance& tol);
// Poison dC (got.size() floats), launch once, copy C back into got, judge(got) says pass or
// fail (and prints what the lesson prints); only a pass is timed, and the timed launches must
// leave the checked bits in C.
struct CheckedTiming {
  bool passed = false;      // judge's verdict on the poisoned launch's output
  bool reproduced = false;  // passed, timed, and C still holds the checked bits
  TimingStats t{};          // the timing, when passed
};
template <typename Launch, typename Judge>
CheckedTiming checkThenTime(Launch launch, float* dC, std::vector<float>& got, Judge judge,
                            int warmups, int samples);
// A host buffer of count elements, or one stderr line naming what and how many bytes, exit 1.
template <typename T>
std::vector<T> hostVector(long long count, const char* what);
// end common: gemm_check_decl

// =============================================================================
// The ladder as data: what each step is, what it changes, how it launches, why it should pay
// =============================================================================
struct Step {
  const char* csv_name;  // the kernel column of --csv
  const char* title;     // the idea
  const char* changes;   // the change from the step before
  const char* why;       // a fixed sentence: the reason, not a measurement
  const void* kernel;    // for cudaFuncGetAttributes
  int threads;
  // work: scratch for the parts of steps 13-16 (splitCount x M x N floats where that is over 1)
  void (*launch)(dim3 grid, const float*, const float*, float*, float* work, int, int, int);
  int tile_m, tile_n;    // the block's output tile: grid (ceil(N / tile_n), ceil(M / tile_m))
  // steps 15-16: the instance launched at sizes (m, n, k); kernel is the one with edge tiles
  const void* (*kernel_at)(long long m, long long n, long long k) = nullptr;
};

template <auto Kernel, int Tx, int Ty>
void launchKernel(dim3 grid, const float* A, const float* B, float* C, float*, int M, int N,
                  int K) {
  Kernel<<<grid, dim3(Tx, Ty)>>>(A, B, C, M, N, K);
}

// Steps 13-16: one part writes C directly; more write W and reduceSplits adds them.
void launchPartsOf(PartsKernel kernel, dim3 grid, const float* A, const float* B, float* C,
                   float* work, int M, int N, int K) {
  const int splits = splitCount(M, N, K), depth = splitDepth(K, splits);
  grid.z = unsigned(splits);
  kernel<<<grid, kThreads>>>(A, B, splits > 1 ? work : C, M, N, K, depth);
  if (splits == 1) return;
  CUDA_CHECK_LAUNCH();
  const long long count = 1LL * M * N;
  reduceSplits<<<unsigned(std::min((count + 255) / 256, 1LL << 16)), 256>>>(work, C, count,
                                                                             splits);
}

template <auto Kernel>  // steps 13-14
void launchParts(dim3 grid, const float* A, const float* B, float* C, float* work, int M, int N,
                 int K) {
  launchPartsOf(Kernel, grid, A, B, C, work, M, N, K);
}
template <int TN>  // steps 15-16: the instance these sizes take
void launchRing(dim3 grid, const float* A, const float* B, float* C, float* work, int M, int N,
                int K) {
  launchPartsOf(ringKernel<TN>(M, N, K), grid, A, B, C, work, M, N, K);
}

#define LADDER_KERNEL(k, tx, ty) reinterpret_cast<const void*>(k), tx * ty, launchKernel<k, tx, ty>
constexpr int kSteps = 16;
constexpr int kExerciseStep = 3;   // index of step 4, judged by what its kernel holds
constexpr int kVectorStep = 5;     // index of step 6, the first with 16-byte accesses
constexpr int kInteriorStep = 11;  // index of step 12
constexpr int kSplitStep = 12;     // index of step 13
constexpr int kAsyncStep = 13;     // index of step 14
constexpr int kRingStep = 14;      // index of step 15
constexpr int kWideStep = 15;      // index of step 16
const Step kLadder[kSteps] = {
    {"tiled_16x16", "tiled 16 x 16, one output per thread (the project's kernel)",
     "the starting point: 16 x 16 tiles of A and B in shared memory, 16 deep, one output per "
     "thread, 256 threads",
     "each value fetched from global memory serves 16 FMAs from shared memory",
     LADDER_KERNEL(gemmTiled16, kT1, kT1), kT1, kT1},
    {"column_8", "8 outputs per thread down a column",
     "8 outputs per thread down a column (step 1: 1) on the same 16 x 16 tile, which 32 such "
     "threads now cover (step 1: 256); panels still 16 deep",
     "one B value read from shared memory serves 8 FMAs instead of 1 (9 reads for 8 FMAs, "
     "step 1: 2 for 1)",
     LADDER_KERNEL((gemm1DBlocktile<kT1, kT1>), kT1 * kT1 / kTM2, 1), kT1, kT1},
    {"blocktile_1d", "1-D block tiling on a 64 x 64 block tile",
     "the block tile: 64 x 64 (step 2: 16 x 16) of the same kernel, so 512 threads a block (32); "
     "panels still 16 deep",
     "each value fetched from global memory serves 64 FMAs instead of 16",
     LADDER_KERNEL((gemm1DBlocktile<kBM2, kBN2>), kBM2 * kBN2 / kTM2, 1), kBM2, kBN2},
    {"regblock_2d", "2-D register blocking, an 8 x 8 micro-tile per thread",
     "an 8 x 8 micro-tile per thread from register fragments (step 3: 8 x 1) on the same "
     "64 x 64 block tile, which 64 threads now cover (step 3: 512)",
     "16 values read from shared memory into registers serve 64 FMAs per k (step 3: 9 reads "
     "for 8)",
     LADDER_KERNEL((gemm2DRegisterBlocked<kBM2, kBN2>), kBM2 * kBN2 / (kTM * kTN), 1), kBM2,
     kBN2},
    {"tile_128", "128 x 128 block tile",
     "the block tile: 128 x 128 (step 4: 64 x 64) of the same kernel, so 256 threads a block "
     "(64) and, by its launch bound of two blocks an SM, at most 128 registers a thread (255)",
     "each value fetched from global memory serves 128 FMAs instead of 64",
     LADDER_KERNEL((gemm2DRegisterBlocked<kBM, kBN>), kThreads, 1), kBM, kBN},
    {"global_16b", "16-byte global loads and stores",
     "16-byte global loads and stores where the sizes allow (step 5: 4-byte), so each float4 goes "
     "into shared memory whole; shared layout and fragment reads as step 5",
     "a 16-byte global load or store moves 4 floats in one instruction, so fewer instructions "
     "compete with the FMAs for issue slots",
     LADDER_KERNEL(gemmVectorized<false>, kThreads, 1), kBM, kBN},
    {"vectorized", "the B fragment read as float4",
     "the B fragment read from shared memory as two float4s in the source (step 6: 8 single "
     "floats)",
     "two 16-byte shared-memory reads instead of 8 4-byte ones, where the compiler has not "
     "merged them itself: fewer instructions compete with the FMAs for issue slots",
     LADDER_KERNEL(gemmVectorized<true>, kThreads, 1), kBM, kBN},
    {"transposed_a", "A panel stored transposed",
     "the A panel stored k-major and padded to 132 floats a row (step 7: as in A, 16 floats "
     "a row), so a thread's 8 A values at one k sit side by side",
     "a thread's 8 A values at one k are two 16-byte reads in the source (step 7: 8 single "
     "floats 16 apart), the same pattern as its B values",
     LADDER_KERNEL(gemmTransposedA, kThreads, 1), kBM, kBN},
    {"warptile", "warp tiling, 2 x 2 blocks of 4 x 4 outputs per thread",
     "only which outputs a thread owns: a warp a 64 x 32 tile, a lane 2 x 2 blocks of 4 x 4 "
     "(step 8: a thread 8 x 8 adjacent outputs); memory as step 8",
     "a warp's fragment reads are contiguous, so shared memory serves them without bank "
     "conflicts", LADDER_KERNEL(gemmWarpTiled, kThreads, 1), kBM, kBN},
    {"panel_pairs", "double-buffered panels",
     "two panel pairs in shared memory (step 9: one), so the next panel can be loaded into "
     "registers before this panel's FMAs and stored into the other pair after them, with one "
     "barrier per panel (two)",
     "in the source, the next panel's loads are issued before this panel's FMAs, so they can be "
     "in flight during them, and a block waits at one barrier per panel instead of two",
     LADDER_KERNEL(gemmDoubleBuffered<false>, kThreads, 1), kBM, kBN},
    {"double_buffered", "double-buffered fragments",
     "two fragment sets in registers (step 10: one): the next k's fragments are read before this "
     "k's FMAs",
     "in the source, the next k's fragment reads come before this k's FMAs, so they can overlap "
     "them",
     LADDER_KERNEL(gemmDoubleBuffered<true>, kThreads, 1), kBM, kBN},
    {"interior_loads", "interior blocks load without bounds tests",
     "blocks whose 128 x 128 tile lies inside C, when K is a multiple of 16 and N of 4, load "
     "each float4 from a base pointer plus an offset (step 11: through load4's bounds tests); "
     "other blocks as step 11",
     "the bounds tests of every load (three and a branch per float4) are instructions that "
     "compete with the FMAs for issue slots; an interior block's loads make none",
     LADDER_KERNEL(gemmInteriorLoads, kThreads, 1), kBM, kBN},
    {"split_k", "K split where the grid is small",
     "where 128 x 128 tiles make fewer than 256 blocks, K is cut into 2 to 16 parts (K / parts "
     "at least 256, each part rounded up to whole 16-k panels, the last taking the rest), "
     "summed by step 12's code in a grid layer each and added in order by a second kernel "
     "(step 12: one part); elsewhere step 12 itself",
     "a small problem's few tiles leave SMs idle; parts of K give them work, for a write and a "
     "read of an M x N slice per part",
     reinterpret_cast<const void*>(gemmSplitKWith<InteriorPanels>), kThreads,
     launchParts<gemmSplitKWith<InteriorPanels>>, kBM, kBN},
    {"async_b", "the B panel copied by cp.async (builds for sm_80 and later)",
     "built for sm_80 or later, interior blocks copy the B panel from global to shared memory "
     "with cp.async, issued as the panel before starts and waited for at its end (step 13: "
     "loaded into 8 registers a thread, then stored); A, transposed on its way, still passes "
     "through registers; other blocks, the split, and a build for an older GPU as step 13",
     "where the build has cp.async, a copy straight into shared memory holds no registers on its "
     "way and needs no store instruction, and the B panel is stored as it lies in B, so each of "
     "its float4s is a single 16-byte copy",
     reinterpret_cast<const void*>(gemmSplitKWith<AsyncBPanels>), kThreads,
     launchParts<gemmSplitKWith<AsyncBPanels>>, kBM, kBN},
    {"ring", "a ring of cp.async stages (builds for sm_80 and later)",
     "both panels copied into a ring of three 8-deep slots in shared memory, by cp.async where "
     "the build has it (the [device] line says), each stage's copies issued at the last k of "
     "the stage two before, one barrier a stage (step 14: two 16-deep panel pairs, A through "
     "registers, and B too where step 14 runs step 13's code); A 4 bytes a copy, transposed on "
     "its way, B 16 (4 where N is not a multiple of 4); edge tiles' copies zero-fill past A and "
     "B; the split as step 14's",
     "where the build has cp.async, neither panel passes through registers or takes a store "
     "instruction (step 14: A's did, and B's where it ran step 13's code), so fewer "
     "instructions compete with the FMAs for issue slots; in tiles without bounds tests the "
     "loop, unrolled by the three slots, addresses each slot by a constant",
     reinterpret_cast<const void*>(gemmRing<kTN, true, false>), kThreads, launchRing<kTN>, kBM,
     kBN, ringKernelAt<kTN>},
    {"wide_tile", "8 x 16 outputs per thread where C has enough tiles",
     "an 8 x 16 micro-tile per thread (step 15: 8 x 8) on a 128 x 256 block tile, where C has "
     "at least 256 such tiles; elsewhere step 15 itself",
     "per k a thread reads 24 values from shared memory for 128 FMAs (step 15: 16 for 64), so "
     "fewer instructions compete with the FMAs for issue slots",
     reinterpret_cast<const void*>(gemmRing<2 * kTN, true, false>), kThreads, launchRing<2 * kTN>,
     kBM, 2 * kBN, ringKernelAt<2 * kTN>},
};
#undef LADDER_KERNEL
// =============================================================================
// The experiment: inputs, tolerance, check, and one step checked then timed
// =============================================================================
constexpr long long kDefaultDim = 1024;
constexpr long long kMaxDim = 1LL << 24;
constexpr int kDefaultIters = 20, kMaxIters = 10000, kWarmups = 3, kMaxWarmups = 100;
constexpr long long kMaxHostBytes = 4LL << 30;  // the cap on hostBytes
constexpr uint32_t kSeed = 20250612u;           // the project's seed: the same inputs

// The inputs: the course's LCG (gemm_check block) from the project's seed, values 2u - 1 in [-1, 1)
// (exact in float); A is filled first in row-major order, then B continues from the same state.
void fillInputs(std::vector<float>& A, std::vector<float>& B) {
  Lcg g{kSeed};
  g.fill(A, 2.0f, -1.0f);
  g.fill(B, 2.0f, -1.0f);
}

// Which global accesses of steps 6-14 take the 16-byte path at these sizes (load4 and
// store4 take it for a float4 inside the matrix when its row length is a multiple of 4).
std::string vectorPaths(long long n, long long k) {
  const auto path = [](const char* what, const char* dim, long long v) {
    return std::string(what) + (v % 4 == 0 ? " 16-byte (" : " 4-byte, four per float4 (") +
           dim + " = " + std::to_string(v) + (v % 4 == 0 ? " is" : " is not") +
           " a multiple of 4)";
  };
  return path("A loads", "K", k) + ", " + path("B loads and C stores", "N", n) +
         "; shared-memory fragment reads float4 in the source (B from step 7, A from step 8)";
}

// The exercise, judged by what the compiled kernel holds (fa: its attributes in step s + 1, 4 or
// 5): a thread whose 8 x 8 outputs accumulate in registers needs at least 64 of them, and panels
// staged through shared memory need tile_m x 16 + 16 x tile_n floats of it. The starter's stand-in
// keeps its 64 sums in registers but no panels in shared memory. "" when it has both.
std::string registerBlockingProblem(const cudaFuncAttributes& fa, int s) {
  const int tm = kLadder[s].tile_m, tn = kLadder[s].tile_n;
  const size_t panels = size_t(tm * kBK + kBK * tn) * sizeof(float);
  char buf[320] = "";
  if (fa.sharedSizeBytes < panels)
    std::snprintf(buf, sizeof buf, "step %d keeps %zu B of panels in shared memory; its %d x 16 "
                  "A and 16 x %d B panels need %zu B", s + 1, fa.sharedSizeBytes, tm, tn, panels);
  else if (fa.numRegs < kTM * kTN)
    std::snprintf(buf, sizeof buf, "step %d holds %d registers per thread; an 8 x 8 micro-tile "
                  "of accumulators alone needs %d", s + 1, fa.numRegs, kTM * kTN);
  return buf;
}

// Step s's changes: and why: lines, for a kernel with attributes fa after one with prev. Until the
// exercise's kernel (steps 4-5) is register-blocked, step 4's lines name the lesson's step, 4-5's
// why lines say what it lacks, and step 6's name the lesson's step 5 and what their ratio holds.
std::string changesText(int s, const cudaFuncAttributes& fa, const cudaFuncAttributes& prev) {
  const bool lacks = s == kExerciseStep && !registerBlockingProblem(fa, s).empty();
  std::string c = (lacks ? "the lesson's step 4: " : "") + std::string(kLadder[s].changes);
  if (s == kVectorStep && !registerBlockingProblem(prev, s - 1).empty())
    c.replace(c.rfind("as step 5"), 9, "as the lesson's step 5");
  return c;
}
std::string whyText(int s, const cudaFuncAttributes& fa, const cudaFuncAttributes& prev) {
  const bool exercise = s == kExerciseStep || s == kExerciseStep + 1;
  const std::string lacks = exercise ? registerBlockingProblem(fa, s) : "";
  if (s == kVectorStep && !registerBlockingProblem(prev, s - 1).empty())
    return std::string("over the lesson's step 5, ") + kLadder[s].why + "; this run's step 5 is "
           "not register-blocked, so its ratio over it also holds what the lesson's step 5 gains";
  return lacks.empty() ? kLadder[s].why : "not yet register-blocked: " + lacks;
}

// Step 13's split at these sizes, as printed: how many parts, how deep, and why.
std::string splitText(long long m, long long n, long long k) {
  const long long tiles = ((m + kBM - 1) / kBM) * ((n + kBN - 1) / kBN);
  const int splits = splitCount(m, n, k);
  char buf[320];
  if (splits == 1)
    std::snprintf(buf, sizeof buf, "none, K = %lld in one part (%lld tiles of 128 x 128%s)", k,
                  tiles, tiles >= kSplitBlocks ? ", at least 256 blocks"
                                               : ", and halving K would leave under 256 k a part");
  else
    std::snprintf(buf, sizeof buf, "K = %lld in %d parts of %d k (the last %lld), %lld tiles x "
                  "%d = %lld blocks; the parts added in ascending order", k, splits,
                  splitDepth(k, splits), k - 1LL * (splits - 1) * splitDepth(k, splits), tiles,
                  splits, tiles * splits);
  return buf;
}

// Step 12's interior blocks at these sizes, as printed: how many, and what rules out the rest.
std::string interiorText(long long m, long long n, long long k) {
  const long long tiles = ((m + kBM - 1) / kBM) * ((n + kBN - 1) / kBN);
  const long long inside = (m / kBM) * (n / kBN);  // tiles wholly inside C
  const long long fast = interiorTiles(m, n, k);
  std::string why;
  if (k % kBK != 0) why = "K = " + std::to_string(k) + " is not a multiple of 16";
  if (n % 4 != 0) why += std::string(why.empty() ? "" : " and ") + "N = " + std::to_string(n) +
                         " is not a multiple of 4";
  char buf[320];
  std::snprintf(buf, sizeof buf, "%lld of %lld tiles load without bounds tests (inside C: %lld%s%s)",
                fast, tiles, inside, why.empty() ? "" : "; ", why.c_str());
  return buf;
}

// Step 14's copies at these sizes in this build, as printed (a [device] line: the build's PTX
// version decides, and a build for several GPUs runs the one the device takes).
std::string asyncCopyText(int ptxVersion, long long m, long long n, long long k) {
  const long long fast = interiorTiles(m, n, k);
  const long long tiles = ((m + kBM - 1) / kBM) * ((n + kBN - 1) / kBN);
  char buf[320];
  if (ptxVersion < 80)
    std::snprintf(buf, sizeof buf, "B copies: none, the device code this GPU runs is compute_%d "
                  "(cp.async needs compute_80), so step 14 runs step 13's code", ptxVersion);
  else if (fast == 0)
    std::snprintf(buf, sizeof buf, "B copies: none, no tile is interior at these sizes, so step "
                  "14 runs step 13's code (the device code this GPU runs is compute_%d)", ptxVersion);
  else
    std::snprintf(buf, sizeof buf, "B copies: cp.async for the interior tiles, %lld of %lld "
                  "(the device code this GPU runs is compute_%d)", fast, tiles, ptxVersion);
  return buf;
}

// Steps 15-16's copies in this build, as printed (a [device] line, as step 14's).
std::string ringCopyText(int ptxVersion) {
  const std::string code = "the device code this GPU runs is compute_" + std::to_string(ptxVersion);
  return ptxVersion >= 80 ? "cp.async: both panels (" + code + ")"
                          : "cp.async: none, " + code + " (cp.async needs compute_80), so steps "
                            "15-16 move each value by a load into a register and a store";
}

// Which instance steps 15-16 launch at these sizes (tn: 8 or 16 outputs a row of the micro-tile),
// as printed.
std::string ringTilesText(long long m, long long n, long long k, int tn) {
  const long long bn = 16LL * tn, tiles = ((m + kBM - 1) / kBM) * ((n + bn - 1) / bn);
  long long inside = 0;  // tiles that take the copies without bounds tests
  for (long long r = 0; r + kBM <= m; r += kBM)
    for (long long c = 0; c + bn <= n; c += bn)
      inside += interiorTile(int(r), int(c), int(m), int(n), int(k)) &&
                interiorTile(int(r), int(c + bn - kBN), int(m), int(n), int(k));
  char buf[320];
  if (m % kBM == 0 && n % bn == 0 && k % kBK == 0)
    std::snprintf(buf, sizeof buf, "all %lld inside C (M a multiple of 128, N of %lld, K of 16): "
                  "the kernel without an edge instance", tiles, bn);
  else if (n % 4 == 0)
    std::snprintf(buf, sizeof buf, "%lld of %lld copy without bounds tests, the rest through "
                  "zero-filling copies", inside, tiles);
  else
    std::snprintf(buf, sizeof buf, "all %lld through zero-filling copies, B's 4 bytes at a time "
                  "(N = %lld is not a multiple of 4)", tiles, n);
  return buf;
}

// Step 16's tile at these sizes, as printed.
std::string wideText(long long m, long long n) {
  const long long tiles = ((m + kBM - 1) / kBM) * ((n + 2 * kBN - 1) / (2 * kBN));
  char buf[200];
  std::snprintf(buf, sizeof buf, wideTiles(m, n) ? "8 x 16 outputs a thread, C in %lld tiles of "
                "128 x 256 (at least %d)" : "none, C has %lld tiles of 128 x 256 (under %d), so "
                "step 16 runs step 15", tiles, kWideTiles);
  return buf;
}

struct Problem {
  int m, n, k;
  double flop;
  std::vector<float> A, B;
  std::vector<double> ref;
  Tolerance tol;
  float *dA, *dB, *dC;
  float* dWork;  // the parts of steps 13-16: splitCount x M x N floats where that is over 1
  std::vector<float> got;  // each step's copy of C, in turn (one buffer: no fresh pages a step)
};

struct StepResult { bool timed = false; double median_ms = 0.0, gflops = 0.0; };

// Step s: the launch line, the checked launch (C poisoned with NaN first), then,
// only if every element passed, the timed launches and the rate. prevMs: the
// step before's median (0 if it was not timed, -1 if -from left it out).
StepResult runStep(int s, Problem& p, int warmups, int iters, double peak, double prevMs,
                   int smCount, std::FILE* out, bool& ok) {
  const Step& st = kLadder[s];  // its lines; run: what it launches (step 16 may run step 15)
  const Step& run = s == kWideStep && !wideTiles(p.m, p.n) ? kLadder[kRingStep] : st;
  const dim3 grid((p.n + run.tile_n - 1) / run.tile_n, (p.m + run.tile_m - 1) / run.tile_m);
  const auto launch = [&] { run.launch(grid, p.dA, p.dB, p.dC, p.dWork, p.m, p.n, p.k); };
  const void* kernel = run.kernel_at ? run.kernel_at(p.m, p.n, p.k) : run.kernel;
  cudaFuncAttributes fa{}, prev{};  // prev: the step before's, which step 6's lines compare with
  CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
  if (s > 0) CUDA_CHECK(cudaFuncGetAttributes(&prev, kLadder[s - 1].kernel));
  int perSm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, run.threads, 0));
  const bool standIn = s == kExerciseStep && !registerBlockingProblem(fa, s).empty();
  std::fprintf(out, "Step %d - %s%s\n  changes: %s\n", s + 1, standIn ? "the lesson's " : "", st.title,
               changesText(s, fa, prev).c_str());
  if (s == kVectorStep)
    std::fprintf(out, "  at these sizes (steps 6-14): %s\n", vectorPaths(p.n, p.k).c_str());
  const int splits = s >= kSplitStep ? splitCount(p.m, p.n, p.k) : 1;
  if (s == kSplitStep)
    std::fprintf(out, "  split: %s\n", splitText(p.m, p.n, p.k).c_str());
  if (s == kInteriorStep)
    std::fprintf(out, "  interior: %s\n", interiorText(p.m, p.n, p.k).c_str());
  if (s == kWideStep)
    std::fprintf(out, "  wide: %s\n", wideText(p.m, p.n).c_str());
  if (s >= kRingStep)
    std::fprintf(out, "  tiles: %s\n", ringTilesText(p.m, p.n, p.k, run.tile_n / 16).c_str());
  std::fprintf(out, "  launch: grid (%u, %u, %d) x %d threads, %zu B shared memory, %d regs, %d "
               "blocks/SM\n", grid.x, grid.y, splits, run.threads, fa.sharedSizeBytes, fa.numRegs,
               perSm);
  if (s == kAsyncStep)  // __CUDA_ARCH__ in the device code is the PTX version the build holds
    std::fprintf(out, "  [device] %s\n", asyncCopyText(fa.ptxVersion, p.m, p.n, p.k).c_str());
  if (s == kRingStep)
    std::fprintf(out, "  [device] %s\n", ringCopyText(fa.ptxVersion).c_str());
  if (s == kSplitStep)
    std::fprintf(out, "  [device] %lld blocks in %d SMs x %d blocks/SM: %.2f waves\n",
                 1LL * grid.x * grid.y * splits, smCount, perSm,
                 perSm > 0 ? double(grid.x) * grid.y * splits / (double(smCount) * perSm) : 0.0);
  auto gate = [&ok](const char* claim) { std::fprintf(stderr, "GATE: %s\n", claim), ok = false; };

  const long long count = 1LL * p.m * p.n;
  std::vector<float>& got = p.got;
  char claim[400];
  const auto judge = [&](const std::vector<float>& out_c) {
    const GemmCheck c = checkElements(out_c.data(), p.ref.data(), count, p.tol);
    if (c.failures == 0) {
      std::fprintf(out, "  check: PASS, all %lld elements within tolerance; worst |got - ref| "
                   "%.4g at row %lld, col %lld, where the check allows %.4g\n", count,
                   c.worst_diff, c.worst / p.n, c.worst % p.n, c.worst_tol);
    } else {
      std::fprintf(out, "  check: FAIL, %lld of %lld elements outside tolerance, worst at row %lld, "
                   "col %lld: got %.9g, ref %.9g, where the check allows %.4g\n", c.failures,
                   count, c.worst / p.n, c.worst % p.n, c.worst_got, c.worst_ref, c.worst_tol);
      std::snprintf(claim, sizeof claim, "step %d (%s): %lld of %lld elements failed the check",
                    s + 1, st.csv_name, c.failures, count);
      gate(claim);
    }
    if (s == kExerciseStep && !registerBlockingProblem(fa, s).empty())
      gate(registerBlockingProblem(fa, s).c_str());
    return c.failures == 0;  // a wrong result is never timed
  };
  const CheckedTiming ct = checkThenTime(launch, p.dC, got, judge, warmups, iters);
  StepResult r;
  if (ct.passed) {
    const TimingStats t = ct.t;
    std::snprintf(claim, sizeof claim, "step %d (%s): the timed launches did not reproduce the "
                  "checked output bit for bit", s + 1, st.csv_name);
    if (!ct.reproduced) gate(claim);
    r = StepResult{true, t.median_ms, t.median_ms > 0.0 ? p.flop / (t.median_ms * 1e6) : 0.0};
    std::fprintf(out, "  time: median %.4f ms, %.1f GFLOP/s, %.1f%% of measured FP32 peak, ",
                 r.median_ms, r.gflops, 100.0 * r.gflops / peak);
    if (s == 0) std::fprintf(out, "the first step\n");
    else if (prevMs < 0.0) std::fprintf(out, "step %d not run (-from)\n", s);
    else if (prevMs > 0.0 && r.median_ms > 0.0)
      std::fprintf(out, "%.2fx step %d\n", prevMs / r.median_ms, s);
    else std::fprintf(out, "no speed-up (step %d was not timed)\n", s);
  } else {
    std::fprintf(out, "  time: not timed (a wrong result is never timed)\n");
  }
  std::fprintf(out, "  why: %s\n", &run != &st ? "none at these sizes: step 16 runs step 15's "
               "kernel (the wide: line says why)" : whyText(s, fa, prev).c_str());
  return r;
}

// =============================================================================
// Command line and size gates (no CUDA call before requireCudaDevice)
// =============================================================================
struct Options {
  long long m = -1, n = kDefaultDim, k = -1;  // -1: as N
  int iters = kDefaultIters, warmups = kWarmups;
  int from = 1, to = kSteps;  // the first and last step run
  bool csv = false;
};

std::string usageText() {
  char buf[1700];
  std::snprintf(
      buf, sizeof buf,
      "usage: gemm_ladder [-n N] [-m M] [-k K] [-iters I] [-warmups W] [-from S] [-to T]\n"
      "                   [--csv] [-h | --help]\n"
      "C (M x N) = A (M x K) * B (K x N), FP32, row-major, by sixteen steps (or those -from and -to\n"
      "name), each checked against a double reference, then timed.\n"
      "  -n N        columns of C, an integer in [0, %lld] (default %lld); -n alone is\n"
      "              square: M and K default to N\n"
      "  -m M, -k K  rows of C and the inner dimension, integers in [0, %lld]\n"
      "  -iters I    timed launches per step, an integer in [1, %d] (default %d)\n"
      "  -warmups W  untimed launches before them, an integer in [0, %d] (default %d); the\n"
      "              Sanitize: line gives 0, sparing a sanitizer the steps' warm-ups\n"
      "  -from S, -to T  run steps S to T only, integers in [1, %d] (default 1 and %d); verify's\n"
      "              later anchor rounds at 4096 and 8192 run -from 15, its speed check -from 4 -to 4\n"
      "  --csv       the report on stderr; on stdout two lines starting \"# \" (the GPU and\n"
      "              its [device] line), then the CSV: a header and one row per step run\n"
      "              (kernel,n,median_ms,gflops,m,k,...)\n"
      "  -h, --help  print this help and exit\n"
      "Exit status: 0 every step passed; 1 a gate failed (a GATE: line on stderr says which)\n"
      "or a CUDA call, a host allocation or a write failed; 2 a bad command line or a problem\n"
      "too large for the host or this device; 77 no usable CUDA device.\n",
      kMaxDim, kDefaultDim, kMaxDim, kMaxIters, kDefaultIters, kMaxWarmups, kWarmups, kSteps,
      kSteps);
  return buf;
}

// The host buffers at their peak: A and B (float), the double reference, and the float copy
// of C that every step's check fills in turn.
long long hostBytes(const Options& o) {
  return 4 * (o.m * o.k + o.k * o.n) + (8 + 4) * o.m * o.n;
}

Options parseOptions(CommandLine& cl) {
  Options o;
  while (cl.next()) {
    if (cl.is("-m")) o.m = cl.intValue(0, kMaxDim);
    else if (cl.is("-n")) o.n = cl.intValue(0, kMaxDim);
    else if (cl.is("-k")) o.k = cl.intValue(0, kMaxDim);
    else if (cl.is("-iters")) o.iters = static_cast<int>(cl.intValue(1, kMaxIters));
    else if (cl.is("-warmups")) o.warmups = static_cast<int>(cl.intValue(0, kMaxWarmups));
    else if (cl.is("-from")) o.from = static_cast<int>(cl.intValue(1, kSteps));
    else if (cl.is("-to")) o.to = static_cast<int>(cl.intValue(1, kSteps));
    else if (cl.is("--csv")) o.csv = true;
    else cl.unknownOption();
  }
  if (o.m < 0) o.m = o.n;
  if (o.k < 0) o.k = o.n;
  if (o.to < o.from)
    cl.fail("-from %d, -to %d: no step to run (the last comes before the first)", o.from, o.to);
  if (hostBytes(o) > kMaxHostBytes)
    cl.fail("-m, -n, -k: the host buffers would need %.2f GiB (A, B, the double reference and "
            "one float copy of C); this program allows at most %.2f GiB",
            hostBytes(o) / 1073741824.0, kMaxHostBytes / 1073741824.0);
  return o;
}

// Why this device cannot run the problem, or "": the grid of every step, and
// the device memory of the reference (A, B and a double C) or of the ladder (A, B,
// C and the parts of steps 13-16), whichever is larger.
std::string deviceProblem(const Options& o, const int maxGrid[3], size_t freeBytes) {
  char buf[320] = "";
  for (const Step& st : kLadder) {
    const long long gy = (o.m + st.tile_m - 1) / st.tile_m, gx = (o.n + st.tile_n - 1) / st.tile_n;
    if (gy > maxGrid[1] || gx > maxGrid[0]) {
      std::snprintf(buf, sizeof buf, "-m %lld, -n %lld: step %s needs a grid of (%lld, %lld) "
                    "blocks, beyond this device's (%d, %d)", o.m, o.n, st.csv_name, gx, gy,
                    maxGrid[0], maxGrid[1]);
      return buf;
    }
  }
  // The reference's buffers are freed before the ladder's (A, B, C and the parts of steps 13-16).
  const int splits = splitCount(o.m, o.n, o.k);
  const long long ab = 4 * (o.m * o.k + o.k * o.n);
  const long long need = std::max(ab + 8 * o.m * o.n, ab + 4 * o.m * o.n * (1 + (splits > 1 ? splits : 0)));
  if (need > static_cast<long long>(freeBytes))
    std::snprintf(buf, sizeof buf, "-m, -n, -k: the reference or the ladder needs %.2f GiB of "
                  "device memory, more than the %.2f GiB free", need / 1073741824.0,
                  freeBytes / 1073741824.0);
  return buf;
}

// =============================================================================
// main
// =============================================================================
// Inputs, the reference and the tolerance, printed; the inputs copied to the device.
Problem prepareProblem(const Options& o, std::FILE* out) {
  Problem p{int(o.m), int(o.n), int(o.k), 2.0 * o.m * o.n * o.k, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  p.A.resize(size_t(o.m * o.k));
  p.B.resize(size_t(o.k * o.n));
  p.ref.resize(size_t(o.m * o.n));
  fillInputs(p.A, p.B);
  referenceGemm(p.A.data(), p.B.data(), p.ref.data(), p.m, p.n, p.k);
  p.tol = gemmTolerance(p.k, maxAbs(p.ref.data(), 1LL * p.m * p.n));
  p.got = hostVector<float>(1LL * p.m * p.n, "the steps' copy of C");
  std::fprintf(out, "Check: every element against a double reference (ascending k; rows 0, M/2 "
               "and M-1 redone on the CPU), output poisoned with NaN first\n  rtol = max(1e-5, "
               "4 * 2^-23 * sqrt(K)) = %.4g, atol = rtol * max|ref| = %.4g\n", p.tol.rtol,
               p.tol.atol);
  CUDA_CHECK(cudaMalloc(&p.dA, std::max<size_t>(p.A.size(), 1) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&p.dB, std::max<size_t>(p.B.size(), 1) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&p.dC, p.ref.size() * sizeof(float)));
  const int splits = splitCount(p.m, p.n, p.k);
  CUDA_CHECK(cudaMalloc(&p.dWork, (splits > 1 ? splits * p.ref.size() : 1) * sizeof(float)));
  if (p.k > 0) {  // K = 0: A and B are empty, their one-element buffers never read
    CUDA_CHECK(cudaMemcpy(p.dA, p.A.data(), p.A.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(p.dB, p.B.data(), p.B.size() * sizeof(float), cudaMemcpyHostToDevice));
  }
  return p;
}

void printCsv(const Problem& p, const StepResult* r, int from, int to, double peak) {
  std::printf("kernel,n,median_ms,gflops,m,k,pct_of_peak,speedup,status\n");
  for (int s = from - 1; s < to; ++s) {  // the steps run
    if (!r[s].timed) {
      std::printf("%s,%d,,,%d,%d,,,FAIL\n", kLadder[s].csv_name, p.n, p.m, p.k);
      continue;
    }
    char speedup[32] = "";  // empty where the step before was not timed (failed, or not run)
    if (s > 0 && r[s - 1].timed && r[s].median_ms > 0.0)
      std::snprintf(speedup, sizeof speedup, "%.2f", r[s - 1].median_ms / r[s].median_ms);
    else if (s == 0)
      std::snprintf(speedup, sizeof speedup, "1.00");
    std::printf("%s,%d,%.4f,%.1f,%d,%d,%.1f,%s,PASS\n", kLadder[s].csv_name, p.n, r[s].median_ms,
                r[s].gflops, p.m, p.k, 100.0 * r[s].gflops / peak, speedup);
  }
}

int main(int argc, char** argv) {
  CommandLine cl(argc, argv, usageText());
  const Options o = parseOptions(cl);  // exit 2 on a bad command line, no CUDA call
  const cudaDeviceProp prop = requireCudaDevice();  // exit 77 without a device
  std::FILE* out = o.csv ? stderr : stdout;  // --csv: stdout holds two "# " lines, then the CSV
  const char* hash = o.csv ? "# " : "";
  std::printf("%sGPU: %s (compute capability %d.%d)\n", hash, prop.name, prop.major, prop.minor);
  const long long bigBlocks = ((o.m + kBM - 1) / kBM) * ((o.n + kBN - 1) / kBN);
  std::printf("%s[device] %d SMs, %d registers per SM, %zu KiB shared memory per block without "
              "opt-in; steps 5-12 launch %lld blocks, %.2f per SM\n", hash,
              prop.multiProcessorCount, prop.regsPerMultiprocessor, prop.sharedMemPerBlock / 1024,
              bigBlocks, double(bigBlocks) / prop.multiProcessorCount);
  std::fprintf(out, "Problem: C (%lld x %lld) = A (%lld x %lld) * B (%lld x %lld), FP32, "
               "row-major, %.3f GFLOP\n", o.m, o.n, o.m, o.k, o.k, o.n, 2e-9 * o.m * o.n * o.k);
  if (o.m == 0 || o.n == 0) {
    std::fprintf(out, "Empty output: C has no elements; nothing to compute, launch or time.\n");
    return EXIT_SUCCESS;
  }
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  const std::string refused = deviceProblem(o, prop.maxGridSize, freeBytes);
  if (!refused.empty()) cl.fail("%s", refused.c_str());

  const Ceilings ceilings = measureCeilings();  // before the GEMM buffers exist
  printCeilings(ceilings, out);  // the [device] line prints the gate on the ceilings
  const double peak = ceilings.fp32_gflops;
  Problem p = prepareProblem(o, out);
  std::fprintf(out, "Timing: median of %d launches after %d warm-ups; shares are of the "
               "measured FP32 peak above\n", o.iters, o.warmups);
  if (o.from > 1 || o.to < kSteps)
    std::fprintf(out, "Steps run: %d to %d of %d (-from, -to)\n", o.from, o.to, kSteps);
  bool ok = true;
  StepResult r[kSteps];
  for (int s = o.from - 1; s < o.to; ++s)
    r[s] = runStep(s, p, o.warmups, o.iters, peak,
                   s == o.from - 1 ? (s > 0 ? -1.0 : 0.0) : r[s - 1].median_ms,
                   prop.multiProcessorCount, out, ok);
  CUDA_CHECK(cudaFree(p.dA));
  CUDA_CHECK(cudaFree(p.dB));
  CUDA_CHECK(cudaFree(p.dC));
  CUDA_CHECK(cudaFree(p.dWork));

  if (o.csv) printCsv(p, r, o.from, o.to, peak);
  if (r[0].timed && r[kSteps - 1].timed)
    std::fprintf(out, "Ladder: step %d runs at %.2fx step 1, %.1f%% of measured FP32 peak\n",
                 kSteps, r[0].median_ms / r[kSteps - 1].median_ms,
                 100.0 * r[kSteps - 1].gflops / peak);
  cudaFuncAttributes fa{};
  CUDA_CHECK(cudaFuncGetAttributes(&fa, kLadder[kExerciseStep].kernel));
  const bool ranStep4 = o.from - 1 <= kExerciseStep && kExerciseStep <= o.to - 1;
  if (ranStep4 && !registerBlockingProblem(fa, kExerciseStep).empty())
    std::fprintf(out, "What is left: step 4 is not register-blocked (the GATE line says what its "
                 "kernel lacks); each thread must compute an 8 x 8 micro-tile in registers, fed "
                 "from shared-memory panels.\n");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

// =============================================================================
// Course toolkit: the blocks every lesson carries (error checks, timer, command line, reference
// GEMM, roofline ceilings). Machinery: skip it on a first read.
// =============================================================================
// common: cuda_check
// Device 0's properties. No NVIDIA driver loaded, or no GPU listed: exit 77 (skipped);
// a loaded driver that CUDA cannot use (too old, broken): exit 1, the GPU needs fixing.
cudaDeviceProp requireCudaDevice() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::FILE* driver = std::fopen("/proc/driver/nvidia/version", "r");  // Linux's driver
    if (driver) std::fclose(driver);
    const bool broken = driver && err != cudaSuccess && err != cudaErrorNoDevice;
    std::fprintf(stderr, broken ? "CUDA cannot use this machine's NVIDIA driver: %s\n"
                                : "no usable CUDA device: %s (exit 77 = skipped)\n",
                 !driver ? "no NVIDIA driver is loaded"
                         : err != cudaSuccess ? cudaGetErrorString(err) : "the driver lists none");
    std::exit(broken ? EXIT_FAILURE : kExitNoDevice);
  }
  CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  return prop;
}
// end common: cuda_check
// common: timer
// Kernel timer. Warm-ups launch the kernel being timed (lazy loading charges
// each kernel on its first launch; clocks ramp up). Each sample is one launch
// between two events, queued back to back, so the events read the GPU's clock
// and launch latency hides behind the previous launch. The median ignores the
// odd sample hit by a clock change.
template <typename Launch>
TimingStats timeKernel(Launch launch, int warmups, int samples) {
  samples = std::max(samples, 1);  // callers validate; this keeps the median defined
  for (int i = 0; i < warmups; ++i) launch();
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> marks(static_cast<size_t>(samples) + 1);
  for (cudaEvent_t& e : marks) CUDA_CHECK(cudaEventCreate(&e));
  CUDA_CHECK(cudaEventRecord(marks[0]));
  for (size_t i = 1; i < marks.size(); ++i) {
    launch();
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(marks[i]));
  }
  CUDA_CHECK(cudaEventSynchronize(marks.back()));
  std::vector<double> ms(marks.size() - 1);
  double total = 0.0;
  for (size_t i = 0; i < ms.size(); ++i) {
    float t = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&t, marks[i], marks[i + 1]));
    total += (ms[i] = t);
  }
  for (cudaEvent_t& e : marks) CUDA_CHECK(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  const size_t h = ms.size() / 2;
  const double median = (ms.size() % 2 == 1) ? ms[h] : 0.5 * (ms[h - 1] + ms[h]);
  return TimingStats{median, ms.front(), ms.back(), total / samples, samples};
}
// end common: timer
// common: cli
// Strict command line (no CUDA call: a bad one exits 2 without a GPU too).
// Tokens are read left to right, the last occurrence of an option wins, and a
// valued option takes the next token. A number is the whole token ("12x" is
// refused); integers are base 10; reals are plain decimals ("0.5", "1e-3"),
// so hex floats, inf, nan and values that overflow or underflow ("1e999",
// "1e-400") are refused, as is anything out of range. An error is one stderr
// line (the option, what it accepts, what it got), the usage, exit 2; -h and
// --help print the usage on stdout, exit 0. stdout is checked at exit: a
// failed write (CSV into a full disk) gets one stderr line and exit 1.
bool parseIntToken(const char* text, long long lo, long long hi, long long* out) {
  char* end = nullptr;
  errno = 0;  // strtoll would skip leading blanks: the first character must be a sign or digit
  if (!text || !(std::isdigit(static_cast<unsigned char>(*text)) || *text == '-' || *text == '+'))
    return false;
  const long long v = std::strtoll(text, &end, 10);
  if (errno == ERANGE || end == text || *end != '\0' || v < lo || v > hi) return false;
  return *out = v, true;
}

bool parseRealToken(const char* text, double lo, double hi, double* out) {
  char* end = nullptr;
  errno = 0;  // decimal characters only: no blanks, hex, inf or nan
  if (!text || !*text || std::strspn(text, "0123456789.eE+-") != std::strlen(text)) return false;
  const double v = std::strtod(text, &end);  // ERANGE: overflow or underflow
  if (errno == ERANGE || end == text || *end != '\0' || !(v >= lo && v <= hi)) return false;
  return *out = v, true;
}

void checkStdoutAtExit() {  // registered by CommandLine's constructor
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return;
  std::fputs("error: writing to stdout failed (a full disk or a closed pipe?)\n", stderr);
  std::_Exit(EXIT_FAILURE);
}

CommandLine::CommandLine(int argc, char** argv, std::string usage)
    : argc_(argc), argv_(argv), usage_(std::move(usage)) {
  std::atexit(checkStdoutAtExit);
}
bool CommandLine::next() {
  if (++i_ >= argc_) return false;
  if (is("-h") || is("--help")) {
    std::fputs(usage_.c_str(), stdout);
    std::exit(EXIT_SUCCESS);
  }
  return true;
}
bool CommandLine::is(const char* name) const { return std::strcmp(argv_[i_], name) == 0; }
const char* CommandLine::takeValue() { return (i_ + 1 < argc_) ? argv_[++i_] : nullptr; }

long long CommandLine::intValue(long long lo, long long hi) {
  const char *opt = argv_[i_], *text = takeValue();
  long long v = 0;
  if (!parseIntToken(text, lo, hi, &v))
    fail("%s expects an integer in [%lld, %lld], got %s%s%s", opt, lo, hi,
         text ? "\"" : "nothing", text ? text : "", text ? "\"" : "");
  return v;
}
double CommandLine::realValue(double lo, double hi) {
  const char *opt = argv_[i_], *text = takeValue();
  double v = 0.0;
  if (!parseRealToken(text, lo, hi, &v))
    fail("%s expects a decimal number in [%g, %g] (no hex, inf, nan, overflow or underflow), "
         "got %s%s%s", opt, lo, hi, text ? "\"" : "nothing", text ? text : "", text ? "\"" : "");
  return v;
}

void CommandLine::unknownOption() const {
  fail("unknown option \"%s\" (the accepted options are listed below)", argv_[i_]);
}
void CommandLine::fail(const char* fmt, ...) const {
  std::fflush(stdout);  // whatever was printed so far comes first
  std::fputs("error: ", stderr);
  va_list args;
  va_start(args, fmt);
  std::vfprintf(stderr, fmt, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::fputs(usage_.c_str(), stderr);
  std::exit(kExitBadCommandLine);
}
// end common: cli
// common: reference_gemm
// Reference GEMM: C[i*N+j] = the sum over ascending k, from 0.0 in one double, of
// double(A[i*K+k]) * double(B[k*N+j]), on the GPU. It is
// independent of the kernels it judges: another precision (a float x float product
// is exact in double, so each add rounds once), no tiling, no shared memory, no split
// of k; and rows 0, M/2 and M-1, recomputed by a CPU loop, must match bit for bit.
__global__ void referenceGemmKernel(const float* A, const float* B, double* C, int M, int N,
                                    int K) {
  const long long count = static_cast<long long>(M) * N, step = 1LL * gridDim.x * blockDim.x;
  for (long long e = 1LL * blockIdx.x * blockDim.x + threadIdx.x; e < count; e += step) {
    const long long i = e / N, j = e % N;
    double acc = 0.0;
    for (long long k = 0; k < K; ++k) acc = fma(double(A[i * K + k]), double(B[k * N + j]), acc);
    C[e] = acc;
  }
}

void referenceRowCpu(const float* A, const float* B, double* row, int i, int N, int K) {
  for (int j = 0; j < N; ++j) row[j] = 0.0;
  for (long long k = 0; k < K; ++k)  // k outer reads B along rows; each sum still ascends in k
    for (long long j = 0; j < N; ++j) row[j] += double(A[1LL * i * K + k]) * double(B[k * N + j]);
}

void referenceGemm(const float* A, const float* B, double* C, int M, int N, int K) {
  const long long count = 1LL * M * N, a = 1LL * M * K, b = 1LL * K * N;
  if (count == 0) return;
  float *dA = nullptr, *dB = nullptr;  // device copies; dC: the result in double
  double* dC = nullptr;
  CUDA_CHECK(cudaMalloc(&dA, std::max(a, 1LL) * sizeof(float)));  // K = 0: 1 unread element
  CUDA_CHECK(cudaMalloc(&dB, std::max(b, 1LL) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dC, count * sizeof(double)));
  if (K > 0) CUDA_CHECK(cudaMemcpy(dA, A, a * sizeof(float), cudaMemcpyHostToDevice));
  if (K > 0) CUDA_CHECK(cudaMemcpy(dB, B, b * sizeof(float), cudaMemcpyHostToDevice));
  referenceGemmKernel<<<static_cast<int>(std::min((count + 255) / 256, 1LL << 16)), 256>>>(
      dA, dB, dC, M, N, K);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpy(C, dC, count * sizeof(double), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  std::vector<double> row(static_cast<size_t>(N));
  for (int i : {0, M / 2, M - 1}) {
    referenceRowCpu(A, B, row.data(), i, N, K);
    if (std::memcmp(row.data(), C + 1LL * i * N, N * sizeof(double)) != 0) {
      std::fprintf(stderr, "GATE: the GPU reference GEMM and its CPU loop differ in row %d\n", i);
      std::exit(EXIT_FAILURE);
    }
  }
}
// end common: reference_gemm
// common: ceilings
// Roofline ceilings, measured by this program. Bandwidth: a kernel copies one
// buffer into another, each 4 x the L2 (32 MiB to a quarter of free memory) so
// the L2 cannot hold them; bytes read + written / median time. FP32 peak: each
// thread runs kCeilingChains independent FMA chains on every SM; 2 FLOP/FMA.
// Each is gated against its bound from the attributes: DRAM 2 transfers per
// clock x memory clock x bus width / 8; FP32 SMs x lanes x 2 x clock. Lanes
// (no attribute) are the FP32 multiply-adds per clock per SM of the CUDA C++
// Programming Guide's arithmetic-instruction table: 64 on 7.x and 8.0, 128 on
// 8.6 to 12.x, else 0 and no gate (no guess). Cards may boost past nominal
// clocks: only a figure above kCeilingSlack x its bound fails (GATE, exit 1).
constexpr int kCeilingThreads = 256, kCeilingUnroll = 4, kCeilingChains = 8;
constexpr int kCeilingFmaIters = 8192;  // FMAs per chain
constexpr double kCeilingSlack = 1.25;

// launch assumption: gridDim.x * blockDim.x * kCeilingUnroll float4 in each buffer.
__global__ void ceilingCopyKernel(const float4* __restrict__ in, float4* __restrict__ out) {
  const long long base = 1LL * blockIdx.x * blockDim.x * kCeilingUnroll + threadIdx.x;
  float4 v[kCeilingUnroll];  // every load in flight before the first store
#pragma unroll
  for (int u = 0; u < kCeilingUnroll; ++u) v[u] = in[base + 1LL * u * blockDim.x];
#pragma unroll
  for (int u = 0; u < kCeilingUnroll; ++u) out[base + 1LL * u * blockDim.x] = v[u];
}

// mul and add are arguments, so the compiler cannot fold the chains away.
__global__ void ceilingFmaKernel(float* out, int iters, float mul, float add) {
  float acc[kCeilingChains], sum = 0.0f;  // constant trip counts: unrolled into registers
  for (int c = 0; c < kCeilingChains; ++c) acc[c] = static_cast<float>(threadIdx.x + c);
#pragma unroll 16
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int c = 0; c < kCeilingChains; ++c) acc[c] = fmaf(acc[c], mul, add);
  for (int c = 0; c < kCeilingChains; ++c) sum += acc[c];
  out[1LL * blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

int ceilingAttribute(cudaDeviceAttr attr) {  // 0 where the driver cannot say (error cleared)
  int v = 0;
  return cudaDeviceGetAttribute(&v, attr, 0) == cudaSuccess ? v : ((void)cudaGetLastError(), 0);
}

void ceilingGate(const char* what, double measured, double bound, const char* unit) {
  if (bound <= 0.0 || measured <= kCeilingSlack * bound) return;
  std::fprintf(stderr, "GATE: measured %s %.1f %s is above %.2f x the %.1f %s that the device's "
               "attributes allow: a broken measurement\n", what, measured, unit, kCeilingSlack,
               bound, unit);
  std::exit(EXIT_FAILURE);
}

Ceilings measureCeilings() {
  Ceilings c{};
  const int sms = ceilingAttribute(cudaDevAttrMultiProcessorCount);
  const int l2 = ceilingAttribute(cudaDevAttrL2CacheSize);
  const size_t chunk = size_t(kCeilingThreads) * kCeilingUnroll * sizeof(float4);
  size_t freeBytes = 0, totalBytes = 0, big = std::max(size_t(4) * l2, size_t(32) << 20);
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  const size_t bytes = std::min(big, freeBytes / 4) / chunk * chunk;
  float4 *in = nullptr, *out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, bytes));
  CUDA_CHECK(cudaMalloc(&out, bytes));
  CUDA_CHECK(cudaMemset(in, 0, bytes));  // the copy reads initialised memory
  const TimingStats copy = timeKernel(
      [&] { ceilingCopyKernel<<<unsigned(bytes / chunk), kCeilingThreads>>>(in, out); }, 2,
      kCeilingSamples);
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
  c.copy_bytes = double(bytes), c.l2_bytes = double(l2);
  c.copy_gbs = 2.0 * c.copy_bytes / (copy.median_ms * 1e-3) / 1e9;
  const int perSm = std::max(1, ceilingAttribute(cudaDevAttrMaxThreadsPerMultiProcessor) /
                                    kCeilingThreads);
  const int blocks = sms * perSm;
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&sink, size_t(blocks) * kCeilingThreads * sizeof(float)));
  const TimingStats fma = timeKernel([&] {
    ceilingFmaKernel<<<blocks, kCeilingThreads>>>(sink, kCeilingFmaIters, 0.999f, 0.001f);
  }, 2, kCeilingSamples);
  CUDA_CHECK(cudaFree(sink));
  const double flop = 2.0 * kCeilingChains * kCeilingFmaIters * blocks * kCeilingThreads;
  c.fp32_gflops = flop / (fma.median_ms * 1e-3) / 1e9;

  const int memMhz = ceilingAttribute(cudaDevAttrMemoryClockRate) / 1000;
  const int bus = ceilingAttribute(cudaDevAttrGlobalMemoryBusWidth);
  const int major = ceilingAttribute(cudaDevAttrComputeCapabilityMajor);
  const int minor = ceilingAttribute(cudaDevAttrComputeCapabilityMinor);
  const int lanes = (major == 7 || (major == 8 && minor == 0)) ? 64
                    : (major >= 8 && major <= 12)               ? 128 : 0;
  const int mhz = ceilingAttribute(cudaDevAttrClockRate) / 1000;
  c.dram_bound_gbs = 2.0 * memMhz * bus / 8 / 1e3;
  c.fp32_bound_gflops = 2.0 * sms * lanes * mhz / 1e3;
  std::snprintf(c.bounds, sizeof c.bounds, "DRAM 2 x %d MHz x %d-bit / 8 = %.1f GB/s, FP32 %d "
                "SMs x %d lanes (cc %d.%d) x 2 x %d MHz = %.1f GFLOP/s (0: unknown, not gated)",
                memMhz, bus, c.dram_bound_gbs, sms, lanes, major, minor, mhz, c.fp32_bound_gflops);
  ceilingGate("bandwidth", c.copy_gbs, c.dram_bound_gbs, "GB/s");
  ceilingGate("FP32 peak", c.fp32_gflops, c.fp32_bound_gflops, "GFLOP/s");
  return c;
}

void printCeilings(const Ceilings& c, std::FILE* out) {
  std::fprintf(out, "Ceilings measured by this program (median of %d launches each): bandwidth "
               "%.1f GB/s (copy kernel), FP32 peak %.1f GFLOP/s (FMA kernel)\n",
               kCeilingSamples, c.copy_gbs, c.fp32_gflops);
  std::fprintf(out, "[device] bounds from attributes (a measurement above %.2f x its bound "
               "fails): %s\n", kCeilingSlack, c.bounds);
}

double rooflineGflops(const Ceilings& c, double ai) {
  return std::min(c.fp32_gflops, ai * c.copy_gbs);
}
// end common: ceilings
// common: gemm_check
// The course's correctness rule for a GEMM, one copy in every lesson that checks one.
// What lessons choose (parameters): the seed and the value mapping of the inputs (scale * u +
// offset: 2u - 1 in [-1, 1) or u - 0.5 in [-0.5, 0.5), both exact in float, so every lesson's
// inputs and reference are the same on every machine); which elements are checked (all, or
// sampled rows where a full reference costs too much memory); a tolerance given on the command
// line in place of the K-scaled default. What they do not choose: the rule itself. Lessons that
// compare precisions (FP16 storage, INT8 codes) draw their own inputs and judge with their own
// error metrics and bounds, and take from here what they use of the rest.
float Lcg::next() {
  s = 1664525u * s + 1013904223u;
  return static_cast<float>(s >> 8) / 16777216.0f;  // 24 bits: exact in float
}
void Lcg::fill(std::vector<float>& x, float scale, float offset) {
  for (float& v : x) v = scale * next() + offset;  // scale 1 or 2: the product is exact
}

// The K-scaled tolerance. The rounding errors of K float additions add like a random walk,
// so they grow like sqrt(K) units of 2^-23; 4 of them are headroom over that typical size
// (not a worst-case bound for every order), and 1e-5 is the floor. atol = rtol x max|ref|
// judges elements near zero (where a relative error says nothing) on the scale of the whole
// matrix.
double rtolForK(long long K) {
  return std::max(1e-5, std::ldexp(4.0, -23) * std::sqrt(static_cast<double>(K)));
}
Tolerance gemmTolerance(long long K, double refMax, double rtol, double atol) {
  const double r = rtol >= 0.0 ? rtol : rtolForK(K);
  return Tolerance{r, atol >= 0.0 ? atol : r * refMax};
}
double maxAbs(const double* x, long long count) {
  double m = 0.0;
  for (long long i = 0; i < count; ++i) m = std::max(m, std::fabs(x[i]));
  return m;
}

// An element fails when !(d <= t), d = |got - ref|, t = atol + rtol*|ref|: a NaN or an
// infinity fails (a poisoned element never written is a NaN). The score d / t says how close
// to the tolerance an element came (1 = at the limit); unlike d / |ref| it stays meaningful
// where ref is near zero. t = 0 (both tolerances 0): exact (score 0) or not (infinity).
void GemmCheck::add(long long index, double got, double ref, const Tolerance& tol) {
  const double d = std::fabs(got - ref), t = tol.atol + tol.rtol * std::fabs(ref);
  const double score = t > 0.0 ? d / t : d == 0.0 ? 0.0 : HUGE_VAL;
  if (!(d <= t) && failures++ == 0)
    first_bad = index, first_got = got, first_ref = ref, first_tol = t;
  if (checked++ == 0 || (!std::isnan(worst_score) && (std::isnan(score) || score > worst_score)))
    worst = index, worst_score = score, worst_got = got, worst_ref = ref, worst_diff = d,
    worst_tol = t;
  if (!std::isnan(max_abs_err) && (std::isnan(d) || d > max_abs_err)) max_abs_err = d;
}
std::string GemmCheck::describe(const char* what, long long cols) const {
  char buf[300];
  std::snprintf(buf, sizeof buf, "%s: %lld of %lld elements outside the tolerance, the first "
                "at (%lld, %lld): got %.9g, ref %.9g", what, failures, checked, first_bad / cols,
                first_bad % cols, first_got, first_ref);
  return buf;
}
GemmCheck checkElements(const float* got, const double* ref, long long count,
                        const Tolerance& tol) {
  GemmCheck c;
  for (long long i = 0; i < count; ++i) c.add(i, got[i], ref[i], tol);
  return c;
}

// Poison, check, time. The poison makes an element the kernel never writes a NaN, so it fails
// whatever an earlier launch left. The copy back waits for the launch and reports its errors.
// A result that fails is never timed; one that passes is timed by the lessons' timer, and C
// is then compared with the checked bits, 1 MiB at a time (no second host copy of C).
template <typename Launch, typename Judge>
CheckedTiming checkThenTime(Launch launch, float* dC, std::vector<float>& got, Judge judge,
                            int warmups, int samples) {
  CheckedTiming r;
  const size_t bytes = got.size() * sizeof(float);
  CUDA_CHECK(cudaMemset(dC, kPoisonByte, bytes));
  launch();
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpy(got.data(), dC, bytes, cudaMemcpyDeviceToHost));
  if (!(r.passed = judge(static_cast<const std::vector<float>&>(got)))) return r;
  r.t = timeKernel(launch, warmups, samples);
  std::vector<float> part(std::min(got.size(), size_t(1) << 18));
  r.reproduced = true;
  for (size_t first = 0; first < got.size() && r.reproduced; first += part.size()) {
    const size_t n = std::min(part.size(), got.size() - first);
    CUDA_CHECK(cudaMemcpy(part.data(), dC + first, n * sizeof(float), cudaMemcpyDeviceToHost));
    r.reproduced = std::memcmp(part.data(), got.data() + first, n * sizeof(float)) == 0;
  }
  return r;
}

template <typename T>
std::vector<T> hostVector(long long count, const char* what) {
  try {
    return std::vector<T>(static_cast<size_t>(count));
  } catch (const std::exception&) {  // std::bad_alloc, or a size past max_size()
    std::fprintf(stderr, "host allocation failed: %s, %lld bytes\n", what,
                 count * static_cast<long long>(sizeof(T)));
    std::exit(EXIT_FAILURE);
  }
}
// end common: gemm_check
