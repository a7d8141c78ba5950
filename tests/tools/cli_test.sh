#!/usr/bin/env bash
# The `kiln` tool: the demo compiles on the first run and nothing on the
# second; cache ls/stats/clear see and remove the entries (what runs noted in
# the index's journal included); a corrupt index is rebuilt; warm and export-manifest
# with user kernels (their files and digests); kiln check.
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
# The default output is a summary of about a dozen lines, not the table. (Here-strings, not
# `echo | grep -q`: with pipefail, grep leaving early can fail the pipe with SIGPIPE.)
grep -q "^init (cold): 14 kernels in [0-9.]* ms, of which compile" <<<"$first" || fail "first run's init: $first"
grep -q "^specialised against generic: a step [0-9.]*x as fast" <<<"$first" || fail "no comparison: $first"
[[ $(wc -l <<<"$first") -le 14 ]] || fail "the default output is $(wc -l <<<"$first") lines: $first"
if grep -q "= init" <<<"$first"; then fail "the table printed without --table: $first"; fi
KILN_METRICS_FILE="$work/metrics.json" "$kiln" "${demo[@]}" > "$work/second.txt"
grep -q "^summary: 0 compiles, 14 disk hits" "$work/second.txt" || fail "second run: $(grep summary "$work/second.txt")"
grep -q "^init (warm): 14 kernels" "$work/second.txt" || fail "second run's init: $(cat "$work/second.txt")"
grep -q '"compiles": 0' "$work/metrics.json" || fail "metrics JSON lacks compiles 0"
# --table: every phase; the calls are timed, so run is never 0 (it read
# "= run 0.000" unless KILN_METRICS=1 was set).
table=$("$kiln" "${demo[@]}" --table)
grep -q "^TOTAL  *= run  *[0-9]*\.[0-9]*$" <<<"$table" || fail "--table: no TOTAL run row: $table"
if grep -Eq "^TOTAL += run +0\.000$" <<<"$table"; then fail "--table: run not timed: $table"; fi
# KILN_METRICS=1: the Runtime prints the table to stderr as it ends.
KILN_METRICS=1 "$kiln" "${demo[@]}" 2> "$work/err.txt" > /dev/null
grep -q "^kiln: init vs run" "$work/err.txt" || fail "KILN_METRICS=1 printed no table: $(cat "$work/err.txt")"
# Threads: the same binaries (the thread count is no part of a key), and
# specialised and generic still agree bit for bit. --threads 3 is an upper
# bound: a call runs on one thread per 16,384 points (docs/manual/threads.md),
# and this grid's calls (at most 702 x 10 points) run on one: the table names
# no thread count (it does above one; the stencil tests split such grids with run_on).
threaded=$("$kiln" "${demo[@]}" --threads 3 --table)
echo "$threaded" | grep -q "^summary: 0 compiles, 14 disk hits" || fail "--threads 3 compiled: $threaded"
echo "$threaded" | grep -q "max |diff| over every field: 0$" || fail "--threads 3: specialised and generic differ"
echo "$threaded" | grep -q "memory hits " || fail "--threads 3: no table: $threaded"
if grep -q ", threads [0-9]" <<<"$threaded"; then fail "--threads 3: small calls not on one thread: $threaded"; fi

[[ $("$kiln" cache ls | grep -c update_theta_and_exner) -eq 2 ]] || fail "cache ls: $("$kiln" cache ls)"
# kiln's index with its pages damaged (its header, which says kiln made it,
# intact) is rebuilt from the entries' metadata: by whatever opens it next
# (here `cache ls`, as a Runtime would), or on request.
index="$KILN_CACHE_DIR/index.sqlite"
printf '\377%.0s' {1..3996} | dd of="$index" bs=1 seek=100 conv=notrunc status=none
[[ $("$kiln" cache ls 2>/dev/null | grep -c update_theta_and_exner) -eq 2 ]] || fail "damaged index not rebuilt by ls"
# A file kiln did not make at the index's path (a typo: KILN_INDEX_PATH=~/.bashrc)
# is refused, named and left as it was: not rebuilt, nothing written beside
# it, not even by a run that compiles; the commands that need it fail, before
# they remove anything. (A cache of its own: the one above keeps its 14 entries.)
printf 'alias ll="ls -l"\n' > "$work/bashrc"
cp "$work/bashrc" "$work/bashrc.saved"
typo=(env KILN_CACHE_DIR="$work/typo-cache" KILN_INDEX_PATH="$work/bashrc" KILN_LOG_LEVEL=warn "$kiln")
"${typo[@]}" demo --nx 6 --ny 4 --levels 3 --steps 1 --mode specialised > /dev/null 2> "$work/err.txt" ||
  fail "a run with KILN_INDEX_PATH at a text file: $(cat "$work/err.txt")"
grep -q "$work/bashrc: not a SQLite database" "$work/err.txt" || fail "the run did not say why: $(cat "$work/err.txt")"
for command in ls stats clear reindex "gc --max-size 1" export-manifest; do
  # shellcheck disable=SC2086 # "gc --max-size 1" is three words
  if "${typo[@]}" cache $command > /dev/null 2> "$work/err.txt"; then fail "cache $command used $work/bashrc"; fi
  grep -q "^kiln cache ${command%% *}: $work/bashrc: not a SQLite database; kiln uses only an index it made" \
    "$work/err.txt" || fail "cache $command: $(cat "$work/err.txt")"
done
status=0
"${typo[@]}" cache verify > /dev/null 2> "$work/err.txt" || status=$?
[[ $status -eq 8 ]] || fail "cache verify beside a foreign index: status $status, $(cat "$work/err.txt")"
cmp -s "$work/bashrc" "$work/bashrc.saved" || fail "KILN_INDEX_PATH's file was changed"
[[ $(ls "$work" | grep -c '^bashrc') -eq 2 ]] || fail "something was written beside it: $(ls "$work")"
[[ $(find "$work/typo-cache" -regextype posix-extended -regex '.*/[0-9a-f]{2}/[0-9a-f]{30}' -type f | wc -l) -eq 7 ]] ||
  fail "entries were removed though the index was refused"
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
# The same strict rule as KILN_CACHE_MAX_SIZE: no exponents (1e3 was taken as 1000 bytes).
if "$kiln" cache gc --max-size 1e3 > /dev/null 2> "$work/err.txt"; then fail "cache gc --max-size 1e3 succeeded"; fi
grep -q "'1e3': not a size" "$work/err.txt" || fail "cache gc --max-size 1e3: $(cat "$work/err.txt")"
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
# Exit status as fsck's: 0 clean (above), 1 damage found and repaired.
status=0
verified=$("$kiln" cache verify) || status=$?
[[ $status -eq 1 ]] || fail "cache verify that removed a bad entry: status $status, not 1"
echo "$verified" | grep -q "^bad entry: $entry: payload checksum mismatch" || fail "cache verify: $verified"
echo "$verified" | grep -q "$entries checked, 1 bad, 1 removed, 1 orphaned temporaries removed" ||
  fail "cache verify: $verified"
[[ ! -e $entry && ! -e $orphan ]] || fail "cache verify left the bad entry or the temporary"
[[ $(stat_of entries) -eq $((entries - 1)) && $(stat_of indexed) -eq $((entries - 1)) ]] ||
  fail "after verify: $("$kiln" cache stats)"
# A FIFO under an entry's name blocked every reader for good, and verify said
# the cache was healthy: now verify returns, names it, leaves it (not kiln's
# file) and exits 4, damage left in place.
fifo="$(dirname "$entry")/$(printf 'f%.0s' {1..30})"
mkfifo "$fifo"
status=0
verified=$(timeout 60 "$kiln" cache verify) || status=$?
[[ $status -eq 4 ]] || fail "cache verify with a FIFO at an entry's path: status $status, not 4: $verified"
echo "$verified" | grep -q "^bad entry: $fifo: a FIFO, not an entry file (left in place)" ||
  fail "cache verify did not name the FIFO: $verified"
[[ -p $fifo ]] || fail "cache verify removed the FIFO"
rm "$fifo"
# clear and gc on a cache the user may not write (root too, without the
# capabilities that override permission bits): they fail naming the cause,
# instead of "removed 0 entries" and 0, and remove nothing.
read_only=(setpriv --bounding-set=-dac_override,-dac_read_search,-fowner --)
[[ $(id -u) -eq 0 ]] || read_only=()
if [[ ${#read_only[@]} -eq 0 ]] || "${read_only[@]}" true 2> /dev/null; then
  chmod 0500 "$KILN_CACHE_DIR"/[0-9a-f][0-9a-f]/
  for command in clear "gc --max-size 1"; do
    status=0
    # shellcheck disable=SC2086 # "gc --max-size 1" is three words
    "${read_only[@]}" "$kiln" cache $command > "$work/out.txt" 2> "$work/err.txt" || status=$?
    [[ $status -ne 0 ]] || fail "cache $command on a read-only cache exited 0: $(cat "$work/out.txt")"
    grep -q "^kiln cache ${command%% *}: $KILN_CACHE_DIR/.*: unlink: Permission denied" "$work/err.txt" ||
      fail "cache $command on a read-only cache: $(cat "$work/err.txt")"
  done
  chmod 0700 "$KILN_CACHE_DIR"/[0-9a-f][0-9a-f]/
  [[ $(stat_of entries) -eq $((entries - 1)) && $(stat_of indexed) -eq $((entries - 1)) ]] ||
    fail "after clear and gc on a read-only cache: $("$kiln" cache stats)"
else
  echo "cli test: clear and gc on a read-only cache not checked: setpriv cannot drop capabilities here"
fi
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
# ...and ends with one batch of the 14, which writes their bundle (docs/manual/cache.md, Bundles).
grep -q "^kiln warm: the 14 CPU kernels resolved as one batch" "$work/warm_manifest.txt" ||
  fail "warm --manifest did not resolve its kernels as one batch: $(cat "$work/warm_manifest.txt")"
"$kiln" cache ls > "$work/ls.txt"  # whole, then grep: grep -q would end the pipe early (pipefail)
bundle_key=$(awk '/kiln.bundle/ {print $1}' "$work/ls.txt")
[[ -n $bundle_key ]] || fail "warm --manifest wrote no bundle: $(cat "$work/ls.txt")"
"$kiln" cache show "$bundle_key" > "$work/show.txt"
grep -q '^cache bundle: *{"members":[0-9]*,"of":14}' "$work/show.txt" ||
  fail "cache show of the bundle: $(cat "$work/show.txt")"
if "$kiln" cache show --source "$bundle_key" > /dev/null 2> "$work/err.txt"; then fail "a bundle's --source succeeded"; fi
grep -q "is a cache bundle: no translation unit" "$work/err.txt" || fail "bundle --source: $(cat "$work/err.txt")"
"$kiln" cache export-manifest | cmp -s - "$work/manifest.json" || fail "the manifest did not round-trip"
"$kiln" warm --from-index | grep -q "^summary: 14 kernels: 0 compiled, 14 already cached" || fail "warm --from-index"
# For compute nodes of an x86-64 level this host cannot run (AVX-512 hidden
# from glibc): compiled, not loaded; then found under the level's keys.
GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F "$kiln" warm --manifest "$work/manifest.json" --target-cpu x86-64-v4 \
  > "$work/v4.txt" 2>&1 || fail "warm --target-cpu x86-64-v4: $(cat "$work/v4.txt")"
grep -q "^summary: 14 kernels: 14 compiled, 0 already cached, 0 failed" "$work/v4.txt" || fail "v4: $(cat "$work/v4.txt")"
KILN_TARGET_CPU=x86-64-v4 "$kiln" warm --manifest "$work/manifest.json" |
  grep -q "^summary: 14 kernels: 0 compiled, 14 already cached" || fail "KILN_TARGET_CPU=x86-64-v4 missed the v4 entries"
# cache ls shows what each entry was compiled for (issue 33, item 11): the
# level for KILN_TARGET_CPU's, the host's CPU (marked +) for the others.
"$kiln" cache ls > "$work/ls.txt"
[[ $(grep -c ' x86-64-v4 .*update_theta_and_exner' "$work/ls.txt") -eq 2 ]] || fail "cache ls target: $(cat "$work/ls.txt")"
[[ $(grep -c '+ .*update_theta_and_exner' "$work/ls.txt") -eq 2 ]] || fail "cache ls host target: $(cat "$work/ls.txt")"
if "$kiln" warm > /dev/null 2> "$work/warm_err.txt"; then fail "warm without a manifest or --arch succeeded"; fi
grep -q "give --manifest FILE, --from-index, or --arch" "$work/warm_err.txt" || fail "warm: $(cat "$work/warm_err.txt")"
# User kernels ahead of time (issue 18), in a cache of their own. A manifest
# that names a user kernel without its file (as every manifest did before)
# needs --kernel-file; with it, warm compiles, and a second process finds them.
export KILN_CACHE_DIR="$work/user-cache"
mkdir -p "$work/kernels"
smooth="$work/kernels/smooth.kiln"
printf '%s\n' '#pragma kiln kernel smooth' '#pragma kiln array double x[1]' '#pragma kiln domain n' \
  'for (kiln::index_t i = 0; i < n; ++i) x(i) *= 0.5;' > "$smooth"
cat > "$work/user_manifest.json" << 'EOF'
{"kiln_manifest": 1, "entries": [
  {"kernel": "smooth", "mode": "specialised", "backend": "cpu", "arch": "", "specialisation": {"n": 8}},
  {"kernel": "smooth", "mode": "generic", "backend": "cpu", "arch": "", "specialisation": {"n": 8}}]}
EOF
if "$kiln" warm --manifest "$work/user_manifest.json" > /dev/null 2> "$work/err.txt"; then
  fail "warm of a user kernel without its file succeeded"
fi
grep -q "unknown kernel 'smooth'.*give --kernel-file FILE" "$work/err.txt" || fail "warm, no file: $(cat "$work/err.txt")"
"$kiln" warm --manifest "$work/user_manifest.json" --kernel-file "$smooth" > "$work/out.txt" ||
  fail "warm --kernel-file: $(cat "$work/out.txt")"
grep -q "^summary: 2 kernels: 2 compiled, 0 already cached, 0 failed" "$work/out.txt" ||
  fail "warm --kernel-file: $(cat "$work/out.txt")"
"$kiln" warm --manifest "$work/user_manifest.json" --kernel-file "$smooth" > "$work/out.txt"
grep -q "^summary: 2 kernels: 0 compiled, 2 already cached" "$work/out.txt" || fail "second warm: $(cat "$work/out.txt")"
# --manifest is repeatable (issue 33, item 11): the entries of each, in one
# run (in a cache of its own: the export below counts this one's entries).
cat > "$work/user_manifest_16.json" << 'EOF'
{"kiln_manifest": 1, "entries": [
  {"kernel": "smooth", "mode": "specialised", "backend": "cpu", "arch": "", "specialisation": {"n": 16}}]}
EOF
KILN_CACHE_DIR="$work/two-manifests" "$kiln" warm --manifest "$work/user_manifest.json" \
  --manifest "$work/user_manifest_16.json" --kernel-file "$smooth" > "$work/out.txt" ||
  fail "warm with two manifests: $(cat "$work/out.txt")"
grep -q "^summary: 3 kernels: 3 compiled, 0 already cached, 0 failed" "$work/out.txt" ||
  fail "warm with two manifests: $(cat "$work/out.txt")"
"$kiln" cache ls > "$work/ls.txt"
[[ $(grep -c ' smooth' "$work/ls.txt") -eq 2 ]] || fail "cache ls after warm --kernel-file: $(cat "$work/ls.txt")"
# The export names the file and its text's digest; warm registers that file
# by itself, and refuses it once it has changed, naming kernel, file and digests.
"$kiln" cache export-manifest -o "$work/user_export.json"
[[ $(grep -c "\"kernel_file\": \"$smooth\"" "$work/user_export.json") -eq 2 ]] ||
  fail "export-manifest lacks the kernel file: $(cat "$work/user_export.json")"
digest=$(grep -o '"kernel_digest": "[0-9a-f]\{32\}"' "$work/user_export.json" | head -n 1 | cut -d '"' -f 4)
[[ -n $digest ]] || fail "export-manifest lacks the kernel digest: $(cat "$work/user_export.json")"
"$kiln" cache clear > /dev/null
"$kiln" warm --manifest "$work/user_export.json" > "$work/out.txt" || fail "warm from the export: $(cat "$work/out.txt")"
grep -q "^summary: 2 kernels: 2 compiled" "$work/out.txt" || fail "warm from the export: $(cat "$work/out.txt")"
echo '// edited' >> "$smooth"
"$kiln" cache clear > /dev/null
status=0
"$kiln" warm --manifest "$work/user_export.json" > /dev/null 2> "$work/err.txt" || status=$?
[[ $status -ne 0 ]] || fail "warm accepted a changed kernel file"
grep -q "kernel 'smooth': kernel file '$smooth' has text digest [0-9a-f]\{32\}, but the manifest's entry .* has $digest" \
  "$work/err.txt" || fail "warm of a changed file: $(cat "$work/err.txt")"
"$kiln" cache stats | grep -q "entries:        0" || fail "warm compiled from a changed file"

# kiln check: compiles without running, in a throwaway cache; the compiler's
# and the parser's messages name file and line, and the status says it.
bad="$work/kernels/bad.kiln"
printf '%s\n' '#pragma kiln kernel bad' '#pragma kiln array double x[1]' '#pragma kiln domain n' \
  'for (kiln::index_t i = 0; i < n; ++i)' '  x(i) *= 0.5 +;' > "$bad"
misspelt="$work/kernels/misspelt.kiln"
printf '%s\n' '#pragma kiln kernel misspelt' '#pragma kiln array double x[1]' '#pragma kiln domian n' 'x(0) = 1;' \
  > "$misspelt"
"$kiln" check "$smooth" > "$work/out.txt" || fail "check of a good file: $(cat "$work/out.txt")"
grep -q "^ok: $smooth (1 build)" "$work/out.txt" || fail "check: $(cat "$work/out.txt")"
"$kiln" check "$smooth" --spec '{"n": [8, 16]}' > "$work/out.txt" || fail "check --spec: $(cat "$work/out.txt")"
grep -q "^ok: $smooth (3 builds)" "$work/out.txt" || fail "check --spec: $(cat "$work/out.txt")"
status=0
"$kiln" check "$smooth" "$bad" > "$work/out.txt" 2> "$work/err.txt" || status=$?
[[ $status -ne 0 ]] || fail "check of a file that does not compile exited 0"
grep -q "^bad.kiln:5:[0-9]*: error: expected expression" "$work/err.txt" || fail "check, bad: $(cat "$work/err.txt")"
grep -q "^ok: $smooth" "$work/out.txt" || fail "check stopped at the bad file: $(cat "$work/out.txt")"
status=0
"$kiln" check "$misspelt" > /dev/null 2> "$work/err.txt" || status=$?
[[ $status -ne 0 ]] || fail "check of a malformed #pragma kiln line exited 0"
grep -q "^misspelt.kiln:3: unknown declaration '#pragma kiln domian'" "$work/err.txt" ||
  fail "check, misspelt: $(cat "$work/err.txt")"
"$kiln" cache stats | grep -q "entries:        0" || fail "kiln check filled the cache"
echo "cli test: ok"
