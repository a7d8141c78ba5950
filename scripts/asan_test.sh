#!/usr/bin/env bash
# AddressSanitizer check of kiln's own code (scripts/test.sh runs it after the
# whole suite): configures build-asan/ with KILN_SANITIZE=address, builds only
# what the stencil tests and the `kiln run` tests need, and runs those tests.
# Any ASan report fails it, even from a process a test expects to fail.
# An optional argument names another build folder, a second another main
# build (default build/, whose compile worker and compiler module it uses).
#
# Covered: kiln's code on these tests' path, in libkiln, the kiln tool and the
# tests themselves: specs and argument checks, the views and temporaries a
# call builds, the cache (entries, index, locks), the worker's client side,
# `kiln run`'s .npy reading and writing and its arguments; the stencil tests
# run seven ICON kernels on two grids in three layouts, and the cli test the
# demo and every cache command.
# Not covered: the kernels themselves, compiled at run time by clang in the
# compile worker without -fsanitize (their bounds are checked by the stencil
# tests' untouched-outside-the-domain comparisons instead); the compile worker
# and compiler module (the main build's, below), with base/ and jit's module
# client that the worker shares with libkiln (uninstrumented: see
# KILN_SANITIZE in CMakeLists.txt);
# libraries (SQLite, the C++ library; spdlog and fmt, compiled once into
# kiln_spdlog, which the uninstrumented worker links too), although ASan's
# interceptors check the ranges kiln hands to memcpy, read, write and the like.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-asan}
main=${2:-$root/build}

# The tests: the stencil kernels (tests/api: stencils_test.cpp, and
# kernels_test.cpp's Stencil; extents_test.cpp and check_mode_test.cpp: the
# calls the declared extents and check mode refuse), `kiln run` (tests/tools/run_command_test.cpp,
# and spec_options_test.cpp for its --spec parser) and the cli test
# (tests/tools/cli_test.sh: the demo, kiln run, the cache commands, warm,
# check), and (issue 33) ThreadRules and PreludeMath on the CPU (not its NVRTC
# compile): a call's thread choice, kiln's phase barrier, the prelude's math;
# Grids/Stencils holds the out-of-range tables too (whose JIT'd writes only
# valgrind sees: api.bad_tables_valgrind). Only their programs are built: the
# API tests' six files as
# kiln_api_asan_tests (tests/api/CMakeLists.txt; their tests named asan.*),
# not the whole of kiln_api_tests.
tests='^(asan\.(Grids/Stencils|Stencil|Extents|CheckMode|ThreadRules)\.|asan\.PreludeMath\.EveryFunction|tools\.run\.|tools\.SpecOptions\.|tools\.kiln_cli$)'
targets=(kiln_api_asan_tests kiln_run_command_tests kiln_spec_options_tests kiln_tool)

# The compile worker and compiler module are built without instrumentation in
# any case (KILN_SANITIZE in CMakeLists.txt): where the main build exists
# (scripts/test.sh makes it first), its own, brought up to date here, are used
# (KILN_PREBUILT_COMPILER, jit/CMakeLists.txt) rather than compiled again at
# -O1; this build takes their fingerprint itself, of that module.
prebuilt=
if [[ -f $main/CMakeCache.txt ]]; then
  cmake --build "$main" -j"$(nproc)" --target kiln_clang kiln_compile_worker
  prebuilt=$main/jit
fi

# Ninja when the folder is new (as scripts/build.sh): make built the four
# targets one after the other, often on one core.
generator=()
if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja > /dev/null; then generator=(-G Ninja); fi

# -O1 -g1: ASan's usual level (quicker to build than -O2/-O3, stack traces
# that follow the source) with line tables for the reports; no NDEBUG, so the
# libraries' own assertions (nlohmann-json, fmt) check too. The flags are set
# here in full so that a folder configured otherwise before is made right.
cmake -S "$root" -B "$build" "${generator[@]}" -DKILN_SANITIZE=address -DKILN_BUILD_BENCHMARKS=OFF \
  -DKILN_PREBUILT_COMPILER="$prebuilt" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS= -DCMAKE_CXX_FLAGS= -DCMAKE_EXE_LINKER_FLAGS= -DCMAKE_SHARED_LINKER_FLAGS= \
  -DCMAKE_MODULE_LINKER_FLAGS= -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

# Every report goes to a file of its own (<reports>/asan.<pid>) as well as
# failing its process (halt_on_error, exit status 1): a test that expects a
# command to fail (cli_test.sh's refused arguments) would otherwise take an
# ASan report for the failure it wanted. The folder is checked at the end.
# Leaks are reported too: no instrumented process holds clang or LLVM (they
# run in the uninstrumented worker), so a leak there is kiln's or a test's.
reports="$build/asan-reports"
rm -rf "$reports"
mkdir -p "$reports"
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_init_order=1:log_path=$reports/asan"
symbolizer=/usr/lib/llvm-19/bin/llvm-symbolizer
if [[ -x $symbolizer ]]; then export ASAN_SYMBOLIZER_PATH=$symbolizer; fi

status=0
(cd "$build" && ctest --output-on-failure -j"$(nproc)" --timeout 600 --no-tests=error -R "$tests") || status=$?
if compgen -G "$reports/asan.*" > /dev/null; then
  echo "asan: AddressSanitizer reported invalid accesses:" >&2
  cat "$reports"/asan.* >&2
  exit 1
fi
exit "$status"
