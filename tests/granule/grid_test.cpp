// The granule grid's invariants on tori and limited-area grids of several
// sizes: counts, index ranges, the tables against each other, -1 exactly at
// the cut, and the zones against distances measured here by breadth-first
// search over the tables (not by the grid's own coordinates).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "granule/grid.hpp"

namespace kiln::granule {
namespace {

using Row = std::vector<std::int32_t>;

Row row(const Connectivity& t, std::int64_t r) {
  return Row(t.data.begin() + r * t.cols, t.data.begin() + (r + 1) * t.cols);
}
bool contains(const Row& r, std::int32_t x) { return std::find(r.begin(), r.end(), x) != r.end(); }
std::int64_t missing(const Row& r) { return std::count(r.begin(), r.end(), -1); }
bool distinct_present(const Row& r) {
  std::set<std::int32_t> seen;
  for (std::int32_t x : r)
    if (x >= 0 && !seen.insert(x).second) return false;
  return true;
}

struct Case {
  bool limited_area;
  std::int64_t nx, ny;
};
// gtest would print the padding bytes of the struct otherwise.
void PrintTo(const Case& c, std::ostream* os) {
  *os << (c.limited_area ? "limited_area(" : "torus(") << c.nx << ", " << c.ny << ")";
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.limited_area ? "limited_area_" : "torus_") + std::to_string(info.param.nx) + "x" +
         std::to_string(info.param.ny);
}

class GridInvariants : public ::testing::TestWithParam<Case> {
 protected:
  const Case c = GetParam();
  const Grid grid = c.limited_area ? Grid::limited_area(c.nx, c.ny) : Grid::torus(c.nx, c.ny);
  const Connectivity& t(Table table) const { return grid.table(table); }
  std::int64_t n(Entity e) const { return grid.size(e); }
};

TEST_P(GridInvariants, CountsAndShapes) {
  const std::int64_t rhombi = c.nx * c.ny;
  EXPECT_EQ(grid.is_limited_area(), c.limited_area);
  EXPECT_EQ(n(Entity::cell), 2 * rhombi);
  if (c.limited_area) {
    EXPECT_EQ(n(Entity::edge), 3 * rhombi + c.nx + c.ny);
    EXPECT_EQ(n(Entity::vertex), (c.nx + 1) * (c.ny + 1));
  } else {
    EXPECT_EQ(n(Entity::edge), 3 * rhombi);
    EXPECT_EQ(n(Entity::vertex), rhombi);
  }
  // Euler characteristic: 0 for a torus, 1 for a disc.
  EXPECT_EQ(n(Entity::vertex) - n(Entity::edge) + n(Entity::cell), c.limited_area ? 1 : 0);

  const struct {
    Table table;
    Entity rows;
    std::int64_t cols;
  } shapes[] = {{Table::E2C, Entity::edge, 2},   {Table::E2V, Entity::edge, 2},    {Table::C2E, Entity::cell, 3},
                {Table::C2V, Entity::cell, 3},   {Table::C2E2C, Entity::cell, 3},  {Table::C2E2CO, Entity::cell, 4},
                {Table::E2C2V, Entity::edge, 4}, {Table::V2E, Entity::vertex, 6}, {Table::V2C, Entity::vertex, 6}};
  for (const auto& s : shapes) {
    SCOPED_TRACE(std::string(name(s.table)));
    EXPECT_EQ(t(s.table).rows, n(s.rows));
    EXPECT_EQ(t(s.table).cols, s.cols);
    EXPECT_EQ(static_cast<std::int64_t>(t(s.table).data.size()), n(s.rows) * s.cols);
  }
}

TEST_P(GridInvariants, IndicesInRangeAndMinusOneOnlyOnLimitedArea) {
  const struct {
    Table table;
    Entity to;
    bool always_full;
  } tables[] = {{Table::E2C, Entity::cell, false},   {Table::E2V, Entity::vertex, true},
                {Table::C2E, Entity::edge, true},    {Table::C2V, Entity::vertex, true},
                {Table::C2E2C, Entity::cell, false}, {Table::C2E2CO, Entity::cell, false},
                {Table::E2C2V, Entity::vertex, false}, {Table::V2E, Entity::edge, false},
                {Table::V2C, Entity::cell, false}};
  for (const auto& s : tables) {
    SCOPED_TRACE(std::string(name(s.table)));
    std::int64_t minus_ones = 0;
    for (std::int32_t x : t(s.table).data) {
      ASSERT_GE(x, -1);
      ASSERT_LT(x, n(s.to));
      minus_ones += x == -1;
    }
    if (s.always_full || !c.limited_area) EXPECT_EQ(minus_ones, 0);
    else EXPECT_GT(minus_ones, 0);
  }
}

TEST_P(GridInvariants, CellsHaveThreeDistinctEdgesAndVerticesThatMatch) {
  const Connectivity &c2e = t(Table::C2E), &c2v = t(Table::C2V), &e2v = t(Table::E2V);
  for (std::int64_t cell = 0; cell < n(Entity::cell); ++cell) {
    ASSERT_TRUE(distinct_present(row(c2e, cell)));
    ASSERT_TRUE(distinct_present(row(c2v, cell)));
    // Edge k joins vertices k and k+1.
    for (std::int64_t k = 0; k < 3; ++k) {
      const std::set<std::int32_t> joined{c2v(cell, k), c2v(cell, (k + 1) % 3)};
      const std::int32_t e = c2e(cell, k);
      ASSERT_EQ((std::set<std::int32_t>{e2v(e, 0), e2v(e, 1)}), joined) << "cell " << cell << " edge " << k;
    }
  }
  for (std::int64_t e = 0; e < n(Entity::edge); ++e) ASSERT_NE(e2v(e, 0), e2v(e, 1));
}

TEST_P(GridInvariants, C2EAndE2CAreInverse) {
  const Connectivity &c2e = t(Table::C2E), &e2c = t(Table::E2C);
  std::vector<int> cells_of_edge(static_cast<std::size_t>(n(Entity::edge)), 0);
  for (std::int64_t cell = 0; cell < n(Entity::cell); ++cell) {
    for (std::int32_t e : row(c2e, cell)) {
      ASSERT_TRUE(contains(row(e2c, e), static_cast<std::int32_t>(cell))) << "cell " << cell << " edge " << e;
      ++cells_of_edge[static_cast<std::size_t>(e)];
    }
  }
  for (std::int64_t e = 0; e < n(Entity::edge); ++e) {
    const Row cells = row(e2c, e);
    ASSERT_TRUE(distinct_present(cells));
    for (std::int32_t cell : cells) {
      if (cell < 0) continue;
      ASSERT_TRUE(contains(row(c2e, cell), static_cast<std::int32_t>(e))) << "edge " << e;
    }
    // E2C lists exactly the cells whose C2E holds the edge: two on a torus.
    ASSERT_EQ(2 - missing(cells), cells_of_edge[static_cast<std::size_t>(e)]) << "edge " << e;
    if (!c.limited_area) {
      ASSERT_EQ(cells_of_edge[static_cast<std::size_t>(e)], 2);
    }
  }
}

TEST_P(GridInvariants, NeighbouringCellsAreConsistentlyOriented) {
  // Two cells of an edge run through its vertices in opposite directions
  // when both list their vertices counter-clockwise.
  const Connectivity &e2c = t(Table::E2C), &e2v = t(Table::E2V), &c2v = t(Table::C2V);
  auto follows = [&](std::int32_t cell, std::int32_t a, std::int32_t b) {
    for (std::int64_t k = 0; k < 3; ++k)
      if (c2v(cell, k) == a && c2v(cell, (k + 1) % 3) == b) return true;
    return false;
  };
  for (std::int64_t e = 0; e < n(Entity::edge); ++e) {
    if (e2c(e, 0) < 0 || e2c(e, 1) < 0) continue;
    const std::int32_t a = e2v(e, 0), b = e2v(e, 1);
    ASSERT_NE(follows(e2c(e, 0), a, b), follows(e2c(e, 1), a, b)) << "edge " << e;
    ASSERT_NE(follows(e2c(e, 0), b, a), follows(e2c(e, 1), b, a)) << "edge " << e;
  }
}

TEST_P(GridInvariants, C2E2CIsTheCellAcrossEachEdgeAndC2E2COPrependsTheCell) {
  const Connectivity &c2e = t(Table::C2E), &e2c = t(Table::E2C), &c2e2c = t(Table::C2E2C), &c2e2co = t(Table::C2E2CO);
  for (std::int64_t cell = 0; cell < n(Entity::cell); ++cell) {
    for (std::int64_t k = 0; k < 3; ++k) {
      const std::int32_t e = c2e(cell, k);
      const std::int32_t across = e2c(e, 0) == cell ? e2c(e, 1) : e2c(e, 0);
      ASSERT_EQ(c2e2c(cell, k), across) << "cell " << cell << " neighbour " << k;
      ASSERT_NE(c2e2c(cell, k), cell);
      ASSERT_EQ(c2e2co(cell, k + 1), c2e2c(cell, k));
    }
    ASSERT_EQ(c2e2co(cell, 0), cell);
    ASSERT_TRUE(distinct_present(row(c2e2c, cell)));
  }
}

TEST_P(GridInvariants, E2C2VIsTheEdgeThenTheFarVertexOfEachCell) {
  const Connectivity &e2c2v = t(Table::E2C2V), &e2v = t(Table::E2V), &e2c = t(Table::E2C), &c2v = t(Table::C2V);
  for (std::int64_t e = 0; e < n(Entity::edge); ++e) {
    ASSERT_EQ(e2c2v(e, 0), e2v(e, 0));
    ASSERT_EQ(e2c2v(e, 1), e2v(e, 1));
    for (std::int64_t k = 0; k < 2; ++k) {
      const std::int32_t cell = e2c(e, k), far = e2c2v(e, 2 + k);
      if (cell < 0) {
        ASSERT_EQ(far, -1) << "edge " << e;
        continue;
      }
      ASSERT_TRUE(contains(row(c2v, cell), far)) << "edge " << e << " cell " << k;
      ASSERT_NE(far, e2v(e, 0));
      ASSERT_NE(far, e2v(e, 1));
    }
    if (e2c(e, 0) >= 0 && e2c(e, 1) >= 0) {
      ASSERT_NE(e2c2v(e, 2), e2c2v(e, 3));
    }
  }
}

TEST_P(GridInvariants, V2EAndV2CListWhatTouchesTheVertexInRotationalOrder) {
  const Connectivity &v2e = t(Table::V2E), &v2c = t(Table::V2C), &e2v = t(Table::E2V), &c2v = t(Table::C2V),
                     &c2e = t(Table::C2E);
  std::int64_t listed_edges = 0, listed_cells = 0;
  for (std::int64_t v = 0; v < n(Entity::vertex); ++v) {
    const Row edges = row(v2e, v), cells = row(v2c, v);
    ASSERT_TRUE(distinct_present(edges));
    ASSERT_TRUE(distinct_present(cells));
    if (!c.limited_area) {
      ASSERT_EQ(missing(edges) + missing(cells), 0);
    }
    for (std::int32_t e : edges) {
      if (e < 0) continue;
      ASSERT_TRUE(contains(row(e2v, e), static_cast<std::int32_t>(v))) << "vertex " << v;
    }
    for (std::int32_t cell : cells) {
      if (cell < 0) continue;
      ASSERT_TRUE(contains(row(c2v, cell), static_cast<std::int32_t>(v))) << "vertex " << v;
    }
    // Cell k lies between edges k and k+1.
    for (std::int64_t k = 0; k < 6; ++k) {
      const std::int32_t cell = v2c(v, k);
      if (cell < 0) continue;
      ASSERT_TRUE(contains(row(c2e, cell), v2e(v, k))) << "vertex " << v << " cell " << k;
      ASSERT_TRUE(contains(row(c2e, cell), v2e(v, (k + 1) % 6))) << "vertex " << v << " cell " << k;
    }
    listed_edges += 6 - missing(edges);
    listed_cells += 6 - missing(cells);
  }
  // Nothing left out: every incidence appears once.
  EXPECT_EQ(listed_edges, 2 * n(Entity::edge));
  EXPECT_EQ(listed_cells, 3 * n(Entity::cell));
}

TEST_P(GridInvariants, ZonesAreContiguousOrderedAndCoverEverything) {
  for (Entity e : {Entity::cell, Entity::edge, Entity::vertex}) {
    SCOPED_TRACE(std::string(name(e)));
    EXPECT_EQ(grid.all(e).start, 0);
    EXPECT_EQ(grid.all(e).end, n(e));
    if (!c.limited_area) {
      EXPECT_EQ(grid.boundary_rows(e), 0);
      EXPECT_EQ(grid.nudging_rows(e), 0);
      EXPECT_EQ(grid.lateral_boundary(e).size(), 0);
      EXPECT_EQ(grid.nudging(e).size(), 0);
      EXPECT_EQ(grid.start_2nd_nudge_line(e), 0);
      EXPECT_EQ(grid.interior(e).start, 0);
      EXPECT_EQ(grid.interior(e).end, n(e));
      EXPECT_THROW(grid.boundary_row(e, 1), std::out_of_range);
      continue;
    }
    std::int64_t at = 0;
    for (int r = 1; r <= grid.boundary_rows(e); ++r) {
      const IndexRange zone = grid.boundary_row(e, r);
      EXPECT_EQ(zone.start, at) << "row " << r;
      EXPECT_GT(zone.size(), 0) << "row " << r;
      at = zone.end;
    }
    EXPECT_EQ(grid.lateral_boundary(e).start, 0);
    EXPECT_EQ(grid.lateral_boundary(e).end, at);
    EXPECT_EQ(grid.nudging(e).start, at);
    EXPECT_GT(grid.start_2nd_nudge_line(e), grid.nudging(e).start);
    EXPECT_LT(grid.start_2nd_nudge_line(e), grid.nudging(e).end);
    EXPECT_EQ(grid.interior(e).start, grid.nudging(e).end);
    EXPECT_GT(grid.interior(e).size(), 0);
    EXPECT_EQ(grid.interior(e).end, n(e));
    EXPECT_THROW(grid.boundary_row(e, 0), std::out_of_range);
    EXPECT_THROW(grid.boundary_row(e, grid.boundary_rows(e) + 1), std::out_of_range);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, GridInvariants,
                         ::testing::Values(Case{false, 3, 3}, Case{false, 8, 6}, Case{false, 5, 17},
                                           Case{true, 13, 13}, Case{true, 14, 20}, Case{true, 23, 16}),
                         case_name);

// Limited area only: which entities sit on the cut and in which row, measured
// here from the tables alone.
class LimitedAreaZones : public ::testing::TestWithParam<Case> {
 protected:
  const Case c = GetParam();
  const Grid grid = Grid::limited_area(c.nx, c.ny);
  const Connectivity& t(Table table) const { return grid.table(table); }
  std::int64_t n(Entity e) const { return grid.size(e); }

  // Hops from each vertex to the nearest vertex on the cut (a vertex missing
  // some of its six edges), by breadth-first search over E2V.
  std::vector<std::int64_t> vertex_distances() const {
    const Connectivity &v2e = t(Table::V2E), &e2v = t(Table::E2V);
    std::vector<std::int64_t> d(static_cast<std::size_t>(n(Entity::vertex)), -1);
    std::deque<std::int32_t> queue;
    for (std::int32_t v = 0; v < n(Entity::vertex); ++v) {
      if (missing(row(v2e, v)) > 0) {
        d[static_cast<std::size_t>(v)] = 0;
        queue.push_back(v);
      }
    }
    for (; !queue.empty(); queue.pop_front()) {
      const std::int32_t v = queue.front();
      for (std::int32_t e : row(v2e, v)) {
        if (e < 0) continue;
        const std::int32_t w = e2v(e, 0) == v ? e2v(e, 1) : e2v(e, 0);
        if (d[static_cast<std::size_t>(w)] >= 0) continue;
        d[static_cast<std::size_t>(w)] = d[static_cast<std::size_t>(v)] + 1;
        queue.push_back(w);
      }
    }
    return d;
  }

  // The row each entity should have (grid.hpp): a vertex d + 1, a cell its
  // nearest vertex's row, an edge 1 on the cut, else the sum of its cells' rows.
  std::vector<std::int64_t> expected_rows(Entity e, const std::vector<std::int64_t>& d) const {
    std::vector<std::int64_t> vertex_rows, cell_rows, edge_rows;
    for (std::int64_t distance : d) vertex_rows.push_back(distance + 1);
    if (e == Entity::vertex) return vertex_rows;
    const Connectivity &c2v = t(Table::C2V), &e2c = t(Table::E2C);
    const auto vertex_row = [&](std::int32_t v) { return vertex_rows[static_cast<std::size_t>(v)]; };
    for (std::int64_t c = 0; c < n(Entity::cell); ++c)
      cell_rows.push_back(std::min({vertex_row(c2v(c, 0)), vertex_row(c2v(c, 1)), vertex_row(c2v(c, 2))}));
    if (e == Entity::cell) return cell_rows;
    for (std::int64_t i = 0; i < n(Entity::edge); ++i) {
      const std::int32_t c0 = e2c(i, 0), c1 = e2c(i, 1);
      const bool on_cut = c0 < 0 || c1 < 0;
      edge_rows.push_back(on_cut ? 1 : cell_rows[static_cast<std::size_t>(c0)] + cell_rows[static_cast<std::size_t>(c1)]);
    }
    return edge_rows;
  }

  // Every table row of entity i of kind e is full (no -1).
  bool full(Entity e, std::int64_t i) const {
    std::vector<Table> tables = {Table::V2E, Table::V2C};
    if (e == Entity::cell) tables = {Table::C2E, Table::C2V, Table::C2E2C, Table::C2E2CO};
    if (e == Entity::edge) tables = {Table::E2C, Table::E2V, Table::E2C2V};
    for (Table table : tables)
      if (missing(row(t(table), i)) > 0) return false;
    return true;
  }

  // The rows that index i of kind e may have by the zone it lies in, [lo, hi]:
  // each boundary row and the first nudging row are single zones; the later
  // nudging rows are one range, the interior another.
  std::pair<std::int64_t, std::int64_t> rows_allowed(Entity e, std::int64_t i) const {
    const std::int64_t first_nudging = grid.boundary_rows(e) + 1;
    const std::int64_t last_nudging = grid.boundary_rows(e) + grid.nudging_rows(e);
    for (int r = 1; r <= grid.boundary_rows(e); ++r)
      if (i < grid.boundary_row(e, r).end) return {r, r};
    if (i < grid.start_2nd_nudge_line(e)) return {first_nudging, first_nudging};
    if (i < grid.nudging(e).end) return {first_nudging + 1, last_nudging};
    return {last_nudging + 1, std::numeric_limits<std::int64_t>::max()};
  }
};

TEST_P(LimitedAreaZones, MinusOneExactlyWhereANeighbourIsMissing) {
  // The cut of an nx x ny parallelogram of rhombi: 2 (nx + ny) edges with a
  // single cell, and as many vertices on it.
  const Connectivity &e2c = t(Table::E2C), &v2e = t(Table::V2E), &v2c = t(Table::V2C), &e2v = t(Table::E2V),
                     &c2v = t(Table::C2V);
  std::int64_t cut_edges = 0, cut_vertices = 0;
  for (std::int64_t e = 0; e < n(Entity::edge); ++e) cut_edges += missing(row(e2c, e)) > 0;
  for (std::int64_t v = 0; v < n(Entity::vertex); ++v) cut_vertices += missing(row(v2e, v)) > 0;
  EXPECT_EQ(cut_edges, 2 * (c.nx + c.ny));
  EXPECT_EQ(cut_vertices, 2 * (c.nx + c.ny));

  // A vertex's -1 count is 6 minus the edges (cells) that really touch it.
  std::vector<std::int64_t> edges_at(static_cast<std::size_t>(n(Entity::vertex)), 0), cells_at = edges_at;
  for (std::int32_t v : e2v.data) ++edges_at[static_cast<std::size_t>(v)];
  for (std::int32_t v : c2v.data) ++cells_at[static_cast<std::size_t>(v)];
  for (std::int64_t v = 0; v < n(Entity::vertex); ++v) {
    ASSERT_EQ(6 - missing(row(v2e, v)), edges_at[static_cast<std::size_t>(v)]) << "vertex " << v;
    ASSERT_EQ(6 - missing(row(v2c, v)), cells_at[static_cast<std::size_t>(v)]) << "vertex " << v;
  }
  // Checked against the tables in GridInvariants: C2E2C and E2C2V hold -1
  // exactly for an edge with one cell, and E2C agrees with C2E.
}

TEST_P(LimitedAreaZones, EveryEntitySitsInTheZoneOfItsDistanceFromTheCut) {
  const std::vector<std::int64_t> d = vertex_distances();
  ASSERT_EQ(std::count(d.begin(), d.end(), -1), 0);  // connected
  for (Entity e : {Entity::cell, Entity::edge, Entity::vertex}) {
    SCOPED_TRACE(std::string(name(e)));
    const std::vector<std::int64_t> rows = expected_rows(e, d);
    for (std::int64_t i = 0; i < n(e); ++i) {
      const auto [lo, hi] = rows_allowed(e, i);
      ASSERT_GE(rows[static_cast<std::size_t>(i)], lo) << "index " << i;
      ASSERT_LE(rows[static_cast<std::size_t>(i)], hi) << "index " << i;
    }
  }
}

TEST_P(LimitedAreaZones, BoundaryRowOneTouchesTheCutAndTheRestHaveFullRows) {
  const Connectivity &e2c = t(Table::E2C), &v2e = t(Table::V2E), &c2v = t(Table::C2V);
  auto on_cut = [&](std::int32_t v) { return missing(row(v2e, v)) > 0; };
  for (std::int64_t i = 0; i < n(Entity::vertex); ++i) {
    const bool row_one = i < grid.boundary_row(Entity::vertex, 1).end;
    ASSERT_EQ(on_cut(static_cast<std::int32_t>(i)), row_one) << "vertex " << i;
    if (!row_one) {
      ASSERT_TRUE(full(Entity::vertex, i)) << "vertex " << i;
    }
  }
  for (std::int64_t i = 0; i < n(Entity::edge); ++i) {
    const bool row_one = i < grid.boundary_row(Entity::edge, 1).end;
    ASSERT_EQ(missing(row(e2c, i)) > 0, row_one) << "edge " << i;
    if (!row_one) {
      ASSERT_TRUE(full(Entity::edge, i)) << "edge " << i;
    }
  }
  for (std::int64_t i = 0; i < n(Entity::cell); ++i) {
    const bool row_one = i < grid.boundary_row(Entity::cell, 1).end;
    ASSERT_EQ(on_cut(c2v(i, 0)) || on_cut(c2v(i, 1)) || on_cut(c2v(i, 2)), row_one) << "cell " << i;
    if (!row_one) {
      ASSERT_TRUE(full(Entity::cell, i)) << "cell " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, LimitedAreaZones,
                         ::testing::Values(Case{true, 13, 13}, Case{true, 14, 20}, Case{true, 23, 16},
                                           Case{true, 40, 31}),
                         case_name);

TEST(GridErrors, TooSmallGridsAreRefusedWithTheLimitInTheMessage) {
  auto message = [](auto make) -> std::string {
    try {
      make();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no exception";
  };
  EXPECT_NE(message([] { Grid::torus(2, 5); }).find("at least 3"), std::string::npos);
  EXPECT_NE(message([] { Grid::torus(5, 0); }).find("ny=0"), std::string::npos);
  EXPECT_NE(message([] { Grid::limited_area(12, 40); }).find("at least 13"), std::string::npos);
  EXPECT_NE(message([] { Grid::limited_area(40, 12); }).find("limited_area"), std::string::npos);
  EXPECT_NO_THROW(Grid::limited_area(13, 13));
  EXPECT_NO_THROW(Grid::torus(3, 3));
}

TEST(GridErrors, GridsBeyondInt32IndicesAreRefused) {
  EXPECT_THROW(Grid::torus(std::int64_t{1} << 20, std::int64_t{1} << 20), std::invalid_argument);
  EXPECT_THROW(Grid::limited_area(std::int64_t{1} << 40, 20), std::invalid_argument);
}

// The demo's grid (ICON's R02B04 has 20480 cells) in both variants. How fast
// it builds is a benchmark figure (the demo prints it), not a test.
TEST(GridSize, R02B04SizedGrids) {
  const Grid lam = Grid::limited_area(128, 80);
  const Grid torus = Grid::torus(128, 80);
  EXPECT_EQ(lam.size(Entity::cell), 20480);
  EXPECT_EQ(torus.size(Entity::cell), 20480);
  EXPECT_EQ(torus.size(Entity::edge), 30720);
  EXPECT_EQ(torus.size(Entity::vertex), 10240);
  EXPECT_EQ(lam.interior(Entity::edge).end, lam.size(Entity::edge));
}

}  // namespace
}  // namespace kiln::granule
