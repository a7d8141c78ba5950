// What the crash tests resolve and run, shared by crash_test.cpp and its child
// (crash_child.cpp) so that both sides agree on a correct output: the point-
// wise kernel on a small Fortran-order grid, one static rd_o_cvd per trial.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/api/test_support.hpp"

namespace kiln::testing::crash {

inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Where the store keeps a key's entry and its build lock (cache/disk_store.hpp).
inline std::filesystem::path entry_file_of(const std::filesystem::path& dir, const std::string& key) {
  return dir / key.substr(0, 2) / key.substr(2);
}
inline std::filesystem::path lock_file_of(const std::filesystem::path& dir, const std::string& key) {
  return dir / key.substr(0, 2) / (key.substr(2) + ".lock");
}

inline constexpr const char* kKernel = "update_theta_and_exner";
inline constexpr int kCells = 24;
inline constexpr int kLevels = 6;

// Exact in text: printed with 17 significant digits, read back with strtod.
inline std::string text_of(double rd) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", rd);
  return buffer;
}
inline double rd_from(const std::string& text) { return std::strtod(text.c_str(), nullptr); }

// "" when `got` matches `want` (up to fused multiply-adds), else where not.
inline std::string mismatch(const std::vector<double>& got, const std::vector<double>& want, const char* field) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-14 * std::fabs(want[i])))
      return std::string(field) + "[" + std::to_string(i) + "] = " + text_of(got[i]) + ", want " + text_of(want[i]);
  return {};
}

// Resolves the kernel specialised on `rd`, runs it, and compares with the
// reference: returns "" when right, else what is wrong. Throws what
// Runtime::kernel throws. `key`, when given, receives the kernel's cache key.
inline std::string run_and_check(Runtime& rt, double rd, std::string* key = nullptr) {
  ThetaCase got(kCells, kLevels, true), want(kCells, kLevels, true);
  const Kernel k = rt.kernel(kKernel, got.spec(1, kCells - 1, 0, kLevels, rd));
  if (key) *key = k.key();
  got.run(k);
  want.reference(1, kCells - 1, 0, kLevels, rd);
  const std::string theta = mismatch(got.theta_v, want.theta_v, "theta_v");
  return theta.empty() ? mismatch(got.exner, want.exner, "exner") : theta;
}

}  // namespace kiln::testing::crash
