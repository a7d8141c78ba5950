#include "cache/file_system_kind.hpp"

#include <sys/vfs.h>

#include <cstdint>

namespace kiln::cache {

namespace {

// f_type magic numbers (linux/magic.h and the vendors' headers).
struct NetworkFileSystem {
  std::uint32_t magic;
  std::string_view name;
};

constexpr NetworkFileSystem kNetworkFileSystems[] = {
    {0x6969, "nfs"},
    {0x0bd00bd0, "lustre"},
    {0x47504653, "gpfs"},
    {0xff534d42, "cifs"},
    {0xfe534d42, "smb2"},
};

}  // namespace

std::string_view network_file_system_name(const std::filesystem::path& folder) {
  struct statfs info {};
  const std::filesystem::path path = folder.empty() ? std::filesystem::path(".") : folder;
  if (::statfs(path.c_str(), &info) != 0) return {};
  const auto magic = static_cast<std::uint32_t>(info.f_type);
  for (const NetworkFileSystem& fs : kNetworkFileSystems) {
    if (fs.magic == magic) return fs.name;
  }
  return {};
}

}  // namespace kiln::cache
