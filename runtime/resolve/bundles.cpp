#include "runtime/resolve/bundles.hpp"

#include <algorithm>
#include <chrono>
#include <optional>
#include <ranges>
#include <unordered_set>

#include "base/log.hpp"
#include "cache/bundle_format.hpp"
#include "cache/index_record.hpp"
#include "runtime/load/bundle_mapping.hpp"

namespace kiln::runtime {

using Clock = std::chrono::steady_clock;

namespace {

// Keys in a bundle's order (cache/bundle_format.hpp): ascending, high word first.
bool before(const cache::Key& a, const cache::Key& b) { return a.high != b.high ? a.high < b.high : a.low < b.low; }

}  // namespace

std::vector<cache::Key> bundle_members(std::span<const Job> jobs) {
  std::vector<cache::Key> keys;
  for (const Job& job : jobs) {
    if (job.gpu) return {};
    keys.push_back(job.key);
  }
  std::sort(keys.begin(), keys.end(), before);
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (keys.size() < 2) return {};
  return keys;
}

namespace {

// Why a decoded bundle is not one of `keys` (ascending); empty when it is.
std::string refusal(const cache::DecodedBundle& bundle, const std::vector<cache::Key>& keys) {
  if (bundle.error != cache::BundleError::none) return std::string(cache::describe(bundle.error));
  // The key names the set, but only the table proves it: a forged or
  // colliding bundle must not hand out another kernel's binary. It may hold
  // fewer: the kernels that run from it (bundle_mapping.hpp).
  const auto member_keys = bundle.members | std::views::transform(&cache::BundleSlot::key);
  if (!std::includes(keys.begin(), keys.end(), member_keys.begin(), member_keys.end(), before))
    return "it holds kernels of another set";
  return {};
}

void warn_refused(const std::filesystem::path& file, const std::string& why) {
  base::log().warn("kiln cache: refusing bundle {}: {}; loading its kernels one by one", file.string(), why);
}

// The bundle of `keys` from the tiers, read, its table decoded and checked
// (refused ones logged); nullopt when there is no good one.
std::optional<std::pair<cache::LookupResult, cache::DecodedBundle>> find_bundle(CacheTiers& cache,
                                                                                  const std::vector<cache::Key>& keys,
                                                                                  const std::string& metrics_name) {
  cache::LookupResult found = cache.lookup(cache::bundle_key(keys), metrics_name);
  if (!found.payload) return std::nullopt;
  cache::DecodedBundle bundle = cache::decode_bundle(*found.payload);
  if (const std::string why = refusal(bundle, keys); !why.empty()) {
    warn_refused(found.file, why);
    return std::nullopt;
  }
  return std::pair{std::move(found), std::move(bundle)};
}

}  // namespace

std::optional<BundleEntries> load_bundle(CacheTiers& cache, Metrics& metrics, std::span<const Job> jobs) {
  const std::vector<cache::Key> keys = bundle_members(jobs);
  if (keys.empty()) return std::nullopt;
  const cache::Key key = cache::bundle_key(keys);
  const std::string& name = jobs.front().metrics_name;  // the one file is looked up, and timed, under it
  // Mapped first and checked in the mapping: the bytes checked are the bytes
  // the kernels run from, with no copy read beside them (~0.6 ms of 200 kernels).
  BundleMapping mapping;
  const cache::MappedLookup found = cache.lookup_mapped(
      key, name, [&](const cache::OpenedEntry& file) { return mapping.map(file, "cache bundle " + key.hex()); });
  if (found.unmapped) {
    // Not mappable here (a noexec mount) or no entry file: read, the lookup
    // says which. A good bundle is kept, and its kernels load one by one.
    if (!find_bundle(cache, keys, name)) return std::nullopt;
    return BundleEntries{};
  }
  if (!found.payload) return std::nullopt;
  const auto start = Clock::now();
  const std::span<const char> payload = *found.payload;  // at the mapping's start (entry_format.hpp)
  const cache::DecodedBundle bundle = cache::decode_bundle(payload);
  const auto refuse = [&](const std::string& why) {
    warn_refused(found.file, why);
    return std::nullopt;
  };
  if (const std::string why = refusal(bundle, keys); !why.empty()) return refuse(why);
  std::unordered_map<cache::Key, const Job*, cache::KeyHash> job_of;
  for (const Job& job : jobs) job_of.emplace(job.key, &job);
  BundleEntries entries;
  for (const cache::BundleSlot& slot : bundle.members) {
    const Job& job = *job_of.at(slot.key);  // refusal() checked every member is a job's
    void* address = bundle_member(mapping.base(), payload.subspan(slot.offset, slot.size), slot.offset, job.symbol);
    // Writers bundle only kernels that run from it: this image is not the key's.
    if (address == nullptr) return refuse("kernel " + slot.key.hex() + " does not run from it");
    entries.emplace(slot.key, reinterpret_cast<detail::EntryFn>(address));
  }
  mapping.keep();  // its kernels are handed out
  for (const auto& [member, entry] : entries) {
    metrics.count_disk_hit(job_of.at(member)->metrics_name);
    cache.note_hit(member);  // keeps the kernel's own entry as recent as its use
  }
  cache.note_hit(key);
  metrics.record(name, "load", ms_since(start));
  return entries;
}

bool store_bundle(CacheTiers& cache, const std::vector<cache::Key>& set,
                  const std::vector<std::pair<cache::Key, std::vector<char>>>& members) {
  std::vector<cache::BundleInput> inputs;
  for (const auto& [key, binary] : members) inputs.push_back({key, binary});
  const std::optional<std::string> payload = cache::encode_bundle(std::move(inputs));
  if (!payload) {
    base::log().debug("kiln cache: no bundle of {} kernels (too many, or a key twice)", members.size());
    return false;
  }
  cache::IndexRecord record;
  record.key = cache::bundle_key(set);
  record.kernel = "kiln.bundle";
  record.specialisation =
      "{\"members\":" + std::to_string(members.size()) + ",\"of\":" + std::to_string(set.size()) + "}";
  record.backend = "bundle";
  record.size = payload->size();
  return cache.store_bundle(record, *payload);
}

bool store_batch_bundle(CacheTiers& cache, std::span<const Job> jobs) {
  if (!cache.writable()) return false;
  if (bundle_members(jobs).empty()) return false;
  std::vector<std::pair<cache::Key, std::vector<char>>> members;
  std::unordered_set<cache::Key, cache::KeyHash> seen;
  for (const Job& job : jobs) {
    if (!seen.insert(job.key).second) continue;
    // Through the tiers' verified read: a bundle holds only what an entry held.
    std::optional<std::vector<char>> binary = cache.read(job.key, job.metrics_name);
    if (!binary) {
      base::log().debug("kiln cache: no bundle of this batch: {} ({}) has no entry", job.metrics_name, job.key.hex());
      return false;
    }
    // Only what runs from the bundle's mapping: the others load from their entries.
    if (runs_from_bundle(*binary, job.symbol)) members.emplace_back(job.key, std::move(*binary));
  }
  return store_bundle(cache, bundle_members(jobs), members);
}

std::optional<BundleBytes> read_bundle_bytes(CacheTiers& cache, const std::vector<cache::Key>& keys,
                                             const std::string& metrics_name) {
  if (keys.size() < 2) return std::nullopt;
  const auto good = find_bundle(cache, keys, metrics_name);
  if (!good) return std::nullopt;
  const auto& [found, bundle] = *good;
  BundleBytes out;
  for (const cache::BundleSlot& slot : bundle.members) {
    const auto image = std::span<const char>(*found.payload).subspan(slot.offset, slot.size);
    // Writers bundle only kernels that run from it: this image is not the key's.
    if (!runs_from_bundle(image, entry_symbol(slot.key))) {
      warn_refused(found.file, "kernel " + slot.key.hex() + " does not run from it");
      return std::nullopt;
    }
    out.emplace(slot.key, std::vector<char>(image.begin(), image.end()));
  }
  cache.note_hit(cache::bundle_key(keys));
  return out;
}

bool store_bundle_of(CacheTiers& cache, const BundleBytes& binaries) {
  if (!cache.writable() || binaries.size() < 2) return false;
  std::vector<cache::Key> set;
  std::vector<std::pair<cache::Key, std::vector<char>>> members;
  for (const auto& [key, binary] : binaries) {
    set.push_back(key);
    if (runs_from_bundle(binary, entry_symbol(key))) members.emplace_back(key, binary);
  }
  std::sort(set.begin(), set.end(), before);
  return store_bundle(cache, set, members);
}

}  // namespace kiln::runtime
