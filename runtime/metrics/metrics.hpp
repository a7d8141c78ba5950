// Collects the phase timings and counters of every kernel. Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "kiln/metrics.hpp"

namespace kiln::runtime {

class Metrics {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  Metrics() : created_(std::chrono::steady_clock::now()) {}

  void record(const std::string& kernel, const char* phase, double ms);
  void count_compile(const std::string& kernel);
  void count_disk_hit(const std::string& kernel);
  void count_peer_hit(const std::string& kernel);
  void count_temporary_allocation(const std::string& kernel);
  void note_threads(const std::string& kernel, int threads);
  // The timeline: the first of each is kept. Kept as clock readings and made
  // times since the process's start only by snapshot(), which reads /proc:
  // a Runtime nobody asks for its metrics never pays for that.
  void note_requested(const std::string& kernel, TimePoint at);
  void note_first_call(const std::string& kernel, TimePoint at);
  MetricsSnapshot snapshot() const;

 private:
  struct FirstTimes {
    TimePoint requested{}, first_call{};  // zero: not yet
  };

  mutable std::mutex mutex_;
  MetricsSnapshot data_;
  std::map<std::string, FirstTimes> first_;
  TimePoint created_;
};

// Milliseconds since `start`.
inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kiln::runtime
