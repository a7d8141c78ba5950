#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: set up, build, and run every kernel of the
# granule on the GPU against the CPU, with launch and bandwidth figures.
#   bash scripts/gpu_check.sh [--nx N --ny N --levels K --repeats R]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
exec "$root/build/cli/gpu/kiln_gpu_check" "$@"
