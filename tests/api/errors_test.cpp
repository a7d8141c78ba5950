// Bad input gets the right exception, a message naming the kernel and the
// parameter or argument, and leaves the cache as it was.
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

using Errors = RuntimeTest;

const char* kBroken = R"(// a user kernel with a type error on line 6
#pragma kiln kernel broken
#pragma kiln array double x[1]
#pragma kiln domain n

kiln::for_each_column(0, n, [&](kiln::index_t c) { x(c) = undefined_name; });
)";

TEST_F(Errors, CompileErrorCarriesDiagnosticsWithTheKernelsOwnLinesAndStoresNothing) {
  rt.register_kernel(kBroken, "broken.kiln");
  std::string diagnostics;
  try {
    rt.kernel("broken", Spec().set("n", 4));
    FAIL() << "no CompileError";
  } catch (const CompileError& e) {
    diagnostics = e.diagnostics();
    EXPECT_NE(std::string(e.what()).find("kernel 'broken'"), std::string::npos);
  }
  EXPECT_NE(diagnostics.find("broken.kiln:6:"), std::string::npos) << diagnostics;
  EXPECT_NE(diagnostics.find("undefined_name"), std::string::npos) << diagnostics;
  EXPECT_TRUE(entry_files(dir.path()).empty());
  EXPECT_EQ(rt.metrics().total().compiles, 0u);
}

TEST_F(Errors, UnknownKernelNamesTheKnownOnes) {
  const auto what = message_of<UnknownKernelError>([&] { rt.kernel("no_such_kernel", Spec()); });
  EXPECT_NE(what.find("'no_such_kernel'"), std::string::npos) << what;
  EXPECT_NE(what.find("stencil7"), std::string::npos) << what;
  EXPECT_TRUE(entry_files(dir.path()).empty());
}

TEST_F(Errors, BadSpecialisationsNameKernelAndParameter) {
  ThetaCase c(16, 4, false);
  Spec missing = c.spec(0, 16, 0, 4);
  Spec ill_typed = missing;
  ill_typed.set("horizontal_end", 16.0);
  Spec unknown = missing;
  unknown.set("horizontal_stride", 2);
  Spec no_end;
  no_end.set("horizontal_start", 0).set("vertical_start", 0).set("vertical_end", 4).set("rd_o_cvd", 0.4);

  auto what = message_of<SpecError>([&] { rt.kernel("update_theta_and_exner", ill_typed); });
  EXPECT_NE(what.find("kernel 'update_theta_and_exner', parameter 'horizontal_end': expected an integer"),
            std::string::npos)
      << what;
  what = message_of<SpecError>([&] { rt.kernel("update_theta_and_exner", unknown); });
  EXPECT_NE(what.find("'horizontal_stride': unknown"), std::string::npos) << what;
  what = message_of<SpecError>([&] { rt.kernel("update_theta_and_exner", no_end); });
  EXPECT_NE(what.find("'horizontal_end': missing"), std::string::npos) << what;
  EXPECT_TRUE(entry_files(dir.path()).empty());
}

TEST_F(Errors, BadCallsNameTheArgument) {
  ThetaCase c(16, 4, false);
  const Kernel k = rt.kernel("update_theta_and_exner", c.spec(0, 16, 0, 4));
  auto theta = c.view(c.theta_v), exner = c.view(c.exner), area = c.area_view(), z = c.view(c.z_temp);

  auto what = message_of<ArgumentError>([&] { k(theta, exner, area); });
  EXPECT_NE(what.find("takes 4 arguments (theta_v, exner, area, z_temp), got 3"), std::string::npos) << what;
  what = message_of<ArgumentError>([&] { k(theta, exner, 1.0, z); });
  EXPECT_NE(what.find("argument 2 'area': expected a double array of rank 1, got a double scalar"), std::string::npos)
      << what;
  std::vector<float> single(16 * 4);
  what = message_of<ArgumentError>([&] { k(theta, c_array(single.data(), {16, 4}), area, z); });
  EXPECT_NE(what.find("'exner': expected a double array of rank 2, got a float array"), std::string::npos) << what;
  // Specialised for C order; a Fortran-order array must be refused, not misread.
  const ThetaCase before = c;
  what = message_of<ArgumentError>([&] { k(theta, exner, area, f_array(c.z_temp.data(), {16, 4})); });
  EXPECT_NE(what.find("'z_temp': strides (1, 16) differ from those it was specialised for"), std::string::npos)
      << what;
  EXPECT_EQ(c.theta_v, before.theta_v);  // refused before any work
}

TEST_F(Errors, MalformedUserKernelAndDuplicateNames) {
  auto what = message_of<KernelSourceError>(
      [&] { rt.register_kernel("#pragma kiln kernel k\n#pragma kiln array double x[9]\n", "mine.kiln"); });
  EXPECT_NE(what.find("mine.kiln:2:"), std::string::npos) << what;
  what = message_of<KernelSourceError>([&] { rt.register_kernel("#pragma kiln kernel stencil7\n", "mine.kiln"); });
  EXPECT_NE(what.find("already registered"), std::string::npos) << what;
  EXPECT_THROW(rt.register_kernel_file(dir.path() / "missing.kiln"), KernelSourceError);
}

}  // namespace
}  // namespace kiln::testing

namespace kiln::testing {
namespace {

// Everything a user can catch is a kiln::Error: a view built with mismatched
// ranks included (it was std::invalid_argument).
TEST(ErrorFamily, AnArrayOfMismatchedRanksIsAnArgumentError) {
  double data[4] = {};
  const std::int64_t shape[] = {2, 2}, strides[] = {1};
  try {
    (void)kiln::array(data, shape, strides);
    FAIL() << "no error";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("same rank"), std::string::npos) << e.what();
  }
  const std::int64_t too_deep[] = {1, 1, 1, 1, 1};
  EXPECT_THROW((void)kiln::array(data, too_deep, too_deep), Error);
}

}  // namespace
}  // namespace kiln::testing

// One taxonomy (issue 32, item 4): every class says its kind, and
// throw_error rebuilds the class of a kind, which is how the bindings and the
// collective's members translate an error they received as a kind and a text.
namespace kiln::testing {
namespace {

template <class Class>
void expect_kind(ErrorKind kind) {
  try {
    throw_error(kind, "the message", "the diagnostics");
  } catch (const Class& e) {
    EXPECT_EQ(e.kind(), kind) << error_kind_name(kind);
    EXPECT_NE(std::string(e.what()).find("the message"), std::string::npos) << e.what();
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << error_kind_name(kind) << " arrived as another class: " << e.what();
    return;
  }
}

TEST(ErrorFamily, EveryKindIsThrownAsItsOwnClass) {
  expect_kind<UnknownKernelError>(ErrorKind::unknown_kernel);
  expect_kind<KernelSourceError>(ErrorKind::kernel_source);
  expect_kind<SpecError>(ErrorKind::spec);
  expect_kind<ArgumentError>(ErrorKind::argument);
  expect_kind<CompileError>(ErrorKind::compile);
  expect_kind<ToolchainError>(ErrorKind::toolchain);
  expect_kind<LoadError>(ErrorKind::load);
  expect_kind<GpuError>(ErrorKind::gpu);
  try {
    throw_error(ErrorKind::error, "plain");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::error);
    EXPECT_EQ(typeid(e), typeid(Error));
  }
}

TEST(ErrorFamily, EachKindHasItsClassNameAndACompileErrorKeepsItsDiagnostics) {
  for (int kind = 0; kind < kErrorKinds; ++kind) {
    const std::string name = error_kind_name(static_cast<ErrorKind>(kind));
    EXPECT_EQ(name.substr(name.size() - 5), "Error") << kind;
  }
  try {
    throw_error(ErrorKind::compile, "k", "line 3: nope");
  } catch (const CompileError& e) {
    EXPECT_EQ(e.diagnostics(), "line 3: nope");
    EXPECT_NE(std::string(e.what()).find("kernel 'k' does not compile"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kiln::testing
