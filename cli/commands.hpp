// The subcommands of the `kiln` tool, each registering itself on the CLI11 app.
#pragma once

#include <CLI/CLI.hpp>

namespace kiln::cli {

void add_demo_command(CLI::App& app);
void add_cache_commands(CLI::App& app);
void add_check_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_warm_command(CLI::App& app);

}  // namespace kiln::cli
