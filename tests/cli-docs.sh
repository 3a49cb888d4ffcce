#!/usr/bin/env bash
# The man page and the bash completion know every long option each subcommand's --help
# lists, so neither drifts when an option is added; every --help lists its exit statuses.
# Usage: cli-docs.sh gputrace SOURCE_DIR
set -u
gputrace=$1
src=$2
man=$src/docs/gputrace.1
completion=$src/docs/completion/gputrace.bash
failures=0

for cmd in run stats advise report diff export sql view info merge doctor; do
	help=$("$gputrace" "$cmd" --help 2>/dev/null) || continue # not in this build yet
	for opt in $(grep -oE -- '--[a-z][a-z-]+' <<<"$help" | sort -u); do
		# roff writes each '-' as '\-'.
		if ! grep -qF -- "${opt//-/\\-}" "$man"; then
			echo "FAIL: gputrace.1 does not mention '$cmd $opt'" >&2
			failures=$((failures + 1))
		fi
		if ! grep -qE -- "(^|[[:space:]\"|(])$opt([[:space:]\")|]|$)" "$completion"; then
			echo "FAIL: gputrace.bash does not complete '$cmd $opt'" >&2
			failures=$((failures + 1))
		fi
	done
	# every command's --help lists its exit statuses (docs/cli.md, "Exit status")
	grep -q '^Exit status: ' <<<"$help" || {
		echo "FAIL: 'gputrace $cmd --help' lists no exit status" >&2
		failures=$((failures + 1))
	}
	grep -qF ".SS gputrace $cmd" "$man" || {
		echo "FAIL: gputrace.1 has no section for '$cmd'" >&2
		failures=$((failures + 1))
	}
done
if [ "$failures" -ne 0 ]; then
	echo "$failures check(s) failed" >&2
	exit 1
fi
echo "cli-docs: man page and completion cover every option"
