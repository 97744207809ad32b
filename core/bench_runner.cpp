#include "core/bench_runner.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>

#include "core/buffers.hpp"
#include "core/device.hpp"
#include "core/role_runner.hpp"

namespace fb {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// A pool of device events, one pair per sample of a batch.
class EventPool {
 public:
  explicit EventPool(int pairs) {
    for (int i = 0; i < 2 * pairs; ++i) events_.push_back(gpu::create_event());
  }
  ~EventPool() {
    for (void* e : events_) gpu::destroy_event(e);
  }
  void* start(int i) { return events_[2 * i]; }
  void* stop(int i) { return events_[2 * i + 1]; }

 private:
  std::vector<void*> events_;
};

// Runs `launch(sample)` under the policy and returns its timing. `before(sample)` runs outside the
// timed region (the cold-mode flush).
TimingStats sample_timing(Session& session, const SamplingPolicy& policy, const std::function<void(int)>& launch,
                          const std::function<void(int)>& before) {
  const bool gpu = session.backend() == Backend::gpu;
  void* stream = session.stream();
  // Warm-up: module load, first-touch, clocks.
  const auto warm_start = Clock::now();
  for (int i = 0; i < policy.warmup_count || ms_since(warm_start) < policy.warmup_ms; ++i) {
    before(i);
    launch(i);
    if (gpu) gpu::synchronize(stream);
  }
  std::unique_ptr<EventPool> events = gpu ? std::make_unique<EventPool>(policy.batch) : nullptr;
  std::vector<double> samples;
  TimingStats stats;
  const auto start = Clock::now();
  for (;;) {
    for (int j = 0; j < policy.batch; ++j) {
      const int n = static_cast<int>(samples.size()) + j;
      before(n);
      if (gpu) {
        gpu::record_event(events->start(j), stream);
        launch(n);
        gpu::record_event(events->stop(j), stream);
      } else {
        const auto t0 = Clock::now();
        launch(n);
        samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      }
    }
    if (gpu) {
      gpu::synchronize(stream);
      for (int j = 0; j < policy.batch; ++j)
        samples.push_back(1000.0 * gpu::elapsed_ms(events->start(j), events->stop(j)));
    }
    stats = summarize_samples(samples);
    const auto n = static_cast<int>(samples.size());
    if (n >= policy.min_samples && stats.rel_iqr <= policy.noise_target) {
      stats.converged = true;
      stats.stop_reason = "noise target";
      break;
    }
    if (n >= policy.max_samples) {
      stats.stop_reason = "sample cap";
      break;
    }
    if (ms_since(start) >= policy.time_cap_ms && n >= std::min(policy.min_samples, policy.max_samples)) {
      stats.stop_reason = "time cap";
      break;
    }
  }
  stats.wall_ms = ms_since(start);
  return stats;
}

}  // namespace

const char* bench_mode_name(BenchMode m) { return m == BenchMode::cold ? "cold" : "hot"; }

BenchEnvironment measure_environment(Session& session, const SamplingPolicy& sampling) {
  BenchEnvironment env;
  if (session.backend() != Backend::gpu) {
    env.timer = "host steady_clock around the CPU emulation (no cache flush)";
    return env;
  }
  const gpu::DeviceInfo& dev = *session.device();
  env.timer = "device events around each launch";
  env.l2_flush_bytes = dev.l2_bytes > 0 ? 2 * dev.l2_bytes : (64ll << 20);
  // Copy bandwidth: a large device-to-device copy, counting bytes read plus bytes written.
  env.copy_bytes = std::min<std::int64_t>(1ll << 30, dev.memory_bytes / 8);
  BackendBuffer src(Backend::gpu, static_cast<std::size_t>(env.copy_bytes));
  BackendBuffer dst(Backend::gpu, static_cast<std::size_t>(env.copy_bytes));
  src.fill(0x3C, session.stream());
  SamplingPolicy copy_policy = sampling;
  copy_policy.min_samples = std::max(copy_policy.min_samples, 20);
  env.copy_stats = sample_timing(
      session, copy_policy,
      [&](int) { gpu::copy_device_to_device(dst.data(), src.data(), src.bytes(), session.stream()); }, [](int) {});
  env.copy_gb_per_s = 2.0 * static_cast<double>(env.copy_bytes) / (env.copy_stats.median_us * 1e3);
  env.launch_floor = sample_timing(
      session, sampling, [&](int) { gpu::launch_empty_kernel(session.stream()); }, [](int) {});
  return env;
}

CaseResult bench_case(const KernelCase& kc, const Point& point, const BenchOptions& options, Session& session,
                      const BenchEnvironment& env) {
  // Verify first, on the same path; a case that does not pass is not timed.
  CaseResult r = verify_case(kc, point, options.verify, session);
  if (r.outcome != Outcome::pass) return r;

  const std::unique_ptr<CaseInstance> instance = kc.make(point);
  const bool gpu = session.backend() == Backend::gpu;
  std::int64_t input_bytes = 0;
  for (const TensorSpec& s : instance->inputs()) input_bytes += static_cast<std::int64_t>(s.bytes());

  for (BenchMode mode : options.modes) {
    const bool cold = gpu && mode == BenchMode::cold;
    // Input rotation: enough sets that the ones not in use exceed the L2 (at most 8).
    const int sets = cold ? static_cast<int>(std::clamp<std::int64_t>(
                                 (env.l2_flush_bytes + input_bytes - 1) / std::max<std::int64_t>(input_bytes, 1) + 1, 1, 8))
                          : 1;
    RoleRunner runner(*instance, session.backend(), session.stream());
    for (int s = 0; s < sets; ++s) {
      HostTensors inputs = allocate_host(instance->inputs());
      instance->generate(r.input_seed + static_cast<std::uint64_t>(s), inputs);
      runner.add_input_set(inputs);
    }
    std::unique_ptr<BackendBuffer> flush =
        cold ? std::make_unique<BackendBuffer>(Backend::gpu, static_cast<std::size_t>(env.l2_flush_bytes)) : nullptr;
    for (Role role : {Role::fused, Role::chain}) {
      runner.poison_outputs(Poison::nan);
      RoleTiming t;
      t.role = role_name(role);
      t.mode = gpu ? bench_mode_name(mode) : "hot";
      t.stats = sample_timing(
          session, options.sampling, [&](int n) { runner.launch(role, static_cast<std::size_t>(n % sets)); },
          [&](int) {
            if (flush) flush->fill(static_cast<std::uint8_t>(0), session.stream());
          });
      t.traffic = instance->traffic(role);
      t.gb_per_s = t.stats.median_us > 0 ? static_cast<double>(t.traffic.total()) / (t.stats.median_us * 1e3) : 0;
      t.copy_fraction = env.copy_gb_per_s > 0 ? t.gb_per_s / env.copy_gb_per_s : 0.0;
      r.timings.push_back(t);
    }
    if (!gpu) break;  // the CPU has no cold mode: one set of timings
  }
  const RoleTiming* fused = nullptr;
  const RoleTiming* chain = nullptr;
  for (const RoleTiming& t : r.timings) {
    if (!fused && t.role == "fused") fused = &t;
    if (!chain && t.role == "chain") chain = &t;
  }
  if (fused && chain && fused->stats.median_us > 0) r.speedup_vs_chain = chain->stats.median_us / fused->stats.median_us;
  return r;
}

}  // namespace fb
