// A separate process for the cross-process tests: resolves and runs both
// kernels on the cache folder given in KILN_CACHE_DIR and reports, one per
// line: the outputs' checksum, the counters, and whether clang was mapped.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "tests/api/test_support.hpp"

namespace {

std::uint64_t fnv1a(const std::vector<double>& v, std::uint64_t h = 1469598103934665603ULL) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  for (std::size_t i = 0; i < v.size() * sizeof(double); ++i) h = (h ^ bytes[i]) * 1099511628211ULL;
  return h;
}

bool clang_is_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libclang-cpp") != std::string::npos || line.find("libkiln_clang") != std::string::npos) return true;
  return false;
}

}  // namespace

int main() {
  using namespace kiln;
  try {
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
    std::printf("clang_mapped %d\n", clang_is_mapped() ? 1 : 0);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child: %s\n", e.what());
    return 1;
  }
}
