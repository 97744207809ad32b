#include "core/memory_guard.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace fb {
namespace {

std::int64_t add(std::int64_t a, std::int64_t b) {
  std::int64_t s = 0;
  if (__builtin_add_overflow(a, b, &s)) throw InputError("tensor sizes overflow 64 bits");
  return s;
}

std::int64_t times(std::int64_t a, std::int64_t n) {
  std::int64_t p = 0;
  if (__builtin_mul_overflow(a, n, &p)) throw InputError("tensor sizes overflow 64 bits");
  return p;
}

double gib(std::int64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(1ll << 30); }

}  // namespace

MemoryNeed memory_need(const KernelCase& kc, const CaseInstance& instance, Backend backend) {
  const std::int64_t in = checked_bytes(instance.inputs());
  const std::int64_t out = checked_bytes(instance.outputs());
  std::int64_t workspace = 0;
  for (VariantId v = 0; v < kc.variants.size(); ++v) workspace = std::max(workspace, checked_bytes(instance.workspace(v)));
  const auto variants = static_cast<std::int64_t>(kc.variants.size());
  MemoryNeed need;
  // Host: the inputs, every variant's outputs (first run and rerun), and the emulation's buffers
  // (inputs, outputs, workspace) on a CPU run or a GPU run's emulation check.
  need.host_bytes = add(add(times(in, 2), times(out, add(times(variants, 2), 1))), workspace);
  if (backend == Backend::gpu) need.device_bytes = add(add(in, out), workspace);
  return need;
}

void check_affordable(const std::string& point_text, const MemoryNeed& need, std::optional<std::int64_t> host_available,
                      std::optional<std::int64_t> device_memory) {
  if (host_available && need.host_bytes > *host_available)
    throw InputError(fmt::format("{}: needs about {:.1f} GiB of host memory to verify, {:.1f} GiB available", point_text,
                                 gib(need.host_bytes), gib(*host_available)));
  if (device_memory && need.device_bytes > *device_memory)
    throw InputError(fmt::format("{}: needs about {:.1f} GiB of device memory, the GPU has {:.1f} GiB", point_text,
                                 gib(need.device_bytes), gib(*device_memory)));
}

}  // namespace fb
