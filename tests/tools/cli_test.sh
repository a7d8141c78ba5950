#!/usr/bin/env bash
# The `kiln` tool: the demo compiles on the first run and nothing on the
# second; cache ls/stats/clear see and remove the entries (what runs noted in
# the index's journal included); a corrupt index is rebuilt.
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
# An index that is not a database is rebuilt from the entries' metadata: by
# whatever opens it next (here `cache ls`, as a Runtime would), or on request.
printf 'not a database %.0s' {1..300} > "$KILN_CACHE_DIR/index.sqlite"
[[ $("$kiln" cache ls 2>/dev/null | grep -c update_theta_and_exner) -eq 2 ]] || fail "garbage index not rebuilt by ls"
"$kiln" cache reindex | grep -q "14 records (0 without metadata), 0 entries skipped" ||
  fail "cache reindex: $("$kiln" cache reindex)"
[[ $("$kiln" cache ls | grep -c update_theta_and_exner) -eq 2 ]] || fail "cache ls after reindex: $("$kiln" cache ls)"
"$kiln" cache stats | grep -q "entries:        14" || fail "cache stats: $("$kiln" cache stats)"
"$kiln" cache clear | grep -q "removed 14 entries" || fail "cache clear"
"$kiln" cache stats | grep -q "entries:        0" || fail "entries left after clear"
if "$kiln" cache frobnicate 2>/dev/null; then fail "an unknown subcommand succeeded"; fi
if KILN_METRICS=maybe "$kiln" "${demo[@]}" > /dev/null 2> "$work/err.txt"; then fail "KILN_METRICS=maybe accepted"; fi
grep -q "KILN_METRICS='maybe'" "$work/err.txt" || fail "bad variable not named: $(cat "$work/err.txt")"
# gc and verify, on a cache of their own (the one above is cleared).
export KILN_CACHE_DIR="$work/gc-cache"
"$kiln" "${demo[@]}" > /dev/null
stat_of() { "$kiln" cache stats | awk -v field="$1:" '$1 == field { print $2 }'; }
if "$kiln" cache gc > /dev/null 2> "$work/err.txt"; then fail "cache gc without a size succeeded"; fi
grep -q "KILN_CACHE_MAX_SIZE" "$work/err.txt" || fail "cache gc without a size: $(cat "$work/err.txt")"
if "$kiln" cache gc --max-size 12x > /dev/null 2> "$work/err.txt"; then fail "cache gc --max-size 12x succeeded"; fi
grep -q "'12x': not a size" "$work/err.txt" || fail "cache gc --max-size 12x: $(cat "$work/err.txt")"
before=$(stat_of bytes)
limit=$((before / 2))
gc_out=$("$kiln" cache gc --max-size "$limit")
echo "$gc_out" | grep -Eq "^removed [1-9][0-9]* entries" || fail "cache gc removed nothing: $gc_out"
after=$(stat_of bytes)
((after < before && after <= limit)) || fail "cache gc: $before bytes before, $after after, limit $limit"
[[ $(stat_of indexed) -eq $(stat_of entries) ]] || fail "gc left index records: $("$kiln" cache stats)"
KILN_CACHE_MAX_SIZE=$after "$kiln" cache gc | grep -q "^removed 0 entries" || fail "gc of a cache that fits removed entries"

# verify: an entry with one byte of its payload flipped by hand, and a killed writer's temporary.
entries=$(stat_of entries)
"$kiln" cache verify | grep -q "$entries checked, 0 bad, 0 removed" || fail "cache verify: $("$kiln" cache verify)"
entry=$(find "$KILN_CACHE_DIR" -regextype posix-extended -regex '.*/[0-9a-f]{2}/[0-9a-f]{30}' -type f | head -n 1)
# The payload is the entry's first bytes (cache/entry_format.hpp): flip the first one.
first=$(head -c 1 "$entry" | od -An -tu1 | tr -d ' ')
printf "\\$(printf '%03o' $((first ^ 1)))" | dd of="$entry" bs=1 seek=0 conv=notrunc status=none
orphan="$(dirname "$entry")/.tmp.$(basename "$entry").12345.00ff"
echo "half an entry" > "$orphan"
touch -d '2 hours ago' "$orphan"
verified=$("$kiln" cache verify)
echo "$verified" | grep -q "^bad entry: $entry: payload checksum mismatch" || fail "cache verify: $verified"
echo "$verified" | grep -q "$entries checked, 1 bad, 1 removed, 1 orphaned temporaries removed" ||
  fail "cache verify: $verified"
[[ ! -e $entry && ! -e $orphan ]] || fail "cache verify left the bad entry or the temporary"
[[ $(stat_of entries) -eq $((entries - 1)) && $(stat_of indexed) -eq $((entries - 1)) ]] ||
  fail "after verify: $("$kiln" cache stats)"
# kiln warm: GPU builds into the cache, no GPU needed (NVRTC only; said and
# skipped where the CUDA toolkit is missing).
warm=(warm --arch sm_90 --nx 16 --ny 14 --levels 10)
if "$kiln" "${warm[@]}" > "$work/warm1.txt" 2> "$work/warm_err.txt"; then
  grep -q "^summary: 14 compiles, 0 disk hits" "$work/warm1.txt" || fail "warm: $(cat "$work/warm1.txt")"
  "$kiln" "${warm[@]}" | grep -q "^summary: 0 compiles, 14 disk hits" || fail "second warm compiled again"
  "$kiln" cache ls > "$work/ls.txt"  # to a file: grep -q may stop reading early, and pipefail sees SIGPIPE
  grep -q "update_theta_and_exner \[cuda sm_90\]" "$work/ls.txt" || fail "cache ls lacks the GPU entries"
  if "$kiln" warm --arch sm_35 > /dev/null 2> "$work/warm_err.txt"; then fail "sm_35 accepted"; fi
  grep -q "cannot compile for sm_35; it supports" "$work/warm_err.txt" || fail "sm_35: $(cat "$work/warm_err.txt")"
elif grep -q "NVRTC (CUDA's run-time compiler) not found" "$work/warm_err.txt"; then
  echo "cli test: kiln warm not checked: $(head -1 "$work/warm_err.txt")"
else
  fail "warm: $(cat "$work/warm_err.txt")"
fi
hip=(warm --backend hip --arch gfx90a --nx 16 --ny 14 --levels 10 --mode specialised)
if "$kiln" "${hip[@]}" > "$work/hip.txt" 2> "$work/hip_err.txt"; then
  grep -q "^summary: 7 compiles, 0 disk hits" "$work/hip.txt" || fail "hip warm: $(cat "$work/hip.txt")"
elif grep -q "hipRTC (HIP's run-time compiler, in libamdhip64) not found" "$work/hip_err.txt"; then
  echo "cli test: kiln warm --backend hip not checked: $(head -1 "$work/hip_err.txt")"
else
  fail "hip warm: $(cat "$work/hip_err.txt")"
fi
# Manifests: export, warm a cleared cache from it, then the demo compiles
# nothing, and a second export is the same set.
rm -rf "$KILN_CACHE_DIR"
"$kiln" "${demo[@]}" > /dev/null
"$kiln" cache export-manifest -o "$work/manifest.json"
[[ $(grep -c '"kernel"' "$work/manifest.json") -eq 14 ]] || fail "manifest: $(head -c 400 "$work/manifest.json")"
"$kiln" cache clear > /dev/null
"$kiln" warm --manifest "$work/manifest.json" -j 2 > "$work/warm_manifest.txt"
grep -q "^summary: 14 kernels: 14 compiled, 0 already cached, 0 failed" "$work/warm_manifest.txt" ||
  fail "warm --manifest: $(cat "$work/warm_manifest.txt")"
"$kiln" "${demo[@]}" | grep -q "^summary: 0 compiles, 14 disk hits" || fail "the demo compiled after warm --manifest"
"$kiln" cache export-manifest | cmp -s - "$work/manifest.json" || fail "the manifest did not round-trip"
"$kiln" warm --from-index | grep -q "^summary: 14 kernels: 0 compiled, 14 already cached" || fail "warm --from-index"
if "$kiln" warm > /dev/null 2> "$work/warm_err.txt"; then fail "warm without a manifest or --arch succeeded"; fi
grep -q "give --manifest FILE, --from-index, or --arch" "$work/warm_err.txt" || fail "warm: $(cat "$work/warm_err.txt")"
echo "cli test: ok"
