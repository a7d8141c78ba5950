// The cache entries this process has mapped with the dynamic loader, by path.
//
// The loader knows a file by its path: a second dlopen of a path returns the
// first mapping, even when the path now names another file. An entry's path
// can come to name another file when the entry was rebuilt (found corrupt,
// evicted and stored again): kiln renames a complete new file over it. So a
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
#include <string>

namespace kiln::runtime {

// A cache entry file whose bytes were verified: its path and which file it was.
struct EntryFile {
  std::filesystem::path path;
  dev_t device = 0;
  ino_t inode = 0;  // 0: not known (a file just stored): stat'ed when mapped
};

// The address of `symbol` in the mapping of `file`, mapped on first use.
// Null when the path is mapped from another file, or the file cannot be
// mapped (removed meanwhile, a noexec mount: logged at debug level): the
// caller then loads a private copy of the bytes. Thread-safe.
void* map_entry(const EntryFile& file, const std::string& symbol, const std::string& what);

}  // namespace kiln::runtime
