// What an entry's metadata block holds (entry_format.hpp stores it opaque):
// the index record's descriptive fields as a small JSON object, so the index
// can be rebuilt from the entries alone (index_rebuild.hpp).
//
//   {"kernel": "...", "specialisation": "<JSON text>", "backend": "cpu",
//    "target": "...", "compile_ms": 12.5}
//
// and, for a user's kernel (index_record.hpp), "kernel_file" and "kernel_digest";
// since issue 22 also "build", how the entry was built (BuildRecipe), which
// the index has no place for: `kiln cache show` regenerates the entry's
// translation unit from it and prints its compiler options.
//
//   "build": {"opt_level": "O3", "fp_contract": "on", "target_cpu": "native",
//             "check": false, "compiler": "clang 19.1.7 ...; -std=c++20 ...; lld ...",
//             "gather": "auto"}
//
// Unknown fields are ignored, so later versions may add some (and earlier
// kilns read entries that carry "build"); entries written before it have none.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cache/index.hpp"

namespace kiln::cache {

// How an entry was built beyond its index record: the Config fields that
// went into its key besides the kernel and specialisation (so the key can be
// computed again from them), and the compiler's identity with the fixed flags
// of clang and lld (what no Config field says).
struct BuildRecipe {
  std::string opt_level;    // Config::opt_level: "O3"
  std::string fp_contract;  // Config::fp_contract: "on", "off", "fast"
  std::string target_cpu;   // Config::target_cpu: "native", an x86-64 level or a CPU
  bool check = false;       // Config::check: check mode
  std::string compiler;     // the compiler module's identity; a GPU compiler's version and flags
  // Config::gather: "auto", "on", "off"; "" in entries written before kiln
  // recorded it (their "build" has no "gather": not recorded).
  std::string gather = "auto";
  bool operator==(const BuildRecipe&) const = default;
};

// kernel, specialisation, backend, target and compile_ms of `record` (and
// its kernel file and digest when it has a digest), and `recipe` when given;
// the key, size, times and hits are not stored (the file's name, size and
// mtime give those back).
std::string encode_metadata(const IndexRecord& record, const BuildRecipe* recipe = nullptr);

// The record's fields from metadata text, or nullopt when the text is not a
// JSON object with every field of the right type (compile_ms a finite number
// >= 0). Never throws on bad input: the text comes from files on disk.
std::optional<IndexRecord> decode_metadata(std::string_view text);

// The "build" object of metadata text: nullopt when the text has none (an
// entry written before kiln recorded it) or it is not an object with every
// field of the right type. Never throws on bad input.
std::optional<BuildRecipe> decode_recipe(std::string_view text);

}  // namespace kiln::cache
