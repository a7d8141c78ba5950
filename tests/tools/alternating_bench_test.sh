#!/usr/bin/env bash
# kiln_alternating_bench (bench/alternating_bench.cpp) on two builds of
# one kernel compiled here, as its header says to, from kiln_granule_sources'
# translation units on a small grid: the specialised and the generic build of
# update_theta_and_exner in Fortran order. Both are timed and listed against
# the first; a build of the other layout, a kernel with a temporary and a
# missing file are refused naming the cause.
#   alternating_bench_test.sh KILN_GRANULE_SOURCES KILN_ALTERNATING_BENCH
set -euo pipefail
sources=$1
bench=$2
clang=${KILN_TEST_CLANG:-clang++-19}
if ! command -v "$clang" > /dev/null; then
  echo "skipped: $clang not found (scripts/setup.sh installs clang-19)"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
grid=(--nx=8 --ny=6 --levels=5)

fail() { echo "FAIL: $*" >&2; exit 1; }

"$sources" "$dir" "${grid[@]}" --generic > /dev/null
kernel=update_theta_and_exner
for build in fortran fortran.generic; do
  "$clang" -std=c++20 -fPIC -fno-exceptions -fno-rtti -fno-math-errno -O2 -shared \
    "$dir/$kernel.$build.cpp" -o "$dir/$build.so"
done

out=$("$bench" "$kernel" "$dir/fortran.so" "$dir/fortran.generic.so" --layout=fortran "${grid[@]}" --rounds=5)
echo "$out"
[[ $(grep -c ' ms ' <<< "$out") == 2 ]] || fail "expected a line per build"
grep -q '1\.000x  .*/fortran\.so$' <<< "$out" || fail "the first build is not the reference"
grep -q 'x  .*/fortran\.generic\.so$' <<< "$out" || fail "the second build is not listed"

refused() {  # expected message, then the command
  local expected=$1 err
  shift
  if err=$("$@" 2>&1 > /dev/null); then fail "accepted: $*"; fi
  grep -q "$expected" <<< "$err" || fail "'$*' said '$err', expected '$expected'"
}
refused "temporary" "$bench" apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence "$dir/fortran.so"
refused "missing.so" "$bench" "$kernel" "$dir/missing.so"
refused "theta_v" "$bench" "$kernel" "$dir/fortran.so" --layout=c "${grid[@]}" --rounds=1
refused "usage" "$bench" "$kernel"
echo "alternating_bench: ok"
