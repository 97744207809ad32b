#include "cli/run_loop.hpp"

#include "core/errors.hpp"

namespace fb {

LoopResult run_points(const std::string& command, const CommonOptions& options, const Selection& selection, Backend backend,
                      const std::function<CaseResult(const ScenarioPoint&)>& run_one,
                      const std::function<void(const CaseResult&)>& on_result) {
  LoopResult loop;
  for (const ScenarioPoint& sp : selection.points) {
    CaseResult r;
    try {
      r = run_one(sp);
    } catch (const DeviceError& e) {
      r = new_case_result(*sp.kernel, sp.point, backend, options.seed);
      r.outcome = Outcome::error;
      r.reason = std::string("device error: ") + e.what();
      loop.device_failed = true;
    } catch (const std::exception& e) {
      r = new_case_result(*sp.kernel, sp.point, backend, options.seed);
      r.outcome = Outcome::error;
      r.reason = e.what();
    }
    r.repro = repro_line(command, options, r);
    on_result(r);
    loop.results.push_back(std::move(r));
    if (loop.device_failed) break;
  }
  return loop;
}

}  // namespace fb
