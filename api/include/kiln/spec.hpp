// A specialisation: the values a kernel is specialised on. Domain parameters
// (ints: sizes, index ranges), static parameters (bool, int, double) and,
// optionally, the strides of array arguments. Every domain and static
// parameter the kernel declares must be given; strides not given stay run-time
// values read from the arrays at each call.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kiln/arg.hpp"
#include "kiln/export.hpp"

namespace kiln {

class KILN_API Spec {
 public:
  using Strides = std::vector<std::int64_t>;
  // ICON's blocked layout of an array argument (see blocked()).
  struct Blocks {
    std::int64_t nproma = 0;
    Strides strides;        // empty: read at each call; else rank + 1 strides
    std::int64_t nblks = 0;  // the block count; 0: read at each call
    friend bool operator==(const Blocks&, const Blocks&) = default;
  };
  using Value = std::variant<bool, std::int64_t, double, Strides, Blocks>;

  struct Entry {
    std::string name;  // a parameter, or an array argument for strides
    Value value;
    bool run_time = false;  // a parameter read at run time, not compiled in (see run_time())
  };

  Spec() = default;

  // int and long go in as integers; an integer is accepted for a double
  // parameter when it is exactly representable, never the other way round.
  Spec& set(std::string_view name, bool value) { return put(name, value); }
  Spec& set(std::string_view name, int value) { return put(name, std::int64_t{value}); }
  Spec& set(std::string_view name, long value) { return put(name, std::int64_t{value}); }
  Spec& set(std::string_view name, long long value) { return put(name, std::int64_t{value}); }
  Spec& set(std::string_view name, double value) { return put(name, value); }
  Spec& set(std::string_view name, const char*) = delete;  // would silently become bool

  // The parameter `name`, already set, is read at run time instead of being
  // compiled in: a specialised build then serves every value of it, and only
  // the other values are in the cache key. ICON's choice: levels, strides and
  // flags constant, the horizontal bounds at run time, one binary for all
  // ranks and threads. (Mode::generic makes every value a run-time one.) A
  // later set() keeps the mark. Throws SpecError when `name` is not set or
  // names an array's strides or blocks.
  Spec& run_time(std::string_view name);

  // Fixes the strides (in elements) of an array argument.
  Spec& strides(std::string_view array, std::initializer_list<std::int64_t> strides) {
    return put(array, Strides(strides));
  }
  // Fixes the strides of an array argument to those of `view`.
  Spec& strides_of(std::string_view array, const kiln_arg& view) {
    return put(array, Strides(view.strides, view.strides + view.rank));
  }

  // Array `array`, declared over (horizontal, ...), comes in ICON's blocks:
  // with one dimension more, (nproma, ..., nblks), horizontal index c at
  // (c % nproma, ..., c / nproma). Fields in ICON's (nproma, nlev, nblks) then
  // run a kernel written over (cell, level) with no copy. nproma is part of
  // the specialisation, and so is the block count when given (nblks > 0):
  // one block (nproma = n_cells, GPU runs) then addresses a neighbour with no
  // division, as a flat array does. A generic build reads both from the array.
  Spec& blocked(std::string_view array, std::int64_t nproma, std::int64_t nblks = 0) {
    return put(array, Blocks{nproma, {}, nblks});
  }
  // The same for `view`, an array of that layout: nproma is its first
  // extent, the block count its last, and its strides are fixed too.
  Spec& blocked_like(std::string_view array, const kiln_arg& view) {
    return put(array, Blocks{view.shape[0], Strides(view.strides, view.strides + view.rank),
                             view.rank > 0 ? view.shape[view.rank - 1] : 0});
  }

  // Sorted by name; one entry per name (a later set replaces an earlier one).
  const std::vector<Entry>& entries() const { return entries_; }
  const Entry* find(std::string_view name) const;

  // A byte string that identifies the values exactly (the in-memory lookup key).
  const std::string& canonical() const { return canonical_; }
  std::size_t hash() const { return hash_; }  // of canonical()
  // The same with run-time values left out (their names stay): what a
  // specialised build compiles in, and so what its cache key takes.
  std::string compiled_canonical() const;
  // {"name": value, ...} for logs, the index and metrics; run-time values
  // are listed by name under "kiln_run_time" (no parameter is named kiln*).
  std::string to_json() const;

 private:
  Spec& put(std::string_view name, Value value);

  std::vector<Entry> entries_;
  std::string canonical_;
  std::size_t hash_ = 0;
  std::size_t run_time_count_ = 0;
};

}  // namespace kiln
