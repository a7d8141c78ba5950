// Loads CPU kernel binaries (ELF shared objects) into this process: a
// verified cache entry is mapped from its file (mapped_entries.hpp); anything
// else is loaded as a private copy of its bytes, unloaded with the loader.
#pragma once

#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "jit/shared_object_loader.hpp"
#include "runtime/load/mapped_entries.hpp"

namespace kiln::runtime {

class CpuLoader {
 public:
  CpuLoader() = default;
  CpuLoader(const CpuLoader&) = delete;
  CpuLoader& operator=(const CpuLoader&) = delete;
  // Unloads the private copies this loader loaded.
  ~CpuLoader();

  // The address of `symbol` in `binary`. Maps `file` when given (a verified
  // cache entry holding `binary`; it stays mapped until the process ends).
  // Else, or when that file cannot be mapped, loads a private copy of
  // `binary` (jit::load_shared_object_bytes: in memory, else in $TMPDIR or
  // /tmp), a new object even when the same bytes were loaded before.
  // Throws LoadError, naming `what` (the kernel) and the loader's message,
  // when the binary does not load.
  void* load(std::span<const char> binary, const EntryFile* file, const std::string& symbol, const std::string& what);

 private:
  std::mutex mutex_;
  std::vector<jit::LoadedObject> private_copies_;  // unloaded at the end
};

}  // namespace kiln::runtime
