// The device's dense matrix rate, bench's yardstick for GEMMs: a large bf16 GEMM with fp32
// accumulation through the vendor BLAS (cuBLAS on NVIDIA), timed with events. Where this build has
// no vendor BLAS (an AMD build: hipBLASLt is not wired yet; a CUDA build without cuBLAS) the rate is
// 0 and the note says so: bench then reports no "% of matrix rate" rather than a made-up one.
#include <algorithm>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "kernels/common/gpu_check.hpp"

#if FUSEBENCH_HAS_VENDOR_BLAS && !defined(__HIPCC__)
#include <cublas_v2.h>
#endif

namespace fb::gpu {

#if FUSEBENCH_HAS_VENDOR_BLAS && !defined(__HIPCC__)
namespace {

// Values in [-1, 1) with a few mantissa bits: never zeros (a matrix unit runs faster on zeros).
__global__ void fill_bf16_pattern(unsigned short* p, long long n) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const unsigned h = static_cast<unsigned>(i * 2654435761u) >> 20;  // 12 bits
    const unsigned sign = (h & 1u) << 15;
    p[i] = static_cast<unsigned short>(sign | (0x3F00u + (h >> 5)));   // +-[0.5, 1)
  }
}

void blas_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw DeviceError(std::string(what) + ": cuBLAS status " + std::to_string(s));
}

}  // namespace

MatrixRate measure_matrix_rate(void* stream, int size, int repeats) {
  MatrixRate rate;
  rate.size = size;
  rate.library = "cuBLAS (cublasGemmEx, bf16 in, fp32 compute)";
  const long long n = static_cast<long long>(size) * size;
  void* a = allocate(static_cast<std::size_t>(n) * 2);
  void* b = allocate(static_cast<std::size_t>(n) * 2);
  void* c = allocate(static_cast<std::size_t>(n) * 2);
  cublasHandle_t handle{};
  try {
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    fill_bf16_pattern<<<1024, 256, 0, s>>>(static_cast<unsigned short*>(a), n);
    fill_bf16_pattern<<<1024, 256, 0, s>>>(static_cast<unsigned short*>(b), n);
    gpu_check_launch("fill_bf16_pattern");
    blas_check(cublasCreate(&handle), "cublasCreate");
    blas_check(cublasSetStream(handle, s), "cublasSetStream");
    const float alpha = 1.0f, beta = 0.0f;
    auto gemm = [&] {
      blas_check(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, size, size, size, &alpha, a, CUDA_R_16BF, size, b,
                              CUDA_R_16BF, size, &beta, c, CUDA_R_16BF, size, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
    };
    for (int i = 0; i < 3; ++i) gemm();
    void* start = create_event();
    void* stop = create_event();
    std::vector<double> ms;
    for (int i = 0; i < repeats; ++i) {
      record_event(start, stream);
      gemm();
      record_event(stop, stream);
      synchronize(stream);
      ms.push_back(elapsed_ms(start, stop));
    }
    destroy_event(start);
    destroy_event(stop);
    std::sort(ms.begin(), ms.end());
    const double median_ms = ms[ms.size() / 2];
    rate.tflop_per_s = 2.0 * static_cast<double>(n) * size / (median_ms * 1e9);
  } catch (...) {
    if (handle) cublasDestroy(handle);
    release(a), release(b), release(c);
    throw;
  }
  cublasDestroy(handle);
  release(a), release(b), release(c);
  return rate;
}

#else

MatrixRate measure_matrix_rate(void*, int size, int) {
  MatrixRate rate;
  rate.size = size;
  rate.note = "no vendor BLAS in this build (cuBLAS not found, or an AMD build): no dense matrix rate measured";
  return rate;
}

#endif

}  // namespace fb::gpu
