// One cache entry found by its key, or by a prefix of it, over the tiers a
// Runtime searches (KILN_CACHE_PATH's read-only tiers first, then
// KILN_CACHE_DIR), and read whole: verified as a load verifies it, its
// metadata decoded. For `kiln cache show`, which must never change the cache,
// so every tier is opened read-only (a bad entry is reported, not removed).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/disk_store.hpp"
#include "cache/entry_metadata.hpp"
#include "cache/index_record.hpp"
#include "cache/key.hpp"
#include "kiln/runtime.hpp"

namespace kiln::cli {

// The tiers of `config`, in the order a Runtime searches them, all read-only.
std::vector<cache::DiskStore> read_only_tiers(const Config& config);

struct EntryLocation {
  const cache::DiskStore* tier = nullptr;
  cache::Key key;
};

// The entry whose key is `text` or starts with it (1 to 32 hex digits, either
// case). The same key in two tiers is the first tier's, as a Runtime finds
// it. Throws Error, led by "kiln cache show: ", for text that is not hex,
// for no match and for several (naming some of them).
EntryLocation find_entry(const std::vector<cache::DiskStore>& tiers, std::string_view text);

// The entry of exactly `key`, or nullopt when no tier has a file for it.
std::optional<EntryLocation> find_entry(const std::vector<cache::DiskStore>& tiers, const cache::Key& key);

struct EntryContents {
  cache::Key key;
  std::filesystem::path file;
  std::uint64_t file_size = 0;
  std::uint64_t payload_size = 0;      // the binary's bytes
  std::filesystem::file_time_type stored;  // the file's modification time: when it was stored
  cache::IndexRecord record;           // kernel, specialisation, backend, target, compile_ms, user file
  std::optional<cache::BuildRecipe> recipe;  // none in entries written before kiln recorded it
};

// Reads and verifies the entry (trailer, key, sizes, checksums, trust) and
// decodes its metadata. Throws Error naming the file and what is wrong: a
// corrupt or untrusted entry, one removed meanwhile, metadata that is
// missing or does not decode.
EntryContents read_entry(const EntryLocation& where);

}  // namespace kiln::cli
