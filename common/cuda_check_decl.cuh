// Every CUDA call goes through CUDA_CHECK, every launch is followed by
// CUDA_CHECK_LAUNCH(): a failure names file, line, call and error, exits 1.
// Exit codes: 0 all gates held, 1 a gate ("GATE: ...") or a CUDA call failed,
// 2 bad command line, 77 no NVIDIA driver or GPU here (CTest: skipped).
#define CUDA_CHECK(call)                                                      \
  do {                                                                        \
    cudaError_t err_ = (call);                                                \
    if (err_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "CUDA error at %s:%d: %s failed: %s\n", __FILE__,  \
                   __LINE__, #call, cudaGetErrorString(err_));                \
      std::exit(EXIT_FAILURE);                                                \
    }                                                                         \
  } while (0)
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
constexpr int kExitNoDevice = 77;
cudaDeviceProp requireCudaDevice();  // device 0's properties, or exit 77 with one line
