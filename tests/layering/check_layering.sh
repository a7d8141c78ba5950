#!/usr/bin/env bash
# Checks the one-way layering of the tree (docs/architecture.md):
#   base -> {cache, jit} -> lang -> runtime -> {api, bindings, tools}
# Every #include "<folder>/..." of a kiln folder must name a folder that the
# including folder may depend on. Prints each breach (file, line, include)
# and exits 1 when there is one.
#   bash tests/layering/check_layering.sh [repository root]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

# The folders each layer may include (besides system and library headers).
declare -A allowed=(
  [base]="base"
  [cache]="base cache"
  [jit]="base jit"
  [kernels_src]="kernels_src"
  # The kernel language: the public API's value types (kiln/arg.hpp, spec.hpp, errors.hpp) and itself.
  [lang]="base kiln lang"
  [runtime]="base cache jit kernels_src lang runtime kiln"
  [api]="kiln"
  [bindings]="kiln bindings"
  # tools use the public API; the few that need internals (kiln_bench's code
  # generator, the cache commands) reach them through the kiln_internal
  # target, which offers cache/ and lang/ only; kiln_bench's load
  # rows also use jit/ (its compiler code, its mapper) beside LLVM ORC.
  [tools]="kiln tools kernels_src cache lang jit"
)
# Folders whose includes name kiln's own folders (anything else is a library).
kiln_folders="base cache jit kernels_src lang runtime kiln api bindings tools tests"

breaches=0
for layer in "${!allowed[@]}"; do
  [[ -d $layer ]] || continue
  while IFS= read -r -d '' file; do
    while IFS=: read -r line include; do
      target=${include#*\"}
      target=${target%%\"*}
      top=${target%%/*}
      [[ " $kiln_folders " == *" $top "* ]] || continue
      ok=0
      for prefix in ${allowed[$layer]}; do
        [[ $target == "$prefix"/* ]] && ok=1 && break
      done
      if ((ok == 0)); then
        echo "layering: $file:$line includes \"$target\" ($layer may include: ${allowed[$layer]})"
        breaches=$((breaches + 1))
      fi
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" | sed -E 's/^([0-9]+):.*#[[:space:]]*include[[:space:]]*/\1:/')
  done < <(find "$layer" -type f \( -name '*.hpp' -o -name '*.h' -o -name '*.cpp' -o -name '*.c' -o -name '*.cc' \) -print0)
done

if ((breaches > 0)); then
  echo "layering: $breaches include(s) break the layering"
  exit 1
fi
echo "layering: every include follows base -> {cache, jit} -> lang -> runtime -> {api, bindings, tools}"
