#!/usr/bin/env bash
# Checks that every relative link of the README and the docs resolves: each
# [text](target) and ![alt](target) of README.md and of every *.md under
# docs/, bindings/ and examples/ (outside code blocks and code spans) names a
# file or folder that exists, and its #anchor, if any, a heading of that file
# (GitHub's slugs). Links to http(s) and mailto are not followed. Prints each
# unresolved link (file:line: target, and why), then the missing files with
# how many links name them (a page being written elsewhere shows up there),
# and exits 1 when there is one.
#   bash tests/docs/check_links.sh [repository root]
#   bash tests/docs/check_links.sh --self-test   (a broken link must be found)
set -euo pipefail
export LC_ALL=C

if [[ ${1:-} == --self-test ]]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/docs/manual"
  printf '# T\n\n## A `b`: c, d\n\n[ok](docs/manual/x.md#a-b-c-d) [ok](#t)\n```\n[in a fence](nowhere.md)\n```\n' > "$tmp/README.md"
  printf '# X\n\n## A `b`: c, d\n\n[up](../../README.md) `[code](nowhere.md)`\n' > "$tmp/docs/manual/x.md"
  bash "$0" "$tmp" > /dev/null || { echo "self-test: a tree of good links was refused"; exit 1; }
  printf '[gone](docs/manual/missing.md) [bad anchor](docs/manual/x.md#nope)\n' >> "$tmp/README.md"
  if out=$(bash "$0" "$tmp"); then
    echo "self-test: broken links were not found"
    exit 1
  fi
  grep -q 'docs/manual/missing.md' <<< "$out" && grep -q '#nope' <<< "$out" ||
    { echo "self-test: the report does not name both broken links:"; echo "$out"; exit 1; }
  echo "self-test: ok"
  exit 0
fi

root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

files=(README.md)
for folder in docs bindings examples; do
  [[ -d $folder ]] || continue
  while IFS= read -r f; do files+=("$f"); done < <(find "$folder" -name '*.md' -type f | sort)
done

# Lines outside fenced code blocks, with code spans removed.
prose() {
  awk '/^ *(```|~~~)/ { fence = !fence; print ""; next }
       fence { print ""; next }
       { gsub(/`[^`]*`/, ""); print }' "$1"
}

# The anchors of a file's headings, one a line, as GitHub makes them.
anchors() {
  awk '/^ *(```|~~~)/ { fence = !fence; next }
       fence || !/^#+ / { next }
       { s = $0
         sub(/^#+ +/, "", s); sub(/ +#* *$/, "", s)
         gsub(/`/, "", s)
         while (match(s, /\[[^]]*\]\([^)]*\)/)) {
           t = substr(s, RSTART, RLENGTH); sub(/^\[/, "", t); sub(/\]\(.*$/, "", t)
           s = substr(s, 1, RSTART - 1) t substr(s, RSTART + RLENGTH)
         }
         s = tolower(s)
         gsub(/[^a-z0-9 _-]/, "", s)
         gsub(/ /, "-", s)
         n = seen[s]++
         print (n ? s "-" n : s) }' "$1"
}

bad=0
declare -A missing=()
for f in "${files[@]}"; do
  dir=$(dirname "$f")
  while IFS=$'\t' read -r line target; do
    case $target in
      http://* | https://* | mailto:*) continue ;;
    esac
    path=${target%%#*}
    anchor=
    [[ $target == *#* ]] && anchor=${target#*#}
    if [[ -z $path ]]; then
      resolved=$f
    else
      resolved=$dir/$path
    fi
    if [[ ! -e $resolved ]]; then
      echo "$f:$line: $target: no such file ($(realpath -m --relative-to=. "$resolved"))"
      missing[$(realpath -m --relative-to=. "$resolved")]=$((${missing[$(realpath -m --relative-to=. "$resolved")]:-0} + 1))
      bad=$((bad + 1))
      continue
    fi
    if [[ -n $anchor && -f $resolved && $resolved == *.md ]] && ! anchors "$resolved" | grep -qxF -- "$anchor"; then
      echo "$f:$line: $target: no heading with anchor #$anchor in $(realpath -m --relative-to=. "$resolved")"
      bad=$((bad + 1))
    fi
  done < <(prose "$f" | awk '{ s = $0
      while (match(s, /\]\([^) ]+( +"[^"]*")?\)/)) {
        t = substr(s, RSTART + 2, RLENGTH - 3); sub(/ +".*$/, "", t)
        print NR "\t" t
        s = substr(s, RSTART + RLENGTH)
      } }')
done

if ((bad)); then
  echo
  if ((${#missing[@]})); then
    echo "Missing files, with the number of links to each (a page being written elsewhere shows up here):"
    for m in "${!missing[@]}"; do echo "  $m (${missing[$m]})"; done | sort
  fi
  echo "$bad unresolved link(s) in ${#files[@]} files"
  exit 1
fi
echo "all relative links resolve (${#files[@]} files)"
