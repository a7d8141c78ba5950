// kiln: run the demo, run one kernel on .npy files, inspect and manage the kernel cache.
#include <iostream>

#include "kiln/errors.hpp"
#include "tools/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kiln: run-time specialised kernels, compiled in process, cached on disk"};
  app.require_subcommand(1);
  kiln::tools::add_demo_command(app);
  kiln::tools::add_run_command(app);
  kiln::tools::add_cache_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const kiln::Error& e) {
    std::cerr << e.what() << '\n';
    return 1;
  }
  return 0;
}
