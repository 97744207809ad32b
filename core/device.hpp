// The GPU runtime as the host side of fusebench sees it: plain C++, no HIP or CUDA headers.
//
// Implemented once in kernels/common/device_runtime.hip (compiled by hipcc or nvcc), or by
// core/device_none.cpp in a CPU-only build, where every call explains that no GPU backend was built.
// Every failure throws DeviceError with one line naming the call and the runtime's message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fb::gpu {

struct DeviceInfo {
  std::string api;             // "cuda" | "hip"
  std::string name;
  std::string arch;            // "sm_90" | "gfx942"
  int ordinal = 0;
  int multiprocessors = 0;     // SMs or CUs
  int warp_size = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t l2_bytes = 0;
  int clock_khz = 0;           // peak, as the runtime reports it (0 when not readable)
  int memory_clock_khz = 0;
  int memory_bus_bits = 0;
  int runtime_version = 0;
  int driver_version = 0;
};

// Which runtime this binary was built against: "cuda", "hip" or "none".
const char* compiled_api();

// Opens device `ordinal` and returns its properties. Throws DeviceError if there is no usable device.
DeviceInfo open_device(int ordinal = 0);

void* allocate(std::size_t bytes);
void release(void* p) noexcept;
void copy_to_device(void* dst, const void* src, std::size_t bytes);
void copy_to_host(void* dst, const void* src, std::size_t bytes);
void fill_bytes(void* dst, std::uint8_t value, std::size_t bytes, void* stream);
void copy_device_to_device(void* dst, const void* src, std::size_t bytes, void* stream);

void* create_stream();
void destroy_stream(void* stream) noexcept;
// Waits for the stream, then reports any error a kernel left behind.
void synchronize(void* stream);

void* create_event();
void destroy_event(void* event) noexcept;
void record_event(void* event, void* stream);
float elapsed_ms(void* start, void* stop);  // both recorded and complete

// The cheapest launch there is: the floor under any kernel's latency.
void launch_empty_kernel(void* stream);

// Graphs, as a serving engine replays its decode steps: everything launched on `stream` between
// begin_capture and end_capture is recorded (not run) and becomes one executable graph.
void begin_capture(void* stream);
void* end_capture(void* stream);  // the instantiated graph
void launch_graph(void* graph, void* stream);
void destroy_graph(void* graph) noexcept;

// The device's dense matrix rate: a large bf16 GEMM (m = n = k = `size`, fp32 accumulation) through
// the vendor BLAS, in TFLOP/s (median of `repeats`). Empty `note` on success; otherwise the rate is
// 0 and the note says why (no vendor BLAS in this build).
struct MatrixRate {
  double tflop_per_s = 0.0;
  int size = 0;
  std::string library;
  std::string note;
};
MatrixRate measure_matrix_rate(void* stream, int size = 8192, int repeats = 20);

}  // namespace fb::gpu
