#!/usr/bin/env bash
# Checks the one-way layering of the tree (docs/architecture.md):
#   base -> {cache, jit} -> lang -> runtime -> {api, bindings, granule -> {cli, bench, examples}}
# and, inside runtime/, between its sub-folders. Every #include "<folder>/..."
# of a kiln folder must name a folder that the including folder may depend on;
# every source file of a checked folder must lie in a declared layer (a new
# folder is declared here, with what it may include). Prints each breach
# (file, line, include) and exits 1 when there is one.
#   bash tests/layering/check_layering.sh [repository root]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

# What every runtime/ sub-folder may include from the layers below it.
below_runtime="base cache jit kernels_src lang kiln"

# The folders each layer may include (besides system and library headers),
# each named: no layer may include "anything". An include is allowed when its
# path starts with one of these folders ("runtime/metrics" allows
# "runtime/metrics/metrics.hpp").
declare -A allowed=(
  [base]="base"
  [cache]="base cache"
  [jit]="base jit"
  [kernels_src]="kernels_src"
  # The kernel language: the public API's value types (kiln/arg.hpp, spec.hpp, errors.hpp) and itself.
  [lang]="base kiln lang"
  # runtime/, one concern per folder (docs/architecture.md), without loops.
  [runtime/config]="$below_runtime runtime/config"
  [runtime/metrics]="$below_runtime runtime/metrics"
  [runtime/kernels]="$below_runtime runtime/kernels"
  [runtime/layout]="$below_runtime runtime/layout"
  [runtime/load]="$below_runtime runtime/load"
  [runtime/store]="$below_runtime runtime/store runtime/metrics"
  [runtime/call]="$below_runtime runtime/call runtime/metrics"
  # GPU targets, the driver, launches and loaded GPU kernels; resolving a GPU
  # kernel (Runtime::gpu_kernel, the GPU precompile) is resolve/'s.
  [runtime/gpu]="$below_runtime runtime/gpu runtime/call runtime/metrics"
  [runtime/compile]="$below_runtime runtime/compile runtime/config runtime/gpu runtime/metrics runtime/store"
  [runtime/resolve]="$below_runtime runtime/resolve runtime/compile runtime/call runtime/config runtime/gpu
                     runtime/kernels runtime/load runtime/metrics runtime/store"
  [runtime/collective]="$below_runtime runtime/collective runtime/resolve"
  # Cache administration (kiln/cache.hpp): the on-disk store and its index, no Runtime.
  [runtime/admin]="$below_runtime runtime/admin"
  [api]="kiln"
  [bindings]="kiln bindings"
  # The top floor. granule/: the ICON-like grid and time step, on the public API.
  [granule]="kiln granule"
  # The `kiln` command, on the public API alone (its cache commands on kiln/cache.hpp).
  [cli]="kiln granule cli"
  # The benchmarks: the one client allowed internals (through kiln_internal,
  # kiln_jit and kiln_clang_static): kiln's parser and code generator (lang/)
  # write the alternative's translation unit, the embedded kernels
  # (kernels_src/), and the load rows compile and map with jit/'s own code.
  [bench]="kiln granule bench lang kernels_src jit"
  [examples]="kiln granule"
  # The tests reach whatever they test, each folder named.
  [tests]="base cache jit kernels_src lang runtime kiln bindings granule cli tests"
)
# Folders whose includes name kiln's own folders (anything else is a library).
kiln_folders="base cache jit kernels_src lang runtime kiln api bindings granule cli bench examples tests"

# The layer a file belongs to: the longest declared folder that holds it.
layer_of() {
  local path=$1 best=""
  for layer in "${!allowed[@]}"; do
    if [[ $path == "$layer"/* && ${#layer} -gt ${#best} ]]; then best=$layer; fi
  done
  echo "$best"
}

breaches=0
while IFS= read -r -d '' file; do
  file=${file#./}
  layer=$(layer_of "$file")
  if [[ -z $layer ]]; then
    echo "layering: $file lies in no declared layer (declare its folder in tests/layering/check_layering.sh)"
    breaches=$((breaches + 1))
    continue
  fi
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
      echo "layering: $file:$line includes \"$target\" ($layer may include: $(echo ${allowed[$layer]}))"
      breaches=$((breaches + 1))
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" | sed -E 's/^([0-9]+):.*#[[:space:]]*include[[:space:]]*/\1:/')
done < <(for top in $kiln_folders; do
           [[ -d $top ]] && find "$top" -type f \( -name '*.hpp' -o -name '*.h' -o -name '*.cpp' -o -name '*.c' -o -name '*.cc' \) -print0
         done)

if ((breaches > 0)); then
  echo "layering: $breaches include(s) or file(s) break the layering"
  exit 1
fi
echo "layering: every include follows base -> {cache, jit} -> lang -> runtime -> {api, bindings, granule -> {cli, bench, examples}}"
