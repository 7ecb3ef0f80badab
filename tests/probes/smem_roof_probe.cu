// SPDX-License-Identifier: MIT
// The common blocks' shared-memory kernel (common/smem_roof.cuh: ceilingSmemKernel) at a size
// compute-sanitizer's racecheck can afford. report_data and project_template measure their
// shared-memory roof with it: on an H200 about 1056 blocks x 256 threads x 1024 loads a launch,
// nine launches, each load tracked by racecheck, minutes a program. So the racecheck runs of verify
// (programs, attempts, mutants) and of exercise check leave this kernel out where it is the lesson's
// own copy (--kernel-name-exclude), and verify racechecks it here instead: the same kernel, the same block size and
// stride, a grid and a step count small enough to take seconds. Exit 0 after one launch whose
// every output is the sum the slots' values predict; 1 otherwise; 77 without a device.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "../../common/cuda_check_decl.cuh"
#include "../../common/timer_decl.cuh"
#include "../../common/ceilings_decl.cuh"
#include "../../common/smem_roof_decl.cuh"
#include "../../common/cuda_check.cuh"
#include "../../common/timer.cuh"
#include "../../common/ceilings.cuh"
#include "../../common/smem_roof.cuh"

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no usable CUDA device\n");
    return 77;
  }
  constexpr int kBlocks = 2, kSteps = 2, kStride = 32 * kSmemUnroll;
  const int n = kBlocks * kSmemThreads;
  float* out = nullptr;
  CUDA_CHECK(cudaMalloc(&out, n * sizeof(float)));
  ceilingSmemKernel<<<kBlocks, kSmemThreads>>>(out, kSteps, kStride);
  CUDA_CHECK(cudaGetLastError());
  std::vector<float> got(n);
  CUDA_CHECK(cudaMemcpy(got.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(out));
  for (int t = 0; t < n; ++t) {  // slot i holds (i, i+1, i+2, i+3): its four lanes sum to 4i + 6
    const int lane = (t % kSmemThreads) % 32;
    double want = 0.0;
    for (int s = 0; s < kSteps; ++s)
      for (int u = 0; u < kSmemUnroll; ++u) want += 4.0 * ((s * kStride + u * 32 + lane) % kSmemSlots) + 6.0;
    if (std::fabs(got[t] - want) > 1e-3 * want) {
      std::fprintf(stderr, "GATE: thread %d summed %.1f, want %.1f\n", t, got[t], want);
      return 1;
    }
  }
  std::printf("ceilingSmemKernel: %d blocks x %d threads x %d steps, every sum as the slots predict\n",
              kBlocks, kSmemThreads, kSteps);
  return 0;
}
