#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "jit/object_loader.hpp"
#include "tests/jit/jit_test_support.hpp"

namespace kiln::jit {
namespace {

using test::compile_for_host;
using test::load_function;

TEST(ObjectLoader, LinksAndCallsACompiledKernel) {
  const auto object = compile_for_host(R"(
extern "C" double kiln_t(double* a, long n) {
  double sum = 0;
  for (long i = 0; i < n; ++i) sum += 2.0 * a[i];
  return sum;
}
)");
  ASSERT_FALSE(object.empty());
  auto loader = ObjectLoader::create();
  auto fn = load_function<double (*)(double*, long)>(*loader, object, "kiln_t");
  ASSERT_NE(fn, nullptr);
  std::vector<double> a(1000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(i);
  EXPECT_DOUBLE_EQ(fn(a.data(), static_cast<long>(a.size())), 999.0 * 1000.0);
  EXPECT_DOUBLE_EQ(fn(a.data(), 3), 6.0);
}

TEST(ObjectLoader, ResolvesProcessSymbolsForMathBuiltins) {
  // pow stays a call into libm: the loader must find it in the process.
  const auto object = compile_for_host(R"(
extern "C" double kiln_math(double x, double y) { return __builtin_sqrt(x) + __builtin_pow(x, y); }
extern "C" void kiln_math_loop(const double* x, double* out, long n, double y) {
  for (long i = 0; i < n; ++i) out[i] = __builtin_sqrt(x[i]) + __builtin_pow(x[i], y);
}
)");
  auto loader = ObjectLoader::create();
  auto math = load_function<double (*)(double, double)>(*loader, object, "kiln_math");
  EXPECT_DOUBLE_EQ(math(16.0, 0.5), 4.0 + 4.0);
  EXPECT_DOUBLE_EQ(math(2.0, 1.7), std::sqrt(2.0) + std::pow(2.0, 1.7));
  auto loop = load_function<void (*)(const double*, double*, long, double)>(*loader, object, "kiln_math_loop");
  std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, out(x.size());
  loop(x.data(), out.data(), static_cast<long>(x.size()), 2.5);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_DOUBLE_EQ(out[i], std::sqrt(x[i]) + std::pow(x[i], 2.5)) << i;
}

TEST(ObjectLoader, UnloadFreesOneObjectAndLeavesTheOthers) {
  const auto object = compile_for_host(R"(extern "C" long kiln_u(long x) { return 3 * x; })");
  auto loader = ObjectLoader::create();
  const ObjectLoader::Linked a = loader->link(object, "kiln_u", "object a");
  const ObjectLoader::Linked b = loader->link(object, "kiln_u", "object b");
  EXPECT_NE(a.id, b.id);
  EXPECT_NE(a.address, b.address);
  loader->unload(a.id);
  loader->unload(a.id);      // twice: ignored
  loader->unload(a.id + b.id + 100);  // never linked: ignored
  EXPECT_EQ(reinterpret_cast<long (*)(long)>(b.address)(7), 21);
  // The same object links again after an unload, at a working address.
  const ObjectLoader::Linked c = loader->link(object, "kiln_u", "object c");
  EXPECT_EQ(reinterpret_cast<long (*)(long)>(c.address)(5), 15);
}

TEST(ObjectLoader, SameEntryNameInTwoObjectsNeverClashes) {
  const auto one = compile_for_host(R"(extern "C" long kiln_same(long x) { return x + 1; })");
  const auto two = compile_for_host(R"(extern "C" long kiln_same(long x) { return x * 10; })");
  auto loader = ObjectLoader::create();
  auto f1 = load_function<long (*)(long)>(*loader, one, "kiln_same");
  auto f2 = load_function<long (*)(long)>(*loader, two, "kiln_same");
  EXPECT_NE(reinterpret_cast<void*>(f1), reinterpret_cast<void*>(f2));
  EXPECT_EQ(f1(4), 5);
  EXPECT_EQ(f2(4), 40);
  // Loading the same object twice gives a second, independent copy.
  auto f1_again = load_function<long (*)(long)>(*loader, one, "kiln_same");
  EXPECT_EQ(f1_again(4), 5);
}

TEST(ObjectLoader, SameNamedHelpersBindWithinTheirOwnObject) {
  // External helpers of the same name (each object's entry must call its own)
  // and internal ones.
  const auto a = compile_for_host(R"(
extern "C" __attribute__((noinline)) double kiln_helper(double x) { return x + 1.0; }
static __attribute__((noinline)) double local_helper(double x) { return x * 3.0; }
extern "C" double kiln_entry_a(double x) { return kiln_helper(x) + local_helper(x); }
)");
  const auto b = compile_for_host(R"(
extern "C" __attribute__((noinline)) double kiln_helper(double x) { return x * 10.0; }
static __attribute__((noinline)) double local_helper(double x) { return x - 5.0; }
extern "C" double kiln_entry_b(double x) { return kiln_helper(x) + local_helper(x); }
)");
  auto loader = ObjectLoader::create();
  auto fa = load_function<double (*)(double)>(*loader, a, "kiln_entry_a");
  auto fb = load_function<double (*)(double)>(*loader, b, "kiln_entry_b");
  EXPECT_DOUBLE_EQ(fa(2.0), 3.0 + 6.0);
  EXPECT_DOUBLE_EQ(fb(2.0), 20.0 - 3.0);
  auto helper_a = load_function<double (*)(double)>(*loader, a, "kiln_helper");
  auto helper_b = load_function<double (*)(double)>(*loader, b, "kiln_helper");
  EXPECT_DOUBLE_EQ(helper_a(1.0), 2.0);
  EXPECT_DOUBLE_EQ(helper_b(1.0), 10.0);
}

TEST(ObjectLoader, GarbageBytesThrowNamingWhat) {
  auto loader = ObjectLoader::create();
  const std::vector<char> garbage = {'n', 'o', 't', ' ', 'a', 'n', ' ', 'E', 'L', 'F', 0, 1, 2, 3};
  try {
    loader->load(garbage, "kiln_t", "kernel garbage-42");
    FAIL() << "loading garbage did not throw";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("kernel garbage-42"), std::string::npos) << message;
    EXPECT_GT(message.size(), std::string("kernel garbage-42").size() + 20) << "no LLVM reason: " << message;
  }
  EXPECT_THROW(loader->load({}, "kiln_t", "empty object"), std::runtime_error);
  // A truncated ELF object: a valid header, nothing after it.
  const auto object = compile_for_host(R"(extern "C" int kiln_t() { return 7; })");
  const std::vector<char> truncated(object.begin(), object.begin() + 80);
  EXPECT_THROW(loader->load(truncated, "kiln_t", "truncated object"), std::runtime_error);
  // The loader still works after failures.
  EXPECT_EQ(load_function<int (*)()>(*loader, object, "kiln_t")(), 7);
}

TEST(ObjectLoader, MissingEntrySymbolThrowsNamingIt) {
  const auto object = compile_for_host(R"(extern "C" int kiln_present() { return 1; })");
  auto loader = ObjectLoader::create();
  try {
    loader->load(object, "kiln_absent", "kernel K");
    FAIL() << "no throw";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("kiln_absent"), std::string::npos) << message;
    EXPECT_NE(message.find("kernel K"), std::string::npos) << message;
  }
}

TEST(ObjectLoader, UnresolvedExternalThrowsNamingIt) {
  const auto object = compile_for_host(R"(
extern "C" double kiln_no_such_function_anywhere(double);
extern "C" double kiln_calls_missing(double x) { return kiln_no_such_function_anywhere(x) + 1.0; }
)");
  auto loader = ObjectLoader::create();
  try {
    loader->load(object, "kiln_calls_missing", "kernel M");
    FAIL() << "no throw";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("kiln_no_such_function_anywhere"), std::string::npos) << message;
    EXPECT_NE(message.find("kernel M"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace kiln::jit
