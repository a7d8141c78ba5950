// The granule grid a bench program runs on: --nx=N --ny=N --levels=N
// --limited-area. kiln_stencil_bench and kiln_granule_sources read them alike
// and default alike, so the sources one writes are those the other times.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "granule/grid.hpp"

namespace kiln_bench {

struct GridOptions {
  std::int64_t nx = 128, ny = 80, levels = 80;  // near ICON's R02B04 with 80 levels
  bool limited_area = false;

  // Takes `arg` when it is one of the flags above; false leaves it to the caller.
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

  kiln::granule::Grid grid() const {
    return limited_area ? kiln::granule::Grid::limited_area(nx, ny) : kiln::granule::Grid::torus(nx, ny);
  }
};

}  // namespace kiln_bench
