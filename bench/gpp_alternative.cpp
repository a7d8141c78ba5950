#include "bench/gpp_alternative.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>

#include "bench/child_process.hpp"
#include "bench/process_kernels.hpp"
#include "kernels_src/embedded_sources.hpp"
#include "lang/binder.hpp"
#include "lang/codegen.hpp"
#include "lang/parser.hpp"
#include "lang/prelude.hpp"

namespace kiln_bench {
namespace {

namespace fs = std::filesystem;

const kiln::lang::KernelInfo& kernel_info(std::string_view name) {
  static const auto infos = [] {
    std::map<std::string, kiln::lang::KernelInfo, std::less<>> map;
    for (const auto& file : kiln::kernels_src::kernels()) {
      kiln::lang::KernelInfo info = kiln::lang::parse_kernel_source(file.text, file.name);
      map.emplace(info.name, std::move(info));
    }
    return map;
  }();
  const auto it = infos.find(name);
  if (it == infos.end()) throw std::runtime_error("no kernel " + std::string(name));
  return it->second;
}

}  // namespace

std::string alternative_source(std::string_view name, const kiln::Spec& spec) {
  const kiln::lang::KernelInfo& info = kernel_info(name);
  const kiln::lang::BoundSpec bound = kiln::lang::bind_spec(info, spec);
  return kiln::lang::generate_source(info, bound, /*specialised=*/true, kiln::lang::prelude(), kAltSymbol);
}

std::vector<std::string> gpp_command(const fs::path& source, const fs::path& output) {
  return {"g++", "-O3", "-march=native", "-shared", "-fPIC", "-o", output.string(), source.string()};
}

void gpp_build_all(const std::vector<std::pair<fs::path, fs::path>>& jobs) {
  constexpr std::size_t kParallel = 2;
  for (std::size_t first = 0; first < jobs.size(); first += kParallel) {
    std::vector<std::pair<std::unique_ptr<Spawner>, std::pair<pid_t, std::int64_t>>> running;
    for (std::size_t i = first; i < std::min(jobs.size(), first + kParallel); ++i) {
      auto spawner = std::make_unique<Spawner>(gpp_command(jobs[i].first, jobs[i].second), std::vector<std::string>{},
                                               "/dev/null", fs::path(jobs[i].second).replace_extension(".log"));
      std::int64_t spawn_ns = 0;
      const pid_t pid = spawner->start(spawn_ns);
      running.emplace_back(std::move(spawner), std::pair{pid, spawn_ns});
    }
    for (auto& [spawner, job] : running) check_child(Spawner::finish(job.first, job.second), *spawner);
  }
}

Loaded load_so(const fs::path& so) {
  Loaded loaded;
  loaded.handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (loaded.handle == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  loaded.entry = reinterpret_cast<EntryFn>(dlsym(loaded.handle, kAltSymbol));
  if (loaded.entry == nullptr) throw std::runtime_error(so.string() + " has no " + kAltSymbol);
  return loaded;
}

}  // namespace kiln_bench
