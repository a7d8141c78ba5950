// A warm process needs no compiler: the compiler's identity in the keys was
// taken when kiln was built, so a process whose kernels are all cached reads
// neither the compiler module nor LLVM's libraries, and runs where they are
// not installed (a compute node without a compiler, a shipped cache). A miss
// there is a ToolchainError naming what is missing.
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
  EXPECT_NE(miss.error.find("kiln: cannot identify the compiler"), std::string::npos) << miss.error;
  EXPECT_NE(miss.error.find("/nonexistent/kiln/libkiln_clang.so"), std::string::npos) << miss.error;
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
  EXPECT_NE(miss.error.find("kiln: the compiler module " + copy + " is not the one this kiln was built with"),
            std::string::npos)
      << miss.error;
  EXPECT_EQ(miss.compiles, 0u);
}

}  // namespace
}  // namespace kiln::testing
