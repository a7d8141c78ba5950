#include "runtime/collective/messages.hpp"

#include <cstdint>
#include <cstring>
#include <string_view>

#include "kiln/errors.hpp"

namespace kiln::runtime {
namespace {

void put_u64(std::vector<char>& out, std::uint64_t value) {
  const char* bytes = reinterpret_cast<const char*>(&value);
  out.insert(out.end(), bytes, bytes + sizeof value);
}

std::uint64_t get_u64(const std::vector<char>& in, std::size_t& at) {
  std::uint64_t value = 0;
  if (at + sizeof value > in.size()) throw Error("kiln: collective resolution: a truncated message");
  std::memcpy(&value, in.data() + at, sizeof value);
  at += sizeof value;
  return value;
}

std::vector<char> bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

}  // namespace

void pack(std::vector<char>& out, char status, std::span<const char> bytes) {
  out.push_back(status);
  put_u64(out, bytes.size());
  out.insert(out.end(), bytes.begin(), bytes.end());
}

Unpacked unpack(const std::vector<char>& in, std::size_t& at) {
  if (at >= in.size()) throw Error("kiln: collective resolution: a truncated message");
  Unpacked u;
  u.status = in[at++];
  const std::uint64_t size = get_u64(in, at);
  if (size > in.size() - at) throw Error("kiln: collective resolution: a truncated message");
  u.bytes.assign(in.begin() + static_cast<std::ptrdiff_t>(at), in.begin() + static_cast<std::ptrdiff_t>(at + size));
  at += size;
  return u;
}

std::vector<char> encode(const Asked& asked) {
  std::vector<char> out;
  if (asked.failure) pack(out, asked.failure->status, asked.failure->bytes);
  else pack(out, kObject, {});
  put_u64(out, asked.keys.size());
  for (std::size_t i = 0; i < asked.keys.size(); ++i) {
    put_u64(out, asked.keys[i].high);
    put_u64(out, asked.keys[i].low);
    pack(out, kObject, bytes_of(asked.names[i]));
  }
  return out;
}

Asked decode(const std::vector<char>& in) {
  Asked asked;
  std::size_t at = 0;
  if (Unpacked head = unpack(in, at); head.status != kObject) asked.failure = std::move(head);
  const std::uint64_t count = get_u64(in, at);
  for (std::uint64_t i = 0; i < count; ++i) {
    cache::Key key;
    key.high = get_u64(in, at);
    key.low = get_u64(in, at);
    const Unpacked name = unpack(in, at);
    asked.keys.push_back(key);
    asked.names.emplace_back(name.bytes.begin(), name.bytes.end());
  }
  return asked;
}

}  // namespace kiln::runtime
