// kiln_alternating_bench KERNEL BUILD.so... [--layout=c|fortran] [--rounds=200]
//                        [--nx=128 --ny=80 --levels=80 --limited-area]
//
// Times builds of one granule kernel against each other, call by call: each
// BUILD.so is a shared object exporting kiln_entry, such as a translation
// unit of `kiln_granule_sources DIR --generic` compiled by hand with kiln's
// flags plus `-shared`, and with whatever is being tried (another flag, an
// edited prelude). Every round calls each build once, in an order that
// rotates, on one granule's arrays, so a machine's load and drift fall on
// every build alike; it prints each build's median time and its ratio to the
// first build's. On a loaded 2-core VM this resolved 1% between builds that
// kiln_stencil_bench's 0.2-s bursts could not (issue 20, README: "The loops
// ran one vector iteration at a time").
//
// The builds take their parameters as a generic build does (specialised ones
// ignore them), from the granule's Spec for the kernel, bound as Runtime binds it. A kernel with a
// temporary (`#pragma kiln temporary`) is refused: its entry takes memory
// only kiln's runtime hands over.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "bench/embedded_kernels.hpp"
#include "granule/granule.hpp"
#include "granule/grid_options.hpp"
#include "kiln/kiln.hpp"
#include "lang/binder.hpp"

namespace {

using kiln::granule::Granule;
using kiln::granule::Layout;

struct Options {
  std::string kernel;
  std::vector<std::string> builds;
  Layout layout = Layout::c;
  int rounds = 200;
  kiln::granule::GridOptions grid;
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (o.grid.take(arg)) continue;
    if (arg == "--layout=fortran") o.layout = Layout::fortran;
    else if (arg == "--layout=c") o.layout = Layout::c;
    else if (arg.substr(0, 9) == "--rounds=") o.rounds = std::atoi(argv[i] + 9);
    else if (arg.empty() || arg[0] == '-') return false;
    else if (o.kernel.empty()) o.kernel = arg;
    else o.builds.emplace_back(arg);
  }
  return !o.kernel.empty() && !o.builds.empty() && o.rounds > 0;
}

const kiln::granule::Stage* find_stage(const Granule& granule, const std::string& kernel) {
  for (const auto& stage : granule.stages())
    if (stage.kernel == kernel) return &stage;
  return nullptr;
}

// Each build's entry is called through this trampoline, which keeps its
// status: kiln::Kernel explains a refused call through the Runtime that
// resolved it, and these builds have none.
using Entry = decltype(kiln::detail::CallBlock::entry);
Entry g_entry = nullptr;
int g_status = 0;
int keep_status(const kiln_arg* const* args, const kiln_value* params, const kiln_context* context) {
  g_status = g_entry(args, params, context);
  return 0;
}

// What a build's nonzero status means (the entry's contract, kiln/kernel.hpp).
std::string refusal(const kiln::lang::KernelInfo& kernel, int status) {
  if (status < 0) return "the declared extents refuse the call (status " + std::to_string(status) + ")";
  const auto index = static_cast<std::size_t>(status - 1);
  if (index >= kernel.args.size()) return "status " + std::to_string(status);
  return "argument " + kernel.args[index].name +
         " has other strides than the build's (a build of the other layout?)";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: kiln_alternating_bench KERNEL BUILD.so... [--layout=c|fortran] [--rounds=N] "
                 "[--nx=N --ny=N --levels=N --limited-area]\n");
    return 2;
  }
  const kiln::lang::KernelInfo* kernel = kiln_bench::find_embedded_kernel(o.kernel);
  if (!kernel) throw std::runtime_error("no embedded kernel " + o.kernel);
  if (!kernel->temporaries.empty()) throw std::runtime_error(o.kernel + " has a temporary, which only kiln hands over");
  const kiln::granule::Grid grid = o.grid.grid();
  const Granule granule(grid, o.grid.levels, o.layout);
  const kiln::granule::Stage* stage = find_stage(granule, o.kernel);
  if (!stage) throw std::runtime_error("no granule stage calls " + o.kernel);

  // The stage's values in the order a generic entry reads them, and the
  // arguments' types and ranks (the granule's arrays are flat), as Runtime
  // fills a handle's CallBlock.
  const std::vector<kiln_value> params = kiln::lang::bind_spec(*kernel, stage->spec).values;
  std::vector<std::uint64_t> signature;
  for (const kiln::lang::ArgDecl& a : kernel->args)
    signature.push_back(kiln::detail::signature_of(static_cast<std::int32_t>(a.type), a.rank));

  std::vector<Entry> entries;
  for (const std::string& path : o.builds) {
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) throw std::runtime_error(dlerror());
    entries.push_back(reinterpret_cast<Entry>(dlsym(library, "kiln_entry")));
    if (!entries.back()) throw std::runtime_error(path + " exports no kiln_entry");
  }
  const kiln::detail::CallBlock block{.entry = &keep_status, .params = params.data(), .signature = signature.data(),
                                      .count = signature.size(), .out_of_line = false, .threads = 1, .owner = nullptr};

  std::vector<std::vector<double>> ms(entries.size());
  for (int round = 0; round < o.rounds; ++round)
    for (std::size_t j = 0; j < entries.size(); ++j) {
      const std::size_t b = (j + static_cast<std::size_t>(round)) % entries.size();
      g_entry = entries[b];
      const auto start = std::chrono::steady_clock::now();
      stage->call(kiln::Kernel(&block));
      ms[b].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      if (g_status != 0) throw std::runtime_error(o.builds[b] + " refused the call: " + refusal(*kernel, g_status));
    }
  const double first = median(ms[0]);
  for (std::size_t b = 0; b < entries.size(); ++b)
    std::printf("%10.3f ms  %6.3fx  %s\n", median(ms[b]), median(ms[b]) / first, o.builds[b].c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "kiln_alternating_bench: %s\n", e.what());
  return 1;
}
