#include <atomic>
#include <cstdint>

#include "bench/kiln_bench_support.hpp"
#include "bench/process_kernels.hpp"

namespace kiln_bench {

kiln::Spec theta_spec(int unique) {
  constexpr int kCells = 20480, kLevels = 80;  // ICON R02B04
  kiln::Spec s;
  s.set("horizontal_start", 1280).set("horizontal_end", kCells - unique % 16384);
  s.set("vertical_start", 0).set("vertical_end", kLevels).set("rd_o_cvd", kRdOCvd);
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

int next_unique() {
  static std::atomic<int> next{1};
  return next++;
}

}  // namespace kiln_bench
