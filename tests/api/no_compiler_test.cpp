// A warm process needs no compiler: the compiler's identity in the keys was
// taken when kiln was built, so a process whose kernels are all cached reads
// neither the compiler module nor LLVM's libraries, and runs where they are
// not installed (a compute node without a compiler, a shipped cache). A miss
// there is a ToolchainError naming what is missing.
#include <fstream>
#include <iterator>

#include "tests/api/test_child_run.hpp"
#include "tests/api/test_support.hpp"
#include "tests/support/toolchain_copy.hpp"

namespace kiln::testing {
namespace {

TEST(NoCompiler, AWarmProcessRunsEveryKernelFromAShippedCacheWithoutTheCompiler) {
  TempDir dir;
  const std::filesystem::path shipped = dir.path() / "shipped";
  const ChildRun filled = run_test_child(dir.path(), {{"KILN_CACHE_DIR", shipped.string()}});
  ASSERT_TRUE(filled.ok) << filled.error;
  ASSERT_EQ(filled.compiles, 2u);
  // The compute node: the cache a read-only tier, its own cache empty, and no
  // compiler module (nor LLVM, which only the module would load).
  const std::map<std::string, std::string> node = {{"KILN_CACHE_PATH", shipped.string()},
                                                   {"KILN_CACHE_DIR", (dir.path() / "node").string()},
                                                   {"KILN_COMPILER_MODULE", "/nonexistent/kiln/libkiln_clang.so"}};
  const ChildRun warm = run_test_child(dir.path(), node);
  ASSERT_TRUE(warm.ok) << warm.error;
  EXPECT_EQ(warm.compiles, 0u);
  EXPECT_EQ(warm.disk_hits, 2u);
  EXPECT_EQ(warm.checksum, filled.checksum);
  EXPECT_EQ(warm.llvm_mapped, "0");
  // A miss there (nothing shipped) says what is missing.
  const ChildRun miss = run_test_child(dir.path(), {{"KILN_CACHE_DIR", (dir.path() / "empty").string()},
                                          {"KILN_COMPILER_MODULE", "/nonexistent/kiln/libkiln_clang.so"}});
  EXPECT_FALSE(miss.ok);
  // Issue 33, item 6: the kernel, and the cause (no module where it was looked for).
  EXPECT_NE(miss.error.find("kiln: cannot build kernel 'update_theta_and_exner"), std::string::npos) << miss.error;
  EXPECT_NE(miss.error.find("the compiler module /nonexistent/kiln/libkiln_clang.so (from KILN_COMPILER_MODULE) "
                            "does not exist: this node has no kiln compiler"),
            std::string::npos)
      << miss.error;
  EXPECT_EQ(miss.error.find("is not the one this kiln was built with"), std::string::npos) << miss.error;
}

// Issue 33, item 6: a node without LLVM (simulated: a copy of the module whose
// libLLVM dependency names a library that does not exist, so that dlopen fails
// as it fails where LLVM is not installed). The miss names the kernel and
// dlopen's own message, not a module mismatch.
TEST(NoCompiler, AMissWhereTheModuleDoesNotLoadGivesDlopensMessage) {
  TempDir dir;
  const std::string copy = copy_toolchain_for(::geteuid(), dir.path() / "toolchain", KILN_TEST_COMPILER_MODULE);
  ASSERT_FALSE(copy.empty());
  std::string bytes;
  {
    std::ifstream in(copy, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::size_t at = bytes.find("libLLVM.so.19.1");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 15, "libLLVM.so.19.X");  // same length: only the name of the dependency changes
  std::ofstream(copy, std::ios::binary | std::ios::trunc) << bytes;
  const ChildRun miss =
      run_test_child(dir.path(), {{"KILN_CACHE_DIR", (dir.path() / "cache").string()}, {"KILN_COMPILER_MODULE", copy}});
  EXPECT_FALSE(miss.ok);
  EXPECT_NE(miss.error.find("kiln: cannot build kernel 'update_theta_and_exner"), std::string::npos) << miss.error;
  EXPECT_NE(miss.error.find("the compiler module " + copy + " does not load on this node: libLLVM.so.19.X: cannot "
                            "open shared object file"),
            std::string::npos)
      << miss.error;
  EXPECT_NE(miss.error.find("It needs LLVM 19's shared libraries"), std::string::npos) << miss.error;
  EXPECT_EQ(miss.error.find("is not the one this kiln was built with"), std::string::npos) << miss.error;
  EXPECT_EQ(miss.compiles, 0u);
}

// Issue 33, item 6: a cache filled for one target (KILN_TARGET_CPU=x86-64 on
// a login node) read by a node that forgot KILN_TARGET_CPU and has no
// compiler: the miss says the cache holds the kernel for that other target.
TEST(NoCompiler, AMissOfAKernelCachedForAnotherTargetNamesKilnTargetCpu) {
  TempDir dir;
  const std::filesystem::path shipped = dir.path() / "shipped";
  const ChildRun filled =
      run_test_child(dir.path(), {{"KILN_CACHE_DIR", shipped.string()}, {"KILN_TARGET_CPU", "x86-64"}});
  ASSERT_TRUE(filled.ok) << filled.error;
  const ChildRun miss = run_test_child(dir.path(), {{"KILN_CACHE_PATH", shipped.string()},
                                                    {"KILN_CACHE_DIR", (dir.path() / "node").string()},
                                                    {"KILN_COMPILER_MODULE", "/nonexistent/kiln/libkiln_clang.so"}});
  EXPECT_FALSE(miss.ok);
  EXPECT_NE(miss.error.find("kiln: cannot build kernel 'update_theta_and_exner"), std::string::npos) << miss.error;
  EXPECT_NE(miss.error.find("KILN_TARGET_CPU unset"), std::string::npos) << miss.error;
  EXPECT_NE(miss.error.find("the cache holds it with these values only as built for another target ("),
            std::string::npos)
      << miss.error;
  EXPECT_NE(miss.error.find(" x86-64)"), std::string::npos) << miss.error;
  EXPECT_NE(miss.error.find("set KILN_TARGET_CPU to the same"), std::string::npos) << miss.error;
}

// Another compiler module than the one kiln was built with (here kiln's own,
// its build ID stripped, so its fingerprint is a hash of other bytes): what
// it compiled would be cached under kiln's keys. A miss refuses to use it.
TEST(NoCompiler, AMissRefusesAModuleOtherThanTheOneKilnWasBuiltWith) {
  TempDir dir;
  const std::filesystem::path module = KILN_TEST_COMPILER_MODULE;
  const std::string copy = copy_toolchain_for(::geteuid(), dir.path() / "toolchain", module);
  ASSERT_FALSE(copy.empty());
  const std::string strip = "objcopy --remove-section=.note.gnu.build-id '" + copy + "'";
  ASSERT_EQ(std::system(strip.c_str()), 0) << strip;
  const ChildRun miss =
      run_test_child(dir.path(), {{"KILN_CACHE_DIR", (dir.path() / "cache").string()}, {"KILN_COMPILER_MODULE", copy}});
  EXPECT_FALSE(miss.ok);
  EXPECT_NE(miss.error.find("kiln: cannot build kernel 'update_theta_and_exner"), std::string::npos) << miss.error;
  EXPECT_NE(miss.error.find("the compiler module " + copy + " (from KILN_COMPILER_MODULE) is not the one this kiln "
                            "was built with"),
            std::string::npos)
      << miss.error;
  EXPECT_EQ(miss.compiles, 0u);
}

}  // namespace
}  // namespace kiln::testing
