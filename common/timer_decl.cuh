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
