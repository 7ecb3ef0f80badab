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
