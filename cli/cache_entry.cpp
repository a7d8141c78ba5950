#include "cli/cache_entry.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "kiln/errors.hpp"

namespace kiln::cli {
namespace {

constexpr std::size_t kKeyDigits = 32;
// How many of the matching keys an ambiguous prefix's error names.
constexpr std::size_t kNamedMatches = 4;

const std::string kLead = "kiln cache show: ";

std::string folders_of(const std::vector<cache::DiskStore>& tiers) {
  std::string text;
  for (const cache::DiskStore& tier : tiers) text += (text.empty() ? "" : ", ") + tier.dir().string();
  return text;
}

// Lowercase hex of 1 to 32 digits, or a thrown Error saying what a key is.
std::string key_prefix(std::string_view text) {
  std::string prefix(text);
  std::transform(prefix.begin(), prefix.end(), prefix.begin(), [](unsigned char c) { return std::tolower(c); });
  const bool hex = std::all_of(prefix.begin(), prefix.end(), [](unsigned char c) { return std::isxdigit(c); });
  if (prefix.empty() || prefix.size() > kKeyDigits || !hex)
    throw Error(kLead + "'" + std::string(text) + "' is not a key: up to " + std::to_string(kKeyDigits) +
                " hex digits, as `kiln cache ls` prints them");
  return prefix;
}

std::string ambiguity(std::string_view text, const std::map<std::string, EntryLocation>& matches) {
  std::string named;
  std::size_t count = 0;
  for (const auto& [hex, where] : matches) {
    if (count++ == kNamedMatches) break;
    named += (named.empty() ? "" : ", ") + hex;
  }
  if (matches.size() > kNamedMatches) named += ", ...";
  return kLead + "'" + std::string(text) + "' is ambiguous: " + std::to_string(matches.size()) +
         " entries' keys start with it (" + named + "); give more digits";
}

}  // namespace

std::vector<cache::DiskStore> read_only_tiers(const Config& config) {
  std::vector<cache::DiskStore> tiers;
  const cache::StoreOptions options{.read_only = true, .trusted_dirs = config.trusted_dirs};
  for (const std::filesystem::path& dir : config.read_only_tiers) tiers.emplace_back(dir, options);
  tiers.emplace_back(config.cache_dir, options);
  return tiers;
}

EntryLocation find_entry(const std::vector<cache::DiskStore>& tiers, std::string_view text) {
  const std::string prefix = key_prefix(text);
  std::map<std::string, EntryLocation> matches;  // emplace keeps the first tier's
  for (const cache::DiskStore& tier : tiers)
    for (const cache::StoredEntry& entry : tier.list())
      if (const std::string hex = entry.key.hex(); hex.starts_with(prefix)) matches.emplace(hex, EntryLocation{&tier, entry.key});
  if (matches.empty())
    throw Error(kLead + "no entry's key starts with '" + std::string(text) + "' in " + folders_of(tiers));
  if (matches.size() > 1) throw Error(ambiguity(text, matches));
  return matches.begin()->second;
}

std::optional<EntryLocation> find_entry(const std::vector<cache::DiskStore>& tiers, const cache::Key& key) {
  for (const cache::DiskStore& tier : tiers) {
    std::error_code ignored;
    if (std::filesystem::exists(tier.entry_path(key), ignored)) return EntryLocation{&tier, key};
  }
  return std::nullopt;
}

EntryContents read_entry(const EntryLocation& where) {
  const cache::DiskStore& tier = *where.tier;
  const std::filesystem::path file = tier.entry_path(where.key);
  // get() verifies the whole entry as a load does; read-only, it removes nothing.
  const cache::LookupResult hit = tier.get(where.key);
  if (!hit.payload) throw Error(kLead + (hit.problem ? hit.problem->message : file.string() + ": no such entry"));
  const auto metadata = tier.read_metadata(where.key);
  if (!metadata) throw Error(kLead + metadata.error().message);
  if (!*metadata) throw Error(kLead + file.string() + ": removed while it was read");
  if ((*metadata)->metadata.empty())
    throw Error(kLead + file.string() + ": the entry carries no metadata: nothing says which kernel it holds");
  std::optional<cache::IndexRecord> record = cache::decode_metadata((*metadata)->metadata);
  if (!record) throw Error(kLead + file.string() + ": its metadata does not decode: " + (*metadata)->metadata);

  EntryContents contents;
  contents.key = where.key;
  contents.file = file;
  std::error_code ignored;
  contents.file_size = std::filesystem::file_size(file, ignored);
  contents.payload_size = hit.payload->size();
  contents.stored = std::filesystem::last_write_time(file, ignored);
  contents.record = std::move(*record);
  contents.recipe = cache::decode_recipe((*metadata)->metadata);
  return contents;
}

}  // namespace kiln::cli
