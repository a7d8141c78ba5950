// Sizes as people write them: "500M", "2G", "1.5GiB", "1048576".
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::cache {

// Bytes, or nullopt when `text` is not a size: decimal digits with an
// optional fraction, then optionally K, M, G or T (powers of 1024; "B" or
// "iB" may follow), any case; no suffix means bytes. "1e3", "+5", "0x10",
// " 5" and "inf" are not sizes.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace kiln::cache
