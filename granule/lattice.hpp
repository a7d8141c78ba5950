// The rhombus lattice behind Grid, in its natural numbering (before Grid
// reorders a limited-area grid by zone).
//
// Vertex (i, j) sits at i*a + j*b with a = (1, 0), b = (1/2, sqrt(3)/2).
// Rhombus (i, j) has the corners (i, j), (i+1, j), (i, j+1), (i+1, j+1) and is
// split along its short diagonal (i+1, j)-(i, j+1) into two triangles:
//   up(i, j):   vertices (i, j), (i+1, j), (i, j+1)
//   down(i, j): vertices (i+1, j), (i+1, j+1), (i, j+1)
// Three edge kinds start at vertex (i, j):
//   h(i, j): (i, j)-(i+1, j)   u(i, j): (i, j)-(i, j+1)   d(i, j): (i+1, j)-(i, j+1)
// A torus wraps i modulo nx and j modulo ny. An open lattice keeps the extra
// row and column of vertices (and their edges) that the torus identifies with
// the first ones; what lies outside it is -1.
#pragma once

#include <cstdint>
#include <vector>

#include "granule/grid.hpp"

namespace kiln::granule::detail {

class Lattice {
 public:
  Lattice(std::int64_t nx, std::int64_t ny, bool periodic);

  std::int64_t vertices() const { return vx_ * vy_; }
  std::int64_t edges() const { return nx_ * vy_ + vx_ * ny_ + nx_ * ny_; }
  std::int64_t cells() const { return 2 * nx_ * ny_; }

  // Natural indices; -1 outside an open lattice.
  std::int32_t vertex(std::int64_t i, std::int64_t j) const { return at(i, j, vx_, vy_); }
  std::int32_t h(std::int64_t i, std::int64_t j) const { return at(i, j, nx_, vy_); }
  std::int32_t u(std::int64_t i, std::int64_t j) const { return offset(at(i, j, vx_, ny_), nx_ * vy_); }
  std::int32_t d(std::int64_t i, std::int64_t j) const { return offset(at(i, j, nx_, ny_), nx_ * vy_ + vx_ * ny_); }
  std::int32_t up(std::int64_t i, std::int64_t j) const { return cell(at(i, j, nx_, ny_), 0); }
  std::int32_t down(std::int64_t i, std::int64_t j) const { return cell(at(i, j, nx_, ny_), 1); }

  // Hops from vertex `v` (natural index) to the nearest vertex on the cut of
  // an open lattice: min(i, nx - i, j, ny - j). Not defined on a torus.
  std::int64_t distance_to_cut(std::int32_t v) const;

  // ICON's tables that the lattice gives directly, indexed by Table: E2C, E2V,
  // C2E, C2V, V2E, V2C. The others stay empty (see derive_tables).
  std::vector<Connectivity> direct_tables() const;

 private:
  std::int32_t at(std::int64_t i, std::int64_t j, std::int64_t ni, std::int64_t nj) const;
  static std::int32_t offset(std::int32_t index, std::int64_t by) {
    return index < 0 ? -1 : static_cast<std::int32_t>(index + by);
  }
  static std::int32_t cell(std::int32_t rhombus, int which) { return rhombus < 0 ? -1 : 2 * rhombus + which; }

  Connectivity e2c() const;
  Connectivity e2v() const;
  Connectivity c2e() const;
  Connectivity c2v() const;
  Connectivity v2e() const;
  Connectivity v2c() const;

  std::int64_t nx_, ny_;
  bool periodic_;
  std::int64_t vx_, vy_;  // vertices along i and j
};

// Fills C2E2C, C2E2CO and E2C2V of `tables` from E2C, E2V, C2E and C2V, in
// whatever numbering those use.
void derive_tables(std::vector<Connectivity>& tables);

}  // namespace kiln::granule::detail
