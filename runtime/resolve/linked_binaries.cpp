#include "runtime/resolve/linked_binaries.hpp"

namespace kiln::runtime {

LinkedBinaries::Claim LinkedBinaries::claim(const cache::Key& key, bool wait, detail::EntryFn& entry) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (const auto it = linked_.find(key); it != linked_.end()) {
      entry = it->second;
      return Claim::linked;
    }
    if (in_flight_.insert(key).second) return Claim::claimed;
    if (!wait) return Claim::busy;
    key_done_.wait(lock);  // another thread loads or builds it
  }
}

void LinkedBinaries::release(const cache::Key& key, std::optional<detail::EntryFn> entry) {
  {
    std::lock_guard lock(mutex_);
    if (entry) linked_.emplace(key, *entry);
    in_flight_.erase(key);
  }
  key_done_.notify_all();
}

std::optional<detail::EntryFn> LinkedBinaries::find(const cache::Key& key) const {
  std::lock_guard lock(mutex_);
  if (const auto it = linked_.find(key); it != linked_.end()) return it->second;
  return std::nullopt;
}

detail::EntryFn LinkedBinaries::add(const cache::Key& key, detail::EntryFn entry) {
  std::lock_guard lock(mutex_);
  return linked_.emplace(key, entry).first->second;
}

}  // namespace kiln::runtime
