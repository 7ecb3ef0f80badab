// Device 0's properties, or exit 77 with one line (no driver or no device).
cudaDeviceProp requireCudaDevice() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::fprintf(stderr, "no usable CUDA device: %s (exit 77 = skipped)\n",
                 err != cudaSuccess ? cudaGetErrorString(err) : "the driver reports no device");
    std::exit(kExitNoDevice);
  }
  CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  return prop;
}
