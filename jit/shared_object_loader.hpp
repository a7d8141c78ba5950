// Maps kernels built as ELF shared objects (jit/compiler/linker) into this
// process with the system's dynamic loader: those that need it (calls into
// libm, say); the others are mapped without it (elf_image.hpp). A cached
// kernel is mapped from its cache entry file itself (the entry format puts the
// binary at offset 0), so a warm load is one dlopen: what a code that caches
// .so files does, with a smaller object (no C runtime, no constructors, libm
// and libc as its only dependencies).
#pragma once

#include <filesystem>
#include <span>
#include <string>

namespace kiln::jit {

struct LoadedObject {
  void* address = nullptr;  // of the symbol asked for
  void* handle = nullptr;   // for unload_shared_object()
};

// Empty when `binary` is a 64-bit ELF shared object for this machine whose
// program headers and the segments they describe lie within its bytes; else
// what is wrong. glibc's loader trusts those offsets (a cut binary can crash
// it), so both loads below are only given bytes that pass this.
std::string shared_object_problem(std::span<const char> binary);

// dlopen(RTLD_NOW | RTLD_LOCAL) of `file`, then dlsym(symbol). The file must
// not change while it is mapped (cache entries never do: writers rename a
// complete file over them). Throws std::runtime_error naming `what`, the file
// and the loader's reason (dlerror) when it cannot. Thread-safe.
LoadedObject load_shared_object_file(const std::filesystem::path& file, const std::string& symbol,
                                     const std::string& what);

// For a binary that is not in a file kiln may map (a store that failed, a
// binary received from another rank, an entry on a network file system):
// writes it to a private temporary file ($TMPDIR, else /tmp; a name never used
// twice by this process, since the loader tells objects apart by name), maps
// that and removes the file. Throws as load_shared_object_file(), also when
// the folder is mounted noexec or shared_object_problem() finds a problem.
LoadedObject load_shared_object_bytes(std::span<const char> binary, const std::string& symbol,
                                      const std::string& what);

// dlclose: nothing may call into the object after (unless another load of the
// same file still holds it). A null handle is ignored.
void unload_shared_object(void* handle);

}  // namespace kiln::jit
