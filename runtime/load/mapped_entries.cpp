#include "runtime/load/mapped_entries.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "base/log.hpp"
#include "cache/posix_file.hpp"
#include "jit/elf_image.hpp"
#include "jit/shared_object_loader.hpp"

namespace kiln::runtime {
namespace {

struct Mapping {
  dev_t device = 0;
  ino_t inode = 0;
  void* handle = nullptr;
};

struct MappedEntries {
  std::mutex mutex;  // also keeps a file's first mapping to one thread
  std::map<std::pair<dev_t, ino_t>, void*> images;      // mapped directly: the base
  std::unordered_map<std::string, Mapping> by_path;  // dlopen'ed
};

// Never destroyed: kernels may be called until the process ends.
MappedEntries& mapped() {
  static MappedEntries* const entries = new MappedEntries;
  return *entries;
}

void* symbol_in(void* handle, const std::string& symbol) {
  ::dlerror();
  return ::dlsym(handle, symbol.c_str());
}

void* map_directly(const EntryFile& file, const jit::ImagePlan& plan, const std::string& what) {
  MappedEntries& entries = mapped();
  std::lock_guard lock(entries.mutex);
  void*& base = entries.images[{file.device, file.inode}];
  if (base == nullptr) {
    try {
      base = jit::map_image(file.descriptor, plan, what);
    } catch (const std::exception& e) {
      entries.images.erase({file.device, file.inode});
      base::log().debug("{}; loading a copy of the verified bytes instead", e.what());
      return nullptr;
    }
  }
  return static_cast<char*>(base) + plan.symbol;
}

void* dlopen_entry(const EntryFile& file, const std::string& symbol, const std::string& what) {
  EntryFile known{file.path, file.device, file.inode};
  if (known.inode == 0) {
    struct stat info {};
    if (::stat(known.path.c_str(), &info) != 0) return nullptr;
    known.device = info.st_dev;
    known.inode = info.st_ino;
  }
  MappedEntries& entries = mapped();
  std::lock_guard lock(entries.mutex);
  const auto it = entries.by_path.find(known.path.string());
  if (it != entries.by_path.end()) {
    const Mapping& m = it->second;
    if (m.device == known.device && m.inode == known.inode) return symbol_in(m.handle, symbol);
    base::log().debug("kiln: {} is mapped from an older file at {}; loading a copy", what, known.path.string());
    return nullptr;
  }
  try {
    const jit::LoadedObject loaded = jit::load_shared_object_file(known.path, symbol, what);
    entries.by_path.emplace(known.path.string(), Mapping{known.device, known.inode, loaded.handle});
    return loaded.address;
  } catch (const std::exception& e) {
    base::log().debug("{}; loading a copy of the verified bytes instead", e.what());
    return nullptr;
  }
}

}  // namespace

void* map_entry(const EntryFile& file, std::span<const char> binary, const std::string& symbol,
                const std::string& what) {
  const std::optional<jit::ImagePlan> plan = jit::plan_image(binary, symbol);
  if (!plan) {
    // For dlopen: the file holds `binary` (verified), so checking the bytes
    // checks what glibc would map, and glibc trusts their offsets.
    if (!jit::shared_object_problem(binary).empty()) return nullptr;
    return dlopen_entry(file, symbol, what);
  }
  if (file.descriptor >= 0) return map_directly(file, *plan, what);
  // A file just stored: read back and mapped only when it starts with
  // `binary` (the plan's offsets are those of `binary`, and another writer may
  // have renamed its own build over the path meanwhile), as a disk hit of it
  // later would be.
  const cache::FileRead stored = cache::read_file(file.path, /*keep_open=*/true);
  if (stored.status != cache::FileRead::Status::ok || stored.bytes.size() < binary.size() ||
      std::memcmp(stored.bytes.data(), binary.data(), binary.size()) != 0)
    return nullptr;
  if (file.inode != 0 && (stored.device != file.device || stored.inode != file.inode)) return nullptr;
  return map_directly({file.path, stored.device, stored.inode, stored.descriptor.fd()}, *plan, what);
}

}  // namespace kiln::runtime
