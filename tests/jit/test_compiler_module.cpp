#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "jit/build_id.hpp"
#include "jit/compiler_module.hpp"
#include "tests/jit/jit_test_support.hpp"

namespace kiln::jit {
namespace {

using test::compiler;
using test::host_input;
using test::ScopedEnv;
using test::TempDir;

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ClangResourceDir, DefaultHoldsStddef) {
  ScopedEnv unset("KILN_CLANG_RESOURCE_DIR", nullptr);
  const auto dir = clang_resource_dir();
  EXPECT_TRUE(std::filesystem::exists(dir / "include" / "stddef.h")) << dir;
}

TEST(ClangResourceDir, BogusDirectoryThrowsNamingPathVariableAndPackage) {
  ScopedEnv bogus("KILN_CLANG_RESOURCE_DIR", "/nonexistent/kiln-bogus-resource-dir");
  const std::string message = error_of([] { clang_resource_dir(); });
  ASSERT_FALSE(message.empty()) << "no exception";
  EXPECT_TRUE(contains(message, "/nonexistent/kiln-bogus-resource-dir")) << message;
  EXPECT_TRUE(contains(message, "KILN_CLANG_RESOURCE_DIR")) << message;
  EXPECT_TRUE(contains(message, "clang-19")) << message;
}

TEST(CompilerModulePath, EnvironmentOverrides) {
  ScopedEnv set("KILN_COMPILER_MODULE", "/somewhere/else/libkiln_clang.so");
  EXPECT_EQ(default_compiler_module_path(), std::filesystem::path("/somewhere/else/libkiln_clang.so"));
}

TEST(CompilerModulePath, DefaultExists) {
  ScopedEnv unset("KILN_COMPILER_MODULE", nullptr);
  const auto path = default_compiler_module_path();
  EXPECT_TRUE(std::filesystem::is_regular_file(path)) << path;
  EXPECT_EQ(path.filename(), "libkiln_clang.so");
}

TEST(CompilerModule, MissingModuleThrowsNamingPath) {
  const std::string path = "/nonexistent/kiln/libkiln_clang.so";
  const std::string message = error_of([&] { CompilerModule::load(path, clang_resource_dir()); });
  ASSERT_FALSE(message.empty()) << "no exception";
  EXPECT_TRUE(contains(message, path)) << message;
}

TEST(CompilerModule, LibraryWithoutEntryThrowsNamingPathAndSymbol) {
  const std::string message = error_of([] { CompilerModule::load("libm.so.6", clang_resource_dir()); });
  ASSERT_FALSE(message.empty()) << "no exception";
  EXPECT_TRUE(contains(message, "libm.so.6")) << message;
  EXPECT_TRUE(contains(message, "kiln_compiler_entry")) << message;
}

TEST(CompilerModule, BadResourceDirIsReportedByTheModule) {
  // The module checks the resource dir itself and stays usable afterwards.
  const std::string message =
      error_of([] { CompilerModule::load(default_compiler_module_path(), "/nonexistent/kiln-resource"); });
  ASSERT_FALSE(message.empty()) << "no exception";
  EXPECT_TRUE(contains(message, default_compiler_module_path().string())) << message;
  EXPECT_TRUE(contains(message, "/nonexistent/kiln-resource")) << message;
  EXPECT_TRUE(compiler().compile(host_input("extern \"C\" int kiln_t() { return 1; }\n")).ok);
}

TEST(CompilerModule, IdentityNamesClangAndLlvm) {
  const std::string identity = compiler().identity();
  EXPECT_TRUE(contains(identity, "clang 19")) << identity;
  EXPECT_TRUE(contains(identity, "llvm 19")) << identity;
  EXPECT_TRUE(contains(identity, "-std=c++20")) << identity;
}

TEST(CompilerModule, CompilesToAnElfObject) {
  const CompileOutput output = compiler().compile(host_input(R"(extern "C" int kiln_t() { return 42; })"));
  ASSERT_TRUE(output.ok) << output.diagnostics;
  ASSERT_GE(output.object.size(), 64u);
  EXPECT_EQ(std::string(output.object.data(), 4), "\x7f" "ELF");
  EXPECT_EQ(output.object[4], 2) << "not ELFCLASS64";
  EXPECT_EQ(output.object[16], 1) << "not ET_REL";
}

TEST(CompilerModule, CompileErrorReportsFileNameAndLine) {
  // Lines 1-2 are the runtime's prelude (the request's file name); #line moves
  // the rest into the user's kernel file.
  const std::string source =
      "int prelude_value = undeclared_in_prelude;\n"
      "extern \"C\" int kiln_ok() { return 1; }\n"
      "#line 7 \"user_kernel.kiln\"\n"
      "// user line 7\n"
      "int user_value = undeclared_in_user_code;\n";
  const CompileOutput output = compiler().compile(host_input(source, "kiln_generated_1234.cpp"));
  EXPECT_FALSE(output.ok);
  EXPECT_TRUE(output.object.empty());
  EXPECT_TRUE(contains(output.diagnostics, "kiln_generated_1234.cpp:1:21: error")) << output.diagnostics;
  EXPECT_TRUE(contains(output.diagnostics, "user_kernel.kiln:8:18: error")) << output.diagnostics;
  EXPECT_TRUE(contains(output.diagnostics, "undeclared_in_user_code")) << output.diagnostics;
  EXPECT_TRUE(contains(output.diagnostics, "2 errors generated")) << output.diagnostics;
  EXPECT_FALSE(contains(output.diagnostics, "\x1b[")) << "colour codes in: " << output.diagnostics;
}

TEST(CompilerModule, WarningsComeBackWithASuccessfulCompile) {
  const CompileOutput output =
      compiler().compile(host_input("extern \"C\" int kiln_w(int x) { int unused = 3; return x; }\n", "warn.cpp"));
  ASSERT_TRUE(output.ok) << output.diagnostics;
  EXPECT_FALSE(output.object.empty());
  // cc1 has no -Wall by default: an unused variable is silent. A conversion warning is on by default:
  const CompileOutput narrowing =
      compiler().compile(host_input("extern \"C\" int kiln_w(int x) { return x << 40; }\n", "warn.cpp"));
  ASSERT_TRUE(narrowing.ok) << narrowing.diagnostics;
  EXPECT_TRUE(contains(narrowing.diagnostics, "warn.cpp:1:")) << narrowing.diagnostics;
  EXPECT_TRUE(contains(narrowing.diagnostics, "warning")) << narrowing.diagnostics;
}

TEST(CompilerModule, NoHeadersButBuiltinsWork) {
  // Kernel sources include no headers; the compiler-provided ones stay usable anyway.
  const CompileOutput output = compiler().compile(host_input(
      "#include <stddef.h>\n#include <stdint.h>\n"
      "extern \"C\" size_t kiln_t(const int32_t* p, size_t n) { return n + sizeof(*p); }\n"));
  EXPECT_TRUE(output.ok) << output.diagnostics;
}

TEST(CompilerModule, RejectsUnknownOptLevelAndCpu) {
  auto input = host_input("extern \"C\" int kiln_t() { return 1; }\n");
  input.opt_level = "-O9 -fsomething";
  const CompileOutput bad_level = compiler().compile(input);
  EXPECT_FALSE(bad_level.ok);
  EXPECT_TRUE(contains(bad_level.diagnostics, "-O9")) << bad_level.diagnostics;

  input = host_input("extern \"C\" int kiln_t() { return 1; }\n");
  input.cpu = "no-such-cpu-kiln";
  input.features = "";
  const CompileOutput bad_cpu = compiler().compile(input);
  EXPECT_FALSE(bad_cpu.ok);
  EXPECT_TRUE(contains(bad_cpu.diagnostics, "no-such-cpu-kiln")) << bad_cpu.diagnostics;

  input = host_input("extern \"C\" int kiln_t() { return 1; }\n");
  input.cpu = "";
  EXPECT_FALSE(compiler().compile(input).ok);

  // An unknown feature would be ignored by LLVM (with a note on stderr): the
  // object would not be what the cache key names, so the module refuses it.
  input = host_input("extern \"C\" int kiln_t() { return 1; }\n");
  input.features = "+sse2,+kiln-no-such-feature";
  const CompileOutput bad_feature = compiler().compile(input);
  EXPECT_FALSE(bad_feature.ok);
  EXPECT_TRUE(contains(bad_feature.diagnostics, "+kiln-no-such-feature")) << bad_feature.diagnostics;
  input.features = "avx2";
  EXPECT_FALSE(compiler().compile(input).ok);
}

TEST(CompilerModule, OptLevelsAllCompile) {
  for (const char* level : {"-O0", "-O1", "-O2", "-O3", "-Os", "-Oz"}) {
    auto input = host_input("extern \"C\" int kiln_t(int x) { return x * 3; }\n");
    input.opt_level = level;
    const CompileOutput output = compiler().compile(input);
    EXPECT_TRUE(output.ok) << level << ": " << output.diagnostics;
  }
}

TEST(CompilerModule, SameInputGivesSameObject) {
  const auto input = host_input("extern \"C\" double kiln_t(double x) { return x * x + 1.0; }\n");
  const CompileOutput a = compiler().compile(input);
  const CompileOutput b = compiler().compile(input);
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_EQ(a.object, b.object);
}

TEST(CompilerModule, TwoThreadsCompileAtOnce) {
  auto loader = ObjectLoader::create();
  CompileOutput outputs[2];
  std::thread threads[2];
  for (int t = 0; t < 2; ++t) {
    threads[t] = std::thread([t, &outputs] {
      std::string source = "extern \"C\" long kiln_thread(const long* a, long n) {\n"
                           "  long s = 0;\n  for (long i = 0; i < n; ++i) s += a[i] * " +
                           std::to_string(t + 2) + ";\n  return s;\n}\n";
      for (int round = 0; round < 3; ++round) outputs[t] = compiler().compile(host_input(source));
    });
  }
  for (auto& thread : threads) thread.join();
  const std::vector<long> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  for (int t = 0; t < 2; ++t) {
    ASSERT_TRUE(outputs[t].ok) << outputs[t].diagnostics;
    auto fn = test::load_function<long (*)(const long*, long)>(*loader, outputs[t].object, "kiln_thread");
    EXPECT_EQ(fn(a.data(), 10), 55 * (t + 2));
  }
}

TEST(CompilerModule, HostCpuObjectDiffersFromGenericX86) {
  // The request's CPU and features reach the code generator: with AVX2 the
  // vectorised loop uses other instructions than with baseline x86-64.
  if (!contains(host_target().features, "+avx2")) GTEST_SKIP() << "host has no AVX2";
  const std::string source =
      "extern \"C\" void kiln_axpy(double* __restrict y, const double* __restrict x, double a, long n) {\n"
      "  for (long i = 0; i < n; ++i) y[i] += a * x[i];\n}\n";
  const CompileOutput host = compiler().compile(host_input(source));
  auto generic_input = host_input(source);
  generic_input.cpu = "x86-64";
  generic_input.features = "";
  const CompileOutput generic = compiler().compile(generic_input);
  ASSERT_TRUE(host.ok) << host.diagnostics;
  ASSERT_TRUE(generic.ok) << generic.diagnostics;
  EXPECT_NE(host.object, generic.object);
  // And both compute the same thing (a*x is exact here, so FMA or not gives the same bits).
  auto loader = ObjectLoader::create();
  using Fn = void (*)(double*, const double*, double, long);
  auto fh = test::load_function<Fn>(*loader, host.object, "kiln_axpy");
  auto fg = test::load_function<Fn>(*loader, generic.object, "kiln_axpy");
  std::vector<double> x(37), y1(37, 1.0), y2(37, 1.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5 * static_cast<double>(i);
  fh(y1.data(), x.data(), 3.0, 37);
  fg(y2.data(), x.data(), 3.0, 37);
  EXPECT_EQ(y1, y2);
}

// The bytes of `path`, and the same written back.
std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A copy of the module whose build ID differs in one byte: what a rebuilt
// module looks like to the fingerprint.
std::string with_other_build_id(const std::string& module, const std::string& id_hex) {
  std::string id;
  for (std::size_t i = 0; i + 1 < id_hex.size(); i += 2) id += static_cast<char>(std::stoi(id_hex.substr(i, 2), nullptr, 16));
  std::string bytes = module;
  const std::size_t at = bytes.find(id);
  EXPECT_NE(at, std::string::npos);
  EXPECT_EQ(bytes.find(id, at + 1), std::string::npos);  // one place only
  bytes[at] = static_cast<char>(bytes[at] ^ 0x5a);
  return bytes;
}

TEST(CompilerModuleFingerprint, FollowsTheModulesBuildId) {
  TempDir dir;
  const auto copy = dir.path() / "libkiln_clang.so";
  std::filesystem::copy_file(default_compiler_module_path(), copy);
  const std::optional<std::string> id = elf_build_id(copy);
  ASSERT_TRUE(id.has_value()) << "the module is linked with a build ID";
  const std::string before = compiler_module_fingerprint(copy);
  EXPECT_EQ(before.rfind("llvm-19.", 0), 0u) << before;
  EXPECT_TRUE(contains(before, ";module-id-" + *id)) << before;
  EXPECT_TRUE(contains(before, ";libLLVM")) << before;
  EXPECT_TRUE(contains(before, ";libclang-cpp")) << before;
  EXPECT_EQ(compiler_module_fingerprint(copy), before);  // cached, same answer
  EXPECT_EQ(compiler_module_fingerprint(default_compiler_module_path()), before);  // same module, other path

  write_bytes(copy, with_other_build_id(file_bytes(copy), *id));
  const std::string after = compiler_module_fingerprint(copy);
  EXPECT_NE(after, before);
  EXPECT_EQ(after.substr(0, after.find(';')), before.substr(0, before.find(';')));
}

TEST(CompilerModuleFingerprint, ModuleWithoutBuildIdIsHashed) {
  TempDir dir;
  const auto copy = dir.path() / "libkiln_clang.so";
  const std::string command = "objcopy --remove-section=.note.gnu.build-id '" +
                              default_compiler_module_path().string() + "' '" + copy.string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  ASSERT_FALSE(elf_build_id(copy).has_value());
  const std::string before = compiler_module_fingerprint(copy);
  EXPECT_TRUE(contains(before, ";module-xxh3-")) << before;
  {
    std::ofstream out(copy, std::ios::binary | std::ios::app);
    out.put('\0');
  }
  EXPECT_NE(compiler_module_fingerprint(copy), before);
}

TEST(CompilerModuleFingerprint, UnreadableModuleThrowsNamingPath) {
  const std::string message = error_of([] { compiler_module_fingerprint("/nonexistent/kiln/libkiln_clang.so"); });
  EXPECT_TRUE(contains(message, "/nonexistent/kiln/libkiln_clang.so")) << message;
}

}  // namespace
}  // namespace kiln::jit
