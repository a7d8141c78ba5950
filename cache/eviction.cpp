#include "cache/eviction.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <tuple>

#include "base/failure.hpp"
#include "base/log.hpp"

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

// Why `store` may not remove anything, or empty.
std::string removal_refusal(const DiskStore& store) {
  if (!store.refusal().empty()) return store.refusal();
  if (store.options().read_only) return store.dir().string() + ": the store is read-only: nothing removed";
  return {};
}

}  // namespace

GcResult gc(const DiskStore& store, std::uint64_t max_bytes, const LastUsed& last_used) {
  GcResult result;
  std::vector<StoredEntry> entries = store.list();
  for (const StoredEntry& entry : entries) result.bytes_left += entry.file_size;
  if (result.bytes_left <= max_bytes) return result;
  result.error = removal_refusal(store);
  if (!result.error.empty()) return result;
  for (const Candidate& candidate : by_recency(std::move(entries), last_used)) {
    if (result.bytes_left <= max_bytes) break;
    const std::filesystem::path path = store.entry_path(candidate.entry.key);
    const int error = ::unlink(path.c_str()) == 0 ? 0 : errno;
    if (error != 0 && error != ENOENT) {
      base::log().warn("kiln cache: cannot evict {}", base::errno_text(path, "unlink", error));
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

VerifyResult verify(const DiskStore& store, std::chrono::seconds temporaries_older_than) {
  VerifyResult result;
  result.error = store.refusal();
  if (!result.error.empty()) return result;
  for (const StoredEntry& entry : store.list()) {
    LookupResult found = store.get(entry.key);
    if (!found.payload && found.problem.empty()) continue;  // removed meanwhile
    ++result.checked;
    if (found.payload) continue;
    ++result.bad;
    if (found.removed) {
      ++result.removed;
      result.removed_keys.push_back(entry.key);
    }
    result.problems.push_back(std::move(found.problem));
  }
  result.temporaries_removed = store.sweep_temporaries(temporaries_older_than);
  return result;
}

}  // namespace kiln::cache
