// The messages the members of a collective resolution send each other
// (collective.cpp): what each asked for, and shares of objects or failures.
// Bytes from another rank are checked as they are read: a truncated message
// is an Error naming the collective resolution, never a read past its end.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/key.hpp"
#include "runtime/collective/failure_codec.hpp"

namespace kiln::runtime {

// One share of a message: a status byte, a length, then the bytes: an
// object; for a compile error the kernel's name, a NUL and the diagnostics;
// for any other error its message (failure_codec.hpp).
void pack(std::vector<char>& out, char status, std::span<const char> bytes);
// The share at `at`, which moves past it. Throws Error when truncated.
Unpacked unpack(const std::vector<char>& in, std::size_t& at);

// What one member asked for: its distinct keys and their kernels' metrics
// names, or why its requests did not prepare (then nothing else).
struct Asked {
  std::optional<Unpacked> failure;
  std::vector<cache::Key> keys;
  std::vector<std::string> names;
};

std::vector<char> encode(const Asked& asked);
// Throws Error when `in` is truncated.
Asked decode(const std::vector<char>& in);

}  // namespace kiln::runtime
