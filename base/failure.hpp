// Why something failed, typed: the kind a caller can act on (a full disk, a
// read-only folder, a corrupt entry...), errno when a system call said so, and
// a message for a person that names the path and the cause. Functions that can
// fail return Result<T>: a value, or a Failure (tl::expected, the proposal
// std::expected came from; C++20 has no std::expected yet).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace kiln::base {

struct Failure {
  enum class Kind {
    io,           // any other failure of a system call (EIO, ENOTDIR, EFBIG, ELOOP...)
    not_found,    // ENOENT
    permission,   // EACCES, EPERM
    read_only,    // EROFS, or a cache opened read-only
    no_space,     // ENOSPC, EDQUOT
    busy,         // held by someone else: EBUSY, ETXTBSY, EAGAIN, a lock taken
    unsupported,  // the file system cannot do it: ENOLCK, ENOTSUP, ENOSYS
    corrupt,      // bytes that do not verify (a checksum, a size, a magic number)
    untrusted,    // owned or writable by another user (cache/trust.hpp)
    invalid,      // a request out of bounds (metadata over its limit)
  };
  Kind kind = Kind::io;
  int error_number = 0;  // errno when a system call failed; 0 otherwise
  std::string message;   // "<path>: <call>: <strerror>" or "<path>: <cause>"

  // The same failure about `path`: "<path>: " before the message.
  Failure about(const std::filesystem::path& path) const;
};

template <class T>
using Result = tl::expected<T, Failure>;

// The failed Result of any T: `return base::failed(errno_failure(...));`.
inline tl::unexpected<Failure> failed(Failure failure) { return tl::unexpected<Failure>(std::move(failure)); }

// The kind of a system call's errno (io for those not listed above).
Failure::Kind kind_of_errno(int error);

// "<path>: <call>: <strerror(error)>"
std::string errno_text(const std::filesystem::path& path, std::string_view call, int error);

// A system call's failure: message "<call>: <strerror>", or with a path
// errno_text(); kind from kind_of_errno().
Failure errno_failure(std::string_view call, int error);
Failure errno_failure(const std::filesystem::path& path, std::string_view call, int error);

}  // namespace kiln::base
