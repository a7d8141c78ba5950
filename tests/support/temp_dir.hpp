// A fresh folder under the system's temporary one (mkdtemp), for one test or
// fixture; removed with all it holds when it goes, whatever the test did to
// the permissions of the folders in it (symbolic links are not followed).
// The one such helper of every test layer.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace kiln::testing {

class TempDir {
 public:
  // The folder is named <prefix>-XXXXXX, saying which tests left it if one is left.
  explicit TempDir(std::string_view prefix = "kiln-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (std::string(prefix) + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    namespace fs = std::filesystem;
    std::error_code ec;
    ::chmod(path_.c_str(), 0700);  // a test may have taken its own permissions
    for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_directory(ec) && !it->is_symlink(ec)) ::chmod(it->path().c_str(), 0700);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kiln::testing
