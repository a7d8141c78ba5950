// Issue 33, item 10: forged entries with flipped bytes in the dynamic symbol,
// hash or string tables crashed glibc's loader (9 of 200 mutants), where
// flipped program headers no longer did. shared_object_problem() now checks
// those tables (jit/elf_tables.cpp). And item 7: the loader's name for a
// kernel loaded from a descriptor means the same file in another process.
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "jit/elf_image.hpp"
#include "jit/shared_object_loader.hpp"
#include "tests/jit/jit_test_support.hpp"
#include "tests/trust/trust_test_support.hpp"

namespace kiln::jit {
namespace {

using ::kiln::testing::trust::Forked;
using ::kiln::testing::trust::run_forked;
using test::compile_for_host;

// Where a table the dynamic section names lies in the file: [offset, offset + size).
struct Range {
  const char* table;
  std::uint64_t offset = 0, size = 0;
};

// The file offset of `address`, through the loadable segments.
std::uint64_t file_offset(const std::vector<char>& binary, std::uint64_t address) {
  Elf64_Ehdr header{};
  std::memcpy(&header, binary.data(), sizeof header);
  for (std::size_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr p{};
    std::memcpy(&p, binary.data() + header.e_phoff + i * sizeof p, sizeof p);
    if (p.p_type == PT_LOAD && address >= p.p_vaddr && address - p.p_vaddr < p.p_filesz)
      return p.p_offset + address - p.p_vaddr;
  }
  ADD_FAILURE() << "address " << address << " in no segment";
  return 0;
}

// The symbol, hash and string tables of a real object, from its section
// headers (the sizes: the dynamic section gives only the string table's).
std::vector<Range> tables_of(const std::vector<char>& binary) {
  Elf64_Ehdr header{};
  std::memcpy(&header, binary.data(), sizeof header);
  std::vector<Range> out;
  for (std::size_t i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr s{};
    std::memcpy(&s, binary.data() + header.e_shoff + i * sizeof s, sizeof s);
    const char* name = s.sh_type == SHT_DYNSYM     ? "symbol table"
                       : s.sh_type == SHT_GNU_HASH ? "GNU hash table"
                       : s.sh_type == SHT_HASH     ? "SysV hash table"
                       : (s.sh_type == SHT_STRTAB && (s.sh_flags & SHF_ALLOC)) ? "string table"
                       : s.sh_type == SHT_GNU_versym ? "symbol versions"
                       : s.sh_type == SHT_GNU_verneed ? "version needs"
                       : s.sh_type == SHT_RELA && (s.sh_flags & SHF_ALLOC) ? "relocations"
                                                                            : nullptr;
    if (name != nullptr) out.push_back({name, file_offset(binary, s.sh_addr), s.sh_size});
  }
  return out;
}

// Every mutant (one to three bytes of one table flipped, seeded) is refused
// by the check, or loads or fails in a child with an error: never a signal.
TEST(ElfTables, FlippedBytesInTheSymbolHashAndStringTablesNeverCrashTheLoader) {
  // One kernel the direct mapper takes, one that calls libm through the loader
  // (DT_NEEDED, relocations, symbol versions).
  const std::vector<std::vector<char>> kernels = {
      compile_for_host(R"(extern "C" int kiln_t() { return 7; })"),
      compile_for_host(R"(extern "C" double kiln_t(double x) { return __builtin_pow(x, x) + __builtin_sin(x); })")};
  // Seeded: the same mutants each run (KILN_ELF_FUZZ_SEED tries others).
  const char* seed = std::getenv("KILN_ELF_FUZZ_SEED");
  std::mt19937_64 random(seed != nullptr ? std::strtoull(seed, nullptr, 10) : 33);
  int refused = 0, passed = 0, crashed = 0;
  std::string crashes;
  for (const std::vector<char>& binary : kernels) {
    ASSERT_EQ(shared_object_problem(binary), "");
    const std::vector<Range> tables = tables_of(binary);
    ASSERT_GE(tables.size(), 3u);
    for (const Range& range : tables) {
      for (int n = 0; n < 60; ++n) {
        std::vector<char> mutant = binary;
        const int flips = 1 + static_cast<int>(random() % 3);
        for (int f = 0; f < flips; ++f) {
          const std::uint64_t at = range.offset + random() % range.size;
          mutant[at] = static_cast<char>(mutant[at] ^ static_cast<char>(1u << (random() % 8)));
        }
        (void)plan_image(mutant, "kiln_t");  // the direct mapper: bounds-checked, must not crash either
        if (!shared_object_problem(mutant).empty()) {
          ++refused;
          continue;
        }
        ++passed;
        const Forked child = run_forked([&] {
          ::alarm(20);
          return load_shared_object_bytes(mutant, "kiln_t", "mutant") ? 0 : 1;
        });
        if (child.status != 0 && child.status != 1 && crashed++ < 5)
          crashes += std::string(range.table) + " mutant " + std::to_string(n) + ": status " +
                     std::to_string(child.status) + "\n" + child.output;
      }
    }
  }
  std::printf("%d mutants refused, %d passed and loaded in a child\n", refused, passed);
  EXPECT_EQ(crashed, 0) << crashes;
  EXPECT_GT(refused, 0);
}

// Each check names the table and what is wrong.
TEST(ElfTables, AGnuHashTableWithoutBucketsIsRefusedByName) {
  const std::vector<char> binary = compile_for_host(R"(extern "C" int kiln_t() { return 7; })");
  for (const Range& range : tables_of(binary)) {
    if (std::string(range.table) != "GNU hash table") continue;
    std::vector<char> forged = binary;
    std::memset(forged.data() + range.offset, 0, 4);  // nbuckets: glibc divides by it
    EXPECT_EQ(shared_object_problem(forged), "its GNU hash table has no buckets");
    std::vector<char> filter = binary;
    filter[range.offset + 8] = 3;  // a filter of 3 words: glibc masks with size - 1
    EXPECT_EQ(shared_object_problem(filter), "its GNU hash table's filter size is not a power of two");
    return;
  }
  FAIL() << "no GNU hash table";
}

// gdb (and any other process) reads the loader's list of objects and opens
// each name in its own process: /proc/self/fd/N meant gdb's own descriptor
// (a pipe it then waited on forever). The name is /proc/<pid>/fd/N, which
// another process resolves to this very file.
TEST(LoaderName, AKernelLoadedFromADescriptorIsNamedForOtherProcesses) {
  const std::vector<char> binary =
      compile_for_host(R"(extern "C" double kiln_t(double x) { return __builtin_pow(x, x); })");
  const LoadedObject loaded = test::value_of(load_shared_object_bytes(binary, "kiln_t", "kernel N"));
  link_map* map = nullptr;
  ASSERT_EQ(::dlinfo(loaded.handle, RTLD_DI_LINKMAP, &map), 0);
  const std::string name = map->l_name;
  EXPECT_EQ(name, "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(loaded.descriptor));
  // Another process (stat(1)) finds the same file under that name.
  struct stat mine {};
  ASSERT_EQ(::fstat(loaded.descriptor, &mine), 0);
  const std::string command = "stat -L -c '%d:%i' '" + name + "'";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[128] = {};
  const bool read = std::fgets(line, sizeof line, pipe) != nullptr;
  ::pclose(pipe);
  ASSERT_TRUE(read) << command;
  EXPECT_EQ(std::string(line), std::to_string(mine.st_dev) + ":" + std::to_string(mine.st_ino) + "\n");
  unload_shared_object(loaded);
}

}  // namespace
}  // namespace kiln::jit
