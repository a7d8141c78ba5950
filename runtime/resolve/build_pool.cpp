// The obtain step of a batch (Runtime::kernels): every distinct key is a task
// for a pool of build threads. A task whose key another process (or thread)
// is building goes to the back of the queue and is tried again later, so this
// process builds other keys meanwhile; after config.lock_timeout it is built
// regardless. N processes asking for the same M kernels so split the work.
#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;
using runtime::Obtained;

namespace {

// When to try a distinct key again; its Outcome is the resolution's.
struct Retry {
  Clock::time_point not_before{};   // when to try a busy key again
  Clock::time_point deferred_at{};  // first found busy; epoch when never
  std::chrono::microseconds pause{500};
};

class TaskQueue {
 public:
  // Every key not obtained yet (a bundle may have given some, batch.cpp).
  explicit TaskQueue(const std::vector<runtime::Outcome>& outcomes) {
    for (std::size_t k = 0; k < outcomes.size(); ++k)
      if (outcomes[k].entry == nullptr) pending_.push_back(k);
  }
  std::size_t size() const { return pending_.size(); }
  // The next key to try, or nullopt when none is left.
  std::optional<std::size_t> next() {
    std::lock_guard lock(mutex_);
    if (pending_.empty()) return std::nullopt;
    const std::size_t key = pending_.front();
    pending_.pop_front();
    return key;
  }
  // Busy ones go last: the fresh keys before them are tried first.
  void defer(std::size_t key) {
    std::lock_guard lock(mutex_);
    pending_.push_back(key);
  }

 private:
  std::mutex mutex_;
  std::deque<std::size_t> pending_;
};

}  // namespace

void Runtime::Impl::obtain_pooled(runtime::Resolution& resolution) {
  std::vector<Retry> retries(resolution.keys());
  TaskQueue queue(resolution.outcomes);
  const auto work = [&] {
    runtime::BuildSlots::Slot slot;  // kept from one kernel to the next while there is work
    while (const std::optional<std::size_t> key = queue.next()) {
      Retry& retry = retries[*key];
      runtime::Outcome& outcome = resolution.outcomes[*key];
      runtime::Job& job = resolution.first_job(*key);
      if (retry.not_before > Clock::now()) {
        slot.release();  // every key left waits for another builder: let it have the slot
        std::this_thread::sleep_until(retry.not_before);
      }
      const auto now = Clock::now();
      // Past the lock timeout, build it whoever else is building it.
      const bool give_up = retry.deferred_at != Clock::time_point{} && now - retry.deferred_at >= config_.lock_timeout;
      try {
        const ObtainPolicy policy{.lock_wait = give_up ? std::optional(std::chrono::milliseconds(0)) : std::nullopt,
                                  .batch_slot = &slot};
        outcome.how = obtain(job, policy, outcome.entry);
      } catch (...) {
        outcome.error = std::current_exception();
        continue;
      }
      if (outcome.how != Obtained::busy) {
        if (retry.deferred_at != Clock::time_point{})
          metrics_.record(job.metrics_name, "lock_wait", runtime::ms_since(retry.deferred_at));
        continue;
      }
      if (retry.deferred_at == Clock::time_point{}) retry.deferred_at = now;
      retry.not_before = now + retry.pause;
      retry.pause = std::min<std::chrono::microseconds>(retry.pause * 2, std::chrono::milliseconds(5));
      queue.defer(*key);
    }
  };
  const std::size_t threads = std::min<std::size_t>(config_.build_threads, queue.size());
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  }
}

}  // namespace kiln
