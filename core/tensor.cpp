#include "core/tensor.hpp"

#include <fmt/format.h>

#include "core/errors.hpp"

namespace fb {

std::int64_t TensorSpec::elements() const {
  std::int64_t n = 1;
  for (const Dim& d : dims) {
    if (d.extent < 0)
      throw InputError(fmt::format("tensor {} {}: extent {} is negative", name, shape_text(), d.name));
    if (__builtin_mul_overflow(n, d.extent, &n))
      throw InputError(fmt::format("tensor {} {}: the element count passes 2^63", name, shape_text()));
  }
  return n;
}

std::size_t TensorSpec::bytes() const {
  std::int64_t b = 0;
  if (__builtin_mul_overflow(elements(), static_cast<std::int64_t>(dtype_size(dtype)), &b))
    throw InputError(fmt::format("tensor {} {}: its size in bytes passes 2^63", name, shape_text()));
  return static_cast<std::size_t>(b);
}

std::int64_t checked_bytes(const std::vector<TensorSpec>& specs) {
  std::int64_t total = 0;
  for (const TensorSpec& s : specs)
    if (__builtin_add_overflow(total, static_cast<std::int64_t>(s.bytes()), &total))
      throw InputError(fmt::format("tensors up to {} {}: their total size in bytes passes 2^63", s.name, s.shape_text()));
  return total;
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
  (void)checked_bytes(specs);  // refuse an overflowing set before allocating any of it
  HostTensors out;
  out.reserve(specs.size());
  for (const TensorSpec& s : specs) out.emplace_back(s);
  return out;
}

}  // namespace fb
