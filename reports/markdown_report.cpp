#include "reports/markdown_report.hpp"

#include <fmt/format.h>

#include "core/build_info.hpp"
#include "reports/atomic_write.hpp"

namespace fb {
namespace {

std::string fp64_cell(const CaseResult& r) {
  std::string s;
  for (const CheckResult& c : r.checks) {
    if (c.id != "check/fp64/fused" || !c.details.contains("bound")) continue;
    const std::string metric = c.details["bound"]["metric"].get<std::string>();
    const auto& m = c.details["metrics"];
    s += fmt::format("{}{} {} {:.3g} (<= {:.3g})", s.empty() ? "" : "; ", c.subject, metric,
                     m.contains(metric) ? m[metric].get<double>() : -1.0, c.details["bound"]["limit"].get<double>());
  }
  return s.empty() ? "-" : s;
}

}  // namespace

std::string markdown_report(const RunMetadata& meta, const std::vector<CaseResult>& results) {
  const BuildInfo& b = build_info();
  const OutcomeCounts c = count_outcomes(results);
  std::string md = fmt::format("# fusebench {}: {}\n\n", meta.command, meta.scenario_name);
  md += fmt::format("- started {} ({:.1f} s), backend **{}**{}\n", meta.started_at, meta.wall_s,
                    backend_name(meta.backend),
                    meta.device ? fmt::format(" on {} ({}, {} SMs/CUs)", meta.device->name, meta.device->arch,
                                              meta.device->multiprocessors)
                                : "");
  md += fmt::format("- build {} {}{}, {} {}, GPU backend {}\n", b.version, std::string(b.git_sha).substr(0, 12),
                    b.git_dirty ? " (dirty)" : "", b.build_type, b.compiler, b.gpu_backend);
  md += fmt::format("- **{} pass**, {} fail, {} error, {} skipped, {} mistrusted of {}\n\n", c.pass, c.fail, c.error,
                    c.skipped, c.mistrusted, c.total());
  if (meta.environment && meta.environment->copy_gb_per_s > 0)
    md += fmt::format("Device copy bandwidth {:.0f} GB/s; empty-kernel launch {:.2f} us.\n\n",
                      meta.environment->copy_gb_per_s, meta.environment->launch_floor.median_us);

  const bool timed = std::any_of(results.begin(), results.end(), [](const CaseResult& r) { return !r.timings.empty(); });
  md += timed ? "| outcome | case | point | fp64 (fused) | fused us | chain us | speedup | % copy |\n|---|---|---|---|---:|---:|---:|---:|\n"
              : "| outcome | case | point | claim | fp64 (fused) |\n|---|---|---|---|---|\n";
  for (const CaseResult& r : results) {
    if (timed) {
      std::string fused = "-", chain = "-", speedup = "-", copy = "-";
      if (r.timings.size() >= 2) {
        fused = fmt::format("{:.2f}", r.timings[0].stats.median_us);
        chain = fmt::format("{:.2f}", r.timings[1].stats.median_us);
        speedup = fmt::format("{:.2f}x", r.timings[1].stats.median_us / r.timings[0].stats.median_us);
        if (r.timings[0].copy_fraction > 0) copy = fmt::format("{:.0f}%", 100 * r.timings[0].copy_fraction);
      }
      md += fmt::format("| {} | `{}` | {} | {} | {} | {} | {} | {} |\n", outcome_name(r.outcome), r.case_name,
                        r.point.text(), fp64_cell(r), fused, chain, speedup, copy);
    } else {
      md += fmt::format("| {} | `{}` | {} | {} | {} |\n", outcome_name(r.outcome), r.case_name, r.point.text(), r.claim,
                        fp64_cell(r));
    }
  }
  bool header = false;
  for (const CaseResult& r : results) {
    if (r.outcome == Outcome::pass) continue;
    if (!header) md += "\n## Not passing\n";
    header = true;
    md += fmt::format("\n### {} {} ({})\n\n{}\n\n", r.case_name, r.point.text(), outcome_name(r.outcome), r.reason);
    if (!r.repro.empty()) md += fmt::format("```\n{}\n```\n", r.repro);
  }
  return md;
}

void write_markdown_report(const std::string& path, const RunMetadata& meta, const std::vector<CaseResult>& results) {
  write_file_atomically(path, markdown_report(meta, results));
}

}  // namespace fb
