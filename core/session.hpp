// The backend a run uses, chosen once: cpu, gpu, or auto (the GPU when one is usable, else cpu).
#pragma once

#include <optional>
#include <string>

#include "core/device.hpp"
#include "core/kernel_case.hpp"

namespace fb {

class Session {
 public:
  // `request` is "cpu", "gpu" or "auto". gpu without a usable device throws DeviceError.
  explicit Session(const std::string& request);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Backend backend() const { return backend_; }
  void* stream() const { return stream_; }
  const std::optional<gpu::DeviceInfo>& device() const { return device_; }
  // Why auto chose the CPU (empty otherwise).
  const std::string& fallback_reason() const { return fallback_reason_; }

 private:
  Backend backend_ = Backend::cpu;
  void* stream_ = nullptr;
  std::optional<gpu::DeviceInfo> device_;
  std::string fallback_reason_;
};

}  // namespace fb
