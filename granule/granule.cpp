#include "granule/granule.hpp"

#include <algorithm>
#include <optional>
#include <cmath>
#include <random>
#include <string_view>
#include <utility>

namespace kiln::granule {
namespace {

// Physical constants of the solver and the theta update (ICON's values).
constexpr double kDtime = 10.0;           // s
constexpr double kCpd = 1004.64;          // J/(kg K)
constexpr double kRdOCvd = 287.04 / 717.6;

// Where a stage starts on a limited-area grid: boundary row `row` (1 = the
// outermost) of kind e, or the first row after the boundary zone when the
// grid has fewer rows; 0 on a torus (no boundary).
std::int64_t from_boundary_row(const Grid& grid, Entity e, int row) {
  if (!grid.is_limited_area()) return 0;
  if (row > grid.boundary_rows(e)) return grid.lateral_boundary(e).end;
  return grid.boundary_row(e, row).start;
}

// The domain parameters every kernel takes.
Spec domain(std::int64_t h_start, std::int64_t h_end, std::int64_t v_start, std::int64_t v_end) {
  Spec spec;
  spec.set("horizontal_start", h_start).set("horizontal_end", h_end);
  return spec.set("vertical_start", v_start).set("vertical_end", v_end);
}

double bytes_of(const Field& f) { return 8.0 * static_cast<double>(f.rows() * f.cols()); }

}  // namespace

Granule::Granule(const Grid& grid, std::int64_t levels, Layout layout, std::uint64_t seed)
    : grid_(grid), levels_(levels), layout_(layout) {
  if (layout_ == Layout::fortran) make_column_major_tables();
  make_fields(seed);
  add_stages();
}

kiln_arg Granule::table(Table t) const {
  const Connectivity& c = grid_.table(t);
  if (layout_ == Layout::c) return c_array(c.data.data(), {c.rows, c.cols});
  return f_array(column_major_tables_.at(t).data(), {c.rows, c.cols});
}

// ICON's tables follow its fields' layout: in Fortran order, neighbour j of
// consecutive cells is contiguous, so a loop over cells reads the table as
// plain vectors. Row-major tables under Fortran-order fields made that loop
// deinterleave every row and rebuild each lane's mask bit by bit (the w
// diffusion's nabla2 loop, found with bench/vectorizer_remarks.sh).
void Granule::make_column_major_tables() {
  for (const Table t : {Table::C2E, Table::V2E, Table::E2C2V, Table::C2E2CO}) {
    const Connectivity& c = grid_.table(t);
    std::vector<std::int32_t>& out = column_major_tables_[t];
    out.resize(c.data.size());
    for (std::int64_t row = 0; row < c.rows; ++row)
      for (std::int64_t col = 0; col < c.cols; ++col) out[col * c.rows + row] = c(row, col);
  }
}

void Granule::make_fields(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::int64_t nc = grid_.size(Entity::cell), ne = grid_.size(Entity::edge), nv = grid_.size(Entity::vertex);
  const std::int64_t k = levels_;
  // name, rows, cols (0: one-dimensional), random range.
  struct FieldInit {
    const char* name;
    std::int64_t rows, cols;
    double lo, hi;
  };
  const FieldInit inits[] = {
      // 1 temporary_fields_for_turbulence_diagnostics
      {"kh_smag_ec", ne, k, 0.0, 1.0}, {"vn", ne, k, -10.0, 10.0}, {"e_bln_c_s", nc, 3, 0.2, 0.4},
      {"geofac_div", nc, 3, -1.0, 1.0}, {"diff_multfac_smag", k, 0, 0.5, 1.5}, {"kh_c", nc, k, 0.0, 0.0},
      {"div", nc, k, 0.0, 0.0},
      // 2 mo_intp_rbf_rbf_vec_interpol_vertex
      {"ptr_coeff_1", nv, 6, -0.2, 0.2}, {"ptr_coeff_2", nv, 6, -0.2, 0.2}, {"u_vert", nv, k, 0.0, 0.0},
      {"v_vert", nv, k, 0.0, 0.0},
      // 3 apply_diffusion_to_vn
      {"primal_normal_vert_v1", ne, 4, -1.0, 1.0}, {"primal_normal_vert_v2", ne, 4, -1.0, 1.0},
      {"z_nabla2_e", ne, k, -1.0, 1.0}, {"inv_vert_vert_length", ne, 0, 0.5, 1.5},
      {"inv_primal_edge_length", ne, 0, 0.5, 1.5}, {"area_edge", ne, 0, 0.005, 0.015},
      {"kh_smag_e", ne, k, 0.0, 0.1}, {"diff_multfac_vn", k, 0, 0.0, 0.01}, {"nudgecoeff_e", ne, 0, 0.0, 1.0},
      // 4 apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence
      {"area", nc, 0, 0.005, 0.015}, {"geofac_n2s", nc, 4, -0.5, 0.5}, {"geofac_grg_x", nc, 4, -0.5, 0.5},
      {"geofac_grg_y", nc, 4, -0.5, 0.5}, {"w_old", nc, k, -1.0, 1.0}, {"w", nc, k, 0.0, 0.0},
      {"dwdx", nc, k, 0.0, 0.0}, {"dwdy", nc, k, 0.0, 0.0}, {"diff_multfac_n2w", k, 0, 0.0, 0.01},
      // 5 interpolate_cell_field_to_half_levels
      {"wgtfac_c", nc, k, 0.3, 0.7}, {"theta_v", nc, k, 280.0, 320.0}, {"theta_v_ic", nc, k, 0.0, 0.0},
      // 6 solve_tridiagonal_matrix_for_w (z_alpha and z_w_expl have levels + 1)
      {"vwind_impl_wgt", nc, 0, 0.5, 0.7}, {"ddqz_z_half", nc, k, 100.0, 500.0}, {"z_alpha", nc, k + 1, 1e-4, 2e-4},
      {"z_beta", nc, k, 0.05, 0.15}, {"z_w_expl", nc, k + 1, -1.0, 1.0}, {"z_exner_expl", nc, k, -1e-4, 1e-4},
      {"z_q", nc, k, 0.0, 0.0},
      // 7 update_theta_and_exner
      {"exner", nc, k, 0.7, 1.0}, {"z_temp", nc, k, -0.1, 0.1},
  };
  for (const FieldInit& s : inits) {
    Field field = s.cols == 0 ? Field::column(s.rows) : Field(s.rows, s.cols, layout_);
    if (s.hi > s.lo) field.fill_random(s.lo, s.hi, rng);
    fields_.emplace(s.name, std::move(field));
  }
}

void Granule::add_stages() {
  const std::int64_t nc = grid_.size(Entity::cell), ne = grid_.size(Entity::edge), nv = grid_.size(Entity::vertex);
  const std::int64_t k = levels_;
  // Each lambda passes the arguments in the order the kernel declares them.
  // Every array's strides are specialised too: fields, coefficient arrays and
  // the connectivity table the kernel names after its Table.
  // An entry "arg=field" names a kernel argument that takes a granule field of another name.
  auto with_strides = [this](Spec spec, std::initializer_list<std::string_view> arrays, std::optional<Table> t = {}) {
    for (std::string_view entry : arrays) {
      const std::size_t eq = entry.find('=');
      const std::string_view arg = entry.substr(0, eq);
      const std::string field(eq == std::string_view::npos ? entry : entry.substr(eq + 1));
      spec.strides_of(arg, f(field).arg());
    }
    if (t) spec.strides_of(granule::name(*t), table(*t));
    return spec;
  };
  // An output the kernel does not read is read all the same, by the cache's
  // write-allocate, before it is written: its bytes count twice.
  auto bytes = [this](std::initializer_list<const char*> read, std::initializer_list<const char*> written) {
    double total = 0.0;
    for (const char* name : read) total += bytes_of(f(name));
    for (const char* name : written) {
      const bool also_read = std::find_if(read.begin(), read.end(), [&](const char* r) {
                               return std::string_view(r) == name;
                             }) != read.end();
      total += (also_read ? 1.0 : 2.0) * bytes_of(f(name));
    }
    return total;
  };

  {  // 1: cells from boundary row 2 on (every cell has its three edges)
    Spec spec = domain(from_boundary_row(grid_, Entity::cell, 2), nc, 0, k);
    spec = with_strides(spec, {"kh_smag_ec", "vn", "e_bln_c_s", "geofac_div", "diff_multfac_smag", "kh_c", "div"},
                        Table::C2E);
    stages_.push_back({"temporary_fields_for_turbulence_diagnostics", spec,
                       [this](const Kernel& run) {
                         run(f("kh_smag_ec").arg(), f("vn").arg(), f("e_bln_c_s").arg(), f("geofac_div").arg(),
                             f("diff_multfac_smag").arg(), f("kh_c").arg(), f("div").arg(), table(Table::C2E));
                       },
                       bytes({"kh_smag_ec", "vn", "e_bln_c_s", "geofac_div", "diff_multfac_smag"}, {"kh_c", "div"})});
  }
  {  // 2: vertices from boundary row 2 on (missing edges are skipped)
    Spec spec = domain(from_boundary_row(grid_, Entity::vertex, 2), nv, 0, k);
    spec = with_strides(spec, {"p_e_in=vn", "ptr_coeff_1", "ptr_coeff_2", "p_u_out=u_vert", "p_v_out=v_vert"},
                        Table::V2E);
    stages_.push_back({"mo_intp_rbf_rbf_vec_interpol_vertex", spec,
                       [this](const Kernel& run) {
                         run(f("vn").arg(), f("ptr_coeff_1").arg(), f("ptr_coeff_2").arg(), f("u_vert").arg(),
                             f("v_vert").arg(), table(Table::V2E));
                       },
                       bytes({"vn", "ptr_coeff_1", "ptr_coeff_2"}, {"u_vert", "v_vert"})});
  }
  {  // 3: edges from boundary row 5 on, nabla4 from the second nudging row
    Spec spec = domain(from_boundary_row(grid_, Entity::edge, 5), ne, 0, k);
    spec.set("start_2nd_nudge_line_idx_e", grid_.start_2nd_nudge_line(Entity::edge));
    spec.set("limited_area", grid_.is_limited_area());
    spec = with_strides(spec,
                        {"u_vert", "v_vert", "primal_normal_vert_v1", "primal_normal_vert_v2", "z_nabla2_e",
                         "inv_vert_vert_length", "inv_primal_edge_length", "area_edge", "kh_smag_e", "diff_multfac_vn",
                         "nudgecoeff_e", "vn"},
                        Table::E2C2V);
    stages_.push_back({"apply_diffusion_to_vn", spec,
                       [this](const Kernel& run) {
                         run(f("u_vert").arg(), f("v_vert").arg(), f("primal_normal_vert_v1").arg(),
                             f("primal_normal_vert_v2").arg(), f("z_nabla2_e").arg(),
                             f("inv_vert_vert_length").arg(), f("inv_primal_edge_length").arg(),
                             f("area_edge").arg(), f("kh_smag_e").arg(), f("diff_multfac_vn").arg(),
                             f("nudgecoeff_e").arg(), f("vn").arg(), 1.0 / 3.0 /* nudgezone_diff */,
                             0.2 /* fac_bdydiff_v */, table(Table::E2C2V));
                       },
                       bytes({"u_vert", "v_vert", "primal_normal_vert_v1", "primal_normal_vert_v2", "z_nabla2_e",
                              "inv_vert_vert_length", "inv_primal_edge_length", "area_edge", "kh_smag_e",
                              "diff_multfac_vn", "nudgecoeff_e", "vn"},
                             {"vn"})});
  }
  {  // 4: cells from boundary row 2 on; diffused from the interior zone; 3D shear
    Spec spec = domain(from_boundary_row(grid_, Entity::cell, 2), nc, 0, k);
    spec.set("type_shear", 2).set("nrdmax", std::max<std::int64_t>(2, k / 8));
    spec.set("interior_idx", grid_.interior(Entity::cell).start).set("halo_idx", nc);
    spec = with_strides(spec,
                        {"area", "geofac_n2s", "geofac_grg_x", "geofac_grg_y", "w_old", "w", "dwdx", "dwdy",
                         "diff_multfac_n2w"},
                        Table::C2E2CO);
    stages_.push_back({"apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence", spec,
                       [this](const Kernel& run) {
                         run(f("area").arg(), f("geofac_n2s").arg(), f("geofac_grg_x").arg(),
                             f("geofac_grg_y").arg(), f("w_old").arg(), f("w").arg(), f("dwdx").arg(),
                             f("dwdy").arg(), 0.01 /* diff_multfac_w */, f("diff_multfac_n2w").arg(),
                             table(Table::C2E2CO));
                       },
                       // and z_nabla2_c, the kernel's temporary of w_old's size, written (its
                       // write-allocate too) and read once
                       bytes({"area", "geofac_n2s", "geofac_grg_x", "geofac_grg_y", "w_old", "diff_multfac_n2w"},
                             {"w", "dwdx", "dwdy"}) +
                           3 * bytes_of(f("w_old"))});
  }
  {  // 5: every cell, half levels 1 .. k-1
    Spec spec = with_strides(domain(0, nc, 1, k),
                             {"wgtfac_c", "interpolant=theta_v", "interpolation_to_half_levels=theta_v_ic"});
    stages_.push_back({"interpolate_cell_field_to_half_levels", spec,
                       [this](const Kernel& run) { run(f("wgtfac_c").arg(), f("theta_v").arg(), f("theta_v_ic").arg()); },
                       bytes({"wgtfac_c", "theta_v"}, {"theta_v_ic"})});
  }
  {  // 6: every column, levels 1 .. k-1 (w at the top stays)
    Spec spec = with_strides(domain(0, nc, 1, k), {"vwind_impl_wgt", "theta_v_ic", "ddqz_z_half", "z_alpha", "z_beta",
                                                   "z_w_expl", "z_exner_expl", "z_q", "w"});
    stages_.push_back({"solve_tridiagonal_matrix_for_w", spec,
                       [this](const Kernel& run) {
                         run(f("vwind_impl_wgt").arg(), f("theta_v_ic").arg(), f("ddqz_z_half").arg(),
                             f("z_alpha").arg(), f("z_beta").arg(), f("z_w_expl").arg(), f("z_exner_expl").arg(),
                             f("z_q").arg(), f("w").arg(), kDtime, kCpd);
                       },
                       bytes({"vwind_impl_wgt", "theta_v_ic", "ddqz_z_half", "z_alpha", "z_beta", "z_w_expl",
                              "z_exner_expl", "z_q", "w"},
                             {"z_q", "w"})});
  }
  {  // 7: every cell and level
    Spec spec = domain(0, nc, 0, k).set("rd_o_cvd", kRdOCvd);
    spec = with_strides(spec, {"theta_v", "exner", "area", "z_temp"});
    stages_.push_back({"update_theta_and_exner", spec,
                       [this](const Kernel& run) {
                         run(f("theta_v").arg(), f("exner").arg(), f("area").arg(), f("z_temp").arg());
                       },
                       bytes({"theta_v", "exner", "area", "z_temp"}, {"theta_v", "exner"})});
  }
}

void Granule::step(Runtime& rt, Mode mode) {
  for (const Stage& stage : stages_) stage.call(rt.kernel(stage.kernel, stage.spec, mode));
  swap_w();
}

double Granule::max_difference(const Granule& a, const Granule& b) {
  double worst = 0.0;
  for (const auto& [name, field] : a.fields_) {
    const std::vector<double>& x = field.values();
    const std::vector<double>& y = b.fields_.at(name).values();
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i]) != std::isnan(y[i])) return INFINITY;
      if (!std::isnan(x[i])) worst = std::max(worst, std::fabs(x[i] - y[i]));
    }
  }
  return worst;
}

bool Granule::finite() const {
  for (const auto& [name, field] : fields_)
    for (double v : field.values())
      if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace kiln::granule
