// One ablation point end to end: the layer step allocated once, every configuration checked
// against all-on (exit 1 and nothing timed when one fails), then every configuration timed in
// interleaved rounds as a serving engine runs it (decode: each configuration's step captured once
// in a graph and replayed; prefill: device events around the step; CPU: wall clock), and the
// shares with their paired-bootstrap intervals.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/ablation_result.hpp"
#include "core/ablation_section.hpp"
#include "core/kernel_case.hpp"
#include "layer/fusion_switches.hpp"

namespace fb {

struct AblationPointSpec {
  std::string id;  // "decode M=24", "prefill T=32768"
  LayerPhase phase = LayerPhase::decode;
  std::int64_t rows = 0;
  std::int64_t requests = 1;
};

// Every point of the section: decode rows in order, then the prefills.
std::vector<AblationPointSpec> ablation_points(const AblationSection& section);

struct AblationRunOptions {
  std::vector<Fusion> fusions = all_fusions();  // the switches to toggle (--fusions)
  int rounds = 0;                  // 0: the section's rounds for the phase
  double time_cap_ms = 120000;     // per point: rounds stop early past it (at least 3 rounds)
  std::uint64_t seed = 1;
  int warmup = 3;                  // untimed runs of each configuration before the rounds
  int replays_per_sample = 2;      // decode graph replays per timed sample
  std::string fault_config;        // testing only: corrupt this configuration's moe_out before its check
  std::function<void(const std::string&)> progress;  // one line per round, when set
};

AblationPointResult run_ablation_point(const AblationSection& section, const AblationPointSpec& point,
                                       const AblationRunOptions& options, Backend backend, void* stream);

// The timing label of a phase on a backend: "graph replay", "device events" or "cpu wall clock".
const char* timing_label(LayerPhase phase, Backend backend);

}  // namespace fb
