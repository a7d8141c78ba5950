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
};

}  // namespace kiln::cache
