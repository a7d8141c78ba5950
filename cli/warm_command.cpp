// `kiln warm`: fills the cache ahead of a run.
//   kiln warm --manifest FILE [-j N]   every entry of a manifest (kiln cache export-manifest);
//                                       --manifest repeatable: the entries of each, in one run
//                                       [--target-cpu x86-64-v3]: CPU entries for that level
//   kiln warm --from-index [-j N]      every entry the cache's index already lists, again
//   kiln warm --arch sm_90 [grid]      the granule's kernels for a GPU that is not here
//   --kernel-file FILE (repeatable)    a user kernel to register first; a manifest's
//                                      user kernels otherwise come from the files it names
// A job script runs it once before mpirun/srun, so every rank starts warm;
// a login node (no GPU, no driver) fills the cache for its compute nodes.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/grid_flags.hpp"
#include "cli/manifest.hpp"
#include "granule/granule.hpp"
#include "granule/grid.hpp"
#include "kiln/kiln.hpp"

namespace kiln::cli {
namespace {

struct WarmOptions {
  std::vector<std::string> manifests;  // manifest files, their entries joined
  std::vector<std::filesystem::path> kernel_files;  // user kernels, registered before the manifest's own
  bool from_index = false;  // the cache's own index as the manifest
  unsigned jobs = 0;        // compiles at once; 0: KILN_BUILD_THREADS
  std::string backend = "cuda";
  std::string arch;
  granule::GridOptions grid{.layout = "fortran"};  // the demo's grid, in the layout GPUs want (coalesced)
  std::string mode = "both";       // both | specialised | generic
  std::string target_cpu;          // CPU entries: what to compile for; empty: KILN_TARGET_CPU
};

// One kernel to warm: a CPU request, or a GPU one with its target.
struct Item {
  KernelRequest request;
  std::optional<GpuTarget> gpu;
};

// The entry's kernel's declarations. A kernel neither embedded nor
// registered gets a hint: the manifest names no file for it (one written
// before manifests carried them, or a kernel registered as text).
KernelDeclaration declaration_of(Runtime& rt, const ManifestEntry& e) {
  try {
    return rt.declaration(e.kernel);
  } catch (const UnknownKernelError& error) {
    throw UnknownKernelError(std::string(error.what()) + "; the manifest names no kernel file for it: give " +
                             "--kernel-file FILE with the file that declares it");
  }
}

std::vector<Item> items_of(Runtime& rt, const std::vector<ManifestEntry>& entries) {
  std::vector<Item> items;
  for (const ManifestEntry& e : entries) {
    std::optional<GpuTarget> gpu;
    if (e.backend == "cuda" || e.backend == "hip")
      gpu = GpuTarget{.backend = e.backend == "hip" ? GpuBackend::hip : GpuBackend::cuda, .arch = e.arch};
    else if (e.backend != "cpu")
      throw Error("kiln warm: unknown backend '" + e.backend + "' for kernel '" + e.kernel + "'");
    for (Spec& spec : expand_specialisation(e, declaration_of(rt, e)))
      items.push_back({{e.kernel, std::move(spec), e.mode}, gpu});
  }
  return items;
}

// `jobs` threads take the items in turn; a failure is counted and said, and
// the others go on. The progress line goes to a terminal only.
void warm_items(Runtime& rt, const std::vector<Item>& items, unsigned jobs) {
  std::atomic<std::size_t> next{0}, done{0}, failed{0};
  std::mutex print;
  const bool progress = ::isatty(2);
  const auto work = [&] {
    for (std::size_t i; (i = next++) < items.size();) {
      const Item& item = items[i];
      try {
        // Into the cache only: a CPU target need not run here (--target-cpu).
        if (item.gpu) rt.precompile(item.request.name, item.request.spec, *item.gpu, item.request.mode);
        else rt.precompile(item.request.name, item.request.spec, item.request.mode);
      } catch (const std::exception& e) {
        ++failed;
        std::lock_guard lock(print);
        std::fprintf(stderr, "%skiln warm: %s: %s\n", progress ? "\n" : "", item.request.name.c_str(), e.what());
      }
      const std::size_t n = ++done;
      if (progress) {
        std::lock_guard lock(print);
        std::fprintf(stderr, "\r[%zu/%zu] %-70.70s", n, items.size(), item.request.name.c_str());
      }
    }
  };
  const auto start = std::chrono::steady_clock::now();
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < std::max(jobs, 1u); ++t) pool.emplace_back(work);
    work();
  }
  if (progress) std::fprintf(stderr, "\n");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const KernelMetrics total = rt.metrics().total();
  std::printf("summary: %zu kernels: %llu compiled, %llu already cached, %zu failed in %.0f ms\n", items.size(),
              static_cast<unsigned long long>(total.compiles), static_cast<unsigned long long>(total.disk_hits),
              failed.load(), ms);
  if (failed) throw Error("kiln warm: " + std::to_string(failed.load()) + " kernels failed (see above)");
}

// The manifest's CPU kernels resolved in one batch: loaded from the entries
// just warmed, and written as their bundle (docs/manual/cache.md, Bundles),
// so a program whose kernels() asks for the same set maps one file. Only
// for this host's CPU (no --target-cpu, KILN_TARGET_CPU unset): loading is
// how the batch verifies them.
void bundle_cpu_items(Runtime& rt, const std::vector<Item>& items) {
  std::vector<KernelRequest> requests;
  for (const Item& item : items)
    if (!item.gpu) requests.push_back(item.request);
  if (requests.size() < 2) return;
  try {
    rt.kernels(requests);
    std::printf("kiln warm: the %zu CPU kernels resolved as one batch, which bundles them\n", requests.size());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln warm: no bundle of the CPU kernels: %s\n", e.what());
  }
}

void warm_manifest(const WarmOptions& o) {
  Config config = Config::from_env();
  if (o.jobs) config.build_threads = o.jobs;
  if (!o.target_cpu.empty()) config.target_cpu = o.target_cpu;
  std::vector<ManifestEntry> entries;
  if (o.from_index) {
    entries = manifest_of_cache(config, "kiln warm");
  } else {
    for (const std::string& manifest : o.manifests) {
      std::ifstream file(manifest);
      if (!file) throw Error("kiln warm: cannot read " + manifest);
      std::vector<ManifestEntry> more = parse_manifest(std::string(std::istreambuf_iterator<char>(file), {}));
      entries.insert(entries.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
  }
  Runtime rt(config);
  // Before any compile: a kernel file that changed since the export stops
  // the whole command, naming the kernel, the file and both digests.
  for (const std::filesystem::path& file : o.kernel_files) rt.register_kernel_file(file);
  register_manifest_kernels(rt, entries);
  const std::vector<Item> items = items_of(rt, entries);
  const unsigned jobs = rt.config().build_threads;  // the Runtime resolved 0 to the hardware's
  std::printf("kiln warm: %zu manifest entries, %zu kernels, %u at once\n", entries.size(), items.size(), jobs);
  warm_items(rt, items, jobs);
  if (rt.config().target_cpu == "native") bundle_cpu_items(rt, items);
}

void warm(const WarmOptions& o) {
  if (!o.manifests.empty() || o.from_index) return warm_manifest(o);
  if (o.arch.empty()) throw Error("kiln warm: give --manifest FILE, --from-index, or --arch for the granule");
  if (!o.kernel_files.empty())
    throw Error("kiln warm: --kernel-file goes with --manifest or --from-index (the granule's kernels are kiln's own)");
  Runtime rt;
  const granule::Grid grid = o.grid.grid();
  const granule::Granule granule(grid, o.grid.levels, o.grid.field_layout());
  const GpuTarget target{.backend = o.backend == "hip" ? GpuBackend::hip : GpuBackend::cuda, .arch = o.arch};
  std::vector<Mode> modes;
  if (o.mode != "generic") modes.push_back(Mode::specialised);
  if (o.mode != "specialised") modes.push_back(Mode::generic);

  std::printf("kiln warm: %zu kernels for %s %s, %s grid %lld x %lld x %lld levels (%s order)\n",
              granule.stages().size(), o.backend.c_str(), o.arch.c_str(),
              o.grid.limited_area ? "limited-area" : "torus", static_cast<long long>(o.grid.nx),
              static_cast<long long>(o.grid.ny), static_cast<long long>(o.grid.levels), o.grid.layout_name());
  const auto start = std::chrono::steady_clock::now();
  for (const granule::Stage& stage : granule.stages())
    for (Mode mode : modes) {
      const std::string key = rt.precompile(stage.kernel, stage.spec, target, mode);
      std::printf("  %s  %s%s\n", key.c_str(), stage.kernel.c_str(), mode == Mode::generic ? " (generic)" : "");
    }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const KernelMetrics total = rt.metrics().total();
  std::printf("summary: %llu compiles, %llu disk hits in %.0f ms\n", static_cast<unsigned long long>(total.compiles),
              static_cast<unsigned long long>(total.disk_hits), ms);
}

}  // namespace

void add_warm_command(CLI::App& app) {
  auto options = std::make_shared<WarmOptions>();
  CLI::App* cmd = app.add_subcommand(
      "warm", "Fill the cache ahead of a run: a manifest's kernels, or the granule's for a GPU that is not here");
  cmd->add_option("--backend", options->backend, "GPU compiler: cuda (NVRTC, the default) or hip (hipRTC)")
      ->check(CLI::IsMember({"cuda", "hip"}));
  cmd->add_option("--manifest", options->manifests,
                  "compile every entry of this manifest (kiln cache export-manifest); repeatable");
  cmd->add_flag("--from-index", options->from_index, "compile every entry the cache's index lists");
  cmd->add_option("--kernel-file", options->kernel_files,
                  "register this kernel file first (repeatable): a user kernel the manifest names, in place of "
                  "the file the manifest names");
  cmd->add_option("--target-cpu", options->target_cpu,
                  "CPU entries: compile for native, an x86-64 level (x86-64, x86-64-v2, -v3, -v4) or an x86-64 CPU "
                  "LLVM knows (znver4, ...), which this host need not run: a cache for compute nodes of it "
                  "(default: KILN_TARGET_CPU)");
  cmd->add_option("-j,--jobs", options->jobs, "compiles at once (default: KILN_BUILD_THREADS)")->check(CLI::Range(1, 256));
  cmd->add_option("--arch", options->arch,
                  "without a manifest: the granule for this GPU: sm_80, sm_90 (CUBIN), compute_90 (PTX); gfx90a (hip)");
  add_grid_options(cmd, options->grid, "field layout: fortran (ICON's, the default) or c");
  cmd->add_option("--mode", options->mode, "specialised, generic, or both")
      ->check(CLI::IsMember({"both", "specialised", "generic"}));
  cmd->callback([options] { warm(*options); });
}

}  // namespace kiln::cli
