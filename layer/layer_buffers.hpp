// The layer step's tensors, allocated once per point on one backend (host vectors for the CPU,
// device memory for the GPU) and named, so checks can fetch any of them and the poison reaches
// every buffer a stage writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/buffers.hpp"

namespace fb {

enum class BufferRole {
  fixed,    // weights and the step's inputs: written once, never poisoned
  written,  // everything a stage writes: poisoned (0xFF bytes, NaN in bf16 and fp32) before each checked run
};

class LayerBuffers {
 public:
  explicit LayerBuffers(Backend backend) : backend_(backend) {}

  // Allocates `bytes` (at least 16) under `name`; InputError if the name is taken.
  void add(const std::string& name, std::size_t bytes, BufferRole role);
  template <class T>
  T* ptr(const std::string& name) {
    return static_cast<T*>(at(name).data());
  }
  std::size_t bytes(const std::string& name) const;
  void upload(const std::string& name, const std::vector<std::uint8_t>& host);
  std::vector<std::uint8_t> download(const std::string& name) const;
  // 0xFF into every `written` buffer (queued on `stream` for the GPU).
  void poison(void* stream);
  std::size_t total_bytes() const { return total_; }
  Backend backend() const { return backend_; }

 private:
  struct Entry {
    std::unique_ptr<BackendBuffer> buffer;
    BufferRole role;
  };
  BackendBuffer& at(const std::string& name);
  const BackendBuffer& at(const std::string& name) const;
  Backend backend_;
  std::map<std::string, Entry> entries_;
  std::size_t total_ = 0;
};

}  // namespace fb
