// Shared by the API tests: a fresh cache folder per test, a Runtime on it,
// independent reference implementations of the kernels in kernels_src/, and
// a probe of file locks.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "tests/support/temp_dir.hpp"

namespace kiln::testing {

inline Config config_for(const std::filesystem::path& cache_dir) {
  Config config;
  config.cache_dir = cache_dir;
  config.log_level = "error";
  return config;
}

// A Runtime on a fresh cache folder.
class RuntimeTest : public ::testing::Test {
 protected:
  TempDir dir;
  Runtime rt{config_for(dir.path())};
};

// Every cache entry file under `dir` (two-hex-digit folders only).
inline std::vector<std::filesystem::path> entry_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::exists(dir)) return files;
  for (const auto& sub : std::filesystem::directory_iterator(dir)) {
    if (!sub.is_directory() || sub.path().filename().string().size() != 2) continue;
    for (const auto& f : std::filesystem::directory_iterator(sub.path()))
      // Entry names are the key's last 30 hex digits; build locks end in ".lock".
      if (f.is_regular_file() && f.path().filename().string().size() == 30) files.push_back(f.path());
  }
  return files;
}

inline std::vector<double> random_field(std::size_t n, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

// update_theta_and_exner on [cells][levels] fields in either layout, written
// from the formula, independent of the kernel source.
struct ThetaCase {
  int cells, levels;
  bool fortran;
  std::vector<double> theta_v, exner, area, z_temp;

  ThetaCase(int c, int l, bool f, unsigned seed = 11)
      : cells(c), levels(l), fortran(f),
        theta_v(random_field(std::size_t(c) * l, 280, 320, seed)),
        exner(random_field(std::size_t(c) * l, 0.7, 1.0, seed + 1)),
        area(random_field(std::size_t(c), 1e-3, 2e-3, seed + 2)),
        z_temp(random_field(std::size_t(c) * l, -1, 1, seed + 3)) {}

  std::size_t at(int cell, int level) const {
    return fortran ? std::size_t(level) * cells + cell : std::size_t(cell) * levels + level;
  }
  kiln_arg view(std::vector<double>& field) const {
    return fortran ? f_array(field.data(), {cells, levels}) : c_array(field.data(), {cells, levels});
  }
  kiln_arg area_view() { return c_array(area.data(), {cells}); }

  Spec spec(int hs, int he, int vs, int ve, double rd_o_cvd = 287.04 / 717.6) {
    Spec s;
    s.set("horizontal_start", hs).set("horizontal_end", he).set("vertical_start", vs).set("vertical_end", ve);
    s.set("rd_o_cvd", rd_o_cvd);
    return s.strides_of("theta_v", view(theta_v)).strides_of("exner", view(exner)).strides_of("z_temp", view(z_temp));
  }
  void run(const Kernel& k) { k(view(theta_v), view(exner), area_view(), view(z_temp)); }

  void reference(int hs, int he, int vs, int ve, double rd_o_cvd = 287.04 / 717.6) {
    for (int c = hs; c < he; ++c)
      for (int k = vs; k < ve; ++k) {
        const double th0 = theta_v[at(c, k)];
        const double th = th0 + area[c] * z_temp[at(c, k)];
        exner[at(c, k)] *= 1 + rd_o_cvd * (th / th0 - 1);
        theta_v[at(c, k)] = th;
      }
  }
};

// The message of the E that f throws; a test failure when it throws none.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception of the expected type";
  return {};
}

// Relative difference allowing for fused multiply-adds in the JIT'd code.
inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rtol = 1e-14) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(std::fabs(got[i] - want[i]), rtol * std::fabs(want[i])) << "at " << i;
}

// Whether some open file description holds a lock on `file` (F_OFD_GETLK asks
// without taking it): a build lock or a build slot.
inline bool is_locked(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  const bool locked = ::fcntl(fd, F_OFD_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
  ::close(fd);
  return locked;
}

}  // namespace kiln::testing
