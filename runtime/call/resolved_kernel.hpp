// What a Kernel handle points at: the entry address, the parameter block for
// generic builds and what a call must look like. Owned by the Runtime.
#pragma once

#include <atomic>
#include <memory>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cache/key.hpp"
#include "kiln/arg.hpp"
#include "kiln/kernel.hpp"
#include "kiln/spec.hpp"
#include "runtime/call/hit_counter.hpp"
#include "runtime/call/temporaries.hpp"
#include "lang/parser.hpp"
#include "runtime/metrics/metrics.hpp"

namespace kiln::detail {

// The entry every kernel binary exports (kBinaryFormatVersion 4): args[i]
// points at argument i, context is this thread's part of a call on several
// (nullptr: one thread); returns 0, or 1 + the index of an argument whose
// strides differ from the specialised ones, or -1 (extents), -2 (check mode).
// (EntryFn: kiln/kernel.hpp.)

// Not movable once published: call.params, call.signature and call.owner
// point into it (the Runtime holds it by unique_ptr).
struct ResolvedKernel {
  CallBlock call;                        // what a Kernel handle points at
  std::vector<kiln_value> params;        // read by generic builds; ignored by specialised ones
  const lang::KernelInfo* info = nullptr;
  std::vector<std::uint64_t> signature;  // from info->args and their blocking
  std::vector<std::optional<Spec::Strides>> strides;  // per argument: the specialised ones, for error messages
  std::vector<std::int64_t> nproma;      // per argument: its blocking (BoundSpec::nproma)
  std::vector<std::int64_t> nblks;       // per argument: its block count, 0: any (BoundSpec::nblks)
  bool specialised = true;
  cache::Key key;
  std::string metrics_name;
  runtime::Metrics* metrics = nullptr;  // set when calls are timed
  mutable std::atomic<bool> called{false};
  mutable runtime::HitCounter memory_hits;  // threads hitting one kernel at once share no counter
  std::unique_ptr<runtime::Temporaries> temporaries;  // null when it declares none
  bool check = false;  // built in check mode: the entry takes a CheckReport after the temporaries
  // Tiered start (Config::tiered, resolve/tiered_builds.hpp): published with
  // the generic build's entry, which call.entry holds until the specialised
  // build replaces it (entry_of()); null otherwise. Timed calls of the generic
  // build are recorded under its own metrics name, "<name> (generic)".
  EntryFn generic_entry = nullptr;
  std::string generic_metrics_name;
  mutable std::atomic<bool> generic_called{false};
};

}  // namespace kiln::detail
