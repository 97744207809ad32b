// How the fused router (router/gate's `fused` variant) is launched, and how a report names the
// forms of both router/gate variants (CaseInstance::launch_config). Host-only: the launcher
// (router_kernels.hip), the case (router_gate_case.cpp) and the tests call the same functions, so a
// report names what ran. The bits never depend on the form: every form sums the partials in slice
// order and runs the same gate arithmetic (router_math.hpp).
//
// Up to kRouterReduceLaunchRows rows the fused router has two forms:
//   one launch       the GEMV's last block (the waiting-free ticket, router_last_block) sums every
//                    row's partials and gates every row: no second launch, but a serial tail on one
//                    block that grows with the rows (run 54's timeline probe: 2.1 us at M = 1,
//                    9.7 us at M = 16);
//   GEMV + gate      the GEMV writes its partials and ends (no ticket); a second launch gates the rows
//                    from the partials, one 32-lane group a row, in parallel (router_gate_kernel<true>).
// Past kRouterReduceLaunchRows rows only the second form exists.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/knob_choice.hpp"
#include "kernels/router/router.hpp"

namespace fb {

enum class RouterFusedForm { one_launch, gemv_then_gate };

// The knob (an environment variable, read per launch, for A/B runs): unset or empty takes the rule
// below, "one" the one-launch form wherever it exists (at most kRouterReduceLaunchRows rows), "two"
// the GEMV + gate form; any other value is an InputError naming the variable.
inline constexpr const char* kRouterFusedFormVariable = "FUSEBENCH_ROUTER_FUSED_FORM";

// The rule: the one launch up to this many rows, GEMV + gate above. Run 73 (H100, both forms in one
// call, graph replay, S = 4, fp32 W, us; one launch / GEMV + gate): M = 1 5.78 / 6.44, M = 3 8.19 /
// 8.21 (bf16 W and the other distributions: the two-launch form 0.05-0.2 faster), M = 8 11.87 /
// 10.30, M = 16 17.31 / 10.65. The tie is at 3 rows; up to 2 the one launch's saved launch wins.
inline constexpr std::int64_t kRouterOneLaunchMaxRows = 2;

inline RouterFusedForm router_fused_form(std::int64_t rows, const char* asked) {
  const bool allowed = rows <= kRouterReduceLaunchRows;
  if (const std::string v = knob_choice(kRouterFusedFormVariable, asked, "one", "two"); !v.empty())
    return v == "one" && allowed ? RouterFusedForm::one_launch : RouterFusedForm::gemv_then_gate;
  return allowed && rows <= kRouterOneLaunchMaxRows ? RouterFusedForm::one_launch : RouterFusedForm::gemv_then_gate;
}

// The form router_fused_launch takes: the knob's, else the rule.
inline RouterFusedForm router_fused_launch_form(std::int64_t rows) {
  return router_fused_form(rows, std::getenv(kRouterFusedFormVariable));
}

// The fused router in a given form (router_kernels.hip; the one launch past
// kRouterReduceLaunchRows rows is an InputError). router_fused_launch calls it with
// router_fused_launch_form; the GPU tests call it with each form.
void router_fused_launch_as(const RouterParams& p, const RouterBuffers& b, RouterFusedForm form, void* stream);

inline int router_fused_launches(RouterFusedForm form) { return form == RouterFusedForm::one_launch ? 1 : 2; }

inline std::string router_fused_form_text(RouterFusedForm form) {
  return form == RouterFusedForm::one_launch ? "one launch, the GEMV's last block gates" : "GEMV, then a gate launch";
}

// The chain's form is fixed by the rows: up to kRouterReduceLaunchRows the GEMV's last block sums
// the partials into logits (2 launches with the gate), past them a reduce launch does (3).
inline int router_chain_launches(std::int64_t rows) { return rows <= kRouterReduceLaunchRows ? 2 : 3; }

inline std::string router_chain_form_text(std::int64_t rows) {
  return rows <= kRouterReduceLaunchRows ? "GEMV (its last block sums the partials), then a gate launch"
                                         : "GEMV, reduce launch, gate launch";
}

}  // namespace fb
