#include "runtime/resolve/memory_table.hpp"

namespace kiln::runtime {

namespace {
constexpr std::size_t kFirstBuckets = 64;
}

MemoryTable::Buckets::Buckets(std::size_t count)
    : mask(count - 1), heads(std::make_unique<std::atomic<const Node*>[]>(count)) {
  for (std::size_t i = 0; i < count; ++i) heads[i].store(nullptr, std::memory_order_relaxed);
}

MemoryTable::MemoryTable() {
  generations_.push_back(std::make_unique<Buckets>(kFirstBuckets));
  current_.store(generations_.back().get(), std::memory_order_release);
}

const MemoryTable::Entry* MemoryTable::find_in(const Buckets& buckets, const MemoryKeyView& key,
                                               std::size_t hash) noexcept {
  // Acquire pairs with link()'s release: a node seen is a node fully built.
  for (const Node* n = buckets.heads[hash & buckets.mask].load(std::memory_order_acquire); n; n = n->next)
    if (n->entry->hash == hash && n->entry->key.view() == key) return n->entry;
  return nullptr;
}

const detail::ResolvedKernel* MemoryTable::find(const MemoryKeyView& key) const noexcept {
  const Entry* e = find_in(*current_.load(std::memory_order_acquire), key, key.hash());
  return e ? e->kernel.get() : nullptr;
}

void MemoryTable::link(Buckets& buckets, const Entry& entry) {
  std::atomic<const Node*>& head = buckets.heads[entry.hash & buckets.mask];
  const Node& node = nodes_.emplace_back(Node{&entry, head.load(std::memory_order_relaxed)});
  head.store(&node, std::memory_order_release);
}

// A new array of twice the buckets, filled before it is published: readers
// see the old array or the complete new one.
void MemoryTable::grow() { republish((generations_.back()->mask + 1) * 2); }

void MemoryTable::republish(std::size_t count) {
  auto next = std::make_unique<Buckets>(count);
  for (const Entry& e : entries_)
    if (!e.forgotten) link(*next, e);
  generations_.push_back(std::move(next));
  current_.store(generations_.back().get(), std::memory_order_release);
}

void MemoryTable::forget(std::string_view name) {
  std::lock_guard lock(write_mutex_);
  bool any = false;
  for (Entry& e : entries_)
    if (!e.forgotten && e.key.name == name) e.forgotten = any = true;
  if (any) republish(generations_.back()->mask + 1);
}

const detail::ResolvedKernel& MemoryTable::insert(MemoryKey key, std::unique_ptr<detail::ResolvedKernel> kernel) {
  std::lock_guard lock(write_mutex_);
  const std::size_t hash = key.view().hash();
  if (const Entry* e = find_in(*generations_.back(), key.view(), hash)) return *e->kernel;
  const Entry& entry = entries_.emplace_back(Entry{std::move(key), hash, std::move(kernel)});
  // Grown before a chain gets long: at most one entry per bucket on average.
  if (entries_.size() > generations_.back()->mask + 1) grow();
  else link(*generations_.back(), entry);
  return *entry.kernel;
}

void MemoryTable::for_each(const std::function<void(const detail::ResolvedKernel&)>& visit) const {
  std::lock_guard lock(write_mutex_);
  for (const Entry& e : entries_) visit(*e.kernel);
}

}  // namespace kiln::runtime
