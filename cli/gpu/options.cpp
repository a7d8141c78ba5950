#include "cli/gpu/options.hpp"

#include <CLI/CLI.hpp>

namespace kiln::gpu_check {

void add_options(CLI::App& app, Options& o) {
  app.add_option("--nx", o.nx, "correctness and launch grid: rhombi along x (>= 13)")->capture_default_str();
  app.add_option("--ny", o.ny, "correctness and launch grid: rhombi along y (>= 13)")->capture_default_str();
  app.add_option("--levels", o.levels, "correctness and launch grid: levels")->capture_default_str();
  app.add_option("--bw-nx", o.bw_nx, "bandwidth grid: rhombi along x")->capture_default_str();
  app.add_option("--bw-ny", o.bw_ny, "bandwidth grid: rhombi along y")->capture_default_str();
  app.add_option("--bw-levels", o.bw_levels, "bandwidth grid: levels")->capture_default_str();
  app.add_option("--repeats", o.repeats, "launches timed per stage, and device copies timed (bandwidth)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--launches", o.launches, "launches queued per batch (launch overhead)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--batches", o.batches, "batches per launch method (launch overhead; the median is taken)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--copy-mib", o.copy_mib, "size of the device-to-device copy the bandwidth is measured against")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--wait-limit", o.wait_limit_s,
                 "seconds a wait for the device may take; longer: the device is hung, the JSON is written and the "
                 "run stops")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  app.add_option("--json", o.json, "write the figures there as JSON (also when a check fails)");
  app.add_option("--prepare", o.prepare,
                 "no GPU: fill the cache (KILN_CACHE_DIR) with every CPU kernel the checks call and every GPU "
                 "kernel they resolve, compiled for ARCH (e.g. sm_90), at the same sizes; then exit");
}

}  // namespace kiln::gpu_check
