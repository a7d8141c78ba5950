// kiln::Spec: the user's specialisation values, kept sorted with a canonical
// byte encoding so that the in-memory lookup hashes one string.
#include <algorithm>
#include <cstring>

#include <nlohmann/json.hpp>

#include "kiln/errors.hpp"
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

// A parameter's value, not an array's strides or blocks: only those can be
// read at run time (Spec::run_time).
bool is_scalar(const Spec::Value& value) {
  return std::holds_alternative<bool>(value) || std::holds_alternative<std::int64_t>(value) ||
         std::holds_alternative<double>(value);
}

// The type byte's high bit marks a run-time value: compiled_canonical()
// keeps the name and that byte and leaves the value out.
constexpr unsigned char kRunTimeBit = 0x80;

std::string encoded(const Spec::Entry& e, bool with_run_time_values = true) {
  std::string out;
  out.reserve(encoded_size(e));
  const std::uint32_t length = static_cast<std::uint32_t>(e.name.size());
  append_bytes(out, &length, sizeof length);
  out += e.name;
  out += static_cast<char>(e.value.index() | (e.run_time ? kRunTimeBit : 0));
  if (e.run_time && !with_run_time_values) return out;
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
    if (it->run_time && !is_scalar(it->value)) {
      it->run_time = false;  // strides or blocks now: those are never run-time values
      --run_time_count_;
    }
  } else {
    it = entries_.insert(it, Entry{std::string(name), std::move(value), false});
  }
  canonical_.insert(offset, encoded(*it));
  hash_ = std::hash<std::string>{}(canonical_);
  return *this;
}

Spec& Spec::run_time(std::string_view name) {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const Entry& e, std::string_view n) { return e.name < n; });
  if (it == entries_.end() || it->name != name)
    throw SpecError("kiln: Spec::run_time('" + std::string(name) + "'): set its value first");
  if (!is_scalar(it->value))
    throw SpecError("kiln: Spec::run_time('" + std::string(name) +
                    "'): an array's strides or blocks are run-time values when not given at all");
  if (it->run_time) return *this;
  std::size_t offset = 0;
  for (auto before = entries_.begin(); before != it; ++before) offset += encoded_size(*before);
  it->run_time = true;
  ++run_time_count_;
  canonical_[offset + sizeof(std::uint32_t) + it->name.size()] = static_cast<char>(it->value.index() | kRunTimeBit);
  hash_ = std::hash<std::string>{}(canonical_);
  return *this;
}

std::string Spec::compiled_canonical() const {
  if (run_time_count_ == 0) return canonical_;
  std::string out;
  for (const Entry& e : entries_) out += encoded(e, false);
  return out;
}

std::string Spec::to_json() const {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  nlohmann::ordered_json run_time = nlohmann::ordered_json::array();
  for (const Entry& e : entries_)
    if (e.run_time) run_time.push_back(e.name);
  for (const auto& [name, value, ignored] : entries_)
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
  if (!run_time.empty()) json["kiln_run_time"] = std::move(run_time);
  return json.dump();
}

}  // namespace kiln
