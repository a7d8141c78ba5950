// The obvious alternative kiln_bench measures kiln against: the specialised
// C++ source written to a file, `g++ -O3 -march=native -shared -fPIC`, and
// dlopen + dlsym of the result. Its source is exactly the translation unit
// kiln compiles (kiln's own code generator, lang/, over the embedded prelude
// and kernel), with the entry named kAltSymbol (process_kernels.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln_bench {

using EntryFn = int (*)(const kiln_arg* const*, const kiln_value*, const kiln_context*);

// The translation unit kiln compiles for (kernel, spec), its entry named kAltSymbol.
std::string alternative_source(std::string_view name, const kiln::Spec& spec);

std::vector<std::string> gpp_command(const std::filesystem::path& source, const std::filesystem::path& output);

// Builds several (source, shared object) pairs with g++, two at a time (set-up only, not timed).
void gpp_build_all(const std::vector<std::pair<std::filesystem::path, std::filesystem::path>>& jobs);

// A g++ shared object loaded: its dlopen handle and its entry.
struct Loaded {
  void* handle = nullptr;
  EntryFn entry = nullptr;
};
Loaded load_so(const std::filesystem::path& so);

}  // namespace kiln_bench
