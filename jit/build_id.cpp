#include "jit/build_id.hpp"

#include <stdexcept>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Object/BuildID.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>

namespace kiln::jit {

std::optional<std::string> elf_build_id(const std::filesystem::path& path) {
  auto binary = llvm::object::ObjectFile::createObjectFile(path.string());
  if (!binary) {
    throw std::runtime_error("kiln: cannot read '" + path.string() + "': " + llvm::toString(binary.takeError()));
  }
  const llvm::object::BuildIDRef id = llvm::object::getBuildID(binary->getBinary());
  if (id.empty()) return std::nullopt;
  return llvm::toHex(id, /*LowerCase=*/true);
}

}  // namespace kiln::jit
