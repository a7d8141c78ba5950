#include "cli/cache_entry.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <system_error>
#include <utility>

#include "kiln/errors.hpp"

namespace kiln::cli {
namespace {

constexpr std::size_t kKeyDigits = 32;
// How many of the matching keys an ambiguous prefix's error names.
constexpr std::size_t kNamedMatches = 4;

const std::string kLead = "kiln cache show: ";

std::string folders_of(const std::vector<Cache>& tiers) {
  std::string text;
  for (const Cache& tier : tiers) text += (text.empty() ? "" : ", ") + tier.dir().string();
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

EntryLocation find_entry(const std::vector<Cache>& tiers, std::string_view text) {
  const std::string prefix = key_prefix(text);
  std::map<std::string, EntryLocation> matches;  // emplace keeps the first tier's
  for (const Cache& tier : tiers)
    for (const CacheEntryFile& entry : tier.entries())
      if (entry.key.starts_with(prefix)) matches.emplace(entry.key, EntryLocation{&tier, entry.key, entry.file});
  if (matches.empty())
    throw Error(kLead + "no entry's key starts with '" + std::string(text) + "' in " + folders_of(tiers));
  if (matches.size() > 1) throw Error(ambiguity(text, matches));
  return matches.begin()->second;
}

std::optional<EntryLocation> find_exact_entry(const std::vector<Cache>& tiers, const std::string& key) {
  for (const Cache& tier : tiers) {
    std::error_code ignored;
    const std::filesystem::path file = tier.entry_file(key);
    if (std::filesystem::exists(file, ignored)) return EntryLocation{&tier, key, file};
  }
  return std::nullopt;
}

CacheEntry read_entry(const EntryLocation& where) {
  std::optional<CacheEntry> entry;
  try {
    // Read-only tiers: a bad entry is reported, never removed.
    entry = where.tier->read(where.key);
  } catch (const Error& e) {
    throw Error(kLead + e.what());
  }
  if (!entry) throw Error(kLead + where.file.string() + ": no such entry");
  return std::move(*entry);
}

}  // namespace kiln::cli
