// Explicit little-endian stores and loads. The key encoding and the entry
// format are shared between hosts (a cache folder on a network file system),
// so they never depend on the host's byte order or on struct layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace kiln::cache {

template <typename Uint>
void store_le(char* out, Uint value) {
  static_assert(std::is_unsigned_v<Uint>);
  for (std::size_t i = 0; i < sizeof(Uint); ++i) {
    out[i] = static_cast<char>((value >> (8 * i)) & 0xffU);
  }
}

template <typename Uint>
Uint load_le(const char* in) {
  static_assert(std::is_unsigned_v<Uint>);
  Uint value = 0;
  for (std::size_t i = 0; i < sizeof(Uint); ++i) {
    value |= static_cast<Uint>(static_cast<unsigned char>(in[i])) << (8 * i);
  }
  return value;
}

}  // namespace kiln::cache
