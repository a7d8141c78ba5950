// The first level of lookup: (kernel name, mode, specialisation) -> resolved
// kernel, for everything resolved in this process.
//
// A lookup takes no lock: threads that look up resolved kernels at once do not
// wait for each other (nor for a thread that inserts). The table only grows
// while its Runtime lives, which makes that simple: a published node is never
// changed or freed, a bucket's head is an atomic pointer, and when the table
// grows a new bucket array (with new nodes) is published whole, while the old
// arrays stay for readers still walking them (their total size is below twice
// the last one's). Inserting takes a lock, which only writers share.
//
// A lookup hashes nothing but the name: the Spec carries the hash of its
// canonical bytes, and keys are compared through views, so a hit allocates
// nothing.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/runtime.hpp"
#include "runtime/call/resolved_kernel.hpp"

namespace kiln::runtime {

struct MemoryKeyView {
  std::string_view name;
  Mode mode;
  std::string_view canonical;  // Spec::canonical()
  std::size_t spec_hash;       // Spec::hash()

  std::size_t hash() const noexcept {
    return std::hash<std::string_view>{}(name) ^ (spec_hash * 0x9e3779b97f4a7c15ULL) ^ static_cast<std::size_t>(mode);
  }
  bool operator==(const MemoryKeyView& o) const noexcept {
    return spec_hash == o.spec_hash && mode == o.mode && name == o.name && canonical == o.canonical;
  }
};

struct MemoryKey {
  std::string name;
  Mode mode;
  std::string canonical;
  std::size_t spec_hash;
  MemoryKeyView view() const noexcept { return {name, mode, canonical, spec_hash}; }
};

class MemoryTable {
 public:
  MemoryTable();
  MemoryTable(const MemoryTable&) = delete;
  MemoryTable& operator=(const MemoryTable&) = delete;

  // The resolved kernel, or null. Lock-free; safe while other threads insert.
  const detail::ResolvedKernel* find(const MemoryKeyView& key) const noexcept;
  // Inserts unless the key is there already (two threads resolved the same
  // request at once): either way, returns the one that stays.
  const detail::ResolvedKernel& insert(MemoryKey key, std::unique_ptr<detail::ResolvedKernel> kernel);
  // Later lookups of `name` miss (its text was registered again): a new
  // bucket array without its entries is published, as grow() publishes one.
  // The entries themselves stay, so handles already given keep their binary.
  void forget(std::string_view name);
  // Every resolved kernel, under the writers' lock (for snapshots).
  void for_each(const std::function<void(const detail::ResolvedKernel&)>& visit) const;

 private:
  struct Entry {
    MemoryKey key;
    std::size_t hash;
    std::unique_ptr<detail::ResolvedKernel> kernel;
    bool forgotten = false;  // under write_mutex_: linked into no later array
  };
  struct Node {
    const Entry* entry;
    const Node* next;
  };
  struct Buckets {
    explicit Buckets(std::size_t count);
    std::size_t mask;
    std::unique_ptr<std::atomic<const Node*>[]> heads;
  };

  static const Entry* find_in(const Buckets& buckets, const MemoryKeyView& key, std::size_t hash) noexcept;
  void link(Buckets& buckets, const Entry& entry);  // under write_mutex_
  void grow();                                      // under write_mutex_
  void republish(std::size_t count);                // under write_mutex_

  std::atomic<const Buckets*> current_{nullptr};
  mutable std::mutex write_mutex_;  // guards everything below
  std::deque<Entry> entries_;       // deque: addresses stay put as it grows
  std::deque<Node> nodes_;
  std::vector<std::unique_ptr<Buckets>> generations_;  // current_ is the last
};

}  // namespace kiln::runtime
