// Shared-memory roof. Shared memory has 32 banks, each delivering 32 bits per clock
// (CUDA C++ Programming Guide, shared memory of compute capability 5.x and up). Our
// model: one conflict-free warp request per clock per SM, at most 128 bytes per clock,
// counted as delivered to threads (a word a whole warp reads as one broadcast counts
// 32 x 4 bytes, as do the 32 FMAs it feeds).
// Bound: SMs x 32 x 4 bytes x SM clock. Measured: a full device of threads, each
// warp taking 32 consecutive float4 per load (each quarter warp one 128-byte row
// of the banks: no bank conflict) into 4 sums; bytes delivered / median time,
// gated against the bound like the other ceilings. The slot read depends on a
// run-time stride, so the compiler can neither fold a load nor reuse one.
constexpr int kSmemThreads = 256, kSmemUnroll = 8;
constexpr int kSmemSlots = 512;  // float4 slots, 8 KiB per block; a power of 2
// 16 KiB read per thread, about 0.14 ms a launch on an H200: long enough for the events, short
// because the sanitizer runs instrument every one of its shared-memory loads.
constexpr int kSmemSteps = 128;
static_assert((kSmemSlots & (kSmemSlots - 1)) == 0 && kSmemSlots % (32 * kSmemUnroll) == 0,
              "a step's 32-slot windows never wrap around the buffer");

// launch assumption: stride is a multiple of 32 (every window starts on a row of banks).
__global__ void ceilingSmemKernel(float* out, int steps, int stride) {
  __shared__ float4 slots[kSmemSlots];
  for (int i = threadIdx.x; i < kSmemSlots; i += blockDim.x)
    slots[i] = make_float4(float(i), float(i + 1), float(i + 2), float(i + 3));
  __syncthreads();  // every slot written before any is read; none is written after
  const unsigned lane = threadIdx.x % 32;
  float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int s = 0; s < steps; ++s)
#pragma unroll
    for (int u = 0; u < kSmemUnroll; ++u) {
      const float4 v = slots[(unsigned(s) * stride + u * 32 + lane) % kSmemSlots];
      sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
  out[1LL * blockIdx.x * blockDim.x + threadIdx.x] = sum.x + sum.y + sum.z + sum.w;
}

SmemRoof measureSmemRoof() {
  SmemRoof r{};
  const int sms = ceilingAttribute(cudaDevAttrMultiProcessorCount);
  const int mhz = ceilingAttribute(cudaDevAttrClockRate) / 1000;
  const int blocks = sms * std::max(1, ceilingAttribute(cudaDevAttrMaxThreadsPerMultiProcessor) /
                                           kSmemThreads);
  float* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&sink, size_t(blocks) * kSmemThreads * sizeof(float)));
  const TimingStats t = timeKernel([&] {
    ceilingSmemKernel<<<blocks, kSmemThreads>>>(sink, kSmemSteps, 32 * kSmemUnroll);
  }, 2, kCeilingSamples);
  CUDA_CHECK(cudaFree(sink));
  const double bytes = double(blocks) * kSmemThreads * kSmemSteps * kSmemUnroll * sizeof(float4);
  r.measured_gbs = bytes / (t.median_ms * 1e-3) / 1e9;
  r.bound_gbs = double(sms) * 32 * 4 * mhz / 1e3;
  std::snprintf(r.bound, sizeof r.bound, "%d SMs x 32 banks x 4 bytes x %d MHz = %.1f GB/s", sms,
                mhz, r.bound_gbs);
  ceilingGate("shared-memory bandwidth", r.measured_gbs, r.bound_gbs, "GB/s");
  return r;
}

void printSmemRoof(const SmemRoof& s, std::FILE* out) {
  std::fprintf(out, "Shared-memory ceiling measured by this program (median of %d launches): "
               "%.1f GB/s delivered to threads (shared-load kernel)\n", kCeilingSamples,
               s.measured_gbs);
  std::fprintf(out, "[device] shared-memory bound from attributes (a measurement above %.2f x it "
               "fails): %s\n", kCeilingSlack, s.bound);
}

double smemRoofGflops(double gbs, double loadsPerFma) {
  return loadsPerFma > 0.0 ? gbs * 2.0 / (4.0 * loadsPerFma) : HUGE_VAL;
}

Roof bindingRoof(const Ceilings& c, const SmemRoof& s, double ai, double loadsPerFma) {
  Roof low{"unknown", 0.0};
  bool known = false;
  const auto consider = [&](const char* name, double bound, double gflops) {
    if (bound > 0.0 && (!known || gflops < low.gflops)) low = Roof{name, gflops}, known = true;
  };
  consider("FP32", c.fp32_bound_gflops, c.fp32_bound_gflops);
  consider("DRAM", c.dram_bound_gbs, ai * c.dram_bound_gbs);
  if (loadsPerFma > 0.0)
    consider("shared memory", s.bound_gbs, smemRoofGflops(s.bound_gbs, loadsPerFma));
  return low;
}
