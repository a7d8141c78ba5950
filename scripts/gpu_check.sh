#!/usr/bin/env bash
# Runs kiln's GPU checks on a machine with an NVIDIA GPU and writes what they
# print (text and JSON) to a folder: $OUT when set, else docs/gpu/.
#   bash scripts/gpu_check.sh [kiln_gpu_check's options]
#
# With .gpu/ present (scripts/gpu_bundle.sh made it on a machine that builds
# kiln), it runs the programs from there, for a GPU machine with no compiler
# and no network; without it, it sets up and builds here first.
#   kiln_gpu_tests  every stencil in C order, Fortran order and blocks,
#                   specialised and generic, against the CPU; temporaries per
#                   stream; the extent check before a launch; check mode's warning
#   kiln_gpu_check  the granule stage by stage against the CPU; launch overhead
#                   against raw launches; warm start against cuModuleLoadData;
#                   bandwidth against a device copy
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/docs/gpu}
mkdir -p "$out"

if [[ -d "$root/.gpu/bin" ]]; then
  bin="$root/.gpu/bin"
  # The cache is copied: kiln writes to it (the index, GPU kernels of another NVRTC).
  cache=$(mktemp -d)
  cp -r "$root/.gpu/cache/." "$cache/"
  export KILN_CACHE_DIR="$cache" KILN_TARGET_CPU=x86-64-v3
  # NVRTC is the GPU machine's own: its toolkit's first, else wherever Python
  # wheels put it. The bundle's libraries go to kiln's programs alone (its C++
  # library may be older than the system's programs need).
  nvrtc_dirs=$(find /usr/local /opt /usr/lib -name 'libnvrtc.so.1[0-9]' 2> /dev/null | xargs -r -n1 dirname | sort -u | paste -sd:)
  run=(env "LD_LIBRARY_PATH=$root/.gpu/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${nvrtc_dirs}${nvrtc_dirs:+:}${LD_LIBRARY_PATH:-}")
  cat "$root/.gpu/MANIFEST"
else
  bash "$root/scripts/setup.sh" && bash "$root/scripts/build.sh" --target kiln_gpu_check kiln_gpu_tests || exit 1
  bin="$root/build/cli/gpu"
  run=()
  tests=$(find "$root/build/tests" -name kiln_gpu_tests -type f -perm -u+x | head -1)
  ln -sf "$tests" "$bin/kiln_gpu_tests"
fi

{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  grep -m1 'model name' /proc/cpuinfo
  nproc
} | tee "$out/machine.txt"

status=0
timeout 240 "${run[@]}" "$bin/kiln_gpu_tests" --gtest_output="json:$out/gpu_tests.json" 2>&1 | tee "$out/gpu_tests.txt"
(( PIPESTATUS[0] == 0 )) || status=1
timeout 300 "${run[@]}" "$bin/kiln_gpu_check" --json "$out/gpu_check.json" "$@" 2>&1 | tee "$out/gpu_check.txt"
(( PIPESTATUS[0] == 0 )) || status=1
echo "gpu_check.sh: $([[ $status == 0 ]] && echo 'every check passed' || echo 'FAILED (see above)'); output in $out"
exit $status
