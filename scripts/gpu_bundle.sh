#!/usr/bin/env bash
# Packs the GPU checks for a machine that has a GPU but no compiler and no
# network (the device machine of this workplace: CUDA and its driver, no LLVM,
# no apt). Run here, where kiln builds; scripts/gpu_check.sh runs the result there.
#   bash scripts/gpu_bundle.sh [ARCH]    (ARCH: the GPU's, sm_90 for an H100/H200)
#
# .gpu/ then holds the two check programs, the shared libraries they need
# beyond the C library, and a kiln cache in which every CPU kernel the checks
# call is already built (for a named CPU, so another x86-64 host hits it) and
# every GPU kernel is precompiled for ARCH. There, kiln serves the CPU kernels
# from that cache as on any node without a compiler; the GPU ones load without
# NVRTC unless its version differs, and NVRTC then builds them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-sm_90}
bundle="$root/.gpu"
# Every x86-64 server CPU of the last ten years has AVX2 (Haswell, Zen): the
# checks' CPU kernels need not be the fastest, only the same on both machines.
target_cpu=x86-64-v3

bash "$root/scripts/build.sh" --target kiln_gpu_check kiln_gpu_tests
check="$root/build/cli/gpu/kiln_gpu_check"
tests=$(find "$root/build/tests" -name kiln_gpu_tests -type f -perm -u+x | head -1)
[[ -x "$check" && -n "$tests" ]] || { echo "gpu_bundle: kiln_gpu_check or kiln_gpu_tests was not built (no CUDA toolkit?)" >&2; exit 1; }

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/cache"
cp "$check" "$tests" "$bundle/bin/"

# The libraries the programs load beyond the C library, the driver and NVRTC
# (those two are the GPU machine's own): libkiln, and the C++ and OpenMP
# run-time libraries it was built with, in case that machine's are older.
libraries() { ldd "$@" | awk '$3 ~ /^\// {print $3}' | sort -u; }
for lib in $(libraries "$bundle/bin/"*); do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
    *) cp -L "$lib" "$bundle/lib/" ;;
  esac
done
if LD_LIBRARY_PATH="$bundle/lib" ldd "$bundle/bin/"* | grep -v libcuda | grep -q 'not found'; then
  echo "gpu_bundle: a library is missing from the bundle:" >&2
  LD_LIBRARY_PATH="$bundle/lib" ldd "$bundle/bin/"* | grep 'not found' >&2
  exit 1
fi

# The preparing runs: every CPU kernel into the cache, every GPU kernel
# precompiled. Same sizes as the GPU run (the programs' defaults), so the keys match.
export KILN_CACHE_DIR="$bundle/cache" KILN_TARGET_CPU=$target_cpu KILN_GPU_PREPARE=$arch
"$bundle/bin/kiln_gpu_tests" --gtest_brief=1
"$bundle/bin/kiln_gpu_check" --prepare "$arch"
# Again with no compiler, as there: every CPU kernel must now come from the cache.
echo "gpu_bundle: the same runs with the compiler hidden"
KILN_COMPILER_MODULE=/nonexistent/libkiln_clang.so "$bundle/bin/kiln_gpu_tests" --gtest_brief=1
KILN_COMPILER_MODULE=/nonexistent/libkiln_clang.so "$bundle/bin/kiln_gpu_check" --prepare "$arch"

{
  echo "commit $(git -C "$root" rev-parse HEAD)$(git -C "$root" diff --quiet HEAD || echo ' (with uncommitted changes)')"
  echo "made $(date -u +%FT%TZ) on $(uname -m), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
  echo "arch $arch, KILN_TARGET_CPU $target_cpu"
} > "$bundle/MANIFEST"
du -sh "$bundle" "$bundle/cache"
echo "gpu_bundle: ready; on the GPU machine: bash scripts/gpu_check.sh (with .gpu carried)"
