// What decides a compiled binary, and the cache key over it. Every field goes
// into the key; tests change each one and expect a different key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cache/key.hpp"

namespace kiln::runtime {

// Bumped whenever kiln's binary conventions change (entry ABI, codegen shape).
// 2: the entry takes argument pointers; 3: an ELF shared object linked by lld;
// 4: the entry takes the call's thread context.
inline constexpr std::int64_t kBinaryFormatVersion = 4;

// A digest of the code generator's own sources (computed at build time): with
// the kernel source, the prelude, the mode and the specialisation it decides
// the generated translation unit, which a warm start therefore never builds.
std::string_view codegen_identity();

struct KeyInputs {
  std::string_view codegen = codegen_identity();
  std::string_view kernel_source;     // text_digest() of the kernel's text as registered (KernelInfo::source_digest)
  std::string_view prelude;           // text_digest() of kiln's kernel prelude
  std::string_view specialisation;    // canonical values; empty for generic builds
  std::string_view mode;              // "specialised" | "generic"
  std::string_view backend;           // "cpu"
  std::string_view triple;
  std::string_view cpu;
  std::string_view features;
  std::string_view toolchain;         // compiler module fingerprint (LLVM version, module bytes)
  std::string_view flags;             // optimisation flags
  std::int64_t format_version = kBinaryFormatVersion;
};

cache::Key compute_key(const KeyInputs& inputs);

// XXH3-128 of a text, in hex. The key takes the digests of the long texts
// (the 17 KB prelude, a kernel's source), each computed once, not the texts:
// hashing them for every key cost ~1.5 µs of each warm resolution.
std::string text_digest(std::string_view text);

// text_digest() of the embedded prelude, computed once per process.
std::string_view prelude_digest();

}  // namespace kiln::runtime
