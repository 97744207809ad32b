#include "reports/console_table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace fb {
namespace {

std::string upper(const char* s) {
  std::string u(s);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return u;
}

// "chain bitwise | fp64 q 1/1 ulp" style digest of a result's checks.
std::string checks_digest(const CaseResult& r) {
  bool chain_ok = true, emu_seen = false, emu_ok = true, repeat_ok = true;
  std::string fp64;
  for (const CheckResult& c : r.checks) {
    if (c.id.starts_with("check/chain")) chain_ok &= c.passed;
    if (c.id.starts_with("check/emu")) {
      emu_seen = true;
      emu_ok &= c.passed;
    }
    if (c.id.starts_with("check/repeat")) repeat_ok &= c.passed;
    if (c.id == "check/fp64/fused" && c.details.contains("bound")) {
      const auto& b = c.details["bound"];
      const std::string metric = b["metric"].get<std::string>();
      const auto& m = c.details["metrics"];
      const double v = m.contains(metric) ? m[metric].get<double>() : -1.0;
      fp64 += fmt::format("{}{} {:.3g}/{:.3g}", fp64.empty() ? "" : ", ", c.subject, v, b["limit"].get<double>());
    }
  }
  std::string s = fmt::format("chain {} | fp64 {}", chain_ok ? r.claim : "MISMATCH", fp64.empty() ? "-" : fp64);
  if (emu_seen) s += emu_ok ? " | gpu=emu" : " | GPU!=EMU";
  s += repeat_ok ? " | repeat ok" : " | REPEAT DIFFERS";
  return s;
}

}  // namespace

std::string render_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right_aligned) {
  std::vector<std::size_t> width(header.size(), 0);
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool right = c < right_aligned.size() && right_aligned[c];
      out += right ? fmt::format("{:>{}}", cells[c], width[c]) : fmt::format("{:<{}}", cells[c], width[c]);
      out += c + 1 < cells.size() ? "  " : "";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header);
  std::vector<std::string> rule;
  for (std::size_t w : width) rule.emplace_back(w, '-');
  out += line(rule);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string verify_line(const CaseResult& r) {
  return fmt::format("{:<10} {:<22} {:<58} {}  ({:.0f} ms)\n", upper(outcome_name(r.outcome)), r.case_name,
                     r.point.text(), r.outcome == Outcome::error || r.outcome == Outcome::skipped ? r.reason
                                                                                                     : checks_digest(r),
                     r.wall_ms);
}

std::string failure_lines(const CaseResult& r) {
  if (r.outcome == Outcome::pass) return {};
  std::string s;
  for (const CheckResult& c : r.checks)
    if (!c.passed) s += fmt::format("           {} {}: {}\n", c.mistrusted ? "mistrusted" : "failed", c.id, c.message);
  if (r.outcome == Outcome::error || r.outcome == Outcome::skipped) s += fmt::format("           {}\n", r.reason);
  if (!r.repro.empty()) s += fmt::format("           repro: {}\n", r.repro);
  return s;
}

std::string bench_table(const std::vector<CaseResult>& results, const RunMetadata& meta) {
  std::vector<std::vector<std::string>> rows;
  for (const CaseResult& r : results) {
    if (r.timings.empty()) {
      rows.push_back({r.case_name, r.point.text(), "-", "-", "-", "-", "-", "-", "-", upper(outcome_name(r.outcome))});
      continue;
    }
    for (std::size_t i = 0; i + 1 < r.timings.size(); i += 2) {
      const RoleTiming& f = r.timings[i];
      const RoleTiming& c = r.timings[i + 1];
      rows.push_back({r.case_name, r.point.text(), f.mode, fmt::format("{:.2f}", f.stats.median_us),
                      fmt::format("{:.1f}%", 100 * f.stats.rel_iqr), fmt::format("{:.2f}", c.stats.median_us),
                      fmt::format("{:.2f}x", c.stats.median_us / f.stats.median_us), fmt::format("{:.0f}", f.gb_per_s),
                      f.copy_fraction > 0 ? fmt::format("{:.0f}%", 100 * f.copy_fraction) : "-",
                      upper(outcome_name(r.outcome))});
    }
  }
  std::string out = render_table(
      {"case", "point", "mode", "fused us", "rel-IQR", "chain us", "speedup", "fused GB/s", "% copy", "verify"}, rows,
      {false, false, false, true, true, true, true, true, true, false});
  if (meta.environment) {
    const BenchEnvironment& e = *meta.environment;
    if (e.copy_gb_per_s > 0)
      out += fmt::format("device copy bandwidth {:.0f} GB/s (read+write, {} MiB each way); empty-kernel launch {:.2f} us\n",
                         e.copy_gb_per_s, e.copy_bytes >> 20, e.launch_floor.median_us);
    out += fmt::format("timer: {}\n", e.timer);
  }
  return out;
}

std::string summary_line(const RunMetadata& meta, const std::vector<CaseResult>& results) {
  const OutcomeCounts c = count_outcomes(results);
  std::string device = meta.device ? fmt::format("{} ({})", meta.device->name, meta.device->arch) : "CPU emulation";
  return fmt::format("fusebench {}: {} cases: {} pass, {} fail, {} error, {} skipped, {} mistrusted; backend {} on {}\n",
                     meta.command, c.total(), c.pass, c.fail, c.error, c.skipped, c.mistrusted,
                     backend_name(meta.backend), device);
}

}  // namespace fb
