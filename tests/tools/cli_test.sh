#!/usr/bin/env bash
# The `kiln` tool: the demo compiles on the first run and nothing on the
# second; cache ls/stats/clear see and remove the entries.
set -euo pipefail
kiln=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export KILN_CACHE_DIR="$work/cache" KILN_LOG_LEVEL=error
demo=(demo --nx 16 --ny 14 --levels 10 --steps 3 --limited-area --layout fortran)

fail() { echo "cli test: $*" >&2; exit 1; }

first=$("$kiln" "${demo[@]}")
# 7 kernels, each specialised and generic: 14 binaries.
echo "$first" | grep -q "max |diff| over every field: 0$" || fail "specialised and generic differ: $first"
echo "$first" | grep -q "^summary: 14 compiles, 0 disk hits" || fail "first run: $(echo "$first" | grep summary)"
KILN_METRICS_FILE="$work/metrics.json" "$kiln" "${demo[@]}" > "$work/second.txt"
grep -q "^summary: 0 compiles, 14 disk hits" "$work/second.txt" || fail "second run: $(grep summary "$work/second.txt")"
grep -q '"compiles": 0' "$work/metrics.json" || fail "metrics JSON lacks compiles 0"

[[ $("$kiln" cache ls | grep -c update_theta_and_exner) -eq 2 ]] || fail "cache ls: $("$kiln" cache ls)"
"$kiln" cache stats | grep -q "entries:        14" || fail "cache stats: $("$kiln" cache stats)"
"$kiln" cache clear | grep -q "removed 14 entries" || fail "cache clear"
"$kiln" cache stats | grep -q "entries:        0" || fail "entries left after clear"
if "$kiln" cache frobnicate 2>/dev/null; then fail "an unknown subcommand succeeded"; fi
if KILN_METRICS=maybe "$kiln" "${demo[@]}" > /dev/null 2> "$work/err.txt"; then fail "KILN_METRICS=maybe accepted"; fi
grep -q "KILN_METRICS='maybe'" "$work/err.txt" || fail "bad variable not named: $(cat "$work/err.txt")"
echo "cli test: ok"
