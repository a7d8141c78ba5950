// The C table libkiln sees (jit/compiler_abi.h). Exported: kiln_compiler_entry
// only (the version script hides the rest, LLVM's and clang's copies included).
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include <clang/Basic/Version.h>
#include <llvm-c/Core.h>

#include "jit/compiler/frontend.hpp"
#include "jit/compiler/linker.hpp"
#include "jit/compiler_abi.h"

namespace kiln::jit::compiler {
namespace {

// One front end per process; set up by the first successful entry call.
std::mutex setup_mutex;
std::unique_ptr<Frontend> frontend;  // guarded by setup_mutex until set, read-only after

char* malloc_copy(const char* data, std::size_t size) {
  char* copy = static_cast<char*>(std::malloc(size + 1));
  if (copy == nullptr) return nullptr;
  if (size != 0) std::memcpy(copy, data, size);
  copy[size] = '\0';
  return copy;
}

char* malloc_string(const std::string& text) { return malloc_copy(text.data(), text.size()); }

const char* identity() {
  // The running libclang-cpp/libLLVM (a package update changes them without
  // changing this module's bytes) and the flags every compile uses.
  static const std::string text = [] {
    unsigned major = 0, minor = 0, patch = 0;
    LLVMGetVersion(&major, &minor, &patch);
    return "clang " CLANG_VERSION_STRING " (" + clang::getClangFullVersion() + "); llvm " + std::to_string(major) +
           "." + std::to_string(minor) + "." + std::to_string(patch) + "; " + Frontend::flags() + "; " + linker_identity();
  }();
  return text.c_str();
}

int compile(const kiln_compile_request* request, kiln_compile_result* result) {
  if (result == nullptr) return 0;
  *result = kiln_compile_result{};
  try {
    if (request == nullptr || (request->source == nullptr && request->source_size != 0)) {
      result->diagnostics = malloc_string("kiln: no compile request\n");
      return 0;
    }
    auto view = [](const char* text) { return text == nullptr ? std::string_view() : std::string_view(text); };
    Request input{std::string_view(request->source == nullptr ? "" : request->source, request->source_size),
                  view(request->file_name), view(request->cpu), view(request->features),
                  request->opt_level == nullptr ? std::string_view("-O3") : std::string_view(request->opt_level),
                  request->fp_contract == nullptr || *request->fp_contract == '\0' ? std::string_view("on")
                                                                                   : std::string_view(request->fp_contract)};
    Outcome outcome = frontend->compile(input);
    if (!outcome.ok) {
      result->diagnostics = malloc_string(outcome.diagnostics);
      return 0;
    }
    // clang's warnings, then lld's messages (or why linking failed).
    const Linked linked = link_shared_object(outcome.object);
    result->diagnostics = malloc_string(outcome.diagnostics + linked.diagnostics);
    if (!linked.ok) return 0;
    result->binary = static_cast<char*>(std::malloc(linked.shared_object.size()));
    if (result->binary == nullptr) throw std::bad_alloc();
    std::memcpy(result->binary, linked.shared_object.data(), linked.shared_object.size());
    result->binary_size = linked.shared_object.size();
    result->ok = 1;
    return 1;
  } catch (const std::exception& e) {  // never let an exception cross the C boundary
    std::free(result->binary);
    std::free(result->diagnostics);
    *result = kiln_compile_result{};
    result->diagnostics = malloc_string(std::string("kiln: compile failed: ") + e.what() + "\n");
    return 0;
  }
}

void free_result(kiln_compile_result* result) {
  if (result == nullptr) return;
  std::free(result->binary);
  std::free(result->diagnostics);
  *result = kiln_compile_result{};
}

// Valid once the entry call succeeded (the front end is set, then read-only).
const char* host_cpu() { return frontend->host_cpu().c_str(); }
const char* host_features() { return frontend->host_features().c_str(); }

constexpr kiln_compiler kTable = {KILN_COMPILER_ABI_VERSION, &identity, &host_cpu, &host_features, &compile, &free_result};

}  // namespace
}  // namespace kiln::jit::compiler

extern "C" __attribute__((visibility("default"))) const kiln_compiler* kiln_compiler_entry(const char* resource_dir,
                                                                                           char** error) {
  using namespace kiln::jit::compiler;
  auto report = [error](const std::string& message) -> const kiln_compiler* {
    if (error != nullptr) *error = malloc_string(message);
    return nullptr;
  };
  try {
    if (resource_dir == nullptr) return report("kiln: no clang resource directory given");
    std::lock_guard lock(setup_mutex);
    if (frontend) {
      if (frontend->resource_dir() != resource_dir) {
        return report("kiln: the compiler module is already set up with resource directory '" +
                      frontend->resource_dir() + "', not '" + resource_dir + "'");
      }
      return &kTable;
    }
    std::string message;
    frontend = Frontend::create(resource_dir, message);
    if (!frontend) return report(message);
    return &kTable;
  } catch (const std::exception& e) {
    return report(std::string("kiln: cannot set up the compiler module: ") + e.what());
  }
}
