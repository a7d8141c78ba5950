// KILN_FUZZ_WRITE_SEEDS=<folder>: run_fuzz.sh has a target write its own seed
// corpus there (made by the current code, so the seeds follow its format)
// and exit, before fuzzing from it.
#pragma once

#include <cstdlib>
#include <filesystem>

inline void write_seeds_if_asked(void (*write_seeds)(const std::filesystem::path& folder)) {
  if (const char* folder = std::getenv("KILN_FUZZ_WRITE_SEEDS")) {
    write_seeds(folder);
    std::exit(0);
  }
}
