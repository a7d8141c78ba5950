// kiln: run the demo, run one kernel on .npy files, check kernel files, inspect and manage the kernel cache,
// report on metrics.
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "kiln/errors.hpp"
#include "kiln/version.hpp"

namespace {

// kiln, the LLVM it compiles with, and which GPU compilers this machine has.
std::string version_text() {
  const kiln::VersionInfo v = kiln::version();
  const auto found = [](bool ok, const std::string& detail) { return (ok ? "found, " : "not found: ") + detail; };
  return "kiln " + v.kiln + "\nLLVM " + v.llvm + "\nNVRTC: " + found(v.nvrtc_found, v.nvrtc) +
         "\nhipRTC: " + found(v.hiprtc_found, v.hiprtc);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln: run-time specialised kernels, compiled in process, cached on disk"};
  app.set_version_flag("--version", version_text, "Print kiln's version, its LLVM's, and the GPU compilers found");
  app.require_subcommand(1);
  kiln::cli::add_demo_command(app);
  kiln::cli::add_run_command(app);
  kiln::cli::add_cache_commands(app);
  kiln::cli::add_warm_command(app);
  kiln::cli::add_check_command(app);
  kiln::cli::add_report_command(app);
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
