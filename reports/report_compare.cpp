#include "reports/report_compare.hpp"

#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "reports/report_reader.hpp"
#include "reports/console_table.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

std::string case_key(const Json& c) { return c["case"].get<std::string>() + " " + c["point"].dump() + " " + c["backend"].get<std::string>(); }
std::string case_subject(const Json& c) { return c["case"].get<std::string>() + " " + report_point_text(c["point"]); }
bool is_pass(const Json& c) { return c.value("outcome", "") == "pass"; }

// An ablation check's field ("" when the check is absent or null: the fusion does not apply).
std::string check_field(const Json& owner, const char* check_key, const char* field) {
  if (!owner.contains(check_key) || !owner[check_key].is_object()) return "";
  return owner[check_key].value(field, "");
}

// Microseconds for a table: four significant digits, no exponent for times up to hours.
std::string us_text(double us) { return us >= 1000 ? fmt::format("{:.0f}", us) : fmt::format("{:.4g}", us); }

std::string device_text(const Json& report) {
  const Json& d = report["device"];
  if (d.is_null()) return "CPU emulation";
  return d["name"].get<std::string>() + " (" + d["arch"].get<std::string>() + ")";
}

// One line of the comparison: a verification change, a time verdict, or a case that came or went.
struct Finding {
  std::string subject;   // "fp8_quant/per_token M=1 K=128" | "decode M=3"
  std::string item;      // "fused/graph" | "F1_off" | "outcome" | "check check/pair/fused~chain/bitwise q"
  std::string result;    // "SLOWER" | "FASTER" | "SAME" | "AMBIGUOUS" | "REGRESSION" | "changed" | "new"
  std::string detail;
  bool regression = false, improvement = false, ambiguous = false;
  Json json;
};

class Comparer {
 public:
  Comparer(const Json& base, const Json& head, const CompareOptions& o) : base_(base), head_(head), o_(o) {}

  Comparison run() {
    if (is_ablation(head_)) compare_points();
    else compare_cases();
    return finish();
  }

 private:
  void add(Finding f) {
    if (f.regression) ++regressions_;
    if (f.ambiguous) ++ambiguous_;
    findings_.push_back(std::move(f));
  }

  void verification(const std::string& subject, const std::string& item, const std::string& detail, bool regression,
                    Json json) {
    json["kind"] = "verification";
    json["regression"] = regression;
    if (regression) ++verification_changes_;
    add(Finding{subject, item, regression ? "REGRESSION" : "changed", detail, regression, false, false, std::move(json)});
  }

  // A time pair: the verdict from both sample sets.
  TimingVerdict timing(const std::string& subject, const std::string& item, const Json& bt, const Json& ht, Json key) {
    const std::vector<double> bs = samples_of(bt), hs = samples_of(ht);
    TimingVerdict v;
    if (bs.empty() || hs.empty()) {
      // No samples kept: the medians' ratio alone, which no test can judge.
      v.base_median_us = bt["time"]["median_us"].get<double>();
      v.head_median_us = ht["time"]["median_us"].get<double>();
      v.ratio = v.head_median_us / v.base_median_us;
      v.n_base = static_cast<long long>(bs.size());
      v.n_head = static_cast<long long>(hs.size());
      v.reason = "no samples in " + std::string(bs.empty() ? "base" : "head") + ": the medians alone cannot be judged";
    } else {
      v = judge_timing(bs, hs, o_.thresholds);
    }
    ++verdict_counts_[v.verdict];
    Json j = std::move(key);
    j["kind"] = "timing";
    j["verdict"] = verdict_name(v.verdict);
    j["ratio"] = v.ratio;
    j["base_median_us"] = v.base_median_us;
    j["head_median_us"] = v.head_median_us;
    j["n_base"] = v.n_base;
    j["n_head"] = v.n_head;
    j["u"] = v.u;
    j["p"] = v.p;
    j["reason"] = v.reason;
    const bool slower = v.verdict == Verdict::slower;
    add(Finding{subject, item, verdict_name(v.verdict),
                fmt::format("{:.3f}x ({} -> {} us); {}", v.ratio, us_text(v.base_median_us), us_text(v.head_median_us), v.reason),
                slower, v.verdict == Verdict::faster, v.verdict == Verdict::ambiguous, std::move(j)});
    return v;
  }

  void compare_cases() {
    std::map<std::string, const Json*> base_cases, head_cases;
    for (const Json& c : base_["cases"]) base_cases[case_key(c)] = &c;
    for (const Json& c : head_["cases"]) head_cases[case_key(c)] = &c;
    for (const Json& h : head_["cases"]) {
      const std::string subject = case_subject(h);
      const auto it = base_cases.find(case_key(h));
      if (it == base_cases.end()) {
        const bool bad = !is_pass(h);
        new_not_passing_ += bad ? 1 : 0;
        Json j{{"kind", "new"}, {"case", h["case"]}, {"point", h["point"]}, {"outcome", h["outcome"]}, {"regression", bad}};
        add(Finding{subject, "case", bad ? "REGRESSION" : "new", bad ? "new case, " + h["outcome"].get<std::string>() : "new case",
                    bad, false, false, std::move(j)});
        continue;
      }
      const Json& b = *it->second;
      Json key{{"case", h["case"]}, {"point", h["point"]}, {"backend", h["backend"]}};
      Json cj = key;
      cj["outcome"] = Json{{"base", b["outcome"]}, {"head", h["outcome"]}};
      // Outcome: pass -> anything else (fail, error, mistrusted, skipped) is a regression.
      const bool regressed = is_pass(b) && !is_pass(h);
      if (b["outcome"] != h["outcome"]) {
        outcome_regressions_ += regressed ? 1 : 0;
        Json j = key;
        j["item"] = "outcome";
        j["base"] = b["outcome"];
        j["head"] = h["outcome"];
        verification(subject, "outcome", b["outcome"].get<std::string>() + " -> " + h["outcome"].get<std::string>(), regressed,
                     std::move(j));
      }
      // Claim: a bitwise claim that is no longer bitwise is a regression.
      const std::string bc = b.value("claim", ""), hc = h.value("claim", "");
      if (bc != hc) {
        const bool lost_bitwise = bc.find("bitwise") != std::string::npos && hc.find("bitwise") == std::string::npos;
        Json j = key;
        j["item"] = "claim";
        j["base"] = bc;
        j["head"] = hc;
        verification(subject, "claim", bc + " -> " + hc, lost_bitwise, std::move(j));
      }
      // Checks: one that passed in base and fails, or is gone, in head (a bitwise pair check
      // that became a bound check is gone under its old id).
      if (!regressed) compare_checks(subject, key, b, h);
      // Fingerprints: which outputs changed bit for bit (reported; a regression only with
      // --fail-on-bit-change).
      std::vector<std::string> changed;
      const Json bf = b.value("fingerprints", Json::object()), hf = h.value("fingerprints", Json::object());
      for (const auto& [name, value] : hf.items())
        if (bf.contains(name) && bf[name] != value) changed.push_back(name);
      bits_changed_ += static_cast<int>(changed.size());
      cj["bits_changed"] = changed;
      if (!changed.empty()) {
        Json j = key;
        j["kind"] = "bits";
        j["outputs"] = changed;
        j["regression"] = o_.fail_on_bit_change;
        std::string names;
        for (const std::string& n : changed) names += (names.empty() ? "" : ", ") + n;
        add(Finding{subject, "output bits", o_.fail_on_bit_change ? "REGRESSION" : "changed",
                    fmt::format("{} output(s) changed bits: {}", changed.size(), names), o_.fail_on_bit_change, false,
                    false, std::move(j)});
      }
      // Launch forms (schema 2.0.2): a variant that launched another form of its kernel (a tile
      // width from a knob or a changed rule) is named, so a time change has its cause beside it.
      // Shown only, never a regression; reports without the field on either side say nothing.
      if (b.contains("launch_configs") && h.contains("launch_configs")) launch_changes(subject, key, b, h);
      // Timings per (variant, mode); the case's first variant timed on both sides carries the
      // geometric mean and the gate (a bench run with --variants may leave the first one untimed:
      // the block-scale GEMM's plain kernel at prefill sizes, say).
      Json ratios = Json::object();
      const std::string headline = headline_variant(b, h);
      for (const Json& ht : h.value("timings", Json::array())) {
        for (const Json& bt : b.value("timings", Json::array())) {
          if (ht["variant"] != bt["variant"] || ht["mode"] != bt["mode"]) continue;
          const std::string item = ht["variant"].get<std::string>() + "/" + ht["mode"].get<std::string>();
          Json tk = key;
          tk["variant"] = ht["variant"];
          tk["mode"] = ht["mode"];
          const TimingVerdict v = timing(subject, item, bt, ht, std::move(tk));
          ratios[item] = v.ratio;
          if (ht["variant"] == headline) headline_ratio(subject, item, v.ratio);
        }
      }
      cj["time_ratio"] = std::move(ratios);
      cases_json_.push_back(std::move(cj));
    }
    // A case that vanished is a regression: otherwise a run that errors before reaching a case
    // (or records it under another backend) would look clean.
    for (const Json& b : base_["cases"]) {
      if (head_cases.count(case_key(b))) continue;
      ++gone_;
      add(Finding{case_subject(b), "case", "REGRESSION", "gone from head", true, false, false,
                  Json{{"kind", "gone"}, {"case", b["case"]}, {"point", b["point"]}, {"regression", true}}});
    }
  }

  void launch_changes(const std::string& subject, const Json& key, const Json& b, const Json& h) {
    const Json& bl = b["launch_configs"];
    const Json& hl = h["launch_configs"];
    std::map<std::string, std::pair<std::string, std::string>> forms;  // variant -> (base, head)
    for (const auto& [v, form] : bl.items()) forms[v].first = form.get<std::string>();
    for (const auto& [v, form] : hl.items()) forms[v].second = form.get<std::string>();
    for (const auto& [v, form] : forms) {
      if (form.first == form.second) continue;
      const std::string before = form.first.empty() ? "(none)" : form.first;
      const std::string after = form.second.empty() ? "(none)" : form.second;
      Json j = key;
      j["kind"] = "launch";
      j["variant"] = v;
      j["base"] = before;
      j["head"] = after;
      j["regression"] = false;
      ++launch_changes_;
      add(Finding{subject, "launch " + v, "changed", before + " -> " + after, false, false, false, std::move(j)});
    }
  }

  void compare_checks(const std::string& subject, const Json& key, const Json& b, const Json& h) {
    std::map<std::string, bool> head_checks;
    auto check_key = [](const Json& c) { return c["id"].get<std::string>() + " " + c.value("subject", ""); };
    for (const Json& c : h.value("checks", Json::array())) head_checks[check_key(c)] = c["passed"].get<bool>();
    for (const Json& c : b.value("checks", Json::array())) {
      if (!c["passed"].get<bool>()) continue;
      const auto it = head_checks.find(check_key(c));
      if (it != head_checks.end() && it->second) continue;
      const bool gone = it == head_checks.end();
      Json j = key;
      j["item"] = "check";
      j["check"] = c["id"];
      j["subject"] = c.value("subject", "");
      j["head"] = gone ? "gone" : "fail";
      verification(subject, "check " + check_key(c), gone ? "passed in base, not run in head" : "pass -> fail", true,
                   std::move(j));
    }
  }

  // The first of head's variants (in the case's order) with a timing in one mode on both sides;
  // empty when none is timed on both.
  static std::string headline_variant(const Json& b, const Json& h) {
    for (const Json& v : h.value("variants", Json::array())) {
      if (!v.is_string()) continue;
      for (const Json& ht : h.value("timings", Json::array()))
        for (const Json& bt : b.value("timings", Json::array()))
          if (ht["variant"] == v && bt["variant"] == v && ht["mode"] == bt["mode"]) return v.get<std::string>();
    }
    return {};
  }

  void headline_ratio(const std::string& subject, const std::string& item, double ratio) {
    log_sum_ += std::log(ratio);
    ++ratios_;
    if (o_.max_slowdown > 0 && ratio > o_.max_slowdown) {
      ++slowdowns_;
      add(Finding{subject, item, "REGRESSION", fmt::format("{:.3f}x past --max-slowdown {:g}", ratio, o_.max_slowdown), true,
                  false, false, Json{{"kind", "gate"}, {"item", item}, {"ratio", ratio}, {"regression", true}}});
    }
  }

  void compare_points() {
    std::map<std::string, const Json*> base_points, head_points;
    for (const Json& p : base_["points"]) base_points[p["id"].get<std::string>()] = &p;
    for (const Json& p : head_["points"]) head_points[p["id"].get<std::string>()] = &p;
    for (const Json& h : head_["points"]) {
      const std::string id = h["id"].get<std::string>();
      const auto it = base_points.find(id);
      if (it == base_points.end()) {
        add(Finding{id, "point", "new", "new point", false, false, false, Json{{"kind", "new"}, {"point", id}, {"regression", false}}});
        continue;
      }
      const Json& b = *it->second;
      Json cj{{"point", id}, {"time_ratio", Json::object()}, {"shares", Json::object()}};
      for (const Json& hc : h["configs"]) {
        const Json* bc = nullptr;
        for (const Json& c : b["configs"])
          if (c["name"] == hc["name"]) bc = &c;
        if (!bc) continue;
        const std::string name = hc["name"].get<std::string>();
        const TimingVerdict v = timing(id, name, *bc, hc, Json{{"point", id}, {"config", name}});
        cj["time_ratio"][name] = v.ratio;
        if (name == "all_on") headline_ratio(id, name, v.ratio);
      }
      for (const Json& bc : b["configs"]) {
        bool found = false;
        for (const Json& c : h["configs"]) found = found || c["name"] == bc["name"];
        if (found) continue;
        ++gone_;
        add(Finding{id, bc["name"].get<std::string>(), "REGRESSION", "configuration gone from head", true, false, false,
                    Json{{"kind", "gone"}, {"point", id}, {"config", bc["name"]}, {"regression", true}}});
      }
      // A point that ran in base and errors in head; the all-off configuration's own check.
      const std::string be = b.value("error", ""), he = h.value("error", "");
      if (he != be && !he.empty())
        verification(id, "point", "error in head: " + he, true, Json{{"point", id}, {"item", "error"}, {"head", he}});
      ablation_check(id, "all_off", b, h, "all_off_check");
      for (const Json& bf : b["fusions"]) {
        const std::string fusion = bf["fusion"].get<std::string>();
        const Json* hf = nullptr;
        for (const Json& f : h["fusions"])
          if (f["fusion"] == bf["fusion"]) hf = &f;
        const std::string bo = check_field(bf, "check", "outcome");
        if (!hf) {
          if (bo == "pass")
            verification(id, fusion, "check passed in base, fusion gone from head", true,
                         Json{{"point", id}, {"fusion", fusion}, {"item", "check"}, {"head", "gone"}});
          continue;
        }
        ablation_check(id, fusion, bf, *hf, "check");
        cj["shares"][fusion] = Json{{"base", bf.value("share", Json())}, {"head", hf->value("share", Json())}};
      }
      cases_json_.push_back(std::move(cj));
    }
    for (const Json& b : base_["points"]) {
      if (head_points.count(b["id"].get<std::string>())) continue;
      ++gone_;
      add(Finding{b["id"].get<std::string>(), "point", "REGRESSION", "gone from head", true, false, false,
                  Json{{"kind", "gone"}, {"point", b["id"]}, {"regression", true}}});
    }
  }

  // An ablation check (a fusion's, or all_off's): pass -> anything else, and a bitwise claim lost,
  // are regressions.
  void ablation_check(const std::string& id, const std::string& what, const Json& b, const Json& h, const char* key) {
    const std::string bo = check_field(b, key, "outcome"), ho = check_field(h, key, "outcome");
    if (bo == "pass" && ho != "pass") {
      ++outcome_regressions_;
      verification(id, what, "check pass -> " + (ho.empty() ? std::string("none") : ho), true,
                   Json{{"point", id}, {"fusion", what}, {"item", "check"}, {"base", bo}, {"head", ho}});
    }
    const std::string bclaim = check_field(b, key, "claim"), hclaim = check_field(h, key, "claim");
    if (bclaim == "bitwise" && !hclaim.empty() && hclaim != "bitwise")
      verification(id, what, "claim bitwise -> " + hclaim, true,
                   Json{{"point", id}, {"fusion", what}, {"item", "claim"}, {"base", bclaim}, {"head", hclaim}});
  }

  std::string run_line(const char* label, const Json& r) const {
    return fmt::format("{}: {} on {} ({})", label, r["run"]["started_at"].get<std::string>(), device_text(r),
                       r["run"]["build"]["git_sha"].get<std::string>().substr(0, 12));
  }

  // The knobs (run.knobs, schema 2.0.1) that differ between the runs, "NAME base -> head" with
  // "(unset)" for an absent one; empty when they agree or a report does not record them.
  std::string knob_changes() const {
    const auto knobs = [](const Json& r) -> std::optional<std::map<std::string, std::string>> {
      if (!r["run"].contains("knobs") || !r["run"]["knobs"].is_object()) return std::nullopt;
      std::map<std::string, std::string> m;
      for (const auto& [name, value] : r["run"]["knobs"].items())
        m[name] = value.is_string() ? value.get<std::string>() : value.dump();
      return m;
    };
    const auto b = knobs(base_), h = knobs(head_);
    if (!b || !h) return "";
    std::map<std::string, std::pair<std::string, std::string>> both;
    for (const auto& [name, value] : *b) both[name].first = value;
    for (const auto& [name, value] : *h) both[name].second = value;
    std::string out;
    for (const auto& [name, values] : both) {
      const bool in_b = b->contains(name), in_h = h->contains(name);
      if (in_b && in_h && values.first == values.second) continue;
      out += fmt::format("{}{} {} -> {}", out.empty() ? "" : ", ", name, in_b ? values.first : "(unset)",
                         in_h ? values.second : "(unset)");
    }
    return out;
  }

  Comparison finish() {
    Comparison out;
    out.regression = regressions_ > 0;
    out.ambiguous = ambiguous_ > 0;
    const double geomean = ratios_ ? std::exp(log_sum_ / ratios_) : 0.0;
    const std::string first = is_ablation(head_) ? "all_on" : "first-variant";
    const std::string verdict_line = fmt::format(
        "verdicts: {} slower, {} faster, {} same, {} ambiguous (two-sided Mann-Whitney U, alpha {:g}, min effect {:g} %, "
        "at least {} samples a side)",
        verdict_counts_[Verdict::slower], verdict_counts_[Verdict::faster], verdict_counts_[Verdict::same],
        verdict_counts_[Verdict::ambiguous], o_.thresholds.alpha, o_.thresholds.min_effect * 100, o_.thresholds.min_samples);
    const std::string result = out.regression ? "REGRESSION" : out.ambiguous ? "AMBIGUOUS" : "OK";
    const std::string geomean_text =
        ratios_ ? fmt::format("{:.3f}x over {} {}", geomean, ratios_, is_ablation(head_) ? "points" : "cases") : "n/a";
    const std::string counts =
        fmt::format("{} outcome regressions, {} outputs changed bits, {} time geomean {}", outcome_regressions_,
                    bits_changed_, first, geomean_text) +
        (launch_changes_ ? fmt::format(", {} variant(s) launched another form", launch_changes_) : "");

    // Regressions first, then improvements, then the rest.
    std::vector<const Finding*> ordered;
    for (int pass = 0; pass < 3; ++pass)
      for (const Finding& f : findings_)
        if ((pass == 0 && f.regression) || (pass == 1 && !f.regression && f.improvement) ||
            (pass == 2 && !f.regression && !f.improvement))
          ordered.push_back(&f);
    std::vector<std::vector<std::string>> rows;
    for (const Finding* f : ordered) rows.push_back({f->subject, f->item, f->result, f->detail});

    const std::string knobs = knob_changes();
    out.text = run_line("base", base_) + "\n" + run_line("head", head_) + "\n";
    if (!knobs.empty()) out.text += "knobs differ: " + knobs + "\n";
    out.text += "\n";
    out.text += render_table({"case / point", "what", "result", "detail"}, rows, {false, false, false, false});
    out.text += "\n" + counts + "\n" + verdict_line + "\n";
    if (gone_ || new_not_passing_)
      out.text += fmt::format("{} {} gone from head, {} new cases that do not pass\n", gone_,
                              is_ablation(head_) ? "points or configurations" : "cases", new_not_passing_);
    out.text += fmt::format("result: {} ({} regressions, {} verification changes)\n", result, regressions_, verification_changes_);

    out.markdown = markdown(ordered, result, counts, verdict_line);

    Json findings = Json::array();
    for (const Finding* f : ordered) {
      Json j = f->json;
      j["subject"] = f->subject;
      j["what"] = f->item;
      j["result"] = f->result;
      j["detail"] = f->detail;
      findings.push_back(std::move(j));
    }
    auto side = [](const Json& r) {
      Json j{{"device", device_text(r)}, {"started_at", r["run"]["started_at"]}, {"git_sha", r["run"]["build"]["git_sha"]}};
      if (r["run"].contains("knobs")) j["knobs"] = r["run"]["knobs"];
      return j;
    };
    out.json = Json{{"schema_version", kComparisonSchemaVersion},
                    {"report_kind", "comparison"},
                    {"compared_kind", report_kind(head_)},
                    {"scenario", head_["scenario"]["name"]},
                    {"base", side(base_)},
                    {"head", side(head_)},
                    {"thresholds", Json{{"test", "two-sided Mann-Whitney U, normal approximation with tie and continuity correction"},
                                        {"alpha", o_.thresholds.alpha},
                                        {"min_effect", o_.thresholds.min_effect},
                                        {"min_samples", o_.thresholds.min_samples},
                                        {"max_slowdown", o_.max_slowdown},
                                        {"fail_on_bit_change", o_.fail_on_bit_change}}},
                    {"result", result},
                    {"regression", out.regression},
                    {"regressions", regressions_},
                    {"verification_changes", verification_changes_},
                    {"verdicts", Json{{"SLOWER", verdict_counts_[Verdict::slower]},
                                      {"FASTER", verdict_counts_[Verdict::faster]},
                                      {"SAME", verdict_counts_[Verdict::same]},
                                      {"AMBIGUOUS", verdict_counts_[Verdict::ambiguous]}}},
                    {"outcome_regressions", outcome_regressions_},
                    {"cases_gone", gone_},
                    {"new_cases_not_passing", new_not_passing_},
                    {"bits_changed", bits_changed_},
                    {"launches_changed", launch_changes_},
                    {"first_variant_time_geomean", geomean},
                    {"slowdowns_over_gate", slowdowns_},
                    {"findings", std::move(findings)},
                    {"cases", cases_json_}};
    return out;
  }

  std::string markdown(const std::vector<const Finding*>& ordered, const std::string& result, const std::string& counts,
                       const std::string& verdict_line) const {
    auto cell = [](std::string s) {
      for (std::size_t at = 0; (at = s.find('|', at)) != std::string::npos; at += 2) s.replace(at, 1, "\\|");
      return s;
    };
    auto table = [&](const std::vector<const Finding*>& list) {
      std::string t = "| case / point | what | result | detail |\n|---|---|---|---|\n";
      for (const Finding* f : list)
        t += fmt::format("| {} | {} | {} | {} |\n", cell(f->subject), cell(f->item), f->result, cell(f->detail));
      return t;
    };
    std::vector<const Finding*> bad, good, rest;
    for (const Finding* f : ordered) (f->regression ? bad : f->improvement ? good : rest).push_back(f);
    std::string md = fmt::format("**fusebench compare: {}** ({} regressions, {} improvements, {} ambiguous) on scenario `{}`\n\n",
                                 result, bad.size(), good.size(), ambiguous_, head_["scenario"]["name"].get<std::string>());
    const std::string knobs = knob_changes();
    md += fmt::format("{}  \n{}  \n{}{}  \n{}\n\n", run_line("base", base_), run_line("head", head_),
                      knobs.empty() ? "" : "knobs differ: " + cell(knobs) + "  \n", counts, verdict_line);
    md += "### Regressions\n\n" + (bad.empty() ? std::string("none\n") : table(bad)) + "\n";
    md += "### Improvements\n\n" + (good.empty() ? std::string("none\n") : table(good)) + "\n";
    md += fmt::format("<details><summary>Everything else ({})</summary>\n\n{}\n</details>\n", rest.size(),
                      rest.empty() ? std::string("none\n") : table(rest));
    return md;
  }

  const Json& base_;
  const Json& head_;
  const CompareOptions& o_;
  std::vector<Finding> findings_;
  Json cases_json_ = Json::array();
  std::map<Verdict, int> verdict_counts_{{Verdict::slower, 0}, {Verdict::faster, 0}, {Verdict::same, 0}, {Verdict::ambiguous, 0}};
  int regressions_ = 0, ambiguous_ = 0, verification_changes_ = 0, outcome_regressions_ = 0, bits_changed_ = 0;
  int gone_ = 0, new_not_passing_ = 0, slowdowns_ = 0, ratios_ = 0, launch_changes_ = 0;
  double log_sum_ = 0;
};

}  // namespace

Comparison compare_reports(const Json& base, const Json& head, const CompareOptions& options) {
  check_comparable({{"BASE", base}, {"HEAD", head}});
  return Comparer(base, head, options).run();
}

}  // namespace fb
