// Tensors as the harness sees them: a name, a dtype and named extents, plus host bytes.
//
// Named extents ([M][K], [G][M]) let a mismatch be reported at its coordinates and let a report say
// what each output is without knowing the family.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reference/codecs/dtype.hpp"

namespace fb {

struct Dim {
  std::string name;
  std::int64_t extent = 0;
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::u8;
  std::vector<Dim> dims;
  bool constant_ok = false;  // may legitimately hold one repeated value (a zeroed buffer)
  bool weight = false;       // an input prepared once per point and shared (CaseInstance::prepare_weights)

  // Checked: an extent below zero, or a count or byte size past int64, is an InputError naming the
  // tensor and its shape (a 2^62 x 128 point must be refused, not wrap to a small buffer).
  std::int64_t elements() const;
  std::size_t bytes() const;  // elements x element size, at most INT64_MAX
  std::vector<std::int64_t> extents() const;
  std::string shape_text() const;  // "bf16[M=24][K=6144]"
};

struct HostTensor {
  TensorSpec spec;
  std::vector<std::uint8_t> bytes;

  explicit HostTensor(TensorSpec s) : spec(std::move(s)), bytes(spec.bytes()) {}
  template <class T>
  T* data() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <class T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

using HostTensors = std::vector<HostTensor>;

HostTensors allocate_host(const std::vector<TensorSpec>& specs);

// The bytes of all `specs` together, checked like TensorSpec::bytes(): an InputError, not a wrapped
// sum, when the total passes int64. What a memory guard compares with what the machine has.
std::int64_t checked_bytes(const std::vector<TensorSpec>& specs);

}  // namespace fb
