#!/usr/bin/env bash
# The files that make up libgputrace-inject.so - all the code that runs inside a traced
# application - are exactly those docs/architecture.md lists under "What runs inside the
# traced application": the names of the compiled files are read from the library's debugging
# information (readelf), the listed ones from the table's `dir/file.c` cells.
# Usage: inject-files.sh PATH/TO/libgputrace-inject.so PATH/TO/docs/architecture.md
# Exit 77 (skipped) when the library has no debugging information or readelf is missing.
set -u
lib=$1
doc=$2
command -v readelf >/dev/null || { echo "no readelf: skipped"; exit 77; }
built=$(readelf --debug-dump=info --dwarf-depth=1 "$lib" 2>/dev/null |
	sed -n 's/.*DW_AT_name.*: \([^ ]*\.c\)$/\1/p' | sed -E 's%^.*/(collectors|src)/%\1/%' |
	sort -u)
[ -n "$built" ] || { echo "$lib has no debugging information: skipped"; exit 77; }
listed=$(sed -n '/^## What runs inside the traced application/,/^Nothing else/{/^Nothing else/!p}' "$doc" |
	grep -oE '`[a-z]+/([a-z]+/)?[a-z0-9-]+\.c`' | tr -d '`' | sort -u)
[ -n "$listed" ] || { echo "FAIL: no file list in $doc"; exit 1; }
missing=$(comm -23 <(echo "$built") <(echo "$listed"))
extra=$(comm -13 <(echo "$built") <(echo "$listed"))
status=0
if [ -n "$missing" ]; then
	echo "FAIL: in the library, not in $doc:" $missing
	status=1
fi
if [ -n "$extra" ]; then
	echo "FAIL: in $doc, not in the library:" $extra
	status=1
fi
[ "$status" -eq 0 ] && echo "inject-files: the $(echo "$built" | wc -l) files agree"
exit $status
