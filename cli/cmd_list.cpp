// fusebench list: kernel cases (with claim and axes), the fusion series, and the scenarios.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/errors.hpp"
#include "core/registry.hpp"
#include "core/scenario.hpp"
#include "kernels/fusions.hpp"
#include "reports/console_table.hpp"

namespace fb {
namespace {

struct ListOptions {
  std::string what = "all";
  bool json = false;
};

std::string axes_text(const KernelCase& kc) {
  std::string s;
  for (const AxisSpec& a : kc.axes) {
    s += (s.empty() ? "" : " ") + a.name;
    if (a.kind == AxisSpec::Kind::choice) s += "{" + fmt::format("{}", fmt::join(a.choices, "|")) + "}";
    if (a.default_value) s += "=" + axis_value_text(*a.default_value);
  }
  return s;
}

// Each scenario file loaded once: its name, point count and description, or why it is invalid.
struct ScenarioEntry {
  std::string path;
  bool valid = false;
  std::string name, description, error;
  std::size_t points = 0;
};

std::vector<ScenarioEntry> scenario_entries(const Registry& registry) {
  std::vector<ScenarioEntry> entries;
  for (const std::string& path : scenario_files()) {
    ScenarioEntry e;
    e.path = path;
    try {
      const Scenario s = load_scenario(path, registry);
      e.valid = true;
      e.name = s.name;
      e.description = s.description;
      e.points = s.points.size();
    } catch (const InputError& error) {
      e.error = error.what();
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

nlohmann::ordered_json list_json(const Registry& registry, const std::string& what) {
  const bool all = what == "all";
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (all || what == "kernels") j["kernels"] = nlohmann::ordered_json::array();
  for (const KernelCase& kc : registry.cases()) {
    if (!j.contains("kernels")) break;
    nlohmann::ordered_json axes = nlohmann::ordered_json::array();
    for (const AxisSpec& a : kc.axes) {
      nlohmann::ordered_json aj{{"name", a.name}, {"help", a.help}};
      if (a.kind == AxisSpec::Kind::choice) aj["choices"] = a.choices;
      if (a.default_value) aj["default"] = axis_value_text(*a.default_value);
      axes.push_back(aj);
    }
    // Each variant as the runners see it: what runs, its launches, its claim against the emulation,
    // and the outputs it writes ("all", or the ones it names: VariantSpec::writes).
    nlohmann::ordered_json details = nlohmann::ordered_json::array();
    for (const VariantSpec& v : kc.variants) {
      details.push_back({{"name", v.name},
                         {"summary", v.summary},
                         {"launches", v.launches},
                         {"deterministic", v.deterministic},
                         {"emulation", v.has_emulation ? v.emulation.text() : std::string("none")},
                         {"writes", v.writes.empty() ? nlohmann::ordered_json("all") : nlohmann::ordered_json(v.writes)}});
    }
    j["kernels"].push_back({{"name", kc.name}, {"family", kc.family}, {"fusion", kc.fusion}, {"claim", kc.claims_text()},
                            {"variants", kc.variants_text()}, {"variant_details", details}, {"summary", kc.summary},
                            {"spec", kc.spec}, {"axes", axes}});
  }
  if (all || what == "fusions") {
    j["fusions"] = nlohmann::ordered_json::array();
    for (const FusionInfo& f : fusion_series())
      j["fusions"].push_back({{"id", f.id}, {"fused", f.fused}, {"chain", f.chain}, {"claim", f.claim}});
  }
  if (all || what == "scenarios") {
    j["scenarios"] = nlohmann::ordered_json::array();
    for (const ScenarioEntry& e : scenario_entries(registry)) {
      nlohmann::ordered_json sj{{"path", e.path}, {"valid", e.valid}};
      if (e.valid) {
        sj["name"] = e.name;
        sj["points"] = e.points;
        sj["description"] = e.description;
      } else {
        sj["error"] = e.error;
      }
      j["scenarios"].push_back(std::move(sj));
    }
  }
  return j;
}

}  // namespace

Command setup_list(CLI::App& app) {
  auto o = std::make_shared<ListOptions>();
  CLI::App* sub = app.add_subcommand("list", "list kernel cases, the fusion series and scenarios");
  sub->add_option("what", o->what, "kernels | fusions | scenarios | all")
      ->check(CLI::IsMember({"kernels", "fusions", "scenarios", "all"}))
      ->capture_default_str();
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->footer(
      "Examples:\n"
      "  fusebench list\n"
      "  fusebench list kernels --json\n"
      "  fusebench list scenarios");
  return {sub, [o]() -> int {
            Registry registry;
            register_all_families(registry);
            if (o->json) {
              std::cout << list_json(registry, o->what).dump(2) << "\n";
              return 0;
            }
            const bool all = o->what == "all";
            if (all || o->what == "kernels") {
              std::vector<std::vector<std::string>> rows;
              for (const KernelCase& kc : registry.cases())
                rows.push_back({kc.name, kc.fusion, kc.variants_text(), kc.claims_text(), axes_text(kc)});
              std::cout << "Kernel cases\n"
                        << render_table({"case", "fusion", "variants", "claims", "axes (default)"}, rows, {}) << "\n";
            }
            if (all || o->what == "fusions") {
              std::vector<std::vector<std::string>> rows;
              for (const FusionInfo& f : fusion_series()) {
                int cases = 0;
                for (const KernelCase& kc : registry.cases()) cases += kc.fusion == f.id ? 1 : 0;
                rows.push_back({f.id, f.fused, f.claim, cases ? std::to_string(cases) + " cases" : "not yet"});
              }
              std::cout << "Fusion series (docs/model.md)\n"
                        << render_table({"id", "fused kernel", "claim", "in this build"}, rows, {}) << "\n";
            }
            if (all || o->what == "scenarios") {
              std::vector<std::vector<std::string>> rows;
              for (const ScenarioEntry& e : scenario_entries(registry))
                rows.push_back(e.valid ? std::vector<std::string>{e.name, std::to_string(e.points), e.path, e.description}
                                       : std::vector<std::string>{"(invalid)", "-", e.path, e.error});
              std::cout << "Scenarios (" << scenarios_dir() << ")\n"
                        << render_table({"name", "points", "path", "description"}, rows, {false, true, false, false});
            }
            return 0;
          }};
}

}  // namespace fb
