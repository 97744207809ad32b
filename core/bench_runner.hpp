// Timing of one case at one point, after verifying it on the same path (a case that does not pass
// is not timed). Every variant that runs is timed, interleaved with the others (core/
// interleaved_sampler.hpp), and each pair claim gets a ratio: reference time / variant time.
//
// GPU modes:
//   graph  a variant's call captured R times in one graph (R chosen so a replay lasts tens of
//          microseconds), the captured calls rotating over input sets that together exceed the L2;
//          replayed, divided by R. This is how a serving engine runs decode steps, so decode-size
//          figures mean something: the launch path is not in them.
//   cold   device events around each call; the L2 is flushed before each (a memset of twice its
//          size) and input sets rotate.
//   hot    device events around each call, on the same inputs.
// CPU: a steady clock around the emulation, labelled hot whatever was asked.
#pragma once

#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/kernel_case.hpp"
#include "core/results.hpp"
#include "core/session.hpp"
#include "core/timing_stats.hpp"
#include "core/verify_runner.hpp"

namespace fb {

enum class BenchMode { graph, cold, hot };
const char* bench_mode_name(BenchMode m);
BenchMode bench_mode_from_name(const std::string& name);  // throws InputError

struct BenchOptions {
  std::vector<BenchMode> modes{BenchMode::graph, BenchMode::cold};
  SamplingPolicy sampling;
  VerifyOptions verify;
  double graph_replay_target_us = 50.0;  // R is chosen so one replay lasts about this long
  // Variants to time (by name; empty: every runnable one). Every variant is still verified, and a
  // pair ratio is reported only where both of its sides were timed.
  std::vector<std::string> variants;
};

// The empty-kernel floor in one mode (per call; in graph mode, a replay of R empty kernels / R).
struct LaunchFloor {
  std::string mode;
  int calls_per_sample = 1;
  TimingStats stats;
};

// Measured once per run and recorded with it.
struct BenchEnvironment {
  double copy_gb_per_s = 0.0;        // device-to-device copy, bytes read + written over time
  std::int64_t copy_bytes = 0;       // size of the copy measured
  TimingStats copy_stats;
  std::vector<LaunchFloor> launch_floors;
  gpu::MatrixRate matrix_rate;       // dense bf16 GEMM through the vendor BLAS (or why not)
  std::int64_t l2_flush_bytes = 0;   // memset size used by cold mode
  std::string timer;                 // what clock the samples come from
};

BenchEnvironment measure_environment(Session& session, const BenchOptions& options);

CaseResult bench_case(const KernelCase& kc, const Point& point, const BenchOptions& options, Session& session,
                      const BenchEnvironment& env);

}  // namespace fb
