#include "layer/ablation_runner.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "core/device.hpp"
#include "core/inputs.hpp"
#include "core/interleaved_sampler.hpp"
#include "core/timing_stats.hpp"
#include "layer/ablation_checks.hpp"
#include "layer/ablation_stats.hpp"
#include "layer/layer_step.hpp"

namespace fb {
namespace {

struct Config {
  std::string name;
  std::vector<Fusion> off;
  FusionSwitches switches;
};

// Owns what a timing run creates on the device, so an error midway releases it.
struct DeviceTimer {
  void* start = nullptr;
  void* stop = nullptr;
  std::vector<void*> graphs;
  DeviceTimer() {
    start = gpu::create_event();
    stop = gpu::create_event();
  }
  ~DeviceTimer() {
    for (void* g : graphs) gpu::destroy_graph(g);
    gpu::destroy_event(start);
    gpu::destroy_event(stop);
  }
};

void* capture_step(LayerStep& step, const FusionSwitches& s, void* stream) {
  gpu::begin_capture(stream);
  try {
    step.run(s);
  } catch (...) {
    try {
      gpu::destroy_graph(gpu::end_capture(stream));
    } catch (...) {
    }
    throw;
  }
  return gpu::end_capture(stream);
}

std::uint64_t text_hash(const std::string& s) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

}  // namespace

const char* timing_label(LayerPhase phase, Backend backend) {
  if (backend == Backend::cpu) return "cpu wall clock";
  return phase == LayerPhase::decode ? "graph replay" : "device events";
}

std::vector<AblationPointSpec> ablation_points(const AblationSection& section) {
  std::vector<AblationPointSpec> points;
  for (std::int64_t rows : section.decode_rows)
    points.push_back({fmt::format("decode M={}", rows), LayerPhase::decode, rows, rows / section.tokens_per_step});
  for (std::int64_t rows : section.prefill_tokens)
    points.push_back({fmt::format("prefill T={}", rows), LayerPhase::prefill, rows, 1});
  return points;
}

AblationPointResult run_ablation_point(const AblationSection& section, const AblationPointSpec& point,
                                       const AblationRunOptions& options, Backend backend, void* stream) {
  AblationPointResult result;
  result.id = point.id;
  result.phase = phase_name(point.phase);
  result.rows = point.rows;
  result.requests = point.requests;
  const std::uint64_t point_seed = mix64(options.seed ^ text_hash(point.id));
  LayerStep step(section.layer, point.phase, point.rows, backend, stream, point_seed);

  // The configurations: all-on, each selected fusion that applies off alone, all of them off.
  std::vector<Config> configs{{"all_on", {}, FusionSwitches::all(true)}};
  Config all_off{"all_off", {}, FusionSwitches::all(true)};
  for (Fusion f : all_fusions()) {
    AblationFusionResult fr;
    fr.fusion = fusion_id(f);
    fr.title = fusion_title(f);
    fr.reason = fusion_not_applicable(f, point.phase, point.rows);
    fr.applies = fr.reason.empty();
    fr.selected = std::find(options.fusions.begin(), options.fusions.end(), f) != options.fusions.end();
    if (fr.applies && fr.selected) {
      Config c{std::string(fusion_id(f)) + "_off", {f}, FusionSwitches::all(true)};
      c.switches.on[static_cast<int>(f)] = false;
      configs.push_back(c);
      all_off.off.push_back(f);
      all_off.switches.on[static_cast<int>(f)] = false;
    }
    result.fusions.push_back(fr);
  }
  const bool has_all_off = all_off.off.size() > 1;  // with one fusion, all-off is that fusion's config
  if (has_all_off) configs.push_back(all_off);

  // Checks, before anything is timed.
  auto checked_run = [&](const Config& c) {
    step.poison();
    step.run(c.switches);
    if (backend == Backend::gpu) gpu::synchronize(stream);
    StepSnapshot snap = take_snapshot(step);
    if (c.name == options.fault_config && !snap["moe_out"].empty()) snap["moe_out"][0] ^= 0x01;  // test-only fault
    return snap;
  };
  const StepSnapshot base = checked_run(configs[0]);
  const double f8_bound = f8_gate_up_bound(section.layer.hidden);
  auto fusion_entry = [&](Fusion f) -> AblationFusionResult& { return result.fusions[static_cast<int>(f)]; };
  for (std::size_t i = 1; i < configs.size(); ++i) {
    const Config& c = configs[i];
    OutputBounds bounds;
    bool f8 = false, f6 = false;
    for (Fusion f : c.off) {
      f8 = f8 || f == Fusion::F8;
      f6 = f6 || f == Fusion::F6;
    }
    if (f8) {
      bounds.gate_up = f8_bound;
      bounds.after_gate_up = kDownstreamSanity;
    }
    if (f6) bounds.fold = kFoldBound + (f8 ? kDownstreamSanity : 0.0);
    AblationCheck check = compare_snapshots(step, base, checked_run(c), bounds);
    if (f8 && check.outcome == "pass")
      check.detail += fmt::format(" (shared_gate_up: {}; downstream of it: a {} sanity limit, not derived)",
                                  f8_bound_reason(section.layer.hidden), kDownstreamSanity);
    if (c.name == "all_off") result.all_off_check = check;
    else fusion_entry(c.off[0]).check = check;
  }
  for (Config& c : configs) {
    AblationConfigTiming t;
    t.name = c.name;
    for (Fusion f : c.off) t.off.push_back(fusion_id(f));
    t.launches = step.launches(c.switches);
    result.configs.push_back(t);
  }
  if (result.checks_failed() > 0) return result;  // nothing is timed after a failed check

  // Timing: interleaved rounds, order rotated each round.
  const int rounds = options.rounds > 0 ? options.rounds
                                        : (point.phase == LayerPhase::decode ? section.decode_rounds : section.prefill_rounds);
  const bool graphs = backend == Backend::gpu && point.phase == LayerPhase::decode;
  const int replays = graphs ? std::max(1, options.replays_per_sample) : 1;
  std::unique_ptr<DeviceTimer> timer;
  if (backend == Backend::gpu) {
    timer = std::make_unique<DeviceTimer>();
    if (graphs)
      for (const Config& c : configs) timer->graphs.push_back(capture_step(step, c.switches, stream));
  }
  auto one_sample = [&](std::size_t i) -> double {
    if (backend == Backend::cpu) {
      const auto t0 = std::chrono::steady_clock::now();
      step.run(configs[i].switches);
      return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    gpu::record_event(timer->start, stream);
    for (int r = 0; r < replays; ++r) {
      if (graphs) gpu::launch_graph(timer->graphs[i], stream);
      else step.run(configs[i].switches);
    }
    gpu::record_event(timer->stop, stream);
    gpu::synchronize(stream);
    return 1000.0 * gpu::elapsed_ms(timer->start, timer->stop) / replays;
  };
  for (int w = 0; w < options.warmup; ++w)
    for (std::size_t i = 0; i < configs.size(); ++i) one_sample(i);
  InterleavedSampler order(SamplingPolicy{}, configs.size());
  std::vector<std::vector<double>> samples(configs.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i : order.order(r)) samples[i].push_back(one_sample(i));
    const double elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (options.progress) {
      const double left_s = elapsed / (r + 1) * (rounds - r - 1) / 1000.0;
      options.progress(fmt::format("{}: round {}/{}, about {:.0f} s left for this point", point.id, r + 1, rounds, left_s));
    }
    if (r + 1 >= 3 && elapsed > options.time_cap_ms) break;
  }
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (std::size_t i = 0; i < configs.size(); ++i) {
    result.configs[i].samples_us = samples[i];
    result.configs[i].time = summarize_samples(samples[i]);
    result.configs[i].time.wall_ms = wall_ms;
    result.configs[i].time.stop_reason =
        static_cast<int>(samples[i].size()) < rounds ? "time cap" : "rounds done";
  }
  auto share_of = [&](const std::string& name) {
    for (std::size_t i = 1; i < configs.size(); ++i)
      if (configs[i].name == name)
        return paired_share(samples[0], samples[i], mix64(point_seed ^ text_hash(name)));
    return AblationShare{};
  };
  for (AblationFusionResult& fr : result.fusions)
    if (fr.applies && fr.selected) fr.share = share_of(fr.fusion + "_off");
  if (has_all_off) result.all_off = share_of("all_off");
  else if (configs.size() == 2) result.all_off = share_of(configs[1].name);

  const double step_us = result.configs[0].time.median_us;
  result.moe_ms_per_step = static_cast<double>(section.moe_layers) * step_us / 1000.0;
  const AblationConstants& k = section.constants;
  if (point.phase == LayerPhase::decode && k.complete())
    result.tpot_ms = (static_cast<double>(section.moe_layers) * (step_us + *k.attention_per_layer_us) +
                      static_cast<double>(section.dense_layers) * (*k.dense_layer_us + *k.attention_per_layer_us) +
                      *k.lm_head_us) /
                     1000.0;
  return result;
}

}  // namespace fb
