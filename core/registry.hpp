// The registry of kernel cases. Each family adds its cases from one register_<family>() call,
// listed once in kernels/registry.cpp; nothing registers itself statically.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/kernel_case.hpp"

namespace fb {

class Registry {
 public:
  void add(KernelCase c);  // throws std::logic_error on a duplicate name
  const std::vector<KernelCase>& cases() const { return cases_; }
  const KernelCase* find(std::string_view name) const;
  // Cases whose name matches the glob ('*' and '?'); a family name alone matches its cases.
  std::vector<const KernelCase*> match(std::string_view glob) const;

 private:
  std::vector<KernelCase> cases_;
};

bool glob_match(std::string_view pattern, std::string_view text);

// Defined in kernels/registry.cpp: every family of this build.
void register_all_families(Registry& registry);

}  // namespace fb
