// A file that appears whole or not at all: written to a temporary beside its
// final name, fsync'd, renamed over that name, and the folder fsync'd. A
// temporary that is never committed is removed by the destructor, so no error
// path can leave one behind. (After ccache's core/atomicfile, plus the fsyncs
// and a check of every result.)
#pragma once

#include <filesystem>
#include <span>
#include <string_view>

#include "base/failure.hpp"

namespace kiln::cache {

class AtomicFile {
 public:
  // Creates ".tmp.<target name>.<pid>.<random>" in the target's folder
  // (O_CREAT | O_EXCL, mode 0600). The folder must exist; a failure shows in status().
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  bool ok() const { return status_.has_value(); }
  // Success until the first failure ("<path>: <call>: <strerror>", its kind
  // from errno), then that failure: later calls do nothing and return it.
  const base::Result<void>& status() const { return status_; }
  const std::filesystem::path& temp_path() const { return temp_; }

  // Appends all of `bytes`, through short writes and EINTR.
  [[nodiscard]] base::Result<void> write(std::span<const char> bytes);
  // fsync, close, rename over the target, fsync the folder. A failure of
  // the last step leaves the file in place, but perhaps not after a crash.
  [[nodiscard]] base::Result<void> commit();

 private:
  void open_temp();
  base::Result<void> fail(base::Failure failure);  // keeps the first

  std::filesystem::path target_;
  std::filesystem::path temp_;
  int fd_ = -1;
  bool renamed_ = false;
  base::Result<void> status_;
};

// The target name inside a temporary's name, or empty when `file_name` is not
// one of ours: lets a folder scan tell kiln's leftovers from foreign files.
std::string_view temp_target_name(std::string_view file_name);

}  // namespace kiln::cache
