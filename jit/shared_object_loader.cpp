#include "jit/shared_object_loader.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/posix_io.hpp"
#include "jit/byte_range.hpp"
#include "jit/elf_tables.hpp"

// memfd_create's flag for an executable memfd (Linux 6.3). Older kernels
// refuse unknown flags (EINVAL): then the memfd is made without it, and is
// executable as every memfd was before.
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

namespace kiln::jit {
namespace {

std::uint64_t page_size() {
  static const auto size = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return size;
}
std::uint64_t page_down(std::uint64_t a) { return a & ~(page_size() - 1); }
std::uint64_t page_up(std::uint64_t a) { return page_down(a + page_size() - 1); }

std::string loader_error() {
  const char* text = ::dlerror();
  return text != nullptr ? text : "no reason given";
}

// dlopen's "failed to map segment" on a noexec mount is cryptic: add the likely cause.
std::string with_hint(std::string reason) {
  if (reason.find("failed to map segment") != std::string::npos) {
    reason += " (is the folder on a file system mounted noexec?)";
  }
  return reason;
}

// /proc/<pid>/fd/N, not /proc/self/fd/N: the loader keeps this name in its
// list of objects, and a debugger (gdb) opens that name in its own process,
// where /proc/self is gdb's (another file, or a pipe it waits on forever).
// The same file to every process that may read it, this one included.
std::string descriptor_name(int fd) { return "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd); }

std::vector<Elf64_Phdr> program_headers(std::span<const char> binary) {
  Elf64_Ehdr header{};
  std::memcpy(&header, binary.data(), sizeof header);
  std::vector<Elf64_Phdr> headers(header.e_phnum);
  for (std::size_t i = 0; i < headers.size(); ++i) {
    std::memcpy(&headers[i], binary.data() + header.e_phoff + i * sizeof(Elf64_Phdr), sizeof(Elf64_Phdr));
  }
  return headers;
}

// Whether the object the loader returned holds `binary`'s read-only loadable
// segments (shared_object_problem() passed: they lie within `binary`, and
// are readable) at its base: with -z now and no text relocations, the loader
// changes none of their bytes.
bool holds_binary(void* handle, std::span<const char> binary) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return false;
  for (const Elf64_Phdr& p : program_headers(binary)) {
    if (p.p_type != PT_LOAD || (p.p_flags & PF_W) != 0 || p.p_filesz == 0) continue;
    const auto* mapped = reinterpret_cast<const char*>(map->l_addr + p.p_vaddr);
    if (std::memcmp(mapped, binary.data() + p.p_offset, p.p_filesz) != 0) return false;
  }
  return true;
}

// dlopen of the file open as `held` (owned: kept in the handle's object,
// closed when the loader refuses the file). Null when it refuses the file
// itself (it could not map it: a copy elsewhere may load), `refusal` then
// the loader's reason.
void* open_held(int held, std::string& refusal) {
  void* handle = ::dlopen(descriptor_name(held).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    refusal = with_hint(loader_error());
    ::close(held);
  }
  return handle;
}

// The checks of what the loader returned for the file open as `held`, then
// dlsym; unloaded on any failure.
base::Result<LoadedObject> bind_loaded(void* handle, int held, std::span<const char> binary,
                                       const std::string& symbol, const std::string& what,
                                       const std::string& name) {
  LoadedObject loaded{.address = nullptr, .handle = handle, .descriptor = held};
  if (!holds_binary(loaded.handle, binary)) {
    unload_shared_object(loaded);
    return base::failed({base::Failure::Kind::corrupt, 0,
                         "kiln: cannot load " + what + " from " + name +
                             ": the dynamic loader returned an object that does not hold the verified bytes"});
  }
  ::dlerror();  // a null symbol value is legal; only dlerror tells a missing one apart
  loaded.address = ::dlsym(loaded.handle, symbol.c_str());
  if (loaded.address == nullptr) {
    const std::string reason = loader_error();
    unload_shared_object(loaded);
    return base::failed({base::Failure::Kind::not_found, 0,
                         "kiln: " + what + " loaded from " + name + " has no symbol '" + symbol + "': " + reason});
  }
  return loaded;
}

// A sealed memfd holding `binary`; -1 with `why` set when there is none.
int memory_copy(std::span<const char> binary, std::string& why) {
  int fd = ::memfd_create("kiln-kernel", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (fd < 0 && errno == EINVAL) fd = ::memfd_create("kiln-kernel", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    why = std::string("memfd_create: ") + std::strerror(errno);
    return -1;
  }
  if (const base::Result<void> written = base::write_all(fd, binary); !written) {
    why = std::string("write: ") + std::strerror(written.error().error_number);
    ::close(fd);
    return -1;
  }
  // Nobody, through /proc/<pid>/fd either, changes the bytes once verified.
  // Best effort: the memfd is this process's alone anyway.
  (void)::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return fd;
}

// A file in `folder` holding `binary`, already removed (the loader opens it
// through the descriptor); -1 with `why` set when it cannot be made.
int file_copy(const std::string& folder, std::span<const char> binary, std::string& why) {
  static std::atomic<std::uint64_t> counter{0};
  std::string path = folder + "/kiln-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1)) +
                     "-XXXXXX.so";
  const int fd = ::mkostemps(path.data(), 3, O_CLOEXEC);
  if (fd < 0) {
    why = "cannot make a file " + path + ": " + std::strerror(errno);
    return -1;
  }
  ::unlink(path.c_str());  // nothing is left behind, even by a process killed while loading
  if (const base::Result<void> written = base::write_all(fd, binary); !written) {
    why = "cannot write " + path + ": " + std::strerror(written.error().error_number);
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::string shared_object_problem(std::span<const char> binary) {
  Elf64_Ehdr header{};
  if (binary.size() < sizeof header) return "shorter than an ELF header";
  std::memcpy(&header, binary.data(), sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file";
  if (header.e_ident[EI_CLASS] != ELFCLASS64) return "not a 64-bit ELF file";
  if (header.e_type != ET_DYN) return "not an ELF shared object";
#if defined(__x86_64__)
  if (header.e_machine != EM_X86_64) return "built for another machine (ELF e_machine " + std::to_string(header.e_machine) + ")";
#elif defined(__aarch64__)
  if (header.e_machine != EM_AARCH64) return "built for another machine (ELF e_machine " + std::to_string(header.e_machine) + ")";
#endif
  if (header.e_phentsize != sizeof(Elf64_Phdr)) return "unexpected program header size";
  if (!fits(header.e_phoff, std::uint64_t{header.e_phnum} * sizeof(Elf64_Phdr), binary.size())) {
    return "program headers beyond the end of the file (cut short?)";
  }
  const std::vector<Elf64_Phdr> headers = program_headers(binary);
  for (const Elf64_Phdr& p : headers) {
    const bool mapped = p.p_type == PT_LOAD || p.p_type == PT_DYNAMIC;
    if (mapped && !fits(p.p_offset, p.p_filesz, binary.size())) {
      return "a segment lies beyond the end of the file (cut short?)";
    }
  }
  // The loadable segments: glibc maps the span from the first to the last
  // and each segment at its place in it, so out of order or overlapping ones
  // would map over other memory of the process.
  std::uint64_t next_page = 0;
  std::vector<const Elf64_Phdr*> loads;
  for (const Elf64_Phdr& p : headers) {
    if (p.p_type != PT_LOAD) continue;
    if (p.p_memsz == 0) return "a loadable segment is empty";
    if ((p.p_flags & PF_R) == 0) return "a loadable segment is not readable";
    if ((p.p_flags & PF_W) != 0 && (p.p_flags & PF_X) != 0) return "a segment is writable and executable";
    if (p.p_filesz > p.p_memsz) return "a segment is larger in the file than in memory";
    if ((p.p_vaddr - p.p_offset) % page_size() != 0) return "a segment's address and file offset differ within a page";
    if (!fits(p.p_vaddr, p.p_memsz, std::uint64_t{1} << 40)) return "a segment lies beyond 2^40 bytes of address space";
    if (page_down(p.p_vaddr) < next_page) return "its segments overlap or are out of order";
    // Zeros past the file's bytes are written in place: only a writable segment can have them.
    if (p.p_memsz > p.p_filesz && (p.p_flags & PF_W) == 0) return "a read-only segment has zero fill";
    next_page = page_up(p.p_vaddr + p.p_memsz);
    loads.push_back(&p);
  }
  if (loads.empty()) return "it has no loadable segment";
  // Headers the loader reads at their address once the segments are mapped.
  const auto in_pages = [&](std::uint64_t address, std::uint64_t size) {
    for (const Elf64_Phdr* l : loads) {
      const std::uint64_t start = page_down(l->p_vaddr);
      if (address >= start && fits(address - start, size, page_up(l->p_vaddr + l->p_memsz) - start)) return true;
    }
    return false;
  };
  const Elf64_Phdr* dynamic = nullptr;
  for (const Elf64_Phdr& p : headers) {
    switch (p.p_type) {
      case PT_DYNAMIC: dynamic = &p; break;
      case PT_GNU_STACK:  // an executable stack for every thread of the process: kiln's objects never ask
        if ((p.p_flags & PF_X) != 0) return "it asks for an executable stack";
        break;
      case PT_TLS:  // its initial image is copied from there
        if (!in_pages(p.p_vaddr, p.p_filesz)) return "its thread-local storage image lies outside its segments";
        break;
      case PT_PHDR: case PT_INTERP: case PT_NOTE: case PT_GNU_EH_FRAME: case PT_GNU_RELRO: case PT_GNU_PROPERTY:
        if (!in_pages(p.p_vaddr, p.p_memsz)) {
          return "its program header of type " + std::to_string(p.p_type) + " lies outside its segments";
        }
        break;
      default: break;
    }
  }
  if (dynamic == nullptr) return "it has no dynamic section";
  // glibc reads the dynamic section at its address, the direct mapper at its
  // file offset: both must be the same bytes, of a segment's file bytes;
  // glibc writes into it when it is marked writable (so its segment must be),
  // and reads entries until DT_NULL.
  const Elf64_Phdr* holder = nullptr;
  for (const Elf64_Phdr* l : loads) {
    if (dynamic->p_vaddr >= l->p_vaddr && fits(dynamic->p_vaddr - l->p_vaddr, dynamic->p_filesz, l->p_filesz) &&
        dynamic->p_offset == l->p_offset + (dynamic->p_vaddr - l->p_vaddr))
      holder = l;
  }
  if (holder == nullptr) return "its dynamic section lies outside its segments' file bytes";
  if ((dynamic->p_flags & PF_W) != 0 && (holder->p_flags & PF_W) == 0) {
    return "its dynamic section is marked writable in a read-only segment";
  }
  for (std::uint64_t at = 0; at + sizeof(Elf64_Dyn) <= dynamic->p_filesz; at += sizeof(Elf64_Dyn)) {
    Elf64_Dyn entry{};
    std::memcpy(&entry, binary.data() + dynamic->p_offset + at, sizeof entry);
    if (entry.d_tag == DT_NULL) return dynamic_tables_problem(binary, loads, *dynamic);
  }
  return "its dynamic section has no end (DT_NULL)";
}

base::Result<LoadedObject> load_shared_object_descriptor(int fd, std::span<const char> binary,
                                                         const std::string& symbol, const std::string& what,
                                                         const std::string& name) {
  if (const std::string problem = shared_object_problem(binary); !problem.empty()) {
    return base::failed({base::Failure::Kind::corrupt, 0,
                         "kiln: cannot load " + what + " from " + name + ": its binary is " + problem});
  }
  const int held = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (held < 0) {
    const int error = errno;
    return base::failed({base::kind_of_errno(error), error,
                         "kiln: cannot load " + what + " from " + name + ": cannot duplicate its descriptor: " +
                             std::strerror(error)});
  }
  std::string refusal;
  void* handle = open_held(held, refusal);
  if (handle == nullptr)
    return base::failed({base::Failure::Kind::io, 0, "kiln: cannot load " + what + " from " + name + ": " + refusal});
  return bind_loaded(handle, held, binary, symbol, what, name);
}

base::Result<LoadedObject> load_shared_object_bytes(std::span<const char> binary, const std::string& symbol,
                                                    const std::string& what) {
  if (const std::string problem = shared_object_problem(binary); !problem.empty()) {
    return base::failed({base::Failure::Kind::corrupt, 0, "kiln: cannot load " + what + ": its binary is " + problem});
  }
  std::string failures;  // why each place failed
  const auto note = [&](const std::string& place, const std::string& why) {
    failures += (failures.empty() ? "" : "; ") + place + ": " + why;
  };
  std::string why;
  if (const int fd = memory_copy(binary, why); fd >= 0) {
    if (void* handle = open_held(fd, why))
      return bind_loaded(handle, fd, binary, symbol, what, "a copy in memory (memfd)");
  }
  note("in memory (memfd)", why);
  std::vector<std::string> folders;
  if (const char* dir = std::getenv("TMPDIR"); dir != nullptr && dir[0] != '\0') folders.emplace_back(dir);
  if (folders.empty() || folders.front() != "/tmp") folders.emplace_back("/tmp");
  for (const std::string& folder : folders) {
    if (const int fd = file_copy(folder, binary, why); fd >= 0) {
      if (void* handle = open_held(fd, why))
        return bind_loaded(handle, fd, binary, symbol, what, "a copy in " + folder);
    }
    note("in " + folder, why);
  }
  return base::failed({base::Failure::Kind::io, 0,
                       "kiln: cannot load " + what + " from a private copy of its binary: " + failures});
}

void unload_shared_object(const LoadedObject& object) {
  if (object.handle != nullptr) ::dlclose(object.handle);
  if (object.descriptor < 0) return;
  // The loader knows the object as /proc/<pid>/fd/<descriptor>: while it keeps
  // the object, the number must name no other file.
  if (void* still = ::dlopen(descriptor_name(object.descriptor).c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    ::dlclose(still);
    return;
  }
  ::close(object.descriptor);
}

}  // namespace kiln::jit
