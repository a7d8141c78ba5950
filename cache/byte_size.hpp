// Sizes as people write them: "500M", "2G", "1.5GiB", "1048576".
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::cache {

// Bytes, or nullopt when `text` is not a size. Suffixes K, M, G, T (with an
// optional "B" or "iB") are powers of 1024; no suffix means bytes.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace kiln::cache
