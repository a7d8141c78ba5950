#include "base/failure.hpp"

#include <cerrno>
#include <cstring>

namespace kiln::base {

Failure Failure::about(const std::filesystem::path& path) const {
  return {kind, error_number, path.string() + ": " + message};
}

Failure::Kind kind_of_errno(int error) {
  switch (error) {
    case ENOENT:
      return Failure::Kind::not_found;
    case EACCES:
    case EPERM:
      return Failure::Kind::permission;
    case EROFS:
      return Failure::Kind::read_only;
    case ENOSPC:
    case EDQUOT:
      return Failure::Kind::no_space;
    case EBUSY:
    case ETXTBSY:
    case EAGAIN:  // == EWOULDBLOCK on Linux
      return Failure::Kind::busy;
    case ENOLCK:
    case ENOTSUP:  // == EOPNOTSUPP on Linux
    case ENOSYS:
      return Failure::Kind::unsupported;
    default:
      return Failure::Kind::io;
  }
}

std::string errno_text(const std::filesystem::path& path, std::string_view call, int error) {
  std::string text = path.string();
  text += ": ";
  text += call;
  text += ": ";
  text += std::strerror(error);
  return text;
}

Failure errno_failure(std::string_view call, int error) {
  std::string text(call);
  text += ": ";
  text += std::strerror(error);
  return {kind_of_errno(error), error, std::move(text)};
}

Failure errno_failure(const std::filesystem::path& path, std::string_view call, int error) {
  return {kind_of_errno(error), error, errno_text(path, call, error)};
}

}  // namespace kiln::base
