#!/usr/bin/env bash
# Configures and builds kiln in build/ (Release). Extra arguments go to the build step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$root/build" -j"$(nproc)" "$@"
