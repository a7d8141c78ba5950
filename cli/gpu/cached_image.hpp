// A GPU kernel's binary as the cache holds it (CUBIN or PTX), read through
// kiln's public cache API from the tiers a Runtime of `config` searches, and
// the entry symbol kiln gives it: what the raw baselines load themselves.
#pragma once

#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::gpu_check {

// Throws std::runtime_error when no tier holds `key`.
std::vector<char> cached_image(const Config& config, const std::string& key);
inline std::string entry_symbol(const std::string& key) { return "kiln_" + key; }

}  // namespace kiln::gpu_check
