// kiln_gpu_check's command line: the sizes every check uses (the same in
// --prepare, since specialised keys depend on them), the repetitions, and
// where the JSON goes.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace kiln::gpu_check {

struct Options {
  // The correctness and launch grid: limited-area nx x ny, levels.
  std::int64_t nx = 128, ny = 80, levels = 80;
  // The bandwidth grid: large enough that a point-wise stage's arrays are
  // about 1 GB (update_theta_and_exner's four: 2 * 512 * 512 cells x 80
  // levels x 8 bytes x 3, and area), far beyond an H200's 60 MB L2.
  std::int64_t bw_nx = 512, bw_ny = 512, bw_levels = 80;
  int repeats = 20;               // kernel launches timed per stage (bandwidth), and device copies
  int launches = 256;             // launches queued per batch (launch overhead): below the queue's depth
  int batches = 21;               // batches per launch method; the median is reported
  std::uint64_t copy_mib = 1024;  // the device-to-device copy's size (the bandwidth baseline)
  double wait_limit_s = 60;       // a wait for the device longer than this: hung, the run stops
  std::string json;               // --json PATH: the figures as JSON, written even when a check fails
  std::string prepare;            // --prepare ARCH: fill the cache for a GPU of ARCH, touching no GPU
};

// Adds the options to `app`, each writing into `options`.
void add_options(CLI::App& app, Options& options);

}  // namespace kiln::gpu_check
