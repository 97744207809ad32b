#include "core/session.hpp"

#include "core/errors.hpp"

namespace fb {

Session::Session(const std::string& request) {
  if (request == "cpu") return;
  if (request != "gpu" && request != "auto") throw InputError("--backend takes cpu, gpu or auto; got '" + request + "'");
  try {
    device_ = gpu::open_device(0);
    stream_ = gpu::create_stream();
    backend_ = Backend::gpu;
  } catch (const DeviceError& e) {
    if (request == "gpu") throw;
    fallback_reason_ = e.what();
    device_.reset();
  }
}

Session::~Session() {
  if (stream_) gpu::destroy_stream(stream_);
}

}  // namespace fb
