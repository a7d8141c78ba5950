// `kiln demo`: the kernels specialised for a realistic domain, run for a
// number of steps, with the init-vs-run table at the end. Run it twice: the
// second run compiles nothing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kiln/kiln.hpp"
#include "tools/commands.hpp"

namespace kiln::tools {
namespace {

struct DemoOptions {
  int cells = 20480;  // ICON R02B04
  int levels = 80;
  int steps = 20;
  int nx = 128, ny = 128, nz = 64;
};

std::vector<double> random_field(std::size_t n, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// The fields of update_theta_and_exner in one layout.
struct ThetaFields {
  std::vector<double> theta_v, exner, area, z_temp;
  kiln_arg a_theta, a_exner, a_area, a_z;

  ThetaFields(int cells, int levels, bool fortran)
      : theta_v(random_field(std::size_t(cells) * levels, 280.0, 320.0, 1)),
        exner(random_field(std::size_t(cells) * levels, 0.7, 1.0, 2)),
        area(random_field(std::size_t(cells), 1e-3, 2e-3, 3)),
        z_temp(random_field(std::size_t(cells) * levels, -1.0, 1.0, 4)) {
    a_theta = fortran ? f_array(theta_v.data(), {cells, levels}) : c_array(theta_v.data(), {cells, levels});
    a_exner = fortran ? f_array(exner.data(), {cells, levels}) : c_array(exner.data(), {cells, levels});
    a_z = fortran ? f_array(z_temp.data(), {cells, levels}) : c_array(z_temp.data(), {cells, levels});
    a_area = c_array(area.data(), {cells});
  }

  Spec spec(int cells, int levels) const {
    Spec s;
    s.set("horizontal_start", cells / 16).set("horizontal_end", cells).set("vertical_start", 0);
    s.set("vertical_end", levels).set("rd_o_cvd", 287.04 / 717.6);
    for (auto [name, view] : {std::pair{"theta_v", &a_theta}, {"exner", &a_exner}, {"z_temp", &a_z},
                              {"area", &a_area}})
      s.strides_of(name, *view);
    return s;
  }
};

Spec stencil_spec(const DemoOptions& o, const kiln_arg& in, const kiln_arg& out) {
  Spec s;
  s.set("nx", o.nx).set("ny", o.ny).set("nz", o.nz);
  s.set("c0", 0.4).set("cx", 0.1).set("cy", 0.1).set("cz", 0.1);
  return s.strides_of("in", in).strides_of("out", out);
}

// One kernel's fields, run specialised and generic side by side.
struct ThetaPair {
  ThetaFields specialised, generic;
  Spec spec;
  ThetaPair(const DemoOptions& o, bool fortran)
      : specialised(o.cells, o.levels, fortran), generic(o.cells, o.levels, fortran),
        spec(specialised.spec(o.cells, o.levels)) {}
  void step(Runtime& rt) {
    ThetaFields& s = specialised;
    ThetaFields& g = generic;
    rt.kernel("update_theta_and_exner", spec)(s.a_theta, s.a_exner, s.a_area, s.a_z);
    rt.kernel("update_theta_and_exner", spec, Mode::generic)(g.a_theta, g.a_exner, g.a_area, g.a_z);
  }
  double difference() const {
    return std::max(max_abs_diff(specialised.theta_v, generic.theta_v), max_abs_diff(specialised.exner, generic.exner));
  }
};

void run_demo(const DemoOptions& o) {
  Config config = Config::from_env();
  config.time_calls = true;  // the demo exists to show the table
  Runtime rt(config);
  std::printf("kiln demo: update_theta_and_exner on %d cells x %d levels (C and Fortran order), "
              "7-point stencil %dx%dx%d, %d steps, each specialised and generic\n",
              o.cells, o.levels, o.nx, o.ny, o.nz, o.steps);
  std::printf("cache: %s\n", config.use_disk_cache ? config.cache_dir.c_str() : "(disabled)");

  ThetaPair c_order(o, false), f_order(o, true);
  const std::size_t points = std::size_t(o.nx) * o.ny * o.nz;
  std::vector<double> in = random_field(points, 0.0, 1.0, 5), out(points, 0.0), out_generic(points, 0.0);
  const kiln_arg a_in = c_array(in.data(), {o.nz, o.ny, o.nx}), a_out = c_array(out.data(), {o.nz, o.ny, o.nx});
  const kiln_arg a_out_generic = c_array(out_generic.data(), {o.nz, o.ny, o.nx});
  const Spec s_spec = stencil_spec(o, a_in, a_out);

  // As a model's time loop does: look the kernel up, then call it, every step.
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < o.steps; ++step) {
    c_order.step(rt);
    f_order.step(rt);
    rt.kernel("stencil7", s_spec)(a_in, a_out);
    rt.kernel("stencil7", s_spec, Mode::generic)(a_in, a_out_generic);
  }
  const double loop_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("check: specialised vs generic, max |diff| after %d steps: update_theta_and_exner C order %g, "
              "Fortran order %g; stencil7 %g\n",
              o.steps, c_order.difference(), f_order.difference(), max_abs_diff(out, out_generic));

  const MetricsSnapshot m = rt.metrics();
  std::printf("\n%s", m.table().c_str());
  const KernelMetrics total = m.total();
  std::printf("\nsummary: %llu compiles, %llu disk hits, %llu memory hits; demo loop %.1f ms\n",
              static_cast<unsigned long long>(total.compiles), static_cast<unsigned long long>(total.disk_hits),
              static_cast<unsigned long long>(total.memory_hits), loop_ms);
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* demo = app.add_subcommand("demo", "Run the demo kernels over a realistic domain, print init vs run");
  demo->add_option("--cells", options->cells, "horizontal cells")->check(CLI::Range(16, 1 << 24));
  demo->add_option("--levels", options->levels, "vertical levels")->check(CLI::Range(1, 1024));
  demo->add_option("--steps", options->steps, "time steps")->check(CLI::Range(1, 100000));
  demo->add_option("--nx", options->nx, "stencil x size")->check(CLI::Range(3, 4096));
  demo->add_option("--ny", options->ny, "stencil y size")->check(CLI::Range(3, 4096));
  demo->add_option("--nz", options->nz, "stencil z size")->check(CLI::Range(3, 4096));
  demo->callback([options] { run_demo(*options); });
}

}  // namespace kiln::tools
