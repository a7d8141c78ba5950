// What the whole-process benchmarks resolve: 20 specialisations of
// update_theta_and_exner (horizontal_end differs) called once each, in order,
// on the same small C-order [cells][levels] fields. Shared by kiln_bench (which
// builds the g++ alternative of the same specialisations), the kiln helper
// process and the dlopen helper process, so that all three do the same work.
//
// Header-only on the kiln side except process_spec(), which needs libkiln (the
// dlopen helper never calls it and so never links kiln).
#pragma once

#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kiln/arg.hpp"
#include "kiln/spec.hpp"

namespace kiln_bench {

inline constexpr int kProcessKernels = 20;
inline constexpr int kProcessCells = 64;
inline constexpr int kProcessLevels = 8;
inline constexpr double kRdOCvd = 287.04 / 717.6;

// The symbol the g++ alternative's shared objects export (kiln names its own
// entries after the cache key; the name does not change the work).
inline constexpr const char* kAltSymbol = "kiln_bench_entry";

// The i-th specialisation's domain: horizontal_end walks 40..59 and, for
// each further 20 kernels (the bundle rows' 200), horizontal_start steps
// from 2, so every i below kMaxProcessKernels is a distinct kernel inside
// kProcessCells.
inline int process_horizontal_start(int i) { return 2 + i / 20; }
inline int process_horizontal_end(int i) { return 40 + i % 20; }
inline constexpr int kMaxProcessKernels = 20 * 38;

// The i-th specialisation. Strides are fixed, as a model that knows its layout does.
inline kiln::Spec process_spec(int i) {
  kiln::Spec s;
  s.set("horizontal_start", process_horizontal_start(i)).set("horizontal_end", process_horizontal_end(i));
  s.set("vertical_start", 0).set("vertical_end", kProcessLevels).set("rd_o_cvd", kRdOCvd);
  s.strides("theta_v", {kProcessLevels, 1}).strides("exner", {kProcessLevels, 1});
  s.strides("z_temp", {kProcessLevels, 1}).strides("area", {1});
  return s;
}

// The fields, filled deterministically; args[] in the kernel's argument order.
struct ProcessFields {
  std::vector<double> theta_v, exner, area, z_temp;
  kiln_arg args[4];
  const kiln_arg* arg_pointers[4] = {&args[0], &args[1], &args[2], &args[3]};  // the entry's ABI

  ProcessFields(const ProcessFields&) = delete;  // arg_pointers point into this object
  ProcessFields& operator=(const ProcessFields&) = delete;
  ProcessFields()
      : theta_v(std::size_t(kProcessCells) * kProcessLevels), exner(theta_v.size()), area(kProcessCells),
        z_temp(theta_v.size()) {
    for (std::size_t i = 0; i < theta_v.size(); ++i) {
      theta_v[i] = 280.0 + double(i % 17);
      exner[i] = 0.8 + 0.01 * double(i % 11);
      z_temp[i] = 0.1 * (double(i % 7) - 3.0);
    }
    for (std::size_t c = 0; c < area.size(); ++c) area[c] = 1e-3 * (1.0 + double(c % 5));
    args[0] = kiln::c_array(theta_v.data(), {kProcessCells, kProcessLevels});
    args[1] = kiln::c_array(exner.data(), {kProcessCells, kProcessLevels});
    args[2] = kiln::c_array(area.data(), {kProcessCells});
    args[3] = kiln::c_array(z_temp.data(), {kProcessCells, kProcessLevels});
  }

  double checksum() const {
    double sum = 0.0;
    for (std::size_t i = 0; i < theta_v.size(); ++i) sum += theta_v[i] + 1000.0 * exner[i];
    return sum;
  }
};

// CLOCK_MONOTONIC in ns: the same clock the parent reads around spawn and wait,
// so the parent can split a child's wall time into before-main, work and exit.
inline std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The peak resident set of this process (VmHWM, kB), or -1. Read only when
// KILN_BENCH_RSS=1 (a /proc read is not part of a timed start). wait4's
// ru_maxrss cannot serve: with posix_spawn (vfork semantics) it carries the
// parent's peak from before exec.
inline long peak_rss_kb() {
  const char* wanted = std::getenv("KILN_BENCH_RSS");
  if (wanted == nullptr || wanted[0] != '1') return -1;
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, status) != nullptr)
    if (std::sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  std::fclose(status);
  return kb;
}

}  // namespace kiln_bench
