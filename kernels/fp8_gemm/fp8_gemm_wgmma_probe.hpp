// Whether this device runs the build's wgmma (sm_90a) kernels: asked once per process by a probe
// kernel compiled like them, so a build for plain sm_90 (empty wgmma bodies) or an AMD device says
// so instead of running an empty kernel.
#pragma once

#include <string>

namespace fb {

// Empty when the wgmma kernels run here; else why not (one line).
std::string wgmma_device_unavailable();

}  // namespace fb
