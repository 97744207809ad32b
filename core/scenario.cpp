#include "core/scenario.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void reject(const std::string& path, const std::string& key, const std::string& why) {
  throw InputError(fmt::format("{}: {}: {}", path, key, why));
}

AxisValue to_axis_value(const Json& v, const AxisSpec& axis, const std::string& path, const std::string& key) {
  AxisValue value;
  if (v.is_number_integer())
    value = v.get<std::int64_t>();
  else if (v.is_string())
    value = v.get<std::string>();
  else
    reject(path, key, fmt::format("axis {} takes {}, got {}", axis.name,
                                  axis.kind == AxisSpec::Kind::integer ? "an integer" : "a string", v.dump()));
  if (const std::string why = axis.reject_reason(value); !why.empty()) reject(path, key, why);
  return value;
}

std::vector<AxisValue> axis_values(const Json& v, const AxisSpec& axis, const std::string& path,
                                   const std::string& key) {
  std::vector<AxisValue> out;
  if (!v.is_array()) {
    out.push_back(to_axis_value(v, axis, path, key));
    return out;
  }
  if (v.empty()) reject(path, key, "an empty list sweeps nothing");
  for (const Json& item : v) out.push_back(to_axis_value(item, axis, path, key));
  return out;
}

void expand_sweep(const KernelCase& kc, const Json& sweep, const Json& defaults, const std::string& path,
                  const std::string& origin, std::vector<ScenarioPoint>& out) {
  if (!sweep.is_object()) reject(path, origin, "a sweep is an object of axis values");
  for (const auto& [key, value] : sweep.items()) {
    if (!kc.axis(key)) {
      std::vector<std::string> names;
      for (const AxisSpec& a : kc.axes) names.push_back(a.name);
      reject(path, origin + "." + key, fmt::format("unknown axis of {} (axes: {})", kc.name, fmt::join(names, ", ")));
    }
  }
  // Values per axis, in declaration order.
  std::vector<std::pair<std::string, std::vector<AxisValue>>> lists;
  for (const AxisSpec& axis : kc.axes) {
    const std::string key = origin + "." + axis.name;
    if (sweep.contains(axis.name))
      lists.emplace_back(axis.name, axis_values(sweep.at(axis.name), axis, path, key));
    else if (defaults.contains(axis.name))
      lists.emplace_back(axis.name, axis_values(defaults.at(axis.name), axis, path, "defaults." + axis.name));
    else if (axis.default_value)
      lists.emplace_back(axis.name, std::vector<AxisValue>{*axis.default_value});
    else
      reject(path, origin, fmt::format("axis {} has no default: give it a value ({})", axis.name, axis.help));
  }
  // Cartesian product, last axis fastest.
  std::vector<std::size_t> index(lists.size(), 0);
  for (;;) {
    Point p;
    for (std::size_t a = 0; a < lists.size(); ++a) p.set(lists[a].first, lists[a].second[index[a]]);
    try {
      (void)kc.make(p);  // validates the shape
    } catch (const InputError& e) {
      reject(path, origin, fmt::format("{} {}: {}", kc.name, p.text(), e.what()));
    }
    const bool duplicate = std::any_of(out.begin(), out.end(),
                                       [&](const ScenarioPoint& s) { return s.kernel == &kc && s.point == p; });
    if (!duplicate) out.push_back(ScenarioPoint{&kc, p, origin});
    std::size_t a = lists.size();
    while (a > 0) {
      --a;
      if (++index[a] < lists[a].second.size()) break;
      index[a] = 0;
      if (a == 0) return;
    }
    if (lists.empty()) return;
  }
}

}  // namespace

std::string scenarios_dir() {
  if (const char* env = std::getenv("FUSEBENCH_SCENARIOS")) return env;
  return std::string(FUSEBENCH_SOURCE_DIR) + "/scenarios";
}

std::string resolve_scenario_path(const std::string& name_or_path) {
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json")) return name_or_path;
  return scenarios_dir() + "/" + name_or_path + ".json";
}

std::vector<std::string> scenario_files() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(scenarios_dir(), ec))
    if (entry.path().extension() == ".json") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

Scenario load_scenario(const std::string& name_or_path, const Registry& registry) {
  const std::string path = resolve_scenario_path(name_or_path);
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open scenario file", path));
  std::stringstream text;
  text << in.rdbuf();
  return parse_scenario(text.str(), path, registry);
}

Scenario parse_scenario(const std::string& text, const std::string& path, const Registry& registry) {
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    std::string what = e.what();
    if (const auto p = what.find("] "); what.starts_with("[json.exception") && p != std::string::npos)
      what = what.substr(p + 2);
    throw InputError(fmt::format("{}: malformed JSON: {}", path, what));
  }
  if (!doc.is_object()) reject(path, "(top level)", "a scenario is a JSON object");
  static const std::set<std::string> known{"fusebench_scenario", "name", "description", "model",
                                           "workloads",          "defaults", "cases"};
  for (const auto& [key, value] : doc.items())
    if (!known.count(key))
      reject(path, key, "unknown key (known: fusebench_scenario, name, description, model, workloads, defaults, cases)");
  if (!doc.contains("fusebench_scenario") || doc["fusebench_scenario"] != 1)
    reject(path, "fusebench_scenario", "must be 1 (the scenario format version this build reads)");

  Scenario s;
  s.path = path;
  auto text_field = [&](const char* key, bool required) -> std::string {
    if (!doc.contains(key)) {
      if (required) reject(path, key, "missing");
      return {};
    }
    if (!doc[key].is_string()) reject(path, key, "must be a string");
    return doc[key].get<std::string>();
  };
  s.name = text_field("name", true);
  s.description = text_field("description", false);
  for (const char* key : {"model", "workloads", "defaults"})
    if (doc.contains(key) && !doc[key].is_object()) reject(path, key, "must be an object");
  if (doc.contains("model")) s.model = doc["model"];
  if (doc.contains("workloads")) s.workloads = doc["workloads"];
  const Json defaults = doc.value("defaults", Json::object());
  for (const auto& [axis, value] : defaults.items()) {
    const bool used = std::any_of(registry.cases().begin(), registry.cases().end(),
                                  [&](const KernelCase& kc) { return kc.axis(axis) != nullptr; });
    if (!used) reject(path, "defaults." + axis, "no kernel case has this axis");
  }
  if (!doc.contains("cases") || !doc["cases"].is_object() || doc["cases"].empty())
    reject(path, "cases", "missing or empty: name at least one kernel case");

  for (const auto& [name, sweeps] : doc["cases"].items()) {
    const KernelCase* kc = registry.find(name);
    if (!kc) {
      std::vector<std::string> names;
      for (const KernelCase& c : registry.cases()) names.push_back(c.name);
      reject(path, "cases." + name, fmt::format("unknown kernel case (known: {})", fmt::join(names, ", ")));
    }
    if (sweeps.is_array()) {
      if (sweeps.empty()) reject(path, "cases." + name, "an empty list runs nothing");
      for (std::size_t i = 0; i < sweeps.size(); ++i)
        expand_sweep(*kc, sweeps[i], defaults, path, fmt::format("cases.{}[{}]", name, i), s.points);
    } else {
      expand_sweep(*kc, sweeps, defaults, path, "cases." + name, s.points);
    }
  }
  return s;
}

std::map<std::string, std::string> parse_where(const std::string& text) {
  std::map<std::string, std::string> where;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw InputError(fmt::format("--where: '{}' is not axis=value", item));
    where[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return where;
}

bool point_matches(const Point& point, const std::map<std::string, std::string>& where) {
  for (const auto& [axis, values] : where) {
    if (!point.has(axis)) return false;
    // "T=1|24|192": any of the alternatives.
    const std::string text = axis_value_text(point.at(axis));
    bool any = false;
    std::stringstream alternatives(values);
    for (std::string v; std::getline(alternatives, v, '|') && !any;) any = v == text;
    if (!any) return false;
  }
  return true;
}

}  // namespace fb
