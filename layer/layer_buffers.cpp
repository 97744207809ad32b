#include "layer/layer_buffers.hpp"

#include <algorithm>
#include <cstring>

#include "core/device.hpp"
#include "core/errors.hpp"

namespace fb {

void LayerBuffers::add(const std::string& name, std::size_t bytes, BufferRole role) {
  if (entries_.count(name)) throw InputError("layer buffer '" + name + "' allocated twice");
  bytes = std::max<std::size_t>(bytes, 16);
  entries_[name] = Entry{std::make_unique<BackendBuffer>(backend_, bytes), role};
  total_ += bytes;
}

BackendBuffer& LayerBuffers::at(const std::string& name) {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw std::logic_error("no layer buffer '" + name + "'");
  return *it->second.buffer;
}

const BackendBuffer& LayerBuffers::at(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw std::logic_error("no layer buffer '" + name + "'");
  return *it->second.buffer;
}

std::size_t LayerBuffers::bytes(const std::string& name) const { return at(name).bytes(); }

void LayerBuffers::upload(const std::string& name, const std::vector<std::uint8_t>& host) {
  BackendBuffer& b = at(name);
  const std::size_t n = std::min(host.size(), b.bytes());
  if (backend_ == Backend::cpu) std::memcpy(b.data(), host.data(), n);
  else gpu::copy_to_device(b.data(), host.data(), n);
}

std::vector<std::uint8_t> LayerBuffers::download(const std::string& name) const {
  const BackendBuffer& b = at(name);
  std::vector<std::uint8_t> host(b.bytes());
  if (backend_ == Backend::cpu) std::memcpy(host.data(), const_cast<BackendBuffer&>(b).data(), host.size());
  else gpu::copy_to_host(host.data(), const_cast<BackendBuffer&>(b).data(), host.size());
  return host;
}

void LayerBuffers::poison(void* stream) {
  for (auto& [name, e] : entries_)
    if (e.role == BufferRole::written) e.buffer->fill(0xFF, stream);
}

}  // namespace fb
