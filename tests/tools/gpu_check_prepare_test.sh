#!/usr/bin/env bash
# kiln_gpu_check where there is no GPU (cli/gpu): the binary starts without
# NVIDIA's driver (it links the CUDA runtime, never libcuda); --prepare fills
# an empty cache with every kernel the GPU run needs and exits 0; run again
# with the compiler made unavailable, it finds every CPU kernel in the cache
# (0 compiles); without --prepare and without a GPU it exits 2 saying so.
# Small grids, so that the cold run compiles in seconds.
#   gpu_check_prepare_test.sh <kiln_gpu_check binary>
set -euo pipefail
binary=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sizes=(--nx 13 --ny 13 --levels 4 --bw-nx 14 --bw-ny 13 --bw-levels 6)
export KILN_CACHE_DIR=$work/cache KILN_TARGET_CPU=x86-64-v3

if ldd "$binary" | grep -q 'libcuda\.so'; then
  echo "gpu_check_prepare: $binary links libcuda:"; ldd "$binary" | grep libcuda; exit 1
fi

# A JSON number field of the file, by name.
field() { grep -o "\"$2\": [0-9]*" "$1" | head -1 | grep -o '[0-9]*$'; }

if ! "$binary" "${sizes[@]}" --prepare sm_90 --json "$work/cold.json" > "$work/cold.txt" 2>&1; then
  if grep -q 'NVRTC' "$work/cold.txt"; then echo "gpu_check_prepare: no NVRTC here: skipped"; exit 77; fi
  echo "gpu_check_prepare: --prepare failed:"; cat "$work/cold.txt"; exit 1
fi
# 4 cases x 7 stages on the CPU and the GPU, with contraction on and off, and 7 GPU
# stages on the bandwidth grid.
kernels=$(grep -c '"key"' "$work/cold.json")
[[ $kernels == 119 ]] || { echo "gpu_check_prepare: $kernels kernels prepared, not 119"; cat "$work/cold.txt"; exit 1; }
(( $(field "$work/cold.json" compiles) > 0 )) || { echo "gpu_check_prepare: the cold run compiled nothing"; exit 1; }

KILN_COMPILER_MODULE=/nonexistent/kiln/libkiln_clang.so \
  "$binary" "${sizes[@]}" --prepare sm_90 --json "$work/warm.json" > "$work/warm.txt" 2>&1 ||
  { echo "gpu_check_prepare: the warm run without a compiler failed:"; cat "$work/warm.txt"; exit 1; }
[[ $(field "$work/warm.json" compiles) == 0 ]] ||
  { echo "gpu_check_prepare: the warm run compiled:"; cat "$work/warm.txt"; exit 1; }
[[ $(field "$work/warm.json" disk_hits) == 119 ]] ||
  { echo "gpu_check_prepare: the warm run found $(field "$work/warm.json" disk_hits) in the cache, not 119"; exit 1; }

status=0
"$binary" "${sizes[@]}" --json "$work/gpu.json" > "$work/gpu.txt" 2>&1 || status=$?
if grep -q '"no_gpu"' "$work/gpu.json"; then
  [[ $status == 2 ]] || { echo "gpu_check_prepare: no GPU, yet exit status $status"; exit 1; }
  grep -q 'this tool measures on an NVIDIA GPU' "$work/gpu.txt" ||
    { echo "gpu_check_prepare: no GPU, and no message saying so:"; cat "$work/gpu.txt"; exit 1; }
fi
echo "gpu_check_prepare: $kernels kernels prepared; the warm run compiled none; without a GPU: exit $status"
