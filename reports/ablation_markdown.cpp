// The ablation table, laid out like the original change's: one row per fusion, one column per
// point, "+x %" = how much the step grows when that fusion is turned off alone.
#include <sstream>

#include <fmt/format.h>

#include "reports/ablation_report.hpp"
#include "reports/atomic_write.hpp"

namespace fb {
namespace {

std::string signed_pct(double share) { return fmt::format("{:+.1f} %", 100.0 * share); }

// The fusion rows come from the first point that ran (a skipped or failed point has none).
const AblationPointResult* first_run(const AblationReport& r) {
  for (const AblationPointResult& p : r.points)
    if (!p.fusions.empty()) return &p;
  return nullptr;
}

std::string not_run(const AblationPointResult& p) { return p.skipped.empty() ? "error" : "skipped"; }

std::string cell(const AblationFusionResult& f) {
  if (!f.applies || !f.selected) return "-";
  if (f.check && f.check->outcome != "pass") return "check failed";
  if (!f.share.timed) return "not timed";
  return share_cell(f.share);
}

std::string row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const std::string& c : cells) s += " " + c + " |";
  return s + "\n";
}

}  // namespace

std::string share_cell(const AblationShare& s) {
  const std::string text = fmt::format("{} [{:.1f}, {:.1f}]", signed_pct(s.share), 100.0 * s.ci_low, 100.0 * s.ci_high);
  return s.significant ? text : "n.s. (" + text + ")";
}

std::string point_heading(const AblationPointResult& p) {
  if (p.phase == "decode") return fmt::format("decode {} req (M={})", p.requests, p.rows);
  if (p.rows % 1024 == 0) return fmt::format("prefill {}K", p.rows / 1024);
  return fmt::format("prefill {}", p.rows);
}

std::string ablation_markdown(const AblationReport& r) {
  std::ostringstream out;
  out << "# fusebench ablate: " << r.meta.scenario_name << "\n\n";
  const std::string device = r.meta.device ? r.meta.device->name : std::string("CPU (emulation: a smoke test, not a figure)");
  out << fmt::format("Backend {}, {}. Each fusion turned off alone; the cell is how much the MoE layer step grows "
                     "without it, (off - on) / on, median of the paired rounds with its {:.0f} % interval ({}); "
                     "\"n.s.\" when the interval contains 0, \"-\" where the fusion does not apply. Timing: {}.\n\n",
                     r.meta.backend == Backend::gpu ? "gpu" : "cpu", device, 100 * r.methodology.ci_level,
                     r.methodology.ci_method, r.methodology.timing);
  std::vector<std::string> head{"fusion"};
  for (const AblationPointResult& p : r.points) head.push_back(point_heading(p));
  out << row(head);
  out << row(std::vector<std::string>(head.size(), "---"));
  if (const AblationPointResult* ran = first_run(r))
    for (std::size_t f = 0; f < ran->fusions.size(); ++f) {
      const AblationFusionResult& first = ran->fusions[f];
      std::vector<std::string> cells{fmt::format("{} {}", first.fusion, first.title)};
      for (const AblationPointResult& p : r.points) cells.push_back(f < p.fusions.size() ? cell(p.fusions[f]) : not_run(p));
      out << row(cells);
    }
  std::vector<std::string> all_off{"all off"}, step{"all-on step (us)"}, launches{"launches (all on / all off)"},
      moe{"modelled MoE ms per step (57 layers)"}, tpot{"modelled TPOT (ms)"};
  moe[0] = fmt::format("MoE ms per step (modelled, MoE layers only, x{})", r.model.moe_layers);
  bool any_tpot = false;
  for (const AblationPointResult& p : r.points) {
    all_off.push_back(p.all_off.timed ? share_cell(p.all_off) : (p.all_off_check && p.all_off_check->outcome != "pass"
                                                                      ? "check failed" : "-"));
    const bool timed = !p.configs.empty() && p.configs[0].time.samples > 0;
    step.push_back(timed ? fmt::format("{:.1f}", p.configs[0].time.median_us) : "-");
    launches.push_back(p.configs.empty() ? "-"
                                         : fmt::format("{} / {}", p.configs.front().launches, p.configs.back().launches));
    moe.push_back(timed ? fmt::format("{:.2f}", p.moe_ms_per_step) : "-");
    tpot.push_back(p.tpot_ms ? fmt::format("{:.2f}", *p.tpot_ms) : "-");
    any_tpot = any_tpot || p.tpot_ms.has_value();
  }
  out << row(all_off) << row(step) << row(launches) << row(moe);
  if (any_tpot) out << row(tpot);
  for (const AblationPointResult& p : r.points)
    if (!p.skipped.empty() || !p.error.empty())
      out << "\n" << p.id << (p.skipped.empty() ? ": error: " + p.error : ": skipped: " + p.skipped) << "\n";
  out << "\n" << r.model.note << "\n";
  return out.str();
}

void write_ablation_markdown(const std::string& path, const AblationReport& report) {
  write_file_atomically(path, ablation_markdown(report));
}

std::string ablation_console(const AblationReport& r) {
  std::ostringstream out;
  for (const AblationPointResult& p : r.points) {
    out << fmt::format("{} ({}): ", p.id, point_heading(p));
    if (!p.error.empty()) {
      out << "error: " << p.error << "\n";
      continue;
    }
    if (!p.skipped.empty()) {
      out << "skipped: " << p.skipped << "\n";
      continue;
    }
    out << fmt::format("{} checks, {} failed", p.checks(), p.checks_failed());
    if (!p.configs.empty() && p.configs[0].time.samples > 0)
      out << fmt::format("; all on {:.1f} us ({} launches), MoE {:.2f} ms per step (modelled, MoE layers only)",
                         p.configs[0].time.median_us, p.configs[0].launches, p.moe_ms_per_step);
    out << "\n";
    for (const AblationFusionResult& f : p.fusions) {
      if (f.check && f.check->outcome != "pass") out << fmt::format("  {} check FAILED: {}\n", f.fusion, f.check->detail);
      else if (f.share.timed) out << fmt::format("  {} off: {}\n", f.fusion, share_cell(f.share));
    }
    if (p.all_off_check && p.all_off_check->outcome != "pass")
      out << fmt::format("  all_off check FAILED: {}\n", p.all_off_check->detail);
    else if (p.all_off.timed) out << fmt::format("  all off: {}\n", share_cell(p.all_off));
  }
  return out.str();
}

}  // namespace fb
