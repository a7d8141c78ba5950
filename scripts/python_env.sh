#!/usr/bin/env bash
# Creates .venv/ at the repository root with the pinned PyPI packages of
# scripts/python-requirements.txt (nanobind, scikit-build-core, numpy, pytest,
# matplotlib, jsonschema, mpi4py: built with MPICC, default mpicc, the MPI kiln
# links), scripts/gt4py-requirements.txt (gt4py and what
# icon4py imports) and scripts/icon4py-requirements.txt (icon4py's wheels,
# --no-deps: they pin an older gt4py). Idempotent: a stamp holding the
# requirements' hash and the interpreter's version skips pip when nothing
# changed; a change makes a new .venv. KILN_PYTHON picks the interpreter;
# without it, python3.12 where one is found (icon4py 0.4.1 needs Python >= 3.12;
# Debian 12's python3 is 3.11), else python3. KILN_VENV puts the environment
# elsewhere (to try a requirement change beside a .venv others use).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${KILN_VENV:-$root/.venv}
requirements=("$root"/scripts/{python,gt4py,icon4py}-requirements.txt)
python=${KILN_PYTHON:-}
if [[ -z $python ]]; then
  python=python3
  pyenv_root=$(pyenv root 2> /dev/null || true)
  for candidate in python3.12 ${pyenv_root:+"$pyenv_root"/versions/3.12*/bin/python3.12}; do
    if "$candidate" -c '' 2> /dev/null; then
      python=$candidate
      break
    fi
  done
fi
want="$(cat "${requirements[@]}" | sha256sum | cut -d' ' -f1) $("$python" --version 2>&1)"
stamp="$venv/.kiln-requirements"

if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "setup: $venv up to date"
  exit 0
fi
echo "setup: creating $venv with $("$python" --version 2>&1)"
rm -rf "$venv"
"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check)
"${pip[@]}" --upgrade pip
MPICC=${MPICC:-mpicc} "${pip[@]}" -r "${requirements[0]}" -r "${requirements[1]}"
"${pip[@]}" --no-deps -r "${requirements[2]}"
echo "$want" > "$stamp"
