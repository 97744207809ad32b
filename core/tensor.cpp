#include "core/tensor.hpp"

#include <fmt/format.h>

namespace fb {

std::int64_t TensorSpec::elements() const {
  std::int64_t n = 1;
  for (const Dim& d : dims) n *= d.extent;
  return n;
}

std::vector<std::int64_t> TensorSpec::extents() const {
  std::vector<std::int64_t> e;
  e.reserve(dims.size());
  for (const Dim& d : dims) e.push_back(d.extent);
  return e;
}

std::string TensorSpec::shape_text() const {
  std::string s(dtype_name(dtype));
  for (const Dim& d : dims) s += fmt::format("[{}={}]", d.name, d.extent);
  return s;
}

HostTensors allocate_host(const std::vector<TensorSpec>& specs) {
  HostTensors out;
  out.reserve(specs.size());
  for (const TensorSpec& s : specs) out.emplace_back(s);
  return out;
}

}  // namespace fb
