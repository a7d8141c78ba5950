#include "cli/gpu/cached_image.hpp"

#include <stdexcept>

namespace kiln::gpu_check {

std::vector<char> cached_image(const Config& config, const std::string& key) {
  for (const Cache& tier : Cache::lookup_tiers(config))
    if (std::optional<CacheEntry> entry = tier.read(key)) return std::move(entry->payload);
  throw std::runtime_error("no cache tier of " + config.cache_dir.string() + " holds " + key);
}

}  // namespace kiln::gpu_check
