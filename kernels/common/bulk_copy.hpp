// Bulk copies from global into shared memory that complete on a shared-memory barrier (NVIDIA sm_90+:
// `cp.async.bulk` and `mbarrier`), for persistent row kernels that load the next rows while they
// compute on the current ones.
//
// Why: a producer that loads its rows into registers waits on those loads (the row kernels at
// d = 768 issue only ~80% of the time, mostly stalled on them), and reading ahead into registers
// costs registers it does not have. A bulk copy is one instruction from one thread per block and
// holds no registers until the data is read from shared memory.
//
// Only the data path changes: the values a thread reads are the bytes in global memory, so the
// arithmetic, and every result, is the same as the plain kernel's. AMD builds compile none of this
// (FB_HAS_BULK_COPY is 0) and launch the plain kernels.
#pragma once

#include <cstdint>

#include "kernels/common/gpu_check.hpp"

#if defined(__CUDACC__) && !defined(__HIPCC__)
#define FB_HAS_BULK_COPY 1
#else
#define FB_HAS_BULK_COPY 0
#endif

namespace fb {

#if FB_HAS_BULK_COPY
// Device code for sm_90+ only; the host never launches it on older parts (bulk_copy_supported).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FB_BULK_COPY_DEVICE 1
#else
#define FB_BULK_COPY_DEVICE 0
#endif

__device__ inline std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// One barrier per stage; one arrival (the issuing thread's) plus the bytes of its copy complete a
// phase.
__device__ inline void bulk_barrier_init(std::uint64_t* barrier) {
#if FB_BULK_COPY_DEVICE
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(barrier)) : "memory");
  // Makes the initialised barrier visible to the copy engine (the async proxy).
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global `src` to shared
// `dst`; the barrier's current phase completes when they have landed.
__device__ inline void bulk_copy_to_shared(void* dst, const void* src, std::uint32_t bytes, std::uint64_t* barrier) {
#if FB_BULK_COPY_DEVICE
  const std::uint32_t bar = shared_address(barrier);
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   shared_address(dst)),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
#endif
}

// Waits until the barrier's phase of the given parity (0, 1, 0, ... for its uses in order) completes.
__device__ inline void bulk_barrier_wait(std::uint64_t* barrier, std::uint32_t parity) {
#if FB_BULK_COPY_DEVICE
  const std::uint32_t bar = shared_address(barrier);
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
#endif
}

// Whether the current device runs bulk copies (compute capability 9.0 or later).
inline bool bulk_copy_supported() {
  static const bool supported = [] {
    int device = 0, major = 0;
    return cudaGetDevice(&device) == cudaSuccess &&
           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9;
  }();
  return supported;
}

// How many blocks of a persistent kernel stay resident on the device at once, each with
// `shared_bytes` of dynamic shared memory (allowed past the 48 KB default here). Computed once per
// kernel, so `shared_bytes` must be the same on every call: the query is not free, and decode
// launches take a few us.
template <auto kKernel>
std::int64_t resident_blocks(int block_threads, std::size_t shared_bytes) {
  static const std::int64_t resident = [&] {
    int device = 0, sms = 0, per_sm = 0;
    gpu_check(cudaGetDevice(&device), "cudaGetDevice");
    gpu_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    gpu_check(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(shared_bytes)),
              "cudaFuncSetAttribute (dynamic shared memory)");
    gpu_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, block_threads, shared_bytes),
              "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return static_cast<std::int64_t>(sms) * per_sm;
  }();
  return resident;
}
#endif

}  // namespace fb
