// The resolution loop: how every kind of resolution (one kernel, many, many
// over a group, a GPU kernel, a precompile) goes from requests to handles,
// in three steps (docs/architecture.md, "The resolution loop"):
//   prepare  each request's job: specialise, identity, key (Impl::prepare);
//            a Resolution groups the jobs by key
//   obtain   each distinct key's binary: linked in this process, a cache
//            tier, the build path, or the group's members; the caller's
//            strategy (Steps::obtain)
//   publish  each job's handle from its key's Outcome: the memory table, the
//            GPU table, or only metrics (a precompile) (Steps::publish)
// The memory table's hit stays in front of the loop, lock- and
// allocation-free (Runtime::kernel, Runtime::kernels): a hit is no job.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/key.hpp"
#include "runtime/call/resolved_kernel.hpp"
#include "runtime/compile/job.hpp"
#include "runtime/metrics/metrics.hpp"

namespace kiln::runtime {

// How a key's binary was obtained, or why not yet.
enum class Obtained {
  linked,  // already linked in this process (by this or another thread)
  loaded,  // from a cache tier on disk (collective: or from another member)
  built,   // compiled here
  busy,    // another thread or process is building it; only when not waiting
};

// What obtaining one key gave.
struct Outcome {
  Obtained how = Obtained::busy;
  detail::EntryFn entry = nullptr;  // linked into this process (CPU kernels)
  std::vector<char> binary;         // the bytes, when nothing is linked (a GPU kernel, a precompile)
  std::exception_ptr error;         // why not: only this key's requests fail
  // Tiered start: `entry` is the generic build standing in for the
  // specialised job, which publishing queues (tiered_start.cpp); this is the
  // generic build's metrics name. Empty: `entry` is the job's own build.
  std::string stand_in;
};

// The jobs of one resolution, grouped by key: repeated requests and the
// generic builds that several specialisations share are obtained once.
struct Resolution {
  std::vector<Job> jobs;
  std::vector<std::size_t> request;  // per job: the index of its request
  std::vector<std::size_t> key_of;   // per job: its key's index below
  std::vector<std::size_t> first;    // per distinct key, in order of first request: its first job
  std::vector<Outcome> outcomes;     // per distinct key
  std::unordered_map<cache::Key, std::size_t, cache::KeyHash> index;  // key -> its index
  std::exception_ptr error;          // the first request that did not prepare

  void add(Job job, std::size_t request_index);
  std::size_t keys() const { return first.size(); }
  Job& first_job(std::size_t key) { return jobs[first[key]]; }
};

// What differs between kinds of resolution.
struct Steps {
  // Fills the Outcome of every distinct key. Throws only what ends the whole
  // resolution (the collective's failure on some member).
  std::function<void(Resolution&)> obtain;
  // The handle of one job whose key was obtained. `repeat`: an earlier job of
  // this resolution had its key, so its binary came from memory.
  std::function<void(Job& job, const Outcome& outcome, bool repeat, std::size_t request)> publish;
};

// Obtains, then publishes every job whose key was obtained, in request
// order, each after its "specialise" time is recorded; then throws the
// first error: a request that did not prepare, else the first failed job's.
void run(Resolution& resolution, const Steps& steps, Metrics& metrics);

}  // namespace kiln::runtime
