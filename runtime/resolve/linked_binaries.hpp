// The binaries linked into this process, by key, and the keys a thread is
// linking or building right now. A generic build serves every
// specialisation and is linked once; a thread that asks for a key another
// thread of this process is working on waits for it rather than build it
// again. One lock of its own: a memory hit (memory_table.hpp) never takes it.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "cache/key.hpp"
#include "runtime/call/resolved_kernel.hpp"

namespace kiln::runtime {

class LinkedBinaries {
 public:
  enum class Claim {
    linked,   // already linked: `entry` is set
    claimed,  // this thread now owns the key (InFlight releases it)
    busy,     // another thread owns it and the caller would not wait
  };
  // Waits for another thread that owns the key when `wait`.
  [[nodiscard]] Claim claim(const cache::Key& key, bool wait, detail::EntryFn& entry);
  // Gives up an owned key, recording its entry when there is one, and wakes
  // the threads waiting for it.
  void release(const cache::Key& key, std::optional<detail::EntryFn> entry);
  std::optional<detail::EntryFn> find(const cache::Key& key) const;
  // Records an entry linked without claiming the key (the collective path);
  // an entry already there stays and is returned.
  detail::EntryFn add(const cache::Key& key, detail::EntryFn entry);

 private:
  mutable std::mutex mutex_;
  std::condition_variable key_done_;  // a key left in_flight_
  std::unordered_map<cache::Key, detail::EntryFn, cache::KeyHash> linked_;
  std::unordered_set<cache::Key, cache::KeyHash> in_flight_;
};

// Owns a claimed key for one thread: on every way out, records the binary it
// got (if any) and releases the key.
class InFlight {
 public:
  InFlight(LinkedBinaries& linked, const cache::Key& key) : linked_(linked), key_(key) {}
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  ~InFlight() { linked_.release(key_, entry_); }
  void done(detail::EntryFn entry) { entry_ = entry; }

 private:
  LinkedBinaries& linked_;
  const cache::Key& key_;
  std::optional<detail::EntryFn> entry_;
};

}  // namespace kiln::runtime
