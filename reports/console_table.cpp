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

// "fused~chain bitwise | fp64 q 1/1 ulp" style digest of a result's checks.
std::string checks_digest(const CaseResult& r) {
  bool pairs_ok = true, emu_seen = false, emu_ok = true, repeat_ok = true;
  std::string fp64;
  const std::string first_fp64 = "check/fp64/" + (r.variants.empty() ? std::string("fused") : r.variants.front());
  for (const CheckResult& c : r.checks) {
    if (c.id.starts_with("check/pair")) pairs_ok &= c.passed;
    if (c.id.starts_with("check/emu")) {
      emu_seen = true;
      emu_ok &= c.passed;
    }
    if (c.id.starts_with("check/repeat")) repeat_ok &= c.passed;
    if (c.id == first_fp64 && c.details.contains("bound")) {
      const auto& b = c.details["bound"];
      const std::string metric = b["metric"].get<std::string>();
      const auto& m = c.details["metrics"];
      const double v = m.contains(metric) ? m[metric].get<double>() : -1.0;
      fp64 += fmt::format("{}{} {:.3g}/{:.3g}", fp64.empty() ? "" : ", ", c.subject, v, b["limit"].get<double>());
    }
  }
  std::string s = fmt::format("{} | fp64 {}", pairs_ok ? r.claim : "PAIR MISMATCH", fp64.empty() ? "-" : fp64);
  if (!r.subset.full) s += fmt::format(" | checked {} of {} {}", r.subset.units.size(), r.subset.total, r.subset.unit);
  for (const auto& [variant, why] : r.skipped_variants) s += fmt::format(" | {} skipped", variant);
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
      rows.push_back({r.case_name, r.point.text(), "-", "-", "-", "-", "-", "-", "-", "-", upper(outcome_name(r.outcome))});
      continue;
    }
    for (const VariantTiming& t : r.timings) {
      rows.push_back({r.case_name, r.point.text(), t.mode, t.variant, fmt::format("{:.2f}", t.stats.median_us),
                      fmt::format("{:.1f}%", 100 * t.stats.rel_iqr), ratio_text(r, t.variant, t.mode),
                      fmt::format("{:.0f}", t.gb_per_s),
                      t.copy_fraction > 0 ? fmt::format("{:.0f}%", 100 * t.copy_fraction) : "-",
                      t.work.flops > 0 ? fmt::format("{:.0f}{}", t.tflop_per_s,
                                                     t.matrix_fraction > 0 ? fmt::format(" ({:.0f}%)", 100 * t.matrix_fraction) : "")
                                       : "-",
                      upper(outcome_name(r.outcome))});
    }
  }
  std::string out = render_table(
      {"case", "point", "mode", "variant", "us", "rel-IQR", "vs ref", "GB/s", "% copy", "TFLOP/s (% matrix)", "verify"}, rows,
      {false, false, false, false, true, true, false, true, true, true, false});
  if (meta.environment) out += environment_text(*meta.environment);
  return out;
}

std::string ratio_text(const CaseResult& r, const std::string& variant, const std::string& mode) {
  std::string s;
  for (const PairRatio& p : r.ratios)
    if (p.variant == variant && p.mode == mode) s += fmt::format("{}{:.2f}x {}", s.empty() ? "" : ", ", p.ratio, p.reference);
  return s.empty() ? "-" : s;
}

std::string environment_text(const BenchEnvironment& e) {
  std::string out;
  if (e.copy_gb_per_s > 0)
    out += fmt::format("device copy bandwidth {:.0f} GB/s (read+write, {} MiB each way)\n", e.copy_gb_per_s,
                       e.copy_bytes >> 20);
  for (const LaunchFloor& f : e.launch_floors)
    out += fmt::format("empty-kernel floor, {}: {:.2f} us per call\n", f.mode, f.stats.median_us);
  if (e.matrix_rate.tflop_per_s > 0)
    out += fmt::format("dense matrix rate {:.0f} TFLOP/s ({}, {}^3)\n", e.matrix_rate.tflop_per_s, e.matrix_rate.library,
                       e.matrix_rate.size);
  else if (!e.matrix_rate.note.empty())
    out += "dense matrix rate: " + e.matrix_rate.note + "\n";
  out += fmt::format("timer: {}\n", e.timer);
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
