#include "runtime/compile/build_slots.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
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

// A process stopped by a signal or a debugger: state T or t in
// /proc/<pid>/stat (after the command name, which may hold spaces and parentheses).
bool is_stopped(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::size_t name_end = text.rfind(')');
  if (name_end == std::string::npos || name_end + 2 >= text.size()) return false;
  const char state = text[name_end + 2];
  return state == 'T' || state == 't';
}

// Folders whose slots a wait of this process found held for a whole timeout.
std::mutex starved_mutex;
std::set<std::filesystem::path> starved_folders;

bool starved(const std::filesystem::path& folder) {
  std::lock_guard lock(starved_mutex);
  return starved_folders.count(folder) > 0;
}

void mark_starved(const std::filesystem::path& folder) {
  std::lock_guard lock(starved_mutex);
  starved_folders.insert(folder);
}

std::string pid_list(const std::vector<int>& pids) {
  std::string out;
  for (int pid : pids) out += (out.empty() ? "" : ", ") + std::to_string(pid);
  return out;
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
    if (lock.held()) {
      // The pid tells waiters whether this holder is stopped; without it
      // (a write that fails), a stopped holder is waited for like a busy one.
      (void)lock.write_note(std::to_string(::getpid()));
      return Slot(std::move(lock));
    }
    if (lock.outcome() == cache::BuildLock::Outcome::unsupported) return Slot();  // no locks here: no limit
  }
  return std::nullopt;
}

std::vector<int> BuildSlots::stopped_holders() const {
  std::vector<int> pids;
  for (unsigned i = 0; i < count(); ++i) {
    const std::string note = cache::BuildLock::read_note(folder() / ("slot-" + std::to_string(i)));
    int pid = 0;
    const auto [end, error] = std::from_chars(note.data(), note.data() + note.size(), pid);
    if (error == std::errc() && end == note.data() + note.size() && pid > 0 && is_stopped(pid)) pids.push_back(pid);
  }
  return pids;
}

std::optional<BuildSlots::Slot> BuildSlots::take(std::chrono::steady_clock::time_point deadline,
                                                 const std::function<bool()>& give_up) const {
  using Clock = std::chrono::steady_clock;
  auto pause = std::chrono::microseconds(200);
  // Stopped holders are looked for on the first miss and then every 100 ms:
  // it reads a file and /proc per slot, too much for every poll on a big node.
  Clock::time_point next_stop_check = Clock::now();
  for (;;) {
    if (std::optional<Slot> slot = try_take()) return slot;
    if (give_up && give_up()) return std::nullopt;
    if (starved(folder()))
      return Slot::free_pass("all " + std::to_string(count()) + " in " + folder().string() +
                             " were held for a whole lock timeout earlier in this process");
    if (Clock::now() >= next_stop_check) {
      if (const std::vector<int> stopped = stopped_holders(); !stopped.empty())
        return Slot::free_pass("the slots of " + folder().string() + " are held, and process(es) " +
                               pid_list(stopped) + " holding some are stopped");
      next_stop_check = Clock::now() + std::chrono::milliseconds(100);
    }
    if (Clock::now() >= deadline) {
      mark_starved(folder());
      return Slot::free_pass("all " + std::to_string(count()) + " in " + folder().string() +
                             " were taken for the whole lock timeout");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(5));
  }
}

}  // namespace kiln::runtime
