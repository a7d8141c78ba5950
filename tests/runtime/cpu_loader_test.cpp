// A binary that does not load is a LoadError (a kiln::Error) naming the
// kernel and the cause, never a bare std::runtime_error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/errors.hpp"
#include "runtime/load/cpu_loader.hpp"

namespace kiln::runtime {
namespace {

TEST(CpuLoader, BytesThatAreNoSharedObjectAreALoadErrorNamingTheKernel) {
  CpuLoader loader;
  const std::vector<char> garbage(4096, 'x');
  try {
    (void)loader.load(garbage, nullptr, "kiln_entry", "kernel 'tiny'");
    FAIL() << "no error";
  } catch (const LoadError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kernel 'tiny'"), std::string::npos) << what;
    EXPECT_NE(what.find("ELF"), std::string::npos) << what;
  }
  EXPECT_THROW((void)loader.load({}, nullptr, "kiln_entry", "kernel 'empty'"), Error);
}

}  // namespace
}  // namespace kiln::runtime
