// A temporary folder for a benchmark's caches, sources and binaries, removed
// with everything in it when it goes, unless KILN_BENCH_KEEP is set (then
// left for inspection: the g++ .so files, the caches). The one temp-folder
// helper of the bench programs.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace kiln_bench {

class TempDir {
 public:
  // <temp_directory_path>/<prefix>-XXXXXX (/tmp unless TMPDIR says otherwise)
  explicit TempDir(const std::string& prefix = "kiln-bench") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
    path_ = pattern;
  }
  ~TempDir() {
    if (std::getenv("KILN_BENCH_KEEP") != nullptr) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kiln_bench
