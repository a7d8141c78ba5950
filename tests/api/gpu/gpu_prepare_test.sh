#!/usr/bin/env bash
# kiln_gpu_tests where there is no GPU, as scripts/gpu_bundle.sh runs it to
# fill the cache a GPU machine without a compiler reads: with
# KILN_GPU_PREPARE=sm_90 every test passes on an empty cache (its CPU
# kernels run, its GPU kernels are precompiled); run again with the compiler
# made unavailable, every test still passes and nothing is compiled, so the
# cache holds every kernel the GPU run asks for.
#   gpu_prepare_test.sh <kiln_gpu_tests binary>
set -euo pipefail
binary=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export KILN_CACHE_DIR=$work/cache KILN_TARGET_CPU=x86-64-v3 KILN_GPU_PREPARE=sm_90

if ldd "$binary" | grep -q 'libcuda\.so'; then
  echo "gpu_prepare: $binary links libcuda:"; ldd "$binary" | grep libcuda; exit 1
fi
if ! "$binary" > "$work/cold.txt" 2>&1; then
  if grep -q 'no CUDA driver' "$work/cold.txt" && grep -q 'NVRTC' "$work/cold.txt"; then
    echo "gpu_prepare: no NVRTC here: skipped"; exit 77
  fi
  if ! grep -q '\[ prepare  \]' "$work/cold.txt"; then
    echo "gpu_prepare: a GPU is here, so nothing is prepared: skipped"; exit 77
  fi
  echo "gpu_prepare: the preparing run failed:"; cat "$work/cold.txt"; exit 1
fi
# What one test compiled, as its last line says: "compiled here: N CPU, M GPU".
compiled() { grep -o 'compiled here: [0-9]* CPU, [0-9]* GPU' "$1" | awk '{n += $3 + $5} END {print n + 0}'; }
tests=$(grep -c '^\[       OK \]' "$work/cold.txt")
(( $(compiled "$work/cold.txt") > 0 )) || { echo "gpu_prepare: the cold run compiled nothing"; exit 1; }

KILN_COMPILER_MODULE=/nonexistent/kiln/libkiln_clang.so "$binary" > "$work/warm.txt" 2>&1 ||
  { echo "gpu_prepare: the run without a compiler failed:"; cat "$work/warm.txt"; exit 1; }
[[ $(grep -c '^\[       OK \]' "$work/warm.txt") == "$tests" ]] ||
  { echo "gpu_prepare: the run without a compiler passed another number of tests"; cat "$work/warm.txt"; exit 1; }
[[ $(compiled "$work/warm.txt") == 0 ]] ||
  { echo "gpu_prepare: the run without a compiler compiled:"; grep 'compiled here' "$work/warm.txt"; exit 1; }
echo "gpu_prepare: $tests tests prepared the cache ($(du -sh "$work/cache" | cut -f1)); without a compiler they pass compiling nothing"
