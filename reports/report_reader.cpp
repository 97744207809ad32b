#include "reports/report_reader.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/json_input.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

// Explicit checks of every field compare and merge read, each failure one line naming the file
// and the JSON path: a malformed report is bad input (exit 2), never a crash or a silent
// half-comparison.
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
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
      fail(where + "." + key, "is not a positive number");
  }
  // Optional: a number or null when present.
  void number_or_null(const Json& obj, const std::string& where, const char* key) const {
    if (!obj.contains(key)) return;
    const Json& v = obj[key];
    if (!v.is_null() && !v.is_number()) fail(where + "." + key, "is not a number or null");
  }
  // Optional ablation check: null (the fusion does not apply) or an object with a string outcome
  // (and a string claim when it has one).
  void check(const Json& obj, const std::string& where, const char* key) const {
    if (!obj.contains(key) || obj[key].is_null()) return;
    const Json& c = object(obj, where, key);
    string(c, where + "." + key, "outcome");
    if (c.contains("claim")) string(c, where + "." + key, "claim");
  }
  // Optional "samples_us": every sample a positive finite number.
  void samples(const Json& timing, const std::string& where) const {
    if (!timing.contains("samples_us")) return;
    const Json& s = array(timing, where, "samples_us");
    for (std::size_t i = 0; i < s.size(); ++i)
      if (!s[i].is_number() || !(s[i].get<double>() > 0) || !std::isfinite(s[i].get<double>()))
        fail(fmt::format("{}.samples_us[{}]", where, i), "is not a positive number");
  }

 private:
  std::string path_;
};

void validate_common(const Json& j, const ReportValidator& v) {
  if (!j.is_object()) v.fail("$", "not a fusebench report (not a JSON object)");
  v.string(j, "$", "schema_version");
  const std::string version = j["schema_version"].get<std::string>();
  if (version.starts_with("1."))
    v.fail("$.schema_version", fmt::format("report schema {} was written before variants (schema 2); compare reads 2.x "
                                           "only: re-run the older build's bench, or compare it with that build",
                                           version));
  if (!version.starts_with("2.")) v.fail("$.schema_version", fmt::format("report schema {} is not readable by this build (2.x)", version));
  if (j.contains("report_kind")) {
    if (!j["report_kind"].is_string()) v.fail("$.report_kind", "is not a string");
    if (j["report_kind"] != "ablation")
      v.fail("$.report_kind", fmt::format("'{}' is not a report kind this build reads (ablation, or none for verify "
                                          "and bench)", j["report_kind"].get<std::string>()));
  }
  const Json& run = v.object(j, "$", "run");
  v.string(run, "$.run", "started_at");
  v.string(v.object(run, "$.run", "build"), "$.run.build", "git_sha");
  const Json& device = v.member(j, "$", "device");
  if (!device.is_null()) {
    v.string(device, "$.device", "name");
    v.string(device, "$.device", "arch");
  }
  v.string(v.object(j, "$", "scenario"), "$.scenario", "name");
  v.object(j, "$", "methodology");
}

void validate_cases(const Json& j, const ReportValidator& v) {
  const Json& cases = v.array(j, "$", "cases");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string at = fmt::format("$.cases[{}]", i);
    const Json& c = cases[i];
    v.string(c, at, "case");
    v.object(c, at, "point");
    v.string(c, at, "backend");
    v.string(c, at, "outcome");
    if (c.contains("claim") && !c["claim"].is_string()) v.fail(at + ".claim", "is not a string");
    if (c.contains("fingerprints")) {
      for (const auto& [name, value] : v.object(c, at, "fingerprints").items())
        if (!value.is_string()) v.fail(at + ".fingerprints." + name, "is not a string");
    }
    if (c.contains("launch_configs")) {  // schema 2.0.2, optional
      for (const auto& [variant, form] : v.object(c, at, "launch_configs").items())
        if (!form.is_string()) v.fail(at + ".launch_configs." + variant, "is not a string");
    }
    if (c.contains("checks")) {
      const Json& checks = v.array(c, at, "checks");
      for (std::size_t k = 0; k < checks.size(); ++k) {
        const std::string kat = fmt::format("{}.checks[{}]", at, k);
        v.string(checks[k], kat, "id");
        if (!v.member(checks[k], kat, "passed").is_boolean()) v.fail(kat + ".passed", "is not true or false");
        if (checks[k].contains("subject") && !checks[k]["subject"].is_string()) v.fail(kat + ".subject", "is not a string");
      }
    }
    if (!c.contains("timings")) continue;
    const Json& timings = v.array(c, at, "timings");
    for (std::size_t t = 0; t < timings.size(); ++t) {
      const std::string tat = fmt::format("{}.timings[{}]", at, t);
      v.string(timings[t], tat, "variant");
      v.string(timings[t], tat, "mode");
      v.positive(v.object(timings[t], tat, "time"), tat + ".time", "median_us");
      v.samples(timings[t], tat);
    }
  }
}

void validate_ablation(const Json& j, const ReportValidator& v) {
  const Json& points = v.array(j, "$", "points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string at = fmt::format("$.points[{}]", i);
    const Json& p = points[i];
    v.string(p, at, "id");
    if (p.contains("error")) v.string(p, at, "error");
    v.check(p, at, "all_off_check");
    const Json& configs = v.array(p, at, "configs");
    for (std::size_t c = 0; c < configs.size(); ++c) {
      const std::string cat = fmt::format("{}.configs[{}]", at, c);
      v.string(configs[c], cat, "name");
      v.positive(v.object(configs[c], cat, "time"), cat + ".time", "median_us");
      v.samples(configs[c], cat);
    }
    const Json& fusions = v.array(p, at, "fusions");
    for (std::size_t f = 0; f < fusions.size(); ++f) {
      const std::string fat = fmt::format("{}.fusions[{}]", at, f);
      v.string(fusions[f], fat, "fusion");
      v.check(fusions[f], fat, "check");
      v.number_or_null(fusions[f], fat, "share");
    }
  }
}

}  // namespace

Json load_report(const std::string& path) {
  // The checked reader: a size limit, a depth limit and duplicate keys refused, one-line errors.
  const Json j = parse_json_checked(read_input_file(path, "report", input_size_limit(kMaxReportBytes)), path);
  const ReportValidator v(path);
  validate_common(j, v);
  if (is_ablation(j))
    validate_ablation(j, v);
  else
    validate_cases(j, v);
  return j;
}

bool is_ablation(const Json& report) { return report.value("report_kind", "") == "ablation"; }
std::string report_kind(const Json& report) { return is_ablation(report) ? "ablation" : "cases"; }

std::string schema_major_minor(const std::string& version) {
  const std::size_t first = version.find('.');
  if (first == std::string::npos) return version;
  return version.substr(0, version.find('.', first + 1));
}

void check_comparable(const std::vector<NamedReport>& reports) {
  if (reports.empty()) return;
  const NamedReport& first = reports.front();
  auto kind_text = [](const Json& j) {
    return is_ablation(j) ? std::string("an ablation report") : std::string("a verify/bench report");
  };
  for (std::size_t i = 1; i < reports.size(); ++i) {
    const NamedReport& r = reports[i];
    const std::string a = first.json["schema_version"].get<std::string>(), b = r.json["schema_version"].get<std::string>();
    if (schema_major_minor(a) != schema_major_minor(b))
      throw InputError(fmt::format("{}: $.schema_version: {} differs from {} in {}: reports of different schema versions "
                                   "are not compared",
                                   r.path, b, a, first.path));
    if (is_ablation(first.json) != is_ablation(r.json))
      throw InputError(fmt::format("{}: $.report_kind: {} cannot be compared with {} ({})", r.path, kind_text(r.json),
                                   kind_text(first.json), first.path));
    const std::string sa = first.json["scenario"]["name"].get<std::string>(), sb = r.json["scenario"]["name"].get<std::string>();
    if (sa != sb)
      throw InputError(fmt::format("{}: $.scenario.name: scenario '{}' differs from '{}' in {}", r.path, sb, sa, first.path));
  }
}

std::string report_point_text(const Json& point) {
  std::string s;
  for (const auto& [k, v] : point.items())
    s += (s.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return s;
}

std::vector<double> samples_of(const Json& timing) {
  std::vector<double> s;
  if (timing.contains("samples_us") && timing["samples_us"].is_array())
    for (const Json& x : timing["samples_us"]) s.push_back(x.get<double>());
  return s;
}

}  // namespace fb
