// Strict command line, shared by the command-line lessons (no CUDA call in it,
// so a bad command line gets exit 2 on a machine without a GPU too).
// - Arguments are read left to right; the last occurrence of an option wins.
// - A valued option takes the next token, whatever it looks like.
// - A number is the whole token: no blanks, no trailing characters ("12x"),
//   base 10 for integers, finite for reals ("nan" and "inf" are refused), and
//   inside the range the program names. Overflow is an error, not a wrap.
// - Every error is one stderr line, "error: " + the option + what it accepts +
//   what it got, then the usage on stderr, and exit 2. -h/--help print the
//   usage on stdout and exit 0.
// Needs <cctype>, <cerrno>, <cmath>, <cstdarg>, <cstdio>, <cstdlib>, <cstring>,
// <string>, <utility>.
//
// Use:
//   CommandLine cl(argc, argv, usageText);
//   while (cl.next()) {
//     if (cl.is("-m")) m = cl.intValue(0, kMaxDim);
//     else if (cl.is("-rtol")) rtol = cl.realValue(0.0, 1.0);
//     else if (cl.is("-csv")) csv = true;  // a flag takes no value
//     else cl.unknownOption();
//   }
//   if (bs % tile != 0) cl.fail("-bs must be a multiple of -tile (%d), got %d", tile, bs);
constexpr int kExitBadCommandLine = 2;

// The whole token as a base-10 integer in [lo, hi]; false if it is not one.
inline bool parseIntToken(const char* text, long long lo, long long hi, long long* out) {
  if (text == nullptr || *text == '\0' || std::isspace(static_cast<unsigned char>(*text)))
    return false;  // strtoll would skip leading blanks
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno == ERANGE || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// The whole token as a finite real number in [lo, hi]; false if it is not one.
inline bool parseRealToken(const char* text, double lo, double hi, double* out) {
  if (text == nullptr || *text == '\0' || std::isspace(static_cast<unsigned char>(*text)))
    return false;
  char* end = nullptr;
  const double v = std::strtod(text, &end);  // an overflow comes back as inf
  if (*end != '\0' || !std::isfinite(v) || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

class CommandLine {
 public:
  // usage: the whole help text, ending in a newline.
  CommandLine(int argc, char** argv, std::string usage)
      : argc_(argc), argv_(argv), usage_(std::move(usage)) {}

  // Steps to the next token; false when none is left. Handles -h/--help.
  bool next() {
    if (++i_ >= argc_) return false;
    if (is("-h") || is("--help")) {
      std::fputs(usage_.c_str(), stdout);
      std::exit(EXIT_SUCCESS);
    }
    return true;
  }
  bool is(const char* name) const { return std::strcmp(argv_[i_], name) == 0; }
  const char* option() const { return argv_[i_]; }

  // The value of the current option, as an integer in [lo, hi].
  long long intValue(long long lo, long long hi) {
    const char* opt = option();
    const char* text = takeValue();
    long long v = 0;
    if (text == nullptr || !parseIntToken(text, lo, hi, &v))
      fail("%s expects an integer in [%lld, %lld], got %s%s%s", opt, lo, hi,
           text ? "\"" : "nothing", text ? text : "", text ? "\"" : "");
    return v;
  }
  // The value of the current option, as a finite real number in [lo, hi].
  double realValue(double lo, double hi) {
    const char* opt = option();
    const char* text = takeValue();
    double v = 0.0;
    if (text == nullptr || !parseRealToken(text, lo, hi, &v))
      fail("%s expects a finite number in [%g, %g], got %s%s%s", opt, lo, hi,
           text ? "\"" : "nothing", text ? text : "", text ? "\"" : "");
    return v;
  }

  [[noreturn]] void unknownOption() const {
    fail("unknown option \"%s\" (the accepted options are listed below)", option());
  }
  // One "error: ..." line (printf-style message), the usage, exit 2. Also for
  // rules that span options and for sizes refused after parsing.
  [[noreturn]] __attribute__((format(printf, 2, 3))) void fail(const char* fmt, ...) const {
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

 private:
  // The next token as the current option's value, or nullptr at the end.
  const char* takeValue() { return (i_ + 1 < argc_) ? argv_[++i_] : nullptr; }

  int argc_;
  char** argv_;
  std::string usage_;
  int i_ = 0;  // argv_[0] is the program
};
