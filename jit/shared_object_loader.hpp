// Maps kernels built as ELF shared objects (jit/compiler/linker) into this
// process with the system's dynamic loader: those that need it (calls into
// libm, say); the others are mapped without it (elf_image.hpp). The loader is
// only ever given a file kiln holds open: a verified cache entry's descriptor,
// or a private copy of the bytes, and never opens a path that another process
// could point elsewhere meanwhile.
//
// dlopen takes a name, so it is given /proc/<pid>/fd/N, N a duplicate of the
// descriptor that stays open while the object is loaded: the loader knows
// objects by name, and a number closed and reused by another file would name
// the old object. After dlopen, the object's read-only segments (code, symbol
// and relocation tables, headers) are compared with the verified bytes: what
// runs is what was verified, whichever file the loader mapped. (Its device and
// inode, as /proc/self/maps shows them, are not compared: on overlayfs they
// are the lower file's, not those fstat gives.)
#pragma once

#include <span>
#include <string>

#include "base/failure.hpp"

namespace kiln::jit {

struct LoadedObject {
  void* address = nullptr;  // of the symbol asked for
  void* handle = nullptr;   // for unload_shared_object()
  int descriptor = -1;      // the loader's name for it is /proc/<pid>/fd/<descriptor>: open while loaded
};

// Empty when `binary` is a 64-bit ELF shared object for this machine whose
// program headers glibc's loader can be given; else what is wrong. glibc
// trusts them (a forged one crashes it), so both loads below are only given
// bytes that pass, and the direct mapper (elf_image.hpp) plans from bytes that
// pass: the headers lie within the bytes; loadable segments are readable,
// never writable and executable, no larger in the file than in memory, in
// ascending order on pages of their own, within 2^40 bytes, without zero fill
// unless writable; there is a loadable segment and a dynamic section; the
// dynamic section lies in a segment's file bytes at the address that segment
// gives it, is writable only in a writable segment (glibc writes into one
// marked writable) and ends (DT_NULL); every other header the loader reads at
// its address (PT_PHDR, PT_TLS's image, PT_GNU_RELRO, PT_GNU_EH_FRAME,
// PT_GNU_PROPERTY, PT_NOTE, PT_INTERP) lies within a loadable segment's
// pages; and the stack stays non-executable (PT_GNU_STACK).
std::string shared_object_problem(std::span<const char> binary);

// dlopen(RTLD_NOW | RTLD_LOCAL) of the file open as `fd` (not closed; a
// duplicate is kept in the result), whose first bytes are `binary`, as the
// caller verified through `fd`; then dlsym(symbol). `name` (a path, for
// messages) names the file. Fails naming `what`, `name` and the cause when
// shared_object_problem() finds one (kind corrupt), the loader refuses the
// file (a noexec mount, say), the object it returns does not hold `binary`'s
// read-only segments (corrupt), or it lacks the symbol (not_found).
// Thread-safe.
base::Result<LoadedObject> load_shared_object_descriptor(int fd, std::span<const char> binary,
                                                         const std::string& symbol, const std::string& what,
                                                         const std::string& name);

// For a binary that is not in a file kiln may map (a store that failed, a
// binary received from another rank, an entry on a noexec mount): a private
// copy, loaded as above. In memory first (memfd_create, sealed against
// writes); where the kernel refuses an executable memfd (vm.memfd_noexec=2,
// or no memfd), a file in $TMPDIR, else /tmp, removed before it is loaded.
// Each copy is a new file, so loading the same bytes twice gives two objects.
// Fails as above, saying why each place failed, also when
// shared_object_problem() finds a problem (before anything is written).
base::Result<LoadedObject> load_shared_object_bytes(std::span<const char> binary, const std::string& symbol,
                                                    const std::string& what);

// dlclose: nothing may call into the object after (unless another load of the
// same file still holds it). Closes its descriptor unless the loader still
// holds the object (another handle, or an object it never unloads): the name
// /proc/<pid>/fd/<descriptor> then stays taken. A null handle is ignored.
void unload_shared_object(const LoadedObject& object);

}  // namespace kiln::jit
