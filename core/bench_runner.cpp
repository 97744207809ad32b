#include "core/bench_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>

#include "core/buffers.hpp"
#include "core/errors.hpp"
#include "core/interleaved_sampler.hpp"
#include "core/variant_runner.hpp"

namespace fb {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// One thing to time: `enqueue(n)` puts the n-th call (or graph replay) on the stream, or runs it
// to completion on the CPU; `before(n)` runs outside the timed region (cold mode's flush);
// `divisor` turns a sample into a per-call time (R for a graph of R calls).
struct Arm {
  std::function<void(int)> enqueue;
  std::function<void(int)> before = [](int) {};
  double divisor = 1.0;
};

// Device events for one batch of samples.
class EventPool {
 public:
  explicit EventPool(int pairs) {
    for (int i = 0; i < 2 * pairs; ++i) events_.push_back(gpu::create_event());
  }
  ~EventPool() {
    for (void* e : events_) gpu::destroy_event(e);
  }
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  void* start(int i) { return events_[2 * i]; }
  void* stop(int i) { return events_[2 * i + 1]; }

 private:
  std::vector<void*> events_;
};

// Samples the arms interleaved under the policy: each round visits every arm (order rotated) for a
// batch of samples. Returns one TimingStats per arm and every sample.
std::vector<std::pair<TimingStats, std::vector<double>>> sample_arms(Session& session, const SamplingPolicy& policy,
                                                                      std::vector<Arm>& arms) {
  const bool gpu = session.backend() == Backend::gpu;
  void* stream = session.stream();
  // Warm-up: module load, first touch, clocks; every arm, in turn.
  const auto warm_start = Clock::now();
  for (int i = 0; i < policy.warmup_count || ms_since(warm_start) < policy.warmup_ms; ++i) {
    for (Arm& a : arms) {
      a.before(i);
      a.enqueue(i);
    }
    if (gpu) gpu::synchronize(stream);
  }
  InterleavedSampler sampler(policy, arms.size());
  std::unique_ptr<EventPool> events = gpu ? std::make_unique<EventPool>(policy.batch) : nullptr;
  const auto start = Clock::now();
  std::string reason;
  for (int round = 0;; ++round) {
    for (std::size_t a : sampler.order(round)) {
      Arm& arm = arms[a];
      for (int j = 0; j < policy.batch; ++j) {
        const int n = round * policy.batch + j;
        arm.before(n);
        if (gpu) {
          gpu::record_event(events->start(j), stream);
          arm.enqueue(n);
          gpu::record_event(events->stop(j), stream);
        } else {
          const auto t0 = Clock::now();
          arm.enqueue(n);
          sampler.add(a, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / arm.divisor);
        }
      }
      if (gpu) {
        gpu::synchronize(stream);
        for (int j = 0; j < policy.batch; ++j)
          sampler.add(a, 1000.0 * gpu::elapsed_ms(events->start(j), events->stop(j)) / arm.divisor);
      }
    }
    if (auto why = sampler.stop_reason(ms_since(start))) {
      reason = *why;
      break;
    }
  }
  const double wall = ms_since(start);
  std::vector<std::pair<TimingStats, std::vector<double>>> out;
  for (std::size_t a = 0; a < arms.size(); ++a) {
    TimingStats s = sampler.stats(a, reason);
    s.wall_ms = wall;
    out.emplace_back(s, sampler.samples(a));
  }
  return out;
}

// A captured graph, destroyed with its owner.
class Graph {
 public:
  explicit Graph(void* exec) : exec_(exec) {}
  ~Graph() {
    if (exec_) gpu::destroy_graph(exec_);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  void* get() const { return exec_; }

 private:
  void* exec_;
};

std::unique_ptr<Graph> capture(void* stream, int calls, const std::function<void(int)>& call) {
  gpu::begin_capture(stream);
  try {
    for (int i = 0; i < calls; ++i) call(i);
  } catch (...) {
    try {
      gpu::destroy_graph(gpu::end_capture(stream));
    } catch (...) {
    }
    throw;
  }
  return std::make_unique<Graph>(gpu::end_capture(stream));
}

// Median time of one call, hot, with events: what R (calls per graph) is chosen from.
double single_call_us(Session& session, const std::function<void()>& call) {
  void* stream = session.stream();
  EventPool ev(1);
  std::vector<double> t;
  for (int i = 0; i < 7; ++i) {
    gpu::record_event(ev.start(0), stream);
    call();
    gpu::record_event(ev.stop(0), stream);
    gpu::synchronize(stream);
    if (i >= 2) t.push_back(1000.0 * gpu::elapsed_ms(ev.start(0), ev.stop(0)));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int calls_per_graph(double call_us, double target_us) {
  return static_cast<int>(std::clamp(std::ceil(target_us / std::max(call_us, 0.1)), 1.0, 256.0));
}

}  // namespace

const char* bench_mode_name(BenchMode m) {
  switch (m) {
    case BenchMode::graph: return "graph";
    case BenchMode::cold: return "cold";
    case BenchMode::hot: return "hot";
  }
  return "?";
}

BenchMode bench_mode_from_name(const std::string& name) {
  for (BenchMode m : {BenchMode::graph, BenchMode::cold, BenchMode::hot})
    if (name == bench_mode_name(m)) return m;
  throw InputError("unknown bench mode '" + name + "' (graph, cold, hot)");
}

BenchEnvironment measure_environment(Session& session, const BenchOptions& options) {
  BenchEnvironment env;
  if (session.backend() != Backend::gpu) {
    env.timer = "host steady_clock around the CPU emulation (no cache flush)";
    return env;
  }
  const gpu::DeviceInfo& dev = *session.device();
  void* stream = session.stream();
  env.timer = "device events: around each call (cold, hot) or each graph replay divided by its calls (graph)";
  env.l2_flush_bytes = dev.l2_bytes > 0 ? 2 * dev.l2_bytes : (64ll << 20);
  // Copy bandwidth: a large device-to-device copy, counting bytes read plus bytes written.
  env.copy_bytes = std::min<std::int64_t>(1ll << 30, dev.memory_bytes / 8);
  {
    BackendBuffer src(Backend::gpu, static_cast<std::size_t>(env.copy_bytes));
    BackendBuffer dst(Backend::gpu, static_cast<std::size_t>(env.copy_bytes));
    src.fill(0x3C, stream);
    SamplingPolicy copy_policy = options.sampling;
    copy_policy.min_samples = std::max(copy_policy.min_samples, 20);
    std::vector<Arm> arms{{[&](int) { gpu::copy_device_to_device(dst.data(), src.data(), src.bytes(), stream); }}};
    env.copy_stats = sample_arms(session, copy_policy, arms).front().first;
    env.copy_gb_per_s = 2.0 * static_cast<double>(env.copy_bytes) / (env.copy_stats.median_us * 1e3);
  }
  // The empty-kernel floor in each mode the run uses.
  BackendBuffer flush(Backend::gpu, static_cast<std::size_t>(env.l2_flush_bytes));
  for (BenchMode mode : options.modes) {
    LaunchFloor floor;
    floor.mode = bench_mode_name(mode);
    std::vector<Arm> arms(1);
    std::unique_ptr<Graph> graph;
    if (mode == BenchMode::graph) {
      const double one = single_call_us(session, [&] { gpu::launch_empty_kernel(stream); });
      floor.calls_per_sample = calls_per_graph(one, options.graph_replay_target_us);
      graph = capture(stream, floor.calls_per_sample, [&](int) { gpu::launch_empty_kernel(stream); });
      arms[0].enqueue = [&](int) { gpu::launch_graph(graph->get(), stream); };
      arms[0].divisor = floor.calls_per_sample;
    } else {
      arms[0].enqueue = [&](int) { gpu::launch_empty_kernel(stream); };
      if (mode == BenchMode::cold) arms[0].before = [&](int) { flush.fill(0, stream); };
    }
    floor.stats = sample_arms(session, options.sampling, arms).front().first;
    env.launch_floors.push_back(floor);
  }
  // The dense matrix rate, for cases that count FLOPs.
  env.matrix_rate = gpu::measure_matrix_rate(stream);
  return env;
}

CaseResult bench_case(const KernelCase& kc, const Point& point, const BenchOptions& options, Session& session,
                      const BenchEnvironment& env) {
  // Verify first, on the same path; a case that does not pass is not timed.
  CaseResult r = verify_case(kc, point, options.verify, session);
  if (r.outcome != Outcome::pass) return r;

  const std::unique_ptr<CaseInstance> instance = kc.make(point);
  const bool gpu = session.backend() == Backend::gpu;
  void* stream = session.stream();
  const std::size_t nv = kc.variants.size();
  std::vector<VariantId> timed;
  const auto wanted = [&](const std::string& name) {
    return options.variants.empty() ||
           std::find(options.variants.begin(), options.variants.end(), name) != options.variants.end();
  };
  for (VariantId v = 0; v < nv; ++v)
    if (instance->variant_skip_reason(v, session.backend()).empty() && wanted(kc.variants[v].name)) timed.push_back(v);
  std::int64_t input_bytes = 0;
  for (const TensorSpec& s : instance->inputs()) input_bytes += static_cast<std::int64_t>(s.bytes());

  for (BenchMode mode : options.modes) {
    const bool rotate = gpu && mode != BenchMode::hot;
    // Input sets: enough that the ones not in use exceed the L2 (at most 8, and at most a quarter
    // of the device's memory in all).
    int sets = 1;
    if (rotate) {
      const std::int64_t per_set = std::max<std::int64_t>(input_bytes, 1);
      sets = static_cast<int>(std::clamp<std::int64_t>((env.l2_flush_bytes + per_set - 1) / per_set + 1, 1, 8));
      const std::int64_t room = session.device()->memory_bytes / 4;
      sets = static_cast<int>(std::clamp<std::int64_t>(std::min<std::int64_t>(sets, room / per_set), 1, 8));
    }
    VariantRunner runner(*instance, nv, session.backend(), stream);
    {
      HostTensors inputs = allocate_host(instance->inputs());
      instance->prepare_weights(r.input_seed, inputs);
      instance->generate(r.input_seed, inputs);
      runner.add_input_set(inputs);
    }
    for (int s = 1; s < sets; ++s) {
      HostTensors inputs = allocate_activations(instance->inputs());
      instance->generate(r.input_seed + static_cast<std::uint64_t>(s), inputs);
      runner.add_input_set(inputs);
    }
    runner.poison_outputs(Poison::nan);
    std::unique_ptr<BackendBuffer> flush =
        gpu && mode == BenchMode::cold
            ? std::make_unique<BackendBuffer>(Backend::gpu, static_cast<std::size_t>(env.l2_flush_bytes))
            : nullptr;

    std::vector<Arm> arms(timed.size());
    std::vector<std::unique_ptr<Graph>> graphs(timed.size());
    std::vector<int> calls(timed.size(), 1);
    for (std::size_t a = 0; a < timed.size(); ++a) {
      const VariantId v = timed[a];
      auto call = [&runner, v, sets](int n) { runner.launch(v, static_cast<std::size_t>(n % sets)); };
      if (gpu && mode == BenchMode::graph) {
        calls[a] = calls_per_graph(single_call_us(session, [&] { call(0); }), options.graph_replay_target_us);
        graphs[a] = capture(stream, calls[a], call);
        Graph* g = graphs[a].get();
        arms[a].enqueue = [g, stream](int) { gpu::launch_graph(g->get(), stream); };
        arms[a].divisor = calls[a];
      } else {
        arms[a].enqueue = call;
        if (flush) arms[a].before = [&flush, stream](int) { flush->fill(0, stream); };
      }
    }
    const auto sampled = sample_arms(session, options.sampling, arms);
    for (std::size_t a = 0; a < timed.size(); ++a) {
      const VariantId v = timed[a];
      VariantTiming t;
      t.variant = kc.variants[v].name;
      t.mode = gpu ? bench_mode_name(mode) : "hot";
      t.calls_per_sample = calls[a];
      t.launches = instance->launches(v) > 0 ? instance->launches(v) : kc.variants[v].launches;
      t.stats = sampled[a].first;
      t.samples_us = sampled[a].second;
      t.work = instance->work(v);
      const double us = t.stats.median_us;
      t.gb_per_s = us > 0 ? static_cast<double>(t.work.bytes()) / (us * 1e3) : 0;
      t.copy_fraction = env.copy_gb_per_s > 0 ? t.gb_per_s / env.copy_gb_per_s : 0.0;
      t.tflop_per_s = us > 0 ? t.work.flops / (us * 1e6) : 0;
      t.matrix_fraction = env.matrix_rate.tflop_per_s > 0 ? t.tflop_per_s / env.matrix_rate.tflop_per_s : 0.0;
      r.timings.push_back(std::move(t));
    }
    // Ratios for every pair claim whose both sides were timed in this mode.
    const std::string mode_name = gpu ? bench_mode_name(mode) : "hot";
    auto median_of = [&](const std::string& variant) -> double {
      for (const VariantTiming& t : r.timings)
        if (t.variant == variant && t.mode == mode_name) return t.stats.median_us;
      return 0.0;
    };
    for (const PairClaim& p : kc.pairs) {
      const double a = median_of(p.variant), b = median_of(p.reference);
      if (a > 0 && b > 0) r.ratios.push_back({p.variant, p.reference, mode_name, b / a});
    }
    if (!gpu) break;  // the CPU has no cold or graph mode: one set of timings
  }
  return r;
}

}  // namespace fb
