#!/usr/bin/env bash
# Sets everything up, builds everything, and runs the whole test suite; then
# the stencil and `kiln run` tests again with kiln's own code built with
# AddressSanitizer (scripts/asan_test.sh, in build-asan/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure -j"$(nproc)" --timeout 600
bash "$root/scripts/asan_test.sh"
