// The GNU build ID of an ELF file: the linker's hash of what it linked, read
// from the file's notes: the ELF header, program headers and notes are all
// that is read.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace kiln::jit {

// Lower-case hex of the build ID; nullopt when the file has none. Throws
// std::runtime_error naming the path when it cannot be read as an object file.
std::optional<std::string> elf_build_id(const std::filesystem::path& path);

}  // namespace kiln::jit
