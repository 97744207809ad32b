// The GPU runtime behind core/device.hpp, for HIP (AMD) and CUDA (through hip_compat.hpp).
#include <string>

#include "core/device.hpp"
#include "kernels/common/gpu_check.hpp"

namespace fb::gpu {
namespace {

__global__ void empty_kernel() {}

hipStream_t as_stream(void* s) { return static_cast<hipStream_t>(s); }
hipEvent_t as_event(void* e) { return static_cast<hipEvent_t>(e); }

}  // namespace

const char* compiled_api() {
#if defined(__HIPCC__)
  return "hip";
#else
  return "cuda";
#endif
}

DeviceInfo open_device(int ordinal) {
  int count = 0;
  const hipError_t status = hipGetDeviceCount(&count);
  if (status != hipSuccess || count == 0)
    throw DeviceError(std::string("no GPU device usable (") + compiled_api() +
                      " runtime: " + (status != hipSuccess ? hipGetErrorString(status) : "0 devices") + ")");
  if (ordinal >= count)
    throw DeviceError("GPU " + std::to_string(ordinal) + " requested, " + std::to_string(count) + " present");
  gpu_check(hipSetDevice(ordinal), "hipSetDevice");
  hipDeviceProp_t prop{};
  gpu_check(hipGetDeviceProperties(&prop, ordinal), "hipGetDeviceProperties");

  DeviceInfo info;
  info.api = compiled_api();
  info.name = prop.name;
#if defined(__HIPCC__)
  info.arch = prop.gcnArchName;
#else
  info.arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
#endif
  info.ordinal = ordinal;
  info.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  auto attribute = [ordinal](auto attr) {
    int v = 0;
    return hipDeviceGetAttribute(&v, attr, ordinal) == hipSuccess ? v : 0;
  };
  info.multiprocessors = attribute(hipDeviceAttributeMultiprocessorCount);
  info.warp_size = attribute(hipDeviceAttributeWarpSize);
  info.l2_bytes = attribute(hipDeviceAttributeL2CacheSize);
  info.clock_khz = attribute(hipDeviceAttributeClockRate);
  info.memory_clock_khz = attribute(hipDeviceAttributeMemoryClockRate);
  info.memory_bus_bits = attribute(hipDeviceAttributeMemoryBusWidth);
  (void)hipRuntimeGetVersion(&info.runtime_version);
  (void)hipDriverGetVersion(&info.driver_version);
  // A first allocation proves the context works (a driver too old for the runtime fails here).
  void* probe = nullptr;
  gpu_check(hipMalloc(&probe, 256), "hipMalloc (device probe)");
  gpu_check(hipFree(probe), "hipFree (device probe)");
  return info;
}

void* allocate(std::size_t bytes) {
  void* p = nullptr;
  gpu_check(hipMalloc(&p, bytes), ("hipMalloc(" + std::to_string(bytes) + " bytes)").c_str());
  return p;
}

void release(void* p) noexcept { (void)hipFree(p); }

void copy_to_device(void* dst, const void* src, std::size_t bytes) {
  // NOTE: from pageable memory, hipMemcpy/cudaMemcpy may return before the DMA lands on the device;
  // the synchronize makes the data visible to kernels on any stream.
  gpu_check(hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice), "hipMemcpy host->device");
  gpu_check(hipDeviceSynchronize(), "hipDeviceSynchronize after upload");
}

void copy_to_host(void* dst, const void* src, std::size_t bytes) {
  gpu_check(hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost), "hipMemcpy device->host");
}

void fill_bytes(void* dst, std::uint8_t value, std::size_t bytes, void* stream) {
  gpu_check(hipMemsetAsync(dst, value, bytes, as_stream(stream)), "hipMemsetAsync");
}

void copy_device_to_device(void* dst, const void* src, std::size_t bytes, void* stream) {
  gpu_check(hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice, as_stream(stream)), "hipMemcpyAsync d2d");
}

void* create_stream() {
  hipStream_t s{};
  // A blocking stream: ordered after work on the legacy default stream (the uploads).
  gpu_check(hipStreamCreateWithFlags(&s, hipStreamDefault), "hipStreamCreate");
  return s;
}

void destroy_stream(void* stream) noexcept { (void)hipStreamDestroy(as_stream(stream)); }

void synchronize(void* stream) {
  gpu_check(hipStreamSynchronize(as_stream(stream)), "kernel execution (hipStreamSynchronize)");
  gpu_check(hipGetLastError(), "kernel execution");
}

void* create_event() {
  hipEvent_t e{};
  gpu_check(hipEventCreate(&e), "hipEventCreate");
  return e;
}

void destroy_event(void* event) noexcept { (void)hipEventDestroy(as_event(event)); }

void record_event(void* event, void* stream) {
  gpu_check(hipEventRecord(as_event(event), as_stream(stream)), "hipEventRecord");
}

float elapsed_ms(void* start, void* stop) {
  float ms = 0.0f;
  gpu_check(hipEventElapsedTime(&ms, as_event(start), as_event(stop)), "hipEventElapsedTime");
  return ms;
}

void launch_empty_kernel(void* stream) {
  empty_kernel<<<1, 1, 0, as_stream(stream)>>>();
  gpu_check_launch("empty_kernel");
}

void begin_capture(void* stream) {
  // Relaxed: a launcher may query attributes or set a kernel's shared-memory limit while captured.
  gpu_check(hipStreamBeginCapture(as_stream(stream), hipStreamCaptureModeRelaxed), "hipStreamBeginCapture");
}

void* end_capture(void* stream) {
  hipGraph_t graph{};
  gpu_check(hipStreamEndCapture(as_stream(stream), &graph), "hipStreamEndCapture");
  hipGraphExec_t exec{};
  const hipError_t status = hipGraphInstantiateWithFlags(&exec, graph, 0);
  (void)hipGraphDestroy(graph);
  gpu_check(status, "hipGraphInstantiateWithFlags");
  return exec;
}

void launch_graph(void* graph, void* stream) {
  gpu_check(hipGraphLaunch(static_cast<hipGraphExec_t>(graph), as_stream(stream)), "hipGraphLaunch");
}

void destroy_graph(void* graph) noexcept { (void)hipGraphExecDestroy(static_cast<hipGraphExec_t>(graph)); }

}  // namespace fb::gpu
