// Every kind of kiln::Error comes out of the C ABI as its own kiln_status,
// with its message in kiln_last_error() (issue 32, item 4: one taxonomy that
// the bindings translate from, not a catch ladder per binding).
#include <gtest/gtest.h>

#include <string>

#include "bindings/c/c_handles.hpp"

namespace kiln::c {
namespace {

TEST(ErrorStatus, EveryKindHasItsStatusAndItsMessage) {
  const kiln_status expected[kErrorKinds] = {
      KILN_ERROR,          KILN_ERROR_UNKNOWN_KERNEL, KILN_ERROR_KERNEL_SOURCE, KILN_ERROR_SPEC, KILN_ERROR_ARGUMENT,
      KILN_ERROR_COMPILE,  KILN_ERROR_TOOLCHAIN,      KILN_ERROR_LOAD,          KILN_ERROR_GPU};
  for (int kind = 0; kind < kErrorKinds; ++kind) {
    const std::string message = std::string("kiln: a ") + error_kind_name(static_cast<ErrorKind>(kind));
    const kiln_status status = guard([&] { throw_error(static_cast<ErrorKind>(kind), message, "diagnostics"); });
    EXPECT_EQ(status, expected[kind]) << error_kind_name(static_cast<ErrorKind>(kind));
    EXPECT_NE(std::string(kiln_last_error()).find(kind == static_cast<int>(ErrorKind::compile) ? "does not compile"
                                                                                              : message),
              std::string::npos)
        << kiln_last_error();
  }
}

TEST(ErrorStatus, WhatIsNotAKilnErrorIsInternalOrOutOfMemory) {
  EXPECT_EQ(guard([] { throw std::bad_alloc(); }), KILN_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(guard([] { throw std::logic_error("a bug"); }), KILN_ERROR_INTERNAL);
  EXPECT_NE(std::string(kiln_last_error()).find("a bug"), std::string::npos);
}

}  // namespace
}  // namespace kiln::c
