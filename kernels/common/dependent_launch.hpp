// Programmatic dependent launch (NVIDIA sm_90 and later): a kernel launched "after" the stream's
// previous kernel may have its blocks resident and waiting while that kernel still runs, so the
// launch latency between two short kernels overlaps the first one's tail. Each side says what it
// needs:
//   - the earlier kernel calls allow_dependent_launch() (its blocks let the next grid start);
//   - the later kernel calls grid_dependency_wait() before it reads anything the earlier one writes
//     (it returns once the earlier grid has completed and its writes are visible);
//   - the host launches the later kernel with launch_after_previous().
// Elsewhere (AMD, older NVIDIA, the CPU) all three are the ordinary stream order: a plain launch,
// and the device calls compile to nothing. A kernel that calls grid_dependency_wait() but was
// launched plainly passes it at once (there is nothing to wait for), so the device side is safe
// under either launch.
#pragma once

#include <utility>

#include "kernels/common/gpu_check.hpp"
#include "kernels/common/hip_compat.hpp"

namespace fb {

__device__ inline void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ inline void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Launches kernel<<<grid, block, 0, stream>>>(args...) so that it may start before the stream's
// previous kernel ends (see above); `what` names it in the DeviceError of a failed launch.
template <class... Params, class... Args>
void launch_after_previous(const char* what, void (*kernel)(Params...), dim3 grid, dim3 block, hipStream_t stream,
                           Args&&... args) {
#if defined(__HIPCC__)
  kernel<<<grid, block, 0, stream>>>(std::forward<Args>(args)...);
  gpu_check_launch(what);
#else
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = attribute;
  config.numAttrs = 1;
  gpu_check(cudaLaunchKernelEx(&config, kernel, static_cast<Params>(std::forward<Args>(args))...), what);
#endif
}

}  // namespace fb
