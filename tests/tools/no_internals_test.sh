#!/usr/bin/env bash
# The kiln binary links libkiln only, as users do: it holds no static copy of
# kiln's internals (cache/, base/, jit/, lang/, runtime/) or of spdlog, whose
# state would then be a second one beside libkiln's (a second logger, a second
# cache layer). Its symbols are read with nm; the binary's own (kiln::cli::)
# must be there, so that a stripped binary cannot pass by showing nothing.
#   no_internals_test.sh <kiln binary>
set -euo pipefail
binary=$1
command -v nm > /dev/null || { echo "no_internals: nm not found (binutils)"; exit 77; }
symbols=$(nm -C "$binary")
if ! grep -q 'kiln::cli::' <<< "$symbols"; then
  echo "no_internals: $binary shows none of its own symbols (kiln::cli::): stripped? nothing checked"
  exit 1
fi
internals=$(grep -E 'kiln::(cache|base|jit|lang|runtime)::|spdlog::' <<< "$symbols" || true)
if [[ -n $internals ]]; then
  echo "no_internals: $binary holds $(wc -l <<< "$internals") symbols of kiln's internals or spdlog, e.g.:"
  head -n 5 <<< "$internals"
  exit 1
fi
echo "no_internals: $binary holds none of kiln's internals"
