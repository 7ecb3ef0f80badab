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
