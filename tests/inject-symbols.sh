#!/usr/bin/env bash
# The injection library holds nothing of the CLI's libraries: no global symbol defined in
# src/ops, src/httpd or any exporters/ library appears among libgputrace-inject.so's symbols,
# dynamic or static (nm reads its symbol table, hidden and local symbols included). The build
# already keeps their headers out of collectors/; this checks the linked result.
# Usage: inject-symbols.sh libgputrace-inject.so CLI_LIB.a...
set -u
lib=$1
shift
command -v nm >/dev/null || { echo "no nm: skipped"; exit 77; }
inject=$(mktemp)
trap 'rm -f "$inject"' EXIT
{ nm "$lib" 2>/dev/null; nm -D "$lib"; } | awk 'NF >= 2 { print $NF }' | sed 's/@.*//' |
	sort -u >"$inject"
[ "$(wc -l <"$inject")" -ge 100 ] || { echo "FAIL: $lib: only $(wc -l <"$inject") symbols read"; exit 1; }
# the runtime's own symbols are there (so the comparison below reads a real symbol table)
for s in InitializeInjection gt_ring_reserve gt_writer_open; do
	grep -qx "$s" "$inject" || { echo "FAIL: $s not found in $lib's symbols"; exit 1; }
done
status=0
checked=0
for a in "$@"; do
	globals=$(nm --defined-only "$a" 2>/dev/null | awk '$2 ~ /^[TDRBVW]$/ { print $3 }' | sort -u)
	[ -n "$globals" ] || { echo "FAIL: no global symbols read from $a"; status=1; continue; }
	checked=$((checked + $(wc -l <<<"$globals")))
	leaked=$(comm -12 <(echo "$globals") "$inject")
	if [ -n "$leaked" ]; then
		echo "FAIL: $(basename "$a") reaches $(basename "$lib"):" $leaked
		status=1
	fi
done
[ "$status" -eq 0 ] && echo "inject-symbols: none of $checked symbols of $# CLI libraries in $(basename "$lib")"
exit $status
