// A shared library that links kiln_jit the way libkiln.so does (static LLVM,
// -Wl,--exclude-libs,ALL, hidden visibility) and runs the whole cold path:
// host target, ORC loader, then the compiler module with its shared LLVM.
#include <cstdio>
#include <exception>
#include <vector>

#include "jit/compiler_module.hpp"
#include "jit/host_target.hpp"
#include "jit/object_loader.hpp"

// Where this library would load the compiler module from (installed layout check).
extern "C" __attribute__((visibility("default"))) void kiln_jit_probe_module_path(char* path, std::size_t size) {
  std::snprintf(path, size, "%s", kiln::jit::default_compiler_module_path().c_str());
}

extern "C" __attribute__((visibility("default"))) long kiln_jit_probe_run(char* message, std::size_t size) {
  try {
    using namespace kiln::jit;
    auto loader = ObjectLoader::create();  // the static LLVM first
    const HostTarget& host = host_target();
    auto module = CompilerModule::load(default_compiler_module_path(), clang_resource_dir());
    CompileInput input;
    input.source = "extern \"C\" long kiln_probe(const long* a, long n) {\n"
                   "  long s = 0;\n  for (long i = 0; i < n; ++i) s += a[i];\n  return s;\n}\n";
    input.file_name = "probe.cpp";
    input.cpu = host.cpu;
    input.features = host.features;
    CompileOutput output = module->compile(input);
    if (!output.ok) {
      std::snprintf(message, size, "compile failed: %s", output.diagnostics.c_str());
      return -1;
    }
    auto fn = reinterpret_cast<long (*)(const long*, long)>(loader->load(output.object, "kiln_probe", "probe"));
    const std::vector<long> a = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    return fn(a.data(), static_cast<long>(a.size()));
  } catch (const std::exception& e) {
    std::snprintf(message, size, "%s", e.what());
    return -1;
  }
}
