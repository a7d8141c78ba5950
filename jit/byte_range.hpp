// Bounds of byte ranges read from untrusted bytes (ELF objects from the cache).
#pragma once

#include <cstdint>

namespace kiln::jit {

// [offset, offset + size) within [0, limit), without overflow.
inline bool fits(std::uint64_t offset, std::uint64_t size, std::uint64_t limit) {
  return offset <= limit && size <= limit - offset;
}

}  // namespace kiln::jit
