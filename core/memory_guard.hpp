// The memory guard: before a run allocates anything, every selected point's tensors (sizes in
// checked arithmetic) are estimated against what the machine has, so an unaffordable point is a
// clear one-line InputError (exit 2) naming the point, its size and the limit, instead of a
// std::bad_alloc, an out-of-memory kill or a device allocation failure hours into a run.
#pragma once

#include <cstdint>
#include <optional>

#include "core/kernel_case.hpp"

namespace fb {

struct MemoryNeed {
  std::int64_t host_bytes = 0;    // verify's host copies: inputs, each variant's outputs twice, emulation
  std::int64_t device_bytes = 0;  // inputs, outputs and the largest workspace (GPU backend)
};

// What verifying one point needs on `backend` (throws InputError where a size overflows).
MemoryNeed memory_need(const KernelCase& kc, const CaseInstance& instance, Backend backend);

// Throws InputError when `need` exceeds the host's available memory or `device_memory` (when set).
void check_affordable(const std::string& point_text, const MemoryNeed& need, std::optional<std::int64_t> host_available,
                      std::optional<std::int64_t> device_memory);

}  // namespace fb
