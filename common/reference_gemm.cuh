// Reference GEMM: C[i*N+j] = the sum over ascending k, from 0.0 in one double, of
// double(A[i*K+k]) * double(B[k*N+j]), on the GPU. It is
// independent of the kernels it judges: another precision (a float x float product
// is exact in double, so each add rounds once), no tiling, no shared memory, no split
// of k; and rows 0, M/2 and M-1, recomputed by a CPU loop, must match bit for bit.
__global__ void referenceGemmKernel(const float* A, const float* B, double* C, int M, int N,
                                    int K) {
  const long long count = static_cast<long long>(M) * N, step = 1LL * gridDim.x * blockDim.x;
  for (long long e = 1LL * blockIdx.x * blockDim.x + threadIdx.x; e < count; e += step) {
    const long long i = e / N, j = e % N;
    double acc = 0.0;
    for (long long k = 0; k < K; ++k) acc = fma(double(A[i * K + k]), double(B[k * N + j]), acc);
    C[e] = acc;
  }
}

void referenceRowCpu(const float* A, const float* B, double* row, int i, int N, int K) {
  for (int j = 0; j < N; ++j) row[j] = 0.0;
  for (long long k = 0; k < K; ++k)  // k outer reads B along rows; each sum still ascends in k
    for (long long j = 0; j < N; ++j) row[j] += double(A[1LL * i * K + k]) * double(B[k * N + j]);
}

void referenceGemm(const float* A, const float* B, double* C, int M, int N, int K) {
  const long long count = 1LL * M * N, a = 1LL * M * K, b = 1LL * K * N;
  if (count == 0) return;
  float *dA = nullptr, *dB = nullptr;  // device copies; dC: the result in double
  double* dC = nullptr;
  CUDA_CHECK(cudaMalloc(&dA, std::max(a, 1LL) * sizeof(float)));  // K = 0: 1 unread element
  CUDA_CHECK(cudaMalloc(&dB, std::max(b, 1LL) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dC, count * sizeof(double)));
  if (K > 0) CUDA_CHECK(cudaMemcpy(dA, A, a * sizeof(float), cudaMemcpyHostToDevice));
  if (K > 0) CUDA_CHECK(cudaMemcpy(dB, B, b * sizeof(float), cudaMemcpyHostToDevice));
  referenceGemmKernel<<<static_cast<int>(std::min((count + 255) / 256, 1LL << 16)), 256>>>(
      dA, dB, dC, M, N, K);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpy(C, dC, count * sizeof(double), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(dA));
  CUDA_CHECK(cudaFree(dB));
  CUDA_CHECK(cudaFree(dC));
  std::vector<double> row(static_cast<size_t>(N));
  for (int i : {0, M / 2, M - 1}) {
    referenceRowCpu(A, B, row.data(), i, N, K);
    if (std::memcmp(row.data(), C + 1LL * i * N, N * sizeof(double)) != 0) {
      std::fprintf(stderr, "GATE: the GPU reference GEMM and its CPU loop differ in row %d\n", i);
      std::exit(EXIT_FAILURE);
    }
  }
}
