// kiln::Spec: the user's specialisation values, kept sorted with a canonical
// byte encoding so that the in-memory lookup hashes one string.
#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "kiln/spec.hpp"

namespace kiln {
namespace {

void append_bytes(std::string& out, const void* data, std::size_t size) {
  out.append(static_cast<const char*>(data), size);
}

// An entry's canonical bytes: (name length, name, type index, value bytes),
// unambiguous; strides as (rank, strides).
std::size_t strides_size(const Spec::Strides& strides) {
  return sizeof(std::uint32_t) + strides.size() * sizeof(std::int64_t);
}

std::size_t encoded_size(const Spec::Entry& e) {
  const std::size_t value = std::visit(
      [](const auto& v) -> std::size_t {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Spec::Strides>) return strides_size(v);
        else if constexpr (std::is_same_v<T, Spec::Blocks>)
          return sizeof v.nproma + strides_size(v.strides) + sizeof v.nblks;
        else return sizeof v;
      },
      e.value);
  return sizeof(std::uint32_t) + e.name.size() + 1 + value;
}

void append_strides(std::string& out, const Spec::Strides& strides) {
  const std::uint32_t rank = static_cast<std::uint32_t>(strides.size());
  append_bytes(out, &rank, sizeof rank);
  append_bytes(out, strides.data(), strides.size() * sizeof(std::int64_t));
}

std::string encoded(const Spec::Entry& e) {
  std::string out;
  out.reserve(encoded_size(e));
  const std::uint32_t length = static_cast<std::uint32_t>(e.name.size());
  append_bytes(out, &length, sizeof length);
  out += e.name;
  out += static_cast<char>(e.value.index());
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Spec::Strides>) {
          append_strides(out, v);
        } else if constexpr (std::is_same_v<T, Spec::Blocks>) {
          append_bytes(out, &v.nproma, sizeof v.nproma);
          append_strides(out, v.strides);
          append_bytes(out, &v.nblks, sizeof v.nblks);
        } else {
          append_bytes(out, &v, sizeof v);
        }
      },
      e.value);
  return out;
}

}  // namespace

const Spec::Entry* Spec::find(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

// The canonical string is the entries' encodings in order: an entry's bytes
// are spliced in at its place (re-encoding every entry on each set made a
// spec of n values cost n² encodings).
Spec& Spec::put(std::string_view name, Value value) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  std::size_t offset = 0;
  for (auto before = entries_.begin(); before != it; ++before) offset += encoded_size(*before);
  if (it != entries_.end() && it->name == name) {
    canonical_.erase(offset, encoded_size(*it));
    it->value = std::move(value);
  } else {
    it = entries_.insert(it, Entry{std::string(name), std::move(value)});
  }
  canonical_.insert(offset, encoded(*it));
  hash_ = std::hash<std::string>{}(canonical_);
  return *this;
}

std::string Spec::to_json() const {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const auto& [name, value] : entries_)
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Spec::Blocks>) {
            json[name] = {{"nproma", v.nproma}};
            if (!v.strides.empty()) json[name]["strides"] = v.strides;
            if (v.nblks > 0) json[name]["nblks"] = v.nblks;
          } else {
            json[name] = v;
          }
        },
        value);
  return json.dump();
}

}  // namespace kiln
