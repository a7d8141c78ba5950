// jit/build_id: the GNU build ID read from an ELF file's notes (<elf.h>, no
// LLVM), checked against what binutils' readelf says.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "jit/build_id.hpp"
#include "tests/jit/jit_test_support.hpp"

namespace kiln::jit {
namespace {

using test::TempDir;

using test::contains;
using test::failure_of;
using test::value_of;

// "Build ID: <hex>" from `readelf -n`, "" when it prints none.
std::string readelf_build_id(const std::filesystem::path& path) {
  const std::string command = "readelf -n '" + path.string() + "' 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string text;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, n);
  ::pclose(pipe);
  const std::string label = "Build ID: ";
  const auto at = text.find(label);
  if (at == std::string::npos) return "";
  const auto begin = at + label.size();
  return text.substr(begin, text.find_first_of(" \n", begin) - begin);
}

// The file this process loaded `function` from.
std::filesystem::path library_of(const void* function) {
  Dl_info info{};
  if (::dladdr(function, &info) == 0 || info.dli_fname == nullptr) return {};
  return std::filesystem::weakly_canonical(info.dli_fname);
}

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(BuildId, MatchesReadelfForSystemLibrariesAndTheModule) {
  const std::vector<std::filesystem::path> files = {
      library_of(reinterpret_cast<const void*>(&::dladdr)),                                      // libc
      library_of(reinterpret_cast<const void*>(static_cast<double (*)(double)>(&::cbrt))),      // libm
      library_of(reinterpret_cast<const void*>(&readelf_build_id)),                              // this executable
      default_compiler_module_path(),
      KILN_TEST_LIBLLVM_PATH,
  };
  int with_id = 0;
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    ASSERT_FALSE(file.empty());
    const std::string expected = readelf_build_id(file);
    const std::optional<std::string> id = value_of(elf_build_id(file));
    if (expected.empty()) {
      EXPECT_FALSE(id.has_value()) << *id;
    } else {
      ++with_id;
      ASSERT_TRUE(id.has_value()) << "readelf finds " << expected;
      EXPECT_EQ(*id, expected);
    }
  }
  // Debian links its libraries with build IDs, and so does this build.
  EXPECT_GE(with_id, 3);
  ASSERT_TRUE(value_of(elf_build_id(default_compiler_module_path())).has_value());
}

TEST(BuildId, KernelLinkedWithoutOneHasNone) {
  // The module links kernels with --build-id=none: same source, same bytes.
  const std::vector<char> binary = test::compile_for_host("extern \"C\" int kiln_t() { return 3; }\n");
  ASSERT_FALSE(binary.empty());
  TempDir dir;
  const auto file = dir.path() / "kernel.so";
  write_bytes(file, std::string(binary.begin(), binary.end()));
  EXPECT_EQ(readelf_build_id(file), "");
  EXPECT_EQ(value_of(elf_build_id(file)), std::nullopt);
}

TEST(BuildId, ModuleWithoutItsNoteHasNone) {
  TempDir dir;
  const auto copy = dir.path() / "libkiln_clang.so";
  const std::string command = "objcopy --remove-section=.note.gnu.build-id '" +
                              default_compiler_module_path().string() + "' '" + copy.string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_EQ(value_of(elf_build_id(copy)), std::nullopt);
}

TEST(BuildId, NonElfFileFailsAsCorruptNamingPath) {
  TempDir dir;
  const auto text = dir.path() / "notes.txt";
  write_bytes(text, std::string(200, 'k'));
  const base::Result<std::optional<std::string>> id = elf_build_id(text);
  ASSERT_FALSE(id.has_value()) << "no failure";
  EXPECT_EQ(id.error().kind, base::Failure::Kind::corrupt);
  EXPECT_EQ(id.error().message, "kiln: cannot read the build ID of '" + text.string() + "': not an ELF file");
}

TEST(BuildId, TruncatedFileFailsNamingPath) {
  TempDir dir;
  const std::string module = file_bytes(default_compiler_module_path());
  ASSERT_GT(module.size(), 4096u);
  // Shorter than an ELF header; a header whose program headers are cut off.
  for (const std::size_t size : {std::size_t{0}, std::size_t{10}, std::size_t{64}}) {
    SCOPED_TRACE(size);
    const auto cut = dir.path() / ("cut-" + std::to_string(size) + ".so");
    write_bytes(cut, module.substr(0, size));
    const std::string message = failure_of(elf_build_id(cut));
    ASSERT_FALSE(message.empty()) << "no failure";
    EXPECT_TRUE(contains(message, cut.string())) << message;
  }
}

TEST(BuildId, MissingFileFailsAsNotFoundNamingPath) {
  const std::string path = "/nonexistent/kiln/libsomething.so";
  const base::Result<std::optional<std::string>> id = elf_build_id(path);
  ASSERT_FALSE(id.has_value()) << "no failure";
  EXPECT_EQ(id.error().kind, base::Failure::Kind::not_found);
  EXPECT_EQ(id.error().error_number, ENOENT);
  EXPECT_EQ(id.error().message, "kiln: cannot read the build ID of '" + path + "': open: No such file or directory");
}

}  // namespace
}  // namespace kiln::jit
