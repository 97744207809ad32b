// The loop verify and bench share: every selected point through a per-point function, with the
// error policy in one place. A device error ends the run (the context may be gone) after recording
// the case as error; any other exception is an error of that case only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/common_options.hpp"

namespace fb {

struct LoopResult {
  std::vector<CaseResult> results;
  bool device_failed = false;
};

LoopResult run_points(const std::string& command, const CommonOptions& options, const Selection& selection, Backend backend,
                      const std::function<CaseResult(const ScenarioPoint&)>& run_one,
                      const std::function<void(const CaseResult&)>& on_result);

}  // namespace fb
