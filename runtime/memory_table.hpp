// The first level of lookup: (kernel name, mode, specialisation) -> resolved
// kernel, for everything resolved in this process. A lookup hashes nothing
// but the name: the Spec carries the hash of its canonical bytes, and the key
// is compared through views, so a hit allocates nothing.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "kiln/runtime.hpp"
#include "runtime/resolved_kernel.hpp"

namespace kiln::runtime {

struct MemoryKeyView {
  std::string_view name;
  Mode mode;
  std::string_view canonical;  // Spec::canonical()
  std::size_t spec_hash;       // Spec::hash()
};

struct MemoryKey {
  std::string name;
  Mode mode;
  std::string canonical;
  std::size_t spec_hash;
  MemoryKeyView view() const { return {name, mode, canonical, spec_hash}; }
};

struct MemoryKeyHash {
  using is_transparent = void;
  std::size_t operator()(const MemoryKeyView& k) const {
    return std::hash<std::string_view>{}(k.name) ^ (k.spec_hash * 0x9e3779b97f4a7c15ULL) ^ static_cast<std::size_t>(k.mode);
  }
  std::size_t operator()(const MemoryKey& k) const { return (*this)(k.view()); }
};

struct MemoryKeyEqual {
  using is_transparent = void;
  static bool same(const MemoryKeyView& a, const MemoryKeyView& b) {
    return a.spec_hash == b.spec_hash && a.mode == b.mode && a.name == b.name && a.canonical == b.canonical;
  }
  bool operator()(const MemoryKey& a, const MemoryKey& b) const { return same(a.view(), b.view()); }
  bool operator()(const MemoryKeyView& a, const MemoryKey& b) const { return same(a, b.view()); }
  bool operator()(const MemoryKey& a, const MemoryKeyView& b) const { return same(a.view(), b); }
};

using MemoryTable =
    std::unordered_map<MemoryKey, std::unique_ptr<detail::ResolvedKernel>, MemoryKeyHash, MemoryKeyEqual>;

}  // namespace kiln::runtime
