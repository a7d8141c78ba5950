// Maps a kernel's ELF shared object into this process without the dynamic
// loader, when the object needs nothing the loader does: no library to load
// (DT_NEEDED), no relocation, no initialiser, no thread-local storage. Most
// kernels are such objects (loops over arrays that call nothing); those that
// call into libm are not, and go through dlopen (shared_object_loader.hpp).
//
// Why: a warm start maps one object per kernel. Mapping its segments from the
// descriptor the cache entry was just read and verified through costs one
// mmap for a kernel linked -z rodynamic (one read-only executable segment),
// else three; dlopen opens the file again, maps, mprotects and keeps its
// bookkeeping (~11 µs against ~33 µs a kernel where measured, bench/).
// The descriptor also makes the mapped file the verified one.
//
// Not registered with the dynamic loader: a debugger does not list such a
// kernel's symbols (perf does: the mapping is of a file with a symbol table).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/failure.hpp"

namespace kiln::jit {

// Where an object's segments go, and where its symbol lies, read from its bytes.
struct ImagePlan {
  struct Segment {
    std::uint64_t address = 0;      // p_vaddr, from the image's base
    std::uint64_t offset = 0;       // p_offset in the file
    std::uint64_t file_size = 0;    // p_filesz
    std::uint64_t memory_size = 0;  // p_memsz: past file_size, zeros
    int protection = 0;             // PROT_READ | PROT_WRITE | PROT_EXEC
  };
  std::vector<Segment> segments;  // ascending, on pages of their own
  std::uint64_t span = 0;         // address space from the base, whole pages
  std::uint64_t symbol = 0;       // the symbol's address, from the base
};

// The plan for `binary`, a 64-bit ELF shared object for this machine, and its
// function `symbol`. Empty when it cannot be mapped without the dynamic
// loader, or does not define `symbol` as a function; `why` (when given) then
// says which. Every offset is checked against the bytes.
std::optional<ImagePlan> plan_image(std::span<const char> binary, const std::string& symbol,
                                    std::string* why = nullptr);

// Maps the file open as `fd` (the file `binary` of the plan was read from)
// as `plan` says; returns the image's base. Fails naming `what` and the call
// that failed (kind from its errno), having unmapped what it mapped.
base::Result<void*> map_image(int fd, const ImagePlan& plan, const std::string& what);

// Unmaps an image map_image() returned: nothing may call into it after.
void unmap_image(void* base, const ImagePlan& plan);

}  // namespace kiln::jit
