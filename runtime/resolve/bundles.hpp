// A batch's cache bundle (cache/bundle_format.hpp, docs/manual/cache.md):
// the kernels of a request set from one file, opened, verified and mapped
// once, and that file written after a batch that had to load or build its
// kernels one by one. Found by the key of the set (bundle_key of the jobs'
// distinct keys), so a bundle serves exactly the set it was written for;
// every other request set, and every single kernel(), uses the kernels' own
// entries as before.
#pragma once

#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cache/key.hpp"
#include "runtime/call/resolved_kernel.hpp"
#include "runtime/compile/job.hpp"
#include "runtime/metrics/metrics.hpp"
#include "runtime/store/cache_tiers.hpp"

namespace kiln::runtime {

using BundleEntries = std::unordered_map<cache::Key, detail::EntryFn, cache::KeyHash>;

// The distinct keys of the CPU jobs, when there are two or more and no job
// is for a GPU (a bundle holds CPU kernels only); else empty: no bundle.
std::vector<cache::Key> bundle_members(std::span<const Job> jobs);

// The entries of the jobs found in their bundle and mapped from it, each
// counted as a disk hit. Empty when there is no bundle, or it is refused: a
// bundle that does not decode, or holds another set than the jobs' keys, is
// logged as a warning naming its file and the cause, and the batch loads its
// kernels one by one (the writer below then replaces it). A member that does
// not run from the bundle's mapping (bundle_mapping.hpp) is left out.
BundleEntries load_bundle(CacheTiers& cache, Metrics& metrics, std::span<const Job> jobs);

// Stores the bundle of `members` (key and binary, two or more, distinct) in
// the writable tier with its index record (kernel "kiln.bundle", backend
// "bundle"). False, having logged why at debug level, when it is not stored.
bool store_bundle(CacheTiers& cache, const std::vector<std::pair<cache::Key, std::vector<char>>>& members);

// After a batch: the bundle of the jobs' keys from their own entries (each
// read and verified), when every one has one. False when not stored.
bool store_batch_bundle(CacheTiers& cache, std::span<const Job> jobs);

}  // namespace kiln::runtime
