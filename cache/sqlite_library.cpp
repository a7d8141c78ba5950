#include "cache/sqlite_library.hpp"

#include <dlfcn.h>

#include <string>

namespace kiln::cache {
namespace {

constexpr const char* kSoname = "libsqlite3.so.0";  // Debian's libsqlite3-0

struct Loaded {
  SqliteLibrary library;
  std::string problem;  // empty when every function was found
};

Loaded load() {
  Loaded loaded;
  // RTLD_LOCAL: no symbol of SQLite's reaches the global scope through kiln.
  void* handle = ::dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    loaded.problem = std::string("cannot load ") + kSoname + ": " + (why != nullptr ? why : "no reason given");
    return loaded;
  }
#define KILN_SQLITE_FIND(name)                                                                        \
  loaded.library.name = reinterpret_cast<decltype(&::name)>(::dlsym(handle, #name));                 \
  if (loaded.library.name == nullptr && loaded.problem.empty()) {                                    \
    loaded.problem = std::string(kSoname) + " has no " #name " (SQLite too old?)";                   \
  }
  KILN_SQLITE_FUNCTIONS(KILN_SQLITE_FIND)
#undef KILN_SQLITE_FIND
  return loaded;
}

const Loaded& loaded() {
  static const Loaded once = load();  // thread-safe initialisation
  return once;
}

}  // namespace

base::Result<const SqliteLibrary*> load_sqlite() {
  const Loaded& l = loaded();
  if (!l.problem.empty()) return base::failed({base::Failure::Kind::unsupported, 0, l.problem});
  return &l.library;
}

const SqliteLibrary& sqlite() { return loaded().library; }

}  // namespace kiln::cache
