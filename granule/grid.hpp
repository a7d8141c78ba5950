// An ICON-like triangular grid for the granule demo, the stencil tests and the
// benchmarks: a periodic torus of nx x ny rhombi, each split into two
// triangles (2*nx*ny cells, 3*nx*ny edges, nx*ny vertices), or the same grid
// cut open as a limited-area grid whose entities are ordered by zone (lateral
// boundary rows, nudging zone, interior), so each zone is a contiguous index
// range as in ICON. Connectivity tables are int32, row-major [n_entities][n],
// with -1 where a limited-area entity has no neighbour.
//
// Geometry and numbering: granule/lattice.hpp. Cut open, the grid keeps
// the row and column of vertices (and their edges) that the torus wraps onto
// the first ones: 2*nx*ny cells, 3*nx*ny + nx + ny edges, (nx+1)*(ny+1)
// vertices. Every cell keeps three edges and three vertices (C2E, C2V, E2V
// are full); E2C, C2E2C, C2E2CO, E2C2V, V2E and V2C hold -1 for a neighbour
// outside. Slot k of a row always means the same direction, so a -1 stays in
// its slot: E2C[e] = (the "up" triangle, the "down" one); C2E2C[c][k] is
// across edge C2E[c][k], C2E[c][k] joins C2V[c][k] and C2V[c][(k+1)%3], both
// counter-clockwise; V2E/V2C go counter-clockwise from the edge along +x,
// V2C[v][k] lying between V2E[v][k] and V2E[v][k+1]; E2C2V[e][2 + k] is the
// far vertex of cell E2C[e][k].
//
// Rows (ICON's refin_ctrl): a vertex d hops from the cut is in row d + 1, a
// cell in the row of its nearest vertex (row 1: cells touching the cut, by an
// edge or a vertex). An edge on the cut is in row 1, an edge between two
// cells of row r in row 2r, between rows r and r + 1 in row 2r + 1. So cell
// row r holds edge rows 2r - 1 (its outer edges) and 2r (those inside the
// row), as in ICON, where 4 cell rows make 8 edge rows and edge row 9 lies
// between cell rows 4 and 5.
// Zones, in rows (icon4py's h_grid with grf_bdywidth_c = 4, grf_bdywidth_e = 9):
//   cells:    lateral boundary rows 1-4, nudging rows 5-6,  interior from 7
//   edges:    lateral boundary rows 1-8, nudging rows 9-12, interior from 13
//   vertices: lateral boundary rows 1-4, nudging rows 5-6,  interior from 7
// As in icon4py, edge row 9 (grf_bdywidth_e) is the first nudging row and
// start_2nd_nudge_line(edge) the start of row 10 (its NUDGING_LEVEL_2). The
// nudging zone is 2 cell rows (ICON's default nudge_zone_width is 8) so that
// small test grids have all zones: limited_area needs nx, ny >= 13, which
// leaves every kind an interior. torus needs nx, ny >= 3 (a simple
// triangulation: distinct neighbours everywhere). Within a zone entities keep
// their lattice order.
//
// Not part of kiln's public API: a fixture for tools/ and tests/.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace kiln::granule {

enum class Entity { cell, edge, vertex };

// ICON's connectivity tables, named after them.
enum class Table { E2C, E2V, C2E, C2V, C2E2C, C2E2CO, E2C2V, V2E, V2C };

struct IndexRange {
  std::int64_t start = 0;
  std::int64_t end = 0;  // half-open
  std::int64_t size() const { return end - start; }
};

// One table: `rows` entities, `cols` neighbours each, row-major.
struct Connectivity {
  std::vector<std::int32_t> data;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int32_t operator()(std::int64_t row, std::int64_t col) const { return data[row * cols + col]; }
};

class Grid {
 public:
  // Periodic in both directions: every table is full (no -1).
  static Grid torus(std::int64_t nx, std::int64_t ny);
  // Cut open along both directions; entities ordered by zone. nx, ny must be
  // large enough for the boundary and nudging rows and an interior to exist
  // (>= 13; throws std::invalid_argument otherwise). Both throw when nx, ny
  // are too small or too large for int32 indices.
  static Grid limited_area(std::int64_t nx, std::int64_t ny);

  bool is_limited_area() const { return limited_area_; }
  std::int64_t size(Entity e) const;
  const Connectivity& table(Table t) const;

  // Zones, per entity kind. On a torus every entity is interior: the boundary
  // and nudging ranges are empty and interior() is the whole range.
  // Lateral boundary row `row` (1-based, 1 = outermost), as ICON's refin_ctrl;
  // throws std::out_of_range unless 1 <= row <= boundary_rows(e).
  IndexRange boundary_row(Entity e, int row) const;
  IndexRange lateral_boundary(Entity e) const;  // all boundary rows together
  IndexRange nudging(Entity e) const;           // the whole nudging zone
  // First index of the nudging zone's second row: icon4py's
  // start_2nd_nudge_line_idx_e for edges (the torus: 0).
  std::int64_t start_2nd_nudge_line(Entity e) const;
  IndexRange interior(Entity e) const;
  IndexRange all(Entity e) const { return {0, size(e)}; }

  int boundary_rows(Entity e) const;  // how many lateral boundary rows kind e has
  int nudging_rows(Entity e) const;

 private:
  bool limited_area_ = false;
  std::int64_t n_[3] = {0, 0, 0};
  std::vector<Connectivity> tables_;  // indexed by Table
  // Per entity kind: zone start indices, ordered boundary rows, nudging rows, interior, end.
  std::vector<std::int64_t> zone_starts_[3];
  int boundary_rows_[3] = {0, 0, 0};
  int nudging_rows_[3] = {0, 0, 0};
};

std::string_view name(Table t);
std::string_view name(Entity e);

}  // namespace kiln::granule
