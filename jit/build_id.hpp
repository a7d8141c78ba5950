// The GNU build ID of an ELF file: the linker's hash of what it linked, read
// from the file's notes: the ELF header, program headers and notes are all
// that is read.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "base/failure.hpp"

namespace kiln::jit {

// Lower-case hex of the build ID; nullopt when the file has none. Fails
// naming the path when it cannot be read as an object file (corrupt when it
// is no 64-bit ELF file or ends early; the errno's kind when it cannot be read).
base::Result<std::optional<std::string>> elf_build_id(const std::filesystem::path& path);

}  // namespace kiln::jit
