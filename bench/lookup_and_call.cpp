// kiln_bench's lookup_memory_hit/... and call_1point/... rows: rt.kernel() on
// a resolved (kernel, spec) against dlsym, and a Kernel handle's call on a
// 1-point domain against a direct call of the same JIT'd entry and of the
// g++ build's (the hot paths: nothing here may grow without these rows showing it).
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "bench/gpp_alternative.hpp"
#include "bench/kiln_bench_rows.hpp"
#include "bench/kiln_bench_support.hpp"
#include "bench/median.hpp"
#include "bench/process_kernels.hpp"
#include "bench/temp_dir.hpp"
#include "kernels_src/embedded_sources.hpp"

namespace kiln_bench {
namespace {

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

}  // namespace

void release_tiny_fixture() { g_tiny_fixture.reset(); }

void register_lookup_and_call_rows() {
  using benchmark::RegisterBenchmark;
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
}

}  // namespace kiln_bench
