// Real ranks on one host (allreduce_ranks.hpp): devices, peer access, peer-mapped buffers, one
// thread per GPU, timeouts on every wait, and the vendor communicator (NCCL / RCCL where built).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "kernels/common/gpu_check.hpp"  // the runtime first

#include "kernels/allreduce/allreduce_ranks.hpp"

#if FUSEBENCH_HAS_NCCL
#if defined(__HIPCC__)
#include <rccl/rccl.h>
#else
#include <nccl.h>
#endif
#endif

#if !defined(__HIPCC__)
// Runtime names this file needs beyond kernels/common/hip_compat.hpp.
#define hipDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define hipDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define hipErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled
#define hipMemset cudaMemset
#endif

namespace fb {
namespace {

constexpr std::int64_t kBytesPerElement = 2;

struct RankBuffers {
  hipStream_t stream = nullptr;
  std::uint16_t* x = nullptr;
  std::uint16_t* out = nullptr;
  std::uint8_t* wire = nullptr;
  float* wire_scales = nullptr;
  std::uint8_t* gather = nullptr;
  float* gather_scales = nullptr;
  AllreduceSignals* signals = nullptr;
  int blocks = 1;            // the same on every rank, at most one per multiprocessor: all resident at once
  long long clock_khz = 0;
};

// Every rank's thread waits here until all have arrived, or throws after the timeout.
class HostRendezvous {
 public:
  HostRendezvous(int parties, double timeout_s) : parties_(parties), timeout_s_(timeout_s) {}
  void arrive_and_wait(int rank) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (++arrived_ == parties_) {
      cv_.notify_all();
      return;
    }
    if (!cv_.wait_for(lock, std::chrono::duration<double>(timeout_s_), [this] { return arrived_ >= parties_; }))
      throw DeviceError(fmt::format("rank {} waited {:.1f} s for the other ranks at the host barrier", rank, timeout_s_));
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int parties_ = 0, arrived_ = 0;
  double timeout_s_ = 0.0;
};

template <class T>
T* device_alloc(std::int64_t count, const char* what) {
  void* p = nullptr;
  gpu_check(hipMalloc(&p, static_cast<std::size_t>(count) * sizeof(T)), what);
  return static_cast<T*>(p);
}

}  // namespace

int allreduce_device_count() {
  int n = 0;
  if (hipGetDeviceCount(&n) != hipSuccess) return 0;
  return n;
}

struct AllreduceRankGroup::Impl {
  int ranks = 0;
  std::int64_t max_elements = 0;
  AllreduceRankOptions options;
  std::vector<RankBuffers> rank;
  std::string vendor_reason;
#if FUSEBENCH_HAS_NCCL
  std::vector<ncclComm_t> comms;
#endif

  // Runs fn(r) on one thread per rank (each on its device) and waits for all of them, each with
  // the timeout: a rank that throws or does not finish ends the run with a DeviceError naming it.
  template <class Fn>
  void on_every_rank(const char* what, Fn fn) {
    std::vector<std::future<void>> done;
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      std::packaged_task<void()> task([this, r, &fn] {
        gpu_check(hipSetDevice(r), "hipSetDevice");
        fn(r);
      });
      done.push_back(task.get_future());
      threads.emplace_back(std::move(task));
    }
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration<double>(options.timeout_s * 2.0 + 5.0);
    std::string failure;
    for (int r = 0; r < ranks; ++r) {
      if (done[r].wait_until(deadline) != std::future_status::ready) {
        if (failure.empty()) failure = fmt::format("allreduce {}: rank {} did not finish within {:.0f} s", what, r,
                                                   options.timeout_s * 2.0 + 5.0);
        continue;
      }
      try {
        done[r].get();
      } catch (const std::exception& e) {
        if (failure.empty()) failure = fmt::format("allreduce {}: rank {}: {}", what, r, e.what());
      }
    }
    for (int r = 0; r < ranks; ++r) {
      // A thread still blocked in the runtime cannot be joined: it is left behind, and the run ends (exit 3).
      if (done[r].valid() && done[r].wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        threads[r].detach();
      else
        threads[r].join();
    }
    if (!failure.empty()) throw DeviceError(failure);
  }

  AllreduceRankView view(int r) const {
    AllreduceRankView v;
    v.rank = r;
    for (int p = 0; p < ranks; ++p) {
      v.x[p] = rank[p].x;
      v.out[p] = rank[p].out;
      v.wire[p] = rank[p].wire;
      v.wire_scales[p] = rank[p].wire_scales;
      v.gather[p] = rank[p].gather;
      v.gather_scales[p] = rank[p].gather_scales;
    }
    return v;
  }

  void check_call(const AllreduceParams& p, const std::vector<std::uint16_t>* x) const {
    if (p.ranks != ranks) throw InputError(fmt::format("allreduce: a {}-rank call on a {}-rank group", p.ranks, ranks));
    if (p.elements() > max_elements)
      throw InputError(fmt::format("allreduce: {} elements per rank, the group holds {}", p.elements(), max_elements));
    if (x && static_cast<std::int64_t>(x->size()) != ranks * p.elements()) throw InputError("allreduce: inputs are not [R][n]");
    if (p.variant == AllreduceVariant::vendor && !vendor_reason.empty()) throw DeviceError("allreduce vendor: " + vendor_reason);
  }

  // One call on every rank's stream, issued from this thread (graph capture takes every stream at
  // once): our kernels, or the vendor's grouped calls. Not synchronized.
  void issue(const AllreduceParams& p) {
    if (p.variant == AllreduceVariant::vendor) {
#if FUSEBENCH_HAS_NCCL
      // One thread issues every rank's call inside a group, as ncclCommInitAll's communicators expect.
      ncclGroupStart();
      for (int r = 0; r < ranks; ++r)
        ncclAllReduce(rank[r].x, rank[r].out, static_cast<std::size_t>(p.elements()), ncclBfloat16, ncclSum, comms[r],
                      rank[r].stream);
      if (const ncclResult_t e = ncclGroupEnd(); e != ncclSuccess)
        throw DeviceError(std::string("ncclAllReduce: ") + ncclGetErrorString(e));
#endif
      return;
    }
    for (int r = 0; r < ranks; ++r) {
      gpu_check(hipSetDevice(r), "hipSetDevice");
      allreduce_rank_launch(p, view(r), barrier(r), rank[r].blocks, rank[r].stream);
    }
  }

  // After a rank's stream finished: its barrier error word (a timeout), as a DeviceError.
  void check_barrier_word(int r) const {
    std::uint32_t error = 0;
    gpu_check(hipMemcpy(&error, &rank[r].signals->error, sizeof(error), hipMemcpyDeviceToHost), "hipMemcpy error word");
    if (error != 0)
      throw DeviceError(fmt::format("a barrier timed out after {:.1f} s waiting for rank {}", options.timeout_s, error - 1));
  }

  AllreduceBarrierArgs barrier(int r) const {
    AllreduceBarrierArgs b;
    for (int p = 0; p < ranks; ++p) b.signals[p] = rank[p].signals;
    b.timeout_cycles = static_cast<long long>(options.timeout_s * 1000.0 * static_cast<double>(rank[r].clock_khz));
    return b;
  }
};

AllreduceRankGroup::AllreduceRankGroup(int ranks, std::int64_t max_elements, AllreduceRankOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& g = *impl_;
  g.ranks = ranks;
  g.max_elements = max_elements;
  g.options = options;
  if (ranks < 2 || ranks > kAllreduceMaxRanks)
    throw InputError(fmt::format("allreduce: {} ranks (real ranks take 2 to {})", ranks, kAllreduceMaxRanks));
  const int devices = allreduce_device_count();
  if (devices < ranks) throw DeviceError(fmt::format("allreduce: {} ranks need {} devices, {} present", ranks, ranks, devices));
  for (int a = 0; a < ranks; ++a)
    for (int b = 0; b < ranks; ++b) {
      if (a == b) continue;
      int can = 0;
      gpu_check(hipDeviceCanAccessPeer(&can, a, b), "hipDeviceCanAccessPeer");
      if (!can) throw DeviceError(fmt::format("allreduce: device {} cannot access device {}'s memory (peer access)", a, b));
    }
  AllreduceParams widest;  // the largest wire buffer: fp8, one byte per element
  widest.ranks = ranks;
  widest.rows = 1;
  widest.hidden = max_elements;
  widest.variant = AllreduceVariant::two_shot_fp8;
  g.rank.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    RankBuffers& b = g.rank[r];
    gpu_check(hipSetDevice(r), "hipSetDevice");
    for (int p = 0; p < ranks; ++p) {
      if (p == r) continue;
      const hipError_t e = hipDeviceEnablePeerAccess(p, 0);
      if (e != hipSuccess && e != hipErrorPeerAccessAlreadyEnabled) gpu_check(e, "hipDeviceEnablePeerAccess");
      (void)hipGetLastError();  // "already enabled" is sticky on some runtimes
    }
    gpu_check(hipStreamCreateWithFlags(&b.stream, hipStreamDefault), "hipStreamCreateWithFlags");
    b.x = device_alloc<std::uint16_t>(max_elements, "hipMalloc x");
    b.out = device_alloc<std::uint16_t>(max_elements, "hipMalloc out");
    b.wire = device_alloc<std::uint8_t>(widest.wire_bytes(), "hipMalloc wire");
    b.gather = device_alloc<std::uint8_t>(widest.wire_bytes(), "hipMalloc gather");
    b.wire_scales = device_alloc<float>(widest.groups(), "hipMalloc wire scales");
    b.gather_scales = device_alloc<float>(widest.groups(), "hipMalloc gather scales");
    b.signals = device_alloc<AllreduceSignals>(1, "hipMalloc signals");
    gpu_check(hipMemset(b.signals, 0, sizeof(AllreduceSignals)), "hipMemset signals");
    int sms = 0, clock = 0;
    gpu_check(hipDeviceGetAttribute(&sms, hipDeviceAttributeMultiprocessorCount, r), "hipDeviceGetAttribute");
    gpu_check(hipDeviceGetAttribute(&clock, hipDeviceAttributeClockRate, r), "hipDeviceGetAttribute");
    b.blocks = sms < kAllreduceMaxBlocks ? sms : kAllreduceMaxBlocks;
    b.clock_khz = clock > 0 ? clock : 2000000;
  }
  // Every rank must launch the same blocks: block b waits for block b of every peer.
  int blocks = kAllreduceMaxBlocks;
  for (const RankBuffers& b : g.rank) blocks = std::min(blocks, b.blocks);
  for (int r = 0; r < ranks; ++r) {
    g.rank[r].blocks = blocks;
    gpu_check(hipSetDevice(r), "hipSetDevice");
    gpu_check(hipDeviceSynchronize(), "allreduce set-up");
  }
#if FUSEBENCH_HAS_NCCL
  g.comms.resize(static_cast<std::size_t>(ranks));
  std::vector<int> devs(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) devs[r] = r;
  if (const ncclResult_t e = ncclCommInitAll(g.comms.data(), ranks, devs.data()); e != ncclSuccess) {
    g.vendor_reason = std::string("ncclCommInitAll failed: ") + ncclGetErrorString(e);
    g.comms.clear();
  }
#else
  g.vendor_reason = "this build has no NCCL/RCCL (CMake did not find it)";
#endif
}

AllreduceRankGroup::~AllreduceRankGroup() {
  Impl& g = *impl_;
#if FUSEBENCH_HAS_NCCL
  for (ncclComm_t c : g.comms) ncclCommDestroy(c);
#endif
  for (int r = 0; r < static_cast<int>(g.rank.size()); ++r) {
    RankBuffers& b = g.rank[r];
    (void)hipSetDevice(r);
    for (void* p : {static_cast<void*>(b.x), static_cast<void*>(b.out), static_cast<void*>(b.wire),
                    static_cast<void*>(b.gather), static_cast<void*>(b.wire_scales),
                    static_cast<void*>(b.gather_scales), static_cast<void*>(b.signals)})
      if (p) (void)hipFree(p);
    if (b.stream) (void)hipStreamDestroy(b.stream);
  }
}

int AllreduceRankGroup::ranks() const { return impl_->ranks; }
std::string AllreduceRankGroup::vendor_unavailable() const { return impl_->vendor_reason; }

std::vector<std::uint16_t> AllreduceRankGroup::run(const AllreduceParams& p, const std::vector<std::uint16_t>& x) {
  Impl& g = *impl_;
  g.check_call(p, &x);
  const std::int64_t n = p.elements();
  std::vector<std::uint16_t> out(x.size());
  g.on_every_rank("upload", [&](int r) {
    RankBuffers& b = g.rank[r];
    gpu_check(hipMemcpy(b.x, x.data() + r * n, static_cast<std::size_t>(n * kBytesPerElement), hipMemcpyHostToDevice),
              "hipMemcpy x");
    gpu_check(hipMemsetAsync(b.out, 0xFF, static_cast<std::size_t>(n * kBytesPerElement), b.stream), "poison out");
    gpu_check(hipStreamSynchronize(b.stream), "poison out");
  });
  if (p.variant == AllreduceVariant::vendor) {
    g.issue(p);
  } else {
    // Each rank's thread launches its own kernel; the kernels then meet at their barriers.
    g.on_every_rank("launch", [&](int r) {
      if (r != g.options.absent_rank) allreduce_rank_launch(p, g.view(r), g.barrier(r), g.rank[r].blocks, g.rank[r].stream);
    });
  }
  g.on_every_rank("run", [&](int r) {
    RankBuffers& b = g.rank[r];
    gpu_check(hipStreamSynchronize(b.stream), "allreduce kernel");
    g.check_barrier_word(r);
    gpu_check(hipMemcpy(out.data() + r * n, b.out, static_cast<std::size_t>(n * kBytesPerElement), hipMemcpyDeviceToHost),
              "hipMemcpy out");
  });
  return out;
}

double AllreduceRankGroup::time_graph_us(const AllreduceParams& p, int calls, int replays) {
  Impl& g = *impl_;
  g.check_call(p, nullptr);
  if (calls < 1 || replays < 1) throw InputError("allreduce: time_graph_us needs calls >= 1 and replays >= 1");
  std::vector<hipGraphExec_t> exec(static_cast<std::size_t>(g.ranks), nullptr);
  std::vector<hipGraph_t> graph(static_cast<std::size_t>(g.ranks), nullptr);
  auto release = [&] {
    for (int r = 0; r < g.ranks; ++r) {
      (void)hipSetDevice(r);
      if (exec[r]) (void)hipGraphExecDestroy(exec[r]);
      if (graph[r]) (void)hipGraphDestroy(graph[r]);
    }
  };
  try {
    // Capture every rank's stream at once (nothing runs while capturing, so no barrier waits).
    for (int r = 0; r < g.ranks; ++r) {
      gpu_check(hipSetDevice(r), "hipSetDevice");
      gpu_check(hipStreamBeginCapture(g.rank[r].stream, hipStreamCaptureModeRelaxed), "hipStreamBeginCapture");
    }
    for (int c = 0; c < calls; ++c) g.issue(p);
    for (int r = 0; r < g.ranks; ++r) {
      gpu_check(hipSetDevice(r), "hipSetDevice");
      gpu_check(hipStreamEndCapture(g.rank[r].stream, &graph[r]), "hipStreamEndCapture");
      gpu_check(hipGraphInstantiateWithFlags(&exec[r], graph[r], 0), "hipGraphInstantiateWithFlags");
    }
    std::vector<double> us(static_cast<std::size_t>(g.ranks), 0.0);
    for (int round = 0; round < 2; ++round) {  // round 0 warms up
      HostRendezvous together(g.ranks, g.options.timeout_s);
      g.on_every_rank("graph replay", [&](int r) {
        RankBuffers& b = g.rank[r];
        hipEvent_t start = nullptr, stop = nullptr;
        gpu_check(hipEventCreate(&start), "hipEventCreate");
        gpu_check(hipEventCreate(&stop), "hipEventCreate");
        together.arrive_and_wait(r);
        gpu_check(hipEventRecord(start, b.stream), "hipEventRecord");
        for (int i = 0; i < replays; ++i) gpu_check(hipGraphLaunch(exec[r], b.stream), "hipGraphLaunch");
        gpu_check(hipEventRecord(stop, b.stream), "hipEventRecord");
        const hipError_t synced = hipStreamSynchronize(b.stream);
        float ms = 0.0f;
        const hipError_t timed = hipEventElapsedTime(&ms, start, stop);
        (void)hipEventDestroy(start);
        (void)hipEventDestroy(stop);
        gpu_check(synced, "allreduce graph replay");
        gpu_check(timed, "hipEventElapsedTime");
        g.check_barrier_word(r);
        us[r] = 1000.0 * ms / (static_cast<double>(replays) * calls);
      });
    }
    release();
    return *std::max_element(us.begin(), us.end());
  } catch (...) {
    release();
    throw;
  }
}

}  // namespace fb
