// Cache keys: XXH3-128 over a canonical encoding of every input that decides a
// binary. The cache does not know what the fields mean; callers name them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::cache {

struct Key {
  std::uint64_t high = 0;
  std::uint64_t low = 0;

  // 32 lowercase hex digits, high word first.
  std::string hex() const;
  // Parses what hex() writes; returns false on anything else.
  static bool from_hex(std::string_view text, Key& out);

  friend bool operator==(const Key&, const Key&) = default;
};

struct KeyHash {
  std::size_t operator()(const Key& key) const noexcept { return key.low ^ (key.high * 0x9e3779b97f4a7c15ULL); }
};

// Builds a key from named fields. Each field is encoded as
// (type tag, name length, name, value length, value), so no two different
// field sequences can produce the same byte stream. Field order matters:
// callers add fields in a fixed order.
class KeyBuilder {
 public:
  KeyBuilder();
  ~KeyBuilder();
  // A copy goes on from the same state: fields shared by many keys are hashed
  // once, and each key adds its own to a copy (runtime/kernels/cache_key.cpp).
  KeyBuilder(const KeyBuilder& other);
  KeyBuilder& operator=(const KeyBuilder&) = delete;

  KeyBuilder& add(std::string_view name, std::string_view value);
  KeyBuilder& add(std::string_view name, std::int64_t value);
  // Doubles are encoded by their bit pattern: 0.0 and -0.0 give different keys.
  KeyBuilder& add(std::string_view name, double value);
  KeyBuilder& add(std::string_view name, bool value);
  // A string literal would otherwise pick the bool overload (pointer to bool
  // is a standard conversion, to string_view a user-defined one).
  KeyBuilder& add(std::string_view name, const char* value) { return add(name, std::string_view(value)); }

  Key finish() const;

 private:
  void feed(char tag, std::string_view name, const void* value, std::size_t size);
  struct State;
  State* state_;
};

}  // namespace kiln::cache
