// Collects the phase timings and counters of every kernel. Thread-safe.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "kiln/metrics.hpp"

namespace kiln::runtime {

class Metrics {
 public:
  void record(const std::string& kernel, const char* phase, double ms);
  void count_compile(const std::string& kernel);
  void count_disk_hit(const std::string& kernel);
  void count_peer_hit(const std::string& kernel);
  void count_temporary_allocation(const std::string& kernel);
  void note_threads(const std::string& kernel, int threads);
  MetricsSnapshot snapshot() const;

 private:
  mutable std::mutex mutex_;
  MetricsSnapshot data_;
};

// Milliseconds since `start`.
inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kiln::runtime
