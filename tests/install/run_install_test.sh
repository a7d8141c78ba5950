#!/usr/bin/env bash
# Installs the built kiln into a temporary prefix, builds a separate project
# against it with find_package(kiln), and runs it and the installed tool.
set -euo pipefail
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)/consumer
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$source_dir" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/build" >/dev/null
export KILN_CACHE_DIR="$work/cache" KILN_LOG_LEVEL=error
unset KILN_COMPILER_MODULE
"$work/build/consumer" "$work/prefix"
"$work/prefix/bin/kiln" cache stats | grep -q "entries:        2"
echo "install test: ok"
