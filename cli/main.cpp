// fusebench: proves GPU kernel fusions correct and measures what each one is worth.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "core/errors.hpp"

int main(int argc, char** argv) {
  fb::set_command_line(argc, argv);
  CLI::App app{"fusebench: proves GPU kernel fusions correct (against their unfused chain and fp64) and measures them"};
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 all passed; 1 a check failed; 2 bad input or usage; 3 device or runtime error.\n"
      "Run 'fusebench <command> --help' for a command's options and examples.");
  const fb::Command commands[] = {fb::setup_list(app), fb::setup_verify(app), fb::setup_bench(app),
                                  fb::setup_compare(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? fb::kExitPass : fb::kExitBadInput;
  }
  for (const fb::Command& c : commands) {
    if (!c.app->parsed()) continue;
    try {
      return c.run();
    } catch (const fb::InputError& e) {
      std::cerr << "fusebench: error: " << e.what() << "\n";
      return fb::kExitBadInput;
    } catch (const fb::DeviceError& e) {
      std::cerr << "fusebench: device error: " << e.what() << "\n";
      return fb::kExitDeviceError;
    } catch (const std::exception& e) {
      std::cerr << "fusebench: runtime error: " << e.what() << "\n";
      return fb::kExitDeviceError;
    }
  }
  return fb::kExitBadInput;
}
