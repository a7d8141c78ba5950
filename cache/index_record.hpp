// One row of the index (index.hpp): an entry's description and statistics.
#pragma once

#include <cstdint>
#include <string>

#include "cache/key.hpp"

namespace kiln::cache {

struct IndexRecord {
  Key key;
  std::string kernel;
  std::string specialisation;  // JSON text
  std::string backend;         // "cpu"
  std::string target;          // triple, CPU name, features
  std::uint64_t size = 0;      // payload bytes
  double compile_ms = 0.0;
  std::int64_t created = 0;    // unix seconds
  std::int64_t last_used = 0;  // unix seconds
  std::int64_t hits = 0;
  // A user's kernel (one not embedded in libkiln): the file it was registered
  // from (an absolute path; empty when it was registered as text) and the
  // digest of its text, as the cache key takes it. A manifest carries both, so
  // `kiln warm` can register the file and refuse one that has changed. Both
  // empty for embedded kernels, which need no file.
  std::string kernel_file{};
  std::string kernel_digest{};
};

}  // namespace kiln::cache
