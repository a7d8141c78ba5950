#include "runtime/resolve/tiered_builds.hpp"

#include <atomic>
#include <exception>

#include "base/log.hpp"

namespace kiln::runtime {

void TieredBuilds::queue(Job job, detail::ResolvedKernel& kernel) {
  std::lock_guard lock(mutex_);
  if (stopping_) return;
  queue_.push_back({std::move(job), &kernel});
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  changed_.notify_all();
}

void TieredBuilds::wait_idle() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return queue_.empty() && !running_; });
}

void TieredBuilds::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void TieredBuilds::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Pending pending = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    build(pending);
    lock.lock();
    running_ = false;
    changed_.notify_all();
  }
}

void TieredBuilds::build(Pending& pending) {
  detail::ResolvedKernel& kernel = *pending.kernel;
  try {
    const detail::EntryFn specialised = obtain_(pending.job);
    // Release: the build was loaded (mapped, relocated) before a call can see its entry.
    std::atomic_ref<detail::EntryFn>(kernel.call.entry).store(specialised, std::memory_order_release);
  } catch (const std::exception& e) {
    // Once per kernel and specialisation: each is queued once. Its calls go
    // on with the generic build, which computes the same.
    base::log().warn("kernel '{}': its specialised build failed, its calls stay on the generic build "
                     "(tiered start): {}", kernel.info->name, e.what());
  } catch (...) {
    base::log().warn("kernel '{}': its specialised build failed, its calls stay on the generic build "
                     "(tiered start)", kernel.info->name);
  }
}

}  // namespace kiln::runtime
