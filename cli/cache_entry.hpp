// One cache entry found by its key, or by a prefix of it, over the tiers a
// Runtime searches (KILN_CACHE_PATH's read-only tiers first, then
// KILN_CACHE_DIR), and read whole: verified as a load verifies it, its
// metadata decoded. For `kiln cache show`, which must never change the cache,
// so every tier is opened read-only (a bad entry is reported, not removed).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/cache.hpp"

namespace kiln::cli {

struct EntryLocation {
  const Cache* tier = nullptr;
  std::string key;
  std::filesystem::path file;
};

// The entry whose key is `text` or starts with it (1 to 32 hex digits, either
// case), over `tiers` (Cache::lookup_tiers). The same key in two tiers is the
// first tier's, as a Runtime finds it. Throws Error, led by "kiln cache show: ",
// for text that is not hex, for no match and for several (naming some of them).
EntryLocation find_entry(const std::vector<Cache>& tiers, std::string_view text);

// The entry of exactly `key`, or nullopt when no tier has a file for it.
std::optional<EntryLocation> find_exact_entry(const std::vector<Cache>& tiers, const std::string& key);

// Reads and verifies the entry (trailer, key, sizes, checksums, trust) and
// decodes its metadata. Throws Error naming the file and what is wrong: a
// corrupt or untrusted entry, one removed meanwhile, metadata that is
// missing or does not decode.
CacheEntry read_entry(const EntryLocation& where);

}  // namespace kiln::cli
