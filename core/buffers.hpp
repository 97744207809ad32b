// Tensor storage on either backend, and the poison written into outputs before every run.
//
// Poison: outputs are filled before each run so that an element a kernel forgot to write is caught.
// Pattern `nan` puts a NaN in every element of a dtype that has one (NaN never matches anything);
// pattern `alternate` (0x5A bytes) differs from it everywhere, so a rerun under the other pattern
// exposes unwritten elements in dtypes without NaN (fp4, int32) too.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/kernel_case.hpp"
#include "core/tensor.hpp"

namespace fb {

enum class Poison { nan, alternate };

std::uint8_t poison_byte(DType dtype, Poison pattern);

// One tensor's storage: a host vector (cpu backend) or a device allocation (gpu backend).
class BackendBuffer {
 public:
  BackendBuffer(Backend backend, std::size_t bytes);
  ~BackendBuffer();
  BackendBuffer(const BackendBuffer&) = delete;
  BackendBuffer& operator=(const BackendBuffer&) = delete;
  BackendBuffer(BackendBuffer&& other) noexcept;
  BackendBuffer& operator=(BackendBuffer&&) = delete;

  void* data() { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const HostTensor& t);
  void download(HostTensor& t) const;
  void fill(std::uint8_t value, void* stream);
  // The same number of bytes from another buffer of the same backend.
  void copy_from(const BackendBuffer& other, void* stream);

 private:
  Backend backend_;
  std::size_t bytes_;
  void* ptr_ = nullptr;
  std::vector<std::uint8_t> host_;
};

// A variant's tensors on one backend, allocated from their specs.
class BufferSet {
 public:
  BufferSet(Backend backend, const std::vector<TensorSpec>& specs);
  TensorPointers pointers();
  std::size_t size() const { return buffers_.size(); }
  BackendBuffer& operator[](std::size_t i) { return buffers_[i]; }
  void upload(const HostTensors& tensors);
  void download(HostTensors& tensors) const;
  void poison(Poison pattern, void* stream);

 private:
  std::vector<TensorSpec> specs_;
  std::vector<BackendBuffer> buffers_;
};

}  // namespace fb
