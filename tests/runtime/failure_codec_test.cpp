// Every kind of kiln::Error crosses a collective resolution as itself: what one
// member encodes, every other member throws as the same class (issue 32, item 4;
// a LoadError on one rank used to arrive as a plain Error on the others).
#include "runtime/collective/failure_codec.hpp"

#include <gtest/gtest.h>

#include <typeinfo>

#include "kiln/errors.hpp"

namespace kiln::runtime {
namespace {

// The error throw_error(kind) makes, through the codec and back.
void round_trip(ErrorKind kind) {
  Unpacked sent;
  try {
    throw_error(kind, kind == ErrorKind::compile ? "ignored" : "on member 2: it failed", "diagnostics");
  } catch (const std::exception& e) {
    sent = failure_of(e, "the_kernel");
  }
  ASSERT_NE(sent.status, kObject);
  try {
    rethrow(sent, "prefix: ");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << error_kind_name(kind) << " arrived as " << error_kind_name(e.kind());
    if (kind == ErrorKind::compile) {
      const auto& compile = dynamic_cast<const CompileError&>(e);
      EXPECT_EQ(compile.diagnostics(), "diagnostics");
      EXPECT_NE(std::string(e.what()).find("kernel 'the_kernel' does not compile"), std::string::npos) << e.what();
    } else {
      EXPECT_EQ(std::string(e.what()), "prefix: on member 2: it failed");
    }
  }
}

TEST(FailureCodec, EveryKindArrivesAsItsOwnClass) {
  for (int kind = 0; kind < kErrorKinds; ++kind) round_trip(static_cast<ErrorKind>(kind));
}

TEST(FailureCodec, AnExceptionThatIsNotKilnsArrivesAsAPlainErrorWithItsMessage) {
  const Unpacked sent = failure_of(std::bad_typeid(), "k");
  try {
    rethrow(sent);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::error);
    EXPECT_EQ(std::string(e.what()), std::bad_typeid().what());
  }
}

TEST(FailureCodec, AStatusFromANewerKilnArrivesAsTheBaseClass) {
  Unpacked sent{static_cast<char>(100), {'x'}};
  try {
    rethrow(sent);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::error);
    EXPECT_EQ(std::string(e.what()), "x");
  }
}

}  // namespace
}  // namespace kiln::runtime
