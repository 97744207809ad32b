// Verification of one case at one point (semantics section 4):
//   fused vs chain      bitwise, or the case's stated bound
//   fused vs fp64       metrics against the bound the case derives from its formats (and chain vs fp64)
//   gpu vs cpu emu      bitwise, for both roles, on a GPU run
//   repeat              a deterministic fused run, rerun under the other poison, gives the same bytes
// Outputs are poisoned before every run; a NaN never matches; a poison that survives is "mistrusted".
#pragma once

#include <cstdint>

#include "core/kernel_case.hpp"
#include "core/results.hpp"
#include "core/session.hpp"

namespace fb {

// Test-only fault injection, to prove that a broken kernel is caught end to end.
enum class FaultInjection { none, flip_fused_element };

struct VerifyOptions {
  std::uint64_t seed = 1;
  FaultInjection fault = FaultInjection::none;
};

// The seed of a point's inputs: a hash of the run seed, the case name and the point, so that every
// point gets its own data and `--seed S --where <point>` reproduces it exactly.
std::uint64_t input_seed_for(std::uint64_t run_seed, const std::string& case_name, const Point& point);

CaseResult verify_case(const KernelCase& kc, const Point& point, const VerifyOptions& options, Session& session);

// Pieces shared with the bench runner.
CaseResult new_case_result(const KernelCase& kc, const Point& point, Backend backend, std::uint64_t run_seed);
void settle_outcome(CaseResult& r);

}  // namespace fb
