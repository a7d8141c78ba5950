// runtime/mapped_entries: an entry is mapped from the very file whose bytes
// were verified, once per process, through the descriptor they were verified
// through; a file that does not hold the bytes the caller has is never mapped
// in their place, nor is one put at the entry's path after the check.
#include <elf.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache/posix_file.hpp"
#include "jit/elf_image.hpp"
#include "kiln/errors.hpp"
#include "runtime/compile/cpu_compiler.hpp"
#include "runtime/load/cpu_loader.hpp"
#include "runtime/load/mapped_entries.hpp"
#include "tests/runtime/temp_folder_test.hpp"

namespace kiln::runtime {
namespace {

std::vector<char> compiled(const std::string& source) {
  CpuCompiler compiler{Config{}};  // the default options
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

// Kernels that call libm (pow of a value only known at run time) need the
// dynamic loader: they go through dlopen, not the direct mapper.
constexpr const char* kMine = "extern \"C\" double kiln_p(double x) { return __builtin_pow(x, x) + 1000.0; }\n";
constexpr const char* kTheirs = "extern \"C\" double kiln_p(double x) { return __builtin_pow(x, x) - 1000.0; }\n";
using PowFn = double (*)(double);

// Must fix 1 of issue 16: an entry that needs the dynamic loader was opened
// again by its path, so a file put at the path after its bytes were verified
// (by whoever may rename a folder on the path) was what the loader mapped and
// ran, constructors first.
TEST_F(MappedEntriesTest, AFilePutAtThePathAfterTheCheckIsNotWhatLoads) {
  const std::vector<char> mine = compiled(kMine);
  const std::vector<char> theirs = compiled(kTheirs);
  ASSERT_FALSE(jit::plan_image(mine, "kiln_p").has_value()) << "the test kernel should need the dynamic loader";
  const std::filesystem::path path = write_entry("d", mine);
  const cache::FileRead verified = cache::read_file(path, /*keep_open=*/true);
  ASSERT_EQ(verified.status, cache::FileRead::Status::ok);
  std::filesystem::rename(write_entry("d.theirs", theirs), path);  // swapped in after the check
  void* address = map_entry({path, verified.device, verified.inode, verified.descriptor.fd()}, mine, "kiln_p",
                            "test kernel");
  ASSERT_NE(address, nullptr);
  EXPECT_EQ(reinterpret_cast<PowFn>(address)(2.0), std::pow(2.0, 2.0) + 1000.0) << "the swapped-in file was mapped";
}

TEST_F(MappedEntriesTest, AnEntryThatNeedsTheLoaderIsLoadedOncePerFile) {
  const std::vector<char> mine = compiled(kMine);
  const std::filesystem::path path = write_entry("f", mine);
  const cache::FileRead first = cache::read_file(path, /*keep_open=*/true);
  void* address = map_entry({path, first.device, first.inode, first.descriptor.fd()}, mine, "kiln_p", "test kernel");
  ASSERT_NE(address, nullptr);
  const cache::FileRead again = cache::read_file(path, /*keep_open=*/true);
  EXPECT_EQ(map_entry({path, again.device, again.inode, again.descriptor.fd()}, mine, "kiln_p", "test kernel"), address);
  // A file just stored (no descriptor yet): read back, and the same file.
  EXPECT_EQ(map_entry({path, 0, 0, -1}, mine, "kiln_p", "test kernel"), address);
}

// The offset of the first program header of `type`; 0 when there is none.
std::size_t header_of(const std::vector<char>& binary, std::uint32_t type) {
  Elf64_Ehdr header{};
  std::memcpy(&header, binary.data(), sizeof header);
  for (std::size_t i = 0; i < header.e_phnum; ++i) {
    const std::size_t at = header.e_phoff + i * sizeof(Elf64_Phdr);
    Elf64_Phdr p{};
    std::memcpy(&p, binary.data() + at, sizeof p);
    if (p.p_type == type) return at;
  }
  return 0;
}

// Must fix 4 of issue 16: a forged entry (checksums resealed) whose dynamic
// section's address lies far outside its segments passed the check before
// dlopen, and glibc's loader read it there: a segfault of the host. Now the
// check glibc's bytes pass is the one the direct mapper plans from.
TEST_F(MappedEntriesTest, AForgedProgramHeaderIsALoadErrorNotACrash) {
  std::vector<char> forged = compiled(kMine);
  const std::size_t dynamic = header_of(forged, PT_DYNAMIC);
  ASSERT_NE(dynamic, 0U);
  Elf64_Phdr p{};
  std::memcpy(&p, forged.data() + dynamic, sizeof p);
  p.p_vaddr += std::uint64_t{1} << 44;  // the bytes stay where they were in the file
  std::memcpy(forged.data() + dynamic, &p, sizeof p);
  const std::filesystem::path path = write_entry("e", forged);
  const cache::FileRead read = cache::read_file(path, /*keep_open=*/true);
  const EntryFile file{path, read.device, read.inode, read.descriptor.fd()};
  EXPECT_EQ(map_entry(file, forged, "kiln_p", "forged kernel"), nullptr);
  CpuLoader loader;
  try {
    (void)loader.load(forged, &file, "kiln_p", "forged kernel");
    ADD_FAILURE() << "a forged binary loaded";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("forged kernel"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dynamic section"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::runtime
