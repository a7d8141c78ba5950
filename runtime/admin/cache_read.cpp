// Cache::read (kiln/cache.hpp): one entry read whole, verified as a load
// verifies it, and its metadata decoded; for `kiln cache show` and for a
// program that wants an entry's binary (gpu_check launches a CUBIN itself).
#include <chrono>
#include <system_error>
#include <utility>

#include "cache/entry_metadata.hpp"
#include "kiln/cache.hpp"
#include "kiln/errors.hpp"
#include "runtime/admin/cache_impl.hpp"

namespace kiln {

namespace {

CacheBuildRecipe recipe_of(const cache::BuildRecipe& r) {
  return {.opt_level = r.opt_level, .fp_contract = r.fp_contract, .target_cpu = r.target_cpu, .check = r.check,
          .compiler = r.compiler, .gather = r.gather};
}

// The record its metadata gives, with what the file says: its size and time.
CacheRecord decoded_record(const cache::Key& key, const std::filesystem::path& file, const std::string& metadata,
                           std::uint64_t payload_bytes, std::chrono::system_clock::time_point stored) {
  if (metadata.empty())
    throw Error(file.string() + ": the entry carries no metadata: nothing says which kernel it holds");
  std::optional<cache::IndexRecord> decoded = cache::decode_metadata(metadata);
  if (!decoded) throw Error(file.string() + ": its metadata does not decode: " + metadata);
  decoded->key = key;
  decoded->size = payload_bytes;
  decoded->created = decoded->last_used = std::chrono::system_clock::to_time_t(stored);
  return record_of(*decoded);
}

}  // namespace

std::optional<CacheEntry> Cache::read(std::string_view text) const {
  const cache::Key key = key_of(text);
  const cache::DiskStore& store = impl_->store;
  const std::filesystem::path file = store.entry_path(key);
  // get() verifies the whole entry as a load does (and removes a corrupt one unless read-only).
  cache::LookupResult hit = store.get(key);
  if (!hit.payload) {
    if (hit.problem) throw Error(hit.problem->message);
    return std::nullopt;
  }
  const auto metadata = store.read_metadata(key);
  if (!metadata) throw Error(metadata.error().message);
  if (!*metadata) throw Error(file.string() + ": removed while it was read");

  CacheEntry entry;
  std::error_code ignored;
  entry.file = {key.hex(), file, std::filesystem::file_size(file, ignored),
                system_time(std::filesystem::last_write_time(file, ignored))};
  entry.record = decoded_record(key, file, (*metadata)->metadata, hit.payload->size(), entry.file.stored);
  if (const std::optional<cache::BuildRecipe> recipe = cache::decode_recipe((*metadata)->metadata))
    entry.recipe = recipe_of(*recipe);
  entry.payload = std::move(*hit.payload);
  return entry;
}

}  // namespace kiln
