#include "cli/gpu/report.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace kiln::gpu_check {

void Report::run(const std::string& name, const std::function<void()>& check) {
  try {
    check();
  } catch (const std::exception& e) {
    error(name, e.what());
  }
}

void Report::error(const std::string& where, const std::string& what) {
  std::fprintf(stderr, "gpu_check: %s: %s\n", where.c_str(), what.c_str());
  std::fflush(stdout);
  doc["errors"].push_back({{"check", where}, {"error", what}});
  ++errors_;
}

void Report::write(const std::string& path, int status) {
  if (path.empty()) return;
  doc["failures"] = failures_;
  doc["errors_count"] = errors_;
  doc["exit_status"] = status;
  std::ofstream out(path, std::ios::trunc);
  out << doc.dump(2) << '\n';
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace kiln::gpu_check
