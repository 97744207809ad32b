// What `fusebench ablate` found at each workload point: the configurations it timed, each fusion's
// check and share, all-off's share and the modelled step times. Plain data, written by layer/ and
// cli/, read by the report writers (reports/ablation_*.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/results.hpp"

namespace fb {

struct AblationConfigTiming {
  std::string name;               // "all_on" | "F1_off" | ... | "all_off"
  std::vector<std::string> off;   // the fusions this configuration turns off
  int launches = 0;               // kernel launches (or CPU stage calls) one step makes
  TimingStats time;
  std::vector<double> samples_us;  // every sample, in round order
};

struct AblationCheck {
  std::string claim;    // "bitwise" | "bound"
  std::string outcome;  // "pass" | "fail"
  std::string detail;
  double metric = 0;    // largest relative L2 over the bound outputs (0 when every output is bitwise)
  double bound = 0;     // the bound it was held to (0 for bitwise)
};

// A fusion's (or all-off's) share: (off - on) / on from the paired rounds.
struct AblationShare {
  double on_us = 0, off_us = 0;   // medians of the on and off samples
  double share = 0;               // median over rounds of off_r / on_r - 1
  double ci_low = 0, ci_high = 0;
  bool significant = false;       // the interval excludes 0
  bool timed = false;             // false when nothing was timed (a check failed, or --rounds 0)
};

struct AblationFusionResult {
  std::string fusion;   // "F1"
  std::string title;
  bool applies = true;
  std::string reason;   // why it does not apply here
  bool selected = true;  // in --fusions
  std::optional<AblationCheck> check;
  AblationShare share;
};

struct AblationPointResult {
  std::string id;      // "decode M=3"
  std::string phase;   // "decode" | "prefill"
  std::int64_t rows = 0;
  std::int64_t requests = 0;  // decode: rows / tokens per step; prefill: 1
  std::vector<AblationConfigTiming> configs;
  std::vector<AblationFusionResult> fusions;
  std::optional<AblationCheck> all_off_check;
  AblationShare all_off;
  double moe_ms_per_step = 0;         // moe_layers x the all-on step (modelled, MoE layers only)
  std::optional<double> tpot_ms;      // with the scenario's constants, decode only
  std::string error;                  // a device or runtime error at this point (nothing else valid)
  std::string skipped;                // why this backend did not run the point (nothing else valid)
  int checks() const {
    int n = all_off_check ? 1 : 0;
    for (const AblationFusionResult& f : fusions) n += f.check ? 1 : 0;
    return n;
  }
  int checks_failed() const {
    int n = all_off_check && all_off_check->outcome != "pass" ? 1 : 0;
    for (const AblationFusionResult& f : fusions) n += f.check && f.check->outcome != "pass" ? 1 : 0;
    return n;
  }
};

struct AblationMethodology {
  std::uint64_t seed = 1;
  std::string timing;     // "graph replay" | "device events" | "cpu wall clock" (by phase on the GPU)
  int decode_rounds = 0, prefill_rounds = 0;
  double ci_level = 0.95;
  std::string ci_method;
  double min_effect = 0.01;
  std::string shard = "0/1";
  double time_cap_ms = 0;
  int bootstrap_resamples = 0;
  int replays_per_sample = 1;
};

struct AblationModel {
  std::int64_t moe_layers = 0;
  std::int64_t dense_layers = 0;
  bool attention_modelled = false;
  std::string note;
  std::optional<double> attention_per_layer_us, dense_layer_us, lm_head_us;
};

}  // namespace fb
