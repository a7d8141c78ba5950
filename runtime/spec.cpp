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

}  // namespace

const Spec::Entry* Spec::find(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

Spec& Spec::put(std::string_view name, Value value) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  if (it != entries_.end() && it->name == name) it->value = std::move(value);
  else entries_.insert(it, Entry{std::string(name), std::move(value)});
  rebuild_canonical();
  return *this;
}

// (name length, name, type index, value bytes) per entry: unambiguous.
void Spec::rebuild_canonical() {
  canonical_.clear();
  for (const auto& [name, value] : entries_) {
    const std::uint32_t length = static_cast<std::uint32_t>(name.size());
    append_bytes(canonical_, &length, sizeof length);
    canonical_ += name;
    canonical_ += static_cast<char>(value.index());
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, Strides>) {
            const std::uint32_t rank = static_cast<std::uint32_t>(v.size());
            append_bytes(canonical_, &rank, sizeof rank);
            append_bytes(canonical_, v.data(), v.size() * sizeof(std::int64_t));
          } else {
            append_bytes(canonical_, &v, sizeof v);
          }
        },
        value);
  }
  hash_ = std::hash<std::string>{}(canonical_);
}

std::string Spec::to_json() const {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const auto& [name, value] : entries_)
    std::visit([&](const auto& v) { json[name] = v; }, value);
  return json.dump();
}

}  // namespace kiln
