// The loader NVRTC and hipRTC share (jit/rtc_library.hpp): where no library
// loads, or the one that loads is not the compiler, the failure says which
// libraries were tried and why, or which function is missing. Needs neither
// toolkit: the libraries asked for are absent or are libm.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <array>
#include <string>

#include "jit/rtc_library.hpp"

namespace kiln::jit {
namespace {

TEST(RtcLibrary, NoLibraryThatLoadsNamesWhatIsMissingAndEachLibraryTried) {
  constexpr std::array<const char*, 2> kAbsent = {"libkiln-absent-rtc.so.1", "/nonexistent/libkiln-absent-rtc.so"};
  const base::Result<std::shared_ptr<RtcApi>> api = load_rtc("nvrtc", kAbsent, "the test's compiler not found");
  ASSERT_FALSE(api.has_value()) << "an absent library loaded";
  EXPECT_EQ(api.error().kind, base::Failure::Kind::not_found);
  const std::string& message = api.error().message;
  EXPECT_EQ(message.rfind("kiln: the test's compiler not found. Tried:\n  libkiln-absent-rtc.so.1: ", 0), 0u)
      << message;
  // Each library with dlopen's own reason, in the order tried.
  const std::size_t second = message.find("\n  /nonexistent/libkiln-absent-rtc.so: ");
  ASSERT_NE(second, std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory", second), std::string::npos) << message;
}

TEST(RtcLibrary, ALibraryWithoutTheFunctionsNamesTheFirstMissing) {
  constexpr std::array<const char*, 1> kNotACompiler = {"libm.so.6"};
  const base::Result<std::shared_ptr<RtcApi>> api = load_rtc("nvrtc", kNotACompiler, "NVRTC not found");
  ASSERT_FALSE(api.has_value()) << "libm passed for NVRTC";
  EXPECT_EQ(api.error().kind, base::Failure::Kind::not_found);
  EXPECT_EQ(api.error().message, "kiln: libm.so.6 lacks nvrtcGetErrorString (too old a version?)");
}

TEST(RtcLibrary, ASymbolOfALoadedLibraryIsFoundAndAMissingOneNamed) {
  RtcApi api;
  api.handle = ::dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(api.handle, nullptr) << ::dlerror();
  api.library = "libm.so.6";
  const base::Result<void*> found = api.symbol("c", "brt");  // cbrt
  ASSERT_TRUE(found.has_value()) << found.error().message;
  EXPECT_EQ(*found, ::dlsym(api.handle, "cbrt"));
  const base::Result<void*> missing = api.symbol("kiln", "Absent");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message, "kiln: libm.so.6 lacks kilnAbsent (too old a version?)");
  ::dlclose(api.handle);
}

}  // namespace
}  // namespace kiln::jit
