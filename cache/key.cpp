#include "cache/key.hpp"

#include <bit>

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t by value: no separate allocation
#include <xxhash.h>

#include "cache/little_endian.hpp"

namespace kiln::cache {

namespace {

// One tag per value type, so add("n", int64 1) and add("n", "\x01\0...") differ.
// Never renumber: the tags are part of every stored key.
constexpr char kTagString = 's';
constexpr char kTagInt64 = 'i';
constexpr char kTagDouble = 'd';
constexpr char kTagBool = 'b';

constexpr char kHexDigits[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case too: from_hex accepts only what hex() writes
}

void append_hex(std::string& out, std::uint64_t word) {
  for (int shift = 60; shift >= 0; shift -= 4) out += kHexDigits[(word >> shift) & 0xfU];
}

bool parse_word(std::string_view text, std::uint64_t& out) {
  std::uint64_t word = 0;
  for (char c : text) {
    const int digit = hex_value(c);
    if (digit < 0) return false;
    word = (word << 4) | static_cast<std::uint64_t>(digit);
  }
  out = word;
  return true;
}

}  // namespace

std::string Key::hex() const {
  std::string out;
  out.reserve(32);
  append_hex(out, high);
  append_hex(out, low);
  return out;
}

bool Key::from_hex(std::string_view text, Key& out) {
  Key parsed;
  if (text.size() != 32) return false;
  if (!parse_word(text.substr(0, 16), parsed.high) || !parse_word(text.substr(16), parsed.low)) return false;
  out = parsed;  // untouched on failure
  return true;
}

struct KeyBuilder::State {
  XXH3_state_t xxh;
};

KeyBuilder::KeyBuilder() : state_(new State) { XXH3_128bits_reset(&state_->xxh); }

KeyBuilder::KeyBuilder(const KeyBuilder& other) : state_(new State) {
  XXH3_copyState(&state_->xxh, &other.state_->xxh);
}

KeyBuilder::~KeyBuilder() { delete state_; }

// (tag, u64 LE name length, name, u64 LE value length, value): lengths make
// the boundaries explicit, so ("ab","c") and ("a","bc") hash different bytes.
void KeyBuilder::feed(char tag, std::string_view name, const void* value, std::size_t size) {
  char length[8];
  XXH3_128bits_update(&state_->xxh, &tag, 1);
  store_le<std::uint64_t>(length, name.size());
  XXH3_128bits_update(&state_->xxh, length, sizeof length);
  XXH3_128bits_update(&state_->xxh, name.data(), name.size());
  store_le<std::uint64_t>(length, size);
  XXH3_128bits_update(&state_->xxh, length, sizeof length);
  XXH3_128bits_update(&state_->xxh, value, size);
}

KeyBuilder& KeyBuilder::add(std::string_view name, std::string_view value) {
  feed(kTagString, name, value.data(), value.size());
  return *this;
}

KeyBuilder& KeyBuilder::add(std::string_view name, std::int64_t value) {
  char bytes[8];
  store_le(bytes, static_cast<std::uint64_t>(value));
  feed(kTagInt64, name, bytes, sizeof bytes);
  return *this;
}

KeyBuilder& KeyBuilder::add(std::string_view name, double value) {
  char bytes[8];
  store_le(bytes, std::bit_cast<std::uint64_t>(value));
  feed(kTagDouble, name, bytes, sizeof bytes);
  return *this;
}

KeyBuilder& KeyBuilder::add(std::string_view name, bool value) {
  const char byte = value ? 1 : 0;
  feed(kTagBool, name, &byte, 1);
  return *this;
}

// The digest leaves the state as it is: finish() may be called again, and
// more fields added afterwards.
Key KeyBuilder::finish() const {
  const XXH128_hash_t hash = XXH3_128bits_digest(&state_->xxh);
  return Key{hash.high64, hash.low64};
}

}  // namespace kiln::cache
