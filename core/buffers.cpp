#include "core/buffers.hpp"

#include <cstring>

#include "core/device.hpp"

namespace fb {

std::uint8_t poison_byte(DType dtype, Poison pattern) {
  if (pattern == Poison::alternate) return 0x5A;
  // 0xFF is NaN in f32 (0xFFFFFFFF), bf16 (0xFFFF), e4m3fn and e8m0; e4m3fnuz has 0x80 as its only NaN.
  return dtype == DType::fp8_e4m3fnuz ? 0x80 : 0xFF;
}

BackendBuffer::BackendBuffer(Backend backend, std::size_t bytes) : backend_(backend), bytes_(bytes) {
  if (backend_ == Backend::cpu) {
    host_.resize(bytes);
    ptr_ = host_.data();
  } else {
    ptr_ = bytes ? gpu::allocate(bytes) : nullptr;
  }
}

BackendBuffer::~BackendBuffer() {
  if (backend_ == Backend::gpu && ptr_) gpu::release(ptr_);
}

BackendBuffer::BackendBuffer(BackendBuffer&& other) noexcept
    : backend_(other.backend_), bytes_(other.bytes_), ptr_(other.ptr_), host_(std::move(other.host_)) {
  if (backend_ == Backend::cpu) ptr_ = host_.data();
  other.ptr_ = nullptr;
  other.bytes_ = 0;
}

void BackendBuffer::upload(const HostTensor& t) {
  if (bytes_ == 0) return;
  if (backend_ == Backend::cpu)
    std::memcpy(ptr_, t.bytes.data(), bytes_);
  else
    gpu::copy_to_device(ptr_, t.bytes.data(), bytes_);
}

void BackendBuffer::download(HostTensor& t) const {
  if (bytes_ == 0) return;
  if (backend_ == Backend::cpu)
    std::memcpy(t.bytes.data(), ptr_, bytes_);
  else
    gpu::copy_to_host(t.bytes.data(), ptr_, bytes_);
}

void BackendBuffer::copy_from(const BackendBuffer& other, void* stream) {
  if (bytes_ == 0) return;
  if (backend_ == Backend::cpu)
    std::memcpy(ptr_, other.ptr_, bytes_);
  else
    gpu::copy_device_to_device(ptr_, other.ptr_, bytes_, stream);
}

void BackendBuffer::fill(std::uint8_t value, void* stream) {
  if (bytes_ == 0) return;
  if (backend_ == Backend::cpu)
    std::memset(ptr_, value, bytes_);
  else
    gpu::fill_bytes(ptr_, value, bytes_, stream);
}

BufferSet::BufferSet(Backend backend, const std::vector<TensorSpec>& specs) : specs_(specs) {
  buffers_.reserve(specs.size());
  for (const TensorSpec& s : specs) buffers_.emplace_back(backend, s.bytes());
}

TensorPointers BufferSet::pointers() {
  TensorPointers p;
  for (auto& b : buffers_) p.items.push_back(b.data());
  return p;
}

void BufferSet::upload(const HostTensors& tensors) {
  for (std::size_t i = 0; i < buffers_.size(); ++i) buffers_[i].upload(tensors[i]);
}

void BufferSet::download(HostTensors& tensors) const {
  for (std::size_t i = 0; i < buffers_.size(); ++i) buffers_[i].download(tensors[i]);
}

void BufferSet::poison(Poison pattern, void* stream) {
  for (std::size_t i = 0; i < buffers_.size(); ++i) buffers_[i].fill(poison_byte(specs_[i].dtype, pattern), stream);
}

}  // namespace fb
