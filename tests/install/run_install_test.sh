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
# Outputs are captured before they are searched: with pipefail, `prog | grep -q`
# fails when grep exits before prog has written everything (SIGPIPE).
stats=$("$work/prefix/bin/kiln" cache stats)
grep -q "entries:        2" <<<"$stats" || { echo "install test: cache stats: $stats"; exit 1; }
# The licence travels with the install, and --version names kiln, LLVM and the GPU compilers.
grep -q "BSD 3-Clause License" "$work/prefix/share/doc/kiln/LICENSE"
version=$("$work/prefix/bin/kiln" --version)
grep -q "^kiln [0-9]" <<<"$version"
grep -q "^LLVM 19" <<<"$version"
grep -q "^NVRTC: " <<<"$version"
grep -q "^hipRTC: " <<<"$version"
# kiln report, installed (its script under share/kiln/report), on the metrics of a run of the installed demo.
KILN_METRICS_FILE="$work/metrics.json" "$work/prefix/bin/kiln" demo --nx 4 --ny 4 --levels 4 --steps 1 \
  --mode specialised >/dev/null
[[ -f "$work/prefix/share/kiln/report/kiln_report.py" ]] || { echo "install test: kiln report's script not installed"; exit 1; }
report=$("$work/prefix/bin/kiln" report "$work/metrics.json" -o "$work/report")
[[ -s "$work/report/init_share.svg" ]] || { echo "install test: kiln report: $report"; exit 1; }
# Without CMake: a plain Makefile with pkg-config alone (ICON builds with
# autotools and make), and no LD_LIBRARY_PATH: the .pc files' Libs and the
# libraries' RUNPATH ($ORIGIN) must find libkiln_c and libkiln.
unset LD_LIBRARY_PATH
cp "$source_dir/../pkgconfig/"* "$work/"
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
for library in libkiln_c libkiln_fortran libkiln_c_mpi libkiln_fortran_mpi; do
  file="$work/prefix/lib/$library.so"
  [[ -f $file ]] || continue
  readelf -d "$file" | grep -q 'RUNPATH.*\[\$ORIGIN\]' || { echo "install test: $library has no RUNPATH \$ORIGIN"; exit 1; }
done
make -s -C "$work" c_consumer >/dev/null
out=$("$work/c_consumer")
grep -q "c_consumer: ok" <<<"$out"
if [[ -f "$work/prefix/lib/pkgconfig/kiln-fortran.pc" ]]; then
  make -s -C "$work" f_consumer >/dev/null
  out=$("$work/f_consumer")
  grep -q "f_consumer: ok" <<<"$out"
fi
if [[ -f "$work/prefix/lib/libkiln_c_mpi.so" ]]; then
  [[ -f "$work/prefix/lib/pkgconfig/kiln-mpi.pc" ]] || { echo "install test: no kiln-mpi.pc"; exit 1; }
  make -s -C "$work" c_mpi_consumer >/dev/null
  out=$("$work/c_mpi_consumer")
  grep -q "c_mpi_consumer: ok" <<<"$out"
fi
if [[ -f "$work/prefix/lib/libkiln_fortran_mpi.so" ]]; then
  pkg-config --exists kiln-fortran-mpi || { echo "install test: no kiln-fortran-mpi.pc"; exit 1; }
fi
# An installed libkiln whose compiler module is absent names its own place
# for it and the cause, never the build folder's module (issue 33, item 6).
rm "$work/prefix/lib/kiln/libkiln_clang.so"
if out=$(KILN_CACHE_DIR="$work/empty-cache" "$work/c_consumer" 2>&1); then
  echo "install test: a miss without the compiler module succeeded"; exit 1
fi
grep -q "update_theta_and_exner" <<<"$out" || { echo "install test: no kernel named: $out"; exit 1; }
grep -q "$work/prefix/lib/kiln/libkiln_clang.so (beside .*) does not exist" <<<"$out" ||
  { echo "install test: module absence not explained: $out"; exit 1; }
if grep -q "$build_dir" <<<"$out"; then echo "install test: names the build folder: $out"; exit 1; fi
echo "install test: ok"
