// Runs an embedded kernel and a kernel of its own through the installed kiln,
// checks the results, and checks that the compiler came from the installed
// module (argv[1] is the install prefix).
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

static bool mapped(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(path) != std::string::npos) return true;
  return false;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  kiln::Runtime rt;
  rt.register_kernel(
      "#pragma kiln kernel axpy\n#pragma kiln array double y[1]\n#pragma kiln array double x[1]\n"
      "#pragma kiln domain n\n#pragma kiln static double a\n"
      "kiln::for_each_column(0, n, [&](kiln::index_t i) { y(i) += a * x(i); });\n",
      "axpy.kiln");
  std::vector<double> x = {1, 2, 3}, y = {10, 20, 30};
  rt.kernel("axpy", kiln::Spec().set("n", 3).set("a", 2.0))(kiln::c_array(y.data(), {3}), kiln::c_array(x.data(), {3}));

  std::vector<double> in(5 * 5 * 5, 1.0), out(in.size(), 0.0);
  const kiln_arg a_in = kiln::c_array(in.data(), {5, 5, 5}), a_out = kiln::c_array(out.data(), {5, 5, 5});
  kiln::Spec s;
  s.set("nx", 5).set("ny", 5).set("nz", 5).set("c0", 0.5).set("cx", 0.25).set("cy", 0.125).set("cz", 0.0625);
  rt.kernel("stencil7", s)(a_in, a_out);

  const std::string module = std::string(argv[1]) + "/lib/kiln/libkiln_clang.so";
  const bool ok = y == std::vector<double>{12, 24, 36} && out[31] == 0.5 + 2 * (0.25 + 0.125 + 0.0625) &&
                  out[0] == 0.0 && mapped(module);
  std::printf("consumer: axpy %g %g %g, stencil interior %g, module %s mapped: %s\n", y[0], y[1], y[2], out[31],
              module.c_str(), mapped(module) ? "yes" : "no");
  return ok ? 0 : 1;
}
