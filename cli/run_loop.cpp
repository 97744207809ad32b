#include "cli/run_loop.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>
#include <unistd.h>

#include "core/errors.hpp"

namespace fb {
namespace {

// A one-line progress meter on a terminal's stderr (points done, time left), redrawn in place and
// cleared before anything else is printed. Off when stderr is not a terminal or --quiet is given,
// so logs and pipes read as before.
class Progress {
 public:
  Progress(std::size_t total, bool enabled) : total_(total), enabled_(enabled && ::isatty(STDERR_FILENO) == 1) {}
  void clear() {
    if (enabled_ && drawn_) std::cerr << "\r\033[K" << std::flush;
    drawn_ = false;
  }
  void update(std::size_t done) {
    if (!enabled_ || done >= total_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double left = done ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - done) : 0.0;
    std::cerr << fmt::format("\r\033[K[{}/{}] {:.0f} s elapsed{}", done, total_, elapsed,
                             done ? fmt::format(", about {:.0f} s left", left) : std::string())
              << std::flush;
    drawn_ = true;
  }

 private:
  std::size_t total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

LoopResult run_points(const std::string& command, const CommonOptions& options, const Selection& selection, Backend backend,
                      const std::function<CaseResult(const ScenarioPoint&)>& run_one,
                      const std::function<void(const CaseResult&)>& on_result) {
  for (const std::string& note : selection.notes) std::cerr << "note: " << note << "\n";
  LoopResult loop;
  Progress progress(selection.points.size(), !options.quiet);
  progress.update(0);
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
    progress.clear();
    on_result(r);
    loop.results.push_back(std::move(r));
    progress.update(loop.results.size());
    if (loop.device_failed) break;
  }
  progress.clear();
  return loop;
}

}  // namespace fb
