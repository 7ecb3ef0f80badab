// Strict command line (rules and definitions: the cli block at the end).
constexpr int kExitBadCommandLine = 2;
class CommandLine {
 public:
  CommandLine(int argc, char** argv, std::string usage);  // usage: the help text
  bool next();                                     // to the next token; false at the end
  bool is(const char* name) const;                 // is the current token this option?
  long long intValue(long long lo, long long hi);  // its value: an integer in [lo, hi]
  double realValue(double lo, double hi);          // its value: a decimal number in [lo, hi]
  [[noreturn]] void unknownOption() const;
  // "error: " + the printf-style message, the usage, exit 2 (rules across options too).
  [[noreturn]] __attribute__((format(printf, 2, 3))) void fail(const char* fmt, ...) const;
 private:
  const char* takeValue();  // the next token, or nullptr at the end
  int argc_;
  char** argv_;
  std::string usage_;
  int i_ = 0;  // argv_[0] is the program
};
