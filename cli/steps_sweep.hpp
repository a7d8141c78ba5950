// `kiln demo --steps-sweep 1,10,100,1000`: the data of kiln report's second
// figure, init's share of the wall time against the run's length. Each
// length runs as two new processes of the demo on a cache of their own:
// cold (an empty cache: every kernel compiles), then warm (the same cache),
// each writing its metrics JSON (KILN_METRICS_FILE) into one folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::cli {

struct SweepOptions {
  std::vector<int> steps;
  std::filesystem::path folder;         // the JSON files, the demo's output beside them
  std::vector<std::string> demo_args;  // the grid, mode and threads, as `kiln demo` takes them
};

void run_steps_sweep(const SweepOptions& options);

}  // namespace kiln::cli
