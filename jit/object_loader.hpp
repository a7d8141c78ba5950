// Links relocatable objects into this process with ORC (an ExecutionSession
// and an object linking layer: what LLJIT wraps, without the code generator
// LLJIT drags in) and returns entry addresses. Process symbols (libm) resolve.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace kiln::jit {

class ObjectLoader {
 public:
  // Throws std::runtime_error when ORC cannot be set up.
  static std::unique_ptr<ObjectLoader> create();
  virtual ~ObjectLoader() = default;

  struct Linked {
    void* address = nullptr;  // of the symbol asked for
    std::uint64_t id = 0;     // names the object for unload()
  };

  // Links a copy of `object` and returns the address of `symbol`. Each object
  // lives in its own JITDylib, so symbols never clash between objects. Throws
  // std::runtime_error with LLVM's message (naming `what`) when the object is
  // malformed, a symbol is unresolved or `symbol` is not defined. Thread-safe.
  virtual Linked link(std::span<const char> object, const std::string& symbol, const std::string& what) = 0;
  // Frees a linked object's code and data: nothing may call into it after.
  // An unknown id is ignored. Thread-safe.
  virtual void unload(std::uint64_t id) = 0;

  // link() for objects that live as long as the loader.
  void* load(std::span<const char> object, const std::string& symbol, const std::string& what) {
    return link(object, symbol, what).address;
  }
};

}  // namespace kiln::jit
