#include "runtime/mapped_entries.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <mutex>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "jit/shared_object_loader.hpp"

namespace kiln::runtime {
namespace {

struct Mapping {
  dev_t device = 0;
  ino_t inode = 0;
  void* handle = nullptr;
};

struct MappedEntries {
  std::mutex mutex;  // also keeps a path's first mapping to one thread
  std::unordered_map<std::string, Mapping> by_path;
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

}  // namespace

void* map_entry(const EntryFile& file, const std::string& symbol, const std::string& what) {
  EntryFile known = file;
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
    spdlog::get("kiln")->debug("kiln: {} is mapped from an older file at {}; loading a copy", what, known.path.string());
    return nullptr;
  }
  try {
    const jit::LoadedObject loaded = jit::load_shared_object_file(known.path, symbol, what);
    entries.by_path.emplace(known.path.string(), Mapping{known.device, known.inode, loaded.handle});
    return loaded.address;
  } catch (const std::exception& e) {
    spdlog::get("kiln")->debug("{}; loading a copy of the verified bytes instead", e.what());
    return nullptr;
  }
}

}  // namespace kiln::runtime
