// libkiln holds a static, hidden LLVM (ORC's linker); the compiler module brings
// the shared libLLVM behind RTLD_LOCAL. Both copies must work in one process,
// whichever is set up first, and neither may see the other's symbols.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/jit/jit_test_support.hpp"

namespace kiln::jit {
namespace {

constexpr const char* kProbeEntry = "kiln_jit_probe_run";

long sum_kernel_through(const CompilerModule& module, ObjectLoader& loader) {
  CompileInput input = test::host_input(
      "extern \"C\" long kiln_sum(const long* a, long n) {\n"
      "  long s = 0;\n  for (long i = 0; i < n; ++i) s += a[i] * a[i];\n  return s;\n}\n");
  CompileOutput output = module.compile(input);
  EXPECT_TRUE(output.ok) << output.diagnostics;
  if (!output.ok) return -1;
  auto fn = test::load_function<long (*)(const long*, long)>(loader, output.object, "kiln_sum");
  const std::vector<long> a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  return fn(a.data(), static_cast<long>(a.size()));
}

TEST(TwoLlvmCopies, StaticLoaderFirstThenCompilerModule) {
  auto loader = ObjectLoader::create();
  ASSERT_FALSE(host_target().cpu.empty());
  auto module = CompilerModule::load(default_compiler_module_path(), clang_resource_dir());
  EXPECT_EQ(sum_kernel_through(*module, *loader), 285);
  // A loader created after the module is loaded works as well.
  auto second_loader = ObjectLoader::create();
  EXPECT_EQ(sum_kernel_through(*module, *second_loader), 285);
  // Reloading the module (dlopen refcount, one-time setup) changes nothing.
  auto again = CompilerModule::load(default_compiler_module_path(), clang_resource_dir());
  EXPECT_EQ(sum_kernel_through(*again, *loader), 285);
}

TEST(TwoLlvmCopies, CompilerModuleFirstThenStaticLoader) {
  auto module = CompilerModule::load(default_compiler_module_path(), clang_resource_dir());
  auto loader = ObjectLoader::create();
  EXPECT_EQ(sum_kernel_through(*module, *loader), 285);
}

TEST(TwoLlvmCopies, ModuleKeepsLlvmOutOfTheGlobalScope) {
  auto module = CompilerModule::load(default_compiler_module_path(), clang_resource_dir());
  // RTLD_LOCAL: neither the module's entry nor the shared libLLVM it pulled in
  // are visible to a global lookup.
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "kiln_compiler_entry"), nullptr);
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "LLVMGetVersion"), nullptr);
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "_ZN4llvm2cl6Option11addArgumentEv"), nullptr);
}

TEST(TwoLlvmCopies, SharedLibraryLinkedLikeLibkiln) {
  // kiln_jit linked into a shared library with --exclude-libs,ALL (as libkiln
  // is): the static LLVM inside stays hidden and the whole cold path works
  // next to the module's shared LLVM (and this executable's own static copy).
  void* probe = dlopen(KILN_JIT_PROBE_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(probe, nullptr) << dlerror();
  EXPECT_EQ(dlsym(probe, "_ZN4llvm2cl6Option11addArgumentEv"), nullptr) << "static LLVM leaks from the library";
  EXPECT_EQ(dlsym(probe, "_ZN4llvm3orc16ExecutionSession10endSessionEv"), nullptr);
  auto run = reinterpret_cast<long (*)(char*, std::size_t)>(dlsym(probe, kProbeEntry));
  ASSERT_NE(run, nullptr) << dlerror();
  char message[4096] = {};
  EXPECT_EQ(run(message, sizeof message), 66) << message;
  // And the executable's own copy still works afterwards.
  auto loader = ObjectLoader::create();
  EXPECT_EQ(sum_kernel_through(test::compiler(), *loader), 285);
  dlclose(probe);
}

TEST(CompilerModulePath, InstalledLayoutIsFoundBesideTheLibrary) {
  // <libdir>/libkiln.so finds <libdir>/kiln/libkiln_clang.so: a copy of the
  // probe library (linked like libkiln) next to a copy of the module.
  test::ScopedEnv unset("KILN_COMPILER_MODULE", nullptr);
  test::TempDir dir;
  const auto libdir = dir.path() / "lib";
  std::filesystem::create_directories(libdir / "kiln");
  std::filesystem::copy_file(KILN_JIT_PROBE_PATH, libdir / "libkiln_probe_copy.so");
  std::filesystem::copy_file(default_compiler_module_path(), libdir / "kiln" / "libkiln_clang.so");
  void* probe = dlopen((libdir / "libkiln_probe_copy.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(probe, nullptr) << dlerror();
  auto module_path = reinterpret_cast<void (*)(char*, std::size_t)>(dlsym(probe, "kiln_jit_probe_module_path"));
  ASSERT_NE(module_path, nullptr) << dlerror();
  char path[4096] = {};
  module_path(path, sizeof path);
  EXPECT_EQ(std::filesystem::path(path), libdir / "kiln" / "libkiln_clang.so");
  // Without the module beside it, the build tree's is used.
  std::filesystem::remove(libdir / "kiln" / "libkiln_clang.so");
  module_path(path, sizeof path);
  EXPECT_EQ(std::filesystem::path(path), default_compiler_module_path());
  dlclose(probe);
}

}  // namespace
}  // namespace kiln::jit
