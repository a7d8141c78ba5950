#include "granule/lattice.hpp"

#include <algorithm>
#include <initializer_list>

namespace kiln::granule::detail {
namespace {

// A table filled row by row, in the natural order of its entities.
class TableBuilder {
 public:
  TableBuilder(std::int64_t rows, std::int64_t cols) {
    table_.rows = rows;
    table_.cols = cols;
    table_.data.reserve(static_cast<std::size_t>(rows * cols));
  }
  void add(std::initializer_list<std::int32_t> row) { table_.data.insert(table_.data.end(), row); }
  Connectivity done() { return std::move(table_); }

 private:
  Connectivity table_;
};

std::int64_t wrap(std::int64_t i, std::int64_t n) { return ((i % n) + n) % n; }

}  // namespace

Lattice::Lattice(std::int64_t nx, std::int64_t ny, bool periodic)
    : nx_(nx), ny_(ny), periodic_(periodic), vx_(periodic ? nx : nx + 1), vy_(periodic ? ny : ny + 1) {}

std::int32_t Lattice::at(std::int64_t i, std::int64_t j, std::int64_t ni, std::int64_t nj) const {
  if (periodic_) {
    // On a torus every kind has nx x ny entities: ni == nx, nj == ny.
    i = wrap(i, ni);
    j = wrap(j, nj);
  } else if (i < 0 || i >= ni || j < 0 || j >= nj) {
    return -1;
  }
  return static_cast<std::int32_t>(j * ni + i);
}

std::int64_t Lattice::distance_to_cut(std::int32_t v) const {
  const std::int64_t i = v % vx_, j = v / vx_;
  return std::min({i, nx_ - i, j, ny_ - j});
}

std::vector<Connectivity> Lattice::direct_tables() const {
  std::vector<Connectivity> tables(static_cast<std::size_t>(Table::V2C) + 1);
  tables[static_cast<std::size_t>(Table::E2C)] = e2c();
  tables[static_cast<std::size_t>(Table::E2V)] = e2v();
  tables[static_cast<std::size_t>(Table::C2E)] = c2e();
  tables[static_cast<std::size_t>(Table::C2V)] = c2v();
  tables[static_cast<std::size_t>(Table::V2E)] = v2e();
  tables[static_cast<std::size_t>(Table::V2C)] = v2c();
  return tables;
}

// Each edge's cells: the up triangle first (above h, right of u, below-left
// of d), then the down triangle.
Connectivity Lattice::e2c() const {
  TableBuilder t(edges(), 2);
  for (std::int64_t j = 0; j < vy_; ++j)
    for (std::int64_t i = 0; i < nx_; ++i) t.add({up(i, j), down(i, j - 1)});
  for (std::int64_t j = 0; j < ny_; ++j)
    for (std::int64_t i = 0; i < vx_; ++i) t.add({up(i, j), down(i - 1, j)});
  for (std::int64_t j = 0; j < ny_; ++j)
    for (std::int64_t i = 0; i < nx_; ++i) t.add({up(i, j), down(i, j)});
  return t.done();
}

Connectivity Lattice::e2v() const {
  TableBuilder t(edges(), 2);
  for (std::int64_t j = 0; j < vy_; ++j)
    for (std::int64_t i = 0; i < nx_; ++i) t.add({vertex(i, j), vertex(i + 1, j)});
  for (std::int64_t j = 0; j < ny_; ++j)
    for (std::int64_t i = 0; i < vx_; ++i) t.add({vertex(i, j), vertex(i, j + 1)});
  for (std::int64_t j = 0; j < ny_; ++j)
    for (std::int64_t i = 0; i < nx_; ++i) t.add({vertex(i + 1, j), vertex(i, j + 1)});
  return t.done();
}

// A cell's edges in counter-clockwise order, edge k joining its vertices k
// and k+1 (mod 3) of C2V.
Connectivity Lattice::c2e() const {
  TableBuilder t(cells(), 3);
  for (std::int64_t j = 0; j < ny_; ++j) {
    for (std::int64_t i = 0; i < nx_; ++i) {
      t.add({h(i, j), d(i, j), u(i, j)});
      t.add({u(i + 1, j), h(i, j + 1), d(i, j)});
    }
  }
  return t.done();
}

// A cell's vertices in counter-clockwise order.
Connectivity Lattice::c2v() const {
  TableBuilder t(cells(), 3);
  for (std::int64_t j = 0; j < ny_; ++j) {
    for (std::int64_t i = 0; i < nx_; ++i) {
      t.add({vertex(i, j), vertex(i + 1, j), vertex(i, j + 1)});
      t.add({vertex(i + 1, j), vertex(i + 1, j + 1), vertex(i, j + 1)});
    }
  }
  return t.done();
}

// A vertex's edges counter-clockwise from the one towards (i+1, j): the
// directions 0, 60, ..., 300 degrees. Slot k is always the same direction, so
// a vertex on the cut keeps -1 in the slots that point outside.
Connectivity Lattice::v2e() const {
  TableBuilder t(vertices(), 6);
  for (std::int64_t j = 0; j < vy_; ++j)
    for (std::int64_t i = 0; i < vx_; ++i)
      t.add({h(i, j), u(i, j), d(i - 1, j), h(i - 1, j), u(i, j - 1), d(i, j - 1)});
  return t.done();
}

// A vertex's cells counter-clockwise: cell k lies between edges k and k+1 of V2E.
Connectivity Lattice::v2c() const {
  TableBuilder t(vertices(), 6);
  for (std::int64_t j = 0; j < vy_; ++j)
    for (std::int64_t i = 0; i < vx_; ++i)
      t.add({up(i, j), down(i - 1, j), up(i - 1, j), down(i - 1, j - 1), up(i, j - 1), down(i, j - 1)});
  return t.done();
}

namespace {

// The cell across edge `e` from cell `c`; -1 when the edge has no other cell.
std::int32_t other_cell(const Connectivity& e2c, std::int32_t e, std::int64_t c) {
  return e2c(e, 0) == c ? e2c(e, 1) : e2c(e, 0);
}

// The vertex of cell `c` that is not on edge `e`.
std::int32_t far_vertex(const Connectivity& c2v, const Connectivity& e2v, std::int32_t c, std::int64_t e) {
  for (std::int64_t k = 0; k < 3; ++k) {
    const std::int32_t v = c2v(c, k);
    if (v != e2v(e, 0) && v != e2v(e, 1)) return v;
  }
  return -1;  // unreachable for a cell of the edge
}

}  // namespace

void derive_tables(std::vector<Connectivity>& tables) {
  auto get = [&](Table t) -> Connectivity& { return tables[static_cast<std::size_t>(t)]; };
  const Connectivity &e2c = get(Table::E2C), &e2v = get(Table::E2V), &c2e = get(Table::C2E), &c2v = get(Table::C2V);

  // Neighbour k lies across edge k of C2E.
  TableBuilder c2e2c(c2e.rows, 3), c2e2co(c2e.rows, 4);
  for (std::int64_t c = 0; c < c2e.rows; ++c) {
    const std::int32_t n0 = other_cell(e2c, c2e(c, 0), c), n1 = other_cell(e2c, c2e(c, 1), c),
                       n2 = other_cell(e2c, c2e(c, 2), c);
    c2e2c.add({n0, n1, n2});
    c2e2co.add({static_cast<std::int32_t>(c), n0, n1, n2});
  }
  get(Table::C2E2C) = c2e2c.done();
  get(Table::C2E2CO) = c2e2co.done();

  TableBuilder e2c2v(e2c.rows, 4);
  for (std::int64_t e = 0; e < e2c.rows; ++e) {
    const std::int32_t c0 = e2c(e, 0), c1 = e2c(e, 1);
    e2c2v.add({e2v(e, 0), e2v(e, 1), c0 < 0 ? -1 : far_vertex(c2v, e2v, c0, e),
               c1 < 0 ? -1 : far_vertex(c2v, e2v, c1, e)});
  }
  get(Table::E2C2V) = e2c2v.done();
}

}  // namespace kiln::granule::detail
