#include "runtime/build/build_slots.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <span>
#include <thread>
#include <vector>

#include "cache/posix_file.hpp"
#include "cache/trust.hpp"

namespace kiln::runtime {
namespace {

// Node-local by construction: the slots count this machine's compiles, even
// when the cache itself is on a shared file system.
std::filesystem::path default_folder() {
  if (const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR"); runtime_dir && *runtime_dir)
    return std::filesystem::path(runtime_dir) / "kiln" / "build-slots";
  return std::filesystem::path("/tmp") / ("kiln-" + std::to_string(::geteuid())) / "build-slots";
}

// Another user's folder could hold every slot and stall our compiles (until
// the lock timeout): only our own is used. For the default folder both levels
// kiln makes are checked, as /tmp/kiln-<uid> may have been made by someone else.
std::string folder_problem(const std::filesystem::path& folder, bool is_default) {
  std::vector<std::filesystem::path> levels = {folder};
  if (is_default) levels.insert(levels.begin(), folder.parent_path());
  for (const std::filesystem::path& f : levels) {
    if (const auto trusted = cache::check_folder_trust(f, {}, ::geteuid()); !trusted) return trusted.error().message;
    if (const auto made = cache::make_folders(f); !made) return made.error().message;
  }
  return {};
}

}  // namespace

BuildSlots::BuildSlots(std::optional<unsigned> count, std::filesystem::path folder)
    : count_(count), folder_(std::move(folder)), default_folder_(folder_.empty()) {}

unsigned BuildSlots::count() const {
  std::call_once(count_once_, [this] {
    if (!count_) count_ = std::max(std::thread::hardware_concurrency(), 1u);  // the node's, not this process's share
  });
  return *count_;
}

const std::filesystem::path& BuildSlots::folder() const {
  std::call_once(folder_once_, [this] {
    if (default_folder_) folder_ = default_folder();
  });
  return folder_;
}

const std::string& BuildSlots::problem() const {
  std::call_once(checked_, [this] {
    if (count() > 0) problem_ = folder_problem(folder(), default_folder_);
  });
  return problem_;
}

std::optional<BuildSlots::Slot> BuildSlots::try_take() const {
  const unsigned slots = count();
  if (slots == 0 || !problem().empty()) return Slot();
  // Threads start at different slots, so they do not all fight over slot 0.
  static std::atomic<unsigned> next{static_cast<unsigned>(::getpid())};
  const unsigned first = next.fetch_add(1, std::memory_order_relaxed);
  for (unsigned n = 0; n < slots; ++n) {
    const unsigned i = (first + n) % slots;
    cache::BuildLock lock =
        cache::BuildLock::acquire(folder() / ("slot-" + std::to_string(i)), std::chrono::milliseconds(0));
    if (lock.held()) return Slot(std::move(lock));
    if (lock.outcome() == cache::BuildLock::Outcome::unsupported) return Slot();  // no locks here: no limit
  }
  return std::nullopt;
}

std::optional<BuildSlots::Slot> BuildSlots::take(std::chrono::steady_clock::time_point deadline,
                                                 const std::function<bool()>& give_up) const {
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    if (std::optional<Slot> slot = try_take()) return slot;
    if (give_up && give_up()) return std::nullopt;
    if (std::chrono::steady_clock::now() >= deadline) return Slot();
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(5));
  }
}

}  // namespace kiln::runtime
