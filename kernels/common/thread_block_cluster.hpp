// Thread-block clusters (NVIDIA sm_90 and later): a launch's CTAs in groups of `size` that the
// hardware schedules together, on one GPC, each able to read the others' shared memory and arrive
// on their mbarriers. Here for kernels that reduce across a cluster in shared memory instead of
// through global memory (the block-scale GEMM's split-K direct form).
//   - host: max_active_clusters (how many clusters of a kernel fit on the device at once) and
//     launch_in_clusters;
//   - device (FB_CLUSTERS_AVAILABLE): this CTA's rank, a whole-cluster barrier, a peer's address
//     of a shared-memory location, a 16-byte load from it, and the mbarrier arrive/wait pair with
//     cluster-scope release/acquire (or a release fence and relaxed arrivals).
// Elsewhere (AMD, older NVIDIA) the host calls throw a DeviceError and the device calls are absent:
// a kernel guards them with FB_CLUSTERS_AVAILABLE.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/errors.hpp"
#include "kernels/common/gpu_check.hpp"
#include "kernels/common/hip_compat.hpp"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define FB_CLUSTERS_AVAILABLE 1
#else
#define FB_CLUSTERS_AVAILABLE 0
#endif

namespace fb {

// The largest cluster every sm_90 device schedules (larger needs an opt-in per kernel).
inline constexpr int kPortableClusterSize = 8;

#if FB_CLUSTERS_AVAILABLE
__device__ inline unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}
// Every thread of every CTA of the cluster (warp-aligned): what any of them wrote before is seen by
// all after. Here once, after the mbarriers' initialisation and before the first remote arrival.
__device__ inline void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// The address in the cluster's shared window of `local` (an address in this CTA's shared memory)
// in the CTA of rank `rank`.
__device__ inline std::uint32_t cluster_peer_address(std::uint32_t local, unsigned rank) {
  std::uint32_t peer;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(peer) : "r"(local), "r"(rank));
  return peer;
}
__device__ inline float4 cluster_load_float4(std::uint32_t peer) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(peer)
               : "memory");
  return v;
}
// One arrival on the mbarrier at `peer` (a cluster address), releasing at cluster scope what this
// thread (and, through an earlier CTA barrier, its CTA) wrote or read before. Costly on sm_90:
// ptxas puts a MEMBAR.GPU before each (run 76).
__device__ inline void cluster_mbar_arrive(std::uint32_t peer) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(peer) : "memory");
}
// The cheaper form for several arrivals in a row: one release fence at cluster scope (one
// MEMBAR.GPU, which also waits for this thread's own earlier global stores), then relaxed
// arrivals. Not yet run on a GPU (kernels/fp8_gemm_blockscale/README.md, "Run 76").
__device__ inline void cluster_release_fence() { asm volatile("fence.acq_rel.cluster;\n" ::: "memory"); }
__device__ inline void cluster_mbar_arrive_relaxed(std::uint32_t peer) {
  asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(peer) : "memory");
}
// Waits (acquiring at cluster scope) until the phase of this CTA's mbarrier at `local` with this
// parity has completed.
__device__ inline void cluster_mbar_wait(std::uint32_t local, std::uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(local),
      "r"(parity)
      : "memory");
}
#endif

#if !defined(__HIPCC__)
// A launch configuration of `grid` CTAs in clusters of `size` along x; `attribute` (the caller's,
// alive while the configuration is used) carries the cluster's shape.
inline cudaLaunchConfig_t cluster_launch_config(cudaLaunchAttribute& attribute, unsigned grid, int size, int threads,
                                                int shared_bytes, hipStream_t stream) {
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = static_cast<unsigned>(size);
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = static_cast<std::size_t>(shared_bytes);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  return config;
}
#endif

// How many clusters of `size` CTAs of `kernel` (block threads, dynamic shared bytes) the device
// holds at once: 0 where none fits.
template <class Kernel>
int max_active_clusters(Kernel kernel, int threads, int shared_bytes, int size) {
#if defined(__HIPCC__)
  (void)kernel, (void)threads, (void)shared_bytes, (void)size;
  throw DeviceError("thread-block clusters need NVIDIA sm_90 or later");
#else
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config =
      cluster_launch_config(attribute, static_cast<unsigned>(size), size, threads, shared_bytes, nullptr);
  int clusters = 0;
  gpu_check(cudaOccupancyMaxActiveClusters(&clusters, reinterpret_cast<const void*>(kernel), &config),
            "cudaOccupancyMaxActiveClusters");
  return clusters;
#endif
}

// kernel<<<grid, threads, shared_bytes, stream>>>(args...) in clusters of `size` consecutive CTAs
// along x (grid a multiple of size); `what` names it in the DeviceError of a failed launch.
template <class... Params, class... Args>
void launch_in_clusters(const char* what, void (*kernel)(Params...), unsigned grid, int threads, int shared_bytes,
                        int size, hipStream_t stream, Args&&... args) {
#if defined(__HIPCC__)
  (void)kernel, (void)grid, (void)threads, (void)shared_bytes, (void)size, (void)stream;
  ((void)args, ...);
  throw DeviceError(std::string(what) + ": thread-block clusters need NVIDIA sm_90 or later");
#else
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config = cluster_launch_config(attribute, grid, size, threads, shared_bytes, stream);
  gpu_check(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(std::forward<Args>(args))...), what);
#endif
}

}  // namespace fb
