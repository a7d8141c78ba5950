#include "jit/shared_object_loader.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "base/posix_io.hpp"
#include "jit/byte_range.hpp"

namespace kiln::jit {
namespace {

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

LoadedObject open_and_find(const std::string& path, const std::string& symbol, const std::string& what) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throw std::runtime_error("kiln: cannot load " + what + " from " + path + ": " + with_hint(loader_error()));
  }
  ::dlerror();  // a null symbol value is legal; only dlerror tells a missing one apart
  void* address = ::dlsym(handle, symbol.c_str());
  if (address == nullptr) {
    const std::string reason = loader_error();
    ::dlclose(handle);
    throw std::runtime_error("kiln: " + what + " loaded from " + path + " has no symbol '" + symbol + "': " + reason);
  }
  return {address, handle};
}

std::string temporary_folder() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && dir[0] != '\0' ? dir : "/tmp";
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
  for (std::size_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    std::memcpy(&segment, binary.data() + header.e_phoff + i * sizeof segment, sizeof segment);
    const bool mapped = segment.p_type == PT_LOAD || segment.p_type == PT_DYNAMIC;
    if (mapped && !fits(segment.p_offset, segment.p_filesz, binary.size())) {
      return "a segment lies beyond the end of the file (cut short?)";
    }
  }
  return {};
}

LoadedObject load_shared_object_file(const std::filesystem::path& file, const std::string& symbol,
                                     const std::string& what) {
  return open_and_find(file.string(), symbol, what);
}

LoadedObject load_shared_object_bytes(std::span<const char> binary, const std::string& symbol,
                                      const std::string& what) {
  if (const std::string problem = shared_object_problem(binary); !problem.empty()) {
    throw std::runtime_error("kiln: cannot load " + what + ": its binary is " + problem);
  }
  // The dynamic loader treats a second dlopen of a name it has loaded as the
  // same object, even after the file was removed: the pid and a counter make
  // every name this process uses new.
  static std::atomic<std::uint64_t> counter{0};
  std::string path = temporary_folder() + "/kiln-" + std::to_string(::getpid()) + "-" +
                     std::to_string(counter.fetch_add(1)) + "-XXXXXX.so";
  const int fd = ::mkstemps(path.data(), 3);
  if (fd < 0) {
    throw std::runtime_error("kiln: cannot load " + what + ": cannot make a temporary file " + path + ": " +
                             std::strerror(errno));
  }
  const base::Result<void> written = base::write_all(fd, binary);
  ::close(fd);
  if (!written) {
    ::unlink(path.c_str());
    throw std::runtime_error("kiln: cannot load " + what + ": cannot write " + path + ": " +
                             std::strerror(written.error().error_number));
  }
  try {
    LoadedObject loaded = open_and_find(path, symbol, what);
    ::unlink(path.c_str());  // the mapping keeps the file's pages
    return loaded;
  } catch (...) {
    ::unlink(path.c_str());
    throw;
  }
}

void unload_shared_object(void* handle) {
  if (handle != nullptr) ::dlclose(handle);
}

}  // namespace kiln::jit
