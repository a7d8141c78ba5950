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

struct MappedBundles {
  std::mutex mutex;  // also keeps a bundle's first mapping to one thread
  std::map<std::pair<dev_t, ino_t>, const char*> bases;
};

// Never destroyed: kernels may be called until the process ends.
MappedBundles& mapped() {
  static MappedBundles* const bundles = new MappedBundles;
  return *bundles;
}

}  // namespace

const char* map_bundle(const EntryFile& file, std::uint64_t length, const std::string& what) {
  if (file.descriptor < 0 || length == 0) return nullptr;
  MappedBundles& bundles = mapped();
  std::lock_guard lock(bundles.mutex);
  const char*& base = bundles.bases[{file.device, file.inode}];
  if (base != nullptr) return base;
  // Private and never writable: the images are code, the rest of the file
  // (the member table, other images) is only ever read.
  void* at = ::mmap(nullptr, length, PROT_READ | PROT_EXEC, MAP_PRIVATE, file.descriptor, 0);
  if (at == MAP_FAILED) {
    bundles.bases.erase({file.device, file.inode});
    base::log().debug("kiln: cannot map {} ({}): mmap: {}; loading its kernels one by one", file.path.string(), what,
                      std::strerror(errno));
    return nullptr;
  }
  return base = static_cast<const char*>(at);
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
