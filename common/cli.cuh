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
