#!/usr/bin/env bash
# Builds and runs the README's first examples (its ```cpp, ```fortran and
# ```python blocks) against this build, on a cache of their own, so that the
# code a newcomer copies first compiles and runs. Arguments are name=value:
#   readme=FILE                     the README
#   cxx=COMPILER kiln=LIBKILN include=DIR[:DIR...]        the C++ example
#   fc=COMPILER mod=DIR kiln_fortran=LIB kiln_c=LIB       the Fortran example (skipped when fc is empty)
#   python=INTERPRETER pythonpath=DIR                     the Python example (skipped when python is empty)
#   gt4py=1                                               also the GT4Py example (```python gt4py), whose
#                                                         interpreter imports gt4py and icon4py
set -euo pipefail
declare -A arg=()
for a in "$@"; do arg[${a%%=*}]=${a#*=}; done
readme=${arg[readme]:?readme=FILE}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KILN_CACHE_DIR=$tmp/cache

# The first fenced block of a language.
block() {
  awk -v lang="$1" '$0 == "```" lang && !done { inside = 1; next }
                    inside && /^```/ { inside = 0; done = 1; next }
                    inside { print }' "$readme"
}

failed=0
run() {
  local what=$1
  shift
  if "$@" > "$tmp/$what.log" 2>&1; then
    echo "ok: $what"
  else
    echo "FAILED: $what ($*)"
    cat "$tmp/$what.log"
    failed=1
  fi
}

block cpp > "$tmp/first.cpp"
[[ -s $tmp/first.cpp ]] || { echo "no \`\`\`cpp block in $readme"; exit 1; }
includes=()
IFS=: read -ra dirs <<< "${arg[include]:?include=DIR}"
for d in "${dirs[@]}"; do includes+=("-I$d"); done
libdir=$(dirname "${arg[kiln]:?kiln=LIBKILN}")
run "C++ example: compile" "${arg[cxx]:?cxx=COMPILER}" -std=c++20 "${includes[@]}" "$tmp/first.cpp" "${arg[kiln]}" \
  "-Wl,-rpath,$libdir" -o "$tmp/first_cpp"
[[ -x $tmp/first_cpp ]] && run "C++ example: run" "$tmp/first_cpp"

if [[ -n ${arg[fc]:-} ]]; then
  block fortran > "$tmp/first.f90"
  [[ -s $tmp/first.f90 ]] || { echo "no \`\`\`fortran block in $readme"; exit 1; }
  rpath=$(dirname "${arg[kiln_fortran]}"):$(dirname "${arg[kiln_c]}"):$libdir
  run "Fortran example: compile" "${arg[fc]}" "-I${arg[mod]}" "$tmp/first.f90" "${arg[kiln_fortran]}" "${arg[kiln_c]}" \
    "${arg[kiln]}" "-Wl,-rpath,$rpath" -J "$tmp" -o "$tmp/first_fortran"
  [[ -x $tmp/first_fortran ]] && run "Fortran example: run" "$tmp/first_fortran"
else
  echo "skipped: the Fortran example (no Fortran compiler)"
fi

if [[ -n ${arg[python]:-} ]]; then
  block python > "$tmp/first.py"
  [[ -s $tmp/first.py ]] || { echo "no \`\`\`python block in $readme"; exit 1; }
  run "Python example" env "PYTHONPATH=${arg[pythonpath]}" PYTHONDONTWRITEBYTECODE=1 "${arg[python]}" "$tmp/first.py"
else
  echo "skipped: the Python example (no Python module in this build)"
fi

if [[ -n ${arg[gt4py]:-} ]]; then
  # Not gt4py.py: the script's folder comes first on sys.path, and would hide the package.
  block "python gt4py" > "$tmp/gt4py_example.py"
  [[ -s $tmp/gt4py_example.py ]] || { echo "no \`\`\`python gt4py block in $readme"; exit 1; }
  run "GT4Py example" env "PYTHONPATH=${arg[pythonpath]}" PYTHONDONTWRITEBYTECODE=1 "${arg[python]}" -O "$tmp/gt4py_example.py"
else
  echo "skipped: the GT4Py example (no gt4py and icon4py beside this build's Python module)"
fi
exit $failed
