#!/usr/bin/env bash
# Configures and builds kiln in build/ (Release). Extra arguments go to the build step.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Ninja when the folder is new: one build graph over every target, where
# make recursed into each target's own makefile (and ran `--target a b` one
# after the other). A folder configured before keeps its generator: CMake
# refuses to change it.
generator=()
if [[ ! -f "$root/build/CMakeCache.txt" ]] && command -v ninja > /dev/null; then generator=(-G Ninja); fi
cmake -S "$root" -B "$root/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
cmake --build "$root/build" -j"$(nproc)" "$@"
