#!/usr/bin/env bash
# Sets everything up, builds, and runs the demo twice on an empty cache: the
# first run compiles, the second starts warm. Arguments go to `kiln demo`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" --target kiln_tool
export KILN_CACHE_DIR="${KILN_CACHE_DIR:-$root/build/demo-cache}"
rm -rf "$KILN_CACHE_DIR"
echo "=== first run: cold cache ($KILN_CACHE_DIR)"
"$root/build/cli/kiln" demo "$@"
echo
echo "=== second run: warm cache"
"$root/build/cli/kiln" demo "$@"
