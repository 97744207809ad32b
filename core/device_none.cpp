// The GPU runtime of a CPU-only build: every entry point explains how to get a GPU build.
#include "core/device.hpp"
#include "core/errors.hpp"

namespace fb::gpu {
namespace {
[[noreturn]] void no_gpu() {
  throw DeviceError(
      "this fusebench was built without a GPU backend (reconfigure with -DFUSEBENCH_GPU=cuda or "
      "-DFUSEBENCH_GPU=hip)");
}
}  // namespace

const char* compiled_api() { return "none"; }
DeviceInfo open_device(int) { no_gpu(); }
void* allocate(std::size_t) { no_gpu(); }
void release(void*) noexcept {}
void copy_to_device(void*, const void*, std::size_t) { no_gpu(); }
void copy_to_host(void*, const void*, std::size_t) { no_gpu(); }
void fill_bytes(void*, std::uint8_t, std::size_t, void*) { no_gpu(); }
void copy_device_to_device(void*, const void*, std::size_t, void*) { no_gpu(); }
void* create_stream() { no_gpu(); }
void destroy_stream(void*) noexcept {}
void synchronize(void*) { no_gpu(); }
void* create_event() { no_gpu(); }
void destroy_event(void*) noexcept {}
void record_event(void*, void*) { no_gpu(); }
float elapsed_ms(void*, void*) { no_gpu(); }
void launch_empty_kernel(void*) { no_gpu(); }
void begin_capture(void*) { no_gpu(); }
void* end_capture(void*) { no_gpu(); }
void launch_graph(void*, void*) { no_gpu(); }
void destroy_graph(void*) noexcept {}
MatrixRate measure_matrix_rate(void*, int, int) { no_gpu(); }

}  // namespace fb::gpu
