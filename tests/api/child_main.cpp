// A separate process for the cross-process tests, on the cache folder given
// in KILN_CACHE_DIR. Without arguments: resolves and runs both kernels and
// reports, one per line, the outputs' checksum, the counters, and whether
// clang was mapped. With `many N kernel|batch`: resolves N specialisations of
// update_theta_and_exner (one per rd_o_cvd), one by one or in one batch, runs
// each, and reports the counters and how many outputs were wrong.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <string>

#include "tests/api/test_support.hpp"

namespace {

std::uint64_t fnv1a(const std::vector<double>& v, std::uint64_t h = 1469598103934665603ULL) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  for (std::size_t i = 0; i < v.size() * sizeof(double); ++i) h = (h ^ bytes[i]) * 1099511628211ULL;
  return h;
}

bool is_mapped(std::initializer_list<const char*> names) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    for (const char* name : names)
      if (line.find(name) != std::string::npos) return true;
  return false;
}

double rd_o_cvd_of(int i) { return 0.2 + 0.01 * i; }

// Resolves in an order that depends on the process, so processes collide on
// different keys rather than marching in step.
int many(int count, bool batch) {
  using namespace kiln;
  Runtime rt;
  std::vector<kiln::testing::ThetaCase> cases;
  std::vector<KernelRequest> requests;
  for (int i = 0; i < count; ++i) {
    cases.emplace_back(40, 6, i % 2 == 1, 100 + i);
    requests.push_back({"update_theta_and_exner", cases.back().spec(2, 38, 1, 6, rd_o_cvd_of(i))});
  }
  std::vector<Kernel> kernels(count);
  if (batch) {
    kernels = rt.kernels(requests);
  } else {
    const int offset = static_cast<int>(getpid() % count);
    for (int n = 0; n < count; ++n) {
      const int i = (n + offset) % count;
      kernels[i] = rt.kernel(requests[i].name, requests[i].spec);
    }
  }
  int wrong = 0;
  for (int i = 0; i < count; ++i) {
    kiln::testing::ThetaCase want = cases[i];
    want.reference(2, 38, 1, 6, rd_o_cvd_of(i));
    cases[i].run(kernels[i]);
    for (std::size_t j = 0; j < want.exner.size(); ++j)
      if (std::fabs(cases[i].exner[j] - want.exner[j]) > 1e-14 * std::fabs(want.exner[j]) ||
          std::fabs(cases[i].theta_v[j] - want.theta_v[j]) > 1e-14 * std::fabs(want.theta_v[j])) {
        ++wrong;
        break;
      }
  }
  const KernelMetrics total = rt.metrics().total();
  std::printf("compiles %llu\n", static_cast<unsigned long long>(total.compiles));
  std::printf("disk_hits %llu\n", static_cast<unsigned long long>(total.disk_hits));
  std::printf("wrong %d\n", wrong);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kiln;
  try {
    if (argc == 4 && std::strcmp(argv[1], "many") == 0) return many(std::atoi(argv[2]), std::strcmp(argv[3], "batch") == 0);
    Runtime rt;  // configured from the environment, as a user's program is
    kiln::testing::ThetaCase theta(200, 30, true);
    theta.run(rt.kernel("update_theta_and_exner", theta.spec(3, 190, 1, 29)));
    std::vector<double> in = kiln::testing::random_field(20 * 16 * 12, 0, 1, 3), out(in.size(), 0.0);
    const kiln_arg a_in = c_array(in.data(), {12, 16, 20}), a_out = c_array(out.data(), {12, 16, 20});
    Spec s;
    s.set("nx", 20).set("ny", 16).set("nz", 12).set("c0", 0.4).set("cx", 0.1).set("cy", 0.1).set("cz", 0.1);
    rt.kernel("stencil7", s.strides_of("in", a_in).strides_of("out", a_out))(a_in, a_out);

    const KernelMetrics total = rt.metrics().total();
    std::printf("checksum %016llx\n",
                static_cast<unsigned long long>(fnv1a(out, fnv1a(theta.exner, fnv1a(theta.theta_v)))));
    std::printf("compiles %llu\n", static_cast<unsigned long long>(total.compiles));
    std::printf("disk_hits %llu\n", static_cast<unsigned long long>(total.disk_hits));
    std::printf("clang_mapped %d\n", is_mapped({"libclang-cpp", "libkiln_clang"}) ? 1 : 0);
    std::printf("llvm_mapped %d\n", is_mapped({"libLLVM"}) ? 1 : 0);
    std::printf("sqlite_mapped %d\n", is_mapped({"libsqlite3"}) ? 1 : 0);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child: %s\n", e.what());
    return 1;
  }
}
