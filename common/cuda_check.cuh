// Every CUDA runtime call goes through CUDA_CHECK; every launch is followed by
// CUDA_CHECK_LAUNCH(). A failure names the file, the line, the call and the
// runtime's message on stderr and ends the program with status 1 (EXIT_FAILURE).
// One statement (do/while(0)); the local has a trailing underscore so it can
// never shadow a name at the call site.
#define CUDA_CHECK(call)                                                      \
  do {                                                                        \
    cudaError_t err_ = (call);                                                \
    if (err_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "CUDA error at %s:%d: %s failed: %s\n", __FILE__,  \
                   __LINE__, #call, cudaGetErrorString(err_));                \
      std::exit(EXIT_FAILURE);                                                \
    }                                                                         \
  } while (0)
// A launch reports a bad configuration only through cudaGetLastError.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

// Exit status 77 means "no usable CUDA device or driver"; CTest maps it to
// "skipped". Status 2 is a bad command line, 1 a failed gate or CUDA call.
constexpr int kExitNoDevice = 77;

// Selects device 0 and returns its properties, or exits 77 with one line when
// there is no driver or no device (a laptop, a CI runner).
inline cudaDeviceProp requireCudaDevice() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::fprintf(stderr, "no usable CUDA device: %s (exit 77 = skipped)\n",
                 err != cudaSuccess ? cudaGetErrorString(err)
                                    : "the driver reports no device");
    std::exit(kExitNoDevice);
  }
  CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  return prop;
}
