// A batch's cache bundle (cache/bundle_format.hpp, docs/manual/cache.md):
// the kernels of a request set from one file, opened, verified and mapped
// once, and that file written after a batch that had to load or build its
// kernels one by one. Found by the key of the set (bundle_key of the jobs'
// distinct keys), so a bundle serves exactly the set it was written for;
// every other request set, and every single kernel(), uses the kernels' own
// entries as before.
#pragma once

#include <optional>
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
// counted as a disk hit; a member that does not run from the bundle's mapping
// (bundle_mapping.hpp: one that needs the dynamic loader) is left out, so the
// map may be empty. Nullopt when there is no good bundle: none, or one that
// does not decode or holds another set than the jobs' keys (logged as a
// warning naming its file and the cause); the batch then loads its kernels one
// by one and the writer below writes the bundle (again).
std::optional<BundleEntries> load_bundle(CacheTiers& cache, Metrics& metrics, std::span<const Job> jobs);

// Stores the bundle of the key set `set` (ascending, distinct) holding
// `members` (key and binary, distinct keys of `set`, each one that runs from
// a bundle) in the writable tier with its index record (kernel "kiln.bundle",
// backend "bundle", specialisation {"members":M,"of":N}). False, having
// logged why at debug level, when it is not stored.
bool store_bundle(CacheTiers& cache, const std::vector<cache::Key>& set,
                  const std::vector<std::pair<cache::Key, std::vector<char>>>& members);

// After a batch: the bundle of the jobs' keys from their own entries (each
// read and verified), when every one has one; it holds those that run from a
// bundle's mapping, maybe none (then it records that none does, and later
// batches of the set do not try again). False when not stored.
bool store_batch_bundle(CacheTiers& cache, std::span<const Job> jobs);

// A collective's member 0 (collective/collective.cpp), which reads the
// union's kernels to send their bytes: the verified binaries of the bundle of
// `keys` (ascending, distinct, two or more), by key. Nullopt when there is no
// good bundle (a refused one is logged as by load_bundle); the keys it does
// not hold are read one by one.
using BundleBytes = std::unordered_map<cache::Key, std::vector<char>, cache::KeyHash>;
std::optional<BundleBytes> read_bundle_bytes(CacheTiers& cache, const std::vector<cache::Key>& keys,
                                             const std::string& metrics_name);

// After a collective resolution that found no good bundle: the bundle of
// `binaries`' keys, holding those that run from a bundle's mapping (their
// entry symbol is entry_symbol(key)). False when not stored.
bool store_bundle_of(CacheTiers& cache, const BundleBytes& binaries);

}  // namespace kiln::runtime
