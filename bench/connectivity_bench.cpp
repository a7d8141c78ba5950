// kiln_connectivity_bench: how a kernel on ICON's blocked fields should read
// its neighbours (issue 17). ICON keeps a table as two arrays, the
// neighbour's index in its block and its block, 1-based. Either kiln converts
// them once into a flat 0-based table (kiln::flat_table) and the kernel splits
// each flat neighbour index by nproma (a constant: a multiply and a shift), or
// the kernel reads idx and blk itself, as ICON's Fortran does (two loads per
// neighbour, no division). Same grid, same fields, same sum (the w diffusion's
// nabla2 over C2E2CO), both specialised; alternating rounds, medians. Also the
// cost of the conversion itself, paid once per grid.
//
//   kiln_connectivity_bench [nx ny nlev]   (default 128 128 65; KILN_CACHE_DIR any folder)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/median.hpp"
#include "granule/grid.hpp"
#include "kiln/kiln.hpp"

namespace {

using Clock = std::chrono::steady_clock;

const char* kFlatTable = R"(#pragma kiln kernel nabla2_flat_table
#pragma kiln array double z[2]
#pragma kiln array double w[2]
#pragma kiln array double geofac[2]
#pragma kiln array int32 C2E2CO[2]
#pragma kiln domain horizontal_start horizontal_end vertical_start vertical_end
kiln::for_each_point(z, horizontal_start, horizontal_end, vertical_start, vertical_end, [&](auto c, kiln::index_t k) {
  z(c, k) = kiln::neighbour_sum<4>(C2E2CO, geofac, w, c, k);
});
)";

// idx and blk are blocked like the fields: (nproma, 4, nblks) here, a
// neighbour's place built from them directly.
const char* kIndexBlock = R"(#pragma kiln kernel nabla2_index_block
#pragma kiln array double z[2]
#pragma kiln array double w[2]
#pragma kiln array double geofac[2]
#pragma kiln array int32 idx[2]
#pragma kiln array int32 blk[2]
#pragma kiln domain horizontal_start horizontal_end vertical_start vertical_end
kiln::for_each_point(z, horizontal_start, horizontal_end, vertical_start, vertical_end, [&](auto c, kiln::index_t k) {
  double sum = 0.0;
  for (int j = 0; j < 4; ++j) {
    const kiln::index_t jc = idx(c, j) - 1, jb = blk(c, j) - 1;
    sum += geofac(c, j) * w(kiln::BlockedIndex{jb * w.nproma() + jc, jc, jb}, k);
  }
  z(c, k) = sum;
});
)";

struct Blocked {
  std::int64_t nproma, nblks, width;
  std::vector<double> data;
  Blocked(std::int64_t p, std::int64_t n, std::int64_t w)
      : nproma(p), nblks((n + p - 1) / p), width(w), data(std::size_t(p * nblks * w), 0.0) {}
  double& operator()(std::int64_t c, std::int64_t k) { return data[std::size_t(c % nproma + nproma * (k + width * (c / nproma)))]; }
  kiln_arg view() { return kiln::f_array(data.data(), {nproma, width, nblks}); }
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void run(std::int64_t nx, std::int64_t ny, std::int64_t nlev, std::int64_t nproma) {
  const auto grid = kiln::granule::Grid::torus(nx, ny);
  const std::int64_t n = grid.size(kiln::granule::Entity::cell);
  if (nproma == 0) nproma = n;
  const auto& c2e2co = grid.table(kiln::granule::Table::C2E2CO);
  Blocked w(nproma, n, nlev), z_flat(nproma, n, nlev), z_ib(nproma, n, nlev), geofac(nproma, n, 4);
  for (std::int64_t c = 0; c < n; ++c) {
    for (std::int64_t k = 0; k < nlev; ++k) w(c, k) = 1.0 + 1e-3 * double((c * 7 + k) % 1000);
    for (std::int64_t j = 0; j < 4; ++j) geofac(c, j) = j == 0 ? -3.0 : 1.0;
  }
  // ICON's idx/blk, blocked (nproma, 4, nblks) for the kernel, and (nproma, nblks, 4) for flat_table.
  std::vector<std::int32_t> idx_k(std::size_t(nproma * 4 * w.nblks)), blk_k(idx_k.size());
  std::vector<std::int32_t> idx_t(idx_k.size()), blk_t(idx_k.size()), flat(std::size_t(n * 4));
  for (std::int64_t c = 0; c < n; ++c)
    for (std::int64_t j = 0; j < 4; ++j) {
      const std::int32_t to = c2e2co(c, j);
      const auto i = std::int32_t(to % nproma + 1), b = std::int32_t(to / nproma + 1);
      const std::size_t at_k = std::size_t(c % nproma + nproma * (j + 4 * (c / nproma)));
      const std::size_t at_t = std::size_t(c % nproma + nproma * (c / nproma + w.nblks * j));
      idx_k[at_k] = idx_t[at_t] = i;
      blk_k[at_k] = blk_t[at_t] = b;
    }
  auto start = Clock::now();
  kiln::flat_table(kiln::f_array(idx_t.data(), {nproma, w.nblks, 4}), kiln::f_array(blk_t.data(), {nproma, w.nblks, 4}),
                   kiln::c_array(flat.data(), {n, 4}));
  const double convert_ms = ms_since(start);

  kiln::Runtime rt;
  rt.register_kernel(kFlatTable, "nabla2_flat_table.kiln");
  rt.register_kernel(kIndexBlock, "nabla2_index_block.kiln");
  kiln::Spec base;
  base.set("horizontal_start", 0).set("horizontal_end", n).set("vertical_start", 0).set("vertical_end", nlev);
  const kiln_arg idx_view = kiln::f_array(idx_k.data(), {nproma, 4, w.nblks});
  const kiln_arg blk_view = kiln::f_array(blk_k.data(), {nproma, 4, w.nblks});
  const kiln_arg table_view = kiln::c_array(flat.data(), {n, 4});
  kiln::Spec flat_spec = base, ib_spec = base;
  for (kiln::Spec* s : {&flat_spec, &ib_spec})
    s->blocked_like("z", z_flat.view()).blocked_like("w", w.view()).blocked_like("geofac", geofac.view());
  flat_spec.strides_of("C2E2CO", table_view);
  ib_spec.blocked_like("idx", idx_view).blocked_like("blk", blk_view);
  const kiln::Kernel by_table = rt.kernel("nabla2_flat_table", flat_spec);
  const kiln::Kernel by_index = rt.kernel("nabla2_index_block", ib_spec);

  std::vector<double> table_ms, index_ms;
  for (int round = 0; round < 15; ++round) {
    start = Clock::now();
    by_table(z_flat.view(), w.view(), geofac.view(), table_view);
    table_ms.push_back(ms_since(start));
    start = Clock::now();
    by_index(z_ib.view(), w.view(), geofac.view(), idx_view, blk_view);
    index_ms.push_back(ms_since(start));
  }
  if (z_flat.data != z_ib.data) {
    std::fprintf(stderr, "the two kernels disagree\n");
    std::exit(1);
  }
  const double t = kiln_bench::median_of(table_ms), i = kiln_bench::median_of(index_ms);
  std::printf("%8lld %10.3f %10.3f %8.2f %12.3f\n", static_cast<long long>(nproma), t, i, t / i, convert_ms);
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t nx = argc > 3 ? std::atoll(argv[1]) : 128, ny = argc > 3 ? std::atoll(argv[2]) : 128;
  const std::int64_t nlev = argc > 3 ? std::atoll(argv[3]) : 65;
  std::printf("nabla2 over C2E2CO on a %lldx%lld torus (%lld cells), %lld levels; medians of 15 alternating rounds\n",
              static_cast<long long>(nx), static_cast<long long>(ny), static_cast<long long>(2 * nx * ny),
              static_cast<long long>(nlev));
  std::printf("%8s %10s %10s %8s %12s\n", "nproma", "flat ms", "idx/blk ms", "ratio", "convert ms");
  for (std::int64_t nproma : {8, 32, 0}) run(nx, ny, nlev, nproma);
  std::printf("(nproma 0: one block of every cell; ratio < 1: the flat table is faster; convert: kiln::flat_table, once)\n");
  return 0;
}
