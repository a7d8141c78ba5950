#include "jit/compiler_module.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include <xxhash.h>

#include "base/log.hpp"
#include "jit/build_id.hpp"
#include "jit/compiler_abi.h"

namespace kiln::jit {
namespace {

std::string dl_error() {
  const char* message = dlerror();
  return message != nullptr ? message : "unknown dlerror";
}

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

// Reads a whole file; fails naming the path.
base::Result<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return base::failed({base::Failure::Kind::io, 0, "kiln: cannot read compiler module '" + path.string() + "'"});
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad())
    return base::failed({base::Failure::Kind::io, 0, "kiln: error reading compiler module '" + path.string() + "'"});
  return bytes;
}

// A failure to set the module up: nothing a retry or another path mends.
tl::unexpected<base::Failure> setup_failure(std::string message) {
  return base::failed({base::Failure::Kind::io, 0, std::move(message)});
}

}  // namespace

base::Result<std::unique_ptr<CompilerModule>> CompilerModule::load(const std::filesystem::path& module_path,
                                                                   const std::filesystem::path& resource_dir) {
  const auto start = std::chrono::steady_clock::now();
  // RTLD_LOCAL: the module's clang, lld and shared libLLVM stay out of the
  // global scope, so they shadow none of the application's symbols.
  // RTLD_NODELETE: clang and LLVM are never unloaded (their static state,
  // atexit handlers and thread-locals do not survive an unload well).
  void* handle = dlopen(module_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr)
    return setup_failure("kiln: cannot load compiler module '" + module_path.string() + "': " + dl_error());
  std::unique_ptr<CompilerModule> module(new CompilerModule);
  module->handle_ = handle;  // from here on the destructor closes it

  dlerror();
  auto entry = reinterpret_cast<kiln_compiler_entry_fn>(dlsym(handle, KILN_COMPILER_ENTRY_SYMBOL));
  if (entry == nullptr) {
    return setup_failure("kiln: compiler module '" + module_path.string() + "' has no " + KILN_COMPILER_ENTRY_SYMBOL +
                         ": " + dl_error());
  }
  char* error = nullptr;
  const kiln_compiler* table = entry(resource_dir.c_str(), &error);
  if (table == nullptr) {
    std::string message = error != nullptr ? error : "no reason given";
    std::free(error);
    return setup_failure("kiln: compiler module '" + module_path.string() + "' failed to set up: " + message);
  }
  if (table->abi_version != KILN_COMPILER_ABI_VERSION) {
    return setup_failure("kiln: compiler module '" + module_path.string() + "' speaks ABI version " +
                         std::to_string(table->abi_version) + ", libkiln expects " +
                         std::to_string(KILN_COMPILER_ABI_VERSION));
  }
  module->table_ = table;
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
  base::log().debug("kiln jit: loaded compiler module {} ({}) in {:.1f} ms", module_path.string(), module->identity(),
                    elapsed.count());
  return module;
}

CompilerModule::~CompilerModule() {
  if (handle_ != nullptr) dlclose(handle_);  // RTLD_NODELETE: only drops the reference
}

std::string CompilerModule::identity() const { return table_->identity(); }
std::string CompilerModule::host_cpu() const { return table_->host_cpu(); }
std::string CompilerModule::host_features() const { return table_->host_features(); }

CompileOutput CompilerModule::compile(const CompileInput& input) const {
  const kiln_compile_request request{input.source.data(), input.source.size(), input.file_name.c_str(),
                                     input.cpu.c_str(),   input.features.c_str(), input.opt_level.c_str(),
                                     input.fp_contract.c_str()};
  kiln_compile_result result{};
  table_->compile(&request, &result);
  CompileOutput output;
  output.ok = result.ok != 0;
  if (output.ok && result.binary != nullptr) output.binary.assign(result.binary, result.binary + result.binary_size);
  if (result.diagnostics != nullptr) output.diagnostics = result.diagnostics;
  table_->free_result(&result);
  if (output.ok && output.binary.empty()) {
    output.ok = false;
    output.diagnostics += "kiln: the compiler module returned no binary\n";
  }
  return output;
}

namespace {

// The file that holds this very code: libkiln.so, or a test executable that
// links kiln_jit statically. Empty when dladdr cannot say.
std::string this_binary() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&this_binary), &info) == 0 || info.dli_fname == nullptr) return {};
  return info.dli_fname;
}

// Whether `file` lies in the build folder kiln was built in: only a libkiln
// there may use the build folder's module. An installed one that did would
// compile with whatever a later build left there, or name a path that does
// not exist on the node, and hide that its own module is missing.
bool in_build_tree(const std::string& file) {
  char resolved[PATH_MAX];  // dladdr names a program as it was started: "./tests/x"
  const std::string real = ::realpath(file.c_str(), resolved) != nullptr ? resolved : file;
  const std::string tree = std::string(::realpath(KILN_BUILD_TREE, resolved) != nullptr ? resolved : KILN_BUILD_TREE) + "/";
  return real.compare(0, tree.size(), tree) == 0;
}

}  // namespace

ModuleLocation compiler_module_location() {
  if (const char* path = env("KILN_COMPILER_MODULE")) return {path, "from KILN_COMPILER_MODULE"};
  // Installed layout: <libdir>/libkiln.so beside <libdir>/kiln/libkiln_clang.so.
  // Plain strings and stat: std::filesystem's path parsing was a visible part
  // of a warm process's first kernel.
  const std::string binary = this_binary();
  if (!binary.empty()) {
    std::string folder = binary;
    folder.erase(folder.find_last_of('/') + 1);  // npos + 1 == 0: no folder, the current one
    const std::string beside = folder + "kiln/libkiln_clang.so";
    struct stat status {};
    const bool there = ::stat(beside.c_str(), &status) == 0 && S_ISREG(status.st_mode);
    if (there || !in_build_tree(binary))
      return {beside, "beside " + std::filesystem::path(binary).lexically_normal().string()};
  }
  return {KILN_COMPILER_MODULE_BUILD_PATH, "the build folder's"};
}

std::filesystem::path default_compiler_module_path() { return compiler_module_location().path; }

namespace {

// What a node without LLVM can still do.
constexpr const char* kWithoutCompiler =
    "A node without kiln's compiler runs only kernels already in the cache: build them where the compiler is "
    "(kiln warm, or a first run there) and share the cache (KILN_CACHE_DIR, or KILN_CACHE_PATH read-only).";

// dlopen's own words inside load()'s message ("... cannot load compiler
// module 'M': <dlerror>", also inside a worker's refusal), or nothing when
// `what` is another failure.
std::string dlopen_message(const std::string& what) {
  static const std::string marker = "cannot load compiler module '";
  const std::size_t at = what.find(marker);
  if (at == std::string::npos) return {};
  const std::size_t end = what.find("': ", at + marker.size());
  std::string message = end == std::string::npos ? what.substr(at) : what.substr(end + 3);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

}  // namespace

std::string compiler_unavailable_cause(const std::string& what) {
  ModuleLocation module = compiler_module_location();
  struct stat status {};
  const bool exists = ::stat(module.path.c_str(), &status) == 0;
  // Named as people write it: an rpath from pkg-config gives ".../lib/pkgconfig/../..//lib".
  module.path = module.path.lexically_normal();
  if (!exists)
    return "the compiler module " + module.path.string() + " (" + module.origin + ") does not exist: this node " +
           "has no kiln compiler. " + kWithoutCompiler;
  if (const std::string dlopen = dlopen_message(what); !dlopen.empty()) {
    const std::string major = std::string(KILN_LLVM_VERSION).substr(0, std::string(KILN_LLVM_VERSION).find('.'));
    return "the compiler module " + module.path.string() + " does not load on this node: " + dlopen +
           ". It needs LLVM " + major + "'s shared libraries (libLLVM and libclang-cpp; Debian packages libllvm" +
           major + " and libclang-cpp" + major + "). " + kWithoutCompiler;
  }
  return what;
}

namespace {

// A file's identity: its GNU build ID, else (a file linked without one) an
// XXH3 of its bytes. Fails naming the path.
base::Result<std::string> file_identity(const std::filesystem::path& path) {
  const base::Result<std::optional<std::string>> id = elf_build_id(path);
  if (!id) return base::failed(id.error());
  if (*id) return "id-" + **id;
  const base::Result<std::string> bytes = read_file(path);
  if (!bytes) return base::failed(bytes.error());
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH3_64bits(bytes->data(), bytes->size())));
  return std::string("xxh3-") + hex;
}

// The shared LLVM and clang libraries the module runs on decide its code as
// much as the module does: a Debian update of them changes the identity.
// One that is missing is named as such: the module cannot load without it.
std::string llvm_libraries_identity() {
  std::string out;
  for (const char* library : {KILN_LIBCLANG_CPP_PATH, KILN_LIBLLVM_PATH}) {
    const std::string identity = file_identity(library).value_or("missing");
    out += ";" + std::filesystem::path(library).filename().string() + "-" + identity;
  }
  return out;
}

}  // namespace

base::Result<std::string> compiler_module_fingerprint(const std::filesystem::path& module_path) {
  // Cached per path, size and modification time: a stat per call.
  struct stat status{};
  if (::stat(module_path.c_str(), &status) != 0) {
    const int error = errno;
    return base::failed({base::kind_of_errno(error), error,
                         "kiln: cannot read compiler module '" + module_path.string() + "'"});
  }
  using Key = std::tuple<std::string, off_t, std::int64_t, long>;
  const Key key{module_path.string(), status.st_size, status.st_mtim.tv_sec, status.st_mtim.tv_nsec};
  static std::mutex mutex;
  static std::map<Key, std::string> cache;
  {
    std::lock_guard lock(mutex);
    if (auto found = cache.find(key); found != cache.end()) return found->second;
  }
  static const std::string libraries = llvm_libraries_identity();
  const base::Result<std::string> module = file_identity(module_path);
  if (!module) return base::failed(module.error());
  std::string fingerprint = std::string("llvm-") + KILN_LLVM_VERSION + ";module-" + *module + libraries;
  std::lock_guard lock(mutex);
  cache.emplace(key, fingerprint);
  return fingerprint;
}

base::Result<std::filesystem::path> clang_resource_dir() {
  const char* from_env = env("KILN_CLANG_RESOURCE_DIR");
  const std::filesystem::path dir = from_env != nullptr ? from_env : KILN_CLANG_RESOURCE_DIR_DEFAULT;
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(dir / "include" / "stddef.h", ignored)) {
    const std::string origin = from_env != nullptr ? "from KILN_CLANG_RESOURCE_DIR"
                                                   : "the default; set KILN_CLANG_RESOURCE_DIR to override";
    return base::failed({base::Failure::Kind::not_found, 0,
                         "kiln: clang resource directory '" + dir.string() + "' has no include/stddef.h (" + origin +
                             "); its headers come with clang-19 (Debian package libclang-common-19-dev)"});
  }
  return dir;
}

}  // namespace kiln::jit
