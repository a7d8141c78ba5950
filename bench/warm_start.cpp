// kiln_bench's warm_start/<kernel>/... rows: a new Runtime on a populated
// cache (disk lookup, checksum, mapping of the entry) against dlopen + dlsym
// of the alternative's cached .so, each loading a file it never loaded.
#include <dlfcn.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/gpp_alternative.hpp"
#include "bench/kiln_bench_rows.hpp"
#include "bench/kiln_bench_support.hpp"
#include "bench/temp_dir.hpp"

namespace kiln_bench {
namespace {

// A warm start loads a kernel this process has not loaded yet, so both sides
// load a file they have never loaded: every iteration takes a copy of its
// own, made beforehand (a new file, not a link: the loader would know the
// inode), and keeps it loaded, as a program keeps its kernels. kiln's side
// must do so anyway: a process maps a cache entry once and keeps it
// (runtime/load/mapped_entries.hpp). Loaded objects accumulate, and the loader
// compares each new path with every loaded object's name, so later loads
// cost a little more: the dlopen side runs first, on a cleaner process.
constexpr int kWarmStartIterations = 200;

// `count` copies of `file`, one per folder, at `relative` under each folder.
std::vector<fs::path> copies_of(const fs::path& file, const fs::path& root, const fs::path& relative, int count) {
  std::vector<fs::path> folders;
  for (int i = 0; i < count; ++i) {
    const fs::path folder = root / ("copy-" + std::to_string(i));
    fs::create_directories((folder / relative).parent_path());
    fs::copy_file(file, folder / relative);
    folders.push_back(folder);
  }
  return folders;
}

void warm_start_kiln(benchmark::State& state, const KernelCase* kc) {
  try {
    TempDir dir;
    const kiln::Spec spec = kc->spec(0);
    std::string key;
    {
      kiln::Runtime rt(config_for(dir.path() / "populated"));
      key = rt.kernel(kc->name, spec).key();
      if (kernel_metrics(rt.metrics(), kc->name).compiles != 1) throw std::runtime_error("populating failed");
    }
    const fs::path entry = fs::path(key.substr(0, 2)) / key.substr(2);
    std::vector<kiln::Config> configs;
    for (const fs::path& folder : copies_of(dir.path() / "populated" / entry, dir.path(), entry, kWarmStartIterations))
      configs.push_back(config_for(folder));
    double ctor_us = 0, spec_key_us = 0, lookup_us = 0, link_us = 0, rest_us = 0, end_us = 0;
    std::size_t next = 0;
    for (auto _ : state) {
      if (next == configs.size()) throw std::runtime_error("more iterations than entry copies");
      const kiln::Config& config = configs[next++];
      std::optional<kiln::Runtime> rt;
      const auto t0 = Clock::now();
      rt.emplace(config);
      const auto t1 = Clock::now();
      const kiln::Kernel kernel = rt->kernel(kc->name, spec);
      const auto t2 = Clock::now();
      state.SetIterationTime(seconds_between(t0, t2));
      benchmark::DoNotOptimize(kernel);

      const kiln::MetricsSnapshot snapshot = rt->metrics();
      const kiln::KernelMetrics& m = kernel_metrics(snapshot, kc->name);
      if (m.compiles != 0 || m.disk_hits != 1)
        throw std::runtime_error("not a warm start: compiles " + std::to_string(m.compiles) + ", disk hits " +
                                 std::to_string(m.disk_hits));
      const double ctor = seconds_between(t0, t1) * 1e6, resolve = seconds_between(t1, t2) * 1e6;
      const double spec_key = (phase_ms(m, "specialise") + phase_ms(m, "key")) * 1e3;
      const double disk = phase_ms(m, "disk_lookup") * 1e3, link = phase_ms(m, "load") * 1e3;
      ctor_us += ctor;
      spec_key_us += spec_key;
      lookup_us += disk;
      link_us += link;
      rest_us += resolve - spec_key - disk - link;
      const auto t3 = Clock::now();
      rt.reset();  // untimed: the Runtime's end notes the disk hit in the index
      end_us += seconds_between(t3, Clock::now()) * 1e6;
    }
    state.counters["ctor_us"] = avg(ctor_us);
    state.counters["spec_key_us"] = avg(spec_key_us);
    state.counters["disk_us"] = avg(lookup_us);
    state.counters["link_us"] = avg(link_us);
    state.counters["rest_us"] = avg(rest_us);
    state.counters["end_us"] = avg(end_us);
    state.SetLabel("kiln: new Runtime + kernel() of an entry not loaded before: read, checksum, dlopen (end_us: ~Runtime, untimed)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void warm_start_dlopen(benchmark::State& state, const KernelCase* kc) {
  try {
    TempDir dir;
    const fs::path cpp = dir.path() / "kernel.cpp", so = dir.path() / "kernel.so";
    write_text(cpp, alternative_source(kc->name, kc->spec(0)));
    gpp_build_all({{cpp, so}});
    const std::vector<fs::path> folders = copies_of(so, dir.path(), "kernel.so", kWarmStartIterations);
    std::vector<void*> handles;
    std::size_t next = 0;
    for (auto _ : state) {
      if (next == folders.size()) throw std::runtime_error("more iterations than copies");
      const fs::path copy = folders[next++] / "kernel.so";
      const auto t0 = Clock::now();
      const Loaded loaded = load_so(copy);
      state.SetIterationTime(seconds_between(t0, Clock::now()));
      benchmark::DoNotOptimize(loaded.entry);
      handles.push_back(loaded.handle);
    }
    for (void* handle : handles) dlclose(handle);  // after the timing: these were never loaded by kiln
    state.SetLabel("alternative: dlopen+dlsym of a cached g++ .so not loaded before (kept loaded)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

void register_warm_start_rows() {
  using benchmark::RegisterBenchmark;
  for (const KernelCase& kc : kCases) {
    RegisterBenchmark(("warm_start/" + std::string(kc.name) + "/dlopen").c_str(), warm_start_dlopen, &kc)
        ->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(kWarmStartIterations);
  }
  for (const KernelCase& kc : kCases) {
    RegisterBenchmark(("warm_start/" + std::string(kc.name) + "/kiln").c_str(), warm_start_kiln, &kc)
        ->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(kWarmStartIterations);
  }
}

}  // namespace kiln_bench
