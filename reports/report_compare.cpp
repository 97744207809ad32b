#include "reports/report_compare.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "reports/console_table.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

std::string case_key(const Json& c) {
  return c.value("case", "?") + " " + c.value("point", Json::object()).dump() + " " + c.value("backend", "?");
}

std::string point_text(const Json& c) {
  std::string s;
  const Json point = c.value("point", Json::object());  // items() must not outlive its object
  for (const auto& [k, v] : point.items())
    s += (s.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return s;
}

bool is_pass(const Json& c) { return c.value("outcome", "") == "pass"; }

std::string device_text(const Json& report) {
  const Json& d = report.value("device", Json());
  if (d.is_null()) return "CPU emulation";
  return d.value("name", "?") + " (" + d.value("arch", "?") + ")";
}

}  // namespace

namespace {

// Explicit checks of every field compare reads, each failure one line naming the file and the
// JSON path: a malformed report is bad input (exit 2), never a crash or a silent half-comparison.
class ReportValidator {
 public:
  explicit ReportValidator(std::string path) : path_(std::move(path)) {}
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(fmt::format("{}: {}: {}", path_, where, what));
  }
  const Json& member(const Json& obj, const std::string& where, const char* key) const {
    if (!obj.is_object()) fail(where, "is not an object");
    const auto it = obj.find(key);
    if (it == obj.end()) fail(where + "." + key, "missing");
    return *it;
  }
  const Json& object(const Json& obj, const std::string& where, const char* key) const {
    const Json& v = member(obj, where, key);
    if (!v.is_object()) fail(where + "." + key, "is not an object");
    return v;
  }
  const Json& array(const Json& obj, const std::string& where, const char* key) const {
    const Json& v = member(obj, where, key);
    if (!v.is_array()) fail(where + "." + key, "is not an array");
    return v;
  }
  void string(const Json& obj, const std::string& where, const char* key) const {
    if (!member(obj, where, key).is_string()) fail(where + "." + key, "is not a string");
  }
  void positive(const Json& obj, const std::string& where, const char* key) const {
    const Json& v = member(obj, where, key);
    if (!v.is_number() || !(v.get<double>() > 0)) fail(where + "." + key, "is not a positive number");
  }

 private:
  std::string path_;
};

void validate_report(const Json& j, const std::string& path) {
  const ReportValidator v(path);
  if (!j.is_object()) v.fail("$", "not a fusebench report (not a JSON object)");
  v.string(j, "$", "schema_version");
  const std::string version = j["schema_version"].get<std::string>();
  if (version.starts_with("1."))
    v.fail("$.schema_version", fmt::format("report schema {} was written before variants (schema 2); compare reads 2.x "
                                           "only: re-run the older build's bench, or compare it with that build",
                                           version));
  if (!version.starts_with("2.")) v.fail("$.schema_version", fmt::format("report schema {} is not readable by this build (2.x)", version));
  const Json& run = v.object(j, "$", "run");
  v.string(run, "$.run", "started_at");
  v.string(v.object(run, "$.run", "build"), "$.run.build", "git_sha");
  const Json& device = v.member(j, "$", "device");
  if (!device.is_null()) {
    v.string(device, "$.device", "name");
    v.string(device, "$.device", "arch");
  }
  const Json& cases = v.array(j, "$", "cases");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string at = fmt::format("$.cases[{}]", i);
    const Json& c = cases[i];
    v.string(c, at, "case");
    v.object(c, at, "point");
    v.string(c, at, "backend");
    v.string(c, at, "outcome");
    if (c.contains("fingerprints")) {
      for (const auto& [name, value] : v.object(c, at, "fingerprints").items())
        if (!value.is_string()) v.fail(at + ".fingerprints." + name, "is not a string");
    }
    if (!c.contains("timings")) continue;
    const Json& timings = v.array(c, at, "timings");
    for (std::size_t t = 0; t < timings.size(); ++t) {
      const std::string tat = fmt::format("{}.timings[{}]", at, t);
      v.string(timings[t], tat, "variant");
      v.string(timings[t], tat, "mode");
      v.positive(v.object(timings[t], tat, "time"), tat + ".time", "median_us");
    }
  }
}

}  // namespace

Json load_report(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open report", path));
  std::stringstream text;
  text << in.rdbuf();
  Json j;
  try {
    j = Json::parse(text.str());
  } catch (const Json::parse_error& e) {
    throw InputError(fmt::format("{}: malformed JSON report: {}", path, e.what()));
  }
  validate_report(j, path);
  return j;
}

Comparison compare_reports(const Json& base, const Json& head, const CompareOptions& options) {
  Comparison out;
  std::map<std::string, const Json*> base_cases, head_cases;
  for (const Json& c : base["cases"]) base_cases[case_key(c)] = &c;
  for (const Json& c : head["cases"]) head_cases[case_key(c)] = &c;

  std::vector<std::vector<std::string>> rows;
  Json changes = Json::array();
  double log_sum = 0;
  int ratios = 0, bit_changes = 0, outcome_regressions = 0, slowdowns = 0;
  for (const auto& [key, h] : head_cases) {
    const auto it = base_cases.find(key);
    if (it == base_cases.end()) {
      rows.push_back({(*h)["case"], point_text(*h), is_pass(*h) ? std::string("new") : fmt::format("new, {} !", h->value("outcome", "?")),
                      "-", "-", ""});
      continue;
    }
    const Json& b = *it->second;
    Json change{{"case", (*h)["case"]}, {"point", (*h)["point"]}, {"backend", (*h)["backend"]},
                {"outcome", Json{{"base", b["outcome"]}, {"head", (*h)["outcome"]}}}};
    const bool regressed = is_pass(b) && !is_pass(*h);
    outcome_regressions += regressed ? 1 : 0;
    // Fingerprints: which outputs changed bit for bit.
    std::vector<std::string> changed;
    const Json bf = b.value("fingerprints", Json::object()), hf = h->value("fingerprints", Json::object());
    for (const auto& [name, value] : hf.items())
      if (bf.contains(name) && bf[name] != value) changed.push_back(name);
    bit_changes += static_cast<int>(changed.size());
    change["bits_changed"] = changed;
    // Timings: head / base per variant and mode; the first variant (the fused kernel of a
    // fused/chain case) carries the headline ratio and the geometric mean.
    std::string fused_ratio = "-";
    Json ratios_json = Json::object();
    const Json variants = h->value("variants", Json::array());
    const std::string headline = !variants.empty() && variants[0].is_string() ? variants[0].get<std::string>() : "fused";
    for (const Json& ht : h->value("timings", Json::array())) {
      for (const Json& bt : b.value("timings", Json::array())) {
        if (ht["variant"] != bt["variant"] || ht["mode"] != bt["mode"]) continue;
        const double r = ht["time"]["median_us"].get<double>() / bt["time"]["median_us"].get<double>();
        ratios_json[ht["variant"].get<std::string>() + "/" + ht["mode"].get<std::string>()] = r;
        if (ht["variant"] == headline) {
          log_sum += std::log(r);
          ++ratios;
          if (fused_ratio == "-") fused_ratio = fmt::format("{:.3f}x", r);
          if (options.max_slowdown > 0 && r > options.max_slowdown) ++slowdowns;
        }
      }
    }
    change["time_ratio"] = ratios_json;
    changes.push_back(change);
    rows.push_back({(*h)["case"], point_text(*h),
                    b["outcome"].get<std::string>() + " -> " + (*h)["outcome"].get<std::string>() + (regressed ? " !" : ""),
                    changed.empty() ? "same" : fmt::format("{} changed", changed.size()), fused_ratio, ""});
  }
  // A case that vanished, or that is new and does not pass, is a regression too: otherwise a run
  // that errors before reaching a case (or records it under another backend) would look clean.
  int vanished = 0, new_not_passing = 0;
  for (const auto& [key, b] : base_cases) {
    if (head_cases.count(key)) continue;
    ++vanished;
    rows.push_back({(*b)["case"], point_text(*b), "gone !", "-", "-", ""});
  }
  for (const auto& [key, h] : head_cases)
    if (!base_cases.count(key) && !is_pass(*h)) ++new_not_passing;

  const double geomean = ratios ? std::exp(log_sum / ratios) : 0.0;
  out.text = fmt::format("base: {} on {} ({})\nhead: {} on {} ({})\n\n",
                         base["run"].value("started_at", "?"), device_text(base),
                         std::string(base["run"]["build"].value("git_sha", "?")).substr(0, 12),
                         head["run"].value("started_at", "?"), device_text(head),
                         std::string(head["run"]["build"].value("git_sha", "?")).substr(0, 12));
  out.text += render_table({"case", "point", "outcome", "output bits", "first variant time", ""}, rows,
                           {false, false, false, false, true, false});
  out.text += fmt::format("\n{} outcome regressions, {} outputs changed bits, first-variant time geomean {}\n",
                          outcome_regressions, bit_changes, ratios ? fmt::format("{:.3f}x over {} cases", geomean, ratios) : "n/a");
  if (vanished || new_not_passing)
    out.text += fmt::format("{} cases gone from head, {} new cases that do not pass\n", vanished, new_not_passing);
  out.regression = outcome_regressions > 0 || vanished > 0 || new_not_passing > 0 || slowdowns > 0 ||
                   (options.fail_on_bit_change && bit_changes > 0);
  out.json = Json{{"base", Json{{"device", device_text(base)}, {"started_at", base["run"].value("started_at", "")}}},
                  {"head", Json{{"device", device_text(head)}, {"started_at", head["run"].value("started_at", "")}}},
                  {"outcome_regressions", outcome_regressions},
                  {"cases_gone", vanished},
                  {"new_cases_not_passing", new_not_passing},
                  {"bits_changed", bit_changes},
                  {"first_variant_time_geomean", geomean},
                  {"slowdowns_over_gate", slowdowns},
                  {"regression", out.regression},
                  {"cases", changes}};
  return out;
}

}  // namespace fb
