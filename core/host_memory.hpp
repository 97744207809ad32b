// How much host memory a run may still take: what a memory guard compares a point's checked tensor
// bytes (checked_bytes in core/tensor.hpp) with before allocating them.
#pragma once

#include <cstdint>
#include <optional>

namespace fb {

// Bytes the process can allocate without swapping or being killed: the kernel's MemAvailable
// (/proc/meminfo), lowered to what this process's cgroup still allows (cgroup v2 memory.max minus
// memory.current, or v1 memory.limit_in_bytes minus memory.usage_in_bytes) when a limit is set.
// Empty where neither can be read (not Linux, /proc not mounted).
std::optional<std::int64_t> available_host_memory_bytes();

}  // namespace fb
