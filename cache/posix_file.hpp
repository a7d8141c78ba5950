// Thin, checked wrappers over the POSIX calls the store and the index share.
// Errors come back as text naming the path, the call and errno's meaning;
// nothing here throws for an I/O error.
#pragma once

#include <sys/types.h>

#include <cerrno>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cache {

// "<path>: <call>: <strerror(error)>"
std::string errno_text(const std::filesystem::path& path, std::string_view call, int error);

// Creates `folder` and any missing parents with mode 0700; an existing folder
// is fine. Each new folder's parent is fsync'd so the folder itself survives a
// crash. Returns an error text, empty on success.
std::string make_folders(const std::filesystem::path& folder);

// fsync of a folder, so a rename or a new name in it is durable. Returns an
// error text, empty on success.
std::string sync_folder(const std::filesystem::path& folder);

// An open descriptor, closed on every path out. open(2) with O_CLOEXEC added
// to `flags`; open_error() is its errno, 0 when open.
// Movable: a reader can hand the descriptor on (a loader maps the very file
// whose bytes were verified). A default or moved-from one holds none.
class OpenFile {
 public:
  OpenFile() = default;
  OpenFile(const std::filesystem::path& path, int flags, mode_t mode = 0600);
  ~OpenFile();
  OpenFile(OpenFile&& other) noexcept;
  OpenFile& operator=(OpenFile&& other) noexcept;
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  int fd() const { return fd_; }
  int open_error() const { return open_error_; }

 private:
  int fd_ = -1;
  int open_error_ = EBADF;
};

// Reads from the descriptor's position to end of file into `out` (replacing
// it), through short reads and EINTR; `size_hint` (fstat's size, say) sizes
// the buffer. Returns errno, 0 on success.
int read_to_end(int fd, std::size_t size_hint, std::vector<char>& out);

struct FileRead {
  enum class Status { ok, missing, open_failed, read_failed };
  Status status = Status::ok;
  std::vector<char> bytes;
  int error = 0;  // errno when open_failed or read_failed
  // Which file was read, so a later removal can check it is still that one.
  dev_t device = 0;
  ino_t inode = 0;
  // Who owns the file and its mode, from the same fstat: the trust check
  // (trust.hpp) judges the very file that was read, not one that a rename
  // put in its place afterwards.
  uid_t owner = 0;
  mode_t mode = 0;
  bool has_status = false;  // false when fstat failed: owner and mode unknown
  OpenFile descriptor;      // still open, read-only, when read_file() was asked to keep it
};

// The whole file, read with read(2): no mmap, which turns an I/O error on a
// network file system into SIGBUS. With `keep_open`, a file read whole stays
// open in `descriptor`.
FileRead read_file(const std::filesystem::path& path, bool keep_open = false);

// Unlinks `path` only while it is still the file `read` came from: another
// process may have replaced a bad entry with a good one meanwhile. Returns an
// error text, empty when removed or already gone.
std::string remove_if_same(const std::filesystem::path& path, const FileRead& read);

}  // namespace kiln::cache
