// CPU reference GEMM in double, for checking GPU matmuls:
//   C[i*N + j] = sum over k = 0, 1, ..., K-1 (in that order) of
//                double(A[i*K + k]) * double(B[k*N + j])
// with A (M x K), B (K x N) and C (M x N) row-major, summed in double from 0.
// Needs <algorithm>, <cstring> and <vector>.
//
// Why it is bit-identical to the naive i-j-k loop: a float x float product has
// at most 48 significant bits, so it is exact in double; fma(a, b, s) and
// s + a*b then round the same exact value once, and every element still sums
// its K products in ascending k from 0.0 in one double accumulator (blocking
// over k only parks that accumulator in C between blocks, which is exact).
// Vector lanes hold different elements, never parts of one sum.
//
// Why it is fast (2048^3 in about 0.45 s on one core, against about 48 s for
// the naive loop, which reads B down a column: one cache miss per multiply-add,
// and at power-of-two N those addresses collide in the same cache sets):
// - loop interchange plus packing: per block of 256 k-steps, a 256 x 1024 slab
//   of B is converted once into contiguous 8-column double panels (2 MiB, held
//   in L2/L3), and 6 rows of A into one 6-row double panel (12 KiB, in L1);
// - register blocking: a 6 x 8 tile of C lives in twelve 4-wide vector
//   registers for the whole k block; each k-step loads 2 vectors of B and 6
//   scalars of A for 48 multiply-adds, all unit stride;
// - that tile is compiled for AVX2+FMA and picked at run time when the CPU has
//   it; otherwise a 2-wide build of the same source runs (about 2.5x slower),
//   or, on a compiler without GCC vector extensions, a scalar loop.
namespace cpu_reference_detail {

constexpr long long kMR = 6;    // rows of C per register tile
constexpr long long kNR = 8;    // columns of C per register tile
constexpr long long kKC = 256;  // k-steps per packed block (B panel 16 KiB: L1)
constexpr long long kNC = 1024; // columns per packed B block (2 MiB: L2/L3)
static_assert(kNR == 8 && kMR == 6, "the tile below is written out for 6 x 8");
static_assert(kNC % kNR == 0, "a B block holds whole 8-column panels");

// C tile (6 x 8, row stride ldc) += packed A panel (kc x 6) * packed B panel
// (kc x 8), in ascending k; with first set the tile starts from 0.0 instead of
// being loaded (the first k block).
#if defined(__GNUC__)  // GCC and Clang, the host compilers nvcc uses on Linux
// Vector extensions: operators act lane by lane, no intrinsics header needed.
typedef double Vec2 __attribute__((vector_size(16)));  // any 64-bit host
typedef double Vec4 __attribute__((vector_size(32)));  // AVX2 only

// V holds kL doubles; a pass covers 2*kL columns of the tile with twelve named
// accumulators (6 rows x 2 vectors), few enough to stay in registers: one pass
// with Vec4 (16 ymm registers), two with Vec2 (16 xmm on baseline x86-64).
// memcpy is the portable unaligned load and store.
template <typename V>
__attribute__((always_inline)) inline void tileBody(long long kc,
                                                    const double* a,
                                                    const double* b, double* c,
                                                    long long ldc, bool first) {
  constexpr long long kL = sizeof(V) / sizeof(double);
  constexpr size_t kV = sizeof(V);
  for (long long h = 0; h < kNR; h += 2 * kL, c += 2 * kL, b += 2 * kL) {
    double* const r[kMR] = {c, c + ldc, c + 2 * ldc, c + 3 * ldc, c + 4 * ldc,
                            c + 5 * ldc};  // this pass's part of each C row
    V c0a = {}, c0b = {}, c1a = {}, c1b = {}, c2a = {}, c2b = {};
    V c3a = {}, c3b = {}, c4a = {}, c4b = {}, c5a = {}, c5b = {};
    if (!first) {
      std::memcpy(&c0a, r[0], kV); std::memcpy(&c0b, r[0] + kL, kV);
      std::memcpy(&c1a, r[1], kV); std::memcpy(&c1b, r[1] + kL, kV);
      std::memcpy(&c2a, r[2], kV); std::memcpy(&c2b, r[2] + kL, kV);
      std::memcpy(&c3a, r[3], kV); std::memcpy(&c3b, r[3] + kL, kV);
      std::memcpy(&c4a, r[4], kV); std::memcpy(&c4b, r[4] + kL, kV);
      std::memcpy(&c5a, r[5], kV); std::memcpy(&c5b, r[5] + kL, kV);
    }
    for (long long k = 0; k < kc; ++k) {
      V b0, b1;  // B row k: this pass's columns
      std::memcpy(&b0, b + kNR * k, kV);
      std::memcpy(&b1, b + kNR * k + kL, kV);
      const double* ak = a + kMR * k;  // A column k, rows 0-5 of the panel
      // scalar * vector broadcasts; contracted to one FMA where the ISA has it
      c0a += ak[0] * b0; c0b += ak[0] * b1;
      c1a += ak[1] * b0; c1b += ak[1] * b1;
      c2a += ak[2] * b0; c2b += ak[2] * b1;
      c3a += ak[3] * b0; c3b += ak[3] * b1;
      c4a += ak[4] * b0; c4b += ak[4] * b1;
      c5a += ak[5] * b0; c5b += ak[5] * b1;
    }
    std::memcpy(r[0], &c0a, kV); std::memcpy(r[0] + kL, &c0b, kV);
    std::memcpy(r[1], &c1a, kV); std::memcpy(r[1] + kL, &c1b, kV);
    std::memcpy(r[2], &c2a, kV); std::memcpy(r[2] + kL, &c2b, kV);
    std::memcpy(r[3], &c3a, kV); std::memcpy(r[3] + kL, &c3b, kV);
    std::memcpy(r[4], &c4a, kV); std::memcpy(r[4] + kL, &c4b, kV);
    std::memcpy(r[5], &c5a, kV); std::memcpy(r[5] + kL, &c5b, kV);
  }
}

inline void tileBaseline(long long kc, const double* a, const double* b,
                         double* c, long long ldc, bool first) {
  tileBody<Vec2>(kc, a, b, c, ldc, first);
}
#else  // other host compilers: the same tile, one double per accumulator
inline void tileBaseline(long long kc, const double* a, const double* b,
                         double* c, long long ldc, bool first) {
  double acc[kMR][kNR];
  for (long long r = 0; r < kMR; ++r)
    for (long long j = 0; j < kNR; ++j)
      acc[r][j] = first ? 0.0 : c[r * ldc + j];
  for (long long k = 0; k < kc; ++k)
    for (long long r = 0; r < kMR; ++r)
      for (long long j = 0; j < kNR; ++j)
        acc[r][j] += a[kMR * k + r] * b[kNR * k + j];
  for (long long r = 0; r < kMR; ++r)
    for (long long j = 0; j < kNR; ++j) c[r * ldc + j] = acc[r][j];
}
#endif

// The AVX2+FMA build of the same tile, for x86-64 hosts that have it (nvcc's
// device pass compiles no host code and is kept out).
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__CUDA_ARCH__)
#define CPU_REFERENCE_HAVE_AVX2 1
__attribute__((target("avx2,fma"))) inline void tileAvx2(
    long long kc, const double* a, const double* b, double* c, long long ldc,
    bool first) {
  tileBody<Vec4>(kc, a, b, c, ldc, first);
}
#endif

typedef void (*TileFn)(long long, const double*, const double*, double*,
                       long long, bool);

inline TileFn pickTile() {
#ifdef CPU_REFERENCE_HAVE_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return tileAvx2;
#endif
  return tileBaseline;
}

}  // namespace cpu_reference_detail

inline void cpuReferenceGemm(const float* A, const float* B, double* C,
                             long long M, long long N, long long K) {
  using namespace cpu_reference_detail;
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {  // empty sums
    std::fill(C, C + M * N, 0.0);
    return;
  }
  const TileFn tile = pickTile();
  std::vector<double> bPack(static_cast<size_t>(kKC * kNC));  // 2 MiB
  std::vector<double> aPack(static_cast<size_t>(kKC * kMR));  // 12 KiB
  double edge[kMR * kNR] = {};  // a C tile that overhangs M or N
  for (long long pc = 0; pc < K; pc += kKC) {
    const long long kc = std::min(kKC, K - pc);
    const bool first = (pc == 0);
    for (long long jc = 0; jc < N; jc += kNC) {
      const long long nc = std::min(kNC, N - jc);
      const long long nPanels = (nc + kNR - 1) / kNR;
      // B rows [pc, pc+kc), cols [jc, jc+nc) -> 8-column panels, k-major,
      // zero past column N.
      for (long long p = 0; p < nPanels; ++p) {
        double* dst = bPack.data() + p * kKC * kNR;
        const long long j0 = jc + p * kNR, w = std::min(kNR, N - j0);
        for (long long k = 0; k < kc; ++k) {
          const float* src = B + (pc + k) * N + j0;
          for (long long j = 0; j < w; ++j) dst[k * kNR + j] = src[j];
          for (long long j = w; j < kNR; ++j) dst[k * kNR + j] = 0.0;
        }
      }
      for (long long i0 = 0; i0 < M; i0 += kMR) {
        const long long h = std::min(kMR, M - i0);
        // A rows [i0, i0+6), cols [pc, pc+kc) -> one 6-row panel, k-major,
        // zero past row M.
        double* ap = aPack.data();
        for (long long r = 0; r < kMR; ++r) {
          if (r < h) {
            const float* src = A + (i0 + r) * K + pc;
            for (long long k = 0; k < kc; ++k) ap[k * kMR + r] = src[k];
          } else {
            for (long long k = 0; k < kc; ++k) ap[k * kMR + r] = 0.0;
          }
        }
        for (long long p = 0; p < nPanels; ++p) {
          const double* bp = bPack.data() + p * kKC * kNR;
          const long long j0 = jc + p * kNR, w = std::min(kNR, N - j0);
          double* c = C + i0 * N + j0;
          if (h == kMR && w == kNR) {
            tile(kc, ap, bp, c, N, first);
          } else {  // overhang: run the full tile on a copy, keep the inside
            for (long long r = 0; r < h; ++r)
              for (long long j = 0; j < w; ++j)
                edge[r * kNR + j] = c[r * N + j];
            tile(kc, ap, bp, edge, kNR, first);
            for (long long r = 0; r < h; ++r)
              for (long long j = 0; j < w; ++j)
                c[r * N + j] = edge[r * kNR + j];
          }
        }
      }
    }
  }
}
