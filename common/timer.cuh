// Kernel timer. Method, and why:
// - Warm-ups launch the kernel being timed (not some other kernel): lazy module
//   loading charges each kernel on its own first launch, and the clocks ramp up.
// - Each sample is one launch bracketed by two CUDA events on the default
//   stream. The launches are queued back to back with no host wait between
//   them, so the events read the GPU's own clock and host launch latency is
//   hidden behind the previous launch (except for the first sample).
// - The median of the samples is reported because it ignores the odd sample
//   hit by a clock change or a preemption; min and max give the spread, and a
//   difference between two kernels smaller than that spread is noise.
// - The inputs stay in L2 when they fit: the figures are warm-cache figures.
struct TimingStats {
  double median_ms;  // middle sample (mean of the two middle ones if even)
  double min_ms;
  double max_ms;
  double mean_ms;    // pulled up by slow outliers; the median is the headline
  int samples;
};

inline double medianOfSorted(const std::vector<double>& v) {
  const size_t n = v.size();
  return (n % 2 == 1) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <typename Launch>
TimingStats timeKernel(Launch launch, int warmups, int samples) {
  if (samples < 1) {  // callers validate; this only keeps the median defined
    std::fprintf(stderr, "timeKernel: samples must be at least 1\n");
    std::exit(EXIT_FAILURE);
  }
  for (int i = 0; i < warmups; ++i) {
    launch();
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<cudaEvent_t> marks(static_cast<size_t>(samples) + 1);
  for (cudaEvent_t& e : marks) CUDA_CHECK(cudaEventCreate(&e));
  CUDA_CHECK(cudaEventRecord(marks[0]));
  for (int i = 0; i < samples; ++i) {
    launch();
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(marks[static_cast<size_t>(i) + 1]));
  }
  CUDA_CHECK(cudaEventSynchronize(marks[static_cast<size_t>(samples)]));
  std::vector<double> ms(static_cast<size_t>(samples));
  for (int i = 0; i < samples; ++i) {
    float t = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&t, marks[static_cast<size_t>(i)],
                                    marks[static_cast<size_t>(i) + 1]));
    ms[static_cast<size_t>(i)] = t;
  }
  for (cudaEvent_t& e : marks) CUDA_CHECK(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  double total = 0.0;
  for (double t : ms) total += t;
  return TimingStats{medianOfSorted(ms), ms.front(), ms.back(), total / samples, samples};
}
