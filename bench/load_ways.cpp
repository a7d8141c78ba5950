#include "bench/load_ways.hpp"

#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>

#include "bench/compiler_frontend.hpp"
#include "bench/process_kernels.hpp"
#include "bench/temp_dir.hpp"
#include "jit/compiler/frontend.hpp"
#include "jit/compiler/linker.hpp"
#include "jit/compiler_module.hpp"
#include "jit/elf_image.hpp"
#include "kiln/kiln.hpp"

namespace kiln_bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using EntryFn = int (*)(const kiln_arg* const*, const kiln_value*, const kiln_context*);

constexpr int kLoadIterations = 200;
constexpr int kLinkIterations = 20;
constexpr int kLibllvmProcesses = 20;

std::string g_translation_unit;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// ---- the kernel: one compile, its object and its shared object --------------

struct Compiled {
  std::vector<char> object;         // clang's relocatable object: what ORC loads
  std::vector<char> shared_object;  // lld's link of it: what kiln caches and maps
};

// kiln's compiler as the module runs it (jit/compiler/frontend), set up once.
const kiln::jit::compiler::Frontend& frontend() {
  static const std::unique_ptr<kiln::jit::compiler::Frontend> instance = new_frontend();
  return *instance;
}

std::vector<char> compile_object(const std::string& source) {
  // As kiln compiles for this host (KILN_TARGET_CPU=native) with its defaults.
  const kiln::jit::compiler::Request request{source, "update_theta_and_exner.kiln", "", "", "-O3", "on"};
  kiln::jit::compiler::Outcome outcome = frontend().compile(request);
  if (!outcome.ok) throw std::runtime_error("the kernel does not compile: " + outcome.diagnostics);
  return std::move(outcome.object);
}

std::vector<char> link(const std::vector<char>& object) {
  kiln::jit::compiler::Linked linked = kiln::jit::compiler::link_shared_object(object);
  if (!linked.ok) throw std::runtime_error("lld: " + linked.diagnostics);
  return std::move(linked.shared_object);
}

// ---- the three ways to load ---------------------------------------------------

struct Loaded {
  EntryFn entry = nullptr;
  void* handle = nullptr;            // dlopen's
  void* base = nullptr;              // the direct map's, with its plan
  kiln::jit::ImagePlan plan;
  std::unique_ptr<llvm::orc::LLJIT> jit;  // a new LLJIT's
};

std::vector<char> read_file(int fd, const fs::path& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw std::runtime_error(path.string() + ": fstat failed");
  std::vector<char> bytes(static_cast<std::size_t>(info.st_size));
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n <= 0) throw std::runtime_error(path.string() + ": read failed");
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

// kiln's warm load once the entry is verified (runtime/load/mapped_entries):
// plan from the bytes read through the descriptor, map through it.
Loaded map_directly(const fs::path& so) {
  const int fd = ::open(so.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(so.string() + ": open failed");
  Loaded out;
  try {
    const std::vector<char> bytes = read_file(fd, so);
    std::string why;
    const std::optional<kiln::jit::ImagePlan> plan = kiln::jit::plan_image(bytes, kAltSymbol, &why);
    if (!plan) throw std::runtime_error(so.string() + ": cannot be mapped directly: " + why);
    out.plan = *plan;
    const kiln::base::Result<void*> mapped = kiln::jit::map_image(fd, out.plan, so.string());
    if (!mapped) throw std::runtime_error(mapped.error().message);
    out.base = *mapped;
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  out.entry = reinterpret_cast<EntryFn>(static_cast<char*>(out.base) + out.plan.symbol);
  return out;
}

Loaded open_shared_object(const fs::path& so) {
  Loaded out;
  out.handle = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (out.handle == nullptr) throw std::runtime_error(std::string("dlopen: ") + ::dlerror());
  out.entry = reinterpret_cast<EntryFn>(::dlsym(out.handle, kAltSymbol));
  if (out.entry == nullptr) throw std::runtime_error(so.string() + " has no " + kAltSymbol);
  return out;
}

template <class T>
T orc_value(llvm::Expected<T> value, const char* what) {
  if (!value) throw std::runtime_error(std::string(what) + ": " + llvm::toString(value.takeError()));
  return std::forward<T>(*value);  // moves a value out, passes a reference on
}

void orc_check(llvm::Error error, const char* what) {
  if (error) throw std::runtime_error(std::string(what) + ": " + llvm::toString(std::move(error)));
}

std::unique_ptr<llvm::MemoryBuffer> object_file(const fs::path& o) {
  auto buffer = llvm::MemoryBuffer::getFile(o.string());
  if (!buffer) throw std::runtime_error(o.string() + ": " + buffer.getError().message());
  return std::move(*buffer);
}

// The object into `dylib` of `jit`, then the entry looked up, which is when
// ORC's object linking layer links it in memory.
EntryFn orc_add(llvm::orc::LLJIT& jit, llvm::orc::JITDylib& dylib, const fs::path& o) {
  orc_check(jit.addObjectFile(dylib, object_file(o)), "LLJIT::addObjectFile");
  const llvm::orc::ExecutorAddr entry = orc_value(jit.lookup(dylib, kAltSymbol), "LLJIT::lookup");
  return entry.toPtr<EntryFn>();
}

Loaded orc_new_lljit(const fs::path& o) {
  Loaded out;
  out.jit = orc_value(llvm::orc::LLJITBuilder().create(), "LLJITBuilder::create");
  out.entry = orc_add(*out.jit, out.jit->getMainJITDylib(), o);
  return out;
}

void unload(Loaded& loaded) {
  if (loaded.handle != nullptr) ::dlclose(loaded.handle);
  if (loaded.base != nullptr) kiln::jit::unmap_image(loaded.base, loaded.plan);
  loaded.jit.reset();
}

// ---- the fixture: files to load, checked to compute alike -----------------------

void write_bytes(const fs::path& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

// One call of `entry` on process_spec(0)'s domain: theta_v and exner after it.
std::vector<double> call_once(EntryFn entry) {
  const std::size_t points = std::size_t(kProcessCells) * kProcessLevels;
  std::vector<double> theta_v(points, 300.0), exner(points, 0.9), area(kProcessCells, 1e-3), z_temp(points, 0.5);
  kiln_arg args[4] = {kiln::c_array(theta_v.data(), {kProcessCells, kProcessLevels}),
                      kiln::c_array(exner.data(), {kProcessCells, kProcessLevels}),
                      kiln::c_array(area.data(), {kProcessCells}),
                      kiln::c_array(z_temp.data(), {kProcessCells, kProcessLevels})};
  const kiln_arg* pointers[4] = {&args[0], &args[1], &args[2], &args[3]};
  if (entry(pointers, nullptr, nullptr) != 0) throw std::runtime_error("the entry refused the call");
  theta_v.insert(theta_v.end(), exner.begin(), exner.end());
  return theta_v;
}

// `count` folders under `root`, each with a copy of the .so and the .o: a
// loader never sees a file twice (it would know the inode or the name).
std::vector<fs::path> copies_of(const Compiled& compiled, const fs::path& root, int count) {
  std::vector<fs::path> copies;
  for (int i = 0; i < count; ++i) {
    const fs::path copy = root / ("copy-" + std::to_string(i));
    fs::create_directories(copy);
    write_bytes(copy / "kernel.so", compiled.shared_object);
    write_bytes(copy / "kernel.o", compiled.object);
    copies.push_back(copy);
  }
  return copies;
}

struct LoadFixture {
  Compiled compiled;

  LoadFixture() {
    compiled.object = compile_object(g_translation_unit);
    compiled.shared_object = link(compiled.object);
    check_the_ways_agree();
  }

  // Each way computes the direct map's values.
  void check_the_ways_agree() const {
    const TempDir folder("kiln-bench-load");
    const fs::path copy = copies_of(compiled, folder.path(), 1).front();
    Loaded mapped = map_directly(copy / "kernel.so");
    Loaded opened = open_shared_object(copy / "kernel.so");
    Loaded orc = orc_new_lljit(copy / "kernel.o");
    const std::vector<double> want = call_once(mapped.entry);
    const bool agree = call_once(opened.entry) == want && call_once(orc.entry) == want;
    unload(mapped);
    unload(opened);
    unload(orc);
    if (!agree) throw std::runtime_error("the direct map, dlopen and ORC entries compute different values");
  }
};

std::unique_ptr<LoadFixture> g_fixture;
std::string g_fixture_error;

LoadFixture& load_fixture() {
  if (!g_fixture && g_fixture_error.empty()) {
    try {
      // ORC's once-per-process set-up, outside every timed region.
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
      g_fixture = std::make_unique<LoadFixture>();
    } catch (const std::exception& e) {
      g_fixture_error = std::string("load fixture: ") + e.what();
    }
  }
  if (!g_fixture_error.empty()) throw std::runtime_error(g_fixture_error);
  return *g_fixture;
}

// ---- the rows -----------------------------------------------------------------

enum class Way { direct_map, dlopen, orc_new_lljit, orc_same_lljit };

const char* label(Way way) {
  switch (way) {
    case Way::direct_map: return "kiln's warm load of the lld .so: open, read, check, mmap (jit/elf_image)";
    case Way::dlopen: return "the same .so: dlopen + dlsym";
    case Way::orc_new_lljit: return "its .o: read, new LLJIT, addObjectFile, lookup (LLVM mapped and initialised)";
    case Way::orc_same_lljit: return "its .o: read, new JITDylib of one LLJIT, addObjectFile, lookup";
  }
  return "";
}

void load_row(benchmark::State& state, Way way) {
  try {
    const LoadFixture& fx = load_fixture();
    const TempDir folder("kiln-bench-load");
    const std::vector<fs::path> copies = copies_of(fx.compiled, folder.path(), kLoadIterations);
    std::unique_ptr<llvm::orc::LLJIT> shared_jit;
    if (way == Way::orc_same_lljit)
      shared_jit = orc_value(llvm::orc::LLJITBuilder().create(), "LLJITBuilder::create");
    std::vector<Loaded> kept;  // loaded until the row ends, as a program keeps its kernels
    std::size_t next = 0;
    for (auto _ : state) {
      if (next == copies.size()) throw std::runtime_error("more iterations than copies");
      const fs::path& copy = copies[next++];
      const auto start = Clock::now();
      Loaded loaded;
      if (way == Way::direct_map) loaded = map_directly(copy / "kernel.so");
      if (way == Way::dlopen) loaded = open_shared_object(copy / "kernel.so");
      if (way == Way::orc_new_lljit) loaded = orc_new_lljit(copy / "kernel.o");
      if (way == Way::orc_same_lljit) {
        llvm::orc::JITDylib& dylib = orc_value(shared_jit->createJITDylib("kernel-" + std::to_string(next)),
                                               "LLJIT::createJITDylib");
        loaded.entry = orc_add(*shared_jit, dylib, copy / "kernel.o");
      }
      state.SetIterationTime(seconds_since(start));
      benchmark::DoNotOptimize(loaded.entry);
      kept.push_back(std::move(loaded));
    }
    for (Loaded& loaded : kept) unload(loaded);
    state.counters["so_bytes"] = double(fx.compiled.shared_object.size());
    state.counters["o_bytes"] = double(fx.compiled.object.size());
    state.SetLabel(label(way));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// lld's link of the object into the shared object, in process, as the
// compile worker does it after clang (the compile itself is not timed here).
void lld_row(benchmark::State& state) {
  try {
    const LoadFixture& fx = load_fixture();
    for (auto _ : state) {
      const auto start = Clock::now();
      const std::vector<char> shared_object = link(fx.compiled.object);
      state.SetIterationTime(seconds_since(start));
      benchmark::DoNotOptimize(shared_object.data());
    }
    state.SetLabel("the compile side: lld links the .o into the .so kiln caches (jit/compiler/linker)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Mapping libLLVM in a new process (kiln_bench_llvm_process): once per process
// for ORC, never for a warm kiln process. Its own time, from the child.
void libllvm_row(benchmark::State& state) {
  try {
    for (auto _ : state) {
      FILE* child = ::popen(KILN_BENCH_LLVM_PROCESS, "r");
      if (child == nullptr) throw std::runtime_error("cannot start " KILN_BENCH_LLVM_PROCESS);
      double ms = -1.0;
      const int read = std::fscanf(child, "%lf", &ms);
      if (::pclose(child) != 0 || read != 1) throw std::runtime_error(KILN_BENCH_LLVM_PROCESS " failed");
      state.SetIterationTime(ms * 1e-3);
    }
    state.SetLabel("once per process for ORC: dlopen of libLLVM in a new process (lazy binding)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

void register_load_ways(std::string translation_unit) {
  g_translation_unit = std::move(translation_unit);
  const std::pair<const char*, Way> rows[] = {{"load/direct_map", Way::direct_map},
                                              {"load/dlopen", Way::dlopen},
                                              {"load/orc_new_lljit", Way::orc_new_lljit},
                                              {"load/orc_same_lljit", Way::orc_same_lljit}};
  for (const auto& [name, way] : rows)
    benchmark::RegisterBenchmark(name, load_row, way)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond)
        ->Iterations(kLoadIterations);
  benchmark::RegisterBenchmark("load/libllvm_per_process", libllvm_row)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(kLibllvmProcesses);
  benchmark::RegisterBenchmark("link/lld", lld_row)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(kLinkIterations);
}

std::unique_ptr<kiln::jit::compiler::Frontend> new_frontend() {
  const kiln::base::Result<std::filesystem::path> resource_dir = kiln::jit::clang_resource_dir();
  if (!resource_dir) throw std::runtime_error(resource_dir.error().message);
  std::string error;
  auto made = kiln::jit::compiler::Frontend::create(resource_dir->string(), error);
  if (!made) throw std::runtime_error("cannot set up the compiler: " + error);
  return made;
}

}  // namespace kiln_bench
