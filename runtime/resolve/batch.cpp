// Runtime::kernels: many kernels at once. Every distinct key is a task for a
// pool of build threads. A task whose key another process (or thread) is
// building goes to the back of the queue and is tried again later, so this
// process builds other keys meanwhile; after config.lock_timeout it is built
// regardless. N processes asking for the same M kernels so split the work.
#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;

namespace {

// One distinct key of the batch; jobs[first] is the job its pool thread uses.
struct Task {
  std::size_t first = 0;
  Clock::time_point not_before{};   // when to try a busy key again
  Clock::time_point deferred_at{};  // first found busy; epoch when never
  std::chrono::microseconds pause{500};
  detail::EntryFn entry = nullptr;
  Obtained how = Obtained::busy;
  std::exception_ptr error;
};

class TaskQueue {
 public:
  explicit TaskQueue(std::size_t tasks) {
    for (std::size_t i = 0; i < tasks; ++i) pending_.push_back(i);
  }
  // The next task to try, or nullopt when none is left.
  std::optional<std::size_t> next() {
    std::lock_guard lock(mutex_);
    if (pending_.empty()) return std::nullopt;
    const std::size_t task = pending_.front();
    pending_.pop_front();
    return task;
  }
  // Busy ones go last: the fresh tasks before them are tried first.
  void defer(std::size_t task) {
    std::lock_guard lock(mutex_);
    pending_.push_back(task);
  }

 private:
  std::mutex mutex_;
  std::deque<std::size_t> pending_;
};

}  // namespace

std::vector<Kernel> Runtime::kernels(std::span<const KernelRequest> requests) {
  std::vector<Kernel> out(requests.size());
  std::vector<runtime::Job> jobs;
  std::vector<std::size_t> request_of;  // per job
  std::exception_ptr first_error;

  // Memory hits need nothing more; the rest become jobs.
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const KernelRequest& r = requests[i];
    if (const detail::ResolvedKernel* k = impl_->memory().find({r.name, r.mode, r.spec.canonical(), r.spec.hash()})) {
      k->memory_hits.add();
      out[i] = Kernel(&k->call);
    }
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (out[i]) continue;
    try {
      jobs.push_back(impl_->prepare(requests[i].name, requests[i].spec, requests[i].mode));
      request_of.push_back(i);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }

  // One task per distinct key: generic builds, and repeated requests, share one.
  std::vector<Task> tasks;
  std::vector<std::size_t> task_of(jobs.size());
  std::unordered_map<cache::Key, std::size_t, cache::KeyHash> by_key;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto [it, fresh] = by_key.emplace(jobs[j].key, tasks.size());
    if (fresh) tasks.emplace_back().first = j;
    task_of[j] = it->second;
  }

  TaskQueue queue(tasks.size());
  const auto work = [&] {
    runtime::BuildSlots::Slot slot;  // kept from one kernel to the next while there is work
    while (const std::optional<std::size_t> index = queue.next()) {
      Task& task = tasks[*index];
      if (task.not_before > Clock::now()) {
        slot.release();  // every task left waits for another builder: let it have the slot
        std::this_thread::sleep_until(task.not_before);
      }
      const auto now = Clock::now();
      // Past the lock timeout, build it whoever else is building it.
      const bool give_up = task.deferred_at != Clock::time_point{} &&
                           now - task.deferred_at >= impl_->config().lock_timeout;
      try {
        task.how = impl_->obtain(jobs[task.first],
                                 give_up ? std::optional(std::chrono::milliseconds(0)) : std::nullopt, task.entry,
                                 &slot);
      } catch (...) {
        task.error = std::current_exception();
        continue;
      }
      if (task.how != Obtained::busy) {
        if (task.deferred_at != Clock::time_point{})
          impl_->metrics().record(jobs[task.first].metrics_name, "lock_wait",
                                runtime::ms_since(task.deferred_at));
        continue;
      }
      if (task.deferred_at == Clock::time_point{}) task.deferred_at = now;
      task.not_before = now + task.pause;
      task.pause = std::min<std::chrono::microseconds>(task.pause * 2, std::chrono::milliseconds(5));
      queue.defer(*index);
    }
  };
  const std::size_t threads = std::min<std::size_t>(impl_->config().build_threads, tasks.size());
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  }

  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const Task& task = tasks[task_of[j]];
    if (task.error) {
      if (!first_error) first_error = task.error;
      continue;
    }
    // Repeats of a key after the first found it linked by their own task.
    const bool from_memory = task.how == Obtained::linked || j != task.first;
    out[request_of[j]] = Kernel(&impl_->publish(jobs[j], task.entry, from_memory).call);
  }
  if (first_error) std::rethrow_exception(first_error);
  return out;
}

}  // namespace kiln
