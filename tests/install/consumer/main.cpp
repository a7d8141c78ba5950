// Runs an embedded kernel and a kernel of its own through the installed kiln,
// checks the results, and checks that the compiler came from the installed
// module, run by the installed compile worker (argv[1] is the install prefix).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <kiln/kiln.hpp>

static bool mapped(const std::string& path, const std::string& process = "self") {
  std::ifstream maps("/proc/" + process + "/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(path) != std::string::npos) return true;
  return false;
}

// A child of this process running `worker` (it idles a minute after its
// compile) that maps `module`.
static bool worker_maps(const std::string& worker, const std::string& module) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat_file(entry.path() / "stat");
    std::string stat;
    std::getline(stat_file, stat);
    const std::size_t end = stat.rfind(')');
    if (end == std::string::npos) continue;
    char state = 0;
    long parent = 0;
    if (std::sscanf(stat.c_str() + end + 1, " %c %ld", &state, &parent) != 2 || parent != ::getpid()) continue;
    std::error_code error;
    if (std::filesystem::read_symlink(entry.path() / "exe", error) == worker && mapped(module, pid)) return true;
  }
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
  const std::string worker = std::string(argv[1]) + "/lib/kiln/kiln-compile-worker";
  const bool compiled_there = worker_maps(worker, module);
  const bool ok = y == std::vector<double>{12, 24, 36} && out[31] == 0.5 + 2 * (0.25 + 0.125 + 0.0625) &&
                  out[0] == 0.0 && compiled_there && !mapped(module);
  std::printf("consumer: axpy %g %g %g, stencil interior %g, module %s mapped by worker %s: %s, here: %s\n", y[0],
              y[1], y[2], out[31], module.c_str(), worker.c_str(), compiled_there ? "yes" : "no",
              mapped(module) ? "yes" : "no");
  return ok ? 0 : 1;
}
