#!/usr/bin/env bash
# Prints LLVM's loop-vectoriser remarks for each granule kernel as kiln compiles
# it: specialised on kiln_stencil_bench's grid, in C and Fortran layout, with
# kiln's clang flags (jit/compiler/frontend.cpp: -O3, the host CPU,
# prefer-no-gather, -disable-lsr). Remarks name the kernel file's own lines
# (the #line directives), so each loop can be found in kernels_src/.
#
#   bench/vectorizer_remarks.sh BUILD_DIR [kernel-name-substring] [-- extra clang flags]
#
# e.g. `... build rbf -- -mgather` shows the same kernel with gathers allowed.
set -euo pipefail
build=${1:?usage: vectorizer_remarks.sh BUILD_DIR [kernel] [-- clang flags]}
shift
filter=""
if [[ $# -gt 0 && $1 != "--" ]]; then filter=$1; shift; fi
[[ $# -gt 0 && $1 == "--" ]] && shift
extra=("$@")

clang=${KILN_REMARKS_CLANG:-clang++-19}
sources=$(mktemp -d)
trap 'rm -rf "$sources"' EXIT
"$build/bench/kiln_granule_sources" "$sources" >/dev/null

for tu in "$sources"/*"$filter"*.cpp; do
  echo "=== $(basename "$tu" .cpp)"
  "$clang" -std=c++20 -fPIC -fno-exceptions -fno-rtti -fno-math-errno -O3 -march=native -mno-gather \
    -mllvm -disable-lsr "${extra[@]}" -c "$tu" -o /dev/null \
    -Rpass=loop-vectorize -Rpass-missed=loop-vectorize -Rpass-analysis=loop-vectorize 2>&1 |
    grep -E "remark:" | sed -E 's/^.*\/([^/]+\.kiln)/\1/; s/ \[-R.*$//' | sort | uniq -c | sort -k2 || true
done
