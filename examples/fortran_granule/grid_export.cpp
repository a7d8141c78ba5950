// The granule's test grid (granule/grid.hpp) for Fortran: a C ABI over
// kiln::granule::Grid, which module granule_grid (granule_grid.f90) binds
// with iso_c_binding. Only what the Fortran granule needs: sizes, the
// connectivity tables as they lie (row-major [n][cols] int32, -1 for a
// missing neighbour) and the zone indices the C++ granule gives its kernels.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string_view>

#include "granule/grid.hpp"

using kiln::granule::Entity;
using kiln::granule::Grid;
using kiln::granule::Table;

namespace {

const Grid& grid_of(const void* g) { return *static_cast<const Grid*>(g); }

// entity: 0 cells, 1 edges, 2 vertices (the order of module granule_grid's constants).
Entity entity_of(int e) { return e == 0 ? Entity::cell : e == 1 ? Entity::edge : Entity::vertex; }

bool table_named(std::string_view name, Table& out) {
  for (Table t : {Table::E2C, Table::E2V, Table::C2E, Table::C2V, Table::C2E2C, Table::C2E2CO, Table::E2C2V,
                  Table::V2E, Table::V2C}) {
    if (kiln::granule::name(t) == name) {
      out = t;
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" {

// A torus (limited_area 0) or limited-area grid of nx x ny rhombi; null, with
// the reason in `why`, when the grid cannot be made (too small, too large).
void* granule_grid_create(int limited_area, std::int64_t nx, std::int64_t ny, char* why, int why_size) {
  try {
    return new Grid(limited_area ? Grid::limited_area(nx, ny) : Grid::torus(nx, ny));
  } catch (const std::exception& e) {
    std::snprintf(why, static_cast<std::size_t>(why_size), "%s", e.what());
    return nullptr;
  }
}

void granule_grid_destroy(void* g) { delete static_cast<Grid*>(g); }

int granule_grid_is_limited_area(const void* g) { return grid_of(g).is_limited_area() ? 1 : 0; }

std::int64_t granule_grid_size(const void* g, int entity) { return grid_of(g).size(entity_of(entity)); }

// Table `name` (NUL-terminated, e.g. "C2E"): its column count, and its
// row-major values in *data (valid while the grid lives); 0 for an unknown name.
std::int64_t granule_grid_table(const void* g, const char* name, const std::int32_t** data) {
  Table t;
  if (!table_named(name, t)) return 0;
  const kiln::granule::Connectivity& c = grid_of(g).table(t);
  *data = c.data.data();
  return c.cols;
}

// Where a stage starts: boundary row `row` (1 = outermost) of the entity
// kind, or the end of the boundary zone when the grid has fewer rows, 0 on a
// torus. The rule of from_boundary_row in granule/granule.cpp (file-local there).
std::int64_t granule_grid_from_boundary_row(const void* g, int entity, int row) {
  const Grid& grid = grid_of(g);
  const Entity e = entity_of(entity);
  if (!grid.is_limited_area()) return 0;
  if (row > grid.boundary_rows(e)) return grid.lateral_boundary(e).end;
  return grid.boundary_row(e, row).start;
}

std::int64_t granule_grid_start_2nd_nudge_line(const void* g, int entity) {
  return grid_of(g).start_2nd_nudge_line(entity_of(entity));
}

std::int64_t granule_grid_interior_start(const void* g, int entity) {
  return grid_of(g).interior(entity_of(entity)).start;
}

}  // extern "C"
