// The cache entries this process has mapped, by the file they were mapped from.
//
// An entry whose object needs no dynamic linking (jit/elf_image.hpp: most
// kernels) is mapped directly from the descriptor its bytes were verified
// through, and known by the file's device and inode: the mapping keeps the
// file alive, so those cannot name another file while it lasts. Any other
// entry is dlopen'ed by path, and the loader knows a file by its path: a
// second dlopen of a path returns the first mapping, even when the path now
// names another file (an entry rebuilt after it was found corrupt, or
// evicted and stored again: kiln renames a complete new file over it). So a
// load compares the file it verified with the file mapped under that path,
// and only reuses a mapping of the very same file.
//
// Mapped entries stay mapped until the process ends: unloading them with
// their Runtime cost 3.3 µs a kernel at every Runtime's end (most often at
// the process's end, where it buys nothing), and a later Runtime loading the
// same entry gets the mapping at the cost of a lookup. Each entry is mapped
// at most once per process (about 8 KiB).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <span>
#include <string>

namespace kiln::runtime {

// A cache entry file whose bytes were verified: its path and which file it was.
struct EntryFile {
  std::filesystem::path path;
  dev_t device = 0;
  ino_t inode = 0;      // 0: not known (a file just stored): stat'ed when mapped
  int descriptor = -1;  // the file, open while it is loaded (owned by the caller); -1: none
};

// The address of `symbol` in the mapping of `file`, whose bytes are
// `binary`, mapped on first use. Null when the path is dlopen'ed from another
// file, or the file cannot be mapped (removed meanwhile, a noexec mount:
// logged at debug level): the caller then loads a private copy of the bytes,
// which refuses bytes that are no shared object for this machine (so does
// this, with a null). Thread-safe.
void* map_entry(const EntryFile& file, std::span<const char> binary, const std::string& symbol,
                const std::string& what);

}  // namespace kiln::runtime
