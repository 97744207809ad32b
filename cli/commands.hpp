// One file per subcommand: each registers its options on the app and returns what to run when it
// was chosen. Runs happen after parsing, outside CLI11, so errors map to exit codes in one place.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace fb {

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command setup_list(CLI::App& app);
Command setup_verify(CLI::App& app);
Command setup_bench(CLI::App& app);
Command setup_compare(CLI::App& app);
Command setup_ablate(CLI::App& app);

}  // namespace fb
