// The C ABI of cache administration (kiln/kiln_cache.h) over kiln/cache.hpp:
// every entry point runs in guard(), as the rest of the C ABI.
#include "kiln/kiln_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/c/c_handles.hpp"
#include "kiln/cache.hpp"

struct kiln_cache {
  kiln::Cache cache;
};

namespace {

using kiln::c::fail;
using kiln::c::guard;
using kiln::c::require;

// An entry and its record, as the C struct's strings will hold them.
struct EntryText {
  kiln::CacheEntryFile file;
  std::optional<kiln::CacheRecord> record;
};

std::size_t text_bytes(const EntryText& e) {
  std::size_t bytes = e.file.file.string().size() + 1;
  if (e.record)
    bytes += e.record->kernel.size() + e.record->specialisation.size() + e.record->backend.size() +
             e.record->target.size();
  return bytes + 4;  // the four record strings' ends, empty ones included
}

// Copies `text` to `cursor`, returns where it went and moves the cursor past its end.
const char* put(char*& cursor, const std::string& text) {
  const char* start = cursor;
  std::memcpy(cursor, text.c_str(), text.size() + 1);
  cursor += text.size() + 1;
  return start;
}

// One malloc'ed block: the entries, then their strings (one kiln_free).
kiln_cache_entry* entries_block(const std::vector<EntryText>& entries) {
  std::size_t bytes = entries.size() * sizeof(kiln_cache_entry);
  for (const EntryText& e : entries) bytes += text_bytes(e);
  auto* block = static_cast<kiln_cache_entry*>(std::calloc(1, bytes == 0 ? 1 : bytes));
  if (block == nullptr) throw std::bad_alloc();
  char* cursor = reinterpret_cast<char*>(block + entries.size());
  const std::string none;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const EntryText& e = entries[i];
    kiln_cache_entry& out = block[i];
    std::memcpy(out.key, e.file.key.c_str(), std::min(e.file.key.size(), sizeof out.key - 1));
    out.file = put(cursor, e.file.file.string());
    out.file_bytes = e.file.file_bytes;
    out.stored = std::chrono::system_clock::to_time_t(e.file.stored);
    out.has_record = e.record.has_value() ? 1 : 0;
    out.kernel = put(cursor, e.record ? e.record->kernel : none);
    out.specialisation = put(cursor, e.record ? e.record->specialisation : none);
    out.backend = put(cursor, e.record ? e.record->backend : none);
    out.target = put(cursor, e.record ? e.record->target : none);
    if (e.record) {
      out.payload_bytes = e.record->payload_bytes;
      out.compile_ms = e.record->compile_ms;
      out.last_used = e.record->last_used;
      out.hits = e.record->hits;
    }
  }
  return block;
}

// "<first> (and N more)".
std::string first_of(const std::vector<std::string>& failures) {
  std::string text = failures.front();
  if (failures.size() > 1) text += " (and " + std::to_string(failures.size() - 1) + " more)";
  return text;
}

// Fills `out`; fails (KILN_ERROR) when entries that had to go stayed and the cache does not fit.
void report_gc(const kiln::CacheGcReport& r, kiln_cache_gc_report* out) {
  *out = {r.limit, r.removed, r.bytes_freed, r.bytes_left, r.failures.size()};
  if (!r.failures.empty() && !r.fits())
    fail(KILN_ERROR, "kiln: cache gc: " + first_of(r.failures) + "; " + std::to_string(r.bytes_left) +
                         " bytes left, over the limit of " + std::to_string(r.limit));
}

}  // namespace

extern "C" {

kiln_status kiln_cache_open(const char* dir, int read_only, kiln_cache** out) {
  return guard([&] {
    require(dir && out, "kiln_cache_open: dir and out must not be NULL");
    *out = new kiln_cache{kiln::Cache(dir, {.read_only = read_only != 0})};
  });
}

kiln_status kiln_cache_open_from_config(const kiln_config* config, kiln_cache** out) {
  return guard([&] {
    require(config && out, "kiln_cache_open_from_config: config and out must not be NULL");
    *out = new kiln_cache{kiln::Cache(config->config)};
  });
}

void kiln_cache_close(kiln_cache* cache) { delete cache; }

kiln_status kiln_cache_list(kiln_cache* cache, kiln_cache_entry** entries_out, size_t* count_out) {
  return guard([&] {
    require(cache && entries_out && count_out, "kiln_cache_list: cache, entries_out and count_out must not be NULL");
    const std::vector<kiln::CacheRecord> records = cache->cache.records();  // by key, as the entries
    std::vector<EntryText> entries;
    auto record = records.begin();
    for (kiln::CacheEntryFile& file : cache->cache.entries()) {
      while (record != records.end() && record->key < file.key) ++record;
      const bool indexed = record != records.end() && record->key == file.key;
      entries.push_back({std::move(file), indexed ? std::optional(*record) : std::nullopt});
    }
    *entries_out = entries_block(entries);
    *count_out = entries.size();
  });
}

kiln_status kiln_cache_get_stats(kiln_cache* cache, kiln_cache_stats* out) {
  return guard([&] {
    require(cache && out, "kiln_cache_get_stats: cache and out must not be NULL");
    const kiln::CacheStats s = cache->cache.stats();
    *out = {s.entries, s.bytes, s.indexed, s.hits, s.compile_ms};
  });
}

kiln_status kiln_cache_show(kiln_cache* cache, const char* key, kiln_cache_entry** entry_out) {
  return guard([&] {
    require(cache && key && entry_out, "kiln_cache_show: cache, key and entry_out must not be NULL");
    *entry_out = nullptr;
    std::optional<kiln::CacheEntry> entry = cache->cache.read(key);
    if (entry) *entry_out = entries_block({{std::move(entry->file), std::move(entry->record)}});
  });
}

kiln_status kiln_cache_verify(kiln_cache* cache, kiln_cache_verify_report* out) {
  return guard([&] {
    require(cache && out, "kiln_cache_verify: cache and out must not be NULL");
    const kiln::CacheVerifyReport r = cache->cache.verify();
    *out = {r.checked, r.bad, r.removed, r.odd, r.temporaries_removed, r.damage_left() ? 1 : 0};
  });
}

kiln_status kiln_cache_gc(kiln_cache* cache, uint64_t max_bytes, kiln_cache_gc_report* out) {
  return guard([&] {
    require(cache && out, "kiln_cache_gc: cache and out must not be NULL");
    report_gc(cache->cache.gc(max_bytes), out);
  });
}

kiln_status kiln_cache_gc_age(kiln_cache* cache, uint64_t max_bytes, int64_t max_age_seconds,
                              kiln_cache_gc_report* out) {
  return guard([&] {
    require(cache && out, "kiln_cache_gc_age: cache and out must not be NULL");
    report_gc(cache->cache.gc(max_bytes, std::chrono::seconds(max_age_seconds)), out);
  });
}

kiln_status kiln_cache_clear(kiln_cache* cache, uint64_t* removed_out) {
  return guard([&] {
    require(cache && removed_out, "kiln_cache_clear: cache and removed_out must not be NULL");
    const kiln::CacheClearReport r = cache->cache.clear();
    *removed_out = r.removed;
    if (!r.failures.empty()) fail(KILN_ERROR, "kiln: cache clear: " + first_of(r.failures));
  });
}

kiln_status kiln_cache_reindex(kiln_cache* cache, kiln_cache_reindex_report* out) {
  return guard([&] {
    require(cache && out, "kiln_cache_reindex: cache and out must not be NULL");
    const kiln::CacheReindexReport r = cache->cache.reindex();
    *out = {r.records, r.without_metadata, r.skipped};
  });
}

kiln_status kiln_cache_parse_size(const char* text, uint64_t* bytes_out) {
  return guard([&] {
    require(text && bytes_out, "kiln_cache_parse_size: text and bytes_out must not be NULL");
    const std::optional<std::uint64_t> bytes = kiln::parse_byte_size(text);
    if (!bytes)
      fail(KILN_ERROR_INVALID_ARGUMENT, std::string("kiln: '") + text +
                                            "' is not a size (bytes, or a number with K, M, G or T, powers of "
                                            "1024: 500M, 1.5G)");
    *bytes_out = *bytes;
  });
}

}  // extern "C"
