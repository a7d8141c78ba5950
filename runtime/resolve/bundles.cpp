#include "runtime/resolve/bundles.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "base/log.hpp"
#include "cache/bundle_format.hpp"
#include "cache/index_record.hpp"
#include "runtime/load/bundle_mapping.hpp"

namespace kiln::runtime {

using Clock = std::chrono::steady_clock;

std::vector<cache::Key> bundle_members(std::span<const Job> jobs) {
  std::vector<cache::Key> keys;
  for (const Job& job : jobs) {
    if (job.gpu) return {};
    keys.push_back(job.key);
  }
  const auto before = [](const cache::Key& a, const cache::Key& b) {
    return a.high != b.high ? a.high < b.high : a.low < b.low;
  };
  std::sort(keys.begin(), keys.end(), before);
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (keys.size() < 2) return {};
  return keys;
}

namespace {

// Why a decoded bundle is not the bundle of `keys`; empty when it is.
std::string refusal(const cache::DecodedBundle& bundle, const std::vector<cache::Key>& keys) {
  if (bundle.error != cache::BundleError::none) return std::string(cache::describe(bundle.error));
  // The key names the set, but only the table proves it: a forged or
  // colliding bundle must not hand out another kernel's binary.
  if (bundle.members.size() != keys.size()) return "it holds another set of kernels";
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (bundle.members[i].key != keys[i]) return "it holds another set of kernels";
  return {};
}

}  // namespace

BundleEntries load_bundle(CacheTiers& cache, Metrics& metrics, std::span<const Job> jobs) {
  const std::vector<cache::Key> keys = bundle_members(jobs);
  if (keys.empty()) return {};
  const cache::Key key = cache::bundle_key(keys);
  // The one file is looked up, and its time counted, under the first job's name.
  const cache::LookupResult found = cache.lookup(key, jobs.front().metrics_name);
  if (!found.payload) return {};
  const auto start = Clock::now();
  const std::span<const char> payload(*found.payload);
  const cache::DecodedBundle bundle = cache::decode_bundle(payload);
  if (const std::string why = refusal(bundle, keys); !why.empty()) {
    base::log().warn("kiln cache: refusing bundle {}: {}; loading its kernels one by one", found.file.string(), why);
    return {};
  }
  const EntryFile file{found.file, found.file_device, found.file_inode, found.descriptor.fd()};
  const char* base = map_bundle(file, payload.size(), "cache bundle " + key.hex());
  if (base == nullptr) return {};
  BundleEntries entries;
  for (const Job& job : jobs) {
    if (entries.contains(job.key)) continue;
    const cache::BundleSlot& slot = *bundle.find(job.key);  // the set was checked above
    void* address = bundle_member(base, payload.subspan(slot.offset, slot.size), slot.offset, job.symbol);
    if (address == nullptr) continue;
    entries.emplace(job.key, reinterpret_cast<detail::EntryFn>(address));
    metrics.count_disk_hit(job.metrics_name);
    cache.note_hit(job.key);  // keeps the kernel's own entry as recent as its use
  }
  cache.note_hit(key);
  metrics.record(jobs.front().metrics_name, "load", ms_since(start));
  return entries;
}

bool store_bundle(CacheTiers& cache, const std::vector<std::pair<cache::Key, std::vector<char>>>& members) {
  std::vector<cache::BundleInput> inputs;
  std::vector<cache::Key> keys;
  for (const auto& [key, binary] : members) {
    inputs.push_back({key, binary});
    keys.push_back(key);
  }
  const std::optional<std::string> payload = cache::encode_bundle(std::move(inputs));
  if (!payload) {
    base::log().debug("kiln cache: no bundle of {} kernels (fewer than 2, too many, or a key twice)", members.size());
    return false;
  }
  cache::IndexRecord record;
  record.key = cache::bundle_key(std::move(keys));
  record.kernel = "kiln.bundle";
  record.specialisation = "{\"members\":" + std::to_string(members.size()) + "}";
  record.backend = "bundle";
  record.size = payload->size();
  return cache.store_bundle(record, *payload);
}

bool store_batch_bundle(CacheTiers& cache, std::span<const Job> jobs) {
  if (!cache.writable()) return false;
  if (bundle_members(jobs).empty()) return false;
  std::vector<std::pair<cache::Key, std::vector<char>>> members;
  for (const Job& job : jobs) {
    const auto same = [&](const auto& member) { return member.first == job.key; };
    if (std::any_of(members.begin(), members.end(), same)) continue;
    // Through the tiers' verified read: a bundle holds only what an entry held.
    std::optional<std::vector<char>> binary = cache.read(job.key, job.metrics_name);
    if (!binary) {
      base::log().debug("kiln cache: no bundle of this batch: {} ({}) has no entry", job.metrics_name, job.key.hex());
      return false;
    }
    members.emplace_back(job.key, std::move(*binary));
  }
  return store_bundle(cache, members);
}

}  // namespace kiln::runtime
