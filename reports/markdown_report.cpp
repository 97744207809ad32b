#include "reports/markdown_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/build_info.hpp"
#include "reports/atomic_write.hpp"
#include "reports/console_table.hpp"

namespace fb {
namespace {

std::string fp64_cell(const CaseResult& r) {
  std::string s;
  for (const CheckResult& c : r.checks) {
    // The first variant's fp64 checks (the fused kernel, in a fused/chain case).
    if (r.variants.empty() || c.id != "check/fp64/" + r.variants.front() || !c.details.contains("bound")) continue;
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
  if (meta.environment) md += environment_text(*meta.environment) + "\n";

  const bool timed = std::any_of(results.begin(), results.end(), [](const CaseResult& r) { return !r.timings.empty(); });
  md += timed ? "| outcome | case | point | fp64 (first variant) | mode | variant | us | vs ref | % copy | TFLOP/s |\n"
                "|---|---|---|---|---|---|---:|---|---:|---:|\n"
              : "| outcome | case | point | claims | fp64 (first variant) |\n|---|---|---|---|---|\n";
  for (const CaseResult& r : results) {
    if (!timed) {
      md += fmt::format("| {} | `{}` | {} | {} | {} |\n", outcome_name(r.outcome), r.case_name, r.point.text(), r.claim,
                        fp64_cell(r));
      continue;
    }
    if (r.timings.empty()) {
      md += fmt::format("| {} | `{}` | {} | {} | - | - | - | - | - | - |\n", outcome_name(r.outcome), r.case_name,
                        r.point.text(), fp64_cell(r));
      continue;
    }
    for (const VariantTiming& t : r.timings) {
      md += fmt::format("| {} | `{}` | {} | {} | {} | {} | {:.2f} | {} | {} | {} |\n", outcome_name(r.outcome),
                        r.case_name, r.point.text(), fp64_cell(r), t.mode, t.variant, t.stats.median_us,
                        ratio_text(r, t.variant, t.mode),
                        t.copy_fraction > 0 ? fmt::format("{:.0f}%", 100 * t.copy_fraction) : "-",
                        t.work.flops > 0 ? fmt::format("{:.0f}", t.tflop_per_s) : "-");
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
