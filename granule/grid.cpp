#include "granule/grid.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "granule/lattice.hpp"

namespace kiln::granule {
namespace {

// Zone widths of a limited-area grid, in rows of each kind (see grid.hpp).
struct ZoneWidths {
  int boundary;
  int nudging;
};
constexpr ZoneWidths kCellZones{4, 2};
constexpr ZoneWidths kEdgeZones{8, 4};
constexpr ZoneWidths kVertexZones{4, 2};
constexpr ZoneWidths kZones[3] = {kCellZones, kEdgeZones, kVertexZones};  // indexed by Entity

// Interior cells need a vertex 6 hops from the cut on every side and one
// rhombus more; an interior cell's vertices and outer edges are interior too.
constexpr std::int64_t kMinLimitedAreaSize = 2 * (kCellZones.boundary + kCellZones.nudging) + 1;

constexpr std::size_t index(Entity e) { return static_cast<std::size_t>(e); }
constexpr std::size_t index(Table t) { return static_cast<std::size_t>(t); }
// Element i of v, for the signed indices the tables hold.
template <class T>
const T& at(const std::vector<T>& v, std::int64_t i) {
  return v[static_cast<std::size_t>(i)];
}

// The entity kinds a table maps from (its rows) and to (its values).
struct TableKinds {
  Entity from, to;
};
constexpr TableKinds kinds_of(Table t) {
  switch (t) {
    case Table::E2C: return {Entity::edge, Entity::cell};
    case Table::E2V: return {Entity::edge, Entity::vertex};
    case Table::C2E: return {Entity::cell, Entity::edge};
    case Table::C2V: return {Entity::cell, Entity::vertex};
    case Table::C2E2C: return {Entity::cell, Entity::cell};
    case Table::C2E2CO: return {Entity::cell, Entity::cell};
    case Table::E2C2V: return {Entity::edge, Entity::vertex};
    case Table::V2E: return {Entity::vertex, Entity::edge};
    case Table::V2C: return {Entity::vertex, Entity::cell};
  }
  return {Entity::cell, Entity::cell};
}
constexpr Table kAllTables[] = {Table::E2C,    Table::E2V,   Table::C2E, Table::C2V, Table::C2E2C,
                                Table::C2E2CO, Table::E2C2V, Table::V2E, Table::V2C};

void check_size(const char* what, std::int64_t nx, std::int64_t ny, std::int64_t min) {
  if (nx < min || ny < min) {
    throw std::invalid_argument(std::string("kiln::granule::Grid::") + what + ": nx and ny must be at least " +
                                std::to_string(min) + ", got nx=" + std::to_string(nx) +
                                ", ny=" + std::to_string(ny));
  }
  // Edges are the most numerous kind (3 nx ny + nx + ny); tables hold int32.
  const std::int64_t limit = std::numeric_limits<std::int32_t>::max() / 4;
  if (nx > limit || ny > limit || nx * ny > limit) {
    throw std::invalid_argument(std::string("kiln::granule::Grid::") + what +
                                ": grid too large for int32 indices (nx=" + std::to_string(nx) +
                                ", ny=" + std::to_string(ny) + ")");
  }
}

// Rows (1 = on the cut), as ICON's refin_ctrl: a vertex d hops from the cut
// is in row d + 1, a cell in the row of its nearest vertex.
std::vector<std::int64_t> vertex_rows(const detail::Lattice& lattice) {
  std::vector<std::int64_t> rows;
  for (std::int64_t v = 0; v < lattice.vertices(); ++v)
    rows.push_back(lattice.distance_to_cut(static_cast<std::int32_t>(v)) + 1);
  return rows;
}

std::vector<std::int64_t> cell_rows(const std::vector<std::int64_t>& vertex_rows, const Connectivity& c2v) {
  std::vector<std::int64_t> rows;
  for (std::int64_t c = 0; c < c2v.rows; ++c) {
    rows.push_back(std::min({at(vertex_rows, c2v(c, 0)), at(vertex_rows, c2v(c, 1)), at(vertex_rows, c2v(c, 2))}));
  }
  return rows;
}

// An edge on the cut is in row 1, one between two cells of row r in row 2r,
// one between rows r and r + 1 in row 2r + 1 (neighbouring cells differ by at
// most one row). By cells rather than by its vertices' distances: near the
// 60-degree corners an edge joins two vertices on the cut without lying on it.
std::vector<std::int64_t> edge_rows(const std::vector<std::int64_t>& cell_rows, const Connectivity& e2c) {
  std::vector<std::int64_t> rows;
  for (std::int64_t e = 0; e < e2c.rows; ++e) {
    if (e2c(e, 0) < 0 || e2c(e, 1) < 0) {
      rows.push_back(1);
      continue;
    }
    rows.push_back(at(cell_rows, e2c(e, 0)) + at(cell_rows, e2c(e, 1)));
  }
  return rows;
}

// Orders entities by zone (boundary rows, nudging rows, interior), keeping
// the natural order within a zone. Returns the new index of every entity and
// fills `starts` with the first index of each zone, then the end.
std::vector<std::int32_t> order_by_zone(const std::vector<std::int64_t>& rows, ZoneWidths widths,
                                        std::vector<std::int64_t>& starts) {
  const std::int64_t zones = widths.boundary + widths.nudging + 1;
  auto zone = [&](std::int64_t row) { return std::min(row, zones) - 1; };
  starts.assign(static_cast<std::size_t>(zones + 1), 0);
  for (std::int64_t row : rows) ++starts[static_cast<std::size_t>(zone(row) + 1)];
  for (std::size_t z = 1; z < starts.size(); ++z) starts[z] += starts[z - 1];

  std::vector<std::int64_t> next(starts.begin(), starts.end() - 1);
  std::vector<std::int32_t> new_index(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    new_index[i] = static_cast<std::int32_t>(next[static_cast<std::size_t>(zone(rows[i]))]++);
  return new_index;
}

// `table` with its rows moved to their new indices and its values renamed.
Connectivity renumber(const Connectivity& table, const std::vector<std::int32_t>& new_row,
                      const std::vector<std::int32_t>& new_value) {
  Connectivity out{std::vector<std::int32_t>(table.data.size()), table.rows, table.cols};
  for (std::int64_t r = 0; r < table.rows; ++r) {
    const std::int64_t to = at(new_row, r);
    for (std::int64_t k = 0; k < table.cols; ++k) {
      const std::int32_t v = table(r, k);
      out.data[static_cast<std::size_t>(to * table.cols + k)] = v < 0 ? -1 : at(new_value, v);
    }
  }
  return out;
}

}  // namespace

Grid Grid::torus(std::int64_t nx, std::int64_t ny) {
  // Three rhombi per direction keep the triangulation simple: no two edges
  // join the same vertices, and the six neighbours of a vertex are distinct.
  check_size("torus", nx, ny, 3);
  const detail::Lattice lattice(nx, ny, true);
  Grid grid;
  grid.tables_ = lattice.direct_tables();
  detail::derive_tables(grid.tables_);
  grid.n_[index(Entity::cell)] = lattice.cells();
  grid.n_[index(Entity::edge)] = lattice.edges();
  grid.n_[index(Entity::vertex)] = lattice.vertices();
  for (std::size_t e = 0; e < 3; ++e) grid.zone_starts_[e] = {0, grid.n_[e]};
  return grid;
}

Grid Grid::limited_area(std::int64_t nx, std::int64_t ny) {
  check_size("limited_area", nx, ny, kMinLimitedAreaSize);
  const detail::Lattice lattice(nx, ny, false);
  std::vector<Connectivity> natural = lattice.direct_tables();
  detail::derive_tables(natural);

  Grid grid;
  grid.limited_area_ = true;
  std::vector<std::int64_t> rows[3];
  rows[index(Entity::vertex)] = vertex_rows(lattice);
  rows[index(Entity::cell)] = cell_rows(rows[index(Entity::vertex)], natural[index(Table::C2V)]);
  rows[index(Entity::edge)] = edge_rows(rows[index(Entity::cell)], natural[index(Table::E2C)]);

  std::vector<std::int32_t> new_index[3];
  for (Entity e : {Entity::cell, Entity::edge, Entity::vertex}) {
    const std::size_t i = index(e);
    new_index[i] = order_by_zone(rows[i], kZones[i], grid.zone_starts_[i]);
    grid.n_[i] = static_cast<std::int64_t>(new_index[i].size());
    grid.boundary_rows_[i] = kZones[i].boundary;
    grid.nudging_rows_[i] = kZones[i].nudging;
  }
  grid.tables_.resize(natural.size());
  for (Table t : kAllTables) {
    const TableKinds k = kinds_of(t);
    grid.tables_[index(t)] = renumber(natural[index(t)], new_index[index(k.from)], new_index[index(k.to)]);
  }
  return grid;
}

std::int64_t Grid::size(Entity e) const { return n_[index(e)]; }

const Connectivity& Grid::table(Table t) const { return tables_[index(t)]; }

IndexRange Grid::boundary_row(Entity e, int row) const {
  if (row < 1 || row > boundary_rows(e)) {
    throw std::out_of_range("kiln::granule::Grid::boundary_row: " + std::string(name(e)) + " row " +
                            std::to_string(row) + " is not a lateral boundary row (this grid has " +
                            std::to_string(boundary_rows(e)) + ")");
  }
  const auto& z = zone_starts_[index(e)];
  return {at(z, row - 1), at(z, row)};
}

IndexRange Grid::lateral_boundary(Entity e) const {
  const auto& z = zone_starts_[index(e)];
  return {z.front(), at(z, boundary_rows(e))};
}

IndexRange Grid::nudging(Entity e) const {
  const auto& z = zone_starts_[index(e)];
  return {at(z, boundary_rows(e)), at(z, boundary_rows(e) + nudging_rows(e))};
}

std::int64_t Grid::start_2nd_nudge_line(Entity e) const {
  // Every limited-area kind has at least two nudging rows; a torus has none
  // and starts everything at 0.
  if (nudging_rows(e) < 2) return nudging(e).end;
  return at(zone_starts_[index(e)], boundary_rows(e) + 1);
}

IndexRange Grid::interior(Entity e) const {
  const auto& z = zone_starts_[index(e)];
  return {z[z.size() - 2], z.back()};
}

int Grid::boundary_rows(Entity e) const { return boundary_rows_[index(e)]; }

int Grid::nudging_rows(Entity e) const { return nudging_rows_[index(e)]; }

std::string_view name(Table t) {
  switch (t) {
    case Table::E2C: return "E2C";
    case Table::E2V: return "E2V";
    case Table::C2E: return "C2E";
    case Table::C2V: return "C2V";
    case Table::C2E2C: return "C2E2C";
    case Table::C2E2CO: return "C2E2CO";
    case Table::E2C2V: return "E2C2V";
    case Table::V2E: return "V2E";
    case Table::V2C: return "V2C";
  }
  return "?";
}

std::string_view name(Entity e) {
  switch (e) {
    case Entity::cell: return "cell";
    case Entity::edge: return "edge";
    case Entity::vertex: return "vertex";
  }
  return "?";
}

}  // namespace kiln::granule
