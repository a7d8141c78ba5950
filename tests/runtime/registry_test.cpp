#include "runtime/kernels/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "kernels_src/embedded_sources.hpp"
#include "kiln/errors.hpp"
#include "runtime/kernels/cache_key.hpp"
#include "tests/support/log_capture.hpp"

namespace kiln::runtime {
namespace {

constexpr const char* kUserKernel = R"(#pragma kiln kernel user_scale
#pragma kiln array double x[1]
#pragma kiln static double a
KILN_POINTWISE(x) { x(i) = a * x(i); }
)";

// The embedded kernels are parsed lazily, by file name: each must declare the
// kernel its file is named after, and parse.
TEST(Registry, EveryEmbeddedKernelParsesUnderItsFileName) {
  const Registry registry;
  const std::vector<std::string> names = registry.names();
  ASSERT_EQ(names.size(), kernels_src::kernels().size());
  for (const auto& file : kernels_src::kernels()) {
    const std::string name(file.name.substr(0, file.name.rfind('.')));
    const lang::KernelInfo& info = registry.get(name);
    EXPECT_EQ(info.name, name);
    EXPECT_EQ(info.file_name, file.name);
    EXPECT_EQ(info.source_digest, text_digest(file.text)) << name;
  }
}

TEST(Registry, TwoRegistriesShareOneParseOfAnEmbeddedKernel) {
  const Registry a, b;
  EXPECT_EQ(&a.get("stencil7"), &b.get("stencil7"));
}

TEST(Registry, AddedKernelsBelongToTheirRegistry) {
  Registry a;
  const Registry b;
  const lang::KernelInfo& added = a.add(kUserKernel, "user_scale.kiln");
  EXPECT_EQ(&a.get("user_scale"), &added);
  EXPECT_EQ(added.source_digest, text_digest(kUserKernel));
  EXPECT_THROW(b.get("user_scale"), UnknownKernelError);
  const std::vector<std::string> names = a.names();
  EXPECT_NE(std::find(names.begin(), names.end(), "user_scale"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "stencil7"), names.end());
  // Adding more leaves earlier KernelInfo addresses valid.
  std::string second = kUserKernel;
  second.replace(second.find("user_scale"), 10, "user_other");
  a.add(second, "user_other.kiln");
  EXPECT_EQ(&a.get("user_scale"), &added);
}

TEST(Registry, NamesOfEmbeddedKernelsAreRefusedAndAnAddedOneIsReplacedByANewText) {
  Registry registry;
  std::string clash = kUserKernel;
  clash.replace(clash.find("user_scale"), 10, "stencil7");
  try {
    registry.add(clash, "mine.kiln");
    FAIL() << "no throw";
  } catch (const KernelSourceError& e) {
    EXPECT_NE(std::string(e.what()).find("stencil7.kiln"), std::string::npos) << e.what();
  }
  // Issue 33, item 11: the same text again changes nothing; a new text
  // replaces the kernel, and the old one stays valid for what points at it.
  const lang::KernelInfo& first = registry.add(kUserKernel, "user_scale.kiln");
  bool replaced = true;
  EXPECT_EQ(&registry.add(kUserKernel, "again.kiln", "", &replaced), &first);
  EXPECT_FALSE(replaced);
  std::string edited = kUserKernel;
  edited += "\n// edited\n";
  const lang::KernelInfo& second = registry.add(edited, "edited.kiln", "", &replaced);
  EXPECT_TRUE(replaced);
  EXPECT_EQ(&registry.get("user_scale"), &second);
  EXPECT_EQ(first.name, "user_scale");  // still readable: handles resolved from it keep it
}

// Every embedded kernel declares its extents; a user kernel that declares
// none still works, and its registration warns once that it is unchecked.
TEST(Registry, EmbeddedKernelsAreCheckedAndAnUncheckedUserKernelWarnsOnce) {
  Registry registry;
  for (const std::string& name : registry.names()) EXPECT_TRUE(registry.get(name).checked()) << name;
  const kiln::testing::LogCapture log;
  const lang::KernelInfo& unchecked = registry.add(kUserKernel, "user.kiln", "");
  EXPECT_FALSE(unchecked.checked());
  EXPECT_NE(log.text().find("warning: kernel 'user_scale' (user.kiln) declares no extents"), std::string::npos)
      << log.text();
  registry.get("user_scale");
  const std::string checked = R"(#pragma kiln kernel user_checked
#pragma kiln size n
#pragma kiln array double x[n]
)";
  EXPECT_TRUE(registry.add(checked, "checked.kiln", "").checked());
  const std::string text = log.text();
  EXPECT_EQ(text.find("declares no extents"), text.rfind("declares no extents")) << text;  // once, for the first
}

TEST(Registry, UnknownNameListsTheKnownOnes) {
  const Registry registry;
  try {
    registry.get("no_such_kernel");
    FAIL() << "no throw";
  } catch (const UnknownKernelError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("no_such_kernel"), std::string::npos);
    EXPECT_NE(message.find("stencil7"), std::string::npos) << message;
    EXPECT_NE(message.find("update_theta_and_exner"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace kiln::runtime
