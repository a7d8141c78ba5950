#!/usr/bin/env bash
# Creates .venv/ at the repository root with the pinned PyPI packages of
# scripts/python-requirements.txt (nanobind, scikit-build-core, numpy, pytest,
# matplotlib, jsonschema). Idempotent: a stamp holding the requirements' hash
# skips pip when nothing changed. KILN_PYTHON picks the interpreter (python3).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
requirements="$root/scripts/python-requirements.txt"
python="${KILN_PYTHON:-python3}"
want=$(sha256sum "$requirements" | cut -d' ' -f1)
stamp="$venv/.kiln-requirements"

if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "setup: .venv up to date"
  exit 0
fi
echo "setup: creating .venv with $("$python" --version 2>&1)"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
"$venv/bin/python" -m pip install -q -r "$requirements"
echo "$want" > "$stamp"
