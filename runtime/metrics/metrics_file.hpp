// Writing the metrics JSON to KILN_METRICS_FILE when a Runtime ends.
#pragma once

#include <filesystem>
#include <string>

namespace kiln::runtime {

// Writes `text` to `path`. Never waits for a reader: a FIFO that nobody
// reads (open(2) blocks on one until a reader comes, so the process never
// ended) is skipped with a warning, as is any file that cannot be opened or
// written; the run's result does not depend on its metrics.
void write_metrics_file(const std::filesystem::path& path, const std::string& text);

}  // namespace kiln::runtime
