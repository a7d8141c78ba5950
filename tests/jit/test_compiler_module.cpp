#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
#include "jit/host_target.hpp"
#include "jit/shared_object_loader.hpp"
#include "tests/jit/jit_test_support.hpp"
#include "tests/trust/trust_test_support.hpp"

namespace kiln::jit {
namespace {

using test::compiler;
using test::host_input;
using test::LoadedObjects;
using test::ScopedEnv;
using test::TempDir;

using test::contains;
using test::failure_of;
using test::value_of;

// What the dynamic loader reads of a 64-bit little-endian ELF shared object.
struct SharedObjectInfo {
  std::string error;  // empty: parsed
  std::uint16_t type = 0;
  std::uint16_t machine = 0;
  bool has_dynamic = false;
  bool has_interp = false;
  bool has_relro = false;
  int loads = 0;                  // PT_LOAD segments
  bool writable_load = false;     // one of them is writable
  bool readonly_dynamic = false;  // PT_DYNAMIC lies in a read-only PT_LOAD
  bool executable_stack = true;  // no PT_GNU_STACK: the loader assumes an executable stack
  std::uint64_t dt_flags = 0;
  std::uint64_t dt_flags_1 = 0;
  std::vector<std::string> needed;
};

SharedObjectInfo describe(const std::vector<char>& bytes) {
  SharedObjectInfo info;
  auto fail = [&](const std::string& why) {
    info.error = why;
    return info;
  };
  auto fits = [&](std::uint64_t offset, std::uint64_t size) {
    return offset <= bytes.size() && size <= bytes.size() - offset;
  };
  Elf64_Ehdr header{};
  if (!fits(0, sizeof header)) return fail("shorter than an ELF header");
  std::memcpy(&header, bytes.data(), sizeof header);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return fail("no ELF magic");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB) return fail("not ELF64 LE");
  info.type = header.e_type;
  info.machine = header.e_machine;
  if (header.e_phentsize != sizeof(Elf64_Phdr)) return fail("odd program header size");
  std::vector<Elf64_Phdr> segments(header.e_phnum);
  if (!fits(header.e_phoff, segments.size() * sizeof(Elf64_Phdr))) return fail("program headers past the end");
  std::memcpy(segments.data(), bytes.data() + header.e_phoff, segments.size() * sizeof(Elf64_Phdr));
  const Elf64_Phdr* dynamic = nullptr;
  for (const Elf64_Phdr& segment : segments) {
    switch (segment.p_type) {
      case PT_DYNAMIC: dynamic = &segment; info.has_dynamic = true; break;
      case PT_INTERP: info.has_interp = true; break;
      case PT_GNU_RELRO: info.has_relro = true; break;
      case PT_GNU_STACK: info.executable_stack = (segment.p_flags & PF_X) != 0; break;
      default: break;
    }
  }
  for (const Elf64_Phdr& segment : segments) {
    if (segment.p_type != PT_LOAD) continue;
    ++info.loads;
    info.writable_load |= (segment.p_flags & PF_W) != 0;
    if (dynamic != nullptr && dynamic->p_vaddr >= segment.p_vaddr &&
        dynamic->p_vaddr - segment.p_vaddr < segment.p_memsz && (segment.p_flags & PF_W) == 0)
      info.readonly_dynamic = true;
  }
  if (dynamic == nullptr) return info;
  if (!fits(dynamic->p_offset, dynamic->p_filesz)) return fail("dynamic segment past the end");
  // The string table is named by its address: find the file offset through the PT_LOADs.
  auto offset_of = [&](std::uint64_t address) -> std::optional<std::uint64_t> {
    for (const Elf64_Phdr& segment : segments) {
      if (segment.p_type == PT_LOAD && address >= segment.p_vaddr && address - segment.p_vaddr < segment.p_filesz) {
        return address - segment.p_vaddr + segment.p_offset;
      }
    }
    return std::nullopt;
  };
  std::uint64_t strtab = 0;
  std::vector<std::uint64_t> needed;
  for (std::uint64_t at = dynamic->p_offset; at + sizeof(Elf64_Dyn) <= dynamic->p_offset + dynamic->p_filesz;
       at += sizeof(Elf64_Dyn)) {
    Elf64_Dyn entry{};
    std::memcpy(&entry, bytes.data() + at, sizeof entry);
    if (entry.d_tag == DT_NULL) break;
    if (entry.d_tag == DT_NEEDED) needed.push_back(entry.d_un.d_val);
    if (entry.d_tag == DT_STRTAB) strtab = entry.d_un.d_ptr;
    if (entry.d_tag == DT_FLAGS) info.dt_flags = entry.d_un.d_val;
    if (entry.d_tag == DT_FLAGS_1) info.dt_flags_1 = entry.d_un.d_val;
  }
  if (needed.empty()) return info;
  const std::optional<std::uint64_t> strings = offset_of(strtab);
  if (!strings) return fail("DT_STRTAB outside the loaded segments");
  for (const std::uint64_t name : needed) {
    if (!fits(*strings + name, 1)) return fail("DT_NEEDED name past the end");
    const char* begin = bytes.data() + *strings + name;
    info.needed.emplace_back(begin, strnlen(begin, bytes.size() - (*strings + name)));
  }
  return info;
}

TEST(ClangResourceDir, DefaultHoldsStddef) {
  ScopedEnv unset("KILN_CLANG_RESOURCE_DIR", nullptr);
  const auto dir = value_of(clang_resource_dir());
  EXPECT_TRUE(std::filesystem::exists(dir / "include" / "stddef.h")) << dir;
}

TEST(ClangResourceDir, BogusDirectoryFailsNamingPathVariableAndPackage) {
  ScopedEnv bogus("KILN_CLANG_RESOURCE_DIR", "/nonexistent/kiln-bogus-resource-dir");
  const std::string message = failure_of(clang_resource_dir());
  ASSERT_FALSE(message.empty()) << "no failure";
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

TEST(CompilerModule, MissingModuleFailsNamingPathAndDlopensReason) {
  const std::string path = "/nonexistent/kiln/libkiln_clang.so";
  const std::string message = failure_of(CompilerModule::load(path, value_of(clang_resource_dir())));
  // The prefix compiler_unavailable_cause() finds dlopen's words after.
  EXPECT_EQ(message.rfind("kiln: cannot load compiler module '" + path + "': ", 0), 0u) << message;
  EXPECT_TRUE(contains(message, "No such file or directory")) << message;
}

TEST(CompilerModule, LibraryWithoutEntryFailsNamingPathAndSymbol) {
  const std::string message = failure_of(CompilerModule::load("libm.so.6", value_of(clang_resource_dir())));
  ASSERT_FALSE(message.empty()) << "no failure";
  EXPECT_TRUE(contains(message, "libm.so.6")) << message;
  EXPECT_TRUE(contains(message, "kiln_compiler_entry")) << message;
}

TEST(CompilerModule, BadResourceDirIsReportedByTheModule) {
  // The module checks the resource dir itself and stays usable afterwards.
  const std::string message =
      failure_of(CompilerModule::load(default_compiler_module_path(), "/nonexistent/kiln-resource"));
  ASSERT_FALSE(message.empty()) << "no failure";
  EXPECT_TRUE(contains(message, default_compiler_module_path().string())) << message;
  EXPECT_TRUE(contains(message, "/nonexistent/kiln-resource")) << message;
  EXPECT_TRUE(compiler().compile(host_input("extern \"C\" int kiln_t() { return 1; }\n")).ok);
}

TEST(CompilerModule, IdentityNamesClangLlvmAndLld) {
  const std::string identity = compiler().identity();
  EXPECT_TRUE(contains(identity, "clang 19")) << identity;
  EXPECT_TRUE(contains(identity, "llvm 19")) << identity;
  EXPECT_TRUE(contains(identity, "-std=c++20")) << identity;
  // The linker and its flags decide the binary too.
  EXPECT_TRUE(contains(identity, "lld 19")) << identity;
  EXPECT_TRUE(contains(identity, "-z defs")) << identity;
#if defined(__x86_64__)
  // So do the LLVM options (jit/compiler/llvm_options.hpp).
  EXPECT_TRUE(contains(identity, "-mllvm -disable-lsr")) << identity;
#endif
}

// kiln's LLVM options (jit/compiler/llvm_options.hpp) are process-wide and
// lld resets them at every link: a kernel compiled again after other links
// must come out byte for byte the same (this one's loop is what loop strength
// reduction, left out on x86-64, rewrites).
TEST(CompilerModule, CompilingAgainAfterOtherLinksGivesTheSameBytes) {
  const std::string stencil = R"(
extern "C" void kiln_t(const double* in, double* out, long nx, long ny) {
  for (long y = 1; y < ny - 1; ++y)
    for (long x = 1; x < nx - 1; ++x)
      out[y * nx + x] = 0.4 * in[y * nx + x] +
                        0.1 * (in[y * nx + x - 1] + in[y * nx + x + 1] + in[(y - 1) * nx + x] + in[(y + 1) * nx + x]);
}
)";
  const CompileOutput first = compiler().compile(host_input(stencil));
  ASSERT_TRUE(first.ok) << first.diagnostics;
  for (int i = 0; i < 2; ++i)
    ASSERT_TRUE(compiler().compile(host_input("extern \"C\" int kiln_t() { return " + std::to_string(i) + "; }\n")).ok);
  const CompileOutput again = compiler().compile(host_input(stencil));
  ASSERT_TRUE(again.ok) << again.diagnostics;
  EXPECT_TRUE(first.binary == again.binary) << first.binary.size() << " bytes, then " << again.binary.size();
}

TEST(CompilerModule, CompilesToAnElfSharedObject) {
  const CompileOutput output = compiler().compile(host_input(R"(extern "C" int kiln_t() { return 42; })"));
  ASSERT_TRUE(output.ok) << output.diagnostics;
  const SharedObjectInfo info = describe(output.binary);
  ASSERT_EQ(info.error, "");
  EXPECT_EQ(info.type, ET_DYN);
#if defined(__x86_64__)
  EXPECT_EQ(info.machine, EM_X86_64);
#endif
  EXPECT_TRUE(info.has_dynamic) << "no PT_DYNAMIC";
  EXPECT_FALSE(info.has_interp) << "a shared object, not an executable";
  // -z now, -z noexecstack; -z norelro: it calls nothing, so it has no GOT to protect.
  EXPECT_FALSE(info.has_relro) << "PT_GNU_RELRO in an object without a GOT";
  // -z rodynamic where glibc reads it: one read-only executable segment, so a
  // warm load is one mmap (jit/elf_image.cpp).
  if (test::glibc_reads_readonly_dynamic()) {
    EXPECT_EQ(info.loads, 1);
    EXPECT_FALSE(info.writable_load);
    EXPECT_TRUE(info.readonly_dynamic);
  } else {
    EXPECT_TRUE(info.writable_load) << "the dynamic section, writable for the loader";
  }
  EXPECT_TRUE((info.dt_flags & DF_BIND_NOW) != 0 || (info.dt_flags_1 & DF_1_NOW) != 0) << "not bound at load";
  EXPECT_FALSE(info.executable_stack);
  for (const std::string& library : info.needed) {
    EXPECT_TRUE(library == "libm.so.6" || library == "libc.so.6") << "needs " << library;
  }
}

TEST(CompilerModule, NeedsOnlyTheLibrariesTheKernelCalls) {
  // --as-needed: a kernel that calls nothing needs nothing; pow needs libm.
  const CompileOutput plain =
      compiler().compile(host_input("extern \"C\" long kiln_t(long x) { return x * 7; }\n"));
  ASSERT_TRUE(plain.ok) << plain.diagnostics;
  const SharedObjectInfo plain_info = describe(plain.binary);
  ASSERT_EQ(plain_info.error, "");
  EXPECT_TRUE(plain_info.needed.empty()) << "needs " << plain_info.needed.front();

  const CompileOutput math = compiler().compile(
      host_input("extern \"C\" double kiln_t(double x, double y) { return __builtin_pow(x, y); }\n"));
  ASSERT_TRUE(math.ok) << math.diagnostics;
  const SharedObjectInfo math_info = describe(math.binary);
  ASSERT_EQ(math_info.error, "");
  EXPECT_EQ(math_info.needed, std::vector<std::string>{"libm.so.6"});
  EXPECT_TRUE(math_info.has_relro) << "-z relro: its GOT is read-only once bound";
  EXPECT_FALSE(math_info.readonly_dynamic) << "the dynamic loader relocates it: no -z rodynamic";
}

TEST(CompilerModule, UndefinedFunctionFailsToCompileNamingIt) {
  // -z defs: a symbol nothing defines is a link error now, not a load error later.
  const CompileOutput output = compiler().compile(host_input(R"(
extern "C" double kiln_no_such_function_anywhere(double);
extern "C" double kiln_calls_missing(double x) { return kiln_no_such_function_anywhere(x) + 1.0; }
)"));
  EXPECT_FALSE(output.ok);
  EXPECT_TRUE(output.binary.empty());
  EXPECT_TRUE(contains(output.diagnostics, "undefined symbol: kiln_no_such_function_anywhere")) << output.diagnostics;

  const CompileOutput variable = compiler().compile(host_input(R"(
extern "C" long kiln_no_such_variable_anywhere;
extern "C" long kiln_reads_missing() { return kiln_no_such_variable_anywhere; }
)"));
  EXPECT_FALSE(variable.ok);
  EXPECT_TRUE(contains(variable.diagnostics, "undefined symbol: kiln_no_such_variable_anywhere")) << variable.diagnostics;

  // lld runs again after a failed link.
  const CompileOutput after = compiler().compile(host_input("extern \"C\" int kiln_t() { return 5; }\n"));
  ASSERT_TRUE(after.ok) << after.diagnostics;
  LoadedObjects objects;
  EXPECT_EQ(objects.function<int (*)()>(after.binary, "kiln_t")(), 5);
}

// Another symbol of an object loaded already (LoadedObjects::function loads a new copy).
template <typename Fn>
Fn symbol_in(const LoadedObject& loaded, const char* name) {
  void* address = ::dlsym(loaded.handle, name);
  EXPECT_NE(address, nullptr) << name << ": " << ::dlerror();
  return reinterpret_cast<Fn>(address);
}

// --- how lld links a kernel: -Bsymbolic, no static lifetimes, libstdc++ as needed

TEST(CompilerModule, KernelsOwnFunctionsAndGlobalsBindWithinTheKernel) {
  // A kernel that defines names the process's libraries define too. Without
  // -Bsymbolic its own calls and reads would go through the PLT and GOT to
  // whatever the process's global scope has first: libm's cbrt (2 for 8) and
  // libc's optind (1), not the kernel's.
  void* libm = ::dlopen("libm.so.6", RTLD_NOW | RTLD_GLOBAL);  // in the global scope, whatever this test links
  ASSERT_NE(libm, nullptr) << ::dlerror();
  auto process_cbrt = reinterpret_cast<double (*)(double)>(::dlsym(RTLD_DEFAULT, "cbrt"));
  auto* process_optind = static_cast<int*>(::dlsym(RTLD_DEFAULT, "optind"));
  ASSERT_NE(process_cbrt, nullptr);
  ASSERT_NE(process_optind, nullptr);
  EXPECT_DOUBLE_EQ(process_cbrt(8.0), 2.0);
  const int optind_before = *process_optind;

  const CompileOutput output = compiler().compile(host_input(R"(
extern "C" __attribute__((noinline)) double cbrt(double x) { return x + 100.0; }
extern "C" int optind = 5;
extern "C" double kiln_call_cbrt(double x) { return cbrt(x); }
extern "C" int kiln_read_optind() { return optind; }
extern "C" void kiln_write_optind(int value) { optind = value; }
)"));
  ASSERT_TRUE(output.ok) << output.diagnostics;
  {
    LoadedObjects objects;
    const LoadedObject kernel = objects.load(output.binary, "kiln_call_cbrt");
    auto call_cbrt = reinterpret_cast<double (*)(double)>(kernel.address);
    auto read_optind = symbol_in<int (*)()>(kernel, "kiln_read_optind");
    auto write_optind = symbol_in<void (*)(int)>(kernel, "kiln_write_optind");
    ASSERT_NE(read_optind, nullptr);
    ASSERT_NE(write_optind, nullptr);
    EXPECT_DOUBLE_EQ(call_cbrt(8.0), 108.0) << "the kernel's call to its own cbrt went to libm's";
    EXPECT_EQ(read_optind(), 5) << "the kernel read libc's optind instead of its own";
    write_optind(42);
    EXPECT_EQ(read_optind(), 42);
    // The kernel's names stay out of the process (RTLD_LOCAL): libm's cbrt
    // and libc's optind are unchanged for everyone else.
    EXPECT_EQ(*process_optind, optind_before);
    EXPECT_EQ(reinterpret_cast<double (*)(double)>(::dlsym(RTLD_DEFAULT, "cbrt")), process_cbrt);
    EXPECT_DOUBLE_EQ(process_cbrt(8.0), 2.0);
    // Asked for by name, the kernel's handle gives its own definitions.
    auto kernel_cbrt = symbol_in<double (*)(double)>(kernel, "cbrt");
    ASSERT_NE(kernel_cbrt, nullptr);
    EXPECT_NE(kernel_cbrt, process_cbrt);
    EXPECT_DOUBLE_EQ(kernel_cbrt(1.0), 101.0);
  }
  ::dlclose(libm);
  // The flag is part of the compiler's identity, so it is part of every cache key.
  EXPECT_TRUE(contains(compiler().identity(), "-Bsymbolic")) << compiler().identity();
}

TEST(CompilerModule, StaticConstructorsDestructorsAndExitHandlersFailToCompile) {
  // Nothing runs a kernel's static destructors before it is unloaded (no C
  // runtime start and end files), so the module refuses kernels that need them.
  struct Case {
    const char* what;
    const char* source;
    const char* message;
  };
  const Case cases[] = {
      {"namespace-scope object with a constructor and a destructor", R"(
volatile int kiln_seed = 3;
struct Counter { int value; Counter() : value(kiln_seed * 2) {} ~Counter() { kiln_seed = value; } };
Counter kiln_counter;
extern "C" int kiln_t() { return kiln_counter.value; }
)",
       "kiln: the kernel has static constructors or destructors (section .init_array)"},
      {"namespace-scope object with a constructor only", R"(
volatile int kiln_seed = 3;
struct Doubled { int value; Doubled() : value(kiln_seed * 2) {} };
Doubled kiln_doubled;
extern "C" int kiln_t() { return kiln_doubled.value; }
)",
       "kiln: the kernel has static constructors or destructors (section .init_array)"},
      {"constructor attribute", R"(
volatile int kiln_seed = 3;
__attribute__((constructor)) static void kiln_setup() { kiln_seed = 4; }
extern "C" int kiln_t() { return kiln_seed; }
)",
       "kiln: the kernel has static constructors or destructors (section .init_array)"},
      {"destructor attribute", R"(
volatile int kiln_seed = 3;
__attribute__((destructor)) static void kiln_teardown() { kiln_seed = 0; }
extern "C" int kiln_t() { return kiln_seed; }
)",
       "kiln: the kernel has static constructors or destructors (section .fini_array)"},
      {"function-local static with a destructor", R"(
volatile int kiln_seed = 3;
struct Closer { int value; explicit Closer(int v) : value(v) {} ~Closer() { kiln_seed = value; } };
extern "C" int kiln_t(int x) { static Closer closer(x); return closer.value; }
)",
       "kiln: the kernel registers an exit handler (__cxa_atexit: a static object with a destructor)"},
      {"function-local static with a destructor and a constant initializer", R"(
volatile int kiln_seed = 3;
struct Closer { int value; constexpr explicit Closer(int v) : value(v) {} ~Closer() { kiln_seed = value; } };
extern "C" int kiln_t() { static Closer closer(9); return closer.value; }
)",
       "kiln: the kernel registers an exit handler (__cxa_atexit: a static object with a destructor)"},
      {"thread_local with a destructor", R"(
volatile int kiln_seed = 3;
struct Closer { int value; explicit Closer(int v) : value(v) {} ~Closer() { kiln_seed = value; } };
extern "C" int kiln_t(int x) { thread_local Closer closer(x); return closer.value; }
)",
       "kiln: the kernel registers an exit handler (__cxa_thread_atexit: a static object with a destructor)"},
      {"a call to atexit", R"(
extern "C" int atexit(void (*)());
volatile int kiln_seed = 3;
static void kiln_bye() { kiln_seed = 0; }
extern "C" int kiln_t() { return atexit(kiln_bye); }
)",
       "kiln: the kernel registers an exit handler (atexit: a static object with a destructor)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const CompileOutput output = compiler().compile(host_input(c.source));
    EXPECT_FALSE(output.ok);
    EXPECT_TRUE(output.binary.empty());
    EXPECT_TRUE(contains(output.diagnostics, c.message)) << output.diagnostics;
    EXPECT_TRUE(contains(output.diagnostics, "kernels may not have objects with static storage")) << output.diagnostics;
  }

  // Static storage that needs neither still compiles and runs: a plain kernel,
  // a namespace-scope object with a constexpr constructor and a trivial
  // destructor, a function-local static with a constant initializer.
  const CompileOutput plain = compiler().compile(host_input("extern \"C\" int kiln_t(int x) { return x + 1; }\n"));
  ASSERT_TRUE(plain.ok) << plain.diagnostics;
  const CompileOutput constant = compiler().compile(host_input(R"(
struct Pair { int a, b; constexpr Pair(int x, int y) : a(x), b(y) {} };
Pair kiln_pair(4, 6);
extern "C" int kiln_t(int x) { static int calls = 0; return kiln_pair.a * kiln_pair.b + x + ++calls; }
)"));
  ASSERT_TRUE(constant.ok) << constant.diagnostics;
  LoadedObjects objects;
  EXPECT_EQ(objects.function<int (*)(int)>(plain.binary, "kiln_t")(41), 42);
  auto fn = objects.function<int (*)(int)>(constant.binary, "kiln_t");
  EXPECT_EQ(fn(10), 24 + 10 + 1);
  EXPECT_EQ(fn(10), 24 + 10 + 2);
}

TEST(CompilerModule, FunctionLocalStaticWithDynamicInitializerLinksAgainstLibstdcxx) {
  // A dynamic initializer needs the C++ ABI's guard functions (thread-safe
  // one-time initialization), from libstdc++; its destructor is trivial, so
  // no exit handler.
  const CompileOutput output = compiler().compile(host_input(R"(
volatile long kiln_spin = 0;
static int kiln_initializations = 0;
extern "C" __attribute__((noinline)) int kiln_initial(int x) {
  ++kiln_initializations;
  for (long i = 0; i < 100000; ++i) kiln_spin = kiln_spin + i;  // a slow initializer invites a race
  return x * 7;
}
extern "C" int kiln_first(int x) { static int first = kiln_initial(x); return first; }
extern "C" int kiln_initializations_made() { return kiln_initializations; }
)"));
  ASSERT_TRUE(output.ok) << output.diagnostics;
  const SharedObjectInfo info = describe(output.binary);
  ASSERT_EQ(info.error, "");
  EXPECT_EQ(info.needed, std::vector<std::string>{"libstdc++.so.6"});

  LoadedObjects objects;
  const LoadedObject one = objects.load(output.binary, "kiln_first");
  auto first = reinterpret_cast<int (*)(int)>(one.address);
  auto made = symbol_in<int (*)()>(one, "kiln_initializations_made");
  ASSERT_NE(made, nullptr);
  EXPECT_EQ(made(), 0);
  EXPECT_EQ(first(3), 21);
  EXPECT_EQ(first(5), 21) << "initialized again";
  EXPECT_EQ(made(), 1);

  // A fresh copy, first called from several threads at once: one initializes,
  // the others wait for it and see its value.
  const LoadedObject two = objects.load(output.binary, "kiln_first");
  auto racing = reinterpret_cast<int (*)(int)>(two.address);
  auto racing_made = symbol_in<int (*)()>(two, "kiln_initializations_made");
  ASSERT_NE(racing_made, nullptr);
  EXPECT_EQ(racing_made(), 0);
  ASSERT_NE(reinterpret_cast<void*>(racing), reinterpret_cast<void*>(first));
  constexpr int kThreads = 4;
  std::atomic<int> ready{0};
  int seen[kThreads] = {};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      seen[t] = racing(t + 1);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(racing_made(), 1);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(seen[t], seen[0]) << t;
    EXPECT_EQ(seen[t] % 7, 0) << t;
    EXPECT_GE(seen[t], 7) << t;
    EXPECT_LE(seen[t], 7 * kThreads) << t;
  }
  EXPECT_EQ(first(9), 21) << "the first copy's static changed";
}

TEST(CompilerModule, KernelsWithoutGuardedStaticsDoNotNeedLibstdcxx) {
  const char* sources[] = {
      "extern \"C\" long kiln_t(long x) { return x * 7; }\n",
      "extern \"C\" double kiln_t(double x, double y) { return __builtin_pow(x, y); }\n",
      "extern \"C\" int kiln_t() { static int calls = 0; return ++calls; }\n",
      "extern \"C\" int kiln_t(int x) { static const int table[] = {1, 2, 3}; return table[x % 3]; }\n",
  };
  for (const char* source : sources) {
    SCOPED_TRACE(source);
    const CompileOutput output = compiler().compile(host_input(source));
    ASSERT_TRUE(output.ok) << output.diagnostics;
    const SharedObjectInfo info = describe(output.binary);
    ASSERT_EQ(info.error, "");
    for (const std::string& library : info.needed) EXPECT_NE(library, "libstdc++.so.6");
  }
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
  EXPECT_TRUE(output.binary.empty());
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
  EXPECT_FALSE(output.binary.empty());
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

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

TEST(CompilerModule, HostCpuAndFeaturesAsLlvmSeesThem) {
  const std::string cpu = compiler().host_cpu();
  EXPECT_FALSE(cpu.empty());
  EXPECT_NE(cpu, "generic");
  EXPECT_EQ(cpu.find_first_of(" ,"), std::string::npos) << cpu;
  EXPECT_EQ(compiler().host_cpu(), cpu);
  const std::string joined = compiler().host_features();
  EXPECT_EQ(compiler().host_features(), joined) << "the same host always gives the same string";
  const auto features = split(joined);
  ASSERT_FALSE(features.empty());
  for (const auto& feature : features) {
    ASSERT_GE(feature.size(), 2u) << joined;
    EXPECT_TRUE(feature[0] == '+' || feature[0] == '-') << feature;
  }
  EXPECT_TRUE(std::is_sorted(features.begin(), features.end(),
                             [](const std::string& a, const std::string& b) { return a.substr(1) < b.substr(1); }))
      << joined;
#if defined(__x86_64__)
  // Every x86-64 CPU has SSE2: a list without it was not read right.
  EXPECT_NE(std::find(features.begin(), features.end(), "+sse2"), features.end()) << joined;
#endif
}

TEST(CompilerModule, EmptyCpuMeansTheHost) {
  const std::string source =
      "extern \"C\" void kiln_axpy(double* __restrict y, const double* __restrict x, double a, long n) {\n"
      "  for (long i = 0; i < n; ++i) y[i] += a * x[i];\n}\n";
  const CompileOutput implicit = compiler().compile(host_input(source));
  auto explicit_input = host_input(source);
  explicit_input.cpu = compiler().host_cpu();
  explicit_input.features = compiler().host_features();
  const CompileOutput explicit_host = compiler().compile(explicit_input);
  ASSERT_TRUE(implicit.ok) << implicit.diagnostics;
  ASSERT_TRUE(explicit_host.ok) << explicit_host.diagnostics;
  EXPECT_EQ(implicit.binary, explicit_host.binary);
  // With no CPU named, the request's features come after the host's (as
  // KILN_GATHER's prefer-no-gather does): one that changes the code generator
  // changes the binary, and the same request gives the same binary again.
  if (!contains(compiler().host_features(), "+avx")) return;  // "-avx" would change nothing
  auto without_avx = host_input(source);
  without_avx.features = "-avx";
  const CompileOutput with_features = compiler().compile(without_avx);
  ASSERT_TRUE(with_features.ok) << with_features.diagnostics;
  EXPECT_NE(with_features.binary, implicit.binary);
  EXPECT_EQ(compiler().compile(without_avx).binary, with_features.binary);
}

TEST(CompilerModule, RejectsUnknownOptLevelCpuAndFeature) {
  auto input = host_input("extern \"C\" int kiln_t() { return 1; }\n");
  input.opt_level = "-O9 -fsomething";
  const CompileOutput bad_level = compiler().compile(input);
  EXPECT_FALSE(bad_level.ok);
  EXPECT_TRUE(contains(bad_level.diagnostics, "-O9")) << bad_level.diagnostics;

  input = host_input("extern \"C\" int kiln_t() { return 1; }\n");
  input.cpu = "no-such-cpu-kiln";
  const CompileOutput bad_cpu = compiler().compile(input);
  EXPECT_FALSE(bad_cpu.ok);
  EXPECT_TRUE(contains(bad_cpu.diagnostics, "no-such-cpu-kiln")) << bad_cpu.diagnostics;

  // An unknown feature would be ignored by LLVM (with a note on stderr): the
  // binary would not be what the cache key names, so the module refuses it.
  input = host_input("extern \"C\" int kiln_t() { return 1; }\n");
  input.cpu = compiler().host_cpu();
  input.features = "+sse2,+kiln-no-such-feature";
  const CompileOutput bad_feature = compiler().compile(input);
  EXPECT_FALSE(bad_feature.ok);
  EXPECT_TRUE(contains(bad_feature.diagnostics, "+kiln-no-such-feature")) << bad_feature.diagnostics;
  input.features = "avx2";
  EXPECT_FALSE(compiler().compile(input).ok);
}

TEST(CompilerModule, ExplicitGenericCpuCompilesAndRuns) {
  auto input = host_input("extern \"C\" long kiln_t(const long* a, long n) {\n"
                          "  long s = 0;\n  for (long i = 0; i < n; ++i) s += a[i];\n  return s;\n}\n");
  input.cpu = "x86-64";
  const CompileOutput output = compiler().compile(input);
  ASSERT_TRUE(output.ok) << output.diagnostics;
  LoadedObjects objects;
  auto fn = objects.function<long (*)(const long*, long)>(output.binary, "kiln_t");
  const std::vector<long> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  EXPECT_EQ(fn(a.data(), static_cast<long>(a.size())), 66);
}

TEST(CompilerModule, OptLevelsAllCompileAndRun) {
  for (const char* level : {"-O0", "-O1", "-O2", "-O3", "-Os", "-Oz"}) {
    auto input = host_input("extern \"C\" int kiln_t(int x) { return x * 3; }\n");
    input.opt_level = level;
    const CompileOutput output = compiler().compile(input);
    ASSERT_TRUE(output.ok) << level << ": " << output.diagnostics;
    LoadedObjects objects;
    EXPECT_EQ(objects.function<int (*)(int)>(output.binary, "kiln_t")(14), 42) << level;
  }
}

TEST(CompilerModule, SameInputGivesSameBinary) {
  const auto input = host_input("extern \"C\" double kiln_t(double x) { return x * x + 1.0; }\n");
  const CompileOutput a = compiler().compile(input);
  const CompileOutput b = compiler().compile(input);
  ASSERT_TRUE(a.ok && b.ok);
  EXPECT_EQ(a.binary, b.binary);
}

TEST(CompilerModule, TwoThreadsCompileAtOnce) {
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
  LoadedObjects objects;
  for (int t = 0; t < 2; ++t) {
    ASSERT_TRUE(outputs[t].ok) << outputs[t].diagnostics;
    auto fn = objects.function<long (*)(const long*, long)>(outputs[t].binary, "kiln_thread");
    EXPECT_EQ(fn(a.data(), 10), 55 * (t + 2));
  }
}

TEST(CompilerModule, HostCpuBinaryDiffersFromGenericX86) {
  // The CPU and features reach the code generator: with AVX2 the vectorised
  // loop uses other instructions than with baseline x86-64.
  if (!contains(compiler().host_features(), "+avx2")) GTEST_SKIP() << "host has no AVX2";
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
  EXPECT_NE(host.binary, generic.binary);
  // And both compute the same thing (a*x is exact here, so FMA or not gives the same bits).
  LoadedObjects objects;
  using Fn = void (*)(double*, const double*, double, long);
  auto fh = objects.function<Fn>(host.binary, "kiln_axpy");
  auto fg = objects.function<Fn>(generic.binary, "kiln_axpy");
  std::vector<double> x(37), y1(37, 1.0), y2(37, 1.0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5 * static_cast<double>(i);
  fh(y1.data(), x.data(), 3.0, 37);
  fg(y2.data(), x.data(), 3.0, 37);
  EXPECT_EQ(y1, y2);
}

TEST(CompilerModule, LinkingLeavesNothingInTheTemporaryFolder) {
  TempDir dir;
  {
    ScopedEnv tmpdir("TMPDIR", dir.path().c_str());
    const CompileOutput ok = compiler().compile(host_input("extern \"C\" int kiln_t() { return 2; }\n"));
    ASSERT_TRUE(ok.ok) << ok.diagnostics;
    const CompileOutput failed = compiler().compile(host_input(
        "extern \"C\" int kiln_missing_t();\nextern \"C\" int kiln_t() { return kiln_missing_t(); }\n"));
    EXPECT_FALSE(failed.ok);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "the linker left files in " << dir.path();
}

// Should fix of issue 16: a missing or unwritable $TMPDIR failed the compile
// as though the kernel did not compile. The link falls back to /tmp.
TEST(CompilerModule, AnUnusableTemporaryFolderFallsBackToTmp) {
  TempDir dir;
  const std::filesystem::path file = dir.path() / "a-file";
  std::ofstream(file) << "not a folder\n";
  for (const std::string& folder : {std::string("/nonexistent/kiln-link-tmp-2718"), file.string()}) {
    ScopedEnv tmpdir("TMPDIR", folder.c_str());
    const CompileOutput output = compiler().compile(host_input("extern \"C\" int kiln_t() { return 2; }\n"));
    EXPECT_TRUE(output.ok) << folder << ": " << output.diagnostics;
  }
}

// Where neither $TMPDIR nor /tmp can hold the link's folder, the message names both.
TEST(CompilerModule, NoTemporaryFolderFailsTheCompileNamingEach) {
  if (::geteuid() != 0) GTEST_SKIP() << "mounting a read-only /tmp in a mount namespace of its own needs root; "
                                     << "this test runs as uid " << ::geteuid();
  compiler();  // loaded here: the child forked below has it
  const std::string folder = "/nonexistent/kiln-link-tmp-2719";
  const ::kiln::testing::trust::Forked child = ::kiln::testing::trust::run_forked([&] {
    if (!::kiln::testing::trust::private_tmpfs("/tmp", MS_RDONLY)) return ::kiln::testing::trust::kSkip;
    ::setenv("TMPDIR", folder.c_str(), 1);
    const CompileOutput output = compiler().compile(host_input("extern \"C\" int kiln_t() { return 2; }\n"));
    std::printf("ok=%d\n%s\n", output.ok ? 1 : 0, output.diagnostics.c_str());
    return 0;
  });
  if (child.status == ::kiln::testing::trust::kSkip) GTEST_SKIP() << child.output;
  ASSERT_EQ(child.status, 0) << child.output;
  EXPECT_TRUE(contains(child.output, "ok=0")) << child.output;
  EXPECT_TRUE(contains(child.output, "cannot make a temporary folder for linking: " + folder +
                                         "/kiln-link-XXXXXX ($TMPDIR): No such file or directory; "
                                         "/tmp/kiln-link-XXXXXX: Read-only file system"))
      << child.output;
  // Not a spent linker: the next compile with a usable folder works.
  EXPECT_TRUE(compiler().compile(host_input("extern \"C\" int kiln_t() { return 2; }\n")).ok);
}

// Should fix of issue 16: compiles killed while linking left kiln-link-*
// folders in the temporary folder for good. The first link of a process in a
// folder sweeps them: only those of exactly that name shape, real folders,
// this user's, older than an hour, holding nothing but what a link writes.
TEST(CompilerModule, FoldersOfKilledLinksAreSwept) {
  TempDir dir;
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(2);
  const auto make = [&](const std::string& name, std::vector<std::string> files, bool aged = true) {
    const std::filesystem::path folder = dir.path() / name;
    std::filesystem::create_directory(folder);
    for (const std::string& file : files) std::ofstream(folder / file) << "left by a killed link\n";
    if (aged) std::filesystem::last_write_time(folder, old);
    return folder;
  };
  const auto orphan = make("kiln-link-Ab3dE9", {"kernel.o", "kernel.so", "kernel.so.tmp1a2b3c4"});
  const auto empty_orphan = make("kiln-link-000000", {});
  const auto young = make("kiln-link-Zz9yX8", {"kernel.o"}, false);
  const auto other_shape = make("kiln-link-Ab3dE", {"kernel.o"});
  const auto longer = make("kiln-link-Ab3dE90", {"kernel.o"});
  const auto other_file = make("kiln-link-Qq1wW2", {"kernel.o", "notes.txt"});
  const auto not_link = make("kiln-other-Ab3dE9", {});
  std::ofstream(dir.path() / "kiln-link-F1le00") << "a file of that name\n";
  std::filesystem::create_directory_symlink(orphan, dir.path() / "kiln-link-L1nk00");
  std::vector<std::filesystem::path> kept = {young, other_shape, longer, other_file, not_link,
                                             dir.path() / "kiln-link-F1le00", dir.path() / "kiln-link-L1nk00"};
  if (::geteuid() == 0) {
    const auto foreign = make("kiln-link-N0b0dy", {"kernel.o"});
    ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
    std::filesystem::last_write_time(foreign, old);
    kept.push_back(foreign);
  }
  {
    ScopedEnv tmpdir("TMPDIR", dir.path().c_str());
    ASSERT_TRUE(compiler().compile(host_input("extern \"C\" int kiln_t() { return 2; }\n")).ok);
  }
  EXPECT_FALSE(std::filesystem::exists(orphan));
  EXPECT_FALSE(std::filesystem::exists(empty_orphan));
  for (const std::filesystem::path& path : kept) {
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::symlink_status(path))) << path << " was removed";
  }
  EXPECT_TRUE(std::filesystem::exists(other_file / "notes.txt"));
  EXPECT_TRUE(std::filesystem::exists(young / "kernel.o"));
}

TEST(CompilerModule, ModuleKeepsLlvmOutOfTheGlobalScope) {
  compiler();
  // RTLD_LOCAL: neither the module's entry nor the shared libLLVM it pulled in
  // are visible to a global lookup (a kernel cannot bind to them either).
  EXPECT_EQ(::dlsym(RTLD_DEFAULT, "kiln_compiler_entry"), nullptr);
  EXPECT_EQ(::dlsym(RTLD_DEFAULT, "LLVMGetVersion"), nullptr);
  EXPECT_EQ(::dlsym(RTLD_DEFAULT, "_ZN4llvm2cl6Option11addArgumentEv"), nullptr);
  const CompileOutput output = compiler().compile(host_input(
      "extern \"C\" void LLVMGetVersion(unsigned*, unsigned*, unsigned*);\n"
      "extern \"C\" int kiln_t() { unsigned a, b, c; LLVMGetVersion(&a, &b, &c); return (int)a; }\n"));
  EXPECT_FALSE(output.ok) << "a kernel links against LLVM";
  EXPECT_TRUE(contains(output.diagnostics, "undefined symbol: LLVMGetVersion")) << output.diagnostics;
}

TEST(CompilerModule, LoadingTheModuleAgainChangesNothing) {
  const std::string identity = compiler().identity();
  auto again = value_of(CompilerModule::load(default_compiler_module_path(), value_of(clang_resource_dir())));
  EXPECT_EQ(again->identity(), identity);
  EXPECT_EQ(again->host_cpu(), compiler().host_cpu());
  const CompileOutput output = again->compile(host_input("extern \"C\" int kiln_t() { return 8; }\n"));
  ASSERT_TRUE(output.ok) << output.diagnostics;
  again.reset();  // RTLD_NODELETE: the first module stays usable
  LoadedObjects objects;
  EXPECT_EQ(objects.function<int (*)()>(output.binary, "kiln_t")(), 8);
  EXPECT_TRUE(compiler().compile(host_input("extern \"C\" int kiln_t() { return 9; }\n")).ok);
}

// --- what a warm process maps ----------------------------------------------

// Lines of /proc/self/maps that map clang, LLVM or the compiler module.
std::string compiler_mappings() {
  std::ifstream maps("/proc/self/maps");
  std::string found;
  for (std::string line; std::getline(maps, line);) {
    if (contains(line, "libLLVM") || contains(line, "libclang-cpp") || contains(line, "libkiln_clang")) {
      found += line + "\n";
    }
  }
  return found;
}

// In a fresh process: what libkiln does on a cache hit (the host's identity,
// the compiler's fingerprint, loading a kernel from a file), then whether
// that mapped clang or LLVM; then the cold path, which must.
[[maybe_unused]] const bool warm_child_registered = test::register_child_check("warm-path", [] {
  std::string at_start = compiler_mappings();
  const HostTarget& target = host_target();
  const std::string fingerprint = value_of(compiler_module_fingerprint(default_compiler_module_path()));
  const char* kernel_file = std::getenv("KILN_TEST_KERNEL");
  if (kernel_file == nullptr) throw std::runtime_error("KILN_TEST_KERNEL is not set");
  std::ifstream in(kernel_file, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const int fd = ::open(kernel_file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("cannot open ") + kernel_file);
  const LoadedObject kernel =
      test::value_of(load_shared_object_descriptor(fd, bytes, "kiln_sum", "warm kernel", kernel_file));
  ::close(fd);
  const long values[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const long sum = reinterpret_cast<long (*)(const long*, long)>(kernel.address)(values, 9);
  std::printf("identity: %zu %zu %zu\nresult=%ld\n", target.cpu.size(), target.features.size(), fingerprint.size(),
              sum);
  std::printf("warm mappings:\n%s%s-- end warm\n", at_start.c_str(), compiler_mappings().c_str());
  test::compiler();
  std::printf("cold mappings:\n%s-- end cold\n", compiler_mappings().c_str());
  return 0;
});

TEST(CompilerModule, WarmProcessMapsNoLlvm) {
  const std::vector<char> binary = test::compile_for_host(
      "extern \"C\" long kiln_sum(const long* a, long n) {\n"
      "  long s = 0;\n  for (long i = 0; i < n; ++i) s += a[i] * a[i];\n  return s;\n}\n");
  ASSERT_FALSE(binary.empty());
  TempDir dir;
  const auto kernel = dir.path() / "kernel.so";
  std::ofstream(kernel, std::ios::binary).write(binary.data(), static_cast<std::streamsize>(binary.size()));
  const test::ChildResult child = test::run_fresh_process("warm-path", {{"KILN_TEST_KERNEL", kernel.string()}});
  ASSERT_EQ(child.exit_code, 0) << child.output;
  EXPECT_TRUE(contains(child.output, "result=285")) << child.output;
  const auto warm_begin = child.output.find("warm mappings:\n");
  const auto warm_end = child.output.find("-- end warm");
  const auto cold_begin = child.output.find("cold mappings:\n");
  ASSERT_NE(warm_begin, std::string::npos) << child.output;
  ASSERT_NE(warm_end, std::string::npos) << child.output;
  ASSERT_NE(cold_begin, std::string::npos) << child.output;
  const std::string warm = child.output.substr(warm_begin + 15, warm_end - warm_begin - 15);
  EXPECT_EQ(warm, "") << "a warm process mapped clang or LLVM";
  // The check sees them when they are there: the cold path maps all three.
  const std::string cold = child.output.substr(cold_begin);
  EXPECT_TRUE(contains(cold, "libLLVM")) << child.output;
  EXPECT_TRUE(contains(cold, "libclang-cpp")) << child.output;
  EXPECT_TRUE(contains(cold, "libkiln_clang")) << child.output;
}

// In a fresh process (a copy of this executable): where it would load the module from.
[[maybe_unused]] const bool module_path_child_registered = test::register_child_check("module-path", [] {
  ::unsetenv("KILN_COMPILER_MODULE");
  std::printf("%s\n", default_compiler_module_path().c_str());
  return 0;
});

TEST(CompilerModulePath, InstalledLayoutIsFoundBesideTheBinary) {
  // <libdir>/libkiln.so finds <libdir>/kiln/libkiln_clang.so through dladdr:
  // the file that holds kiln_jit's code, here a copy of this executable.
  ScopedEnv unset("KILN_COMPILER_MODULE", nullptr);
  TempDir dir;
  const auto libdir = dir.path() / "lib";
  std::filesystem::create_directories(libdir / "kiln");
  const auto copy = libdir / "kiln_jit_tests_copy";
  std::filesystem::copy_file("/proc/self/exe", copy);
  std::filesystem::permissions(copy, std::filesystem::perms::owner_all);
  std::ofstream(libdir / "kiln" / "libkiln_clang.so") << "not loaded, only found";
  const test::ChildResult beside = test::run_fresh_process("module-path", {}, std::nullopt, copy.string());
  ASSERT_EQ(beside.exit_code, 0) << beside.output;
  EXPECT_EQ(beside.output, (libdir / "kiln" / "libkiln_clang.so").string() + "\n");
  // Without the module beside it, still its own place (issue 33, item 6): a
  // binary outside the build folder, as an installed libkiln is, never falls
  // back to the build folder's module; the miss then names the absent path.
  std::filesystem::remove(libdir / "kiln" / "libkiln_clang.so");
  const test::ChildResult absent = test::run_fresh_process("module-path", {}, std::nullopt, copy.string());
  ASSERT_EQ(absent.exit_code, 0) << absent.output;
  EXPECT_EQ(absent.output, (libdir / "kiln" / "libkiln_clang.so").string() + "\n");
  EXPECT_NE(absent.output, default_compiler_module_path().string() + "\n");
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
  const std::optional<std::string> id = value_of(elf_build_id(copy));
  ASSERT_TRUE(id.has_value()) << "the module is linked with a build ID";
  const std::string before = value_of(compiler_module_fingerprint(copy));
  EXPECT_EQ(before.rfind("llvm-19.", 0), 0u) << before;
  EXPECT_TRUE(contains(before, ";module-id-" + *id)) << before;
  EXPECT_TRUE(contains(before, ";libLLVM")) << before;
  EXPECT_TRUE(contains(before, ";libclang-cpp")) << before;
  EXPECT_EQ(value_of(compiler_module_fingerprint(copy)), before);  // cached, same answer
  EXPECT_EQ(value_of(compiler_module_fingerprint(default_compiler_module_path())), before);  // same module, other path

  write_bytes(copy, with_other_build_id(file_bytes(copy), *id));
  const std::string after = value_of(compiler_module_fingerprint(copy));
  EXPECT_NE(after, before);
  EXPECT_EQ(after.substr(0, after.find(';')), before.substr(0, before.find(';')));
}

TEST(CompilerModuleFingerprint, ModuleWithoutBuildIdIsHashed) {
  TempDir dir;
  const auto copy = dir.path() / "libkiln_clang.so";
  const std::string command = "objcopy --remove-section=.note.gnu.build-id '" +
                              default_compiler_module_path().string() + "' '" + copy.string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  ASSERT_FALSE(value_of(elf_build_id(copy)).has_value());
  const std::string before = value_of(compiler_module_fingerprint(copy));
  EXPECT_TRUE(contains(before, ";module-xxh3-")) << before;
  {
    std::ofstream out(copy, std::ios::binary | std::ios::app);
    out.put('\0');
  }
  EXPECT_NE(value_of(compiler_module_fingerprint(copy)), before);
}

TEST(CompilerModuleFingerprint, UnreadableModuleFailsNamingPath) {
  const base::Result<std::string> fingerprint = compiler_module_fingerprint("/nonexistent/kiln/libkiln_clang.so");
  ASSERT_FALSE(fingerprint.has_value()) << *fingerprint;
  EXPECT_EQ(fingerprint.error().kind, base::Failure::Kind::not_found);
  EXPECT_EQ(fingerprint.error().message, "kiln: cannot read compiler module '/nonexistent/kiln/libkiln_clang.so'");
}

}  // namespace
}  // namespace kiln::jit
