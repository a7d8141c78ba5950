#include "cache/index_identity.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "base/open_file.hpp"
#include "base/posix_io.hpp"
#include "cache/index.hpp"
#include "cache/posix_file.hpp"

namespace kiln::cache {
namespace {

constexpr std::size_t kHeaderSize = 100;             // SQLite's database header
constexpr std::string_view kMagic("SQLite format 3\0", 16);
constexpr std::size_t kApplicationIdAt = 68;         // big endian, 4 bytes

IndexFile refused(std::string why, int error = 0) { return {IndexFile::Kind::refused, std::move(why), error}; }

}  // namespace

IndexFile inspect_index_file(const std::filesystem::path& path) {
  // The type first: opening a device may do something by itself.
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    const int error = errno;
    struct stat link {};
    if (error == ENOENT && ::lstat(path.c_str(), &link) == 0) return refused("a symbolic link to nothing");
    if (error == ENOENT) return {IndexFile::Kind::absent, {}};
    return refused(std::string("cannot be inspected: stat: ") + std::strerror(error), error);
  }
  if (!S_ISREG(info.st_mode)) return refused(std::string(file_type_name(info.st_mode)));
  // Without blocking: a FIFO put there since the stat must not stall the caller.
  const base::OpenFile file(path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (file.fd() < 0) return refused(std::string("cannot be opened: ") + std::strerror(file.open_error()), file.open_error());
  if (::fstat(file.fd(), &info) != 0 || !S_ISREG(info.st_mode)) return refused("not a regular file");
  std::array<char, kHeaderSize> header{};
  const base::Result<std::size_t> read = base::read_at(file.fd(), 0, header);
  if (!read) return refused("cannot be read: " + read.error().message, read.error().error_number);
  if (*read == 0) return refused("an empty file");
  if (*read < kHeaderSize || std::string_view(header.data(), kMagic.size()) != kMagic)
    return refused("not a SQLite database");
  const auto byte = [&](std::size_t at) { return static_cast<std::uint32_t>(static_cast<unsigned char>(header[at])); };
  const std::uint32_t id = byte(kApplicationIdAt) << 24 | byte(kApplicationIdAt + 1) << 16 |
                           byte(kApplicationIdAt + 2) << 8 | byte(kApplicationIdAt + 3);
  if (id == static_cast<std::uint32_t>(kIndexApplicationId)) return {IndexFile::Kind::kiln, {}};
  if (id == 0) return {IndexFile::Kind::unstamped, {}};
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", id);
  return refused(std::string("a SQLite database of another application (application id ") + hex + ")");
}

std::string refusal_of_index(const std::filesystem::path& path, const std::string& why) {
  return path.string() + ": " + why +
         "; kiln uses only an index it made, so it leaves this file untouched (remove it, or set KILN_INDEX_PATH "
         "to another path, or to off)";
}

base::Result<void> claim_index_path(const std::filesystem::path& path) {
  const IndexFile found = inspect_index_file(path);
  switch (found.kind) {
    case IndexFile::Kind::absent:
    case IndexFile::Kind::kiln:
      return {};
    case IndexFile::Kind::refused:
      if (found.error != 0)
        return base::failed({base::kind_of_errno(found.error), found.error, path.string() + ": " + found.why});
      return base::failed({base::Failure::Kind::invalid, 0, refusal_of_index(path, found.why)});
    case IndexFile::Kind::unstamped:
      break;
  }
  // Opening judges the schema through SQLite and stamps an earlier kiln's
  // index; it writes nothing to a database it refuses. Locked, read-only...:
  // not proven kiln's this time, so nothing is written beside it either.
  const Index index(path, 200, Index::Fold::later);
  if (index.usable()) return {};
  return base::failed({base::Failure::Kind::invalid, 0, index.problem()});
}

}  // namespace kiln::cache
