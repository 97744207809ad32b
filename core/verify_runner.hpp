// Verification of one case at one point (docs/numeric-contract.md, "What every check reports"):
//   pairs           every declared (variant, reference) pair: bitwise, or its stated bound
//   fp64            every variant's outputs against the bound the case derives from its formats
//   gpu vs cpu emu  on a GPU run, each variant against its CPU emulation: bitwise, or the
//                   variant's stated bound (matrix units)
//   repeat          a deterministic variant, rerun under the other poison, gives the same bytes
// Outputs are poisoned before every run; a NaN never matches; a poison that survives is "mistrusted".
// Where the CPU checks of a whole point would cost more than the check budget, emulation and fp64
// cover a seeded subset of the case's check units (recorded in the result); pairs still compare
// whole outputs.
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
  // CPU operations the emulation and fp64 checks of one point may cost before a subset is taken
  // (on the order of seconds on a few cores); full_check ignores it.
  double check_budget = 4e9;
  bool full_check = false;
};

// The seed of a point's inputs: a hash of the run seed, the case name and the point, so that every
// point gets its own data and `--seed S --where <point>` reproduces it exactly.
std::uint64_t input_seed_for(std::uint64_t run_seed, const std::string& case_name, const Point& point);

// The subset of check units a point's CPU checks cover under `options` (full when affordable).
CheckSubset choose_check_subset(const CaseInstance& instance, std::size_t checked_variants, std::uint64_t input_seed,
                                const VerifyOptions& options);

CaseResult verify_case(const KernelCase& kc, const Point& point, const VerifyOptions& options, Session& session);

// Pieces shared with the bench runner.
CaseResult new_case_result(const KernelCase& kc, const Point& point, Backend backend, std::uint64_t run_seed);
void settle_outcome(CaseResult& r);

}  // namespace fb
