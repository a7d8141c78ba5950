#!/usr/bin/env bash
# The layering check must fail where it should: a tree in which jit/ includes
# cache/, and one in which a binding reaches into runtime/, are each refused
# with the file named; a clean tree passes.
set -euo pipefail
check=$(cd "$(dirname "$0")" && pwd)/check_layering.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{base,cache,jit,runtime,bindings/c}
echo '#include <vector>' >"$work/base/ok.hpp"
echo '#include "base/ok.hpp"' >"$work/cache/ok.cpp"
bash "$check" "$work" >/dev/null

echo '#include "cache/key.hpp"' >"$work/jit/bad.cpp"
if out=$(bash "$check" "$work"); then echo "jit including cache/ passed"; exit 1; fi
grep -q 'jit/bad.cpp:1 includes "cache/key.hpp"' <<<"$out"
rm "$work/jit/bad.cpp"

printf '// a binding\n#include "kiln/kiln.hpp"\n#include "runtime/resolve/runtime_impl.hpp"\n' >"$work/bindings/c/bad.c"
if out=$(bash "$check" "$work"); then echo "a binding including runtime/ passed"; exit 1; fi
grep -q 'bindings/c/bad.c:3 includes "runtime/resolve/runtime_impl.hpp"' <<<"$out"
echo "layering check: refuses both breaches"
