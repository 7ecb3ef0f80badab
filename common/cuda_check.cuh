// Device 0's properties. No NVIDIA driver loaded, or no GPU listed: exit 77 (skipped);
// a loaded driver that CUDA cannot use (too old, broken): exit 1, the GPU needs fixing.
cudaDeviceProp requireCudaDevice() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::FILE* driver = std::fopen("/proc/driver/nvidia/version", "r");  // Linux's driver
    if (driver) std::fclose(driver);
    const bool broken = driver && err != cudaSuccess && err != cudaErrorNoDevice;
    std::fprintf(stderr, broken ? "CUDA cannot use this machine's NVIDIA driver: %s\n"
                                : "no usable CUDA device: %s (exit 77 = skipped)\n",
                 !driver ? "no NVIDIA driver is loaded"
                         : err != cudaSuccess ? cudaGetErrorString(err) : "the driver lists none");
    std::exit(broken ? EXIT_FAILURE : kExitNoDevice);
  }
  CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  return prop;
}
