// For tests whose children drop root to another user: the build tree may lie
// under a folder only root can enter (a clone in `mktemp -d` is 0700), so such
// a child could not read the compiler module. This copies the module, and the
// compile worker beside it, into `folder` (made and handed to `uid`), readable
// and executable by all, and returns KILN_COMPILER_MODULE for the copy.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace kiln::testing {

inline std::string copy_toolchain_for(uid_t uid, const std::filesystem::path& folder,
                                      const std::filesystem::path& module) {
  namespace fs = std::filesystem;
  fs::create_directories(folder);
  if (::chown(folder.c_str(), uid, uid) != 0) return {};
  ::chmod(folder.c_str(), 0755);
  for (const fs::path& file : {module, module.parent_path() / "kiln-compile-worker"}) {
    if (!fs::exists(file)) continue;  // the worker is only there in builds that have one
    fs::copy_file(file, folder / file.filename(), fs::copy_options::overwrite_existing);
    ::chmod((folder / file.filename()).c_str(), 0755);
  }
  return (folder / module.filename()).string();
}

}  // namespace kiln::testing
