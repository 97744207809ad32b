// Timing of one case at one point, after verifying it on the same path (a case that does not pass
// is not timed).
//
// GPU: device events around each launch (the chain's launches together). Cold mode flushes the L2
// before every sample (a memset of twice its size, read from the device) and rotates among input
// sets that together exceed it; hot mode reruns on the same inputs. CPU: a steady clock around the
// emulation; there is no cache flush, so CPU timings are labelled hot whatever was asked.
#pragma once

#include <string>
#include <vector>

#include "core/kernel_case.hpp"
#include "core/results.hpp"
#include "core/session.hpp"
#include "core/timing_stats.hpp"
#include "core/verify_runner.hpp"

namespace fb {

enum class BenchMode { cold, hot };
const char* bench_mode_name(BenchMode m);

struct BenchOptions {
  std::vector<BenchMode> modes{BenchMode::cold};
  SamplingPolicy sampling;
  VerifyOptions verify;
};

// Measured once per run and recorded with it.
struct BenchEnvironment {
  double copy_gb_per_s = 0.0;        // device-to-device copy, bytes read + written over time
  std::int64_t copy_bytes = 0;       // size of the copy measured
  TimingStats copy_stats;
  TimingStats launch_floor;          // an empty kernel, hot
  std::int64_t l2_flush_bytes = 0;   // memset size used by cold mode
  std::string timer;                 // what clock the samples come from
};

BenchEnvironment measure_environment(Session& session, const SamplingPolicy& sampling);

CaseResult bench_case(const KernelCase& kc, const Point& point, const BenchOptions& options, Session& session,
                      const BenchEnvironment& env);

}  // namespace fb
