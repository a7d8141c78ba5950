#include "runtime/load/cpu_loader.hpp"

#include "kiln/errors.hpp"

namespace kiln::runtime {

CpuLoader::~CpuLoader() {
  for (const jit::LoadedObject& copy : private_copies_) jit::unload_shared_object(copy);
}

void* CpuLoader::load(std::span<const char> binary, const EntryFile* file, const std::string& symbol,
                      const std::string& what) {
  if (file != nullptr) {
    if (void* address = map_entry(*file, binary, symbol, what)) return address;
  }
  const base::Result<jit::LoadedObject> loaded = jit::load_shared_object_bytes(binary, symbol, what);
  if (!loaded) throw LoadError(loaded.error().message);  // names the kernel and the cause
  std::lock_guard lock(mutex_);
  private_copies_.push_back(*loaded);
  return loaded->address;
}

}  // namespace kiln::runtime
