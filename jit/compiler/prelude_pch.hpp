// The prelude of kiln's generated translation units, precompiled once per
// process and reused by every compile that starts with the same text under
// the same flags (issue 34, item 3: the front end once per source).
//
// A generated translation unit (lang/codegen.cpp) is the prelude, then a
// `#line 1 "<kiln generated...>"` directive, then the kernel. The prelude is
// the same for every kernel and specialisation, so its parse is done once:
// clang writes it as a precompiled header (PCH) into memory, and each compile
// then reads the rest of the source with that PCH included. Nothing is
// written to disk or shared with another process: the PCH and its header
// live in this process's memory, under a virtual path that only its own
// compiles see. clang validates the PCH on every use as it would a file's
// (its language, target and preprocessor options, the header's size and
// time) and the cache below is keyed by the whole header text and every cc1
// argument besides the file name, so a changed prelude or flag builds anew.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <llvm/ADT/IntrusiveRefCntPtr.h>
#include <llvm/Support/VirtualFileSystem.h>

namespace kiln::jit::compiler {

// Where the header the PCH is built from lives in the compiles' file system
// (memory only), and the PCH beside it.
inline constexpr const char* kPreludeHeaderPath = "/kiln-jit-prelude/prelude.hpp";
inline constexpr const char* kPreludePchPath = "/kiln-jit-prelude/prelude.pch";

// The length of `source`'s prelude: the text up to the line
// `#line 1 "<kiln generated` that lang/codegen.cpp writes after it (the
// prelude holds no such line); 0 when the source has none.
std::size_t prelude_length(std::string_view source);

struct PrecompiledPrelude {
  std::string header;  // the source's first prelude_length() characters
  std::string pch;     // clang's serialised AST of `header`

  // The real file system with the header and the PCH over it, in memory.
  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> file_system() const;
};

class PreludeCache {
 public:
  // The PCH of `header` built with the cc1 arguments `args` (whose input is
  // kPreludeHeaderPath), made the second time they are asked for. Null the
  // first time, while another thread builds it, or when the header cannot
  // be reused: it does not compile alone, or clang has anything to say about
  // it (a warning would then be said once, not in each compile's messages);
  // that answer is kept too. Thread-safe.
  std::shared_ptr<const PrecompiledPrelude> get(std::string_view header, const std::vector<const char*>& args);

  std::size_t builds() const;  // PCHs built (or tried) so far: how a test sees reuse

 private:
  struct Entry {
    std::string key;  // the arguments, then the header
    std::shared_ptr<const PrecompiledPrelude> prelude;  // null: not built (yet), or not reusable
    bool built = false;  // built, or being built
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;  // least recently used first
  std::size_t builds_ = 0;
};

}  // namespace kiln::jit::compiler
