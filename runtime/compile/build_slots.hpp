// A node-wide limit on compiles running at once (KILN_BUILD_SLOTS), shared by
// every process of the user on this machine: a jobserver made of lock files.
// Slot i is the file slot-<i> in a node-local folder; a compile runs while
// its thread holds one of them with an open-file-description lock, which the
// kernel frees when the holder dies.
//
// Why: 128 ranks on a node, each with a pool of build threads, would start
// hundreds of clang instances at once (each some 100 MB) and load clang in
// every rank. With slots, as many compiles run as the node has cores, and a
// batch thread claims a kernel only once it holds a slot, so the few ranks
// holding slots build everything and the others load it.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cache/build_lock.hpp"

namespace kiln::runtime {

class BuildSlots {
 public:
  // count 0: no limit (every take succeeds at once); none: as many as the
  // node has CPUs online, counted on first use (reading sysfs cost a warm
  // process ~20 µs). folder empty: the default,
  // $XDG_RUNTIME_DIR/kiln/build-slots or /tmp/kiln-<uid>/build-slots.
  BuildSlots(std::optional<unsigned> count, std::filesystem::path folder);

  unsigned count() const;
  // The default folder is worked out on first use (only a miss needs it), from
  // the environment as it is then.
  const std::filesystem::path& folder() const;
  // Why slots are off although asked for (the folder is another user's, or
  // cannot be made); empty otherwise. Compiles then run unlimited. The folder
  // is checked (and made) on first use, not before: a warm run never compiles.
  const std::string& problem() const;

  // One held slot, or none: a free pass when slots are off, when every slot
  // was held for the whole timeout, or when a holder is stopped (why_free()
  // says which). Released when it ends.
  class Slot {
   public:
    Slot() = default;
    explicit Slot(cache::BuildLock lock) : lock_(std::move(lock)) {}
    static Slot free_pass(std::string why) {
      Slot s;
      s.why_free_ = std::move(why);
      return s;
    }
    bool held() const { return lock_.has_value(); }
    void release() { lock_.reset(); }
    // Why an unheld slot was handed out although slots are on; empty otherwise.
    const std::string& why_free() const { return why_free_; }

   private:
    std::optional<cache::BuildLock> lock_;
    std::string why_free_;
  };

  // Tries every slot once, starting at a different one per thread.
  std::optional<Slot> try_take() const;
  // Waits for a slot until `deadline`, calling `give_up()` between tries: a
  // true from it (the kernel appeared in the cache meanwhile) ends the wait.
  // nullopt when given up; a free pass (an unheld Slot) after the deadline.
  // A stuck holder costs this process at most one wait in all: once a wait
  // reached its deadline, later ones in this process do not wait for this
  // folder's slots (they still take a free one). And a holder that is
  // stopped (SIGSTOP, a debugger: its pid is in its slot file) compiles
  // nothing, so a wait behind one ends at once with a free pass.
  std::optional<Slot> take(std::chrono::steady_clock::time_point deadline,
                           const std::function<bool()>& give_up = {}) const;
  // The pids of slot holders that are stopped now (from their slot files).
  std::vector<int> stopped_holders() const;

 private:
  mutable std::optional<unsigned> count_;
  mutable std::once_flag count_once_;
  mutable std::once_flag folder_once_;
  mutable std::filesystem::path folder_;  // set by folder() when the default
  bool default_folder_;
  mutable std::once_flag checked_;
  mutable std::string problem_;
};

}  // namespace kiln::runtime
