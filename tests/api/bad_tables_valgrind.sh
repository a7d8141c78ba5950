#!/usr/bin/env bash
# Issue 33, item 2: out-of-range table entries in every granule kernel
# (stencils_test.cpp, OutOfRangeTableEntriesWriteNothingOutsideTheArrays)
# under valgrind, which sees the JIT'd kernels' accesses (ASan instruments
# only what it compiles). Fails on any invalid write: a kernel writing past
# an array or past kiln's own temporaries. Invalid reads are expected (a bad
# table reads the caller's arrays out of range: documented, check mode finds
# it) and not counted. Usage: bad_tables_valgrind.sh <kiln_api_tests> [valgrind]
set -euo pipefail
tests=$1
valgrind=${2:-valgrind}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
"$valgrind" --log-file="$log" --error-limit=no \
  "$tests" --gtest_filter='Grids/Stencils.OutOfRangeTableEntriesWriteNothingOutsideTheArrays/*' || status=$?
writes=$(grep -c 'Invalid write' "$log" || true)
if [[ $writes -gt 0 ]]; then
  echo "bad_tables_valgrind: $writes invalid writes:" >&2
  grep -A12 'Invalid write' "$log" | head -80 >&2
  exit 1
fi
echo "bad_tables_valgrind: no invalid write ($(grep -c 'Invalid read' "$log" || true) invalid reads, expected)"
exit "$status"
