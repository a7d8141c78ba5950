// The cache entries this process has mapped, by the file they were mapped from.
//
// Every entry is mapped through the descriptor its bytes were verified
// through, and known by the file's device and inode: the mapping keeps the
// file alive, so those cannot name another file while it lasts. An entry whose
// object needs no dynamic linking (jit/elf_image.hpp: most kernels) is mapped
// directly; any other is dlopen'ed as /proc/self/fd/N of that descriptor
// (jit/shared_object_loader.hpp), never by its path: a path is looked up again
// by the loader, and whoever can rename a folder on it (another user, where a
// folder is theirs or writable by them) could have another file mapped in its
// place, and its constructors run, after the bytes were verified.
//
// Mapped entries stay mapped until the process ends: unloading them with
// their Runtime cost 3.3 µs a kernel at every Runtime's end (most often at
// the process's end, where it buys nothing), and a later Runtime loading the
// same entry gets the mapping at the cost of a lookup. Each entry is mapped
// at most once per process (about 8 KiB); one dlopen'ed keeps a descriptor
// open (the loader's name for it).
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
  ino_t inode = 0;      // 0: not known (a file just stored): read back when mapped
  int descriptor = -1;  // the file its bytes were verified through (owned by the caller); -1: none
};

// The address of `symbol` in the mapping of `file`, whose bytes are
// `binary`, mapped on first use. Without a descriptor (a file just stored),
// the file is opened and read back first, and mapped only when it holds
// `binary`, is `file` (when its inode is known) and nobody else may write it.
// Null when it is not, or cannot be mapped (removed meanwhile, a noexec
// mount: logged at debug level): the caller then loads a private copy of the
// bytes, which refuses bytes that are no shared object for this machine (so
// does this, with a null). Thread-safe.
void* map_entry(const EntryFile& file, std::span<const char> binary, const std::string& symbol,
                const std::string& what);

}  // namespace kiln::runtime
