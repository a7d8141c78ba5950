#include "runtime/load/bundle_mapping.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "base/log.hpp"
#include "jit/elf_image.hpp"

namespace kiln::runtime {
namespace {

// A kept mapping: where, and how long (a file of the same inode but another
// size was changed in place, which kiln never does: it is mapped anew).
struct Kept {
  const char* base = nullptr;
  std::uint64_t length = 0;
};

struct MappedBundles {
  std::mutex mutex;
  std::map<std::pair<dev_t, ino_t>, Kept> kept;
};

// Never destroyed: kernels may be called until the process ends.
MappedBundles& mapped() {
  static MappedBundles* const bundles = new MappedBundles;
  return *bundles;
}

}  // namespace

BundleMapping::~BundleMapping() {
  if (fresh_) ::munmap(const_cast<char*>(base_), length_);
}

std::span<const char> BundleMapping::map(const cache::OpenedEntry& file, const std::string& what) {
  device_ = file.device;
  inode_ = file.inode;
  length_ = file.size;
  if (length_ == 0) return {};  // no entry at all: get() names it
  {
    MappedBundles& bundles = mapped();
    std::lock_guard lock(bundles.mutex);
    const auto it = bundles.kept.find({device_, inode_});
    if (it != bundles.kept.end() && it->second.length == length_) {
      base_ = it->second.base;
      return {base_, length_};
    }
  }
  // Private and never writable: the images are code, the rest of the file
  // (the member table, other images, the entry's trailer) is only ever read.
  void* at = ::mmap(nullptr, length_, PROT_READ | PROT_EXEC, MAP_PRIVATE, file.descriptor, 0);
  if (at == MAP_FAILED) {
    base::log().debug("kiln: cannot map {} ({}): mmap: {}; loading its kernels one by one", file.path.string(), what,
                      std::strerror(errno));
    return {};
  }
  base_ = static_cast<const char*>(at);
  fresh_ = true;
  return {base_, length_};
}

void BundleMapping::keep() {
  if (!fresh_) return;
  fresh_ = false;
  MappedBundles& bundles = mapped();
  std::lock_guard lock(bundles.mutex);
  // Another thread may have kept its own mapping of the file meanwhile: both
  // stay (kernels run from each), the later one is given to later Runtimes.
  bundles.kept[{device_, inode_}] = {base_, length_};
}

namespace {

// The symbol's address from the image's start, when the image runs as it lies.
std::optional<std::uint64_t> symbol_offset(std::span<const char> image, const std::string& symbol) {
  const std::optional<jit::ImagePlan> plan = jit::plan_image(image, symbol);
  if (!plan || plan->segments.size() != 1) return std::nullopt;
  const jit::ImagePlan::Segment& s = plan->segments.front();
  // The image as it lies in the file is its memory image only when its one
  // segment starts at address 0 and offset 0 and has no zero fill.
  if (s.address != 0 || s.offset != 0 || s.memory_size != s.file_size || s.file_size > image.size())
    return std::nullopt;
  return plan->symbol;
}

}  // namespace

bool runs_from_bundle(std::span<const char> binary, const std::string& symbol) {
  return symbol_offset(binary, symbol).has_value();
}

void* bundle_member(const char* base, std::span<const char> image, std::uint64_t offset, const std::string& symbol) {
  const std::optional<std::uint64_t> at = symbol_offset(image, symbol);
  return at ? const_cast<char*>(base + offset + *at) : nullptr;
}

}  // namespace kiln::runtime
