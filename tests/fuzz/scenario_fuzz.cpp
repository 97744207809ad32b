// libFuzzer target: the scenario loader with the real registry, on any bytes. Whatever the input,
// parse_scenario returns a scenario or throws InputError (exit 2): a crash, a hang, a sanitizer
// report or any other exception is a bug. Also fuzzes --where parsing on the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "core/scenario.hpp"

namespace {

const fb::Registry& registry() {
  static const fb::Registry* r = [] {
    auto* reg = new fb::Registry;
    fb::register_all_families(*reg);
    return reg;
  }();
  return *r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const fb::Scenario s = fb::parse_scenario(text, "fuzz.json", registry());
    // What a run does next with a loaded scenario: name points, record the notes.
    for (const fb::ScenarioPoint& p : s.points) (void)p.point.where_text();
    (void)s.model.dump();
    (void)s.workloads.dump();
  } catch (const fb::InputError&) {
  }
  try {
    const auto where = fb::parse_where(text);
    (void)where.size();
  } catch (const fb::InputError&) {
  }
  return 0;
}
