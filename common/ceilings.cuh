// Roofline ceilings, measured on this device by this program, with the figures
// the device attributes imply printed beside them for comparison only.
// - Bandwidth: a copy kernel streams one buffer into another. Each buffer is 4
//   times the L2 size the device reports (at least 32 MiB, at most a quarter of
//   the free memory), so L2 cannot hold the data between launches. Bytes =
//   read + written; median of several launches through the common timer.
// - FP32 peak: an FMA-bound kernel. Every thread runs kCeilingFmaChains
//   independent FMA chains (the FMA pipe never waits for a result), and the
//   grid fills every SM to its thread limit. 2 FLOP per FMA.
// - From attributes: DRAM = 2 transfers per clock x memory clock x bus width.
//   An FP32 peak would be SMs x FP32 lanes per SM x 2 x clock, but the lane
//   count is not a device attribute (it needs a per-architecture table, which
//   this course does not keep), so the per-lane figure is printed and the
//   measured peak is expressed in it. CUDA 13 dropped the clock fields from
//   cudaDeviceProp; the attributes are queried instead, and a query that fails
//   or reports 0 prints n/a.
// - The roofline ceiling at arithmetic intensity AI (FLOP per byte) is
//   min(FP32 peak, AI x bandwidth).
// Run time: about 10 ms on an H200 (9 launches of each kernel). Needs the
// cuda_check and timer blocks above it, and <algorithm>, <cstdio>, <vector>.
constexpr int kCeilingThreads = 256;     // per block, both kernels
constexpr int kCeilingCopyUnroll = 4;    // float4 loads in flight per thread
constexpr int kCeilingFmaChains = 8;     // independent FMA chains per thread
constexpr int kCeilingFmaIters = 8192;   // FMAs per chain: ~0.6 ms per launch
constexpr int kCeilingWarmups = 2;
constexpr int kCeilingSamples = 7;       // odd: the median is one launch
constexpr size_t kCeilingMinCopyBytes = size_t(32) << 20;
static_assert(kCeilingFmaIters % 16 == 0,
              "the FMA loop is unrolled by 16: a whole number of unrolled steps "
              "keeps the loop counter out of the issue slots");

struct Ceilings {
  double copy_gbs;     // measured: bytes read + written / median time
  double fp32_gflops;  // measured: 2 x FMAs / median time
  double copy_bytes;   // size of each copy buffer
  double l2_bytes;     // the device's L2 size
  int sms;             // multiprocessors
  int fma_blocks;      // blocks of kCeilingThreads in the FMA launch
};

// launch assumption: any 1-D block; gridDim.x * blockDim.x * kCeilingCopyUnroll
//   >= n (the host launches exactly that many, rounded up).
// memory: reads n float4 and writes n float4, coalesced; each thread issues
//   its kCeilingCopyUnroll loads before its first store.
__global__ void ceilingCopyKernel(const float4* __restrict__ in, float4* __restrict__ out,
                                  long long n) {
  const long long base =
      static_cast<long long>(blockIdx.x) * blockDim.x * kCeilingCopyUnroll + threadIdx.x;
  float4 v[kCeilingCopyUnroll];
#pragma unroll
  for (int u = 0; u < kCeilingCopyUnroll; ++u) {
    const long long i = base + static_cast<long long>(u) * blockDim.x;
    if (i < n) v[u] = in[i];
  }
#pragma unroll
  for (int u = 0; u < kCeilingCopyUnroll; ++u) {
    const long long i = base + static_cast<long long>(u) * blockDim.x;
    if (i < n) out[i] = v[u];
  }
}

// launch assumption: out holds gridDim.x * blockDim.x floats.
// memory: one float written per thread at the end; the rest is registers.
// mul and add are arguments, so the compiler cannot fold the chains away.
__global__ void ceilingFmaKernel(float* out, int iters, float mul, float add) {
  float acc[kCeilingFmaChains];
#pragma unroll
  for (int c = 0; c < kCeilingFmaChains; ++c) acc[c] = static_cast<float>(threadIdx.x + c);
#pragma unroll 16
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kCeilingFmaChains; ++c) acc[c] = fmaf(acc[c], mul, add);
  }
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < kCeilingFmaChains; ++c) sum += acc[c];
  out[static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x] = sum;
}

// Measures both ceilings on the current device; allocates and frees its own
// buffers (call it when about a quarter of the memory is free).
inline Ceilings measureCeilings() {
  int dev = 0, threadsPerSm = 0, l2 = 0;
  Ceilings c{};
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&c.sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&threadsPerSm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  size_t freeBytes = 0, totalBytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));

  // Bandwidth: whole blocks only, so no thread of the copy is idle.
  const size_t perBlock = size_t(kCeilingThreads) * kCeilingCopyUnroll * sizeof(float4);
  size_t bytes = std::max(size_t(4) * static_cast<size_t>(l2), kCeilingMinCopyBytes);
  bytes = std::min(bytes, freeBytes / 4) / perBlock * perBlock;
  if (bytes == 0) {
    std::fprintf(stderr, "ceilings: too little free device memory for the copy buffers\n");
    std::exit(EXIT_FAILURE);
  }
  float4* in = nullptr;
  float4* out = nullptr;
  CUDA_CHECK(cudaMalloc(&in, bytes));
  CUDA_CHECK(cudaMalloc(&out, bytes));
  CUDA_CHECK(cudaMemset(in, 0, bytes));  // the copy reads initialised memory
  const long long n4 = static_cast<long long>(bytes / sizeof(float4));
  const unsigned copyBlocks = static_cast<unsigned>(bytes / perBlock);
  const TimingStats copy = timeKernel(
      [&] { ceilingCopyKernel<<<copyBlocks, kCeilingThreads>>>(in, out, n4); },
      kCeilingWarmups, kCeilingSamples);
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
  c.copy_bytes = static_cast<double>(bytes);
  c.l2_bytes = static_cast<double>(l2);
  c.copy_gbs = 2.0 * c.copy_bytes / (copy.median_ms * 1e-3) / 1e9;

  // FP32 peak: every SM holds as many blocks as its thread limit allows.
  c.fma_blocks = c.sms * std::max(1, threadsPerSm / kCeilingThreads);
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&sink, size_t(c.fma_blocks) * kCeilingThreads * sizeof(float)));
  const TimingStats fma = timeKernel(
      [&] {
        ceilingFmaKernel<<<c.fma_blocks, kCeilingThreads>>>(sink, kCeilingFmaIters, 0.999f,
                                                             0.001f);
      },
      kCeilingWarmups, kCeilingSamples);
  CUDA_CHECK(cudaFree(sink));
  const double flop =
      2.0 * kCeilingFmaChains * kCeilingFmaIters * double(c.fma_blocks) * kCeilingThreads;
  c.fp32_gflops = flop / (fma.median_ms * 1e-3) / 1e9;
  return c;
}

// A device attribute, or 0 when the driver cannot report it (the error is
// cleared, so a later launch check does not pick it up).
inline int ceilingAttributeOrZero(cudaDeviceAttr attr) {
  int dev = 0, v = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  if (cudaDeviceGetAttribute(&v, attr, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return v;
}

// Prints both measured ceilings and the attribute figures to `out` (stdout,
// or stderr where stdout carries CSV).
inline void printCeilings(const Ceilings& c, std::FILE* out) {
  std::fprintf(out, "Ceilings, measured on this device by this program (median of %d launches "
               "each):\n", kCeilingSamples);
  std::fprintf(out, "  bandwidth: %.1f GB/s measured, a kernel copying %.1f MB into a second "
               "buffer", c.copy_gbs, c.copy_bytes / 1e6);
  if (c.l2_bytes > 0.0)
    std::fprintf(out, " (each %.1f times the L2 size)", c.copy_bytes / c.l2_bytes);
  std::fprintf(out, "\n");
  std::fprintf(out, "  FP32 peak: %.1f GFLOP/s measured, %d blocks of %d threads (every SM "
               "full), %d independent FMA chains per thread\n",
               c.fp32_gflops, c.fma_blocks, kCeilingThreads, kCeilingFmaChains);
  const int memKhz = ceilingAttributeOrZero(cudaDevAttrMemoryClockRate);
  const int busBits = ceilingAttributeOrZero(cudaDevAttrGlobalMemoryBusWidth);
  const int clockKhz = ceilingAttributeOrZero(cudaDevAttrClockRate);
  if (memKhz > 0 && busBits > 0) {
    std::fprintf(out, "  from attributes, for comparison: DRAM 2 x %.0f MHz x %d-bit bus = "
                 "%.1f GB/s (assumes 2 transfers per clock)\n",
                 memKhz / 1e3, busBits, 2.0 * memKhz * 1e3 * busBits / 8.0 / 1e9);
  } else {
    std::fprintf(out, "  from attributes, for comparison: DRAM n/a (no memory clock or bus "
                 "width reported)\n");
  }
  if (clockKhz > 0) {
    const double perLane = c.sms * 2.0 * clockKhz * 1e3 / 1e9;
    std::fprintf(out, "  from attributes, for comparison: FP32 %d SMs x 2 FLOP x %.0f MHz = "
                 "%.1f GFLOP/s per FP32 lane of an SM; the lane count is not an attribute "
                 "(the measured peak is %.1fx this)\n",
                 c.sms, clockKhz / 1e3, perLane, c.fp32_gflops / perLane);
  } else {
    std::fprintf(out, "  from attributes, for comparison: FP32 n/a (no clock rate "
                 "reported)\n");
  }
}

// The roofline: at arithmetic intensity ai (FLOP per byte), no kernel beats
// the compute peak, nor ai x the bandwidth. Which of the two binds is decided
// by measured figures, so near the ridge (ai = peak / bandwidth) it can change
// from run to run: print both terms rather than a word that names one.
inline double rooflineGflops(const Ceilings& c, double ai) {
  return std::min(c.fp32_gflops, ai * c.copy_gbs);
}
