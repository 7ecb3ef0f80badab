// Roofline ceilings (definitions and method: the ceilings block at the end).
constexpr int kCeilingSamples = 7;  // timed launches per ceiling; odd: the median is one launch
struct Ceilings {
  double copy_gbs, fp32_gflops;  // measured on this device by this program
  double copy_bytes, l2_bytes;   // size of each copy buffer; the device's L2
  double dram_bound_gbs, fp32_bound_gflops;  // from the device's attributes; 0 = unknown
  char bounds[256];              // the bounds from the device's attributes, as printed
};
Ceilings measureCeilings();  // exit 1 on a measurement above its bound; 2 buffers, each <= 1/4 of free memory
void printCeilings(const Ceilings& c, std::FILE* out);  // a measured line, a [device] line
double rooflineGflops(const Ceilings& c, double ai);    // min(FP32 peak, ai x bandwidth)
