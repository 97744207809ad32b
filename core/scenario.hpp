// Scenarios: JSON workloads that name the cases to run and sweep their axes.
//
//   {
//     "fusebench_scenario": 1,
//     "name": "ci-quick", "description": "...",
//     "model": { ... }, "workloads": { ... },        // recorded in reports as given
//     "defaults": { "fp8": "e4m3fn" },              // axis values for every case that has the axis
//     "cases": {
//       "fp8_quant/per_1x128": [ { "M": [1, 3], "K": 6144, "scale_layout": ["row_major", "k_major"] } ]
//     }
//   }
// Each object under a case is a sweep: the cartesian product of its values; axes it leaves out take
// the scenario default, then the case default. Anything unknown or impossible is an InputError that
// names the file, the key and why, quoting at most a short excerpt of what the file holds.
//
// Limits (each an InputError, exit 2, naming the limit):
//   - the file: 16 MiB (FUSEBENCH_MAX_INPUT_BYTES overrides), JSON nesting at most 64 levels, each
//     key once per object (core/json_input.hpp);
//   - name: a non-empty string; name and description at most 4096 bytes;
//   - model and workloads (notes copied into every report): objects nesting at most 4 levels, at
//     most 10000 values together, strings at most 4096 bytes, finite numbers;
//   - points: at most 100000 after expanding every sweep (split a larger scenario); every tensor of
//     every point has a byte size that fits int64 (the memory guard then compares it with the
//     machine when the point runs).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/ablation_section.hpp"
#include "core/registry.hpp"

namespace fb {

inline constexpr std::size_t kMaxScenarioPoints = 100000;
inline constexpr int kMaxNoteDepth = 4;
inline constexpr std::size_t kMaxNoteValues = 10000;
inline constexpr std::size_t kMaxNoteString = 4096;

struct ScenarioPoint {
  const KernelCase* kernel = nullptr;
  Point point;
  std::string origin;  // "cases.fp8_quant/per_token[0]"
};

struct Scenario {
  std::string path;
  std::string name;
  std::string description;
  nlohmann::ordered_json model = nlohmann::ordered_json::object();
  nlohmann::ordered_json workloads = nlohmann::ordered_json::object();
  std::vector<ScenarioPoint> points;
  std::optional<AblationSection> ablation;  // `fusebench ablate`'s layer and points, when given
};

// "m31-flash-tp4" -> <scenarios dir>/m31-flash-tp4.json; a path with a '/' or ".json" is used as is.
std::string resolve_scenario_path(const std::string& name_or_path);
std::string scenarios_dir();
std::vector<std::string> scenario_files();

Scenario load_scenario(const std::string& name_or_path, const Registry& registry);
Scenario parse_scenario(const std::string& text, const std::string& path, const Registry& registry);

// --where "M=24,K=6144" or "M=3|24|192": axis filters ('|' separates alternatives). An axis given
// twice is an InputError (it would silently narrow to the last).
std::map<std::string, std::string> parse_where(const std::string& text);
bool point_matches(const Point& point, const std::map<std::string, std::string>& where);

}  // namespace fb
