#!/usr/bin/env bash
# Builds a fuzz target with clang++-19's libFuzzer, ASan and UBSan over exactly
# the sources it parses with, and fuzzes for a bounded time from a seed corpus
# the target writes itself. The project itself builds with g++: libFuzzer
# comes with clang only. Targets: entry (tests/fuzz/entry_fuzz.cpp, the cache
# entry and its metadata), bundle (tests/fuzz/bundle_fuzz.cpp, a cache
# bundle's table), npy (tests/fuzz/npy_fuzz.cpp, kiln run's .npy reader)
# and spec (tests/fuzz/spec_fuzz.cpp, kiln run's --spec parser).
#
#   run_fuzz.sh SOURCE_ROOT WORK_FOLDER [SECONDS [TARGET]]   (default 20 s, entry)
#
# Exit 77 (the test's SKIP_RETURN_CODE) with the reason when clang++-19 or its
# libFuzzer runtime (Debian: libclang-rt-19-dev) is missing; any finding fails
# and leaves the crashing input in WORK_FOLDER.
set -euo pipefail
root=$1
work=$2
seconds=${3:-20}
target=${4:-entry}
cxx=${KILN_FUZZ_CXX:-clang++-19}

skip() { echo "fuzz: SKIPPED: $*"; exit 77; }

command -v "$cxx" > /dev/null || skip "$cxx not found (scripts/setup.sh installs clang-19)"
mkdir -p "$work"
flags=(-std=c++20 -O1 -g -Wall -Wextra -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=all)

# An empty target that links proves the runtimes are there; its error says which is missing.
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' > "$work/probe.cpp"
if ! "$cxx" "${flags[@]}" "$work/probe.cpp" -o "$work/probe" 2> "$work/probe.log"; then
  why=$(grep -m1 -E 'error|cannot find' "$work/probe.log" || true)
  skip "$cxx cannot link -fsanitize=fuzzer,address,undefined (install libclang-rt-19-dev): $why"
fi

case $target in
  entry)
    sources=("$root/tests/fuzz/entry_fuzz.cpp" "$root/cache/entry_format.cpp" "$root/cache/entry_metadata.cpp")
    headers=("$root"/cache/entry_format.hpp "$root"/cache/entry_metadata.hpp "$root"/cache/index.hpp
             "$root"/cache/key.hpp "$root"/cache/little_endian.hpp)
    libraries=(-lxxhash)
    max_len=4096 ;;
  bundle)
    sources=("$root/tests/fuzz/bundle_fuzz.cpp" "$root/cache/bundle_format.cpp" "$root/cache/key.cpp")
    headers=("$root"/cache/bundle_format.hpp "$root"/cache/key.hpp "$root"/cache/little_endian.hpp)
    libraries=(-lxxhash)
    max_len=16384 ;;
  npy)
    sources=("$root/tests/fuzz/npy_fuzz.cpp" "$root/cli/npy_io.cpp")
    headers=("$root"/cli/npy_io.hpp "$root"/api/include/kiln/arg.hpp "$root"/api/include/kiln/errors.hpp)
    libraries=()
    max_len=1024 ;;
  spec)
    sources=("$root/tests/fuzz/spec_fuzz.cpp" "$root/cli/spec_options.cpp")
    headers=("$root"/cli/spec_options.hpp "$root"/api/include/kiln/arg.hpp "$root"/api/include/kiln/errors.hpp)
    libraries=()
    max_len=512 ;;
  *) echo "fuzz: unknown target '$target'" >&2; exit 2 ;;
esac
binary="$work/${target}_fuzz"
# Rebuilt only when a source is newer: most runs then cost the fuzzing time alone.
stale=1
if [[ -x $binary ]]; then
  stale=0
  for f in "${sources[@]}" "${headers[@]}" "$root/tests/fuzz/seeds.hpp" "$0"; do [[ $f -nt $binary ]] && stale=1; done
fi
if ((stale)); then
  echo "fuzz: building $binary with $cxx"
  "$cxx" "${flags[@]}" -I"$root" -I"$root/api/include" "${sources[@]}" "${libraries[@]}" -o "$binary"
fi

rm -rf "$work/corpus"
KILN_FUZZ_WRITE_SEEDS="$work/corpus" "$binary"
# -max_len (per target): a little over its largest useful input (an entry: a
# payload, a few hundred bytes of metadata and a trailer); longer inputs only
# slow each run. Findings land in $work/ as crash-*, leak-*...
"$binary" "$work/corpus" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$work/" 2> "$work/fuzz.log" || {
  tail -n 60 "$work/fuzz.log"
  echo "fuzz: FAILED: a finding above; the input is in $work/"
  exit 1
}
grep -E "^#[0-9]+[[:space:]]+DONE|^Done|^stat::(number_of_executed_units|average_exec_per_sec|new_units_added)" \
  "$work/fuzz.log"
echo "fuzz: ok ($seconds s, corpus $(ls "$work/corpus" | wc -l) inputs)"
