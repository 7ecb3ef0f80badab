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
