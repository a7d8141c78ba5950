#!/bin/sh
# Runs the built kiln_bench (builds nothing) long enough for stable figures:
# the whole run takes about a minute on 2 cores (the limit is 3). The table,
# then the summary "kiln vs alternative" against the issue's targets.
#
#   bench/run_benchmarks.sh [extra Google Benchmark flags]
#   KILN_BUILD_DIR=build-bench bench/run_benchmarks.sh --benchmark_filter=warm
#
# The build folder is $KILN_BUILD_DIR, else build/ at the repository root.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${KILN_BUILD_DIR:-$root/build}
case $build in /*) ;; *) build=$root/$build ;; esac
bench=$build/bench/kiln_bench
if [ ! -x "$bench" ]; then
  echo "run_benchmarks.sh: $bench not found; build it first:" >&2
  echo "  cmake --build ${build#"$root"/} --target kiln_bench" >&2
  exit 1
fi
# Per-kernel benchmarks run at least 1 s each; the process benchmarks run a
# fixed number of child processes (20 warm, 5 cold) and report the median.
exec "$bench" --benchmark_min_time=1 "$@"
