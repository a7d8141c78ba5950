#include "runtime/load/mapped_entries.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "base/log.hpp"
#include "cache/posix_file.hpp"
#include "cache/trust.hpp"
#include "jit/elf_image.hpp"
#include "jit/shared_object_loader.hpp"

namespace kiln::runtime {
namespace {

struct MappedEntries {
  std::mutex mutex;  // also keeps a file's first mapping to one thread
  std::map<std::pair<dev_t, ino_t>, void*> images;   // mapped directly: the base
  std::map<std::pair<dev_t, ino_t>, void*> objects;  // dlopen'ed: the handle
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
  void*& image = entries.images[{file.device, file.inode}];
  if (image == nullptr) {
    const base::Result<void*> mapped = jit::map_image(file.descriptor, plan, what);
    if (!mapped) {
      entries.images.erase({file.device, file.inode});
      base::log().debug("{}; loading a copy of the verified bytes instead", mapped.error().message);
      return nullptr;
    }
    image = *mapped;
  }
  return static_cast<char*>(image) + plan.symbol;
}

// Through the verified descriptor (jit/shared_object_loader.hpp): the loader
// maps the file whose bytes were verified, whatever its path names by now.
// The object keeps a duplicate of the descriptor, for the process's life.
void* dlopen_entry(const EntryFile& file, std::span<const char> binary, const std::string& symbol,
                   const std::string& what) {
  MappedEntries& entries = mapped();
  std::lock_guard lock(entries.mutex);
  void*& handle = entries.objects[{file.device, file.inode}];
  if (handle != nullptr) return symbol_in(handle, symbol);
  const base::Result<jit::LoadedObject> loaded =
      jit::load_shared_object_descriptor(file.descriptor, binary, symbol, what, file.path.string());
  if (!loaded) {
    entries.objects.erase({file.device, file.inode});
    base::log().debug("{}; loading a copy of the verified bytes instead", loaded.error().message);
    return nullptr;
  }
  handle = loaded->handle;
  return loaded->address;
}

}  // namespace

void* map_entry(const EntryFile& file, std::span<const char> binary, const std::string& symbol,
                const std::string& what) {
  const std::optional<jit::ImagePlan> plan = jit::plan_image(binary, symbol);
  // Neither mapper takes bytes the shared check refuses (the private copy says why).
  if (!plan && !jit::shared_object_problem(binary).empty()) return nullptr;
  if (file.descriptor >= 0) {
    return plan ? map_directly(file, *plan, what) : dlopen_entry(file, binary, symbol, what);
  }
  // A file just stored: read back and mapped only when it starts with
  // `binary` (another writer may have renamed its own build over the path
  // meanwhile), is the file stored when that is known, and nobody else may
  // write it (they could change the mapped bytes), as a disk hit of it later
  // would be.
  const cache::FileRead stored = cache::read_file(file.path, /*keep_open=*/true);
  if (stored.status != cache::FileRead::Status::ok || stored.bytes.size() < binary.size() ||
      std::memcmp(stored.bytes.data(), binary.data(), binary.size()) != 0)
    return nullptr;
  if (file.inode != 0 && (stored.device != file.device || stored.inode != file.inode)) return nullptr;
  if (!cache::untrusted_cause(stored.owner, stored.mode, ::geteuid()).empty()) return nullptr;
  const EntryFile verified{file.path, stored.device, stored.inode, stored.descriptor.fd()};
  return plan ? map_directly(verified, *plan, what) : dlopen_entry(verified, binary, symbol, what);
}

}  // namespace kiln::runtime
