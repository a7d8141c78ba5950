#include "cache/eviction.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <span>
#include <tuple>

#include "base/failure.hpp"
#include "base/log.hpp"
#include "cache/bundle_format.hpp"
#include "cache/entry_metadata.hpp"
#include "cache/entry_shape.hpp"
#include "cache/posix_file.hpp"

namespace kiln::cache {

namespace {

struct Candidate {
  StoredEntry entry;
  std::chrono::sys_seconds used;
};

std::chrono::sys_seconds file_time_seconds(std::filesystem::file_time_type time) {
  return std::chrono::floor<std::chrono::seconds>(std::chrono::file_clock::to_sys(time));
}

// Oldest first: what gc() removes first.
std::vector<Candidate> by_recency(std::vector<StoredEntry> entries, const LastUsed& last_used) {
  std::vector<Candidate> candidates;
  candidates.reserve(entries.size());
  for (StoredEntry& entry : entries) {
    const auto known = last_used.find(entry.key);
    const auto used = known != last_used.end() ? known->second : file_time_seconds(entry.modified);
    candidates.push_back({std::move(entry), used});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.used, a.entry.modified, a.entry.key.high, a.entry.key.low) <
           std::tie(b.used, b.entry.modified, b.entry.key.high, b.entry.key.low);
  });
  return candidates;
}

base::Failure refused(const DiskStore& store) { return {base::Failure::Kind::untrusted, 0, store.refusal()}; }

// Fails when `store` may not remove anything.
base::Result<void> check_removable(const DiskStore& store) {
  if (!store.refusal().empty()) return base::failed(refused(store));
  if (store.options().read_only) {
    return base::failed(
        {base::Failure::Kind::read_only, 0, store.dir().string() + ": the store is read-only: nothing removed"});
  }
  return {};
}

// Why an entry that verified is a bad bundle: its metadata names it a bundle
// (backend "bundle") and its payload is no bundle. Readers refuse such a one
// and the next batch of its kernels writes it again, so verify() reports it
// as damage left in place rather than remove it.
std::optional<base::Failure> bundle_problem(const DiskStore& store, const Key& key, std::span<const char> payload) {
  const auto metadata = store.read_metadata(key);
  if (!metadata || !*metadata) return std::nullopt;
  const std::optional<IndexRecord> record = decode_metadata((*metadata)->metadata);
  if (!record || record->backend != "bundle") return std::nullopt;
  const BundleError error = decode_bundle(payload).error;
  if (error == BundleError::none) return std::nullopt;
  return base::Failure{base::Failure::Kind::corrupt, 0,
                       store.entry_path(key).string() + ": " + std::string(describe(error)) + " (left in place)"};
}

}  // namespace

base::Result<GcResult> gc(const DiskStore& store, std::uint64_t max_bytes, const LastUsed& last_used,
                          std::optional<std::chrono::sys_seconds> used_before) {
  GcResult result;
  std::vector<StoredEntry> entries = store.list();
  for (const StoredEntry& entry : entries) result.bytes_left += entry.file_size;
  if (result.bytes_left <= max_bytes && !used_before) return result;
  const std::vector<Candidate> candidates = by_recency(std::move(entries), last_used);
  // Oldest first: once one is recent enough and the rest fits, nothing more must go.
  const auto must_go = [&](const Candidate& c) {
    return result.bytes_left > max_bytes || (used_before && c.used < *used_before);
  };
  if (candidates.empty() || !must_go(candidates.front())) return result;
  if (base::Result<void> removable = check_removable(store); !removable) return base::failed(removable.error());
  for (const Candidate& candidate : candidates) {
    if (!must_go(candidate)) break;
    const std::filesystem::path path = store.entry_path(candidate.entry.key);
    if (!is_entry_shaped(path)) {  // named as an entry, but kiln did not write it
      result.failures.push_back({base::Failure::Kind::invalid, 0,
                                 path.string() + ": named as a cache entry but not shaped as one: not removed"});
      continue;
    }
    const int error = ::unlink(path.c_str()) == 0 ? 0 : errno;
    if (error != 0 && error != ENOENT) {
      result.failures.push_back(base::errno_failure(path, "unlink", error));
      base::log().debug("kiln cache: cannot evict {}", result.failures.back().message);
      continue;
    }
    result.bytes_left -= candidate.entry.file_size;
    if (error == ENOENT) continue;  // another process removed it meanwhile: gone, but not by us
    ++result.removed;
    result.bytes_freed += candidate.entry.file_size;
    result.removed_keys.push_back(candidate.entry.key);
  }
  base::log().debug("kiln cache: evicted {} entries ({} bytes) from {}", result.removed, result.bytes_freed,
                    store.dir().string());
  return result;
}

base::Result<VerifyResult> verify(const DiskStore& store, std::chrono::seconds temporaries_older_than) {
  if (!store.refusal().empty()) return base::failed(refused(store));
  VerifyResult result;
  for (const StoredEntry& entry : store.list()) {
    LookupResult found = store.get(entry.key);
    if (!found.payload && !found.problem) continue;  // removed meanwhile
    ++result.checked;
    if (found.payload) {
      if (std::optional<base::Failure> bad = bundle_problem(store, entry.key, *found.payload)) {
        ++result.bad;
        result.problems.push_back(std::move(*bad));
      }
      continue;
    }
    ++result.bad;
    if (found.removed) {
      ++result.removed;
      result.removed_keys.push_back(entry.key);
    }
    result.problems.push_back(std::move(*found.problem));
  }
  for (const std::filesystem::path& path : store.odd_files()) {
    struct stat info {};
    const bool known = ::lstat(path.c_str(), &info) == 0;
    if (!known && errno == ENOENT) continue;  // removed meanwhile
    ++result.checked;
    ++result.bad;
    ++result.odd;
    const std::string what = known ? std::string(file_type_name(info.st_mode)) : "not a regular file";
    result.problems.push_back(
        {base::Failure::Kind::io, 0, path.string() + ": " + what + ", not an entry file (left in place)"});
  }
  result.temporaries_removed = store.sweep_temporaries(temporaries_older_than);
  return result;
}

}  // namespace kiln::cache
