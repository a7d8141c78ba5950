// The memory table's lookups take no lock: they must find every kernel
// inserted before them, never a wrong one, while other threads insert and
// the table grows; hit counters striped per thread must still count exactly.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/call/hit_counter.hpp"
#include "runtime/resolve/linked_binaries.hpp"
#include "runtime/resolve/memory_table.hpp"

namespace kiln::runtime {
namespace {

MemoryKey key_of(int i) {
  std::string canonical = "spec-" + std::to_string(i);
  const std::size_t hash = std::hash<std::string>{}(canonical);
  return {"kernel_" + std::to_string(i % 7), Mode::specialised, std::move(canonical), hash};
}

// Built by append: GCC 12 warns falsely (-Wrestrict) on "k" + std::to_string(i).
std::string name_of(int i) {
  std::string name = "k";
  name += std::to_string(i);
  return name;
}

std::unique_ptr<detail::ResolvedKernel> kernel_named(int i) {
  auto k = std::make_unique<detail::ResolvedKernel>();
  k->metrics_name = name_of(i);
  return k;
}

TEST(MemoryTable, FindsWhatWasInsertedAndNothingElse) {
  MemoryTable table;
  for (int i = 0; i < 1000; ++i) table.insert(key_of(i), kernel_named(i));  // grows several times
  for (int i = 0; i < 1000; ++i) {
    const MemoryKey key = key_of(i);
    const detail::ResolvedKernel* k = table.find(key.view());
    ASSERT_NE(k, nullptr) << i;
    EXPECT_EQ(k->metrics_name, name_of(i));
  }
  EXPECT_EQ(table.find(key_of(1000).view()), nullptr);
  MemoryKey generic = key_of(3);
  generic.mode = Mode::generic;
  EXPECT_EQ(table.find(generic.view()), nullptr);
  int visited = 0;
  table.for_each([&](const detail::ResolvedKernel&) { ++visited; });
  EXPECT_EQ(visited, 1000);
}

TEST(MemoryTable, TheFirstOfTwoInsertsOfAKeyStays) {
  MemoryTable table;
  const detail::ResolvedKernel& first = table.insert(key_of(1), kernel_named(1));
  const detail::ResolvedKernel& second = table.insert(key_of(1), kernel_named(2));
  EXPECT_EQ(&first, &second);
  EXPECT_EQ(second.metrics_name, "k1");
}

TEST(MemoryTable, ReadersSeeEveryPublishedKernelWhileAWriterGrowsTheTable) {
  MemoryTable table;
  constexpr int kKernels = 20000;
  std::atomic<int> published{0};
  std::atomic<int> wrong{0}, missing{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r)
    readers.emplace_back([&] {
      while (published.load(std::memory_order_acquire) < kKernels) {
        const int upto = published.load(std::memory_order_acquire);
        for (int i = std::max(0, upto - 64); i < upto; ++i) {
          const MemoryKey key = key_of(i);
          const detail::ResolvedKernel* k = table.find(key.view());
          if (!k) missing.fetch_add(1);
          else if (k->metrics_name != name_of(i)) wrong.fetch_add(1);
        }
      }
    });
  for (int i = 0; i < kKernels; ++i) {
    table.insert(key_of(i), kernel_named(i));
    published.store(i + 1, std::memory_order_release);
  }
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(missing.load(), 0);
}

TEST(HitCounter, CountsEveryAdditionFromManyThreads) {
  HitCounter counter;
  std::vector<std::thread> threads;
  for (int t = 0; t < 12; ++t)  // more threads than stripes: some share one
    threads.emplace_back([&] {
      for (int i = 0; i < 50000; ++i) counter.add();
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(counter.total(), 12u * 50000u);
}

TEST(LinkedBinaries, ASecondClaimIsBusyOrWaitsForTheFirstsEntry) {
  LinkedBinaries linked;
  const cache::Key key{.high = 1, .low = 2};
  detail::EntryFn entry = nullptr;
  ASSERT_EQ(linked.claim(key, true, entry), LinkedBinaries::Claim::claimed);
  EXPECT_EQ(linked.claim(key, false, entry), LinkedBinaries::Claim::busy);

  const auto fake = reinterpret_cast<detail::EntryFn>(std::uintptr_t{0x1000});
  detail::EntryFn waited = nullptr;
  LinkedBinaries::Claim outcome = LinkedBinaries::Claim::busy;
  std::thread waiter([&] { outcome = linked.claim(key, true, waited); });
  {
    InFlight owned(linked, key);  // releases the claim taken above
    owned.done(fake);
  }
  waiter.join();
  EXPECT_EQ(outcome, LinkedBinaries::Claim::linked);
  EXPECT_EQ(waited, fake);
  EXPECT_EQ(linked.find(key), fake);
}

TEST(LinkedBinaries, AClaimReleasedWithoutAnEntryCanBeClaimedAgain) {
  LinkedBinaries linked;
  const cache::Key key{.high = 3, .low = 4};
  detail::EntryFn entry = nullptr;
  ASSERT_EQ(linked.claim(key, false, entry), LinkedBinaries::Claim::claimed);
  { InFlight owned(linked, key); }  // a build that threw
  EXPECT_EQ(linked.claim(key, false, entry), LinkedBinaries::Claim::claimed);
  EXPECT_FALSE(linked.find(key).has_value());
}

}  // namespace
}  // namespace kiln::runtime
