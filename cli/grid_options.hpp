// The granule's grid as the demo and `kiln warm` take it on the command line.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "granule/field.hpp"
#include "granule/grid.hpp"

namespace kiln::tools {

struct GridOptions {
  // 128 x 80 rhombi: 20480 cells, 30720 edges, 10240 vertices, near ICON's R02B04.
  std::int64_t nx = 128, ny = 80;
  std::int64_t levels = 80;
  bool limited_area = false;
  std::string layout;  // c | fortran; each command sets its default

  granule::Grid grid() const {
    return limited_area ? granule::Grid::limited_area(nx, ny) : granule::Grid::torus(nx, ny);
  }
  granule::Layout field_layout() const { return layout == "fortran" ? granule::Layout::fortran : granule::Layout::c; }
  const char* layout_name() const { return layout == "fortran" ? "Fortran" : "C"; }
};

inline void add_grid_options(CLI::App* command, GridOptions& o, const std::string& layout_help) {
  command->add_option("--nx", o.nx, "grid rhombi along x (cells = 2 nx ny)")->check(CLI::Range(2, 1 << 14));
  command->add_option("--ny", o.ny, "grid rhombi along y")->check(CLI::Range(2, 1 << 14));
  command->add_option("--levels", o.levels, "vertical levels")->check(CLI::Range(2, 1024));
  command->add_flag("--limited-area", o.limited_area, "cut the grid open (boundary and nudging zones)");
  command->add_option("--layout", o.layout, layout_help)->check(CLI::IsMember({"c", "fortran"}));
}

}  // namespace kiln::tools
