#include "core/kernel_case.hpp"

#include <fmt/format.h>

namespace fb {

const char* role_name(Role r) { return r == Role::fused ? "fused" : "chain"; }
const char* backend_name(Backend b) { return b == Backend::cpu ? "cpu" : "gpu"; }

std::string Claim::text() const {
  if (kind == Kind::bitwise) return "bitwise";
  return fmt::format("{} <= {:g}", bound.metric, bound.limit);
}

const AxisSpec* KernelCase::axis(const std::string& name) const {
  for (const AxisSpec& a : axes)
    if (a.name == name) return &a;
  return nullptr;
}

}  // namespace fb
