// kiln_bench's cold_compile/<kernel>/... rows: kiln's whole miss path (a new
// Runtime on a new, empty cache folder, a specialisation never seen) against
// the alternative's source file + g++ subprocess + dlopen + dlsym. And the
// compile_prelude/<kernel>/paired rows: the compile alone (clang -O3 to an
// object, in this process, the worker's code) of a new specialisation with the
// prelude parsed against it read from its precompiled copy
// (jit/compiler/prelude_pch.hpp), alternating, so that both see the same load.
#include <dlfcn.h>
#include <time.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "bench/child_process.hpp"
#include "bench/compiler_frontend.hpp"
#include "bench/gpp_alternative.hpp"
#include "bench/kiln_bench_rows.hpp"
#include "bench/kiln_bench_support.hpp"
#include "bench/temp_dir.hpp"
#include "jit/compiler/frontend.hpp"
#include "jit/compiler_module.hpp"

namespace kiln_bench {
namespace {

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

// The granule's largest kernel (its longest source, ~52 KB with the prelude),
// with its domain and static values; strides at run time.
kiln::Spec w_diffusion_spec(int unique) {
  kiln::Spec s;
  s.set("horizontal_start", 1280).set("horizontal_end", 20480 - unique % 16384);
  s.set("vertical_start", 0).set("vertical_end", 80);
  return s.set("type_shear", 2).set("nrdmax", 9).set("interior_idx", 3).set("halo_idx", 5);
}
constexpr KernelCase kLargest{"apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence",
                              w_diffusion_spec};

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

struct Took {
  double wall_ms = 0, cpu_ms = 0;  // cpu: this thread's, which the compile runs on (less hostage to the load)
};

// Compiles a new specialisation of `kc`.
Took compile_once(const kiln::jit::compiler::Frontend& frontend, const KernelCase* kc, bool reuse_prelude,
                  bool expect_used) {
  const std::string source = alternative_source(kc->name, kc->spec(next_unique()));
  const std::string file_name = std::string(kc->name) + ".kiln";
  kiln::jit::compiler::Request request{source, file_name, "", "", "-O3", "on"};
  request.reuse_prelude = reuse_prelude;
  const double cpu0 = thread_cpu_ms();
  const auto t0 = Clock::now();
  const kiln::jit::compiler::Outcome outcome = frontend.compile(request);
  const Took took{seconds_between(t0, Clock::now()) * 1e3, thread_cpu_ms() - cpu0};
  if (!outcome.ok) throw std::runtime_error("the kernel does not compile: " + outcome.diagnostics);
  if (outcome.used_prelude != expect_used)
    throw std::runtime_error(expect_used ? "the precompiled prelude was not used" : "a PCH was used on first sight");
  return took;
}

void compile_prelude_paired(benchmark::State& state, const KernelCase* kc) {
  try {
    // A new front end, as a new worker's: its first compile parses the
    // prelude (first seen), its second builds the PCH and uses it.
    const std::unique_ptr<kiln::jit::compiler::Frontend> frontend = new_frontend();
    const Took first = compile_once(*frontend, kc, true, false);
    const Took second = compile_once(*frontend, kc, true, true);
    Took parsed, precompiled;
    for (auto _ : state) {
      const Took p = compile_once(*frontend, kc, false, false), c = compile_once(*frontend, kc, true, true);
      parsed.wall_ms += p.wall_ms;
      parsed.cpu_ms += p.cpu_ms;
      precompiled.wall_ms += c.wall_ms;
      precompiled.cpu_ms += c.cpu_ms;
      state.SetIterationTime((p.wall_ms + c.wall_ms) * 1e-3);
    }
    state.counters["parsed_ms"] = avg(parsed.wall_ms);
    state.counters["precompiled_ms"] = avg(precompiled.wall_ms);
    state.counters["parsed_cpu_ms"] = avg(parsed.cpu_ms);
    state.counters["precompiled_cpu_ms"] = avg(precompiled.cpu_ms);
    state.counters["cpu_ratio"] = parsed.cpu_ms > 0 ? precompiled.cpu_ms / parsed.cpu_ms : 0;
    state.counters["first_cpu_ms"] = first.cpu_ms;
    state.counters["second_cpu_ms"] = second.cpu_ms;  // with the PCH's build
    state.SetLabel("clang -O3 to an object in process, a new specialisation each: prelude parsed vs precompiled");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

double first_compile_ms() { return g_first_compile_ms; }

void register_cold_compile_rows() {
  using benchmark::RegisterBenchmark;
  for (const KernelCase& kc : kCases) {
    const std::string k = kc.name;
    RegisterBenchmark(("cold_compile/" + k + "/kiln").c_str(), cold_compile_kiln, &kc)
        ->UseManualTime()->Unit(benchmark::kMillisecond);
    RegisterBenchmark(("cold_compile/" + k + "/gpp_dlopen").c_str(), cold_compile_gpp, &kc)
        ->UseManualTime()->Unit(benchmark::kMillisecond);
  }
  for (const KernelCase* kc : {&kCases[0], &kCases[1], &kLargest})
    RegisterBenchmark(("compile_prelude/" + std::string(kc->name) + "/paired").c_str(), compile_prelude_paired, kc)
        ->UseManualTime()->Unit(benchmark::kMillisecond);
}

}  // namespace kiln_bench
