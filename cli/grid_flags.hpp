// The granule's grid (granule/grid_options.hpp) as the demo and `kiln warm`
// take it on the command line.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "granule/grid_options.hpp"

namespace kiln::cli {

inline void add_grid_options(CLI::App* command, granule::GridOptions& o, const std::string& layout_help) {
  command->add_option("--nx", o.nx, "grid rhombi along x (cells = 2 nx ny)")->check(CLI::Range(2, 1 << 14));
  command->add_option("--ny", o.ny, "grid rhombi along y")->check(CLI::Range(2, 1 << 14));
  command->add_option("--levels", o.levels, "vertical levels")->check(CLI::Range(2, 1024));
  command->add_flag("--limited-area", o.limited_area, "cut the grid open (boundary and nudging zones)");
  command->add_option("--layout", o.layout, layout_help)->check(CLI::IsMember({"c", "fortran"}));
}

}  // namespace kiln::cli
