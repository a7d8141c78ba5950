// kiln_bench: kiln against the obvious alternative, on the same kernels.
//
// The alternative is what a code without kiln does: write the specialised C++
// source to a file, run `g++ -O3 -march=native -shared -fPIC -o x.so x.cpp`,
// dlopen + dlsym the result, and keep the .so files as its cache. Its source is
// exactly the translation unit kiln compiles (kiln's own code generator,
// runtime/kernels/codegen.cpp, over the embedded prelude and kernel), so both sides
// compile and run the same code.
//
//   cold_compile/<kernel>/...   kiln's whole miss path (new Runtime, new empty
//                               cache folder, a specialisation never seen) vs
//                               source file + g++ subprocess + dlopen + dlsym
//   warm_start/<kernel>/...     new Runtime on a populated cache: disk lookup,
//                               checksum, mapping of the entry vs dlopen + dlsym of the .so
//   runtime_new/...             a new Runtime's construction alone, on the same
//                               cache folder each time or on a new one each time
//   process_warm_20/...         a whole new process that resolves 20 cached
//                               specialisations and calls each once vs one that
//                               dlopens 20 cached .so files (median of 20 runs);
//                               /paired: the two interleaved, 200 of each
//   process_cold_1/...          a whole new process whose one kernel is not
//                               cached (kiln loads clang) vs one that runs g++
//   lookup_memory_hit/...       rt.kernel() on a resolved (kernel, spec) vs dlsym
//   call_1point/...             a Kernel handle call on a 1-point domain vs a
//                               direct call of the same JIT'd entry; /kiln_temporary:
//                               the same kernel with a temporary (the checked path);
//                               /kiln_unchecked: the same kernel declaring no
//                               extents (what the extent checks cost per call);
//                               /kiln_threads2: on 2 threads (fork and join)
//   load/..., link/lld          one kernel's binary loaded the way kiln does
//                               (its own mmap of the lld .so), by dlopen, and
//                               as the relocatable object through LLVM ORC's
//                               LLJIT; lld's link time (load_ways.hpp)
//
// Times are what the issue's targets compare; the summary after the table
// prints each comparison. Nothing here asserts on time. Defaults keep a run
// short (--benchmark_min_time=0.1); bench/run_benchmarks.sh runs longer.
// Rows marked manual_time report the measured region in "Time"; their "CPU" is
// the benchmark thread's own, untimed set-up included and children excluded.
// Counters break the time down (_ms, _us: per iteration) or, for the process
// rows, give the child's CPU time and peak RSS. KILN_BENCH_KEEP=1 leaves the
// temporary folders (/tmp/kiln-bench-*: caches, sources, g++ .so files) for inspection.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <thread>
#include <vector>

#include "kernels_src/embedded_sources.hpp"
#include "kiln/kiln.hpp"
#include "lang/binder.hpp"
#include "lang/codegen.hpp"
#include "lang/parser.hpp"
#include "lang/prelude.hpp"
#include "bench/load_ways.hpp"
#include "bench/median.hpp"
#include "bench/process_kernels.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using EntryFn = int (*)(const kiln_arg* const*, const kiln_value*, const kiln_context*);
using kiln_bench::kAltSymbol;
using kiln_bench::monotonic_ns;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// ---- support ------------------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    std::string pattern = "/tmp/kiln-bench-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
    path_ = pattern;
  }
  ~TempDir() {
    if (std::getenv("KILN_BENCH_KEEP") != nullptr) return;  // left for inspection (the g++ .so files, the caches)
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

kiln::Config config_for(const fs::path& cache_dir) {
  kiln::Config config;
  config.cache_dir = cache_dir;
  config.log_level = "error";
  return config;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// "name value" lines, as the helper processes print them.
std::map<std::string, std::string> parse_lines(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string name, value;
  while (in >> name >> value) out[name] = value;
  return out;
}

long long field_ll(const std::map<std::string, std::string>& lines, const std::string& name) {
  const auto it = lines.find(name);
  if (it == lines.end()) throw std::runtime_error("helper output lacks '" + name + "'");
  return std::stoll(it->second);
}

// A child process: spawned with posix_spawnp, reaped with wait4 (its own rusage).
struct Child {
  int status = -1;
  double wall_s = 0.0;  // from just before posix_spawn to just after wait4
  double cpu_ms = 0.0;  // the child's own user + system time (its rusage from wait4)
  std::int64_t spawn_ns = 0, exit_ns = 0;  // CLOCK_MONOTONIC
  bool ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

// Environment for children: ours without KILN_* (so no stray KILN_METRICS
// etc. changes what is timed), plus `extra`.
std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "KILN_", 5) != 0) env.emplace_back(*e);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

class Spawner {
 public:
  Spawner(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& out,
          const fs::path& err)
      : argv_(argv), env_(child_environment(env)), out_(out.string()), err_(err.string()) {
    for (auto& a : argv_) cargv_.push_back(a.data());
    cargv_.push_back(nullptr);
    for (auto& e : env_) cenv_.push_back(e.data());
    cenv_.push_back(nullptr);
  }

  pid_t start(std::int64_t& spawn_ns) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    spawn_ns = monotonic_ns();
    const int rc = posix_spawnp(&pid, cargv_[0], &actions, nullptr, cargv_.data(), cenv_.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + argv_[0] + ": " + std::strerror(rc));
    return pid;
  }

  static Child finish(pid_t pid, std::int64_t spawn_ns) {
    Child child;
    child.spawn_ns = spawn_ns;
    rusage usage{};
    if (wait4(pid, &child.status, 0, &usage) != pid) throw std::runtime_error("wait4 failed");
    child.exit_ns = monotonic_ns();
    child.wall_s = double(child.exit_ns - spawn_ns) * 1e-9;
    // Not ru_maxrss: with posix_spawn (vfork semantics) it carries the parent's
    // peak from before exec; the helpers report their own VmHWM instead.
    child.cpu_ms = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
                   double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-3;
    return child;
  }

  Child run() {
    std::int64_t spawn_ns = 0;
    const pid_t pid = start(spawn_ns);
    return finish(pid, spawn_ns);
  }

  const std::string& command() const { return argv_[0]; }
  std::string error_text() const { return read_text(err_); }

 private:
  std::vector<std::string> argv_, env_;
  std::string out_, err_;
  std::vector<char*> cargv_, cenv_;
};

void check_child(const Child& child, const Spawner& spawner) {
  if (child.ok()) return;
  throw std::runtime_error(spawner.command() + " failed (wait status " + std::to_string(child.status) +
                           "): " + spawner.error_text());
}

// ---- the kernels and their g++ alternative --------------------------------------

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

// The translation unit kiln compiles for (kernel, spec), with the entry named
// kAltSymbol: kiln's own code generator over the same embedded prelude and body.
std::string alternative_source(std::string_view name, const kiln::Spec& spec) {
  const kiln::lang::KernelInfo& info = kernel_info(name);
  const kiln::lang::BoundSpec bound = kiln::lang::bind_spec(info, spec);
  return kiln::lang::generate_source(info, bound, /*specialised=*/true, kiln::lang::prelude(),
                                        kAltSymbol);
}

std::vector<std::string> gpp_command(const fs::path& source, const fs::path& output) {
  return {"g++", "-O3", "-march=native", "-shared", "-fPIC", "-o", output.string(), source.string()};
}

// Builds several sources with g++, two at a time (set-up only, not timed).
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

struct Loaded {
  void* handle = nullptr;
  EntryFn entry = nullptr;
};

Loaded load_so(const fs::path& so) {
  Loaded loaded;
  loaded.handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (loaded.handle == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  loaded.entry = reinterpret_cast<EntryFn>(dlsym(loaded.handle, kAltSymbol));
  if (loaded.entry == nullptr) throw std::runtime_error(so.string() + " has no " + kAltSymbol);
  return loaded;
}

// The kernels of the per-kernel benchmarks, on realistic domains, C order.
// `unique` changes a domain value so that each cold iteration is a new specialisation.
kiln::Spec theta_spec(int unique) {
  constexpr int kCells = 20480, kLevels = 80;  // ICON R02B04
  kiln::Spec s;
  s.set("horizontal_start", 1280).set("horizontal_end", kCells - unique % 16384);
  s.set("vertical_start", 0).set("vertical_end", kLevels).set("rd_o_cvd", kiln_bench::kRdOCvd);
  s.strides("theta_v", {kLevels, 1}).strides("exner", {kLevels, 1}).strides("z_temp", {kLevels, 1});
  return s.strides("area", {1});
}

kiln::Spec stencil_spec(int unique) {
  const int nx = 128 + unique % 16384, ny = 128, nz = 64;
  kiln::Spec s;
  s.set("nx", nx).set("ny", ny).set("nz", nz).set("c0", 0.4).set("cx", 0.1).set("cy", 0.1).set("cz", 0.1);
  s.strides("in", {std::int64_t(ny) * nx, nx, 1}).strides("out", {std::int64_t(ny) * nx, nx, 1});
  return s;
}

struct KernelCase {
  const char* name;
  kiln::Spec (*spec)(int unique);
};
const KernelCase kCases[] = {{"update_theta_and_exner", theta_spec}, {"stencil7", stencil_spec}};

int next_unique() {
  static std::atomic<int> next{1};
  return next++;
}

double phase_ms(const kiln::KernelMetrics& m, const char* phase) {
  const auto it = m.phases.find(phase);
  return it == m.phases.end() ? 0.0 : it->second.total_ms;
}

const kiln::KernelMetrics& kernel_metrics(const kiln::MetricsSnapshot& snapshot, const char* name) {
  const auto it = snapshot.kernels.find(name);
  if (it == snapshot.kernels.end()) throw std::runtime_error(std::string("no metrics for ") + name);
  return it->second;
}

// The first compile in a process also loads the compiler module (clang and the
// shared LLVM, mapped once per process): done once, untimed by the per-kernel
// benchmarks, reported in the summary; process_cold_1 times it in a new process.
double g_first_compile_ms = -1.0;
void load_compiler_once() {
  if (g_first_compile_ms >= 0.0) return;
  TempDir dir;
  const kiln::Spec spec = stencil_spec(next_unique());
  const auto t0 = Clock::now();
  kiln::Runtime rt(config_for(dir.path()));
  rt.kernel("stencil7", spec);
  g_first_compile_ms = seconds_between(t0, Clock::now()) * 1e3;
}

benchmark::Counter avg(double total) { return benchmark::Counter(total, benchmark::Counter::kAvgIterations); }

// ---- 1. cold compile ------------------------------------------------------------

void cold_compile_kiln(benchmark::State& state, const KernelCase* kc) {
  try {
    load_compiler_once();
    double compile_ms = 0, store_us = 0, link_us = 0, rest_us = 0;
    for (auto _ : state) {
      TempDir dir;  // a fresh, empty cache folder
      const kiln::Spec spec = kc->spec(next_unique());
      const kiln::Config config = config_for(dir.path());
      std::optional<kiln::Runtime> rt;
      const auto t0 = Clock::now();
      rt.emplace(config);
      const kiln::Kernel kernel = rt->kernel(kc->name, spec);
      const double wall = seconds_between(t0, Clock::now());
      state.SetIterationTime(wall);
      benchmark::DoNotOptimize(kernel);

      const kiln::MetricsSnapshot snapshot = rt->metrics();
      const kiln::KernelMetrics& m = kernel_metrics(snapshot, kc->name);
      if (m.compiles != 1 || m.disk_hits != 0)
        throw std::runtime_error("not a cold compile: compiles " + std::to_string(m.compiles) + ", disk hits " +
                                 std::to_string(m.disk_hits));
      const double c = phase_ms(m, "compile"), s = phase_ms(m, "store"), l = phase_ms(m, "load");
      compile_ms += c;
      store_us += s * 1e3;
      link_us += l * 1e3;
      rest_us += wall * 1e6 - (c + s + l) * 1e3;  // Runtime set-up, codegen, key, the index record
    }
    state.counters["compile_ms"] = avg(compile_ms);
    state.counters["store_us"] = avg(store_us);
    state.counters["link_us"] = avg(link_us);
    state.counters["rest_us"] = avg(rest_us);
    state.SetLabel("kiln: new Runtime + empty cache, in-process clang -O3 + lld, store, dlopen (compiles==1 checked)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void cold_compile_gpp(benchmark::State& state, const KernelCase* kc) {
  try {
    double gpp_ms = 0, dlopen_us = 0;
    for (auto _ : state) {
      TempDir dir;
      const kiln::Spec spec = kc->spec(next_unique());
      const fs::path cpp = dir.path() / "kernel.cpp", so = dir.path() / "kernel.so";
      Spawner gpp(gpp_command(cpp, so), {}, "/dev/null", dir.path() / "gpp.log");
      const auto t0 = Clock::now();
      write_text(cpp, alternative_source(kc->name, spec));
      const Child child = gpp.run();
      const auto t1 = Clock::now();
      check_child(child, gpp);
      const Loaded loaded = load_so(so);
      const auto t2 = Clock::now();
      state.SetIterationTime(seconds_between(t0, t2));
      benchmark::DoNotOptimize(loaded.entry);
      dlclose(loaded.handle);
      gpp_ms += seconds_between(t0, t1) * 1e3;
      dlopen_us += seconds_between(t1, t2) * 1e6;
    }
    state.counters["gpp_ms"] = avg(gpp_ms);
    state.counters["dlopen_us"] = avg(dlopen_us);
    state.SetLabel("alternative: write .cpp, g++ -O3 -march=native -shared -fPIC subprocess, dlopen+dlsym");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// ---- 2. warm start, one kernel --------------------------------------------------

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

// ---- 3. whole processes -----------------------------------------------------------

struct ProcessFixture {
  TempDir root;
  fs::path kiln_cache;
  std::vector<std::string> libs;
  double kiln_checksum = 0, alt_checksum = 0;
  double kiln_rss_mb = 0, alt_rss_mb = 0;  // peak RSS of the validation runs
};

std::vector<std::string> kiln_env(const fs::path& cache, bool rss = false) {
  std::vector<std::string> env{"KILN_CACHE_DIR=" + cache.string(), "KILN_LOG_LEVEL=error"};
  if (rss) env.push_back("KILN_BENCH_RSS=1");
  return env;
}

double peak_rss_mb(const std::map<std::string, std::string>& lines) {
  return double(field_ll(lines, "peak_rss_kb")) / 1024.0;
}

// Built on first use: the kiln cache with the 20 specialisations (by a helper
// process that compiles them), the 20 g++ .so files of the same
// specialisations, and one validation run of each helper (same checksums).
// Fixtures are released at the end of main, while libkiln's own statics live.
std::unique_ptr<ProcessFixture> g_process_fixture;
std::string g_process_fixture_error;

const ProcessFixture& process_fixture() {
  std::unique_ptr<ProcessFixture>& fixture = g_process_fixture;
  std::string& error = g_process_fixture_error;
  if (!fixture && error.empty()) {
    try {
      auto fx = std::make_unique<ProcessFixture>();
      const fs::path root = fx->root.path();
      fx->kiln_cache = root / "kiln-cache";
      {
        Spawner populate({KILN_BENCH_WARM_PROCESS, std::to_string(kiln_bench::kProcessKernels), "cold"},
                         kiln_env(fx->kiln_cache), root / "populate.out", root / "populate.err");
        check_child(populate.run(), populate);
      }
      fs::create_directories(root / "alt");
      std::vector<std::pair<fs::path, fs::path>> jobs;
      for (int i = 0; i < kiln_bench::kProcessKernels; ++i) {
        char stem[32];
        std::snprintf(stem, sizeof stem, "k%02d", i);
        const fs::path cpp = root / "alt" / (std::string(stem) + ".cpp");
        const fs::path so = root / "alt" / (std::string(stem) + ".so");
        write_text(cpp, alternative_source("update_theta_and_exner", kiln_bench::process_spec(i)));
        jobs.emplace_back(cpp, so);
        fx->libs.push_back(so.string());
      }
      gpp_build_all(jobs);

      Spawner kiln({KILN_BENCH_WARM_PROCESS, std::to_string(kiln_bench::kProcessKernels), "warm", "maps"},
                   kiln_env(fx->kiln_cache, /*rss=*/true), root / "check-kiln.out", root / "check-kiln.err");
      check_child(kiln.run(), kiln);
      std::vector<std::string> alt_argv{KILN_BENCH_DLOPEN_PROCESS};
      alt_argv.insert(alt_argv.end(), fx->libs.begin(), fx->libs.end());
      Spawner alt(alt_argv, {"KILN_BENCH_RSS=1"}, root / "check-alt.out", root / "check-alt.err");
      check_child(alt.run(), alt);
      const auto kiln_lines = parse_lines(read_text(root / "check-kiln.out"));
      const auto alt_lines = parse_lines(read_text(root / "check-alt.out"));
      fx->kiln_checksum = std::stod(kiln_lines.at("checksum"));
      fx->alt_checksum = std::stod(alt_lines.at("checksum"));
      fx->kiln_rss_mb = peak_rss_mb(kiln_lines);
      fx->alt_rss_mb = peak_rss_mb(alt_lines);
      if (std::fabs(fx->kiln_checksum - fx->alt_checksum) > 1e-12 * std::fabs(fx->kiln_checksum))
        throw std::runtime_error("kiln and the g++ alternative compute different results: checksums " +
                                 std::to_string(fx->kiln_checksum) + " vs " + std::to_string(fx->alt_checksum));
      fixture = std::move(fx);
    } catch (const std::exception& e) {
      error = std::string("process fixture: ") + e.what();
    }
  }
  if (!error.empty()) throw std::runtime_error(error);
  return *fixture;
}

// The two sides' processes, each writing its lines to `out`.
Spawner warm_kiln_spawner(const ProcessFixture& fx, const fs::path& out) {
  return Spawner({KILN_BENCH_WARM_PROCESS, std::to_string(kiln_bench::kProcessKernels), "warm"},
                 kiln_env(fx.kiln_cache), out, fx.root.path() / "run-kiln.err");
}
Spawner warm_dlopen_spawner(const ProcessFixture& fx, const fs::path& out) {
  std::vector<std::string> argv{KILN_BENCH_DLOPEN_PROCESS};
  argv.insert(argv.end(), fx.libs.begin(), fx.libs.end());
  return Spawner(argv, {}, out, fx.root.path() / "run-alt.err");
}

void process_warm_kiln(benchmark::State& state) {
  try {
    const ProcessFixture& fx = process_fixture();
    const fs::path out = fx.root.path() / "run-kiln.out";
    Spawner spawner = warm_kiln_spawner(fx, out);
    for (auto _ : state) {
      const Child child = spawner.run();
      check_child(child, spawner);
      state.SetIterationTime(child.wall_s);
      const auto lines = parse_lines(read_text(out));
      state.counters["peakrss_MB"] = fx.kiln_rss_mb;  // from the validation run
      state.counters["cpu_ms"] = child.cpu_ms;
      state.counters["premain_ms"] = double(field_ll(lines, "t_main") - child.spawn_ns) * 1e-6;
      state.counters["runtime_ms"] = double(field_ll(lines, "t_runtime") - field_ll(lines, "t_main")) * 1e-6;
      state.counters["resolve20_ms"] = double(field_ll(lines, "t_resolved") - field_ll(lines, "t_runtime")) * 1e-6;
      state.counters["end_ms"] = double(field_ll(lines, "t_end") - field_ll(lines, "t_metrics")) * 1e-6;
      state.counters["exit_ms"] = double(child.exit_ns - field_ll(lines, "t_end")) * 1e-6;
    }
    state.SetLabel("kiln: new process, Runtime on the cache, 20 kernel()+call (disk_hits==20, compiles==0)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void process_warm_dlopen(benchmark::State& state) {
  try {
    const ProcessFixture& fx = process_fixture();
    const fs::path out = fx.root.path() / "run-alt.out";
    Spawner spawner = warm_dlopen_spawner(fx, out);
    for (auto _ : state) {
      const Child child = spawner.run();
      check_child(child, spawner);
      state.SetIterationTime(child.wall_s);
      const auto lines = parse_lines(read_text(out));
      state.counters["peakrss_MB"] = fx.alt_rss_mb;  // from the validation run
      state.counters["cpu_ms"] = child.cpu_ms;
      state.counters["premain_ms"] = double(field_ll(lines, "t_main") - child.spawn_ns) * 1e-6;
      state.counters["load20_ms"] = double(field_ll(lines, "t_end") - field_ll(lines, "t_main")) * 1e-6;
      state.counters["exit_ms"] = double(child.exit_ns - field_ll(lines, "t_end")) * 1e-6;
    }
    state.SetLabel("alternative: new process, dlopen+dlsym+call of 20 cached g++ .so files");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// The same two processes interleaved, kiln first in every other pair: the
// separate rows above run one side's repetitions after the other's, so a drift
// of the machine between them lands in their ratio. Time: kiln's median.
constexpr int kPairedRuns = 200;

void process_warm_paired(benchmark::State& state) {
  try {
    const ProcessFixture& fx = process_fixture();
    Spawner kiln = warm_kiln_spawner(fx, fx.root.path() / "run-kiln.out");
    Spawner alt = warm_dlopen_spawner(fx, fx.root.path() / "run-alt.out");
    for (auto _ : state) {
      std::vector<double> kiln_s, alt_s;
      for (int i = 0; i < kPairedRuns; ++i) {
        for (const bool kiln_turn : {i % 2 == 0, i % 2 != 0}) {
          Spawner& spawner = kiln_turn ? kiln : alt;
          const Child child = spawner.run();
          check_child(child, spawner);
          (kiln_turn ? kiln_s : alt_s).push_back(child.wall_s);
        }
      }
      const double kiln_median = kiln_bench::median_of(kiln_s);
      state.SetIterationTime(kiln_median);
      state.counters["kiln_ms"] = kiln_median * 1e3;
      state.counters["dlopen_ms"] = kiln_bench::median_of(alt_s) * 1e3;
    }
    state.SetLabel("kiln and dlopen processes interleaved, " + std::to_string(kPairedRuns) + " of each: medians");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void process_cold_kiln(benchmark::State& state) {
  try {
    for (auto _ : state) {
      TempDir dir;
      Spawner spawner({KILN_BENCH_WARM_PROCESS, "1", "cold"}, kiln_env(dir.path() / "cache", /*rss=*/true),
                      dir.path() / "out", dir.path() / "err");
      const Child child = spawner.run();
      check_child(child, spawner);
      state.SetIterationTime(child.wall_s);
      state.counters["peakrss_MB"] = peak_rss_mb(parse_lines(read_text(dir.path() / "out")));
      state.counters["cpu_ms"] = child.cpu_ms;
    }
    state.SetLabel("kiln: new process, empty cache, 1 kernel: loads clang, compiles, stores, links, calls");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void process_cold_gpp(benchmark::State& state) {
  try {
    for (auto _ : state) {
      TempDir dir;
      const fs::path cpp = dir.path() / "kernel.cpp";
      write_text(cpp, alternative_source("update_theta_and_exner", kiln_bench::process_spec(0)));
      Spawner spawner({KILN_BENCH_DLOPEN_PROCESS, "--compile", cpp.string(), (dir.path() / "kernel.so").string()},
                      {"KILN_BENCH_RSS=1"}, dir.path() / "out", dir.path() / "err");
      const Child child = spawner.run();
      check_child(child, spawner);
      state.SetIterationTime(child.wall_s);
      // Peak RSS: the helper's own (g++ and cc1plus are its children). CPU: wait4 counts the
      // children it waited for, so g++ and cc1plus are in it.
      state.counters["peakrss_MB"] = peak_rss_mb(parse_lines(read_text(dir.path() / "out")));
      state.counters["cpu_ms"] = child.cpu_ms;
    }
    state.SetLabel("alternative: new process runs g++ on the .cpp, dlopen+dlsym+call");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// ---- 4 and 5: memory-hit lookup, call overhead ------------------------------------

// One resolved kernel on a 1-point domain (the work is negligible), its JIT'd
// entry, and the g++ build of the same translation unit.
// A one-point kernel with a temporary: what a call costs when kiln leases the
// handle's temporaries (the checked path) instead of calling straight in.
constexpr const char* kTemporaryKernel = R"(#pragma kiln kernel theta_with_temporary
#pragma kiln array double theta_v[2]
#pragma kiln array double exner[2]
#pragma kiln array double area[1]
#pragma kiln array double z_temp[2]
#pragma kiln temporary double t[2] like theta_v
#pragma kiln domain horizontal_start horizontal_end vertical_start vertical_end
#pragma kiln static double rd_o_cvd
kiln::for_each_point(theta_v, horizontal_start, horizontal_end, vertical_start, vertical_end,
                     [&](auto c, kiln::index_t k) {
                       t(c, k) = area(c) * z_temp(c, k) * rd_o_cvd;
                       theta_v(c, k) += t(c, k);
                     });
)";

// update_theta_and_exner as a kernel that declares no extents (the old
// `[rank]` form), the same body: its calls skip the extent checks, which is
// what call_1point/kiln_unchecked measures them against.
std::string unchecked_theta_source() {
  std::string text;
  for (const auto& file : kiln::kernels_src::kernels())
    if (file.name == "update_theta_and_exner.kiln") text = file.text;
  const auto replace_all = [&](const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
  };
  replace_all("kernel update_theta_and_exner", "kernel theta_unchecked");
  replace_all("[cells][levels]", "[2]");
  replace_all("[cells]", "[1]");
  replace_all("#pragma kiln size", "// (no size)");
  return text;
}

struct TinyFixture {
  TempDir dir;
  std::optional<kiln::Runtime> rt;
  kiln::Spec spec;
  kiln::Kernel kernel;
  kiln::Kernel with_temporary;  // the same update through a temporary like theta_v
  kiln::Kernel unchecked;       // the same kernel declaring no extents
  EntryFn jit_entry = nullptr;
  const kiln_value* jit_params = nullptr;
  Loaded alt;
  std::vector<double> theta_v{300.0}, exner{0.9}, area{1e-3}, z_temp{0.0};
  kiln_arg args[4];
  const kiln_arg* arg_pointers[4] = {&args[0], &args[1], &args[2], &args[3]};  // the entry's ABI

  TinyFixture() {
    spec.set("horizontal_start", 0).set("horizontal_end", 1).set("vertical_start", 0).set("vertical_end", 1);
    spec.set("rd_o_cvd", kiln_bench::kRdOCvd);
    spec.strides("theta_v", {1, 1}).strides("exner", {1, 1}).strides("z_temp", {1, 1}).strides("area", {1});
    args[0] = kiln::c_array(theta_v.data(), {1, 1});
    args[1] = kiln::c_array(exner.data(), {1, 1});
    args[2] = kiln::c_array(area.data(), {1});
    args[3] = kiln::c_array(z_temp.data(), {1, 1});

    rt.emplace(config_for(dir.path() / "cache"));
    kernel = rt->kernel("update_theta_and_exner", spec);
    rt->register_kernel(kTemporaryKernel, "theta_with_temporary.kiln");
    with_temporary = rt->kernel("theta_with_temporary", spec);
    rt->register_kernel(unchecked_theta_source(), "theta_unchecked.kiln");
    unchecked = rt->kernel("theta_unchecked", spec);
    // The JIT'd entry, read through the handle's CallBlock (kiln/kernel.hpp):
    // kiln has no public accessor for it (a Kernel is one pointer to its block).
    static_assert(sizeof(kiln::Kernel) == sizeof(const void*) && std::is_trivially_copyable_v<kiln::Kernel>);
    const kiln::detail::CallBlock* block = nullptr;
    std::memcpy(&block, &kernel, sizeof block);
    jit_entry = block->entry;
    jit_params = block->params;

    const fs::path cpp = dir.path() / "tiny.cpp", so = dir.path() / "tiny.so";
    write_text(cpp, alternative_source("update_theta_and_exner", spec));
    gpp_build_all({{cpp, so}});
    alt = load_so(so);

    // The three ways of calling compute the same thing (z_temp != 0 for the check).
    double results[3][2];
    for (int way = 0; way < 3; ++way) {
      theta_v[0] = 300.0, exner[0] = 0.9, z_temp[0] = 0.5;
      if (way == 0) kernel(args[0], args[1], args[2], args[3]);
      if (way == 1 && jit_entry(arg_pointers, jit_params, nullptr) != 0) throw std::runtime_error("JIT entry refused the call");
      if (way == 2 && alt.entry(arg_pointers, nullptr, nullptr) != 0) throw std::runtime_error("g++ entry refused the call");
      results[way][0] = theta_v[0], results[way][1] = exner[0];
    }
    for (int way = 1; way < 3; ++way)
      for (int f = 0; f < 2; ++f)
        if (std::fabs(results[way][f] - results[0][f]) > 1e-14 * std::fabs(results[0][f]))
          throw std::runtime_error("the call paths disagree");
    theta_v[0] = 300.0, exner[0] = 0.9, z_temp[0] = 0.0;  // timed calls then leave the values as they are
  }
};

std::unique_ptr<TinyFixture> g_tiny_fixture;
std::string g_tiny_fixture_error;

TinyFixture& tiny_fixture() {
  std::unique_ptr<TinyFixture>& fixture = g_tiny_fixture;
  std::string& error = g_tiny_fixture_error;
  if (!fixture && error.empty()) {
    try {
      fixture = std::make_unique<TinyFixture>();
    } catch (const std::exception& e) {
      error = std::string("tiny fixture: ") + e.what();
    }
  }
  if (!error.empty()) throw std::runtime_error(error);
  return *fixture;
}

void lookup_kiln(benchmark::State& state) {
  try {
    TinyFixture& fx = tiny_fixture();
    kiln::Runtime& rt = *fx.rt;
    const kiln::Spec& spec = fx.spec;
    for (auto _ : state) {
      kiln::Kernel kernel = rt.kernel("update_theta_and_exner", spec);
      benchmark::DoNotOptimize(kernel);
    }
    state.SetLabel("kiln: rt.kernel(name, spec) on a resolved (kernel, spec)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Memory hits from 1 thread, then from 2 threads at once, on one resolved
// (kernel, spec): a fixed count of lookups per thread, timed by the wall
// clock, alternated over rounds (the median ratio is reported). Memory hits
// take no lock, so 2 threads should look up nearly twice as many per second.
// (Google Benchmark's Threads() rows were tried first: their per-thread
// timing of a 50 ns body mixed in its own start and stop of the threads.)
void lookup_kiln_threads(benchmark::State& state) {
  try {
    TinyFixture& fx = tiny_fixture();
    kiln::Runtime& rt = *fx.rt;
    const kiln::Spec& spec = fx.spec;
    constexpr long kLookups = 2'000'000;
    const auto lookups = [&] {
      for (long i = 0; i < kLookups; ++i) {
        kiln::Kernel kernel = rt.kernel("update_theta_and_exner", spec);
        benchmark::DoNotOptimize(kernel);
      }
    };
    const auto seconds = [](auto&& run) {
      const auto start = std::chrono::steady_clock::now();
      run();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    std::vector<double> one_rate, two_rate, ratio;
    for (auto _ : state) {
      const double one = seconds(lookups);
      const double two = seconds([&] {
        std::jthread other(lookups);
        lookups();
      });
      one_rate.push_back(kLookups / one);
      two_rate.push_back(2 * kLookups / two);
      ratio.push_back(two_rate.back() / one_rate.back());
      state.SetIterationTime(one + two);
    }
    state.counters["one_thread_Mps"] = kiln_bench::median_of(one_rate) / 1e6;
    state.counters["two_threads_Mps"] = kiln_bench::median_of(two_rate) / 1e6;
    state.counters["ratio"] = kiln_bench::median_of(ratio);
    state.SetLabel("kiln: rt.kernel(name, spec) on one resolved (kernel, spec), 1 thread then 2 at once");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void lookup_dlsym(benchmark::State& state) {
  try {
    TinyFixture& fx = tiny_fixture();
    void* handle = fx.alt.handle;
    for (auto _ : state) {
      void* symbol = dlsym(handle, kAltSymbol);
      benchmark::DoNotOptimize(symbol);
    }
    state.SetLabel("alternative: dlsym(handle, name) on the loaded .so");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// with_temporary: the same update by a kernel with a temporary, which takes
// the checked path and leases the handle's temporaries around the call.
enum class Tiny { checked, with_temporary, unchecked };

void call_handle(benchmark::State& state, Tiny which) {
  try {
    TinyFixture& fx = tiny_fixture();
    const kiln::Kernel kernel = which == Tiny::with_temporary ? fx.with_temporary
                                : which == Tiny::unchecked    ? fx.unchecked
                                                              : fx.kernel;
    const kiln_arg* a = fx.args;
    for (auto _ : state) {
      kernel(a[0], a[1], a[2], a[3]);  // points at the 4 views, checks count, types, ranks, calls
      benchmark::ClobberMemory();
    }
    state.SetLabel(which == Tiny::with_temporary ? "kiln: Kernel handle of a kernel with a temporary (checked path, pool lease)"
                   : which == Tiny::unchecked    ? "kiln: Kernel handle of the same kernel declaring no extents"
                                                 : "kiln: Kernel handle, kernel(theta_v, exner, area, z_temp)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// The same call on 2 threads (Kernel::run_on): what fork and join cost on a
// domain with no work to share.
void call_threads(benchmark::State& state) {
  try {
    TinyFixture& fx = tiny_fixture();
    const kiln::Kernel kernel = fx.kernel;
    const kiln_arg* a = fx.args;
    for (auto _ : state) {
      kernel.run_on(2, a[0], a[1], a[2], a[3]);
      benchmark::ClobberMemory();
    }
    state.SetLabel("kiln: the same call on 2 threads (OpenMP team, one phase and its barrier)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void call_invoke(benchmark::State& state) {
  try {
    TinyFixture& fx = tiny_fixture();
    const kiln::Kernel kernel = fx.kernel;
    const kiln_arg* const* packed = fx.arg_pointers;
    for (auto _ : state) {
      kernel.invoke(packed, 4);  // already gathered: checks and call only
      benchmark::ClobberMemory();
    }
    state.SetLabel("kiln: Kernel handle, kernel.invoke(packed, 4)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void call_direct(benchmark::State& state, bool jit) {
  try {
    TinyFixture& fx = tiny_fixture();
    EntryFn entry = jit ? fx.jit_entry : fx.alt.entry;
    const kiln_value* params = jit ? fx.jit_params : nullptr;
    const kiln_arg* const* packed = fx.arg_pointers;
    for (auto _ : state) {
      benchmark::DoNotOptimize(entry);  // an opaque pointer each time, as the handle loads it
      benchmark::DoNotOptimize(entry(packed, params, nullptr));
      benchmark::ClobberMemory();
    }
    state.SetLabel(jit ? "baseline: the same JIT'd entry called directly through its pointer"
                       : "alternative: the g++ .so entry called through its pointer");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// ---- a new Runtime's fixed cost ------------------------------------------------

// What constructing a Runtime costs a program that makes one per task or per
// test (issue 34, item 2): on one cache folder, the trust walk of its path is
// done once per process and then only looked at again (cache/trust.hpp);
// /new_cache: every Runtime on a folder never seen, so every one walks it
// (what each Runtime paid before the walk was remembered). The folders exist
// (populated with one entry) and sit at the same depth. ~Runtime untimed.
constexpr int kRuntimeIterations = 2000;

void runtime_new(benchmark::State& state, bool same_cache) {
  try {
    TempDir dir;
    std::vector<kiln::Config> configs;
    for (int i = 0; i < (same_cache ? 1 : kRuntimeIterations); ++i) {
      const fs::path folder = dir.path() / ("cache-" + std::to_string(i));
      fs::create_directories(folder / "00");
      configs.push_back(config_for(folder));
    }
    std::size_t next = 0;
    double end_us = 0;
    for (auto _ : state) {
      if (next == configs.size() && !same_cache) throw std::runtime_error("more iterations than folders");
      const kiln::Config& config = configs[same_cache ? 0 : next++];
      std::optional<kiln::Runtime> rt;
      const auto t0 = Clock::now();
      rt.emplace(config);
      state.SetIterationTime(seconds_between(t0, Clock::now()));
      const auto t1 = Clock::now();
      rt.reset();
      end_us += seconds_between(t1, Clock::now()) * 1e6;
    }
    state.counters["end_us"] = end_us / static_cast<double>(state.iterations());
    state.SetLabel(same_cache ? "kiln: new Runtime on the same cache folder each time (~Runtime untimed)"
                              : "kiln: new Runtime on a cache folder never seen before (~Runtime untimed)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// ---- registration ---------------------------------------------------------------

void register_all() {
  using benchmark::RegisterBenchmark;
  for (const KernelCase& kc : kCases) {
    const std::string k = kc.name;
    RegisterBenchmark(("cold_compile/" + k + "/kiln").c_str(), cold_compile_kiln, &kc)
        ->UseManualTime()->Unit(benchmark::kMillisecond);
    RegisterBenchmark(("cold_compile/" + k + "/gpp_dlopen").c_str(), cold_compile_gpp, &kc)
        ->UseManualTime()->Unit(benchmark::kMillisecond);
  }
  for (const KernelCase& kc : kCases) {
    RegisterBenchmark(("warm_start/" + std::string(kc.name) + "/dlopen").c_str(), warm_start_dlopen, &kc)
        ->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(kWarmStartIterations);
  }
  for (const KernelCase& kc : kCases) {
    RegisterBenchmark(("warm_start/" + std::string(kc.name) + "/kiln").c_str(), warm_start_kiln, &kc)
        ->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(kWarmStartIterations);
  }
  RegisterBenchmark("runtime_new/same_cache", runtime_new, true)
      ->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(kRuntimeIterations);
  RegisterBenchmark("runtime_new/new_cache", runtime_new, false)
      ->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(kRuntimeIterations);
  // One child process per iteration; the median of the repetitions is the figure.
  RegisterBenchmark("process_warm_20/kiln", process_warm_kiln)
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(20)->ReportAggregatesOnly(true);
  RegisterBenchmark("process_warm_20/dlopen", process_warm_dlopen)
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(20)->ReportAggregatesOnly(true);
  RegisterBenchmark("process_warm_20/paired", process_warm_paired)
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
  RegisterBenchmark("process_cold_1/kiln", process_cold_kiln)
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(5)->ReportAggregatesOnly(true);
  RegisterBenchmark("process_cold_1/gpp_dlopen", process_cold_gpp)
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(5)->ReportAggregatesOnly(true);

  RegisterBenchmark("lookup_memory_hit/kiln", lookup_kiln);
  RegisterBenchmark("lookup_memory_hit/dlsym", lookup_dlsym);
  RegisterBenchmark("lookup_memory_hit/kiln_threads", lookup_kiln_threads)->Iterations(15)->UseManualTime();
  RegisterBenchmark("call_1point/kiln_handle", call_handle, Tiny::checked);
  RegisterBenchmark("call_1point/kiln_invoke", call_invoke);
  RegisterBenchmark("call_1point/kiln_temporary", call_handle, Tiny::with_temporary);
  RegisterBenchmark("call_1point/kiln_unchecked", call_handle, Tiny::unchecked);
  RegisterBenchmark("call_1point/kiln_threads2", call_threads);
  RegisterBenchmark("call_1point/direct_jit_entry", call_direct, true);
  RegisterBenchmark("call_1point/gpp_so_entry", call_direct, false);
  kiln_bench::register_load_ways(alternative_source("update_theta_and_exner", kiln_bench::process_spec(0)));
}

// ---- the summary after the table ------------------------------------------------

// The console table, plus each benchmark's time (the median where there are
// repetitions) in seconds, for the comparisons printed at the end.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  SummaryReporter() : ConsoleReporter(OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const bool plain = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (!plain && !median) continue;
      Result& r = results_[run.run_name.function_name];
      r.seconds = run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
      for (const auto& [name, counter] : run.counters) r.counters[name] = counter.value;
    }
  }

  void print_summary() const {
    if (results_.empty()) return;
    std::printf("\nkiln vs alternative (Time column; median where repeated; targets from the issue; informational, "
                "never asserted)\n");
    for (const KernelCase& kc : kCases) {
      const std::string k = kc.name;
      compare("cold compile   " + k, "cold_compile/" + k + "/kiln", "cold_compile/" + k + "/gpp_dlopen", 1e3, "ms",
              "g++ + dlopen", 0.5);
    }
    if (g_first_compile_ms >= 0)
      std::printf("  (first compile in this process, which also loads the compiler module: %.1f ms)\n",
                  g_first_compile_ms);
    compare("cold process   1 kernel", "process_cold_1/kiln", "process_cold_1/gpp_dlopen", 1e3, "ms",
            "g++ + dlopen", 0.0);
    for (const KernelCase& kc : kCases) {
      const std::string k = kc.name;
      compare("warm start     " + k, "warm_start/" + k + "/kiln", "warm_start/" + k + "/dlopen", 1e6, "us",
              "dlopen", 1.0);
    }
    compare("warm process   20 kernels", "process_warm_20/kiln", "process_warm_20/dlopen", 1e3, "ms",
            "dlopen of 20 .so", 1.0);
    if (const Result* paired = find("process_warm_20/paired"); paired && paired->counters.count("kiln_ms")) {
      const double k = paired->counters.at("kiln_ms"), a = paired->counters.at("dlopen_ms");
      std::printf("  %-40s kiln %9.3f ms  vs dlopen of 20 .so %9.3f ms  ratio %.2f, target <= 1.00: %s\n",
                  "warm process   20 kernels, interleaved", k, a, k / a, k <= a ? "met" : "MISSED");
    }
    const Result* kiln_rss = find("process_warm_20/kiln");
    const Result* alt_rss = find("process_warm_20/dlopen");
    if (kiln_rss && alt_rss && kiln_rss->counters.count("peakrss_MB") && alt_rss->counters.count("peakrss_MB"))
      std::printf("  %-40s kiln %9.1f MB  vs dlopen of 20 .so %9.1f MB  (no target)\n", "warm process   peak RSS",
                  kiln_rss->counters.at("peakrss_MB"), alt_rss->counters.at("peakrss_MB"));
    if (const Result* lookup = find("lookup_memory_hit/kiln")) {
      const double ns = lookup->seconds * 1e9;
      std::printf("  %-40s kiln %9.1f ns  target <= 100 ns: %s", "memory-hit lookup", ns, ns <= 100 ? "met" : "MISSED");
      if (const Result* alt = find("lookup_memory_hit/dlsym")) std::printf("  (dlsym: %.1f ns)", alt->seconds * 1e9);
      std::printf("\n");
    }
    if (const Result* threads = find("lookup_memory_hit/kiln_threads"); threads && threads->counters.count("ratio")) {
      const double ratio = threads->counters.at("ratio");
      std::printf("  %-40s kiln %6.1f M/s from 1 thread, %6.1f M/s from 2 at once: %.2fx, target >= 1.8x: %s\n",
                  "memory-hit lookups per second", threads->counters.at("one_thread_Mps"),
                  threads->counters.at("two_threads_Mps"), ratio, ratio >= 1.8 ? "met" : "MISSED");
    }
    if (const Result* direct = find("call_1point/direct_jit_entry")) {
      for (const char* way : {"kiln_handle", "kiln_invoke"}) {
        const Result* handle = find(std::string("call_1point/") + way);
        if (!handle) continue;
        const double extra = (handle->seconds - direct->seconds) * 1e9;
        std::printf("  %-40s kiln %9.2f ns  vs direct JIT entry %9.2f ns: +%.2f ns, target <= +3 ns: %s\n",
                    (std::string("call overhead  ") + way).c_str(), handle->seconds * 1e9, direct->seconds * 1e9,
                    extra, extra <= 3.0 ? "met" : "MISSED");
      }
      const Result* handle = find("call_1point/kiln_handle");
      if (const Result* unchecked = find("call_1point/kiln_unchecked"); unchecked && handle) {
        const double extra = (handle->seconds - unchecked->seconds) * 1e9;
        std::printf("  %-40s kiln %9.2f ns  vs no extents declared %9.2f ns: +%.2f ns, target <= +3 ns: %s\n",
                    "extent checks per call", handle->seconds * 1e9, unchecked->seconds * 1e9, extra,
                    extra <= 3.0 ? "met" : "MISSED");
      }
      if (const Result* two = find("call_1point/kiln_threads2"); two && handle) {
        const double extra = (two->seconds - handle->seconds) * 1e6;
        std::printf("  %-40s kiln %9.2f us  vs one thread %9.2f us: +%.2f us, target <= 2 us: %s\n",
                    "fork and join, 2 threads", two->seconds * 1e6, handle->seconds * 1e6, extra,
                    extra <= 2.0 ? "met" : "MISSED");
      }
      if (const Result* temp = find("call_1point/kiln_temporary"))
        std::printf("  %-40s kiln %9.2f ns  (a kernel with a temporary: checked path and pool lease)\n",
                    "call with a temporary", temp->seconds * 1e9);
      if (const Result* alt = find("call_1point/gpp_so_entry"))
        std::printf("  %-40s (g++ .so entry through a pointer: %.2f ns)\n", "", alt->seconds * 1e9);
    }
    print_loads();
  }

  // The design's choice (docs/design.md): lld's .so mapped by kiln against
  // dlopen of it and ORC's in-memory link of its object, per kernel loaded.
  void print_loads() const {
    const Result* map = find("load/direct_map");
    if (!map) return;
    std::printf("  %-40s kiln's map %6.1f us", "load one kernel (no target)", map->seconds * 1e6);
    const std::pair<const char*, const char*> others[] = {
        {"load/dlopen", "dlopen"}, {"load/orc_new_lljit", "ORC new LLJIT"}, {"load/orc_same_lljit", "ORC same LLJIT"}};
    for (const auto& [row, what] : others)
      if (const Result* other = find(row))
        std::printf(", %s %.1f us (%.1fx)", what, other->seconds * 1e6, other->seconds / map->seconds);
    std::printf("\n");
    if (const Result* llvm = find("load/libllvm_per_process"))
      std::printf("  %-40s %.1f ms to map libLLVM, once per process (no kiln process maps it warm)\n", "ORC's process",
                  llvm->seconds * 1e3);
    if (const Result* lld = find("link/lld"))
      std::printf("  %-40s lld %.2f ms, once per compile (ORC links at every load instead)\n", "link at compile time",
                  lld->seconds * 1e3);
  }

 private:
  struct Result {
    double seconds = 0;
    std::map<std::string, double> counters;
  };

  const Result* find(const std::string& name) const {
    const auto it = results_.find(name);
    return it == results_.end() ? nullptr : &it->second;
  }

  // max_ratio 0: no target, the ratio only.
  void compare(const std::string& what, const std::string& kiln_name, const std::string& alt_name, double scale,
               const char* unit, const char* alt_what, double max_ratio) const {
    const Result* kiln = find(kiln_name);
    const Result* alt = find(alt_name);
    if (!kiln || !alt) return;
    const double k = kiln->seconds * scale, a = alt->seconds * scale, ratio = kiln->seconds / alt->seconds;
    std::printf("  %-40s kiln %9.3f %s  vs %s %9.3f %s  ratio %.2f", what.c_str(), k, unit, alt_what, a, unit, ratio);
    if (max_ratio > 0) {
      std::printf(", target <= %.2f: %s", max_ratio, ratio <= max_ratio ? "met" : "MISSED");
      if (ratio > max_ratio) std::printf(" (by %.3f %s)", k - max_ratio * a, unit);
    }
    std::printf("\n");
  }

  std::map<std::string, Result> results_;
};

}  // namespace

int main(int argc, char** argv) {
  // A short default run (CI does not run this); run_benchmarks.sh asks for more.
  std::vector<char*> args(argv, argv + argc);
  static char default_min_time[] = "--benchmark_min_time=0.1";
  bool min_time_given = false;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--benchmark_min_time", 20) == 0) min_time_given = true;
  if (!min_time_given) args.insert(args.begin() + 1, default_min_time);
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;

  register_all();
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_summary();
  g_tiny_fixture.reset();  // ends its Runtime and removes the temporary folders
  g_process_fixture.reset();
  benchmark::Shutdown();
  return 0;
}
