// The shared-memory roof (definitions and method: the smem_roof block at the end).
struct SmemRoof {
  double measured_gbs;  // bytes shared memory delivered to threads per second, measured here
  double bound_gbs;     // SMs x 32 banks x 4 bytes x clock, from the device's attributes
  char bound[128];      // that product, as printed
};
SmemRoof measureSmemRoof();  // exit 1 on a measurement above its bound
void printSmemRoof(const SmemRoof& s, std::FILE* out);  // a measured line, a [device] line
// The FP32 rate shared memory delivering gbs can feed when each FMA (2 FLOP) loads loadsPerFma
// 4-byte words from it: gbs x 2 / (4 x loadsPerFma); no roof (infinity) for 0 loads.
double smemRoofGflops(double gbs, double loadsPerFma);
// The lowest roof from the attribute bounds at compulsory intensity ai: FP32, ai x DRAM, and
// shared memory for loadsPerFma; {"unknown", 0} when no bound is known.
struct Roof {
  const char* name;  // "FP32", "DRAM" or "shared memory"
  double gflops;
};
Roof bindingRoof(const Ceilings& c, const SmemRoof& s, double ai, double loadsPerFma);
