// Tiered start's background builds (Config::tiered, docs/manual/tiered-start.md).
// A kernel() that misses publishes its handle with the generic build's entry
// and queues the specialised build here. One thread of the Runtime's builds
// the queue in order (the one build path: build lock, cache, compile, store)
// and stores each specialised entry over the generic one in its kernel's
// CallBlock (kiln/kernel.hpp, entry_of()): calls take no lock and read the
// entry once per call, so each call runs one build or the other, whole.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/compile/job.hpp"
#include "runtime/call/resolved_kernel.hpp"

namespace kiln::runtime {

class TieredBuilds {
 public:
  // The specialised build's entry for a job, or an exception saying why not.
  using Obtain = std::function<detail::EntryFn(Job&)>;

  explicit TieredBuilds(Obtain obtain) : obtain_(std::move(obtain)) {}
  TieredBuilds(const TieredBuilds&) = delete;
  TieredBuilds& operator=(const TieredBuilds&) = delete;
  ~TieredBuilds() { stop(); }

  // Queues `job` (specialised) for `kernel`, published with the generic
  // build's entry; the thread starts with the first.
  void queue(Job job, detail::ResolvedKernel& kernel);
  // Returns when every queued build has replaced its generic build or failed.
  void wait_idle();
  // At the Runtime's end: builds not started are dropped (their kernels keep
  // the generic build, as nothing calls them after this), the one running is
  // finished (a compile ends within Config::compile_timeout), the thread joined.
  void stop();

 private:
  struct Pending {
    Job job;
    detail::ResolvedKernel* kernel;
  };
  void run();
  void build(Pending& pending);

  Obtain obtain_;
  std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  std::deque<Pending> queue_;
  bool running_ = false;  // a build is under way
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace kiln::runtime
