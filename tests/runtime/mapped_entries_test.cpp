// runtime/mapped_entries: an entry is mapped from the very file whose bytes
// were verified, once per process; a file that does not hold the bytes the
// caller has is never mapped in their place.
#include <gtest/gtest.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache/posix_file.hpp"
#include "runtime/load/mapped_entries.hpp"
#include "runtime/build/cpu_compiler.hpp"
#include "tests/runtime/temp_folder_test.hpp"

namespace kiln::runtime {
namespace {

std::vector<char> compiled(const std::string& source) {
  CpuCompiler compiler;
  jit::CompileOutput out = compiler.compile(source, "mapped_entries_test.cpp");
  EXPECT_TRUE(out.ok) << out.diagnostics;
  return out.binary;
}

class MappedEntriesTest : public testing::TempFolderTest {
 protected:
  // An entry file as the store writes it: the binary at offset 0, then more bytes.
  std::filesystem::path write_entry(const std::string& name, const std::vector<char>& binary) {
    const std::filesystem::path path = temp_folder() / name;
    std::ofstream out(path, std::ios::binary);
    out.write(binary.data(), static_cast<std::streamsize>(binary.size()));
    out << "metadata and trailer";
    return path;
  }
};

using Fn = long (*)(long);

TEST_F(MappedEntriesTest, AFileJustStoredIsMappedWhenItHoldsTheBinary) {
  const std::vector<char> binary = compiled("extern \"C\" long kiln_m(long x) { return 3 * x; }\n");
  const std::filesystem::path path = write_entry("a", binary);
  void* address = map_entry({path, 0, 0, -1}, binary, "kiln_m", "test kernel");
  ASSERT_NE(address, nullptr);
  EXPECT_EQ(reinterpret_cast<Fn>(address)(5), 15);
  // Verified later through a descriptor, the same file gives the same mapping.
  const cache::FileRead read = cache::read_file(path, /*keep_open=*/true);
  EXPECT_EQ(map_entry({path, read.device, read.inode, read.descriptor.fd()}, binary, "kiln_m", "test kernel"), address);
}

// Another writer renamed its own build over the path: the caller's binary is
// not what the file holds, so nothing is mapped from it (the caller then loads
// a private copy of its bytes).
TEST_F(MappedEntriesTest, AFileHoldingOtherBytesIsNotMapped) {
  const std::vector<char> mine = compiled("extern \"C\" long kiln_m(long x) { return 3 * x; }\n");
  const std::vector<char> theirs = compiled("extern \"C\" long kiln_other(long y) { return y - 1; }\n"
                                            "extern \"C\" long kiln_m(long x) { return 3 * x + kiln_other(x); }\n");
  const std::filesystem::path path = write_entry("b", theirs);
  EXPECT_EQ(map_entry({path, 0, 0, -1}, mine, "kiln_m", "test kernel"), nullptr);
}

TEST_F(MappedEntriesTest, AFileReplacedSinceItWasStoredIsNotMapped) {
  const std::vector<char> binary = compiled("extern \"C\" long kiln_m(long x) { return 3 * x; }\n");
  const std::filesystem::path path = write_entry("c", binary);
  const cache::FileRead first = cache::read_file(path);
  std::filesystem::rename(write_entry("c.new", binary), path);  // same bytes, another file, as writers replace entries
  const cache::FileRead second = cache::read_file(path);
  ASSERT_FALSE(first.device == second.device && first.inode == second.inode);
  EXPECT_EQ(map_entry({path, first.device, first.inode, -1}, binary, "kiln_m", "test kernel"), nullptr);
}

}  // namespace
}  // namespace kiln::runtime
