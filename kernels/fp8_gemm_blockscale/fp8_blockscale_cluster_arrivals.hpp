// How a CTA's thread 0 signals the other CTAs of its cluster in the direct form's exchange
// (fp8_blockscale_cluster.hpp, steps 2 and 4). Both forms order the same writes and reads, so the
// bits are the same either way:
//   release  one `mbarrier.arrive.release.cluster` per CTA of the cluster. ptxas puts a GPU-scope
//            fence (MEMBAR.ALL.GPU) before each, so a phase costs S fences in a row (run 76's SASS);
//   relaxed  one `fence.acq_rel.cluster`, then S `mbarrier.arrive.relaxed.cluster`: the fence
//            releases the CTA's writes (or reads) once for all S arrivals (one MEMBAR.ALL.GPU a
//            phase in the SASS). The default since run 77: 1.03-1.36x faster at 10 of the 12 split
//            points it timed, equal at the other two, the same bits (README, "Run 77").
// The knob FUSEBENCH_CLUSTER_ARRIVALS (read per launch, for A/B runs in one build): unset or empty
// takes the default, "release" or "relaxed" that form; any other value is an InputError naming
// the variable. Host code: the launcher and the case call the same function, so a report's
// launch_configs names what ran.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/knob_choice.hpp"

namespace fb {

enum class ClusterArrivals : std::uint8_t { release, relaxed };

inline constexpr const char* kClusterArrivalsVariable = "FUSEBENCH_CLUSTER_ARRIVALS";
inline constexpr ClusterArrivals kClusterArrivalsDefault = ClusterArrivals::relaxed;

inline ClusterArrivals cluster_arrivals(const char* asked) {
  const std::string v = knob_choice(kClusterArrivalsVariable, asked, "release", "relaxed");
  if (v.empty()) return kClusterArrivalsDefault;
  return v == "relaxed" ? ClusterArrivals::relaxed : ClusterArrivals::release;
}
inline ClusterArrivals launch_cluster_arrivals() { return cluster_arrivals(std::getenv(kClusterArrivalsVariable)); }
inline std::string cluster_arrivals_text(ClusterArrivals a) {
  return a == ClusterArrivals::relaxed ? "fenced relaxed arrivals" : "release arrivals";
}

}  // namespace fb
