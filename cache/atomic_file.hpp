// A file that appears whole or not at all: written to a temporary beside its
// final name, fsync'd, renamed over that name, and the folder fsync'd. A
// temporary that is never committed is removed by the destructor, so no error
// path can leave one behind. (After ccache's core/atomicfile, plus the fsyncs
// and a check of every result.)
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace kiln::cache {

class AtomicFile {
 public:
  // Creates ".tmp.<target name>.<pid>.<random>" in the target's folder
  // (O_CREAT | O_EXCL, mode 0600). The folder must exist; a failure shows in error().
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  bool ok() const { return error_.empty(); }
  // The first failure: "<path>: <call>: <strerror>". Later calls do nothing.
  const std::string& error() const { return error_; }
  const std::filesystem::path& temp_path() const { return temp_; }

  // Appends all of `bytes`, through short writes and EINTR.
  bool write(std::span<const char> bytes);
  // fsync, close, rename over the target, fsync the folder.
  bool commit();

 private:
  bool open_temp();
  bool fail(const std::filesystem::path& path, std::string_view call, int error);

  std::filesystem::path target_;
  std::filesystem::path temp_;
  int fd_ = -1;
  bool renamed_ = false;
  std::string error_;
};

// The target name inside a temporary's name, or empty when `file_name` is not
// one of ours: lets a folder scan tell kiln's leftovers from foreign files.
std::string_view temp_target_name(std::string_view file_name);

}  // namespace kiln::cache
