// What kiln_bench's benchmark families share besides processes and the g++
// alternative: the clock, a Runtime's Config on a cache folder, reading a
// kernel's phases out of the metrics, text files, and the two kernels of the
// per-kernel rows on realistic domains.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "kiln/kiln.hpp"

namespace kiln_bench {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

inline kiln::Config config_for(const fs::path& cache_dir) {
  kiln::Config config;
  config.cache_dir = cache_dir;
  config.log_level = "error";
  return config;
}

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline double phase_ms(const kiln::KernelMetrics& m, const char* phase) {
  const auto it = m.phases.find(phase);
  return it == m.phases.end() ? 0.0 : it->second.total_ms;
}

inline const kiln::KernelMetrics& kernel_metrics(const kiln::MetricsSnapshot& snapshot, const char* name) {
  const auto it = snapshot.kernels.find(name);
  if (it == snapshot.kernels.end()) throw std::runtime_error(std::string("no metrics for ") + name);
  return it->second;
}

// A counter the table shows per iteration.
inline benchmark::Counter avg(double total) { return benchmark::Counter(total, benchmark::Counter::kAvgIterations); }

// The kernels of the per-kernel rows (cold_compile, warm_start), on realistic
// domains, C order. `unique` changes a domain value so that each cold
// iteration is a new specialisation (next_unique()).
struct KernelCase {
  const char* name;
  kiln::Spec (*spec)(int unique);
};
kiln::Spec theta_spec(int unique);
kiln::Spec stencil_spec(int unique);
inline constexpr KernelCase kCases[] = {{"update_theta_and_exner", theta_spec}, {"stencil7", stencil_spec}};
int next_unique();

}  // namespace kiln_bench
