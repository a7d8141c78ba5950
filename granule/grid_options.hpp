// The granule's grid as the programs that run it take it: the kiln command
// (cli/grid_flags.hpp adds these as its options), the benchmarks (take(),
// --nx=N --ny=N --levels=N --limited-area), with one set of defaults, so
// that the sources kiln_granule_sources writes are those kiln_stencil_bench
// times and the demo runs.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include "granule/field.hpp"
#include "granule/grid.hpp"

namespace kiln::granule {

struct GridOptions {
  // 128 x 80 rhombi: 20480 cells, 30720 edges, 10240 vertices, near ICON's R02B04, with 80 levels.
  std::int64_t nx = 128, ny = 80;
  std::int64_t levels = 80;
  bool limited_area = false;
  std::string layout;  // c | fortran; empty where a program keeps its own (each kiln command sets its default)

  Grid grid() const { return limited_area ? Grid::limited_area(nx, ny) : Grid::torus(nx, ny); }
  Layout field_layout() const { return layout == "fortran" ? Layout::fortran : Layout::c; }
  const char* layout_name() const { return layout == "fortran" ? "Fortran" : "C"; }

  // Takes `arg` when it is one of the grid's flags (--nx=N --ny=N --levels=N
  // --limited-area); false leaves it to the caller.
  bool take(std::string_view arg) {
    if (arg == "--limited-area") return limited_area = true;
    for (auto [flag, to] : {std::pair{std::string_view("--nx="), &nx}, std::pair{std::string_view("--ny="), &ny},
                            std::pair{std::string_view("--levels="), &levels}})
      if (arg.substr(0, flag.size()) == flag) {
        *to = std::strtoll(arg.data() + flag.size(), nullptr, 10);
        return true;
      }
    return false;
  }
};

}  // namespace kiln::granule
