// kiln_granule_sources OUT_DIR [--nx=128 --ny=80 --levels=80 --limited-area --generic]:
// writes the translation unit kiln compiles for each kernel of the granule,
// specialised on kiln_stencil_bench's grid, in both layouts, as
// OUT_DIR/<kernel>.<c|fortran>.cpp; with --generic also the kernel's generic
// build (bounds and strides at run time) as <kernel>.<c|fortran>.generic.cpp,
// so the two can be compared loop by loop. bench/vectorizer_remarks.sh
// compiles them as kiln does and prints the loop vectoriser's remarks: what
// the gather kernels' loops became, without reading assembly.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "bench/embedded_kernels.hpp"
#include "granule/granule.hpp"
#include "granule/grid.hpp"
#include "granule/grid_options.hpp"
#include "kernels_src/embedded_sources.hpp"
#include "lang/binder.hpp"
#include "lang/codegen.hpp"
#include "lang/parser.hpp"
#include "lang/prelude.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::granule::Granule;
using kiln::granule::Grid;
using kiln::granule::Layout;

struct Options {
  fs::path out;
  kiln::granule::GridOptions grid;  // kiln_stencil_bench's defaults
  bool generic = false;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (o.grid.take(arg)) continue;
    if (arg == "--generic") o.generic = true;
    else if (!arg.empty() && arg[0] != '-' && o.out.empty()) o.out = arg;
    else return false;
  }
  return !o.out.empty();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr, "usage: kiln_granule_sources OUT_DIR [--nx=N --ny=N --levels=N --limited-area --generic]\n");
    return 2;
  }
  fs::create_directories(o.out);
  const Grid grid = o.grid.grid();
  for (const Layout layout : {Layout::c, Layout::fortran}) {
    const Granule granule(grid, o.grid.levels, layout);
    for (const auto& stage : granule.stages()) {
      const kiln::lang::KernelInfo* info = kiln_bench::find_embedded_kernel(stage.kernel);
      if (!info) {
        std::fprintf(stderr, "kiln_granule_sources: no embedded kernel %s\n", stage.kernel.c_str());
        return 1;
      }
      const std::string stem = stage.kernel + (layout == Layout::c ? ".c" : ".fortran");
      for (const bool specialised : {true, false}) {
        if (!specialised && !o.generic) continue;
        auto bound = kiln::lang::bind_spec(*info, stage.spec);
        if (!specialised) kiln::lang::forget_values(bound);  // as Runtime's generic builds do
        const fs::path file = o.out / (stem + (specialised ? ".cpp" : ".generic.cpp"));
        std::ofstream(file) << kiln::lang::generate_source(*info, bound, specialised,
                                                              kiln::lang::prelude(), "kiln_entry");
        std::printf("%s\n", file.c_str());
      }
    }
  }
  return 0;
}
