#!/usr/bin/env bash
# The layering check must fail where it should: a tree in which jit/ includes
# cache/, one in which a binding reaches into runtime/, one in which a runtime/
# sub-folder includes one above it (store/ -> resolve/, gpu/ -> resolve/), one in which the
# granule reaches lang/, one in which an example includes the kiln command's
# code, and one with a source file in an undeclared folder: each is refused
# with the file named; a clean tree passes.
set -euo pipefail
check=$(cd "$(dirname "$0")" && pwd)/check_layering.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{base,cache,jit,runtime/store,runtime/resolve,bindings/c,granule,cli,examples/x}
echo '#include <vector>' >"$work/base/ok.hpp"
echo '#include "base/ok.hpp"' >"$work/cache/ok.cpp"
echo '#include "runtime/store/ok.hpp"' >"$work/runtime/resolve/ok.cpp"
echo '#include "kiln/kiln.hpp"' >"$work/granule/ok.cpp"
echo '#include "granule/ok.hpp"' >"$work/examples/x/ok.cpp"
bash "$check" "$work" >/dev/null

# refused FILE LINE INCLUDE: the check fails and names FILE:LINE and INCLUDE.
refused() {
  local out
  if out=$(bash "$check" "$work"); then echo "$1 including $3 passed"; exit 1; fi
  grep -qF "$1:$2 includes \"$3\"" <<<"$out" || { echo "not named: $1:$2 $3"; echo "$out"; exit 1; }
  rm "$work/$1"
}

echo '#include "cache/key.hpp"' >"$work/jit/bad.cpp"
refused jit/bad.cpp 1 cache/key.hpp
printf '// a binding\n#include "kiln/kiln.hpp"\n#include "runtime/resolve/runtime_impl.hpp"\n' >"$work/bindings/c/bad.c"
refused bindings/c/bad.c 3 runtime/resolve/runtime_impl.hpp
echo '#include "runtime/resolve/runtime_impl.hpp"' >"$work/runtime/store/bad.cpp"
refused runtime/store/bad.cpp 1 runtime/resolve/runtime_impl.hpp
mkdir -p "$work/runtime/gpu"
echo '#include "runtime/resolve/runtime_impl.hpp"' >"$work/runtime/gpu/bad.cpp"
refused runtime/gpu/bad.cpp 1 runtime/resolve/runtime_impl.hpp
echo '#include "lang/parser.hpp"' >"$work/granule/bad.hpp"
refused granule/bad.hpp 1 lang/parser.hpp
echo '#include "cli/manifest.hpp"' >"$work/examples/x/bad.cpp"
refused examples/x/bad.cpp 1 cli/manifest.hpp

mkdir -p "$work/runtime/newpart"
echo '#include "base/ok.hpp"' >"$work/runtime/newpart/x.cpp"
if out=$(bash "$check" "$work"); then echo "a file in an undeclared folder passed"; exit 1; fi
grep -qF 'runtime/newpart/x.cpp lies in no declared layer' <<<"$out"
echo "layering check: refuses every breach"
