#include "core/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <unordered_set>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/json_input.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void reject(const std::string& path, const std::string& key, const std::string& why) {
  throw InputError(fmt::format("{}: {}: {}", path, key, why));
}

// A key as quoted in a message: keys come from the file and may be a megabyte long.
std::string key_text(const std::string& key) { return text_excerpt(key, 80); }

AxisValue to_axis_value(const Json& v, const AxisSpec& axis, const std::string& path, const std::string& key) {
  AxisValue value;
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    reject(path, key, fmt::format("axis {} takes an integer no larger than {}, got {}", axis.name,
                                  std::min(axis.max, kMaxAxisInteger), v.get<std::uint64_t>()));
  if (v.is_number_integer())
    value = v.get<std::int64_t>();
  else if (v.is_string())
    value = v.get<std::string>();
  else
    reject(path, key, fmt::format("axis {} takes {}, got {}", axis.name,
                                  axis.kind == AxisSpec::Kind::integer ? "an integer" : "a string", json_excerpt(v)));
  if (const std::string why = axis.reject_reason(value); !why.empty()) reject(path, key, why);
  return value;
}

// model and workloads are free-form notes copied into every report, so they are held to what a
// note needs (see scenario.hpp): shallow, finite, and small.
void check_notes(const Json& v, const std::string& path, const std::string& key, int depth, std::size_t& values) {
  if (++values > kMaxNoteValues)
    reject(path, key, fmt::format("more than {} values in model and workloads together (they are notes)", kMaxNoteValues));
  if (v.is_object() || v.is_array()) {
    if (depth >= kMaxNoteDepth)
      reject(path, key, fmt::format("nested deeper than {} levels (model and workloads are notes)", kMaxNoteDepth));
    if (v.is_object())
      for (const auto& [k, item] : v.items()) check_notes(item, path, key + "." + key_text(k), depth + 1, values);
    else
      for (std::size_t i = 0; i < v.size(); ++i) check_notes(v[i], path, fmt::format("{}[{}]", key, i), depth + 1, values);
  } else if (v.is_string()) {
    if (v.get_ref<const std::string&>().size() > kMaxNoteString)
      reject(path, key, fmt::format("a string longer than {} bytes (model and workloads are notes)", kMaxNoteString));
  } else if (v.is_number_float() && !std::isfinite(v.get<double>())) {
    reject(path, key, "a number out of range");
  } else if (v.is_binary()) {
    reject(path, key, "binary values are not JSON");
  }
}

std::vector<AxisValue> axis_values(const Json& v, const AxisSpec& axis, const std::string& path,
                                   const std::string& key) {
  std::vector<AxisValue> out;
  if (!v.is_array()) {
    out.push_back(to_axis_value(v, axis, path, key));
    return out;
  }
  if (v.empty()) reject(path, key, "an empty list sweeps nothing");
  if (v.size() > kMaxScenarioPoints)
    reject(path, key, fmt::format("{} values, more than the {} points a scenario may have: split it", v.size(),
                                  kMaxScenarioPoints));
  for (const Json& item : v) out.push_back(to_axis_value(item, axis, path, key));
  return out;
}

// Points already taken, by case and point text: de-duplication in O(1) per point.
using SeenPoints = std::unordered_set<std::string>;

void expand_sweep(const KernelCase& kc, const Json& sweep, const Json& defaults, const std::string& path,
                  const std::string& origin, std::vector<ScenarioPoint>& out, SeenPoints& seen) {
  if (!sweep.is_object()) reject(path, origin, "a sweep is an object of axis values");
  for (const auto& [key, value] : sweep.items()) {
    if (!kc.axis(key)) {
      std::vector<std::string> names;
      for (const AxisSpec& a : kc.axes) names.push_back(a.name);
      reject(path, origin + "." + key_text(key),
             fmt::format("unknown axis of {} (axes: {})", kc.name, fmt::join(names, ", ")));
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
  // The product's size before building it: a few short lists can multiply past any machine.
  std::uint64_t count = 1;
  for (const auto& list : lists) {
    count *= list.second.size();
    if (count + out.size() > kMaxScenarioPoints)
      reject(path, origin, fmt::format("sweeps more than {} points (the limit per scenario): split it", kMaxScenarioPoints));
  }
  // Cartesian product, last axis fastest.
  std::vector<std::size_t> index(lists.size(), 0);
  for (;;) {
    Point p;
    for (std::size_t a = 0; a < lists.size(); ++a) p.set(lists[a].first, lists[a].second[index[a]]);
    try {
      // Validates the shape, and that every tensor's size is a number (no int64 overflow).
      const auto instance = kc.make(p);
      (void)checked_bytes(instance->inputs());
      (void)checked_bytes(instance->outputs());
    } catch (const InputError& e) {
      reject(path, origin, fmt::format("{} {}: {}", kc.name, p.text(), e.what()));
    }
    if (seen.insert(kc.name + '\n' + p.where_text()).second) out.push_back(ScenarioPoint{&kc, p, origin});
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
  return parse_scenario(read_input_file(path, "scenario file", input_size_limit(kMaxScenarioBytes)), path, registry);
}

Scenario parse_scenario(const std::string& text, const std::string& path, const Registry& registry) {
  Json doc = parse_json_checked(text, path);
  if (!doc.is_object()) reject(path, "(top level)", "a scenario is a JSON object");
  static const std::set<std::string> known{"fusebench_scenario", "name", "description", "model",
                                           "workloads",          "defaults", "cases", "ablation"};
  for (const auto& [key, value] : doc.items())
    if (!known.count(key))
      reject(path, key_text(key),
             "unknown key (known: fusebench_scenario, name, description, model, workloads, defaults, cases, ablation)");
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
    const std::string& value = doc[key].get_ref<const std::string&>();
    if (required && value.empty()) reject(path, key, "must not be empty");
    if (value.size() > kMaxNoteString) reject(path, key, fmt::format("longer than {} bytes", kMaxNoteString));
    return value;
  };
  s.name = text_field("name", true);
  s.description = text_field("description", false);
  for (const char* key : {"model", "workloads", "defaults"})
    if (doc.contains(key) && !doc[key].is_object()) reject(path, key, "must be an object");
  std::size_t note_values = 0;
  for (const char* key : {"model", "workloads"})
    if (doc.contains(key)) check_notes(doc[key], path, key, 0, note_values);
  if (doc.contains("model")) s.model = doc["model"];
  if (doc.contains("workloads")) s.workloads = doc["workloads"];
  if (doc.contains("ablation")) s.ablation = parse_ablation_section(doc["ablation"], s.model, path);
  const Json defaults = doc.value("defaults", Json::object());
  for (const auto& item : defaults.items()) {
    const std::string& axis = item.key();  // not a structured binding: clang 14 cannot capture those
    const bool used = std::any_of(registry.cases().begin(), registry.cases().end(),
                                  [&](const KernelCase& kc) { return kc.axis(axis) != nullptr; });
    if (!used) reject(path, "defaults." + key_text(axis), "no kernel case has this axis");
  }
  if (!doc.contains("cases") || !doc["cases"].is_object() || doc["cases"].empty())
    reject(path, "cases", "missing or empty: name at least one kernel case");

  SeenPoints seen;
  for (const auto& [name, sweeps] : doc["cases"].items()) {
    const KernelCase* kc = registry.find(name);
    if (!kc) {
      std::vector<std::string> names;
      for (const KernelCase& c : registry.cases()) names.push_back(c.name);
      reject(path, "cases." + key_text(name), fmt::format("unknown kernel case (known: {})", fmt::join(names, ", ")));
    }
    if (sweeps.is_array()) {
      if (sweeps.empty()) reject(path, "cases." + name, "an empty list runs nothing");
      for (std::size_t i = 0; i < sweeps.size(); ++i)
        expand_sweep(*kc, sweeps[i], defaults, path, fmt::format("cases.{}[{}]", name, i), s.points, seen);
    } else {
      expand_sweep(*kc, sweeps, defaults, path, "cases." + name, s.points, seen);
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
      throw InputError(fmt::format("--where: '{}' is not axis=value", text_excerpt(item)));
    const std::string axis = item.substr(0, eq);
    if (!where.emplace(axis, item.substr(eq + 1)).second)
      throw InputError(fmt::format("--where: axis {} is given twice (for alternatives write {}=A|B)",
                                   text_excerpt(axis), text_excerpt(axis)));
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
